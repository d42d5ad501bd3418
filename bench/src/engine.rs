//! The engine's side: an `Engine` gRPC server on loopback that accepts (and
//! counts) the providers' logs, as the Pulumi engine would (Go's gRPC sets
//! TCP_NODELAY, so this does too).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use pulumirpc::engine_server::{Engine, EngineServer};
use pulumirpc::*;
use tokio::net::TcpListener;
use tonic::transport::server::TcpIncoming;
use tonic::{Request, Response, Status};

#[derive(Clone, Default)]
struct Logs(Arc<AtomicU64>);

#[tonic::async_trait]
impl Engine for Logs {
    async fn log(&self, _: Request<LogRequest>) -> Result<Response<()>, Status> {
        self.0.fetch_add(1, Ordering::Relaxed);
        Ok(Response::new(()))
    }
    async fn get_root_resource(
        &self,
        _: Request<GetRootResourceRequest>,
    ) -> Result<Response<GetRootResourceResponse>, Status> {
        Ok(Response::new(GetRootResourceResponse::default()))
    }
    async fn set_root_resource(
        &self,
        _: Request<SetRootResourceRequest>,
    ) -> Result<Response<SetRootResourceResponse>, Status> {
        Ok(Response::new(SetRootResourceResponse {}))
    }
    async fn start_debugging(&self, _: Request<StartDebuggingRequest>) -> Result<Response<()>, Status> {
        Err(Status::unimplemented("no debugger"))
    }
    async fn require_pulumi_version(
        &self,
        _: Request<RequirePulumiVersionRequest>,
    ) -> Result<Response<RequirePulumiVersionResponse>, Status> {
        Ok(Response::new(RequirePulumiVersionResponse::default()))
    }
}

pub struct StandInEngine {
    pub address: String,
    logs: Logs,
}

impl StandInEngine {
    pub async fn start() -> anyhow::Result<StandInEngine> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let address = listener.local_addr()?.to_string();
        let logs = Logs::default();
        let service = EngineServer::new(logs.clone());
        tokio::spawn(async move {
            let _ = tonic::transport::Server::builder()
                .add_service(service)
                .serve_with_incoming(TcpIncoming::from(listener).with_nodelay(Some(true)))
                .await;
        });
        Ok(StandInEngine { address, logs })
    }

    /// Log messages received so far.
    pub fn logs(&self) -> u64 {
        self.logs.0.load(Ordering::Relaxed)
    }

    /// The count of logs received, to wait on (see [`LogCount::quiet`]).
    pub fn log_count(&self) -> LogCount {
        LogCount(self.logs.clone())
    }
}

/// The engine's count of the logs it received.
pub struct LogCount(Logs);

impl LogCount {
    /// Resolves once no log has arrived for 100 ms (at most after 60 s).
    pub async fn quiet(&self) {
        let until = tokio::time::Instant::now() + std::time::Duration::from_secs(60);
        let mut seen = self.0.0.load(Ordering::Relaxed);
        while tokio::time::Instant::now() < until {
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            let now = self.0.0.load(Ordering::Relaxed);
            if now == seen {
                return;
            }
            seen = now;
        }
    }
}
