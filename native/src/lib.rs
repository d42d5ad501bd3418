//! Serve a provider written with `pulumi-wasm-sdk` natively: compiled for the
//! host, called in-process, behind exactly the gRPC server that serves its
//! WebAssembly component (`pulumi_wasm_host::server`).
//!
//! Two uses: a baseline (the difference between this and the component is
//! the cost of WebAssembly, nothing else) and a way to run and debug a
//! provider with native tools (a debugger, `perf`, sanitizers).
//!
//! ```ignore
//! // src/bin/pulumi-resource-greeter.rs, in a crate depending on the provider crate:
//! fn main() {
//!     pulumi_wasm_native::plugin_main(greeter::__pulumi_wasm_provider);
//! }
//! ```
//!
//! What differs from the component: there is no sandbox (the provider runs
//! with the process's authority), deadlines are not enforced (native code
//! cannot be interrupted), and `context::cancelled()` is always false. The
//! SDK's logging reaches `Engine.Log` as a component's does (`serve_native`).

pub mod convert;

use std::any::Any;
use std::cell::RefCell;
use std::collections::HashMap;
use std::marker::PhantomData;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use anyhow::Context;
use clap::Parser;
use pulumi_wasm_host::runtime::bindings::rp;
use pulumi_wasm_host::runtime::{
    Backend, CallError, CallResult, LOG_CHANNEL, LogQueue, LogSeverity, PartialState, RuntimeError, SetupCall,
    SetupLog, unfinished,
};
use pulumi_wasm_host::server::{EngineLink, ProviderService, ServeOptions, serve};
use pulumi_wasm_sdk::Provider;
use pulumi_wasm_sdk::log::{NativeSink, Severity};

/// One provider value per thread that runs calls, keyed by backend. Provider
/// values need not be `Send` (the SDK's typed providers are not), so they
/// never leave the thread that made them; a call runs synchronously, so one
/// value per thread is enough for any number of concurrent calls.
struct Instance<P> {
    provider: P,
    /// How many recorded setup calls this value has seen.
    applied: usize,
    /// Whether it has been told about the engine's cancellation.
    cancelled: bool,
    /// The engine run it was made in (see `resume`).
    run: u64,
}

thread_local! {
    static INSTANCES: RefCell<HashMap<u64, Box<dyn Any>>> = RefCell::default();
}

static NEXT_ID: AtomicU64 = AtomicU64::new(0);

/// A [`Backend`] that calls a [`Provider`] in-process. Like the wasm pool,
/// it records `parameterize` and `configure` and replays them into every
/// provider value it makes, so a provider behaves the same under both.
pub struct NativeBackend<P> {
    id: u64,
    make: fn() -> P,
    /// Where the provider's log messages go during its calls (stderr when `None`).
    logs: Option<NativeSink>,
    setup: SetupLog,
    cancelled: AtomicBool,
    _provider: PhantomData<fn() -> P>,
}

impl<P: Provider> NativeBackend<P> {
    /// `make` builds each provider value (e.g. the `__pulumi_wasm_provider`
    /// function that `export_provider!` defines in native builds).
    pub fn new(make: fn() -> P) -> Self {
        NativeBackend {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            make,
            logs: None,
            setup: SetupLog::default(),
            cancelled: AtomicBool::new(false),
            _provider: PhantomData,
        }
    }

    /// Sends the provider's log messages to `queue` (to `Engine.Log`, as a
    /// component's go), rather than stderr.
    pub fn with_logs(mut self, queue: LogQueue) -> Self {
        self.logs = Some(Arc::new(move |severity, message: &str, urn: Option<&str>, ephemeral| {
            let severity = match severity {
                Severity::Debug => LogSeverity::Debug,
                Severity::Info => LogSeverity::Info,
                Severity::Warning => LogSeverity::Warning,
                Severity::Error => LogSeverity::Error,
            };
            queue.send(severity, message.to_owned(), urn.map(str::to_owned), ephemeral);
        }));
        self
    }

    /// Runs provider code with its log messages going where [`Self::with_logs`] said.
    fn logging<R>(&self, f: impl FnOnce() -> R) -> R {
        match &self.logs {
            Some(sink) => pulumi_wasm_sdk::log::with_native_sink(sink, f),
            None => f(),
        }
    }

