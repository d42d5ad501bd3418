//! Type erasure: each registered [`Resource`] and [`Function`] behind one
//! object-safe trait that speaks raw requests, so the provider can dispatch
//! by token. The typed conventions live here: decode, call, encode, re-mark secrets.

use super::decode::{Decoded, Source, decode, decode_defaulted, decode_state, decode_with, describe};
use super::resource::{Context, Function, Partial, Resource, autoname};
use super::schema::{self, Json, Types};
use super::types::{Object, Property, normalize};
use crate::fields::{Fields, Outputs};
use crate::provider::*;
use crate::value::{PropertyMap, Value};
use crate::wire::read::Words;

pub(crate) trait AnyResource {
    fn schema(&self, types: &mut Types) -> Json;
    /// Whether its inputs have an `autoname` property.
    fn autonames(&self) -> bool;
    fn check(&self, ctx: &Context, req: CheckRequest) -> Result<CheckResponse>;
    fn diff(&self, ctx: &Context, req: DiffRequest) -> Result<DiffResponse>;
    fn create(&self, ctx: &Context, req: CreateRequest) -> Result<Created>;
    /// [`AnyResource::create`] of properties still in words (`req`'s are empty).
    fn create_words(&self, ctx: &Context, req: CreateRequest, properties: Words) -> Result<Created>;
    fn read(&self, ctx: &Context, req: ReadRequest) -> Result<ReadResponse>;
    fn update(&self, ctx: &Context, req: UpdateRequest) -> Result<Updated>;
    /// [`AnyResource::update`] of maps still in words (`req`'s are empty).
    fn update_words(&self, ctx: &Context, req: UpdateRequest, olds: Words, news: Words) -> Result<Updated>;
    fn delete(&self, ctx: &Context, req: DeleteRequest) -> Result<()>;
    /// [`AnyResource::delete`] of a state still in words (`req`'s is empty).
    fn delete_words(&self, ctx: &Context, req: DeleteRequest, properties: Words) -> Result<()>;
}

pub(crate) trait AnyFunction {
    fn schema(&self, types: &mut Types) -> Json;
    fn invoke(&self, ctx: &Context, req: InvokeRequest) -> Result<InvokeResponse>;
}

// The generic helpers stay thin and the rest is not generic, so each
// registered type adds little code to the component.

fn invalid(what: &str, failures: &[CheckFailure]) -> Error {
    Error::invalid(format!("invalid {what}: {}", describe(failures)))
}

/// Decoded inputs, when none failed.
fn no_failures<T>(decoded: Decoded<T>) -> Result<Decoded<T>> {
    if decoded.failures.is_empty() { Ok(decoded) } else { Err(invalid("inputs", &decoded.failures)) }
}

/// Inputs as a preview sees them: defaults applied to the map, then decoded.
fn inputs<T: Object>(mut raw: PropertyMap) -> Result<(PropertyMap, Decoded<T>)> {
    normalize::<T>(&mut raw);
    let decoded = no_failures(decode::<T>(&raw))?;
    Ok((raw, decoded))
}

/// [`inputs`] when only the typed value is needed (not a preview): the
/// normalized map is not built, and words are read where they lie.
fn typed_inputs<T: Object>(raw: &(impl Source + ?Sized)) -> Result<(T, Decoded<T>)> {
    known(no_failures(decode_defaulted::<T>(raw))?)
}

fn state<T: Object>(raw: &(impl Source + ?Sized)) -> Result<(T, Decoded<T>)> {
    let mut decoded = decode_state::<T>(raw);
    match decoded.value.take() {
        Some(v) => Ok((v, decoded)),
        None if decoded.failures.is_empty() => Err(Error::invalid("the state has unknown values")),
        None => Err(invalid("state", &decoded.failures)),
    }
}

fn known<T>(mut decoded: Decoded<T>) -> Result<(T, Decoded<T>)> {
    match decoded.value.take() {
        Some(v) => Ok((v, decoded)),
        None => Err(Error::invalid(format!("inputs must be known: {}", decoded.unknowns.join(", ")))),
    }
}

