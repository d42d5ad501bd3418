//! Rust bindings for the `pulumirpc` gRPC protocol (resource providers, engine, plugin
//! metadata, the resource monitor), generated at build time from our own `.proto` files in
//! `proto/pulumi/`.
//! Those files are wire-identical to the descriptors published in pulumi 3.272.0 (plus the
//! deprecated `ResourceProvider.StreamInvoke`); `tests/wire.rs` checks this.
//!
//! The generated code is re-exported at the crate root, so the usual paths are:
//!
//! * messages: `pulumirpc::CreateRequest`, `pulumirpc::check_request::AutonamingOptions`, ...
//! * servers: `pulumirpc::resource_provider_server::{ResourceProvider, ResourceProviderServer}`
//! * clients: `pulumirpc::engine_client::EngineClient`,
//!   `pulumirpc::resource_provider_client::ResourceProviderClient`,
//!   `pulumirpc::resource_monitor_client::ResourceMonitorClient`
//!
//! Google well-known types (`Struct`, `Value`, `Empty`) are those of [`prost_types`]
//! (`Empty` maps to `()`).

pub mod codec;

/// Generated code for protobuf package `pulumirpc`.
#[allow(clippy::all, clippy::pedantic, clippy::nursery, rustdoc::all, missing_docs, deprecated)]
mod generated {
    tonic::include_proto!("pulumirpc");
}

pub use generated::*;

// `resource.proto` has an enum named `Result` (how a program run ended). Re-exported at
// the root it would shadow the prelude's `Result` in every `use pulumirpc::*`; so the
// root's `Result` stays the standard one and the enum is `ProgramResult` here
// (`generated::Result` inside the generated code).
pub use generated::Result as ProgramResult;
#[doc(hidden)]
pub use std::result::Result;

/// Encoded `google.protobuf.FileDescriptorSet` of our proto files (and the Google
/// well-known types they import), as compiled by `build.rs`. Useful for gRPC reflection
/// and for checking wire identity against the published descriptors.
pub const FILE_DESCRIPTOR_SET: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/pulumirpc_descriptor.bin"));

// Re-exported so users need not depend on matching versions themselves.
pub use prost;
pub use prost_types;
pub use tonic;
