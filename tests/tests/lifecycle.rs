//! The engine's conversation with a real packed plugin serving the `random`
//! example: boot, schema, check, diff, create (preview and real), read,
//! update, delete, invoke, logs.

use e2e_tests::json::{SECRET_SIG, SIG_KEY};
use e2e_tests::{Plugin, TestEngine, booted, component, from_struct, to_struct, workspace_root};
use pulumirpc::diff_response::DiffChanges;
use pulumirpc::property_diff::Kind;
use pulumirpc::*;
use serde_json::json;
use tonic::Code;

const STRING: &str = "random:index:RandomString";
const URN: &str = "urn:pulumi:dev::proj::random:index:RandomString::pw";
const UNKNOWN_STRING: &str = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

async fn random() -> (TestEngine, Plugin) {
    booted(&component("random-provider")).await
}

fn check(news: serde_json::Value) -> CheckRequest {
    CheckRequest {
        urn: URN.into(),
        name: "pw".into(),
        r#type: STRING.into(),
        olds: Some(to_struct(json!({}))),
        news: Some(to_struct(news)),
        random_seed: vec![7; 32],
        ..Default::default()
    }
}

#[tokio::test]
async fn plugin_info_and_handshake_answer_like_a_native_plugin() {
    let (_engine, mut p) = random().await;
    let info = p.client.get_plugin_info(()).await.unwrap().into_inner();
    assert_eq!(info.version, env!("CARGO_PKG_VERSION"), "version comes from the component");
    let hs = p
        .client
        .handshake(ProviderHandshakeRequest { engine_address: "127.0.0.1:1".into(), ..Default::default() })
        .await
        .unwrap()
        .into_inner();
    assert!(hs.accept_secrets && hs.accept_resources && hs.accept_outputs);
    assert!(!hs.supports_autonaming_configuration, "random does not say it takes autonaming options");
    // Health is served for every service, as rpcutil.ServeWithOptions does.
    let channel = tonic::transport::Channel::from_shared(format!("http://127.0.0.1:{}", p.port))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut health = tonic_health::pb::health_client::HealthClient::new(channel);
    let status =
        health.check(tonic_health::pb::HealthCheckRequest { service: String::new() }).await.unwrap().into_inner();
    assert_eq!(status.status, tonic_health::pb::health_check_response::ServingStatus::Serving as i32);
}

#[tokio::test]
async fn schema_is_valid_against_the_metaschema() {
    let (_engine, mut p) = random().await;
    let schema = p.client.get_schema(GetSchemaRequest::default()).await.unwrap().into_inner().schema;
    let schema: serde_json::Value = serde_json::from_str(&schema).unwrap();
    assert_eq!(schema["name"], "random");
    assert_eq!(schema["version"], env!("CARGO_PKG_VERSION"));
    assert!(schema["resources"][STRING].is_object());
    let meta_path = workspace_root().join("../shared/data/pulumi-package-metaschema.json");
    let meta: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(meta_path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&meta).unwrap();
    let errors: Vec<String> = validator.iter_errors(&schema).map(|e| format!("{} at {}", e, e.instance_path)).collect();
    assert!(errors.is_empty(), "schema violates the metaschema: {errors:#?}");
    // And the validator does reject a broken schema (the test can fail).
    let mut broken = schema.clone();
    broken["resources"][STRING]["inputProperties"]["length"]["type"] = json!("not-a-type");
    assert!(!validator.is_valid(&broken));
}

#[tokio::test]
async fn check_applies_defaults_and_reports_failures_by_property() {
    let (_engine, mut p) = random().await;
    let ok = p.client.check(check(json!({"length": 12}))).await.unwrap().into_inner();
    assert!(ok.failures.is_empty(), "{:?}", ok.failures);
    let inputs = from_struct(ok.inputs.as_ref());
    assert_eq!(inputs["length"], 12.0);
    assert_eq!(inputs["special"], true, "defaults are applied");

    let bad = p.client.check(check(json!({"length": 0}))).await.unwrap().into_inner();
    assert!(bad.failures.iter().any(|f| f.property == "length"), "{:?}", bad.failures);
    let wrong_type = p.client.check(check(json!({"length": "ten"}))).await.unwrap().into_inner();
    assert!(wrong_type.failures.iter().any(|f| f.property == "length"), "{:?}", wrong_type.failures);

    // Unknown inputs during a preview pass through untouched.
    let preview = p.client.check(check(json!({"length": UNKNOWN_STRING}))).await.unwrap().into_inner();
    assert!(preview.failures.is_empty());
    assert_eq!(from_struct(preview.inputs.as_ref())["length"], UNKNOWN_STRING);
}

