//! Component providers: build a component in `construct`, and run its
//! methods in `call`, the way a Pulumi program does — register children
//! (custom resources and components) with a parent and options, wire the
//! outputs of one into the inputs of another, register the component's
//! outputs and return its state.
//!
//! ```ignore
//! fn construct(&mut self, req: ConstructRequest) -> Result<ConstructResponse> {
//!     let kennel = Component::new(&req)?;
//!     let inputs = component::inputs(&req);
//!     let pet = kennel.custom("random:index:RandomPet", "rex", [("length", inputs["size"].clone())].into(), kennel.child())?;
//!     kennel.finish([("petName".to_owned(), pet.output("id"))].into())
//! }
//! ```
//!
//! Values carry their secretness and dependencies as [`Value::Output`]s:
//! [`inputs`] wraps each input of the request with the URNs it depends on,
//! [`Resource::output`] names the resource an output came from, and every
//! function here turns them into what the monitor or the engine expects
//! (plain values plus dependency maps, or output values when the engine
//! accepts them). The monitor exists only during `construct` and `call`;
//! used at any other time, every function fails with `FailedPrecondition`.
//!
//! The host takes a registration or read only under the component (the
//! one `construct` registers, or in `call` the one the method is called on,
//! [`Component::from_call`]) or under a resource registered in the same
//! call, and an alias only of an earlier identity there.
//! [`Component::child`] gives that parent; a resource at the stack's top
//! level or under another of the user's resources is refused, since one the
//! user declared there may have the same URN.

use std::collections::{BTreeMap, BTreeSet};

use crate::provider::{
    CallRequest, CallResponse, CheckFailure, ConstructRequest, ConstructResponse, Dependencies, Error, Result,
};
use crate::value::{Output, PropertyMap, UnknownKind, Value};
use crate::wire::{decode_map, encode_map, encode_owned};
use crate::wit::pulumi::provider::monitor as m;
use crate::wit::pulumi::provider::types as t;

pub use m::{Alias, AliasParent, AliasSpec, CustomTimeouts};
pub use t::ResourceHooks;

/// Options of a registration. [`Component::child`] starts from the options a
/// child of the component needs (its parent and the providers the component
/// was given); the builder methods add to them.
#[derive(Clone, Debug, Default)]
pub struct Options {
    pub parent: String,
    pub provider: String,
    pub providers: BTreeMap<String, String>,
    pub depends_on: Vec<String>,
    pub protect: Option<bool>,
    pub ignore_changes: Vec<String>,
    pub aliases: Vec<Alias>,
    pub custom_timeouts: Option<CustomTimeouts>,
    pub delete_before_replace: Option<bool>,
    pub retain_on_delete: Option<bool>,
    pub deleted_with: String,
    pub replace_on_changes: Vec<String>,
    pub additional_secret_outputs: Vec<String>,
    pub version: String,
    pub plugin_download_url: String,
    pub import_id: String,
    pub resource_hooks: Option<ResourceHooks>,
    pub replace_with: Vec<String>,
    pub replacement_trigger: Option<Value>,
}

