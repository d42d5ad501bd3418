//! A pool of instances of one component, so the engine's concurrent calls run
//! in parallel. Every instance sees the same `parameterize`/`configure` calls:
//! the pool records them and replays them into instances that missed them.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::time::{Duration, Instant};

use tokio::sync::{AcquireError, OwnedSemaphorePermit, Semaphore, TryAcquireError, mpsc, watch};
use wasmtime::{Store, Trap, UpdateDeadline};

use super::RuntimeError;
use super::bindings::{Guest, Provider, ProviderPre};
use super::bindings::{rp, types};
use super::engine::Runtime;
use super::logs::{GuestLog, LogQueue};
use super::monitor::{self, MonitorAnswer, PackageDescriptor, WithMonitor};
use super::sandbox::{MAX_CALL_TIMEOUT, Sandbox};
use super::setup::{SetupCall, SetupLog};
use super::state::{CallClock, EngineWait, Footprint, HostState};
use super::ticker::EPOCH_TICK;
use super::turn::{Turn, Waiting};

/// Instances whose linear memory grew beyond this, or beyond a quarter of
/// their limit, are not reused: a grown memory stays grown, and a guest's
/// allocator may not fit a larger block into what it freed, so the next
/// call would have less than its limit.
const RECYCLE_ABOVE: usize = 64 << 20;
/// Instances that keep more host handles than this past a call are not
/// reused: what a handle holds (a socket, a request and its fields) lives
/// in the host, outside the memory limit, and would pile up call by call.
const RECYCLE_ABOVE_HANDLES: usize = 64;
/// The most one call may copy out of the guest (a result, or a host call's
/// arguments). wasmtime's default, set here so the error can name it.
const MAX_COPY_OUT: usize = 128 << 20;

/// The least a call that waited in the queue for most of its deadline is
/// given to run: it then fails at its deadline rather than never starting.
const MIN_LEFT: Duration = Duration::from_millis(1);

/// A pool's idle instances (shared with the runtime, see `Runtime::drop_idle_instances`).
pub(super) type IdleInstances = Mutex<Vec<Instance>>;

pub(super) struct Instance {
    store: Store<HostState>,
    guest: Provider,
    /// How many recorded setup calls this instance has seen.
    applied: usize,
    /// The engine run it was made in (see [`Pool::resume`]).
    run: u64,
}

/// The engine's cancellation: a flag guests can read, and the moment after
/// which calls still running are interrupted.
struct Cancellation {
    flag: Arc<AtomicBool>,
    interrupt_at: watch::Sender<Option<Instant>>,
}

pub struct Pool {
    runtime: Arc<Runtime>,
    pre: ProviderPre<HostState>,
    logs: LogQueue,
    sandbox: RwLock<Arc<Sandbox>>,
    idle: Arc<IdleInstances>,
    /// Turns to run a resource call: `max_instances` of them. A patient
    /// call gives its turn back while it waits (see [`Turn`]).
    permits: Arc<Semaphore>,
    /// Instances resource calls may hold: the running ones and as many
    /// again as `max_waiting`, for patient calls waiting without a turn.
    /// Taken before a turn, so a call holding a turn always has its instance
    /// and turns always come back.
    instances: Arc<Semaphore>,
    /// Permits of calls that use the resource monitor (Construct, Call): a
    /// separate budget, because they wait on the engine while it creates
    /// their children, which may be this provider's own resources; and
    /// given back during those waits (see [`EngineWait`]), since a nested
    /// Construct of this provider needs one of these.
    monitor_permits: Arc<Semaphore>,
    /// Instances those calls may hold, running or waiting on the engine:
    /// twice as many as resource calls may. Without a bound, a Construct
    /// that registers a component of its own type under itself, again and
    /// again, would take every instance slot of the engine, and resource
    /// calls would find none.
    monitor_instances: Arc<Semaphore>,
    monitor_instances_max: usize,
    setup: SetupLog,
    /// The plugin the engine booted, when this pool serves it directly
    /// (not as one component of the generic provider): a Parameterize by
    /// value then makes it a package with this base ([`Pool::serve_as_base`]).
    base: OnceLock<(String, String)>,
    /// The parameterized packages the instances serve, for the monitor.
    packages: RwLock<Arc<Vec<PackageDescriptor>>>,
    cancel: Cancellation,
    /// The component imports `context.asset-text` (see `runtime::held`).
    reads_held_texts: bool,
    /// The linear memory of all the instances, running and idle.
    footprint: Arc<Footprint>,
}

