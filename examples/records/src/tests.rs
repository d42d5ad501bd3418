//! The calls the engine and a generic host make, natively.

use pulumi_wasm_sdk::*;
use serde_json::{Value as Json, json};

use crate::spec::Spec;
use crate::{Records, VERSION};

const ITEM: &str = "shop:index:Item";
const NOTE: &str = "records:index:Note";

fn args(a: &[&str]) -> ParameterizeRequest {
    ParameterizeRequest::Args(a.iter().map(|s| s.to_string()).collect())
}

fn shop_args() -> ParameterizeRequest {
    args(&["shop", "Item=title:string,price:number,sku!:string,note?:string", "Order=item:string,count:integer"])
}

fn shop() -> Records {
    let mut r = Records::default();
    r.parameterize(shop_args()).unwrap();
    r
}

fn schema_of(r: &mut Records, name: &str, version: &str) -> Result<Json> {
    let req = GetSchemaRequest { version: 0, subpackage_name: name.into(), subpackage_version: version.into() };
    r.get_schema(req).map(|s| serde_json::from_str(&s).unwrap())
}

fn schema(r: &mut Records, name: &str) -> Json {
    schema_of(r, name, "").unwrap()
}

fn message(e: Error) -> String {
    e.to_string()
}

fn urn(token: &str) -> String {
    format!("urn:pulumi:dev::proj::{token}::r")
}

fn check(r: &mut Records, token: &str, news: PropertyMap) -> Result<CheckResponse> {
    r.check(CheckRequest {
        urn: urn(token),
        name: "r".into(),
        resource_type: token.into(),
        olds: PropertyMap::new(),
        news,
        random_seed: vec![],
        autonaming: None,
        old_outputs: None,
    })
}

fn failures(r: &mut Records, token: &str, news: PropertyMap) -> Vec<(String, String)> {
    check(r, token, news).unwrap().failures.into_iter().map(|f| (f.property, f.reason)).collect()
}

fn create(r: &mut Records, token: &str, properties: PropertyMap, preview: bool) -> Result<CreateResponse> {
    let (urn, name) = (urn(token), "r".into());
    r.create(CreateRequest { urn, name, resource_type: token.into(), properties, timeout: 0.0, preview })
}

fn diff(r: &mut Records, token: &str, old_inputs: PropertyMap, news: PropertyMap) -> Result<DiffResponse> {
    r.diff(DiffRequest {
        id: "x".into(),
        urn: urn(token),
        name: "r".into(),
        resource_type: token.into(),
        olds: old_inputs.clone(),
        news,
        old_inputs,
        ignore_changes: vec![],
    })
}

fn read(r: &mut Records, token: &str, properties: PropertyMap) -> Result<ReadResponse> {
    let (id, urn) = ("item-1".into(), urn(token));
    let inputs = PropertyMap::new();
    r.read(ReadRequest { id, urn, name: "r".into(), resource_type: token.into(), properties, inputs, timeout: 0.0 })
}

fn delete(r: &mut Records, token: &str) -> Result<()> {
    let (id, urn) = ("x".into(), urn(token));
    let (properties, old_inputs) = (PropertyMap::new(), PropertyMap::new());
    r.delete(DeleteRequest {
        id,
        urn,
        name: "r".into(),
        resource_type: token.into(),
        properties,
        old_inputs,
        timeout: 0.0,
    })
}

fn item() -> PropertyMap {
    props! { "title" => "mug", "price" => 4.5, "sku" => "M-1" }
}

#[test]
fn args_parse_into_a_spec() {
    let mut r = Records::default();
    let package = r.parameterize(shop_args()).unwrap();
    assert_eq!((package.name.as_str(), package.version.as_str()), ("shop", VERSION));
    let spec =
        Spec::from_bytes(&Spec::from_args(&["shop".into(), "T=a?!:boolean".into()], "1.0.0").unwrap().to_bytes());
    let a = &spec.unwrap().types["T"]["a"];
    assert!(a.optional && a.replace);

    let versioned = r.parameterize(args(&["--version=2.1.0-rc.1", "other", "Thing=x:integer"])).unwrap();
    assert_eq!((versioned.name.as_str(), versioned.version.as_str()), ("other", "2.1.0-rc.1"));
}