impl Options {
    pub fn parent(mut self, urn: impl Into<String>) -> Self {
        self.parent = urn.into();
        self
    }
    /// The provider reference (`urn::id`) of a custom resource.
    pub fn provider(mut self, reference: impl Into<String>) -> Self {
        self.provider = reference.into();
        self
    }
    pub fn depends_on(mut self, urn: impl Into<String>) -> Self {
        self.depends_on.push(urn.into());
        self
    }
    pub fn protect(mut self, protect: bool) -> Self {
        self.protect = Some(protect);
        self
    }
    pub fn ignore_changes(mut self, path: impl Into<String>) -> Self {
        self.ignore_changes.push(path.into());
        self
    }
    pub fn alias(mut self, alias: Alias) -> Self {
        self.aliases.push(alias);
        self
    }
    pub fn custom_timeouts(mut self, timeouts: CustomTimeouts) -> Self {
        self.custom_timeouts = Some(timeouts);
        self
    }
    pub fn delete_before_replace(mut self, yes: bool) -> Self {
        self.delete_before_replace = Some(yes);
        self
    }
    pub fn retain_on_delete(mut self, yes: bool) -> Self {
        self.retain_on_delete = Some(yes);
        self
    }
    pub fn deleted_with(mut self, urn: impl Into<String>) -> Self {
        self.deleted_with = urn.into();
        self
    }
    pub fn replace_on_changes(mut self, path: impl Into<String>) -> Self {
        self.replace_on_changes.push(path.into());
        self
    }
    pub fn additional_secret_output(mut self, key: impl Into<String>) -> Self {
        self.additional_secret_outputs.push(key.into());
        self
    }
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.version = version.into();
        self
    }
    pub fn resource_hooks(mut self, hooks: ResourceHooks) -> Self {
        self.resource_hooks = Some(hooks);
        self
    }
    /// Replace this resource whenever the resource `urn` is replaced.
    pub fn replace_with(mut self, urn: impl Into<String>) -> Self {
        self.replace_with.push(urn.into());
        self
    }
    /// Replace this resource whenever `trigger` changes.
    pub fn replacement_trigger(mut self, trigger: impl Into<Value>) -> Self {
        self.replacement_trigger = Some(trigger.into());
        self
    }

    /// The options a Construct request propagates to the component itself.
    pub fn from_construct(req: &ConstructRequest) -> Self {
        Options {
            parent: req.parent.clone(),
            providers: req.providers.clone(),
            depends_on: req.dependencies.clone(),
            protect: req.protect,
            ignore_changes: req.ignore_changes.clone(),
            custom_timeouts: req.custom_timeouts.as_ref().map(|t| CustomTimeouts {
                create: t.create.clone(),
                update: t.update.clone(),
                delete: t.delete.clone(),
                read: t.read.clone(),
            }),
            delete_before_replace: req.delete_before_replace,
            retain_on_delete: req.retain_on_delete,
            deleted_with: req.deleted_with.clone(),
            replace_on_changes: req.replace_on_changes.clone(),
            additional_secret_outputs: req.additional_secret_outputs.clone(),
            aliases: req.aliases.clone(),
            resource_hooks: req.resource_hooks.clone(),
            replace_with: req.replace_with.clone(),
            replacement_trigger: req.replacement_trigger.clone(),
            ..Options::default()
        }
    }
}

/// A resource the engine registered.
#[derive(Clone, Debug)]
pub struct Resource {
    pub urn: String,
    /// Empty for components, and during a preview for resources not created yet.
    pub id: String,
    /// The state, each property an output value (secretness, known-ness, dependencies).
    pub state: PropertyMap,
    /// Registered during a preview: a property the engine did not return is
    /// not known yet, rather than absent. [`Component`]'s methods set it.
    pub preview: bool,
}

impl Resource {
    /// The property `key` as an input for another resource or the
    /// component's outputs: secret if it is, unknown if it is, and depending
    /// on this resource. `id` and `urn` are the resource's own when its
    /// state has no such property. A property the state lacks is unknown in
    /// a preview (the engine leaves out what the provider has not computed),
    /// null otherwise.
    pub fn output(&self, key: &str) -> Value {
        let known = |v: Value| Some(Box::new(v));
        let (value, secret, mut dependencies) = match self.state.get(key) {
            Some(Value::Output(o)) => (o.value.clone(), o.secret, o.dependencies.clone()),
            Some(Value::Secret(v)) => (Some(v.clone()), true, vec![]),
            Some(v) => (known(v.clone()), false, vec![]),
            None if key == "id" && !self.id.is_empty() => (known(self.id.as_str().into()), false, vec![]),
            None if key == "urn" => (known(self.urn.as_str().into()), false, vec![]),
            None if self.preview => (None, false, vec![]),
            None => (known(Value::Null), false, vec![]),
        };
        if !dependencies.contains(&self.urn) {
            dependencies.push(self.urn.clone());
        }
        Value::Output(Output { value, secret, dependencies })
    }

