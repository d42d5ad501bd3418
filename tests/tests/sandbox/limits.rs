//! A guest that runs too long, too deep or too big, or panics, is stopped
//! with a clear error; the host stays up and idles quietly.

use super::*;

#[tokio::test]
async fn an_infinite_loop_is_stopped_at_the_deadline() {
    let (_engine, mut p) = hostile_with(&policy(3, None, "")).await;
    let start = Instant::now();
    let s = refused(&mut p, "loop", json!({})).await;
    assert_status(&s, Code::DeadlineExceeded, &["deadline"]);
    let took = start.elapsed();
    assert!(took >= Duration::from_millis(2500) && took < Duration::from_secs(20), "stopped after {took:?}");
}

/// A policy's limits hold from a component's first instruction: its start
/// code, and the plugin info it gives before it has named itself, run within
/// the largest limits any name could give it (here the defaults' 1 MiB, too
/// little for it), not the host's 512 MiB.
#[tokio::test]
async fn a_policy_s_limits_hold_before_the_component_names_itself() {
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("policy.toml");
    std::fs::write(&policy, "[defaults]\nmemory-mb = 1\n").unwrap();
    let run = tokio::process::Command::new(host_bin())
        .arg("serve")
        .arg("--policy")
        .arg(&policy)
        .arg(component("echo-provider"))
        .env("PULUMI_WASM_CACHE_DIR", dir.path().join("cache"))
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(60), run).await.expect("refused, not served").unwrap();
    assert!(!out.status.success() && out.stdout.is_empty(), "no port line: {out:?}");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("ran out of memory") && said.contains("limit of 1 MiB"), "{said}");
}

