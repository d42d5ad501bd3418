//! A host that serves WebAssembly-component Pulumi providers over gRPC.
//!
//! Layers, each depending only on the ones below it:
//! - [`server`]: the `pulumirpc.ResourceProvider` gRPC surface and the engine client;
//! - [`convert`]: protobuf <-> WIT translation of requests and property values;
//! - [`runtime`]: wasmtime engine, artifact cache, instance pool, sandbox.

pub mod convert;
pub mod runtime;
pub mod server;