    /// The plain value of `key` (secret and output wrappers removed), if known.
    pub fn get(&self, key: &str) -> Option<&Value> {
        let v = self.state.get(key)?.plain();
        (!matches!(v, Value::Output(_) | Value::Unknown(_))).then_some(v)
    }
}

/// The component a `construct` builds: registered with the options of the
/// request, parent of the resources registered through it.
#[derive(Clone, Debug)]
pub struct Component {
    pub urn: String,
    providers: BTreeMap<String, String>,
    accepts_output_values: bool,
    /// The deployment is a preview (`dry_run`).
    preview: bool,
}

impl Component {
    /// Registers the component named by `req` (its type, name, parent and
    /// the options the engine propagated).
    pub fn new(req: &ConstructRequest) -> Result<Component> {
        let r =
            register_resource(&req.resource_type, &req.name, false, &PropertyMap::new(), Options::from_construct(req))?;
        Ok(Component {
            urn: r.urn,
            providers: req.providers.clone(),
            accepts_output_values: req.deployment.accepts_output_values,
            preview: req.deployment.dry_run,
        })
    }

    /// The component `self_ref` of a Call (its `__self__` argument).
    pub fn from_call(req: &CallRequest) -> Result<Component> {
        let urn = match req.args.get("__self__").map(Value::plain) {
            Some(Value::ResourceRef(r)) => r.urn.clone(),
            Some(Value::String(urn)) => urn.clone(),
            _ => return Err(Error::invalid(format!("{} is a method: it needs `__self__`", req.token))),
        };
        Ok(Component { urn, providers: BTreeMap::new(), accepts_output_values: false, preview: req.deployment.dry_run })
    }

    /// Options for a child: this component as parent, its providers.
    pub fn child(&self) -> Options {
        Options { parent: self.urn.clone(), providers: self.providers.clone(), ..Options::default() }
    }

    /// Registers a custom resource (one a provider manages).
    pub fn custom(&self, type_: &str, name: &str, inputs: PropertyMap, options: Options) -> Result<Resource> {
        let r = register_resource(type_, name, true, &inputs, options)?;
        Ok(Resource { preview: self.preview, ..r })
    }

    /// Registers a child component.
    pub fn component(&self, type_: &str, name: &str, inputs: PropertyMap, options: Options) -> Result<Resource> {
        let r = register_resource(type_, name, false, &inputs, options)?;
        Ok(Resource { preview: self.preview, ..r })
    }

    /// Registers the component's outputs and returns its state for the
    /// engine: output values if it accepts them, else plain values and
    /// state dependencies.
    pub fn finish(self, outputs: PropertyMap) -> Result<ConstructResponse> {
        register_outputs(&self.urn, &outputs)?;
        let (plain, state_dependencies) = flatten(&outputs);
        let state = if self.accepts_output_values { as_outputs(&outputs) } else { plain };
        Ok(ConstructResponse { urn: self.urn, state, state_dependencies })
    }
}

/// The inputs of a Construct with their dependencies: each input is an
/// output value depending on what `input_dependencies` lists for it.
pub fn inputs(req: &ConstructRequest) -> PropertyMap {
    with_dependencies(&req.inputs, &req.input_dependencies)
}

/// The arguments of a Call with their dependencies (`arg_dependencies`).
pub fn args(req: &CallRequest) -> PropertyMap {
    with_dependencies(&req.args, &req.arg_dependencies)
}

/// The result of a Call: plain values and, for each, the URNs it depends on.
pub fn call_response(outputs: PropertyMap) -> CallResponse {
    let (outputs, return_dependencies) = flatten(&outputs);
    CallResponse { outputs, return_dependencies, failures: vec![] }
}

/// A function's result from [`invoke`].
#[derive(Clone, Debug, Default)]
pub struct InvokeResult {
    pub outputs: PropertyMap,
    pub failures: Vec<CheckFailure>,
}

