//! The link back to the engine: where it listens, forwarding guest logs to
//! `Engine.Log`, and noticing when it is gone.

use pulumirpc::engine_client::EngineClient;
use pulumirpc::{LogRequest, LogSeverity};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tonic::Code;
use tonic::codegen::http::uri::InvalidUri;
use tonic::transport::{Channel, Endpoint};
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_client::HealthClient;

use crate::runtime::{GuestLog, LogSeverity as Severity};

/// The engine's gRPC address: from the command line, or learned from
/// `Handshake`/`Attach` when the engine attached to a running host.
#[derive(Clone)]
pub struct EngineLink {
    addr: watch::Sender<Option<String>>,
    /// Started without an address: attach mode, where one engine run after
    /// another attaches (`PULUMI_DEBUG_PROVIDERS`).
    attached: bool,
    /// The task sending logs, once [`EngineLink::forward_logs`] started it.
    forwarder: Arc<Mutex<Option<JoinHandle<()>>>>,
}

impl EngineLink {
    pub fn new(addr: Option<String>) -> Self {
        let addr = addr.filter(|a| !a.is_empty());
        EngineLink { attached: addr.is_none(), addr: watch::Sender::new(addr), forwarder: Arc::default() }
    }

    /// Whether the host runs in attach mode.
    pub fn attached(&self) -> bool {
        self.attached
    }

    pub fn set_address(&self, addr: &str) {
        if !addr.is_empty() {
            self.addr.send_replace(Some(addr.to_owned()));
        }
    }

    pub fn address(&self) -> Option<String> {
        self.addr.borrow().clone()
    }

    /// Sends guest logs to the engine until `logs` closes, several calls at
    /// once and each URN's messages in order (see `server::forward`).
    /// Messages that arrive before the engine's address is known wait for
    /// it. `serve` flushes them when it stops (see `EngineLink::flush_logs`).
    pub fn forward_logs(&self, logs: mpsc::Receiver<GuestLog>) {
        let addr = self.addr.subscribe();
        let client = SharedClient::default();
        let send = move |log: GuestLog| {
            let (mut addr, client) = (addr.clone(), client.clone());
            async move {
                let Ok(current) = addr.wait_for(Option::is_some).await.map(|a| a.clone()) else { return };
                let current = current.expect("waited for an address");
                let Some(mut engine) = client.at(&current) else {
                    tracing::warn!("guest log not sent, no engine at {current}: {:?}", log.message);
                    return;
                };
                if let Err(e) = engine.log(request(log)).await {
                    tracing::warn!("Engine.Log failed: {e}");
                }
            }
        };
        let task = tokio::spawn(super::forward::forward(logs, send));
        if let Some(old) = self.forwarder.lock().expect("forwarder lock").replace(task) {
            old.abort();
        }
    }

    /// After serving: gives the log forwarder a moment to send what is still
    /// queued (the last messages before Cancel matter most), then stops it.
    /// It ends on its own once every sender is gone, as it is once the
    /// provider is dropped.
    pub(super) async fn flush_logs(&self) {
        let Some(mut forwarder) = self.forwarder.lock().expect("forwarder lock").take() else { return };
        if tokio::time::timeout(LOG_FLUSH, &mut forwarder).await.is_err() {
            forwarder.abort();
        }
    }
}

/// How long [`EngineLink::flush_logs`] waits: well inside the engine's 5 s before SIGKILL.
const LOG_FLUSH: Duration = Duration::from_secs(1);
/// How long the engine may take to answer a health check before it counts as gone.
const HEALTH_TIMEOUT: Duration = Duration::from_secs(60);

impl EngineLink {
    /// Resolves once the engine stops answering its health service, checked
    /// every `every`, as Pulumi's own plugins do (`rpcutil.Healthcheck`), so
    /// a host whose engine died does not linger. An engine without the
    /// health service (`Unimplemented`) counts as alive; so does one whose
    /// address is not known yet.
    pub fn gone(&self, every: Duration) -> impl Future<Output = ()> + Send + 'static {
        let addr = self.addr.subscribe();
        async move {
            let mut client: Option<(String, HealthClient<Channel>)> = None;
            loop {
                tokio::time::sleep(every).await;
                let Some(current) = addr.borrow().clone() else { continue };
                if client.as_ref().is_none_or(|(a, _)| *a != current) {
                    match endpoint(&current) {
                        Ok(endpoint) => client = Some((current.clone(), HealthClient::new(endpoint.connect_lazy()))),
                        Err(_) => continue,
                    }
                }
                let Some((_, health)) = client.as_mut() else { continue };
                // An engine that does not answer for a while is as gone as
                // one that refuses: an address that accepts and then says
                // nothing must not keep this check waiting forever.
                let answer = tokio::time::timeout(HEALTH_TIMEOUT, health.check(HealthCheckRequest::default())).await;
                match answer {
                    Ok(Err(e)) if e.code() != Code::Unimplemented => {
                        tracing::warn!("the engine at {current} is gone ({}); shutting down", e.message());
                        return;
                    }
                    Err(_) => {
                        tracing::warn!(
                            "the engine at {current} has not answered for {HEALTH_TIMEOUT:?}; shutting down"
                        );
                        return;
                    }
                    _ => {}
                }
            }
        }
    }
}

/// The engine's address (`host:port`, or a URI) as a gRPC endpoint.
fn endpoint(addr: &str) -> Result<Endpoint, InvalidUri> {
    let uri = if addr.contains("://") { addr.to_owned() } else { format!("http://{addr}") };
    Channel::from_shared(uri)
}

/// One `Engine` client per address, shared by the log calls in flight: a
/// tonic channel multiplexes them over one connection and reconnects itself.
#[derive(Clone, Default)]
struct SharedClient(Arc<Mutex<Option<AddressedClient>>>);

type AddressedClient = (String, EngineClient<Channel>);

impl SharedClient {
    /// The client for the engine at `addr`, made (connecting on first use)
    /// when the address is new; `None` for an address that is not one.
    fn at(&self, addr: &str) -> Option<EngineClient<Channel>> {
        let mut client = self.0.lock().expect("engine client lock");
        if client.as_ref().is_none_or(|(a, _)| a != addr) {
            *client = match endpoint(addr) {
                Ok(endpoint) => Some((addr.to_owned(), EngineClient::new(endpoint.connect_lazy()))),
                Err(e) => {
                    tracing::warn!("bad engine address {addr}: {e}");
                    None
                }
            };
        }
        client.as_ref().map(|(_, c)| c.clone())
    }
}

fn request(log: GuestLog) -> LogRequest {
    let severity = match log.severity {
        Severity::Debug => LogSeverity::Debug,
        Severity::Info => LogSeverity::Info,
        Severity::Warning => LogSeverity::Warning,
        Severity::Error => LogSeverity::Error,
    };
    LogRequest {
        severity: severity as i32,
        message: log.message,
        urn: log.urn.unwrap_or_default(),
        stream_id: 0,
        ephemeral: log.ephemeral,
    }
}
