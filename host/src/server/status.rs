//! The one place errors become gRPC statuses.

use prost::Message;
use tonic::{Code, Status};

use crate::convert::requests::init_failure;
use crate::convert::value::{ConvertError, WireOptions};
use crate::runtime::bindings::types;
use crate::runtime::bindings::words::WordsError;
use crate::runtime::{CallError, RuntimeError};
use crate::text;

/// `m`, cut to [`text::MAX_MESSAGE`] bytes, what a terminal would act on
/// but newlines and tabs escaped ([`text`]): the engine prints it on the
/// user's terminal, and it quotes text from guests, values and registries.
fn cap(m: String) -> String {
    text::escape_within(m, text::LINES, text::MAX_MESSAGE)
}

/// A request the host could not translate: the caller's fault.
pub fn bad_request(e: ConvertError) -> Status {
    Status::invalid_argument(cap(format!("malformed request: {e}")))
}

/// A response the guest got wrong: the provider's fault. A value over the
/// host's limits is RESOURCE_EXHAUSTED, as the memory limit is, except after
/// a change: that did happen, so it is UNKNOWN (see [`runtime`]), as INTERNAL
/// already is to the engine.
pub fn bad_response(e: ConvertError, effect: Effect) -> Status {
    match e {
        ConvertError::TooDeep { .. }
        | ConvertError::TooDeepForTheWire { .. }
        | ConvertError::TooManyNodes { .. }
        | ConvertError::TooManyBytes { .. }
        | ConvertError::Words(WordsError::TooManyBytes { .. }) => {
            let message = cap(format!("the provider returned a value over the host's limits: {e}"));
            match effect.changes() {
                false => Status::resource_exhausted(message),
                true => Status::unknown(format!("{message}; the change itself may have taken effect")),
            }
        }
        e => Status::internal(cap(format!("the provider returned an invalid response: {e}"))),
    }
}

/// Whether an RPC changes the provider's resources: Create (not in a
/// preview), which also makes one, Update and Delete (not in a preview).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    Reads,
    Changes,
    Creates,
}

impl Effect {
    pub fn changes(self) -> bool {
        self != Effect::Reads
    }
}

/// A call that did not complete. If the guest reported partial state before
/// it was interrupted, the engine gets it as a resource that failed to
/// initialise, so nothing created is lost.
///
/// A change the host interrupted (deadline, cancellation, a limit) may have
/// taken effect all the same, so it is UNKNOWN: the engine reads only
/// UNKNOWN, INTERNAL and DATA_LOSS as "the resource's state is unknown" and
/// keeps the operation pending for `pulumi refresh`; any other code tells it
/// that nothing happened.
pub fn runtime(e: RuntimeError, o: WireOptions, effect: Effect) -> Status {
    let code = match &e {
        RuntimeError::Deadline { .. } => Code::DeadlineExceeded,
        RuntimeError::OutOfMemory { .. } | RuntimeError::TooMuchData { .. } | RuntimeError::NoInstance(_) => {
            Code::ResourceExhausted
        }
        RuntimeError::Cancelled { .. } => Code::Cancelled,
        // What was reported made exists: the state is recorded, with this code.
        RuntimeError::Unfinished { .. } => Code::Unknown,
        RuntimeError::Trap { .. }
        | RuntimeError::Replay { .. }
        | RuntimeError::Cache(_)
        | RuntimeError::BadAnswer(_) => Code::Internal,
        RuntimeError::Engine(_) => Code::Unavailable,
        RuntimeError::NotAComponent(_)
        | RuntimeError::WrongWorld(_)
        | RuntimeError::BadPluginInfo(_)
        | RuntimeError::Policy(_)
        | RuntimeError::NotLoaded(_)
        | RuntimeError::SetUpTooOften { .. } => Code::FailedPrecondition,
    };
    let (code, message) = match code {
        Code::DeadlineExceeded | Code::ResourceExhausted | Code::Cancelled if effect.changes() => {
            (Code::Unknown, format!("{e}; the change was interrupted, so whether it took effect is unknown"))
        }
        _ => (code, e.to_string()),
    };
    let message = cap(message);
    match e.partial() {
        Some(p) => {
            let Some(properties) = p.properties.clone() else {
                let why = format!(
                    "its partial state ({} MiB) was too large to keep, so only its id is: refresh it to read the rest",
                    p.bytes >> 20
                );
                let message = cap(format!("{message}; {why}"));
                // As in `recorded`: from another call, the engine keeps the state it had.
                if effect != Effect::Creates {
                    return Status::new(code, message);
                }
                let detail = pulumirpc::ErrorResourceInitFailed {
                    id: p.id.clone(),
                    reasons: vec![message.clone()],
                    ..Default::default()
                };
                return init_failed(message, detail);
            };
            let failure =
                types::InitFailure { id: p.id.clone(), properties, inputs: None, reasons: vec![message.clone()] };
            recorded(code, message, failure, o, effect)
        }
        None => Status::new(code, message),
    }
}

