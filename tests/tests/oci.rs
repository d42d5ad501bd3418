//! Distribution through a real OCI registry (Debian's `docker-registry`),
//! through the real `pulumi-wasm` binary: push, pull by tag and by digest,
//! `oci://` component arguments, tampering, a foreign layout, plain HTTP, progress,
//! and credentials: basic auth and the bearer-token flow, from the environment
//! or from what `docker login` stored (including a credential helper); HTTPS
//! with a private CA.

use std::path::Path;

use e2e_tests::flood::{BLOB_SIZE, Flood, FloodRegistry};
use e2e_tests::registry::{basic, docker_config, padded_component};
use e2e_tests::{Auth, Plugin, Registry, TestEngine, cache_dir, component, host_bin};
use serde_json::{Value, json};

const VERSION: &str = env!("CARGO_PKG_VERSION");
const OCI_MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";

/// `pulumi-wasm args...` against the store at `store`: success, stdout and stderr.
fn run(store: &Path, args: &[&str]) -> (bool, String, String) {
    run_env(store, args, &[])
}

fn run_env(store: &Path, args: &[&str], env: &[(&str, &str)]) -> (bool, String, String) {
    let out = std::process::Command::new(host_bin())
        .args(args)
        .env("PULUMI_WASM_STORE", store)
        .env("PULUMI_WASM_CACHE_DIR", cache_dir())
        .env_remove("PULUMI_WASM_OCI_INSECURE")
        .env_remove("PULUMI_WASM_OCI_USERNAME")
        .env_remove("PULUMI_WASM_OCI_PASSWORD")
        // No `docker login` state unless a test gives one.
        .env("DOCKER_CONFIG", "/nonexistent/docker-config")
        .envs(env.iter().copied())
        .output()
        .expect("runs pulumi-wasm");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.success(), text(&out.stdout), text(&out.stderr))
}

/// Runs and expects success; stdout and stderr.
fn ok(store: &Path, args: &[&str]) -> (String, String) {
    let (success, stdout, stderr) = run(store, args);
    assert!(success, "pulumi-wasm {args:?} failed:\nstdout: {stdout}\nstderr: {stderr}");
    (stdout, stderr)
}

/// Runs and expects failure; stderr.
fn fails(store: &Path, args: &[&str]) -> String {
    let (success, stdout, stderr) = run(store, args);
    assert!(!success, "pulumi-wasm {args:?} should fail:\nstdout: {stdout}\nstderr: {stderr}");
    stderr
}

fn field<'a>(text: &'a str, key: &str) -> &'a str {
    text.lines().find_map(|l| l.strip_prefix(key)).map(str::trim).unwrap_or_else(|| panic!("no {key} in {text}"))
}

/// The component's digest as `info` reports it, without `sha256:`.
fn digest_of(store: &Path, component: &str) -> String {
    let (info, _) = ok(store, &["info", component]);
    field(&info, "digest:").strip_prefix("sha256:").expect("sha256:").to_owned()
}

/// Pushes `component` to `reference`; returns the pinned reference and the manifest digest.
fn push(store: &Path, component: &Path, reference: &str) -> (String, String) {
    let (out, _) = ok(store, &["push", component.to_str().unwrap(), reference]);
    let manifest = field(&out, "digest:").strip_prefix("sha256:").expect("sha256:").to_owned();
    (field(&out, "pinned:").to_owned(), manifest)
}

