//! `pulumi-resource-wasm`, the parameterized provider, driven as the engine
//! drives it: `pulumi package add wasm <source> [-- args]` is Parameterize
//! (args) then GetSchema; every later run is a fresh process that gets
//! Parameterize(value) with the value from that schema.
//!
//! - a plain component: args -> schema -> config -> CRUD, then a fresh process
//!   from the value with identical results; the value pins the digest (a
//!   changed file or a forged digest is refused) and the grants;
//! - those grants run only where they were approved (`pulumi package add`
//!   there, `pulumi-wasm approve`, `PULUMI_WASM_APPROVED` or the policy);
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
mod approval;
mod component;
mod oci;
mod records;

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
        self.start_in(store, env, None).await
    }

    /// [`Bench::start_with`] in the directory `cwd`, as the engine starts plugins in the project.
    async fn start_in(&self, store: &str, env: &[(&str, &str)], cwd: Option<&Path>) -> Plugin {
        let mut all = vec![("PULUMI_WASM_STORE".to_owned(), self.store(store).to_string_lossy().into_owned())];
        all.extend(env.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        Plugin::spawn_in(&self.exe, std::slice::from_ref(&self.engine.address), &all, cwd).await.unwrap()
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