impl Pool {
    pub(super) fn new(runtime: Arc<Runtime>, pre: ProviderPre<HostState>, logs: mpsc::Sender<GuestLog>) -> Self {
        let permits = Arc::new(Semaphore::new(runtime.config.max_instances.max(1)));
        let instances = Arc::new(Semaphore::new(runtime.config.max_instances.max(1) + runtime.config.max_waiting));
        let monitor_permits = Arc::new(Semaphore::new(runtime.config.max_instances.max(1)));
        let monitor_instances_max = 2 * (runtime.config.max_instances.max(1) + runtime.config.max_waiting);
        let monitor_instances = Arc::new(Semaphore::new(monitor_instances_max));
        let sandbox = RwLock::new(Arc::new(Sandbox::deny_all(&runtime.config)));
        let cancel = Cancellation { flag: Arc::default(), interrupt_at: watch::Sender::new(None) };
        let reads_held_texts = pre.reads_held_texts();
        let idle: Arc<IdleInstances> = Arc::default();
        runtime.share_idle(&idle);
        let footprint = Arc::new(Footprint::default());
        // A running instance that needs the memory idle ones hold gets it.
        let held = Arc::downgrade(&idle);
        footprint.reclaim_with(move || {
            let Some(idle) = held.upgrade() else { return false };
            // Dropped once the lock is let go; the most grown one first.
            let dropped = {
                let mut idle = idle.lock().unwrap_or_else(|p| p.into_inner());
                let largest = (0..idle.len()).max_by_key(|&i| idle[i].store.data().limits.memory);
                largest.map(|i| idle.swap_remove(i))
            };
            if let Some(inst) = &dropped {
                tracing::debug!(
                    "dropping an idle instance of {} MiB for a running one",
                    inst.store.data().limits.memory >> 20
                );
            }
            dropped.is_some()
        });
        Pool {
            reads_held_texts,
            runtime,
            pre,
            logs: LogQueue::new(logs),
            sandbox,
            idle,
            permits,
            instances,
            monitor_permits,
            monitor_instances,
            monitor_instances_max,
            setup: SetupLog::default(),
            base: OnceLock::new(),
            packages: RwLock::default(),
            cancel,
            footprint,
        }
    }

    /// This pool serves the plugin the engine booted, named `name` at
    /// `version`: a Parameterize by value makes it that value's package.
    pub fn serve_as_base(&self, name: &str, version: &str) {
        let _ = self.base.set((name.to_owned(), version.to_owned()));
    }

    /// The instances serve `package` too (one of the same name is replaced).
    pub fn add_package(&self, package: PackageDescriptor) {
        let mut packages = self.packages.write().expect("packages lock");
        let mut all: Vec<_> = packages.iter().filter(|p| p.name != package.name).cloned().collect();
        all.push(package);
        *packages = Arc::new(all);
    }

    fn packages(&self) -> Arc<Vec<PackageDescriptor>> {
        self.packages.read().expect("packages lock").clone()
    }

    /// The package a Parameterize by value makes of the base.
    fn package_of(&self, call: &SetupCall) -> Option<PackageDescriptor> {
        let (SetupCall::Parameterize(rp::ParameterizeRequest::Value(v)), Some((base_name, base_version))) =
            (call, self.base.get())
        else {
            return None;
        };
        Some(PackageDescriptor {
            base_name: base_name.clone(),
            base_version: base_version.clone(),
            name: v.name.clone(),
            version: v.version.clone(),
            value: v.value.clone(),
        })
    }

