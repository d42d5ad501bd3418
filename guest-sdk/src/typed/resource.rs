//! The traits authors implement: [`Resource`] and [`Function`], with the
//! [`Context`] of a call and the [`Partial`] inputs of a preview.

use std::any::Any;

use super::adapt::only;
use super::decode::{Decoded, decode};
use super::types::{Object, PulumiType, normalize};
use crate::diff::Differ;
use crate::log::{self, ResourceLog};
use crate::provider::{
    AutonamingMode, CheckFailure, CheckRequest, CheckResponse, DiffRequest, DiffResponse, Error, Result,
};
use crate::value::{PropertyMap, Value};

/// What a call is about.
pub struct Context<'a> {
    /// The resource's URN; empty for functions.
    pub urn: String,
    /// The resource's name; empty for functions.
    pub name: String,
    /// The resource type or function token.
    pub token: String,
    /// Seconds; 0 when unset.
    pub timeout: f64,
    pub(crate) config: Option<&'a dyn Any>,
    /// The paths that were secret in the call's inputs, once decoded (see
    /// [`Context::report_partial_state`]).
    pub(crate) secrets: std::cell::RefCell<Vec<Vec<super::decode::Seg>>>,
}

impl Context<'static> {
    /// A context without configuration, e.g. to call a resource's methods in unit tests.
    pub fn new(urn: &str, name: &str, token: &str) -> Self {
        Context {
            urn: urn.to_owned(),
            name: name.to_owned(),
            token: token.to_owned(),
            timeout: 0.0,
            config: None,
            secrets: Default::default(),
        }
    }
}

impl Context<'_> {
    /// The provider configuration (`Builder::config::<C>()`), once `configure` has run.
    pub fn config<C: 'static>(&self) -> Option<&C> {
        self.config.and_then(|c| c.downcast_ref())
    }

    /// Messages to the Pulumi CLI, tied to this resource.
    pub fn log(&self) -> ResourceLog<'_> {
        log::for_urn(&self.urn)
    }

    /// Whether the engine asked to cancel (see [`crate::context::cancelled`]):
    /// a long create should stop, and return [`init_failed`] for what it made.
    pub fn cancelled(&self) -> bool {
        crate::context::cancelled()
    }

    /// Records what a create has made so far, as its state would be
    /// returned: `secret` fields secret, and whatever was secret in the
    /// inputs secret at the same paths. If the call is then interrupted (a
    /// deadline, Cancel) or fails, the engine records it as the resource's
    /// state rather than losing the resource. The untyped
    /// [`crate::context::report_partial_state`] takes a map as it is.
    pub fn report_partial_state<S: Object>(&self, id: &str, state: &S) {
        let mut map = state.to_map();
        super::decode::protect_paths(&self.secrets.borrow(), &mut map);
        crate::context::report_partial_state(id, &map);
    }
}

/// Inputs as far as they are known: in a preview any of them may be unknown.
pub struct Partial<T> {
    pub(crate) decoded: Decoded<T>,
    raw: PropertyMap,
}

impl<T> Partial<T> {
    pub(crate) fn new(decoded: Decoded<T>, raw: PropertyMap) -> Self {
        Partial { decoded, raw }
    }

    /// The inputs, when every one of them is known.
    pub fn known(&self) -> Option<&T> {
        self.decoded.value.as_ref()
    }

    /// The checked inputs as raw values, unknowns included.
    pub fn raw(&self) -> &PropertyMap {
        &self.raw
    }

    /// Paths of the unknown values (`length`, `tags.env`, `items[0]`).
    pub fn unknowns(&self) -> &[String] {
        &self.decoded.unknowns
    }

    /// False when the value at `path`, or anything inside it, is unknown.
    pub fn is_known(&self, path: &str) -> bool {
        let inside = |outer: &str, inner: &str| {
            inner.strip_prefix(outer).is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '[']))
        };
        !self.decoded.unknowns.iter().any(|u| inside(path, u) || inside(u, path))
    }

    /// One top-level input, decoded, when it is known and valid.
    pub fn get<F: PulumiType>(&self, key: &str) -> Option<F> {
        let mut cx = super::decode::Decoder::new(false, true);
        let v = cx.value::<F>(self.raw.get(key));
        cx.finish(v).value
    }
}

