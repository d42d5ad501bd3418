//! The setup calls (Parameterize, Configure) a provider keeps, to replay
//! into every instance it makes: the wasm pool's instances and the native
//! backend's per-thread provider values alike.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
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
    /// How many times the log was cleared: the engine run (attach mode)
    /// whose calls it keeps. Changed only under the lock.
    run: AtomicU64,
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

    /// The engine run whose calls are kept (see [`SetupLog::clear`]).
    pub fn run(&self) -> u64 {
        self.run.load(Ordering::Acquire)
    }

    /// Forgets every kept call and starts another run (attach mode: the
    /// next engine run sets the provider up afresh). `also` forgets, under
    /// the same lock, what the kept calls made (see [`SetupLog::record`]).
    pub fn clear(&self, also: impl FnOnce()) {
        let mut kept = self.calls.lock().expect("setup lock");
        *kept = Arc::default();
        self.len.store(0, Ordering::Release);
        self.run.fetch_add(1, Ordering::AcqRel);
        also();
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

    /// Keeps `call`, which an instance of engine run `run` that had applied
    /// `applied` calls has just run. Gives that instance's new count, or
    /// `None` when a call was kept meanwhile: it then ran this one out of
    /// order and must go, and fresh instances replay both in order. Past the
    /// bound nothing is kept; nor is a call of an earlier run (its instance goes).
    /// `made` runs, under the lock, only when the call is kept: what the call
    /// made (a package) then belongs to the run [`SetupLog::clear`] ends.
    pub fn record(
        &self,
        call: SetupCall,
        applied: usize,
        run: u64,
        made: impl FnOnce(),
    ) -> Result<Option<usize>, RuntimeError> {
        let mut kept = self.calls.lock().expect("setup lock");
        if run != self.run.load(Ordering::Acquire) {
            return Ok(None);
        }
        if kept.len() >= MAX_SETUP_CALLS {
            return Err(RuntimeError::SetUpTooOften { limit: MAX_SETUP_CALLS });
        }
        made();
        let current = applied == kept.len();
        let mut calls = (**kept).clone();
        calls.push(call);
        let len = calls.len();
        self.len.store(len, Ordering::Release);
        *kept = Arc::new(calls);
        Ok(current.then_some(len))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn configure() -> SetupCall {
        SetupCall::Configure(rp::ConfigureRequest {
            variables: vec![],
            args: crate::convert::value::empty_map(),
            id: String::new(),
            urn: String::new(),
            name: String::new(),
            type_: String::new(),
        })
    }

    /// A call an instance of the last engine run finishes after the log was
    /// cleared is not kept for the new run, and that instance goes.
    #[test]
    fn a_setup_call_of_an_earlier_run_is_not_kept() {
        let log = SetupLog::default();
        let first = log.run();
        let made = std::cell::Cell::new(0);
        let make = || made.set(made.get() + 1);
        assert_eq!(log.record(configure(), 0, first, make).unwrap(), Some(1));
        log.clear(|| made.set(0));
        assert_eq!((log.len(), log.snapshot().len(), made.get()), (0, 0, 0));
        assert_ne!(log.run(), first);
        assert_eq!(log.record(configure(), 0, first, make).unwrap(), None, "from the last run");
        assert_eq!((log.len(), made.get()), (0, 0), "nothing it made is kept either");
        assert_eq!(log.record(configure(), 0, log.run(), make).unwrap(), Some(1));
        assert_eq!(made.get(), 1);
    }
}
