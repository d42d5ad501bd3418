//! Per-instance store data: the sandboxed WASI context, outbound HTTP, the
//! logging import, the call context (cancellation, partial state) and
//! `wasi:random/random`.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use wasmtime::component::ResourceTable;
use wasmtime::{ResourceLimiter, StoreLimits, StoreLimitsBuilder};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

use super::bindings::latest::pulumi::provider::{context, logging, types};
use super::handles::Charges;
use super::held;
use super::http::{Denials, HttpHooks, MAX_CONNECTIONS, MAX_LOOKUPS};
use super::logs::{LogQueue, LogSeverity};
use super::monitor::ResourceMonitor;
use super::sandbox::Sandbox;

/// Bytes of guest stderr kept (panic messages end up here).
const STDERR_CAPACITY: usize = 64 * 1024;
/// Handles (streams, requests, ...) one instance may hold at once.
const MAX_RESOURCES: usize = 10_000;
/// Bytes one wasi:http fields handle may hold (its in-memory size, a little
/// over the headers' own): enough for a long token or cookie. wasmtime's
/// default, 128 KiB, would make each handle's charge against the memory
/// limit (`handles.rs`) four times as large.
pub(super) const MAX_FIELDS_BYTES: usize = 32 << 10;
/// Table elements per instance (function tables of the guest).
const MAX_TABLE_ELEMENTS: usize = 1_000_000;
/// Bytes of randomness one call to wasi:random may ask for.
pub(super) const MAX_RANDOM_BYTES: u64 = 1 << 20;

/// How long the current call has waited on the engine (its resource
/// monitor), a wait in progress included: time the call's deadline does not
/// count, since a Construct waits there for as long as the engine takes to
/// create its children. A Construct or Call also keeps its permit here and
/// gives it back while it waits, so that waiting calls never hold every
/// permit while the engine needs one for a call of its own (the children,
/// or a nested Construct of this same provider).
#[derive(Clone, Debug, Default)]
pub struct EngineWait(Arc<Mutex<Waits>>);

#[derive(Debug, Default)]
struct Waits {
    done: Duration,
    since: Option<Instant>,
    semaphore: Option<Arc<Semaphore>>,
    permit: Option<OwnedSemaphorePermit>,
}

impl Waits {
    /// Counts the wait in progress, if any, as done.
    fn close_wait(&mut self) {
        if let Some(t) = self.since.take() {
            self.done += t.elapsed();
        }
    }
}

impl EngineWait {
    fn lock(&self) -> std::sync::MutexGuard<'_, Waits> {
        self.0.lock().expect("engine wait lock")
    }

    pub fn total(&self) -> Duration {
        let w = self.lock();
        w.done + w.since.map_or(Duration::ZERO, |t| t.elapsed())
    }

    /// Keeps the call's permit, to give back during waits.
    pub(super) fn hold(&self, semaphore: Arc<Semaphore>, permit: OwnedSemaphorePermit) {
        let mut w = self.lock();
        w.semaphore = Some(semaphore);
        w.permit = Some(permit);
    }

    /// Runs `wait` without the call's permit, counting the time it takes
    /// (getting the permit back included).
    pub async fn timed<T>(&self, wait: impl Future<Output = T>) -> T {
        let semaphore = {
            let mut w = self.lock();
            w.since = Some(Instant::now());
            w.permit = None;
            w.semaphore.clone()
        };
        let out = wait.await;
        let permit = match semaphore {
            Some(s) => s.acquire_owned().await.ok(),
            None => None,
        };
        let mut w = self.lock();
        w.permit = permit;
        w.close_wait();
        out
    }

    /// A patient call stopped running to wait (see `Pool::bounded_waiting`);
    /// not a second start of a wait already counted.
    pub(super) fn begin_gap(&self) {
        self.lock().since.get_or_insert_with(Instant::now);
    }

    /// It runs again.
    pub(super) fn end_gap(&self) {
        self.lock().close_wait();
    }

    /// Forgets the call: its waits, and its permit (given back).
    pub(super) fn reset(&self) {
        *self.lock() = Waits::default();
    }
}

