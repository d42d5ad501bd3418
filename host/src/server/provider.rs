//! `pulumirpc.ResourceProvider` served by a [`Backend`]: a WebAssembly
//! component's instance pool, or a provider running natively in-process.
//!
//! Every provider-backed RPC goes through one path (`unary!`): translate the
//! request, call the backend's export, translate the response, map errors in
//! one place. Only the protocol RPCs the host answers itself (Handshake,
//! GetPluginInfo, Attach, Cancel) are written out.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures::Stream;
use pulumirpc as pb;
use pulumirpc::resource_provider_server::ResourceProvider;
use tokio::sync::watch;
use tonic::{Request, Response, Status};

use super::engine::EngineLink;
use super::status::{self, Effect};
use crate::convert::requests::IntoWire;
use crate::convert::value::WireOptions;
use crate::runtime::bindings::{rp, words};
use crate::runtime::held;
use crate::runtime::{Backend, CallResult, LoadedProvider, MAX_CALL_TIMEOUT, Pool};

/// The gRPC service of one provider, whatever runs it.
pub struct ProviderService<B: Backend> {
    backend: Arc<B>,
    version: String,
    engine: EngineLink,
    byte_strings: AtomicBool,
    /// Said at Handshake: the engine reads it there and nowhere else.
    autonaming: bool,
    /// Set by Handshake: the engine negotiates there, and Configure's
    /// `acceptSecrets`/`acceptResources` are then not consulted.
    handshaken: AtomicBool,
    /// A caller that did not handshake said it takes no secrets / references.
    plain_secrets: AtomicBool,
    plain_references: AtomicBool,
    shutdown: watch::Sender<bool>,
    /// Attach mode: the engine run ended with Cancel, and the next has not begun.
    run_ended: AtomicBool,
}

/// A WebAssembly component served over gRPC.
pub type WasmProvider = ProviderService<Pool>;

impl ProviderService<Pool> {
    pub fn new(loaded: LoadedProvider, engine: EngineLink) -> Self {
        let (version, autonaming) = (loaded.version.clone(), loaded.autonaming);
        ProviderService::with_backend(loaded.into_served_pool(), &version, engine).supports_autonaming(autonaming)
    }
}

impl<B: Backend> ProviderService<B> {
    /// Serves `backend` as version `version` of its package.
    pub fn with_backend(backend: Arc<B>, version: &semver::Version, engine: EngineLink) -> Self {
        ProviderService {
            backend,
            version: version.to_string(),
            engine,
            byte_strings: AtomicBool::new(false),
            autonaming: false,
            handshaken: AtomicBool::new(false),
            plain_secrets: AtomicBool::new(false),
            plain_references: AtomicBool::new(false),
            shutdown: watch::Sender::new(false),
            run_ended: AtomicBool::new(false),
        }
    }

    /// Whether the provider honours Check's autonaming options (false unless said).
    pub fn supports_autonaming(mut self, yes: bool) -> Self {
        self.autonaming = yes;
        self
    }

    pub fn backend(&self) -> &Arc<B> {
        &self.backend
    }

    pub fn engine(&self) -> &EngineLink {
        &self.engine
    }

    /// What Cancel does: calls in progress stop (interrupted after the
    /// grace), then the server stops.
    pub async fn shut_down(&self) {
        self.backend.cancel(CANCEL_GRACE).await;
        self.shutdown.send_replace(true);
    }

    /// Resolves once the engine has sent `Cancel`.
    pub fn cancelled(&self) -> impl Future<Output = ()> + Send + 'static {
        let mut rx = self.shutdown.subscribe();
        async move {
            let _ = rx.wait_for(|c| *c).await;
        }
    }

    /// In attach mode, the first Handshake or Attach after a Cancel starts
    /// another engine run: one that ended with Cancel no longer cancels its
    /// calls. Several providers of one run attach too (each Handshakes):
    /// those before any Cancel change nothing.
    fn next_run(&self) {
        if self.engine.attached() && self.run_ended.swap(false, Ordering::AcqRel) {
            self.backend.resume();
        }
    }

    /// What the engine negotiated, and whether this answer must be known throughout.
    fn wire(&self, known_only: bool) -> WireOptions {
        WireOptions {
            byte_strings: self.byte_strings.load(Ordering::Relaxed),
            plain_secrets: self.plain_secrets.load(Ordering::Relaxed),
            plain_references: self.plain_references.load(Ordering::Relaxed),
            known_only,
        }
    }

    /// A backend's answer on the wire: a failed call as its status, a
    /// result as its message (one the guest got wrong is the provider's fault).
    fn answer<T: IntoWire>(&self, out: CallResult<T>, effect: Effect) -> Result<T::Wire, Status> {
        // What a real Create or Update leaves must be known, as what a Read
        // finds (its partial state too); a preview's need not.
        let wire = self.wire(effect.changes() || T::KNOWN_ONLY);
        let out = out.map_err(|e| status::call(e, wire, effect))?;
        // Held texts the answer names go into it by move where they can.
        if held::active() {
            out.each_value(&mut |v| words::held_handles(v, &mut held::expect_use));
        }
        let made = out.made().filter(|_| effect == Effect::Creates).map(str::to_owned);
        out.into_wire(wire).map_err(|e| match made {
            Some(id) => status::made_but_bad(id, e),
            None => status::bad_response(e, effect),
        })
    }
}

