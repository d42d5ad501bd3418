//! The thread that advances the engine's epoch: what bounds a guest's time
//! (deadlines) and makes a busy guest yield. It ticks only while guest code
//! may run, and sleeps once none has for [`PARK_AFTER`], so an idle provider
//! process is not woken a hundred times a second for nothing.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, OnceLock};
use std::thread::Thread;
use std::time::Duration;

use wasmtime::Engine;

/// How often the epoch advances: the granularity of deadlines and of
/// yielding a busy guest back to the async runtime.
pub(super) const EPOCH_TICK: Duration = Duration::from_millis(10);
/// Ticks with no guest running after which the thread sleeps until one runs.
const PARK_AFTER: u32 = 100;

#[derive(Default)]
struct State {
    /// Guest calls in progress (see [`Ticker::busy`]).
    busy: AtomicUsize,
    parked: AtomicBool,
    stop: AtomicBool,
    thread: OnceLock<Thread>,
}

pub(super) struct Ticker(Arc<State>);

/// Held while a guest call may run: the epoch advances meanwhile.
pub(super) struct Busy<'a>(&'a State);

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        self.0.busy.fetch_sub(1, SeqCst);
    }
}

impl Ticker {
    /// Starts the thread; it ends when the engine or the ticker is dropped.
    pub(super) fn start(engine: &Engine) -> Ticker {
        let state = Arc::new(State::default());
        let (weak, shared) = (engine.weak(), state.clone());
        std::thread::Builder::new()
            .name("wasm-epoch".into())
            .spawn(move || {
                let _ = shared.thread.set(std::thread::current());
                let mut idle = 0;
                while let Some(engine) = weak.upgrade() {
                    if shared.stop.load(SeqCst) {
                        return;
                    }
                    engine.increment_epoch();
                    drop(engine);
                    idle = if shared.busy.load(SeqCst) > 0 { 0 } else { idle + 1 };
                    if idle < PARK_AFTER {
                        std::thread::sleep(EPOCH_TICK);
                        continue;
                    }
                    // A call that begins after `parked` is set sees it and
                    // unparks; one that began before is seen in `busy`.
                    shared.parked.store(true, SeqCst);
                    if shared.busy.load(SeqCst) == 0 && !shared.stop.load(SeqCst) {
                        std::thread::park();
                    }
                    shared.parked.store(false, SeqCst);
                    // Woken by a call: tick at once, as a running ticker would soon.
                    idle = 0;
                }
            })
            .expect("spawning the epoch thread");
        Ticker(state)
    }

    /// Marks a guest call in progress until the guard is dropped, waking
    /// the thread if it sleeps.
    pub(super) fn busy(&self) -> Busy<'_> {
        self.0.busy.fetch_add(1, SeqCst);
        if self.0.parked.load(SeqCst) {
            self.unpark();
        }
        Busy(&self.0)
    }

    fn unpark(&self) {
        if let Some(t) = self.0.thread.get() {
            t.unpark();
        }
    }
}

impl Drop for Ticker {
    fn drop(&mut self) {
        self.0.stop.store(true, SeqCst);
        self.unpark();
    }
}
