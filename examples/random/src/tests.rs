//! Provider-level tests: the calls the engine makes, end to end (natively).

use pulumi_wasm_sdk::typed::Typed;
use pulumi_wasm_sdk::{
    CheckRequest, CreateRequest, DiffChanges, DiffKind, DiffRequest, Error, GetSchemaRequest, InvokeRequest,
    PropertyMap, Provider, ReadRequest, UnknownKind, UpdateRequest, Value, props,
};
use serde_json::json;

use crate::Random;

const STRING: &str = "random:index:RandomString";
const PASSWORD: &str = "random:index:RandomPassword";
const ID: &str = "random:index:RandomId";
const PET: &str = "random:index:RandomPet";

fn random() -> Typed<Random> {
    Typed::default()
}

fn urn(token: &str) -> String {
    format!("urn:pulumi:dev::proj::{token}::r")
}

fn check(token: &str, news: PropertyMap) -> pulumi_wasm_sdk::CheckResponse {
    random()
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
    random().create(CreateRequest {
        urn: urn(token),
        name: "r".into(),
        resource_type: token.into(),
        properties,
        timeout: 0.0,
        preview,
    })
}

fn diff(token: &str, old_inputs: PropertyMap, news: PropertyMap) -> pulumi_wasm_sdk::DiffResponse {
    random()
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

fn schema() -> serde_json::Value {
    let req = GetSchemaRequest { version: 0, subpackage_name: String::new(), subpackage_version: String::new() };
    serde_json::from_str(&random().get_schema(req).unwrap()).unwrap()
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
    let r = check(ID, props! { "byteLength" => 0, "keepers" => props! { "a" => 1, "b" => "ok" } });
    let got: Vec<(&str, &str)> = r.failures.iter().map(|f| (f.property.as_str(), f.reason.as_str())).collect();
    assert_eq!(got, [("byteLength", "must be at least 1"), ("keepers.a", "must be a string, not a number")]);
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

    let id = create(ID, check(ID, props! { "byteLength" => 4, "prefix" => Value::secret("p-") }).inputs, false);
    let id = id.unwrap();
    assert_eq!(id.properties["b64Url"].as_str(), Some(id.id.as_str()));
    assert!(id.id.starts_with("p-"));
    assert_eq!(id.properties["prefix"], Value::secret("p-"), "a secret input stays secret");
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
    let r = random()
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

    let olds = check(STRING, props! { "length" => 4 }).inputs;
    let mut state = olds.clone();
    state.insert("result".into(), "abcd".into());
    let u = random()
        .update(UpdateRequest {
            id: "abcd".into(),
            urn: urn(STRING),
            name: "r".into(),
            resource_type: STRING.into(),
            olds: state.clone(),
            news: props! { "length" => 4 },
            old_inputs: olds,
            timeout: 0.0,
            ignore_changes: vec![],
            preview: false,
        })
        .unwrap();
    assert_eq!(u.properties, state);
}

#[test]
fn unknown_tokens_are_errors() {
    let err = create("random:index:Nope", props! {}, false).unwrap_err();
    assert_eq!(err.to_string(), "unknown resource type 'random:index:Nope'");
    let err = random()
        .invoke(InvokeRequest { token: "random:index:nope".into(), args: props! {}, preview: false })
        .unwrap_err();
    assert_eq!(err.to_string(), "unknown function 'random:index:nope'");
}

#[test]
fn schema_has_the_crate_version_and_every_token() {
    let schema = schema();
    assert_eq!(schema["name"], "random");
    assert_eq!(schema["version"], env!("CARGO_PKG_VERSION"));
    for token in [STRING, PASSWORD, ID, PET] {
        assert!(schema["resources"][token].is_object(), "{token}");
    }
    let password = &schema["resources"][PASSWORD];
    assert_eq!(password["properties"]["result"]["secret"], true);
    assert_eq!(password["inputProperties"]["keepers"]["replaceOnChanges"], true);
    assert_eq!(password["requiredInputs"], json!(["length"]));
    assert_eq!(schema["resources"][PET]["inputProperties"]["separator"]["default"], "-");
    let integer = &schema["functions"]["random:index:randomInteger"];
    assert_eq!(integer["inputs"]["required"], json!(["min", "max"]));
    assert_eq!(integer["outputs"]["properties"]["result"]["type"], "integer");
}

#[test]
fn schema_is_valid_against_the_metaschema() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data/pulumi-package-metaschema.json");
    let meta: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&meta).unwrap();
    let schema = schema();
    let errors: Vec<String> = validator.iter_errors(&schema).map(|e| format!("{e} at {}", e.instance_path)).collect();
    assert!(errors.is_empty(), "{errors:#?}");
}

/// The calls `pulumi up`, a second `up`, a changed program, `preview` and
/// `destroy` make, as the engine makes them (`pulumi_wasm_sdk::testing`).
#[test]
fn a_random_string_through_a_stack_lifecycle() {
    use pulumi_wasm_sdk::testing::{Engine, Step};
    let mut engine = Engine::new(random());
    let first = engine.create(STRING, "pw", props! { "length" => 12, "keepers" => props! { "v" => "1" } }).unwrap();
    let result = first.outputs["result"].as_str().unwrap().to_owned();
    assert_eq!((result.len(), first.id.as_str()), (12, result.as_str()));

    // The same program again: no change, the same string.
    let (step, same) = engine.update(&first, props! { "length" => 12, "keepers" => props! { "v" => "1" } }).unwrap();
    assert_eq!((step, same.outputs["result"].as_str()), (Step::Same, Some(result.as_str())));

    // A changed keeper replaces the resource: a new string of the same length.
    let (step, second) = engine.update(&first, props! { "length" => 12, "keepers" => props! { "v" => "2" } }).unwrap();
    assert!(matches!(&step, Step::Replace { keys, .. } if keys == &["keepers"]), "{step:?}");
    assert_ne!(second.outputs["result"], first.outputs["result"]);

    // A preview with a length not known yet: a replacement whose result is unknown.
    let unknown = Value::Unknown(UnknownKind::Number);
    let (step, shown) = engine.preview_update(&second, props! { "length" => unknown }).unwrap();
    assert!(matches!(step, Step::Replace { .. }), "{step:?}");
    assert_eq!(shown["result"], Value::Unknown(UnknownKind::String));

    // A Check failure stops the update before any change.
    let refused = engine.update(&second, props! { "length" => 0 }).unwrap_err();
    assert!(refused.to_string().contains("length"), "{refused}");
    engine.delete(second).unwrap();
}
