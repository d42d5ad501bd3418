//! One wasmtime engine per process: compile once, pre-instantiate, pool.

use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

use tokio::sync::mpsc;
use wasmtime::component::{Component, HasSelf, Linker};
use wasmtime::{Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};

use super::RuntimeError;
use super::bindings::{ProviderPre, v0_1_0, v0_2_0, v0_3};
use super::cache::{ArtifactCache, KnownFacts, KnownFile, SeenFile, digest};
use super::logs::GuestLog;
use super::monitor::Monitors;
use super::needs::Needs;
use super::policy::Grants;
use super::policy::Policy;
use super::pool::{IdleInstances, Pool};
use super::sandbox::Sandbox;
use super::state::HostState;
use super::ticker::{Busy, Ticker};
use crate::text;

/// Components larger than this are refused before compiling (compile-time DoS).
pub const MAX_COMPONENT_BYTES: usize = 256 << 20;

#[derive(Clone, Debug)]
pub struct RuntimeConfig {
    /// Instances of one provider that may run calls at the same time; as many
    /// again may run Construct and Call, which wait on the engine.
    pub max_instances: usize,
    /// Instances beyond `max_instances` that resource operations may keep
    /// while they wait without a turn to run (see `turn::Turn`): a Create
    /// polling for an hour keeps its instance, not a turn.
    pub max_waiting: usize,
    /// Linear-memory cap per instance, in bytes, unless the policy sets one.
    pub max_memory: usize,
    /// Linear-memory cap of all of a provider's instances together, in
    /// bytes, unless the policy sets one (never below the instance's).
    pub max_total_memory: usize,
    /// Deadline of a call whose request carries no timeout, unless the policy sets one.
    pub call_timeout: Duration,
    /// Where precompiled artifacts are kept; `None` compiles every time.
    pub cache: Option<ArtifactCache>,
    /// Write `/tmp/perf-<pid>.map` so that `perf` names the guests' functions.
    pub perf_map: bool,
    /// How `construct` and `call` reach the engine's resource monitor
    /// (`server::monitors()`, over gRPC); without it their monitor
    /// functions fail, saying so.
    pub monitors: Option<Monitors>,
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        RuntimeConfig {
            max_instances: 8,
            max_waiting: 32,
            max_memory: 512 << 20,
            max_total_memory: 2048 << 20,
            call_timeout: Duration::from_secs(15 * 60),
            cache: ArtifactCache::default_dir().map(ArtifactCache::new),
            perf_map: false,
            monitors: None,
        }
    }
}

pub struct Runtime {
    engine: Engine,
    /// Built on first use, so that a start maps the component's artifact on
    /// another thread meanwhile.
    linker: OnceLock<Result<Linker<HostState>, String>>,
    /// The epoch thread starts with the first instance: nothing before needs
    /// it, and a thread less to create shortens the start.
    ticker: OnceLock<Ticker>,
    /// Every pool's idle instances: the pools share the engine's slots
    /// (the generic provider serves a pool per component), so those one
    /// pool keeps give way to another's call ([`Runtime::drop_idle_instances`]).
    idle: Mutex<Vec<Weak<IdleInstances>>>,
    pub(super) config: RuntimeConfig,
}

/// A component ready to serve: its identity and its instance pool.
pub struct LoadedProvider {
    pub pool: Arc<Pool>,
    pub name: String,
    pub version: semver::Version,
    /// SHA-256 of the component bytes.
    pub digest: String,
    /// True when the compiled artifact came from the on-disk cache.
    pub cache_hit: bool,
    /// What the component declares it needs (advice only).
    pub needs: Needs,
    /// The component honours Check's autonaming options.
    pub autonaming: bool,
    /// The `pulumi:provider` version the component was built against.
    pub contract: &'static str,
}