/// How long in-flight calls may finish after Cancel before they are
/// interrupted; inside the engine's 5 s between SIGINT and SIGKILL.
pub const CANCEL_GRACE: Duration = Duration::from_secs(2);

/// A request's `timeout` (seconds, 0 = unset) as a call deadline.
fn deadline(seconds: f64) -> Option<Duration> {
    (seconds.is_finite() && seconds > 0.0).then(|| Duration::from_secs_f64(seconds.min(MAX_CALL_TIMEOUT.as_secs_f64())))
}

/// The whole life of a provider-backed unary RPC, within a table of the
/// asset texts kept back from the provider (`runtime::held`) when it reads
/// them. Not for a `replayed` call (Parameterize, Configure): its request is
/// kept and replayed into other instances during later RPCs.
macro_rules! unary {
    ($self:ident, $request:ident, $method:ident) => {
        unary!($self, $request, $method, |_r| None, Effect::Reads)
    };
    ($self:ident, $request:ident, $method:ident, replayed) => {
        unary!(@run $self, $request, $method, |_r| None, Effect::Reads, false)
    };
    ($self:ident, $request:ident, $method:ident, $timeout:expr, $effect:expr) => {
        unary!(@run $self, $request, $method, $timeout, $effect, $self.backend.reads_held_texts())
    };
    (@run $self:ident, $request:ident, $method:ident, $timeout:expr, $effect:expr, $held:expr) => {{
        let wire_req = $request.into_inner();
        let timeout = ($timeout)(&wire_req);
        held::scope($held, async {
            let wit_req = TryFrom::try_from(wire_req).map_err(status::bad_request)?;
            Ok(Response::new($self.answer($self.backend.$method(timeout, wit_req).await, $effect)?))
        })
        .await
    }};
}

type Streamed<T> = Pin<Box<dyn Stream<Item = Result<T, Status>> + Send + 'static>>;

#[tonic::async_trait]
impl<B: Backend> ResourceProvider for ProviderService<B> {
    async fn handshake(
        &self,
        request: Request<pb::ProviderHandshakeRequest>,
    ) -> Result<Response<pb::ProviderHandshakeResponse>, Status> {
        let r = request.into_inner();
        self.engine.set_address(&r.engine_address);
        self.next_run();
        self.byte_strings.store(r.accepts_byte_string, Ordering::Relaxed);
        self.handshaken.store(true, Ordering::Relaxed);
        Ok(Response::new(pb::ProviderHandshakeResponse {
            accept_secrets: true,
            accept_resources: true,
            accept_outputs: true,
            supports_autonaming_configuration: self.autonaming,
            accepts_byte_string: true,
            // Plain values in Invoke/Call/Check: guests see outputs only where they always could.
            accepts_outputs_in_invoke: false,
            accepts_outputs_in_call: false,
            accepts_outputs_in_check: false,
        }))
    }

    async fn parameterize(
        &self,
        request: Request<pb::ParameterizeRequest>,
    ) -> Result<Response<pb::ParameterizeResponse>, Status> {
        unary!(self, request, parameterize, replayed)
    }

    async fn get_schema(
        &self,
        request: Request<pb::GetSchemaRequest>,
    ) -> Result<Response<pb::GetSchemaResponse>, Status> {
        unary!(self, request, get_schema)
    }

    async fn check_config(&self, request: Request<pb::CheckRequest>) -> Result<Response<pb::CheckResponse>, Status> {
        unary!(self, request, check_config)
    }

    async fn diff_config(&self, request: Request<pb::DiffRequest>) -> Result<Response<pb::DiffResponse>, Status> {
        unary!(self, request, diff_config)
    }

    async fn configure(
        &self,
        request: Request<pb::ConfigureRequest>,
    ) -> Result<Response<pb::ConfigureResponse>, Status> {
        // Without a Handshake, Configure is where the caller says what it takes.
        if !self.handshaken.load(Ordering::Relaxed) {
            let r = request.get_ref();
            self.plain_secrets.store(!r.accept_secrets, Ordering::Relaxed);
            self.plain_references.store(!r.accept_resources, Ordering::Relaxed);
        }
        let answered: Result<Response<pb::ConfigureResponse>, Status> = unary!(self, request, configure, replayed);
        let mut response = answered?;
        // What the Handshake said, which the protocol says this must match.
        response.get_mut().supports_autonaming_configuration = self.autonaming;
        Ok(response)
    }

    async fn invoke(&self, request: Request<pb::InvokeRequest>) -> Result<Response<pb::InvokeResponse>, Status> {
        unary!(self, request, invoke)
    }

    type StreamInvokeStream = Streamed<pb::InvokeResponse>;

