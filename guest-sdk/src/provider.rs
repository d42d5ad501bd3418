//! The `Provider` trait authors implement, and its request/response types.

use std::collections::BTreeMap;
use std::fmt;

use crate::fields::Outputs;
use crate::value::PropertyMap;
use crate::wire::read::Words;
use crate::wit::exports::pulumi::provider::resource_provider as rp;
use crate::wit::pulumi::provider::types as t;

pub use rp::{
    Autonaming, AutonamingMode, ConfigureResponse, Deployment, DiffChanges, DiffKind, DiffResponse, GetSchemaRequest,
    ListItem, ListResponse, Mapping, PackageRef, ParameterValue, ParameterizeRequest, PluginInfo, PropertyDiff,
};
pub use t::{Alias, AliasParent, AliasSpec, CheckFailure, MissingKey, ResourceHooks};

/// Input or output name -> URNs of the resources it depends on.
pub type Dependencies = BTreeMap<String, Vec<String>>;

/// For `check` and `check_config`.
#[derive(Clone, Debug)]
pub struct CheckRequest {
    pub urn: String,
    pub name: String,
    pub resource_type: String,
    pub olds: PropertyMap,
    pub news: PropertyMap,
    pub random_seed: Vec<u8>,
    pub autonaming: Option<Autonaming>,
    pub old_outputs: Option<PropertyMap>,
}

#[derive(Clone, Debug, Default)]
pub struct CheckResponse {
    pub inputs: PropertyMap,
    pub failures: Vec<CheckFailure>,
}

/// For `diff` and `diff_config`.
#[derive(Clone, Debug)]
pub struct DiffRequest {
    pub id: String,
    pub urn: String,
    pub name: String,
    pub resource_type: String,
    pub olds: PropertyMap,
    pub news: PropertyMap,
    pub old_inputs: PropertyMap,
    pub ignore_changes: Vec<String>,
}

#[derive(Clone, Debug)]
pub struct ConfigureRequest {
    pub variables: BTreeMap<String, String>,
    pub args: PropertyMap,
    pub id: String,
    pub urn: String,
    pub name: String,
    pub resource_type: String,
}

#[derive(Clone, Debug)]
pub struct InvokeRequest {
    pub token: String,
    pub args: PropertyMap,
    pub preview: bool,
}

#[derive(Clone, Debug, Default)]
pub struct InvokeResponse {
    pub outputs: PropertyMap,
    pub failures: Vec<CheckFailure>,
}

#[derive(Clone, Debug)]
pub struct CallRequest {
    pub token: String,
    pub args: PropertyMap,
    pub arg_dependencies: Dependencies,
    pub deployment: Deployment,
}

#[derive(Clone, Debug, Default)]
pub struct CallResponse {
    pub outputs: PropertyMap,
    pub return_dependencies: Dependencies,
    pub failures: Vec<CheckFailure>,
}

#[derive(Clone, Debug)]
pub struct CreateRequest {
    pub urn: String,
    pub name: String,
    pub resource_type: String,
    pub properties: PropertyMap,
    /// Seconds; 0 when unset.
    pub timeout: f64,
    /// True during a preview: return what is known, unknowns for the rest.
    pub preview: bool,
}

#[derive(Clone, Debug, Default)]
pub struct CreateResponse {
    pub id: String,
    pub properties: PropertyMap,
    pub refresh_before_update: bool,
}

/// [`CreateResponse`] as the export layers take it, so that a typed
/// resource's state goes to the wire without becoming a map first (not
/// part of the API; see [`Provider::create_outputs`]).
#[doc(hidden)]
#[derive(Clone, Debug)]
pub struct Created {
    pub id: String,
    pub properties: Outputs,
    pub refresh_before_update: bool,
}

impl From<CreateResponse> for Created {
    fn from(r: CreateResponse) -> Self {
        Created { id: r.id, properties: Outputs::Map(r.properties), refresh_before_update: r.refresh_before_update }
    }
}

impl From<Created> for CreateResponse {
    fn from(r: Created) -> Self {
        CreateResponse { id: r.id, properties: r.properties.into_map(), refresh_before_update: r.refresh_before_update }
    }
}

#[derive(Clone, Debug)]
pub struct ReadRequest {
    pub id: String,
    pub urn: String,
    pub name: String,
    pub resource_type: String,
    pub properties: PropertyMap,
    pub inputs: PropertyMap,
    pub timeout: f64,
}

/// An empty `id` says the resource no longer exists.
#[derive(Clone, Debug, Default)]
pub struct ReadResponse {
    pub id: String,
    pub properties: PropertyMap,
    pub inputs: PropertyMap,
    pub refresh_before_update: bool,
}

#[derive(Clone, Debug)]
pub struct UpdateRequest {
    pub id: String,
    pub urn: String,
    pub name: String,
    pub resource_type: String,
    pub olds: PropertyMap,
    pub news: PropertyMap,
    pub old_inputs: PropertyMap,
    pub timeout: f64,
    pub ignore_changes: Vec<String>,
    pub preview: bool,
}

