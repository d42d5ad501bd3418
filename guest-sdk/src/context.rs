//! The call in progress: cancellation and partial state.
//!
//! Compiled natively (unit tests, the native backend) these act on the
//! calling thread: [`crate::testing::Engine`] cancels through them and reads
//! back what a call reported, as the host does.

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
        native::CANCELLED.get()
    }
}

/// Records what a `create` has made so far. If the call is interrupted, or
/// returns an error, before it returns the resource, the engine records
/// this as the resource's state (a resource that failed to initialise)
/// instead of losing it.
pub fn report_partial_state(id: &str, properties: &PropertyMap) {
    #[cfg(target_arch = "wasm32")]
    crate::wit::pulumi::provider::context::report_partial_state(id, &crate::wire::encode_map(properties));
    #[cfg(not(target_arch = "wasm32"))]
    native::PARTIAL.set(Some((id.to_owned(), properties.clone())));
}

#[cfg(not(target_arch = "wasm32"))]
pub(crate) mod native {
    use std::cell::{Cell, RefCell};

    use crate::value::PropertyMap;

    thread_local! {
        pub(crate) static CANCELLED: Cell<bool> = const { Cell::new(false) };
        pub(crate) static PARTIAL: RefCell<Option<(String, PropertyMap)>> = const { RefCell::new(None) };
    }
}

/// The partial state reported on this thread since the last take: for the
/// host's native backend, which treats it as the host treats a
/// component's, and [`crate::testing::Engine`], which does as the engine.
#[cfg(not(target_arch = "wasm32"))]
#[doc(hidden)]
pub fn take_partial_state() -> Option<(String, PropertyMap)> {
    native::PARTIAL.take()
}