#[tokio::test(flavor = "multi_thread")]
async fn push_then_pull_by_tag_and_by_digest() {
    let registry = Registry::start();
    let dir = tempfile::tempdir().unwrap();
    let (pusher, by_tag, by_digest) = (dir.path().join("pusher"), dir.path().join("by-tag"), dir.path().join("pinned"));
    let random = component("random-provider");
    let original = std::fs::read(&random).unwrap();
    let layer = digest_of(&pusher, random.to_str().unwrap());
    let repo = format!("{}/providers/random", registry.address);

    // Push: tagged with the component's version, answered with the pinned reference.
    let (out, _) = ok(&pusher, &["push", random.to_str().unwrap(), &format!("oci://{repo}")]);
    assert!(
        out.contains(&format!("pushed random {VERSION}")) && out.contains(&format!("to {repo}:{VERSION}")),
        "{out}"
    );
    let manifest = field(&out, "digest:").strip_prefix("sha256:").unwrap().to_owned();
    let pinned = field(&out, "pinned:").to_owned();
    assert_eq!(pinned, format!("{repo}@sha256:{manifest}"));
    assert_eq!(std::fs::read(registry.blob_data(&layer)).unwrap(), original, "the registry holds the exact bytes");
    let (again, _) = ok(&pusher, &["push", random.to_str().unwrap(), &repo]);
    assert!(again.contains("already had") && again.contains(&pinned), "same bytes, same manifest: {again}");

    // Pull by tag into an empty store: installed under its own name and version, the same bytes.
    let (out, _) = ok(&by_tag, &["pull", &format!("oci://{repo}:{VERSION}")]);
    assert!(out.contains(&format!("manifest sha256:{manifest}")), "{out}");
    assert!(out.contains(&format!("installed random {VERSION}")) && out.contains(&format!("sha256:{layer}")), "{out}");
    assert_eq!(std::fs::read(by_tag.join(format!("blobs/sha256/{layer}.wasm"))).unwrap(), original);
    let (ls, _) = ok(&by_tag, &["ls"]);
    assert!(ls.lines().nth(1).is_some_and(|l| l.starts_with("random") && l.contains(VERSION)), "{ls}");
    assert_eq!(digest_of(&by_tag, "random@^0.1"), layer);

    // Pull pinned by the manifest digest.
    let (out, _) = ok(&by_digest, &["pull", &pinned]);
    assert!(out.contains(&format!("installed random {VERSION}")) && out.contains(&layer), "{out}");
    let err = fails(&dir.path().join("none"), &["pull", &format!("{repo}@sha256:{}", "0".repeat(64))]);
    assert!(err.contains("pulling the manifest of"), "{err}");
    // No tag named: `latest`, which push never tags; the error says what to name.
    let err = fails(&dir.path().join("none"), &["pull", &format!("oci://{repo}")]);
    assert!(err.contains("`latest` was asked for") && err.contains(&format!("oci://{repo}:<version>")), "{err}");

    // `oci://` wherever a component is taken: info (from async code) ...
    let fresh = dir.path().join("fresh");
    assert_eq!(digest_of(&fresh, &format!("oci://{pinned}")), layer);
    assert_eq!(std::fs::read(fresh.join(format!("blobs/sha256/{layer}.wasm"))).unwrap(), original, "kept as a cache");
    assert!(!fresh.join("packages").exists(), "a cached pull installs nothing");
    // ... and serve (from a blocking thread), to an engine that gets a working provider.
    let engine = TestEngine::start().await;
    let args = ["serve".to_owned(), format!("oci://{repo}:{VERSION}"), engine.address.clone()];
    let env = [("PULUMI_WASM_STORE".to_owned(), dir.path().join("serve").to_string_lossy().into_owned())];
    let mut p = Plugin::spawn_with(&host_bin(), &args, &env).await.unwrap();
    assert_eq!(p.boot(&engine.address, json!({})).await.unwrap(), VERSION);
    drop(p);

    // References that cannot work fail before any transfer.
    let err = fails(&pusher, &["push", random.to_str().unwrap(), &format!("{}/Random", registry.address)]);
    assert!(err.contains("bad OCI reference") && err.contains("lower-case"), "{err}");
    let err = fails(&pusher, &["push", random.to_str().unwrap(), &pinned]);
    assert!(err.contains("cannot push to"), "{err}");
}