impl LoadedProvider {
    /// The pool, to serve as the plugin the engine booted (rather than as
    /// one component of the generic provider): a Parameterize by value
    /// makes it that value's package, on this name and version.
    pub fn into_served_pool(self) -> Arc<Pool> {
        self.pool.serve_as_base(&self.name, &self.version.to_string());
        self.pool
    }
}

impl Runtime {
    pub fn new(mut config: RuntimeConfig) -> Result<Arc<Self>, RuntimeError> {
        config.cache = config.cache.map(|c| c.in_memory(config.perf_map));
        let engine = build_engine(&config).map_err(|e| RuntimeError::Engine(format!("{e:#}")))?;
        let (linker, ticker, idle) = (OnceLock::new(), OnceLock::new(), Mutex::default());
        Ok(Arc::new(Runtime { engine, linker, ticker, idle, config }))
    }

    /// The limits a provider gets when its grants set none (memory per
    /// instance and of all its instances, the deadline of a call without
    /// one), as grants that give nothing else.
    pub fn default_limits(&self) -> Grants {
        Grants {
            memory_mb: Some(self.config.max_memory >> 20),
            memory_total_mb: Some(self.config.max_total_memory >> 20),
            timeout_s: Some(self.config.call_timeout.as_secs()),
            ..Grants::default()
        }
    }

    /// Counts `idle` among the instances [`Runtime::drop_idle_instances`] may drop.
    pub(super) fn share_idle(&self, idle: &Arc<IdleInstances>) {
        let mut all = self.idle.lock().expect("idle lists lock");
        all.retain(|w| w.strong_count() > 0);
        all.push(Arc::downgrade(idle));
    }

    /// Drops every pool's idle instances, for an instantiation that found
    /// every slot of the engine taken; says whether any went.
    pub(super) fn drop_idle_instances(&self) -> bool {
        let lists: Vec<_> = self.idle.lock().expect("idle lists lock").iter().filter_map(Weak::upgrade).collect();
        let mut dropped = 0;
        for list in lists {
            // Dropped once the list's lock is let go.
            let gone = std::mem::take(&mut *list.lock().unwrap_or_else(|p| p.into_inner()));
            dropped += gone.len();
        }
        if dropped > 0 {
            tracing::debug!("every instance slot was taken: dropped {dropped} idle instances");
        }
        dropped > 0
    }

    /// The engine, with its epoch thread started (deadlines and yields need it).
    pub(super) fn running_engine(&self) -> &Engine {
        self.ticker();
        &self.engine
    }

    fn ticker(&self) -> &Ticker {
        self.ticker.get_or_init(|| Ticker::start(&self.engine))
    }

