//! The call in progress: cancellation and partial state.

use crate::value::PropertyMap;

/// True once the engine asked to cancel: long operations should stop and
/// return promptly (calls still running after a grace period are interrupted).
pub fn cancelled() -> bool {
    #[cfg(target_arch = "wasm32")]
    {
        crate::wit::pulumi::provider::context::cancelled()
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        false
    }
}

/// Records what a `create` has made so far. If the call is interrupted
/// before it returns, the engine records this as the resource's state
/// (a resource that failed to initialise) instead of losing it.
pub fn report_partial_state(id: &str, properties: &PropertyMap) {
    #[cfg(target_arch = "wasm32")]
    crate::wit::pulumi::provider::context::report_partial_state(id, &crate::wire::encode_map(properties));
    #[cfg(not(target_arch = "wasm32"))]
    let _ = (id, properties);
}
