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

// ---------------------------------------------------------------------------
// The hostile guest
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

#[tokio::test]
async fn an_infinite_loop_is_stopped_at_the_deadline() {
    let (_engine, mut p) = hostile_with(&policy(3, None, "")).await;
    let start = Instant::now();
    let s = refused(&mut p, "loop", json!({})).await;
    assert_status(&s, Code::DeadlineExceeded, &["deadline"]);
    let took = start.elapsed();
    assert!(took >= Duration::from_millis(2500) && took < Duration::from_secs(20), "stopped after {took:?}");
}

/// How many times the thread named `name` of process `pid` has gone to sleep.
fn sleeps_of_thread(pid: u32, name: &str) -> u64 {
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).unwrap() {
        let dir = task.unwrap().path();
        if std::fs::read_to_string(dir.join("comm")).unwrap_or_default().trim() == name {
            let status = std::fs::read_to_string(dir.join("status")).unwrap();
            let line = status.lines().find(|l| l.starts_with("voluntary_ctxt_switches:")).unwrap();
            return line.split_whitespace().nth(1).unwrap().parse().unwrap();
        }
    }
    panic!("no thread named {name} in process {pid}");
}

#[tokio::test]
async fn an_idle_provider_is_not_woken_and_deadlines_hold_after_idling() {
    let (_engine, mut p) = hostile_with(&policy(2, None, "")).await;
    let pid = p.pid().unwrap();
    // The epoch thread ticks every 10 ms while guests run, and sleeps after
    // a second with none.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let before = sleeps_of_thread(pid, "wasm-epoch");
    tokio::time::sleep(Duration::from_secs(1)).await;
    let woken = sleeps_of_thread(pid, "wasm-epoch") - before;
    assert!(woken <= 2, "the idle epoch thread was woken {woken} times in a second");
    // A call wakes it: a busy guest is still stopped at its deadline.
    let start = Instant::now();
    let s = refused(&mut p, "loop", json!({})).await;
    assert_status(&s, Code::DeadlineExceeded, &["deadline"]);
    let took = start.elapsed();
    assert!(took >= Duration::from_millis(1500) && took < Duration::from_secs(15), "stopped after {took:?}");
    // And it ticked all along (a hundred times a second), then sleeps again.
    let ticking = sleeps_of_thread(pid, "wasm-epoch") - before - woken;
    assert!(ticking >= 50, "the epoch thread slept only {ticking} times while a guest ran");
    let ok = p.client.invoke(invoke("hostile:index:ok", json!({}))).await.unwrap().into_inner();
    assert_eq!(from_struct(ok.r#return.as_ref())["ok"], json!(true));
}

#[tokio::test]
async fn a_memory_bomb_hits_the_memory_limit() {
    let (_engine, mut p) = hostile_with(&policy(30, Some(128), "")).await;
    let s = refused(&mut p, "membomb", json!({})).await;
    // The error names the limit and how to raise it, not only the guest's crash.
    assert_status(&s, Code::ResourceExhausted, &["ran out of memory", "limit of 128 MiB", "memory-mb"]);
    // The limit is per instance: a fresh one serves the next call as usual.
    let again = refused(&mut p, "membomb", json!({})).await;
    assert_eq!(again.code(), Code::ResourceExhausted);
}

#[tokio::test]
async fn unbounded_recursion_is_a_contained_stack_overflow() {
    let (_engine, mut p) = hostile_with(&policy(30, None, "")).await;
    let s = refused(&mut p, "recurse", json!({})).await;
    assert_status(&s, Code::Internal, &["crashed", "stack"]);
    // Recursion that exhausts the in-memory (shadow) stack instead.
    let s = refused(&mut p, "recurse", json!({"shadow": true})).await;
    assert_status(&s, Code::Internal, &["crashed"]);
}

#[tokio::test]
async fn a_panic_mid_call_is_contained() {
    let (_engine, mut p) = hostile_with(&policy(30, None, "")).await;
    let s = refused(&mut p, "panic", json!({})).await;
    assert_status(&s, Code::Internal, &["crashed", "hostile was asked to panic"]);
}

#[tokio::test]
async fn randomness_is_served_in_one_call_and_bounded() {
    let (_engine, mut p) = hostile_with(&policy(30, None, "")).await;
    let mut heads = std::collections::BTreeSet::new();
    for _ in 0..2 {
        let got = contained(&mut p, "random", json!({"bytes": 4096})).await.unwrap();
        assert_eq!(got["length"], json!(4096.0), "{got}");
        // 4096 uniform bytes leave out fewer than ten of the 256 values
        // (200 or fewer distinct: probability far below 1e-30).
        assert!(got["distinct"].as_f64().unwrap() > 200.0, "{got}");
        heads.insert(got["head"].as_str().unwrap().to_owned());
    }
    assert_eq!(heads.len(), 2, "two calls drew the same bytes: {heads:?}");
    // Asking past the per-call limit traps the call, naming the limit; the host goes on.
    let s = refused(&mut p, "random", json!({"bytes": (1 << 20) + 1})).await;
    assert_status(&s, Code::Internal, &["crashed", "random bytes", "limit of 1048576"]);
}

/// `root/secret.txt` outside the grant; `root/granted` (granted as `/data`,
/// read-only) holds a file and symlinks that point outside.
struct Tree {
    _dir: tempfile::TempDir,
    root: std::path::PathBuf,
}

const SECRET: &str = "TOP-SECRET-7f3c9";

fn tree() -> Tree {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("secret.txt"), SECRET).unwrap();
    let granted = root.join("granted");
    std::fs::create_dir(&granted).unwrap();
    std::fs::write(granted.join("inside.txt"), "inside").unwrap();
    std::os::unix::fs::symlink("../secret.txt", granted.join("link")).unwrap();
    std::os::unix::fs::symlink(root.join("secret.txt"), granted.join("abslink")).unwrap();
    std::os::unix::fs::symlink("..", granted.join("dirlink")).unwrap();
    std::fs::create_dir(root.join("ro")).unwrap();
    std::fs::write(root.join("ro/keep.txt"), "original").unwrap();
    std::fs::create_dir(root.join("rw")).unwrap();
    Tree { _dir: dir, root }
}

fn dirs_policy(t: &Tree) -> String {
    let r = t.root.display();
    policy(
        30,
        None,
        &format!(
            "dirs = [{{ host = \"{r}/granted\", guest = \"/data\", read-only = true }}, \
             {{ host = \"{r}/ro\", guest = \"/ro\", read-only = true }}, {{ host = \"{r}/rw\", guest = \"/rw\" }}]"
        ),
    )
}

#[tokio::test]
async fn files_outside_the_granted_directory_cannot_be_read() {
    let t = tree();
    let (_engine, mut p) = hostile_with(&dirs_policy(&t)).await;
    // The grant works: a file inside it is readable.
    let inside = contained(&mut p, "readOutside", json!({"path": "/data/inside.txt"})).await.unwrap();
    assert_eq!(inside["content"], "inside");
    let host_path = t.root.join("secret.txt").display().to_string();
    for path in [
        "../secret.txt",
        "/data/../secret.txt",
        "/data/../../secret.txt",
        host_path.as_str(),
        "/etc/passwd",
        "/data/link",
        "/data/link/",
        "/data/abslink",
        "/data/dirlink/secret.txt",
        "/data/dirlink/granted/inside.txt",
    ] {
        let s = refused(&mut p, "readOutside", json!({"path": path})).await;
        assert_eq!(s.code(), Code::Unknown, "{path}: {s:?}");
        assert!(s.message().contains(path), "the error names the path: {:?}", s.message());
        assert!(!s.message().contains(SECRET), "{path} leaked the secret");
    }
    // WASI resolves paths against the granted directories inside the guest, so
    // the host never sees these reads; the component's declared needs name the grant.
    let s = refused(&mut p, "readOutside", json!({"path": "/etc/passwd"})).await;
    let note = "missing grant: dir \"/\" for provider hostile (the component declares it)";
    assert!(s.message().contains(note), "{:?}", s.message());
    // Not on errors no grant explains: a function that does not exist.
    let s = refused(&mut p, "noSuchAttack", json!({})).await;
    assert_eq!(s.code(), Code::InvalidArgument, "{s:?}");
    assert!(!s.message().contains("missing grant"), "{:?}", s.message());
}

#[tokio::test]
async fn read_only_grants_cannot_be_written() {
    let t = tree();
    let (_engine, mut p) = hostile_with(&dirs_policy(&t)).await;
    // A read-write grant can be written: the failures below are the read-only flag's doing.
    contained(&mut p, "writeReadOnly", json!({"path": "/rw/new.txt"})).await.unwrap();
    assert_eq!(std::fs::read_to_string(t.root.join("rw/new.txt")).unwrap(), "written by hostile");
    let keep = contained(&mut p, "readOutside", json!({"path": "/ro/keep.txt"})).await.unwrap();
    assert_eq!(keep["content"], "original");
    for (path, op) in [
        ("/ro/new.txt", "write"),
        ("/ro/keep.txt", "write"),
        ("/ro/keep.txt", "append"),
        ("/ro/keep.txt", "remove"),
        ("/ro/keep.txt", "rename"),
        ("/ro/sub", "mkdir"),
        ("/data/inside.txt", "write"),
        ("/data/link", "write"),
    ] {
        let s = refused(&mut p, "writeReadOnly", json!({"path": path, "op": op})).await;
        assert_eq!(s.code(), Code::Unknown, "{op} {path}: {s:?}");
        assert!(s.message().contains(path), "the error names the path: {:?}", s.message());
    }
    assert_eq!(std::fs::read_to_string(t.root.join("ro/keep.txt")).unwrap(), "original");
    assert_eq!(std::fs::read_to_string(t.root.join("secret.txt")).unwrap(), SECRET);
    let ro: Vec<_> = std::fs::read_dir(t.root.join("ro")).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(ro, vec!["keep.txt"], "nothing was created in the read-only directory");
}

#[tokio::test]
async fn only_granted_environment_variables_are_visible() {
    let launch = Launch::new()
        .policy(&policy(30, None, "env = [\"HOSTILE_GRANTED\"]"), PolicyAt::EnvVar)
        .env("HOSTILE_SECRET", "do-not-leak")
        .env("HOSTILE_GRANTED", "fine");
    let (_engine, mut p) = hostile(launch).await;
    // The guest declares it needs HOSTILE_SECRET and HOME: declaring grants nothing.
    for name in ["HOSTILE_SECRET", "HOME", "PATH", "PULUMI_WASM_POLICY", "PULUMI_WASM_CACHE_DIR"] {
        let r = contained(&mut p, "env", json!({"name": name})).await.unwrap();
        assert_eq!(r["visible"], false, "{name} must not be visible: {r}");
        assert_eq!(r["names"], json!(["HOSTILE_GRANTED"]), "only the granted variable exists for the guest");
    }
    let r = contained(&mut p, "env", json!({"name": "HOSTILE_GRANTED"})).await.unwrap();
    assert_eq!(r["visible"], true);
    assert_eq!(r["value"], "fine");
}

#[tokio::test]
async fn http_to_an_ungranted_host_is_denied_naming_the_grant() {
    let granted = KvApi::start(None).await;
    let other = KvApi::start(None).await;
    let (_engine, mut p) = hostile_with(&policy(30, None, &format!("http = [\"{}\"]", granted.url()))).await;
    let ok = contained(&mut p, "http", json!({"url": format!("{}/hello", granted.url())})).await.unwrap();
    assert_eq!(ok["status"], 200.0);
    assert_eq!(ok["body"], "hello");
    let denied = [
        format!("{}/hello", other.url()),
        // The same port by another name, and another scheme: neither is the grant.
        format!("http://localhost:{}/hello", granted.addr.port()),
        format!("https://{}/hello", granted.addr),
    ];
    for url in &denied {
        let s = refused(&mut p, "http", json!({"url": url})).await;
        let origin = url.trim_end_matches("/hello");
        assert_status(&s, Code::FailedPrecondition, &["denied", "missing grant", origin]);
    }
    assert!(other.seen().is_empty(), "the ungranted server was never contacted: {:?}", other.requests());
    assert_eq!(granted.requests(), vec!["GET /hello"], "only the granted request reached the granted server");
}

#[tokio::test]
async fn a_wildcard_grant_does_not_open_loopback() {
    let server = KvApi::start(None).await;
    let port = server.addr.port();
    // Any host on that port, but no grant names the loopback address itself.
    let (_engine, mut p) = hostile_with(&policy(30, None, &format!("http = [\"http://*:{port}\"]"))).await;
    for host in ["127.0.0.1", "localhost"] {
        let url = format!("http://{host}:{port}/hello");
        let s = refused(&mut p, "http", json!({"url": url})).await;
        assert_status(&s, Code::FailedPrecondition, &["missing grant", "loopback", &format!("{host}:{port}")]);
    }
    assert!(server.seen().is_empty(), "the loopback server was never contacted: {:?}", server.requests());
}

#[tokio::test]
async fn the_guests_http_timeouts_are_applied() {
    let server = KvApi::start(None).await;
    let (_engine, mut p) = hostile_with(&policy(30, None, &format!("http = [\"{}\"]", server.url()))).await;
    let start = Instant::now();
    let s = refused(&mut p, "http", json!({"url": format!("{}/slow", server.url()), "firstByteMs": 500})).await;
    assert_status(&s, Code::Unavailable, &["timed out", "/slow"]);
    assert!(start.elapsed() < Duration::from_secs(8), "gave up after {:?}, not after 0.5 s", start.elapsed());
}

#[tokio::test]
async fn a_redirect_to_an_ungranted_host_is_not_followed() {
    let granted = KvApi::start(None).await;
    let other = KvApi::start(None).await;
    let target = format!("{}/hello", other.url());
    granted.redirect("/away", &target);
    granted.redirect("/home", "/hello");
    let (_engine, mut p) = hostile_with(&policy(30, None, &format!("http = [\"{}\"]", granted.url()))).await;
    // Not following (the default): the 3xx itself is the answer.
    let r = contained(&mut p, "http", json!({"url": format!("{}/away", granted.url())})).await.unwrap();
    assert_eq!(r["status"], 302.0);
    assert_eq!(r["location"], target);
    // Following: the redirect is a new request, checked like any other.
    let s = refused(&mut p, "http", json!({"url": format!("{}/away", granted.url()), "follow": 5})).await;
    assert_status(&s, Code::FailedPrecondition, &["missing grant", &other.url(), "redirected from"]);
    assert!(other.seen().is_empty(), "the redirect target was never contacted: {:?}", other.requests());
    // A redirect within the grant is followed.
    let r = contained(&mut p, "http", json!({"url": format!("{}/home", granted.url()), "follow": 5})).await.unwrap();
    assert_eq!(r["status"], 200.0);
    assert_eq!(r["url"], format!("{}/hello", granted.url()));
}

#[tokio::test]
async fn sockets_cannot_be_opened() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = accepted.clone();
    let acceptor = tokio::spawn(async move {
        while listener.accept().await.is_ok() {
            count.fetch_add(1, Ordering::Relaxed);
        }
    });
    // Even with an HTTP grant for that very address: sockets are not HTTP.
    let (_engine, mut p) = hostile_with(&policy(30, None, &format!("http = [\"http://{addr}\"]"))).await;
    for (kind, target) in [("tcp", addr.as_str()), ("udp", addr.as_str()), ("dns", "localhost:80")] {
        let s = refused(&mut p, "socket", json!({"addr": target, "kind": kind})).await;
        assert_eq!(s.code(), Code::Unknown, "{kind}: {s:?}");
        assert!(s.message().contains(target), "{:?}", s.message());
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(accepted.load(Ordering::Relaxed), 0, "no connection reached the listener");
    acceptor.abort();
}

/// The messages a host may give for a value it will not take.
fn names_a_size_limit(msg: &str) -> bool {
    let msg = msg.to_lowercase();
    ["too large", "too big", "too much data", "limit", "exceed", "memory", "size"].iter().any(|w| msg.contains(w))
}

#[tokio::test]
async fn a_huge_value_fails_cleanly() {
    // Memory enough for the guest to build 600 MiB: the host must refuse to take it.
    let (_engine, mut p) = hostile_with(&policy(60, Some(1024), "")).await;
    let s = refused(&mut p, "huge", json!({"mb": 600})).await;
    assert_eq!(s.code(), Code::ResourceExhausted, "{s:?}");
    assert!(!s.message().contains("missing grant"), "no grant explains this: {:?}", s.message());
    assert!(names_a_size_limit(s.message()), "the error names the limit: {:?}", s.message());
}

#[tokio::test]
async fn a_huge_value_is_not_copied_into_the_host() {
    let (_engine, mut p) = hostile_with(&policy(60, Some(1024), "")).await;
    let before = p.peak_rss().unwrap();
    let s = refused(&mut p, "huge", json!({"mb": 600})).await;
    assert_ne!(s.code(), Code::Ok);
    // The guest's own 600 MiB live in the host process (its linear memory);
    // one more full copy on the host's side would pass 1200 MiB.
    let grew = p.peak_rss().unwrap().saturating_sub(before);
    assert!(grew < 1000 * MIB, "the host's peak memory grew by {} MiB for a 600 MiB value", grew / MIB);
}

#[tokio::test]
async fn a_value_of_millions_of_nodes_fails_cleanly() {
    // ~13 million nodes in ~200 MiB of guest memory: a host value per node is larger.
    let (_engine, mut p) = hostile_with(&policy(60, None, "")).await;
    let s = refused(&mut p, "huge", json!({"mb": 200, "shape": "nodes"})).await;
    assert_eq!(s.code(), Code::ResourceExhausted, "{s:?}");
    assert!(names_a_size_limit(s.message()), "the error names the limit: {:?}", s.message());
}

#[tokio::test]
async fn malformed_values_are_refused() {
    let (_engine, mut p) = hostile_with(&policy(60, None, "")).await;
    for kind in [
        "cycle",
        "backwards",
        "shared",
        "laughs",
        "outOfRange",
        "maxIndex",
        "deep",
        "rootNotObject",
        "empty",
        "duplicateKeys",
        "archiveMember",
        "textPastEnd",
        "splitCharacter",
        "itemsPastEnd",
        "fieldsPastEnd",
        "badCounts",
        "badKind",
        "sharedLong",
        "extraBehind",
        "heldUnknown",
    ] {
        let s = refused(&mut p, "malformed", json!({"kind": kind})).await;
        // Too deep is a limit of the host's, not a broken value.
        let (code, words) = match kind {
            "deep" => (Code::ResourceExhausted, ["over the host's limits", "levels deep"]),
            _ => (Code::Internal, ["invalid", ""]),
        };
        assert_status(&s, code, &words);
    }
}

#[tokio::test]
async fn a_log_flood_is_bounded() {
    let (engine, mut p) = hostile_with(&policy(10, None, "")).await;
    let start = Instant::now();
    let result = contained(&mut p, "logFlood", json!({"count": 1_000_000, "size": 65_537})).await;
    let took = start.elapsed();
    assert!(took < Duration::from_secs(40), "the flood ran for {took:?}");
    if let Err(s) = &result {
        assert!(
            matches!(s.code(), Code::DeadlineExceeded | Code::ResourceExhausted | Code::Internal),
            "a flood stopped by the host says why: {s:?}"
        );
    }
    let at_end = engine.log_count();
    assert!(at_end < 1_000_000, "the engine was not sent every one of the million messages");
    assert!(engine.longest_log() <= 64 * 1024 + 64, "messages are cut: {} bytes arrived", engine.longest_log());
    tokio::time::sleep(Duration::from_secs(2)).await;
    let later = engine.log_count();
    assert!(later - at_end <= 10_000, "{} messages were still queued after the call", later - at_end);
}

/// A booted hostile plugin whose engine takes 2 ms to answer each Engine.Log.
async fn hostile_for_busy_engine() -> (TestEngine, Plugin) {
    let engine = TestEngine::start_with_log_delay(Duration::from_millis(2)).await;
    let launch = Launch::new().policy(&policy(30, None, ""), PolicyAt::EnvVar);
    let mut p = Plugin::launch(&component("hostile-provider"), Some(&engine.address), &launch).await.unwrap();
    p.boot(&engine.address, json!({})).await.unwrap();
    (engine, p)
}

#[tokio::test]
async fn logs_still_queued_at_cancel_reach_the_engine() {
    // A busy engine: 2 ms per Engine.Log call, so a burst of 150 takes the
    // forwarder ~300 ms, well inside the 1 s the host gives it at the end.
    let (engine, mut p) = hostile_for_busy_engine().await;
    let before = engine.log_count();
    contained(&mut p, "logFlood", json!({"count": 150, "size": 200})).await.unwrap();
    p.client.cancel(()).await.unwrap();
    let at_cancel = engine.log_count() - before;
    assert!(at_cancel < 150, "the burst was still queued when Cancel arrived ({at_cancel} sent)");
    // And hangs up, as the engine does, so the host stops at once rather than
    // after the grace it gives connections still open.
    let nowhere = tonic::transport::Channel::from_static("http://127.0.0.1:1").connect_lazy();
    p.client = resource_provider_client::ResourceProviderClient::new(nowhere);
    assert!(p.wait(Duration::from_secs(10)).await.is_some(), "the host exits after Cancel");
    assert_eq!(engine.log_count() - before, 150, "every message sent before Cancel arrived");
}

#[tokio::test]
async fn a_busy_engine_gets_every_line_of_many_resources_each_in_order() {
    // 8 resources log 300 lines each at once, to an engine that takes 2 ms
    // per Engine.Log: 2,400 lines (~2.8 MB as the host's 8 MiB log budget
    // counts them, 1 KiB a message at least) come in a burst far faster
    // than one call at a time sends them.
    // One call at a time, the host lost all but ~1,000 of them.
    let (engine, p) = hostile_for_busy_engine().await;
    let (resources, lines) = (8, 300);
    let res_urn = |r: usize| format!("urn:pulumi:dev::proj::hostile:index:Thing::t{r}");
    let calls: Vec<_> = (0..resources)
        .map(|r| {
            let mut c = p.client.clone();
            let args = json!({"count": lines, "size": 100, "urn": res_urn(r)});
            tokio::spawn(async move { c.invoke(invoke("hostile:index:logFlood", args)).await })
        })
        .collect();
    for call in calls {
        let answer = call.await.unwrap().expect("logFlood answered").into_inner();
        assert!(answer.failures.is_empty(), "{:?}", answer.failures);
    }
    let got = engine.wait_for_logs_within(Duration::from_secs(30), resources * lines, |l| l.urn.contains("::t")).await;
    assert_eq!(got.len(), resources * lines, "every line arrived; {} in all", engine.log_count());
    for r in 0..resources {
        let numbers: Vec<usize> = got
            .iter()
            .filter(|l| l.urn == res_urn(r))
            .map(|l| l.message.split(' ').next().unwrap().parse().unwrap())
            .collect();
        assert_eq!(numbers, (0..lines).collect::<Vec<_>>(), "t{r}'s lines in the order it logged them");
    }
}

// ---------------------------------------------------------------------------
// The kv example against a real REST API on loopback
// ---------------------------------------------------------------------------

const ITEM: &str = "kv:index:Item";
const TOKEN: &str = "s3cret-token";

fn urn(name: &str) -> String {
    format!("urn:pulumi:dev::proj::{ITEM}::{name}")
}

fn kv_policy(api: &KvApi) -> String {
    format!("[providers.kv]\nhttp = [\"{}\"]\nenv = [\"KV_TOKEN\"]\ntimeout-s = 60\n", api.url())
}

async fn kv(api: &KvApi, launch: Launch) -> (TestEngine, Plugin) {
    let engine = TestEngine::start().await;
    let mut p = Plugin::launch(&component("kv-provider"), Some(&engine.address), &launch).await.unwrap();
    p.boot(&engine.address, json!({"endpoint": api.url()})).await.unwrap();
    (engine, p)
}

fn check(name: &str, news: Json) -> CheckRequest {
    CheckRequest {
        urn: urn(name),
        name: name.into(),
        r#type: ITEM.into(),
        olds: Some(to_struct(json!({}))),
        news: Some(to_struct(news)),
        random_seed: vec![1; 32],
        ..Default::default()
    }
}

fn create(name: &str, inputs: &Option<prost_types::Struct>, preview: bool) -> CreateRequest {
    CreateRequest {
        urn: urn(name),
        name: name.into(),
        r#type: ITEM.into(),
        properties: inputs.clone(),
        timeout: 30.0,
        preview,
        ..Default::default()
    }
}

fn read(name: &str, id: &str, state: &Option<prost_types::Struct>) -> ReadRequest {
    ReadRequest {
        id: id.into(),
        urn: urn(name),
        name: name.into(),
        r#type: ITEM.into(),
        properties: state.clone(),
        inputs: state.clone(),
        ..Default::default()
    }
}

#[tokio::test]
async fn kv_lifecycle_through_the_host_with_its_grant() {
    let api = KvApi::start(Some(TOKEN)).await;
    let launch = Launch::new().policy(&kv_policy(&api), PolicyAt::Beside).env("KV_TOKEN", TOKEN);
    let (engine, mut p) = kv(&api, launch).await;
    let c = &mut p.client;

    // Check validates locally, by property path.
    let bad = c.check(check("a", json!({"key": "", "value": 3}))).await.unwrap().into_inner();
    let paths: Vec<&str> = bad.failures.iter().map(|f| f.property.as_str()).collect();
    assert_eq!(paths, vec!["key", "value"]);
    let inputs = json!({"key": "greeting", "value": "hello", "tags": {"env": "dev"}});
    let checked = c.check(check("a", inputs.clone())).await.unwrap().into_inner();
    assert!(checked.failures.is_empty(), "{:?}", checked.failures);
    let inputs_pb = checked.inputs;

    // A preview creates nothing.
    let preview = c.create(create("a", &inputs_pb, true)).await.unwrap().into_inner();
    assert_eq!(preview.id, "");
    assert!(api.seen().is_empty(), "a preview makes no request: {:?}", api.requests());

    // Create: PUT /items/greeting, with the token the user passed through.
    let created = c.create(create("a", &inputs_pb, false)).await.unwrap().into_inner();
    assert_eq!(created.id, "greeting");
    assert_eq!(from_struct(created.properties.as_ref()), inputs);
    let tags = BTreeMap::from([("env".to_string(), "dev".to_string())]);
    assert_eq!(api.item("greeting").map(|i| (i.value, i.tags)), Some(("hello".into(), Some(tags))));
    let seen = api.seen();
    assert_eq!(seen.last().map(|s| (s.method.as_str(), s.path.as_str())), Some(("PUT", "/items/greeting")));
    assert_eq!(seen.last().unwrap().authorization.as_deref(), Some(format!("Bearer {TOKEN}").as_str()));
    engine.wait_for_log(|l| l.urn == urn("a") && l.message.contains("created item")).await.expect("create's log");

    // Creating the same key again does not adopt the existing item.
    let err = c.create(create("b", &inputs_pb, false)).await.unwrap_err();
    assert_eq!(err.code(), Code::FailedPrecondition);
    assert!(err.message().contains("already exists"), "{}", err.message());

    // Read: no drift yet.
    let state = created.properties.clone();
    let r = c.read(read("a", "greeting", &state)).await.unwrap().into_inner();
    assert_eq!(r.id, "greeting");
    assert_eq!(from_struct(r.properties.as_ref()), inputs);

    // Someone changes the item on the server: Read sees it.
    api.put_direct("greeting", "changed behind pulumi's back", None);
    let r = c.read(read("a", "greeting", &state)).await.unwrap().into_inner();
    assert_eq!(r.id, "greeting");
    let drifted = from_struct(r.properties.as_ref());
    assert_eq!(drifted, json!({"key": "greeting", "value": "changed behind pulumi's back"}));
    assert_eq!(from_struct(r.inputs.as_ref()), drifted, "refresh updates the inputs too");

    // Diff: a new value updates in place, a new key replaces.
    let diff = |news: Json| DiffRequest {
        id: "greeting".into(),
        urn: urn("a"),
        name: "a".into(),
        r#type: ITEM.into(),
        olds: r.properties.clone(),
        news: Some(to_struct(news)),
        old_inputs: r.inputs.clone(),
        ..Default::default()
    };
    let new_inputs = json!({"key": "greeting", "value": "hello again", "tags": {"env": "prod"}});
    let d = c.diff(diff(new_inputs.clone())).await.unwrap().into_inner();
    assert_eq!(d.changes, DiffChanges::DiffSome as i32);
    assert!(d.replaces.is_empty(), "{:?}", d.replaces);
    let d = c.diff(diff(json!({"key": "other", "value": "hello again"}))).await.unwrap().into_inner();
    assert_eq!(d.replaces, vec!["key"]);

    // Update: PUT with the new value.
    let updated = c
        .update(UpdateRequest {
            id: "greeting".into(),
            urn: urn("a"),
            name: "a".into(),
            r#type: ITEM.into(),
            olds: r.properties.clone(),
            news: Some(to_struct(new_inputs.clone())),
            old_inputs: r.inputs.clone(),
            timeout: 30.0,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(from_struct(updated.properties.as_ref()), new_inputs);
    assert_eq!(api.item("greeting").unwrap().value, "hello again");

    // Delete, then Read reports the item gone.
    c.delete(DeleteRequest {
        id: "greeting".into(),
        urn: urn("a"),
        name: "a".into(),
        r#type: ITEM.into(),
        properties: updated.properties.clone(),
        old_inputs: Some(to_struct(new_inputs)),
        timeout: 30.0,
        ..Default::default()
    })
    .await
    .unwrap();
    assert!(api.items().is_empty());
    let gone = c.read(read("a", "greeting", &updated.properties)).await.unwrap().into_inner();
    assert_eq!(gone.id, "", "an item deleted on the server reads as gone");

    let methods: Vec<String> = api.requests();
    assert!(methods.iter().all(|m| m.ends_with("/items/greeting")), "{methods:?}");
}

#[tokio::test]
async fn kv_without_the_http_grant_fails_naming_it() {
    let api = KvApi::start(None).await;
    // Only the token is granted, not the API's address.
    let launch = Launch::new().policy("[providers.kv]\nenv = [\"KV_TOKEN\"]\n", PolicyAt::Flag).env("KV_TOKEN", TOKEN);
    let (_engine, mut p) = kv(&api, launch).await;
    let inputs = Some(to_struct(json!({"key": "k", "value": "v"})));
    let err = p.client.create(create("a", &inputs, false)).await.unwrap_err();
    assert_status(&err, Code::FailedPrecondition, &["missing grant", &api.url(), "kv"]);
    assert!(api.seen().is_empty(), "nothing reached the API: {:?}", api.requests());
    // The host keeps serving the provider.
    let ok = p.client.check(check("a", json!({"key": "k", "value": "v"}))).await.unwrap().into_inner();
    assert!(ok.failures.is_empty());
}

#[tokio::test]
async fn kv_does_not_see_its_token_unless_the_variable_is_granted() {
    let api = KvApi::start(Some(TOKEN)).await;
    // HTTP granted by flag; KV_TOKEN is set for the process but not granted.
    let launch = Launch::new().arg("--allow-http").arg(&api.url()).env("KV_TOKEN", TOKEN);
    let (_engine, mut p) = kv(&api, launch).await;
    let inputs = Some(to_struct(json!({"key": "k", "value": "v"})));
    let err = p.client.create(create("a", &inputs, false)).await.unwrap_err();
    let note = "missing grant: env \"KV_TOKEN\" for provider kv (the component declares it)";
    assert_status(&err, Code::FailedPrecondition, &["refused", note]);
    let seen = api.seen();
    assert_eq!(seen.len(), 1, "the request was allowed through: {:?}", api.requests());
    assert_eq!(seen[0].authorization, None, "no token reached the API");

    // With both flags the same plugin setup works.
    let launch =
        Launch::new().arg("--allow-http").arg(&api.url()).arg("--allow-env").arg("KV_TOKEN").env("KV_TOKEN", TOKEN);
    let (_engine, mut p) = kv(&api, launch).await;
    let created = p.client.create(create("a", &inputs, false)).await.unwrap().into_inner();
    assert_eq!(created.id, "k");
    assert_eq!(api.item("k").unwrap().value, "v");
}

#[tokio::test]
async fn a_granted_variable_missing_from_the_environment_is_named() {
    // The harness starts plugins without KV_TOKEN unless a launch sets it.
    let api = KvApi::start(Some(TOKEN)).await;
    let launch = Launch::new().arg("--allow-http").arg(&api.url()).arg("--allow-env").arg("KV_TOKEN");
    let (_engine, mut p) = kv(&api, launch).await;
    let inputs = Some(to_struct(json!({"key": "k", "value": "v"})));
    let err = p.client.create(create("a", &inputs, false)).await.unwrap_err();
    let note = "env \"KV_TOKEN\" is granted to provider kv but not set in its environment";
    assert_status(&err, Code::FailedPrecondition, &["refused", note]);
    assert!(!err.message().contains("missing grant"), "it is granted: {:?}", err.message());
}

#[tokio::test]
async fn grants_shows_declared_needs_and_what_is_missing() {
    let run = |extra: &[&str]| {
        let out = std::process::Command::new(host_bin())
            .arg("grants")
            .arg(component("kv-provider"))
            .args(extra)
            .env("PULUMI_WASM_CACHE_DIR", e2e_tests::cache_dir())
            .env_remove("KV_TOKEN")
            .output()
            .unwrap();
        assert!(out.status.success(), "grants failed: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let missing = |out: &str| out.lines().find(|l| l.starts_with("missing:")).unwrap_or_default().to_owned();
    let nothing = run(&[]);
    assert!(nothing.contains("http://127.0.0.1") && nothing.contains("KV_TOKEN"), "declared needs: {nothing}");
    let line = missing(&nothing);
    assert!(line.contains("http://127.0.0.1") && line.contains("KV_TOKEN"), "both are missing: {nothing}");
    // A policy file granting the HTTP need leaves the variable missing.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("policy.toml");
    std::fs::write(&file, "[providers.kv]\nhttp = [\"http://127.0.0.1\"]\n").unwrap();
    let some = run(&["--policy", file.to_str().unwrap()]);
    let line = missing(&some);
    assert!(!line.contains("http") && line.contains("KV_TOKEN"), "{some}");
    let all = run(&["--allow-http", "http://127.0.0.1", "--allow-env", "KV_TOKEN"]);
    assert_eq!(missing(&all), "missing: (none)", "{all}");
    // Granted, but this process has no KV_TOKEN to pass on.
    assert!(all.lines().any(|l| l == "granted but not set: KV_TOKEN"), "{all}");
}

#[tokio::test]
async fn kv_imports_an_item_known_only_by_its_key() {
    let api = KvApi::start(Some(TOKEN)).await;
    let launch = Launch::new().policy(&kv_policy(&api), PolicyAt::Beside).env("KV_TOKEN", TOKEN);
    let (_engine, mut p) = kv(&api, launch).await;
    let tags = BTreeMap::from([("owner".to_string(), "ops".to_string())]);
    api.put_direct("legacy", "made by hand", Some(tags));
    // `pulumi import kv:index:Item legacy legacy`: a Read with the ID and no state.
    let empty = Some(to_struct(json!({})));
    let imported = p.client.read(read("legacy", "legacy", &empty)).await.unwrap().into_inner();
    assert_eq!(imported.id, "legacy");
    let expected = json!({"key": "legacy", "value": "made by hand", "tags": {"owner": "ops"}});
    assert_eq!(from_struct(imported.properties.as_ref()), expected);
    assert_eq!(from_struct(imported.inputs.as_ref()), expected, "every property of an item is an input");
    // No such item: nothing to import.
    let missing = p.client.read(read("nothing", "nothing", &empty)).await.unwrap().into_inner();
    assert_eq!(missing.id, "");
}