/// What a `create` reported having made before it was interrupted.
#[derive(Clone, Debug)]
pub struct PartialState {
    pub id: String,
    /// `None` when they were too large to keep (over 8 MiB).
    pub properties: Option<types::Value>,
    /// Their size in the guest's encoding.
    pub bytes: usize,
}

impl PartialState {
    /// The size of `properties` in the guest's encoding: its words, its
    /// short text and its long strings.
    pub fn bytes_of(properties: &types::Value) -> usize {
        properties.words.len() * 4 + properties.text.len() + properties.long.iter().map(String::len).sum::<usize>()
    }
}

/// The largest partial state an instance keeps in the host. One twice as
/// large as what can travel back to the engine (4 MiB) would be dropped
/// there anyway; kept, it would be host memory outside the instance's
/// limit, for as long as its call waits (a component's `long` strings may
/// all name the same bytes of its memory, so a small guest can report a
/// huge state).
pub const MAX_PARTIAL_BYTES: usize = 8 << 20;

pub struct HostState {
    wasi: WasiCtx,
    pub(super) table: ResourceTable,
    /// What the handles in `table` may hold, counted against the memory limit.
    pub(super) charges: Charges,
    http: WasiHttpCtx,
    hooks: HttpHooks,
    pub(super) limits: Limits,
    logs: LogQueue,
    stderr: MemoryOutputPipe,
    cancelled: Arc<AtomicBool>,
    pub(super) partial: Option<PartialState>,
    pub(super) denials: Denials,
    /// The resource monitor, during a `construct` or `call` only.
    pub(super) monitor: Option<Arc<dyn ResourceMonitor>>,
    /// Time the current call spent waiting on the monitor.
    pub(super) engine_wait: EngineWait,
    /// The current call's deadline, read at each epoch tick.
    pub(super) clock: CallClock,
}

/// When the current call must end (not counting its waits on the engine),
/// and when it last yielded to the async runtime. Set for each call; read
/// by the store's epoch callback, installed once per instance.
#[derive(Clone, Copy, Debug)]
pub(super) struct CallClock {
    pub deadline: Instant,
    pub ran_since: Instant,
}

impl HostState {
    /// The instance's memory counts in `footprint`, the provider's.
    pub(super) fn new(
        sandbox: &Sandbox,
        logs: LogQueue,
        cancelled: Arc<AtomicBool>,
        footprint: Arc<Footprint>,
    ) -> Self {
        let stderr = MemoryOutputPipe::new(STDERR_CAPACITY);
        let wasi = sandbox.wasi_ctx(stderr.clone());
        let limits = Limits {
            inner: StoreLimitsBuilder::new()
                .memory_size(sandbox.memory)
                .table_elements(MAX_TABLE_ELEMENTS)
                .trap_on_grow_failure(true)
                .build(),
            memory: 0,
            limit: sandbox.memory,
            footprint,
            total: sandbox.memory_total,
            refused: None,
        };
        let mut table = ResourceTable::new();
        table.set_max_capacity(MAX_RESOURCES);
        let denials = Denials::default();
        let hooks = HttpHooks {
            grants: sandbox.http.clone(),
            provider: sandbox.provider.clone(),
            denials: denials.clone(),
            connections: Arc::new(Semaphore::new(MAX_CONNECTIONS)),
            lookups: Arc::new(Semaphore::new(MAX_LOOKUPS)),
        };
        HostState {
            wasi,
            table,
            charges: Charges::default(),
            http: {
                let mut http = WasiHttpCtx::new();
                http.set_field_size_limit(MAX_FIELDS_BYTES);
                http
            },
            hooks,
            limits,
            logs,
            stderr,
            cancelled,
            partial: None,
            denials,
            monitor: None,
            engine_wait: EngineWait::default(),
            clock: CallClock { deadline: Instant::now(), ran_since: Instant::now() },
        }
    }

    /// Keeps a note for the call's error (and logs it): what the sandbox
    /// refused, naming the provider.
    pub(super) fn note(&self, what: String) {
        super::http::note(&self.denials, format!("{what} (provider {})", self.hooks.provider));
    }

