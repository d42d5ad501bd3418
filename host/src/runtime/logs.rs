//! Messages a provider logs, on their way to `Engine.Log`: bounded in size
//! and in how much may wait for the engine, so a flood can neither block the
//! provider nor grow memory. Shared by the wasm pool's logging import and
//! the native backend, so both treat a provider's logs alike.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::mpsc;

use crate::text::{self, MAX_MESSAGE};

/// Bytes of log messages a provider may have waiting for the engine; beyond
/// this, messages are dropped rather than queued.
const MAX_QUEUED_LOG_BYTES: usize = 8 << 20;
/// What a message costs the budget besides its text, which bounds how many
/// may wait (8,192 at most): each is a few allocations on the host's heap,
/// and tens of thousands of them kept alive through a flood made every
/// allocation of the process slower (glibc's `malloc` ~2 µs a call more,
/// BENCHMARKS.md, fifteenth session).
const LOG_OVERHEAD: usize = 1024;
/// Room in the channel to the forwarder for a whole budget of messages: the
/// budget, not the count, decides what is dropped, so a burst the forwarder
/// has not yet drained (its thread busy running calls) is not cut short.
pub const LOG_CHANNEL: usize = MAX_QUEUED_LOG_BYTES / LOG_OVERHEAD;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogSeverity {
    Debug,
    Info,
    Warning,
    Error,
}

/// A message a provider logged, on its way to `Engine.Log`.
#[derive(Debug)]
pub struct GuestLog {
    pub severity: LogSeverity,
    pub message: String,
    pub urn: Option<String>,
    pub ephemeral: bool,
    _queued: QueuedBytes,
}

/// A message's share of its provider's log budget, given back when the
/// message is dropped (sent or discarded).
#[derive(Debug)]
struct QueuedBytes {
    bytes: usize,
    total: Arc<AtomicUsize>,
}

impl Drop for QueuedBytes {
    fn drop(&mut self) {
        self.total.fetch_sub(self.bytes, Ordering::Relaxed);
    }
}

/// One provider's outgoing messages (clones share the budget).
#[derive(Clone, Debug)]
pub struct LogQueue {
    logs: mpsc::Sender<GuestLog>,
    /// Bytes of this provider's messages not yet sent to the engine.
    queued: Arc<AtomicUsize>,
}

impl LogQueue {
    pub fn new(logs: mpsc::Sender<GuestLog>) -> Self {
        LogQueue { logs, queued: Arc::default() }
    }

    /// Queues a message without ever waiting: a full queue or a spent
    /// budget drops it. What a terminal would act on is escaped, and a
    /// message is cut to [`MAX_MESSAGE`] ([`crate::text`]): the engine
    /// prints it on the user's terminal.
    pub fn send(&self, severity: LogSeverity, message: String, urn: Option<String>, ephemeral: bool) {
        let message = text::escape_within(message, text::LINES, MAX_MESSAGE);
        let urn = urn.filter(|u| u.len() <= MAX_MESSAGE).map(|u| text::escape_within(u, &[], MAX_MESSAGE));
        let bytes = LOG_OVERHEAD + message.len() + urn.as_ref().map_or(0, String::len);
        if self.queued.fetch_add(bytes, Ordering::Relaxed) + bytes > MAX_QUEUED_LOG_BYTES {
            self.queued.fetch_sub(bytes, Ordering::Relaxed);
            tracing::debug!("log dropped: the provider's log budget is spent");
            return;
        }
        let queued = QueuedBytes { bytes, total: self.queued.clone() };
        if self.logs.try_send(GuestLog { severity, message, urn, ephemeral, _queued: queued }).is_err() {
            tracing::debug!("log dropped: queue full or closed");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_cut_and_the_budget_is_returned_when_sent() {
        let (tx, mut rx) = mpsc::channel(4);
        let q = LogQueue::new(tx);
        q.send(LogSeverity::Info, "é".repeat(MAX_MESSAGE), Some("urn".into()), false);
        let log = rx.try_recv().unwrap();
        assert!(log.message.ends_with(" more bytes cut]") && log.message.len() <= MAX_MESSAGE + 32);
        assert!(q.queued.load(Ordering::Relaxed) > 0, "counted while waiting");
        drop(log);
        assert_eq!(q.queued.load(Ordering::Relaxed), 0, "given back once sent");
        for i in 0..6 {
            q.send(LogSeverity::Debug, format!("m{i}"), None, false);
        }
        assert_eq!(std::iter::from_fn(|| rx.try_recv().ok()).count(), 4, "a full queue drops, never blocks");
    }

    #[test]
    fn what_a_terminal_would_act_on_is_escaped_and_still_cut() {
        let (tx, mut rx) = mpsc::channel(4);
        let q = LogQueue::new(tx);
        let urn = "urn:pulumi:s::p::t::n\r\x1b[2K".to_owned();
        q.send(LogSeverity::Info, "red \x1b[31mX\u{202e}\nnext\tline".into(), Some(urn), false);
        let log = rx.try_recv().unwrap();
        assert_eq!(log.message, "red \\u{1b}[31mX\\u{202e}\nnext\tline");
        assert_eq!(log.urn.as_deref(), Some("urn:pulumi:s::p::t::n\\r\\u{1b}[2K"));
        // Six times longer escaped: cut, never inside an escape.
        q.send(LogSeverity::Info, "\x1b".repeat(MAX_MESSAGE / 2), None, false);
        let log = rx.try_recv().unwrap();
        assert!(log.message.len() <= MAX_MESSAGE + 32 && log.message.ends_with("\\u{1b} [21846 more bytes cut]"));
        assert!(!log.message.contains('\x1b'));
    }
}
