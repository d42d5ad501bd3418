//! A stand-in for the Pulumi engine's `Engine` service: records every log.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pulumirpc::engine_server::{Engine, EngineServer};
use pulumirpc::*;
// Explicit: `pulumirpc::*` brings a message type named `Result` (resource.proto).
use std::result::Result;
use tokio::net::TcpListener;
use tokio_stream::wrappers::TcpListenerStream;
use tonic::{Request, Response, Status};

/// Logs kept for assertions; past this only the count and the longest message
/// are recorded, so a guest flooding the log cannot exhaust the test process.
const MAX_KEPT_LOGS: usize = 10_000;

#[derive(Clone, Default)]
struct Recorder {
    logs: Arc<Mutex<Vec<LogRequest>>>,
    total: Arc<AtomicUsize>,
    longest: Arc<AtomicUsize>,
    /// How long each `Log` call takes to answer: a busy engine.
    log_delay: Duration,
}

#[tonic::async_trait]
impl Engine for Recorder {
    async fn log(&self, request: Request<LogRequest>) -> Result<Response<()>, Status> {
        let log = request.into_inner();
        if !self.log_delay.is_zero() {
            tokio::time::sleep(self.log_delay).await;
        }
        self.total.fetch_add(1, Ordering::Relaxed);
        self.longest.fetch_max(log.message.len(), Ordering::Relaxed);
        let mut logs = self.logs.lock().unwrap();
        if logs.len() < MAX_KEPT_LOGS {
            logs.push(log);
        }
        Ok(Response::new(()))
    }
    async fn get_root_resource(
        &self,
        _: Request<GetRootResourceRequest>,
    ) -> Result<Response<GetRootResourceResponse>, Status> {
        Ok(Response::new(GetRootResourceResponse { urn: String::new() }))
    }
    async fn set_root_resource(
        &self,
        _: Request<SetRootResourceRequest>,
    ) -> Result<Response<SetRootResourceResponse>, Status> {
        Ok(Response::new(SetRootResourceResponse {}))
    }
    async fn start_debugging(&self, _: Request<StartDebuggingRequest>) -> Result<Response<()>, Status> {
        Err(Status::unimplemented("no debugger here"))
    }
    async fn require_pulumi_version(
        &self,
        _: Request<RequirePulumiVersionRequest>,
    ) -> Result<Response<RequirePulumiVersionResponse>, Status> {
        Ok(Response::new(RequirePulumiVersionResponse::default()))
    }
}

/// An `Engine` gRPC server on a loopback port.
pub struct TestEngine {
    pub address: String,
    recorder: Recorder,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl TestEngine {
    pub async fn start() -> TestEngine {
        TestEngine::start_with_log_delay(Duration::ZERO).await
    }

    /// An engine that takes `delay` to answer each `Log` call.
    pub async fn start_with_log_delay(delay: Duration) -> TestEngine {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind engine port");
        let address = listener.local_addr().expect("local addr").to_string();
        let recorder = Recorder { log_delay: delay, ..Recorder::default() };
        let service = EngineServer::new(recorder.clone());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(async move {
            let _ = tonic::transport::Server::builder()
                .add_service(service)
                .serve_with_incoming_shutdown(TcpListenerStream::new(listener), async {
                    let _ = stopped.await;
                })
                .await;
        });
        TestEngine { address, recorder, stop: Some(stop) }
    }

    pub fn logs(&self) -> Vec<LogRequest> {
        self.recorder.logs.lock().unwrap().clone()
    }

    /// How many logs arrived (all of them, not only those kept).
    pub fn log_count(&self) -> usize {
        self.recorder.total.load(Ordering::Relaxed)
    }

    /// The length of the longest log message that arrived.
    pub fn longest_log(&self) -> usize {
        self.recorder.longest.load(Ordering::Relaxed)
    }

    /// Waits (bounded) until a log matching `pred` arrives.
    pub async fn wait_for_log(&self, pred: impl Fn(&LogRequest) -> bool) -> Option<LogRequest> {
        self.wait_for_logs(1, pred).await.into_iter().next()
    }

    /// Waits (bounded, 5 s) until `n` logs match `pred`; returns those that did.
    pub async fn wait_for_logs(&self, n: usize, pred: impl Fn(&LogRequest) -> bool) -> Vec<LogRequest> {
        self.wait_for_logs_within(Duration::from_secs(5), n, pred).await
    }

    /// Waits up to `within` until `n` logs match `pred`; returns those that did.
    pub async fn wait_for_logs_within(
        &self,
        within: Duration,
        n: usize,
        pred: impl Fn(&LogRequest) -> bool,
    ) -> Vec<LogRequest> {
        let mut found = Vec::new();
        for _ in 0..within.as_millis().div_ceil(50) {
            found = self.logs().into_iter().filter(&pred).collect();
            if found.len() >= n {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        found
    }
}

/// Going away as an engine process does: the port closes and so do the
/// connections plugins hold (a graceful stop; aborting the task would leave
/// the connections' own tasks serving).
impl Drop for TestEngine {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}