    /// How many host handles (resources) the guest holds.
    pub(super) fn handles(&mut self) -> usize {
        self.table.iter_mut().count()
    }

    /// What the guest wrote to stderr (e.g. a panic message), lossily decoded.
    /// Escaped ([`crate::text`]): this goes into the host's log and statuses,
    /// where a guest's newlines could forge lines of its own.
    /// Cut to `max` bytes.
    pub(super) fn stderr_text(&self, max: usize) -> String {
        let bytes = self.stderr.contents();
        let text = String::from_utf8_lossy(&bytes);
        crate::text::escape_within(text.trim().to_owned(), &[], max)
    }

    /// Forgets the call's partial state, denials, monitor and waits on the
    /// engine (giving back the permit they keep), as the instance goes back
    /// to the pool: the next call starts clean.
    pub(super) fn reset_call(&mut self) {
        self.partial = None;
        self.monitor = None;
        self.engine_wait.reset();
        if let Ok(mut d) = self.denials.lock() {
            d.clear();
        }
    }
}

/// The store's limits, remembering how large linear memory has grown so an
/// instance that ballooned is not kept in the pool.
pub struct Limits {
    inner: StoreLimits,
    /// The size of all this instance's linear memories together, in bytes.
    pub memory: usize,
    /// The sandbox's memory limit, in bytes.
    pub limit: usize,
    /// The provider's instances' memory together, and its limit
    /// (`Sandbox::memory_total`). `memory` is counted there until the
    /// instance is dropped.
    footprint: Arc<Footprint>,
    pub total: usize,
    /// Set once a growth past a limit of the sandbox's was refused (it
    /// traps), so the error can name the limit rather than the guest's
    /// crash. A memory's own declared maximum is not the sandbox's doing
    /// and does not count.
    pub refused: Option<MemoryCap>,
}

impl Drop for Limits {
    fn drop(&mut self) {
        self.footprint.give(self.memory);
    }
}

/// Which of the sandbox's memory limits a guest ran into, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemoryCap {
    /// The instance's own (`memory-mb`), with what the host holds for its handles.
    Instance(usize),
    /// All of the provider's instances' together (`memory-total-mb`).
    Provider(usize),
}

impl std::fmt::Display for MemoryCap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MemoryCap::Instance(limit) => write!(
                f,
                "it needed more than its limit of {} MiB (raise `memory-mb` for it in the sandbox policy, \
                 or PULUMI_WASM_MAX_MEMORY_MB)",
                limit >> 20
            ),
            MemoryCap::Provider(limit) => write!(
                f,
                "its instances running at the same time needed more than the {} MiB they may hold together \
                 (raise `memory-total-mb` for it in the sandbox policy, or PULUMI_WASM_MAX_TOTAL_MEMORY_MB)",
                limit >> 20
            ),
        }
    }
}

/// The linear memory all of one provider's instances hold, in bytes. Each
/// instance's own limit alone would let a provider hold it many times
/// over, in as many instances as the engine's calls keep busy at once.
#[derive(Default)]
pub struct Footprint {
    used: AtomicUsize,
    /// Drops one of the pool's idle instances, giving its memory back;
    /// false when none is left.
    reclaim: std::sync::OnceLock<Box<dyn Fn() -> bool + Send + Sync>>,
}

impl std::fmt::Debug for Footprint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Footprint").field("used", &self.used()).finish_non_exhaustive()
    }
}

impl Footprint {
    /// `reclaim` drops one instance that sits idle (false when none is
    /// left), for a running one that needs its memory. Set once; later
    /// calls change nothing.
    pub(super) fn reclaim_with(&self, reclaim: impl Fn() -> bool + Send + Sync + 'static) {
        let _ = self.reclaim.set(Box::new(reclaim));
    }

    /// Counts `bytes` more if the total stays within `limit`, dropping
    /// idle instances one by one while that is not so.
    fn take_or_reclaim(&self, bytes: usize, limit: usize) -> bool {
        loop {
            if self.take(bytes, limit) {
                return true;
            }
            if !self.reclaim.get().is_some_and(|reclaim| reclaim()) {
                return false;
            }
        }
    }