#[test]
fn bad_args_are_named_in_the_error() {
    let cases: &[(&[&str], &str)] = &[
        (&[], "no package name"),
        (&["shop"], "package 'shop' declares no types"),
        (&["Shop", "Item=a:string"], "package name 'Shop'"),
        (&["my.shop", "Item=a:string"], "package name 'my.shop'"),
        (&["records", "Item=a:string"], "package name 'records' is reserved"),
        (&["shop", "item=a:string"], "'item=a:string': type name 'item' must be PascalCase"),
        (&["shop", "Provider=a:string"], "type name 'Provider' is reserved"),
        (&["shop", "Item"], "'Item': expected <Type>="),
        (&["shop", "Item="], "'Item=': '' is not <prop>:<type>"),
        (&["shop", "Item=Title:string"], "property name 'Title' of 'Item' must be camelCase"),
        (&["shop", "Item=a-b:string"], "property name 'a-b'"),
        (&["shop", "Item=id:string"], "property name 'id' of 'Item' is reserved"),
        (&["shop", "Item=a:text"], "'a:text': unknown type 'text'"),
        (&["shop", "Item=a??:string"], "'a??:string': a marker is repeated"),
        (&["shop", "Item=a:string,a?:number"], "property 'a' is declared twice"),
        (&["shop", "Item=a:string", "Item=b:string"], "'Item=b:string': type 'Item' is declared twice"),
        (&["--version=1.x", "shop", "Item=a:string"], "version '1.x' is not semver"),
        (&["--verbose", "shop", "Item=a:string"], "unknown flag '--verbose'"),
    ];
    for (a, want) in cases {
        let err = Records::default().parameterize(args(a)).unwrap_err();
        assert!(matches!(err, Error::InvalidArgument(_)), "{a:?}: {err:?}");
        assert!(message(err.clone()).contains(want), "{a:?}: got {err}, want {want}");
    }
}

#[test]
fn the_value_round_trips_to_an_identical_schema() {
    let mut first = shop();
    let schema = schema(&mut first, "");
    let p = Parameterization::from_schema(&schema).expect("a parameterization block");
    assert_eq!((p.base_name.as_str(), p.base_version.as_str()), ("records", VERSION));
    // Canonical: the same spec in another order gives the same bytes.
    let reordered =
        args(&["shop", "Order=count:integer,item:string", "Item=note?:string,sku!:string,price:number,title:string"]);
    let mut second = Records::default();
    second.parameterize(reordered).unwrap();
    assert_eq!(Parameterization::from_schema(&self::schema(&mut second, "shop")).unwrap().value, p.value);

    let mut fresh = Records::default();
    let value = ParameterValue { name: "shop".into(), version: VERSION.into(), value: p.value };
    let package = fresh.parameterize(ParameterizeRequest::Value(value)).unwrap();
    assert_eq!(package.name, "shop");
    assert_eq!(self::schema(&mut fresh, ""), schema);
}

#[test]
fn the_value_is_the_documented_canonical_json() {
    let p = Parameterization::from_schema(&schema(&mut shop(), "")).unwrap();
    let want = r#"{"v":1,"name":"shop","version":"0.1.0","types":{"Item":{"note":{"type":"string","optional":true},"price":{"type":"number"},"sku":{"type":"string","replace":true},"title":{"type":"string"}},"Order":{"count":{"type":"integer"},"item":{"type":"string"}}}}"#;
    assert_eq!(String::from_utf8(p.value).unwrap(), want);
}

#[test]
fn value_name_or_version_mismatch_fails() {
    let value = Parameterization::from_schema(&schema(&mut shop(), "")).unwrap().value;
    for (name, version) in [("store", VERSION), ("shop", "9.9.9")] {
        let v = ParameterValue { name: name.into(), version: version.into(), value: value.clone() };
        let err = Records::default().parameterize(ParameterizeRequest::Value(v)).unwrap_err();
        let want = format!("describes shop@{VERSION}, but the request names {name}@{version}");
        assert!(message(err.clone()).contains(&want), "{err}");
    }
    let garbage = ParameterValue { name: "shop".into(), version: VERSION.into(), value: b"shop".to_vec() };
    let err = Records::default().parameterize(ParameterizeRequest::Value(garbage)).unwrap_err();
    assert!(message(err).contains("not a records spec"));
    let future = br#"{"v":2,"name":"shop","version":"0.1.0","types":{}}"#.to_vec();
    let v = ParameterValue { name: "shop".into(), version: VERSION.into(), value: future };
    let err = Records::default().parameterize(ParameterizeRequest::Value(v)).unwrap_err();
    assert!(message(err).contains("version 2 is not supported"));
}