fn validated<R: Resource>(r: &R, inputs: &R::Inputs) -> Result<()> {
    let failures = r.validate(inputs);
    if failures.is_empty() { Ok(()) } else { Err(invalid("inputs", &failures)) }
}

/// Encodes a state as sorted pairs, for the wire; whatever was secret in
/// the inputs stays secret.
fn encode_pairs<S: Object, I>(state: &S, inputs: &Decoded<I>) -> Fields {
    let mut out = state.to_fields();
    inputs.protect_fields(&mut out);
    out
}

/// A failed create or update: the state an `InitFailed` records keeps
/// secret whatever was secret in the inputs, as a successful one's does.
fn sealed<I>(error: Error, decoded: &Decoded<I>) -> Error {
    match error {
        Error::InitFailed { id, mut properties, mut inputs, reasons } => {
            decoded.protect(&mut properties);
            if let Some(inputs) = &mut inputs {
                decoded.protect(inputs);
            }
            Error::InitFailed { id, properties, inputs, reasons }
        }
        other => other,
    }
}

/// [`encode_pairs`] as a map, for the responses that are built as maps.
fn encode<S: Object, I>(state: &S, inputs: &Decoded<I>) -> PropertyMap {
    encode_pairs(state, inputs).into_map()
}

/// The default preview: the inputs as given, other state properties unknown.
fn preview_state(inputs: &PropertyMap, input_props: &[Property], state_props: &[Property]) -> PropertyMap {
    let mut out = inputs.clone();
    for p in state_props {
        if !input_props.iter().any(|i| i.name == p.name) {
            let unknown = Value::Unknown(p.unknown);
            out.insert(p.name.to_owned(), if p.secret { Value::secret(unknown) } else { unknown });
        }
    }
    out
}

/// A preview of a create (`olds` None) or an update.
fn preview<R: Resource>(
    r: &R,
    ctx: &Context,
    olds: Option<&R::State>,
    raw: PropertyMap,
    decoded: Decoded<R::Inputs>,
) -> Result<PropertyMap> {
    if let Some(inputs) = &decoded.value {
        validated(r, inputs)?;
    }
    let partial = Partial::new(decoded, raw);
    Ok(match r.preview(ctx, olds, &partial)? {
        Some(state) => encode(&state, &partial.decoded),
        None => preview_state(partial.raw(), R::Inputs::properties(), R::State::properties()),
    })
}

/// A create that is not a preview, from a map or from words.
fn create<R: Resource, S: Source + ?Sized>(r: &R, ctx: &Context, properties: &S) -> Result<Created> {
    let (inputs, decoded) = typed_inputs::<R::Inputs>(properties)?;
    validated(r, &inputs)?;
    if decoded.had_secrets() {
        *ctx.secrets.borrow_mut() = decoded.secret_paths();
    }
    let (id, state) = Resource::create(r, ctx, inputs).map_err(|e| sealed(e, &decoded))?;
    let properties = Outputs::Fields(encode_pairs(&state, &decoded));
    Ok(Created { id, properties, refresh_before_update: false })
}

/// An update, from maps or from words (`req`'s own maps are not read). A
/// preview builds the new inputs' map, as a create's does.
fn update<R: Resource, S: Source + ?Sized>(
    r: &R,
    ctx: &Context,
    req: &UpdateRequest,
    olds_raw: &S,
    news: &S,
) -> Result<Updated> {
    let (olds, old_decoded) = state::<R::State>(olds_raw)?;
    let properties = if req.preview {
        let (raw, decoded) = inputs::<R::Inputs>(news.to_map())?;
        Outputs::Map(preview(r, ctx, Some(&olds), raw, decoded)?)
    } else {
        let (typed, decoded) = typed_inputs::<R::Inputs>(news)?;
        validated(r, &typed)?;
        // What a returned state keeps secret: the new inputs' secrets and the old state's.
        if decoded.had_secrets() || old_decoded.had_secrets() {
            let mut secrets = decoded.secret_paths();
            secrets.extend(old_decoded.secret_paths());
            *ctx.secrets.borrow_mut() = secrets;
        }
        let updated = match Resource::update(r, ctx, &req.id, olds, typed) {
            Err(Error::Unimplemented(_)) if unchanged::<R>(req, olds_raw.to_map(), news.to_map()) => {
                return Err(unfinished::<R>(req));
            }
            updated => updated.map_err(|e| sealed(sealed(e, &decoded), &old_decoded))?,
        };
        let mut out = encode_pairs(&updated, &decoded);
        old_decoded.protect_fields(&mut out);
        Outputs::Fields(out)
    };
    Ok(Updated { properties, refresh_before_update: false })
}

