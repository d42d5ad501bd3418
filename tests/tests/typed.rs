//! Typed resources through the real host: the `random` example is written
//! with `pulumi_wasm_sdk::typed`, so Check failures name property paths,
//! unknowns pass, secrets stay secret and the schema comes from the types.

use e2e_tests::json::{SECRET_SIG, SIG_KEY, secret};
use e2e_tests::{Plugin, TestEngine, booted, component, from_struct, to_struct};
use pulumirpc::*;
use serde_json::{Value, json};

const STRING: &str = "random:index:RandomString";
const ID: &str = "random:index:RandomId";
const UNKNOWN: &str = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

async fn random() -> (TestEngine, Plugin) {
    booted(&component("random-provider")).await
}

fn urn(token: &str) -> String {
    format!("urn:pulumi:dev::proj::{token}::r")
}

async fn check(p: &mut Plugin, token: &str, news: Value) -> CheckResponse {
    let req = CheckRequest {
        urn: urn(token),
        name: "r".into(),
        r#type: token.into(),
        olds: Some(to_struct(json!({}))),
        news: Some(to_struct(news)),
        random_seed: vec![7; 32],
        ..Default::default()
    };
    p.client.check(req).await.unwrap().into_inner()
}

fn failures(r: &CheckResponse) -> Vec<(&str, &str)> {
    let mut f: Vec<(&str, &str)> = r.failures.iter().map(|f| (f.property.as_str(), f.reason.as_str())).collect();
    f.sort();
    f
}

async fn create(p: &mut Plugin, token: &str, properties: Option<prost_types::Struct>, preview: bool) -> Value {
    let req = CreateRequest {
        urn: urn(token),
        name: "r".into(),
        r#type: token.into(),
        properties,
        preview,
        ..Default::default()
    };
    from_struct(p.client.create(req).await.unwrap().into_inner().properties.as_ref())
}

#[tokio::test]
async fn a_mistyped_nested_input_fails_check_naming_its_path() {
    let (_engine, mut p) = random().await;
    let r = check(&mut p, STRING, json!({"length": 8, "keepers": {"k": 1}})).await;
    assert_eq!(failures(&r), [("keepers.k", "must be a string, not a number")]);
}

#[tokio::test]
async fn every_failure_is_reported_at_once() {
    let (_engine, mut p) = random().await;
    let news = json!({
        "length": "ten",
        "upper": "yes",
        "minLower": 2.5,
        "keepers": {"a": 1, "b.c": true, "ok": "x"},
        "bogus": 1,
    });
    let r = check(&mut p, STRING, news).await;
    assert_eq!(
        failures(&r),
        [
            ("bogus", "is not a known property"),
            ("keepers.a", "must be a string, not a number"),
            ("keepers[\"b.c\"]", "must be a string, not a bool"),
            ("length", "must be a number, not a string"),
            ("minLower", "must be a whole number"),
            ("upper", "must be a boolean, not a string"),
        ]
    );
}

#[tokio::test]
async fn unknown_nested_values_pass_check_and_show_in_the_preview() {
    let (_engine, mut p) = random().await;
    let r = check(&mut p, STRING, json!({"length": 8, "minUpper": 9, "keepers": {"k": UNKNOWN}})).await;
    // minUpper > length is only checked once everything is known.
    assert!(r.failures.is_empty(), "{:?}", r.failures);
    let inputs = from_struct(r.inputs.as_ref());
    assert_eq!(inputs["keepers"]["k"], UNKNOWN);
    assert_eq!(inputs["special"], true, "defaults are applied");
    let preview = create(&mut p, STRING, r.inputs, true).await;
    assert_eq!(preview["keepers"]["k"], UNKNOWN);
    assert_eq!(preview["result"], UNKNOWN);
    let known = check(&mut p, STRING, json!({"length": 8, "minUpper": 9})).await;
    assert_eq!(failures(&known)[0].0, "length");
}

#[tokio::test]
async fn secret_inputs_and_fields_stay_secret() {
    let (_engine, mut p) = random().await;
    let r = check(&mut p, ID, json!({"byteLength": 4, "prefix": secret(json!("p-"))})).await;
    assert!(r.failures.is_empty(), "{:?}", r.failures);
    let state = create(&mut p, ID, r.inputs, false).await;
    assert_eq!(state["prefix"], secret(json!("p-")), "the secret input is secret in the state");
    assert!(state["hex"].as_str().unwrap().starts_with("p-"));
    let preview = create(&mut p, "random:index:RandomPassword", Some(to_struct(json!({"length": 8}))), true).await;
    assert_eq!(preview["result"], secret(json!(UNKNOWN)), "a secret output is secret even unknown");
}

#[tokio::test]
async fn invoke_arguments_are_typed_and_secrets_propagate() {
    let (_engine, mut p) = random().await;
    let invoke =
        |args| InvokeRequest { tok: "random:index:randomInteger".into(), args: Some(to_struct(args)), preview: false };
    let bad = p.client.invoke(invoke(json!({"min": "1", "max": 2.5}))).await.unwrap().into_inner();
    let got: Vec<(&str, &str)> = bad.failures.iter().map(|f| (f.property.as_str(), f.reason.as_str())).collect();
    assert_eq!(got, [("min", "must be a number, not a string"), ("max", "must be a whole number")]);
    let r = p.client.invoke(invoke(json!({"min": 1, "max": 6, "seed": secret(json!("dice"))}))).await.unwrap();
    let result = &from_struct(r.into_inner().r#return.as_ref())["result"];
    assert_eq!(result[SIG_KEY], SECRET_SIG, "{result}");
}

#[tokio::test]
async fn the_schema_is_derived_from_the_types() {
    let (_engine, mut p) = random().await;
    let schema = p.client.get_schema(GetSchemaRequest::default()).await.unwrap().into_inner().schema;
    let schema: Value = serde_json::from_str(&schema).unwrap();
    let string = &schema["resources"][STRING];
    assert_eq!(string["inputProperties"]["keepers"]["additionalProperties"], json!({"type": "string"}));
    assert_eq!(string["inputProperties"]["minUpper"]["replaceOnChanges"], true);
    assert_eq!(string["requiredInputs"], json!(["length"]));
    assert_eq!(schema["resources"]["random:index:RandomPassword"]["properties"]["result"]["secret"], true);
    assert_eq!(schema["resources"][ID]["properties"]["b64Url"]["type"], "string");
    assert_eq!(schema["resources"]["random:index:RandomPet"]["inputProperties"]["length"]["default"], 2);
}