    /// Whether the engine has cancelled (Cancel reached this backend).
    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Relaxed)
    }

    /// The provider's package name and version, and whether it honours
    /// autonaming options.
    pub fn info(&self) -> anyhow::Result<(String, semver::Version, bool)> {
        let info = self.with(|p| Ok::<_, pulumi_wasm_sdk::Error>(p.info()), None).map_err(|e| match e {
            CallError::Runtime(e) | CallError::NotStarted(e) => anyhow::anyhow!(e),
            CallError::Provider { error, .. } => anyhow::anyhow!("{error:?}"),
        })?;
        let version = semver::Version::parse(&info.version)
            .with_context(|| format!("the provider's version '{}' is not semver", info.version))?;
        Ok((info.name, version, info.supports_autonaming_configuration))
    }

    /// Runs `call` on this thread's provider value, brought up to date with
    /// the setup calls; records `setup` if the call succeeds. A panic fails
    /// the call and discards the value, as a trap discards a wasm instance.
    fn with<T>(
        &self,
        call: impl FnOnce(&mut P) -> pulumi_wasm_sdk::Result<T>,
        setup: Option<SetupCall>,
    ) -> CallResult<T> {
        if setup.is_some() {
            self.setup.room().map_err(CallError::NotStarted)?;
        }
        let mut slot = self.take();
        // Made in an earlier engine run: a fresh one for this run instead.
        let run = self.setup.run();
        if slot.as_ref().is_some_and(|inst| inst.run != run) {
            slot = None;
        }
        // As the wasm pool does: the lock only when this value is behind.
        let applied = slot.as_ref().map_or(0, |inst| inst.applied);
        let calls = (applied < self.setup.len()).then(|| self.setup.snapshot());
        let outcome = self.logging(|| {
            catch_unwind(AssertUnwindSafe(|| {
                let inst =
                    slot.get_or_insert_with(|| Instance { provider: (self.make)(), applied: 0, cancelled: false, run });
                if self.cancelled.load(Ordering::Relaxed) && !inst.cancelled {
                    inst.cancelled = true;
                    inst.provider.cancel();
                }
                let calls = calls.as_deref().map_or(&[][..], Vec::as_slice);
                while inst.applied < calls.len() {
                    replay(&mut inst.provider, &calls[inst.applied])?;
                    inst.applied += 1;
                }
                Ok(call(&mut inst.provider))
            }))
        });
        let result = match outcome {
            Ok(Ok(r)) => r,
            Ok(Err(replay)) => return Err(CallError::Runtime(replay)),
            Err(panic) => {
                let message = panic_message(&*panic);
                tracing::warn!("discarding a provider value that panicked: {message}");
                return Err(CallError::Runtime(RuntimeError::Trap { message, partial: None }));
            }
        };
        let mut inst = slot.expect("the provider value exists once the call ran");
        // As in the wasm pool, a value that ran a setup call out of order goes.
        let kept = match setup {
            Some(call) if result.is_ok() => self.setup.record(call, inst.applied, inst.run, || ())?,
            _ => Some(inst.applied),
        };
        if let Some(applied) = kept {
            inst.applied = applied;
            self.put(inst);
        }
        result.map_err(|e| CallError::Provider { error: convert::error(e), denials: vec![] })
    }

    /// [`Self::with`] for a Create or Update; `makes` when it makes or
    /// changes a resource (not a preview): an error after the call reported
    /// partial state is then a resource left unfinished, for the engine to
    /// record, as the host has it of a component.
    fn with_made<T>(&self, makes: bool, call: impl FnOnce(&mut P) -> pulumi_wasm_sdk::Result<T>) -> CallResult<T> {
        let _ = pulumi_wasm_sdk::context::take_partial_state();
        let result = self.with(call, None);
        match (result, pulumi_wasm_sdk::context::take_partial_state()) {
            (Err(CallError::Provider { error, denials }), Some((id, properties)))
                if makes && !matches!(error, pulumi_wasm_host::runtime::bindings::types::Error::InitFailed(_)) =>
            {
                let value = convert::wire_map(properties);
                let partial = PartialState { id, bytes: PartialState::bytes_of(&value), properties: Some(value) };
                Err(unfinished(&error, &denials, partial))
            }
            (result, _) => result,
        }
    }

    /// This thread's provider value, if it has one.
    fn take(&self) -> Option<Instance<P>> {
        let kept = INSTANCES.with(|m| m.borrow_mut().remove(&self.id));
        kept.and_then(|b| b.downcast::<Instance<P>>().ok()).map(|b| *b)
    }

    fn put(&self, inst: Instance<P>) {
        INSTANCES.with(|m| m.borrow_mut().insert(self.id, Box::new(inst)));
    }
}

