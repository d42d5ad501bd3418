//! `pulumi-resource-wasm`: one plugin that becomes any WebAssembly provider
//! through `Parameterize`, the way pulumi-terraform-provider becomes any
//! Terraform provider.
//!
//! - `Parameterize(args)`: `[grants] <source> [-- guest args]` loads the
//!   component (file, store or OCI), forwards the guest args to the
//!   component's own `parameterize`, and answers the resulting package name
//!   and version. The value it hands out (through the schema's
//!   `parameterization.parameter`) pins the component's digest, the grants
//!   and the guest's own value ([`param::Parameter`]).
//! - `Parameterize(value)`: the same package again, from exactly those bytes.
//! - Several calls add several sub-packages (extension parameterization).
//!   Calls are routed by the package of their type token; sub-packages of
//!   one component share its instances, whose `parameterize` receives each.
//!
//! Uses `runtime` to run components and `store`/`oci` to find them; the
//! gRPC layer sees only a [`Backend`].

pub mod approval;
mod backend;
mod oci;
pub mod param;
mod project;
mod source;

use std::sync::{Arc, RwLock};

use semver::Version;
use tokio::sync::{Mutex, mpsc};

use crate::runtime::bindings::{rp, types};
use crate::runtime::{
    Backend, CallError, Grants, GuestLog, LoadedProvider, PackageDescriptor, Policy, Runtime, RuntimeError, package_of,
};
use crate::store::{Store, StoreError};
use approval::{Approvals, Record};
use param::{ArgsForm, GuestParameter, Parameter, Pinned};

#[derive(Debug, thiserror::Error)]
pub enum GenericError {
    #[error("{0}")]
    Args(String),
    #[error("bad parameter value: {0}")]
    Value(String),
    #[error("{0}")]
    Source(String),
    #[error(
        "the parameter pins {pinned} but {from} is {found}: refusing a component that is not the one the SDK was \
         generated for (a rebuild installed under the same version replaces it in the store); to use this one, run \
         `pulumi package add wasm {from}` again in the project, or install the build the SDK was generated for"
    )]
    DigestMismatch { from: String, pinned: String, found: String },
    #[error("{0}")]
    Guest(String),
    #[error("{0}")]
    Conflict(String),
    /// A value pins grants this machine has not approved.
    #[error("{0}")]
    NotApproved(String),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Policy(#[from] crate::runtime::policy::PolicyError),
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    /// A call into the component failed; passed on as it is.
    #[error("the component's call failed")]
    Call(Box<CallError>),
}

impl From<CallError> for GenericError {
    fn from(e: CallError) -> Self {
        GenericError::Call(Box::new(e))
    }
}

impl From<GenericError> for CallError {
    fn from(e: GenericError) -> Self {
        let error = match e {
            GenericError::Runtime(e) => return CallError::Runtime(e),
            GenericError::Call(e) => return *e,
            GenericError::Args(_) | GenericError::Value(_) | GenericError::Policy(_) => {
                types::Error::InvalidArgument(e.to_string())
            }
            GenericError::Conflict(_) | GenericError::DigestMismatch { .. } | GenericError::NotApproved(_) => {
                types::Error::FailedPrecondition(e.to_string())
            }
            GenericError::Source(_) | GenericError::Store(_) => types::Error::NotFound(e.to_string()),
            GenericError::Guest(_) => types::Error::Failed(e.to_string()),
        };
        CallError::Provider { error, denials: Vec::new() }
    }
}

/// One loaded component under one set of grants.
struct Unit {
    digest: String,
    grants: Grants,
    loaded: LoadedProvider,
    /// Whether the user was told that it does not take autonaming options.
    told_no_autonaming: std::sync::atomic::AtomicBool,
}

/// A package this host serves after a Parameterize call.
struct Sub {
    name: String,
    version: String,
    /// The value bytes, as handed out in the schema.
    value: Vec<u8>,
    /// Whether the component itself was parameterized (it then knows the
    /// package by this name and is asked for its schema by it).
    forwarded: bool,
    unit: Arc<Unit>,
}

