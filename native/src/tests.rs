//! The native backend against the echo test provider: the same replay and
//! crash semantics as the wasm pool.

use std::sync::Arc;

use pulumi_wasm_host::convert::value::{empty_map, struct_to_wit};
use pulumi_wasm_host::runtime::bindings::{rp, types};
use pulumi_wasm_host::runtime::{Backend, CallError, MAX_SETUP_CALLS, RuntimeError};
use pulumi_wasm_sdk::{Value, props};

use super::NativeBackend;
use super::convert::{map, wire_map};

fn backend() -> Arc<NativeBackend<impl pulumi_wasm_sdk::Provider>> {
    Arc::new(NativeBackend::new(echo_provider::__pulumi_wasm_provider))
}

fn configure(args: pulumi_wasm_sdk::PropertyMap) -> rp::ConfigureRequest {
    rp::ConfigureRequest {
        variables: vec![],
        args: wire_map(args),
        id: String::new(),
        urn: String::new(),
        name: String::new(),
        type_: String::new(),
    }
}

fn invoke(token: &str) -> rp::InvokeRequest {
    rp::InvokeRequest { token: token.into(), args: empty_map(), preview: false }
}

/// `echo:index:config` on a thread of its own: what that thread's provider value was configured with.
async fn config_seen_on_a_new_thread<P: pulumi_wasm_sdk::Provider>(b: &Arc<NativeBackend<P>>) -> Value {
    let b = b.clone();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let out = rt.block_on(b.invoke(None, invoke("echo:index:config"))).expect("config invoke");
        map(out.outputs).unwrap()["config"].clone()
    })
    .join()
    .unwrap()
}

#[tokio::test]
async fn info_comes_from_the_provider() {
    let (name, version, _) = backend().info().unwrap();
    assert_eq!(name, "echo");
    assert_eq!(version.to_string(), env!("CARGO_PKG_VERSION"));
}

#[tokio::test]
async fn configure_is_replayed_into_every_provider_value() {
    let b = backend();
    b.configure(None, configure(props! { "region" => "eu" })).await.unwrap();
    // A thread that has never run a call makes a fresh value, which must see the configuration.
    assert_eq!(config_seen_on_a_new_thread(&b).await, Value::Object(props! { "region" => "eu" }));
    b.configure(None, configure(props! { "region" => "us" })).await.unwrap();
    assert_eq!(config_seen_on_a_new_thread(&b).await, Value::Object(props! { "region" => "us" }));
    // A value that is behind catches up: configured on another thread, seen on this one.
    let other = b.clone();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        rt.block_on(other.configure(None, configure(props! { "region" => "ap" }))).unwrap();
    })
    .join()
    .unwrap();
    let here = b.invoke(None, invoke("echo:index:config")).await.unwrap();
    assert_eq!(map(here.outputs).unwrap()["config"], Value::Object(props! { "region" => "ap" }));
}

#[tokio::test]
async fn setup_calls_past_the_bound_are_refused_as_by_the_wasm_pool() {
    let b = backend();
    for n in 0..MAX_SETUP_CALLS {
        b.configure(None, configure(props! { "region" => format!("r{n}") })).await.unwrap();
    }
    let refused = b.configure(None, configure(props! { "region" => "over" })).await.unwrap_err();
    assert!(matches!(refused, CallError::NotStarted(RuntimeError::SetUpTooOften { limit: 64 })), "{refused:?}");
    assert_eq!(config_seen_on_a_new_thread(&b).await, Value::Object(props! { "region" => "r63" }));
}

#[tokio::test]
async fn a_panic_fails_the_call_and_the_backend_keeps_serving() {
    let b = backend();
    b.configure(None, configure(props! { "k" => 1 })).await.unwrap();
    match b.invoke(None, invoke("echo:index:panic")).await {
        Err(CallError::Runtime(RuntimeError::Trap { message, .. })) => {
            assert!(message.contains("echo was asked to panic"), "{message}")
        }
        other => panic!("expected a trap, got {other:?}"),
    }
    // A fresh value replaces the discarded one, configuration replayed.
    let out = b.invoke(None, invoke("echo:index:config")).await.unwrap();
    assert_eq!(map(out.outputs).unwrap()["config"], Value::Object(props! { "k" => 1 }));
}

/// A create that reported what it made and then failed leaves a resource
/// for the engine to record, as from a component; a preview does not.
#[tokio::test]
async fn a_create_that_made_something_and_then_failed_is_unfinished() {
    let b = backend();
    let create = |preview: bool| rp::CreateRequest {
        urn: "urn:pulumi:dev::proj::echo:index:Thing::flaky".into(),
        name: "flaky".into(),
        type_: "echo:index:Thing".into(),
        properties: wire_map(props! { "hang" => "failing" }),
        timeout: 0.0,
        preview,
    };
    match b.create(None, create(false)).await {
        Err(CallError::Runtime(RuntimeError::Unfinished { message, partial: Some(p) })) => {
            assert_eq!((message.as_str(), p.id.as_str()), ("partial-flaky never became ready", "partial-flaky"));
            assert_eq!(map(p.properties.unwrap()).unwrap()["stage"], Value::from("half"));
        }
        other => panic!("expected an unfinished resource, got {other:?}"),
    }
    let previewed = b.create(None, create(true)).await;
    assert!(matches!(previewed, Err(CallError::Provider { error: types::Error::Failed(_), .. })), "{previewed:?}");
}

#[tokio::test]
async fn provider_errors_keep_their_kind() {
    let b = backend();
    match b.invoke(None, invoke("echo:index:nope")).await {
        Err(CallError::Provider { error: types::Error::InvalidArgument(m), denials }) => {
            assert!(m.contains("echo:index:nope"), "{m}");
            assert!(denials.is_empty());
        }
        other => panic!("expected invalid-argument, got {other:?}"),
    }
}

