//! The parameterized `records` guest (examples/records): a replacement
//! package, and several packages extending one process.

use super::*;

const SHOP: [&str; 3] =
    ["shop", "Item=title:string,price:number,sku!:string,note?:string", "Order=item:string,count:integer"];
const ZOO: [&str; 2] = ["zoo", "Animal=species:string,legs:integer"];

/// `records.wasm -- <args>` as `pulumi package add wasm` passes them.
fn records_args(guest: &[&str]) -> Vec<String> {
    let records = component("records");
    let mut args = vec![records.to_string_lossy().into_owned(), "--".to_owned()];
    args.extend(guest.iter().map(|a| a.to_string()));
    args
}

async fn records_by_args(p: &mut Plugin, guest: &[&str]) -> Result<ParameterizeResponse, Status> {
    let args = records_args(guest);
    by_args(p, &args.iter().map(String::as_str).collect::<Vec<_>>()).await
}

/// Check (a bad input, then good ones) -> Create -> Read -> Diff (an update, then a
/// replace) -> Update -> Delete of one record; what each step produced.
async fn record_lifecycle(
    p: &mut Plugin,
    token: &str,
    inputs: Json,
    update: (&str, Json),
    replace: (&str, Json),
) -> Vec<Json> {
    let urn = format!("urn:pulumi:dev::proj::{token}::r");
    let c = &mut p.client;
    let check = |news: Json| CheckRequest {
        urn: urn.clone(),
        name: "r".into(),
        r#type: token.into(),
        olds: Some(to_struct(json!({}))),
        news: Some(to_struct(news)),
        ..Default::default()
    };
    let mut bad = inputs.clone();
    bad.as_object_mut().unwrap().insert("unexpected".into(), json!(1));
    let failed = c.check(check(bad)).await.unwrap_or_else(|e| panic!("check {token}: {e}")).into_inner();
    assert_eq!(failed.failures.iter().map(|f| f.property.as_str()).collect::<Vec<_>>(), ["unexpected"]);
    let checked = c.check(check(inputs.clone())).await.unwrap().into_inner();
    assert!(checked.failures.is_empty(), "{:?}", checked.failures);
    let created = c
        .create(CreateRequest {
            urn: urn.clone(),
            name: "r".into(),
            r#type: token.into(),
            properties: checked.inputs.clone(),
            timeout: 30.0,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(from_struct(created.properties.as_ref()), inputs, "a record's outputs are its inputs");
    let read = c
        .read(ReadRequest {
            id: created.id.clone(),
            urn: urn.clone(),
            name: "r".into(),
            r#type: token.into(),
            properties: created.properties.clone(),
            inputs: checked.inputs.clone(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let mut diffs = Vec::new();
    for (key, value) in [update.clone(), replace] {
        let mut news = inputs.clone();
        news[key] = value;
        let diff = c
            .diff(DiffRequest {
                id: created.id.clone(),
                urn: urn.clone(),
                name: "r".into(),
                r#type: token.into(),
                olds: created.properties.clone(),
                news: Some(to_struct(news)),
                old_inputs: checked.inputs.clone(),
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner();
        diffs.push(json!({"changes": diff.changes, "diffs": diff.diffs, "replaces": diff.replaces}));
    }
    let mut news = inputs.clone();
    news[update.0] = update.1;
    let updated = c
        .update(UpdateRequest {
            id: created.id.clone(),
            urn: urn.clone(),
            name: "r".into(),
            r#type: token.into(),
            olds: created.properties.clone(),
            news: Some(to_struct(news.clone())),
            old_inputs: checked.inputs.clone(),
            timeout: 30.0,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(from_struct(updated.properties.as_ref()), news);
    c.delete(DeleteRequest {
        id: created.id.clone(),
        urn,
        name: "r".into(),
        r#type: token.into(),
        properties: updated.properties.clone(),
        timeout: 30.0,
        ..Default::default()
    })
    .await
    .unwrap();
    vec![
        json!(created.id),
        from_struct(read.properties.as_ref()),
        json!(diffs),
        from_struct(updated.properties.as_ref()),
    ]
}

async fn shop_item(p: &mut Plugin) -> Vec<Json> {
    let inputs = json!({"title": "lamp", "price": 12.5, "sku": "L-1"});
    record_lifecycle(p, "shop:index:Item", inputs, ("price", json!(15.0)), ("sku", json!("L-2"))).await
}

async fn zoo_animal(p: &mut Plugin) -> Vec<Json> {
    let inputs = json!({"species": "okapi", "legs": 4.0});
    record_lifecycle(p, "zoo:index:Animal", inputs, ("legs", json!(3.0)), ("species", json!("zebra"))).await
}

#[tokio::test]
async fn a_parameterized_guest_as_a_replacement_package() {
    let bench = Bench::new().await;
    let version = env!("CARGO_PKG_VERSION");

    // `pulumi package add wasm ./records.wasm -- shop Item=... Order=...`: the guest becomes `shop`.
    let mut p = bench.start("store").await;
    let added = records_by_args(&mut p, &SHOP).await.unwrap_or_else(|e| panic!("{e}; stderr: {}", p.stderr()));
    assert_eq!((added.name.as_str(), added.version.as_str()), ("shop", version));
    let shop = schema(&mut p, "", "").await;
    assert_eq!((shop["name"].as_str(), shop["version"].as_str()), (Some("shop"), Some(version)));
    let resources: Vec<&String> = shop["resources"].as_object().unwrap().keys().collect();
    assert_eq!(resources, ["shop:index:Item", "shop:index:Order"]);
    // Our value nests the guest's own value, which is what the guest itself put in its schema.
    let value = value_of(&shop);
    let decoded: Json = serde_json::from_slice(&value).unwrap();
    assert_eq!(
        (decoded["guest"]["name"].as_str(), decoded["guest"]["version"].as_str()),
        (Some("shop"), Some(version))
    );
    let guest_value: Json =
        serde_json::from_slice(&B64.decode(decoded["guest"]["value"].as_str().unwrap()).unwrap()).unwrap();
    assert_eq!(guest_value["name"], "shop");
    assert!(guest_value["types"]["Item"]["sku"]["replace"].as_bool().unwrap(), "{guest_value}");
    p.boot(&bench.engine.address, json!({})).await.unwrap();
    let first = shop_item(&mut p).await;
    assert_eq!(first[2][0]["replaces"], json!([]), "a price change updates");
    assert_eq!(first[2][1]["replaces"], json!(["sku"]), "a sku change replaces");
    // Bad guest args are the guest's to refuse, named.
    let mut q = bench.start("store").await;
    let err = records_by_args(&mut q, &["shop", "Item=title:text"]).await.unwrap_err();
    assert_status(&err, Code::InvalidArgument, &["Item=title:text"]);
    drop((p, q));

    // A fresh process from the value: the same package, the same behaviour.
    let mut p = bench.start("store").await;
    let again = by_value(&mut p, "shop", version, &value).await.unwrap();
    assert_eq!(again.name, "shop");
    assert_eq!(schema(&mut p, "shop", version).await, shop);
    p.boot(&bench.engine.address, json!({})).await.unwrap();
    assert_eq!(shop_item(&mut p).await, first);
    // A token of no package here is refused clearly, and the host keeps serving.
    let err = p
        .client
        .check(CheckRequest {
            r#type: "nope:index:Thing".into(),
            urn: "urn:pulumi:dev::proj::nope:index:Thing::x".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert!(err.message().contains("nope"), "{err:?}");
    assert_eq!(shop_item(&mut p).await, first);
}

#[tokio::test]
async fn a_parameterized_guest_extended_with_several_packages() {
    let bench = Bench::new().await;
    let version = env!("CARGO_PKG_VERSION");

    // Two `package add` runs give two values.
    let mut values = Vec::new();
    let mut schemas = Vec::new();
    for guest in [&SHOP[..], &ZOO[..]] {
        let mut p = bench.start("store").await;
        records_by_args(&mut p, guest).await.unwrap();
        let s = schema(&mut p, guest[0], version).await;
        values.push(value_of(&s));
        schemas.push(s);
    }

    // One process, extended with both: each call adds a sub-package.
    let mut p = bench.start("store").await;
    assert_eq!(by_value(&mut p, "shop", version, &values[0]).await.unwrap().name, "shop");
    assert_eq!(by_value(&mut p, "zoo", version, &values[1]).await.unwrap().name, "zoo");
    // The same value again is the same package; another value under a served name is refused.
    assert_eq!(by_value(&mut p, "shop", version, &values[0]).await.unwrap().name, "shop");
    assert_eq!(schema(&mut p, "shop", version).await, schemas[0]);
    assert_eq!(schema(&mut p, "zoo", version).await, schemas[1]);
    let err = p.client.get_schema(GetSchemaRequest::default()).await.unwrap_err();
    assert_status(&err, Code::InvalidArgument, &["shop", "zoo"]);
    let req = GetSchemaRequest { version: 0, subpackage_name: "zoo".into(), subpackage_version: "9.9.9".into() };
    assert_status(&p.client.get_schema(req).await.unwrap_err(), Code::InvalidArgument, &["9.9.9"]);

    // Calls are routed by package, the guest's own base resource included.
    p.boot(&bench.engine.address, json!({})).await.unwrap();
    let shop_items = shop_item(&mut p).await;
    let animals = zoo_animal(&mut p).await;
    assert!(animals[0].as_str().unwrap().starts_with("animal-"), "{animals:?}");
    let notes = record_lifecycle(
        &mut p,
        "records:index:Note",
        json!({"text": "hi"}),
        ("text", json!("ho")),
        ("text", json!("hu")),
    )
    .await;
    assert!(notes[0].as_str().unwrap().starts_with("note-"), "{notes:?}");

    // The packages behave exactly as each does alone.
    let mut alone = bench.start("store").await;
    by_value(&mut alone, "shop", version, &values[0]).await.unwrap();
    alone.boot(&bench.engine.address, json!({})).await.unwrap();
    assert_eq!(shop_item(&mut alone).await, shop_items);
}
