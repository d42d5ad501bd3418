//! The derived schema, decoding, normalising and encoding of typed values.

use std::collections::BTreeMap;

use serde_json::json;

use super::schema;
use super::*;
use crate::{UnknownKind, props};

/// How big.
#[derive(PulumiType, Debug, PartialEq, Clone, Copy)]
pub enum Size {
    /// The smallest.
    Small,
    #[pulumi(name = "x-large")]
    XLarge,
}

/// One item.
#[derive(PulumiType, Debug, PartialEq)]
pub struct Item {
    /// Its name.
    pub name: String,
    #[pulumi(default = 1, min = 1)]
    pub count: u32,
}

/// A bucket.
///
/// Holds things.
#[derive(PulumiType, Debug, PartialEq)]
pub struct BucketArgs {
    /// The bucket's
    /// name.
    #[pulumi(replace_on_changes)]
    pub bucket_name: String,
    #[pulumi(default = Size::Small)]
    pub size: Size,
    pub tags: Option<BTreeMap<String, String>>,
    pub items: Vec<Item>,
    #[pulumi(secret)]
    pub password: Option<String>,
    pub index: Option<Asset>,
    pub site: Option<Archive>,
    #[pulumi(name = "ratio", min = 0, max = 1)]
    pub fill: Option<f64>,
    pub extra: Option<Value>,
    /// Keep old versions.
    #[pulumi(default)]
    pub versioned: bool,
}

fn failures<T>(d: &Decoded<T>) -> Vec<(String, String)> {
    let mut f: Vec<(String, String)> = d.failures.iter().map(|f| (f.property.clone(), f.reason.clone())).collect();
    f.sort();
    f
}

fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
    items.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
}

#[test]
fn derived_properties_follow_the_attributes() {
    let props = BucketArgs::properties();
    // Built once: every call normalizes, decodes and diffs against it.
    assert!(std::ptr::eq(props, BucketArgs::properties()));
    let names: Vec<&str> = props.iter().map(|p| p.name).collect();
    assert_eq!(
        names,
        ["bucketName", "size", "tags", "items", "password", "index", "site", "ratio", "extra", "versioned"]
    );
    let p = |n: &str| props.iter().find(|p| p.name == n).unwrap().clone();
    assert_eq!(p("bucketName").description, "The bucket's name.");
    assert!(p("bucketName").replace_on_changes && p("bucketName").required_input());
    assert_eq!(p("size").default, Some(Value::from("Small")));
    assert!(!p("size").required_input() && !p("size").optional);
    assert!(p("password").secret && p("password").optional);
    assert_eq!(p("items").unknown, UnknownKind::Array);
    assert_eq!(BucketArgs::DESCRIPTION, "A bucket.\n\nHolds things.");
}

/// Another `Item`, as another module of a provider may declare one.
mod elsewhere {
    use super::*;

    #[derive(PulumiType)]
    pub struct Item {
        pub label: String,
    }

    /// The same name, told apart by its token.
    #[derive(PulumiType)]
    #[pulumi(token = "test:other:Item")]
    pub struct Named {
        pub label: String,
    }
}

#[test]
#[should_panic(expected = "two types claim the schema token test:index:Item")]
fn two_types_may_not_claim_one_token() {
    let mut types = Types::new("test");
    types.object::<Item>();
    types.object::<Item>();
    types.object::<elsewhere::Named>();
    types.object::<elsewhere::Item>();
}

