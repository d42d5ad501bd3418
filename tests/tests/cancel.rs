//! Cancellation and deadlines reach the guest, and a create interrupted after
//! it made something returns that partial state instead of losing it.

use std::time::Duration;

use e2e_tests::{Launch, Plugin, TestEngine, component, from_struct, init_failed, to_struct};
use pulumirpc::*;
use serde_json::{Value as Json, json};
use tonic::Code;

fn create(name: &str, hang: &str, timeout: f64) -> CreateRequest {
    create_with(name, json!({ "hang": hang }), timeout)
}

fn create_with(name: &str, properties: Json, timeout: f64) -> CreateRequest {
    CreateRequest {
        urn: format!("urn:pulumi:dev::proj::echo:index:Thing::{name}"),
        name: name.into(),
        r#type: "echo:index:Thing".into(),
        properties: Some(to_struct(properties)),
        timeout,
        ..Default::default()
    }
}

async fn started() -> (TestEngine, Plugin) {
    started_with("echo-provider", &Launch::new()).await
}

async fn started_with(provider: &str, launch: &Launch) -> (TestEngine, Plugin) {
    let engine = TestEngine::start().await;
    let mut p = Plugin::launch(&component(provider), Some(&engine.address), launch).await.unwrap();
    p.boot(&engine.address, json!({})).await.unwrap();
    (engine, p)
}

#[tokio::test]
async fn cancel_reaches_a_cooperative_guest_which_returns_its_partial_state() {
    let (_engine, mut p) = started().await;
    let mut client = p.client.clone();
    let call = tokio::spawn(async move { client.create(create("coop", "cooperative", 0.0)).await });
    tokio::time::sleep(Duration::from_millis(500)).await;
    p.client.cancel(()).await.unwrap();
    let err = call.await.unwrap().unwrap_err();
    assert_eq!(err.code(), Code::Unknown, "{err:?}");
    let f = init_failed(&err);
    assert_eq!(f.id, "partial-coop");
    assert_eq!(f.reasons, vec!["cancelled half-way"]);
    assert_eq!(from_struct(f.properties.as_ref())["stage"], "half");
    assert!(p.wait(Duration::from_secs(5)).await.is_some(), "the host stops after Cancel");
}

#[tokio::test]
async fn a_guest_ignoring_cancel_is_interrupted_and_its_partial_state_kept() {
    let (_engine, mut p) = started().await;
    let mut client = p.client.clone();
    let call = tokio::spawn(async move { client.create(create("stubborn", "stubborn", 0.0)).await });
    tokio::time::sleep(Duration::from_millis(500)).await;
    p.client.cancel(()).await.unwrap();
    let err = call.await.unwrap().unwrap_err();
    assert!(err.message().contains("cancelled"), "{}", err.message());
    let f = init_failed(&err);
    assert_eq!(f.id, "partial-stubborn");
    assert_eq!(from_struct(f.properties.as_ref())["hang"], "stubborn");
    assert!(p.wait(Duration::from_secs(5)).await.is_some(), "the host stops within the engine's grace");
}

#[tokio::test]
async fn the_request_timeout_is_enforced_and_the_host_keeps_serving() {
    let (_engine, mut p) = started().await;
    let err = p.client.create(create("slow", "stubborn", 1.0)).await.unwrap_err();
    assert!(err.message().contains("deadline"), "{}", err.message());
    assert_eq!(init_failed(&err).id, "partial-slow");
    let ok = p.client.invoke(InvokeRequest { tok: "echo:index:echo".into(), args: None, preview: false }).await;
    assert!(ok.is_ok());
}