/// One recorded setup call, into a provider value that missed it.
fn replay<P: Provider>(p: &mut P, call: &SetupCall) -> Result<(), RuntimeError> {
    let (what, result) = match call.clone() {
        SetupCall::Parameterize(r) => ("parameterize", p.parameterize(convert::parameterize(r)).map(drop)),
        SetupCall::Configure(r) => ("configure", convert::configure(r).and_then(|r| p.configure(r)).map(drop)),
    };
    result.map_err(|e| RuntimeError::Replay { what, message: format!("{e:?}") })
}

fn panic_message(panic: &(dyn Any + Send)) -> String {
    let text = panic.downcast_ref::<&str>().copied().or_else(|| panic.downcast_ref::<String>().map(String::as_str));
    format!("the provider panicked: {}", text.unwrap_or("(no message)"))
}

impl<P: Provider> Backend for NativeBackend<P> {
    async fn parameterize(&self, _: Option<Duration>, r: rp::ParameterizeRequest) -> CallResult<rp::PackageRef> {
        let setup = SetupCall::Parameterize(r.clone());
        self.with(|p| p.parameterize(convert::parameterize(r)).map(convert::package_ref), Some(setup))
    }

    async fn get_schema(&self, _: Option<Duration>, r: rp::GetSchemaRequest) -> CallResult<String> {
        self.with(|p| p.get_schema(convert::get_schema(r)), None)
    }

    async fn check_config(&self, _: Option<Duration>, r: rp::CheckRequest) -> CallResult<rp::CheckResponse> {
        self.with(|p| p.check_config(convert::check(r)?).map(convert::check_response), None)
    }

    async fn diff_config(&self, _: Option<Duration>, r: rp::DiffRequest) -> CallResult<rp::DiffResponse> {
        self.with(|p| p.diff_config(convert::diff(r)?).map(convert::diff_response), None)
    }

    async fn configure(&self, _: Option<Duration>, r: rp::ConfigureRequest) -> CallResult<rp::ConfigureResponse> {
        let setup = SetupCall::Configure(r.clone());
        self.with(|p| p.configure(convert::configure(r)?).map(convert::configure_response), Some(setup))
    }

    async fn invoke(&self, _: Option<Duration>, r: rp::InvokeRequest) -> CallResult<rp::InvokeResponse> {
        self.with(|p| p.invoke(convert::invoke(r)?).map(convert::invoke_response), None)
    }

    async fn call(&self, _: Option<Duration>, r: rp::CallRequest) -> CallResult<rp::CallResponse> {
        self.with(|p| p.call(convert::call(r)?).map(convert::call_response), None)
    }

    async fn check(&self, _: Option<Duration>, r: rp::CheckRequest) -> CallResult<rp::CheckResponse> {
        self.with(|p| p.check(convert::check(r)?).map(convert::check_response), None)
    }

    async fn diff(&self, _: Option<Duration>, r: rp::DiffRequest) -> CallResult<rp::DiffResponse> {
        self.with(|p| p.diff(convert::diff(r)?).map(convert::diff_response), None)
    }

    async fn create(&self, _: Option<Duration>, r: rp::CreateRequest) -> CallResult<rp::CreateResponse> {
        self.with_made(!r.preview, |p| {
            let (req, properties) = convert::create(r)?;
            p.create_outputs(req, properties).map(convert::create_response)
        })
    }

    async fn read(&self, _: Option<Duration>, r: rp::ReadRequest) -> CallResult<rp::ReadResponse> {
        self.with(|p| p.read(convert::read(r)?).map(convert::read_response), None)
    }

    async fn update(&self, _: Option<Duration>, r: rp::UpdateRequest) -> CallResult<rp::UpdateResponse> {
        self.with_made(!r.preview, |p| {
            let (req, [olds, news, old_inputs]) = convert::update(r)?;
            p.update_outputs(req, olds, news, old_inputs).map(convert::update_response)
        })
    }