    /// What the sandbox refused during `inst`'s call, then, with `notes`,
    /// the sandbox's standing notes (see [`Sandbox::notes`]).
    fn denials_of(&self, inst: &Instance, notes: bool) -> Vec<String> {
        let mut all = inst.store.data().denials.lock().map(|d| d.clone()).unwrap_or_default();
        if notes {
            all.extend(self.sandbox().notes.iter().cloned());
        }
        all
    }

    /// Runs later instances under `sandbox`; instances made before are dropped.
    pub(super) fn set_sandbox(&self, sandbox: Sandbox) {
        for note in &sandbox.notes {
            tracing::warn!("sandbox: {note}");
        }
        *self.sandbox.write().expect("sandbox lock") = Arc::new(sandbox);
        self.idle.lock().expect("pool lock").clear();
    }

    pub fn sandbox(&self) -> Arc<Sandbox> {
        self.sandbox.read().expect("sandbox lock").clone()
    }

    /// An instance for one call, brought up to date with the setup calls.
    /// `timeout` bounds the call (the provider's default when `None`);
    /// `uses_monitor`: a Construct or Call, which takes its own permit;
    /// `patient`: a resource operation whose waits do not count, nor does
    /// its wait in the queue.
    pub async fn lease(
        &self,
        timeout: Option<Duration>,
        uses_monitor: bool,
        patient: bool,
    ) -> Result<Lease<'_>, RuntimeError> {
        let timeout =
            timeout.unwrap_or_else(|| self.sandbox.read().expect("sandbox lock").timeout).min(MAX_CALL_TIMEOUT);
        let queued_at = std::time::Instant::now();
        let closed = |e: AcquireError| RuntimeError::Engine(e.to_string());
        let (permits, instance) = if uses_monitor {
            // Not queued: a Construct waiting for one would wait for its
            // parents, which wait on the engine for it (a nested Construct).
            match self.monitor_instances.clone().try_acquire_owned() {
                Ok(instance) => (&self.monitor_permits, Some(instance)),
                Err(TryAcquireError::Closed) => return Err(RuntimeError::Engine("the pool is closed".into())),
                Err(TryAcquireError::NoPermits) => {
                    return Err(RuntimeError::NoInstance(format!(
                        "{} Constructs and Calls of this provider are running or waiting on the engine already, \
                         as many as it keeps at once (raise --max-instances or --max-waiting)",
                        self.monitor_instances_max
                    )));
                }
            }
        } else {
            (&self.permits, None)
        };
        // Waiting in the queue counts against the call's deadline, unless
        // it is patient: behind calls that wait long (on HTTP, on the
        // engine), a Check would otherwise wait without end.
        let queued = async {
            let instance = match instance {
                Some(taken) => taken,
                None => self.instances.clone().acquire_owned().await.map_err(closed)?,
            };
            let permit = permits.clone().acquire_owned().await.map_err(closed)?;
            Ok::<_, RuntimeError>((instance, permit))
        };
        let bound = if patient { MAX_CALL_TIMEOUT } else { timeout };
        let (instance, permit) = match tokio::time::timeout(bound, queued).await {
            Ok(taken) => taken?,
            Err(_) => {
                return Err(RuntimeError::NoInstance(format!(
                    "no instance was free within the call's deadline of {timeout:?}: other calls hold them while \
                     they wait (raise --max-instances or --max-waiting)"
                )));
            }
        };
        // What is left of the deadline (all of it, for a patient call).
        let timeout = if patient { timeout } else { timeout.saturating_sub(queued_at.elapsed()).max(MIN_LEFT) };
        let run = self.setup.run();
        let pooled = self.idle.lock().expect("pool lock").pop();
        // The rare paths (a new instance, replaying setup calls) are boxed:
        // inline, their futures would make every call's several KB larger,
        // and that state is copied as the call's future is built.
        let mut inst = match pooled {
            Some(i) => i,
            None => Box::pin(self.instantiate(&self.sandbox(), run)).await?,
        };
        self.arm_deadline(&mut inst.store, timeout);
        // A monitor call's permit is given back while it waits on the engine.
        let turn = if uses_monitor {
            inst.store.data().engine_wait.hold(permits.clone(), permit);
            None
        } else {
            Some(Turn::new(permits.clone(), permit))
        };
        let behind = inst.applied < self.setup.len();
        let mut lease = Lease { pool: self, inst: Some(inst), timeout, turn, _instance: instance };
        if behind {
            Box::pin(lease.catch_up(self.setup.snapshot())).await?;
        }
        Ok(lease)
    }

    /// A new instance for engine run `run` (see [`Pool::resume`]).
    async fn instantiate(&self, sandbox: &Sandbox, run: u64) -> Result<Instance, RuntimeError> {
        match self.try_instantiate(sandbox, run).await {
            // Every slot of the engine is taken: idle instances, this pool's
            // or another's, give way, once.
            Err(RuntimeError::NoInstance(_)) if self.runtime.drop_idle_instances() => {
                self.try_instantiate(sandbox, run).await
            }
            made => made,
        }
    }

    async fn try_instantiate(&self, sandbox: &Sandbox, run: u64) -> Result<Instance, RuntimeError> {
        let state = HostState::new(sandbox, self.logs.clone(), self.cancel.flag.clone(), self.footprint.clone());
        let mut store = Store::new(self.runtime.running_engine(), state);
        store.limiter(|s| s);
        store.set_hostcall_fuel(MAX_COPY_OUT);
        self.watch_epochs(&mut store);
        // Start-up code runs during instantiation, so it gets a deadline too.
        self.arm_deadline(&mut store, sandbox.timeout);
        let made = self.bounded(sandbox.timeout, self.pre.instantiate_async(&mut store)).await;
        match made {
            Ok(guest) => Ok(Instance { store, guest, applied: 0, run }),
            // A component whose memories start out larger than the limit.
            Err(_) if let Some(cap) = store.data().limits.refused => {
                Err(RuntimeError::OutOfMemory { cap, partial: None })
            }
            Err(e) if e.downcast_ref::<wasmtime::PoolConcurrencyLimitError>().is_some() => {
                Err(RuntimeError::NoInstance(format!(
                    "{e:#}: every instance this host may keep is in use (raise --max-instances or --max-waiting)"
                )))
            }
            Err(e) => Err(RuntimeError::Trap { message: format!("instantiation failed: {e:#}"), partial: None }),
        }
    }

    /// Runs a guest call to completion, or until its deadline or the
    /// cancellation grace passes — also while the guest waits in a host call,
    /// where epoch interruption cannot reach it.
    pub async fn bounded<T>(
        &self,
        timeout: Duration,
        call: impl Future<Output = wasmtime::Result<T>>,
    ) -> wasmtime::Result<T> {
        self.bounded_waiting(timeout, &EngineWait::default(), None, call).await
    }

    /// [`Pool::bounded`], not counting the time the call waits on the
    /// engine (`waited`, which the resource monitor's imports add to).
    ///
    /// A `patient` call's waits (on HTTP, on timers: whenever it is not
    /// running) do not count either, so only its running is bounded: the
    /// engine waits for a resource operation as long as it takes unless the
    /// user set a timeout, and a database may take an hour to create. A
    /// guest that waits forever is stopped by Cancel, as a native one is.
    /// It runs on its turn (`turn::Turn`), given back while it waits.
    pub async fn bounded_waiting<T>(
        &self,
        timeout: Duration,
        waited: &EngineWait,
        patient: Option<Turn>,
        call: impl Future<Output = wasmtime::Result<T>>,
    ) -> wasmtime::Result<T> {
        let _busy = self.runtime.busy();
        let timeout = timeout.min(MAX_CALL_TIMEOUT);
        // Most calls finish in their first poll, never waiting on the host or
        // yielding, so they need no timer: epoch interruption bounds them.
        let mut call = std::pin::pin!(call);
        if let std::task::Poll::Ready(r) = futures::poll!(call.as_mut()) {
            return r;
        }
        let is_patient = patient.is_some();
        let call = Waiting::new(call, patient.map(|turn| (waited, turn)));
        let mut interrupt_at = self.cancel.interrupt_at.subscribe();
        let cancelled = async move {
            let at = match interrupt_at.wait_for(Option::is_some).await {
                Ok(at) => *at,
                Err(_) => None,
            };
            match at {
                Some(at) => tokio::time::sleep_until(at.into()).await,
                None => std::future::pending().await,
            }
        };
        // A little after the epoch deadline, which normally fires first; moved
        // on by however long the call has waited on the engine meanwhile.
        let started = tokio::time::Instant::now();
        let expired = async {
            if is_patient {
                return std::future::pending().await;
            }
            loop {
                let at = started + timeout + waited.total() + Duration::from_millis(100);
                if tokio::time::Instant::now() >= at {
                    return;
                }
                tokio::time::sleep_until(at).await;
            }
        };
        tokio::select! {
            r = call => r,
            _ = expired => Err(Trap::Interrupt.into()),
            _ = cancelled => Err(Trap::Interrupt.into()),
        }
    }

    /// The engine cancelled: guests see `cancelled()`, idle instances get the
    /// `cancel` export, and calls still running after `grace` are interrupted.
    pub async fn cancel(&self, grace: Duration) {
        self.cancel.flag.store(true, Ordering::Relaxed);
        self.cancel.interrupt_at.send_replace(Some(Instant::now() + grace));
        let idle: Vec<Instance> = std::mem::take(&mut *self.idle.lock().expect("pool lock"));
        let mut kept = Vec::new();
        // One grace for them all, whatever happens to the cancellation meanwhile.
        let ends = Instant::now() + grace;
        for mut inst in idle {
            let left = ends.saturating_duration_since(Instant::now());
            self.arm_deadline(&mut inst.store, left);
            let guest = inst.guest.pulumi_provider_resource_provider();
            if !left.is_zero() && self.bounded(left, guest.call_cancel(&mut inst.store)).await.is_ok() {
                kept.push(inst);
            }
        }
        // A run that began meanwhile (`resume`) wants none of these.
        let mut idle = self.idle.lock().expect("pool lock");
        let run = self.setup.run();
        idle.extend(kept.extract_if(.., |i| i.run == run));
        drop(idle);
    }

    /// Starts another engine run (attach mode) after [`Pool::cancel`]: guests
    /// no longer see `cancelled()`, calls are not interrupted, and nothing of
    /// the last run is kept: its setup calls (the new run makes its own), the
    /// packages its Parameterize calls made, and its instances (told to cancel, or set up for it), idle ones now and
    /// those still running when they finish.
    pub fn resume(&self) {
        // Under the idle lock, so that no instance of the last run is
        // released into the new run's idle ones (`release` checks there).
        let mut idle = self.idle.lock().expect("pool lock");
        // With the packages the last run's Parameterize calls made; the new run makes its own.
        self.setup.clear(|| *self.packages.write().expect("packages lock") = Arc::default());
        let last = std::mem::take(&mut *idle);
        drop(idle);
        drop(last);
        self.cancel.flag.store(false, Ordering::Relaxed);
        self.cancel.interrupt_at.send_replace(None);
    }

    pub fn reads_held_texts(&self) -> bool {
        self.reads_held_texts
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancel.flag.load(Ordering::Relaxed)
    }

    /// Returns a healthy instance to the pool, unless dropping it is
    /// better: its memory grew past [`RECYCLE_ABOVE`] or a quarter of its
    /// limit; the idle instances would hold more than a quarter of what the
    /// provider's may together (the rest is for calls, which may need a
    /// fresh instance while these sit idle); or it keeps more than
    /// [`RECYCLE_ABOVE_HANDLES`] host handles. Dropping it gives that
    /// memory and those handles back.
    fn release(&self, mut inst: Instance) {
        // Its permit goes back, and nothing of this call stays with an idle
        // instance or carries over to its next call.
        inst.store.data_mut().reset_call();
        let handles = inst.store.data_mut().handles();
        if handles > RECYCLE_ABOVE_HANDLES {
            tracing::debug!("recycling an instance that keeps {handles} host handles");
            return;
        }
        let limits = &inst.store.data().limits;
        if limits.memory > RECYCLE_ABOVE.min(limits.limit / 4) {
            tracing::debug!("recycling an instance that grew to {} MiB", limits.memory >> 20);
            return;
        }
        let mut idle = self.idle.lock().expect("pool lock");
        // Made for an earlier engine run (see `resume`, which clears under this lock).
        if inst.run != self.setup.run() {
            return;
        }
        let kept: usize = idle.iter().map(|i| i.store.data().limits.memory).sum();
        if kept + limits.memory > limits.total / 4 {
            tracing::debug!("recycling an instance: the idle ones hold {} MiB", kept >> 20);
            return;
        }
        idle.push(inst);
    }

    /// Refuses a setup call once the provider keeps as many as it may
    /// ([`SetupLog::room`]), before the guest runs it.
    pub fn room_for_setup(&self) -> Result<(), RuntimeError> {
        self.setup.room()
    }

    /// Lets the guest run until `timeout` from now (or the cancellation
    /// grace); see [`Pool::watch_epochs`].
    fn arm_deadline(&self, store: &mut Store<HostState>, timeout: Duration) {
        let now = Instant::now();
        store.data_mut().clock = CallClock { deadline: now + timeout.min(MAX_CALL_TIMEOUT), ran_since: now };
        store.set_epoch_deadline(1);
    }

    /// Installs the store's epoch callback, once per instance (per call it
    /// would cost an allocation and a subscription to the cancellation): at
    /// each tick, a call past its deadline (moved on by its waits on the
    /// engine) or past the cancellation grace is interrupted; one that has
    /// run for a tick yields to the async runtime, so a busy guest never
    /// starves other calls. A call that merely straddles a tick goes on:
    /// yielding it would only add a trip through the scheduler.
    fn watch_epochs(&self, store: &mut Store<HostState>) {
        let interrupt_at = self.cancel.interrupt_at.subscribe();
        store.epoch_deadline_callback(move |mut cx| {
            let now = Instant::now();
            let cancelled = interrupt_at.borrow().is_some_and(|at| now >= at);
            let state = cx.data_mut();
            Ok(if now >= state.clock.deadline + state.engine_wait.total() || cancelled {
                UpdateDeadline::Interrupt
            } else if now.duration_since(state.clock.ran_since) >= EPOCH_TICK {
                state.clock.ran_since = now;
                UpdateDeadline::Yield(1)
            } else {
                UpdateDeadline::Continue(1)
            })
        });
    }
}