/// Whether an Update's inputs are those the resource has: the engine then
/// asks it to carry on after an `init_failed` (it sends an Update with
/// nothing changed to a resource recorded with initialization errors).
fn unchanged<R: Resource>(req: &UpdateRequest, olds: PropertyMap, news: PropertyMap) -> bool {
    let diff = DiffRequest {
        id: req.id.clone(),
        urn: req.urn.clone(),
        name: req.name.clone(),
        resource_type: req.resource_type.clone(),
        olds,
        news,
        old_inputs: req.old_inputs.clone(),
        ignore_changes: req.ignore_changes.clone(),
    };
    super::resource::diff_inputs::<R>(&diff).changes == DiffChanges::None
}

/// The answer when the engine asks a resource without [`Resource::update`]
/// to carry on after an `init_failed`: the default's advice (implement it,
/// or mark the inputs `replace_on_changes`) cannot help the user, who can
/// only replace it.
fn unfinished<R: Resource>(req: &UpdateRequest) -> Error {
    Error::FailedPrecondition(format!(
        "{} '{}' was left unfinished by its last create or update (init_failed), and {} has no \
         Resource::update to finish it with: replace it with `pulumi up --replace '{}'`",
        R::TOKEN,
        req.id,
        R::TOKEN,
        req.urn
    ))
}

/// Read by ID alone: the state comes from the resource itself; the secrets
/// are the ones the state type declares.
fn import<R: Resource>(r: &R, ctx: &Context, id: String) -> Result<ReadResponse> {
    let Some((id, state)) = Resource::import(r, ctx, id)? else {
        return Ok(ReadResponse::default());
    };
    let mut properties = state.to_map();
    normalize::<R::State>(&mut properties);
    let inputs = only(&properties, R::Inputs::properties());
    Ok(ReadResponse { id, properties, inputs, refresh_before_update: false })
}

/// The inputs a refresh reports: those the state declares as the state now
/// has them (drift shows as a change to the program's inputs), the others
/// (a write-only password) as they were. The engine stores what Read returns
/// as the inputs, so dropping one would make the next update see it added.
fn refreshed_inputs(old: &PropertyMap, state: &PropertyMap, inputs: &[Property], held: &[Property]) -> PropertyMap {
    let mut out = only(state, inputs);
    for p in inputs.iter().filter(|p| !held.iter().any(|h| h.name == p.name)) {
        if let Some(v) = old.get(p.name) {
            out.insert(p.name.to_owned(), v.clone());
        }
    }
    out
}

/// The entries of `m` that are among `props`.
pub(crate) fn only(m: &PropertyMap, props: &[Property]) -> PropertyMap {
    m.iter().filter(|(k, _)| props.iter().any(|p| p.name == *k)).map(|(k, v)| (k.clone(), v.clone())).collect()
}

impl<R: Resource> AnyResource for R {
    fn schema(&self, types: &mut Types) -> Json {
        schema::resource(R::State::DESCRIPTION, R::Inputs::properties(), R::State::properties(), types)
    }

    fn autonames(&self) -> bool {
        R::Inputs::properties().iter().any(|p| p.autoname)
    }

    /// Names the resource first ([`autoname`]), so that a `check` of the
    /// author's own gets named inputs too.
    fn check(&self, ctx: &Context, mut req: CheckRequest) -> Result<CheckResponse> {
        let mut news = std::mem::take(&mut req.news);
        let named = autoname::<R::Inputs>(&req, &mut news);
        req.news = news;
        let mut checked = Resource::check(self, ctx, req)?;
        if let Some(failure) = named {
            // It says why the name is required, which decoding says too.
            checked.failures.retain(|f| f.property != failure.property);
            checked.failures.insert(0, failure);
        }
        Ok(checked)
    }

