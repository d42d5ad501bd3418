//! A stand-in for the engine's `ResourceMonitor`, served on a loopback port:
//! it records every registration, outputs, invoke and read it receives and
//! answers the way the engine does — URNs built from type, name and parent,
//! an ID for each custom resource (none during a preview), the inputs echoed
//! as state (keys in `additionalSecretOutputs` made secret), and the input
//! dependencies echoed as the state's dependencies, and a reference for
//! each package registered.

use std::sync::{Arc, Mutex};

use prost_types::value::Kind;
use prost_types::{Struct, Value};
use pulumirpc::resource_monitor_server::{ResourceMonitor, ResourceMonitorServer};
use pulumirpc::*;
use tokio::net::TcpListener;
use tokio_stream::wrappers::TcpListenerStream;
use tonic::{Request, Response, Status};

use crate::json::{SECRET_SIG, SIG_KEY};

pub const STACK: &str = "dev";
pub const PROJECT: &str = "proj";

/// Everything the monitor received, in order.
#[derive(Clone, Debug, Default)]
pub struct Received {
    pub registrations: Vec<RegisterResourceRequest>,
    pub outputs: Vec<RegisterResourceOutputsRequest>,
    pub invokes: Vec<ResourceInvokeRequest>,
    pub reads: Vec<ReadResourceRequest>,
    pub packages: Vec<RegisterPackageRequest>,
}

#[derive(Clone, Default)]
struct Recorder {
    received: Arc<Mutex<Received>>,
    preview: bool,
    /// While false, registrations wait (after being recorded), as the
    /// engine's do while it creates the resource.
    open: Option<Arc<tokio::sync::watch::Sender<bool>>>,
    /// An engine from before `RegisterPackage`: it answers UNIMPLEMENTED.
    no_packages: bool,
}

/// The URN the engine gives a resource: the parent's type chain, `$`, the type.
pub fn urn(type_: &str, name: &str, parent: &str) -> String {
    let parent_type = parent.split("::").nth(2).filter(|t| *t != "pulumi:pulumi:Stack");
    let qualified = match parent_type {
        Some(p) => format!("{p}${type_}"),
        None => type_.to_owned(),
    };
    format!("urn:pulumi:{STACK}::{PROJECT}::{qualified}::{name}")
}

/// The ID the monitor gives a custom resource named `name`.
pub fn id_of(name: &str) -> String {
    format!("id-{name}")
}

fn secret(v: Value) -> Value {
    let fields =
        [(SIG_KEY.to_owned(), Value { kind: Some(Kind::StringValue(SECRET_SIG.into())) }), ("value".to_owned(), v)];
    Value { kind: Some(Kind::StructValue(Struct { fields: fields.into_iter().collect() })) }
}

#[tonic::async_trait]
impl ResourceMonitor for Recorder {
    async fn get_deployment_info(&self, _: Request<()>) -> Result<Response<DeploymentInfo>, Status> {
        Ok(Response::new(DeploymentInfo { stack: STACK.into(), project: PROJECT.into(), ..Default::default() }))
    }

    async fn supports_feature(
        &self,
        _: Request<SupportsFeatureRequest>,
    ) -> Result<Response<SupportsFeatureResponse>, Status> {
        Ok(Response::new(SupportsFeatureResponse { has_support: true }))
    }

