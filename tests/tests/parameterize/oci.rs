//! Components from an OCI registry: pinned by digest, and private ones
//! pulled with the user's docker login.

use super::*;
use e2e_tests::flood::{Flood, FloodRegistry};

#[tokio::test]
async fn a_component_from_an_oci_registry_pinned_by_digest() {
    let registry = e2e_tests::Registry::start();
    let bench = Bench::new().await;
    let version = env!("CARGO_PKG_VERSION");
    let random = component("random-provider");
    let reference = format!("{}/providers/random:{version}", registry.address);
    bench.push(&random, &reference, None);

    // `pulumi package add wasm oci://<registry>/providers/random:<version>`.
    let mut p = bench.start("store").await;
    let source = format!("oci://{reference}");
    let added = by_args(&mut p, &[&source]).await.unwrap_or_else(|e| panic!("{e}; stderr: {}", p.stderr()));
    assert_eq!((added.name.as_str(), added.version.as_str()), ("random", version));
    let s = schema(&mut p, "", "").await;
    let value = value_of(&s);
    let decoded: Json = serde_json::from_slice(&value).unwrap();
    assert_eq!(decoded["component"]["digest"], format!("sha256:{}", sha256_of(&random)));
    // Recorded pinned by manifest digest, so a moved tag cannot change what later runs get.
    let recorded = decoded["component"]["source"].as_str().unwrap();
    assert!(recorded.starts_with(&format!("oci://{}/providers/random@sha256:", registry.address)), "{recorded}");
    drop(p);

    // A later run on a machine with an empty store pulls it again, by that digest.
    let mut p = bench.start("empty-store").await;
    by_value(&mut p, "random", version, &value).await.unwrap_or_else(|e| panic!("{e}; stderr: {}", p.stderr()));
    assert_eq!(schema(&mut p, "random", version).await, s);
    p.boot(&bench.engine.address, json!({})).await.unwrap();
    random_lifecycle(&mut p).await;
    drop(p);

    // The registry's copy tampered with: refused, nothing served.
    let blob = registry.blob_data(&sha256_of(&random));
    let mut bytes = std::fs::read(&blob).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&blob, &bytes).unwrap();
    let mut p = bench.start("another-empty-store").await;
    let err = by_value(&mut p, "random", version, &value).await.unwrap_err();
    assert_status(&err, Code::NotFound, &["digest mismatch"]);
    let err = p.client.check(CheckRequest { r#type: STRING.into(), ..Default::default() }).await.unwrap_err();
    assert_status(&err, Code::FailedPrecondition, &["pulumi package add wasm"]);
}

#[tokio::test]
async fn a_private_component_is_pulled_with_the_users_docker_login() {
    let registry = e2e_tests::Registry::start_with(e2e_tests::Auth::Token(&[("alice", "s3cret")]));
    let bench = Bench::new().await;
    let version = env!("CARGO_PKG_VERSION");
    let random = component("random-provider");
    let reference = format!("{}/private/random:{version}", registry.address);
    bench.push(&random, &reference, Some(("alice", "s3cret")));
    let source = format!("oci://{reference}");

    // The engine starts the plugin with the user's environment: no login, no pull.
    let nowhere = bench.store("no-docker-config");
    let mut p = bench.start_with("a", &[("DOCKER_CONFIG", nowhere.to_str().unwrap())]).await;
    let err = by_args(&mut p, &[&source]).await.unwrap_err();
    assert!(err.message().contains(&format!("docker login {}", registry.address)), "{}", err.message());
    drop(p);

    // With what `docker login` stored, `pulumi package add wasm oci://...` works.
    let login = json!({ "auths": { registry.address.clone(): { "auth": registry::basic("alice", "s3cret") } } });
    let docker = registry::docker_config(&bench.store("docker"), login);
    let mut p = bench.start_with("b", &[("DOCKER_CONFIG", docker.as_str())]).await;
    let added = by_args(&mut p, &[&source]).await.unwrap_or_else(|e| panic!("{e}; stderr: {}", p.stderr()));
    assert_eq!((added.name.as_str(), added.version.as_str()), ("random", version));
    p.boot(&bench.engine.address, json!({})).await.unwrap();
    random_lifecycle(&mut p).await;
}

#[tokio::test]
async fn credentials_from_the_environment_go_only_where_the_user_sends_them() {
    let registry = e2e_tests::Registry::start_with(e2e_tests::Auth::Token(&[("alice", "s3cret")]));
    let tokens = registry.tokens.as_ref().unwrap();
    let bench = Bench::new().await;
    let version = env!("CARGO_PKG_VERSION");
    let reference = format!("{}/private/random:{version}", registry.address);
    bench.push(&component("random-provider"), &reference, Some(("alice", "s3cret")));
    let creds = [("PULUMI_WASM_OCI_USERNAME", "alice"), ("PULUMI_WASM_OCI_PASSWORD", "s3cret")];
    let alice = || tokens.log().iter().filter(|l| l.starts_with("alice ")).count();

    // `pulumi package add wasm oci://...`: the user named this registry, so it gets their credentials.
    let mut p = bench.start_with("a", &creds).await;
    by_args(&mut p, &[&format!("oci://{reference}")]).await.unwrap_or_else(|e| panic!("{e}; {}", p.stderr()));
    let value = value_of(&schema(&mut p, "", "").await);
    drop(p);

    // A value names its registry itself (whoever generated the SDK chose it):
    // on a machine without the component, the credentials are not sent to it.
    let before = alice();
    let mut p = bench.start_with("b", &creds).await;
    let err = by_value(&mut p, "random", version, &value).await.unwrap_err();
    assert_status(&err, Code::NotFound, &["named this registry, not you", "PULUMI_WASM_OCI_REGISTRY"]);
    assert_eq!(alice(), before, "no token asked for as alice: {:?}", tokens.log());
    drop(p);

    // Unless PULUMI_WASM_OCI_REGISTRY says they are for that registry.
    let scoped = [creds[0], creds[1], ("PULUMI_WASM_OCI_REGISTRY", registry.address.as_str())];
    let mut p = bench.start_with("b", &scoped).await;
    by_value(&mut p, "random", version, &value).await.unwrap_or_else(|e| panic!("{e}; {}", p.stderr()));
    assert!(alice() > before, "{:?}", tokens.log());
}

/// A value whose registry floods the plugin with an endless manifest gets an
/// error once the bound is reached, and the plugin goes on serving.
#[tokio::test]
async fn a_registry_flooding_a_value_pull_is_cut_off_and_the_plugin_goes_on() {
    let registry = e2e_tests::Registry::start();
    let bench = Bench::new().await;
    let version = env!("CARGO_PKG_VERSION");
    let reference = format!("{}/providers/random:{version}", registry.address);
    bench.push(&component("random-provider"), &reference, None);
    let mut p = bench.start("a").await;
    by_args(&mut p, &[&format!("oci://{reference}")]).await.unwrap_or_else(|e| panic!("{e}; {}", p.stderr()));
    let value = value_of(&schema(&mut p, "", "").await);
    drop(p);

    // The same value, naming a registry that answers with a manifest without end.
    let flood = FloodRegistry::start(Flood::Manifest);
    let mut flooding: Json = serde_json::from_slice(&value).unwrap();
    let source = flooding["component"]["source"].as_str().unwrap().replace(&registry.address, &flood.address);
    flooding["component"]["source"] = json!(source);
    let mut p = bench.start("b").await;
    let err = by_value(&mut p, "random", version, &serde_json::to_vec(&flooding).unwrap()).await.unwrap_err();
    assert_status(&err, Code::NotFound, &[&flood.address, "over the 4194304-byte limit"]);
    assert!(flood.sent() < 64 << 20, "the plugin took {} bytes", flood.sent());

    // The same process then takes the real value and serves it.
    by_value(&mut p, "random", version, &value).await.unwrap_or_else(|e| panic!("{e}; {}", p.stderr()));
    p.boot(&bench.engine.address, json!({})).await.unwrap();
    random_lifecycle(&mut p).await;
}
