//! The `monitor` import: the deployment's resource monitor, open to a guest
//! only while a `construct` or `call` runs. This layer speaks no gRPC: when
//! such a call leases an instance, the runtime's [`MonitorConnector`] (the
//! server layer's, over gRPC) opens a [`ResourceMonitor`] for the endpoint
//! the request names, and the lease forgets it when the call ends. Time
//! spent waiting on it does not count against the call's deadline.

use std::sync::Arc;

use futures::future::BoxFuture;

use super::bindings::latest::pulumi::provider::monitor as m;
use super::bindings::{rp, types};
use super::http::{Denials, note};
use super::state::HostState;

/// The error every monitor function returns outside `construct` and `call`.
pub const NOT_AVAILABLE: &str = "the resource monitor is only available during construct and call";

pub type MonitorResult<T> = Result<T, types::Error>;

/// The resource monitor of one `construct` or `call`, in the contract's types.
pub trait ResourceMonitor: Send + Sync {
    fn register_resource(
        &self,
        request: m::RegisterResourceRequest,
    ) -> BoxFuture<'_, MonitorResult<m::RegisterResourceResponse>>;
    fn register_resource_outputs(&self, urn: String, outputs: types::Value) -> BoxFuture<'_, MonitorResult<()>>;
    fn invoke(&self, request: m::InvokeRequest) -> BoxFuture<'_, MonitorResult<m::InvokeResponse>>;
    fn read_resource(&self, request: m::ReadResourceRequest) -> BoxFuture<'_, MonitorResult<m::ReadResourceResponse>>;

    /// Whether a `construct` of `asked` may answer with `urn` as its
    /// component's. Only a guarded monitor knows what the call registered;
    /// others vouch for anything.
    fn answer_urn(&self, urn: &str, asked: &Asked<'_>) -> MonitorResult<()> {
        let _ = (urn, asked);
        Ok(())
    }
}

/// A parameterized package the provider serves. The engine routes a
/// resource by its type token's package, so one of this package's own,
/// registered from `construct` or `call`, would go to a plugin of that
/// name (another provider, or none). Registered with the monitor first, as
/// the package's generated SDK registers it, the package gives a reference
/// that sends the resource to the base plugin parameterized with `value`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PackageDescriptor {
    /// The plugin the engine boots (the base provider).
    pub base_name: String,
    pub base_version: String,
    /// The package it becomes, and the value that makes it so.
    pub name: String,
    pub version: String,
    pub value: Vec<u8>,
}

/// The package a type or function token belongs to: its first part, or for
/// a provider resource (`pulumi:providers:<pkg>`) the package it provides.
pub fn package_of(token: &str) -> &str {
    let token = token.strip_prefix("pulumi:providers:").unwrap_or(token);
    token.split(':').next().unwrap_or_default()
}

/// Opens the monitor a `construct` or `call` request's deployment names, for
/// a provider serving `packages`.
pub trait MonitorConnector: Send + Sync {
    fn open(&self, deployment: &rp::Deployment, packages: Arc<Vec<PackageDescriptor>>) -> Arc<dyn ResourceMonitor>;
}

/// How a runtime reaches resource monitors (`RuntimeConfig::monitors`).
#[derive(Clone)]
pub struct Monitors(pub Arc<dyn MonitorConnector>);

impl std::fmt::Debug for Monitors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Monitors")
    }
}

/// What a runtime configured without [`Monitors`] opens: every function
/// fails, saying so.
struct NoMonitor;

const NO_MONITOR: &str = "this host was set up without a way to reach the resource monitor (RuntimeConfig::monitors)";

fn no_monitor<T: Send + 'static>() -> BoxFuture<'static, MonitorResult<T>> {
    Box::pin(async { Err(types::Error::FailedPrecondition(NO_MONITOR.into())) })
}

impl ResourceMonitor for NoMonitor {
    fn register_resource(
        &self,
        _: m::RegisterResourceRequest,
    ) -> BoxFuture<'_, MonitorResult<m::RegisterResourceResponse>> {
        no_monitor()
    }
    fn register_resource_outputs(&self, _: String, _: types::Value) -> BoxFuture<'_, MonitorResult<()>> {
        no_monitor()
    }
    fn invoke(&self, _: m::InvokeRequest) -> BoxFuture<'_, MonitorResult<m::InvokeResponse>> {
        no_monitor()
    }
    fn read_resource(&self, _: m::ReadResourceRequest) -> BoxFuture<'_, MonitorResult<m::ReadResourceResponse>> {
        no_monitor()
    }
}

