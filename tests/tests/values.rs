//! Every value kind survives wire -> WIT -> guest -> WIT -> wire unchanged,
//! and malformed values are refused without hurting the host.

use e2e_tests::json::sig;
use e2e_tests::{Plugin, TestEngine, booted, component, from_struct, older_component, to_struct};
use pulumirpc::*;
use serde_json::{Value, json};
use tonic::Code;

fn every_kind() -> Value {
    let mut deep = json!("bottom");
    for i in 0..20 {
        deep = if i % 2 == 0 { json!([deep]) } else { json!({ "level": deep }) };
    }
    json!({
        "null": null,
        "bool": true,
        "number": 3.25,
        "string": "hello ✓",
        "array": [1, "two", false, null],
        "object": {"a": {"b": {"c": 1}}},
        "secret": sig("secret", json!({"value": {"password": "hunter2"}})),
        "unknownBool": "1c4a061d-8072-4f0a-a4cb-0ff528b18fe7",
        "unknownNumber": "3eeb2bf0-c639-47a8-9e75-3b44932eb421",
        "unknownString": "04da6b54-80e4-46f7-96ec-b56ff0331ba9",
        "unknownArray": "6a19a0b0-7e62-4c92-b797-7f8e31da9cc2",
        "unknownAsset": "030794c1-ac77-496b-92df-f27374a8bd58",
        "unknownArchive": "e48ece36-62e2-4504-bad9-02848725956a",
        "unknownObject": "dd056dcd-154b-4c76-9bd3-c8f88648b5ff",
        "assetText": sig("asset", json!({"text": "contents", "hash": "d1b2a59fbea7e20077af9f91b27e95e865061b270be03ff539ab3b73587882e8"})),
        // 1 KiB or more: in `long`, or held by the host for a 0.3.1 guest.
        "assetLongText": sig("asset", json!({"text": "long ✓ ".repeat(400)})),
        "assetPath": sig("asset", json!({"path": "./file.txt"})),
        "assetUri": sig("asset", json!({"uri": "https://example.com/a.txt"})),
        "assetHashOnly": sig("asset", json!({"hash": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"})),
        "archiveAssets": sig("archive", json!({"assets": {
            "a.txt": sig("asset", json!({"text": "a"})),
            "long.txt": sig("asset", json!({"text": "member ".repeat(300)})),
            "nested": sig("archive", json!({"path": "./dir"})),
        }})),
        "archivePath": sig("archive", json!({"path": "./site.zip"})),
        "archiveUri": sig("archive", json!({"uri": "https://example.com/site.tgz"})),
        "ref": sig("ref", json!({"urn": "urn:pulumi:dev::proj::random:index:RandomPet::p", "id": "pet-1", "packageVersion": "1.2.3"})),
        "refUnknownId": sig("ref", json!({"urn": "urn:pulumi:dev::proj::random:index:RandomPet::q", "id": ""})),
        "refComponent": sig("ref", json!({"urn": "urn:pulumi:dev::proj::my:index:Component::c"})),
        "output": sig("output", json!({"value": "known", "secret": true, "dependencies": ["urn:a", "urn:b"]})),
        "outputUnknown": sig("output", json!({"dependencies": ["urn:a"]})),
        "outputPlain": sig("output", json!({"value": [1, 2]})),
        "bytes": sig("bytes", json!({"value": "/wD+AQ=="})),
        "deep": deep,
    })
}

async fn echo() -> (TestEngine, Plugin) {
    booted(&component("echo-provider")).await
}

#[tokio::test]
async fn every_value_kind_round_trips_through_the_guest() {
    round_trips_every_value_kind(&component("echo-provider")).await;
}

/// The same through a component built against 0.1.0: the host converts
/// each value to 0.2.0's form, then to 0.1.0's nodes on the way in, and
/// back on the way out.
#[tokio::test]
async fn every_value_kind_round_trips_through_a_0_1_0_guest() {
    round_trips_every_value_kind(&older_component("0.1.0", "echo_provider")).await;
}

/// The same through a component built against 0.2.0: values in 0.2.0's
/// nodes (variants and tuples) rather than 0.3.0's words.
#[tokio::test]
async fn every_value_kind_round_trips_through_a_0_2_0_guest() {
    round_trips_every_value_kind(&older_component("0.2.0", "echo_provider")).await;
}

/// The same through a component built against 0.3.0, which does not read
/// held texts: long asset texts are copied in and out, as before 0.3.1.
#[tokio::test]
async fn every_value_kind_round_trips_through_a_0_3_0_guest() {
    round_trips_every_value_kind(&older_component("0.3.0", "echo_provider")).await;
}

async fn round_trips_every_value_kind(file: &std::path::Path) {
    let (_engine, mut p) = booted(file).await;
    let input = every_kind();
    // Numbers are doubles on the wire: compare against the normalised form.
    let expected = from_struct(Some(&to_struct(input.clone())));
    let out = p
        .client
        .invoke(InvokeRequest { tok: "echo:index:echo".into(), args: Some(to_struct(input.clone())), preview: false })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(from_struct(out.r#return.as_ref()), expected);

    // The same values as resource inputs through Check.
    let checked = p
        .client
        .check(CheckRequest {
            urn: "urn:pulumi:dev::proj::echo:index:Thing::t".into(),
            r#type: "echo:index:Thing".into(),
            news: Some(to_struct(input.clone())),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(from_struct(checked.inputs.as_ref()), expected);
}

#[tokio::test]
async fn byte_strings_need_negotiation() {
    let engine = TestEngine::start().await;
    let mut p = Plugin::packed(&component("echo-provider"), Some(&engine.address)).await.unwrap();
    // An engine that does not accept byte strings must not be sent one.
    p.client
        .handshake(ProviderHandshakeRequest {
            engine_address: engine.address.clone(),
            accepts_byte_string: false,
            ..Default::default()
        })
        .await
        .unwrap();
    let args = json!({"bytes": sig("bytes", json!({"value": "/wD+AQ=="}))});
    let err = p
        .client
        .invoke(InvokeRequest { tok: "echo:index:echo".into(), args: Some(to_struct(args)), preview: false })
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::Internal);
    assert!(err.message().contains("byte"), "{}", err.message());
}

/// An echo invoke after a refusal: the host kept serving.
async fn still_serves(p: &mut Plugin) {
    let ok = p
        .client
        .invoke(InvokeRequest { tok: "echo:index:echo".into(), args: Some(to_struct(json!({"y": 1}))), preview: false })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(from_struct(ok.r#return.as_ref()), json!({"y": 1.0}));
}

#[tokio::test]
async fn malformed_values_are_refused_and_the_host_keeps_serving() {
    let (_engine, mut p) = echo().await;
    let cases = [
        json!({"x": sig("secret", json!({}))}),
        json!({"x": sig("not-a-signature", json!({"value": 1}))}),
        json!({"x": sig("ref", json!({"urn": 5}))}),
        json!({"x": sig("bytes", json!({"value": "%%% not base64"}))}),
    ];
    for args in cases {
        let err = p
            .client
            .invoke(InvokeRequest {
                tok: "echo:index:echo".into(),
                args: Some(to_struct(args.clone())),
                preview: false,
            })
            .await
            .unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument, "{args}: {}", err.message());
        assert!(err.message().contains('x'), "names the property: {}", err.message());
    }
    still_serves(&mut p).await;
}

#[tokio::test]
async fn a_value_nested_past_the_decoders_limit_is_an_invalid_argument() {
    // INTERNAL from a Create would tell the engine the resource may exist.
    let (_engine, mut p) = echo().await;
    let mut deep = json!("leaf");
    for _ in 0..40 {
        deep = json!({ "k": deep });
    }
    let request = CreateRequest {
        urn: "urn:pulumi:dev::proj::echo:index:Thing::deep".into(),
        name: "deep".into(),
        r#type: "echo:index:Thing".into(),
        properties: Some(to_struct(json!({ "x": deep }))),
        ..Default::default()
    };
    let err = p.client.create(request).await.unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{}", err.message());
    assert!(err.message().contains("about 32 objects deep"), "{}", err.message());
    still_serves(&mut p).await;
}

/// A client that does not handshake negotiates in Configure: told it takes
/// no secrets and no resource references, the host sends their plain values
/// (the secret's value; the reference's ID, or its URN when it has none).
#[tokio::test]
async fn a_caller_without_handshake_that_takes_no_secrets_gets_plain_values() {
    let engine = TestEngine::start().await;
    let mut p = Plugin::packed(&component("echo-provider"), Some(&engine.address)).await.unwrap();
    let configure = ConfigureRequest { accept_secrets: false, accept_resources: false, ..Default::default() };
    p.client.configure(configure).await.unwrap();
    let urn = "urn:pulumi:dev::proj::echo:index:Thing::t";
    let args = json!({
        "secret": sig("secret", json!({"value": {"password": "hunter2"}})),
        "custom": sig("ref", json!({"urn": urn, "id": "thing-1"})),
        "component": sig("ref", json!({"urn": urn})),
        "nested": [sig("secret", json!({"value": "n"}))],
    });
    let r = p
        .client
        .invoke(InvokeRequest { tok: "echo:index:echo".into(), args: Some(to_struct(args)), preview: false })
        .await
        .unwrap()
        .into_inner();
    let expected = json!({ "secret": {"password": "hunter2"}, "custom": "thing-1", "component": urn, "nested": ["n"] });
    assert_eq!(from_struct(r.r#return.as_ref()), expected);
}

/// A real Create, Update or Read whose answer leaves a value unknown: the
/// engine would drop the whole answer (a new resource's id too, leaving it
/// in the cloud with nothing to delete it), so the host refuses it, keeping
/// the id a Create made. A preview may leave values unknown.
#[tokio::test]
async fn only_a_preview_may_answer_with_unknown_values() {
    let (_engine, mut p) = echo().await;
    let (urn, t) = ("urn:pulumi:dev::proj::echo:index:Thing::t", "echo:index:Thing");
    let unknown_string = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";
    let props = |v: Value| Some(to_struct(json!({"name": "n", "later": v})));
    let create = |preview: bool, later: Value| CreateRequest {
        urn: urn.into(),
        r#type: t.into(),
        properties: props(later),
        preview,
        ..Default::default()
    };
    let previewed = p.client.create(create(true, json!(unknown_string))).await.unwrap().into_inner();
    assert_eq!(from_struct(previewed.properties.as_ref())["later"], json!(unknown_string));

    for later in [json!(unknown_string), sig("output", json!({"dependencies": ["urn:a"]}))] {
        let refused = p.client.create(create(false, later)).await.unwrap_err();
        assert_eq!(refused.code(), Code::Unknown, "{refused:?}");
        assert!(refused.message().contains("`later` is unknown"), "{}", refused.message());
        let kept = e2e_tests::init_failed(&refused);
        assert!(!kept.id.is_empty(), "the id the guest made is kept: {kept:?}");
        assert_eq!((kept.properties, kept.inputs), (None, None));
    }

    let made = p.client.create(create(false, json!("known"))).await.unwrap().into_inner();
    let update = |preview: bool| UpdateRequest {
        id: made.id.clone(),
        urn: urn.into(),
        r#type: t.into(),
        olds: made.properties.clone(),
        news: props(json!(unknown_string)),
        old_inputs: props(json!("known")),
        preview,
        ..Default::default()
    };
    let previewed = p.client.update(update(true)).await.unwrap().into_inner();
    assert_eq!(from_struct(previewed.properties.as_ref())["later"], json!(unknown_string));
    let refused = p.client.update(update(false)).await.unwrap_err();
    // INTERNAL, which the engine reads as the resource's state being unknown.
    assert_eq!(refused.code(), Code::Internal, "{refused:?}");
    assert!(refused.message().contains("`later` is unknown"), "{}", refused.message());

    let read = ReadRequest {
        id: made.id.clone(),
        urn: urn.into(),
        r#type: t.into(),
        properties: props(json!(unknown_string)),
        inputs: props(json!("known")),
        ..Default::default()
    };
    let refused = p.client.read(read.clone()).await.unwrap_err();
    assert!(refused.message().contains("`later` is unknown"), "{}", refused.message());
    // A Read's partial state too.
    let read =
        ReadRequest { properties: Some(to_struct(json!({ "later": unknown_string, "failRead": true }))), ..read };
    let refused = p.client.read(read).await.unwrap_err();
    assert!(refused.message().contains("read half-way"), "{}", refused.message());
    assert!(refused.message().contains("`later` is unknown"), "{}", refused.message());
    still_serves(&mut p).await;
}
