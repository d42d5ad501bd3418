use super::*;
use crate::props;

/// Records every call and the request fields the tests look at; answers as
/// its inputs ask (`size` changes replace, `bad` fails Check, ...).
#[derive(Default)]
struct Recorder {
    calls: Vec<String>,
    delete_first: bool,
    /// Diff's answer, when a test fixes it.
    diff: Option<DiffResponse>,
    /// Each Create's, Update's and Delete's timeout, and Diff's and Update's ignoreChanges.
    timeouts: Vec<(&'static str, f64)>,
    ignored: Vec<Vec<String>>,
}

impl Provider for Recorder {
    fn info(&self) -> PluginInfo {
        PluginInfo::new("rec", "1.0.0")
    }

    fn check_config(&mut self, req: CheckRequest) -> Result<CheckResponse> {
        self.calls.push(format!("check_config {}", req.urn));
        Ok(CheckResponse { inputs: req.news, failures: vec![] })
    }

    fn configure(&mut self, req: ConfigureRequest) -> Result<ConfigureResponse> {
        let mut vars: Vec<String> = req.variables.iter().map(|(k, v)| format!("{k}={v}")).collect();
        vars.sort();
        self.calls.push(format!("configure {}", vars.join(",")));
        Ok(ConfigureResponse { supports_autonaming_configuration: false })
    }

    fn check(&mut self, req: CheckRequest) -> Result<CheckResponse> {
        self.calls.push(format!("check olds={} seed={}", req.olds.len(), req.random_seed.len()));
        let failures = match req.news.get("bad") {
            Some(_) => vec![CheckFailure { property: "bad".into(), reason: "is not allowed".into() }],
            None => vec![],
        };
        Ok(CheckResponse { inputs: req.news, failures })
    }

    fn diff(&mut self, req: DiffRequest) -> Result<DiffResponse> {
        self.calls.push(format!("diff {} olds={:?}", req.id, req.olds.get("id").and_then(Value::as_str)));
        self.ignored.push(req.ignore_changes.clone());
        if let Some(fixed) = &self.diff {
            return Ok(fixed.clone());
        }
        let changed = |k: &str| req.news.get(k) != req.old_inputs.get(k);
        let keys: std::collections::BTreeSet<&String> = req.news.keys().chain(req.old_inputs.keys()).collect();
        let keys: Vec<String> = keys.into_iter().filter(|k| changed(k)).cloned().collect();
        let mut diff = DiffResponse::none();
        if !keys.is_empty() {
            diff.changes = DiffChanges::Some;
            diff.replaces = keys.iter().filter(|k| *k == "size").cloned().collect();
            diff.delete_before_replace = self.delete_first;
            diff.diffs = keys;
        }
        Ok(diff)
    }

    fn create(&mut self, req: CreateRequest) -> Result<CreateResponse> {
        self.calls.push(format!("create preview={}", req.preview));
        self.timeouts.push(("create", req.timeout));
        let id = match (req.preview, req.properties.get("noId")) {
            (true, _) | (_, Some(_)) => String::new(),
            _ => format!("id-{}", self.calls.len()),
        };
        let mut properties = req.properties;
        properties.insert("id".into(), Value::from(id.as_str()));
        if properties.contains_key("half") && !req.preview {
            let reasons = vec!["not ready yet".to_owned()];
            return Err(Error::InitFailed { id, properties, inputs: None, reasons });
        }
        Ok(CreateResponse { id, properties, refresh_before_update: false })
    }

    fn update(&mut self, req: UpdateRequest) -> Result<UpdateResponse> {
        self.calls.push(format!("update {} preview={}", req.id, req.preview));
        self.timeouts.push(("update", req.timeout));
        self.ignored.push(req.ignore_changes.clone());
        let mut properties = req.news;
        properties.insert("id".into(), Value::from(req.id.as_str()));
        Ok(UpdateResponse { properties, refresh_before_update: false })
    }

    fn read(&mut self, req: ReadRequest) -> Result<ReadResponse> {
        self.calls.push(format!("read {}", req.id));
        // An import (no state): "old-*" exists with size 7, anything else does not.
        if req.properties.is_empty() {
            let id = if req.id.starts_with("old-") { req.id.clone() } else { String::new() };
            let inputs = props! { "size" => 7 };
            let properties = props! { "size" => 7, "id" => id.as_str() };
            return Ok(ReadResponse { id, properties, inputs, refresh_before_update: false });
        }
        let gone = req.properties.contains_key("gone");
        let id = if gone { String::new() } else { req.id };
        Ok(ReadResponse { id, properties: req.properties, inputs: PropertyMap::new(), refresh_before_update: false })
    }

