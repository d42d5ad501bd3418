//! The resource monitor a component provider's `construct` or `call`
//! registers its children with: the runtime's [`ResourceMonitor`] over
//! gRPC, to the endpoint the request names, its values translated as the
//! provider's own requests are (`convert`). The runtime opens one per call
//! through [`monitors`]; it connects on first use.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use prost_types::value::Kind;
use prost_types::{ListValue, Struct, Value as WireValue};
use pulumirpc as pb;
use pulumirpc::resource_monitor_client::ResourceMonitorClient;
use tokio::sync::OnceCell;
use tonic::transport::{Channel, Endpoint};

use super::serve::MAX_MESSAGE_BYTES;
use crate::convert::value::{
    Limits, WireOptions, is_unknown_sentinel, opt_struct_to_wit, sig, wit_into_value, wit_to_struct,
};
use crate::runtime::bindings::latest::pulumi::provider::monitor as m;
use crate::runtime::bindings::{rp, types};
use crate::runtime::{MonitorConnector, MonitorResult, Monitors, PackageDescriptor, ResourceMonitor, package_of};

/// How long connecting to the monitor may take: the wait on the monitor is
/// not counted against the call's deadline, so it needs its own bound.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// What a runtime needs to give `construct` and `call` their monitor
/// (`RuntimeConfig::monitors`).
pub fn monitors() -> Monitors {
    Monitors(Arc::new(GrpcMonitors))
}

struct GrpcMonitors;

impl MonitorConnector for GrpcMonitors {
    fn open(&self, deployment: &rp::Deployment, packages: Arc<Vec<PackageDescriptor>>) -> Arc<dyn ResourceMonitor> {
        Arc::new(GrpcMonitor {
            endpoint: deployment.monitor_endpoint.clone(),
            dry_run: deployment.dry_run,
            client: OnceCell::new(),
            refs: packages.iter().map(|_| OnceCell::new()).collect(),
            packages,
        })
    }
}

/// The monitor of one `construct` or `call`.
struct GrpcMonitor {
    endpoint: String,
    dry_run: bool,
    client: OnceCell<ResourceMonitorClient<Channel>>,
    /// The parameterized packages the provider serves, and the reference
    /// the monitor gave each, once asked (at the first of its resources).
    packages: Arc<Vec<PackageDescriptor>>,
    refs: Vec<OnceCell<String>>,
}

impl GrpcMonitor {
    /// The reference for `token`'s package when it is one of the provider's
    /// parameterized packages (see [`PackageDescriptor`]), else empty. An
    /// engine without `RegisterPackage` gets none, as before it had one.
    async fn package_ref(&self, token: &str) -> MonitorResult<String> {
        // A provider resource of the package (`pulumi:providers:<pkg>`) is the package's too.
        let package = package_of(token);
        let Some(at) = self.packages.iter().position(|p| p.name == package) else {
            return Ok(String::new());
        };
        let p = &self.packages[at];
        let register = async {
            let request = pb::RegisterPackageRequest {
                name: p.base_name.clone(),
                version: p.base_version.clone(),
                parameterization: Some(pb::Parameterization {
                    name: p.name.clone(),
                    version: p.version.clone(),
                    value: p.value.clone(),
                }),
                ..Default::default()
            };
            match self.client().await?.register_package(request).await {
                Ok(r) => Ok(r.into_inner().r#ref),
                Err(s) if s.code() == tonic::Code::Unimplemented => Ok(String::new()),
                Err(s) => Err(status(s)),
            }
        };
        Ok(self.refs[at].get_or_try_init(|| register).await?.clone())
    }

    async fn client(&self) -> MonitorResult<ResourceMonitorClient<Channel>> {
        let client = self.client.get_or_try_init(|| self.connect()).await?;
        Ok(client.clone())
    }

    async fn connect(&self) -> MonitorResult<ResourceMonitorClient<Channel>> {
        if self.endpoint.is_empty() {
            return Err(types::Error::FailedPrecondition(
                "the engine gave no resource monitor endpoint for this call".into(),
            ));
        }
        let url =
            if self.endpoint.contains("://") { self.endpoint.clone() } else { format!("http://{}", self.endpoint) };
        let unreachable = |e: &dyn std::fmt::Display| {
            types::Error::Unavailable(format!("cannot reach the resource monitor at {url}: {e}"))
        };
        let channel = Endpoint::from_shared(url.clone())
            .map_err(|e| unreachable(&e))?
            .connect_timeout(CONNECT_TIMEOUT)
            .connect()
            .await
            .map_err(|e| unreachable(&e))?;
        tracing::debug!(endpoint = %self.endpoint, dry_run = self.dry_run, "connected to the resource monitor");
        Ok(ResourceMonitorClient::new(channel).max_decoding_message_size(MAX_MESSAGE_BYTES))
    }
}

impl ResourceMonitor for GrpcMonitor {
    fn register_resource(
        &self,
        request: m::RegisterResourceRequest,
    ) -> BoxFuture<'_, MonitorResult<m::RegisterResourceResponse>> {
        Box::pin(async move {
            let mut client = self.client().await?;
            let outputs = request.accepts_output_values;
            let mut wire = register_request(request)?;
            // A local component needs no provider, so no package.
            if wire.custom || wire.remote {
                wire.package_ref = self.package_ref(&wire.r#type).await?;
            }
            let r = client.register_resource(wire).await.map_err(status)?.into_inner();
            let property_dependencies = sorted_deps(r.property_dependencies, |d| d.urns);
            let object = match (outputs, r.object) {
                (true, Some(state)) => {
                    let deps: HashMap<_, _> = property_dependencies.iter().cloned().collect();
                    Some(as_output_values(state, &deps))
                }
                (_, object) => object,
            };
            Ok(m::RegisterResourceResponse {
                urn: r.urn,
                id: r.id,
                object: from_wire(object.as_ref(), "resource state")?,
                stable: r.stable,
                stables: r.stables,
                property_dependencies,
            })
        })
    }

