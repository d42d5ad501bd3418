//! A host that serves WebAssembly-component Pulumi providers over gRPC.
//!
//! Layers, each depending only on the ones below it:
//! - [`server`]: the `pulumirpc.ResourceProvider` gRPC surface and the engine client;
//! - [`convert`]: protobuf <-> WIT translation of requests and property values;
//! - [`runtime`]: wasmtime engine, artifact cache, instance pool, sandbox.
//!
//! Beside them, [`store`]: the local directory of installed components and
//! `name@requirement` lookup (used by the CLI; `server` and `runtime` do not
//! depend on it).

pub mod convert;
pub mod runtime;
pub mod server;
pub mod store;