    fn delete(&mut self, req: DeleteRequest) -> Result<()> {
        self.calls.push(format!("delete {}", req.id));
        self.timeouts.push(("delete", req.timeout));
        Ok(())
    }
}

const T: &str = "rec:index:Thing";

fn calls(engine: &mut Engine<Recorder>) -> Vec<String> {
    std::mem::take(&mut engine.provider().calls)
}

#[test]
fn a_lifecycle_sends_what_the_engine_sends() {
    let mut e = Engine::<Recorder>::default();
    e.configure(props! { "region" => "eu", "retries" => 3, "debug" => true }).unwrap();
    let c = calls(&mut e);
    assert_eq!(c[0], "check_config urn:pulumi:test::test::pulumi:providers:rec::default");
    assert_eq!(c[1], "configure rec:config:debug=true,rec:config:region=eu,rec:config:retries=3");

    let thing = e.create(T, "a", props! { "size" => 1, "label" => "x" }).unwrap();
    assert_eq!(calls(&mut e), ["check olds=0 seed=32", "create preview=false"]);
    assert_eq!((thing.urn.as_str(), thing.id.as_str()), ("urn:pulumi:test::test::rec:index:Thing::a", "id-2"));

    // In place: Check sees the old inputs, Diff the old state, Update the old state and inputs.
    let (step, thing) = e.update(&thing, props! { "size" => 1, "label" => "y" }).unwrap();
    assert_eq!(step, Step::Update);
    assert_eq!(calls(&mut e), ["check olds=2 seed=32", "diff id-2 olds=Some(\"id-2\")", "update id-2 preview=false"]);
    assert_eq!(thing.inputs, props! { "size" => 1, "label" => "y" });

    // No change: nothing after Diff.
    let (step, same) = e.update(&thing, props! { "size" => 1, "label" => "y" }).unwrap();
    assert_eq!((step, &same), (Step::Same, &thing));
    assert_eq!(calls(&mut e).len(), 2);
    // Diff may call a change of inputs no change: the new inputs are still recorded.
    e.provider().diff = Some(DiffResponse::none());
    let (step, same) = e.update(&thing, props! { "size" => 1, "label" => "z" }).unwrap();
    assert_eq!((step, same.id.as_str(), &same.inputs["label"]), (Step::Same, "id-2", &Value::from("z")));
    assert_eq!(same.outputs, thing.outputs);
    e.provider().diff = None;
    calls(&mut e);

    e.delete(thing).unwrap();
    assert_eq!(calls(&mut e), ["delete id-2"]);
}

/// The program's resource options, as the engine applies them:
/// `ignoreChanges` before Check, `replaceOnChanges` and
/// `deleteBeforeReplace` after Diff, `customTimeouts` in the requests.
#[test]
fn the_program_s_resource_options_are_applied_as_the_engine_applies_them() {
    let mut e = Engine::<Recorder>::default();
    let timeouts = Options { create_timeout: 60.0, update_timeout: 30.0, delete_timeout: 10.0, ..Options::default() };
    e.options(timeouts.clone());
    let thing = e.create(T, "a", props! { "size" => 1, "label" => "x" }).unwrap();
    let ignore = Options { ignore_changes: vec!["label".into(), "extra".into()], ..timeouts.clone() };
    e.options(ignore);
    let (step, same) = e.update(&thing, props! { "size" => 1, "label" => "y", "extra" => 1 }).unwrap();
    assert_eq!((step, &same.inputs), (Step::Same, &thing.inputs), "the old label, and no extra");
    let (step, updated) = e.update(&thing, props! { "size" => 1, "label" => "y", "other" => 2 }).unwrap();
    assert_eq!((step, &updated.inputs["label"]), (Step::Update, &Value::from("x")));
    let replace = Options { replace_on_changes: vec!["label".into()], ..timeouts.clone() };
    e.options(replace);
    let (step, _) = e.update(&thing, props! { "size" => 1, "label" => "z" }).unwrap();
    assert_eq!(step, Step::Replace { delete_before_replace: false, keys: vec!["label".into()] });
    let dbr = Options { delete_before_replace: true, ..timeouts };
    e.options(dbr);
    let (step, replaced) = e.update(&thing, props! { "size" => 2, "label" => "x" }).unwrap();
    assert_eq!(step, Step::Replace { delete_before_replace: true, keys: vec!["size".into()] });
    e.delete(replaced).unwrap();
    let r = std::mem::take(e.provider());
    assert!(r.ignored.iter().any(|i| i == &["label".to_owned(), "extra".to_owned()]), "{:?}", r.ignored);
    let each = |call: &str| r.timeouts.iter().filter(|(c, _)| *c == call).map(|(_, t)| *t).collect::<Vec<_>>();
    assert!(each("create").iter().all(|t| *t == 60.0) && each("update") == [30.0], "{:?}", r.timeouts);
    assert!(!each("delete").is_empty() && each("delete").iter().all(|t| *t == 10.0), "{:?}", r.timeouts);
}

/// A create left unfinished is recorded with its reasons, and the next
/// update calls Update though nothing changed, as the engine does; once it
/// succeeds, the resource is whole.
#[test]
fn an_unfinished_resource_is_updated_with_unchanged_inputs() {
    let mut e = Engine::<Recorder>::default();
    let inputs = props! { "size" => 1, "half" => true };
    let Err(Failure::InitFailed(half)) = e.create(T, "a", inputs.clone()) else { panic!("left unfinished") };
    assert_eq!((half.id.as_str(), half.init_errors.as_slice()), ("id-2", ["not ready yet".to_owned()].as_slice()));
    assert_eq!((&half.inputs, &half.outputs["id"]), (&inputs, &Value::from("id-2")));
    calls(&mut e);
    let (step, _) = e.preview_update(&half, inputs.clone()).unwrap();
    assert_eq!(step, Step::Update);
    assert_eq!(calls(&mut e)[2], "update id-2 preview=true");
    let (step, whole) = e.update(&half, inputs.clone()).unwrap();
    assert_eq!((step, whole.init_errors.len()), (Step::Update, 0));
    assert_eq!(calls(&mut e)[2], "update id-2 preview=false");
    let (step, _) = e.update(&whole, inputs).unwrap();
    assert_eq!(step, Step::Same);
}

/// As the engine does: an output whose same-named input is secret is
/// recorded secret, even when Diff saw no change (an input made secret).
#[test]
fn an_output_of_a_secret_input_is_recorded_secret() {
    let mut e = Engine::<Recorder>::default();
    let thing = e.create(T, "a", props! { "size" => 1, "label" => Value::secret("x") }).unwrap();
    assert_eq!(thing.outputs["label"], Value::secret("x"));
    let thing = e.create(T, "b", props! { "size" => 1, "label" => "x" }).unwrap();
    assert_eq!(thing.outputs["label"], Value::from("x"));
    e.provider().diff = Some(DiffResponse::none());
    let (step, same) = e.update(&thing, props! { "size" => 1, "label" => Value::secret("x") }).unwrap();
    assert_eq!((step, &same.outputs["label"]), (Step::Same, &Value::secret("x")));
}

#[test]
fn a_replacement_creates_first_unless_the_provider_deletes_first() {
    let mut e = Engine::<Recorder>::default();
    let old = e.create(T, "a", props! { "size" => 1 }).unwrap();
    calls(&mut e);
    let (step, new) = e.update(&old, props! { "size" => 2 }).unwrap();
    assert_eq!(step, Step::Replace { delete_before_replace: false, keys: vec!["size".into()] });
    // Checked again without the old inputs, as a new resource.
    assert_eq!(&calls(&mut e)[2..], ["check olds=0 seed=32", "create preview=false", "delete id-2"]);
    assert_ne!(new.id, old.id);

    e.provider().delete_first = true;
    let (step, _) = e.update(&new, props! { "size" => 3 }).unwrap();
    assert!(matches!(step, Step::Replace { delete_before_replace: true, .. }));
    assert_eq!(&calls(&mut e)[3..], [format!("delete {}", new.id), "create preview=false".into()]);
}

#[test]
fn previews_pass_unknowns_and_change_nothing() {
    let mut e = Engine::<Recorder>::default();
    let unknown = Value::Unknown(crate::UnknownKind::String);
    let out = e.preview_create(T, "a", props! { "label" => unknown.clone() }).unwrap();
    assert_eq!(out["label"], unknown);
    assert_eq!(calls(&mut e), ["check olds=0 seed=32", "create preview=true"]);

    let thing = e.create(T, "a", props! { "size" => 1 }).unwrap();
    calls(&mut e);
    let (step, out) = e.preview_update(&thing, props! { "size" => 1, "label" => unknown.clone() }).unwrap();
    assert_eq!((step, &out["label"]), (Step::Update, &unknown));
    assert_eq!(calls(&mut e)[2], "update id-2 preview=true");
    let (step, _) = e.preview_update(&thing, props! { "size" => 5 }).unwrap();
    assert!(matches!(step, Step::Replace { .. }));
    assert_eq!(calls(&mut e)[3], "create preview=true");
}

#[test]
fn what_the_engine_would_refuse_is_a_failure() {
    let mut e = Engine::<Recorder>::default();
    let err = e.create(T, "a", props! { "bad" => 1 }).unwrap_err();
    assert!(matches!(&err, Failure::Check(f) if f[0].property == "bad"));
    assert_eq!(err.to_string(), "check failed: bad: is not allowed");
    assert_eq!(calls(&mut e).len(), 1, "no Create after a failed Check");

    let err = e.create(T, "a", props! { "noId" => true }).unwrap_err();
    assert!(err.to_string().contains("returned no ID"), "{err}");
    let unknown = Value::Unknown(crate::UnknownKind::Number);
    let err = e.create(T, "a", props! { "size" => unknown }).unwrap_err();
    assert!(err.to_string().contains("unknown value for 'size' outside a preview"), "{err}");
}

#[test]
fn refresh_reads_and_notices_a_resource_gone() {
    let mut e = Engine::<Recorder>::default();
    let thing = e.create(T, "a", props! { "size" => 1 }).unwrap();
    let read = e.refresh(&thing).unwrap().unwrap();
    assert_eq!(read.inputs, thing.inputs, "inputs kept when Read returns none");
    let gone = State { outputs: props! { "gone" => true }, ..thing };
    assert_eq!(e.refresh(&gone).unwrap(), None);
}

#[test]
fn every_check_gets_its_own_seed_and_runs_repeat() {
    assert_eq!(seed("urn:a", 1), seed("urn:a", 1));
    assert_ne!(seed("urn:a", 1), seed("urn:b", 1));
    assert_ne!(seed("urn:a", 1), seed("urn:a", 2));
    assert_eq!(seed("urn:a", 1).len(), 32);
}

#[test]
fn the_step_follows_the_diffs_changes_first() {
    let mut e = Engine::<Recorder>::default();
    let thing = e.create(T, "a", props! { "size" => 1 }).unwrap();
    // Replace keys without changes: nothing to do, as the engine decides.
    e.provider().diff = Some(DiffResponse { replaces: vec!["size".into()], ..DiffResponse::none() });
    assert_eq!(e.update(&thing, props! { "size" => 2 }).unwrap().0, Step::Same);
    // A provider that cannot tell: the inputs are compared.
    e.provider().diff = Some(DiffResponse { changes: DiffChanges::Unknown, ..DiffResponse::none() });
    assert_eq!(e.update(&thing, props! { "size" => 1 }).unwrap().0, Step::Same);
    assert_eq!(e.update(&thing, props! { "size" => 2 }).unwrap().0, Step::Update);
    // A detailed diff entry of a replacing kind replaces, with or without replace keys.
    let entry = PropertyDiff { kind: DiffKind::UpdateReplace, input_diff: true };
    let detailed = Some(vec![("size".to_owned(), entry)]);
    e.provider().diff =
        Some(DiffResponse { changes: DiffChanges::Some, detailed_diff: detailed, ..DiffResponse::none() });
    let step = e.update(&thing, props! { "size" => 2 }).unwrap().0;
    assert_eq!(step, Step::Replace { delete_before_replace: false, keys: vec!["size".into()] });
}

#[test]
fn an_import_reads_by_id_alone_and_then_behaves_as_any_resource() {
    let mut e = Engine::<Recorder>::default();
    let imported = e.import(T, "legacy", "old-1").unwrap();
    assert_eq!((imported.id.as_str(), &imported.inputs), ("old-1", &props! { "size" => 7 }));
    // The program's inputs match what the import read: no change.
    assert_eq!(e.update(&imported, props! { "size" => 7 }).unwrap().0, Step::Same);
    let err = e.import(T, "missing", "nope").unwrap_err();
    assert!(matches!(err, Failure::Provider(Error::NotFound(_))), "{err}");
    // The `import` option: Read, Check of the program's inputs against
    // what Read returned, then Diff against the state read.
    let before = e.provider().calls.len();
    let kept = e.import_with(T, "kept", "old-2", props! { "size" => 7 }).unwrap();
    assert_eq!((kept.id.as_str(), &kept.inputs), ("old-2", &props! { "size" => 7 }));
    let calls = &e.provider().calls[before..];
    assert!(calls[0] == "read old-2" && calls[1].starts_with("check olds=1 ") && calls[2].starts_with("diff old-2"));
    let err = e.import_with(T, "invalid", "old-3", props! { "size" => 7, "bad" => true }).unwrap_err();
    assert!(matches!(&err, Failure::Check(f) if f[0].property == "bad"), "{err}");
    let err = e.import_with(T, "other", "old-4", props! { "size" => 8 }).unwrap_err();
    assert!(matches!(&err, Failure::Engine(m) if m.contains("would fail the import")), "{err}");
}