/// Registers a resource through the monitor. Inputs may hold output values:
/// their dependencies become the registration's dependencies. The
/// resource's `preview` is left false; [`Component::custom`] sets it.
pub fn register_resource(
    type_: &str,
    name: &str,
    custom: bool,
    inputs: &PropertyMap,
    options: Options,
) -> Result<Resource> {
    let (object, property_dependencies) = flatten(inputs);
    let mut dependencies: BTreeSet<String> = options.depends_on.iter().cloned().collect();
    dependencies.extend(property_dependencies.values().flatten().cloned());
    let request = m::RegisterResourceRequest {
        type_: type_.to_owned(),
        name: name.to_owned(),
        custom,
        remote: false,
        object: encode_map(&object),
        options: m::ResourceOptions {
            parent: options.parent,
            provider: options.provider,
            providers: options.providers.into_iter().collect(),
            dependencies: dependencies.into_iter().collect(),
            property_dependencies: property_dependencies.into_iter().collect(),
            protect: options.protect,
            ignore_changes: options.ignore_changes,
            aliases: options.aliases,
            custom_timeouts: options.custom_timeouts,
            delete_before_replace: options.delete_before_replace,
            retain_on_delete: options.retain_on_delete,
            deleted_with: options.deleted_with,
            replace_on_changes: options.replace_on_changes,
            additional_secret_outputs: options.additional_secret_outputs,
            version: options.version,
            plugin_download_url: options.plugin_download_url,
            import_id: options.import_id,
            resource_hooks: options.resource_hooks,
            replace_with: options.replace_with,
            replacement_trigger: options.replacement_trigger.map(encode_owned),
        },
        accepts_output_values: true,
    };
    let r = imports::register_resource(&request).map_err(sdk_error)?;
    Ok(Resource { urn: r.urn, id: r.id, state: map(r.object)?, preview: false })
}

/// Registers the final outputs of a component.
pub fn register_outputs(urn: &str, outputs: &PropertyMap) -> Result<()> {
    let (plain, _) = flatten(outputs);
    imports::register_resource_outputs(urn, &encode_map(&plain)).map_err(sdk_error)
}

/// Runs a provider function through the engine (`provider` empty for the default).
pub fn invoke(token: &str, args: &PropertyMap, provider: &str) -> Result<InvokeResult> {
    let (args, _) = flatten(args);
    let request = m::InvokeRequest {
        token: token.to_owned(),
        args: encode_map(&args),
        provider: provider.to_owned(),
        version: String::new(),
    };
    let r = imports::invoke(&request).map_err(sdk_error)?;
    Ok(InvokeResult { outputs: map(r.return_)?, failures: r.failures })
}

/// Reads an existing resource into the deployment without managing it.
pub fn read_resource(
    type_: &str,
    name: &str,
    id: &str,
    properties: &PropertyMap,
    options: Options,
) -> Result<Resource> {
    let (properties, deps) = flatten(properties);
    let mut dependencies: BTreeSet<String> = options.depends_on.iter().cloned().collect();
    dependencies.extend(deps.values().flatten().cloned());
    let request = m::ReadResourceRequest {
        id: id.to_owned(),
        type_: type_.to_owned(),
        name: name.to_owned(),
        parent: options.parent,
        properties: encode_map(&properties),
        dependencies: dependencies.into_iter().collect(),
        provider: options.provider,
        version: options.version,
        additional_secret_outputs: options.additional_secret_outputs,
    };
    let r = imports::read_resource(&request).map_err(sdk_error)?;
    Ok(Resource { urn: r.urn, id: id.to_owned(), state: map(r.properties)?, preview: false })
}

fn map(v: t::Value) -> Result<PropertyMap> {
    decode_map(v).map_err(|e| Error::Failed(format!("the resource monitor's answer is malformed: {e}")))
}

