//! Test a provider the way the Pulumi engine drives it, in a plain native
//! `cargo test`: [`Engine`] makes the calls `pulumi preview`, `up`, `refresh`,
//! `import` and `destroy` make for one resource, with the requests filled in as the
//! engine fills them (Check's `olds` are the old inputs and its random seed
//! is new each time, Diff gets the state and the checked inputs, a
//! replacement is checked afresh and created before the old one is deleted
//! unless the provider asks otherwise, ...), and checks what the engine
//! checks of the answers (an ID after a create, no unknowns after an apply).
//!
//! ```
//! use pulumi_wasm_sdk::testing::{Engine, Step};
//! use pulumi_wasm_sdk::*;
//!
//! #[derive(Default)]
//! struct Files;
//! impl Provider for Files {
//!     fn info(&self) -> PluginInfo {
//!         PluginInfo::new("files", "1.0.0")
//!     }
//!     fn create(&mut self, req: CreateRequest) -> Result<CreateResponse> {
//!         let id = if req.preview { String::new() } else { "f1".into() };
//!         Ok(CreateResponse { id, properties: req.properties, refresh_before_update: false })
//!     }
//!     fn update(&mut self, req: UpdateRequest) -> Result<UpdateResponse> {
//!         Ok(UpdateResponse { properties: req.news, refresh_before_update: false })
//!     }
//!     fn delete(&mut self, _req: DeleteRequest) -> Result<()> {
//!         Ok(())
//!     }
//! }
//!
//! let mut engine = Engine::new(Files);
//! let file = engine.create("files:index:File", "readme", props! { "text" => "hi" }).unwrap();
//! assert_eq!(file.id, "f1");
//! let (step, file) = engine.update(&file, props! { "text" => "hello" }).unwrap();
//! assert_eq!(step, Step::Update);
//! assert_eq!(file.outputs["text"], Value::from("hello"));
//! engine.delete(file).unwrap();
//! ```

use std::fmt;

/// Answers a provider's outbound HTTP in native tests (feature `http`).
#[cfg(all(feature = "http", not(target_arch = "wasm32")))]
pub use crate::http::imp::{HttpMock, Reply, Sent};

use crate::diff;
use crate::provider::*;
use crate::value::{PropertyMap, Value};

/// The engine's side of the conversation with one provider.
pub struct Engine<P: Provider> {
    provider: P,
    stack: String,
    project: String,
    /// Checks made so far: each gets its own random seed, as from the engine.
    checks: u64,
    /// The stack's autonaming configuration: a mode and a name pattern.
    autonaming: Option<(AutonamingMode, String)>,
    /// The program's resource options, applied as the engine applies them.
    options: Options,
}

/// Resource options a program gives, which the engine applies around the
/// provider's calls (see [`Engine::options`]).
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// `ignoreChanges`: top-level input keys whose new values the engine
    /// replaces with the old ones (drops, when there were none) before
    /// Check; Diff and Update are told of them too.
    pub ignore_changes: Vec<String>,
    /// `replaceOnChanges`: a change at, above or below one of these keys or
    /// paths (`tags.env`, `items[*].name`) replaces the resource, whatever
    /// the provider's Diff says.
    pub replace_on_changes: Vec<String>,
    /// `deleteBeforeReplace`: a replacement deletes the old resource first.
    pub delete_before_replace: bool,
    /// `customTimeouts`, in seconds (0: none): each call's `timeout`.
    pub create_timeout: f64,
    pub update_timeout: f64,
    pub delete_timeout: f64,
}

/// A resource as the engine records it after a step.
#[derive(Clone, Debug, PartialEq)]
pub struct State {
    pub urn: String,
    pub token: String,
    pub name: String,
    pub id: String,
    /// The checked inputs the resource was last created or updated with.
    pub inputs: PropertyMap,
    /// What the provider returned: the resource's state.
    pub outputs: PropertyMap,
    /// Why its last create or update could not finish it (`init_failed`):
    /// the next update calls Update even when nothing changed, as the
    /// engine does to let the provider carry on.
    pub init_errors: Vec<String>,
}

