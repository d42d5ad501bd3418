//! A typed provider end to end (natively): schema, Check, Diff, CRUD,
//! previews, secrets, invokes and configuration through the `Provider` trait.

use std::collections::BTreeMap;

use serde_json::json;

use super::*;
use crate::{
    ConfigureRequest, CreateRequest, DeleteRequest, DiffChanges, DiffKind, GetSchemaRequest, InvokeRequest, Provider,
    ReadRequest, UpdateRequest, props,
};

/// Provider configuration.
#[derive(PulumiType)]
pub struct Config {
    /// The region to work in.
    // What one region made, another cannot reach: a change replaces.
    #[pulumi(replace_on_changes)]
    pub region: String,
    #[pulumi(default = 3)]
    pub retries: u32,
    #[pulumi(secret)]
    pub token: Option<String>,
    pub window: Option<Window>,
    pub mode: Option<Mode>,
}

/// When changes may happen.
#[derive(PulumiType)]
pub struct Window {
    pub start: u32,
}

#[derive(PulumiType)]
pub enum Mode {
    Fast,
    Safe,
}

#[derive(PulumiType, Clone)]
pub struct ThingArgs {
    #[pulumi(replace_on_changes)]
    pub name: String,
    pub tags: Option<BTreeMap<String, String>>,
    #[pulumi(default = 1, min = 1, max = 10)]
    pub size: u32,
    pub max_size: Option<u32>,
}

/// A thing in the cloud.
#[derive(PulumiType)]
pub struct ThingState {
    #[pulumi(flatten)]
    pub args: ThingArgs,
    pub arn: String,
    #[pulumi(secret)]
    pub key: String,
    pub region: String,
}

pub struct Thing;

impl Resource for Thing {
    const TOKEN: &'static str = "test:index:Thing";
    type Inputs = ThingArgs;
    type State = ThingState;

    fn validate(&self, a: &ThingArgs) -> Vec<CheckFailure> {
        match a.max_size {
            Some(max) if max < a.size => vec![CheckFailure::new("maxSize", "must be at least `size`")],
            _ => vec![],
        }
    }

    fn create(&self, ctx: &Context, args: ThingArgs) -> Result<(String, ThingState)> {
        let region = ctx.config::<Config>().map(|c| c.region.clone()).unwrap_or_default();
        let state = ThingState { arn: format!("arn:{}", args.name), key: "k".into(), region, args };
        Ok((format!("id-{}", state.args.name), state))
    }

    /// IDs are `id-<name>`; nothing else exists.
    fn import(&self, _ctx: &Context, id: String) -> Result<Option<(String, ThingState)>> {
        let Some(name) = id.strip_prefix("id-") else { return Ok(None) };
        let args = ThingArgs { name: name.into(), tags: None, size: 4, max_size: None };
        let state = ThingState { args, arn: format!("arn:{name}"), key: "k".into(), region: "imported".into() };
        Ok(Some((id, state)))
    }

    /// A size of 9 is reported half done, then fails.
    fn update(&self, ctx: &Context, id: &str, olds: ThingState, news: ThingArgs) -> Result<ThingState> {
        if news.size == 9 {
            ctx.report_partial_state(id, &olds);
            return Err(Error::Failed("resizing failed".into()));
        }
        Ok(ThingState { args: news, ..olds })
    }
}

/// A note: its state is its inputs.
#[derive(PulumiType)]
pub struct Note {
    pub text: String,
}

pub struct Notes;

impl Resource for Notes {
    const TOKEN: &'static str = "test:index:Note";
    type Inputs = Note;
    type State = Note;

    fn create(&self, ctx: &Context, note: Note) -> Result<(String, Note)> {
        if note.text == "half" {
            return Err(init_failed("note", &note, "half done"));
        }
        // Made, then it waits to be ready: cancelled, or it gives up.
        if note.text == "slow" {
            ctx.report_partial_state("note", &note);
            if ctx.cancelled() {
                return Err(Error::Cancelled("cancelled while waiting".into()));
            }
            return Err(Error::Failed("never became ready".into()));
        }
        Ok(("note".into(), note))
    }

    // Escape hatches: a custom check on top of the default, a known preview.
    fn check(&self, _ctx: &Context, req: CheckRequest) -> Result<CheckResponse> {
        let mut r = check_inputs(self, req.news);
        if r.inputs.get("text").and_then(Value::as_str) == Some("") {
            r.failures.push(CheckFailure::new("text", "must not be empty"));
        }
        Ok(r)
    }

    fn preview(&self, _ctx: &Context, _olds: Option<&Note>, news: &Partial<Note>) -> Result<Option<Note>> {
        Ok(news.get::<String>("text").map(|text| Note { text: text.to_uppercase() }))
    }
}

/// A bucket named by Check when the program does not name it.
#[derive(PulumiType)]
pub struct Bucket {
    #[pulumi(autoname, replace_on_changes)]
    pub name: String,
}

pub struct Buckets;

impl Resource for Buckets {
    const TOKEN: &'static str = "test:index:Bucket";
    type Inputs = Bucket;
    type State = Bucket;

    fn create(&self, _ctx: &Context, bucket: Bucket) -> Result<(String, Bucket)> {
        Ok((bucket.name.clone(), bucket))
    }

    // A check of its own still gets named inputs.
    fn check(&self, _ctx: &Context, req: CheckRequest) -> Result<CheckResponse> {
        Ok(check_inputs(self, req.news))
    }
}

/// A network whose subnets' CIDRs cannot change in place.
#[derive(PulumiType)]
pub struct NetworkArgs {
    pub subnets: Vec<Subnet>,
    pub labels: Option<BTreeMap<String, Subnet>>,
    pub tree: Option<Tree>,
}