    async fn delete(&self, _: Option<Duration>, r: rp::DeleteRequest) -> CallResult<()> {
        self.with(
            |p| {
                let (req, [properties, old_inputs]) = convert::delete(r)?;
                p.delete_words(req, properties, old_inputs)
            },
            None,
        )
    }

    async fn construct(&self, _: Option<Duration>, r: rp::ConstructRequest) -> CallResult<rp::ConstructResponse> {
        self.with(|p| p.construct(convert::construct(r)?).map(convert::construct_response), None)
    }

    async fn list(&self, _: Option<Duration>, r: rp::ListRequest) -> CallResult<rp::ListResponse> {
        self.with(|p| p.list(convert::list(r)?).map(convert::list_response), None)
    }

    async fn get_mapping(&self, _: Option<Duration>, key: String, provider: String) -> CallResult<Option<rp::Mapping>> {
        self.with(|p| p.get_mapping(key, provider).map(convert::mapping), None)
    }

    async fn get_mappings(&self, _: Option<Duration>, key: String) -> CallResult<Vec<String>> {
        self.with(|p| p.get_mappings(key), None)
    }

    /// Tells every provider value before its next call (this thread's now).
    /// Native code cannot be interrupted, so calls in progress run to the end.
    /// Another engine run: each thread's provider value is made afresh at
    /// its next call (see `with`; one told to cancel has no way back), set
    /// up by the new run's calls only.
    fn resume(&self) {
        self.setup.clear(|| ());
        self.cancelled.store(false, Ordering::Relaxed);
    }

    async fn cancel(&self, _grace: Duration) {
        self.cancelled.store(true, Ordering::Relaxed);
        if let Some(mut inst) = self.take() {
            inst.cancelled = true;
            if self.logging(|| catch_unwind(AssertUnwindSafe(|| inst.provider.cancel()))).is_ok() {
                self.put(inst);
            }
        }
    }
}

/// What the engine passes to every provider plugin (the same flags as a
/// packed wasm plugin accepts from it).
#[derive(Parser, Debug)]
#[command(about = "A Pulumi provider plugin, served natively by the pulumi-wasm host's gRPC server")]
pub struct PluginArgs {
    #[arg(long)]
    pub logtostderr: bool,
    /// Log verbosity, as `-v=N`.
    #[arg(short = 'v', value_name = "N")]
    pub verbosity: Option<u8>,
    #[arg(long)]
    pub logflow: bool,
    /// The engine's tracing endpoint (accepted; not used).
    #[arg(long, value_name = "ENDPOINT")]
    pub tracing: Option<String>,
    /// The engine's gRPC address; absent in attach mode (`PULUMI_DEBUG_PROVIDERS`).
    pub engine_address: Option<String>,
}

/// Serves a provider until the engine cancels or the process is interrupted:
/// listen on 127.0.0.1, print the port, serve `ResourceProvider` and health.
pub async fn serve_native<P: Provider>(make: fn() -> P, engine_address: Option<String>) -> anyhow::Result<()> {
    let link = EngineLink::new(engine_address);
    // The provider's messages reach the engine as a component's do: the same
    // queue, size limits and budget, the same forwarder.
    let (tx, rx) = tokio::sync::mpsc::channel(LOG_CHANNEL);
    link.forward_logs(rx);
    let backend = Arc::new(NativeBackend::new(make).with_logs(LogQueue::new(tx)));
    let (name, version, autonaming) = backend.info()?;
    tracing::info!("serving {name} {version} natively");
    let service = ProviderService::with_backend(backend, &version, link).supports_autonaming(autonaming);
    Ok(serve(service, ServeOptions::default()).await?)
}

/// The `main` of a native provider plugin, started by the engine exactly like
/// any plugin: `pulumi-resource-<name> [flags] <engine-address>`.
pub fn plugin_main<P: Provider>(make: fn() -> P) {
    let args = PluginArgs::parse();
    let level = match args.verbosity.unwrap_or(0) {
        0 => "warn",
        1..=3 => "info",
        _ => "debug",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(level));
    // Stdout belongs to the port line.
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).init();
    // The same runtime as a component's host: the baseline differs in nothing but WebAssembly.
    let run = pulumi_wasm_host::server::provider_runtime()
        .map_err(anyhow::Error::from)
        .and_then(|rt| rt.block_on(serve_native(make, args.engine_address)));
    if let Err(e) = run {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

#[cfg(test)]
mod tests;