/// What an update of a resource did, decided from the provider's Diff.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// No change: nothing was called after Diff.
    Same,
    /// Changed in place: Update.
    Update,
    /// Replaced: Create of the new resource, then Delete of the old one, or
    /// the other way round when the provider asked for delete-before-replace.
    Replace { delete_before_replace: bool, keys: Vec<String> },
}

/// Why a step did not happen.
#[derive(Debug)]
pub enum Failure {
    /// Check refused the inputs.
    Check(Vec<CheckFailure>),
    /// A provider call returned an error.
    Provider(Error),
    /// The provider answered in a way the engine would reject.
    Engine(String),
    /// Create or Update made the resource but could not finish it
    /// (`init_failed`): the engine records this state, with the reasons as
    /// its `init_errors`, and fails the step.
    InitFailed(Box<State>),
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Check(failures) => {
                let each: Vec<String> = failures.iter().map(|c| format!("{}: {}", c.property, c.reason)).collect();
                write!(f, "check failed: {}", each.join("; "))
            }
            Failure::Provider(e) => write!(f, "provider error: {e}"),
            Failure::Engine(why) => write!(f, "the engine would reject this: {why}"),
            Failure::InitFailed(state) => write!(f, "created but not initialised: {}", state.init_errors.join("; ")),
        }
    }
}

impl std::error::Error for Failure {}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure::Provider(e)
    }
}

pub type Outcome<T> = std::result::Result<T, Failure>;

impl<P: Provider> Engine<P> {
    pub fn new(provider: P) -> Self {
        let options = Options::default();
        Engine { provider, stack: "test".into(), project: "test".into(), checks: 0, autonaming: None, options }
    }

    /// The program's resource options for the calls that follow, as the
    /// engine applies them: `ignoreChanges` before Check, `replaceOnChanges`
    /// and `deleteBeforeReplace` after Diff, `customTimeouts` in the requests.
    pub fn options(&mut self, options: Options) -> &mut Self {
        self.options = options;
        self
    }

    /// Names resources as a stack configured for autonaming does: every
    /// Check then proposes `pattern` with `${name}` the resource's name,
    /// in `mode`, to a provider that said it takes the options (as the
    /// engine sends them only then).
    pub fn autonaming(&mut self, mode: AutonamingMode, pattern: &str) -> &mut Self {
        self.autonaming = Some((mode, pattern.to_owned()));
        self
    }

    /// The provider, for calls this harness does not make.
    pub fn provider(&mut self) -> &mut P {
        &mut self.provider
    }