#[test]
fn a_tampered_layer_or_manifest_is_rejected_and_nothing_is_installed() {
    let registry = Registry::start();
    let dir = tempfile::tempdir().unwrap();
    let random = component("random-provider");
    let layer = digest_of(&dir.path().join("pusher"), random.to_str().unwrap());
    let repo = format!("{}/tamper/random", registry.address);
    let (pinned, _) = push(&dir.path().join("pusher"), &random, &repo);

    // Same size, one bit flipped, behind the registry's back.
    let data = registry.blob_data(&layer);
    let mut evil = std::fs::read(&data).unwrap();
    *evil.last_mut().unwrap() ^= 1;
    std::fs::write(&data, &evil).unwrap();

    let store = dir.path().join("store");
    for reference in [format!("{repo}:{VERSION}"), pinned.clone()] {
        let err = fails(&store, &["pull", &reference]);
        assert!(err.contains("component layer digest mismatch") && err.contains(&format!("sha256:{layer}")), "{err}");
    }
    let err = fails(&store, &["info", &format!("oci://{pinned}")]);
    assert!(err.contains("digest mismatch"), "{err}");

    // A manifest changed behind the registry's back no longer matches the digest it was pinned by.
    let manifest = pinned.rsplit_once("@sha256:").unwrap().1;
    let data = registry.blob_data(manifest);
    let text = std::fs::read_to_string(&data).unwrap();
    assert!(text.contains("\"random\""), "{text}");
    std::fs::write(&data, text.replace("\"random\"", "\"evil!!\"")).unwrap();
    let err = fails(&store, &["pull", &pinned]);
    assert!(err.contains(&format!("manifest digest mismatch: expected sha256:{manifest}")), "{err}");
    assert!(!store.join("packages").exists() && !store.join("blobs").exists(), "nothing installed or cached");
}

#[test]
fn other_artifact_layouts_are_rejected() {
    let registry = Registry::start();
    let dir = tempfile::tempdir().unwrap();
    let repo = format!("{}/layout/random", registry.address);
    push(&dir.path().join("pusher"), &component("random-provider"), &repo);
    let path = format!("/v2/layout/random/manifests/{VERSION}");
    let (status, body) = registry.http("GET", &path, &[("Accept", OCI_MANIFEST)], b"").unwrap();
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    let manifest: Value = serde_json::from_slice(&body).unwrap();

    // The same blobs under other media types: a container image's layer, a container image's config.
    let mut tar_layer = manifest.clone();
    tar_layer["layers"][0]["mediaType"] = json!("application/vnd.oci.image.layer.v1.tar");
    let mut image_config = manifest.clone();
    image_config["config"]["mediaType"] = json!("application/vnd.oci.image.config.v1+json");
    for (tag, edited, expected) in [
        ("tar", tar_layer, "layer media type application/vnd.oci.image.layer.v1.tar"),
        ("image", image_config, "config media type application/vnd.oci.image.config.v1+json"),
    ] {
        let body = serde_json::to_vec(&edited).unwrap();
        let path = format!("/v2/layout/random/manifests/{tag}");
        let (status, answer) = registry.http("PUT", &path, &[("Content-Type", OCI_MANIFEST)], &body).unwrap();
        assert_eq!(status, 201, "{}", String::from_utf8_lossy(&answer));
        let store = dir.path().join(tag);
        let err = fails(&store, &["pull", &format!("{repo}:{tag}")]);
        assert!(err.contains("not a Wasm component artifact") && err.contains(expected), "{err}");
        assert!(!store.join("packages").exists());
    }
}

