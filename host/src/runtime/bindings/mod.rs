//! Host-side bindings of the provider world, one module per WIT version.
//! The host works in `latest`'s types; a component built against an older
//! version is served through [`Provider::V0_2`] or [`Provider::V0_1`], whose
//! calls convert each request down to that version and each answer back up
//! (see `adapt`), so nothing above this layer knows there is more than one
//! version.
//!
//! Inside the host a value is a [`tree`] (0.2.0's nodes, spans and shared
//! buffers): `convert::value` builds and checks trees, and `words` packs a
//! tree into the latest encoding's words and unpacks it, at the boundary.

mod adapt;
mod calls;
mod flat;
pub mod spans;
pub mod words;

// Only the monitor's imports wait (on the engine); the others return at
// once, so they are plain functions: an async import costs every call a
// boxed future and a poll.
pub mod v0_1_0 {
    wasmtime::component::bindgen!({
        path: "../wit/since_v0.1.0",
        world: "pulumi:provider/provider",
        imports: { "pulumi:provider/monitor": async | trappable, default: trappable },
        exports: { default: async },
    });
}

pub mod v0_2_0 {
    wasmtime::component::bindgen!({
        path: "../wit/since_v0.2.0",
        world: "pulumi:provider/provider",
        imports: { "pulumi:provider/monitor": async | trappable, default: trappable },
        exports: { default: async },
    });
}

/// 0.3.1, which also serves 0.3.0 components: wasmtime finds 0.3.x
/// exports and imports by their semver-compatible names, and 0.3.1 only
/// adds an import (`context.asset-text`) that 0.3.0 components do not use.
pub mod v0_3 {
    wasmtime::component::bindgen!({
        path: "../wit/since_v0.3.1",
        world: "pulumi:provider/provider",
        imports: { "pulumi:provider/monitor": async | trappable, default: trappable },
        exports: { default: async },
    });
}

pub use calls::{Guest, Provider, ProviderPre};
pub use flat::{flat_to_nodes, nodes_into_flat};
pub use latest::exports::pulumi::provider::resource_provider as rp;
pub use latest::pulumi::provider::types;
/// A value as the host builds and checks it: 0.2.0's nodes, whose spans
/// point into shared buffers (see the module's comment).
pub use v0_2_0::pulumi::provider::types as tree;
pub use v0_3 as latest;
/// The version of `latest`, for messages about components built against another.
pub const CONTRACT: &str = "0.3.1";
/// Strings this long or longer get their own `str.long` in a value the host
/// writes, moved instead of copied into the value's shared `text` (see
/// `types.wit`); the guest SDK reads the same number.
pub const LONG_STRING: usize = pulumi_wasm_words::LONG;
/// The most bytes of text (strings, keys, held asset texts) one value the
/// host builds from a guest's may carry. The engine takes no gRPC message
/// over 400 MiB, so nothing larger could reach it; and a guest's value can
/// name one stretch of its text, or one held text, any number of times, so
/// without a budget a small value could expand to terabytes in the host.
pub const MAX_VALUE_BYTES: usize = 400 << 20;
/// Every version this host serves, newest first.
pub const CONTRACTS: [&str; 4] = ["0.3.1", "0.3.0", "0.2.0", "0.1.0"];
