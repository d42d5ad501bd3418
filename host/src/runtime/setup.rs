//! The setup calls (Parameterize, Configure) a provider keeps, to replay
//! into every instance it makes: the wasm pool's instances and the native
//! backend's per-thread provider values alike.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use super::RuntimeError;
use super::bindings::rp;

/// The most setup calls a provider keeps. The engine makes one of each per
/// process; each kept call is replayed into every new instance, so without
/// a bound a client repeating Configure would grow the host's memory and
/// every instance's start without end.
pub const MAX_SETUP_CALLS: usize = 64;

/// A call that changes provider state and must reach every instance.
#[derive(Clone, Debug)]
pub enum SetupCall {
    Parameterize(rp::ParameterizeRequest),
    Configure(rp::ConfigureRequest),
}

/// The kept setup calls, in the order they were kept.
#[derive(Default)]
pub struct SetupLog {
    calls: Mutex<Arc<Vec<SetupCall>>>,
    /// How many `calls` holds: every call reads it, and only an instance
    /// that is behind takes the lock.
    len: AtomicUsize,
}

impl SetupLog {
    pub fn len(&self) -> usize {
        self.len.load(Ordering::Acquire)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The calls kept so far, for an instance to catch up with.
    pub fn snapshot(&self) -> Arc<Vec<SetupCall>> {
        self.calls.lock().expect("setup lock").clone()
    }

    /// Forgets every kept call (attach mode: the next engine run sets the
    /// provider up afresh).
    pub fn clear(&self) {
        let mut kept = self.calls.lock().expect("setup lock");
        *kept = Arc::default();
        self.len.store(0, Ordering::Release);
    }

    /// Refuses a setup call once [`MAX_SETUP_CALLS`] are kept, before the
    /// provider runs it. Calls waiting together may all pass here;
    /// [`SetupLog::record`] holds the bound.
    pub fn room(&self) -> Result<(), RuntimeError> {
        if self.len() >= MAX_SETUP_CALLS {
            return Err(RuntimeError::SetUpTooOften { limit: MAX_SETUP_CALLS });
        }
        Ok(())
    }

    /// Keeps `call`, which an instance that had applied `applied` calls has
    /// just run. Gives that instance's new count, or `None` when a call was
    /// kept meanwhile: it then ran this one out of order and must go, and
    /// fresh instances replay both in order. Past the bound nothing is kept.
    pub fn record(&self, call: SetupCall, applied: usize) -> Result<Option<usize>, RuntimeError> {
        let mut kept = self.calls.lock().expect("setup lock");
        if kept.len() >= MAX_SETUP_CALLS {
            return Err(RuntimeError::SetUpTooOften { limit: MAX_SETUP_CALLS });
        }
        let current = applied == kept.len();
        let mut calls = (**kept).clone();
        calls.push(call);
        let len = calls.len();
        self.len.store(len, Ordering::Release);
        *kept = Arc::new(calls);
        Ok(current.then_some(len))
    }
}
