//! Write Pulumi resource providers as WebAssembly components.
//!
//! Implement [`Provider`] (every method has a default), then
//! `export_provider!(MyProvider);` and build with
//! `cargo build --target wasm32-wasip2`. The result is one `.wasm` that the
//! `pulumi-wasm` host serves to the Pulumi engine.

pub mod context;
mod diff;
mod export;
pub mod needs;
pub mod log;
mod provider;
pub mod serde;
mod value;
mod wire;

use __private::wit;

pub use diff::{Differ, same};
pub use provider::*;
pub use value::*;

// The generated bindings are hidden; authors see the re-exports above.
#[doc(hidden)]
pub mod __private {
    pub use crate::export::Adapter;
    pub use wit::export_world;

    pub mod wit {
        wit_bindgen::generate!({
            path: "../wit/since_v0.1.0",
            world: "pulumi:provider/provider",
            pub_export_macro: true,
            export_macro_name: "export_world",
            default_bindings_module: "pulumi_wasm_sdk::__private::wit",
        });
    }
}