    /// Keeps the epoch advancing while the guard lives: held for every guest call.
    pub(super) fn busy(&self) -> Busy<'_> {
        self.ticker().busy()
    }

    /// The host's imports (WASI, HTTP, the provider world), built once.
    fn linker(&self) -> Result<&Linker<HostState>, RuntimeError> {
        let built = self.linker.get_or_init(|| {
            let mut linker = Linker::new(&self.engine);
            wasmtime_wasi::p2::add_to_linker_async(&mut linker)
                // Our own `wasi:random/random` in place of wasmtime-wasi's (see state.rs).
                .and_then(|_| {
                    linker.allow_shadowing(true);
                    let r = wasmtime_wasi::p2::bindings::random::random::add_to_linker::<_, HasSelf<HostState>>(
                        &mut linker,
                        |s| s,
                    );
                    linker.allow_shadowing(false);
                    r
                })
                .and_then(|_| wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut linker))
                .and_then(|_| super::http::bound_request_fields(&mut linker))
                .and_then(|_| super::handles::charge_for_handles(&mut linker))
                // Every contract version's imports: a component names one of them.
                .and_then(|_| v0_3::Provider::add_to_linker::<_, HasSelf<HostState>>(&mut linker, |s| s))
                .and_then(|_| v0_2_0::Provider::add_to_linker::<_, HasSelf<HostState>>(&mut linker, |s| s))
                .and_then(|_| v0_1_0::Provider::add_to_linker::<_, HasSelf<HostState>>(&mut linker, |s| s))
                .map(|_| linker)
                .map_err(|e| format!("{e:#}"))
        });
        built.as_ref().map_err(|e| RuntimeError::Engine(e.clone()))
    }

    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Compiles (or loads from the cache) and links a component whose
    /// SHA-256 is `digest`. Blocking.
    pub fn prepare(&self, wasm: &[u8], digest: &str) -> Result<(ProviderPre<HostState>, bool), RuntimeError> {
        if wasm.len() > MAX_COMPONENT_BYTES {
            return Err(RuntimeError::NotAComponent(format!(
                "{} bytes is over the {MAX_COMPONENT_BYTES}-byte limit",
                wasm.len()
            )));
        }
        // The preamble tells a component (layer 1) from a core module; checked
        // here so the error says which, before any compile work.
        match wasm.get(..8) {
            Some([0, b'a', b's', b'm', _, _, 1, 0]) => {}
            Some([0, b'a', b's', b'm', 1, 0, 0, 0]) => {
                return Err(RuntimeError::NotAComponent(
                    "the file is a core module; build the provider for `wasm32-wasip2` \
                     (`cargo build --target wasm32-wasip2`), which makes a component"
                        .into(),
                ));
            }
            _ => return Err(RuntimeError::NotAComponent("the file is not WebAssembly".into())),
        }
        let (component, hit) = match &self.config.cache {
            Some(cache) => cache.load(&self.engine, wasm, digest)?,
            None => {
                (Component::new(&self.engine, wasm).map_err(|e| RuntimeError::NotAComponent(format!("{e:#}")))?, false)
            }
        };
        Ok((self.link(&component)?, hit))
    }

    fn link(&self, component: &Component) -> Result<ProviderPre<HostState>, RuntimeError> {
        let wrong =
            |e: wasmtime::Error| RuntimeError::WrongWorld(format!("{e:#}{}", contract_hint(&self.engine, component)));
        ProviderPre::new(self.linker()?.instantiate_pre(component).map_err(wrong)?).map_err(wrong)
    }

    /// Prepares a component off the async runtime, starts its pool, reads its
    /// plugin info, then runs it under the grants `policy` gives that name.
    pub async fn load(
        self: &Arc<Self>,
        wasm: Arc<[u8]>,
        logs: mpsc::Sender<GuestLog>,
        policy: &Policy,
    ) -> Result<LoadedProvider, RuntimeError> {
        let this = self.clone();
        let bytes = wasm.clone();
        // The digest (the cache key) is computed once, with the blocking work.
        let prepared = tokio::task::spawn_blocking(move || {
            let digest = digest(&bytes);
            this.prepare(&bytes, &digest).map(|(pre, hit)| (pre, hit, digest))
        });
        // Meanwhile: the linker, and what the component declares it needs (advice only).
        self.linker()?;
        let needs = Needs::read(&wasm).unwrap_or_else(|e| {
            tracing::warn!("ignoring the component's needs declaration: {e}");
            Needs::default()
        });
        if !needs.unknown.is_empty() {
            let keys = needs.unknown.join(", ");
            tracing::warn!("the component's needs declaration names keys this host does not read: {keys}");
        }
        let (pre, cache_hit, digest) = prepared.await.map_err(|e| RuntimeError::Engine(e.to_string()))??;
        let contract = pre.contract();
        let pool = Arc::new(Pool::new(self.clone(), pre, logs));
        pool.set_sandbox(Sandbox::before_naming(&self.config, &policy.for_any_name(&digest)));
        let info = {
            let mut lease = pool.lease(None, false, false).await?;
            let limit = lease.timeout();
            let (guest, store) = lease.parts();
            let info = pool.bounded(limit, guest.call_get_plugin_info(store)).await;
            lease.finish(info)?
        };
        let version = semver::Version::parse(&info.version)
            .map_err(|e| RuntimeError::BadPluginInfo(format!("version '{}': {e}", text::named(&info.version))))?;
        validate_package_name(&info.name)?;
        let mut sandbox = Sandbox::new(&info.name, policy.for_provider(&info.name, &digest), &self.config)?;
        sandbox.note_needs(&needs);
        pool.set_sandbox(sandbox);
        let autonaming = info.supports_autonaming_configuration;
        Ok(LoadedProvider { pool, name: info.name, version, digest, cache_hit, needs, autonaming, contract })
    }

    /// Loads a component from the cache alone, as `known` (from
    /// [`ArtifactCache::known_file`]) records it: the file this host served
    /// before, unchanged since. Neither reads, hashes nor runs the component;
    /// the name, version and needs are those recorded. `None` when its
    /// artifact is gone or unreadable: load the file with [`Runtime::load`]
    /// then (and [`Runtime::remember_file`] it). The caller makes the
    /// `sandbox` for the recorded name, so a policy error shows before any of this.
    pub async fn load_known(
        self: &Arc<Self>,
        known: KnownFile,
        logs: mpsc::Sender<GuestLog>,
        mut sandbox: Sandbox,
    ) -> Result<Option<LoadedProvider>, RuntimeError> {
        let Some(cache) = self.config.cache.clone() else { return Ok(None) };
        let this = self.clone();
        let digest = known.digest.clone();
        let artifact = tokio::task::spawn_blocking(move || cache.open(&this.engine, &digest));
        // The linker is built while the artifact is mapped.
        self.linker()?;
        let Some(component) = artifact.await.map_err(|e| RuntimeError::Engine(e.to_string()))? else {
            return Ok(None);
        };
        let pre = self.link(&component)?;
        let version = semver::Version::parse(&known.version)
            .map_err(|e| RuntimeError::BadPluginInfo(format!("version '{}': {e}", known.version)))?;
        validate_package_name(&known.name)?;
        let contract = pre.contract();
        let pool = Arc::new(Pool::new(self.clone(), pre, logs));
        sandbox.note_needs(&known.needs);
        pool.set_sandbox(sandbox);
        Ok(Some(LoadedProvider {
            pool,
            name: known.name,
            version,
            digest: known.digest,
            cache_hit: true,
            needs: known.needs,
            autonaming: known.autonaming,
            contract,
        }))
    }

    /// Records what the file at `path`, as `seen` before it was read, loaded
    /// as, for [`ArtifactCache::known_file`] and [`Runtime::load_known`].
    /// Best effort, written on a blocking thread and awaited: a provider the
    /// engine stops right after it loaded still starts warm the next time.
    /// It costs a cold start one small file write.
    pub async fn remember_file(&self, path: &Path, seen: SeenFile, loaded: &LoadedProvider) {
        if let Some(cache) = self.config.cache.clone() {
            let facts = KnownFacts {
                digest: loaded.digest.clone(),
                name: loaded.name.clone(),
                version: loaded.version.to_string(),
                needs: loaded.needs.clone(),
                autonaming: loaded.autonaming,
            };
            let path = path.to_owned();
            let _ = tokio::task::spawn_blocking(move || cache.remember_file(&path, &seen, facts)).await;
        }
    }
}