#[test]
fn schema_of_a_resource_with_named_types() {
    let mut types = Types::new("test");
    let inputs = BucketArgs::properties();
    let spec = schema::resource("A bucket.", inputs, inputs, &mut types);
    assert_eq!(spec["requiredInputs"], json!(["bucketName", "items"]));
    assert_eq!(spec["required"], json!(["bucketName", "size", "items", "versioned"]));
    let input = &spec["inputProperties"];
    assert_eq!(
        input["bucketName"],
        json!({"type": "string", "description": "The bucket's name.", "replaceOnChanges": true})
    );
    assert_eq!(input["size"], json!({"$ref": "#/types/test:index:Size", "default": "Small"}));
    assert_eq!(input["tags"], json!({"type": "object", "additionalProperties": {"type": "string"}}));
    assert_eq!(input["items"], json!({"type": "array", "items": {"$ref": "#/types/test:index:Item"}}));
    assert_eq!(input["password"], json!({"type": "string", "secret": true}));
    assert_eq!(input["index"], json!({"$ref": "pulumi.json#/Asset"}));
    assert_eq!(input["site"], json!({"$ref": "pulumi.json#/Archive"}));
    assert_eq!(input["ratio"], json!({"type": "number"}));
    assert_eq!(input["extra"], json!({"$ref": "pulumi.json#/Any"}));
    assert_eq!(input["versioned"], json!({"type": "boolean", "description": "Keep old versions.", "default": false}));
    assert!(spec["properties"]["bucketName"].get("replaceOnChanges").is_none(), "inputs only");
    let defs = types.into_defs();
    assert_eq!(
        defs["test:index:Item"],
        json!({"type": "object", "description": "One item.", "required": ["name"], "properties": {
            "name": {"type": "string", "description": "Its name."},
            "count": {"type": "integer", "default": 1},
        }})
    );
    assert_eq!(
        defs["test:index:Size"],
        json!({"type": "string", "description": "How big.", "enum": [
            {"value": "Small", "description": "The smallest."}, {"value": "x-large"},
        ]})
    );
}

/// Defaults are expressions of the field's type (see `Defaulted`).
#[derive(PulumiType, Debug, PartialEq)]
pub struct Defaults {
    #[pulumi(default = 2.5)]
    pub ratio: f64,
    #[pulumi(default = "x")]
    pub label: Option<String>,
    #[pulumi(default = Size::XLarge)]
    pub size: Option<Size>,
    #[pulumi(default = vec![1, 2])]
    pub counts: Vec<u32>,
}

#[test]
fn typed_defaults_reach_the_schema_and_check() {
    let mut types = Types::new("test");
    let inputs = Defaults::properties();
    let spec = schema::resource("", inputs, inputs, &mut types);
    let input = &spec["inputProperties"];
    assert_eq!(input["ratio"]["default"], json!(2.5));
    assert_eq!(input["label"]["default"], json!("x"));
    assert_eq!(input["size"]["default"], json!("x-large"));
    assert!(input["counts"].get("default").is_none(), "Pulumi's schema has no list defaults: {spec}");
    let mut m = PropertyMap::new();
    normalize::<Defaults>(&mut m);
    let decoded = decode::<Defaults>(&m).value.expect("every field has a default");
    let expected = Defaults { ratio: 2.5, label: Some("x".into()), size: Some(Size::XLarge), counts: vec![1, 2] };
    assert_eq!(decoded, expected);
}

#[test]
fn every_failure_is_reported_with_its_path() {
    let mut m = props! {
        "bucketName" => 1,
        "size" => "huge",
        "tags" => props! { "env" => 2, "ok" => "x", "odd key" => false },
        "items" => vec![Value::from(props! { "name" => 3 }), Value::from(props! { "count" => 0 })],
        "password" => true,
        "ratio" => 2,
        "index" => "not an asset",
        "bogus" => 1,
    };
    normalize::<BucketArgs>(&mut m);
    let d = decode::<BucketArgs>(&m);
    assert!(d.value.is_none());
    assert_eq!(
        failures(&d),
        pairs(&[
            ("bogus", "is not a known property"),
            ("bucketName", "must be a string, not a number"),
            ("index", "must be an asset, not a string"),
            ("items[0].name", "must be a string, not a number"),
            ("items[1].count", "must be at least 1"),
            ("items[1].name", "is required"),
            ("password", "must be a string, not a bool"),
            ("ratio", "must be at most 1"),
            ("size", "must be one of \"Small\", \"x-large\", not \"huge\""),
            ("tags.env", "must be a string, not a number"),
            ("tags[\"odd key\"]", "must be a string, not a bool"),
        ])
    );
    // NaN compares with nothing, so a bounded number must refuse it outright.
    let mut m = props! { "bucketName" => "b", "items" => Value::Array(vec![]), "ratio" => f64::NAN };
    normalize::<BucketArgs>(&mut m);
    assert_eq!(failures(&decode::<BucketArgs>(&m)), pairs(&[("ratio", "must be a number, not NaN")]));
    // A secret's value is not repeated in its failure, which the user's terminal shows.
    let mut m = props! { "bucketName" => "b", "items" => Value::Array(vec![]), "size" => Value::secret("hunter2") };
    normalize::<BucketArgs>(&mut m);
    assert_eq!(failures(&decode::<BucketArgs>(&m)), pairs(&[("size", "must be one of \"Small\", \"x-large\"")]));
    let d = decode::<BucketArgs>(&props! {});
    assert_eq!(
        failures(&d),
        pairs(&[
            ("bucketName", "is required"),
            ("items", "is required"),
            ("size", "is required"),
            ("versioned", "is required"),
        ])
    );
}