/// The parameterized provider: no component until Parameterize.
pub struct GenericProvider {
    runtime: Arc<Runtime>,
    logs: mpsc::Sender<GuestLog>,
    /// The user's policy: the args form adds its grants; the value form runs
    /// with the grants it pins, if approved ([`approval`]).
    policy: Policy,
    store: Store,
    /// Approval ids given by `PULUMI_WASM_APPROVED`.
    approved: Vec<String>,
    subs: RwLock<Vec<Arc<Sub>>>,
    /// Serializes Parameterize calls; holds every unit loaded so far.
    units: Mutex<Vec<Arc<Unit>>>,
}

impl GenericProvider {
    pub fn new(
        runtime: Arc<Runtime>,
        logs: mpsc::Sender<GuestLog>,
        policy: Policy,
        store: Store,
        approved: Vec<String>,
    ) -> Self {
        GenericProvider { runtime, logs, policy, store, approved, subs: RwLock::default(), units: Mutex::default() }
    }

    /// Runs `f` over this machine's approvals on a blocking thread: they are
    /// small files, but reading and syncing them must not hold an async worker.
    async fn with_approvals<T: Send + 'static>(&self, f: impl FnOnce(&Approvals<'_>) -> T + Send + 'static) -> T {
        let (policy, limits) = (self.policy.clone(), self.runtime.default_limits());
        let (store, listed) = (self.store.clone(), self.approved.clone());
        let run = move || f(&Approvals::new(&policy, limits, &store, &listed));
        tokio::task::spawn_blocking(run).await.unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()))
    }

    async fn parameterize_args(&self, args: Vec<String>) -> Result<Arc<Sub>, GenericError> {
        let form = ArgsForm::parse(&args)?;
        let flags = form.grants.grants()?;
        let mut units = self.units.lock().await;
        let fetched = source::fetch(&form.source, &self.store, true).await?;
        // The grants: the user's defaults plus the flags. Not a policy section
        // for the component's name: a component chooses its own name, and
        // what is granted here is pinned in the value and approved.
        let mut defaults = self.policy.defaults.clone();
        defaults.merge(flags);
        // Directories by their real paths, as a run from the value checks them.
        let policy = Policy { defaults: project::real_dirs(&defaults), providers: Default::default() };
        let unit = self.unit(&mut units, &fetched.digest, fetched.wasm.clone(), &policy).await?;
        if self.policy.providers.contains_key(&unit.loaded.name) {
            tracing::warn!(
                "policy section [providers.{}] is not applied to a component added with `pulumi package add` \
                 (a component names itself); give its grants as flags: pulumi package add wasm -- --allow-... <component>",
                unit.loaded.name
            );
        }
        self.keep(&fetched).await;
        // A component file and directories inside the project are pinned
        // relative to it, for teammates' checkouts ([`project`]).
        let root = project::root();
        let source = match std::path::Path::new(&fetched.source) {
            file if file.is_absolute() => project::pin(file, root.as_deref()).to_string_lossy().into_owned(),
            _ => fetched.source,
        };
        let pinned = Pinned {
            digest: format!("sha256:{}", fetched.digest),
            source,
            name: unit.loaded.name.clone(),
            version: unit.loaded.version.to_string(),
        };
        let guest = if form.guest.is_empty() {
            None
        } else {
            let pool = &unit.loaded.pool;
            let package = pool.parameterize(None, rp::ParameterizeRequest::Args(form.guest)).await?;
            let schema = pool
                .get_schema(
                    None,
                    rp::GetSchemaRequest {
                        version: 0,
                        subpackage_name: package.name.clone(),
                        subpackage_version: package.version.clone(),
                    },
                )
                .await?;
            let value = param::guest_value_from_schema(&schema)?;
            Some(GuestParameter { name: package.name, version: package.version, value: param::b64(&value) })
        };
        let mut parameter = Parameter { wasm: param::FORMAT, component: pinned, grants: unit.grants.clone(), guest };
        // Approved as they resolve here, which is how a later run checks them.
        let record = Record::of(&parameter);
        parameter.grants = project::pin_dirs(&parameter.grants, root.as_deref());
        let sub = self.add(parameter, unit)?;
        // These grants were given here (the policy and the flags): later runs from this value need not ask.
        self.with_approvals(move |approvals| approvals.approve(&record)).await;
        Ok(sub)
    }

    async fn parameterize_value(&self, v: rp::ParameterValue) -> Result<Arc<Sub>, GenericError> {
        let parameter = Parameter::decode(&v.value)?;
        let (name, version) = match &parameter.guest {
            Some(g) => (&g.name, &g.version),
            None => (&parameter.component.name, &parameter.component.version),
        };
        if (name, version) != (&v.name, &v.version) {
            return Err(GenericError::Value(format!(
                "the value is for package {name} {version}, not {} {}",
                v.name, v.version
            )));
        }
        // What it pins inside the project, in this checkout of it ([`project`]).
        let root = project::root();
        let mut here = parameter.clone();
        here.grants = project::resolve_dirs(&parameter.grants, root.as_deref())?;
        if here.component.source.starts_with("./") {
            let file = project::resolve_file(std::path::Path::new(&here.component.source), root.as_deref())?;
            here.component.source = file.to_string_lossy().into_owned();
        }
        // Before anything is fetched: the value may come from anyone's SDK.
        let record = Record::of(&here);
        self.with_approvals(move |approvals| approvals.check(&record)).await.map_err(GenericError::NotApproved)?;
        let mut units = self.units.lock().await;
        let fetched = source::fetch_pinned(&here.component, &self.store).await?;
        let pinned = Policy { defaults: here.grants, providers: Default::default() };
        let unit = self.unit(&mut units, &fetched.digest, fetched.wasm.clone(), &pinned).await?;
        let own = (&unit.loaded.name, unit.loaded.version.to_string());
        if (own.0, &own.1) != (&parameter.component.name, &parameter.component.version) {
            return Err(GenericError::Value(format!(
                "the component is {} {} but the value recorded {} {}",
                own.0, own.1, parameter.component.name, parameter.component.version
            )));
        }
        // Fetched again from the recorded source (digest checked, and it is
        // what the value says): kept, so later runs need not fetch it again.
        self.keep(&fetched).await;
        if let Some(g) = &parameter.guest {
            let request = rp::ParameterizeRequest::Value(rp::ParameterValue {
                name: g.name.clone(),
                version: g.version.clone(),
                value: g.bytes(),
            });
            let package = unit.loaded.pool.parameterize(None, request).await?;
            if package.name != g.name {
                return Err(GenericError::Guest(format!(
                    "the component answered package {} for a value of package {}",
                    package.name, g.name
                )));
            }
        }
        self.add(parameter, unit)
    }

    /// Keeps fetched bytes in the store's blobs, once they have loaded as the
    /// component they were taken for (nothing else is kept). Best effort.
    async fn keep(&self, fetched: &source::Fetched) {
        if !fetched.in_store {
            source::cache(fetched.wasm.clone(), &self.store).await;
        }
    }

    /// The unit for this component under `policy`, loading it when new.
    async fn unit(
        &self,
        units: &mut Vec<Arc<Unit>>,
        digest: &str,
        wasm: Arc<[u8]>,
        policy: &Policy,
    ) -> Result<Arc<Unit>, GenericError> {
        let same = |u: &&Arc<Unit>| u.digest == digest && u.grants == policy.for_provider(&u.loaded.name, digest);
        if let Some(u) = units.iter().find(same) {
            return Ok(u.clone());
        }
        let loaded = self.runtime.load(wasm, self.logs.clone(), policy).await?;
        tracing::info!("loaded {} {} (sha256:{digest}, cached: {})", loaded.name, loaded.version, loaded.cache_hit);
        let grants = policy.for_provider(&loaded.name, digest);
        let unit = Arc::new(Unit { digest: digest.to_owned(), grants, loaded, told_no_autonaming: Default::default() });
        units.push(unit.clone());
        Ok(unit)
    }

    /// Records a sub-package; the same package with the same value again is
    /// the same sub-package, another value under its name is an error.
    fn add(&self, parameter: Parameter, unit: Arc<Unit>) -> Result<Arc<Sub>, GenericError> {
        let (name, version, forwarded) = match &parameter.guest {
            Some(g) => (g.name.clone(), g.version.clone(), true),
            None => (parameter.component.name.clone(), parameter.component.version.clone(), false),
        };
        Version::parse(&version)
            .map_err(|e| GenericError::Guest(format!("package version {:?}: {e}", crate::text::clip(&version, 256))))?;
        let value = parameter.encode()?;
        let mut subs = self.subs.write().expect("subs lock");
        if let Some(existing) = subs.iter().find(|s| s.name == name) {
            if existing.value == value {
                return Ok(existing.clone());
            }
            return Err(GenericError::Conflict(format!(
                "this provider already serves package {name} {} from another parameter",
                existing.version
            )));
        }
        // What its resources registered from `construct` are routed by: the
        // package on this base, as the SDK generated from its schema registers it.
        unit.loaded.pool.add_package(PackageDescriptor {
            base_name: param::BASE_NAME.into(),
            base_version: param::BASE_VERSION.into(),
            name: name.clone(),
            version: version.clone(),
            value: value.clone(),
        });
        let sub = Arc::new(Sub { name, version, value, forwarded, unit });
        subs.push(sub.clone());
        Ok(sub)
    }

    /// The sub-package a type token (or `pulumi:providers:<pkg>`) belongs to.
    /// Tokens of no sub-package go to the component when there is only one
    /// (e.g. an extension guest's own base resources).
    fn route(&self, token: &str) -> Result<Arc<Sub>, CallError> {
        let subs = self.subs.read().expect("subs lock");
        let Some(first) = subs.first() else {
            return Err(not_parameterized());
        };
        let package = package_of(token);
        if let Some(sub) = subs.iter().find(|s| s.name == package) {
            return Ok(sub.clone());
        }
        if subs.iter().all(|s| Arc::ptr_eq(&s.unit, &first.unit)) {
            return Ok(first.clone());
        }
        let serving: Vec<String> = subs.iter().map(|s| format!("{} {}", s.name, s.version)).collect();
        Err(CallError::Provider {
            error: types::Error::NotFound(format!(
                "no package served here owns {token:?} (serving {})",
                serving.join(", ")
            )),
            denials: Vec::new(),
        })
    }

    fn units(&self) -> Vec<Arc<Unit>> {
        self.units_of(|_| true)
    }

    /// The components serving a package `wanted` accepts, each once.
    fn units_of(&self, wanted: impl Fn(&str) -> bool) -> Vec<Arc<Unit>> {
        let subs = self.subs.read().expect("subs lock");
        let mut units: Vec<Arc<Unit>> = Vec::new();
        for s in subs.iter().filter(|s| wanted(&s.name)) {
            if !units.iter().any(|u| Arc::ptr_eq(u, &s.unit)) {
                units.push(s.unit.clone());
            }
        }
        units
    }
}

fn not_parameterized() -> CallError {
    CallError::Provider {
        error: types::Error::FailedPrecondition(
            "pulumi-resource-wasm serves a WebAssembly component only once parameterized: \
             `pulumi package add wasm <component.wasm | name@version | oci://ref> [-- its arguments]`"
                .into(),
        ),
        denials: Vec::new(),
    }
}