/// The monitor for `deployment`, through `monitors` when there are any.
pub(super) fn open(
    monitors: Option<&Monitors>,
    deployment: &rp::Deployment,
    packages: Arc<Vec<PackageDescriptor>>,
) -> Arc<dyn ResourceMonitor> {
    match monitors {
        Some(m) => m.0.open(deployment, packages),
        None => Arc::new(NoMonitor),
    }
}

/// The type a URN names (`urn:pulumi:<stack>::<project>::<parent$>type::<name>`,
/// or a provider reference with `::<id>` after it), without its parents'.
pub fn urn_type(urn: &str) -> Option<&str> {
    urn.split("::").nth(2).and_then(|t| t.rsplit('$').next())
}

/// What a component may ask the engine for. Through the engine it acts
/// with the user's authority: a resource of another package is made by that
/// provider with the user's credentials (`command:local:Command` runs a
/// command), a function or read of another package reads what that provider
/// can. So only its own packages, and those the user granted (`packages`),
/// are let through, by the token and by the provider reference named with
/// it.
///
/// That holds for a local component's type and an alias' too: a URN names
/// a resource in the user's state, and a registration whose URN (or alias)
/// is that of the user's `aws:iam:AccessKey` takes over its state, the
/// secret outputs the engine then hands back among it, or moves the
/// resource out from under its provider.
#[derive(Clone, Debug)]
pub(super) struct Reach {
    /// Its own packages, each with the version it is served at: the plugin
    /// the engine booted (when served directly) and the packages it was
    /// parameterized as. Not the name a component gives itself otherwise:
    /// any component may take any name.
    pub own: Vec<(String, String)>,
    /// The `packages` grant (`*`: any but the engine's own, `pulumi`).
    pub granted: Vec<String>,
    /// The resource hooks the request passed on (`construct`'s options):
    /// the only ones its registrations may name. Hooks are the user's
    /// program's callbacks, looked up by name across the deployment.
    pub hooks: Vec<String>,
    pub provider: String,
    pub denials: Denials,
    /// Where the call's resources go (see [`Guarded::check_parent`]).
    pub home: Home,
}

/// Where a `construct`'s or a `call`'s registrations and reads may put
/// their resources, besides under one the same call registered.
#[derive(Clone, Debug)]
pub enum Home {
    /// A `construct`: the component asked for is registered under the
    /// parent the request gave, and the rest go under it.
    Component(Asked<'static>),
    /// A `call`: under the component it is called on (its `__self__`
    /// argument), when it names one.
    Under(Option<String>),
}

impl Reach {
    /// Whether `token` (asked for at `version`, when one is named) is the
    /// component's to ask for.
    fn check(&self, what: &str, token: &str, version: &str) -> MonitorResult<()> {
        let package = package_of(token);
        // `pkg:module:member` only. The engine builds a URN from the parents'
        // types, `$` and the type as given, so `pets:index:Kennel$aws:iam:Key`
        // would be package `pets` here and the URN of the user's key there.
        let parts: Vec<&str> = token.split(':').collect();
        if parts.len() != 3 || parts.iter().any(|p| p.is_empty()) || token.contains('$') {
            return Err(self.refuse(format!("{what} {:?}: not a `package:module:member` token", shown(token))));
        }
        if let Some((_, served)) = self.own.iter().find(|(p, _)| !p.is_empty() && p == package) {
            // Another version of its own package would be another plugin,
            // which the engine may download and run natively.
            if !version.is_empty() && version != served {
                return Err(self.refuse(format!(
                    "{what} {:?}: its own package is served at version {served}, not {:?}",
                    shown(token),
                    shown(version)
                )));
            }
            return Ok(());
        }
        // `pulumi:pulumi:getResource` reads any resource's state, secrets
        // among it: the engine's own package is granted only by name.
        if self.granted.iter().any(|g| g == package || (g == "*" && package != "pulumi")) {
            return Ok(());
        }
        let denial = format!("missing grant: package {:?} for provider {}", shown(package), self.provider);
        Err(self.refuse(format!("{what} {:?}: {denial}", shown(token))))
    }

