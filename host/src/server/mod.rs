//! The gRPC surface: `pulumirpc.ResourceProvider` over a loaded component
//! (or any other [`Backend`](crate::runtime::Backend)), the link back to the
//! engine, the resource monitor of `construct` and `call` ([`monitors`]),
//! and the plugin process lifecycle.

mod engine;
mod forward;
mod monitor;
mod provider;
mod serve;
mod status;

pub use engine::EngineLink;
pub use monitor::monitors;
pub use provider::{ProviderService, WasmProvider};
pub use serve::{ServeOptions, keep_freed_memory, provider_runtime, serve};
