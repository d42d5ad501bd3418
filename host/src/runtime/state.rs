//! Per-instance store data: the WASI context (denies everything by default)
//! and the provider's logging import.

use tokio::sync::mpsc;
use wasmtime::component::ResourceTable;
use wasmtime::{StoreLimits, StoreLimitsBuilder};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

use super::bindings::latest::pulumi::provider::{logging, types};

/// Longest log message kept; the rest is cut so a guest cannot flood the engine.
const MAX_LOG_MESSAGE: usize = 64 * 1024;
/// Bytes of guest stderr kept (panic messages end up here).
const STDERR_CAPACITY: usize = 64 * 1024;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogSeverity {
    Debug,
    Info,
    Warning,
    Error,
}

/// A message a guest logged, on its way to `Engine.Log`.
#[derive(Clone, Debug)]
pub struct GuestLog {
    pub severity: LogSeverity,
    pub message: String,
    pub urn: Option<String>,
    pub ephemeral: bool,
}

pub struct HostState {
    wasi: WasiCtx,
    table: ResourceTable,
    pub(super) limits: StoreLimits,
    logs: mpsc::Sender<GuestLog>,
    stderr: MemoryOutputPipe,
}

impl HostState {
    pub(super) fn new(logs: mpsc::Sender<GuestLog>, max_memory: usize) -> Self {
        let stderr = MemoryOutputPipe::new(STDERR_CAPACITY);
        // No preopens, env, args, network or stdin: only clocks and random.
        let wasi = WasiCtxBuilder::new().stderr(stderr.clone()).build();
        let limits = StoreLimitsBuilder::new().memory_size(max_memory).trap_on_grow_failure(true).build();
        HostState { wasi, table: ResourceTable::new(), limits, logs, stderr }
    }

    /// What the guest wrote to stderr (e.g. a panic message), lossily decoded.
    pub(super) fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr.contents()).trim().to_owned()
    }
}

impl WasiView for HostState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView { ctx: &mut self.wasi, table: &mut self.table }
    }
}

impl types::Host for HostState {}

impl logging::Host for HostState {
    async fn log(
        &mut self,
        severity: logging::Severity,
        mut message: String,
        urn: Option<String>,
        ephemeral: bool,
    ) -> wasmtime::Result<()> {
        if message.len() > MAX_LOG_MESSAGE {
            let cut = (0..=MAX_LOG_MESSAGE).rev().find(|i| message.is_char_boundary(*i)).unwrap_or(0);
            message.truncate(cut);
            message.push_str(" [truncated]");
        }
        let severity = match severity {
            logging::Severity::Debug => LogSeverity::Debug,
            logging::Severity::Info => LogSeverity::Info,
            logging::Severity::Warning => LogSeverity::Warning,
            logging::Severity::Error => LogSeverity::Error,
        };
        let urn = urn.filter(|u| u.len() <= MAX_LOG_MESSAGE);
        // A full queue drops the message rather than blocking the guest.
        if self.logs.try_send(GuestLog { severity, message, urn, ephemeral }).is_err() {
            tracing::debug!("guest log dropped: queue full or closed");
        }
        Ok(())
    }
}
