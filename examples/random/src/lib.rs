//! `random`: a Pulumi provider of random values, modelled on pulumi-random,
//! written with typed resources (`pulumi_wasm_sdk::typed`).
//!
//! Resources `RandomString`, `RandomPassword` (secret result), `RandomId` and
//! `RandomPet`, and the function `randomInteger`. Every input replaces the
//! resource when it changes, so a new value is generated; `keepers` exist
//! only to force that. The schema is derived from the types.

mod id;
mod integer;
mod pet;
mod rng;
mod string;

use pulumi_wasm_sdk::typed::{Builder, Package, Typed};

pub struct Random;

impl Package for Random {
    fn build() -> Builder {
        Builder::new("random", env!("CARGO_PKG_VERSION"))
            .display_name("Random")
            .description(
                "A Pulumi package to safely use randomness in Pulumi programs: random strings, passwords, ids \
                 and pet names, run as a WebAssembly component.",
            )
            .keywords(&["pulumi", "random", "wasm"])
            .license("Apache-2.0")
            .schema_field("meta", serde_json::json!({ "moduleFormat": "(.*)" }))
            .resource(string::RandomString)
            .resource(string::RandomPassword)
            .resource(id::RandomId)
            .resource(pet::RandomPet)
            .function(integer::RandomInteger)
    }
}

pulumi_wasm_sdk::export_provider!(Typed<Random>);

#[cfg(test)]
mod tests;