#[test]
fn replacement_schema_is_the_generated_package() {
    let mut r = shop();
    let s = schema(&mut r, "");
    assert_eq!(s, schema(&mut r, "shop"));
    assert_eq!(s, schema_of(&mut r, "shop", VERSION).unwrap());
    assert_eq!((s["name"].as_str(), s["version"].as_str()), (Some("shop"), Some(VERSION)));
    let keys: Vec<&String> = s["resources"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["shop:index:Item", "shop:index:Order"]);
    let item = &s["resources"][ITEM];
    assert_eq!(item["inputProperties"]["sku"], json!({ "type": "string", "replaceOnChanges": true }));
    assert_eq!(item["inputProperties"]["price"], json!({ "type": "number" }));
    assert_eq!(item["properties"]["sku"], json!({ "type": "string" }));
    assert_eq!(item["requiredInputs"], json!(["price", "sku", "title"]));
    assert_eq!(item["required"], json!(["price", "sku", "title"]));
    assert_eq!(s["resources"]["shop:index:Order"]["inputProperties"]["count"]["type"], "integer");
    assert_eq!(s["parameterization"]["baseProvider"], json!({ "name": "records", "version": VERSION }));

    let err = schema_of(&mut r, "shop", "2.0.0").unwrap_err();
    assert!(message(err).contains(&format!("package 'shop' is at version {VERSION}, not 2.0.0")));
    let err = schema_of(&mut r, "nope", "").unwrap_err();
    assert!(message(err).contains("no package 'nope' here (this provider serves: records, shop)"));
}

#[test]
fn without_parameterization_the_schema_is_the_base() {
    let s = schema(&mut Records::default(), "");
    assert_eq!(s["name"], "records");
    assert!(s.get("parameterization").is_none());
    assert_eq!(s["resources"][NOTE]["requiredInputs"], json!(["text"]));
}

#[test]
fn extension_routes_schemas_and_keeps_the_base() {
    let mut r = shop();
    r.parameterize(args(&["--version=1.0.0", "blog", "Post=title:string,draft?:boolean"])).unwrap();
    // Repeating a sub-package is idempotent; changing it is not allowed.
    r.parameterize(shop_args()).unwrap();
    let err = r.parameterize(args(&["shop", "Item=title:string"])).unwrap_err();
    assert!(matches!(&err, Error::FailedPrecondition(m) if m.contains("'shop' is already parameterized")), "{err}");

    assert_eq!(schema(&mut r, "blog")["resources"]["blog:index:Post"]["requiredInputs"], json!(["title"]));
    assert_eq!(schema_of(&mut r, "blog", "1.0.0").unwrap()["version"], "1.0.0");
    assert_eq!(schema(&mut r, "shop")["name"], "shop");
    assert_eq!(schema(&mut r, "")["name"], "records");
    assert_eq!(schema(&mut r, "records")["name"], "records");

    for (token, inputs) in [
        (NOTE, props! { "text" => "hi" }),
        (ITEM, item()),
        ("blog:index:Post", props! { "title" => "t", "draft" => true }),
    ] {
        assert!(failures(&mut r, token, inputs.clone()).is_empty(), "{token}");
        let created = create(&mut r, token, inputs.clone(), false).unwrap();
        assert_eq!(created.properties, inputs, "{token}");
        delete(&mut r, token).unwrap();
    }
    // The types stay in their own packages.
    assert!(check(&mut r, "blog:index:Item", item()).is_err());
}

#[test]
fn every_schema_is_valid_against_the_metaschema() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data/pulumi-package-metaschema.json");
    let meta: Json = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&meta).unwrap();
    let mut r = shop();
    r.parameterize(args(&["--version=1.0.0+build.5", "b-2_x", "P=a?!:boolean,n:integer"])).unwrap();
    for name in ["records", "shop", "b-2_x"] {
        let s = schema(&mut r, name);
        let errors: Vec<String> = validator.iter_errors(&s).map(|e| format!("{e} at {}", e.instance_path)).collect();
        assert!(errors.is_empty(), "{name}: {errors:#?}");
    }
}

#[test]
fn crud_is_routed_by_the_type_token() {
    let mut r = shop();
    let unknown_pkg = check(&mut r, "blog:index:Post", item()).unwrap_err();
    assert!(
        message(unknown_pkg)
            .contains("unknown resource type 'blog:index:Post': no package 'blog' (known: records, shop)")
    );
    let unknown_type = create(&mut r, "shop:index:Cart", item(), false).unwrap_err();
    assert!(message(unknown_type).contains("(known: shop:index:Item, shop:index:Order)"));
    let wrong_module = diff(&mut r, "shop:other:Item", item(), item()).unwrap_err();
    assert!(message(wrong_module).contains("unknown resource type 'shop:other:Item'"));
    assert!(delete(&mut r, "shop:index:Cart").is_err());
    assert!(read(&mut r, "nope:index:Item", item()).is_err());
    assert!(message(check(&mut r, "shop", item()).unwrap_err()).contains("malformed resource type 'shop'"));

    // An empty type falls back to the URN's (the last `$` part).
    let mut req = CheckRequest {
        urn: "urn:pulumi:dev::proj::pkg:index:Parent$shop:index:Order::o".into(),
        name: "o".into(),
        resource_type: String::new(),
        olds: PropertyMap::new(),
        news: props! { "item" => "mug" },
        random_seed: vec![],
        autonaming: None,
        old_outputs: None,
    };
    let got: Vec<String> = r.check(req.clone()).unwrap().failures.into_iter().map(|f| f.property).collect();
    assert_eq!(got, ["count"]);
    req.urn = "urn:pulumi:dev::proj::shop:index:Gone::o".into();
    assert!(r.check(req).is_err());
}

