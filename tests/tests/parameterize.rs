//! `pulumi-resource-wasm`, the parameterized provider, driven as the engine
//! drives it: `pulumi package add wasm <source> [-- args]` is Parameterize
//! (args) then GetSchema; every later run is a fresh process that gets
//! Parameterize(value) with the value from that schema.
//!
//! - a plain component: args -> schema -> config -> CRUD, then a fresh process
//!   from the value with identical results; the value pins the digest (a
//!   changed file or a forged digest is refused) and the grants;
//! - sources from the store (`name@requirement`);
//! - the parameterized `records` guest: replacement (one package generated
//!   from its parameter) and extension (several packages in one process,
//!   calls routed by package, the guest's own base resource still served).

use std::path::{Path, PathBuf};
// Explicit: `pulumirpc::*` may bring a message type named `Result`.
use std::result::Result;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use e2e_tests::json::{ASSET_SIG, SIG_KEY};
use e2e_tests::{KvApi, Plugin, TestEngine, component, from_struct, host_bin, registry, to_struct, workspace_root};
use pulumirpc::parameterize_request::{Parameters, ParametersArgs, ParametersValue};
use pulumirpc::*;
use serde_json::{Value as Json, json};
use tonic::{Code, Status};

/// A plugin folder holding `pulumi-resource-wasm`, made by `pack --generic`.
fn generic_plugin(dir: &Path) -> PathBuf {
    let out = std::process::Command::new(host_bin())
        .args(["pack", "--generic", "--out"])
        .arg(dir)
        .output()
        .expect("runs pulumi-wasm pack --generic");
    assert!(out.status.success(), "pack --generic: {}", String::from_utf8_lossy(&out.stderr));
    let exe = dir.join("pulumi-resource-wasm");
    assert!(exe.is_file());
    exe
}

/// A workspace for one test: the generic plugin, a provider store, an engine.
struct Bench {
    dir: tempfile::TempDir,
    exe: PathBuf,
    engine: TestEngine,
}

impl Bench {
    async fn new() -> Bench {
        let dir = tempfile::tempdir().unwrap();
        let exe = generic_plugin(&dir.path().join("plugin"));
        Bench { dir, exe, engine: TestEngine::start().await }
    }