    fn diff(&self, ctx: &Context, req: DiffRequest) -> Result<DiffResponse> {
        Resource::diff(self, ctx, req)
    }

    fn create(&self, ctx: &Context, req: CreateRequest) -> Result<Created> {
        if req.preview {
            let (raw, decoded) = inputs::<R::Inputs>(req.properties)?;
            let properties = Outputs::Map(preview(self, ctx, None, raw, decoded)?);
            return Ok(Created { id: String::new(), properties, refresh_before_update: false });
        }
        create(self, ctx, &req.properties)
    }

    fn create_words(&self, ctx: &Context, mut req: CreateRequest, properties: Words) -> Result<Created> {
        if req.preview {
            req.properties = properties.into_map()?;
            return AnyResource::create(self, ctx, req);
        }
        create(self, ctx, &properties.map()?)
    }

    /// The returned inputs: see [`refreshed_inputs`].
    fn read(&self, ctx: &Context, req: ReadRequest) -> Result<ReadResponse> {
        if req.properties.is_empty() && req.inputs.is_empty() {
            return import(self, ctx, req.id);
        }
        let (state, decoded) = match state::<R::State>(&req.properties) {
            Ok(read) => read,
            // `Resource.get(name, id, hints)`: the engine sends the program's
            // hints as both the state and the inputs; hints that are not a
            // whole state are read by the ID alone. (A refresh of a resource
            // whose state is its inputs looks the same: its invalid state is
            // still named when it cannot be read by its ID.)
            Err(e) if req.inputs == req.properties => {
                return import(self, ctx, req.id).map_err(|unread| match unread {
                    Error::Unimplemented(why) => Error::invalid(format!("{e}; and {why}")),
                    other => other,
                });
            }
            Err(e) => return Err(e),
        };
        let Some((id, state)) = Resource::read(self, ctx, req.id, state)? else {
            return Ok(ReadResponse::default());
        };
        let properties = encode(&state, &decoded);
        let inputs = refreshed_inputs(&req.inputs, &properties, R::Inputs::properties(), R::State::properties());
        Ok(ReadResponse { id, properties, inputs, refresh_before_update: false })
    }

    fn update(&self, ctx: &Context, req: UpdateRequest) -> Result<Updated> {
        update(self, ctx, &req, &req.olds, &req.news)
    }

    fn update_words(&self, ctx: &Context, req: UpdateRequest, olds: Words, news: Words) -> Result<Updated> {
        update(self, ctx, &req, &olds.map()?, &news.map()?)
    }

    fn delete(&self, ctx: &Context, req: DeleteRequest) -> Result<()> {
        let (state, _) = state::<R::State>(&req.properties)?;
        Resource::delete(self, ctx, &req.id, state)
    }

    fn delete_words(&self, ctx: &Context, req: DeleteRequest, properties: Words) -> Result<()> {
        let (state, _) = state::<R::State>(&properties.map()?)?;
        Resource::delete(self, ctx, &req.id, state)
    }
}

impl<F: Function> AnyFunction for F {
    fn schema(&self, types: &mut Types) -> Json {
        schema::function(F::Args::DESCRIPTION, F::Args::properties(), F::Output::properties(), types)
    }

    /// Bad arguments are failures in the response, not errors; unknown ones too.
    fn invoke(&self, ctx: &Context, req: InvokeRequest) -> Result<InvokeResponse> {
        let mut args = req.args;
        normalize::<F::Args>(&mut args);
        let mut decoded = decode_with::<F::Args>(&args, true, true);
        let Some(args) = decoded.value.take() else {
            return Ok(InvokeResponse { outputs: PropertyMap::new(), failures: decoded.failures });
        };
        let failures = self.validate(&args);
        if !failures.is_empty() {
            return Ok(InvokeResponse { outputs: PropertyMap::new(), failures });
        }
        let mut outputs = Function::invoke(self, ctx, args)?.to_map();
        if decoded.had_secrets() {
            outputs.values_mut().for_each(|v| *v = Value::secret(std::mem::replace(v, Value::Null)));
        }
        Ok(InvokeResponse { outputs, failures: vec![] })
    }
}