#[derive(PulumiType)]
pub struct Subnet {
    #[pulumi(replace_on_changes)]
    pub cidr: String,
    pub name: Option<String>,
}

/// Holds itself: its paths are walked four levels deep.
#[derive(PulumiType)]
pub struct Tree {
    #[pulumi(replace_on_changes)]
    pub root: String,
    pub children: Vec<Tree>,
}

pub struct Networks;

impl Resource for Networks {
    const TOKEN: &'static str = "test:index:Network";
    type Inputs = NetworkArgs;
    type State = NetworkArgs;

    fn create(&self, _ctx: &Context, net: NetworkArgs) -> Result<(String, NetworkArgs)> {
        Ok(("net".into(), net))
    }
}

/// A login whose password is write-only: its state keeps a fingerprint.
#[derive(PulumiType)]
pub struct LoginArgs {
    pub user: String,
    #[pulumi(secret, replace_on_changes)]
    pub password: String,
}

#[derive(PulumiType)]
pub struct LoginState {
    pub user: String,
    pub fingerprint: String,
}

pub struct Logins;

impl Resource for Logins {
    const TOKEN: &'static str = "test:index:Login";
    type Inputs = LoginArgs;
    type State = LoginState;

    fn create(&self, _ctx: &Context, a: LoginArgs) -> Result<(String, LoginState)> {
        Ok((a.user.clone(), LoginState { fingerprint: a.password.len().to_string(), user: a.user }))
    }

    /// Someone renamed the user outside Pulumi.
    fn read(&self, _ctx: &Context, id: String, s: LoginState) -> Result<Option<(String, LoginState)>> {
        Ok(Some((id, LoginState { user: s.user.to_uppercase(), ..s })))
    }

    fn update(&self, _ctx: &Context, _id: &str, olds: LoginState, news: LoginArgs) -> Result<LoginState> {
        Ok(LoginState { user: news.user, ..olds })
    }
}

/// Adds two numbers.
#[derive(PulumiType)]
pub struct AddArgs {
    pub a: i64,
    pub b: i64,
}

#[derive(PulumiType)]
pub struct Sum {
    pub sum: i64,
}

pub struct Add;

impl Function for Add {
    const TOKEN: &'static str = "test:index:add";
    type Args = AddArgs;
    type Output = Sum;

    fn invoke(&self, _ctx: &Context, args: AddArgs) -> Result<Sum> {
        Ok(Sum { sum: args.a + args.b })
    }
}

pub struct Pkg;

impl Package for Pkg {
    fn build() -> Builder {
        Builder::new("test", "1.2.3")
            .display_name("Test")
            .resource(Thing)
            .resource(Notes)
            .resource(Buckets)
            .resource(Logins)
            .function(Add)
            .config::<Config>()
    }
}

const THING: &str = "test:index:Thing";
const NOTE: &str = "test:index:Note";
const BUCKET: &str = "test:index:Bucket";

fn check(p: &mut Typed<Pkg>, token: &str, news: PropertyMap) -> CheckResponse {
    let req = CheckRequest {
        urn: format!("urn:pulumi:s::p::{token}::r"),
        name: "r".into(),
        resource_type: token.into(),
        olds: PropertyMap::new(),
        news,
        random_seed: vec![],
        autonaming: None,
        old_outputs: None,
    };
    p.check(req).unwrap()
}

fn failures(r: &CheckResponse) -> Vec<(&str, &str)> {
    r.failures.iter().map(|f| (f.property.as_str(), f.reason.as_str())).collect()
}

fn create(p: &mut Typed<Pkg>, token: &str, properties: PropertyMap, preview: bool) -> Result<crate::CreateResponse> {
    p.create(CreateRequest {
        urn: format!("urn:pulumi:s::p::{token}::r"),
        name: "r".into(),
        resource_type: token.into(),
        properties,
        timeout: 0.0,
        preview,
    })
}

fn diff(p: &mut Typed<Pkg>, old_inputs: PropertyMap, news: PropertyMap) -> DiffResponse {
    let req = DiffRequest {
        id: "id".into(),
        urn: String::new(),
        name: "r".into(),
        resource_type: THING.into(),
        olds: PropertyMap::new(),
        news,
        old_inputs,
        ignore_changes: vec![],
    };
    p.diff(req).unwrap()
}

fn unknown() -> Value {
    Value::Unknown(UnknownKind::String)
}

#[test]
fn schema_validates_against_the_metaschema() {
    let mut p = Typed::<Pkg>::default();
    let req = GetSchemaRequest { version: 0, subpackage_name: String::new(), subpackage_version: String::new() };
    let schema: serde_json::Value = serde_json::from_str(&p.get_schema(req).unwrap()).unwrap();
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/data/pulumi-package-metaschema.json");
    let meta: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&meta).unwrap();
    let errors: Vec<String> = validator.iter_errors(&schema).map(|e| format!("{e} at {}", e.instance_path)).collect();
    assert!(errors.is_empty(), "{errors:#?}");
    assert_eq!((schema["name"].as_str(), schema["version"].as_str()), (Some("test"), Some("1.2.3")));
    assert_eq!(schema["displayName"], "Test");
    assert_eq!(schema["config"]["defaults"], json!(["region"]));
    assert_eq!(schema["config"]["variables"]["token"]["secret"], true);
    assert_eq!(schema["provider"]["requiredInputs"], json!(["region"]));
    let thing = &schema["resources"][THING];
    assert_eq!(thing["description"], "A thing in the cloud.");
    assert_eq!(thing["requiredInputs"], json!(["name"]));
    assert_eq!(thing["required"], json!(["name", "size", "arn", "key", "region"]));
    assert_eq!(thing["properties"]["key"]["secret"], true);
    assert_eq!(schema["functions"]["test:index:add"]["description"], "Adds two numbers.");
    assert_eq!(schema["functions"]["test:index:add"]["outputs"]["required"], json!(["sum"]));
    // The check can fail: a broken schema is rejected.
    let mut broken = schema.clone();
    broken["resources"][THING]["inputProperties"]["size"]["type"] = json!("int");
    assert!(!validator.is_valid(&broken));
}

