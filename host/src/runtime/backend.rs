//! What the gRPC server calls: one method per `resource-provider` export, in
//! the host's WIT types. The wasm [`Pool`] is one implementation; a provider
//! compiled natively and run in-process (crate `pulumi-wasm-native`) is the
//! other, so both are served by exactly the same server code.

use std::time::Duration;

use super::bindings::{rp, types};
use super::deferred::Deferred;
use super::pool::{Lease, Pool};
use super::setup::SetupCall;
use super::{PartialState, RuntimeError};

/// Why an export call has no result.
#[derive(Debug)]
pub enum CallError {
    /// The call did not complete: a crash, a deadline, a cancellation, a
    /// limit.
    Runtime(RuntimeError),
    /// The call failed before the provider's export ran (the provider still
    /// loading, or an instance that could not be made or brought up to date
    /// with the setup calls): it changed nothing.
    NotStarted(RuntimeError),
    /// The provider answered with an error. `denials` are what the sandbox
    /// refused during the call, each naming the grant that would allow it.
    Provider { error: types::Error, denials: Vec<String> },
}

pub type CallResult<T> = Result<T, CallError>;

impl From<RuntimeError> for CallError {
    fn from(e: RuntimeError) -> Self {
        CallError::Runtime(e)
    }
}

/// Declares [`Backend`] from the list of exports and implements it for the
/// wasm [`Pool`]: lease an instance, call the export within the deadline,
/// settle the lease. An export marked `replay` is recorded on success so that
/// every other instance receives it before its next call. An export marked
/// `monitor` opens the request's resource monitor to the guest for the call.
/// One marked `patient if <condition>` is a resource operation: without a
/// timeout from the engine, and when the condition holds of its request, its
/// waits do not count against the provider's (see `Pool::bounded_waiting`).
macro_rules! exports {
    ($(
        $(#[$doc:meta])*
        $name:ident => $export:ident ( $($arg:ident : $ty:ty),* ) -> $ret:ty $(, replay $setup:path [$sarg:ident])? $(, monitor [$marg:ident])? $(, patient if $patient:expr)? ;
    )*) => {
        /// A provider's exports. `timeout` bounds the call (the provider's
        /// default when `None`); how it is enforced is the backend's business.
        pub trait Backend: Send + Sync + 'static {
            $(
                $(#[$doc])*
                fn $name(
                    &self,
                    timeout: Option<Duration>,
                    $($arg: $ty),*
                ) -> impl Future<Output = CallResult<$ret>> + Send;
            )*

            /// The engine cancelled: calls in progress should stop; those still
            /// running after `grace` may be interrupted.
            fn cancel(&self, grace: Duration) -> impl Future<Output = ()> + Send;

            /// After a Cancel, calls are served again as before it (attach
            /// mode: the next engine run has begun).
            fn resume(&self);

            /// Whether the provider reads long asset texts the host keeps back
            /// (`runtime::held`): then the server opens a table of them for
            /// each RPC. No by default.
            fn reads_held_texts(&self) -> bool {
                false
            }
        }

        impl Backend for Pool {
            $(
                async fn $name(&self, timeout: Option<Duration>, $($arg: $ty),*) -> CallResult<$ret> {
                    let uses_monitor = false $(|| { let _ = &$marg; true })?;
                    $( let _ = &$sarg; self.room_for_setup().map_err(CallError::NotStarted)?; )?
                    // A resource operation the engine set no timeout for waits as long as it must.
                    let patient = timeout.is_none() && (false $(|| ($patient))?);
                    // A Create or Update that makes or changes a resource (not a preview).
                    let makes = matches!(stringify!($name), "create" | "update") && (false $(|| ($patient))?);
                    let mut lease = self.lease(timeout, uses_monitor, patient).await.map_err(CallError::NotStarted)?;
                    $(lease.open_monitor(&$marg);)?
                    let limit = lease.timeout();
                    let waited = lease.engine_wait();
                    let patient = lease.patient_turn(patient);
                    let (guest, store) = lease.parts();
                    let outcome = self.bounded_waiting(limit, &waited, patient, guest.$export(store, $(&$arg),*)).await;
                    $( let outcome = lease.vouch(outcome, &$marg); )?
                    settle(lease, outcome, [$($setup($sarg))?].into_iter().next(), makes)
                }
            )*

            fn cancel(&self, grace: Duration) -> impl Future<Output = ()> + Send {
                Pool::cancel(self, grace)
            }

            fn resume(&self) {
                Pool::resume(self)
            }

            fn reads_held_texts(&self) -> bool {
                Pool::reads_held_texts(self)
            }
        }

        impl<B: Backend> Backend for Deferred<B> {
            $(
                async fn $name(&self, timeout: Option<Duration>, $($arg: $ty),*) -> CallResult<$ret> {
                    self.ready_within(timeout).await.map_err(CallError::NotStarted)?.$name(timeout, $($arg),*).await
                }
            )*

            fn cancel(&self, grace: Duration) -> impl Future<Output = ()> + Send {
                Deferred::cancel(self, grace)
            }

            fn resume(&self) {
                Deferred::resume(self)
            }

            /// Known once the backend is made; calls before copy texts as before.
            fn reads_held_texts(&self) -> bool {
                self.made().is_some_and(|b| b.reads_held_texts())
            }
        }
    };
}

exports! {
    /// Recorded and replayed into every instance.
    parameterize => call_parameterize(req: rp::ParameterizeRequest) -> rp::PackageRef,
        replay SetupCall::Parameterize [req];
    get_schema => call_get_schema(req: rp::GetSchemaRequest) -> String;
    check_config => call_check_config(req: rp::CheckRequest) -> rp::CheckResponse;
    diff_config => call_diff_config(req: rp::DiffRequest) -> rp::DiffResponse;
    /// Recorded and replayed into every instance.
    configure => call_configure(req: rp::ConfigureRequest) -> rp::ConfigureResponse,
        replay SetupCall::Configure [req];
    invoke => call_invoke(req: rp::InvokeRequest) -> rp::InvokeResponse;
    /// The guest may use the resource monitor.
    call => call_call(req: rp::CallRequest) -> rp::CallResponse, monitor [req];
    check => call_check(req: rp::CheckRequest) -> rp::CheckResponse;
    diff => call_diff(req: rp::DiffRequest) -> rp::DiffResponse;
    /// Patient without the engine's timeout (see [`Pool::bounded_waiting`]),
    /// unless a preview (which should be quick).
    create => call_create(req: rp::CreateRequest) -> rp::CreateResponse, patient if !req.preview;
    /// Patient without the engine's timeout.
    read => call_read(req: rp::ReadRequest) -> rp::ReadResponse, patient if true;
    /// Patient without the engine's timeout, unless a preview.
    update => call_update(req: rp::UpdateRequest) -> rp::UpdateResponse, patient if !req.preview;
    /// Patient without the engine's timeout.
    delete => call_delete(req: rp::DeleteRequest) -> (), patient if true;
    /// The guest may use the resource monitor.
    construct => call_construct(req: rp::ConstructRequest) -> rp::ConstructResponse, monitor [req];
    list => call_list(req: rp::ListRequest) -> rp::ListResponse;
    get_mapping => call_get_mapping(key: String, provider: String) -> Option<rp::Mapping>;
    get_mappings => call_get_mappings(key: String) -> Vec<String>;
}

/// A setup call's answer the engine could not use, refused before the call
/// is kept and replayed: a Parameterize must answer with a package name and
/// a semantic version, and a value's own package for the value form (the
/// engine parses the version strictly, and the registry and the SDK
/// generated for the value name its package).
fn check_answer<T: 'static>(call: &SetupCall, answer: &T) -> Result<(), String> {
    let (SetupCall::Parameterize(req), Some(made)) =
        (call, (answer as &dyn std::any::Any).downcast_ref::<rp::PackageRef>())
    else {
        return Ok(());
    };
    let named = made.name.len() <= 256
        && made.name.starts_with(|c: char| c.is_ascii_alphabetic())
        && made.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !named {
        let name = crate::text::named(&made.name);
        return Err(format!("Parameterize answered with the package name {name:?}: not a package name"));
    }
    if let Err(e) = semver::Version::parse(&made.version) {
        let version = crate::text::named(&made.version);
        return Err(format!(
            "Parameterize answered with the version {version:?} of package {}: not a semantic version ({e})",
            made.name
        ));
    }
    match req {
        rp::ParameterizeRequest::Value(v) if (v.name.as_str(), v.version.as_str()) != (&made.name, &made.version) => {
            Err(format!(
                "Parameterize with the value of package {} {} answered package {} {}",
                crate::text::named(&v.name),
                crate::text::named(&v.version),
                made.name,
                made.version
            ))
        }
        _ => Ok(()),
    }
}