    fn register_resource_outputs(&self, urn: String, outputs: types::Value) -> BoxFuture<'_, MonitorResult<()>> {
        Box::pin(async move {
            let mut client = self.client().await?;
            let outputs = Some(to_wire(&outputs, "register-resource-outputs outputs")?);
            client
                .register_resource_outputs(pb::RegisterResourceOutputsRequest { urn, outputs })
                .await
                .map_err(status)?;
            Ok(())
        })
    }

    fn invoke(&self, request: m::InvokeRequest) -> BoxFuture<'_, MonitorResult<m::InvokeResponse>> {
        Box::pin(async move {
            let mut client = self.client().await?;
            let wire = pb::ResourceInvokeRequest {
                args: Some(to_wire(&request.args, "invoke arguments")?),
                package_ref: self.package_ref(&request.token).await?,
                tok: request.token,
                provider: request.provider,
                version: request.version,
                accept_resources: true,
                ..Default::default()
            };
            let r = client.invoke(wire).await.map_err(status)?.into_inner();
            Ok(m::InvokeResponse {
                return_: from_wire(r.r#return.as_ref(), "invoke result")?,
                failures: r
                    .failures
                    .into_iter()
                    .map(|f| types::CheckFailure { property: f.property, reason: f.reason })
                    .collect(),
            })
        })
    }

    fn read_resource(&self, request: m::ReadResourceRequest) -> BoxFuture<'_, MonitorResult<m::ReadResourceResponse>> {
        Box::pin(async move {
            displayable(&request.type_, &request.name)?;
            let mut client = self.client().await?;
            let wire = pb::ReadResourceRequest {
                properties: Some(to_wire(&request.properties, "read-resource properties")?),
                package_ref: self.package_ref(&request.type_).await?,
                id: request.id,
                r#type: request.type_,
                name: request.name,
                parent: request.parent,
                dependencies: request.dependencies,
                provider: request.provider,
                version: request.version,
                additional_secret_outputs: request.additional_secret_outputs,
                accept_secrets: true,
                accept_resources: true,
                ..Default::default()
            };
            let r = client.read_resource(wire).await.map_err(status)?.into_inner();
            Ok(m::ReadResourceResponse { urn: r.urn, properties: from_wire(r.properties.as_ref(), "resource state")? })
        })
    }
}

/// Values the host sends: the monitor accepts every kind, byte strings aside.
fn to_wire(v: &types::Value, what: &str) -> Result<Struct, types::Error> {
    wit_to_struct(v, WireOptions::default(), Limits::default())
        .map_err(|e| types::Error::InvalidArgument(format!("{what}: {e}")))
}

