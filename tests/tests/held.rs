//! Long asset texts stay in the host (contract 0.3.1): a component that
//! passes an asset on never has its text in its memory, reads it through
//! the host when it needs it, and cannot use a handle it was not given in
//! the call at hand. Components built against 0.3.0 get every text copied
//! in, as before.

use e2e_tests::json::{ASSET_SIG, SIG_KEY};
use e2e_tests::{
    Launch, Plugin, PolicyAt, TestEngine, TestMonitor, component, from_struct, host_bin, older_component, to_struct,
};
use pulumirpc::*;
use serde_json::{Value as Json, json};
use tonic::Code;

fn text_asset(text: String) -> Json {
    json!({ SIG_KEY: ASSET_SIG, "text": text, "hash": "0".repeat(64) })
}

async fn launched(file: &std::path::Path, policy: &str) -> (TestEngine, Plugin) {
    let engine = TestEngine::start().await;
    let launch = Launch::new().policy(policy, PolicyAt::EnvVar);
    let mut p = Plugin::launch(file, Some(&engine.address), &launch).await.unwrap();
    p.boot(&engine.address, json!({})).await.unwrap();
    (engine, p)
}

fn check(news: &Json) -> CheckRequest {
    CheckRequest {
        urn: "urn:pulumi:dev::proj::echo:index:Thing::t".into(),
        r#type: "echo:index:Thing".into(),
        news: Some(to_struct(news.clone())),
        ..Default::default()
    }
}

/// A 40 MiB text through a guest whose memory is capped at 32 MiB: the
/// 0.3.1 echo gives the asset back whole, its text never in its memory;
/// the same echo built against 0.3.0 has the text copied in and runs out
/// of memory. Both hosts go on serving.
#[tokio::test]
async fn an_asset_larger_than_the_guests_memory_passes_through_a_guest_that_leaves_it_in_the_host() {
    let policy = "[providers.echo]\nmemory-mb = 32\n";
    let news = json!({ "big": text_asset("a".repeat(40 << 20)), "small": text_asset("b".repeat(2000)) });
    let expected = from_struct(Some(&to_struct(news.clone())));
    for (file, held) in [(component("echo-provider"), true), (older_component("0.3.0", "echo_provider"), false)] {
        let (_engine, mut p) = launched(&file, policy).await;
        let answer = p.client.check(check(&news)).await;
        match (held, answer) {
            (true, Ok(r)) => assert!(from_struct(r.into_inner().inputs.as_ref()) == expected, "the asset changed"),
            (false, Err(s)) => {
                assert_eq!(s.code(), Code::ResourceExhausted, "{}", s.message());
                assert!(s.message().contains("ran out of memory"), "{}", s.message());
            }
            (true, Err(s)) => panic!("the 0.3.1 echo failed: {s:?}; stderr: {}", p.stderr()),
            (false, Ok(_)) => panic!("the 0.3.0 echo took 40 MiB into 32 MiB of memory"),
        }
        let small = json!({ "small": text_asset("c".repeat(3000)) });
        let r = p.client.check(check(&small)).await.expect("the host goes on serving").into_inner();
        assert_eq!(from_struct(r.inputs.as_ref()), small);
    }
}