/// For a component that does not link: when it names another version of the
/// `pulumi:provider` contract, which one and what to do.
fn contract_hint(engine: &Engine, component: &Component) -> String {
    use super::bindings::CONTRACTS;
    let ty = component.component_type();
    // Semver-compatible versions (0.x: the same minor) are not the problem.
    let ours: Vec<semver::Version> =
        CONTRACTS.iter().map(|c| semver::Version::parse(c).expect("CONTRACTS are versions")).collect();
    let compatible = |v: &str| {
        semver::Version::parse(v)
            .is_ok_and(|v| ours.iter().any(|o| v.major == o.major && (v.major > 0 || v.minor == o.minor)))
    };
    let mut names = ty.imports(engine).map(|(n, _)| n).chain(ty.exports(engine).map(|(n, _)| n));
    let other = names.find_map(|name| {
        let version = name.strip_prefix("pulumi:provider/")?.split_once('@')?.1;
        (!compatible(version)).then(|| version.to_owned())
    });
    let (last, rest) = CONTRACTS.split_last().expect("CONTRACTS is not empty");
    let spoken = if rest.is_empty() { last.to_string() } else { format!("{} and @{last}", rest.join(", @")) };
    match other {
        Some(v) => format!(
            " (it was built against pulumi:provider@{v}; this host speaks pulumi:provider@{spoken}: \
             use a pulumi-wasm that supports {v}, or rebuild the provider with a matching pulumi-wasm-sdk)"
        ),
        None => String::new(),
    }
}