    /// A provider reference (`<urn>::<id>`) the request names: its package
    /// must be one the component may reach too, or the resource would be
    /// handed to another package's provider.
    fn check_provider(&self, what: &str, reference: &str) -> MonitorResult<()> {
        if reference.is_empty() {
            return Ok(());
        }
        match urn_type(reference) {
            Some(type_) if type_.starts_with("pulumi:providers:") => self.check(what, type_, ""),
            _ => Err(self.refuse(format!("{what}: {:?} is not a provider reference", shown(reference)))),
        }
    }

    fn refuse(&self, message: String) -> types::Error {
        note(&self.denials, format!("refused: {message}"));
        types::Error::FailedPrecondition(message)
    }

    fn register(&self, r: &m::RegisterResourceRequest) -> MonitorResult<()> {
        // A download URL makes the engine fetch a plugin from there and run it natively.
        if !r.options.plugin_download_url.is_empty() {
            let url = shown(&r.options.plugin_download_url);
            return Err(
                self.refuse(format!("a component may not name where the engine downloads a plugin from (\"{url}\")"))
            );
        }
        if r.custom || r.remote {
            self.check("registering", &r.type_, &r.options.version)?;
            self.check_provider("registering with provider", &r.options.provider)?;
            for (_, reference) in &r.options.providers {
                self.check_provider("registering with provider", reference)?;
            }
        } else {
            // A local component loads no plugin, and its providers are
            // those its children get, each checked when they register.
            self.check("registering", &r.type_, "")?;
        }
        for alias in &r.options.aliases {
            self.check_alias(alias)?;
        }
        let mut named = r.options.resource_hooks.iter().flat_map(hook_names);
        if let Some(hook) = named.find(|n| !self.hooks.contains(n)) {
            return Err(self.refuse(format!(
                "registering {:?} with hook {:?}: a component passes on only the hooks its construct was given",
                shown(&r.type_),
                shown(hook)
            )));
        }
        Ok(())
    }

    /// An alias names an earlier identity the engine carries the state of
    /// over: its type must be one the component may register. A spec with
    /// no type is the registration's own.
    fn check_alias(&self, alias: &types::Alias) -> MonitorResult<()> {
        let type_ = match alias {
            types::Alias::Urn(urn) => match urn_type(urn) {
                Some(t) => t,
                None => {
                    return Err(self.refuse(format!("aliasing: {:?} is not a URN", shown(urn))));
                }
            },
            types::Alias::Spec(spec) if spec.type_.is_empty() => return Ok(()),
            types::Alias::Spec(spec) => &spec.type_,
        };
        self.check("aliasing", type_, "")
    }
}

/// `inner`, letting through only what `reach` allows.
pub(super) fn guarded(inner: Arc<dyn ResourceMonitor>, reach: Reach) -> Arc<dyn ResourceMonitor> {
    Arc::new(Guarded { inner, reach, registered: Default::default() })
}

struct Guarded {
    inner: Arc<dyn ResourceMonitor>,
    reach: Reach,
    /// The URNs registered through this monitor: the only ones whose
    /// outputs it may set (the engine takes outputs for any resource whose
    /// registration is pending, custom ones of other packages among them).
    /// With each, the component it is, if it is a local one.
    registered: std::sync::Mutex<std::collections::HashMap<String, Option<Asked<'static>>>>,
}

/// A component as a `construct` request asks for it, or as registered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Asked<'a> {
    pub type_: std::borrow::Cow<'a, str>,
    pub name: std::borrow::Cow<'a, str>,
    pub parent: std::borrow::Cow<'a, str>,
}

impl Asked<'_> {
    pub fn owned(&self) -> Asked<'static> {
        let own = |c: &str| std::borrow::Cow::Owned(c.to_owned());
        Asked { type_: own(&self.type_), name: own(&self.name), parent: own(&self.parent) }
    }
}