    fn store(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Starts `pulumi-resource-wasm <engine>` exactly as the engine does, with its store at `store`.
    async fn start(&self, store: &str) -> Plugin {
        self.start_with(store, &[]).await
    }

    /// `pulumi-wasm push component reference`, as a publisher with `login` (none: anonymous).
    fn push(&self, component: &std::path::Path, reference: &str, login: Option<(&str, &str)>) {
        let mut push = std::process::Command::new(host_bin());
        push.args(["push", component.to_str().unwrap(), reference])
            .env("PULUMI_WASM_STORE", self.store("publisher"))
            .env("DOCKER_CONFIG", "/nonexistent/docker-config")
            .env_remove("PULUMI_WASM_OCI_USERNAME")
            .env_remove("PULUMI_WASM_OCI_PASSWORD");
        if let Some((user, password)) = login {
            push.env("PULUMI_WASM_OCI_USERNAME", user).env("PULUMI_WASM_OCI_PASSWORD", password);
        }
        let out = push.output().unwrap();
        assert!(out.status.success(), "push: {}", String::from_utf8_lossy(&out.stderr));
    }

    /// [`Bench::start`] with more environment, as the user's shell would give the engine.
    async fn start_with(&self, store: &str, env: &[(&str, &str)]) -> Plugin {
        let mut all = vec![("PULUMI_WASM_STORE".to_owned(), self.store(store).to_string_lossy().into_owned())];
        all.extend(env.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        Plugin::spawn_with(&self.exe, std::slice::from_ref(&self.engine.address), &all).await.unwrap()
    }
}

async fn by_args(p: &mut Plugin, args: &[&str]) -> Result<ParameterizeResponse, Status> {
    let args = args.iter().map(|a| a.to_string()).collect();
    let req = ParameterizeRequest { parameters: Some(Parameters::Args(ParametersArgs { args })) };
    p.client.parameterize(req).await.map(|r| r.into_inner())
}

async fn by_value(p: &mut Plugin, name: &str, version: &str, value: &[u8]) -> Result<ParameterizeResponse, Status> {
    let v = ParametersValue { name: name.into(), version: version.into(), value: value.to_vec() };
    let req = ParameterizeRequest { parameters: Some(Parameters::Value(v)) };
    p.client.parameterize(req).await.map(|r| r.into_inner())
}

/// GetSchema for `sub` (empty: the only package), checked against the metaschema.
async fn schema(p: &mut Plugin, sub: &str, version: &str) -> Json {
    let req = GetSchemaRequest { version: 0, subpackage_name: sub.into(), subpackage_version: version.into() };
    let text = p.client.get_schema(req).await.unwrap_or_else(|e| panic!("schema {sub}: {e}")).into_inner().schema;
    let schema: Json = serde_json::from_str(&text).unwrap();
    let meta_path = workspace_root().join("../shared/data/pulumi-package-metaschema.json");
    let meta: Json = serde_json::from_str(&std::fs::read_to_string(meta_path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&meta).unwrap();
    let errors: Vec<String> = validator.iter_errors(&schema).map(|e| format!("{e} at {}", e.instance_path)).collect();
    assert!(errors.is_empty(), "schema of {sub:?} violates the metaschema: {errors:#?}");
    schema
}

/// The value the engine records: the schema's `parameterization.parameter`.
fn value_of(schema: &Json) -> Vec<u8> {
    let p = &schema["parameterization"];
    assert_eq!(p["baseProvider"], json!({"name": "wasm", "version": env!("CARGO_PKG_VERSION")}), "{schema}");
    B64.decode(p["parameter"].as_str().expect("a parameter")).unwrap()
}

fn assert_status(s: &Status, code: Code, needles: &[&str]) {
    assert_eq!(s.code(), code, "unexpected code for {:?}", s.message());
    for n in needles {
        assert!(s.message().contains(n), "the message should mention {n:?}: {:?}", s.message());
    }
}

fn sha256_of(path: &Path) -> String {
    let out = std::process::Command::new("sha256sum").arg(path).output().expect("sha256sum");
    String::from_utf8_lossy(&out.stdout).split_whitespace().next().unwrap().to_owned()
}

const STRING: &str = "random:index:RandomString";

/// The parts of a random string's state two runs share: all but the result, which must have the length.
fn normalized(state: Option<&prost_types::Struct>) -> Json {
    let mut j = from_struct(state);
    let result = j["result"].take();
    assert_eq!(result.as_str().map(|r| r.chars().count() as f64), j["length"].as_f64(), "{j}");
    j
}

/// A seeded invoke, then Check -> Create -> Read -> Diff -> Delete of a
/// random string; returns what each step produced, to compare two processes.
async fn random_lifecycle(p: &mut Plugin) -> Vec<Json> {
    let urn = format!("urn:pulumi:dev::proj::{STRING}::s");
    let c = &mut p.client;
    let args = to_struct(json!({"min": 1, "max": 1000000, "seed": "wasm"}));
    let req = InvokeRequest { tok: "random:index:randomInteger".into(), args: Some(args), ..Default::default() };
    let invoked = c.invoke(req).await.unwrap().into_inner();
    let checked = c
        .check(CheckRequest {
            urn: urn.clone(),
            name: "s".into(),
            r#type: STRING.into(),
            olds: Some(to_struct(json!({}))),
            news: Some(to_struct(json!({"length": 12}))),
            random_seed: vec![7; 32],
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert!(checked.failures.is_empty(), "{:?}", checked.failures);
    let create = CreateRequest {
        urn: urn.clone(),
        name: "s".into(),
        r#type: STRING.into(),
        properties: checked.inputs.clone(),
        timeout: 30.0,
        ..Default::default()
    };
    let created = c.create(create).await.unwrap().into_inner();
    let read = c
        .read(ReadRequest {
            id: created.id.clone(),
            urn: urn.clone(),
            name: "s".into(),
            r#type: STRING.into(),
            properties: created.properties.clone(),
            inputs: checked.inputs.clone(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(read.properties, created.properties);
    let diff = c
        .diff(DiffRequest {
            id: created.id.clone(),
            urn: urn.clone(),
            name: "s".into(),
            r#type: STRING.into(),
            olds: created.properties.clone(),
            news: Some(to_struct(json!({"length": 16}))),
            old_inputs: checked.inputs.clone(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    c.delete(DeleteRequest {
        id: created.id.clone(),
        urn,
        name: "s".into(),
        r#type: STRING.into(),
        properties: created.properties.clone(),
        old_inputs: checked.inputs.clone(),
        timeout: 30.0,
        ..Default::default()
    })
    .await
    .unwrap();
    vec![
        from_struct(invoked.r#return.as_ref()),
        from_struct(checked.inputs.as_ref()),
        normalized(created.properties.as_ref()),
        json!({"changes": diff.changes, "replaces": diff.replaces}),
    ]
}

#[tokio::test]
async fn a_component_by_args_then_by_value_in_a_fresh_process() {
    let bench = Bench::new().await;
    // The component lives in the user's project, where `pulumi package add` was run.
    let project = bench.dir.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let wasm = project.join("random.wasm");
    std::fs::copy(component("random-provider"), &wasm).unwrap();
    let digest = sha256_of(&wasm);
    let version = env!("CARGO_PKG_VERSION");

    // Before Parameterize it is the bare base provider, and says what to do.
    let mut p = bench.start("store").await;
    assert_eq!(p.client.get_plugin_info(()).await.unwrap().into_inner().version, version);
    let base = schema(&mut p, "", "").await;
    assert_eq!(base["name"], "wasm");
    let err = p.client.check(CheckRequest { r#type: STRING.into(), ..Default::default() }).await.unwrap_err();
    assert_status(&err, Code::FailedPrecondition, &["pulumi package add wasm"]);

    // `pulumi package add wasm ./random.wasm`.
    let added = by_args(&mut p, &[wasm.to_str().unwrap()]).await.unwrap();
    assert_eq!((added.name.as_str(), added.version.as_str()), ("random", version));
    let first_schema = schema(&mut p, "", "").await;
    assert_eq!(first_schema["name"], "random");
    assert_eq!(first_schema["version"], version);
    assert!(first_schema["resources"][STRING].is_object());
    let value = value_of(&first_schema);
    let decoded: Json = serde_json::from_slice(&value).unwrap();
    assert_eq!(decoded["component"]["digest"], format!("sha256:{digest}"), "{decoded}");
    assert_eq!(decoded["component"]["name"], "random");
    p.boot(&bench.engine.address, json!({})).await.unwrap();
    let first = random_lifecycle(&mut p).await;
    drop(p);

    // A later run: a fresh process gets the value, and behaves identically.
    let mut p = bench.start("store").await;
    let again = by_value(&mut p, "random", version, &value).await.unwrap();
    assert_eq!((again.name.as_str(), again.version.as_str()), ("random", version));
    assert_eq!(schema(&mut p, "random", version).await, first_schema);
    p.boot(&bench.engine.address, json!({})).await.unwrap();
    assert_eq!(random_lifecycle(&mut p).await, first);
    drop(p);

    // The value is for one package: another name is refused (the engine's own check, made early).
    let mut p = bench.start("store").await;
    let err = by_value(&mut p, "other", version, &value).await.unwrap_err();
    assert_status(&err, Code::InvalidArgument, &["random", "other"]);

    // With an empty store the recorded file is read again, its digest checked,
    // and the bytes kept in that store's blobs for the runs after.
    let blob = |store: &str| bench.store(store).join("blobs/sha256").join(format!("{digest}.wasm"));
    assert!(!blob("empty-store").exists());
    let mut p = bench.start("empty-store").await;
    by_value(&mut p, "random", version, &value).await.unwrap();
    drop(p);
    assert!(blob("empty-store").is_file(), "the refetched bytes are kept in the store");
    assert_eq!(sha256_of(&blob("empty-store")), digest);

    // The file changed since (and no copy is cached): refused, naming both digests.
    std::fs::copy(component("echo-provider"), &wasm).unwrap();
    let mut p = bench.start("another-empty-store").await;
    let err = by_value(&mut p, "random", version, &value).await.unwrap_err();
    assert_status(
        &err,
        Code::FailedPrecondition,
        &[&format!("sha256:{digest}"), &format!("sha256:{}", sha256_of(&wasm))],
    );
    drop(p);
    assert!(!bench.store("another-empty-store").join("blobs").exists(), "refused bytes are not kept");
    // ... while the stores that cached the original (by args, and by the
    // refetch above) still have exactly those bytes.
    for store in ["store", "empty-store"] {
        let mut p = bench.start(store).await;
        by_value(&mut p, "random", version, &value).await.unwrap_or_else(|e| panic!("{store}: {e}"));
    }

    // A forged value (the digest edited) is refused too.
    let mut forged = decoded.clone();
    forged["component"]["digest"] = json!(format!("sha256:{}", "0".repeat(64)));
    let mut p = bench.start("another-empty-store").await;
    let err = by_value(&mut p, "random", version, &serde_json::to_vec(&forged).unwrap()).await.unwrap_err();
    assert_status(&err, Code::FailedPrecondition, &["pins sha256:0000"]);
    let err = by_value(&mut p, "random", version, b"not json").await.unwrap_err();
    assert_status(&err, Code::InvalidArgument, &["bad parameter value"]);
}

#[tokio::test]
async fn the_parameterized_provider_leaves_long_asset_texts_in_the_host() {
    let bench = Bench::new().await;
    let mut p = bench.start("store").await;
    let hostile = component("hostile-provider");
    by_args(&mut p, &[hostile.to_str().unwrap()]).await.unwrap();
    let asset = json!({ SIG_KEY: ASSET_SIG, "text": "t".repeat(4096) });
    let args = json!({ "asset": asset, "read": true });
    let req = InvokeRequest { tok: "hostile:index:held".into(), args: Some(to_struct(args)), preview: false };
    let out = from_struct(p.client.invoke(req).await.unwrap().into_inner().r#return.as_ref());
    assert_eq!(out["held"], json!(true), "the text reached the routed component as a handle");
    assert_eq!((&out["length"], &out["head"]), (&json!(4096.0), &json!("t".repeat(16))));
    assert_eq!(out["asset"], asset);
}

#[tokio::test]
async fn args_are_validated_and_sources_resolve_from_the_store() {
    let bench = Bench::new().await;
    let version = env!("CARGO_PKG_VERSION");
    let mut p = bench.start("store").await;
    let err = by_args(&mut p, &[]).await.unwrap_err();
    assert_status(&err, Code::InvalidArgument, &["usage: pulumi package add wasm"]);
    let err = by_args(&mut p, &["--allow-http", "ftp://x", "random.wasm"]).await.unwrap_err();
    assert_status(&err, Code::InvalidArgument, &["ftp://x"]);
    let err = by_args(&mut p, &["/nowhere/random.wasm"]).await.unwrap_err();
    assert_status(&err, Code::NotFound, &["/nowhere/random.wasm"]);
    let err = by_args(&mut p, &["random@^0.1"]).await.unwrap_err();
    assert_status(&err, Code::NotFound, &["no installed package named 'random'"]);

    // Installed, `name@requirement` finds it.
    let out = std::process::Command::new(host_bin())
        .args(["install", component("random-provider").to_str().unwrap()])
        .env("PULUMI_WASM_STORE", bench.store("store"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let added = by_args(&mut p, &["random@^0.1"]).await.unwrap();
    assert_eq!((added.name.as_str(), added.version.as_str()), ("random", version));
    let value: Json = serde_json::from_slice(&value_of(&schema(&mut p, "", "").await)).unwrap();
    assert_eq!(value["component"]["source"], format!("random@={version}"));

    // A component that is not a provider is refused clearly, and the host keeps serving.
    let junk = bench.dir.path().join("junk.wasm");
    std::fs::write(&junk, b"\0asm junk").unwrap();
    let mut q = bench.start("store").await;
    let err = by_args(&mut q, &[junk.to_str().unwrap()]).await.unwrap_err();
    assert_status(&err, Code::FailedPrecondition, &["not a WebAssembly component"]);
    let kept = bench.store("store").join("blobs/sha256").join(format!("{}.wasm", sha256_of(&junk)));
    assert!(!kept.exists(), "bytes that are not a provider are not kept in the store");
    assert_eq!(by_args(&mut q, &["random@^0.1"]).await.unwrap().name, "random");
}

const ITEM: &str = "kv:index:Item";

async fn kv_create(p: &mut Plugin, key: &str) -> Result<CreateResponse, Status> {
    let urn = format!("urn:pulumi:dev::proj::{ITEM}::{key}");
    let props = to_struct(json!({"key": key, "value": "v"}));
    let req = CreateRequest {
        urn,
        name: key.into(),
        r#type: ITEM.into(),
        properties: Some(props),
        timeout: 30.0,
        ..Default::default()
    };
    p.client.create(req).await.map(|r| r.into_inner())
}

#[tokio::test]
async fn grants_given_to_package_add_are_pinned_in_the_value() {
    let api = KvApi::start(None).await;
    let bench = Bench::new().await;
    let kv = component("kv-provider");
    let version = env!("CARGO_PKG_VERSION");

    // Without a grant the provider cannot reach its API, and says which grant is missing.
    let mut p = bench.start("store").await;
    by_args(&mut p, &[kv.to_str().unwrap()]).await.unwrap();
    p.boot(&bench.engine.address, json!({"endpoint": api.url()})).await.unwrap();
    let err = kv_create(&mut p, "a").await.unwrap_err();
    assert_status(&err, Code::FailedPrecondition, &["missing grant", &api.url()]);
    drop(p);

    // `pulumi package add wasm --allow-http <api> kv.wasm`: the grant goes into the value.
    let mut p = bench.start("store").await;
    by_args(&mut p, &["--allow-http", &api.url(), kv.to_str().unwrap()]).await.unwrap();
    let value = value_of(&schema(&mut p, "", "").await);
    let decoded: Json = serde_json::from_slice(&value).unwrap();
    assert_eq!(decoded["grants"]["http"], json!([api.url()]), "{decoded}");
    drop(p);

    // A later run needs no policy: the value carries the grant.
    let mut p = bench.start("store").await;
    by_value(&mut p, "kv", version, &value).await.unwrap();
    p.boot(&bench.engine.address, json!({"endpoint": api.url()})).await.unwrap();
    let created = kv_create(&mut p, "b").await.unwrap_or_else(|e| panic!("{e}; stderr: {}", p.stderr()));
    assert_eq!(created.id, "b");
    assert!(api.item("b").is_some());
}

// The parameterized `records` guest (examples/records)

const SHOP: [&str; 3] =
    ["shop", "Item=title:string,price:number,sku!:string,note?:string", "Order=item:string,count:integer"];
const ZOO: [&str; 2] = ["zoo", "Animal=species:string,legs:integer"];

/// `records.wasm -- <args>` as `pulumi package add wasm` passes them.
fn records_args(guest: &[&str]) -> Vec<String> {
    let records = component("records");
    let mut args = vec![records.to_string_lossy().into_owned(), "--".to_owned()];
    args.extend(guest.iter().map(|a| a.to_string()));
    args
}

async fn records_by_args(p: &mut Plugin, guest: &[&str]) -> Result<ParameterizeResponse, Status> {
    let args = records_args(guest);
    by_args(p, &args.iter().map(String::as_str).collect::<Vec<_>>()).await
}

/// Check (a bad input, then good ones) -> Create -> Read -> Diff (an update, then a
/// replace) -> Update -> Delete of one record; what each step produced.
async fn record_lifecycle(
    p: &mut Plugin,
    token: &str,
    inputs: Json,
    update: (&str, Json),
    replace: (&str, Json),
) -> Vec<Json> {
    let urn = format!("urn:pulumi:dev::proj::{token}::r");
    let c = &mut p.client;
    let check = |news: Json| CheckRequest {
        urn: urn.clone(),
        name: "r".into(),
        r#type: token.into(),
        olds: Some(to_struct(json!({}))),
        news: Some(to_struct(news)),
        ..Default::default()
    };
    let mut bad = inputs.clone();
    bad.as_object_mut().unwrap().insert("unexpected".into(), json!(1));
    let failed = c.check(check(bad)).await.unwrap_or_else(|e| panic!("check {token}: {e}")).into_inner();
    assert_eq!(failed.failures.iter().map(|f| f.property.as_str()).collect::<Vec<_>>(), ["unexpected"]);
    let checked = c.check(check(inputs.clone())).await.unwrap().into_inner();
    assert!(checked.failures.is_empty(), "{:?}", checked.failures);
    let created = c
        .create(CreateRequest {
            urn: urn.clone(),
            name: "r".into(),
            r#type: token.into(),
            properties: checked.inputs.clone(),
            timeout: 30.0,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(from_struct(created.properties.as_ref()), inputs, "a record's outputs are its inputs");
    let read = c
        .read(ReadRequest {
            id: created.id.clone(),
            urn: urn.clone(),
            name: "r".into(),
            r#type: token.into(),
            properties: created.properties.clone(),
            inputs: checked.inputs.clone(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let mut diffs = Vec::new();
    for (key, value) in [update.clone(), replace] {
        let mut news = inputs.clone();
        news[key] = value;
        let diff = c
            .diff(DiffRequest {
                id: created.id.clone(),
                urn: urn.clone(),
                name: "r".into(),
                r#type: token.into(),
                olds: created.properties.clone(),
                news: Some(to_struct(news)),
                old_inputs: checked.inputs.clone(),
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner();
        diffs.push(json!({"changes": diff.changes, "diffs": diff.diffs, "replaces": diff.replaces}));
    }
    let mut news = inputs.clone();
    news[update.0] = update.1;
    let updated = c
        .update(UpdateRequest {
            id: created.id.clone(),
            urn: urn.clone(),
            name: "r".into(),
            r#type: token.into(),
            olds: created.properties.clone(),
            news: Some(to_struct(news.clone())),
            old_inputs: checked.inputs.clone(),
            timeout: 30.0,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(from_struct(updated.properties.as_ref()), news);
    c.delete(DeleteRequest {
        id: created.id.clone(),
        urn,
        name: "r".into(),
        r#type: token.into(),
        properties: updated.properties.clone(),
        timeout: 30.0,
        ..Default::default()
    })
    .await
    .unwrap();
    vec![
        json!(created.id),
        from_struct(read.properties.as_ref()),
        json!(diffs),
        from_struct(updated.properties.as_ref()),
    ]
}

async fn shop_item(p: &mut Plugin) -> Vec<Json> {
    let inputs = json!({"title": "lamp", "price": 12.5, "sku": "L-1"});
    record_lifecycle(p, "shop:index:Item", inputs, ("price", json!(15.0)), ("sku", json!("L-2"))).await
}

async fn zoo_animal(p: &mut Plugin) -> Vec<Json> {
    let inputs = json!({"species": "okapi", "legs": 4.0});
    record_lifecycle(p, "zoo:index:Animal", inputs, ("legs", json!(3.0)), ("species", json!("zebra"))).await
}

#[tokio::test]
async fn a_parameterized_guest_as_a_replacement_package() {
    let bench = Bench::new().await;
    let version = env!("CARGO_PKG_VERSION");

    // `pulumi package add wasm ./records.wasm -- shop Item=... Order=...`: the guest becomes `shop`.
    let mut p = bench.start("store").await;
    let added = records_by_args(&mut p, &SHOP).await.unwrap_or_else(|e| panic!("{e}; stderr: {}", p.stderr()));
    assert_eq!((added.name.as_str(), added.version.as_str()), ("shop", version));
    let shop = schema(&mut p, "", "").await;
    assert_eq!((shop["name"].as_str(), shop["version"].as_str()), (Some("shop"), Some(version)));
    let resources: Vec<&String> = shop["resources"].as_object().unwrap().keys().collect();
    assert_eq!(resources, ["shop:index:Item", "shop:index:Order"]);
    // Our value nests the guest's own value, which is what the guest itself put in its schema.
    let value = value_of(&shop);
    let decoded: Json = serde_json::from_slice(&value).unwrap();
    assert_eq!(
        (decoded["guest"]["name"].as_str(), decoded["guest"]["version"].as_str()),
        (Some("shop"), Some(version))
    );
    let guest_value: Json =
        serde_json::from_slice(&B64.decode(decoded["guest"]["value"].as_str().unwrap()).unwrap()).unwrap();
    assert_eq!(guest_value["name"], "shop");
    assert!(guest_value["types"]["Item"]["sku"]["replace"].as_bool().unwrap(), "{guest_value}");
    p.boot(&bench.engine.address, json!({})).await.unwrap();
    let first = shop_item(&mut p).await;
    assert_eq!(first[2][0]["replaces"], json!([]), "a price change updates");
    assert_eq!(first[2][1]["replaces"], json!(["sku"]), "a sku change replaces");
    // Bad guest args are the guest's to refuse, named.
    let mut q = bench.start("store").await;
    let err = records_by_args(&mut q, &["shop", "Item=title:text"]).await.unwrap_err();
    assert_status(&err, Code::InvalidArgument, &["Item=title:text"]);
    drop((p, q));

    // A fresh process from the value: the same package, the same behaviour.
    let mut p = bench.start("store").await;
    let again = by_value(&mut p, "shop", version, &value).await.unwrap();
    assert_eq!(again.name, "shop");
    assert_eq!(schema(&mut p, "shop", version).await, shop);
    p.boot(&bench.engine.address, json!({})).await.unwrap();
    assert_eq!(shop_item(&mut p).await, first);
    // A token of no package here is refused clearly, and the host keeps serving.
    let err = p
        .client
        .check(CheckRequest {
            r#type: "nope:index:Thing".into(),
            urn: "urn:pulumi:dev::proj::nope:index:Thing::x".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert!(err.message().contains("nope"), "{err:?}");
    assert_eq!(shop_item(&mut p).await, first);
}

#[tokio::test]
async fn a_parameterized_guest_extended_with_several_packages() {
    let bench = Bench::new().await;
    let version = env!("CARGO_PKG_VERSION");

    // Two `package add` runs give two values.
    let mut values = Vec::new();
    let mut schemas = Vec::new();
    for guest in [&SHOP[..], &ZOO[..]] {
        let mut p = bench.start("store").await;
        records_by_args(&mut p, guest).await.unwrap();
        let s = schema(&mut p, guest[0], version).await;
        values.push(value_of(&s));
        schemas.push(s);
    }

    // One process, extended with both: each call adds a sub-package.
    let mut p = bench.start("store").await;
    assert_eq!(by_value(&mut p, "shop", version, &values[0]).await.unwrap().name, "shop");
    assert_eq!(by_value(&mut p, "zoo", version, &values[1]).await.unwrap().name, "zoo");
    // The same value again is the same package; another value under a served name is refused.
    assert_eq!(by_value(&mut p, "shop", version, &values[0]).await.unwrap().name, "shop");
    assert_eq!(schema(&mut p, "shop", version).await, schemas[0]);
    assert_eq!(schema(&mut p, "zoo", version).await, schemas[1]);
    let err = p.client.get_schema(GetSchemaRequest::default()).await.unwrap_err();
    assert_status(&err, Code::InvalidArgument, &["shop", "zoo"]);
    let req = GetSchemaRequest { version: 0, subpackage_name: "zoo".into(), subpackage_version: "9.9.9".into() };
    assert_status(&p.client.get_schema(req).await.unwrap_err(), Code::InvalidArgument, &["9.9.9"]);

    // Calls are routed by package, the guest's own base resource included.
    p.boot(&bench.engine.address, json!({})).await.unwrap();
    let shop_items = shop_item(&mut p).await;
    let animals = zoo_animal(&mut p).await;
    assert!(animals[0].as_str().unwrap().starts_with("animal-"), "{animals:?}");
    let notes = record_lifecycle(
        &mut p,
        "records:index:Note",
        json!({"text": "hi"}),
        ("text", json!("ho")),
        ("text", json!("hu")),
    )
    .await;
    assert!(notes[0].as_str().unwrap().starts_with("note-"), "{notes:?}");

    // The packages behave exactly as each does alone.
    let mut alone = bench.start("store").await;
    by_value(&mut alone, "shop", version, &values[0]).await.unwrap();
    alone.boot(&bench.engine.address, json!({})).await.unwrap();
    assert_eq!(shop_item(&mut alone).await, shop_items);
}

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