    async fn invoke(
        &self,
        request: Request<ResourceInvokeRequest>,
    ) -> Result<Response<ResourceInvokeResponse>, Status> {
        let r = request.into_inner();
        self.received.lock().unwrap().invokes.push(r.clone());
        if r.tok == "test:index:fail" {
            return Err(Status::not_found(format!("no function {}", r.tok)));
        }
        Ok(Response::new(ResourceInvokeResponse { r#return: r.args, ..Default::default() }))
    }

    async fn call(&self, _: Request<ResourceCallRequest>) -> Result<Response<CallResponse>, Status> {
        Err(Status::unimplemented("the test monitor does not run calls"))
    }

    async fn read_resource(
        &self,
        request: Request<ReadResourceRequest>,
    ) -> Result<Response<ReadResourceResponse>, Status> {
        let r = request.into_inner();
        self.received.lock().unwrap().reads.push(r.clone());
        Ok(Response::new(ReadResourceResponse {
            urn: urn(&r.r#type, &r.name, &r.parent),
            properties: r.properties,
            id: r.id,
            ..Default::default()
        }))
    }

    async fn exists_resource(
        &self,
        _: Request<ExistsResourceRequest>,
    ) -> Result<Response<ExistsResourceResponse>, Status> {
        Ok(Response::new(ExistsResourceResponse { exists: false, unknown: false }))
    }

    async fn register_resource(
        &self,
        request: Request<RegisterResourceRequest>,
    ) -> Result<Response<RegisterResourceResponse>, Status> {
        let r = request.into_inner();
        self.received.lock().unwrap().registrations.push(r.clone());
        if let Some(open) = &self.open {
            let _ = open.subscribe().wait_for(|o| *o).await;
        }
        if r.r#type.is_empty() || r.name.is_empty() {
            return Err(Status::invalid_argument("a resource needs a type and a name"));
        }
        let mut object = r.object.clone().unwrap_or_default();
        for key in &r.additional_secret_outputs {
            if let Some(v) = object.fields.remove(key) {
                object.fields.insert(key.clone(), secret(v));
            }
        }
        let id = if r.custom && !self.preview { id_of(&r.name) } else { String::new() };
        let property_dependencies = r
            .property_dependencies
            .iter()
            .map(|(k, d)| (k.clone(), register_resource_response::PropertyDependencies { urns: d.urns.clone() }))
            .collect();
        Ok(Response::new(RegisterResourceResponse {
            urn: urn(&r.r#type, &r.name, &r.parent),
            id,
            object: Some(object),
            property_dependencies,
            ..Default::default()
        }))
    }

    async fn register_resource_outputs(
        &self,
        request: Request<RegisterResourceOutputsRequest>,
    ) -> Result<Response<()>, Status> {
        self.received.lock().unwrap().outputs.push(request.into_inner());
        Ok(Response::new(()))
    }

    async fn register_stack_transform(&self, _: Request<Callback>) -> Result<Response<()>, Status> {
        Err(Status::unimplemented("transforms"))
    }

    async fn register_stack_invoke_transform(&self, _: Request<Callback>) -> Result<Response<()>, Status> {
        Err(Status::unimplemented("transforms"))
    }

    async fn register_resource_hook(&self, _: Request<RegisterResourceHookRequest>) -> Result<Response<()>, Status> {
        Err(Status::unimplemented("hooks"))
    }

    async fn register_error_hook(&self, _: Request<RegisterErrorHookRequest>) -> Result<Response<()>, Status> {
        Err(Status::unimplemented("hooks"))
    }

    /// A reference per registration, as the engine's are opaque: `pkg-<n>`.
    async fn register_package(
        &self,
        request: Request<RegisterPackageRequest>,
    ) -> Result<Response<RegisterPackageResponse>, Status> {
        if self.no_packages {
            return Err(Status::unimplemented("RegisterPackage is not implemented"));
        }
        let mut received = self.received.lock().unwrap();
        received.packages.push(request.into_inner());
        Ok(Response::new(RegisterPackageResponse { r#ref: format!("pkg-{}", received.packages.len()) }))
    }

    async fn signal_and_wait_for_shutdown(&self, _: Request<()>) -> Result<Response<()>, Status> {
        Ok(Response::new(()))
    }
}

/// A `ResourceMonitor` gRPC server on a loopback port; `address` is
/// `127.0.0.1:PORT`, the form the engine puts in `monitorEndpoint`.
pub struct TestMonitor {
    pub address: String,
    recorder: Recorder,
    task: tokio::task::JoinHandle<()>,
}

impl TestMonitor {
    /// A monitor of an update: custom resources get IDs.
    pub async fn start() -> TestMonitor {
        TestMonitor::serve(false).await
    }

    /// A monitor of a preview: custom resources have no ID yet.
    pub async fn preview() -> TestMonitor {
        TestMonitor::serve(true).await
    }

    /// A monitor of an update whose registrations wait until [`TestMonitor::open`].
    pub async fn gated() -> TestMonitor {
        let open = Some(Arc::new(tokio::sync::watch::Sender::new(false)));
        TestMonitor::serve_with(Recorder { open, ..Recorder::default() }).await
    }

    /// A monitor of an engine from before `RegisterPackage`.
    pub async fn without_packages() -> TestMonitor {
        TestMonitor::serve_with(Recorder { no_packages: true, ..Recorder::default() }).await
    }

    /// Lets waiting and later registrations through.
    pub fn open(&self) {
        if let Some(open) = &self.recorder.open {
            open.send_replace(true);
        }
    }

    async fn serve(preview: bool) -> TestMonitor {
        TestMonitor::serve_with(Recorder { preview, ..Recorder::default() }).await
    }

    async fn serve_with(recorder: Recorder) -> TestMonitor {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind monitor port");
        let address = listener.local_addr().expect("local addr").to_string();
        // The engine's limit (Pulumi's 400 MiB), not tonic's 4 MiB: tests send large values through.
        let service = ResourceMonitorServer::new(recorder.clone()).max_decoding_message_size(400 << 20);
        let task = tokio::spawn(async move {
            let _ = tonic::transport::Server::builder()
                .add_service(service)
                .serve_with_incoming(TcpListenerStream::new(listener))
                .await;
        });
        TestMonitor { address, recorder, task }
    }

    pub fn received(&self) -> Received {
        self.recorder.received.lock().unwrap().clone()
    }

    /// The registration of the resource named `name`.
    pub fn registration(&self, name: &str) -> RegisterResourceRequest {
        let received = self.received();
        let found = received.registrations.iter().find(|r| r.name == name).cloned();
        found.unwrap_or_else(|| panic!("no registration named {name} in {:#?}", received.registrations))
    }
}

impl Drop for TestMonitor {
    fn drop(&mut self) {
        self.task.abort();
    }
}