#[derive(Clone, Debug, Default)]
pub struct UpdateResponse {
    pub properties: PropertyMap,
    pub refresh_before_update: bool,
}

/// [`UpdateResponse`] as the export layers take it (see [`Created`]).
#[doc(hidden)]
#[derive(Clone, Debug)]
pub struct Updated {
    pub properties: Outputs,
    pub refresh_before_update: bool,
}

impl From<UpdateResponse> for Updated {
    fn from(r: UpdateResponse) -> Self {
        Updated { properties: Outputs::Map(r.properties), refresh_before_update: r.refresh_before_update }
    }
}

impl From<Updated> for UpdateResponse {
    fn from(r: Updated) -> Self {
        UpdateResponse { properties: r.properties.into_map(), refresh_before_update: r.refresh_before_update }
    }
}

#[derive(Clone, Debug)]
pub struct DeleteRequest {
    pub id: String,
    pub urn: String,
    pub name: String,
    pub resource_type: String,
    pub properties: PropertyMap,
    pub old_inputs: PropertyMap,
    pub timeout: f64,
}

#[derive(Clone, Debug)]
pub struct ConstructRequest {
    pub deployment: Deployment,
    pub resource_type: String,
    pub name: String,
    pub parent: String,
    pub inputs: PropertyMap,
    pub input_dependencies: Dependencies,
    pub providers: BTreeMap<String, String>,
    pub dependencies: Vec<String>,
    pub protect: Option<bool>,
    pub additional_secret_outputs: Vec<String>,
    pub custom_timeouts: Option<rp::CustomTimeouts>,
    pub deleted_with: String,
    pub delete_before_replace: Option<bool>,
    pub ignore_changes: Vec<String>,
    pub replace_on_changes: Vec<String>,
    pub retain_on_delete: Option<bool>,
    /// Earlier identities of the component.
    pub aliases: Vec<Alias>,
    pub resource_hooks: Option<ResourceHooks>,
    /// URNs whose replacement replaces the component.
    pub replace_with: Vec<String>,
    /// A value whose change replaces the component.
    pub replacement_trigger: Option<crate::Value>,
}

#[derive(Clone, Debug, Default)]
pub struct ConstructResponse {
    pub urn: String,
    pub state: PropertyMap,
    pub state_dependencies: Dependencies,
}

#[derive(Clone, Debug)]
pub struct ListRequest {
    pub token: String,
    pub query: Option<PropertyMap>,
    pub limit: i64,
    pub page_size: i64,
    pub continuation_token: String,
}

/// A provider error; each case reaches the engine as one gRPC status code.
#[derive(Clone, Debug)]
pub enum Error {
    Unimplemented(String),
    InvalidArgument(String),
    NotFound(String),
    FailedPrecondition(String),
    Unavailable(String),
    Cancelled(String),
    Failed(String),
    MissingKeys(Vec<MissingKey>),
    /// The resource was created but could not be initialised: `properties`
    /// is recorded as its state so it is not leaked.
    InitFailed {
        id: String,
        properties: PropertyMap,
        inputs: Option<PropertyMap>,
        reasons: Vec<String>,
    },
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn unimplemented(what: &str) -> Self {
        Error::Unimplemented(format!("{what} is not implemented by this provider"))
    }
    pub fn invalid(msg: impl Into<String>) -> Self {
        Error::InvalidArgument(msg.into())
    }
    /// The error for a type token this provider does not know.
    pub fn unknown_type(token: &str) -> Self {
        Error::InvalidArgument(format!("unknown resource type '{token}'"))
    }
    pub fn unknown_function(token: &str) -> Self {
        Error::InvalidArgument(format!("unknown function '{token}'"))
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Unimplemented(m)
            | Error::InvalidArgument(m)
            | Error::NotFound(m)
            | Error::FailedPrecondition(m)
            | Error::Unavailable(m)
            | Error::Cancelled(m)
            | Error::Failed(m) => f.write_str(m),
            Error::MissingKeys(keys) => {
                let names: Vec<&str> = keys.iter().map(|k| k.name.as_str()).collect();
                write!(f, "missing required configuration: {}", names.join(", "))
            }
            Error::InitFailed { reasons, .. } => {
                write!(f, "resource created but not initialised: {}", reasons.join("; "))
            }
        }
    }
}

impl std::error::Error for Error {}

impl From<String> for Error {
    fn from(m: String) -> Self {
        Error::Failed(m)
    }
}

impl From<&str> for Error {
    fn from(m: &str) -> Self {
        Error::Failed(m.to_owned())
    }
}

impl DiffResponse {
    /// No changes.
    pub fn none() -> Self {
        DiffResponse {
            changes: DiffChanges::None,
            replaces: vec![],
            stables: vec![],
            delete_before_replace: false,
            diffs: vec![],
            detailed_diff: Some(vec![]),
        }
    }
}

impl PluginInfo {
    /// A package `name` at `version` (semver).
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        PluginInfo { name: name.into(), version: version.into(), supports_autonaming_configuration: false }
    }

    /// Says that `check` honours the engine's autonaming options
    /// ([`CheckRequest::autonaming`]): the host tells the engine at Handshake.
    pub fn with_autonaming(mut self) -> Self {
        self.supports_autonaming_configuration = true;
        self
    }
}

