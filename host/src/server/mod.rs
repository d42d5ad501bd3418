//! The gRPC surface: `pulumirpc.ResourceProvider` over a loaded component,
//! the link back to the engine, and the plugin process lifecycle.

mod engine;
mod provider;
mod serve;
mod status;

pub use engine::EngineLink;
pub use provider::WasmProvider;
pub use serve::{ServeOptions, serve};