    /// As the engine's Cancel (or not, again): from now on
    /// `context::cancelled()` says `yes` to this thread's calls.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn cancel(&mut self, yes: bool) -> &mut Self {
        crate::context::native::CANCELLED.set(yes);
        self
    }

    /// The URN the engine gives a resource of this stack.
    pub fn urn(&self, token: &str, name: &str) -> String {
        format!("urn:pulumi:{}::{}::{token}::{name}", self.stack, self.project)
    }

    /// Provider configuration, as the engine sends it before any resource
    /// call: CheckConfig (refusals are a [`Failure::Check`]), then Configure
    /// with the checked values.
    pub fn configure(&mut self, config: PropertyMap) -> Outcome<ConfigureResponse> {
        let (package, name) = (self.provider.info().name, "default".to_owned());
        let token = format!("pulumi:providers:{package}");
        let urn = self.urn(&token, &name);
        let req = CheckRequest {
            urn: urn.clone(),
            name: name.clone(),
            resource_type: token.clone(),
            olds: PropertyMap::new(),
            news: config,
            random_seed: self.next_seed(&urn),
            autonaming: None,
            old_outputs: None,
        };
        let checked = passed(self.provider.check_config(req)?)?;
        // The deprecated `variables` view of the same values: strings as they
        // are, the rest as JSON (unknowns and assets have none and are left out).
        let text = |v: &Value| match v.plain() {
            Value::String(s) => Some(s.clone()),
            other => crate::serde::to_json(other).ok().map(|j| j.to_string()),
        };
        let variables =
            checked.iter().filter_map(|(k, v)| text(v).map(|s| (format!("{package}:config:{k}"), s))).collect();
        let req = ConfigureRequest { variables, args: checked, id: String::new(), urn, name, resource_type: token };
        Ok(self.provider.configure(req)?)
    }

    /// Check of new inputs (`olds` are the previous inputs, empty for a new
    /// resource); refusals are a [`Failure::Check`].
    pub fn check(&mut self, token: &str, name: &str, olds: PropertyMap, news: PropertyMap) -> Outcome<PropertyMap> {
        let urn = self.urn(token, name);
        let taken = self.provider.info().supports_autonaming_configuration;
        let autonaming = self
            .autonaming
            .as_ref()
            .filter(|_| taken)
            .map(|(mode, pattern)| Autonaming { proposed_name: pattern.replace("${name}", name), mode: *mode });
        let req = CheckRequest {
            random_seed: self.next_seed(&urn),
            urn,
            name: name.into(),
            resource_type: token.into(),
            olds,
            news,
            autonaming,
            old_outputs: None,
        };
        passed(self.provider.check(req)?)
    }

    /// `pulumi preview` of a new resource: Check, then Create with
    /// `preview` set. Inputs may hold unknowns; the outputs are what the
    /// preview would show.
    pub fn preview_create(&mut self, token: &str, name: &str, inputs: PropertyMap) -> Outcome<PropertyMap> {
        let inputs = self.check(token, name, PropertyMap::new(), inputs)?;
        let created = self.create_call(self.create_request(token, name, inputs, true))?;
        Ok(created.properties)
    }

    /// `pulumi up` of a new resource: Check, then Create.
    pub fn create(&mut self, token: &str, name: &str, inputs: PropertyMap) -> Outcome<State> {
        let inputs = self.check(token, name, PropertyMap::new(), inputs)?;
        self.apply_create(token, name, inputs)
    }

    fn apply_create(&mut self, token: &str, name: &str, inputs: PropertyMap) -> Outcome<State> {
        let urn = self.urn(token, name);
        let outputs = PropertyMap::new();
        let new = State {
            urn,
            token: token.into(),
            name: name.into(),
            id: String::new(),
            inputs,
            outputs,
            init_errors: vec![],
        };
        let created = self.create_call(self.create_request(token, name, new.inputs.clone(), false));
        let created = created.map_err(|e| unfinished(e, &new))?;
        if created.id.is_empty() {
            return Err(Failure::Engine(format!("Create of {token} '{name}' returned no ID")));
        }
        applied("Create", &created.properties)?;
        Ok(recorded(State { id: created.id, outputs: created.properties, ..new }))
    }

    fn create_request(&self, token: &str, name: &str, properties: PropertyMap, preview: bool) -> CreateRequest {
        let urn = self.urn(token, name);
        let timeout = self.options.create_timeout;
        CreateRequest { urn, name: name.into(), resource_type: token.into(), properties, timeout, preview }
    }

    /// Check of new inputs against `state`, then Diff: the step an update
    /// would take, and the inputs to take it with. For a replacement those
    /// come from a second Check without the old inputs, as the engine does
    /// (what the provider carried over from the old resource, a name or a
    /// default, must be chosen afresh for the new one).
    pub fn plan(&mut self, state: &State, mut inputs: PropertyMap) -> Outcome<(Step, PropertyMap)> {
        for key in &self.options.ignore_changes {
            match state.inputs.get(key) {
                Some(old) => inputs.insert(key.clone(), old.clone()),
                None => inputs.remove(key),
            };
        }
        let news = self.check(&state.token, &state.name, state.inputs.clone(), inputs.clone())?;
        let diff = self.provider.diff(DiffRequest {
            id: state.id.clone(),
            urn: state.urn.clone(),
            name: state.name.clone(),
            resource_type: state.token.clone(),
            olds: state.outputs.clone(),
            news: news.clone(),
            old_inputs: state.inputs.clone(),
            ignore_changes: self.options.ignore_changes.clone(),
        })?;
        let changed = match diff.changes {
            DiffChanges::Some => true,
            DiffChanges::None => false,
            // A provider that cannot tell: the engine compares the inputs itself.
            DiffChanges::Unknown => news != state.inputs,
        };
        if !changed {
            // A resource its last step left unfinished gets an Update all the same.
            let step = if state.init_errors.is_empty() { Step::Same } else { Step::Update };
            return Ok((step, news));
        }
        // As the engine decides: a replace key, or a detailed diff entry of a
        // replacing kind (whose paths are the keys when there are no others).
        let replacing =
            |kind: &DiffKind| matches!(kind, DiffKind::AddReplace | DiffKind::DeleteReplace | DiffKind::UpdateReplace);
        let detailed = diff.detailed_diff.iter().flatten().filter(|(_, change)| replacing(&change.kind));
        let mut keys: Vec<String> = match &diff.replaces {
            keys if keys.is_empty() => detailed.map(|(path, _)| path.clone()).collect(),
            keys => keys.clone(),
        };
        // The program's `replaceOnChanges`: any change related to one of its paths.
        let changed = match &diff.detailed_diff {
            Some(detailed) if !detailed.is_empty() => detailed.iter().map(|(path, _)| path.clone()).collect(),
            _ => diff.diffs.clone(),
        };
        let forced =
            changed.into_iter().filter(|c| self.options.replace_on_changes.iter().any(|r| diff::related(r, c)));
        for path in forced {
            if !keys.contains(&path) {
                keys.push(path);
            }
        }
        if keys.is_empty() {
            return Ok((Step::Update, news));
        }
        let fresh = self.check(&state.token, &state.name, PropertyMap::new(), inputs)?;
        let delete_before_replace = diff.delete_before_replace || self.options.delete_before_replace;
        Ok((Step::Replace { delete_before_replace, keys }, fresh))
    }

    /// `pulumi preview` of new inputs for an existing resource: the step,
    /// and the outputs the preview would show (Update or Create with
    /// `preview` set; the old outputs when nothing changes).
    pub fn preview_update(&mut self, state: &State, inputs: PropertyMap) -> Outcome<(Step, PropertyMap)> {
        let (step, news) = self.plan(state, inputs)?;
        let outputs = match &step {
            Step::Same => state.outputs.clone(),
            Step::Update => self.update_call(self.update_request(state, news, true))?.properties,
            Step::Replace { .. } => {
                self.create_call(self.create_request(&state.token, &state.name, news, true))?.properties
            }
        };
        Ok((step, outputs))
    }

    /// `pulumi up` with new inputs for an existing resource: Check, Diff,
    /// then nothing, Update, or a replacement. Returns the step and the new
    /// state (when nothing changed, the old one with the new inputs).
    pub fn update(&mut self, state: &State, inputs: PropertyMap) -> Outcome<(Step, State)> {
        let (step, news) = self.plan(state, inputs)?;
        let next = match &step {
            // Nothing is called, but the new inputs are recorded.
            Step::Same => recorded(State { inputs: news, ..state.clone() }),
            Step::Update => {
                let updated = self.update_call(self.update_request(state, news.clone(), false));
                let updated = updated.map_err(|e| unfinished(e, &State { inputs: news.clone(), ..state.clone() }))?;
                applied("Update", &updated.properties)?;
                recorded(State { inputs: news, outputs: updated.properties, init_errors: vec![], ..state.clone() })
            }
            Step::Replace { delete_before_replace: true, .. } => {
                self.delete(state.clone())?;
                self.apply_create(&state.token, &state.name, news)?
            }
            Step::Replace { delete_before_replace: false, .. } => {
                let replacement = self.apply_create(&state.token, &state.name, news)?;
                self.delete(state.clone())?;
                replacement
            }
        };
        Ok((step, next))
    }

    fn update_request(&self, state: &State, news: PropertyMap, preview: bool) -> UpdateRequest {
        UpdateRequest {
            id: state.id.clone(),
            urn: state.urn.clone(),
            name: state.name.clone(),
            resource_type: state.token.clone(),
            olds: state.outputs.clone(),
            news,
            old_inputs: state.inputs.clone(),
            timeout: self.options.update_timeout,
            ignore_changes: self.options.ignore_changes.clone(),
            preview,
        }
    }

    /// `pulumi refresh`: Read. `None` when the provider says the resource
    /// is gone.
    pub fn refresh(&mut self, state: &State) -> Outcome<Option<State>> {
        let Some(read) = self.read(state)? else { return Ok(None) };
        // A provider that does not return inputs keeps the old ones, as the engine does.
        let inputs = if read.inputs.is_empty() { state.inputs.clone() } else { read.inputs };
        Ok(Some(recorded(State { id: read.id, inputs, outputs: read.properties, ..state.clone() })))
    }

    /// `pulumi import <token> <name> <id>`: Read with only the ID. The
    /// provider's answer becomes the state; its inputs (what the program
    /// should say to keep the resource as it is) must come back too.
    pub fn import(&mut self, token: &str, name: &str, id: &str) -> Outcome<State> {
        let urn = self.urn(token, name);
        let (inputs, outputs) = (PropertyMap::new(), PropertyMap::new());
        let known =
            State { urn, token: token.into(), name: name.into(), id: id.into(), inputs, outputs, init_errors: vec![] };
        let Some(read) = self.read(&known)? else {
            return Err(Failure::Provider(Error::NotFound(format!("{token} '{id}' does not exist"))));
        };
        if read.inputs.is_empty() {
            return Err(Failure::Engine(format!("Read of {token} '{id}' for an import returned no inputs")));
        }
        Ok(State { id: read.id, inputs: read.inputs, outputs: read.properties, ..known })
    }

    /// `pulumi up` of a program's resource with the `import` option set to
    /// `id` and these `inputs`: Read with only the ID, then, as the engine
    /// does, Check of `inputs` against the inputs Read returned (failures
    /// fail the import) and Diff of what Check returned against the state
    /// read, which must show no change.
    pub fn import_with(&mut self, token: &str, name: &str, id: &str, inputs: PropertyMap) -> Outcome<State> {
        let read = self.import(token, name, id)?;
        match self.plan(&read, inputs)? {
            (Step::Same, inputs) => Ok(State { inputs, ..read }),
            (step, _) => Err(Failure::Engine(format!(
                "the inputs to import {token} '{id}' do not match the resource ({step:?}): `up` would fail the import"
            ))),
        }
    }

    /// Read of `state` as the engine has it; `None` when the provider says
    /// the resource is gone (an empty ID).
    fn read(&mut self, state: &State) -> Outcome<Option<ReadResponse>> {
        let read = self.provider.read(ReadRequest {
            id: state.id.clone(),
            urn: state.urn.clone(),
            name: state.name.clone(),
            resource_type: state.token.clone(),
            properties: state.outputs.clone(),
            inputs: state.inputs.clone(),
            timeout: 0.0,
        })?;
        if read.id.is_empty() {
            return Ok(None);
        }
        applied("Read", &read.properties)?;
        Ok(Some(read))
    }

    /// `pulumi destroy` of the resource: Delete.
    pub fn delete(&mut self, state: State) -> Outcome<()> {
        let (properties, old_inputs) = (in_words(&state.outputs)?, in_words(&state.inputs)?);
        let req = DeleteRequest {
            id: state.id,
            urn: state.urn,
            name: state.name,
            resource_type: state.token,
            properties: PropertyMap::new(),
            old_inputs: PropertyMap::new(),
            timeout: self.options.delete_timeout,
        };
        Ok(self.provider.delete_words(req, properties, old_inputs)?)
    }

    // Create, Update and Delete go the way a component's exports call
    // them: the maps in words, read where they lie (the typed layer has a
    // path of its own for them), and the outputs back through words.

    fn create_call(&mut self, mut req: CreateRequest) -> Outcome<CreateResponse> {
        take_partial();
        let properties = in_words(&std::mem::take(&mut req.properties))?;
        let created = self.provider.create_outputs(req, properties)?;
        Ok(CreateResponse {
            id: created.id,
            properties: crate::wire::decode_map(crate::wire::encode_outputs(created.properties))?,
            refresh_before_update: created.refresh_before_update,
        })
    }

    fn update_call(&mut self, mut req: UpdateRequest) -> Outcome<UpdateResponse> {
        take_partial();
        let olds = in_words(&std::mem::take(&mut req.olds))?;
        let news = in_words(&std::mem::take(&mut req.news))?;
        let old_inputs = in_words(&std::mem::take(&mut req.old_inputs))?;
        let updated = self.provider.update_outputs(req, olds, news, old_inputs)?;
        Ok(UpdateResponse {
            properties: crate::wire::decode_map(crate::wire::encode_outputs(updated.properties))?,
            refresh_before_update: updated.refresh_before_update,
        })
    }

    /// An invoke (a function call of the program); failures are a [`Failure::Check`].
    pub fn invoke(&mut self, token: &str, args: PropertyMap) -> Outcome<PropertyMap> {
        let out = self.provider.invoke(InvokeRequest { token: token.into(), args, preview: false })?;
        if out.failures.is_empty() { Ok(out.outputs) } else { Err(Failure::Check(out.failures)) }
    }
}