#[test]
fn check_reports_each_bad_property() {
    let mut r = shop();
    let got =
        failures(&mut r, ITEM, props! { "title" => 3, "price" => "cheap", "colour" => "red", "note" => Value::Null });
    let want = [
        ("colour", "unknown property (expected one of: note, price, sku, title)"),
        ("price", "must be a number, not a string"),
        ("sku", "missing required property (string)"),
        ("title", "must be a string, not the number 3"),
    ];
    assert_eq!(got, want.map(|(p, w)| (p.to_string(), w.to_string())));
    let got = failures(&mut r, "shop:index:Order", props! { "item" => "x", "count" => 1.5 });
    assert_eq!(got, [("count".to_string(), "must be an integer, not the number 1.5".to_string())]);

    // Previews: unknowns pass; secrets are checked inside and stay secret; nulls are dropped.
    let news = props! {
        "title" => Value::Unknown(UnknownKind::String), "price" => Value::secret(2), "sku" => "s", "note" => Value::Null,
    };
    let r2 = check(&mut r, ITEM, news).unwrap();
    assert!(r2.failures.is_empty(), "{:?}", r2.failures);
    assert_eq!(r2.inputs.get("price"), Some(&Value::secret(2)));
    assert!(!r2.inputs.contains_key("note"));
    assert!(!failures(&mut r, ITEM, props! { "title" => Value::secret(1), "price" => 1, "sku" => "s" }).is_empty());
}

#[test]
fn diff_replaces_on_bang_properties_only() {
    let mut r = shop();
    let mut news = item();
    news.insert("sku".into(), "M-2".into());
    let d = diff(&mut r, ITEM, item(), news).unwrap();
    assert_eq!((d.changes, d.diffs, d.replaces), (DiffChanges::Some, vec!["sku".to_string()], vec!["sku".to_string()]));
    let detailed = d.detailed_diff.unwrap();
    assert_eq!(detailed[0].1.kind, DiffKind::UpdateReplace);

    let mut news = item();
    news.insert("title".into(), "cup".into());
    news.insert("note".into(), "new".into());
    let d = diff(&mut r, ITEM, item(), news).unwrap();
    assert_eq!((d.diffs, d.replaces), (vec!["note".to_string(), "title".to_string()], vec![]));
    assert_eq!(diff(&mut r, ITEM, item(), item()).unwrap().changes, DiffChanges::None);
}

#[test]
fn create_read_update_delete() {
    let mut r = shop();
    let created = create(&mut r, ITEM, item(), false).unwrap();
    assert!(created.id.starts_with("item-") && created.id.len() == "item-".len() + 16, "{}", created.id);
    assert_eq!(created.id, create(&mut r, ITEM, item(), false).unwrap().id, "deterministic");
    let mut other = item();
    other.insert("title".into(), "cup".into());
    assert_ne!(created.id, create(&mut r, ITEM, other.clone(), false).unwrap().id);
    let err = create(&mut r, ITEM, props! { "title" => "mug" }, false).unwrap_err();
    assert!(message(err).contains("invalid inputs for shop:index:Item: price: missing required property"));

    let unknown = props! { "title" => Value::Unknown(UnknownKind::String), "price" => 1, "sku" => "s" };
    let preview = create(&mut r, ITEM, unknown.clone(), true).unwrap();
    assert_eq!((preview.id.as_str(), preview.properties), ("", unknown));

    let refreshed = read(&mut r, ITEM, item()).unwrap();
    assert_eq!((refreshed.id.as_str(), &refreshed.properties, &refreshed.inputs), ("item-1", &item(), &item()));
    let err = read(&mut r, ITEM, PropertyMap::new()).unwrap_err();
    assert!(matches!(&err, Error::NotFound(m) if m.contains("Item 'item-1' cannot be imported")), "{err:?}");

    let updated = r
        .update(UpdateRequest {
            id: created.id,
            urn: urn(ITEM),
            name: "r".into(),
            resource_type: ITEM.into(),
            olds: item(),
            news: other.clone(),
            old_inputs: item(),
            timeout: 0.0,
            ignore_changes: vec![],
            preview: false,
        })
        .unwrap();
    assert_eq!(updated.properties, other);
    delete(&mut r, ITEM).unwrap();
}
