//! Provider-level tests: the calls the engine makes, end to end (natively).

use pulumi_wasm_sdk::{
    CheckRequest, CreateRequest, DiffChanges, DiffKind, DiffRequest, Error, GetSchemaRequest, InvokeRequest,
    PropertyMap, Provider, ReadRequest, UnknownKind, UpdateRequest, Value, props,
};

use crate::Random;

const STRING: &str = "random:index:RandomString";
const PASSWORD: &str = "random:index:RandomPassword";
const ID: &str = "random:index:RandomId";
const PET: &str = "random:index:RandomPet";

fn urn(token: &str) -> String {
    format!("urn:pulumi:dev::proj::{token}::r")
}

fn check(token: &str, news: PropertyMap) -> pulumi_wasm_sdk::CheckResponse {
    Random
        .check(CheckRequest {
            urn: urn(token),
            name: "r".into(),
            resource_type: token.into(),
            olds: PropertyMap::new(),
            news,
            random_seed: vec![],
            autonaming: None,
            old_outputs: None,
        })
        .unwrap()
}

fn create(
    token: &str,
    properties: PropertyMap,
    preview: bool,
) -> pulumi_wasm_sdk::Result<pulumi_wasm_sdk::CreateResponse> {
    Random.create(CreateRequest {
        urn: urn(token),
        name: "r".into(),
        resource_type: token.into(),
        properties,
        timeout: 0.0,
        preview,
    })
}

fn diff(token: &str, old_inputs: PropertyMap, news: PropertyMap) -> pulumi_wasm_sdk::DiffResponse {
    Random
        .diff(DiffRequest {
            id: "x".into(),
            urn: urn(token),
            name: "r".into(),
            resource_type: token.into(),
            olds: old_inputs.clone(),
            news,
            old_inputs,
            ignore_changes: vec![],
        })
        .unwrap()
}

#[test]
fn check_applies_defaults() {
    let r = check(STRING, props! { "length" => 8 });
    assert!(r.failures.is_empty());
    assert_eq!(
        r.inputs,
        props! {
            "length" => 8, "upper" => true, "lower" => true, "numeric" => true, "special" => true,
            "minUpper" => 0, "minLower" => 0, "minNumeric" => 0, "minSpecial" => 0,
        }
    );
    let pet = check(PET, props! {});
    assert_eq!(pet.inputs, props! { "length" => 2, "separator" => "-" });
}

#[test]
fn check_reports_the_property() {
    let r = check(STRING, props! { "length" => 0 });
    assert_eq!(r.failures.len(), 1);
    assert_eq!((r.failures[0].property.as_str(), r.failures[0].reason.as_str()), ("length", "must be at least 1"));
}

#[test]
fn diff_replaces_on_keepers() {
    let old = check(STRING, props! { "length" => 8, "keepers" => props! { "build" => "1" } }).inputs;
    let new = check(STRING, props! { "length" => 8, "keepers" => props! { "build" => "2" } }).inputs;
    let d = diff(STRING, old.clone(), new);
    assert_eq!(d.changes, DiffChanges::Some);
    assert_eq!(d.replaces, vec!["keepers"]);
    let detailed: Vec<(String, DiffKind)> = d.detailed_diff.unwrap().into_iter().map(|(p, k)| (p, k.kind)).collect();
    assert_eq!(detailed, vec![("keepers.build".to_string(), DiffKind::UpdateReplace)]);

    let same = diff(STRING, old.clone(), old.clone());
    assert_eq!(same.changes, DiffChanges::None);

    let mut removed = old.clone();
    removed.remove("keepers");
    assert_eq!(diff(STRING, old, removed).replaces, vec!["keepers"]);
}

#[test]
fn diff_replaces_on_any_input_and_unknowns() {
    let old = check(PET, props! {}).inputs;
    let new = check(PET, props! { "length" => Value::Unknown(UnknownKind::Number) }).inputs;
    let d = diff(PET, old, new);
    assert_eq!(d.replaces, vec!["length"]);
    assert_eq!(d.stables, vec!["separator"]);
}

#[test]
fn create_preview_has_unknown_results() {
    let inputs = check(PASSWORD, props! { "length" => Value::Unknown(UnknownKind::Number) }).inputs;
    let r = create(PASSWORD, inputs.clone(), true).unwrap();
    assert_eq!(r.id, "");
    assert_eq!(r.properties["length"], Value::Unknown(UnknownKind::Number));
    assert_eq!(r.properties["result"], Value::secret(Value::Unknown(UnknownKind::String)));

    let id = create(ID, check(ID, props! { "byteLength" => 4 }).inputs, true).unwrap();
    assert_eq!(id.properties["hex"], Value::Unknown(UnknownKind::String));
    assert_eq!(id.properties["byteLength"], Value::Number(4.0));
}