fn sdk_error(e: t::Error) -> Error {
    match e {
        t::Error::Unimplemented(m) => Error::Unimplemented(m),
        t::Error::InvalidArgument(m) => Error::InvalidArgument(m),
        t::Error::NotFound(m) => Error::NotFound(m),
        t::Error::FailedPrecondition(m) => Error::FailedPrecondition(m),
        t::Error::Unavailable(m) => Error::Unavailable(m),
        t::Error::Cancelled(m) => Error::Cancelled(m),
        t::Error::Failed(m) => Error::Failed(m),
        t::Error::MissingKeys(k) => Error::MissingKeys(k),
        t::Error::InitFailed(f) => Error::Failed(f.reasons.join("; ")),
    }
}

fn with_dependencies(values: &PropertyMap, deps: &Dependencies) -> PropertyMap {
    values
        .iter()
        .map(|(k, v)| {
            let extra = deps.get(k).cloned().unwrap_or_default();
            let out = match v {
                Value::Output(o) => {
                    let mut o = o.clone();
                    for d in extra {
                        if !o.dependencies.contains(&d) {
                            o.dependencies.push(d);
                        }
                    }
                    o
                }
                Value::Secret(inner) => Output { value: Some(inner.clone()), secret: true, dependencies: extra },
                Value::Unknown(_) => Output { value: None, secret: false, dependencies: extra },
                other => Output { value: Some(Box::new(other.clone())), secret: false, dependencies: extra },
            };
            (k.clone(), Value::Output(out))
        })
        .collect()
}

/// Output values become plain values (secret stays secret, unknown stays
/// unknown); the URNs each top-level property depends on are returned beside.
pub fn flatten(values: &PropertyMap) -> (PropertyMap, Dependencies) {
    let mut deps = Dependencies::new();
    let plain = values
        .iter()
        .map(|(k, v)| {
            let mut found = BTreeSet::new();
            let v = strip(v, &mut found);
            if !found.is_empty() {
                deps.insert(k.clone(), found.into_iter().collect());
            }
            (k.clone(), v)
        })
        .collect();
    (plain, deps)
}

fn strip(v: &Value, deps: &mut BTreeSet<String>) -> Value {
    match v {
        Value::Output(o) => {
            deps.extend(o.dependencies.iter().cloned());
            let inner = match &o.value {
                Some(v) => strip(v, deps),
                None => Value::Unknown(UnknownKind::String),
            };
            if o.secret { Value::secret(inner) } else { inner }
        }
        Value::Secret(inner) => Value::secret(strip(inner, deps)),
        Value::Array(a) => Value::Array(a.iter().map(|v| strip(v, deps)).collect()),
        Value::Object(m) => Value::Object(m.iter().map(|(k, v)| (k.clone(), strip(v, deps))).collect()),
        other => other.clone(),
    }
}

/// Each top-level property as one output value with everything it depends on.
fn as_outputs(values: &PropertyMap) -> PropertyMap {
    values
        .iter()
        .map(|(k, v)| {
            let mut deps = BTreeSet::new();
            let plain = strip(v, &mut deps);
            let (value, secret) = match plain {
                Value::Secret(inner) => (Some(inner), true),
                Value::Unknown(_) => (None, false),
                other => (Some(Box::new(other)), false),
            };
            (k.clone(), Value::Output(Output { value, secret, dependencies: deps.into_iter().collect() }))
        })
        .collect()
}

/// The host's monitor functions; a native build has no monitor.
mod imports {
    #[cfg(not(target_arch = "wasm32"))]
    use super::{m, t};

    #[cfg(target_arch = "wasm32")]
    pub use super::m::{invoke, read_resource, register_resource, register_resource_outputs};