/// An export call that failed, either way.
pub fn call(e: CallError, o: WireOptions, effect: Effect) -> Status {
    match e {
        CallError::Runtime(e) => runtime(e, o, effect),
        // Never INTERNAL, which the engine reads as "the state may be
        // corrupt": a call that never started changed nothing.
        CallError::NotStarted(e) => match runtime(e, o, Effect::Reads) {
            s if s.code() == Code::Internal => Status::failed_precondition(s.message()),
            s => s,
        },
        CallError::Provider { error, denials } => guest(error, o, &denials, effect),
    }
}

/// The most a status's detail may encode to. It travels base64-encoded in
/// the response's trailers, which grpc-go, the engine's, refuses past
/// 16 MiB: the whole status would be lost, and with it the id of a
/// resource that was created.
const MAX_DETAIL: usize = 4 << 20;

/// A resource that was made or changed but not finished, for the engine to
/// record. A state that does not convert is dropped from a Create's, its id
/// kept: the resource exists, and without its id nothing would ever delete
/// it. From any other call the answer is `code` without the detail, so
/// the engine keeps the state it had rather than an empty one.
fn recorded(code: Code, message: String, failure: types::InitFailure, o: WireOptions, effect: Effect) -> Status {
    match init_failure(failure, o) {
        Ok(detail) => init_failed(message, detail),
        Err((mut detail, e)) if effect == Effect::Creates => {
            let why = format!("its state was invalid, so only its id is kept (refresh it to read the rest): {e}");
            detail.reasons.push(cap(why.clone()));
            init_failed(cap(format!("{message}; {why}")), detail)
        }
        Err((_, e)) => Status::new(code, cap(format!("{message}; its state was invalid: {e}"))),
    }
}

/// A Create whose answer named the resource it made but was otherwise
/// invalid: the resource exists, so the engine must still record its id,
/// or it would be left in the cloud with nothing in the state to delete it.
pub fn made_but_bad(id: String, e: ConvertError) -> Status {
    let message = bad_response(e, Effect::Creates).message().to_owned();
    let message =
        cap(format!("{message}; the resource {id} was created, so only its id is kept (refresh it to read the rest)"));
    let detail = pulumirpc::ErrorResourceInitFailed { id, reasons: vec![message.clone()], ..Default::default() };
    init_failed(message, detail)
}

/// A resource created but not initialised. A state too large to travel is
/// dropped, the id and reasons kept: the engine records the resource, and
/// a refresh reads the rest.
fn init_failed(mut message: String, mut detail: pulumirpc::ErrorResourceInitFailed) -> Status {
    // An id the engine could not be sent (the whole status would be lost in
    // transit): said plainly instead, as the id cannot be shortened.
    if detail.id.len() > MAX_DETAIL / 2 {
        let why = format!("its id of {} MiB is too long for the engine to record", detail.id.len() >> 20);
        let kept = text::escape_within(message, text::LINES, text::MAX_MESSAGE - why.len() - 64);
        return Status::new(Code::Unknown, format!("{kept}; {why}"));
    }
    let size = detail.encoded_len();
    if size > MAX_DETAIL {
        (detail.properties, detail.inputs) = (None, None);
        let mut budget = MAX_DETAIL;
        detail.reasons.retain(|r| fits(&mut budget, r.len()));
        message = cap(format!(
            "{message}; its state ({} MiB) was too large to send back, so only its id is: refresh it to read the rest",
            size >> 20
        ));
    }
    with_detail(Code::Unknown, message, "ErrorResourceInitFailed", &detail)
}

/// Whether an entry of `size` bytes (plus its framing) fits what is left
/// of `budget`, taking it if so.
fn fits(budget: &mut usize, size: usize) -> bool {
    budget.checked_sub(size + 8).map(|left| *budget = left).is_some()
}

/// A status carrying one detail message, the way Pulumi's engine reads them.
fn with_detail<M: Message>(code: Code, message: String, type_name: &str, detail: &M) -> Status {
    let details = tonic_types::pb::Status {
        code: code as i32,
        message: message.clone(),
        details: vec![prost_types::Any {
            type_url: format!("type.googleapis.com/pulumirpc.{type_name}"),
            value: detail.encode_to_vec(),
        }],
    };
    Status::with_details(code, message, details.encode_to_vec().into())
}