#[tokio::test]
async fn create_preview_update_read_delete() {
    let (engine, mut p) = random().await;
    let inputs = p.client.check(check(json!({"length": 16, "keepers": {"k": "1"}}))).await.unwrap().into_inner().inputs;

    // Preview: no ID, the result is unknown.
    let preview = p
        .client
        .create(CreateRequest {
            urn: URN.into(),
            name: "pw".into(),
            r#type: STRING.into(),
            properties: inputs.clone(),
            preview: true,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(preview.id, "");
    assert_eq!(from_struct(preview.properties.as_ref())["result"], UNKNOWN_STRING);

    // Up: a real, 16-character result honouring the inputs.
    let created = p
        .client
        .create(CreateRequest {
            urn: URN.into(),
            name: "pw".into(),
            r#type: STRING.into(),
            properties: inputs.clone(),
            timeout: 30.0,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert!(!created.id.is_empty());
    let state = from_struct(created.properties.as_ref());
    assert_eq!(state["result"].as_str().unwrap().chars().count(), 16);
    assert_eq!(state["keepers"], json!({"k": "1"}));
    // The provider's log reached the engine, tied to the resource.
    let log = engine.wait_for_log(|l| l.urn == URN).await.expect("a log for the resource");
    assert!(!log.message.is_empty());

    // Diff: nothing changed.
    let diff = |news: serde_json::Value| DiffRequest {
        id: created.id.clone(),
        urn: URN.into(),
        name: "pw".into(),
        r#type: STRING.into(),
        olds: created.properties.clone(),
        news: Some(to_struct(news)),
        old_inputs: inputs.clone(),
        ..Default::default()
    };
    let same = p.client.diff(diff(from_struct(inputs.as_ref()))).await.unwrap().into_inner();
    assert_eq!(same.changes, DiffChanges::DiffNone as i32);

    // Diff: a keeper changed, which forces replacement, with a detailed diff.
    let mut changed = from_struct(inputs.as_ref());
    changed["keepers"]["k"] = json!("2");
    let replace = p.client.diff(diff(changed)).await.unwrap().into_inner();
    assert_eq!(replace.changes, DiffChanges::DiffSome as i32);
    assert_eq!(replace.replaces, vec!["keepers"]);
    assert!(replace.has_detailed_diff);
    assert_eq!(replace.detailed_diff["keepers.k"].kind, Kind::UpdateReplace as i32);

    // Read returns the state as it is.
    let read = p
        .client
        .read(ReadRequest {
            id: created.id.clone(),
            urn: URN.into(),
            name: "pw".into(),
            r#type: STRING.into(),
            properties: created.properties.clone(),
            inputs: inputs.clone(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(read.id, created.id);
    assert_eq!(from_struct(read.properties.as_ref()), state);

    // Update keeps the generated result (the engine only calls it for in-place changes).
    let updated = p
        .client
        .update(UpdateRequest {
            id: created.id.clone(),
            urn: URN.into(),
            name: "pw".into(),
            r#type: STRING.into(),
            olds: created.properties.clone(),
            news: inputs.clone(),
            old_inputs: inputs.clone(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(from_struct(updated.properties.as_ref())["result"], state["result"]);

    p.client
        .delete(DeleteRequest {
            id: created.id.clone(),
            urn: URN.into(),
            name: "pw".into(),
            r#type: STRING.into(),
            properties: created.properties.clone(),
            old_inputs: inputs.clone(),
            ..Default::default()
        })
        .await
        .unwrap();
}

#[tokio::test]
async fn password_results_are_secret() {
    let (_engine, mut p) = random().await;
    let t = "random:index:RandomPassword";
    let urn = "urn:pulumi:dev::proj::random:index:RandomPassword::db";
    let created = p
        .client
        .create(CreateRequest {
            urn: urn.into(),
            name: "db".into(),
            r#type: t.into(),
            properties: Some(to_struct(
                json!({"length": 20, "special": true, "upper": true, "lower": true, "numeric": true}),
            )),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let result = &from_struct(created.properties.as_ref())["result"];
    assert_eq!(result[SIG_KEY], SECRET_SIG, "result is a secret: {result}");
    assert_eq!(result["value"].as_str().unwrap().chars().count(), 20);
}

#[tokio::test]
async fn invoke_returns_results_and_failures() {
    let (_engine, mut p) = random().await;
    let invoke =
        |args| InvokeRequest { tok: "random:index:randomInteger".into(), args: Some(to_struct(args)), preview: false };
    let a = p.client.invoke(invoke(json!({"min": 1, "max": 6, "seed": "dice"}))).await.unwrap().into_inner();
    let b = p.client.invoke(invoke(json!({"min": 1, "max": 6, "seed": "dice"}))).await.unwrap().into_inner();
    let n = from_struct(a.r#return.as_ref())["result"].as_f64().unwrap();
    assert!((1.0..=6.0).contains(&n));
    assert_eq!(a.r#return, b.r#return, "a seed makes the result deterministic");
    let bad = p.client.invoke(invoke(json!({"min": 6, "max": 1}))).await.unwrap().into_inner();
    assert!(!bad.failures.is_empty());
    // StreamInvoke (older engines) answers with one response.
    let mut stream =
        p.client.stream_invoke(invoke(json!({"min": 1, "max": 6, "seed": "dice"}))).await.unwrap().into_inner();
    let first = stream.message().await.unwrap().unwrap();
    assert_eq!(first.r#return, a.r#return);
    assert!(stream.message().await.unwrap().is_none());
}

#[tokio::test]
async fn unknown_types_and_tokens_get_clear_errors_and_the_host_keeps_serving() {
    let (_engine, mut p) = random().await;
    let mut req = check(json!({"length": 3}));
    req.r#type = "random:index:Nope".into();
    let err = p.client.check(req).await.unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(err.message().contains("random:index:Nope"), "{}", err.message());
    let err = p
        .client
        .invoke(InvokeRequest { tok: "random:index:nope".into(), args: None, preview: false })
        .await
        .unwrap_err();
    assert!(err.message().contains("random:index:nope"), "{}", err.message());
    assert!(p.client.check(check(json!({"length": 3}))).await.is_ok());
}
