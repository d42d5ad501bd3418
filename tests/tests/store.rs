//! The provider store through the real `pulumi-wasm` binary: install, ls,
//! `name@requirement` lookup for info and serve, a tampered blob, remove.

use std::path::Path;
use std::process::Output;

use e2e_tests::{Plugin, TestEngine, cache_dir, component, from_struct, host_bin, to_struct};
use pulumirpc::*;
use serde_json::json;

/// `pulumi-wasm args...` against the store at `store`, in `cwd`.
fn run_in(store: &Path, cwd: &Path, args: &[&str]) -> Output {
    std::process::Command::new(host_bin())
        .args(args)
        .current_dir(cwd)
        .env("PULUMI_WASM_STORE", store)
        .env("PULUMI_WASM_CACHE_DIR", cache_dir())
        .output()
        .expect("runs pulumi-wasm")
}

/// Runs and expects success; returns stdout.
fn ok(store: &Path, args: &[&str]) -> String {
    let out = run_in(store, store.parent().unwrap(), args);
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "pulumi-wasm {args:?} failed:\nstdout: {stdout}\nstderr: {stderr}");
    stdout.into_owned()
}

/// Runs and expects failure; returns stderr.
fn fails(store: &Path, args: &[&str]) -> String {
    let out = run_in(store, store.parent().unwrap(), args);
    assert!(!out.status.success(), "pulumi-wasm {args:?} should fail: {}", String::from_utf8_lossy(&out.stdout));
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn field<'a>(info: &'a str, key: &str) -> &'a str {
    info.lines().find_map(|l| l.strip_prefix(key)).map(str::trim).unwrap_or_else(|| panic!("no {key} in {info}"))
}

