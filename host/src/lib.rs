//! A host that serves WebAssembly-component Pulumi providers over gRPC.
//!
//! Layers, each depending only on the ones below it:
//! - [`server`]: the `pulumirpc.ResourceProvider` gRPC surface and the engine client;
//! - [`convert`]: protobuf <-> WIT translation of requests and property values;
//! - [`runtime`]: wasmtime engine, artifact cache, instance pool, sandbox.
//!
//! Above them, [`generic`]: `pulumi-resource-wasm`, the parameterized
//! provider that loads any component on `Parameterize` (uses `runtime`,
//! `store` and `oci`; `server` serves it as one more [`runtime::Backend`]).
//!
//! Beside them, [`store`]: the local directory of installed components and
//! `name@requirement` lookup (used by the CLI; `server` and `runtime` do not
//! depend on it); [`oci`]: push and pull components to and from OCI
//! registries (Wasm artifact layout, digest-verified; uses `store` only).
//!
//! Below them all, `dirs`: the default store and artifact-cache directories,
//! and `trust`: whether a file this host once wrote may be believed; both
//! shared by `store` and `runtime` so that neither depends on the other;
//! `text`: guests' and registries' text made safe for the user's terminal;
//! `sha256`: the one definition of a digest, which all of them name files by.

pub mod atomic;
pub mod convert;
mod dirs;
pub mod generic;
pub mod oci;
pub mod runtime;
pub mod server;
mod sha256;
pub mod store;
pub mod text;
mod trust;