#[test]
fn integers_are_whole_and_in_range_of_their_type() {
    let d = decode::<Item>(&props! { "name" => "a", "count" => 1.5 });
    assert_eq!(failures(&d), pairs(&[("count", "must be a whole number")]));
    let d = decode::<Item>(&props! { "name" => "a", "count" => 5e9 });
    assert_eq!(failures(&d), pairs(&[("count", "must be at most 4294967295")]));
    let d = decode::<Item>(&props! { "name" => Value::secret("a"), "count" => 7 });
    assert_eq!(d.value, Some(Item { name: "a".into(), count: 7 }), "secrets are read through");
}

#[test]
fn unknowns_are_recorded_not_failed() {
    let u = |k| Value::Unknown(k);
    let m = props! {
        "bucketName" => u(UnknownKind::String),
        "tags" => props! { "env" => u(UnknownKind::String), "ok" => "x" },
        "items" => vec![Value::from(props! { "name" => u(UnknownKind::String), "count" => 2 })],
        "ratio" => "wrong",
    };
    let d = decode::<BucketArgs>(&m);
    assert_eq!(
        failures(&d),
        pairs(&[("ratio", "must be a number, not a string"), ("size", "is required"), ("versioned", "is required")])
    );
    assert_eq!(d.unknowns, ["bucketName", "tags.env", "items[0].name"]);
    let mut ok = m.clone();
    ok.remove("ratio");
    ok.insert(
        "extra".into(),
        Value::Output(crate::Output {
            value: Some(Box::new(props! { "deep" => "x" }.into())),
            secret: true,
            dependencies: vec![],
        }),
    );
    normalize::<BucketArgs>(&mut ok);
    let d = decode::<BucketArgs>(&ok);
    assert!(d.failures.is_empty() && d.value.is_none());
    let partial = Partial::new(d, ok);
    assert!(partial.known().is_none());
    assert!(!partial.is_known("bucketName") && !partial.is_known("tags") && !partial.is_known("tags.env"));
    assert!(partial.is_known("tags.ok") && partial.is_known("size") && partial.is_known("bucket"));
    assert_eq!(partial.get::<Size>("size"), Some(Size::Small));
    assert_eq!(partial.get::<String>("bucketName"), None);
}

#[test]
fn normalize_applies_defaults_drops_nulls_and_marks_secrets() {
    let mut m = props! {
        "bucketName" => "b",
        "size" => Value::Null,
        "tags" => Value::Null,
        "items" => vec![Value::from(props! { "name" => "a" })],
        "password" => "hunter2",
    };
    normalize::<BucketArgs>(&mut m);
    assert_eq!(
        m,
        props! {
            "bucketName" => "b",
            "size" => "Small",
            "items" => vec![Value::from(props! { "name" => "a", "count" => 1 })],
            "password" => Value::secret("hunter2"),
            "versioned" => false,
        }
    );
}

#[test]
fn encoding_round_trips_and_marks_secrets() {
    let args = BucketArgs {
        bucket_name: "b".into(),
        size: Size::XLarge,
        tags: Some(BTreeMap::from([("env".to_string(), "dev".to_string())])),
        items: vec![Item { name: "a".into(), count: 2 }],
        password: Some("pw".into()),
        index: Some(Asset::text("hi")),
        site: None,
        fill: Some(0.5),
        extra: Some(Value::from(vec![1, 2])),
        versioned: true,
    };
    let m = args.to_map();
    assert_eq!(m["password"], Value::secret("pw"));
    assert_eq!(m["size"], Value::from("x-large"));
    assert!(!m.contains_key("site"), "None is left out");
    assert_eq!(decode::<BucketArgs>(&m).value, Some(args));
}

