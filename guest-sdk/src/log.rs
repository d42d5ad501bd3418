//! Messages to the user, shown by the Pulumi CLI (through `Engine.Log`).

/// How important a message is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    Debug,
    Info,
    Warning,
    Error,
}

/// Sends a message; `urn` ties it to a resource, `ephemeral` shows it only while current.
/// The host escapes what a terminal would act on (escape sequences, carriage
/// returns, bidi overrides) but newlines and tabs, and breaks up the Pulumi
/// CLI's colour markup (`<{%fg 1%}>`): colour is not passed on either way.
pub fn log(severity: Severity, message: &str, urn: Option<&str>, ephemeral: bool) {
    #[cfg(target_arch = "wasm32")]
    {
        use crate::wit::pulumi::provider::logging as l;
        let severity = match severity {
            Severity::Debug => l::Severity::Debug,
            Severity::Info => l::Severity::Info,
            Severity::Warning => l::Severity::Warning,
            Severity::Error => l::Severity::Error,
        };
        l::log(severity, message, urn, ephemeral);
    }
    // Built natively: to the native host's sink for this call (`Engine.Log`), else stderr.
    #[cfg(not(target_arch = "wasm32"))]
    match NATIVE_SINK.with(|s| s.borrow().clone()) {
        Some(sink) => sink(severity, message, urn, ephemeral),
        None => eprintln!("[{severity:?}] {}{message}", urn.map(|u| format!("{u}: ")).unwrap_or_default()),
    }
}

/// Where a natively built provider's messages go (severity, message, urn, ephemeral).
#[cfg(not(target_arch = "wasm32"))]
pub type NativeSink = std::sync::Arc<dyn Fn(Severity, &str, Option<&str>, bool) + Send + Sync>;

#[cfg(not(target_arch = "wasm32"))]
thread_local! {
    static NATIVE_SINK: std::cell::RefCell<Option<NativeSink>> = const { std::cell::RefCell::new(None) };
}

/// For a native host (`pulumi-wasm-native`): runs `f` with the messages
/// logged on this thread going to `sink`, as a component's go to its host.
/// Per call and per thread, so several providers in one process keep their
/// messages apart; messages from other threads the provider starts go to stderr.
#[cfg(not(target_arch = "wasm32"))]
#[doc(hidden)]
pub fn with_native_sink<R>(sink: &NativeSink, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<NativeSink>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take();
            NATIVE_SINK.with(|s| *s.borrow_mut() = previous);
        }
    }
    let _restore = Restore(NATIVE_SINK.with(|s| s.borrow_mut().replace(sink.clone())));
    f()
}

pub fn debug(message: &str) {
    log(Severity::Debug, message, None, false)
}

pub fn info(message: &str) {
    log(Severity::Info, message, None, false)
}

pub fn warn(message: &str) {
    log(Severity::Warning, message, None, false)
}

pub fn error(message: &str) {
    log(Severity::Error, message, None, false)
}

/// Messages about one resource.
pub fn for_urn(urn: &str) -> ResourceLog<'_> {
    ResourceLog(urn)
}

pub struct ResourceLog<'a>(&'a str);

impl ResourceLog<'_> {
    /// An empty URN (a function call) ties the message to nothing.
    fn urn(&self) -> Option<&str> {
        Some(self.0).filter(|u| !u.is_empty())
    }
    pub fn debug(&self, message: &str) {
        log(Severity::Debug, message, self.urn(), false)
    }
    pub fn info(&self, message: &str) {
        log(Severity::Info, message, self.urn(), false)
    }
    pub fn warn(&self, message: &str) {
        log(Severity::Warning, message, self.urn(), false)
    }
    pub fn error(&self, message: &str) {
        log(Severity::Error, message, self.urn(), false)
    }
    /// A progress message that replaces the previous one.
    pub fn status(&self, message: &str) {
        log(Severity::Info, message, self.urn(), true)
    }
}