#[tokio::test]
async fn install_ls_lookup_serve_and_remove() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let (echo, random) = (component("echo-provider"), component("random-provider"));
    let version = env!("CARGO_PKG_VERSION");

    // Install: the name and version come from the component itself.
    let out = ok(&store, &["install", echo.to_str().unwrap()]);
    assert!(out.contains(&format!("installed echo {version}")), "{out}");
    let out = ok(&store, &["install", random.to_str().unwrap()]);
    assert!(out.contains(&format!("installed random {version}")), "{out}");
    let out = ok(&store, &["install", random.to_str().unwrap()]);
    assert!(out.contains("already installed"), "{out}");
    let err = fails(&store, &["install", "oci://ghcr.io/acme/random:1.0.0"]);
    assert!(err.contains("pulumi-wasm pull oci://ghcr.io/acme/random:1.0.0"), "a registry's is pulled: {err}");
    let index: serde_json::Value =
        serde_json::from_slice(&std::fs::read(store.join(format!("packages/random/{version}.json"))).unwrap()).unwrap();

    // ls shows both, one line each under a header.
    let ls = ok(&store, &["ls"]);
    let lines: Vec<&str> = ls.lines().collect();
    assert_eq!(lines.len(), 3, "{ls}");
    assert!(lines[0].starts_with("NAME") && lines[1].starts_with("echo ") && lines[2].starts_with("random "), "{ls}");
    assert!(lines[2].contains(version) && lines[2].contains(&index["digest"].as_str().unwrap()[..19]), "{ls}");
    assert_eq!(ok(&store, &["ls", "random"]).lines().count(), 2);

    // info resolves `name@requirement` from the store: the same component as the file.
    let from_store = ok(&store, &["info", "random@^0.1"]);
    let from_file = ok(&store, &["info", random.to_str().unwrap()]);
    assert_eq!(field(&from_store, "name:"), "random");
    assert_eq!(field(&from_store, "version:"), version);
    assert_eq!(field(&from_store, "digest:"), field(&from_file, "digest:"));
    assert_eq!(field(&from_store, "digest:"), index["digest"]);
    assert_eq!(field(&from_store, "contract:"), "pulumi:provider@0.3.1", "the SDK builds the latest contract");
    assert_eq!(field(&ok(&store, &["info", "echo"]), "name:"), "echo", "a bare name is the newest release");
    let err = fails(&store, &["info", "random@^9"]);
    assert!(err.contains("no installed version of 'random' matches '^9'") && err.contains(version), "{err}");
    let err = fails(&store, &["info", "nothing@^1"]);
    assert!(err.contains("no installed package named 'nothing'"), "{err}");

    // A file that exists wins over the store.
    let cwd = tempfile::tempdir().unwrap();
    std::fs::copy(&echo, cwd.path().join("random@^0.1")).unwrap();
    let out = run_in(&store, cwd.path(), &["info", "random@^0.1"]);
    assert_eq!(field(&String::from_utf8_lossy(&out.stdout), "name:"), "echo");

    // serve resolves it too, and the engine gets a working provider.
    let engine = TestEngine::start().await;
    let args = ["serve".to_owned(), "random@^0.1".to_owned(), engine.address.clone()];
    let env = [("PULUMI_WASM_STORE".to_owned(), store.to_string_lossy().into_owned())];
    let mut p = Plugin::spawn_with(&host_bin(), &args, &env).await.unwrap();
    assert_eq!(p.boot(&engine.address, json!({})).await.unwrap(), version);
    let created = p
        .client
        .create(CreateRequest {
            urn: "urn:pulumi:dev::proj::random:index:RandomString::s".into(),
            name: "s".into(),
            r#type: "random:index:RandomString".into(),
            properties: Some(to_struct(json!({"length": 12}))),
            timeout: 30.0,
            ..Default::default()
        })
        .await
        .unwrap_or_else(|e| panic!("create: {e}; stderr: {}", p.stderr()))
        .into_inner();
    assert_eq!(from_struct(created.properties.as_ref())["result"].as_str().unwrap().chars().count(), 12);
    drop(p);

    // A tampered blob is refused, by digest, before anything runs it.
    let digest = index["digest"].as_str().unwrap().strip_prefix("sha256:").unwrap();
    let blob = store.join(format!("blobs/sha256/{digest}.wasm"));
    let original = std::fs::read(&blob).unwrap();
    let mut evil = original.clone();
    let last = evil.len() - 1;
    evil[last] ^= 1;
    std::fs::write(&blob, &evil).unwrap();
    let err = fails(&store, &["serve", "random@^0.1", &engine.address]);
    assert!(err.contains("corrupt") && err.contains(digest), "{err}");
    std::fs::write(&blob, &original).unwrap();

    // remove takes the version and its blob; echo stays.
    let out = ok(&store, &["remove", &format!("random@{version}")]);
    assert!(out.contains(&format!("removed random {version}")) && out.contains("deleted"), "{out}");
    assert!(!blob.exists());
    let ls = ok(&store, &["ls"]);
    assert!(ls.contains("echo") && !ls.contains("random"), "{ls}");
    let err = fails(&store, &["info", "random@^0.1"]);
    assert!(err.contains("no installed package named 'random'"), "{err}");
    let err = fails(&store, &["remove", &format!("random@{version}")]);
    assert!(err.contains("not installed"), "{err}");
    let err = fails(&store, &["remove", "echo"]);
    assert!(err.contains("NAME@VERSION"), "{err}");
}

/// A rebuild installed under the same version replaces the store's bytes;
/// `install` says so, and what it means for SDKs pinned to the old ones.
#[tokio::test]
async fn reinstalling_other_bytes_under_a_version_says_what_it_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let random = component("random-provider");
    let version = env!("CARGO_PKG_VERSION");
    ok(&store, &["install", random.to_str().unwrap()]);
    // The same component with a custom section more: other bytes, same name and version.
    let mut rebuilt = std::fs::read(&random).unwrap();
    rebuilt.extend_from_slice(&[0, 3, 1, b'x', b'y']);
    let rebuilt_path = dir.path().join("random.wasm");
    std::fs::write(&rebuilt_path, &rebuilt).unwrap();
    let out = ok(&store, &["install", rebuilt_path.to_str().unwrap()]);
    assert!(out.contains(&format!("reinstalled random {version}")), "{out}");
    assert!(out.contains(&format!("pulumi package add wasm random@={version}")), "{out}");
}