/// A custom resource with typed inputs and state. Only `create` is required;
/// every other method has a default, overridable where it does not fit.
pub trait Resource: 'static {
    /// The type token, e.g. `random:index:RandomString`.
    const TOKEN: &'static str;
    type Inputs: Object;
    /// Everything recorded about the resource; usually the inputs
    /// (`#[pulumi(flatten)]`) plus the outputs. Its doc comment describes the
    /// resource in the schema.
    type State: Object;

    /// Creates the resource from checked, fully known inputs: its ID and state.
    fn create(&self, ctx: &Context, inputs: Self::Inputs) -> Result<(String, Self::State)>;

    /// The state a preview of a create (`olds` is `None`) or an update shows.
    /// Default `None`: the inputs as given, every other state property unknown.
    fn preview(
        &self,
        _ctx: &Context,
        _olds: Option<&Self::State>,
        _news: &Partial<Self::Inputs>,
    ) -> Result<Option<Self::State>> {
        Ok(None)
    }

    /// Checks beyond types, ranges and required properties (which are
    /// checked already), e.g. between properties. Runs once every input is known.
    fn validate(&self, _inputs: &Self::Inputs) -> Vec<CheckFailure> {
        Vec::new()
    }

    /// Default: [`check_inputs`] (defaults, types, ranges, then
    /// `validate`). An `autoname` property in `req.news` is already named
    /// ([`autoname`]), overridden or not.
    fn check(&self, _ctx: &Context, req: CheckRequest) -> Result<CheckResponse> {
        Ok(check_inputs(self, req.news))
    }

    /// Default: [`diff_inputs`] (structural; replace-on-change fields replace).
    fn diff(&self, _ctx: &Context, req: DiffRequest) -> Result<DiffResponse> {
        Ok(diff_inputs::<Self>(&req))
    }

    /// Refreshes the state; `None` when the resource is gone. Default:
    /// unchanged, which is right for a resource with nothing outside its
    /// state (a random value); one backed by a remote object implements
    /// it, or `pulumi refresh` never sees drift or deletion. The inputs
    /// reported are the state's values of the inputs it holds, and the old
    /// values of those it does not (a write-only password).
    fn read(&self, _ctx: &Context, id: String, state: Self::State) -> Result<Option<(String, Self::State)>> {
        Ok(Some((id, state)))
    }

    /// Reads a resource known only by its ID (`pulumi import`, or a `get`
    /// with no state): the engine's Read without properties. `None` when
    /// nothing has that ID. Default: refused, naming this method, since
    /// there is no state for [`Resource::read`] to start from.
    fn import(&self, _ctx: &Context, id: String) -> Result<Option<(String, Self::State)>> {
        Err(Error::Unimplemented(format!(
            "{} cannot be imported (read by ID '{id}' with no state): implement Resource::import",
            Self::TOKEN
        )))
    }

    /// Updates in place: called when the diff reports changes and no
    /// replacement, and with unchanged inputs to finish a resource whose
    /// create or update returned [`init_failed`] (the engine retries it so
    /// at each `pulumi up`). Default: an error, so a missing implementation
    /// is loud; mark inputs `replace_on_changes` if they cannot be updated
    /// in place (after an `init_failed`, the error tells the user to replace
    /// the resource).
    fn update(&self, _ctx: &Context, _id: &str, _olds: Self::State, _news: Self::Inputs) -> Result<Self::State> {
        Err(Error::Unimplemented(format!(
            "{} cannot be updated in place: implement Resource::update or mark the inputs replace_on_changes",
            Self::TOKEN
        )))
    }

    /// Default: nothing to do (as in pulumi-go-provider), which is right for
    /// a resource with nothing outside its state; one backed by a remote
    /// object implements it, or `pulumi destroy` succeeds and leaves the
    /// object behind.
    fn delete(&self, _ctx: &Context, _id: &str, _state: Self::State) -> Result<()> {
        Ok(())
    }
}

/// The error for a resource that was created (it has `id`) but could not be
/// finished: the engine records `state` as its state, so it is not leaked,
/// and at the next `pulumi up` calls [`Resource::update`] with that state
/// and the same inputs to carry on (a refresh reads it as usual). Whatever
/// was secret in the inputs stays secret in it, as in a successful create's state.
pub fn init_failed<S: Object>(id: impl Into<String>, state: &S, reason: impl Into<String>) -> Error {
    Error::InitFailed { id: id.into(), properties: state.to_map(), inputs: None, reasons: vec![reason.into()] }
}

/// A function (invoke) with typed arguments and result. If any argument is
/// secret, the whole result is.
pub trait Function: 'static {
    /// The token, e.g. `random:index:randomInteger`.
    const TOKEN: &'static str;
    /// Its doc comment describes the function in the schema.
    type Args: Object;
    type Output: Object;

    fn invoke(&self, ctx: &Context, args: Self::Args) -> Result<Self::Output>;

    /// Checks beyond types, ranges and required arguments; failures are
    /// returned to the caller instead of calling `invoke`.
    fn validate(&self, _args: &Self::Args) -> Vec<CheckFailure> {
        Vec::new()
    }
}

