//! Translation between the protobuf wire types and the WIT types.

pub mod requests;
pub mod value;

/// Resource hooks from one generated type to another: protobuf's (the
/// provider's and the monitor's) and WIT's (the host's and the SDK's) have
/// the same seven lists, and no `From` between them can be written for all.
#[macro_export]
macro_rules! resource_hooks {
    ($hooks:expr => $ty:path) => {{
        let h = $hooks;
        $ty {
            before_create: h.before_create,
            after_create: h.after_create,
            before_update: h.before_update,
            after_update: h.after_update,
            before_delete: h.before_delete,
            after_delete: h.after_delete,
            on_error: h.on_error,
        }
    }};
}
