//! The registry: a [`Builder`] collects resources, functions and the
//! configuration type; [`Typed`] serves them as a [`Provider`].

use std::any::Any;
use std::collections::BTreeMap;
use std::marker::PhantomData;

use serde_json::{Map, json};

use super::adapt::{AnyFunction, AnyResource};
use super::decode::{decode_state, describe};
use super::resource::{Context, Function, Resource};
use super::schema::{self, Json, Types};
use super::types::{Object, Property, normalize};
use crate::diff::Differ;
use crate::provider::*;
use crate::value::{PropertyMap, Value};
use crate::wire::read::Words;

/// A decoded configuration; `None` while some value is unknown (previews).
type AnyConfig = Option<Box<dyn Any>>;

/// The configuration type, erased.
struct ConfigType {
    properties: fn() -> &'static [Property],
    check: fn(&str, PropertyMap) -> CheckResponse,
    diff: fn(&DiffRequest) -> DiffResponse,
    decode: fn(&PropertyMap) -> Result<AnyConfig>,
}

/// Collects what a provider serves; see [`Package`].
pub struct Builder {
    name: String,
    version: String,
    metadata: Map<String, Json>,
    resources: BTreeMap<&'static str, Box<dyn AnyResource>>,
    functions: BTreeMap<&'static str, Box<dyn AnyFunction>>,
    config: Option<ConfigType>,
}

impl Builder {
    /// A package `name` at `version` (usually `env!("CARGO_PKG_VERSION")`).
    pub fn new(name: &str, version: &str) -> Self {
        Builder {
            name: name.to_owned(),
            version: version.to_owned(),
            metadata: Map::new(),
            resources: BTreeMap::new(),
            functions: BTreeMap::new(),
            config: None,
        }
    }

    pub fn resource<R: Resource>(mut self, resource: R) -> Self {
        let dup = self.resources.insert(R::TOKEN, Box::new(resource));
        assert!(dup.is_none(), "resource {} registered twice", R::TOKEN);
        self
    }

    pub fn function<F: Function>(mut self, function: F) -> Self {
        no_autoname::<F::Args>(F::TOKEN);
        let dup = self.functions.insert(F::TOKEN, Box::new(function));
        assert!(dup.is_none(), "function {} registered twice", F::TOKEN);
        self
    }

    /// The provider configuration: checked by CheckConfig, decoded by
    /// Configure, then available to every call as `ctx.config::<C>()`.
    pub fn config<C: Object + 'static>(mut self) -> Self {
        no_autoname::<C>("the provider configuration");
        self.config = Some(ConfigType {
            properties: C::properties,
            check: check_config::<C>,
            diff: diff_config::<C>,
            decode: configure::<C>,
        });
        self
    }

    /// Any top-level schema field (`meta`, `language`, `pluginDownloadURL`, ...).
    pub fn schema_field(mut self, key: &str, value: Json) -> Self {
        self.metadata.insert(key.to_owned(), value);
        self
    }

    pub fn display_name(self, s: &str) -> Self {
        self.schema_field("displayName", json!(s))
    }

    pub fn description(self, s: &str) -> Self {
        self.schema_field("description", json!(s))
    }

    pub fn keywords(self, k: &[&str]) -> Self {
        self.schema_field("keywords", json!(k))
    }

    pub fn license(self, s: &str) -> Self {
        self.schema_field("license", json!(s))
    }

    pub fn repository(self, s: &str) -> Self {
        self.schema_field("repository", json!(s))
    }

    /// The package schema, as JSON.
    pub fn schema(&self) -> String {
        let mut types = Types::new(&self.name);
        let mut s = Map::new();
        s.insert("name".into(), json!(self.name));
        s.insert("version".into(), json!(self.version));
        s.extend(self.metadata.clone());
        if let Some(c) = &self.config {
            let (config, provider) = schema::config((c.properties)(), &mut types);
            s.insert("config".into(), config);
            s.insert("provider".into(), provider);
        }
        let resources: Map<String, Json> =
            self.resources.iter().map(|(t, r)| (t.to_string(), r.schema(&mut types))).collect();
        let functions: Map<String, Json> =
            self.functions.iter().map(|(t, f)| (t.to_string(), f.schema(&mut types))).collect();
        s.insert("resources".into(), Json::Object(resources));
        s.insert("functions".into(), Json::Object(functions));
        let defs = types.into_defs();
        if !defs.is_empty() {
            s.insert("types".into(), Json::Object(defs.into_iter().collect()));
        }
        serde_json::to_string_pretty(&Json::Object(s)).expect("a schema is JSON")
    }
}

/// `autoname` marks a resource's name, which only a resource's Check
/// fills: elsewhere the schema would call it optional and nothing would
/// fill it, so that is refused as a duplicate registration is.
fn no_autoname<T: Object>(what: &str) {
    if let Some(p) = T::properties().iter().find(|p| p.autoname) {
        panic!("`autoname` on {}.{} of {what}: it marks a resource's name, in its inputs", T::NAME, p.name);
    }
}

