//! The kv example against a real REST API on loopback.

use super::*;

const ITEM: &str = "kv:index:Item";
const TOKEN: &str = "s3cret-token";

fn urn(name: &str) -> String {
    format!("urn:pulumi:dev::proj::{ITEM}::{name}")
}

fn kv_policy(api: &KvApi) -> String {
    format!("[providers.kv]\nhttp = [\"{}\"]\nenv = [\"KV_TOKEN\"]\ntimeout-s = 60\n", api.url())
}

async fn kv(api: &KvApi, launch: Launch) -> (TestEngine, Plugin) {
    let engine = TestEngine::start().await;
    let mut p = Plugin::launch(&component("kv-provider"), Some(&engine.address), &launch).await.unwrap();
    p.boot(&engine.address, json!({"endpoint": api.url()})).await.unwrap();
    (engine, p)
}

fn check(name: &str, news: Json) -> CheckRequest {
    CheckRequest {
        urn: urn(name),
        name: name.into(),
        r#type: ITEM.into(),
        olds: Some(to_struct(json!({}))),
        news: Some(to_struct(news)),
        random_seed: vec![1; 32],
        ..Default::default()
    }
}

fn create(name: &str, inputs: &Option<prost_types::Struct>, preview: bool) -> CreateRequest {
    CreateRequest {
        urn: urn(name),
        name: name.into(),
        r#type: ITEM.into(),
        properties: inputs.clone(),
        timeout: 30.0,
        preview,
        ..Default::default()
    }
}

fn read(name: &str, id: &str, state: &Option<prost_types::Struct>) -> ReadRequest {
    ReadRequest {
        id: id.into(),
        urn: urn(name),
        name: name.into(),
        r#type: ITEM.into(),
        properties: state.clone(),
        inputs: state.clone(),
        ..Default::default()
    }
}

#[tokio::test]
async fn kv_names_an_item_the_program_does_not_name_as_the_engine_asks() {
    use pulumirpc::check_request::{AutonamingOptions, autonaming_options::Mode};
    let api = KvApi::start(None).await;
    let (engine, mut p) = kv(&api, Launch::new().policy(&kv_policy(&api), PolicyAt::Beside)).await;
    let handshake = ProviderHandshakeRequest { engine_address: engine.address.clone(), ..Default::default() };
    let said = p.client.handshake(handshake).await.unwrap().into_inner();
    assert!(said.supports_autonaming_configuration, "the item's key is named by Check, so kv takes the options");
    let key = |r: &CheckResponse| from_struct(r.inputs.as_ref())["key"].clone();
    // No options (an older engine): Pulumi's default, the resource's name and seven hex digits of the seed.
    let plain = p.client.check(check("logs", json!({"value": "v"}))).await.unwrap().into_inner();
    assert_eq!((key(&plain), plain.failures.len()), (json!("logs-0101010"), 0));
    // The engine's proposal; none at all when naming is disabled.
    let mut proposed = check("logs", json!({"value": "v"}));
    proposed.autonaming = Some(AutonamingOptions { proposed_name: "logs-prod".into(), mode: Mode::Propose as i32 });
    let checked = p.client.check(proposed.clone()).await.unwrap().into_inner();
    assert_eq!(key(&checked), json!("logs-prod"));
    let created = p.client.create(create("logs", &checked.inputs, false)).await.unwrap().into_inner();
    assert_eq!(created.id, "logs-prod");
    assert!(api.item("logs-prod").is_some(), "stored under the name it was given");
    proposed.autonaming.as_mut().unwrap().mode = Mode::Disable as i32;
    let disabled = p.client.check(proposed).await.unwrap().into_inner();
    let failures: Vec<_> = disabled.failures.iter().map(|f| (f.property.as_str(), f.reason.as_str())).collect();
    assert_eq!(failures, [("key", "is required: automatic naming is disabled")]);
}

