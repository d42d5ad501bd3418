//! A pool of instances of one component, so the engine's concurrent calls run
//! in parallel. Every instance sees the same `parameterize`/`configure` calls:
//! the pool records them and replays them into instances that missed them.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::{Semaphore, SemaphorePermit, mpsc};
use wasmtime::{Store, Trap, UpdateDeadline};

use super::RuntimeError;
use super::bindings::latest::{Provider, ProviderPre};
use super::bindings::rp;
use super::engine::Runtime;
use super::state::{GuestLog, HostState};

/// A call that changes provider state and must reach every instance.
#[derive(Clone, Debug)]
pub enum SetupCall {
    Parameterize(rp::ParameterizeRequest),
    Configure(rp::ConfigureRequest),
}

struct Instance {
    store: Store<HostState>,
    guest: Provider,
    /// How many recorded setup calls this instance has seen.
    applied: usize,
}

pub struct Pool {
    runtime: Arc<Runtime>,
    pre: ProviderPre<HostState>,
    logs: mpsc::Sender<GuestLog>,
    idle: Mutex<Vec<Instance>>,
    permits: Semaphore,
    setup: Mutex<Arc<Vec<SetupCall>>>,
}

impl Pool {
    pub(super) fn new(runtime: Arc<Runtime>, pre: ProviderPre<HostState>, logs: mpsc::Sender<GuestLog>) -> Self {
        let permits = Semaphore::new(runtime.config.max_instances.max(1));
        Pool { runtime, pre, logs, idle: Mutex::new(Vec::new()), permits, setup: Mutex::default() }
    }

    /// An instance for one call, brought up to date with the setup calls.
    /// `timeout` bounds the call (the runtime default when `None`).
    pub async fn lease(&self, timeout: Option<Duration>) -> Result<Lease<'_>, RuntimeError> {
        let permit = self.permits.acquire().await.map_err(|e| RuntimeError::Engine(e.to_string()))?;
        let timeout = timeout.unwrap_or(self.runtime.config.call_timeout);
        let pooled = self.idle.lock().expect("pool lock").pop();
        let mut inst = match pooled {
            Some(i) => i,
            None => self.instantiate().await?,
        };
        arm_deadline(&mut inst.store, timeout);
        let mut lease = Lease { pool: self, inst: Some(inst), timeout, _permit: permit };
        lease.catch_up().await?;
        Ok(lease)
    }

    async fn instantiate(&self) -> Result<Instance, RuntimeError> {
        let state = HostState::new(self.logs.clone(), self.runtime.config.max_memory);
        let mut store = Store::new(self.runtime.engine(), state);
        store.limiter(|s| &mut s.limits);
        // Start-up code runs during instantiation, so it gets a deadline too.
        arm_deadline(&mut store, self.runtime.config.call_timeout);
        let guest = self
            .pre
            .instantiate_async(&mut store)
            .await
            .map_err(|e| RuntimeError::Trap(format!("instantiation failed: {e:#}")))?;
        Ok(Instance { store, guest, applied: 0 })
    }

    /// Tells idle instances the engine is cancelling. Busy ones finish or hit their deadline.
    pub async fn cancel_idle(&self) {
        let idle: Vec<Instance> = std::mem::take(&mut *self.idle.lock().expect("pool lock"));
        let mut kept = Vec::new();
        for mut inst in idle {
            arm_deadline(&mut inst.store, Duration::from_secs(1));
            let r = inst.guest.pulumi_provider_resource_provider().call_cancel(&mut inst.store).await;
            if r.is_ok() {
                kept.push(inst);
            }
        }
        self.idle.lock().expect("pool lock").extend(kept);
    }

    fn setup_snapshot(&self) -> Arc<Vec<SetupCall>> {
        self.setup.lock().expect("setup lock").clone()
    }
}

/// Exclusive use of one instance for one call. Returned to the pool by
/// [`Lease::finish`] when the call did not trap; dropped otherwise (a trapped
/// or abandoned instance is never reused).
pub struct Lease<'a> {
    pool: &'a Pool,
    inst: Option<Instance>,
    timeout: Duration,
    _permit: SemaphorePermit<'a>,
}

impl Lease<'_> {
    /// The guest's exports and the store to call them with.
    pub fn parts(&mut self) -> (&rp::Guest, &mut Store<HostState>) {
        let inst = self.inst.as_mut().expect("lease holds an instance until finished");
        (inst.guest.pulumi_provider_resource_provider(), &mut inst.store)
    }

    /// Ends the lease with the outcome of a guest call.
    pub fn finish<T>(mut self, outcome: wasmtime::Result<T>) -> Result<T, RuntimeError> {
        let inst = self.inst.take().expect("lease holds an instance until finished");
        match outcome {
            Ok(v) => {
                self.pool.idle.lock().expect("pool lock").push(inst);
                Ok(v)
            }
            Err(e) => Err(self.fault(e, &inst)),
        }
    }

    /// Records a successful setup call made through this lease so other
    /// instances replay it, then ends the lease.
    pub fn record(mut self, call: SetupCall) {
        let mut setup = self.pool.setup.lock().expect("setup lock");
        let mut calls = (**setup).clone();
        calls.push(call);
        if let Some(inst) = self.inst.as_mut() {
            inst.applied = calls.len();
        }
        *setup = Arc::new(calls);
        drop(setup);
        if let Some(inst) = self.inst.take() {
            self.pool.idle.lock().expect("pool lock").push(inst);
        }
    }

    /// Replays the setup calls this instance has not seen.
    async fn catch_up(&mut self) -> Result<(), RuntimeError> {
        let calls = self.pool.setup_snapshot();
        let Some(inst) = self.inst.as_mut() else { return Ok(()) };
        while inst.applied < calls.len() {
            let guest = inst.guest.pulumi_provider_resource_provider();
            let (what, result) = match &calls[inst.applied] {
                SetupCall::Parameterize(r) => {
                    ("parameterize", guest.call_parameterize(&mut inst.store, r).await.map(|r| r.map(|_| ())))
                }
                SetupCall::Configure(r) => {
                    ("configure", guest.call_configure(&mut inst.store, r).await.map(|r| r.map(|_| ())))
                }
            };
            match result {
                Ok(Ok(())) => inst.applied += 1,
                Ok(Err(e)) => {
                    self.inst = None;
                    return Err(RuntimeError::Replay { what, message: format!("{e:?}") });
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
        if e.downcast_ref::<Trap>() == Some(&Trap::Interrupt) {
            return RuntimeError::Deadline(self.timeout);
        }
        let stderr = inst.store.data().stderr_text();
        let mut msg = format!("{e:#}");
        if !stderr.is_empty() {
            msg.push_str(&format!("; guest stderr: {stderr}"));
        }
        tracing::warn!("discarding a faulted instance: {msg}");
        RuntimeError::Trap(msg)
    }
}

/// Lets the guest run until `timeout` from now, yielding to the async runtime
/// at every epoch tick so a busy guest never starves other calls.
fn arm_deadline(store: &mut Store<HostState>, timeout: Duration) {
    let deadline = Instant::now() + timeout;
    store.set_epoch_deadline(1);
    store.epoch_deadline_callback(move |_| {
        Ok(if Instant::now() >= deadline { UpdateDeadline::Interrupt } else { UpdateDeadline::Yield(1) })
    });
}