#[test]
fn check_reports_paths_applies_defaults_and_passes_unknowns() {
    let mut p = Typed::<Pkg>::default();
    let bad = check(&mut p, THING, props! { "name" => 1, "tags" => props! { "k" => 2 }, "size" => 11 });
    assert_eq!(
        failures(&bad),
        [
            ("name", "must be a string, not a number"),
            ("tags.k", "must be a string, not a number"),
            ("size", "must be at most 10")
        ]
    );
    let ok = check(&mut p, THING, props! { "name" => "a", "tags" => Value::Null });
    assert!(ok.failures.is_empty());
    assert_eq!(ok.inputs, props! { "name" => "a", "size" => 1 });
    // Validation between properties waits until everything is known.
    let news = props! { "name" => unknown(), "tags" => props! { "k" => unknown() }, "size" => 5, "maxSize" => 1 };
    let partial = check(&mut p, THING, news.clone());
    assert!(partial.failures.is_empty(), "{:?}", partial.failures);
    assert_eq!(partial.inputs["tags"], Value::from(props! { "k" => unknown() }));
    let known = check(&mut p, THING, props! { "name" => "a", "size" => 5, "maxSize" => 1 });
    assert_eq!(failures(&known), [("maxSize", "must be at least `size`")]);
    assert_eq!(failures(&check(&mut p, NOTE, props! { "text" => "" })), [("text", "must not be empty")]);
}

#[test]
fn diff_replaces_on_replace_on_changes_fields_only() {
    let mut p = Typed::<Pkg>::default();
    let old = props! { "name" => "a", "tags" => props! { "k" => "1" }, "size" => 1 };
    assert_eq!(diff(&mut p, old.clone(), old.clone()).changes, DiffChanges::None);
    let mut retagged = old.clone();
    retagged.insert("tags".into(), props! { "k" => "2" }.into());
    let d = diff(&mut p, old.clone(), retagged);
    assert!(d.replaces.is_empty());
    let detailed: Vec<(String, DiffKind)> = d.detailed_diff.unwrap().into_iter().map(|(k, v)| (k, v.kind)).collect();
    assert_eq!(detailed, [("tags.k".to_string(), DiffKind::Update)]);
    let mut renamed = old.clone();
    renamed.insert("name".into(), "b".into());
    assert_eq!(diff(&mut p, old, renamed).replaces, ["name"]);
}

#[test]
fn a_resource_the_program_does_not_name_is_named_as_the_engine_asks() {
    use crate::{Autonaming, AutonamingMode};
    let mut p = Typed::<Pkg>::default();
    assert!(p.info().supports_autonaming_configuration, "said at Handshake, as a resource names itself");
    let check = |p: &mut Typed<Pkg>, olds: PropertyMap, news: PropertyMap, autonaming: Option<Autonaming>| {
        let req = CheckRequest {
            urn: "urn:pulumi:s::p::test:index:Bucket::logs".into(),
            name: "logs".into(),
            resource_type: BUCKET.into(),
            olds,
            news,
            random_seed: vec![0xab, 0xcd, 0xef, 0x01, 0x23],
            autonaming,
            old_outputs: None,
        };
        p.check(req).unwrap()
    };
    let named = |r: &CheckResponse| (r.inputs.get("name").cloned(), failures(r).len());
    let proposed = |mode| Some(Autonaming { proposed_name: "logs-prod".into(), mode });
    // Pulumi's default: the resource's name, a dash, seven hex digits of the seed.
    assert_eq!(named(&check(&mut p, props! {}, props! {}, None)), (Some("logs-abcdef0".into()), 0));
    // An engine that does not send the name: the URN's.
    let old_engine = CheckRequest {
        urn: "urn:pulumi:s::p::test:index:Bucket::audit".into(),
        name: String::new(),
        resource_type: BUCKET.into(),
        olds: props! {},
        news: props! {},
        random_seed: vec![0x12, 0x34, 0x56, 0x78],
        autonaming: None,
        old_outputs: None,
    };
    assert_eq!(named(&p.check(old_engine).unwrap()), (Some("audit-1234567".into()), 0));
    // The engine's proposal, unless naming is disabled.
    let r = check(&mut p, props! {}, props! {}, proposed(AutonamingMode::Propose));
    assert_eq!(named(&r), (Some("logs-prod".into()), 0));
    let r = check(&mut p, props! {}, props! {}, proposed(AutonamingMode::Enforce));
    assert_eq!(named(&r), (Some("logs-prod".into()), 0));
    let r = check(&mut p, props! {}, props! {}, proposed(AutonamingMode::Disable));
    assert_eq!(failures(&r), [("name", "is required: automatic naming is disabled")]);
    // A name the program gives wins; an update keeps the name it had.
    let r = check(&mut p, props! {}, props! { "name" => "mine" }, proposed(AutonamingMode::Enforce));
    assert_eq!(named(&r), (Some("mine".into()), 0));
    let r = check(&mut p, props! { "name" => "logs-1234567" }, props! {}, proposed(AutonamingMode::Propose));
    assert_eq!(named(&r), (Some("logs-1234567".into()), 0));
    // Not a required input in the schema.
    let req = GetSchemaRequest { version: 0, subpackage_name: String::new(), subpackage_version: String::new() };
    let schema: serde_json::Value = serde_json::from_str(&p.get_schema(req).unwrap()).unwrap();
    let bucket = &schema["resources"][BUCKET];
    assert_eq!((&bucket["requiredInputs"], &bucket["required"]), (&json!(null), &json!(["name"])), "{bucket}");
}

