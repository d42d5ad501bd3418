//! `pulumi-random-native` started exactly as the engine starts a plugin,
//! answering like the packed WebAssembly component of the same code.

use std::path::Path;
use std::time::Duration;

use e2e_tests::{Plugin, TestEngine, component, from_struct, to_struct};
use pulumirpc::*;
use serde_json::json;

const STRING: &str = "random:index:RandomString";
const URN: &str = "urn:pulumi:dev::proj::random:index:RandomString::s";

fn check(news: serde_json::Value) -> CheckRequest {
    CheckRequest {
        urn: URN.into(),
        name: "s".into(),
        r#type: STRING.into(),
        olds: Some(to_struct(json!({}))),
        news: Some(to_struct(news)),
        ..Default::default()
    }
}

async fn native(engine: &TestEngine) -> Plugin {
    let exe = Path::new(env!("CARGO_BIN_EXE_pulumi-random-native"));
    let mut p = Plugin::spawn(exe, std::slice::from_ref(&engine.address)).await.unwrap();
    p.boot(&engine.address, json!({})).await.unwrap();
    p
}

#[tokio::test]
async fn native_and_wasm_answer_alike() {
    let engine = TestEngine::start().await;
    let mut n = native(&engine).await;
    let mut w = Plugin::packed(&component("random-provider"), Some(&engine.address)).await.unwrap();
    w.boot(&engine.address, json!({})).await.unwrap();

    let nv = n.client.get_plugin_info(()).await.unwrap().into_inner().version;
    let wv = w.client.get_plugin_info(()).await.unwrap().into_inner().version;
    assert_eq!(nv, wv);

    for news in [json!({ "length": 12, "special": false }), json!({ "length": 0, "bogus": 1 })] {
        let a = n.client.check(check(news.clone())).await.unwrap().into_inner();
        let b = w.client.check(check(news)).await.unwrap().into_inner();
        assert_eq!(from_struct(a.inputs.as_ref()), from_struct(b.inputs.as_ref()));
        assert_eq!(a.failures, b.failures);
    }
    let schema = |s: GetSchemaResponse| serde_json::from_str::<serde_json::Value>(&s.schema).unwrap();
    let a = schema(n.client.get_schema(GetSchemaRequest::default()).await.unwrap().into_inner());
    let b = schema(w.client.get_schema(GetSchemaRequest::default()).await.unwrap().into_inner());
    assert_eq!(a, b);

    // An unknown type is the same gRPC error.
    let mut bad = check(json!({ "length": 4 }));
    bad.r#type = "random:index:Nope".into();
    let a = n.client.check(bad.clone()).await.unwrap_err();
    let b = w.client.check(bad).await.unwrap_err();
    assert_eq!((a.code(), a.message()), (b.code(), b.message()));
}

#[tokio::test]
async fn create_update_delete_natively() {
    let engine = TestEngine::start().await;
    let mut p = native(&engine).await;
    let inputs = p.client.check(check(json!({ "length": 24 }))).await.unwrap().into_inner().inputs;
    let created = p
        .client
        .create(CreateRequest {
            urn: URN.into(),
            r#type: STRING.into(),
            properties: inputs.clone(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let state = from_struct(created.properties.as_ref());
    assert_eq!(state["result"].as_str().unwrap().chars().count(), 24);
    assert_eq!(created.id, state["result"].as_str().unwrap());
    let updated = p
        .client
        .update(UpdateRequest {
            id: created.id.clone(),
            urn: URN.into(),
            r#type: STRING.into(),
            olds: created.properties.clone(),
            news: inputs.clone(),
            old_inputs: inputs.clone(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(from_struct(updated.properties.as_ref())["result"], state["result"]);
    p.client
        .delete(DeleteRequest {
            id: created.id,
            urn: URN.into(),
            r#type: STRING.into(),
            properties: created.properties,
            old_inputs: inputs,
            ..Default::default()
        })
        .await
        .unwrap();
    // Logs reach Engine.Log, as the component's do, not stderr.
    let logged = |l: &LogRequest| l.message.contains("generated a random string of 24 characters");
    let log = engine.wait_for_log(logged).await.expect("the provider's log reached the engine");
    assert_eq!(log.urn, URN);
    assert!(!p.stderr().contains("generated a random string"), "{}", p.stderr());

    // SIGINT stops it cleanly, as it does the wasm plugin.
    p.interrupt().unwrap();
    let status = p.wait(Duration::from_secs(10)).await.expect("exited");
    assert!(status.success(), "{status:?}");
}
