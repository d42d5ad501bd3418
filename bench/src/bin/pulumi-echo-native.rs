//! The echo test provider (tests/guests/echo), compiled natively and served
//! by the host's gRPC server: the native side of the 100-property and 1 MB
//! asset benchmarks, whose `echo:index:Thing` accepts any properties.

fn main() {
    pulumi_wasm_native::plugin_main(echo_provider::__pulumi_wasm_provider);
}