#[test]
fn secret_inputs_stay_secret_at_their_paths() {
    let m = props! {
        "bucketName" => Value::secret("b"),
        "size" => "Small",
        "tags" => props! { "env" => Value::secret("prod"), "team" => "a" },
        "items" => Vec::<Value>::new(),
        "versioned" => false,
    };
    let d = decode::<BucketArgs>(&m);
    assert!(d.had_secrets());
    let mut out = d.value.as_ref().unwrap().to_map();
    out.insert("other".into(), "x".into());
    d.protect(&mut out);
    assert_eq!(out["bucketName"], Value::secret("b"));
    assert_eq!(out["tags"], Value::from(props! { "env" => Value::secret("prod"), "team" => "a" }));
    assert_eq!(out["other"], Value::from("x"));
}

/// A provider may sort a list or rename a map's keys: the secret is then
/// not where it was, so what held it is secret as a whole.
#[test]
fn a_reordered_list_or_renamed_key_keeps_the_secret_secret() {
    let m = props! {
        "bucketName" => "b",
        "size" => "Small",
        "versioned" => false,
        "tags" => props! { "env" => Value::secret("prod") },
        "items" => vec![
            Value::from(props! { "name" => "b", "count" => 1 }),
            Value::from(props! { "name" => Value::secret("a"), "count" => 1 }),
        ],
    };
    let d = decode::<BucketArgs>(&m);
    let mut out = d.value.as_ref().unwrap().to_map();
    let sorted =
        vec![Value::from(props! { "name" => "a", "count" => 1 }), Value::from(props! { "name" => "b", "count" => 1 })];
    out.insert("items".into(), Value::Array(sorted.clone()));
    out.insert("tags".into(), Value::from(props! { "ENV" => "prod" }));
    d.protect(&mut out);
    assert_eq!(out["items"], Value::secret(Value::Array(sorted)));
    assert_eq!(out["tags"], Value::secret(Value::from(props! { "ENV" => "prod" })));
    assert_eq!(out["bucketName"], Value::from("b"));
}

#[test]
fn state_decoding_ignores_unknown_keys() {
    let m = props! { "name" => "a", "count" => 1, "removedLater" => true };
    assert!(decode_state::<Item>(&m).value.is_some());
    assert_eq!(failures(&decode::<Item>(&m)), pairs(&[("removedLater", "is not a known property")]));
}