/// Exclusive use of one instance for one call. Returned to the pool by
/// [`Lease::finish`] when the call did not trap; dropped otherwise (a trapped
/// or abandoned instance is never reused).
pub struct Lease<'a> {
    pool: &'a Pool,
    inst: Option<Instance>,
    timeout: Duration,
    /// A resource call's turn to run (a monitor call's permit is in its
    /// [`EngineWait`]).
    turn: Option<Turn>,
    /// The call's place among the instances (see [`Pool::instances`], and
    /// `monitor_instances` for a Construct or Call).
    _instance: OwnedSemaphorePermit,
}

impl<'a> Lease<'a> {
    /// The guest's exports and the store to call them with.
    pub fn parts(&mut self) -> (Guest<'_>, &mut Store<HostState>) {
        let inst = self.inst.as_mut().expect("lease holds an instance until finished");
        (inst.guest.pulumi_provider_resource_provider(), &mut inst.store)
    }

    /// Opens the resource monitor `request` names to the guest for this
    /// call (`construct`, `call`); the lease closes it again when it ends.
    pub(super) fn open_monitor(&mut self, request: &impl WithMonitor) {
        let packages = self.pool.packages();
        let sandbox = self.pool.sandbox();
        let Some(inst) = self.inst.as_mut() else { return };
        let reach = monitor::Reach {
            own: packages
                .iter()
                .map(|p| (p.name.clone(), p.version.clone()))
                .chain(self.pool.base.get().cloned())
                .collect(),
            granted: sandbox.grants.packages.clone(),
            hooks: request.hooks(),
            provider: sandbox.provider.clone(),
            denials: inst.store.data().denials.clone(),
            home: request.home(),
        };
        let opened = monitor::open(self.pool.runtime.config.monitors.as_ref(), request.deployment(), packages);
        inst.store.data_mut().monitor = Some(monitor::guarded(opened, reach));
    }

