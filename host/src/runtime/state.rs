//! Per-instance store data: the sandboxed WASI context, outbound HTTP, the
//! logging import and the call context (cancellation, partial state).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use tokio::sync::mpsc;
use wasmtime::component::ResourceTable;
use wasmtime::{ResourceLimiter, StoreLimits, StoreLimitsBuilder};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

use super::bindings::latest::pulumi::provider::{context, logging, types};
use super::http::{Denials, HttpHooks};
use super::monitor::MonitorScope;
use super::sandbox::Sandbox;

/// Longest log message kept; the rest is cut so a guest cannot flood the engine.
const MAX_LOG_MESSAGE: usize = 64 * 1024;
/// Bytes of log messages a provider may have waiting for the engine; beyond
/// this, messages are dropped rather than queued (a flood must not grow memory).
const MAX_QUEUED_LOG_BYTES: usize = 8 << 20;
/// Bytes of guest stderr kept (panic messages end up here).
const STDERR_CAPACITY: usize = 64 * 1024;
/// Handles (streams, requests, ...) one instance may hold at once.
const MAX_RESOURCES: usize = 10_000;
/// Table elements per instance (function tables of the guest).
const MAX_TABLE_ELEMENTS: usize = 1_000_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogSeverity {
    Debug,
    Info,
    Warning,
    Error,
}

/// A message a guest logged, on its way to `Engine.Log`.
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

/// What a `create` reported having made before it was interrupted.
#[derive(Clone, Debug)]
pub struct PartialState {
    pub id: String,
    pub properties: types::Value,
}

pub struct HostState {
    wasi: WasiCtx,
    table: ResourceTable,
    http: WasiHttpCtx,
    hooks: HttpHooks,
    pub(super) limits: Limits,
    logs: mpsc::Sender<GuestLog>,
    /// Bytes of this provider's messages not yet sent to the engine.
    queued_logs: Arc<AtomicUsize>,
    stderr: MemoryOutputPipe,
    cancelled: Arc<AtomicBool>,
    pub(super) partial: Option<PartialState>,
    pub(super) denials: Denials,
    /// The resource monitor, during a `construct` or `call` only.
    pub(super) monitor: Option<MonitorScope>,
}

impl HostState {
    pub(super) fn new(
        sandbox: &Sandbox,
        logs: mpsc::Sender<GuestLog>,
        queued_logs: Arc<AtomicUsize>,
        cancelled: Arc<AtomicBool>,
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
        };
        let mut table = ResourceTable::new();
        table.set_max_capacity(MAX_RESOURCES);
        let denials = Denials::default();
        let hooks =
            HttpHooks { grants: sandbox.http.clone(), provider: sandbox.provider.clone(), denials: denials.clone() };
        HostState {
            wasi,
            table,
            http: WasiHttpCtx::new(),
            hooks,
            limits,
            logs,
            queued_logs,
            stderr,
            cancelled,
            partial: None,
            denials,
            monitor: None,
        }
    }

    /// What the guest wrote to stderr (e.g. a panic message), lossily decoded.
    pub(super) fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr.contents()).trim().to_owned()
    }

    /// Forgets the previous call's partial state, denials and monitor.
    pub(super) fn reset_call(&mut self) {
        self.partial = None;
        self.monitor = None;
        if let Ok(mut d) = self.denials.lock() {
            d.clear();
        }
    }
}

/// The store's limits, remembering how large linear memory has grown so an
/// instance that ballooned is not kept in the pool.
pub struct Limits {
    inner: StoreLimits,
    /// The largest linear memory this instance has grown to, in bytes.
    pub memory: usize,
}

impl ResourceLimiter for Limits {
    fn memory_growing(&mut self, current: usize, desired: usize, maximum: Option<usize>) -> wasmtime::Result<bool> {
        let allowed = self.inner.memory_growing(current, desired, maximum)?;
        if allowed {
            self.memory = self.memory.max(desired);
        }
        Ok(allowed)
    }

    fn table_growing(&mut self, current: usize, desired: usize, maximum: Option<usize>) -> wasmtime::Result<bool> {
        self.inner.table_growing(current, desired, maximum)
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
    async fn cancelled(&mut self) -> wasmtime::Result<bool> {
        Ok(self.cancelled.load(Ordering::Relaxed))
    }

    async fn report_partial_state(&mut self, id: String, properties: types::Value) -> wasmtime::Result<()> {
        // Validated when (if) it is used; only the latest report is kept.
        self.partial = Some(PartialState { id, properties });
        Ok(())
    }
}

impl logging::Host for HostState {
    async fn log(
        &mut self,
        severity: logging::Severity,
        message: String,
        urn: Option<String>,
        ephemeral: bool,
    ) -> wasmtime::Result<()> {
        let message = if message.len() > MAX_LOG_MESSAGE {
            let cut = (0..=MAX_LOG_MESSAGE).rev().find(|i| message.is_char_boundary(*i)).unwrap_or(0);
            // A new string of exactly the kept size: the guest's buffer may be huge.
            [&message[..cut], " [truncated]"].concat()
        } else {
            message
        };
        let severity = match severity {
            logging::Severity::Debug => LogSeverity::Debug,
            logging::Severity::Info => LogSeverity::Info,
            logging::Severity::Warning => LogSeverity::Warning,
            logging::Severity::Error => LogSeverity::Error,
        };
        let urn = urn.filter(|u| u.len() <= MAX_LOG_MESSAGE);
        let bytes = message.len() + urn.as_ref().map_or(0, String::len);
        if self.queued_logs.fetch_add(bytes, Ordering::Relaxed) + bytes > MAX_QUEUED_LOG_BYTES {
            self.queued_logs.fetch_sub(bytes, Ordering::Relaxed);
            tracing::debug!("guest log dropped: the provider's log budget is spent");
            return Ok(());
        }
        let queued = QueuedBytes { bytes, total: self.queued_logs.clone() };
        // A full queue drops the message rather than blocking the guest.
        if self.logs.try_send(GuestLog { severity, message, urn, ephemeral, _queued: queued }).is_err() {
            tracing::debug!("guest log dropped: queue full or closed");
        }
        Ok(())
    }
}
