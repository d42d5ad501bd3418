//! The WebAssembly side: engine, compiled-artifact cache, instance pool.
//! Knows nothing of gRPC; the server layer drives it with WIT-typed calls.

pub mod bindings;
mod cache;
mod engine;
mod pool;
mod state;

pub use cache::ArtifactCache;
pub use engine::{LoadedProvider, Runtime, RuntimeConfig};
pub use pool::{Lease, Pool, SetupCall};
pub use state::{GuestLog, LogSeverity};

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
    #[error("the provider crashed: {0}")]
    Trap(String),
    #[error("the provider exceeded its deadline of {0:?}")]
    Deadline(std::time::Duration),
    #[error("replaying {what} into a fresh instance failed: {message}")]
    Replay { what: &'static str, message: String },
    #[error("artifact cache: {0}")]
    Cache(String),
}