/// `pulumi-wasm pack --allow-http URL --allow-env NAME`: the packed plugin
/// runs with those grants (they were used to load the component and then
/// dropped); packed again into the same folder without them, it no longer
/// has them.
#[tokio::test]
async fn grants_given_to_pack_are_the_packed_plugin_s() {
    let api = KvApi::start(Some(TOKEN)).await;
    let url = api.url();
    let launch = Launch::new().pack_arg("--allow-http").pack_arg(&url).pack_arg("--allow-env").pack_arg("KV_TOKEN");
    let (_engine, mut p) = kv(&api, launch.env("KV_TOKEN", TOKEN)).await;
    let inputs = p.client.check(check("a", json!({"key": "k", "value": "v"}))).await.unwrap().into_inner().inputs;
    let created = p.client.create(create("a", &inputs, false)).await;
    assert_eq!(created.unwrap_or_else(|e| panic!("{e:?}; {}", p.stderr())).into_inner().id, "k");
    assert!(api.item("k").is_some());

    let (_engine, mut p) = kv(&api, Launch::new().env("KV_TOKEN", TOKEN)).await;
    let err = p.client.create(create("b", &inputs, false)).await.unwrap_err();
    assert!(err.message().contains("missing grant: http"), "{err:?}");

    let folder = tempfile::tempdir().unwrap();
    let pack = |extra: &[&str]| {
        let mut pack = std::process::Command::new(host_bin());
        pack.arg("pack").arg(component("kv-provider")).arg("--out").arg(folder.path()).args(extra);
        let out = pack.env_remove("PULUMI_WASM_POLICY").output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let policy = folder.path().join("pulumi-resource-kv.policy.toml");
    let data = folder.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let dir_flag = format!("{}:/data:ro", data.display());
    let packed =
        pack(&["--allow-http", &url, "--allow-env", "KV_TOKEN", "--allow-dir", &dir_flag, "--allow-package", "random"]);
    assert!(packed.contains(&format!("http {url:?}")), "it says what it packed: {packed}");
    assert!(std::fs::read_to_string(&policy).unwrap().contains(&url));
    // What `grants` reads back from the packed file, as the plugin does.
    let wasm = folder.path().join("pulumi-resource-kv.wasm");
    let shown =
        std::process::Command::new(host_bin()).arg("grants").arg(&wasm).env_remove("PULUMI_WASM_POLICY").output();
    let shown = String::from_utf8_lossy(&shown.unwrap().stdout).into_owned();
    assert!(shown.contains("policy packed beside it"), "{shown}");
    assert!(shown.contains(&format!("http: {url}")) && shown.contains("packages: random"), "{shown}");
    assert!(shown.contains(&format!("{} -> /data (ro)", data.display())), "{shown}");
    // The plugin runs with them, started cold and then warm (the digest the
    // packed section is pinned to is the one the warm start recorded).
    let exe = folder.path().join("pulumi-resource-kv");
    let engine = TestEngine::start().await;
    // A file is recorded for warm starts once its timestamps are settled (see process.rs).
    tokio::time::sleep(Duration::from_millis(300)).await;
    for (start, key) in ["cold", "warm"].into_iter().zip(["c1", "c2"]) {
        let env = [("KV_TOKEN".to_owned(), TOKEN.to_owned()), ("RUST_LOG".to_owned(), "info".to_owned())];
        let mut p = Plugin::spawn_with(&exe, std::slice::from_ref(&engine.address), &env).await.unwrap();
        p.boot(&engine.address, json!({"endpoint": url})).await.unwrap();
        let inputs = p.client.check(check(key, json!({"key": key, "value": "v"}))).await.unwrap().into_inner().inputs;
        let created = p.client.create(create(key, &inputs, false)).await;
        assert!(created.is_ok(), "{start}: {created:?}; {}", p.stderr());
        let log = p.stderr_with("loaded kv", Duration::from_secs(5)).await;
        assert_eq!(log.contains("warm start:"), start == "warm", "{start}: {log}");
    }
    assert!(pack(&[]).contains("grants: none"));
    assert!(!policy.exists(), "the grants of the earlier pack are gone");
}

#[tokio::test]
async fn kv_lifecycle_through_the_host_with_its_grant() {
    let api = KvApi::start(Some(TOKEN)).await;
    let launch = Launch::new().policy(&kv_policy(&api), PolicyAt::Beside).env("KV_TOKEN", TOKEN);
    let (engine, mut p) = kv(&api, launch).await;
    let c = &mut p.client;

    // Check validates locally, by property path.
    let bad = c.check(check("a", json!({"key": "", "value": 3}))).await.unwrap().into_inner();
    let paths: Vec<&str> = bad.failures.iter().map(|f| f.property.as_str()).collect();
    assert_eq!(paths, vec!["key", "value"]);
    let inputs = json!({"key": "greeting", "value": "hello", "tags": {"env": "dev"}});
    let checked = c.check(check("a", inputs.clone())).await.unwrap().into_inner();
    assert!(checked.failures.is_empty(), "{:?}", checked.failures);
    let inputs_pb = checked.inputs;

    // A preview creates nothing.
    let preview = c.create(create("a", &inputs_pb, true)).await.unwrap().into_inner();
    assert_eq!(preview.id, "");
    assert!(api.seen().is_empty(), "a preview makes no request: {:?}", api.requests());

    // Create: PUT /items/greeting, with the token the user passed through.
    let created = c.create(create("a", &inputs_pb, false)).await.unwrap().into_inner();
    assert_eq!(created.id, "greeting");
    assert_eq!(from_struct(created.properties.as_ref()), inputs);
    let tags = BTreeMap::from([("env".to_string(), "dev".to_string())]);
    assert_eq!(api.item("greeting").map(|i| (i.value, i.tags)), Some(("hello".into(), Some(tags))));
    let seen = api.seen();
    assert_eq!(seen.last().map(|s| (s.method.as_str(), s.path.as_str())), Some(("PUT", "/items/greeting")));
    assert_eq!(seen.last().unwrap().authorization.as_deref(), Some(format!("Bearer {TOKEN}").as_str()));
    engine.wait_for_log(|l| l.urn == urn("a") && l.message.contains("created item")).await.expect("create's log");

    // Creating the same key again does not adopt the existing item.
    let err = c.create(create("b", &inputs_pb, false)).await.unwrap_err();
    assert_eq!(err.code(), Code::FailedPrecondition);
    assert!(err.message().contains("already exists"), "{}", err.message());

    // Read: no drift yet.
    let state = created.properties.clone();
    let r = c.read(read("a", "greeting", &state)).await.unwrap().into_inner();
    assert_eq!(r.id, "greeting");
    assert_eq!(from_struct(r.properties.as_ref()), inputs);

    // Someone changes the item on the server: Read sees it.
    api.put_direct("greeting", "changed behind pulumi's back", None);
    let r = c.read(read("a", "greeting", &state)).await.unwrap().into_inner();
    assert_eq!(r.id, "greeting");
    let drifted = from_struct(r.properties.as_ref());
    assert_eq!(drifted, json!({"key": "greeting", "value": "changed behind pulumi's back"}));
    assert_eq!(from_struct(r.inputs.as_ref()), drifted, "refresh updates the inputs too");

    // Diff: a new value updates in place, a new key replaces.
    let diff = |news: Json| DiffRequest {
        id: "greeting".into(),
        urn: urn("a"),
        name: "a".into(),
        r#type: ITEM.into(),
        olds: r.properties.clone(),
        news: Some(to_struct(news)),
        old_inputs: r.inputs.clone(),
        ..Default::default()
    };
    let new_inputs = json!({"key": "greeting", "value": "hello again", "tags": {"env": "prod"}});
    let d = c.diff(diff(new_inputs.clone())).await.unwrap().into_inner();
    assert_eq!(d.changes, DiffChanges::DiffSome as i32);
    assert!(d.replaces.is_empty(), "{:?}", d.replaces);
    let d = c.diff(diff(json!({"key": "other", "value": "hello again"}))).await.unwrap().into_inner();
    assert_eq!(d.replaces, vec!["key"]);

    // Update: PUT with the new value.
    let updated = c
        .update(UpdateRequest {
            id: "greeting".into(),
            urn: urn("a"),
            name: "a".into(),
            r#type: ITEM.into(),
            olds: r.properties.clone(),
            news: Some(to_struct(new_inputs.clone())),
            old_inputs: r.inputs.clone(),
            timeout: 30.0,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(from_struct(updated.properties.as_ref()), new_inputs);
    assert_eq!(api.item("greeting").unwrap().value, "hello again");

    // Delete, then Read reports the item gone.
    c.delete(DeleteRequest {
        id: "greeting".into(),
        urn: urn("a"),
        name: "a".into(),
        r#type: ITEM.into(),
        properties: updated.properties.clone(),
        old_inputs: Some(to_struct(new_inputs)),
        timeout: 30.0,
        ..Default::default()
    })
    .await
    .unwrap();
    assert!(api.items().is_empty());
    let gone = c.read(read("a", "greeting", &updated.properties)).await.unwrap().into_inner();
    assert_eq!(gone.id, "", "an item deleted on the server reads as gone");
    assert_eq!((gone.properties, gone.inputs), (None, None), "with no state at all");

    let methods: Vec<String> = api.requests();
    assert!(methods.iter().all(|m| m.ends_with("/items/greeting")), "{methods:?}");
}

#[tokio::test]
async fn kv_without_the_http_grant_fails_naming_it() {
    let api = KvApi::start(None).await;
    // Only the token is granted, not the API's address.
    let launch = Launch::new().policy("[providers.kv]\nenv = [\"KV_TOKEN\"]\n", PolicyAt::Flag).env("KV_TOKEN", TOKEN);
    let (_engine, mut p) = kv(&api, launch).await;
    let inputs = Some(to_struct(json!({"key": "k", "value": "v"})));
    let err = p.client.create(create("a", &inputs, false)).await.unwrap_err();
    assert_status(&err, Code::FailedPrecondition, &["missing grant", &api.url(), "kv"]);
    assert!(api.seen().is_empty(), "nothing reached the API: {:?}", api.requests());
    // The host keeps serving the provider.
    let ok = p.client.check(check("a", json!({"key": "k", "value": "v"}))).await.unwrap().into_inner();
    assert!(ok.failures.is_empty());
}

#[tokio::test]
async fn kv_does_not_see_its_token_unless_the_variable_is_granted() {
    let api = KvApi::start(Some(TOKEN)).await;
    // HTTP granted by flag; KV_TOKEN is set for the process but not granted.
    let launch = Launch::new().arg("--allow-http").arg(&api.url()).env("KV_TOKEN", TOKEN);
    let (_engine, mut p) = kv(&api, launch).await;
    let inputs = Some(to_struct(json!({"key": "k", "value": "v"})));
    let err = p.client.create(create("a", &inputs, false)).await.unwrap_err();
    let note = "missing grant: env \"KV_TOKEN\" for provider kv (the component declares it)";
    assert_status(&err, Code::FailedPrecondition, &["refused", note]);
    let seen = api.seen();
    assert_eq!(seen.len(), 1, "the request was allowed through: {:?}", api.requests());
    assert_eq!(seen[0].authorization, None, "no token reached the API");

    // With both flags the same plugin setup works.
    let launch =
        Launch::new().arg("--allow-http").arg(&api.url()).arg("--allow-env").arg("KV_TOKEN").env("KV_TOKEN", TOKEN);
    let (_engine, mut p) = kv(&api, launch).await;
    let created = p.client.create(create("a", &inputs, false)).await.unwrap().into_inner();
    assert_eq!(created.id, "k");
    assert_eq!(api.item("k").unwrap().value, "v");
}

#[tokio::test]
async fn a_granted_variable_missing_from_the_environment_is_named() {
    // The harness starts plugins without KV_TOKEN unless a launch sets it.
    let api = KvApi::start(Some(TOKEN)).await;
    let launch = Launch::new().arg("--allow-http").arg(&api.url()).arg("--allow-env").arg("KV_TOKEN");
    let (_engine, mut p) = kv(&api, launch).await;
    let inputs = Some(to_struct(json!({"key": "k", "value": "v"})));
    let err = p.client.create(create("a", &inputs, false)).await.unwrap_err();
    let note = "env \"KV_TOKEN\" is granted to provider kv but not set in its environment";
    assert_status(&err, Code::FailedPrecondition, &["refused", note]);
    assert!(!err.message().contains("missing grant"), "it is granted: {:?}", err.message());
}

#[tokio::test]
async fn grants_shows_declared_needs_and_what_is_missing() {
    let run = |extra: &[&str]| {
        let out = std::process::Command::new(host_bin())
            .arg("grants")
            .arg(component("kv-provider"))
            .args(extra)
            .env("PULUMI_WASM_CACHE_DIR", e2e_tests::cache_dir())
            .env_remove("KV_TOKEN")
            .output()
            .unwrap();
        assert!(out.status.success(), "grants failed: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let missing = |out: &str| out.lines().find(|l| l.starts_with("missing:")).unwrap_or_default().to_owned();
    let nothing = run(&[]);
    assert!(nothing.contains("http://127.0.0.1") && nothing.contains("KV_TOKEN"), "declared needs: {nothing}");
    let line = missing(&nothing);
    assert!(line.contains("http://127.0.0.1") && line.contains("KV_TOKEN"), "both are missing: {nothing}");
    // A policy file granting the HTTP need leaves the variable missing.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("policy.toml");
    std::fs::write(&file, "[providers.kv]\nhttp = [\"http://127.0.0.1\"]\n").unwrap();
    let some = run(&["--policy", file.to_str().unwrap()]);
    let line = missing(&some);
    assert!(!line.contains("http") && line.contains("KV_TOKEN"), "{some}");
    let all = run(&["--allow-http", "http://127.0.0.1", "--allow-env", "KV_TOKEN"]);
    assert_eq!(missing(&all), "missing: (none)", "{all}");
    // Granted, but this process has no KV_TOKEN to pass on.
    assert!(all.lines().any(|l| l == "granted but not set: KV_TOKEN"), "{all}");
}

#[tokio::test]
async fn kv_imports_an_item_known_only_by_its_key() {
    let api = KvApi::start(Some(TOKEN)).await;
    let launch = Launch::new().policy(&kv_policy(&api), PolicyAt::Beside).env("KV_TOKEN", TOKEN);
    let (_engine, mut p) = kv(&api, launch).await;
    let tags = BTreeMap::from([("owner".to_string(), "ops".to_string())]);
    api.put_direct("legacy", "made by hand", Some(tags));
    // `pulumi import kv:index:Item legacy legacy`: a Read with the ID and no state.
    let empty = Some(to_struct(json!({})));
    let imported = p.client.read(read("legacy", "legacy", &empty)).await.unwrap().into_inner();
    assert_eq!(imported.id, "legacy");
    let expected = json!({"key": "legacy", "value": "made by hand", "tags": {"owner": "ops"}});
    assert_eq!(from_struct(imported.properties.as_ref()), expected);
    assert_eq!(from_struct(imported.inputs.as_ref()), expected, "every property of an item is an input");
    // No such item: nothing to import.
    let missing = p.client.read(read("nothing", "nothing", &empty)).await.unwrap().into_inner();
    assert_eq!(missing.id, "");
    // No properties, not empty ones: the engine would import an empty item.
    assert_eq!((missing.properties, missing.inputs), (None, None));
}
