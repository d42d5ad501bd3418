//! The provider against a fake of the API, natively: `testing::Engine`
//! drives it as `pulumi up`, `refresh` and `destroy` would, and
//! `testing::HttpMock` answers its requests in place of the host.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use pulumi_wasm_sdk::http::Method;
use pulumi_wasm_sdk::props;
use pulumi_wasm_sdk::testing::{Engine, Failure, HttpMock, Reply, Sent, Step};
use pulumi_wasm_sdk::typed::*;
use serde_json::{Value as Json, json};

use crate::{ITEM, Kv};

const ENDPOINT: &str = "https://kv.example.com";

/// The API of `api.rs`' table, over `items`.
fn fake(items: Rc<RefCell<BTreeMap<String, Json>>>) -> impl FnMut(&Sent) -> Reply {
    move |sent| {
        let path = sent.path();
        let Some(key) = path.strip_prefix("/items/") else { return Reply::status(404) };
        let mut items = items.borrow_mut();
        match sent.method {
            Method::Get => items.get(key).map_or(Reply::status(404), |item| Reply::json(200, item)),
            Method::Put if sent.header("if-none-match") == Some("*") && items.contains_key(key) => Reply::status(412),
            Method::Put => {
                let body: Json = sent.json().expect("a JSON body");
                let item = json!({"key": key, "value": body["value"], "tags": body["tags"]});
                items.insert(key.to_owned(), item.clone());
                Reply::json(200, &item)
            }
            Method::Delete => Reply::status(if items.remove(key).is_some() { 204 } else { 404 }),
            _ => Reply::status(405),
        }
    }
}

fn engine() -> Engine<Typed<Kv>> {
    let mut engine = Engine::new(Typed::<Kv>::default());
    engine.configure(props! { "endpoint" => ENDPOINT }).unwrap();
    engine
}

#[test]
fn an_item_is_created_refreshed_updated_and_deleted_through_the_api() {
    let api = HttpMock::install();
    let items = Rc::new(RefCell::new(BTreeMap::new()));
    api.fallback(fake(items.clone()));
    let mut engine = engine();

    let item = engine.create(ITEM, "greeting", props! { "key" => "greeting", "value" => "hi" }).unwrap();
    assert_eq!((item.id.as_str(), &items.borrow()["greeting"]["value"]), ("greeting", &json!("hi")));
    let create = &api.sent()[0];
    assert_eq!((create.method, create.url.as_str()), (Method::Put, "https://kv.example.com/items/greeting"));
    assert_eq!(create.header("if-none-match"), Some("*"), "a create never adopts an existing item");

    // Changed on the server: refresh brings the drift back.
    items.borrow_mut().get_mut("greeting").unwrap()["value"] = json!("edited");
    let item = engine.refresh(&item).unwrap().expect("still there");
    assert_eq!(item.outputs["value"], Value::from("edited"));

    let (step, item) = engine.update(&item, props! { "key" => "greeting", "value" => "hello" }).unwrap();
    assert_eq!((step, &items.borrow()["greeting"]["value"]), (Step::Update, &json!("hello")));

    engine.delete(item.clone()).unwrap();
    assert!(items.borrow().is_empty());
    assert_eq!(engine.refresh(&item).unwrap(), None, "gone from the server: gone from the state");
    engine.delete(item).unwrap();
}

#[test]
fn the_api_s_refusals_reach_the_user_as_what_to_do() {
    let api = HttpMock::install();
    let items = Rc::new(RefCell::new(BTreeMap::from([("taken".to_owned(), json!({"key": "taken", "value": "x"}))])));
    api.fallback(fake(items));
    api.on(Method::Put, &format!("{ENDPOINT}/items/locked"), |_| Reply::status(401));
    api.on(Method::Put, &format!("{ENDPOINT}/items/busy"), |_| Reply::status(503).body("try later"));
    let mut engine = engine();
    let create = |engine: &mut Engine<Typed<Kv>>, key: &str| match engine
        .create(ITEM, key, props! { "key" => key, "value" => "v" })
        .unwrap_err()
    {
        Failure::Provider(e) => e,
        other => panic!("{other}"),
    };
    let e = create(&mut engine, "taken");
    assert!(
        matches!(&e, Error::FailedPrecondition(m) if m.contains("already exists") && m.contains("import")),
        "{e:?}"
    );
    let e = create(&mut engine, "locked");
    // (Which advice depends on whether this process has a KV_TOKEN.)
    assert!(matches!(&e, Error::FailedPrecondition(m) if m.contains("refused the request (401)")), "{e:?}");
    let e = create(&mut engine, "busy");
    assert!(matches!(&e, Error::Unavailable(m) if m.contains("503: try later")), "{e:?}");
    // A preview sends nothing.
    let before = api.sent().len();
    engine.preview_create(ITEM, "p", props! { "key" => "p", "value" => "v" }).unwrap();
    assert_eq!(api.sent().len(), before);
}