/// An error the guest returned; `denials` (what the sandbox refused during
/// the call, each naming the missing grant) are added to its message.
pub fn guest(e: types::Error, o: WireOptions, denials: &[String], effect: Effect) -> Status {
    let status = guest_status(e, o, effect);
    if denials.is_empty() {
        return status;
    }
    let message = cap(format!("{}; {}", status.message(), denials.join("; ")));
    // gRPC clients take the message from the details when there are any
    // (grpc-go does), so it must change there too.
    let details = match tonic_types::pb::Status::decode(status.details()) {
        Ok(mut d) if !status.details().is_empty() => {
            d.message = message.clone();
            d.encode_to_vec()
        }
        _ => Vec::new(),
    };
    Status::with_details(status.code(), message, details.into())
}

fn guest_status(e: types::Error, o: WireOptions, effect: Effect) -> Status {
    use types::Error as E;
    match e {
        E::Unimplemented(m) => Status::unimplemented(cap(m)),
        E::InvalidArgument(m) => Status::invalid_argument(cap(m)),
        E::NotFound(m) => Status::not_found(cap(m)),
        E::FailedPrecondition(m) => Status::failed_precondition(cap(m)),
        E::Unavailable(m) => Status::unavailable(cap(m)),
        E::Cancelled(m) => Status::cancelled(cap(m)),
        E::Failed(m) => Status::unknown(cap(m)),
        E::MissingKeys(keys) => {
            let names: Vec<&str> = keys.iter().map(|k| k.name.as_str()).collect();
            let message = cap(format!("missing required configuration keys: {}", names.join(", ")));
            // As many keys as fit the detail's bound ([`MAX_DETAIL`]).
            let mut budget = MAX_DETAIL;
            let detail = pulumirpc::ConfigureErrorMissingKeys {
                missing_keys: keys
                    .into_iter()
                    .map(|k| pulumirpc::configure_error_missing_keys::MissingKey {
                        name: text::escape_within(k.name, &[], text::MAX_MESSAGE),
                        description: text::escape_within(k.description, text::LINES, text::MAX_MESSAGE),
                    })
                    .take_while(|k| fits(&mut budget, k.encoded_len()))
                    .collect(),
            };
            with_detail(Code::InvalidArgument, message, "ConfigureErrorMissingKeys", &detail)
        }
        E::InitFailed(f) => {
            let message = cap(format!("resource {} created but failed to initialise: {}", f.id, f.reasons.join("; ")));
            recorded(Code::Unknown, message, f, o, effect)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::MemoryCap;

    #[test]
    fn denials_reach_the_message_inside_the_details_too() {
        let keys = vec![types::MissingKey { name: "kv:endpoint".into(), description: String::new() }];
        let denials = ["missing grant: env \"KV_TOKEN\"".to_owned()];
        let s = guest(types::Error::MissingKeys(keys), WireOptions::default(), &denials, Effect::Reads);
        assert_eq!(s.code(), Code::InvalidArgument);
        assert!(s.message().ends_with("missing grant: env \"KV_TOKEN\""), "{}", s.message());
        let details = tonic_types::pb::Status::decode(s.details()).expect("details");
        assert_eq!(details.message, s.message());
        assert_eq!(details.details.len(), 1, "the detail itself is kept");

        let plain = guest(types::Error::Failed("boom".into()), WireOptions::default(), &denials, Effect::Reads);
        assert!(plain.details().is_empty() && plain.message().starts_with("boom; missing grant"), "{plain:?}");
    }

    #[test]
    fn a_detail_stays_within_what_the_engine_reads() {
        // 400 keys of 64 KiB each: ~25 MiB, as many as fit are kept, first first.
        let key = |i: usize| types::MissingKey { name: format!("k{i}"), description: "d".repeat(64 << 10) };
        let s =
            guest(types::Error::MissingKeys((0..400).map(key).collect()), WireOptions::default(), &[], Effect::Reads);
        let details = tonic_types::pb::Status::decode(s.details()).expect("details");
        assert!(details.details[0].value.len() <= MAX_DETAIL, "{}", details.details[0].value.len());
        let kept = pulumirpc::ConfigureErrorMissingKeys::decode(details.details[0].value.as_slice()).unwrap();
        assert!(kept.missing_keys.len() > 50 && kept.missing_keys.len() < 400, "{}", kept.missing_keys.len());
        assert_eq!(kept.missing_keys[0].name, "k0");
        // Many long reasons: the id stays, the reasons fit.
        let failure = pulumirpc::ErrorResourceInitFailed {
            id: "i-1".into(),
            reasons: vec!["r".repeat(64 << 10); 400],
            ..Default::default()
        };
        let s = init_failed("failed".into(), failure);
        let details = tonic_types::pb::Status::decode(s.details()).expect("details");
        let kept = pulumirpc::ErrorResourceInitFailed::decode(details.details[0].value.as_slice()).unwrap();
        assert!(details.details[0].value.len() <= MAX_DETAIL && kept.id == "i-1" && !kept.reasons.is_empty());
        // An id too long to travel is not sent, and the message says why.
        let failure = pulumirpc::ErrorResourceInitFailed { id: "i".repeat(20 << 20), ..Default::default() };
        let s = init_failed(cap(format!("resource {} created", failure.id)), failure);
        assert!(s.details().is_empty() && s.message().len() < text::MAX_MESSAGE + 200, "{}", s.message().len());
        assert!(s.message().ends_with("; its id of 20 MiB is too long for the engine to record"));
        assert_eq!(s.code(), Code::Unknown);
    }

    /// A create's partial state too large to keep: the engine still gets
    /// the id (or the resource would be left with nothing to delete it);
    /// another call's answer carries no state, so the engine keeps its own.
    #[test]
    fn a_partial_state_too_large_to_keep_leaves_its_id() {
        let partial = || crate::runtime::PartialState { id: "i-9".into(), properties: None, bytes: 200 << 20 };
        let cut = || RuntimeError::Deadline { after: std::time::Duration::from_secs(1), partial: Some(partial()) };
        let s = runtime(cut(), WireOptions::default(), Effect::Creates);
        let details = tonic_types::pb::Status::decode(s.details()).expect("details");
        let kept = pulumirpc::ErrorResourceInitFailed::decode(details.details[0].value.as_slice()).unwrap();
        assert_eq!((kept.id.as_str(), kept.properties), ("i-9", None));
        assert!(
            s.message().ends_with(
                "its partial state (200 MiB) was too large to keep, so only its id is: refresh it to read the rest"
            ),
            "{}",
            s.message()
        );
        let s = runtime(cut(), WireOptions::default(), Effect::Changes);
        assert!(s.details().is_empty() && s.message().contains("too large to keep"), "{s:?}");
    }

    #[test]
    fn a_guests_huge_message_is_cut() {
        let huge = "é".repeat(100_000);
        let s = guest(
            types::Error::Failed(huge.clone()),
            WireOptions::default(),
            std::slice::from_ref(&huge),
            Effect::Reads,
        );
        assert!(s.message().len() < text::MAX_MESSAGE + 40, "{}", s.message().len());
        assert!(s.message().starts_with("éé") && s.message().ends_with(" more bytes cut]"));
        let trap = RuntimeError::Trap { message: huge, partial: None };
        assert!(runtime(trap, WireOptions::default(), Effect::Reads).message().len() < text::MAX_MESSAGE + 40);
        assert_eq!(cap("short".into()), "short");
        assert_eq!(cap("a\u{1b}[2K\rb\n\tc".into()), "a\\u{1b}[2K\\rb\n\tc");
    }

    #[test]
    fn a_change_that_may_have_happened_is_unknown_and_one_that_never_started_is_not() {
        let deadline = || RuntimeError::Deadline { after: std::time::Duration::from_secs(1), partial: None };
        let o = WireOptions::default();
        assert_eq!(call(CallError::Runtime(deadline()), o, Effect::Reads).code(), Code::DeadlineExceeded);
        let changed = call(CallError::Runtime(deadline()), o, Effect::Changes);
        assert_eq!(changed.code(), Code::Unknown);
        assert!(changed.message().contains("whether it took effect is unknown"), "{}", changed.message());
        // Still loading, or the instance could not be readied: the export never ran.
        assert_eq!(call(CallError::NotStarted(deadline()), o, Effect::Changes).code(), Code::DeadlineExceeded);
        // Nor INTERNAL, which the engine takes for a state it may have lost.
        let replay = || RuntimeError::Replay { what: "configure", message: "boom".into() };
        assert_eq!(call(CallError::NotStarted(replay()), o, Effect::Creates).code(), Code::FailedPrecondition);
        assert_eq!(call(CallError::Runtime(replay()), o, Effect::Creates).code(), Code::Internal);
        let no_slot = || CallError::NotStarted(RuntimeError::NoInstance("every slot is taken".into()));
        assert_eq!(call(no_slot(), o, Effect::Creates).code(), Code::ResourceExhausted);
        let oom = || CallError::Runtime(RuntimeError::OutOfMemory { cap: MemoryCap::Instance(1 << 20), partial: None });
        assert_eq!(call(oom(), o, Effect::Reads).code(), Code::ResourceExhausted);
        assert_eq!(call(oom(), o, Effect::Changes).code(), Code::Unknown);
        // A result over the host's limits after a change: the change happened.
        let big = || ConvertError::TooManyNodes { count: 10, max: 5 };
        assert_eq!(bad_response(big(), Effect::Reads).code(), Code::ResourceExhausted);
        assert_eq!(bad_response(big(), Effect::Changes).code(), Code::Unknown);
    }
}