    /// Counts `bytes` more, if the total stays within `limit`.
    fn take(&self, bytes: usize, limit: usize) -> bool {
        let grown = |used: usize| used.checked_add(bytes).filter(|total| *total <= limit);
        self.used.fetch_update(Ordering::AcqRel, Ordering::Acquire, grown).is_ok()
    }

    fn give(&self, bytes: usize) {
        self.used.fetch_sub(bytes, Ordering::AcqRel);
    }

    /// The bytes counted now.
    pub fn used(&self) -> usize {
        self.used.load(Ordering::Acquire)
    }
}

/// Linear memory and what the host holds for the handles share the limit
/// (`handles.rs`).
impl ResourceLimiter for HostState {
    /// The limit is the instance's: a component of several core modules has
    /// a memory for each, and all of them together must fit (wasmtime's own
    /// limit applies to each memory alone).
    fn memory_growing(&mut self, current: usize, desired: usize, maximum: Option<usize>) -> wasmtime::Result<bool> {
        let total = self.limits.memory.saturating_sub(current).saturating_add(desired);
        if total > self.limits.limit {
            self.limits.refused = Some(MemoryCap::Instance(self.limits.limit));
            wasmtime::bail!(
                "linear memory would grow to {} KiB in all, past the limit of {} KiB",
                total >> 10,
                self.limits.limit >> 10
            );
        }
        if !self.room_to_grow(total) {
            self.limits.refused = Some(MemoryCap::Instance(self.limits.limit));
            wasmtime::bail!(
                "linear memory of {} KiB would not fit beside what the host holds for the instance's handles",
                total >> 10
            );
        }
        // The memory's own declared maximum (not the sandbox's doing).
        let allowed = self.limits.inner.memory_growing(current, desired, maximum)?;
        if allowed {
            let added = total.saturating_sub(self.limits.memory);
            if !self.limits.footprint.take_or_reclaim(added, self.limits.total) {
                self.limits.refused = Some(MemoryCap::Provider(self.limits.total));
                wasmtime::bail!(
                    "linear memory would grow by {} KiB, past what the provider's instances may hold together ({} KiB)",
                    added >> 10,
                    self.limits.total >> 10
                );
            }
            self.limits.memory = total;
        }
        Ok(allowed)
    }

    /// A growth allowed above did not happen (the system refused the
    /// memory). It still counts, until the instance is dropped: wasmtime
    /// may also report a failure it never asked about, and which growth
    /// failed is not said, so taking back could count less than is held.
    fn memory_grow_failed(&mut self, error: wasmtime::Error) -> wasmtime::Result<()> {
        tracing::debug!("linear memory could not grow: {error:#}");
        // It traps, as a refused growth does.
        self.limits.inner.memory_grow_failed(error)
    }

    fn table_growing(&mut self, current: usize, desired: usize, maximum: Option<usize>) -> wasmtime::Result<bool> {
        self.limits.inner.table_growing(current, desired, maximum)
    }
}

impl WasiView for HostState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView { ctx: &mut self.wasi, table: &mut self.table }
    }
}

impl WasiHttpView for HostState {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView { ctx: &mut self.http, table: &mut self.table, hooks: &mut self.hooks }
    }
}

impl types::Host for HostState {}

impl context::Host for HostState {
    fn cancelled(&mut self) -> wasmtime::Result<bool> {
        Ok(self.cancelled.load(Ordering::Relaxed))
    }

    fn report_partial_state(&mut self, id: String, properties: types::Value) -> wasmtime::Result<()> {
        // Validated when (if) it is used; only the latest report is kept.
        let bytes = PartialState::bytes_of(&properties);
        let properties = (bytes <= MAX_PARTIAL_BYTES).then_some(properties);
        self.partial = Some(PartialState { id, properties, bytes });
        Ok(())
    }

    fn asset_text(&mut self, handle: u32) -> wasmtime::Result<Option<String>> {
        Ok(held::text(handle))
    }
}

