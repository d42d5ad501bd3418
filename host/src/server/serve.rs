//! The plugin process contract: listen on 127.0.0.1:0, print the port as the
//! only stdout line, serve health and the provider, stop on Cancel or SIGINT
//! (in attach mode, on SIGINT only).

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use pulumirpc::resource_provider_server::ResourceProviderServer;
use tokio::net::TcpListener;
use tokio::sync::Notify;
use tonic::transport::server::TcpIncoming;

use super::provider::ProviderService;
use crate::runtime::Backend;

/// The engine's own limit for plugin messages.
pub(super) const MAX_MESSAGE_BYTES: usize = 400 << 20;

#[derive(Clone, Debug)]
pub struct ServeOptions {
    /// How long in-flight calls may run after a shutdown request; the engine
    /// kills plugins 5 s after SIGINT, so this stays under that.
    pub grace: Duration,
    /// How often the engine's health is checked; the host shuts down when
    /// the engine is gone. Pulumi's own plugins check every 5 minutes.
    pub engine_check: Duration,
    /// Notified once the port line is out: work that can wait for it (a
    /// warm start's loading) does, so it does not compete with the start for the CPU.
    pub port_line: Option<Arc<Notify>>,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions { grace: Duration::from_secs(3), engine_check: Duration::from_secs(300), port_line: None }
    }
}

/// Serves until the engine cancels or the process is interrupted, then
/// gives queued logs (see [`super::EngineLink::forward_logs`]) a moment to
/// reach the engine.
pub async fn serve<B: Backend>(provider: ProviderService<B>, options: ServeOptions) -> std::io::Result<()> {
    let link = provider.engine().clone();
    let served = serve_provider(provider, options).await;
    link.flush_logs().await;
    served
}

async fn serve_provider<B: Backend>(provider: ProviderService<B>, options: ServeOptions) -> std::io::Result<()> {
    keep_freed_memory();
    open_files_as_allowed();
    let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
    let port = listener.local_addr()?.port();

    let (health, health_service) = tonic_health::server::health_reporter();
    health.set_serving::<ResourceProviderServer<Arc<ProviderService<B>>>>().await;

    let provider = Arc::new(provider);
    let cancelled = provider.cancelled();
    // In attach mode each engine run ends, and the host waits for the next.
    let engine_gone = provider.engine().gone(options.engine_check);
    let attached = provider.engine().attached();
    let orphaned = {
        let provider = provider.clone();
        async move {
            if attached {
                return std::future::pending().await;
            }
            engine_gone.await;
            provider.shut_down().await;
        }
    };
    let service = ResourceProviderServer::from_arc(provider)
        .max_decoding_message_size(MAX_MESSAGE_BYTES)
        .max_encoding_message_size(MAX_MESSAGE_BYTES);

    // Signal handlers exist before the engine learns the port, so an early
    // SIGINT is a graceful stop rather than the default kill.
    let interrupted = interrupted()?;

    // The port line is the handshake with the engine: nothing may precede it.
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "{port}")?;
        out.flush()?;
    }
    let workers = tokio::runtime::Handle::current().metrics().num_workers();
    tracing::info!("serving on 127.0.0.1:{port} ({workers} worker threads)");
    if let Some(n) = &options.port_line {
        // `notify_one` keeps the permit if nobody waits yet.
        n.notify_one();
    }

    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let stop = async move {
        tokio::select! {
            _ = cancelled => tracing::info!("Cancel received; shutting down"),
            _ = interrupted => tracing::info!("signal received; shutting down"),
            _ = orphaned => {}
        }
        let _ = stop_tx.send(());
    };
    let server = tonic::transport::Server::builder()
        .add_service(health_service)
        .add_service(service)
        // No Nagle: a response is several small writes (headers, data, trailers),
        // and Nagle holding the last one until the engine's delayed ACK adds ~40 ms.
        .serve_with_incoming_shutdown(TcpIncoming::from(listener).with_nodelay(Some(true)), stop);
    tokio::pin!(server);
    tokio::select! {
        r = &mut server => r.map_err(std::io::Error::other),
        _ = async { let _ = stop_rx.await; tokio::time::sleep(options.grace).await } => {
            tracing::warn!("in-flight calls did not finish within {:?}; exiting", options.grace);
            Ok(())
        }
    }
}

/// The environment variable that sets [`provider_runtime`]'s worker threads (a positive number).
const WORKER_THREADS_VAR: &str = "PULUMI_WASM_WORKER_THREADS";

/// The async runtime a provider process serves on: `PULUMI_WASM_WORKER_THREADS`
/// worker threads if set (and not empty), else tokio's default, one per
/// core. Fewer can answer more calls where the engine shares a small
/// machine: on 2 cores, under continuous load at 64 concurrent callers, one
/// worker answered 5% (native) to 17% (a component) more calls a second,
/// but in the benchmark's one-second rounds both answered fewer Checks
/// (BENCHMARKS.md, twenty-first session), so the default stays. A guest
/// that computes for long yields at every epoch tick, so even one worker
/// keeps answering other calls.
pub fn provider_runtime() -> std::io::Result<tokio::runtime::Runtime> {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if let Ok(v) = std::env::var(WORKER_THREADS_VAR)
        && !v.trim().is_empty()
    {
        let n = v.trim().parse::<usize>().ok().filter(|n| *n > 0).ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("{WORKER_THREADS_VAR} must be a positive number of threads, not '{v}'"),
            )
        })?;
        builder.worker_threads(n);
    }
    builder.enable_all().build()
}

/// Large values (assets, big maps) cross a provider in buffers of a few MB
/// that are allocated and freed on every call. By default glibc hands such
/// memory back to the system as soon as the free top of a heap passes twice
/// the largest buffer, so every call faults the pages in again (about 1 ms per
/// MB on some virtual machines). Keep up to 32 MiB of freed heap instead.
/// Public so that whatever hosts a backend in-process can do the same.
pub fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets allocator parameters; it is safe at any time.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 4 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 32 << 20);
    }
}

/// Raises this process's soft limit of open files to the hard one, as Go
/// programs (the engine among them) do at start: each instance may keep up
/// to 256 files and 16 connections, more than the usual soft limit of 1024
/// across instances, and the host's own sockets and files need room beside.
fn open_files_as_allowed() {
    match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(limit) => tracing::debug!("open files limit: {limit}"),
        Err(e) => tracing::debug!("open files limit left as it is: {e}"),
    }
}

/// Installs SIGINT/SIGTERM handlers now; the future resolves on either.
#[cfg(unix)]
fn interrupted() -> std::io::Result<impl Future<Output = ()> + Send> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut int = signal(SignalKind::interrupt())?;
    let mut term = signal(SignalKind::terminate())?;
    Ok(async move {
        tokio::select! { _ = int.recv() => {}, _ = term.recv() => {} }
    })
}

#[cfg(not(unix))]
fn interrupted() -> std::io::Result<impl Future<Output = ()> + Send> {
    Ok(async {
        let _ = tokio::signal::ctrl_c().await;
    })
}