/// A Pulumi resource provider. Every method has a default, so an author
/// implements only what the provider supports; unsupported calls answer
/// `Unimplemented`.
///
/// The host may run several instances of a provider at once and replays
/// `parameterize` and `configure` into each: keep no state beyond what those
/// two calls set up.
pub trait Provider: Default + 'static {
    /// The package name and version.
    fn info(&self) -> PluginInfo;

    fn parameterize(&mut self, _req: ParameterizeRequest) -> Result<PackageRef> {
        Err(Error::unimplemented("parameterize"))
    }

    /// The package schema, as JSON.
    fn get_schema(&mut self, _req: GetSchemaRequest) -> Result<String> {
        Err(Error::unimplemented("get_schema"))
    }

    /// Validates provider configuration. Default: accept it as given.
    fn check_config(&mut self, req: CheckRequest) -> Result<CheckResponse> {
        Ok(CheckResponse { inputs: req.news, failures: vec![] })
    }

    /// Default: a structural diff of the inputs; no change forces a replacement.
    fn diff_config(&mut self, req: DiffRequest) -> Result<DiffResponse> {
        Ok(crate::diff::Differ::new().diff(&req.old_inputs, &req.news))
    }

    fn configure(&mut self, _req: ConfigureRequest) -> Result<ConfigureResponse> {
        Ok(ConfigureResponse { supports_autonaming_configuration: false })
    }

    fn invoke(&mut self, req: InvokeRequest) -> Result<InvokeResponse> {
        Err(Error::unknown_function(&req.token))
    }

    fn call(&mut self, _req: CallRequest) -> Result<CallResponse> {
        Err(Error::unimplemented("call"))
    }

    /// Validates and normalises resource inputs. Default: accept them as given.
    fn check(&mut self, req: CheckRequest) -> Result<CheckResponse> {
        Ok(CheckResponse { inputs: req.news, failures: vec![] })
    }

    /// Default: a structural diff of the old and new inputs; any change is an update.
    fn diff(&mut self, req: DiffRequest) -> Result<DiffResponse> {
        Ok(crate::diff::Differ::new().ignore(&req.ignore_changes).diff(&req.old_inputs, &req.news))
    }

    fn create(&mut self, _req: CreateRequest) -> Result<CreateResponse> {
        Err(Error::unimplemented("create"))
    }

    fn read(&mut self, _req: ReadRequest) -> Result<ReadResponse> {
        Err(Error::unimplemented("read"))
    }

    fn update(&mut self, _req: UpdateRequest) -> Result<UpdateResponse> {
        Err(Error::unimplemented("update"))
    }

    fn delete(&mut self, _req: DeleteRequest) -> Result<()> {
        Err(Error::unimplemented("delete"))
    }

    /// How the export layers call [`Provider::create`], with the properties
    /// still in words (`req`'s are empty): overridden by typed providers
    /// only, which read their inputs from the words where they lie and
    /// whose state needs no map on its way out. Not part of the API.
    #[doc(hidden)]
    fn create_outputs(&mut self, mut req: CreateRequest, properties: Words) -> Result<Created> {
        req.properties = properties.into_map()?;
        self.create(req).map(Created::from)
    }

    /// [`Provider::create_outputs`] for [`Provider::update`]: the maps
    /// still in words (`req`'s are empty). Not part of the API.
    #[doc(hidden)]
    fn update_outputs(
        &mut self,
        mut req: UpdateRequest,
        olds: Words,
        news: Words,
        old_inputs: Words,
    ) -> Result<Updated> {
        req.olds = olds.into_map()?;
        req.news = news.into_map()?;
        req.old_inputs = old_inputs.into_map()?;
        self.update(req).map(Updated::from)
    }

    /// How the export layers call [`Provider::delete`], with the maps still
    /// in words (`req`'s are empty). Not part of the API.
    #[doc(hidden)]
    fn delete_words(&mut self, mut req: DeleteRequest, properties: Words, old_inputs: Words) -> Result<()> {
        req.properties = properties.into_map()?;
        req.old_inputs = old_inputs.into_map()?;
        self.delete(req)
    }

    fn construct(&mut self, _req: ConstructRequest) -> Result<ConstructResponse> {
        Err(Error::unimplemented("construct"))
    }

    fn list(&mut self, _req: ListRequest) -> Result<ListResponse> {
        Err(Error::unimplemented("list"))
    }

    fn get_mapping(&mut self, _key: String, _provider: String) -> Result<Option<Mapping>> {
        Ok(None)
    }

    /// Default: unimplemented, as for every call a provider does not
    /// implement; the engine then asks [`Provider::get_mapping`] with an
    /// empty provider name.
    fn get_mappings(&mut self, _key: String) -> Result<Vec<String>> {
        Err(Error::unimplemented("get_mappings"))
    }

    /// The engine is shutting down: abandon long work.
    fn cancel(&mut self) {}
}