/// Package names become resource-token prefixes and plugin file names.
/// `pulumi` is the engine's own package (`pulumi:pulumi:getResource` reads
/// any resource's state): no component may take it as its own.
fn validate_package_name(name: &str) -> Result<(), RuntimeError> {
    let ok = name != "pulumi"
        && !name.is_empty()
        && name.len() <= 64
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
        && name.starts_with(|c: char| c.is_ascii_lowercase());
    if ok { Ok(()) } else { Err(RuntimeError::BadPluginInfo(format!("package name '{}'", text::named(name)))) }
}

fn build_engine(config: &RuntimeConfig) -> wasmtime::Result<Engine> {
    let mut c = Config::new();
    c.wasm_component_model(true).epoch_interruption(true);
    // Tables filled at instantiation rather than on first use: an indirect
    // call then skips the is-it-filled test, and instances are reused, so
    // the filling is rare. Small-map calls ~1-2% faster in-process (BENCHMARKS.md).
    c.table_lazy_init(false);
    if config.perf_map {
        c.profiler(wasmtime::ProfilingStrategy::PerfMap);
    }
    // Pooling makes instantiation a few microseconds; it reserves address space
    // up front, so fall back to on-demand allocation where that is refused.
    // Slots: `max_instances + max_waiting` for resource calls (running, and
    // waiting without a turn), twice as many for Construct and Call
    // (running, and waiting on the engine; see `Pool`), and room for
    // instances being replaced. Idle instances give way when one is missing.
    let slots = (config.max_instances as u32 + config.max_waiting as u32) * 3 + 4;
    let mut pool = PoolingAllocationConfig::default();
    pool.total_component_instances(slots)
        .total_core_instances(slots * 8)
        .total_memories(slots * 2)
        .total_tables(slots * 4)
        .total_stacks(slots)
        .max_memories_per_component(4)
        // The hard ceiling; each provider's own cap is enforced per store.
        .max_memory_size(1 << 32);
    c.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    match Engine::new(&c) {
        Ok(e) => Ok(e),
        Err(err) => {
            tracing::warn!("pooling allocator unavailable ({err:#}); using on-demand allocation");
            c.allocation_strategy(InstanceAllocationStrategy::OnDemand);
            Engine::new(&c)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_package_name_is_a_lower_case_name_and_never_the_engine_s_own() {
        for good in ["pets", "kv2", "my-pkg_x"] {
            validate_package_name(good).unwrap();
        }
        for bad in ["pulumi", "", "Pets", "2kv", "-x", "a:b", &"x".repeat(65)] {
            assert!(validate_package_name(bad).is_err(), "{bad:?}");
        }
        // A guest's huge name costs a short message, not an escaped copy of it.
        let message = validate_package_name(&"\u{1}".repeat(32 << 20)).unwrap_err().to_string();
        assert!(message.len() < 2048, "{}", message.len());
    }
}