impl logging::Host for HostState {
    fn log(
        &mut self,
        severity: logging::Severity,
        message: String,
        urn: Option<String>,
        ephemeral: bool,
    ) -> wasmtime::Result<()> {
        let severity = match severity {
            logging::Severity::Debug => LogSeverity::Debug,
            logging::Severity::Info => LogSeverity::Info,
            logging::Severity::Warning => LogSeverity::Warning,
            logging::Severity::Error => LogSeverity::Error,
        };
        self.logs.send(severity, message, urn, ephemeral);
        Ok(())
    }
}

/// `wasi:random/random` in place of wasmtime-wasi's, whose `get-random-bytes`
/// draws each byte with a call of its own through a boxed generator (~3 µs
/// for 256 bytes, more than the rest of a small Create's guest code); this
/// fills the buffer in one go. The same kind of source: ChaCha12 seeded
/// from the operating system (here the thread's generator, which reseeds).
impl wasmtime_wasi::p2::bindings::random::random::Host for HostState {
    fn get_random_bytes(&mut self, len: u64) -> wasmtime::Result<Vec<u8>> {
        if len > MAX_RANDOM_BYTES {
            wasmtime::bail!("{len} random bytes asked for, over the limit of {MAX_RANDOM_BYTES}");
        }
        let mut bytes = vec![0; len as usize];
        rand::Rng::fill_bytes(&mut rand::rng(), &mut bytes);
        Ok(bytes)
    }

