//! Test harness: starts real host processes the way the Pulumi engine does
//! and plays the engine's side (an `Engine` server that records logs).

pub mod api;
pub mod engine;
pub mod flood;
pub mod json;
pub mod monitor;
pub mod plugin;
pub mod registry;
pub mod token;

pub use api::KvApi;
pub use engine::TestEngine;
pub use json::{from_struct, to_struct};
pub use monitor::TestMonitor;
pub use plugin::{Launch, Plugin, PolicyAt};
pub use registry::{Auth, Registry};
pub use token::TokenService;

use std::path::{Path, PathBuf};

/// A stand-in engine, and `component` packed, started and booted as the
/// engine boots a plugin (Handshake, plugin info, empty configuration).
pub async fn booted(component: &Path) -> (TestEngine, Plugin) {
    let engine = TestEngine::start().await;
    let mut plugin = Plugin::packed(component, Some(&engine.address)).await.unwrap();
    plugin.boot(&engine.address, serde_json::json!({})).await.unwrap();
    (engine, plugin)
}

/// The workspace root (this crate lives in `<root>/tests`).
pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ has a parent").to_path_buf()
}

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| workspace_root().join("target"))
}

/// The host binary, built by `cargo build -p pulumi-wasm-host` (`scripts/test` does it).
pub fn host_bin() -> PathBuf {
    let path = std::env::var_os("PULUMI_WASM_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| target_dir().join("debug").join("pulumi-wasm"));
    assert!(
        path.is_file(),
        "host binary missing at {}: run scripts/test (or cargo build -p pulumi-wasm-host)",
        path.display()
    );
    path
}

/// An example component, built by `scripts/build-examples`.
pub fn component(crate_name: &str) -> PathBuf {
    let file = format!("{}.wasm", crate_name.replace('-', "_"));
    let path = target_dir().join("wasm32-wasip2").join("guest").join(file);
    assert!(path.is_file(), "component missing at {}: run scripts/build-examples", path.display());
    path
}

/// A component built against an older contract version (`0.1.0`, `0.2.0`)
/// by the SDK of its day, kept in `tests/fixtures/contract-<version>` (see
/// its README): `echo_provider`, `pets_provider`.
pub fn older_component(version: &str, name: &str) -> PathBuf {
    let path = workspace_root().join(format!("tests/fixtures/contract-{version}")).join(format!("{name}.wasm"));
    assert!(path.is_file(), "fixture missing at {}", path.display());
    path
}

/// A component written in another language (`examples/js-random`,
/// `examples/py-random`), built by `scripts/build-polyglot` into
/// `target/polyglot/<name>.wasm`.
pub fn polyglot_component(name: &str) -> PathBuf {
    let path = target_dir().join("polyglot").join(format!("{name}.wasm"));
    assert!(path.is_file(), "component missing at {}: run scripts/build-polyglot", path.display());
    path
}

/// A cache directory shared by the tests of one checkout, so each component
/// is compiled once per run rather than once per test.
pub fn cache_dir() -> PathBuf {
    target_dir().join("test-artifact-cache")
}

/// The `ErrorResourceInitFailed` detail of a status, as the engine decodes
/// it: what it records of a resource that was made but not finished.
pub fn init_failed(status: &tonic::Status) -> pulumirpc::ErrorResourceInitFailed {
    use prost::Message;
    let details = tonic_types::pb::Status::decode(status.details()).expect("status details");
    let any = details.details.first().expect("one detail");
    assert_eq!(any.type_url, "type.googleapis.com/pulumirpc.ErrorResourceInitFailed");
    pulumirpc::ErrorResourceInitFailed::decode(any.value.as_slice()).unwrap()
}