#[test]
fn create_generates_and_keeps_inputs() {
    let inputs = check(STRING, props! { "length" => 10, "special" => false }).inputs;
    let r = create(STRING, inputs.clone(), false).unwrap();
    let result = r.properties["result"].as_str().unwrap();
    assert_eq!(result.len(), 10);
    assert!(result.chars().all(|c| c.is_ascii_alphanumeric()));
    assert_eq!(r.id, result);
    for (k, v) in &inputs {
        assert_eq!(&r.properties[k], v);
    }

    let pw = create(PASSWORD, check(PASSWORD, props! { "length" => 10 }).inputs, false).unwrap();
    assert!(matches!(pw.properties["result"], Value::Secret(_)));
    assert_eq!(pw.id, "none");

    let pet = create(PET, check(PET, props! { "prefix" => "dev" }).inputs, false).unwrap();
    assert!(pet.id.starts_with("dev-") && pet.id.split('-').count() == 3, "{}", pet.id);

    let id = create(ID, check(ID, props! { "byteLength" => 4 }).inputs, false).unwrap();
    assert_eq!(id.properties["b64Url"].as_str(), Some(id.id.as_str()));
    assert!(!id.id.is_empty());
}

#[test]
fn create_refuses_bad_or_unknown_inputs() {
    assert!(matches!(create(STRING, props! { "length" => 0 }, false), Err(Error::InvalidArgument(_))));
    let unknown = check(STRING, props! { "length" => Value::Unknown(UnknownKind::Number) }).inputs;
    assert!(create(STRING, unknown, false).is_err());
}

#[test]
fn read_and_update() {
    let state = props! { "length" => 2, "separator" => "-" };
    let r = Random
        .read(ReadRequest {
            id: "brave-otter".into(),
            urn: urn(PET),
            name: "r".into(),
            resource_type: PET.into(),
            properties: state.clone(),
            inputs: state.clone(),
            timeout: 0.0,
        })
        .unwrap();
    assert_eq!((r.id.as_str(), &r.properties, &r.inputs), ("brave-otter", &state, &state));

    let olds = props! { "length" => 4, "minUpper" => 0, "result" => "abcd" };
    let u = Random
        .update(UpdateRequest {
            id: "abcd".into(),
            urn: urn(STRING),
            name: "r".into(),
            resource_type: STRING.into(),
            olds: olds.clone(),
            news: props! { "length" => 4 },
            old_inputs: props! { "length" => 4, "minUpper" => 0 },
            timeout: 0.0,
            ignore_changes: vec![],
            preview: false,
        })
        .unwrap();
    assert_eq!(u.properties, props! { "length" => 4, "result" => "abcd" });
}

#[test]
fn unknown_tokens_are_errors() {
    let err = create("random:index:Nope", props! {}, false).unwrap_err();
    assert_eq!(err.to_string(), "unknown resource type 'random:index:Nope'");
    let err = Random
        .invoke(InvokeRequest { token: "random:index:nope".into(), args: props! {}, preview: false })
        .unwrap_err();
    assert_eq!(err.to_string(), "unknown function 'random:index:nope'");
}

#[test]
fn invoke_random_integer() {
    let r = Random
        .invoke(InvokeRequest {
            token: "random:index:randomInteger".into(),
            args: props! { "min" => 1, "max" => 6, "seed" => "dice" },
            preview: false,
        })
        .unwrap();
    let n = r.outputs["result"].as_f64().unwrap();
    assert!((1.0..=6.0).contains(&n));
}

#[test]
fn schema_has_the_crate_version_and_every_token() {
    let s = Random
        .get_schema(GetSchemaRequest { version: 0, subpackage_name: String::new(), subpackage_version: String::new() })
        .unwrap();
    let schema: serde_json::Value = serde_json::from_str(&s).unwrap();
    assert_eq!(schema["name"], "random");
    assert_eq!(schema["version"], env!("CARGO_PKG_VERSION"));
    for token in [STRING, PASSWORD, ID, PET] {
        assert!(schema["resources"][token].is_object(), "{token}");
    }
    assert_eq!(schema["resources"][PASSWORD]["properties"]["result"]["secret"], true);
    assert!(schema["functions"]["random:index:randomInteger"].is_object());
    // The schema's inputs are exactly the ones the provider checks.
    for (token, inputs) in [(STRING, crate::string::INPUTS), (ID, crate::id::INPUTS), (PET, crate::pet::INPUTS)] {
        let mut declared: Vec<&str> =
            schema["resources"][token]["inputProperties"].as_object().unwrap().keys().map(String::as_str).collect();
        let mut expected = inputs.to_vec();
        declared.sort();
        expected.sort();
        assert_eq!(declared, expected, "{token}");
    }
}
