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

mod guard;
pub(in crate::runtime) use guard::guarded;
pub use guard::{Asked, Home, MonitorAnswer, WithMonitor};

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
        // Never the engine's own package, whatever name a component took.
        let own = |p: &String| !p.is_empty() && p != "pulumi" && p == package;
        if let Some((_, served)) = self.own.iter().find(|(p, _)| own(p)) {
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

/// A guest's token, URN or name as an error shows it: escaped and cut.
fn shown(text: &str) -> String {
    crate::text::escape_within(crate::text::clip(text, 400).to_owned(), &[], 200)
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

    /// Provider `pets`, serving the packages `own`, granted `granted` and
    /// the hook `audit`.
    fn with_grants(own: &[(&str, &str)], granted: &[&str]) -> Reach {
        Reach {
            own: own.iter().map(|(p, v)| (p.to_string(), v.to_string())).collect(),
            granted: granted.iter().map(|g| g.to_string()).collect(),
            hooks: vec!["audit".into()],
            provider: "pets".into(),
            denials: Denials::default(),
            home: Home::Under(None),
        }
    }

    #[test]
    fn a_component_reaches_its_own_packages_and_the_granted_ones() {
        let reach = |granted: &[&str]| with_grants(&[("pets", "0.1.0"), ("fleet", "2.0.0")], granted);
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
        // Nor is the engine's own, whatever names its packages took.
        let engine_s = with_grants(&[("pulumi", "1.0.0")], &[]);
        assert!(engine_s.check("invoking", "pulumi:pulumi:getResource", "").is_err());
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
        let reach = |granted: &[&str]| with_grants(&[("pets", "0.1.0")], granted);
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