/// A create that reported what it made and then returns an ordinary error
/// (it never became ready) still has the engine record the resource: an
/// error alone tells the engine nothing was made, and the next `up` would
/// make another.
#[tokio::test]
async fn a_create_that_made_something_and_then_failed_still_has_it_recorded() {
    let (_engine, mut p) = started().await;
    let err = p.client.create(create("flaky", "failing", 0.0)).await.unwrap_err();
    assert_eq!(err.code(), Code::Unknown, "{}", err.message());
    let f = init_failed(&err);
    assert_eq!(f.id, "partial-flaky");
    assert_eq!(f.reasons, vec!["partial-flaky never became ready"]);
    assert_eq!(from_struct(f.properties.as_ref())["stage"], "half");
    // A preview makes nothing: its error is only an error.
    let preview = CreateRequest { preview: true, ..create("flaky", "failing", 0.0) };
    let err = p.client.create(preview).await.unwrap_err();
    assert!(err.details().is_empty() && err.message() == "partial-flaky never became ready", "{err:?}");
    // The next call on the same instance reports nothing of that one.
    let other = CreateRequest { r#type: "echo:index:Nope".into(), ..create_with("plain", json!({}), 0.0) };
    let err = p.client.create(other).await.unwrap_err();
    assert!(err.details().is_empty() && err.message().contains("Nope"), "{err:?}");
}

#[tokio::test]
async fn a_partial_state_too_large_to_send_back_keeps_its_id() {
    let (_engine, mut p) = started().await;
    // 6 MiB of state: its detail would pass grpc-go's 16 MiB of trailers
    // once base64-encoded with the rest; 24 MiB is not even kept meanwhile.
    for (mib, said) in [(6, "too large to send back"), (24, "too large to keep")] {
        let mut request = create("big", "stubborn", 1.0);
        request.properties = Some(to_struct(json!({ "hang": "stubborn", "blob": "x".repeat(mib << 20) })));
        let err = p.client.create(request).await.unwrap_err();
        assert_eq!(err.code(), Code::Unknown, "{}", err.message());
        assert!(err.message().contains(said), "{}", err.message());
        let f = init_failed(&err);
        assert_eq!(f.id, "partial-big");
        assert!(f.properties.is_none() && f.inputs.is_none());
    }
    assert!(p.client.get_plugin_info(()).await.is_ok(), "the host keeps serving");
}

#[tokio::test]
async fn an_interrupted_update_is_reported_as_unknown_so_the_engine_keeps_it_pending() {
    let (_engine, mut p) = started().await;
    let update = UpdateRequest {
        id: "thing-1".into(),
        urn: "urn:pulumi:dev::proj::echo:index:Thing::slow".into(),
        name: "slow".into(),
        r#type: "echo:index:Thing".into(),
        olds: Some(to_struct(json!({}))),
        news: Some(to_struct(json!({ "hang": true }))),
        timeout: 1.0,
        ..Default::default()
    };
    let err = p.client.update(update).await.unwrap_err();
    // The engine treats any code but UNKNOWN, INTERNAL and DATA_LOSS as "nothing happened".
    assert_eq!(err.code(), Code::Unknown, "{err:?}");
    assert!(err.message().contains("deadline"), "{}", err.message());
    assert!(err.message().contains("whether it took effect is unknown"), "{}", err.message());
    let ok = p.client.invoke(InvokeRequest { tok: "echo:index:echo".into(), args: None, preview: false }).await;
    assert!(ok.is_ok(), "the host keeps serving");
}

/// Cancel answers within the engine's 5 s however many idle instances'
/// `cancel` exports never return: they share the one grace, past which
/// every instance is interrupted.
#[tokio::test]
async fn cancel_answers_in_time_when_idle_instances_hang_in_their_cancel() {
    // Four worker threads: a guest's call holds one while it runs.
    let (_engine, mut p) =
        started_with("hostile-provider", &Launch::new().env("PULUMI_WASM_WORKER_THREADS", "4")).await;
    // Four instances at once, each armed to hang in `cancel`, then idle.
    let arm = |p: &Plugin| {
        let mut c = p.client.clone();
        let req = InvokeRequest {
            tok: "hostile:index:slowCancel".into(),
            args: Some(to_struct(json!({ "sleepMs": 400 }))),
            preview: false,
        };
        async move { c.invoke(req).await.unwrap() }
    };
    let armed: Vec<_> = (0..4).map(|_| tokio::spawn(arm(&p))).collect();
    for a in armed {
        a.await.unwrap();
    }
    let started = std::time::Instant::now();
    p.client.cancel(()).await.unwrap();
    let took = started.elapsed();
    assert!(took < Duration::from_secs(5), "Cancel took {took:?}, past the engine's 5 s");
    let status = p.wait(Duration::from_secs(5)).await.expect("exits after Cancel");
    assert!(status.success(), "{status:?} {}", p.stderr());
}

/// Without a timeout from the engine, a resource operation may wait (on
/// HTTP, on timers) as long as it must, as the engine waits for it; its
/// running is still held to the provider's timeout. A timeout the engine
/// sets counts the waits too.
#[tokio::test]
async fn a_resource_operation_waits_as_long_as_the_engine_does() {
    let (_engine, mut p) = started_with("echo-provider", &Launch::new().env("PULUMI_WASM_CALL_TIMEOUT", "1")).await;
    let made = p.client.create(create_with("waits", json!({ "sleepMs": 2500 }), 0.0)).await;
    assert!(made.is_ok(), "waiting past the provider's 1 s: {made:?}");
    let err = p.client.create(create_with("runs", json!({ "spinMs": 2500 }), 0.0)).await.unwrap_err();
    assert!(err.message().contains("deadline"), "running past it: {}", err.message());
    let preview = CreateRequest { preview: true, ..create_with("previewed", json!({ "sleepMs": 2500 }), 0.0) };
    let err = p.client.create(preview).await.unwrap_err();
    assert!(err.message().contains("deadline"), "a preview should be quick: {}", err.message());
    let err = p.client.create(create_with("asked", json!({ "sleepMs": 2500 }), 1.0)).await.unwrap_err();
    assert!(err.message().contains("deadline"), "past the engine's own timeout: {}", err.message());
    // Other calls count their waits: an invoke sleeping past the provider's timeout.
    let args = Some(to_struct(json!({ "sleepMs": 2500 })));
    let err = p.client.invoke(InvokeRequest { tok: "echo:index:config".into(), args, preview: false }).await;
    assert!(err.unwrap_err().message().contains("deadline"));
}

/// A Create of an echo Thing with `properties` and no timeout, under way.
fn spawn_create(
    p: &Plugin,
    name: &'static str,
    properties: Json,
) -> tokio::task::JoinHandle<Result<tonic::Response<CreateResponse>, tonic::Status>> {
    let mut client = p.client.clone();
    tokio::spawn(async move { client.create(create_with(name, properties, 0.0)).await })
}

fn echo() -> InvokeRequest {
    InvokeRequest { tok: "echo:index:echo".into(), args: None, preview: false }
}

/// A resource operation waiting without a timeout gives its turn back: the
/// provider's other calls run meanwhile, even with one turn to share.
#[tokio::test]
async fn a_waiting_resource_operation_lets_other_calls_run() {
    let (_engine, p) = started_with("echo-provider", &Launch::new().env("PULUMI_WASM_MAX_INSTANCES", "1")).await;
    let began = std::time::Instant::now();
    let waiting = spawn_create(&p, "slow", json!({ "sleepMs": 4000 }));
    tokio::time::sleep(Duration::from_millis(300)).await;
    let echoed = p.client.clone().invoke(echo()).await;
    assert!(echoed.is_ok(), "{echoed:?}");
    // Not after the create's 4 s, which it would wait for with the turn held.
    let answered = began.elapsed();
    assert!(answered < Duration::from_millis(2500), "answered after {answered:?}");
    assert!(waiting.await.unwrap().is_ok());
}

/// The instances waiting operations keep are bounded apart: with one turn
/// and one waiting place, two waiting creates hold both, and an invoke
/// gets an instance only when the first is done.
#[tokio::test]
async fn waiting_operations_keep_at_most_max_waiting_instances() {
    let launch = Launch::new().env("PULUMI_WASM_MAX_INSTANCES", "1").env("PULUMI_WASM_MAX_WAITING", "1");
    let (_engine, p) = started_with("echo-provider", &launch).await;
    let began = std::time::Instant::now();
    let first = spawn_create(&p, "first", json!({ "sleepMs": 2500 }));
    tokio::time::sleep(Duration::from_millis(300)).await;
    let second = spawn_create(&p, "second", json!({ "sleepMs": 2500 }));
    tokio::time::sleep(Duration::from_millis(300)).await;
    let echoed = p.client.clone().invoke(echo()).await;
    assert!(echoed.is_ok(), "{echoed:?}");
    // Not before the first create's 2.5 s: both places were taken until then.
    let answered = began.elapsed();
    assert!(answered > Duration::from_millis(2000), "answered after {answered:?}");
    assert!(first.await.unwrap().is_ok());
    assert!(second.await.unwrap().is_ok());
}

/// Waiting in the queue counts against a call's deadline: behind a create
/// that holds the only instance while it waits, an invoke fails once its
/// deadline (the policy's 2 s) has passed, saying why, rather than waiting
/// without end.
#[tokio::test]
async fn a_call_queued_behind_waiting_ones_fails_at_its_deadline() {
    let launch = Launch::new()
        .env("PULUMI_WASM_MAX_INSTANCES", "1")
        .env("PULUMI_WASM_MAX_WAITING", "0")
        .policy("[providers.echo]\ntimeout-s = 2\n", e2e_tests::PolicyAt::Beside);
    let (_engine, p) = started_with("echo-provider", &launch).await;
    let _long = spawn_create(&p, "long", json!({ "sleepMs": 60000 }));
    // Until the create holds the instance (on a busy machine the invoke may
    // get there first), then behind it.
    let mut answered = Vec::new();
    for _ in 0..10 {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let queued = tokio::time::timeout(Duration::from_secs(20), p.client.clone().invoke(echo())).await;
        match queued.expect("answered, not left waiting") {
            Ok(_) => answered.push("ok"),
            Err(err) => {
                assert_eq!(err.code(), Code::ResourceExhausted, "{err:?}");
                let said = "no instance was free within the call's deadline of 2s";
                assert!(err.message().contains(said), "{}", err.message());
                return;
            }
        }
    }
    panic!("never queued behind the create: {answered:?}");
}

/// A running and a waiting create share one turn (the one running keeps
/// it across its yields, the waiting one gives it back and takes it again):
/// both finish, and an invoke still gets its turn while one sleeps.
#[tokio::test]
async fn a_running_and_a_waiting_operation_share_one_turn() {
    let (_engine, p) = started_with("echo-provider", &Launch::new().env("PULUMI_WASM_MAX_INSTANCES", "1")).await;
    let began = std::time::Instant::now();
    let spinning = spawn_create(&p, "spins", json!({ "spinMs": 300 }));
    let sleeping = spawn_create(&p, "sleeps", json!({ "sleepMs": 3000 }));
    tokio::time::sleep(Duration::from_millis(500)).await;
    let echoed = p.client.clone().invoke(echo()).await;
    assert!(echoed.is_ok(), "{echoed:?}");
    let answered = began.elapsed();
    assert!(answered < Duration::from_millis(2500), "answered after {answered:?}");
    assert!(spinning.await.unwrap().is_ok());
    assert!(sleeping.await.unwrap().is_ok());
}
