//! Host-side bindings of the provider world, one module per WIT version.
//! Only `v0_1_0` exists; when a new version ships it becomes `latest` and
//! older versions convert into it at this layer (see wit/README.md).

pub mod v0_1_0 {
    wasmtime::component::bindgen!({
        path: "../wit/since_v0.1.0",
        world: "pulumi:provider/provider",
        imports: { default: async | trappable },
        exports: { default: async },
    });
}

pub use latest::exports::pulumi::provider::resource_provider as rp;
pub use latest::pulumi::provider::types;
pub use v0_1_0 as latest;
/// The version of `latest`, for messages about components built against another.
pub const CONTRACT: &str = "0.1.0";