impl<P: Provider> Default for Engine<P> {
    fn default() -> Self {
        Engine::new(P::default())
    }
}

/// A create's or update's `init_failed` as the engine records it: the
/// state the provider gave (and its inputs, when it gave them) on top of
/// `base`, the resource as the step would have left it. Any other error
/// after the call reported partial state is one too, as the host makes it:
/// what the call reported making exists.
fn unfinished(failure: Failure, base: &State) -> Failure {
    let failure = match (failure, take_partial()) {
        (Failure::Provider(e), Some((id, properties))) if !matches!(e, Error::InitFailed { .. }) => {
            Failure::Provider(Error::InitFailed { id, properties, inputs: None, reasons: vec![e.to_string()] })
        }
        (failure, _) => failure,
    };
    match failure {
        Failure::Provider(Error::InitFailed { id, properties, inputs, reasons }) => {
            let inputs = inputs.unwrap_or_else(|| base.inputs.clone());
            // An update's resource keeps its ID, as in the engine.
            let id = if base.id.is_empty() { id } else { base.id.clone() };
            let state = State { id, inputs, outputs: properties, init_errors: reasons, ..base.clone() };
            Failure::InitFailed(Box::new(recorded(state)))
        }
        other => other,
    }
}

/// The partial state the last call reported (natively; a component's
/// reports go to the host).
fn take_partial() -> Option<(String, PropertyMap)> {
    #[cfg(not(target_arch = "wasm32"))]
    {
        crate::context::take_partial_state()
    }
    #[cfg(target_arch = "wasm32")]
    {
        None
    }
}