    /// The deprecated streaming form of Invoke: one response, then the end.
    async fn stream_invoke(
        &self,
        request: Request<pb::InvokeRequest>,
    ) -> Result<Response<Self::StreamInvokeStream>, Status> {
        let one = self.invoke(request).await?.into_inner();
        Ok(Response::new(Box::pin(futures::stream::iter([Ok(one)]))))
    }

    async fn call(&self, request: Request<pb::CallRequest>) -> Result<Response<pb::CallResponse>, Status> {
        unary!(self, request, call)
    }

    async fn check(&self, request: Request<pb::CheckRequest>) -> Result<Response<pb::CheckResponse>, Status> {
        unary!(self, request, check)
    }

    async fn diff(&self, request: Request<pb::DiffRequest>) -> Result<Response<pb::DiffResponse>, Status> {
        unary!(self, request, diff)
    }

    async fn create(&self, request: Request<pb::CreateRequest>) -> Result<Response<pb::CreateResponse>, Status> {
        // A preview makes nothing.
        let effect = if request.get_ref().preview { Effect::Reads } else { Effect::Creates };
        unary!(self, request, create, |r: &pb::CreateRequest| deadline(r.timeout), effect)
    }

    async fn read(&self, request: Request<pb::ReadRequest>) -> Result<Response<pb::ReadResponse>, Status> {
        let had_inputs = request.get_ref().inputs.as_ref().is_some_and(|i| !i.fields.is_empty());
        let read: Result<Response<pb::ReadResponse>, Status> =
            unary!(self, request, read, |r: &pb::ReadRequest| deadline(r.timeout), Effect::Reads);
        let mut read = read?;
        // The WIT's inputs are not optional, but the engine reads absent
        // inputs as "keep the current ones" and present ones as the new
        // inputs. No inputs back for a resource that had some means the
        // former: sent as they are, a refresh would wipe the stored inputs.
        let out = read.get_mut();
        if had_inputs && out.inputs.as_ref().is_some_and(|i| i.fields.is_empty()) {
            out.inputs = None;
        }
        Ok(read)
    }

    type ListStream = Streamed<pb::ListResponse>;

    async fn list(&self, request: Request<pb::ListRequest>) -> Result<Response<Self::ListStream>, Status> {
        let wit_req = rp::ListRequest::try_from(request.into_inner()).map_err(status::bad_request)?;
        let messages = self.answer(self.backend.list(None, wit_req).await, Effect::Reads)?;
        Ok(Response::new(Box::pin(futures::stream::iter(messages.into_iter().map(Ok)))))
    }

    async fn update(&self, request: Request<pb::UpdateRequest>) -> Result<Response<pb::UpdateResponse>, Status> {
        let effect = if request.get_ref().preview { Effect::Reads } else { Effect::Changes };
        unary!(self, request, update, |r: &pb::UpdateRequest| deadline(r.timeout), effect)
    }

    async fn delete(&self, request: Request<pb::DeleteRequest>) -> Result<Response<()>, Status> {
        unary!(self, request, delete, |r: &pb::DeleteRequest| deadline(r.timeout), Effect::Changes)
    }

    async fn construct(
        &self,
        request: Request<pb::ConstructRequest>,
    ) -> Result<Response<pb::ConstructResponse>, Status> {
        unary!(self, request, construct)
    }

    /// Attach mode outlives each engine run, which ends with Cancel: what
    /// runs is cancelled, and the next run's Handshake or Attach resumes.
    async fn cancel(&self, _request: Request<()>) -> Result<Response<()>, Status> {
        match self.engine.attached() {
            true => {
                self.run_ended.store(true, Ordering::Release);
                self.backend.cancel(CANCEL_GRACE).await;
            }
            false => self.shut_down().await,
        }
        Ok(Response::new(()))
    }

    async fn get_plugin_info(&self, _request: Request<()>) -> Result<Response<pb::PluginInfo>, Status> {
        Ok(Response::new(pb::PluginInfo { version: self.version.clone() }))
    }

    async fn attach(&self, request: Request<pb::PluginAttach>) -> Result<Response<()>, Status> {
        let address = request.into_inner().address;
        if address.is_empty() {
            return Err(Status::invalid_argument("attach needs the engine address"));
        }
        self.engine.set_address(&address);
        self.next_run();
        Ok(Response::new(()))
    }

    async fn get_mapping(
        &self,
        request: Request<pb::GetMappingRequest>,
    ) -> Result<Response<pb::GetMappingResponse>, Status> {
        let r = request.into_inner();
        Ok(Response::new(self.answer(self.backend.get_mapping(None, r.key, r.provider).await, Effect::Reads)?))
    }

    async fn get_mappings(
        &self,
        request: Request<pb::GetMappingsRequest>,
    ) -> Result<Response<pb::GetMappingsResponse>, Status> {
        let r = request.into_inner();
        Ok(Response::new(self.answer(self.backend.get_mappings(None, r.key).await, Effect::Reads)?))
    }
}