/// Stack configuration arrives as strings: parse those of non-string
/// properties as JSON, inside their secret when set with `--secret`.
fn coerce<C: Object>(m: &mut PropertyMap) {
    let mut types = Types::new("");
    for p in C::properties() {
        let Some(v) = m.get_mut(p.name) else { continue };
        let v = match v {
            Value::Secret(inner) => &mut **inner,
            v => v,
        };
        let Value::String(s) = v else { continue };
        let spec = (p.schema)(&mut types);
        if types.parsed_from_text(&spec)
            && let Ok(j) = serde_json::from_str(s)
        {
            *v = crate::serde::from_json(j);
        }
    }
}

/// Keys the engine adds (such as `version`) are not failures. Nor are other
/// keys the provider does not declare (a stack's configuration may hold
/// them for other readers), but each is named in a warning: a misspelled
/// optional key would otherwise be ignored without a word.
fn check_config<C: Object>(urn: &str, mut news: PropertyMap) -> CheckResponse {
    coerce::<C>(&mut news);
    normalize::<C>(&mut news);
    let props = C::properties();
    let unknown: Vec<&str> =
        news.keys().map(String::as_str).filter(|k| *k != "version" && !props.iter().any(|p| p.name == *k)).collect();
    if !unknown.is_empty() {
        let known: Vec<&str> = props.iter().map(|p| p.name).collect();
        crate::log::for_urn(urn).warn(&format!(
            "configuration {} is not one this provider reads (it reads: {})",
            unknown.iter().map(|k| format!("{k:?}")).collect::<Vec<_>>().join(", "),
            known.join(", ")
        ));
    }
    let failures = decode_state::<C>(&news).failures;
    CheckResponse { inputs: news, failures }
}

/// A change to a `replace_on_changes` setting (a region: what the old
/// configuration made is out of the new one's reach) replaces the provider,
/// and with it every resource it manages; other changes update it.
fn diff_config<C: Object>(req: &DiffRequest) -> DiffResponse {
    let olds = if req.old_inputs.is_empty() { &req.olds } else { &req.old_inputs };
    Differ::new().replace_on_changes(&C::resource_replace_paths()).ignore(&req.ignore_changes).diff(olds, &req.news)
}

fn configure<C: Object + 'static>(args: &PropertyMap) -> Result<AnyConfig> {
    let mut args = args.clone();
    // Kept for every later call, so no text may stay behind a handle of this one.
    args.values_mut().for_each(Value::read_held_texts);
    coerce::<C>(&mut args);
    normalize::<C>(&mut args);
    let decoded = decode_state::<C>(&args);
    let (missing, other): (Vec<_>, Vec<_>) =
        decoded.failures.into_iter().partition(|f| f.reason == "is required" && !f.property.contains(['.', '[']));
    if !missing.is_empty() {
        let props = C::properties();
        let description = |name: &str| props.iter().find(|p| p.name == name).map(|p| p.description.to_owned());
        return Err(Error::MissingKeys(
            missing
                .into_iter()
                .map(|f| MissingKey { description: description(&f.property).unwrap_or_default(), name: f.property })
                .collect(),
        ));
    }
    if !other.is_empty() {
        return Err(Error::invalid(format!("invalid configuration: {}", describe(&other))));
    }
    Ok(decoded.value.map(|c| Box::new(c) as Box<dyn Any>))
}

/// What a typed provider builds: implement it on a marker type and export
/// `Typed<ThatType>`.
///
/// ```ignore
/// struct Random;
/// impl Package for Random {
///     fn build() -> Builder {
///         Builder::new("random", env!("CARGO_PKG_VERSION")).resource(RandomString).function(RandomInteger)
///     }
/// }
/// pulumi_wasm_sdk::export_provider!(Typed<Random>);
/// ```
pub trait Package: 'static {
    fn build() -> Builder;
}

/// A [`Provider`] serving a [`Package`]'s resources and functions, dispatched by token.
pub struct Typed<P> {
    builder: Builder,
    config: AnyConfig,
    package: PhantomData<fn() -> P>,
}

impl<P: Package> Default for Typed<P> {
    fn default() -> Self {
        Typed { builder: P::build(), config: None, package: PhantomData }
    }
}

impl<P> Typed<P> {
    fn resource(&self, token: &str) -> Result<&dyn AnyResource> {
        self.builder.resources.get(token).map(|r| r.as_ref()).ok_or_else(|| Error::unknown_type(token))
    }

    fn ctx(&self, urn: &str, name: &str, token: &str, timeout: f64) -> Context<'_> {
        Context {
            urn: urn.to_owned(),
            name: name.to_owned(),
            token: token.to_owned(),
            timeout,
            config: self.config.as_deref(),
            secrets: Default::default(),
        }
    }
}