    #[cfg(not(target_arch = "wasm32"))]
    fn absent<T>() -> Result<T, t::Error> {
        Err(t::Error::FailedPrecondition("the resource monitor exists only in a WebAssembly component".into()))
    }
    #[cfg(not(target_arch = "wasm32"))]
    pub fn register_resource(_: &m::RegisterResourceRequest) -> Result<m::RegisterResourceResponse, t::Error> {
        absent()
    }
    #[cfg(not(target_arch = "wasm32"))]
    pub fn register_resource_outputs(_: &str, _: &t::Value) -> Result<(), t::Error> {
        absent()
    }
    #[cfg(not(target_arch = "wasm32"))]
    pub fn invoke(_: &m::InvokeRequest) -> Result<m::InvokeResponse, t::Error> {
        absent()
    }
    #[cfg(not(target_arch = "wasm32"))]
    pub fn read_resource(_: &m::ReadResourceRequest) -> Result<m::ReadResourceResponse, t::Error> {
        absent()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out(v: Value, secret: bool, deps: &[&str]) -> Value {
        Value::Output(Output {
            value: Some(Box::new(v)),
            secret,
            dependencies: deps.iter().map(|d| d.to_string()).collect(),
        })
    }

    #[test]
    fn flatten_keeps_secrets_and_unknowns_and_collects_dependencies() {
        let unknown = Value::Output(Output { value: None, secret: false, dependencies: vec!["u".into()] });
        let values = PropertyMap::from([
            ("a".to_owned(), out("x".into(), true, &["d1"])),
            ("b".to_owned(), Value::Array(vec![out(1.0.into(), false, &["d2"]), out(2.0.into(), false, &["d1"])])),
            ("c".to_owned(), unknown),
            ("d".to_owned(), Value::secret("plain")),
        ]);
        let (plain, deps) = flatten(&values);
        assert_eq!(plain["a"], Value::secret("x"));
        assert_eq!(plain["b"], Value::Array(vec![1.0.into(), 2.0.into()]));
        assert_eq!(plain["c"], Value::Unknown(UnknownKind::String));
        assert_eq!(plain["d"], Value::secret("plain"));
        assert_eq!(deps["a"], ["d1"]);
        assert_eq!(deps["b"], ["d1", "d2"]);
        assert_eq!(deps["c"], ["u"]);
        assert!(!deps.contains_key("d"));
    }

    #[test]
    fn inputs_carry_their_dependencies_and_secretness() {
        let values = PropertyMap::from([
            ("s".to_owned(), Value::secret("x")),
            ("n".to_owned(), Value::Number(1.0)),
            ("u".to_owned(), Value::Unknown(UnknownKind::Number)),
        ]);
        let deps = Dependencies::from([("s".to_owned(), vec!["urn:a".to_owned()])]);
        let wrapped = with_dependencies(&values, &deps);
        assert_eq!(wrapped["s"], out("x".into(), true, &["urn:a"]));
        assert_eq!(wrapped["n"], out(1.0.into(), false, &[]));
        assert_eq!(wrapped["u"], Value::Output(Output { value: None, secret: false, dependencies: vec![] }));
    }

    #[test]
    fn state_as_output_values_lifts_secrets_to_the_top() {
        let values = PropertyMap::from([("a".to_owned(), out(Value::secret("x"), false, &["d"]))]);
        assert_eq!(as_outputs(&values)["a"], out("x".into(), true, &["d"]));
    }

    #[test]
    fn a_resource_output_depends_on_the_resource() {
        let r = Resource {
            urn: "urn:r".into(),
            id: "i-1".into(),
            state: PropertyMap::from([("k".to_owned(), out("v".into(), true, &["urn:in"]))]),
            preview: false,
        };
        assert_eq!(r.output("k"), out("v".into(), true, &["urn:in", "urn:r"]));
        assert_eq!(r.get("k"), Some(&Value::String("v".into())));
        assert_eq!(r.output("missing"), out(Value::Null, false, &["urn:r"]));
        assert_eq!(
            (r.output("id"), r.output("urn")),
            (out("i-1".into(), false, &["urn:r"]), out("urn:r".into(), false, &["urn:r"]))
        );
        // In a preview, what the engine left out is not known yet, the id of a resource to be created too.
        let previewed = Resource { id: String::new(), preview: true, ..r };
        let unknown = Value::Output(Output { value: None, secret: false, dependencies: vec!["urn:r".into()] });
        assert_eq!((previewed.output("missing"), previewed.output("id")), (unknown.clone(), unknown));
        assert_eq!(previewed.output("k"), out("v".into(), true, &["urn:in", "urn:r"]));
    }
}