/// A refresh reports the inputs its state holds as the state has them, and
/// keeps the others (a write-only password): a refresh alone is no change.
#[test]
fn a_refresh_keeps_the_inputs_its_state_does_not_hold() {
    use crate::testing::{Engine, Step};
    let mut engine = Engine::new(Typed::<Pkg>::default());
    let login = "test:index:Login";
    let created = engine.create(login, "l", props! { "user" => "ann", "password" => Value::secret("pw") }).unwrap();
    let refreshed = engine.refresh(&created).unwrap().unwrap();
    assert_eq!(refreshed.inputs, props! { "user" => "ANN", "password" => Value::secret("pw") });
    let (step, _) = engine.update(&refreshed, props! { "user" => "ANN", "password" => Value::secret("pw") }).unwrap();
    assert_eq!(step, Step::Same);
    // The drift the state shows is a change to the program's inputs.
    let (step, _) = engine.update(&refreshed, props! { "user" => "ann", "password" => Value::secret("pw") }).unwrap();
    assert_eq!(step, Step::Update);
}

/// The test engine proposes names as a stack configured for autonaming does.
#[test]
fn the_test_engine_proposes_names_when_asked() {
    use crate::AutonamingMode;
    use crate::testing::{Engine, Failure};
    let mut engine = Engine::new(Typed::<Pkg>::default());
    let plain = engine.create(BUCKET, "logs", props! {}).unwrap();
    assert!(plain.outputs["name"].as_str().unwrap().starts_with("logs-"), "{:?}", plain.outputs);
    engine.autonaming(AutonamingMode::Enforce, "${name}-prod");
    assert_eq!(engine.create(BUCKET, "logs", props! {}).unwrap().id, "logs-prod");
    engine.autonaming(AutonamingMode::Disable, "");
    let refused = engine.create(BUCKET, "logs", props! {}).unwrap_err();
    assert!(
        matches!(&refused, Failure::Check(f) if f[0].reason.contains("automatic naming is disabled")),
        "{refused:?}"
    );
    assert_eq!(engine.create(BUCKET, "logs", props! { "name" => "mine" }).unwrap().id, "mine");
}

/// `autoname` marks a resource's name: on a function's arguments nothing
/// would fill it, so registering the function refuses it.
#[test]
#[should_panic(expected = "`autoname` on Bucket.name of test:index:named")]
fn autoname_is_for_a_resource_s_inputs_only() {
    struct Named;
    impl Function for Named {
        const TOKEN: &'static str = "test:index:named";
        type Args = Bucket;
        type Output = Sum;
        fn invoke(&self, _ctx: &Context, _args: Bucket) -> Result<Sum> {
            Ok(Sum { sum: 0 })
        }
    }
    let _ = Builder::new("test", "1.0.0").function(Named);
}

/// A configuration is kept for every later call: a held text in it is
/// read at Configure (natively that read is the panic, which shows it).
#[test]
#[should_panic(expected = "held asset text 5 outside a component")]
fn a_configuration_keeps_no_held_text() {
    use crate::{Asset, AssetSource, Text};
    let held = Value::Asset(Asset { hash: None, source: Some(AssetSource::Text(Text::held(5, 2048))) });
    let mut p = Typed::<Pkg>::default();
    let _ = p.configure(ConfigureRequest {
        variables: BTreeMap::new(),
        args: props! { "region" => "eu", "bundle" => held },
        id: String::new(),
        urn: String::new(),
        name: String::new(),
        resource_type: String::new(),
    });
}

#[test]
fn a_create_that_fails_half_way_keeps_secret_inputs_secret_in_its_state() {
    let mut p = Typed::<Pkg>::default();
    let inputs = check(&mut p, NOTE, props! { "text" => Value::secret("half") }).inputs;
    let Err(Error::InitFailed { id, properties, reasons, .. }) = create(&mut p, NOTE, inputs, false) else {
        panic!("a half-done create is InitFailed")
    };
    assert_eq!((id.as_str(), reasons), ("note", vec!["half done".to_owned()]));
    assert_eq!(properties, props! { "text" => Value::secret("half") });
}

/// What a typed create reports before it fails keeps its secret inputs
/// secret, and the test engine records it as the host has the engine do;
/// its Cancel reaches the call.
#[test]
fn a_reported_partial_state_is_sealed_and_recorded() {
    let mut engine = crate::testing::Engine::new(Typed::<Pkg>::default());
    let inputs = props! { "text" => Value::secret("slow") };
    let Err(crate::testing::Failure::InitFailed(made)) = engine.create(NOTE, "n", inputs.clone()) else {
        panic!("recorded")
    };
    assert_eq!((made.id.as_str(), &made.outputs), ("note", &inputs), "secret as in the inputs");
    assert_eq!(made.init_errors, ["never became ready"]);
    // Sealed by the typed context itself, not only by the engine's mirroring of top-level secrets.
    let mut p = Typed::<Pkg>::default();
    assert!(create(&mut p, NOTE, inputs.clone(), false).is_err());
    assert_eq!(crate::context::take_partial_state(), Some(("note".to_owned(), inputs.clone())));
    engine.cancel(true);
    let Err(crate::testing::Failure::InitFailed(made)) = engine.create(NOTE, "m", inputs) else { panic!("recorded") };
    engine.cancel(false);
    assert_eq!(made.init_errors, ["cancelled while waiting"]);
    // A later call that reports nothing fails as it is.
    let err = engine.create(NOTE, "o", props! { "text" => "" });
    assert!(matches!(err, Err(crate::testing::Failure::Check(_))), "{err:?}");
}