#[test]
fn large_components_report_progress() {
    let registry = Registry::start();
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.wasm");
    std::fs::write(&big, padded_component(&std::fs::read(component("random-provider")).unwrap(), 3 << 20)).unwrap();
    let repo = format!("{}/big/random", registry.address);
    let (out, pushed) = ok(&dir.path().join("pusher"), &["push", big.to_str().unwrap(), &repo]);
    let (pull_out, pulled) = ok(&dir.path().join("puller"), &["pull", &format!("{repo}:{VERSION}")]);
    assert!(out.contains("pinned:") && pull_out.contains("installed random"), "{out}\n{pull_out}");
    // The layer is the component file.
    let mib = format!("{:.1}", std::fs::metadata(&big).unwrap().len() as f64 / f64::from(1 << 20));
    for (stderr, verb) in [(pushed, "pushing"), (pulled, "pulling")] {
        let lines: Vec<&str> = stderr.lines().filter(|l| l.starts_with(verb)).collect();
        // At most one line per tenth (a network read may cover more than one).
        let percent =
            |l: &str| -> u32 { l.split('%').next().and_then(|p| p.rsplit(' ').next()).unwrap().parse().unwrap() };
        let tenths: Vec<u32> = lines.iter().map(|l| percent(l) / 10).collect();
        assert!(lines.len() >= 3 && tenths.windows(2).all(|w| w[0] < w[1]), "{stderr}");
        assert!(lines[0].ends_with(&format!("  0% (0.0 of {mib} MiB)")), "{stderr}");
        assert!(lines[lines.len() - 1].ends_with(&format!("100% ({mib} of {mib} MiB)")), "{stderr}");
    }
    // Small components stay quiet.
    let (_, quiet) = ok(&dir.path().join("pusher"), &["push", component("echo-provider").to_str().unwrap(), &repo]);
    assert!(!quiet.contains("pushing"), "{quiet}");
}

#[test]
fn plain_http_only_for_loopback_unless_insecure() {
    let registry = Registry::start();
    let dir = tempfile::tempdir().unwrap();
    let (pusher, puller) = (dir.path().join("pusher"), dir.path().join("puller"));
    let random = component("random-provider");
    // On Linux 0.0.0.0 reaches the same registry, but it is not a loopback name: HTTPS, which fails.
    let port = registry.address.rsplit(':').next().unwrap();
    let elsewhere = format!("0.0.0.0:{port}/plain/random");
    let err = fails(&pusher, &["push", random.to_str().unwrap(), &elsewhere]);
    assert!(
        err.contains(&format!("{elsewhere}:{VERSION}")) && err.contains(&format!("https://0.0.0.0:{port}/")),
        "{err}"
    );
    assert!(!registry.blob_data(&digest_of(&pusher, random.to_str().unwrap())).exists(), "nothing went over HTTP");

    let (out, _) = ok(&pusher, &["push", "--insecure", random.to_str().unwrap(), &elsewhere]);
    assert!(out.contains("pinned:"), "{out}");
    let err = fails(&puller, &["pull", &format!("{elsewhere}:{VERSION}")]);
    assert!(err.contains("pulling the manifest of") && err.contains("https://"), "{err}");
    let (success, out, err) =
        run_env(&puller, &["pull", &format!("{elsewhere}:{VERSION}")], &[("PULUMI_WASM_OCI_INSECURE", "1")]);
    assert!(success && out.contains("installed random"), "{out}\n{err}");
}