impl Guarded {
    /// Where a registration or read puts its resource: at its [`Home`], or
    /// under a resource the same call registered (the component or one
    /// below it). A resource elsewhere, at the stack's top level or under
    /// another of the user's resources, could have the URN of one the
    /// user declared there and take it over. `component` is the
    /// registration's, if it is a local component.
    fn check_parent(
        &self,
        what: &str,
        type_: &str,
        name: &str,
        component: Option<&Asked<'_>>,
        parent: &str,
    ) -> MonitorResult<()> {
        let at_home = match &self.reach.home {
            Home::Component(asked) => component == Some(asked),
            Home::Under(urn) => !parent.is_empty() && urn.as_deref() == Some(parent),
        };
        if at_home
            || (!parent.is_empty() && self.registered.lock().unwrap_or_else(|p| p.into_inner()).contains_key(parent))
        {
            return Ok(());
        }
        let place = if parent.is_empty() { "the stack's top level".to_owned() } else { format!("{:?}", shown(parent)) };
        let rule = match &self.reach.home {
            Home::Component(_) => "a component puts its resources under itself".to_owned(),
            Home::Under(Some(urn)) => {
                format!("a method puts its resources under the component it is called on ({:?})", shown(urn))
            }
            Home::Under(None) => "a call that names no `__self__` has no component to put resources under".to_owned(),
        };
        Err(self.reach.refuse(format!(
            "{what} {:?} named {:?} under {place}: {rule} (or under what it registered in the same call)",
            shown(type_),
            shown(name)
        )))
    }
}

fn refused<T: Send + 'static>(e: types::Error) -> BoxFuture<'static, MonitorResult<T>> {
    Box::pin(async move { Err(e) })
}

impl ResourceMonitor for Guarded {
    fn register_resource(
        &self,
        request: m::RegisterResourceRequest,
    ) -> BoxFuture<'_, MonitorResult<m::RegisterResourceResponse>> {
        let component = (!request.custom && !request.remote).then(|| Asked {
            type_: request.type_.clone().into(),
            name: request.name.clone().into(),
            parent: request.options.parent.clone().into(),
        });
        let (type_, name, parent) = (&request.type_, &request.name, &request.options.parent);
        let placed = self.check_parent("registering", type_, name, component.as_ref(), parent);
        if let Err(e) = self.reach.register(&request).and(placed) {
            return refused(e);
        }
        Box::pin(async move {
            let response = self.inner.register_resource(request).await?;
            self.registered.lock().unwrap_or_else(|p| p.into_inner()).insert(response.urn.clone(), component);
            Ok(response)
        })
    }
    fn register_resource_outputs(&self, urn: String, outputs: types::Value) -> BoxFuture<'_, MonitorResult<()>> {
        if !self.registered.lock().unwrap_or_else(|p| p.into_inner()).contains_key(&urn) {
            let message = format!(
                "registering outputs of {:?}: a component sets the outputs only of resources it registered in the same call",
                shown(&urn)
            );
            return refused(self.reach.refuse(message));
        }
        self.inner.register_resource_outputs(urn, outputs)
    }
    fn invoke(&self, request: m::InvokeRequest) -> BoxFuture<'_, MonitorResult<m::InvokeResponse>> {
        let allowed = self.reach.check("invoking", &request.token, &request.version);
        match allowed.and_then(|()| self.reach.check_provider("invoking with provider", &request.provider)) {
            Ok(()) => self.inner.invoke(request),
            Err(e) => refused(e),
        }
    }
    fn read_resource(&self, request: m::ReadResourceRequest) -> BoxFuture<'_, MonitorResult<m::ReadResourceResponse>> {
        let allowed = self.reach.check("reading", &request.type_, &request.version);
        let allowed =
            allowed.and_then(|()| self.check_parent("reading", &request.type_, &request.name, None, &request.parent));
        match allowed.and_then(|()| self.reach.check_provider("reading with provider", &request.provider)) {
            Ok(()) => self.inner.read_resource(request),
            Err(e) => refused(e),
        }
    }
    /// The program's SDK takes the answer's URN as its component's: it
    /// parents resources to it and resolves outputs against it. It must be
    /// the component the program asked for (its type, name and parent),
    /// registered as a local component in the same call; anything else
    /// would be another resource of the user's state.
    fn answer_urn(&self, urn: &str, asked: &Asked<'_>) -> MonitorResult<()> {
        let registered = self.registered.lock().unwrap_or_else(|p| p.into_inner());
        if registered.get(urn).is_some_and(|c| c.as_ref() == Some(asked)) {
            return Ok(());
        }
        Err(self.reach.refuse(format!(
            "construct answered with {:?}: a component answers with the URN of the {:?} named {:?} it registered \
             as a component in the same call, under the parent it was given",
            shown(urn),
            shown(&asked.type_),
            shown(&asked.name)
        )))
    }
}

/// An answer of a call that used the monitor, as [`ResourceMonitor::answer_urn`] checks it.
pub trait MonitorAnswer {
    /// The URN the answer gives as the component's, if any.
    fn component_urn(&self) -> Option<&str>;
}