/// Create and Update decode inputs without normalizing them first, and
/// Create reads them from the request's words where they lie; the result
/// must be exactly that of normalizing a copy of the map, then decoding it:
/// the value, every failure and unknown, and the secret paths in order.
#[test]
fn decoding_with_defaults_equals_normalizing_first() {
    let u = |k| Value::Unknown(k);
    let secret_output =
        |v: Value| Value::Output(crate::Output { value: Some(Box::new(v)), secret: true, dependencies: vec![] });
    let cases = [
        props! {},
        props! { "bucketName" => "b", "items" => vec![Value::from(props! { "name" => "a" })] },
        props! {
            "bucketName" => "b",
            "size" => Value::Null,
            "tags" => Value::Null,
            "items" => vec![Value::from(props! { "name" => "a", "count" => Value::Null })],
            "password" => "hunter2",
            "versioned" => Value::Null,
        },
        props! {
            "bucketName" => Value::secret("b"),
            "size" => Value::secret("x-large"),
            "tags" => props! { "env" => Value::secret("prod"), "team" => "a" },
            "items" => vec![Value::from(props! { "name" => "a", "count" => Value::secret(3) })],
            "password" => Value::secret("pw"),
            "extra" => secret_output(props! { "deep" => "x" }.into()),
        },
        props! {
            "bucketName" => u(UnknownKind::String),
            "password" => u(UnknownKind::String),
            "items" => vec![Value::from(props! { "name" => u(UnknownKind::String) })],
            "ratio" => "wrong",
        },
        props! {
            "bucketName" => 1,
            "size" => "huge",
            "items" => vec![Value::from(props! { "name" => 3 }), Value::from(props! { "count" => 0 })],
            "password" => true,
            "ratio" => 2,
            "bogus" => 1,
        },
        // A long string (kept apart in the words), an asset, an archive of
        // assets, secret numbers in and out of range, and a map.
        props! {
            "bucketName" => "n".repeat(3000),
            "index" => Value::Asset(Asset::text("hi")),
            "site" => Value::Archive(Archive {
                hash: Some("h".into()),
                source: Some(crate::ArchiveSource::Assets(
                    [("a".to_owned(), crate::ArchiveMember::Asset(Asset::path("p")))].into(),
                )),
            }),
            "ratio" => Value::secret(0.5),
            "tags" => props! { "k" => "v", "l" => Value::secret("w") },
            "items" => vec![Value::from(props! { "name" => "a", "count" => Value::secret(2) })],
        },
        // Every kind where another is declared.
        props! {
            "bucketName" => vec![Value::from("a")],
            "size" => Value::secret(3),
            "tags" => 3,
            "items" => "a list",
            "index" => 1,
            "site" => Value::Asset(Asset::uri("u")),
            "ratio" => Value::secret(7),
            "versioned" => "yes",
        },
        props! { "tags" => props! { "k" => 1 }, "items" => vec![Value::from("x")], "extra" => u(UnknownKind::Object) },
    ];
    for m in cases {
        let mut normalized = m.clone();
        normalize::<BucketArgs>(&mut normalized);
        let expected = format!("{:?}", decode::<BucketArgs>(&normalized));
        let got = super::decode::decode_defaulted::<BucketArgs>(&m);
        assert_eq!(format!("{got:?}"), expected, "inputs {m:?}");
        let words = crate::wire::words(crate::wire::encode_map(&m)).unwrap();
        let got = super::decode::decode_defaulted::<BucketArgs>(&words.map().unwrap());
        assert_eq!(format!("{got:?}"), expected, "inputs from words {m:?}");
        // A state is decoded the same from words as from the map.
        let state = format!("{:?}", decode_state::<BucketArgs>(&m));
        assert_eq!(format!("{:?}", decode_state::<BucketArgs>(&words.map().unwrap())), state);
    }
}

/// A state whose own `name` comes after a flattened one.
#[derive(PulumiType)]
pub struct Renamed {
    pub z_last: u32,
    pub a_first: String,
    #[pulumi(flatten)]
    pub item: Item,
    /// Declared after `item`, so its `name` wins over the item's.
    #[pulumi(name = "name")]
    pub own_name: String,
    pub b_after: bool,
}

/// The derive emits each run of named fields sorted by name, so a state's
/// pairs need no sorting but for flattened fields; and of two fields with
/// one name the later wins, in the pairs as in the map.
#[test]
fn pairs_come_sorted_per_run_and_the_later_name_wins() {
    let args = BucketArgs {
        bucket_name: "b".into(),
        size: Size::Small,
        tags: None,
        items: vec![],
        password: Some("pw".into()),
        index: None,
        site: None,
        fill: Some(0.5),
        extra: None,
        versioned: false,
    };
    let mut f = Fields::default();
    args.encode_into(&mut f);
    let names: Vec<&str> = f.iter().map(|(k, _)| k).collect();
    assert_eq!(names, ["bucketName", "items", "password", "ratio", "size", "versioned"]);

    let r = Renamed {
        z_last: 1,
        a_first: "a".into(),
        item: Item { name: "inner".into(), count: 2 },
        own_name: "outer".into(),
        b_after: true,
    };
    let mut f = Fields::default();
    r.encode_into(&mut f);
    let names: Vec<&str> = f.iter().map(|(k, _)| k).collect();
    assert_eq!(names, ["aFirst", "zLast", "count", "name", "bAfter", "name"]);
    // What inserting the pairs into a map in the order pushed gives.
    let mut inserted = PropertyMap::new();
    for (k, v) in f.iter() {
        inserted.insert(k.to_owned(), v.clone());
    }
    assert_eq!(inserted["name"], Value::from("outer"));
    assert_eq!(r.to_map(), inserted);
    assert_eq!(
        r.to_fields().iter().map(|(k, _)| k).collect::<Vec<_>>(),
        ["aFirst", "bAfter", "count", "name", "zLast"]
    );
}
