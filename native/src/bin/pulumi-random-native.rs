//! The `random` example provider, compiled natively and served by the same
//! gRPC server as its WebAssembly component. Started by the engine like any
//! plugin (`pulumi-resource-random <engine-address>`, e.g. through a
//! symlink or a copy named so), or attached with `PULUMI_DEBUG_PROVIDERS`.

fn main() {
    pulumi_wasm_native::plugin_main(random_provider::__pulumi_wasm_provider);
}