impl MonitorAnswer for rp::ConstructResponse {
    fn component_urn(&self) -> Option<&str> {
        Some(&self.urn)
    }
}

impl MonitorAnswer for rp::CallResponse {
    fn component_urn(&self) -> Option<&str> {
        None
    }
}

/// A guest's token, URN or name as an error shows it: escaped and cut.
fn shown(text: &str) -> String {
    crate::text::escape_within(text.to_owned(), &[], 200)
}

/// Every hook named, at any step.
fn hook_names(h: &types::ResourceHooks) -> impl Iterator<Item = &String> {
    [
        &h.before_create,
        &h.after_create,
        &h.before_update,
        &h.after_update,
        &h.before_delete,
        &h.after_delete,
        &h.on_error,
    ]
    .into_iter()
    .flatten()
}

/// Names the deployment of a request whose call may use the monitor, and
/// the resource hooks it passes on.
pub trait WithMonitor {
    fn deployment(&self) -> &rp::Deployment;
    fn hooks(&self) -> Vec<String>;
    /// The component the call must answer with, if any.
    fn asked(&self) -> Option<Asked<'_>>;
    /// Where the call's resources go.
    fn home(&self) -> Home;
}

impl WithMonitor for rp::ConstructRequest {
    fn deployment(&self) -> &rp::Deployment {
        &self.deployment
    }
    fn hooks(&self) -> Vec<String> {
        self.resource_hooks.as_ref().map(|h| hook_names(h).cloned().collect()).unwrap_or_default()
    }
    fn asked(&self) -> Option<Asked<'_>> {
        Some(Asked { type_: (&*self.type_).into(), name: (&*self.name).into(), parent: (&*self.parent).into() })
    }
    fn home(&self) -> Home {
        Home::Component(Asked {
            type_: self.type_.clone().into(),
            name: self.name.clone().into(),
            parent: self.parent.clone().into(),
        })
    }
}

impl WithMonitor for rp::CallRequest {
    fn deployment(&self) -> &rp::Deployment {
        &self.deployment
    }
    fn hooks(&self) -> Vec<String> {
        vec![]
    }
    fn asked(&self) -> Option<Asked<'_>> {
        None
    }
    fn home(&self) -> Home {
        Home::Under(self_urn(&self.args))
    }
}

/// The URN of a `call`'s `__self__` argument: a resource reference, or
/// the URN itself when the program takes no references, either perhaps
/// secret or an output value. The host built these arguments from the
/// engine's.
fn self_urn(args: &types::Value) -> Option<String> {
    use super::bindings::spans::range;
    use super::bindings::tree::{Node, Str};
    let v = super::bindings::words::unpack_trusted(args);
    let text = |s| v.text.get(range(s));
    let Some(Node::Object(fields)) = v.nodes.first() else { return None };
    let &(_, mut at) = v.fields.get(range(*fields))?.iter().find(|(k, _)| text(*k) == Some("__self__"))?;
    // Each wrapper's child comes later in the nodes (pre-order), so this ends.
    loop {
        match v.nodes.get(at as usize)? {
            Node::Secret(child) if *child > at => at = *child,
            Node::Output(o) => match o.value {
                Some(child) if child > at => at = child,
                _ => return None,
            },
            Node::ResourceReference(r) => return text(r.urn).map(str::to_owned),
            Node::String(Str::Short(s)) => return text(*s).map(str::to_owned),
            Node::String(Str::Long(s)) => return Some(s.clone()),
            _ => return None,
        }
    }
}

type Answer<T> = wasmtime::Result<MonitorResult<T>>;

impl HostState {
    /// The call's monitor, shared so that waiting on it does not hold the store.
    fn monitor(&self) -> MonitorResult<Arc<dyn ResourceMonitor>> {
        self.monitor.clone().ok_or_else(|| types::Error::FailedPrecondition(NOT_AVAILABLE.into()))
    }
}

// Each function waits on the engine, which the call's deadline does not count.
impl m::Host for HostState {
    async fn register_resource(&mut self, request: m::RegisterResourceRequest) -> Answer<m::RegisterResourceResponse> {
        let waited = self.engine_wait.clone();
        let monitor = self.monitor();
        Ok(waited.timed(async { monitor?.register_resource(request).await }).await)
    }