    fn get_random_u64(&mut self) -> wasmtime::Result<u64> {
        Ok(rand::Rng::next_u64(&mut rand::rng()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::RuntimeError;
    use crate::runtime::engine::RuntimeConfig;

    #[test]
    fn the_memory_limit_is_for_all_of_an_instance_s_memories_together() {
        const MIB: usize = 1 << 20;
        let config = RuntimeConfig { max_memory: 512 * MIB, cache: None, ..RuntimeConfig::default() };
        let (logs, _rx) = tokio::sync::mpsc::channel(1);
        let mut state =
            HostState::new(&Sandbox::deny_all(&config), LogQueue::new(logs), Arc::default(), Arc::default());
        // Two core modules' memories: each alone is under the limit.
        assert!(state.memory_growing(0, 300 * MIB, None).unwrap(), "the first memory");
        let e = state.memory_growing(0, 300 * MIB, None).unwrap_err();
        assert!(e.to_string().contains("past the limit of 524288 KiB"), "{e}");
        assert_eq!(
            state.limits.refused,
            Some(MemoryCap::Instance(512 * MIB)),
            "the sandbox's doing: the error names it"
        );
        // The first grows on within what is left; its own maximum still holds.
        assert!(state.memory_growing(300 * MIB, 500 * MIB, None).unwrap());
        assert_eq!(state.limits.memory, 500 * MIB);
        assert!(state.memory_growing(500 * MIB, 513 * MIB, None).is_err());
        // A growth allowed that the system then refuses traps, and still counts.
        assert!(state.memory_growing(500 * MIB, 510 * MIB, None).unwrap());
        let e = state.memory_grow_failed(wasmtime::format_err!("mmap failed")).unwrap_err();
        assert!(format!("{e:#}").contains("mmap failed"), "{e:#}");
        assert_eq!(state.limits.memory, 510 * MIB);
    }

    /// A partial state of `long` strings that all named the same guest
    /// bytes is kept in the host only up to [`MAX_PARTIAL_BYTES`]: its id
    /// always, its properties only when small enough to ever be sent.
    #[test]
    fn a_huge_partial_state_keeps_only_its_id() {
        use context::Host;
        let config = RuntimeConfig { cache: None, ..RuntimeConfig::default() };
        let (logs, _rx) = tokio::sync::mpsc::channel(1);
        let mut state =
            HostState::new(&Sandbox::deny_all(&config), LogQueue::new(logs), Arc::default(), Arc::default());
        let value = |long: Vec<String>| types::Value { words: vec![0; 4], text: String::new(), long };
        state.report_partial_state("i-1".into(), value(vec!["x".repeat(1 << 20); 2])).unwrap();
        assert!(state.partial.as_ref().unwrap().properties.is_some(), "small: kept");
        state.report_partial_state("i-2".into(), value(vec!["x".repeat(1 << 20); 16])).unwrap();
        let kept = state.partial.as_ref().unwrap();
        assert_eq!((kept.id.as_str(), kept.properties.is_none(), kept.bytes), ("i-2", true, (16 << 20) + 16));
    }

    /// A provider's instances share `memory_total`: each grows within its
    /// own limit only while all of them together stay within it, and what
    /// an instance held counts no more once it is dropped.
    #[test]
    fn a_provider_s_instances_share_one_memory_limit() {
        const MIB: usize = 1 << 20;
        let config = RuntimeConfig {
            max_memory: 512 * MIB,
            max_total_memory: 700 * MIB,
            cache: None,
            ..RuntimeConfig::default()
        };
        let sandbox = Sandbox::deny_all(&config);
        let footprint = Arc::new(Footprint::default());
        let instance = || {
            let (logs, _rx) = tokio::sync::mpsc::channel(1);
            HostState::new(&sandbox, LogQueue::new(logs), Arc::default(), footprint.clone())
        };
        let (mut a, mut b) = (instance(), instance());
        assert!(a.memory_growing(0, 400 * MIB, None).unwrap());
        assert!(b.memory_growing(0, 200 * MIB, None).unwrap());
        assert_eq!(footprint.used(), 600 * MIB);
        // Within b's own limit, past what both may hold.
        let e = b.memory_growing(200 * MIB, 400 * MIB, None).unwrap_err();
        assert!(e.to_string().contains("may hold together (716800 KiB)"), "{e}");
        assert_eq!(b.limits.refused, Some(MemoryCap::Provider(700 * MIB)));
        assert_eq!((b.limits.memory, footprint.used()), (200 * MIB, 600 * MIB), "a refused growth counts nowhere");
        drop(a);
        assert_eq!(footprint.used(), 200 * MIB, "a dropped instance's memory is free for the others");
        assert!(b.memory_growing(200 * MIB, 500 * MIB, None).unwrap());
        let mut c = instance();
        assert!(c.memory_growing(0, 200 * MIB, None).unwrap());
        assert!(c.memory_growing(200 * MIB, 201 * MIB, None).is_err());
        // The limit named in the error says which one and how to raise it.
        let said = RuntimeError::OutOfMemory { cap: c.limits.refused.unwrap(), partial: None }.to_string();
        assert!(said.contains("the 700 MiB they may hold together") && said.contains("memory-total-mb"), "{said}");

        // Instances sitting idle give their memory to a running one that
        // needs it, one at a time, as many as it takes.
        drop((b, c));
        let mut sitting = vec![instance(), instance(), instance()];
        for (state, mib) in sitting.iter_mut().zip([100, 200, 300]) {
            assert!(state.memory_growing(0, mib * MIB, None).unwrap());
        }
        let idle = Arc::new(Mutex::new(sitting));
        let held = Arc::downgrade(&idle);
        footprint.reclaim_with(move || held.upgrade().is_some_and(|idle| idle.lock().unwrap().pop().is_some()));
        let mut running = instance();
        assert!(running.memory_growing(0, 100 * MIB, None).unwrap(), "fits beside them");
        assert_eq!(idle.lock().unwrap().len(), 3);
        assert!(running.memory_growing(100 * MIB, 300 * MIB, None).unwrap(), "in place of one");
        assert_eq!((idle.lock().unwrap().len(), footprint.used()), (2, 600 * MIB));
        assert!(running.memory_growing(300 * MIB, 512 * MIB, None).unwrap(), "of another");
        assert_eq!((idle.lock().unwrap().len(), footprint.used()), (1, 612 * MIB));
        assert!(instance().memory_growing(0, 200 * MIB, None).is_err(), "dropping the last is not enough");
        assert!(idle.lock().unwrap().is_empty());
        // A failed growth takes nothing back: which one failed is not said.
        assert!(running.memory_grow_failed(wasmtime::format_err!("refused")).is_err());
        assert_eq!((running.limits.memory, footprint.used()), (512 * MIB, 512 * MIB));
    }
}