fn passed(checked: CheckResponse) -> Outcome<PropertyMap> {
    if checked.failures.is_empty() { Ok(checked.inputs) } else { Err(Failure::Check(checked.failures)) }
}

/// The state as the engine records it: an output whose input of the same
/// name is secret is made secret too (the engine's guard against a provider
/// leaking a secret input; deeper leaks are the provider's to prevent). So
/// an input made secret later makes its output secret even when Diff saw
/// no change.
fn recorded(mut state: State) -> State {
    for (key, out) in state.outputs.iter_mut() {
        if !matches!(out, Value::Secret(_)) && matches!(state.inputs.get(key), Some(Value::Secret(_))) {
            *out = Value::secret(std::mem::replace(out, Value::Null));
        }
    }
    state
}

/// After an apply (not a preview) every output must be known.
fn applied(call: &str, outputs: &PropertyMap) -> Outcome<()> {
    match outputs.iter().find(|(_, v)| Value::contains_unknowns(v)) {
        Some((key, _)) => {
            Err(Failure::Engine(format!("{call} returned an unknown value for '{key}' outside a preview")))
        }
        None => Ok(()),
    }
}

impl<P: Provider> Engine<P> {
    /// The engine sends fresh random bytes with every Check, so a provider
    /// must keep what it derived from them (an auto-name) through `olds`.
    /// These differ per Check too, but repeat from run to run.
    fn next_seed(&mut self, urn: &str) -> Vec<u8> {
        self.checks += 1;
        seed(urn, self.checks)
    }
}