    /// Refuses an answer of a monitor call that names a resource the call
    /// did not register (see [`ResourceMonitor::answer_urn`]).
    pub(super) fn vouch<T: MonitorAnswer>(
        &self,
        outcome: wasmtime::Result<Result<T, types::Error>>,
        request: &impl WithMonitor,
    ) -> wasmtime::Result<Result<T, types::Error>> {
        let inst = self.inst.as_ref().expect("lease holds an instance until finished");
        let (Ok(Ok(answer)), Some(monitor)) = (&outcome, &inst.store.data().monitor) else { return outcome };
        let (Some(urn), Some(asked)) = (answer.component_urn(), request.asked()) else { return outcome };
        match monitor.answer_urn(urn, &asked) {
            Err(e) => Ok(Err(e)),
            Ok(()) => outcome,
        }
    }

    pub fn pool(&self) -> &'a Pool {
        self.pool
    }

    /// The call's turn, for a patient call to give back while it waits
    /// ([`Pool::bounded_waiting`]); the lease runs without it from then on.
    pub fn patient_turn(&mut self, patient: bool) -> Option<Turn> {
        if patient { self.turn.take() } else { None }
    }

    /// How long this call has waited on the engine so far.
    pub fn engine_wait(&self) -> EngineWait {
        self.inst.as_ref().expect("lease holds an instance until finished").store.data().engine_wait.clone()
    }

    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// What the sandbox refused during this call, each naming the missing
    /// grant; for an error a missing grant could explain, also the sandbox's
    /// standing notes (see [`Sandbox::notes`]).
    pub fn denials(&self, error: &types::Error) -> Vec<String> {
        let inst = self.inst.as_ref().expect("lease holds an instance until finished");
        use types::Error as E;
        // The request's or the provider's own fault, whatever is granted.
        let own_fault =
            matches!(error, E::InvalidArgument(_) | E::Unimplemented(_) | E::Cancelled(_) | E::MissingKeys(_));
        self.pool.denials_of(inst, !own_fault)
    }

    /// The partial state the call reported, taken (see [`RuntimeError::Unfinished`]).
    pub fn take_partial(&mut self) -> Option<super::PartialState> {
        self.inst.as_mut().expect("lease holds an instance until finished").store.data_mut().partial.take()
    }

    /// Ends the lease, throwing the instance away: it ran a call whose
    /// effect is not kept (a refused setup call).
    pub fn discard(mut self) {
        self.inst = None;
    }

    /// Ends the lease with the outcome of a guest call.
    pub fn finish<T>(mut self, outcome: wasmtime::Result<T>) -> Result<T, RuntimeError> {
        let mut inst = self.inst.take().expect("lease holds an instance until finished");
        inst.store.data_mut().monitor = None;
        match outcome {
            Ok(v) => {
                self.pool.release(inst);
                Ok(v)
            }
            Err(e) => Err(self.fault(e, &inst)),
        }
    }

    /// Records a successful setup call made through this lease so other
    /// instances replay it, then ends the lease. The instance goes back to
    /// the pool only if it ran the call in order ([`SetupLog::record`]):
    /// none may hold a setup the others lack.
    pub fn record(mut self, call: SetupCall) -> Result<(), RuntimeError> {
        let mut inst = self.inst.take().expect("lease holds an instance until finished");
        let package = self.pool.package_of(&call);
        // Not one of an earlier engine run's (see `Pool::resume`): added only with the call.
        let kept = self.pool.setup.record(call, inst.applied, inst.run, || {
            if let Some(package) = package {
                self.pool.add_package(package);
            }
        })?;
        if let Some(applied) = kept {
            inst.applied = applied;
            self.pool.release(inst);
        }
        Ok(())
    }

    /// Replays the setup `calls` this instance has not seen.
    async fn catch_up(&mut self, calls: Arc<Vec<SetupCall>>) -> Result<(), RuntimeError> {
        let timeout = self.timeout;
        let Some(inst) = self.inst.as_mut() else { return Ok(()) };
        while inst.applied < calls.len() {
            let guest = inst.guest.pulumi_provider_resource_provider();
            let store = &mut inst.store;
            let (what, result) = match &calls[inst.applied] {
                SetupCall::Parameterize(r) => {
                    let call = async { guest.call_parameterize(store, r).await.map(|r| r.map(|_| ())) };
                    ("parameterize", self.pool.bounded(timeout, call).await)
                }
                SetupCall::Configure(r) => {
                    let call = async { guest.call_configure(store, r).await.map(|r| r.map(|_| ())) };
                    ("configure", self.pool.bounded(timeout, call).await)
                }
            };
            match result {
                Ok(Ok(())) => inst.applied += 1,
                Ok(Err(e)) => {
                    self.inst = None;
                    let message = crate::text::bounded(format_args!("{e:?}"), crate::text::MAX_MESSAGE);
                    return Err(RuntimeError::Replay { what, message });
                }
                Err(trap) => {
                    let inst = self.inst.take().expect("instance present");
                    return Err(self.fault(trap, &inst));
                }
            }
        }
        Ok(())
    }

    fn fault(&self, e: wasmtime::Error, inst: &Instance) -> RuntimeError {
        let data = inst.store.data();
        let partial = data.partial.clone();
        if e.downcast_ref::<Trap>() == Some(&Trap::Interrupt) {
            return if self.pool.is_cancelled() {
                RuntimeError::Cancelled { partial }
            } else {
                RuntimeError::Deadline { after: self.timeout, partial }
            };
        }
        // Cut: wasmtime's backtrace names the guest's functions, whose names
        // are as long as the guest likes, and comes before the cause, which
        // then goes first so the cut keeps it.
        let full = format!("{e:#}");
        // wasmtime's error type for this is private; its message is what there is.
        let fuel = full.contains("fuel allocated for hostcalls has been exhausted");
        // The cause and the guest's stderr each get part of the message, so
        // that the denials after them (naming a missing grant) are kept.
        const PART: usize = crate::text::MAX_MESSAGE * 3 / 8;
        let full = if full.len() > PART { format!("{}; {full}", e.root_cause()) } else { full };
        let mut message = crate::text::escape_within(full, crate::text::LINES, PART);
        if let Some(cap) = data.limits.refused {
            // Debug-formatted, as below: one line, whatever the guest's names hold.
            tracing::warn!("discarding an instance that hit a memory limit: {message:?}");
            return RuntimeError::OutOfMemory { cap, partial };
        }
        if fuel {
            tracing::warn!("discarding an instance that copied too much in one call: {message:?}");
            return RuntimeError::TooMuchData { limit: MAX_COPY_OUT, partial };
        }
        let stderr = data.stderr_text(PART);
        if !stderr.is_empty() {
            message.push_str(&format!("; guest stderr: {stderr}"));
        }
        for denial in self.pool.denials_of(inst, true) {
            message.push_str(&format!("; {denial}"));
        }
        // The denials fill what is left (each part is escaped already).
        if message.len() > crate::text::MAX_MESSAGE {
            let kept = crate::text::clip(&message, crate::text::MAX_MESSAGE).len();
            let cut = message.len() - kept;
            message.truncate(kept);
            message.push_str(&format!(" [{cut} more bytes cut]"));
        }
        // Debug-formatted: one line, whatever a guest put in its stderr or its names.
        tracing::warn!("discarding a faulted instance: {message:?}");
        RuntimeError::Trap { message, partial }
    }
}