/// The provider's `error`, after the call reported `partial` state: what it
/// reported making exists (see [`RuntimeError::Unfinished`]). `denials` are
/// added to its message, as to a provider error's.
pub fn unfinished(error: &types::Error, denials: &[String], partial: PartialState) -> CallError {
    let mut message = provider_message(error);
    denials.iter().for_each(|d| message.push_str(&format!("; {d}")));
    CallError::Runtime(RuntimeError::Unfinished { message, partial: Some(partial) })
}

/// What a provider's error says, for a message of the host's own.
fn provider_message(error: &types::Error) -> String {
    use types::Error as E;
    match error {
        E::Unimplemented(m)
        | E::InvalidArgument(m)
        | E::NotFound(m)
        | E::FailedPrecondition(m)
        | E::Unavailable(m)
        | E::Cancelled(m)
        | E::Failed(m) => crate::text::clip(m, crate::text::MAX_MESSAGE).to_owned(),
        E::MissingKeys(keys) => format!("{} missing configuration keys", keys.len()),
        E::InitFailed(f) => format!("{} reasons", f.reasons.len()),
    }
}

/// Ends a lease with the outcome of an export call. The instance goes back
/// to the pool unless it trapped; a successful setup call is recorded.
fn settle<T: 'static>(
    mut lease: Lease<'_>,
    outcome: wasmtime::Result<Result<T, types::Error>>,
    setup: Option<SetupCall>,
    makes: bool,
) -> CallResult<T> {
    match outcome {
        Ok(Ok(value)) => {
            match setup {
                Some(call) => {
                    // Refused before it is kept: the instance that ran it goes.
                    if let Err(why) = check_answer(&call, &value) {
                        lease.discard();
                        return Err(CallError::Runtime(RuntimeError::BadAnswer(why)));
                    }
                    lease.record(call)?
                }
                None => lease.finish(Ok(()))?,
            };
            Ok(value)
        }
        Ok(Err(error)) => {
            let denials = lease.denials(&error);
            // `makes`: made, then failed anyway (it was not ready, or saw
            // Cancel): the engine must record what the call reported making,
            // or nothing would ever delete it. The engine takes an error as
            // "nothing changed".
            let partial = match &error {
                types::Error::InitFailed(_) => None,
                _ if makes => lease.take_partial(),
                _ => None,
            };
            lease.finish(Ok(()))?;
            match partial {
                Some(partial) => Err(unfinished(&error, &denials, partial)),
                None => Err(CallError::Provider { error, denials }),
            }
        }
        Err(trap) => Ok(lease.finish(Err(trap))?),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_parameterize_answer_is_a_package_name_and_a_semantic_version_and_the_value_s_own() {
        let args = SetupCall::Parameterize(rp::ParameterizeRequest::Args(vec!["x".into()]));
        let answer = |name: &str, version: &str| rp::PackageRef { name: name.into(), version: version.into() };
        assert_eq!(check_answer(&args, &answer("my-pkg_2", "1.2.3-beta.1")), Ok(()));
        let e = check_answer(&args, &answer("p", "v1.0")).unwrap_err();
        assert!(e.contains("version \"v1.0\" of package p: not a semantic version"), "{e}");
        for bad in ["", "2x", "a b", "a:b", "\u{1b}[2K"] {
            assert!(check_answer(&args, &answer(bad, "1.0.0")).is_err(), "{bad:?}");
        }
        let value = SetupCall::Parameterize(rp::ParameterizeRequest::Value(rp::ParameterValue {
            name: "fleet".into(),
            version: "9.9.9".into(),
            value: vec![],
        }));
        assert_eq!(check_answer(&value, &answer("fleet", "9.9.9")), Ok(()));
        let e = check_answer(&value, &answer("fleet", "0.1.0")).unwrap_err();
        assert_eq!(e, "Parameterize with the value of package fleet 9.9.9 answered package fleet 0.1.0");
        // Other calls' answers are not looked at.
        assert_eq!(check_answer(&args, &String::from("not a package")), Ok(()));
    }
}