fn seed(urn: &str, n: u64) -> Vec<u8> {
    // FNV-1a, then SplitMix64 to spread it over 32 bytes: fixed, not secure, which a test wants.
    let start = 0xcbf2_9ce4_8422_2325_u64 ^ n.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let mut x = urn.bytes().fold(start, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
    (0..4)
        .flat_map(|_| {
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            (z ^ (z >> 31)).to_le_bytes()
        })
        .collect()
}

/// Properties holding every kind of value Pulumi sends: null, bool, number,
/// string, bytes, an array with an unknown, nested objects, a secret, an
/// asset, an archive of members, resource references (with a known and an
/// unknown ID), output values (known and unknown), and strings and asset
/// text long enough to take the long-text path. For round-trip tests of code
/// that carries values, where the kind left out is the usual bug.
pub fn every_kind() -> PropertyMap {
    use crate::value::{Archive, ArchiveMember, ArchiveSource, Asset, Output, RefId, ResourceRef, UnknownKind};
    let mut members = std::collections::BTreeMap::new();
    members.insert("a.txt".to_string(), ArchiveMember::Asset(Asset::text("hi")));
    members.insert(
        "inner".to_string(),
        ArchiveMember::Archive(Archive { hash: None, source: Some(ArchiveSource::Path("x.zip".into())) }),
    );
    let reference = |id| Value::ResourceRef(ResourceRef { urn: "urn:x".into(), id, package_version: "1.0.0".into() });
    crate::props! {
        "null" => Value::Null,
        "b" => true,
        "n" => 1.5,
        "s" => "str",
        "bytes" => Value::Bytes(vec![0xff, 0x00]),
        "arr" => vec![Value::from(1), Value::Unknown(UnknownKind::Number)],
        "obj" => crate::props! { "deep" => crate::props! { "deeper" => "x" } },
        "secret" => Value::secret("shh"),
        "asset" => Asset::uri("https://example.com/a"),
        "archive" => Archive { hash: Some("h".into()), source: Some(ArchiveSource::Assets(members)) },
        "ref" => reference(Some(RefId::Known("i".into()))),
        "ref-unknown-id" => reference(Some(RefId::Unknown)),
        "out" => Value::Output(Output { value: Some(Box::new("v".into())), secret: true, dependencies: vec!["urn:d".into()] }),
        "unknown-out" => Value::Output(Output { value: None, secret: false, dependencies: vec![] }),
        "long" => "é".repeat(1000),
        "long-asset" => Asset::text("x".repeat(4096)),
    }
}

#[cfg(test)]
#[path = "testing_tests.rs"]
mod tests;

/// A map as a component receives it: in words.
fn in_words(m: &PropertyMap) -> Result<crate::wire::read::Words> {
    crate::wire::words(crate::wire::encode_map(m))
}
