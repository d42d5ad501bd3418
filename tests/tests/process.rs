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

/// `echo:index:config`'s answers to `n` calls at once, each sleeping `ms`
/// so that they land on several instances.
async fn configs_at_once(p: &Plugin, n: usize, ms: u64) -> Vec<serde_json::Value> {
    let calls: Vec<_> = (0..n)
        .map(|_| {
            let mut client = p.client.clone();
            tokio::spawn(async move { client.invoke(invoke("echo:index:config", json!({ "sleepMs": ms }))).await })
        })
        .collect();
    let mut answers = Vec::new();
    for call in calls {
        answers.push(from_struct(call.await.unwrap().unwrap().into_inner().r#return.as_ref()));
    }
    answers
}

/// A Configure after the first, as a client repeating it would send.
fn configure(args: serde_json::Value) -> ConfigureRequest {
    ConfigureRequest { args: Some(to_struct(args)), accept_secrets: true, accept_resources: true, ..Default::default() }
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

/// A setting exported empty (a CI template's default, `PULUMI_WASM_POLICY=
/// pulumi up`) is unset, for the packed plugin the engine starts as for
/// `pulumi-wasm`, rather than a flag given no value.
#[tokio::test]
async fn settings_set_to_nothing_are_unset() {
    let engine = TestEngine::start().await;
    let (_dir, exe) = pack(&component("echo-provider")).unwrap();
    let names = [
        "POLICY",
        "MAX_INSTANCES",
        "MAX_WAITING",
        "MAX_MEMORY_MB",
        "CALL_TIMEOUT",
        "APPROVED",
        "PERF_MAP",
        "ENGINE_CHECK_MS",
    ];
    let empty: Vec<_> = names.iter().map(|n| (format!("PULUMI_WASM_{n}"), String::new())).collect();
    let mut p = Plugin::spawn_with(&exe, std::slice::from_ref(&engine.address), &empty).await.unwrap();
    let r = p.client.invoke(invoke("echo:index:config", json!({}))).await;
    assert!(r.is_ok(), "{r:?}\nstderr: {}", p.stderr());
    assert!(p.is_running());
    let out = std::process::Command::new(host_bin())
        .arg("grants")
        .arg(component("echo-provider"))
        .envs(empty)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
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

/// Attach mode (`PULUMI_DEBUG_PROVIDERS`) serves one engine run after
/// another: the Cancel that ends a run cancels what is running without
/// stopping the host, an engine that is gone does not stop it either, and
/// the next run's calls are served, not cancelled.
#[tokio::test]
async fn attach_mode_outlives_each_engine_run() {
    let (_dir, exe) = pack(&component("echo-provider")).unwrap();
    let checked_often = [("PULUMI_WASM_ENGINE_CHECK_MS".to_owned(), "200".to_owned())];
    let mut p = Plugin::spawn_with(&exe, &[], &checked_often).await.unwrap();
    let hang = |name: &str| CreateRequest {
        urn: format!("urn:pulumi:dev::proj::echo:index:Thing::{name}"),
        r#type: "echo:index:Thing".into(),
        properties: Some(to_struct(json!({ "hang": "cooperative" }))),
        ..Default::default()
    };
    for run in 0..3 {
        let engine = TestEngine::start().await;
        p.client.attach(PluginAttach { address: engine.address.clone() }).await.unwrap();
        // Each run configures the provider its own way; nothing of the last
        // run's instances or configuration is kept.
        p.boot(&engine.address, json!({ "run": run })).await.unwrap();
        // Another provider of the same run attaches: the run goes on as it was.
        p.client.attach(PluginAttach { address: engine.address.clone() }).await.unwrap();
        let said = p.client.invoke(invoke("echo:index:config", json!({}))).await.unwrap().into_inner();
        let said = from_struct(said.r#return.as_ref());
        assert_eq!(
            (&said["config"], &said["configures"]),
            (&json!({ "run": f64::from(run) }), &json!(1.0)),
            "run {run}"
        );
        let urn = "urn:pulumi:dev::proj::echo:index:Thing::t";
        let message = format!("run {run}");
        p.client.invoke(invoke("echo:index:log", json!({ "message": message, "urn": urn }))).await.unwrap();
        engine.wait_for_log(|l| l.message == message).await.expect("logs reach this run's engine");
        // A create running when the run is cancelled sees it and stops.
        let mut client = p.client.clone();
        let running = tokio::spawn(async move { client.create(hang("h")).await });
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(!running.is_finished(), "run {run}: not cancelled before its Cancel");
        p.client.cancel(()).await.unwrap();
        let stopped = running.await.unwrap().unwrap_err();
        assert!(e2e_tests::init_failed(&stopped).reasons[0].contains("cancelled half-way"), "{stopped:?}");
        drop(engine);
        tokio::time::sleep(Duration::from_millis(800)).await;
        assert!(p.is_running(), "attach mode waits for the next run: {}", p.stderr());
    }
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

#[tokio::test]
async fn a_host_whose_engine_is_gone_shuts_down() {
    let engine = TestEngine::start().await;
    // Checked every 200 ms instead of every 5 minutes.
    let launch = e2e_tests::Launch::new().env("PULUMI_WASM_ENGINE_CHECK_MS", "200");
    let mut p = Plugin::launch(&component("echo-provider"), Some(&engine.address), &launch).await.unwrap();
    // The stand-in engine has no health service: Unimplemented counts as alive.
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert!(p.is_running(), "a live engine keeps the host up: {}", p.stderr());
    p.client.get_plugin_info(()).await.unwrap();
    drop(engine);
    let status = p.wait(Duration::from_secs(10)).await.expect("exits once the engine is gone");
    assert!(status.success(), "clean exit: {status:?} {}", p.stderr());
    assert!(p.stderr().contains("is gone"), "{}", p.stderr());
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
    let why = refused(&core).await;
    assert!(why.contains("core module") && why.contains("wasm32-wasip2"), "{why}");

    let other = dir.path().join("other.wasm");
    let other_world = r#"(component
        (core module $m (func (export "f")))
        (core instance $i (instantiate $m))
        (func $f (canon lift (core func $i "f")))
        (export "something-else" (func $f)))"#;
    std::fs::write(&other, wat::parse_str(other_world).unwrap()).unwrap();
    let msg = refused(&other).await;
    assert!(msg.contains("pulumi:provider"), "{msg}");

    // Built against a contract version this host does not speak: the error says which.
    let newer = dir.path().join("newer.wasm");
    let newer_world = r#"(component (import "pulumi:provider/logging@0.9.0" (instance (export "log" (func)))))"#;
    std::fs::write(&newer, wat::parse_str(newer_world).unwrap()).unwrap();
    let msg = refused(&newer).await;
    assert!(
        msg.contains("built against pulumi:provider@0.9.0")
            && msg.contains("speaks pulumi:provider@0.3.1, @0.3.0, @0.2.0 and @0.1.0"),
        "{msg}"
    );
}

/// The engine shows a plugin's stderr through the Pulumi CLI's colouriser,
/// so the host's own log lines, which may quote a component, carry none of
/// its markup: here a parser's error quoting a malformed needs declaration.
#[tokio::test]
async fn the_hosts_log_breaks_up_the_colour_markup_a_component_brings() {
    let engine = TestEngine::start().await;
    let dir = tempfile::tempdir().unwrap();
    let (name, data) = (&b"pulumi-wasm-needs"[..], &br#"{"env": "<{%x%}>"}"#[..]);
    let body = [&[name.len() as u8][..], name, data].concat();
    let mut wasm = std::fs::read(component("echo-provider")).unwrap();
    wasm.extend([&[0u8, body.len() as u8][..], &body].concat());
    let file = dir.path().join("echo-provider.wasm");
    std::fs::write(&file, wasm).unwrap();
    let mut p = Plugin::packed(&file, Some(&engine.address)).await.unwrap();
    p.boot(&engine.address, json!({})).await.unwrap();
    // Logged while loading, before Configure was answered.
    let stderr = p.stderr_with("ignoring the component's needs declaration", Duration::from_secs(2)).await;
    assert!(stderr.contains("ignoring the component's needs declaration"), "{stderr}");
    assert!(stderr.contains(r#"string "<\{%x%\}>""#) && !stderr.contains("<{%"), "{stderr}");
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

/// An echo provider configured `times` times, the last with region
/// `r{times - 1}`.
async fn configured(times: usize) -> (TestEngine, Plugin) {
    let engine = TestEngine::start().await;
    let mut p = Plugin::packed(&component("echo-provider"), Some(&engine.address)).await.unwrap();
    p.boot(&engine.address, json!({"region": "r0"})).await.unwrap();
    for n in 1..times {
        p.client.configure(configure(json!({ "region": format!("r{n}") }))).await.unwrap();
    }
    (engine, p)
}

#[tokio::test]
async fn a_provider_set_up_again_and_again_is_refused_past_the_hosts_bound() {
    // Every setup call is kept and replayed into new instances: 64 in all.
    let (_engine, mut p) = configured(64).await;
    let err = p.client.configure(configure(json!({ "region": "r64" }))).await.unwrap_err();
    assert_eq!(err.code(), Code::FailedPrecondition, "{}", err.message());
    assert!(err.message().contains("already set up 64 times"), "{}", err.message());
    // The refused call changed nothing, and a fresh instance (after a crash)
    // replays all 64 to the same state.
    let config = |out: InvokeResponse| from_struct(out.r#return.as_ref())["config"].clone();
    let out = p.client.invoke(invoke("echo:index:config", json!({}))).await.unwrap().into_inner();
    assert_eq!(config(out), json!({"region": "r63"}));
    p.client.invoke(invoke("echo:index:panic", json!({}))).await.unwrap_err();
    let out = p.client.invoke(invoke("echo:index:config", json!({}))).await.unwrap().into_inner();
    assert_eq!(config(out), json!({"region": "r63"}));
}

#[tokio::test]
async fn concurrent_setup_calls_keep_the_bound_and_every_instance_agrees() {
    let (_engine, p) = configured(60).await;
    // Ten at once, slow enough to overlap, all past the check before any
    // is kept: four fit.
    let calls: Vec<_> = (0..10)
        .map(|n| {
            let mut client = p.client.clone();
            let request = configure(json!({ "region": format!("c{n}"), "sleepMs": 100 }));
            tokio::spawn(async move { client.configure(request).await })
        })
        .collect();
    let mut kept = 0;
    for call in calls {
        match call.await.unwrap() {
            Ok(_) => kept += 1,
            Err(e) => assert_eq!(e.code(), Code::FailedPrecondition, "{}", e.message()),
        }
    }
    assert_eq!(kept, 4, "64 setup calls in all");
    // Instances that ran them out of order are gone: all agree on the last.
    let mut seen = HashSet::new();
    for out in configs_at_once(&p, 6, 200).await {
        seen.insert((out["config"]["region"].as_str().unwrap().to_owned(), out["configures"].as_f64().unwrap() as u32));
    }
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert!(seen.iter().all(|(r, n)| r.starts_with('c') && *n == 64), "every one ran all 64: {seen:?}");
}

#[tokio::test]
async fn concurrent_calls_run_on_parallel_instances_with_replayed_configuration() {
    let engine = TestEngine::start().await;
    let mut p = Plugin::packed(&component("echo-provider"), Some(&engine.address)).await.unwrap();
    p.boot(&engine.address, json!({"region": "venus"})).await.unwrap();
    let mut instances = HashSet::new();
    for out in configs_at_once(&p, 6, 400).await {
        assert_eq!(out["config"], json!({"region": "venus"}), "every instance saw Configure");
        instances.insert(out["instance"].as_str().unwrap().to_owned());
    }
    assert!(instances.len() >= 2, "calls overlapped on several instances: {instances:?}");
}

#[tokio::test]
async fn busy_guests_do_not_stall_other_calls() {
    let engine = TestEngine::start().await;
    let mut p = Plugin::packed(&component("echo-provider"), Some(&engine.address)).await.unwrap();
    p.boot(&engine.address, json!({})).await.unwrap();
    // More CPU-bound calls than the host has worker threads.
    let spinners: Vec<_> = (0..4)
        .map(|_| {
            let mut client = p.client.clone();
            tokio::spawn(async move { client.invoke(invoke("echo:index:config", json!({"spinMs": 3000}))).await })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(300)).await;
    p.client.invoke(invoke("echo:index:echo", json!({"quick": true}))).await.unwrap();
    let still_spinning = spinners.iter().filter(|s| !s.is_finished()).count();
    assert_eq!(still_spinning, 4, "the quick call was answered while every busy guest still ran");
    for s in spinners {
        s.await.unwrap().unwrap();
    }
}

#[tokio::test]
async fn compiled_components_are_cached_and_a_corrupt_or_foreign_artifact_is_rebuilt() {
    let cache = tempfile::tempdir().unwrap();
    let info = || {
        let out = std::process::Command::new(host_bin())
            .args(["info", "--cache-dir"])
            .arg(cache.path())
            .arg(component("echo-provider"))
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    assert!(info().contains("cached:  no"));
    let artifacts: Vec<_> = std::fs::read_dir(cache.path()).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(artifacts.len(), 1, "one artifact, no temporary files left: {artifacts:?}");
    let name = artifacts[0].file_name().unwrap().to_string_lossy().into_owned();
    let digest = info().lines().find_map(|l| l.strip_prefix("digest:  sha256:")).unwrap().to_owned();
    assert!(name.starts_with(&digest), "keyed by the component digest: {name}");
    assert!(info().contains("cached:  yes"));
    std::fs::write(&artifacts[0], b"garbage").unwrap();
    assert!(info().contains("cached:  no"), "a corrupt artifact is recompiled, not trusted");
    assert!(info().contains("cached:  yes"));

    // Native code others could have written is not run either (Unix: the mode says so).
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&artifacts[0]).unwrap().permissions().mode() & 0o022, 0, "whatever the umask");
        std::fs::set_permissions(&artifacts[0], std::fs::Permissions::from_mode(0o666)).unwrap();
        assert!(info().contains("cached:  no"), "an artifact others may write is recompiled, not loaded");
        assert!(info().contains("cached:  yes"), "and written again, for this user only");
        std::fs::set_permissions(cache.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(info().contains("cached:  no"), "nor from a directory anyone may write");
    }
}

#[tokio::test]
async fn a_changed_component_file_is_served_anew() {
    let engine = TestEngine::start().await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("provider.wasm");
    let env = [("PULUMI_WASM_CACHE_DIR".to_owned(), dir.path().join("cache").to_string_lossy().into_owned())];
    let args = ["serve".to_owned(), file.to_string_lossy().into_owned(), engine.address.clone()];
    let served = || async {
        let mut p = Plugin::spawn_with(&host_bin(), &args, &env).await.unwrap();
        let schema = p.client.get_schema(GetSchemaRequest::default()).await.unwrap().into_inner().schema;
        let schema: serde_json::Value = serde_json::from_str(&schema).unwrap();
        schema["name"].as_str().unwrap().to_owned()
    };
    std::fs::copy(component("echo-provider"), &file).unwrap();
    // Settled, so the record of this file that the first start leaves is trusted by the next.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(served().await, "echo");
    assert_eq!(served().await, "echo", "a warm start from the record");
    // The same path, other bytes: whatever the record says, this file is read again.
    std::fs::copy(component("random-provider"), &file).unwrap();
    assert_eq!(served().await, "random");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(served().await, "random");
    std::fs::write(&file, b"\0asm not a component").unwrap();
    let out = std::process::Command::new(host_bin()).args(&args).envs(env.iter().cloned()).output().unwrap();
    assert!(!out.status.success(), "a broken file is refused even after warm starts");
}

/// A warm start prints its port line before the component is loaded; the
/// load still has to succeed, or fail the start, in every case.
#[tokio::test]
async fn a_warm_start_loads_whatever_its_cache_lost_and_still_refuses_a_bad_policy() {
    let engine = TestEngine::start().await;
    let dir = tempfile::tempdir().unwrap();
    let (file, cache) = (dir.path().join("provider.wasm"), dir.path().join("cache"));
    let mut env = vec![
        ("PULUMI_WASM_CACHE_DIR".to_owned(), cache.to_string_lossy().into_owned()),
        ("RUST_LOG".to_owned(), "info".to_owned()),
    ];
    let args = ["serve".to_owned(), file.to_string_lossy().into_owned(), engine.address.clone()];
    std::fs::copy(component("echo-provider"), &file).unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    // What it answers, and whether it started warm (serving while its component loads).
    let served = |env: Vec<(String, String)>| {
        let args = args.clone();
        async move {
            let mut p = Plugin::spawn_with(&host_bin(), &args, &env).await.unwrap();
            let info = p.client.get_plugin_info(()).await.unwrap().into_inner();
            let schema = p.client.get_schema(GetSchemaRequest::default()).await.unwrap().into_inner().schema;
            let echoed = p.client.invoke(invoke("echo:index:echo", json!({"x": 1}))).await.unwrap().into_inner();
            let log = p.stderr_with("loaded echo", Duration::from_secs(5)).await;
            let answers = (info.version, serde_json::from_str::<serde_json::Value>(&schema).unwrap()["name"].clone());
            let warm = log.contains("warm start:");
            if warm {
                // Loading waits for the port line, so as not to slow it.
                let (serving, loading) = (log.find("serving on"), log.find("loading echo "));
                assert!(serving.is_some() && serving < loading, "the port line, then the load: {log}");
            }
            ((answers, echoed), warm)
        }
    };
    let (first, early) = served(env.clone()).await;
    assert_eq!(first.0.1, "echo");
    assert!(!early, "a first start loads before its port line");
    assert_eq!(served(env.clone()).await, (first.clone(), true), "a warm start answers as the first did");
    let artifacts = || -> Vec<_> {
        std::fs::read_dir(&cache)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "cwasm"))
            .collect()
    };
    // The record still names the file, but its artifact is junk, then gone.
    std::fs::write(&artifacts()[0], b"junk").unwrap();
    assert_eq!(served(env.clone()).await, (first.clone(), true), "a junk artifact: the file is loaded instead");
    std::fs::remove_file(&artifacts()[0]).unwrap();
    assert_eq!(served(env.clone()).await, (first, true), "no artifact: the file is loaded instead");
    assert_eq!(artifacts().len(), 1, "and compiled into the cache again");
    // A policy that cannot be applied stops even a warm start, before its port line.
    let policy = dir.path().join("policy.toml");
    std::fs::write(&policy, "[providers.echo]\ndirs = [{ host = \"/no/such/dir\", guest = \"/d\" }]\n").unwrap();
    env.push(("PULUMI_WASM_POLICY".to_owned(), policy.to_string_lossy().into_owned()));
    let run =
        tokio::process::Command::new(host_bin()).args(&args).envs(env.iter().cloned()).kill_on_drop(true).output();
    let out = tokio::time::timeout(Duration::from_secs(60), run).await.expect("refused, not served").unwrap();
    assert!(!out.status.success() && out.stdout.is_empty(), "no port line: {out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("/no/such/dir"), "{out:?}");
}

#[tokio::test]
async fn every_rpc_reaches_the_guest() {
    let engine = TestEngine::start().await;
    let mut p = Plugin::packed(&component("echo-provider"), Some(&engine.address)).await.unwrap();
    p.boot(&engine.address, json!({})).await.unwrap();
    let c = &mut p.client;
    // The SDK's defaults answer these; the messages prove the guest was called.
    let default = "is not implemented by this provider";
    let err = c.call(CallRequest { tok: "echo:index:Thing/method".into(), ..Default::default() }).await.unwrap_err();
    assert!(err.code() == Code::Unimplemented && err.message().contains(default), "{err:?}");
    let err =
        c.construct(ConstructRequest { r#type: "echo:index:Comp".into(), ..Default::default() }).await.unwrap_err();
    assert!(err.code() == Code::Unimplemented && err.message().contains(default), "{err:?}");
    let err = c.list(ListRequest { token: "echo:index:Thing".into(), ..Default::default() }).await.unwrap_err();
    assert!(err.code() == Code::Unimplemented && err.message().contains(default), "{err:?}");
    let err = c
        .parameterize(ParameterizeRequest {
            parameters: Some(parameterize_request::Parameters::Args(parameterize_request::ParametersArgs {
                args: vec!["x".into()],
            })),
        })
        .await
        .unwrap_err();
    assert!(err.code() == Code::Unimplemented && err.message().contains(default), "{err:?}");
    let err = c.parameterize(ParameterizeRequest { parameters: None }).await.unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    let m =
        c.get_mapping(GetMappingRequest { key: "terraform".into(), provider: "x".into() }).await.unwrap().into_inner();
    assert!(m.provider.is_empty() && m.data.is_empty());
    // Unimplemented, as every call the provider does not implement.
    let err = c.get_mappings(GetMappingsRequest { key: "terraform".into() }).await.unwrap_err();
    assert!(err.code() == Code::Unimplemented && err.message().contains(default), "{err:?}");
    let schema = c.get_schema(GetSchemaRequest::default()).await.unwrap().into_inner().schema;
    assert!(schema.contains("\"echo\""));
    // DiffConfig's default is a structural diff of the inputs.
    let d = c
        .diff_config(DiffRequest {
            urn: "urn:pulumi:dev::proj::pulumi:providers:echo::default".into(),
            olds: Some(to_struct(json!({"region": "a"}))),
            old_inputs: Some(to_struct(json!({"region": "a"}))),
            news: Some(to_struct(json!({"region": "b"}))),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(d.diffs, vec!["region"]);
}

#[tokio::test]
async fn a_perf_map_names_the_guests_code_only_when_asked_for() {
    use e2e_tests::Launch;
    let echo = component("echo-provider");
    let mut p = Plugin::launch(&echo, None, &Launch::new().env("PULUMI_WASM_PERF_MAP", "true")).await.unwrap();
    let plain = Plugin::launch(&echo, None, &Launch::new()).await.unwrap();
    // The component is loaded behind the port line; a call waits for it.
    for q in [&p, &plain] {
        q.client.clone().get_plugin_info(()).await.unwrap();
    }
    let maps = [&p, &plain].map(|q| std::path::PathBuf::from(format!("/tmp/perf-{}.map", q.pid().unwrap())));
    let text = std::fs::read_to_string(&maps[0]);
    let _ = std::fs::remove_file(&maps[0]);
    let text = text.unwrap_or_else(|e| panic!("{}: {e}; stderr: {}", maps[0].display(), p.stderr()));
    // perf's format: start (0x...) and size in hex, then the name.
    let guest: Vec<&str> = text.lines().filter(|l| l.contains("wasm[0]::")).collect();
    assert!(guest.len() > 100, "the guest's functions are named: {} of {} lines", guest.len(), text.lines().count());
    for line in &guest {
        let mut f = line.splitn(3, ' ');
        let (start, size) = (f.next().unwrap(), f.next().unwrap());
        let start = start.strip_prefix("0x").unwrap_or(start);
        assert!(u64::from_str_radix(start, 16).is_ok() && u64::from_str_radix(size, 16).is_ok(), "{line}");
    }
    assert!(!maps[1].exists(), "no map without the setting");
    p.client.get_plugin_info(()).await.unwrap();

    // Both loads left the artifact in the cache, so these two start from it.
    // perf reads the map only for code in anonymous memory: with the setting
    // the artifact is read into memory, without it its file is mapped.
    let warm = Plugin::launch(&echo, None, &Launch::new().env("PULUMI_WASM_PERF_MAP", "true")).await.unwrap();
    let warm_plain = Plugin::launch(&echo, None, &Launch::new()).await.unwrap();
    for q in [&warm, &warm_plain] {
        q.client.clone().get_plugin_info(()).await.unwrap();
    }
    let mapped = |q: &Plugin| {
        let maps = std::fs::read_to_string(format!("/proc/{}/maps", q.pid().unwrap())).unwrap();
        maps.lines().filter(|l| l.ends_with(".cwasm")).map(str::to_owned).collect::<Vec<_>>()
    };
    assert!(!mapped(&warm_plain).is_empty(), "a warm start maps its artifact's file");
    assert_eq!(mapped(&warm), Vec::<String>::new(), "with the perf map no artifact file is mapped");
    let map = std::path::PathBuf::from(format!("/tmp/perf-{}.map", warm.pid().unwrap()));
    let text = std::fs::read_to_string(&map);
    let _ = std::fs::remove_file(&map);
    let text = text.unwrap();
    assert!(text.lines().filter(|l| l.contains("wasm[0]::")).count() > 100, "a warm start's map names the guest too");
}

#[tokio::test]
async fn autonaming_is_said_at_handshake_from_a_cold_or_warm_start_and_honoured_by_check() {
    use pulumirpc::check_request::{AutonamingOptions, autonaming_options::Mode};
    let engine = TestEngine::start().await;
    let (_dir, exe) = pack(&component("echo-provider")).unwrap();
    // A file changed moments before it was seen is not trusted to a record.
    tokio::time::sleep(Duration::from_millis(300)).await;
    // The first start loads the component; the second serves from what the
    // cache recorded of it, before the component has loaded.
    let env = [("RUST_LOG".to_owned(), "info".to_owned())];
    for start in ["cold", "warm"] {
        let mut p = Plugin::spawn_with(&exe, std::slice::from_ref(&engine.address), &env).await.unwrap();
        let request = ProviderHandshakeRequest { engine_address: engine.address.clone(), ..Default::default() };
        let hs = p.client.handshake(request).await.unwrap().into_inner();
        assert!(hs.supports_autonaming_configuration, "{start} start: echo says it takes autonaming options");
        // The line comes before the port line; stderr is read as it comes.
        let mut warm = false;
        for _ in 0..40 {
            warm = p.stderr().contains("warm start:");
            if warm || start == "cold" {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(warm, start == "warm", "{}", p.stderr());
        // Configure says the same, whatever the guest's configure answered (echo's says no).
        let configured = p.client.configure(ConfigureRequest::default()).await.unwrap().into_inner();
        assert!(configured.supports_autonaming_configuration, "{start} start: as at Handshake");
        for (mode, given, expected) in [
            (Mode::Propose, None, "proposed-1a2b"),
            (Mode::Propose, Some("mine"), "mine"),
            (Mode::Enforce, Some("mine"), "proposed-1a2b"),
        ] {
            let news = match given {
                Some(n) => json!({"name": n}),
                None => json!({}),
            };
            let check = CheckRequest {
                urn: "urn:pulumi:dev::proj::echo:index:Thing::t".into(),
                r#type: "echo:index:Thing".into(),
                news: Some(to_struct(news)),
                autonaming: Some(AutonamingOptions { proposed_name: "proposed-1a2b".into(), mode: mode as i32 }),
                ..Default::default()
            };
            let inputs = from_struct(p.client.check(check).await.unwrap().into_inner().inputs.as_ref());
            assert_eq!(inputs["name"], expected, "{start} start, {mode:?} with {given:?}");
        }
    }
}

#[tokio::test]
async fn worker_threads_default_to_one_per_core_and_can_be_set() {
    use e2e_tests::Launch;
    let echo = component("echo-provider");
    let said = |p: &Plugin| {
        let text = p.stderr();
        let at = text.find("worker threads)")?;
        let open = text[..at].rfind('(')?;
        text[open + 1..at].trim().parse::<usize>().ok()
    };
    let cores = std::thread::available_parallelism().unwrap().get();
    for (value, expected) in [(None, cores), (Some("3"), 3)] {
        let launch = value.map_or_else(Launch::new, |v| Launch::new().env("PULUMI_WASM_WORKER_THREADS", v));
        let mut p = Plugin::launch(&echo, None, &launch.arg("-v=3")).await.unwrap();
        p.client.get_plugin_info(()).await.unwrap();
        // The line follows the port line; stderr is read by a task of its own.
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        while said(&p).is_none() && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(said(&p), Some(expected), "{value:?}; stderr: {}", p.stderr());
    }
    for bad in ["0", "many"] {
        let launch = Launch::new().env("PULUMI_WASM_WORKER_THREADS", bad);
        let err = Plugin::launch(&echo, None, &launch).await.err().expect("a bad count is refused").to_string();
        assert!(
            err.contains(&format!("PULUMI_WASM_WORKER_THREADS must be a positive number of threads, not '{bad}'")),
            "{err}"
        );
    }
}

/// Packing again into a folder whose plugin is running (a second `pulumi
/// up`, or one still going) replaces the plugin's files whole: the running
/// plugin keeps serving, and the next one starts from the new files.
#[tokio::test]
async fn packing_again_over_a_running_plugin_replaces_its_files() {
    let engine = TestEngine::start().await;
    let (dir, exe) = pack(&component("echo-provider")).unwrap();
    let mut running = Plugin::spawn(&exe, std::slice::from_ref(&engine.address)).await.unwrap();
    let repack = std::process::Command::new(host_bin())
        .arg("pack")
        .arg(component("echo-provider"))
        .arg("--out")
        .arg(dir.path())
        .env("PULUMI_WASM_CACHE_DIR", e2e_tests::cache_dir())
        .output()
        .unwrap();
    assert!(repack.status.success(), "{}", String::from_utf8_lossy(&repack.stderr));
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    let r = running.client.invoke(invoke("echo:index:echo", json!({ "x": 1 }))).await;
    assert!(r.is_ok(), "the running plugin still serves: {r:?}");
    assert!(running.is_running());
    let mut next = Plugin::spawn(&exe, std::slice::from_ref(&engine.address)).await.unwrap();
    let r = next.client.invoke(invoke("echo:index:echo", json!({ "x": 2 }))).await.unwrap();
    assert_eq!(from_struct(r.into_inner().r#return.as_ref())["x"], 2.0);
}

/// A package a Parameterize made in one attach-mode run is not the next
/// run's: that run's Constructs register no such package with the engine.
#[tokio::test]
async fn attach_mode_forgets_the_last_run_s_parameterized_packages() {
    use e2e_tests::TestMonitor;
    use pulumirpc::parameterize_request::{Parameters, ParametersValue};
    let (_dir, exe) = pack(&component("probe-provider")).unwrap();
    let mut p = Plugin::spawn_with(&exe, &[], &[]).await.unwrap();
    let construct = |monitor: &TestMonitor| ConstructRequest {
        monitor_endpoint: monitor.address.clone(),
        r#type: "fleet:index:Component".into(),
        name: "c".into(),
        parent: "urn:pulumi:dev::proj::pulumi:pulumi:Stack::proj-dev".into(),
        ..Default::default()
    };
    let mut packages = Vec::new();
    for run in 0..2 {
        let engine = TestEngine::start().await;
        p.client.attach(PluginAttach { address: engine.address.clone() }).await.unwrap();
        if run == 0 {
            let version = env!("CARGO_PKG_VERSION").to_owned();
            let value = ParametersValue { name: "fleet".into(), version, value: b"v1".to_vec() };
            let request = ParameterizeRequest { parameters: Some(Parameters::Value(value)) };
            p.client.parameterize(request).await.unwrap();
        }
        let monitor = TestMonitor::start().await;
        let _ = p.client.construct(construct(&monitor)).await;
        packages.push(monitor.received().packages.len());
        p.client.cancel(()).await.unwrap();
    }
    assert_eq!(packages, [1, 0], "the first run's package, then none");
}
