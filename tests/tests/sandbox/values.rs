//! Values a host will not take, floods of log lines, and words meant for
//! the user's terminal.

use super::*;

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
        "overlapping",
    ] {
        let s = refused(&mut p, "malformed", json!({"kind": kind})).await;
        // Too deep or too large is a limit of the host's, not a broken value.
        let (code, words) = match kind {
            "deep" => (Code::ResourceExhausted, ["over the host's limits", "nested too deep to be read back"]),
            "overlapping" => (Code::ResourceExhausted, ["over the host's limits", "more than 400 MiB"]),
            _ => (Code::Internal, ["invalid", ""]),
        };
        assert_status(&s, code, &words);
    }
}

#[tokio::test]
async fn a_create_with_an_invalid_state_still_gives_the_engine_its_id() {
    // The resource exists: without its id the engine would record nothing,
    // and nothing would ever delete it.
    let (_engine, mut p) = hostile_with(&policy(60, None, "")).await;
    for (kind, init_failed_too) in [("duplicateKeys", false), ("deep", false), ("cycle", true)] {
        let request = CreateRequest {
            urn: "urn:pulumi:dev::proj::hostile:index:Malformed::m".into(),
            name: "m".into(),
            r#type: "hostile:index:Malformed".into(),
            properties: Some(to_struct(json!({ "kind": kind, "initFailed": init_failed_too }))),
            ..Default::default()
        };
        let s = p.client.create(request).await.expect_err("an invalid state is refused");
        let what = format!("{kind}, initFailed {init_failed_too}: {s:?}");
        assert_eq!(s.code(), Code::Unknown, "{what}");
        assert!(s.message().contains("only its id is kept"), "{what}");
        let detail = e2e_tests::init_failed(&s);
        assert_eq!(detail.id, "made-1", "{what}");
        assert!(detail.properties.is_none(), "{what}");
        assert!(detail.reasons.iter().any(|r| r.contains("refresh it to read the rest")), "{what}");
        assert_eq!(detail.reasons.iter().any(|r| r == "half made"), init_failed_too, "{what}");
    }
    // A preview makes nothing: an invalid answer is only that.
    let preview = CreateRequest {
        urn: "urn:pulumi:dev::proj::hostile:index:Malformed::m".into(),
        name: "m".into(),
        r#type: "hostile:index:Malformed".into(),
        properties: Some(to_struct(json!({ "kind": "duplicateKeys" }))),
        preview: true,
        ..Default::default()
    };
    let s = p.client.create(preview).await.expect_err("an invalid answer");
    assert_eq!((s.code(), s.details().is_empty()), (Code::Internal, true), "{s:?}");
    // An update that did not finish with an invalid state: the engine must
    // keep the state it has, so no detail (which it would record as the
    // new, empty, state), and UNKNOWN: the change may have happened.
    let update = UpdateRequest {
        id: "made-1".into(),
        urn: "urn:pulumi:dev::proj::hostile:index:Malformed::m".into(),
        r#type: "hostile:index:Malformed".into(),
        olds: Some(to_struct(json!({ "kind": "a" }))),
        news: Some(to_struct(json!({ "kind": "duplicateKeys" }))),
        ..Default::default()
    };
    let s = p.client.update(update).await.expect_err("an invalid state");
    assert_eq!((s.code(), s.details().is_empty()), (Code::Unknown, true), "{s:?}");
    assert!(s.message().contains("half updated") && s.message().contains("its state was invalid"), "{s:?}");
    ok_call(&p, "after the invalid creates").await;
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

#[tokio::test]
async fn a_guests_words_reach_the_terminal_escaped() {
    let (engine, mut p) = hostile_with(&policy(10, None, "")).await;
    // Set the clipboard (OSC 52), clear the screen, reverse what follows,
    // forge a line, colour it and swallow the rest (the Pulumi CLI's own
    // markup, an unknown directive, one never closed), hide text (a Hangul
    // filler, bytes as a run of variation selectors); newlines, tabs,
    // accents, an emoji's joiner and its one selector are words.
    let words = "ok\x1b]52;c;ZXZpbA==\x07\x1b[2J\u{202e}txt.exe\r\u{2028}forged<{%fg 1%}><{%x%}><{%\u{3164}a\u{fe0f}\u{e0141}\nline two\tend é 👩\u{200d}💻❤\u{fe0f}";
    let acts = "ok\\u{1b}]52;c;ZXZpbA==\\u{7}\\u{1b}[2J\\u{202e}txt.exe\\r\\u{2028}forged<\\{%fg 1%\\}><\\{%x%\\}><\\{%\\u{3164}a\u{fe0f}\\u{e0141}";
    let shown = format!("{acts}\nline two\tend é 👩\u{200d}💻❤\u{fe0f}");
    let said = p.client.invoke(invoke("hostile:index:say", json!({"text": words}))).await.unwrap().into_inner();
    let [failure] = &said.failures[..] else { panic!("one failure: {:?}", said.failures) };
    assert_eq!(failure.reason, shown, "a check failure's reason");
    assert_eq!(failure.property, format!("{acts}\\nline two\\tend é 👩\u{200d}💻❤\u{fe0f}"), "its property: one line");
    let s = p.client.invoke(invoke("hostile:index:say", json!({"text": words, "fail": true}))).await.unwrap_err();
    assert!(s.message().contains(&shown), "the status: {:?}", s.message());
    let logs = engine.wait_for_logs(2, |l| l.message.starts_with("ok")).await;
    assert_eq!(logs.len(), 2, "both calls logged the words");
    for log in logs {
        assert_eq!(log.message, shown, "Engine.Log");
    }
    ok_call(&p, "after the words").await;
}