fn from_wire(s: Option<&Struct>, what: &str) -> Result<types::Value, types::Error> {
    opt_struct_to_wit(s)
        .map_err(|e| types::Error::Failed(format!("the resource monitor returned an unreadable {what}: {e}")))
}

/// A monitor failure, as the guest's typed error (same codes as the provider's own).
fn status(s: tonic::Status) -> types::Error {
    let m = format!("resource monitor: {}", s.message());
    match s.code() {
        tonic::Code::Unimplemented => types::Error::Unimplemented(m),
        tonic::Code::InvalidArgument => types::Error::InvalidArgument(m),
        tonic::Code::NotFound => types::Error::NotFound(m),
        tonic::Code::FailedPrecondition => types::Error::FailedPrecondition(m),
        tonic::Code::Unavailable => types::Error::Unavailable(m),
        tonic::Code::Cancelled => types::Error::Cancelled(m),
        _ => types::Error::Failed(m),
    }
}

fn deps<D>(d: Vec<(String, Vec<String>)>, make: impl Fn(Vec<String>) -> D) -> HashMap<String, D> {
    d.into_iter().map(|(k, urns)| (k, make(urns))).collect()
}

fn sorted_deps<D>(m: HashMap<String, D>, urns: impl Fn(D) -> Vec<String>) -> m::DependencyMap {
    let mut v: Vec<_> = m.into_iter().map(|(k, d)| (k, urns(d))).collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

fn alias(a: m::Alias) -> pb::Alias {
    use pb::alias::{Alias as A, Spec, spec::Parent};
    pb::Alias {
        alias: Some(match a {
            m::Alias::Urn(urn) => A::Urn(urn),
            m::Alias::Spec(s) => A::Spec(Spec {
                name: s.name,
                r#type: s.type_,
                stack: s.stack,
                project: s.project,
                parent: match s.parent {
                    m::AliasParent::Inherit => None,
                    m::AliasParent::NoParent => Some(Parent::NoParent(true)),
                    m::AliasParent::Urn(u) => Some(Parent::ParentUrn(u)),
                },
            }),
        }),
    }
}

/// The type and name of a resource a component registers or reads become
/// its URN and a row of the engine's display on the user's terminal:
/// neither may hold what a terminal or the Pulumi CLI would act on
/// ([`crate::text`]), which is refused before the engine hears of the
/// resource. Nor may either be blank ([`crate::text::blank`]).
fn displayable(type_: &str, name: &str) -> Result<(), types::Error> {
    for (what, text) in [("type", type_), ("name", name)] {
        if crate::text::blank(text) {
            let shown = crate::text::escape_within(text.escape_unicode().to_string(), &[], 200);
            return Err(types::Error::InvalidArgument(format!("the resource's {what} \"{shown}\" is blank")));
        }
        if crate::text::unfit_name(text) {
            let shown = crate::text::escape_within(text.to_owned(), &[], 200);
            return Err(types::Error::InvalidArgument(format!(
                "the resource's {what} \"{shown}\" holds control or invisible characters or Pulumi's colour markup"
            )));
        }
    }
    Ok(())
}

fn register_request(r: m::RegisterResourceRequest) -> Result<pb::RegisterResourceRequest, types::Error> {
    displayable(&r.type_, &r.name)?;
    let o = r.options;
    Ok(pb::RegisterResourceRequest {
        object: Some(to_wire(&r.object, "register-resource object")?),
        r#type: r.type_,
        name: r.name,
        parent: o.parent,
        custom: r.custom,
        remote: r.remote,
        protect: o.protect,
        dependencies: o.dependencies,
        provider: o.provider,
        providers: o.providers.into_iter().collect(),
        property_dependencies: deps(o.property_dependencies, |urns| {
            pb::register_resource_request::PropertyDependencies { urns }
        }),
        delete_before_replace: o.delete_before_replace.unwrap_or(false),
        delete_before_replace_defined: o.delete_before_replace.is_some(),
        version: o.version,
        ignore_changes: o.ignore_changes,
        accept_secrets: true,
        accept_resources: true,
        additional_secret_outputs: o.additional_secret_outputs,
        alias_specs: true,
        aliases: o.aliases.into_iter().map(alias).collect(),
        import_id: o.import_id,
        custom_timeouts: o.custom_timeouts.map(|t| pb::register_resource_request::CustomTimeouts {
            create: t.create,
            update: t.update,
            delete: t.delete,
            read: t.read,
        }),
        supports_partial_values: true,
        replace_on_changes: o.replace_on_changes,
        plugin_download_url: o.plugin_download_url,
        retain_on_delete: o.retain_on_delete,
        deleted_with: o.deleted_with,
        hooks: o
            .resource_hooks
            .map(|h| crate::resource_hooks!(h => pb::register_resource_request::ResourceHooksBinding)),
        replace_with: o.replace_with,
        replacement_trigger: o
            .replacement_trigger
            .map(|v| wit_into_value(v, WireOptions::default(), Limits::default()))
            .transpose()
            .map_err(|e| types::Error::InvalidArgument(format!("replacement-trigger: {e}")))?,
        ..Default::default()
    })
}

/// Each top-level property as an output value: secretness, known-ness and
/// the URNs it depends on travel with it.
fn as_output_values(state: Struct, deps: &HashMap<String, Vec<String>>) -> Struct {
    let fields = state
        .fields
        .into_iter()
        .map(|(k, v)| {
            let (value, secret) = match &v.kind {
                Some(Kind::StructValue(s)) if is_sig(s, sig::SECRET) => (s.fields.get("value").cloned(), true),
                _ => (Some(v), false),
            };
            let value = value.filter(|v| !is_unknown(v));
            let dependencies = deps.get(&k).cloned().unwrap_or_default();
            let mut out = HashMap::from([
                (sig::KEY.to_owned(), str_value(sig::OUTPUT_VALUE)),
                ("secret".to_owned(), WireValue { kind: Some(Kind::BoolValue(secret)) }),
                (
                    "dependencies".to_owned(),
                    WireValue {
                        kind: Some(Kind::ListValue(ListValue {
                            values: dependencies.into_iter().map(str_value).collect(),
                        })),
                    },
                ),
            ]);
            if let Some(value) = value {
                out.insert("value".to_owned(), value);
            }
            (k, WireValue { kind: Some(Kind::StructValue(Struct { fields: out.into_iter().collect() })) })
        })
        .collect();
    Struct { fields }
}

/// One of the engine's unknown sentinels (of any kind).
fn is_unknown(v: &WireValue) -> bool {
    matches!(&v.kind, Some(Kind::StringValue(s)) if is_unknown_sentinel(s))
}

fn is_sig(s: &Struct, want: &str) -> bool {
    matches!(s.fields.get(sig::KEY).and_then(|v| v.kind.as_ref()), Some(Kind::StringValue(x)) if x == want)
}

fn str_value(s: impl Into<String>) -> WireValue {
    WireValue { kind: Some(Kind::StringValue(s.into())) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &str) -> WireValue {
        str_value(v)
    }

    fn obj(fields: Vec<(&str, WireValue)>) -> WireValue {
        let fields = fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
        WireValue { kind: Some(Kind::StructValue(Struct { fields })) }
    }

    #[test]
    fn state_becomes_output_values_with_secrets_unknowns_and_dependencies() {
        let state = Struct {
            fields: [
                ("plain".to_owned(), s("a")),
                ("hidden".to_owned(), obj(vec![(sig::KEY, s(sig::SECRET)), ("value", s("b"))])),
                ("later".to_owned(), s(sig::UNKNOWN_NUMBER)),
            ]
            .into_iter()
            .collect(),
        };
        let deps = HashMap::from([("plain".to_owned(), vec!["urn:x".to_owned()])]);
        let out = as_output_values(state, &deps);
        let field = |k: &str| match &out.fields[k].kind {
            Some(Kind::StructValue(s)) => s.clone(),
            other => panic!("{k}: {other:?}"),
        };
        let plain = field("plain");
        assert!(is_sig(&plain, sig::OUTPUT_VALUE));
        assert_eq!(plain.fields["value"], s("a"));
        assert_eq!(plain.fields["dependencies"].kind, Some(Kind::ListValue(ListValue { values: vec![s("urn:x")] })));
        let hidden = field("hidden");
        assert_eq!(hidden.fields["value"], s("b"));
        assert_eq!(hidden.fields["secret"].kind, Some(Kind::BoolValue(true)));
        assert!(!field("later").fields.contains_key("value"), "unknown: no value");
    }

    #[test]
    fn options_reach_the_registration() {
        let request = m::RegisterResourceRequest {
            type_: "t:index:T".into(),
            name: "n".into(),
            custom: true,
            remote: false,
            object: crate::convert::value::empty_map(),
            options: m::ResourceOptions {
                parent: "urn:p".into(),
                provider: "urn:prov::id".into(),
                providers: vec![("t".into(), "urn:prov::id".into())],
                dependencies: vec!["urn:d".into()],
                property_dependencies: vec![("k".into(), vec!["urn:d".into()])],
                protect: Some(true),
                ignore_changes: vec!["k".into()],
                aliases: vec![
                    m::Alias::Urn("urn:old".into()),
                    m::Alias::Spec(m::AliasSpec {
                        name: "old".into(),
                        type_: String::new(),
                        stack: String::new(),
                        project: String::new(),
                        parent: m::AliasParent::NoParent,
                    }),
                ],
                custom_timeouts: Some(m::CustomTimeouts {
                    create: "1m".into(),
                    update: "".into(),
                    delete: "".into(),
                    read: "2m".into(),
                }),
                delete_before_replace: Some(false),
                retain_on_delete: Some(true),
                deleted_with: "urn:w".into(),
                replace_on_changes: vec!["k".into()],
                additional_secret_outputs: vec!["k".into()],
                version: "1.2.3".into(),
                plugin_download_url: String::new(),
                import_id: String::new(),
                resource_hooks: Some(types::ResourceHooks {
                    before_create: vec!["audit".into()],
                    after_create: vec![],
                    before_update: vec![],
                    after_update: vec![],
                    before_delete: vec![],
                    after_delete: vec![],
                    on_error: vec!["page".into()],
                }),
                replace_with: vec!["urn:r".into()],
                replacement_trigger: Some(
                    crate::convert::value::value_into_wit(WireValue { kind: Some(Kind::NumberValue(3.0)) }).unwrap(),
                ),
            },
            accepts_output_values: false,
        };
        // A hidden link, a bidi override, a blank name, the CLI's colour markup: refused, shown escaped.
        for (name, type_, shown) in [
            ("n\x1b]8;;https://evil.example\x07", "t:index:T", "name \"n\\u{1b}]8;;"),
            ("n", "t:index:\u{202e}T", "type \"t:index:\\u{202e}T\""),
            ("\u{3164}", "t:index:T", "name \"\\u{3164}\" is blank"),
            ("\u{3000} \u{2800}", "t:index:T", "name \"\\u{3000}\\u{20}\\u{2800}\" is blank"),
            ("", "t:index:T", "name \"\" is blank"),
            ("n", " ", "type \"\\u{20}\" is blank"),
            ("n<{%foo%}>", "t:index:T", "name \"n<\\{%foo%\\}>\""),
        ] {
            let mut bad = request.clone();
            (bad.name, bad.type_) = (name.into(), type_.into());
            let refused = register_request(bad).unwrap_err();
            assert!(matches!(&refused, types::Error::InvalidArgument(m) if m.contains(shown)), "{refused:?}");
        }
        let r = register_request(request).unwrap();
        assert_eq!((r.r#type.as_str(), r.name.as_str(), r.parent.as_str()), ("t:index:T", "n", "urn:p"));
        assert!(r.custom && r.accept_secrets && r.accept_resources && r.alias_specs);
        assert!(!r.delete_before_replace && r.delete_before_replace_defined);
        assert_eq!(r.protect, Some(true));
        assert_eq!(r.retain_on_delete, Some(true));
        assert_eq!(r.property_dependencies["k"].urns, ["urn:d"]);
        assert_eq!(r.aliases.len(), 2);
        assert_eq!(
            r.aliases[1].alias,
            Some(pb::alias::Alias::Spec(pb::alias::Spec {
                name: "old".into(),
                parent: Some(pb::alias::spec::Parent::NoParent(true)),
                ..Default::default()
            }))
        );
        let timeouts = r.custom_timeouts.unwrap();
        assert_eq!((timeouts.create.as_str(), timeouts.read.as_str()), ("1m", "2m"));
        let hooks = r.hooks.unwrap();
        assert_eq!((hooks.before_create, hooks.on_error), (vec!["audit".to_owned()], vec!["page".to_owned()]));
        assert_eq!(r.replace_with, ["urn:r"]);
        assert_eq!(r.replacement_trigger.and_then(|v| v.kind), Some(Kind::NumberValue(3.0)));
        assert_eq!((r.deleted_with.as_str(), r.version.as_str()), ("urn:w", "1.2.3"));
    }
}