#[tokio::test]
async fn values_round_trip_through_invoke() {
    let b = backend();
    let args = struct_to_wit(&prost_types::Struct {
        fields: [(
            "s".to_string(),
            prost_types::Value { kind: Some(prost_types::value::Kind::StringValue("x".into())) },
        )]
        .into(),
    })
    .unwrap();
    let out =
        b.invoke(None, rp::InvokeRequest { token: "echo:index:echo".into(), args, preview: false }).await.unwrap();
    assert_eq!(map(out.outputs).unwrap(), props! { "s" => "x" });
}

/// A `Deferred` native backend, made once the sender is told to.
fn made_when_told() -> (
    tokio::sync::oneshot::Sender<()>,
    Arc<pulumi_wasm_host::runtime::Deferred<NativeBackend<impl pulumi_wasm_sdk::Provider>>>,
) {
    let (made_tx, made_rx) = tokio::sync::oneshot::channel::<()>();
    let deferred = pulumi_wasm_host::runtime::Deferred::spawn(async move {
        made_rx.await.map_err(|e| e.to_string())?;
        Ok::<_, String>(backend())
    });
    (made_tx, Arc::new(deferred))
}

/// `Deferred` (what a warm start serves while its component loads) over a
/// real backend: calls wait for it, and all fail alike if it is not made.
#[tokio::test]
async fn a_deferred_backend_waits_for_its_backend_or_says_why_it_failed() {
    use pulumi_wasm_host::runtime::Deferred;
    let (made_tx, deferred) = made_when_told();
    let waiting = tokio::spawn({
        let d = deferred.clone();
        async move { d.invoke(None, invoke("echo:index:config")).await }
    });
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    assert!(!waiting.is_finished(), "a call waits while the backend is being made");
    made_tx.send(()).unwrap();
    let out = waiting.await.unwrap().expect("answered once made");
    assert!(map(out.outputs).unwrap().contains_key("config"));

    let load_fails = true;
    let failed = Deferred::spawn(async move {
        if load_fails { Err("loading provider.wasm: not a WebAssembly component") } else { Ok(backend()) }
    });
    for _ in 0..2 {
        match failed.invoke(None, invoke("echo:index:config")).await {
            Err(CallError::NotStarted(e @ RuntimeError::NotLoaded(_))) => {
                assert!(e.to_string().contains("loading provider.wasm: not a WebAssembly component"), "{e}")
            }
            other => panic!("expected NotLoaded, got {:?}", other.map(|_| ())),
        }
    }
}

/// A Cancel that arrives while the backend is still being made is not
/// lost; a call waits no longer than its deadline; a loader that panics
/// is reported with its message.
#[tokio::test]
async fn a_deferred_backend_is_cancelled_once_made_and_bounds_every_wait() {
    use pulumi_wasm_host::runtime::Deferred;
    use std::time::Duration;
    let (made_tx, deferred) = made_when_told();
    match deferred.invoke(Some(Duration::from_millis(50)), invoke("echo:index:config")).await {
        Err(CallError::NotStarted(RuntimeError::Deadline { .. })) => {}
        other => panic!("a call's deadline bounds its wait, got {:?}", other.map(|_| ())),
    }
    // The grace runs out before the backend is made.
    deferred.cancel(Duration::from_millis(20)).await;
    made_tx.send(()).unwrap();
    let made = deferred.ready().await.unwrap();
    assert!(made.is_cancelled(), "the backend made after Cancel starts cancelled");

    let panics = Deferred::spawn(async {
        if true {
            panic!("the artifact is malformed");
        }
        Ok::<_, String>(backend())
    });
    match panics.ready().await {
        Err(e @ RuntimeError::NotLoaded(_)) => assert!(e.to_string().contains("the artifact is malformed"), "{e}"),
        other => panic!("expected NotLoaded, got {:?}", other.map(|_| ())),
    }
}

/// Several native backends in one process keep their providers' messages
/// apart, each to its own queue (as each component's go to its pool's).
#[tokio::test]
async fn each_native_backend_logs_to_its_own_queue() {
    use pulumi_wasm_host::convert::value::struct_to_wit as wit;
    use pulumi_wasm_host::runtime::{LogQueue, LogSeverity};
    let with_queue = || {
        let (tx, rx) = tokio::sync::mpsc::channel(16);
        (Arc::new(NativeBackend::new(echo_provider::__pulumi_wasm_provider).with_logs(LogQueue::new(tx))), rx)
    };
    let ((a, mut a_logs), (b, mut b_logs)) = (with_queue(), with_queue());
    let log = |message: &str, urn: &str| rp::InvokeRequest {
        token: "echo:index:log".into(),
        args: wit(&prost_types::Struct {
            fields: [("message", message), ("urn", urn)]
                .into_iter()
                .map(|(k, v)| {
                    (k.to_owned(), prost_types::Value { kind: Some(prost_types::value::Kind::StringValue(v.into())) })
                })
                .collect(),
        })
        .unwrap(),
        preview: false,
    };
    a.invoke(None, log("from a", "urn:a")).await.unwrap();
    b.invoke(None, log("from b", "urn:b")).await.unwrap();
    let (got_a, got_b) = (a_logs.try_recv().unwrap(), b_logs.try_recv().unwrap());
    assert_eq!(
        (got_a.message.as_str(), got_a.urn.as_deref(), got_a.severity),
        ("from a", Some("urn:a"), LogSeverity::Warning)
    );
    assert_eq!((got_b.message.as_str(), got_b.urn.as_deref()), ("from b", Some("urn:b")));
    assert!(a_logs.try_recv().is_err() && b_logs.try_recv().is_err(), "one message each, none crossed over");
}
