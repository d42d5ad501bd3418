//! A backend still being made: a warm start serves (and prints its port
//! line) while its component loads, and calls wait for it.

use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use tokio::sync::watch;

use super::RuntimeError;
use super::backend::Backend;

/// A backend being made in the background. Every call waits for it (within
/// its own deadline) and fails with why if it could not be made. A Cancel
/// that arrives first is not lost: the backend is cancelled as it is made.
pub struct Deferred<B> {
    made: watch::Receiver<Option<Result<Arc<B>, String>>>,
    /// The backend once made: calls after the first take it without the channel's lock.
    ready: OnceLock<Arc<B>>,
    cancel: Arc<Mutex<CancelState>>,
}

#[derive(Default)]
struct CancelState {
    /// When the engine's Cancel grace ends, once it has cancelled.
    grace_ends: Option<Instant>,
    /// Whether the made backend has been cancelled (by whichever side saw it first).
    done: bool,
    /// How many times [`Deferred::resume`] ran.
    resumed: u64,
}

impl CancelState {
    /// The grace left if the backend still has to be cancelled; marks it done.
    fn take(state: &Mutex<CancelState>) -> Option<Duration> {
        let mut s = state.lock().expect("cancel lock");
        let end = s.grace_ends.filter(|_| !s.done)?;
        s.done = true;
        Some(end.saturating_duration_since(Instant::now()))
    }
}

impl<B: Backend> Deferred<B> {
    /// Starts making the backend on the async runtime.
    pub fn spawn<E: std::fmt::Display + Send + 'static>(
        make: impl Future<Output = Result<Arc<B>, E>> + Send + 'static,
    ) -> Self {
        let (tx, made) = watch::channel(None);
        let cancel: Arc<Mutex<CancelState>> = Arc::default();
        let state = cancel.clone();
        tokio::spawn(async move {
            // Its own task, so that a panic while loading is reported, not lost.
            let made = match tokio::spawn(make).await {
                Ok(made) => made.map_err(|e| e.to_string()),
                Err(e) => Err(format!("loading failed: {e}")),
            };
            let resumed = state.lock().expect("cancel lock").resumed;
            match &made {
                Err(e) => tracing::error!("{e}"),
                // Cancelled while loading: the backend starts cancelled.
                Ok(backend) => {
                    if let Some(grace) = CancelState::take(&state) {
                        backend.cancel(grace).await;
                    }
                }
            }
            // Published under the lock `resume` takes: a resume before found
            // nothing to resume, so it is done here; one after finds the backend.
            let backend = made.as_ref().ok().cloned();
            let s = state.lock().expect("cancel lock");
            tx.send_replace(Some(made));
            if let Some(backend) = backend
                && s.resumed != resumed
            {
                backend.resume();
            }
        });
        Deferred { made, ready: OnceLock::new(), cancel }
    }

    /// The backend, once made.
    pub async fn ready(&self) -> Result<Arc<B>, RuntimeError> {
        if let Some(backend) = self.ready.get() {
            return Ok(backend.clone());
        }
        let mut made = self.made.clone();
        let made =
            made.wait_for(Option::is_some).await.map_err(|_| RuntimeError::NotLoaded("the loader stopped".into()))?;
        match made.as_ref().expect("waited for") {
            Ok(backend) => Ok(self.ready.get_or_init(|| backend.clone()).clone()),
            Err(e) => Err(RuntimeError::NotLoaded(e.clone())),
        }
    }

    /// The backend if it is made, without waiting.
    pub fn made(&self) -> Option<Arc<B>> {
        self.ready.get().cloned().or_else(|| self.made.borrow().as_ref()?.as_ref().ok().cloned())
    }

    /// [`Deferred::ready`], waiting no longer than a call's `timeout`.
    pub async fn ready_within(&self, timeout: Option<Duration>) -> Result<Arc<B>, RuntimeError> {
        match timeout {
            None => self.ready().await,
            Some(after) => tokio::time::timeout(after, self.ready())
                .await
                .unwrap_or(Err(RuntimeError::Deadline { after, partial: None })),
        }
    }

    /// Undoes [`Deferred::cancel`], whether or not the backend is made yet.
    pub fn resume(&self) {
        let mut s = self.cancel.lock().expect("cancel lock");
        (s.grace_ends, s.done, s.resumed) = (None, false, s.resumed + 1);
        if let Some(backend) = self.made() {
            backend.resume();
        }
    }

    /// The engine cancelled: the backend is cancelled now if made, else as
    /// soon as it is; either way within the one `grace`.
    pub async fn cancel(&self, grace: Duration) {
        self.cancel.lock().expect("cancel lock").grace_ends.get_or_insert(Instant::now() + grace);
        if let Ok(Ok(backend)) = tokio::time::timeout(grace, self.ready()).await
            && let Some(grace) = CancelState::take(&self.cancel)
        {
            backend.cancel(grace).await;
        }
    }
}