/// An executable `docker-credential-<name>` in `bin` running `script` (sh).
fn credential_helper(bin: &Path, name: &str, script: &str) {
    let helper = bin.join(format!("docker-credential-{name}"));
    std::fs::write(&helper, format!("#!/bin/sh\n{script}")).unwrap();
    std::fs::set_permissions(&helper, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
}

/// A registry with `auth`, a scratch directory, the `random` component's path
/// and the repository `<registry>/acme/random`.
fn registry_with(auth: Auth) -> (Registry, tempfile::TempDir, String, String) {
    let registry = Registry::start_with(auth);
    let random = component("random-provider").to_string_lossy().into_owned();
    let repo = format!("{}/acme/random", registry.address);
    (registry, tempfile::tempdir().unwrap(), random, repo)
}

#[test]
fn a_token_registry_lets_anyone_pull_and_its_users_push() {
    // ghcr.io's shape: every request needs a bearer token; anonymous tokens may pull.
    let (registry, dir, random, repo) = registry_with(Auth::Token(&[("alice", "s3cret")]));
    let (tokens, random) = (registry.tokens.as_ref().unwrap(), random.as_str());

    // No credentials: the push is refused, and the message says how to give some.
    let err = fails(&dir.path().join("a"), &["push", random, &repo]);
    assert!(err.contains(&format!("run `docker login {}`", registry.address)), "{err}");
    assert!(!tokens.log().iter().any(|l| l.contains("push ->") && l.ends_with("push")), "{:?}", tokens.log());

    // The environment's credentials are exchanged for a token that may push.
    let env = [("PULUMI_WASM_OCI_USERNAME", "alice"), ("PULUMI_WASM_OCI_PASSWORD", "s3cret")];
    let (success, out, err) = run_env(&dir.path().join("a"), &["push", random, &repo], &env);
    assert!(success && out.contains("pinned:"), "{out}\n{err}");
    let granted = "alice repository:acme/random:pull,push -> pull,push".to_owned();
    assert!(tokens.log().contains(&granted), "{:?}", tokens.log());

    // Anyone pulls, with an anonymous token: the public-artifact flow.
    let (out, _) = ok(&dir.path().join("b"), &["pull", &format!("{repo}:{VERSION}")]);
    assert!(out.contains(&format!("installed random {VERSION}")), "{out}");
    assert!(tokens.log().contains(&"anonymous repository:acme/random:pull -> pull".to_owned()), "{:?}", tokens.log());

    // A wrong password is refused by the token service, and the message names whose it was.
    let env = [("PULUMI_WASM_OCI_USERNAME", "alice"), ("PULUMI_WASM_OCI_PASSWORD", "wrong")];
    let (success, _, err) = run_env(&dir.path().join("c"), &["pull", &format!("{repo}:{VERSION}")], &env);
    assert!(!success, "{err}");
    assert!(err.contains("refused user 'alice' from PULUMI_WASM_OCI_USERNAME"), "{err}");
}

#[test]
fn docker_login_credentials_are_used_for_their_registry_only() {
    let (registry, dir, random, repo) = registry_with(Auth::Token(&[("alice", "s3cret")]));
    let (tokens, random) = (registry.tokens.as_ref().unwrap(), random.as_str());
    let store = dir.path().join("store");

    // `auths`, as `docker login` writes it without a credential store.
    let config = docker_config(
        &dir.path().join("plain"),
        json!({ "auths": { registry.address.clone(): { "auth": basic("alice", "s3cret") } } }),
    );
    let (success, out, err) =
        run_env(&store, &["push", random, &format!("{repo}:auths")], &[("DOCKER_CONFIG", &config)]);
    assert!(success && out.contains("pinned:"), "{out}\n{err}");

    // A credential helper (`docker-credential-<name> get`, the server on stdin).
    let bin = dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let answer = r#"printf '{"ServerURL":"%s","Username":"alice","Secret":"s3cret"}' "$server""#;
    credential_helper(&bin, "e2etest", &format!("read server\n{answer}\n"));
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let config =
        docker_config(&dir.path().join("helper"), json!({ "credHelpers": { registry.address.clone(): "e2etest" } }));
    let env = [("DOCKER_CONFIG", config.as_str()), ("PATH", path.as_str())];
    let (success, out, err) = run_env(&store, &["push", random, &format!("{repo}:helper")], &env);
    assert!(success && out.contains("pinned:"), "{out}\n{err}");
    let pushes = tokens.log().iter().filter(|l| l.starts_with("alice ") && l.ends_with("-> pull,push")).count();
    assert_eq!(pushes, 2, "{:?}", tokens.log());

    // The environment wins over the config; and another registry's entry is not used.
    let env = [
        ("DOCKER_CONFIG", config.as_str()),
        ("PATH", path.as_str()),
        ("PULUMI_WASM_OCI_USERNAME", "alice"),
        ("PULUMI_WASM_OCI_PASSWORD", "wrong"),
    ];
    let (success, _, err) = run_env(&store, &["push", random, &format!("{repo}:env")], &env);
    assert!(!success && err.contains("from PULUMI_WASM_OCI_USERNAME"), "{err}");
    let elsewhere = docker_config(
        &dir.path().join("elsewhere"),
        json!({ "auths": { "registry.example.com": { "auth": basic("alice", "s3cret") } } }),
    );
    let (success, _, err) =
        run_env(&store, &["push", random, &format!("{repo}:other")], &[("DOCKER_CONFIG", &elsewhere)]);
    assert!(!success && err.contains("the registry wants credentials"), "{err}");

    // Docker Desktop's usual setup: a credential store that has nothing for this
    // registry. An anonymous pull, as `docker pull` would do.
    credential_helper(&bin, "e2estore", "read server\necho 'credentials not found in native keychain'\nexit 1\n");
    let config = docker_config(&dir.path().join("store"), json!({ "credsStore": "e2estore" }));
    let env = [("DOCKER_CONFIG", config.as_str()), ("PATH", path.as_str())];
    let (success, out, err) = run_env(&dir.path().join("anonymous"), &["pull", &format!("{repo}:auths")], &env);
    assert!(success && out.contains("installed random"), "{out}\n{err}");

    // A helper that never answers (a prompt nobody sees) is given up on, and
    // one that cannot be run (Docker Desktop uninstalled) is gone without:
    // this registry lets anyone pull, so both pull, saying what went wrong.
    credential_helper(&bin, "e2estuck", "exec sleep 30\n");
    let config =
        docker_config(&dir.path().join("stuck"), json!({ "credHelpers": { registry.address.clone(): "e2estuck" } }));
    let env = [("DOCKER_CONFIG", config.as_str()), ("PATH", path.as_str()), ("PULUMI_WASM_OCI_HELPER_TIMEOUT", "0.5")];
    let (success, out, err) = run_env(&dir.path().join("stuck-store"), &["pull", &format!("{repo}:auths")], &env);
    assert!(success && out.contains("installed random"), "{out}\n{err}");
    assert!(err.contains("did not answer within 500ms") && err.contains("without credentials"), "{err}");
    let config = docker_config(
        &dir.path().join("broken"),
        json!({ "credHelpers": { registry.address.clone(): "missing-helper" } }),
    );
    let (success, out, err) =
        run_env(&dir.path().join("broken-store"), &["pull", &format!("{repo}:auths")], &[("DOCKER_CONFIG", &config)]);
    assert!(success && out.contains("installed random"), "{out}\n{err}");
    assert!(err.contains("cannot be read") && err.contains(&config), "{err}");
}

#[test]
fn a_basic_auth_registry_takes_the_same_credentials() {
    let (registry, dir, random, repo) = registry_with(Auth::Basic(&[("bob", "hunter2")]));
    let random = random.as_str();

    let err = fails(&dir.path().join("a"), &["push", random, &repo]);
    assert!(err.contains("401") && err.contains("the registry wants credentials"), "{err}");
    let config = docker_config(
        &dir.path().join("docker"),
        json!({ "auths": { registry.address.clone(): { "auth": basic("bob", "hunter2") } } }),
    );
    let (success, out, err) = run_env(&dir.path().join("a"), &["push", random, &repo], &[("DOCKER_CONFIG", &config)]);
    assert!(success && out.contains("pinned:"), "{out}\n{err}");
    let (success, out, err) =
        run_env(&dir.path().join("b"), &["pull", &format!("{repo}:{VERSION}")], &[("DOCKER_CONFIG", &config)]);
    assert!(success && out.contains(&format!("installed random {VERSION}")), "{out}\n{err}");
    let err = fails(&dir.path().join("c"), &["pull", &format!("{repo}:{VERSION}")]);
    assert!(err.contains("the registry wants credentials"), "{err}");
    // A registry that wants credentials, which a broken helper could not give:
    // the refusal says why none were sent, naming the file.
    let broken = docker_config(
        &dir.path().join("broken"),
        json!({ "credHelpers": { registry.address.clone(): "missing-helper" } }),
    );
    let (success, _, err) =
        run_env(&dir.path().join("d"), &["pull", &format!("{repo}:{VERSION}")], &[("DOCKER_CONFIG", &broken)]);
    assert!(!success, "{err}");
    assert!(err.contains("wants credentials, and the credentials for") && err.contains(&broken), "{err}");
}

#[test]
fn an_https_registry_with_a_private_ca_is_refused_until_ssl_cert_file_trusts_it() {
    let registry = Registry::start_tls();
    let ca = registry.ca.clone().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let random = component("random-provider");
    let random = random.to_str().unwrap();
    // 0.0.0.0 is not a loopback name, so HTTPS, which this registry alone speaks.
    let port = registry.address.rsplit(':').next().unwrap();
    let repo = format!("0.0.0.0:{port}/acme/random");

    // Its CA is nobody's: the certificate is refused and nothing is sent.
    let err = fails(&dir.path().join("a"), &["push", random, &repo]);
    assert!(err.contains("https://0.0.0.0") && err.to_lowercase().contains("certificate"), "{err}");
    assert!(!registry.blob_data(&digest_of(&dir.path().join("a"), random)).exists());

    // Trusted the way TLS clients on Linux are told about a private CA (here the
    // CA alone: the test reaches no other registry).
    let env = [("SSL_CERT_FILE", ca.to_str().unwrap())];
    let (success, out, err) = run_env(&dir.path().join("a"), &["push", random, &repo], &env);
    assert!(success && out.contains("pinned:"), "{out}\n{err}");
    let (success, out, err) = run_env(&dir.path().join("b"), &["pull", &format!("{repo}:{VERSION}")], &env);
    assert!(success && out.contains(&format!("installed random {VERSION}")), "{out}\n{err}");
}

/// Basic credentials from the environment, for the flood registry's tests of whom they go to.
const ALICE: [(&str, &str); 2] = [("PULUMI_WASM_OCI_USERNAME", "alice"), ("PULUMI_WASM_OCI_PASSWORD", "s3cret")];

/// `pulumi-wasm pull` of a component from `registry`: success and stderr.
fn pull_from(store: &Path, registry: &FloodRegistry, env: &[(&str, &str)]) -> (bool, String) {
    let (success, _, err) = run_env(store, &["pull", &format!("oci://{}/acme/x:1.0", registry.address)], env);
    (success, err)
}

/// Pulls as alice from a flood registry that serves the manifest and not
/// the component; returns it and the requests it saw.
fn pull_up_to_the_component(flood: Flood) -> (FloodRegistry, Vec<String>) {
    let store = tempfile::tempdir().unwrap();
    let registry = FloodRegistry::start(flood);
    let (success, err) = pull_from(store.path(), &registry, &ALICE);
    assert!(!success && err.contains("pulling the component of") && err.contains("answered 404"), "{flood:?}: {err}");
    let seen = registry.seen();
    (registry, seen)
}

/// A registry answering with a body that never ends, where a pull reads one
/// (the manifest, the token service's answer, an error, the component), is
/// cut off after a bounded read with a message saying so; it never gets to
/// send the gigabyte it has, nor its escape sequence to the terminal.
#[test]
fn endless_bodies_from_a_registry_are_cut_off() {
    let store = tempfile::tempdir().unwrap();
    let bounded = |flood: Flood, expected: &[&str]| {
        let registry = FloodRegistry::start(flood);
        let (success, err) = pull_from(store.path(), &registry, &[]);
        assert!(!success, "{flood:?}: {err}");
        for text in expected {
            assert!(err.contains(text), "{flood:?}: {text:?} not in {err}");
        }
        assert!(!err.contains('\x1b'), "{flood:?}: the registry's escape sequence reached the terminal: {err:?}");
        // What the kernel buffers besides the bound, far below the flood's gigabyte.
        assert!(registry.sent() < 64 << 20, "{flood:?}: the client took {} bytes", registry.sent());
    };
    bounded(Flood::Manifest, &["pulling the manifest of", "the manifest from", "is over the 4194304-byte limit"]);
    bounded(Flood::DeclaredManifest, &["the manifest from", "declares 10737418240 bytes"]);
    bounded(Flood::Token, &["the token service's answer", "over the 1048576-byte limit"]);
    bounded(Flood::ErrorBody, &["answered 500", "DENIED", "flood  [2Jxxx"]);
    bounded(Flood::Blob, &[&format!("where its descriptor says {BLOB_SIZE}")]);
}

/// A registry that redirects the component to another host, whose 401 names
/// a token service of its own: the user's credentials for the registry go
/// neither to that host nor to its token service.
#[test]
fn a_redirect_targets_challenge_gets_no_credentials() {
    let store = tempfile::tempdir().unwrap();
    let registry = FloodRegistry::start(Flood::RedirectedChallenge);
    let (success, err) = pull_from(store.path(), &registry, &ALICE);
    assert!(!success && err.contains(&format!("{}/elsewhere/blob answered 401", registry.elsewhere)), "{err}");
    let seen = registry.seen();
    assert!(seen.contains(&format!("{} /elsewhere/blob", registry.elsewhere)), "{seen:?}");
    assert!(!seen.iter().any(|l| l.contains("/token") || l.ends_with(" authorization")), "{seen:?}");
}

/// A token service that redirects to another origin is followed there, and
/// the basic credentials go to the token service alone, not to where it
/// redirects; the token that origin hands out opens the registry.
#[test]
fn a_redirected_token_request_is_followed_without_the_credentials() {
    let (registry, seen) = pull_up_to_the_component(Flood::RedirectedToken);
    let (here, there) = (&registry.address, &registry.elsewhere);
    let token = |at: &str| seen.iter().find(|l| l.starts_with(&format!("{at} /token?scope="))).cloned();
    assert!(token(here).is_some_and(|l| l.ends_with(" authorization")), "{seen:?}");
    assert!(token(there).is_some_and(|l| !l.ends_with(" authorization")), "{seen:?}");
    assert!(seen.contains(&format!("{here} /v2/acme/x/manifests/1.0 authorization")), "{seen:?}");
}

/// A registry that trickles the manifest or the component (a byte every
/// 100 ms) is given up on at the pull's deadline (`PULUMI_WASM_OCI_TIMEOUT`
/// here one second); one redirecting forever after five hops.
#[test]
fn slow_or_looping_registries_are_given_up_on() {
    let store = tempfile::tempdir().unwrap();
    let quick = [("PULUMI_WASM_OCI_TIMEOUT", "1")];
    let cases = [
        (Flood::Trickle, ["pulling the manifest of", "timed out"]),
        (Flood::TrickleBlob, ["pulling the component of", "took longer than 1s"]),
    ];
    for (flood, expected) in cases {
        let (success, err) = pull_from(store.path(), &FloodRegistry::start(flood), &quick);
        assert!(!success && expected.iter().all(|e| err.contains(e)), "{flood:?}: {err}");
    }
    let registry = FloodRegistry::start(Flood::Redirects);
    let (success, err) = pull_from(store.path(), &registry, &[]);
    assert!(!success && err.contains("redirected more than 5 times"), "{err}");
    assert_eq!(registry.seen().len(), 6, "{:?}", registry.seen());
}

/// A registry whose `/v2/` asks for nothing but whose repository asks for
/// basic credentials gets them.
#[test]
fn a_registry_asking_only_at_the_repository_gets_the_credentials() {
    let (registry, seen) = pull_up_to_the_component(Flood::OpenV2);
    assert!(seen.contains(&format!("{} /v2/acme/x/manifests/1.0 authorization", registry.address)), "{seen:?}");
}

/// A registry that says "too many requests" is asked again, as its
/// `Retry-After` advises, a few times; one that keeps saying it fails the
/// pull with what to do.
#[test]
fn a_rate_limiting_registry_is_asked_again_then_given_up_on_with_advice() {
    let (_registry, seen) = pull_up_to_the_component(Flood::RateLimitedTwice);
    let manifests = seen.iter().filter(|l| l.contains("/manifests/")).count();
    assert_eq!(manifests, 3, "{seen:?}");

    let store = tempfile::tempdir().unwrap();
    let registry = FloodRegistry::start(Flood::RateLimited);
    let (success, err) = pull_from(store.path(), &registry, &[]);
    assert!(!success, "{err}");
    assert!(err.contains("429") && err.contains("docker login") && err.contains("asking again"), "{err}");
    let manifests = registry.seen().iter().filter(|l| l.contains("/manifests/")).count();
    assert_eq!(manifests, 4, "asked once and again three times: {:?}", registry.seen());
}