impl<P: Package> Provider for Typed<P> {
    /// Says it takes the engine's autonaming options when a resource names
    /// itself (`#[pulumi(autoname)]`).
    fn info(&self) -> PluginInfo {
        let info = PluginInfo::new(&self.builder.name, &self.builder.version);
        if self.builder.resources.values().any(|r| r.autonames()) { info.with_autonaming() } else { info }
    }

    fn get_schema(&mut self, _req: GetSchemaRequest) -> Result<String> {
        Ok(self.builder.schema())
    }

    fn check_config(&mut self, req: CheckRequest) -> Result<CheckResponse> {
        Ok(match &self.builder.config {
            Some(c) => (c.check)(&req.urn, req.news),
            None => CheckResponse { inputs: req.news, failures: vec![] },
        })
    }

    fn diff_config(&mut self, req: DiffRequest) -> Result<DiffResponse> {
        Ok(match &self.builder.config {
            Some(c) => (c.diff)(&req),
            None => Differ::new().diff(&req.old_inputs, &req.news),
        })
    }

    fn configure(&mut self, req: ConfigureRequest) -> Result<ConfigureResponse> {
        if let Some(c) = &self.builder.config {
            // The engine prints each missing key into `pulumi config set <name> <value>`:
            // a provider's keys are set with its package's prefix.
            let package = &self.builder.name;
            self.config = (c.decode)(&req.args).map_err(|e| match e {
                Error::MissingKeys(keys) => Error::MissingKeys(
                    keys.into_iter().map(|k| MissingKey { name: format!("{package}:{}", k.name), ..k }).collect(),
                ),
                e => e,
            })?;
        }
        Ok(ConfigureResponse { supports_autonaming_configuration: self.info().supports_autonaming_configuration })
    }

    fn check(&mut self, req: CheckRequest) -> Result<CheckResponse> {
        let ctx = self.ctx(&req.urn, &req.name, &req.resource_type, 0.0);
        self.resource(&req.resource_type)?.check(&ctx, req)
    }

    fn diff(&mut self, req: DiffRequest) -> Result<DiffResponse> {
        let ctx = self.ctx(&req.urn, &req.name, &req.resource_type, 0.0);
        self.resource(&req.resource_type)?.diff(&ctx, req)
    }

    fn create(&mut self, req: CreateRequest) -> Result<CreateResponse> {
        let ctx = self.ctx(&req.urn, &req.name, &req.resource_type, req.timeout);
        self.resource(&req.resource_type)?.create(&ctx, req).map(CreateResponse::from)
    }

    fn create_outputs(&mut self, req: CreateRequest, properties: Words) -> Result<Created> {
        let ctx = self.ctx(&req.urn, &req.name, &req.resource_type, req.timeout);
        self.resource(&req.resource_type)?.create_words(&ctx, req, properties)
    }

    fn read(&mut self, req: ReadRequest) -> Result<ReadResponse> {
        let ctx = self.ctx(&req.urn, &req.name, &req.resource_type, req.timeout);
        self.resource(&req.resource_type)?.read(&ctx, req)
    }

    fn update(&mut self, req: UpdateRequest) -> Result<UpdateResponse> {
        let ctx = self.ctx(&req.urn, &req.name, &req.resource_type, req.timeout);
        self.resource(&req.resource_type)?.update(&ctx, req).map(UpdateResponse::from)
    }

    /// The old inputs are not read: a typed update starts from the state.
    fn update_outputs(&mut self, req: UpdateRequest, olds: Words, news: Words, _old_inputs: Words) -> Result<Updated> {
        let ctx = self.ctx(&req.urn, &req.name, &req.resource_type, req.timeout);
        self.resource(&req.resource_type)?.update_words(&ctx, req, olds, news)
    }

    fn delete(&mut self, req: DeleteRequest) -> Result<()> {
        let ctx = self.ctx(&req.urn, &req.name, &req.resource_type, req.timeout);
        self.resource(&req.resource_type)?.delete(&ctx, req)
    }

    /// The old inputs are not read: a typed delete needs only the state.
    fn delete_words(&mut self, req: DeleteRequest, properties: Words, _old_inputs: Words) -> Result<()> {
        let ctx = self.ctx(&req.urn, &req.name, &req.resource_type, req.timeout);
        self.resource(&req.resource_type)?.delete_words(&ctx, req, properties)
    }

    fn invoke(&mut self, req: InvokeRequest) -> Result<InvokeResponse> {
        let function =
            self.builder.functions.get(req.token.as_str()).ok_or_else(|| Error::unknown_function(&req.token))?;
        let ctx = self.ctx("", "", &req.token, 0.0);
        function.invoke(&ctx, req)
    }
}