/// Names the resource when the program does not: fills `T`'s `autoname`
/// property (`#[pulumi(autoname)]`) in `news`, as Pulumi's providers do.
/// The typed layer does it before [`Resource::check`].
///
/// A name the program gives is kept. Otherwise the name it had (in
/// `olds`) is kept, so an update does not rename, and so replace, the
/// resource (a name the program once gave and then dropped is kept too;
/// a replacement is checked with no `olds` and gets a new one). Otherwise
/// the engine's autonaming options decide: its proposed name (`propose`,
/// `enforce`), or a failure (`disable`: the program must name it). An
/// engine that sends none gets Pulumi's default: the resource's name, a
/// dash and seven hex digits from the random seed.
///
/// A resource has one name:
///
/// ```compile_fail
/// use pulumi_wasm_sdk::typed::*;
///
/// #[derive(PulumiType)]
/// pub struct Args {
///     #[pulumi(autoname)]
///     pub name: String,
///     #[pulumi(autoname)]
///     pub alias: String,
/// }
/// ```
pub fn autoname<T: Object>(req: &CheckRequest, news: &mut PropertyMap) -> Option<CheckFailure> {
    let p = T::properties().iter().find(|p| p.autoname)?;
    if news.get(p.name).is_some_and(|v| !v.is_null()) {
        return None;
    }
    if let Some(old) = req.olds.get(p.name).filter(|v| !v.is_null()) {
        news.insert(p.name.to_owned(), old.clone());
        return None;
    }
    let name = match &req.autonaming {
        Some(a) if a.mode == AutonamingMode::Disable => {
            return Some(CheckFailure::new(p.name, "is required: automatic naming is disabled"));
        }
        Some(a) => a.proposed_name.clone(),
        None => {
            // An engine older than `CheckRequest.name` leaves it empty: the URN ends with it.
            let name = if req.name.is_empty() { req.urn.rsplit("::").next().unwrap_or_default() } else { &req.name };
            format!("{name}-{}", suffix(&req.random_seed, &req.urn))
        }
    };
    news.insert(p.name.to_owned(), Value::String(name));
    None
}

/// Seven hex digits from the engine's random seed (or, without one, the URN).
fn suffix(seed: &[u8], urn: &str) -> String {
    let hex = |bytes: &[u8]| bytes.iter().map(|b| format!("{b:02x}")).collect::<String>();
    let from = if seed.len() >= 4 {
        hex(&seed[..4])
    } else {
        // FNV-1a: stable across runs, and enough to tell names apart.
        let hash = urn.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
        hex(&hash.to_be_bytes())
    };
    from[..7].to_owned()
}

/// The default Check: applies defaults, marks secret fields, decodes
/// (failures by property path; unknowns pass) and, once every input is
/// known, runs [`Resource::validate`]. The returned inputs are `news` with
/// defaults, so secrets and unknowns are kept as given.
pub fn check_inputs<R: Resource + ?Sized>(resource: &R, mut news: PropertyMap) -> CheckResponse {
    normalize::<R::Inputs>(&mut news);
    let decoded = decode::<R::Inputs>(&news);
    let mut failures = decoded.failures;
    if let Some(inputs) = &decoded.value {
        failures.extend(resource.validate(inputs));
    }
    CheckResponse { inputs: news, failures }
}

/// The default Diff: old inputs against new ones (the old state's input
/// properties when the engine has no old inputs); a change to a
/// `replace_on_changes` field replaces the resource, any other is an update.
///
/// The old inputs are read as this version of the provider reads inputs:
/// only the properties it declares, with its defaults. They were checked by
/// the version that created the resource, so a property a newer version
/// added with a default, or dropped, is no change to the resource. One
/// the old state holds (an output that became an input) is taken from the
/// state rather than the default: that is what the resource has.
pub fn diff_inputs<R: Resource + ?Sized>(req: &DiffRequest) -> DiffResponse {
    let props = R::Inputs::properties();
    let mut olds = only(if req.old_inputs.is_empty() { &req.olds } else { &req.old_inputs }, props);
    for p in props.iter().filter(|p| p.default.is_some()) {
        if !olds.contains_key(p.name)
            && let Some(had) = req.olds.get(p.name)
        {
            olds.insert(p.name.to_owned(), had.clone());
        }
    }
    normalize::<R::Inputs>(&mut olds);
    let replace = R::Inputs::resource_replace_paths();
    Differ::new().replace_on_changes(&replace).ignore(&req.ignore_changes).diff(&olds, &req.news)
}
