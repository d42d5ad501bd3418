//! The plugin process contract: arguments, attach mode, shutdown, bad
//! components, contained faults, and parallel instances.

use std::collections::HashSet;
use std::time::Duration;

use e2e_tests::plugin::pack;
use e2e_tests::{Plugin, TestEngine, component, from_struct, host_bin, to_struct};
use pulumirpc::*;
use serde_json::json;
use tonic::Code;

fn invoke(tok: &str, args: serde_json::Value) -> InvokeRequest {
    InvokeRequest { tok: tok.into(), args: Some(to_struct(args)), preview: false }
}

#[tokio::test]
async fn accepts_the_engine_flags_before_the_address() {
    let engine = TestEngine::start().await;
    let (_dir, exe) = pack(&component("echo-provider")).unwrap();
    let args = ["--logtostderr", "-v=9", "--logflow", "--tracing", "127.0.0.1:9", &engine.address].map(String::from);
    let mut p = Plugin::spawn(&exe, &args).await.unwrap();
    // With the address on the command line, logs reach the engine without a Handshake.
    p.client.invoke(invoke("echo:index:log", json!({"message": "from argv"}))).await.unwrap();
    let logs = engine.wait_for_logs(4, |l| l.message == "from argv").await;
    assert!(!logs.is_empty(), "stderr: {}", p.stderr());
    let severities: HashSet<i32> = logs.iter().map(|l| l.severity).collect();
    assert_eq!(severities.len(), 4, "debug, info, warning and error all arrive");
}

#[tokio::test]
async fn attach_mode_learns_the_engine_from_attach() {
    let engine = TestEngine::start().await;
    let (_dir, exe) = pack(&component("echo-provider")).unwrap();
    let mut p = Plugin::spawn(&exe, &[]).await.unwrap();
    p.client.attach(PluginAttach { address: engine.address.clone() }).await.unwrap();
    let urn = "urn:pulumi:dev::proj::echo:index:Thing::t";
    p.client.invoke(invoke("echo:index:log", json!({"message": "attached", "urn": urn}))).await.unwrap();
    let log = engine.wait_for_log(|l| l.message == "attached").await.expect("log after Attach");
    assert_eq!(log.urn, urn);
    assert_eq!(log.severity, LogSeverity::Warning as i32);
}

#[tokio::test]
async fn sigint_and_cancel_shut_down_within_the_engine_grace() {
    let engine = TestEngine::start().await;
    let mut a = Plugin::packed(&component("echo-provider"), Some(&engine.address)).await.unwrap();
    a.interrupt().unwrap();
    let status = a.wait(Duration::from_secs(5)).await.expect("exits within 5 s of SIGINT");
    assert!(status.success(), "clean exit: {status:?} {}", a.stderr());

    let mut b = Plugin::packed(&component("echo-provider"), Some(&engine.address)).await.unwrap();
    b.client.cancel(()).await.unwrap();
    let status = b.wait(Duration::from_secs(5)).await.expect("exits within 5 s of Cancel");
    assert!(status.success(), "clean exit: {status:?} {}", b.stderr());
}

/// Starts `pulumi-wasm serve <file>` and expects it to refuse the file.
async fn refused(file: &std::path::Path) -> String {
    let out = tokio::process::Command::new(host_bin())
        .arg("serve")
        .arg(file)
        .arg("127.0.0.1:1")
        .env("PULUMI_WASM_CACHE_DIR", e2e_tests::cache_dir())
        .output()
        .await
        .unwrap();
    assert!(!out.status.success());
    assert!(out.stdout.is_empty(), "no port line for a bad component");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[tokio::test]
async fn bad_components_are_refused_with_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("not.wasm");
    std::fs::write(&text, "definitely not wasm").unwrap();
    assert!(refused(&text).await.contains("not WebAssembly"));

    let core = dir.path().join("core.wasm");
    std::fs::write(&core, wat::parse_str("(module)").unwrap()).unwrap();
    assert!(refused(&core).await.contains("core module"));

    let other = dir.path().join("other.wasm");
    let other_world = r#"(component
        (core module $m (func (export "f")))
        (core instance $i (instantiate $m))
        (func $f (canon lift (core func $i "f")))
        (export "something-else" (func $f)))"#;
    std::fs::write(&other, wat::parse_str(other_world).unwrap()).unwrap();
    let msg = refused(&other).await;
    assert!(msg.contains("pulumi:provider"), "{msg}");
}

#[tokio::test]
async fn a_panicking_guest_is_contained() {
    let engine = TestEngine::start().await;
    let mut p = Plugin::packed(&component("echo-provider"), Some(&engine.address)).await.unwrap();
    p.boot(&engine.address, json!({"region": "mars"})).await.unwrap();
    let err = p.client.invoke(invoke("echo:index:panic", json!({}))).await.unwrap_err();
    assert_eq!(err.code(), Code::Internal);
    assert!(err.message().contains("echo was asked to panic"), "{}", err.message());
    // The host is still up, and a fresh instance got the configuration replayed.
    let out = p.client.invoke(invoke("echo:index:config", json!({}))).await.unwrap().into_inner();
    assert_eq!(from_struct(out.r#return.as_ref())["config"], json!({"region": "mars"}));
}

#[tokio::test]
async fn concurrent_calls_run_on_parallel_instances_with_replayed_configuration() {
    let engine = TestEngine::start().await;
    let mut p = Plugin::packed(&component("echo-provider"), Some(&engine.address)).await.unwrap();
    p.boot(&engine.address, json!({"region": "venus"})).await.unwrap();
    let calls: Vec<_> = (0..6)
        .map(|_| {
            let mut client = p.client.clone();
            tokio::spawn(async move { client.invoke(invoke("echo:index:config", json!({"sleepMs": 400}))).await })
        })
        .collect();
    let mut instances = HashSet::new();
    for call in calls {
        let out = from_struct(call.await.unwrap().unwrap().into_inner().r#return.as_ref());
        assert_eq!(out["config"], json!({"region": "venus"}), "every instance saw Configure");
        instances.insert(out["instance"].as_str().unwrap().to_owned());
    }
    assert!(instances.len() >= 2, "calls overlapped on several instances: {instances:?}");
}
