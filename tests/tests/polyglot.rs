//! Providers written in other languages, through the same WIT and the same
//! host: the TypeScript `jsrandom` (componentize-js) and the Python
//! `pyrandom` (componentize-py) examples, built by `scripts/build-polyglot`.
//! One lifecycle runs against each, as the engine would drive it: boot,
//! schema, Check, Diff, Create (preview and real), Read, Update, Delete,
//! secrets, unknowns, logs and errors.

use std::path::Path;
use std::time::Instant;

use e2e_tests::json::{SECRET_SIG, SIG_KEY, secret, sig};
use e2e_tests::{Plugin, TestEngine, from_struct, polyglot_component, to_struct, workspace_root};
use pulumirpc::diff_response::DiffChanges;
use pulumirpc::property_diff::Kind;
use pulumirpc::*;
use serde_json::{Value, json};
use tonic::Code;

const UNKNOWN_STRING: &str = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";
const UNKNOWN_NUMBER: &str = "3eeb2bf0-c639-47a8-9e75-3b44932eb421";

#[tokio::test]
async fn typescript_provider_passes_the_lifecycle() {
    lifecycle(&polyglot_component("js-random"), "jsrandom").await;
}

/// Both are built against 0.1.0, so the host serves them through its adapter.
#[test]
fn they_are_served_as_contract_0_1_0_components() {
    for name in ["js-random", "py-random"] {
        let out = std::process::Command::new(e2e_tests::host_bin())
            .arg("info")
            .arg(polyglot_component(name))
            .env("PULUMI_WASM_CACHE_DIR", e2e_tests::cache_dir())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.contains("contract: pulumi:provider@0.1.0"),
            "{name}: {stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[tokio::test]
async fn python_provider_passes_the_lifecycle() {
    lifecycle(&polyglot_component("py-random"), "pyrandom").await;
}

/// The plaintext of a secret, failing when `v` is not one.
fn unwrap_secret(v: &Value) -> &Value {
    assert_eq!(v[SIG_KEY], SECRET_SIG, "not a secret: {v}");
    &v["value"]
}

/// One property of every kind a value can have, nested a little.
fn every_kind() -> Value {
    json!({
        "null": null,
        "bool": true,
        "number": 3.25,
        "string": "hello ✓",
        "array": [1, "two", false, null, [[]], {}],
        "object": {"a": {"b.c": {"c": 1}}, "__proto__": "a key like any other"},
        "secret": sig("secret", json!({"value": {"password": "hunter2", "list": [sig("secret", json!({"value": 1}))]}})),
        "unknownBool": "1c4a061d-8072-4f0a-a4cb-0ff528b18fe7",
        "unknownNumber": UNKNOWN_NUMBER,
        "unknownString": UNKNOWN_STRING,
        "unknownArray": "6a19a0b0-7e62-4c92-b797-7f8e31da9cc2",
        "unknownAsset": "030794c1-ac77-496b-92df-f27374a8bd58",
        "unknownArchive": "e48ece36-62e2-4504-bad9-02848725956a",
        "unknownObject": "dd056dcd-154b-4c76-9bd3-c8f88648b5ff",
        "assetText": sig("asset", json!({"text": "contents", "hash": "d1b2a59fbea7e20077af9f91b27e95e865061b270be03ff539ab3b73587882e8"})),
        "assetPath": sig("asset", json!({"path": "./file.txt"})),
        "assetUri": sig("asset", json!({"uri": "https://example.com/a.txt"})),
        "assetHashOnly": sig("asset", json!({"hash": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"})),
        "archiveAssets": sig("archive", json!({"assets": {
            "a.txt": sig("asset", json!({"text": "a"})),
            "nested": sig("archive", json!({"path": "./dir"})),
        }})),
        "archivePath": sig("archive", json!({"path": "./site.zip"})),
        "archiveUri": sig("archive", json!({"uri": "https://example.com/site.tgz"})),
        "ref": sig("ref", json!({"urn": "urn:pulumi:dev::proj::random:index:RandomPet::p", "id": "pet-1", "packageVersion": "1.2.3"})),
        "refUnknownId": sig("ref", json!({"urn": "urn:pulumi:dev::proj::random:index:RandomPet::q", "id": ""})),
        "refComponent": sig("ref", json!({"urn": "urn:pulumi:dev::proj::my:index:Component::c"})),
        "output": sig("output", json!({"value": "known", "secret": true, "dependencies": ["urn:a", "urn:b"]})),
        "outputUnknown": sig("output", json!({"dependencies": ["urn:a"]})),
        "outputPlain": sig("output", json!({"value": [1, 2]})),
        "bytes": sig("bytes", json!({"value": "/wD+AQ=="})),
    })
}

/// The engine's conversation with a `<pkg>:index:RandomString` provider.
async fn lifecycle(component: &Path, pkg: &str) {
    let token = format!("{pkg}:index:RandomString");
    let urn = format!("urn:pulumi:dev::proj::{token}::pw");
    let started = Instant::now();
    let engine = TestEngine::start().await;
    let mut p = Plugin::packed(component, Some(&engine.address)).await.unwrap();
    let version = p.boot(&engine.address, json!({})).await.unwrap();
    eprintln!("{pkg}: packed, started and booted in {:?}", started.elapsed());
    let calls = Instant::now();
    assert_eq!(version, "0.1.0", "the version comes from the component");

    // Schema: the package and its resource, valid against Pulumi's metaschema.
    let schema = p.client.get_schema(GetSchemaRequest::default()).await.unwrap().into_inner().schema;
    let schema: Value = serde_json::from_str(&schema).unwrap();
    assert_eq!(schema["name"], pkg);
    assert_eq!(schema["resources"][&token]["properties"]["password"]["secret"], true);
    let meta_path = workspace_root().join("../shared/data/pulumi-package-metaschema.json");
    let meta: Value = serde_json::from_str(&std::fs::read_to_string(meta_path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&meta).unwrap();
    let errors: Vec<String> = validator.iter_errors(&schema).map(|e| format!("{e} at {}", e.instance_path)).collect();
    assert!(errors.is_empty(), "{pkg}: schema violates the metaschema: {errors:#?}");

    // Check: valid inputs pass as they are; failures name the property.
    let check = |news: Value| CheckRequest {
        urn: urn.clone(),
        name: "pw".into(),
        r#type: token.clone(),
        olds: Some(to_struct(json!({}))),
        news: Some(to_struct(news)),
        random_seed: vec![7; 32],
        ..Default::default()
    };
    let ok = p.client.check(check(json!({"length": 16, "keepers": {"k": "1"}}))).await.unwrap().into_inner();
    assert!(ok.failures.is_empty(), "{:?}", ok.failures);
    let inputs = ok.inputs;
    assert_eq!(from_struct(inputs.as_ref()), json!({"length": 16.0, "keepers": {"k": "1"}}));
    for (news, property) in [
        (json!({"length": 0}), "length"),
        (json!({"length": "ten"}), "length"),
        (json!({"length": 2.5}), "length"),
        (json!({}), "length"),
        (json!({"length": 4, "keepers": {"k": 1}}), "keepers.k"),
    ] {
        let bad = p.client.check(check(news.clone())).await.unwrap().into_inner();
        let named: Vec<&str> = bad.failures.iter().map(|f| f.property.as_str()).collect();
        assert_eq!(named, [property], "{pkg}: check {news} -> {:?}", bad.failures);
        assert!(!bad.failures[0].reason.is_empty());
    }
    // Unknown inputs during a preview pass through untouched.
    let preview = p.client.check(check(json!({"length": UNKNOWN_NUMBER}))).await.unwrap().into_inner();
    assert!(preview.failures.is_empty(), "{:?}", preview.failures);
    assert_eq!(from_struct(preview.inputs.as_ref())["length"], UNKNOWN_NUMBER);

    // Properties the provider does not look at come back as they were: every
    // value kind survives the helper layer (WIT nodes -> plain values -> WIT nodes).
    let mut news = every_kind();
    news["length"] = json!(4);
    let echoed = p.client.check(check(news.clone())).await.unwrap().into_inner();
    assert!(echoed.failures.is_empty(), "{:?}", echoed.failures);
    assert_eq!(from_struct(echoed.inputs.as_ref()), from_struct(Some(&to_struct(news))));

    // An unknown type is the caller's mistake, and the error names it.
    let mut nope = check(json!({"length": 3}));
    nope.r#type = format!("{pkg}:index:Nope");
    let err = p.client.check(nope).await.unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err:?}");
    assert!(err.message().contains(&format!("{pkg}:index:Nope")), "{}", err.message());

    // Create during a preview: no ID, the generated values are unknown, the password stays secret.
    let create = |preview: bool| CreateRequest {
        urn: urn.clone(),
        name: "pw".into(),
        r#type: token.clone(),
        properties: inputs.clone(),
        timeout: if preview { 0.0 } else { 30.0 },
        preview,
        ..Default::default()
    };
    let planned = p.client.create(create(true)).await.unwrap().into_inner();
    assert_eq!(planned.id, "");
    let planned = from_struct(planned.properties.as_ref());
    assert_eq!(planned["result"], UNKNOWN_STRING);
    assert_eq!(unwrap_secret(&planned["password"]), UNKNOWN_STRING);
    assert_eq!(planned["length"], 16.0);

    // Create for real: a 16-character result, the inputs kept, a secret password.
    let created = p.client.create(create(false)).await.unwrap().into_inner();
    let state = from_struct(created.properties.as_ref());
    let result = state["result"].as_str().expect("a string result");
    assert_eq!(result.chars().count(), 16);
    assert!(result.chars().all(|c| c.is_ascii_alphanumeric()), "{result}");
    assert_eq!(created.id, result, "the ID is the result");
    assert_eq!(state["keepers"], json!({"k": "1"}));
    let password = unwrap_secret(&state["password"]).as_str().expect("a string password");
    assert_eq!(password.chars().count(), 16);
    assert_ne!(password, result);
    // The provider's log reached the engine, tied to the resource.
    let log = engine.wait_for_log(|l| l.urn == urn).await.expect("a log for the resource");
    assert!(log.message.contains("16"), "{}", log.message);

    // Diff: nothing changed.
    let diff = |news: Value| DiffRequest {
        id: created.id.clone(),
        urn: urn.clone(),
        name: "pw".into(),
        r#type: token.clone(),
        olds: created.properties.clone(),
        news: Some(to_struct(news)),
        old_inputs: inputs.clone(),
        ..Default::default()
    };
    let same = p.client.diff(diff(from_struct(inputs.as_ref()))).await.unwrap().into_inner();
    assert_eq!(same.changes, DiffChanges::DiffNone as i32, "{same:?}");
    assert!(same.replaces.is_empty());

    // Diff: a keeper changed, which forces a replacement, with a detailed diff.
    let replace = p.client.diff(diff(json!({"length": 16, "keepers": {"k": "2"}}))).await.unwrap().into_inner();
    assert_eq!(replace.changes, DiffChanges::DiffSome as i32);
    assert_eq!(replace.replaces, vec!["keepers"]);
    assert!(replace.has_detailed_diff);
    assert_eq!(replace.detailed_diff["keepers.k"].kind, Kind::UpdateReplace as i32);
    assert_eq!(replace.detailed_diff.len(), 1, "{:?}", replace.detailed_diff);
    // A new length, and a keeper added: both replace.
    let both = p.client.diff(diff(json!({"length": 8, "keepers": {"k": "1", "j": "0"}}))).await.unwrap().into_inner();
    assert_eq!(both.replaces, vec!["keepers", "length"]);
    assert_eq!(both.detailed_diff["length"].kind, Kind::UpdateReplace as i32);
    assert_eq!(both.detailed_diff["keepers.j"].kind, Kind::AddReplace as i32);
    // An unknown new input is a change (it may differ once known).
    let unknown = p.client.diff(diff(json!({"length": UNKNOWN_NUMBER, "keepers": {"k": "1"}}))).await.unwrap();
    assert_eq!(unknown.into_inner().replaces, vec!["length"]);

    // Read returns the state as it is, secret included.
    let read = p
        .client
        .read(ReadRequest {
            id: created.id.clone(),
            urn: urn.clone(),
            name: "pw".into(),
            r#type: token.clone(),
            properties: created.properties.clone(),
            inputs: inputs.clone(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(read.id, created.id);
    assert_eq!(from_struct(read.properties.as_ref()), state);
    assert_eq!(from_struct(read.inputs.as_ref()), from_struct(inputs.as_ref()));
    // An import (a Read by ID with no state) is refused, not answered with an empty state.
    let import = ReadRequest {
        id: "abc".into(),
        urn: urn.clone(),
        name: "pw".into(),
        r#type: token.clone(),
        ..Default::default()
    };
    let refused = p.client.read(import).await.unwrap_err();
    assert_eq!(refused.code(), tonic::Code::Unimplemented, "{refused:?}");
    assert!(refused.message().contains("cannot be imported (read by ID 'abc' with no state)"), "{refused:?}");

    // Update keeps what was generated (the engine only calls it for in-place changes).
    let updated = p
        .client
        .update(UpdateRequest {
            id: created.id.clone(),
            urn: urn.clone(),
            name: "pw".into(),
            r#type: token.clone(),
            olds: created.properties.clone(),
            news: inputs.clone(),
            old_inputs: inputs.clone(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let updated = from_struct(updated.properties.as_ref());
    assert_eq!(updated["result"], state["result"]);
    assert_eq!(updated["password"], secret(json!(password)));

    p.client
        .delete(DeleteRequest {
            id: created.id.clone(),
            urn: urn.clone(),
            name: "pw".into(),
            r#type: token.clone(),
            properties: created.properties.clone(),
            old_inputs: inputs.clone(),
            ..Default::default()
        })
        .await
        .unwrap();

    // What the provider does not implement answers Unimplemented, and the host keeps serving.
    let args = parameterize_request::Parameters::Args(parameterize_request::ParametersArgs { args: vec!["x".into()] });
    let err = p.client.parameterize(ParameterizeRequest { parameters: Some(args) }).await.unwrap_err();
    assert_eq!(err.code(), Code::Unimplemented, "{err:?}");
    // GetMappings too.
    let err = p.client.get_mappings(GetMappingsRequest { key: "terraform".into() }).await.unwrap_err();
    assert_eq!(err.code(), Code::Unimplemented, "{err:?}");
    let err = p
        .client
        .invoke(InvokeRequest { tok: format!("{pkg}:index:nope"), args: None, preview: false })
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err:?}");
    assert!(err.message().contains(&format!("{pkg}:index:nope")), "{}", err.message());
    assert!(p.client.check(check(json!({"length": 3}))).await.is_ok());
    assert!(p.is_running());
    eprintln!(
        "{pkg}: the lifecycle's calls took {:?}; plugin peak RSS {} MiB",
        calls.elapsed(),
        p.peak_rss().unwrap_or(0) >> 20
    );
}
