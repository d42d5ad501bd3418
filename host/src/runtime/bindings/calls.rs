//! One face for a component of any supported contract version: its
//! pre-instantiation, its instance, and the calls of its `resource-provider`
//! export, in `latest`'s types.

use wasmtime::AsContextMut;
use wasmtime::component::InstancePre;
use wasmtime::component::types::ComponentItem;

use super::adapt::{Down, Up};
use super::{rp, types, v0_1_0, v0_2_0, v0_3};

type Guest01 = v0_1_0::exports::pulumi::provider::resource_provider::Guest;
type Guest02 = v0_2_0::exports::pulumi::provider::resource_provider::Guest;
type Guest03 = v0_3::exports::pulumi::provider::resource_provider::Guest;

/// A linked component, ready to instantiate, by the version it exports.
pub enum ProviderPre<T: 'static> {
    Latest(v0_3::ProviderPre<T>),
    V0_2(v0_2_0::ProviderPre<T>),
    V0_1(v0_1_0::ProviderPre<T>),
}

impl<T: Send + 'static> ProviderPre<T> {
    /// Checks the component's exports against each version, newest first.
    /// When none fits, the error is that of the version the component
    /// names (the newest when it names none we know).
    pub fn new(pre: InstancePre<T>) -> wasmtime::Result<Self> {
        let latest = match v0_3::ProviderPre::new(pre.clone()) {
            Ok(p) => return Ok(ProviderPre::Latest(p)),
            Err(e) => e,
        };
        if exports_version(&pre, "0.2.") {
            return v0_2_0::ProviderPre::new(pre).map(ProviderPre::V0_2);
        }
        let names_old = exports_version(&pre, "0.1.");
        v0_1_0::ProviderPre::new(pre).map(ProviderPre::V0_1).map_err(|old| if names_old { old } else { latest })
    }

    pub async fn instantiate_async(&self, store: impl AsContextMut<Data = T>) -> wasmtime::Result<Provider> {
        match self {
            ProviderPre::Latest(p) => p.instantiate_async(store).await.map(Provider::Latest),
            ProviderPre::V0_2(p) => p.instantiate_async(store).await.map(Provider::V0_2),
            ProviderPre::V0_1(p) => p.instantiate_async(store).await.map(Provider::V0_1),
        }
    }

    /// The contract version the component was built against.
    pub fn contract(&self) -> &'static str {
        match self {
            ProviderPre::Latest(p) if exports_version(p.instance_pre(), "0.3.0") => "0.3.0",
            ProviderPre::Latest(_) => super::CONTRACT,
            ProviderPre::V0_2(_) => "0.2.0",
            ProviderPre::V0_1(_) => "0.1.0",
        }
    }
}

impl<T: 'static> ProviderPre<T> {
    /// Whether the component reads asset texts from the host
    /// (`context.asset-text`, since 0.3.1): only then does the host keep
    /// long asset texts back and give it handles.
    pub fn reads_held_texts(&self) -> bool {
        let ProviderPre::Latest(p) = self else { return false };
        let component = p.instance_pre().component();
        let engine = component.engine();
        component.component_type().imports(engine).any(|(name, item)| {
            name.starts_with("pulumi:provider/context@0.3.")
                && matches!(item.ty, ComponentItem::ComponentInstance(i) if i.exports(engine).any(|(f, _)| f == "asset-text"))
        })
    }
}

fn exports_version<T>(pre: &InstancePre<T>, version: &str) -> bool {
    let component = pre.component();
    let prefix = format!("pulumi:provider/resource-provider@{version}");
    component.component_type().exports(component.engine()).any(|(name, _)| name.starts_with(&prefix))
}

/// An instance of a component.
pub enum Provider {
    Latest(v0_3::Provider),
    V0_2(v0_2_0::Provider),
    V0_1(v0_1_0::Provider),
}

impl Provider {
    pub fn pulumi_provider_resource_provider(&self) -> Guest<'_> {
        match self {
            Provider::Latest(p) => Guest::Latest(p.pulumi_provider_resource_provider()),
            Provider::V0_2(p) => Guest::V0_2(p.pulumi_provider_resource_provider()),
            Provider::V0_1(p) => Guest::V0_1(p.pulumi_provider_resource_provider()),
        }
    }
}

/// The `resource-provider` export of an instance.
pub enum Guest<'a> {
    Latest(&'a Guest03),
    V0_2(&'a Guest02),
    V0_1(&'a Guest01),
}

/// Each export, called in `latest`'s types: straight through for a
/// component of the latest version; for an older one the arguments go down
/// to its version and the answer comes back up, a version at a time.
macro_rules! calls {
    ($( $call:ident ( $($arg:ident : $ty:ty),* ) -> $ret:ty; )*) => {
        impl Guest<'_> {
            $(
                pub async fn $call<S>(&self, store: S, $($arg: &$ty),*) -> wasmtime::Result<$ret>
                where
                    S: AsContextMut,
                    S::Data: Send,
                {
                    match self {
                        Guest::Latest(g) => g.$call(store, $($arg),*).await,
                        Guest::V0_2(g) => {
                            $(let $arg = $arg.down();)*
                            g.$call(store, $(&$arg),*).await.map(Up::up)
                        }
                        Guest::V0_1(g) => {
                            $(let $arg = $arg.down().down();)*
                            g.$call(store, $(&$arg),*).await.map(|r| r.up().up())
                        }
                    }
                }
            )*
        }
    };
}

calls! {
    call_get_plugin_info() -> rp::PluginInfo;
    call_parameterize(request: rp::ParameterizeRequest) -> Result<rp::PackageRef, types::Error>;
    call_get_schema(request: rp::GetSchemaRequest) -> Result<String, types::Error>;
    call_check_config(request: rp::CheckRequest) -> Result<rp::CheckResponse, types::Error>;
    call_diff_config(request: rp::DiffRequest) -> Result<rp::DiffResponse, types::Error>;
    call_configure(request: rp::ConfigureRequest) -> Result<rp::ConfigureResponse, types::Error>;
    call_invoke(request: rp::InvokeRequest) -> Result<rp::InvokeResponse, types::Error>;
    call_call(request: rp::CallRequest) -> Result<rp::CallResponse, types::Error>;
    call_check(request: rp::CheckRequest) -> Result<rp::CheckResponse, types::Error>;
    call_diff(request: rp::DiffRequest) -> Result<rp::DiffResponse, types::Error>;
    call_create(request: rp::CreateRequest) -> Result<rp::CreateResponse, types::Error>;
    call_read(request: rp::ReadRequest) -> Result<rp::ReadResponse, types::Error>;
    call_update(request: rp::UpdateRequest) -> Result<rp::UpdateResponse, types::Error>;
    call_delete(request: rp::DeleteRequest) -> Result<(), types::Error>;
    call_construct(request: rp::ConstructRequest) -> Result<rp::ConstructResponse, types::Error>;
    call_list(request: rp::ListRequest) -> Result<rp::ListResponse, types::Error>;
    call_get_mapping(key: str, provider: str) -> Result<Option<rp::Mapping>, types::Error>;
    call_get_mappings(key: str) -> Result<Vec<String>, types::Error>;
    call_cancel() -> ();
}
