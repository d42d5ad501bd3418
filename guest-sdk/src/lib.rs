//! Write Pulumi resource providers as WebAssembly components.
//!
//! Implement [`Provider`] (every method has a default), then
//! `export_provider!(MyProvider);` and build with
//! `cargo build --target wasm32-wasip2`. The result is one `.wasm` that the
//! `pulumi-wasm` host serves to the Pulumi engine.
//!
//! Or declare resources as Rust types and let [`typed`] derive the schema,
//! Check, Diff and secrets.

// The Rust blocks of the project's READMEs compile (and run) as doctests
// against this crate, so the examples users copy first cannot go stale.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct ProjectReadme;
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct SdkReadme;
#[cfg(doctest)]
#[doc = include_str!("../derive/README.md")]
struct DeriveReadme;
#[cfg(doctest)]
#[doc = include_str!("../../examples/kv/README.md")]
struct KvReadme;
#[cfg(doctest)]
#[doc = include_str!("../../native/README.md")]
struct NativeReadme;

pub mod component;
pub mod context;
mod diff;
mod export;
mod fields;
#[cfg(feature = "http")]
pub mod http;
pub mod log;
pub mod needs;
mod parameterization;
mod provider;
pub mod serde;
pub mod testing;
mod text;
pub mod typed;
mod value;
mod wire;

// The derive macro names `::pulumi_wasm_sdk`, which must resolve here too.
extern crate self as pulumi_wasm_sdk;

use __private::wit;

pub use diff::{Differ, same};
#[doc(hidden)]
pub use fields::{Fields, Outputs};
pub use parameterization::Parameterization;
pub use provider::*;
pub use value::*;

// The generated bindings are hidden; authors see the re-exports above.
#[doc(hidden)]
pub mod __private {
    pub use crate::export::Adapter;
    pub use wit::export_world;

    /// Values' words, read in place: the codec macro's decoding, and what
    /// the derive's typed decoding reads from.
    pub mod words {
        pub use crate::typed::decode::{Input, Source};
        pub use crate::wire::consts;
        pub use crate::wire::read::{Layer, Map, Node, Words};
    }

    pub mod wit {
        wit_bindgen::generate!({
            path: "../wit/since_v0.3.1",
            world: "pulumi:provider/provider",
            pub_export_macro: true,
            export_macro_name: "export_world",
            default_bindings_module: "pulumi_wasm_sdk::__private::wit",
        });
    }
}

/// The component's heap. Rust's default on `wasm32-wasip2` is wasi-libc's
/// dlmalloc; talc's allocation paths are shorter, which every call of a
/// provider pays for (decoding and encoding values allocate a great deal):
/// through the host, small-map calls under load ran 3-9% faster with it
/// (BENCHMARKS.md, ninth session), and the small-block lists of [`heap`] in
/// front of it took 10-15% more off (tenth session). A provider that wants
/// its own allocator turns off the default `talc` feature.
#[cfg(all(feature = "talc", target_family = "wasm", not(target_feature = "atomics")))]
#[global_allocator]
static HEAP: heap::Heap<talc::wasm::WasmDynamicTalc> = heap::Heap::new(talc::wasm::new_wasm_dynamic_allocator());

#[cfg(any(test, all(feature = "talc", target_family = "wasm", not(target_feature = "atomics"))))]
mod heap;

#[cfg(test)]
mod props_tests;
