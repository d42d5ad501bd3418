//! The WebAssembly side: engine, compiled-artifact cache, instance pool.
//! Knows nothing of gRPC; the server layer drives it with WIT-typed calls.

mod backend;
pub mod bindings;
mod cache;
mod deferred;
mod engine;
mod handles;
pub mod held;
mod http;
mod logs;
mod monitor;
mod needs;
pub mod policy;
mod pool;
mod sandbox;
mod setup;
mod state;
mod ticker;
mod turn;

pub use backend::{Backend, CallError, CallResult, unfinished};
pub use cache::{ArtifactCache, KnownFile, SeenFile};
pub use deferred::Deferred;
pub use engine::{LoadedProvider, MAX_COMPONENT_BYTES, Runtime, RuntimeConfig};
pub use http::is_public;
pub use logs::{GuestLog, LOG_CHANNEL, LogQueue, LogSeverity};
pub use monitor::{
    MonitorConnector, MonitorResult, Monitors, PackageDescriptor, ResourceMonitor, package_of, urn_type,
};
pub use needs::Needs;
pub use policy::{GrantFlags, Grants, Policy};
pub use pool::{Lease, Pool};
pub use sandbox::{MAX_CALL_TIMEOUT, MAX_TOTAL_MEMORY_MB, Sandbox};
pub use setup::{MAX_SETUP_CALLS, SetupCall, SetupLog};
pub use state::{Footprint, MemoryCap, PartialState};

/// Longest schema accepted from a guest (checked before it is parsed).
pub const MAX_SCHEMA_BYTES: usize = 64 << 20;

/// What can go wrong loading or running a component.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    #[error("not a WebAssembly component: {0}")]
    NotAComponent(String),
    #[error("the component does not implement the pulumi:provider world: {0}")]
    WrongWorld(String),
    #[error("the component's plugin info is invalid: {0}")]
    BadPluginInfo(String),
    #[error("failed to set up the WebAssembly engine: {0}")]
    Engine(String),
    #[error("the provider crashed: {message}")]
    Trap { message: String, partial: Option<PartialState> },
    /// Linear memory would have grown past one of the sandbox's limits.
    #[error("the provider ran out of memory: {cap}")]
    OutOfMemory { cap: MemoryCap, partial: Option<PartialState> },
    /// One call tried to copy more data out of the guest than the host takes
    /// at once (wasmtime's hostcall fuel, see `pool::MAX_COPY_OUT`).
    #[error("the provider tried to hand the host more than {} MiB in one call, over the host's limit", limit >> 20)]
    TooMuchData { limit: usize, partial: Option<PartialState> },
    #[error("the provider exceeded its deadline of {after:?}")]
    Deadline { after: std::time::Duration, partial: Option<PartialState> },
    #[error("the call was interrupted: the engine cancelled the operation")]
    Cancelled { partial: Option<PartialState> },
    /// An answer the host cannot pass on (see `backend::check_answer`).
    #[error("{0}")]
    BadAnswer(String),
    /// The provider returned an error after reporting partial state: what
    /// it reported having made exists, whatever the error says.
    #[error("{message}")]
    Unfinished { message: String, partial: Option<PartialState> },
    #[error("sandbox policy: {0}")]
    Policy(String),
    #[error("replaying {what} into a fresh instance failed: {message}")]
    Replay { what: &'static str, message: String },
    #[error(
        "the provider was already set up {limit} times (Configure and Parameterize); \
         the engine sets a provider up once per process, and the host keeps no more"
    )]
    SetUpTooOften { limit: usize },
    #[error("artifact cache: {0}")]
    Cache(String),
    /// No instance could be made: every slot of the engine is taken. The
    /// call never started.
    #[error("{0}")]
    NoInstance(String),
    /// The provider could not be loaded; every call says why.
    #[error("the provider could not be loaded: {0}")]
    NotLoaded(String),
}

impl RuntimeError {
    /// What an interrupted `create` reported having made, if anything.
    pub fn partial(&self) -> Option<&PartialState> {
        match self {
            RuntimeError::Trap { partial, .. }
            | RuntimeError::OutOfMemory { partial, .. }
            | RuntimeError::TooMuchData { partial, .. }
            | RuntimeError::Deadline { partial, .. }
            | RuntimeError::Cancelled { partial }
            | RuntimeError::Unfinished { partial, .. } => partial.as_ref(),
            _ => None,
        }
    }
}