/// The largest `timeout-s` a policy file can hold (TOML's largest integer,
/// some 292 billion years) is capped, not added to the clock: that
/// overflowed and panicked each call.
#[tokio::test]
async fn an_absurd_timeout_in_the_policy_is_capped() {
    let (_engine, p) = hostile_with(&policy(i64::MAX as u64, None, "")).await;
    ok_call(&p, "under a policy with timeout-s = i64::MAX").await;
    ok_call(&p, "a second time, on a reused instance").await;
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

/// The hostile guest's `hold`: `mb` MiB allocated, then kept `ms`.
fn hold(p: &Plugin, mb: u64, ms: u64) -> impl Future<Output = Result<tonic::Response<InvokeResponse>, Status>> + use<> {
    let mut c = p.client.clone();
    async move { c.invoke(invoke("hostile:index:hold", json!({ "mb": mb, "sleepMs": ms }))).await }
}

/// Asserts a `hold` of `mb` MiB went through.
#[track_caller]
fn held(answer: Result<tonic::Response<InvokeResponse>, Status>, mb: u64) {
    let held = answer.unwrap_or_else(|e| panic!("{mb} MiB: {e:?}")).into_inner();
    assert_eq!(from_struct(held.r#return.as_ref())["held"], json!(mb as f64 * 1024.0 * 1024.0));
}

/// Each instance's limit alone would let a provider hold it in every
/// instance the engine's concurrent calls keep busy: all of them together
/// get `memory-total-mb`. Two instances holding 60 MiB fit in 160 MiB, a
/// third does not; which of the three calls is refused depends on timing,
/// but exactly one is, and the host serves on.
#[tokio::test]
async fn a_provider_s_instances_share_one_memory_limit() {
    let toml = policy(30, Some(128), "memory-total-mb = 160");
    let (_engine, p) = hostile_with(&toml).await;
    // Each allocates first, then holds it for 3 s: all three at once.
    let calls = [tokio::spawn(hold(&p, 60, 3000)), tokio::spawn(hold(&p, 60, 3000)), tokio::spawn(hold(&p, 60, 3000))];
    let mut all = Vec::new();
    for call in calls {
        all.push(call.await.unwrap());
    }
    let refused: Vec<&Status> = all.iter().filter_map(|r| r.as_ref().err()).collect();
    assert_eq!(refused.len(), 1, "{all:?}");
    assert_status(refused[0], Code::ResourceExhausted, &["ran out of memory", "160 MiB", "memory-total-mb"]);
    // Memory goes back with the instances: one after another, each fits.
    // Idle instances keep no more than a quarter of the 160 MiB, so the
    // call that needs 100 MiB does not get one already grown by 60.
    for mb in [60, 60, 100] {
        held(hold(&p, mb, 0).await, mb);
    }
}

/// Idle instances hold memory too: a running one that needs it drops them.
/// Three calls leave three instances of ~10 MiB idle (under the quarter
/// of the 128 MiB total that idle ones may keep); a call of 110 MiB then
/// needs more than the 128 MiB beside them.
#[tokio::test]
async fn a_running_instance_gets_the_memory_idle_ones_hold() {
    let toml = policy(30, Some(128), "memory-total-mb = 128");
    let (_engine, p) = hostile_with(&toml).await;
    let calls = [tokio::spawn(hold(&p, 8, 500)), tokio::spawn(hold(&p, 8, 500)), tokio::spawn(hold(&p, 8, 500))];
    for call in calls {
        held(call.await.unwrap(), 8);
    }
    held(hold(&p, 110, 0).await, 110);
}

/// A reused instance's memory is already grown, and its allocator may not
/// reuse it for a larger block: an instance kept idle holds no more than a
/// quarter of its limit, so a call after another still has most of it.
#[tokio::test]
async fn a_call_on_a_reused_instance_still_has_most_of_its_memory_limit() {
    let (_engine, p) = hostile_with(&policy(30, Some(128), "")).await;
    for mb in [60, 100, 30, 90] {
        held(hold(&p, mb, 0).await, mb);
    }
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
    // The guest's stderr (the panic's lines) is escaped: it goes into the host's log too.
    assert!(s.message().contains("asked to panic\\nnote: "), "{}", s.message());
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

/// Host handles a guest keeps past its calls (each may hold a socket or a
/// request in the host, outside its memory limit) do not pile up: an
/// instance that keeps many is not reused.
#[tokio::test]
async fn an_instance_that_keeps_many_host_handles_is_not_reused() {
    let (_engine, p) = hostile_with(&policy(30, None, "")).await;
    // One call at a time, so each lands on the instance the last one left.
    let leak = |count: u32| {
        let mut client = p.client.clone();
        async move {
            let r = client.invoke(invoke("hostile:index:leakHandles", json!({ "count": count }))).await.unwrap();
            from_struct(r.into_inner().r#return.as_ref())["kept"].as_f64().expect("kept")
        }
    };
    // A few are kept along: the instance goes on.
    assert_eq!(leak(10).await, 10.0);
    assert_eq!(leak(0).await, 10.0);
    // Thousands: the next call starts on a fresh instance.
    assert_eq!(leak(2000).await, 2010.0);
    assert_eq!(leak(0).await, 0.0);
    ok_call(&p, "after recycling").await;
}

/// What a guest keeps in the host through its handles counts against its
/// memory limit beside its linear memory: unsent request bodies (no grant
/// needed; wasmtime let each buffer 2 MiB), headers, file streams and
/// directory listings. A few pass; many end the call as running out of
/// memory does, and the host serves on with its memory back.
#[tokio::test]
async fn what_a_guest_keeps_in_the_host_counts_against_its_memory_limit() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("file.txt"), "x".repeat(100_000)).unwrap();
    // A listing of ~500 KiB: 2,000 names of 200 bytes.
    for i in 0..2000 {
        std::fs::write(dir.path().join(format!("{i:0>200}")), "").unwrap();
    }
    let grant = format!("dirs = [{{ host = \"{}\", guest = \"/data\", read-only = true }}]", dir.path().display());
    let (_engine, mut p) = hostile_with(&policy(60, Some(32), &grant)).await;
    let pin = |kind: &str, count: u32| json!({ "kind": kind, "count": count });
    // A body takes two writes of 64 KiB before the host wants it sent.
    let few = contained(&mut p, "pin", pin("bodies", 4)).await.unwrap();
    assert_eq!(few, json!({"kept": 4.0, "buffered": 131072.0}));
    for (kind, many) in [("bodies", 1000), ("fields", 2000), ("streams", 1000), ("listings", 200)] {
        let few = contained(&mut p, "pin", pin(kind, 4)).await.unwrap();
        assert_eq!(few["kept"], json!(4.0), "{kind}");
        let s = refused(&mut p, "pin", pin(kind, many)).await;
        assert_status(&s, Code::ResourceExhausted, &["ran out of memory", "limit of 32 MiB"]);
    }
    // Linear memory cannot grow into what the handles hold: ~20 MiB of
    // headers leave no room for 16 MiB more.
    let headers = |grow: u32| json!({ "kind": "fields", "count": 600, "grow": grow << 20 });
    assert_eq!(contained(&mut p, "pin", headers(4)).await.unwrap()["kept"], json!(600.0));
    let s = refused(&mut p, "pin", headers(16)).await;
    assert_status(&s, Code::ResourceExhausted, &["ran out of memory", "limit of 32 MiB"]);
}

/// Files and connections are the host process's, bounded for all its
/// instances by the system: one instance may keep 256 files and 16
/// connections open, and the host raises its soft limit of open files to
/// the hard one (Linux's soft 1024 would not hold 16 instances' worth).
#[tokio::test]
async fn an_instance_keeps_a_bounded_number_of_files_and_connections() {
    // A server that sends a head and part of a body, then holds the connection.
    let (port, held) = super::escape::stalling_server(b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nabc").await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("file.txt"), "x").unwrap();
    let grants = format!(
        "dirs = [{{ host = \"{}\", guest = \"/data\", read-only = true }}]\nhttp-private = [\"http://127.0.0.1:{port}\"]",
        dir.path().display(),
    );
    // Started under a soft limit of 1024 files, as from a shell.
    const NOFILE: rlimit::Resource = rlimit::Resource::NOFILE;
    let (soft, hard) = NOFILE.get().unwrap();
    NOFILE.set(hard.min(1024), hard).unwrap();
    let launched = hostile_with(&policy(30, None, &grants)).await;
    NOFILE.set(soft, hard).unwrap();
    let (_engine, mut p) = launched;
    let limits = std::fs::read_to_string(format!("/proc/{}/limits", p.pid().unwrap())).unwrap();
    let line = limits.lines().find(|l| l.starts_with("Max open files")).unwrap().to_owned();
    let [soft_now, hard_now] = [3, 4].map(|i| line.split_whitespace().nth(i).unwrap().to_owned());
    assert_eq!((soft_now.as_str(), hard_now), (hard.to_string().as_str(), hard.to_string()), "{line}");

    let files = |count: u32| json!({ "kind": "files", "count": count });
    assert_eq!(contained(&mut p, "pin", files(200)).await.unwrap()["kept"], json!(200.0));
    let s = refused(&mut p, "pin", files(300)).await;
    assert!(s.message().contains("256 files are open, the most one instance may keep"), "{s:?}");

    let responses = |count: u32, keep: bool| json!({ "kind": "responses", "count": count, "keep": keep, "authority": format!("127.0.0.1:{port}") });
    // Dropped as they come, each response ends its connection.
    assert_eq!(contained(&mut p, "pin", responses(40, false)).await.unwrap()["kept"], json!(40.0));
    // Kept unread, each keeps one: a 17th waits its connect timeout (0.5 s) and fails.
    let s = refused(&mut p, "pin", responses(17, true)).await;
    assert!(s.message().contains("ConnectionLimitReached"), "{s:?}");
    assert!(s.message().contains("keeps 16 connections open, the most one instance may"), "{s:?}");
    held.abort();
}