/// An update's reported partial state keeps the old state's secrets too:
/// tags the program gave as a secret before and plain now are still
/// secret in what the old state reported.
#[test]
fn an_update_s_partial_state_keeps_the_old_state_s_secrets() {
    let mut p = Typed::<Pkg>::default();
    let tags = Value::secret(props! { "team" => "a" });
    let olds = props! { "name" => "a", "tags" => tags.clone(), "size" => 1, "arn" => "arn:a", "key" => Value::secret("k"), "region" => "" };
    let news = props! { "name" => "a", "tags" => props! { "team" => "a" }, "size" => 9 };
    let req = UpdateRequest {
        id: "id-a".into(),
        urn: String::new(),
        name: "a".into(),
        resource_type: THING.into(),
        olds: olds.clone(),
        news,
        old_inputs: PropertyMap::new(),
        timeout: 0.0,
        ignore_changes: vec![],
        preview: false,
    };
    assert!(p.update(req).is_err());
    let (id, reported) = crate::context::take_partial_state().expect("reported");
    assert_eq!((id.as_str(), &reported["tags"]), ("id-a", &tags));
}

/// The engine's Update with nothing changed, after an `init_failed`, to a
/// resource without `Resource::update`: the answer tells the user what can
/// help (a replacement), not the author's remedy the default gives.
#[test]
fn an_unfinished_resource_without_update_says_to_replace_it() {
    let mut engine = crate::testing::Engine::new(Typed::<Pkg>::default());
    let inputs = props! { "text" => Value::secret("half") };
    let Err(crate::testing::Failure::InitFailed(half)) = engine.create(NOTE, "n", inputs.clone()) else {
        panic!("left unfinished")
    };
    assert_eq!(half.outputs, inputs, "secret in the recorded state");
    match engine.update(&half, inputs) {
        Err(crate::testing::Failure::Provider(Error::FailedPrecondition(m))) => {
            assert!(
                m.contains("left unfinished")
                    && m.contains("pulumi up --replace 'urn:pulumi:test::test::test:index:Note::n'"),
                "{m}"
            )
        }
        other => panic!("{other:?}"),
    }
    // A change still gets the author's remedy.
    match engine.update(&half, props! { "text" => "whole" }) {
        Err(crate::testing::Failure::Provider(Error::Unimplemented(m))) => {
            assert!(m.contains("implement Resource::update"), "{m}")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_newer_version_s_defaults_and_dropped_properties_are_no_change() {
    let mut p = Typed::<Pkg>::default();
    // Inputs an older version checked: without `size` (added since, with a
    // default) and with `legacy` (dropped since).
    let stored = props! { "name" => "a", "legacy" => true };
    let news = check(&mut p, THING, props! { "name" => "a" }).inputs;
    assert_eq!(diff(&mut p, stored.clone(), news).changes, DiffChanges::None);
    // A value other than the default is still a change.
    let news = check(&mut p, THING, props! { "name" => "a", "size" => 3 }).inputs;
    let d = diff(&mut p, stored.clone(), news.clone());
    assert_eq!((d.changes, d.replaces.len()), (DiffChanges::Some, 0));
    // One the old state holds (an output that became an input) is what the resource has.
    let req = DiffRequest {
        id: "id".into(),
        urn: String::new(),
        name: "r".into(),
        resource_type: THING.into(),
        olds: props! { "name" => "a", "size" => 3, "arn" => "arn:a" },
        news,
        old_inputs: stored,
        ignore_changes: vec![],
    };
    assert_eq!(p.diff(req).unwrap().changes, DiffChanges::None);
}

/// A `replace_on_changes` field of a nested type replaces the resource, in
/// its Diff and in the schema generated SDKs pass the paths on from.
#[test]
fn nested_replace_on_changes_fields_replace_the_resource() {
    let paths = NetworkArgs::replace_paths();
    assert_eq!(paths[..4], ["subnets[*].cidr", "labels.*.cidr", "tree.root", "tree.children[*].root"]);
    assert_eq!(paths.last().unwrap(), "tree.children[*].children[*].children[*].root", "4 levels: {paths:?}");
    // What the default Diff keeps, built once: the same paths.
    assert_eq!(*NetworkArgs::resource_replace_paths(), super::replace_paths_of(NetworkArgs::properties()));
    // Asked for first deep inside a walk of a recursive type, where a
    // nested walk is cut short, it is still walked from the top.
    let whole = super::replace_paths_of(Tree::properties());
    super::types::WALKING.with(|w| w.borrow_mut().extend([std::any::type_name::<Tree>(); 4]));
    assert!(super::object_replace_paths::<Tree>().is_empty(), "cut short at this depth");
    assert_eq!(*Tree::resource_replace_paths(), whole);
    assert!(super::object_replace_paths::<Tree>().is_empty(), "the walk under way is given back");
    super::types::WALKING.with(|w| w.borrow_mut().clear());
    let req = |olds: PropertyMap, news: PropertyMap| DiffRequest {
        id: "n".into(),
        urn: String::new(),
        name: "n".into(),
        resource_type: "test:index:Network".into(),
        olds: olds.clone(),
        news,
        old_inputs: olds,
        ignore_changes: vec![],
    };
    let net = |cidr: &str, name: &str| {
        props! { "subnets" => vec![Value::from(props! { "cidr" => cidr, "name" => name })] }
    };
    let d = diff_inputs::<Networks>(&req(net("10.0.0.0/24", "a"), net("10.0.1.0/24", "a")));
    assert_eq!((d.changes, d.replaces), (DiffChanges::Some, vec!["subnets".to_owned()]));
    let d = diff_inputs::<Networks>(&req(net("10.0.0.0/24", "a"), net("10.0.0.0/24", "b")));
    assert_eq!((d.changes, d.replaces.len()), (DiffChanges::Some, 0), "a name changes in place");
    // A subnet added beside a changed CIDR still replaces.
    let mut grown = net("10.0.1.0/24", "a");
    let Value::Array(subnets) = grown.get_mut("subnets").unwrap() else { unreachable!() };
    subnets.push(Value::from(props! { "cidr" => "10.0.2.0/24" }));
    let d = diff_inputs::<Networks>(&req(net("10.0.0.0/24", "a"), grown));
    assert_eq!(d.replaces, ["subnets"]);
    let mut types = Types::new("test");
    <NetworkArgs as PulumiType>::schema(&mut types);
    let defs = types.into_defs();
    assert_eq!(defs["test:index:Subnet"]["properties"]["cidr"]["replaceOnChanges"], json!(true), "{defs:?}");
    assert!(defs["test:index:Subnet"]["properties"]["name"].get("replaceOnChanges").is_none());
}

/// A state an older version wrote, before `size` (defaulted) was added:
/// Read, Update and Delete still take it, with the default.
#[test]
fn a_state_from_before_a_defaulted_property_still_reads_updates_and_deletes() {
    let mut p = Typed::<Pkg>::default();
    let old = props! { "name" => "a", "arn" => "arn:a", "key" => Value::secret("k"), "region" => "r" };
    let deleted = p.delete(DeleteRequest {
        id: "id-a".into(),
        urn: String::new(),
        name: "r".into(),
        resource_type: THING.into(),
        properties: old.clone(),
        old_inputs: PropertyMap::new(),
        timeout: 0.0,
    });
    assert!(deleted.is_ok(), "{deleted:?}");
    let read = p.read(ReadRequest {
        id: "id-a".into(),
        urn: String::new(),
        name: "r".into(),
        resource_type: THING.into(),
        properties: old.clone(),
        inputs: PropertyMap::new(),
        timeout: 0.0,
    });
    assert_eq!(read.unwrap().properties["size"], Value::from(1));
    let news = check(&mut p, THING, props! { "name" => "a", "size" => 2 }).inputs;
    let updated = p.update(UpdateRequest {
        id: "id-a".into(),
        urn: String::new(),
        name: "r".into(),
        resource_type: THING.into(),
        olds: old,
        news,
        old_inputs: PropertyMap::new(),
        timeout: 0.0,
        ignore_changes: vec![],
        preview: false,
    });
    assert_eq!(updated.unwrap().properties["size"], Value::from(2));
}

#[test]
fn previews_show_unknown_outputs_or_what_the_resource_knows() {
    let mut p = Typed::<Pkg>::default();
    let inputs = check(&mut p, THING, props! { "name" => unknown(), "size" => 2 }).inputs;
    let r = create(&mut p, THING, inputs, true).unwrap();
    assert_eq!(r.id, "");
    assert_eq!(r.properties["name"], unknown());
    assert_eq!(r.properties["size"], Value::from(2));
    assert_eq!(r.properties["arn"], unknown());
    assert_eq!(r.properties["key"], Value::secret(unknown()), "secret outputs stay secret");
    let note = create(&mut p, NOTE, props! { "text" => "hi" }, true).unwrap();
    assert_eq!(note.properties, props! { "text" => "HI" });
    let err = create(&mut p, THING, props! { "name" => unknown() }, false).unwrap_err();
    assert_eq!(err.to_string(), "inputs must be known: name");
    let err = create(&mut p, THING, props! { "name" => "a", "size" => 0 }, true).unwrap_err();
    assert_eq!(err.to_string(), "invalid inputs: size: must be at least 1");
}

#[test]
fn create_read_update_delete_keep_secrets() {
    let mut p = Typed::<Pkg>::default();
    let config = ConfigureRequest {
        variables: BTreeMap::new(),
        args: props! { "region" => "eu", "version" => "1.0.0" },
        id: String::new(),
        urn: String::new(),
        name: String::new(),
        resource_type: String::new(),
    };
    p.configure(config).unwrap();
    let inputs = props! { "name" => "a", "tags" => props! { "k" => Value::secret("s"), "p" => "x" } };
    let created = create(&mut p, THING, inputs.clone(), false).unwrap();
    assert_eq!(created.id, "id-a");
    let state = created.properties;
    assert_eq!(state["tags"], Value::from(props! { "k" => Value::secret("s"), "p" => "x" }));
    assert_eq!(state["key"], Value::secret("k"));
    assert_eq!((state["arn"].as_str(), state["region"].as_str()), (Some("arn:a"), Some("eu")));

    let read = p
        .read(ReadRequest {
            id: created.id.clone(),
            urn: String::new(),
            name: "r".into(),
            resource_type: THING.into(),
            properties: state.clone(),
            inputs: PropertyMap::new(),
            timeout: 0.0,
        })
        .unwrap();
    assert_eq!(read.properties, state);
    assert_eq!(read.inputs.keys().collect::<Vec<_>>(), ["name", "size", "tags"]);

    let update = |token: &str, olds: PropertyMap, news: PropertyMap| UpdateRequest {
        id: "id-a".into(),
        urn: String::new(),
        name: "r".into(),
        resource_type: token.into(),
        olds,
        news,
        old_inputs: PropertyMap::new(),
        timeout: 0.0,
        ignore_changes: vec![],
        preview: false,
    };
    let updated = p.update(update(THING, state.clone(), props! { "name" => "a", "size" => 3 })).unwrap();
    assert_eq!(updated.properties["size"], Value::from(3));
    assert_eq!(updated.properties["arn"], Value::from("arn:a"));
    assert_eq!(updated.properties["key"], Value::secret("k"));
    let err = p.update(update(NOTE, props! { "text" => "a" }, props! { "text" => "b" })).unwrap_err();
    assert!(matches!(err, Error::Unimplemented(_)), "{err}");
    // As the export layers call it, with the maps in words: the same
    // results, a preview's and an error's too.
    let in_words = |m: &PropertyMap| crate::wire::words(crate::wire::encode_map(m)).unwrap();
    let by_words = |p: &mut Typed<Pkg>, token: &str, olds: PropertyMap, news: PropertyMap, preview: bool| {
        let req = UpdateRequest { preview, ..update(token, PropertyMap::new(), PropertyMap::new()) };
        let (o, n, i) = (in_words(&olds), in_words(&news), in_words(&inputs));
        p.update_outputs(req, o, n, i).map(crate::UpdateResponse::from)
    };
    let news = props! { "name" => "a", "size" => 3 };
    let from_words = by_words(&mut p, THING, state.clone(), news.clone(), false).unwrap();
    assert_eq!(from_words.properties, updated.properties);
    let previewed = by_words(&mut p, THING, state.clone(), props! { "name" => unknown() }, true).unwrap();
    assert_eq!((&previewed.properties["name"], &previewed.properties["size"]), (&unknown(), &Value::from(1)));
    assert!(matches!(previewed.properties["arn"], Value::Unknown(_)));
    let from_maps =
        p.update(UpdateRequest { preview: true, ..update(THING, state.clone(), props! { "name" => unknown() }) });
    assert_eq!(previewed.properties, from_maps.unwrap().properties);
    let mut unknown_state = state.clone();
    unknown_state.insert("arn".into(), unknown());
    let err = by_words(&mut p, THING, unknown_state.clone(), news.clone(), false).unwrap_err();
    assert_eq!(err.to_string(), p.update(update(THING, unknown_state.clone(), news)).unwrap_err().to_string());

    let delete = DeleteRequest {
        id: "id-a".into(),
        urn: String::new(),
        name: "r".into(),
        resource_type: THING.into(),
        properties: state,
        old_inputs: inputs,
        timeout: 0.0,
    };
    let words = |d: &DeleteRequest| [in_words(&d.properties), in_words(&d.old_inputs)];
    let [properties, old_inputs] = words(&delete);
    p.delete_words(DeleteRequest { properties: PropertyMap::new(), ..delete.clone() }, properties, old_inputs).unwrap();
    let bad = DeleteRequest { properties: unknown_state, ..delete.clone() };
    let [properties, old_inputs] = words(&bad);
    let err = p.delete_words(DeleteRequest { properties: PropertyMap::new(), ..bad.clone() }, properties, old_inputs);
    assert_eq!(err.unwrap_err().to_string(), p.delete(bad).unwrap_err().to_string());
    p.delete(delete).unwrap();
}

#[test]
fn typed_methods_can_be_called_directly() {
    let ctx = Context::new("urn:pulumi:s::p::test:index:Thing::r", "r", THING);
    let args = ThingArgs { name: "a".into(), tags: None, size: 1, max_size: None };
    let (id, state) = Thing.create(&ctx, args).unwrap();
    assert_eq!((id.as_str(), state.arn.as_str(), state.region.as_str()), ("id-a", "arn:a", ""));
    assert!(ctx.config::<Config>().is_none());
}

#[test]
fn invoke_checks_arguments_and_propagates_secrets() {
    let mut p = Typed::<Pkg>::default();
    let mut invoke = |args| p.invoke(InvokeRequest { token: "test:index:add".into(), args, preview: false }).unwrap();
    assert_eq!(invoke(props! { "a" => 1, "b" => 2 }).outputs, props! { "sum" => 3 });
    assert_eq!(invoke(props! { "a" => Value::secret(1), "b" => 2 }).outputs, props! { "sum" => Value::secret(3) });
    let bad = invoke(props! { "a" => 1.5, "b" => Value::Unknown(UnknownKind::Number), "c" => 1 });
    let got: Vec<(&str, &str)> = bad.failures.iter().map(|f| (f.property.as_str(), f.reason.as_str())).collect();
    assert_eq!(got, [("c", "is not a known property"), ("a", "must be a whole number"), ("b", "must be known")]);
    assert!(bad.outputs.is_empty());
}

/// DiffConfig as the guide asks: only a change to a `replace_on_changes`
/// setting replaces the provider (and every resource it manages).
#[test]
fn only_a_replace_on_changes_setting_replaces_the_provider() {
    let mut p = Typed::<Pkg>::default();
    let diff = |p: &mut Typed<Pkg>, news: PropertyMap| {
        let old_inputs = props! { "region" => "eu", "retries" => 3, "version" => "1.0.0" };
        p.diff_config(DiffRequest {
            id: String::new(),
            urn: "urn:pulumi:dev::proj::pulumi:providers:test::default".into(),
            name: "default".into(),
            resource_type: "pulumi:providers:test".into(),
            olds: old_inputs.clone(),
            news,
            old_inputs,
            ignore_changes: vec![],
        })
        .unwrap()
    };
    let d = diff(&mut p, props! { "region" => "us", "retries" => 3, "version" => "1.0.0" });
    assert_eq!((d.changes, d.replaces), (DiffChanges::Some, vec!["region".to_owned()]));
    let d = diff(&mut p, props! { "region" => "eu", "retries" => 5, "version" => "1.1.0" });
    assert_eq!((d.changes, d.diffs, d.replaces), (DiffChanges::Some, vec!["retries".into(), "version".into()], vec![]));
    let d = diff(&mut p, props! { "region" => "eu", "retries" => 3, "version" => "1.0.0" });
    assert_eq!(d.changes, DiffChanges::None);
}

#[test]
fn unknown_tokens_and_configuration_errors() {
    let mut p = Typed::<Pkg>::default();
    let err = create(&mut p, "test:index:Nope", props! {}, false).unwrap_err();
    assert_eq!(err.to_string(), "unknown resource type 'test:index:Nope'");
    let err = p.invoke(InvokeRequest { token: "test:index:nope".into(), args: props! {}, preview: false });
    assert_eq!(err.unwrap_err().to_string(), "unknown function 'test:index:nope'");

    let req = |news: PropertyMap| CheckRequest {
        urn: String::new(),
        name: String::new(),
        resource_type: "pulumi:providers:test".into(),
        olds: PropertyMap::new(),
        news,
        random_seed: vec![],
        autonaming: None,
        old_outputs: None,
    };
    let r = p.check_config(req(props! { "region" => "eu", "retries" => "5", "version" => "1.0.0" })).unwrap();
    assert!(r.failures.is_empty(), "{:?}", r.failures);
    assert_eq!(r.inputs["retries"], Value::from(5), "stack config strings are parsed");
    // `pulumi config set --secret`, `--path` objects and enums arrive as text too.
    let text = props! {
        "region" => "eu", "retries" => Value::secret("5"), "window" => r#"{"start": 2}"#, "mode" => "Safe",
    };
    let r = p.check_config(req(text)).unwrap();
    assert!(r.failures.is_empty(), "{:?}", r.failures);
    assert_eq!(r.inputs["retries"], Value::secret(5), "parsed within its secret");
    assert_eq!(r.inputs["window"], Value::from(props! { "start" => 2 }));
    assert_eq!(r.inputs["mode"], Value::from("Safe"), "an enum of strings stays text");
    let r = p.check_config(req(props! { "region" => 1 })).unwrap();
    assert_eq!(failures(&r), [("region", "must be a string, not a number")]);
    // A key it does not read is no failure, but named in a warning (a typo
    // of an optional key); `version`, which the engine adds, is not.
    let warned = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink: crate::log::NativeSink = {
        let warned = warned.clone();
        std::sync::Arc::new(move |severity, message: &str, _: Option<&str>, _| {
            warned.lock().unwrap().push((severity, message.to_owned()))
        })
    };
    let typo = props! { "region" => "eu", "retires" => "5", "version" => "1.0.0" };
    let r = crate::log::with_native_sink(&sink, || p.check_config(req(typo))).unwrap();
    assert!(r.failures.is_empty(), "{:?}", r.failures);
    let warned = warned.lock().unwrap();
    assert_eq!(warned.len(), 1, "{warned:?}");
    assert_eq!(warned[0].0, crate::log::Severity::Warning);
    assert!(warned[0].1.contains("\"retires\" is not one this provider reads") && warned[0].1.contains("retries"));
    let configure = ConfigureRequest {
        variables: BTreeMap::new(),
        args: props! { "retries" => 1 },
        id: String::new(),
        urn: String::new(),
        name: String::new(),
        resource_type: String::new(),
    };
    match p.configure(configure).unwrap_err() {
        Error::MissingKeys(keys) => {
            // As `pulumi config set` takes it, which the engine's message names.
            assert_eq!((keys[0].name.as_str(), keys[0].description.as_str()), ("test:region", "The region to work in."))
        }
        other => panic!("{other}"),
    }
}

#[test]
fn import_reads_by_id_alone() {
    let mut p = Typed::<Pkg>::default();
    let read_with = |p: &mut Typed<Pkg>, token: &str, id: &str, hints: PropertyMap| {
        p.read(ReadRequest {
            id: id.into(),
            urn: String::new(),
            name: "r".into(),
            resource_type: token.into(),
            properties: hints.clone(),
            inputs: hints,
            timeout: 0.0,
        })
    };
    let read = |p: &mut Typed<Pkg>, token: &str, id: &str| read_with(p, token, id, PropertyMap::new());
    // `Thing.get("r", "id-b", {size: 3})`: hints, not a whole state, as both state and inputs.
    let got = read_with(&mut p, THING, "id-b", props! { "size" => 3 }).unwrap();
    assert_eq!((got.id.as_str(), &got.properties["arn"]), ("id-b", &Value::from("arn:b")));
    // A refresh's invalid state is still an error.
    let refresh = ReadRequest {
        id: "id-b".into(),
        urn: String::new(),
        name: "r".into(),
        resource_type: THING.into(),
        properties: props! { "size" => 3 },
        inputs: props! { "name" => "b" },
        timeout: 0.0,
    };
    assert!(p.read(refresh).is_err());
    let imported = read(&mut p, THING, "id-b").unwrap();
    assert_eq!(imported.id, "id-b");
    assert_eq!(imported.properties["arn"], Value::from("arn:b"));
    assert_eq!(imported.properties["key"], Value::secret("k"), "the state type's secrets are marked");
    assert_eq!(imported.inputs.keys().collect::<Vec<_>>(), ["name", "size"]);
    assert_eq!(read(&mut p, THING, "other").unwrap().id, "", "nothing with that ID: gone");
    let err = read(&mut p, NOTE, "note").unwrap_err();
    assert!(matches!(&err, Error::Unimplemented(m) if m.contains("test:index:Note cannot be imported")), "{err}");
}
