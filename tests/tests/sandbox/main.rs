//! The sandbox, end to end, against real host processes.
//!
//! - The `kv` example (examples/kv) manages items of a real HTTP API served by
//!   this test process on loopback: with its grant it goes through
//!   Check/Create/Read/Update/Delete and Read sees drift made on the server;
//!   without the grant its Create fails naming the missing grant.
//! - The `hostile` guest (tests/guests/hostile) tries one attack per invoke.
//!   For each: the attempt fails with a clear error, the host stays up,
//!   well-behaved calls made while the attack runs are answered, and the
//!   host's resident memory returns near its baseline.

use std::collections::BTreeMap;
// Explicit: `pulumirpc::*` may bring a message type named `Result`.
use std::result::Result;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use e2e_tests::{KvApi, Launch, Plugin, PolicyAt, TestEngine, component, from_struct, host_bin, to_struct};
use pulumirpc::diff_response::DiffChanges;
use pulumirpc::*;
use serde_json::{Value as Json, json};
use tonic::{Code, Status};

const MIB: u64 = 1 << 20;
/// How far above its baseline the host's resident memory may stay after an attack.
const RSS_TOLERANCE: u64 = 64 * MIB;

mod escape;
mod kv;
mod limits;
mod values;

// ---------------------------------------------------------------------------
// The hostile guest: what the tests of limits, escape and values share
// ---------------------------------------------------------------------------

fn invoke(tok: &str, args: Json) -> InvokeRequest {
    InvokeRequest { tok: tok.into(), args: Some(to_struct(args)), preview: false }
}

/// A policy for the `hostile` provider: its deadline, memory cap and extra grants.
fn policy(timeout_s: u64, memory_mb: Option<u64>, grants: &str) -> String {
    let memory = memory_mb.map(|m| format!("memory-mb = {m}\n")).unwrap_or_default();
    format!("[providers.hostile]\ntimeout-s = {timeout_s}\n{memory}{grants}\n")
}

/// A booted plugin serving the hostile guest, warmed up by one normal call.
async fn hostile(launch: Launch) -> (TestEngine, Plugin) {
    let engine = TestEngine::start().await;
    let mut p = Plugin::launch(&component("hostile-provider"), Some(&engine.address), &launch).await.unwrap();
    p.boot(&engine.address, json!({})).await.unwrap();
    let ok = p.client.invoke(invoke("hostile:index:ok", json!({}))).await.unwrap().into_inner();
    assert_eq!(from_struct(ok.r#return.as_ref())["ok"], json!(true));
    (engine, p)
}

async fn hostile_with(toml: &str) -> (TestEngine, Plugin) {
    hostile(Launch::new().policy(toml, PolicyAt::EnvVar)).await
}

/// A short description of a successful result (a huge one is not printed).
fn summary(v: &Json) -> String {
    let s = v.to_string();
    if s.len() > 300 { format!("{}... ({} bytes)", &s[..300], s.len()) } else { s }
}

async fn ok_call(p: &Plugin, during: &str) {
    let mut c = p.client.clone();
    let answered = tokio::time::timeout(Duration::from_secs(20), c.invoke(invoke("hostile:index:ok", json!({})))).await;
    let resp = answered
        .unwrap_or_else(|_| panic!("a well-behaved call got no answer within 20 s {during}; stderr: {}", p.stderr()))
        .unwrap_or_else(|e| panic!("a well-behaved call failed {during}: {e:?}"));
    assert_eq!(from_struct(resp.into_inner().r#return.as_ref())["ok"], json!(true));
}

/// Runs one attack while making well-behaved calls, then checks the host
/// is up, still answers, and its memory is back near the baseline taken
/// before the attack. Returns the attack's own result.
async fn contained(p: &mut Plugin, tok: &str, args: Json) -> Result<Json, Status> {
    let baseline = p.rss().expect("the host's VmRSS");
    let what = format!("hostile:index:{tok} {args}");
    let mut attacker = p.client.clone();
    let req = invoke(&format!("hostile:index:{tok}"), args);
    let start = Instant::now();
    let attack = tokio::spawn(async move { attacker.invoke(req).await });
    let mut answered = 0;
    loop {
        ok_call(p, &format!("while {what} ran")).await;
        answered += 1;
        if attack.is_finished() {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(180), "{what} still runs after 180 s");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert!(answered >= 1);
    let result = attack.await.unwrap().map(|r| from_struct(r.into_inner().r#return.as_ref()));
    assert!(p.is_running(), "the host exited during {what}; stderr: {}", p.stderr());
    ok_call(p, &format!("after {what}")).await;
    let mut rss = p.rss().unwrap();
    for _ in 0..50 {
        if rss <= baseline + RSS_TOLERANCE {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
        rss = p.rss().unwrap();
    }
    assert!(
        rss <= baseline + RSS_TOLERANCE,
        "after {what} the host holds {} MiB resident, {} MiB over its baseline of {} MiB",
        rss / MIB,
        (rss - baseline) / MIB,
        baseline / MIB
    );
    result
}

/// [`contained`], for an attack that must fail.
async fn refused(p: &mut Plugin, tok: &str, args: Json) -> Status {
    let what = format!("hostile:index:{tok} {args}");
    match contained(p, tok, args).await {
        Ok(v) => panic!("{what} was not stopped: it returned {}", summary(&v)),
        Err(s) => s,
    }
}

/// Asserts the code and that the message mentions each of `needles` (case-insensitively).
#[track_caller]
fn assert_status(s: &Status, code: Code, needles: &[&str]) {
    assert_eq!(s.code(), code, "unexpected code for {:?}", s.message());
    let msg = s.message().to_lowercase();
    for n in needles {
        assert!(msg.contains(&n.to_lowercase()), "the message should mention {n:?}: {:?}", s.message());
    }
}