/// The guest sees a long text as held until it reads it; reading gives the
/// text; a short one is in the guest from the start, as before.
#[tokio::test]
async fn a_guest_reads_a_held_text_through_the_host() {
    let (_engine, mut p) = launched(&component("hostile-provider"), "").await;
    let long = format!("héllo {}", "x".repeat(5000));
    for (text, read, held) in
        [(long.clone(), true, true), (long.clone(), false, true), ("short".to_owned(), true, false)]
    {
        let args = json!({ "asset": text_asset(text.clone()), "read": read });
        let req = InvokeRequest { tok: "hostile:index:held".into(), args: Some(to_struct(args)), preview: false };
        let out = from_struct(p.client.invoke(req).await.unwrap().into_inner().r#return.as_ref());
        assert_eq!(out["held"], json!(held), "{text:.20}");
        assert_eq!(out["length"], json!(text.len() as f64));
        let head: String = if read { text.chars().take(16).collect() } else { String::new() };
        assert_eq!(out["head"], json!(head));
        assert_eq!(out["asset"]["text"], json!(text), "the asset comes back whole, read or not");
        assert_eq!(out["again"], out["asset"], "and so does the same asset named twice");
    }
}

/// An answer that names one held text hundreds of times (each a copy once
/// built for the engine) is refused at the host's 400 MiB budget, and the
/// host goes on serving; within the budget the copies come back whole.
#[tokio::test]
async fn a_held_text_named_past_the_budget_is_refused() {
    let (_engine, mut p) = launched(&component("hostile-provider"), "").await;
    let text = "m".repeat(1 << 20);
    let held = |times: u32| InvokeRequest {
        tok: "hostile:index:held".into(),
        args: Some(to_struct(json!({ "asset": text_asset(text.clone()), "times": times }))),
        preview: false,
    };
    let out = from_struct(p.client.invoke(held(10)).await.unwrap().into_inner().r#return.as_ref());
    assert_eq!(out["copies"].as_array().map(Vec::len), Some(10));
    assert_eq!(out["copies"][9]["text"], json!(text));
    let s = p.client.invoke(held(420)).await.expect_err("422 MiB of copies");
    assert_eq!(s.code(), Code::ResourceExhausted, "{}", s.message());
    assert!(s.message().contains("more than 400 MiB"), "{}", s.message());
    let out =
        from_struct(p.client.invoke(held(1)).await.expect("the host goes on serving").into_inner().r#return.as_ref());
    assert_eq!(out["held"], json!(true));
}

/// A held text kept past its call cannot be read in a later one, even one
/// that was given held texts of its own: the guest's call fails saying so,
/// and the host goes on serving.
#[tokio::test]
async fn a_held_text_kept_past_its_call_cannot_be_read_later() {
    let (_engine, mut p) = launched(&component("hostile-provider"), "").await;
    let invoke = |tok: &str, args: Json| InvokeRequest {
        tok: format!("hostile:index:{tok}"),
        args: Some(to_struct(args)),
        preview: false,
    };
    let kept = p.client.invoke(invoke("keepHeld", json!({ "asset": text_asset("k".repeat(4096)) }))).await;
    assert_eq!(from_struct(kept.unwrap().into_inner().r#return.as_ref())["held"], json!(true));
    let s = p
        .client
        .invoke(invoke("readKept", json!({ "own": text_asset("o".repeat(4096)) })))
        .await
        .expect_err("a stale handle was read");
    assert_eq!(s.code(), Code::Internal, "{}", s.message());
    assert!(s.message().contains("is not this call's"), "{}", s.message());
    let ok = p.client.invoke(invoke("ok", json!({}))).await.expect("the host goes on serving");
    assert_eq!(from_struct(ok.into_inner().r#return.as_ref())["ok"], json!(true));
}

/// A held text a component hands to the resource monitor reaches it whole:
/// the pets kennel passes its `owner` on to each pet it registers and into
/// its own outputs (the monitor's answers name it too). A 12 MiB
/// owner copied into a guest capped at 24 MiB does not fit, as the kennel
/// keeps it in three places (the 0.2.0 build, which gets every text
/// copied, runs out of memory); held, it never enters the guest.
#[tokio::test]
async fn a_held_text_handed_to_the_monitor_reaches_it_whole() {
    let policy = "[providers.pets]\nmemory-mb = 24\npackages = [\"random\"]\n";
    let owner = text_asset("o".repeat(12 << 20));
    let owner_wire = from_struct(Some(&to_struct(json!({ "owner": owner.clone() }))))["owner"].clone();
    for (file, held) in [(component("pets-provider"), true), (older_component("0.2.0", "pets_provider"), false)] {
        let (_engine, mut p) = launched(&file, policy).await;
        let monitor = TestMonitor::start().await;
        let req = ConstructRequest {
            project: "proj".into(),
            stack: "dev".into(),
            monitor_endpoint: monitor.address.clone(),
            r#type: "pets:index:Kennel".into(),
            name: "k".into(),
            parent: "urn:pulumi:dev::proj::pulumi:pulumi:Stack::proj-dev".into(),
            inputs: Some(to_struct(json!({ "size": 1, "owner": owner.clone() }))),
            ..Default::default()
        };
        match (held, p.client.construct(req).await) {
            (true, Ok(r)) => {
                let pet = monitor.registration("k-pet-0");
                assert!(from_struct(pet.object.as_ref())["prefix"] == owner_wire, "the pet's prefix changed");
                let outputs = &monitor.received().outputs;
                assert!(from_struct(outputs[0].outputs.as_ref())["owner"] == owner_wire, "the kennel's owner changed");
                assert!(from_struct(r.into_inner().state.as_ref())["owner"] == owner_wire, "the state's owner changed");
            }
            (false, Err(s)) => {
                assert_eq!(s.code(), Code::ResourceExhausted, "{}", s.message());
                assert!(s.message().contains("ran out of memory"), "{}", s.message());
            }
            (true, Err(s)) => panic!("the 0.3.1 kennel failed: {s:?}; stderr: {}", p.stderr()),
            (false, Ok(_)) => panic!("the 0.2.0 kennel fit three copies of 12 MiB into 24 MiB"),
        }
    }
}

/// `pulumi-wasm info` tells a 0.3.0 component from a 0.3.1 one, though one
/// set of the host's bindings serves both.
#[test]
fn info_names_the_contract_a_component_was_built_against() {
    for (file, contract) in [
        (component("echo-provider"), "pulumi:provider@0.3.1"),
        (older_component("0.3.0", "echo_provider"), "pulumi:provider@0.3.0"),
    ] {
        let out = std::process::Command::new(host_bin())
            .args(["info", file.to_str().unwrap()])
            .env("PULUMI_WASM_CACHE_DIR", e2e_tests::cache_dir())
            .output()
            .unwrap();
        let info = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "info failed: {}", String::from_utf8_lossy(&out.stderr));
        let line = info.lines().find(|l| l.starts_with("contract:")).unwrap_or_else(|| panic!("no contract in {info}"));
        assert_eq!(line.trim_start_matches("contract:").trim(), contract, "{}", file.display());
    }
}