    async fn register_resource_outputs(&mut self, urn: String, outputs: types::Value) -> Answer<()> {
        let waited = self.engine_wait.clone();
        let monitor = self.monitor();
        Ok(waited.timed(async { monitor?.register_resource_outputs(urn, outputs).await }).await)
    }

    async fn invoke(&mut self, request: m::InvokeRequest) -> Answer<m::InvokeResponse> {
        let waited = self.engine_wait.clone();
        let monitor = self.monitor();
        Ok(waited.timed(async { monitor?.invoke(request).await }).await)
    }

    async fn read_resource(&mut self, request: m::ReadResourceRequest) -> Answer<m::ReadResourceResponse> {
        let waited = self.engine_wait.clone();
        let monitor = self.monitor();
        Ok(waited.timed(async { monitor?.read_resource(request).await }).await)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_component_reaches_its_own_packages_and_the_granted_ones() {
        let reach = |granted: &[&str]| Reach {
            own: vec![("pets".into(), "0.1.0".into()), ("fleet".into(), "2.0.0".into())],
            granted: granted.iter().map(|g| g.to_string()).collect(),
            hooks: vec!["audit".into()],
            provider: "pets".into(),
            denials: Denials::default(),
            home: Home::Under(None),
        };
        let none = reach(&[]);
        for mine in ["pets:index:Kennel", "fleet:index:Thing", "pulumi:providers:fleet"] {
            none.check("registering", mine, "").unwrap();
        }
        none.check("registering", "fleet:index:Thing", "2.0.0").unwrap();
        let e = none.check("invoking", "aws:s3:getBucket", "").unwrap_err();
        assert!(
            matches!(&e, types::Error::FailedPrecondition(m) if m.contains("missing grant: package \"aws\" for provider pets")),
            "{e:?}"
        );
        assert!(none.check("registering", "pulumi:providers:aws", "").is_err(), "a provider of another package");
        assert!(none.check("reading", "pulumi:pulumi:StackReference", "").is_err(), "the engine's own too");
        // Its own package at another version is another plugin, which the engine would fetch.
        let e = none.check("registering", "pets:index:Kennel", "9.9.9").unwrap_err();
        assert!(matches!(&e, types::Error::FailedPrecondition(m) if m.contains("served at version 0.1.0")), "{e:?}");
        assert_eq!(none.denials.lock().unwrap().len(), 4, "each refusal is noted for the call's error");
        reach(&["aws"]).check("invoking", "aws:s3:getBucket", "6.0.0").unwrap();
        assert!(reach(&["aws"]).check("invoking", "gcp:x:y", "").is_err());
        reach(&["*"]).check("registering", "command:local:Command", "").unwrap();
        // `*` is every provider's package, not the engine's own (getResource reads any state).
        assert!(reach(&["*"]).check("invoking", "pulumi:pulumi:getResource", "").is_err());
        reach(&["*", "pulumi"]).check("invoking", "pulumi:pulumi:getResource", "").unwrap();
        // Only `package:module:member`: with `$` a type's URN is another package's resource's.
        for forged in ["pets:index:Kennel$aws:iam:AccessKey", "pets:index", "pets:index:a:b", "pets::x", "pets:index:"]
        {
            let e = reach(&["pets"]).check("registering", forged, "").unwrap_err();
            assert!(
                matches!(&e, types::Error::FailedPrecondition(m) if m.contains("not a `package:module:member` token")),
                "{forged}: {e:?}"
            );
        }
        // The name a component gives itself is not its package: only what `own` lists.
        let unnamed = Reach { own: vec![], ..reach(&[]) };
        assert!(unnamed.check("registering", "pets:index:Kennel", "").is_err());
        assert!(
            Reach { own: vec![(String::new(), String::new())], ..reach(&[]) }.check("invoking", ":x:y", "").is_err()
        );
        // Provider references: their package must be reachable too.
        let aws = "urn:pulumi:dev::proj::pulumi:providers:aws::default::id-1";
        assert!(none.check_provider("registering with provider", aws).is_err());
        reach(&["aws"]).check_provider("registering with provider", aws).unwrap();
        let own = "urn:pulumi:dev::proj::pets:index:Kennel$pulumi:providers:fleet::p::id-2";
        none.check_provider("registering with provider", own).unwrap();
        none.check_provider("registering with provider", "").unwrap();
        assert!(none.check_provider("registering with provider", "not a reference").is_err());
        let aws_type = "urn:pulumi:dev::proj::aws:s3:Bucket::b::id";
        assert!(reach(&["*"]).check_provider("x", aws_type).is_err(), "not a provider at all");
        // A long token is shown cut.
        let long = "x".repeat(1 << 20);
        let e = none.check("invoking", &format!("{long}:a:b"), "").unwrap_err();
        assert!(matches!(&e, types::Error::FailedPrecondition(m) if m.len() < 2000), "{}", format!("{e:?}").len());
    }

    fn registration(type_: &str, custom: bool, aliases: Vec<types::Alias>) -> m::RegisterResourceRequest {
        m::RegisterResourceRequest {
            type_: type_.into(),
            name: "n".into(),
            custom,
            remote: false,
            object: crate::convert::value::empty_map(),
            options: m::ResourceOptions {
                parent: String::new(),
                provider: String::new(),
                providers: vec![],
                dependencies: vec![],
                property_dependencies: vec![],
                protect: None,
                ignore_changes: vec![],
                aliases,
                custom_timeouts: None,
                delete_before_replace: None,
                retain_on_delete: None,
                deleted_with: String::new(),
                replace_on_changes: vec![],
                additional_secret_outputs: vec![],
                version: "9.9.9".into(),
                plugin_download_url: String::new(),
                import_id: String::new(),
                resource_hooks: None,
                replace_with: vec![],
                replacement_trigger: None,
            },
            accepts_output_values: false,
        }
    }

    /// A local component's type and an alias' name resources in the user's
    /// state, so they are held to the same packages as a custom resource.
    #[test]
    fn local_components_and_aliases_reach_only_reachable_packages() {
        let reach = |granted: &[&str]| Reach {
            own: vec![("pets".into(), "0.1.0".into())],
            granted: granted.iter().map(|g| g.to_string()).collect(),
            hooks: vec!["audit".into()],
            provider: "pets".into(),
            denials: Denials::default(),
            home: Home::Under(None),
        };
        let none = reach(&[]);
        // Its own local component, at any version (it loads no plugin).
        none.register(&registration("pets:index:Kennel", false, vec![])).unwrap();
        let e = none.register(&registration("aws:iam:AccessKey", false, vec![])).unwrap_err();
        assert!(
            matches!(&e, types::Error::FailedPrecondition(m) if m.contains("registering \"aws:iam:AccessKey\": missing grant: package \"aws\"")),
            "{e:?}"
        );
        assert!(none.register(&registration("pulumi:pulumi:Stack", false, vec![])).is_err(), "the engine's own");
        reach(&["aws"]).register(&registration("aws:iam:AccessKey", false, vec![])).unwrap();
        // A local component's providers are its children's, checked as each registers.
        let mut kennel = registration("pets:index:Kennel", false, vec![]);
        kennel.options.providers = vec![("aws".into(), "urn:pulumi:dev::proj::pulumi:providers:aws::p::id".into())];
        none.register(&kennel).unwrap();

        let spec = |type_: &str| {
            types::Alias::Spec(types::AliasSpec {
                name: "old".into(),
                type_: type_.into(),
                stack: String::new(),
                project: String::new(),
                parent: types::AliasParent::Urn("urn:pulumi:dev::proj::aws:s3:Bucket::b".into()),
            })
        };
        let key = "urn:pulumi:dev::proj::aws:iam:AccessKey::deploy";
        let own = "urn:pulumi:dev::proj::pulumi:pulumi:Stack$pets:index:Kennel::old";
        let kennel = |aliases| registration("pets:index:Kennel", false, aliases);
        none.register(&kennel(vec![types::Alias::Urn(own.into()), spec(""), spec("pets:index:Old")])).unwrap();
        for aliases in [vec![types::Alias::Urn(key.into())], vec![spec("aws:iam:AccessKey")]] {
            let e = none.register(&kennel(aliases)).unwrap_err();
            assert!(
                matches!(&e, types::Error::FailedPrecondition(m) if m.starts_with("aliasing \"aws:iam:AccessKey\": missing grant: package \"aws\"")),
                "{e:?}"
            );
        }
        let e = none.register(&kennel(vec![types::Alias::Urn("old".into())])).unwrap_err();
        assert!(matches!(&e, types::Error::FailedPrecondition(m) if m.contains("is not a URN")), "{e:?}");
        reach(&["aws"]).register(&kennel(vec![types::Alias::Urn(key.into())])).unwrap();
        // A custom resource's aliases are held to the same.
        let custom = registration("pets:index:Pet", true, vec![types::Alias::Urn(key.into())]);
        let e = reach(&[]).register(&custom).unwrap_err();
        assert!(matches!(&e, types::Error::FailedPrecondition(m) if m.contains("served at version 0.1.0")), "{e:?}");
        let custom = m::RegisterResourceRequest {
            options: m::ResourceOptions { version: String::new(), ..custom.options },
            ..custom
        };
        assert!(reach(&[]).register(&custom).is_err());
        reach(&["aws"]).register(&custom).unwrap();
        // A type or an alias spec with `$` names a URN under another's parent.
        let forged = "pets:index:Kennel$aws:iam:AccessKey";
        for custom in [false, true] {
            assert!(none.register(&registration(forged, custom, vec![])).is_err());
        }
        assert!(none.register(&kennel(vec![spec(forged)])).is_err());

        // Hooks: only those the construct passed on (the user's callbacks).
        let hooked = |names: &[&str]| {
            let mut r = registration("pets:index:Kennel", false, vec![]);
            r.options.resource_hooks = Some(types::ResourceHooks {
                before_create: vec![],
                after_create: names.iter().map(|n| n.to_string()).collect(),
                before_update: vec![],
                after_update: vec![],
                before_delete: vec![],
                after_delete: vec![],
                on_error: vec![],
            });
            r
        };
        none.register(&hooked(&["audit"])).unwrap();
        let e = none.register(&hooked(&["audit", "wipe"])).unwrap_err();
        assert!(matches!(&e, types::Error::FailedPrecondition(m) if m.contains("hook \"wipe\"")), "{e:?}");
    }

    /// A method's component, however the engine sends its `__self__`.
    #[test]
    fn a_call_s_self_is_found_in_its_arguments() {
        use crate::convert::value::{sig, struct_into_wit};
        use prost_types::{Struct, Value as V, value::Kind};
        let s = |t: &str| V { kind: Some(Kind::StringValue(t.into())) };
        let obj =
            |fields: &[(&str, V)]| Struct { fields: fields.iter().map(|(k, v)| (k.to_string(), v.clone())).collect() };
        let special = |signature: &str, fields: &[(&str, V)]| {
            let mut all = vec![(sig::KEY, s(signature))];
            all.extend(fields.iter().cloned());
            V { kind: Some(Kind::StructValue(obj(&all))) }
        };
        let urn = "urn:pulumi:dev::proj::pets:index:Kennel::k";
        let long = format!("urn:pulumi:dev::proj::pets:index:Kennel::{}", "k".repeat(2000));
        let reference = special(sig::RESOURCE_REFERENCE, &[("urn", s(urn))]);
        let secret = special(sig::SECRET, &[("value", reference.clone())]);
        let output = special(sig::OUTPUT_VALUE, &[("value", secret.clone())]);
        let unknown = special(sig::OUTPUT_VALUE, &[]);
        let of = |v: Option<V>| {
            let mut fields = vec![("name", s("rex"))];
            fields.extend(v.map(|v| ("__self__", v)));
            self_urn(&struct_into_wit(obj(&fields)).unwrap())
        };
        for v in [reference, secret, output, s(urn)] {
            assert_eq!(of(Some(v.clone())).as_deref(), Some(urn), "{v:?}");
        }
        assert_eq!(of(Some(s(&long))), Some(long), "a long string is held apart from the text");
        for v in [None, Some(unknown), Some(V { kind: Some(Kind::NumberValue(1.0)) })] {
            assert_eq!(of(v.clone()), None, "{v:?}");
        }
    }

    #[tokio::test]
    async fn without_monitors_the_functions_say_how_the_host_was_set_up() {
        let deployment = rp::Deployment {
            project: "p".into(),
            stack: "s".into(),
            organization: "o".into(),
            config: vec![],
            config_secret_keys: vec![],
            dry_run: false,
            parallel: 1,
            monitor_endpoint: "127.0.0.1:1".into(),
            accepts_output_values: false,
        };
        let empty = types::Value { words: vec![], text: String::new(), long: vec![] };
        let err =
            open(None, &deployment, Arc::default()).register_resource_outputs("urn".into(), empty).await.unwrap_err();
        assert!(
            matches!(&err, types::Error::FailedPrecondition(m) if m.contains("RuntimeConfig::monitors")),
            "{err:?}"
        );
    }
}
