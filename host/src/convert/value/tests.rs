use std::collections::BTreeMap;

use prost_types::value::Kind;
use prost_types::{ListValue, Struct, Value as WireValue};

use super::*;
// The tests write guest values in 0.1.0's nodes, each string and child list
// in place, and convert them as the host converts an 0.1.0 component's.
use crate::runtime::bindings::v0_1_0::pulumi::provider::types as old;
use crate::runtime::bindings::{LONG_STRING, flat_to_nodes, nodes_into_flat};
use old::{Archive, ArchiveSource, Asset, AssetSource, Node, OutputValue, ReferenceId, ResourceReference, UnknownKind};

// The tests look at the host's tree: these wrap the public functions,
// which take and give the contract's words, in `words`' pack and unpack
// (tested on their own in `bindings/words_tests.rs`).
fn struct_to_wit(s: &Struct) -> Result<Value, ConvertError> {
    super::struct_to_wit(s).map(|w| words::unpack(w).expect("the host's words unpack"))
}
fn opt_struct_to_wit(s: Option<&Struct>) -> Result<Value, ConvertError> {
    super::opt_struct_to_wit(s).map(|w| words::unpack(w).expect("the host's words unpack"))
}
fn wit_to_struct(v: &Value, opts: WireOptions, limits: Limits) -> Result<Struct, ConvertError> {
    super::wit_to_struct(&words::pack(v.clone()), opts, limits)
}
fn value_to_wit(v: &WireValue) -> Result<Value, ConvertError> {
    super::value_to_wit(v).map(|w| words::unpack(w).expect("the host's words unpack"))
}
fn wit_to_value(v: &Value, opts: WireOptions, limits: Limits) -> Result<WireValue, ConvertError> {
    super::wit_to_value(&words::pack(v.clone()), opts, limits)
}

/// A value's nodes in 0.1.0's form, to match on.
fn old(v: &Value) -> Vec<Node> {
    flat_to_nodes(v).nodes
}

// ---- wire builders -----------------------------------------------------------

fn null() -> WireValue {
    WireValue { kind: Some(Kind::NullValue(0)) }
}
fn b(v: bool) -> WireValue {
    WireValue { kind: Some(Kind::BoolValue(v)) }
}
fn n(v: f64) -> WireValue {
    WireValue { kind: Some(Kind::NumberValue(v)) }
}
fn s(v: &str) -> WireValue {
    WireValue { kind: Some(Kind::StringValue(v.to_owned())) }
}
fn list(values: Vec<WireValue>) -> WireValue {
    WireValue { kind: Some(Kind::ListValue(ListValue { values })) }
}
fn map<const N: usize>(fields: [(&str, WireValue); N]) -> Struct {
    Struct { fields: fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect::<BTreeMap<_, _>>() }
}
fn obj<const N: usize>(fields: [(&str, WireValue); N]) -> WireValue {
    WireValue { kind: Some(Kind::StructValue(map(fields))) }
}
/// A special value: the signature plus the given fields.
fn sp<const N: usize>(signature: &str, fields: [(&str, WireValue); N]) -> WireValue {
    let mut m = map(fields);
    m.fields.insert(sig::KEY.to_owned(), s(signature));
    WireValue { kind: Some(Kind::StructValue(m)) }
}

const HASH: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
const URN: &str = "urn:pulumi:dev::proj::pkg:mod:Res::name";

fn negotiated() -> WireOptions {
    WireOptions { byte_strings: true, ..WireOptions::default() }
}

/// Wire -> WIT -> wire must give back the same struct, with nodes in pre-order.
#[track_caller]
fn roundtrip(original: Struct) {
    let wit = struct_to_wit(&original).expect("decode");
    assert!(matches!(wit.nodes[0], super::Node::Object(_)));
    assert_preorder(&wit);
    let back = wit_to_struct(&wit, negotiated(), Limits::default()).expect("encode");
    assert_eq!(back, original);
    // The same value handed to an 0.1.0 component and back, unchanged.
    let through_old = nodes_into_flat(flat_to_nodes(&wit));
    assert_eq!(wit_to_struct(&through_old, negotiated(), Limits::default()).expect("encode"), original);
}

/// Each node's children are numbered consecutively after it, subtree by subtree.
#[track_caller]
fn assert_preorder(v: &Value) {
    fn walk(v: &Value, i: u32, next: &mut u32) {
        for c in Buffers::of(v).children(&v.nodes[i as usize]) {
            assert_eq!(c, *next, "node {i} is not in pre-order");
            *next += 1;
            walk(v, c, next);
        }
    }
    let mut next = 1;
    walk(v, 0, &mut next);
    assert_eq!(next as usize, v.nodes.len());
}

fn single(v: WireValue) -> Struct {
    map([("v", v)])
}

// ---- wire -> WIT -> wire round trips -------------------------------------------

#[test]
fn roundtrip_plain_values() {
    roundtrip(Struct::default());
    roundtrip(map([
        ("null", null()),
        ("yes", b(true)),
        ("no", b(false)),
        ("num", n(-1.5e300)),
        ("str", s("héllo")),
        ("empty", s("")),
        ("arr", list(vec![n(1.0), s("two"), list(vec![]), obj([])])),
        ("nested", obj([("a", obj([("b", list(vec![obj([("c", b(true))])]))])), ("d", null())])),
        ("weird.key", s("x")),
    ]));
}

#[test]
fn roundtrip_secret() {
    roundtrip(single(sp(sig::SECRET, [("value", obj([("password", s("hunter2"))]))])));
    roundtrip(single(sp(sig::SECRET, [("value", sp(sig::SECRET, [("value", null())]))])));
}

#[test]
fn roundtrip_unknowns() {
    let all = [
        (sig::UNKNOWN_BOOL, UnknownKind::Bool),
        (sig::UNKNOWN_NUMBER, UnknownKind::Number),
        (sig::UNKNOWN_STRING, UnknownKind::String),
        (sig::UNKNOWN_ARRAY, UnknownKind::Array),
        (sig::UNKNOWN_ASSET, UnknownKind::Asset),
        (sig::UNKNOWN_ARCHIVE, UnknownKind::Archive),
        (sig::UNKNOWN_OBJECT, UnknownKind::Object),
    ];
    for (sentinel, kind) in all {
        let wit = value_to_wit(&s(sentinel)).expect("decode");
        assert!(matches!(old(&wit)[..], [Node::Unknown(k)] if k == kind), "{sentinel}");
        roundtrip(single(s(sentinel)));
    }
}

#[test]
fn roundtrip_assets() {
    roundtrip(single(sp(sig::ASSET, [("hash", s(HASH)), ("text", s(""))])));
    roundtrip(single(sp(sig::ASSET, [("text", s("hello"))])));
    roundtrip(single(sp(sig::ASSET, [("hash", s(HASH)), ("path", s("./file.txt"))])));
    roundtrip(single(sp(sig::ASSET, [("uri", s("https://example.com/f"))])));
    roundtrip(single(sp(sig::ASSET, [("hash", s(HASH))])));
}

#[test]
fn roundtrip_archives() {
    let nested = sp(sig::ARCHIVE, [("assets", obj([("inner.txt", sp(sig::ASSET, [("text", s("in"))]))]))]);
    let members = obj([
        ("a.txt", sp(sig::ASSET, [("hash", s(HASH)), ("text", s(""))])),
        ("b", sp(sig::ASSET, [("path", s("b.bin"))])),
        ("dir", nested),
        ("remote", sp(sig::ARCHIVE, [("uri", s("https://example.com/a.tgz"))])),
    ]);
    roundtrip(single(sp(sig::ARCHIVE, [("hash", s(HASH)), ("assets", members)])));
    roundtrip(single(sp(sig::ARCHIVE, [("assets", obj([]))])));
    roundtrip(single(sp(sig::ARCHIVE, [("path", s("./dir"))])));
    roundtrip(single(sp(sig::ARCHIVE, [("uri", s("file:///a.zip"))])));
    roundtrip(single(sp(sig::ARCHIVE, [("hash", s(HASH))])));
    let wit = struct_to_wit(&single(sp(sig::ARCHIVE, [("hash", s(HASH))]))).expect("decode");
    assert!(matches!(&old(&wit)[1], Node::Archive(Archive { hash: Some(_), source: None })));
}

#[test]
fn archive_source_precedence_is_path_uri_assets() {
    let v = sp(sig::ARCHIVE, [("path", s("p")), ("uri", s("u")), ("assets", obj([]))]);
    let wit = value_to_wit(&v).expect("decode");
    assert!(
        matches!(&old(&wit)[..], [Node::Archive(Archive { source: Some(ArchiveSource::Path(p)), .. })] if p == "p")
    );
    let v = sp(sig::ARCHIVE, [("uri", s("u")), ("assets", obj([]))]);
    let wit = value_to_wit(&v).expect("decode");
    assert!(matches!(&old(&wit)[..], [Node::Archive(Archive { source: Some(ArchiveSource::Uri(u)), .. })] if u == "u"));
}

#[test]
fn roundtrip_resource_references() {
    let rr = sig::RESOURCE_REFERENCE;
    roundtrip(single(sp(rr, [("urn", s(URN)), ("id", s("i-123"))])));
    roundtrip(single(sp(rr, [("urn", s(URN)), ("id", s(""))])));
    roundtrip(single(sp(rr, [("urn", s(URN))])));
    roundtrip(single(sp(rr, [("urn", s(URN)), ("id", s("i-1")), ("packageVersion", s("1.2.3"))])));

    let wit = value_to_wit(&sp(rr, [("urn", s(URN))])).expect("decode");
    assert!(matches!(&old(&wit)[..], [Node::ResourceReference(ResourceReference { id: None, .. })]));
    // The unknown sentinel as an ID is an unknown ID, sent back as "".
    let wit = value_to_wit(&sp(rr, [("urn", s(URN)), ("id", s(sig::UNKNOWN_STRING))])).expect("decode");
    assert!(matches!(
        &old(&wit)[..],
        [Node::ResourceReference(ResourceReference { id: Some(ReferenceId::Unknown), .. })]
    ));
    let back = wit_to_value(&wit, WireOptions::default(), Limits::default()).expect("encode");
    assert_eq!(back, sp(rr, [("urn", s(URN)), ("id", s(""))]));

    // To a caller that takes no references: the ID, unknown as the sentinel, or the URN.
    let plain = WireOptions { plain_references: true, ..WireOptions::default() };
    for (id, want) in [
        (Some(ReferenceId::Known("i-1".into())), "i-1"),
        (Some(ReferenceId::Unknown), sig::UNKNOWN_STRING),
        (Some(ReferenceId::Known(String::new())), sig::UNKNOWN_STRING),
        (None, URN),
    ] {
        let r = ResourceReference { urn: URN.into(), id, package_version: String::new() };
        let sent = wit_to_value(&wv(vec![Node::ResourceReference(r)]), plain, Limits::default());
        assert_eq!(sent.expect("encode"), s(want));
    }

    // A guest's "known" ID that the engine would read as unknown is sent as
    // the unknown it is (found by the property tests: it was sent verbatim).
    for id in ["", sig::UNKNOWN_STRING, sig::UNKNOWN_OBJECT] {
        let r = ResourceReference {
            urn: URN.into(),
            id: Some(ReferenceId::Known(id.into())),
            package_version: String::new(),
        };
        let sent = wit_to_value(&wv(vec![Node::ResourceReference(r)]), WireOptions::default(), Limits::default());
        assert_eq!(sent.expect("encode"), sp(rr, [("urn", s(URN)), ("id", s(""))]), "{id:?}");
    }
}

#[test]
fn secrets_go_plain_to_a_caller_that_takes_none() {
    let wit = struct_to_wit(&single(sp(sig::SECRET, [("value", list(vec![sp(sig::SECRET, [("value", n(1.0))])]))])))
        .expect("decode");
    let plain = WireOptions { plain_secrets: true, ..WireOptions::default() };
    assert_eq!(wit_to_struct(&wit, plain, Limits::default()).expect("encode"), single(list(vec![n(1.0)])));
}

#[test]
fn roundtrip_output_values() {
    let ov = sig::OUTPUT_VALUE;
    roundtrip(single(sp(ov, [("value", s("known"))])));
    roundtrip(single(sp(ov, [])));
    roundtrip(single(sp(ov, [("value", null())])));
    roundtrip(single(sp(ov, [("value", n(1.0)), ("secret", b(true))])));
    roundtrip(single(sp(ov, [("secret", b(true)), ("dependencies", list(vec![s(URN), s("urn:b")]))])));
    roundtrip(single(sp(ov, [("value", obj([("x", list(vec![b(true)]))])), ("dependencies", list(vec![s(URN)]))])));

    // `secret: false` and empty dependencies are the defaults and are not sent back.
    let v = sp(ov, [("value", s("x")), ("secret", b(false)), ("dependencies", list(vec![]))]);
    let back = wit_to_value(&value_to_wit(&v).expect("decode"), negotiated(), Limits::default()).expect("encode");
    assert_eq!(back, sp(ov, [("value", s("x"))]));
}

#[test]
fn roundtrip_byte_string_when_negotiated() {
    roundtrip(single(sp(sig::BYTE_STRING, [("value", s("/wAB"))])));
    let wit = value_to_wit(&sp(sig::BYTE_STRING, [("value", s("/wAB"))])).expect("decode");
    assert!(matches!(&old(&wit)[..], [Node::Bytes(bytes)] if bytes == &[0xff, 0, 1]));
}

fn nest(levels: usize) -> WireValue {
    let mut v = s("leaf");
    for i in 0..levels {
        v = if i % 2 == 0 { list(vec![v]) } else { obj([("k", v)]) };
    }
    v
}

#[test]
fn roundtrip_deep_nesting() {
    roundtrip(single(nest(30)));
}

#[test]
fn kind_none_is_null_and_root_object_keys_are_plain() {
    let wit = value_to_wit(&WireValue { kind: None }).expect("decode");
    assert!(matches!(&old(&wit)[..], [Node::Null]));
    // A property map's root is an object even when it holds the signature key.
    let wit = struct_to_wit(&map([(sig::KEY, s(sig::SECRET))])).expect("decode");
    assert!(matches!(&old(&wit)[..], [Node::Object(f), Node::String(_)] if f[0].0 == sig::KEY));
}

#[test]
fn optional_structs() {
    let wit = opt_struct_to_wit(None).expect("decode");
    assert!(matches!(&old(&wit)[..], [Node::Object(f)] if f.is_empty()));
    let wit = opt_struct_to_wit(Some(&map([("a", b(true))]))).expect("decode");
    assert_eq!(wit.nodes.len(), 2);
    assert!(matches!(&old(&words::unpack(empty_map()).expect("unpacks"))[..], [Node::Object(f)] if f.is_empty()));
}

// ---- malformed wire input -----------------------------------------------------

/// Decodes `v` placed at `tags.env` and returns the error.
#[track_caller]
fn wire_err(v: WireValue) -> ConvertError {
    let m = map([("tags", obj([("env", v)]))]);
    struct_to_wit(&m).expect_err("should fail")
}

#[track_caller]
fn assert_malformed(e: ConvertError, what_: &str, needle: &str) {
    match &e {
        ConvertError::Malformed { path, what, reason } => {
            assert_eq!(path.0, "tags.env");
            assert_eq!(*what, what_);
            assert!(reason.contains(needle), "{e}");
        }
        other => panic!("expected Malformed, got {other:?}"),
    }
}

#[test]
fn malformed_special_values() {
    assert_malformed(wire_err(sp(sig::SECRET, [])), "secret", "missing `value`");
    let rr = sig::RESOURCE_REFERENCE;
    assert_malformed(wire_err(sp(rr, [("urn", n(1.0))])), "resource reference", "`urn` must be a string");
    assert_malformed(wire_err(sp(rr, [])), "resource reference", "missing `urn`");
    assert_malformed(wire_err(sp(rr, [("urn", s(URN)), ("id", b(true))])), "resource reference", "`id`");
    assert_malformed(
        wire_err(sp(rr, [("urn", s(URN)), ("packageVersion", n(1.0))])),
        "resource reference",
        "packageVersion",
    );
    let ov = sig::OUTPUT_VALUE;
    assert_malformed(wire_err(sp(ov, [("secret", s("yes"))])), "output value", "`secret` must be a bool");
    assert_malformed(wire_err(sp(ov, [("dependencies", s(URN))])), "output value", "dependencies");
    assert_malformed(wire_err(sp(ov, [("dependencies", list(vec![n(1.0)]))])), "output value", "dependencies");
    assert_malformed(wire_err(sp(sig::ASSET, [("text", n(1.0))])), "asset", "`text`");
    assert_malformed(wire_err(sp(sig::ASSET, [("hash", null())])), "asset", "`hash`");
    assert_malformed(wire_err(sp(sig::ARCHIVE, [("assets", list(vec![]))])), "archive", "`assets` must be an object");
    assert_malformed(wire_err(sp(sig::ARCHIVE, [("path", b(true))])), "archive", "`path`");
    assert_malformed(wire_err(sp(sig::BYTE_STRING, [])), "byte string", "missing `value`");
    assert_malformed(wire_err(obj([(sig::KEY, n(1.0))])), "special value", "signature");
}

#[test]
fn malformed_paths_name_the_property() {
    let m = map([("items", list(vec![null(), null(), null(), sp(sig::SECRET, [])]))]);
    let e = struct_to_wit(&m).expect_err("should fail");
    assert!(matches!(&e, ConvertError::Malformed { path, .. } if path.0 == "items[3]"), "{e:?}");
    assert_eq!(e.to_string(), "malformed secret at `items[3]`: missing `value`");
    let e = struct_to_wit(&map([("a b", sp(sig::SECRET, []))])).expect_err("should fail");
    assert!(matches!(&e, ConvertError::Malformed { path, .. } if path.0 == r#"["a b"]"#), "{e:?}");
    let e = value_to_wit(&sp(sig::SECRET, [])).expect_err("should fail");
    assert_eq!(e.to_string(), "malformed secret at the top level: missing `value`");
    // A long key is shown cut, quoted or not: a path repeats a guest's keys.
    let long = "\u{1}".repeat(10_000);
    let e = struct_to_wit(&map([(long.as_str(), obj([(long.as_str(), sp(sig::SECRET, []))]))])).unwrap_err();
    let ConvertError::Malformed { path, .. } = &e else { panic!("{e:?}") };
    assert_eq!(path.0, format!("[{:?}...][{:?}...]", "\u{1}".repeat(64), "\u{1}".repeat(64)));
    let plain = "k".repeat(100);
    let e = struct_to_wit(&map([(plain.as_str(), sp(sig::SECRET, []))])).unwrap_err();
    assert!(matches!(&e, ConvertError::Malformed { path, .. } if path.0 == format!("[\"{}\"...]", "k".repeat(64))));
}

#[test]
fn unrecognized_signature() {
    let e = wire_err(sp("0123456789abcdef", [("value", null())]));
    assert!(matches!(&e, ConvertError::UnrecognizedSignature { path, signature }
        if path.0 == "tags.env" && signature == "0123456789abcdef"));
    assert!(e.to_string().starts_with("unrecognized signature '0123456789abcdef' in property map"), "{e}");
}

#[test]
fn invalid_base64() {
    let e = wire_err(sp(sig::BYTE_STRING, [("value", s("not base64!"))]));
    assert!(matches!(&e, ConvertError::InvalidBase64 { path, .. } if path.0 == "tags.env"), "{e:?}");
    // Standard alphabet, not URL-safe.
    let e = wire_err(sp(sig::BYTE_STRING, [("value", s("_-8="))]));
    assert!(matches!(e, ConvertError::InvalidBase64 { .. }), "{e:?}");
}

#[test]
fn archive_member_on_the_wire_must_be_asset_or_archive() {
    let members = obj([("ok", sp(sig::ASSET, [("text", s(""))])), ("bad", s("plain"))]);
    let e = wire_err(sp(sig::ARCHIVE, [("assets", members)]));
    assert!(matches!(&e, ConvertError::ArchiveMember { path, found: "a string" } if path.0 == "tags.env.bad"), "{e:?}");
    let e = wire_err(sp(sig::ARCHIVE, [("assets", obj([("x", sp(sig::SECRET, [("value", null())]))]))]));
    assert!(matches!(e, ConvertError::ArchiveMember { found: "a secret", .. }), "{e:?}");
}

#[test]
fn wire_depth_is_bounded() {
    let max = Limits::default().max_depth;
    assert!(value_to_wit(&nest(max)).is_ok());
    let e = value_to_wit(&nest(max + 1)).expect_err("should fail");
    assert!(matches!(e, ConvertError::TooDeep { max: m, .. } if m == max), "{e:?}");
}

// ---- WIT -> wire: untrusted guest values ----------------------------------------

fn wv(nodes: Vec<Node>) -> Value {
    nodes_into_flat(old::Value { nodes })
}
fn o(fields: &[(&str, u32)]) -> Node {
    Node::Object(fields.iter().map(|(k, c)| ((*k).to_owned(), *c)).collect())
}
fn text(t: &str) -> Node {
    Node::Asset(Asset { hash: None, source: Some(AssetSource::Text(t.to_owned())) })
}
fn members(fields: &[(&str, u32)]) -> Node {
    let list = fields.iter().map(|(k, c)| ((*k).to_owned(), *c)).collect();
    Node::Archive(Archive { hash: None, source: Some(ArchiveSource::Assets(list)) })
}

#[track_caller]
fn guest_err(nodes: Vec<Node>) -> ConvertError {
    wit_to_value(&wv(nodes), negotiated(), Limits::default()).expect_err("should fail")
}

#[test]
fn guest_value_encodes_every_node_kind() {
    let v = wv(vec![
        o(&[("a", 1), ("s", 4), ("u", 6), ("r", 7), ("out", 8), ("arc", 10)]),
        Node::Array(vec![2, 3]),
        Node::Number(2.0),
        Node::Bool(false),
        Node::Secret(5),
        Node::String("pw".into()),
        Node::Unknown(UnknownKind::Object),
        Node::ResourceReference(ResourceReference { urn: URN.into(), id: None, package_version: String::new() }),
        Node::Output(OutputValue { value: Some(9), secret: true, dependencies: vec![URN.into()] }),
        Node::Null,
        members(&[("f", 11)]),
        text("t"),
    ]);
    let got = wit_to_struct(&v, WireOptions::default(), Limits::default()).expect("encode");
    let want = map([
        ("a", list(vec![n(2.0), b(false)])),
        ("s", sp(sig::SECRET, [("value", s("pw"))])),
        ("u", s(sig::UNKNOWN_OBJECT)),
        ("r", sp(sig::RESOURCE_REFERENCE, [("urn", s(URN))])),
        ("out", sp(sig::OUTPUT_VALUE, [("value", null()), ("secret", b(true)), ("dependencies", list(vec![s(URN)]))])),
        ("arc", sp(sig::ARCHIVE, [("assets", obj([("f", sp(sig::ASSET, [("text", s("t"))]))]))])),
    ]);
    assert_eq!(got, want);
    // A guest value need not be in pre-order, only parent-before-child.
    let v = wv(vec![Node::Array(vec![2, 1]), Node::Bool(true), Node::Bool(false)]);
    let got = wit_to_value(&v, negotiated(), Limits::default()).expect("encode");
    assert_eq!(got, list(vec![b(false), b(true)]));
}

#[test]
fn guest_empty_and_root() {
    assert!(matches!(guest_err(vec![]), ConvertError::Empty));
    let e = wit_to_struct(&wv(vec![]), negotiated(), Limits::default()).expect_err("should fail");
    assert!(matches!(e, ConvertError::Empty));
    let e = wit_to_struct(&wv(vec![Node::Array(vec![])]), negotiated(), Limits::default()).expect_err("should fail");
    assert!(matches!(e, ConvertError::RootNotObject { found: "an array" }), "{e:?}");
    // Any root is fine for a single value.
    let ok = wit_to_value(&wv(vec![Node::Array(vec![])]), negotiated(), Limits::default());
    assert_eq!(ok.expect("encode"), list(vec![]));
}

#[test]
fn guest_child_out_of_range() {
    let e = guest_err(vec![o(&[("items", 1)]), Node::Array(vec![2, 9]), Node::Null]);
    assert!(
        matches!(&e, ConvertError::ChildOutOfRange { path, node: 1, child: 9, len: 3 } if path.0 == "items"),
        "{e:?}"
    );
    let e = guest_err(vec![Node::Secret(u32::MAX)]);
    assert!(matches!(e, ConvertError::ChildOutOfRange { .. }), "{e:?}");
}

#[test]
fn guest_cycles_and_back_references() {
    let e = guest_err(vec![Node::Array(vec![0])]);
    assert!(matches!(e, ConvertError::ChildNotAfterParent { node: 0, child: 0, .. }), "{e:?}");
    let e = guest_err(vec![o(&[("a", 1)]), Node::Secret(1)]);
    assert!(matches!(&e, ConvertError::ChildNotAfterParent { path, node: 1, child: 1 } if path.0 == "a"), "{e:?}");
    let e = guest_err(vec![Node::Array(vec![1, 2]), Node::Null, Node::Array(vec![1])]);
    assert!(matches!(e, ConvertError::ChildNotAfterParent { node: 2, child: 1, .. }), "{e:?}");
}

#[test]
fn guest_shared_nodes_are_rejected() {
    // A DAG: node 2 reachable twice.
    let e = guest_err(vec![Node::Array(vec![1, 2]), Node::Array(vec![2]), Node::Null]);
    assert!(matches!(e, ConvertError::SharedNode { child: 2, first: 0, second: 1, .. }), "{e:?}");
    // The same child twice in one array.
    let e = guest_err(vec![Node::Array(vec![1, 1]), Node::Null]);
    assert!(matches!(e, ConvertError::SharedNode { child: 1, first: 0, second: 0, .. }), "{e:?}");
    // The exponential case: each level refers to the next twice.
    let mut nodes: Vec<Node> = (1..40).map(|i| Node::Array(vec![i, i])).collect();
    nodes.push(Node::Null);
    assert!(matches!(guest_err(nodes), ConvertError::SharedNode { .. }));
}

#[test]
fn guest_unreferenced_node() {
    let e = guest_err(vec![o(&[("a", 2)]), Node::Null, Node::Null]);
    assert!(matches!(e, ConvertError::Unreferenced { node: 1 }), "{e:?}");
    let e = guest_err(vec![o(&[]), Node::Null]);
    assert!(matches!(e, ConvertError::Unreferenced { node: 1 }), "{e:?}");
}

#[test]
fn guest_archive_members_must_be_assets_or_archives() {
    let e = guest_err(vec![o(&[("arc", 1)]), members(&[("ok", 2), ("bad", 3)]), text(""), Node::String("x".into())]);
    assert!(matches!(&e, ConvertError::ArchiveMember { path, found: "a string" } if path.0 == "arc.bad"), "{e:?}");
    let nested = vec![members(&[("d", 1)]), members(&[("f", 2)]), text("")];
    assert!(wit_to_value(&wv(nested), negotiated(), Limits::default()).is_ok());
}

#[test]
fn guest_duplicate_and_reserved_keys() {
    let e = guest_err(vec![o(&[("tags", 1)]), o(&[("env", 2), ("env", 3)]), Node::Null, Node::Null]);
    assert!(matches!(&e, ConvertError::DuplicateKey { path, key } if path.0 == "tags" && key == "env"), "{e:?}");
    assert_eq!(e.to_string(), "duplicate key 'env' at `tags`");
    let e = guest_err(vec![members(&[("f", 1), ("f", 2)]), text(""), text("")]);
    assert!(matches!(e, ConvertError::DuplicateKey { .. }), "{e:?}");
    let e = guest_err(vec![o(&[(sig::KEY, 1)]), Node::String(sig::SECRET.into())]);
    assert!(matches!(e, ConvertError::ReservedKey { .. }), "{e:?}");
}

#[test]
fn guest_depth_limit() {
    let limits = Limits { max_depth: 3, ..Limits::default() };
    let chain = |len: u32| -> Vec<Node> {
        let mut nodes: Vec<Node> = (1..len).map(|i| Node::Array(vec![i])).collect();
        nodes.push(Node::Null);
        nodes
    };
    assert!(wit_to_value(&wv(chain(4)), negotiated(), limits).is_ok());
    let e = wit_to_value(&wv(chain(5)), negotiated(), limits).expect_err("should fail");
    assert!(matches!(&e, ConvertError::TooDeep { path, max: 3 } if path.0 == "[0][0][0][0]"), "{e:?}");
}

#[test]
fn guest_million_deep_chain_fails_without_overflow() {
    let len: u32 = 1_000_000;
    let mut nodes: Vec<Node> = (1..len).map(|i| Node::Array(vec![i])).collect();
    nodes.push(Node::Null);
    let started = std::time::Instant::now();
    let e = guest_err(nodes);
    assert!(matches!(e, ConvertError::TooDeepForTheWire { max: 96, .. }), "{e:?}");
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    // Same chain as a property map through objects.
    let mut nodes: Vec<Node> = (1..len).map(|i| o(&[("k", i)])).collect();
    nodes.push(Node::Null);
    let e = wit_to_struct(&wv(nodes), negotiated(), Limits::default()).expect_err("should fail");
    assert!(matches!(e, ConvertError::TooDeepForTheWire { .. }), "{e:?}");
}

/// A guest's value comes back from the engine in later requests, which
/// this host decodes with prost (at most 100 nested messages): what would
/// not decode is refused on the way out.
#[test]
fn guest_values_stay_readable_when_the_engine_sends_them_back() {
    use prost::Message;
    // Objects `n` deep under a property map, a string at the bottom.
    let chain = |n: u32| {
        let mut nodes: Vec<Node> = (1..=n).map(|i| o(&[("k", i)])).collect();
        nodes.push(Node::String("leaf".into()));
        wv(nodes)
    };
    let deepest = (1..64).take_while(|&n| wit_to_struct(&chain(n), negotiated(), Limits::default()).is_ok()).last();
    assert_eq!(deepest, Some(31));
    let e = wit_to_struct(&chain(32), negotiated(), Limits::default()).unwrap_err();
    assert!(matches!(&e, ConvertError::TooDeepForTheWire { path, .. } if path.0.matches('k').count() == 32), "{e:?}");
    let resent = |s: Struct| pulumirpc::UpdateRequest { olds: Some(s), ..Default::default() }.encode_to_vec();
    // The deepest accepted decodes, even inside a secret the engine adds.
    let kept = wit_to_struct(&chain(31), negotiated(), Limits::default()).unwrap();
    let secret = obj([(sig::KEY, s(sig::SECRET)), ("value", WireValue { kind: Some(Kind::StructValue(kept)) })]);
    let wrapped = Struct { fields: [("p".to_owned(), secret)].into() };
    assert!(pulumirpc::UpdateRequest::decode(resent(wrapped).as_slice()).is_ok());
    // Three levels more, within the old bound of 128, would not.
    let mut deeper = WireValue { kind: Some(Kind::StringValue("leaf".into())) };
    for _ in 0..34 {
        deeper = obj([("k", deeper)]);
    }
    let Some(Kind::StructValue(deeper)) = deeper.kind else { unreachable!() };
    let e = pulumirpc::UpdateRequest::decode(resent(deeper).as_slice()).unwrap_err();
    assert!(e.to_string().contains("recursion limit"), "{e}");
}

#[test]
fn guest_node_count_limit() {
    let limits = Limits { max_nodes: 3, ..Limits::default() };
    let v = wv(vec![Node::Array(vec![1, 2, 3]), Node::Null, Node::Null, Node::Null]);
    let e = wit_to_value(&v, negotiated(), limits).expect_err("should fail");
    assert!(matches!(e, ConvertError::TooManyNodes { count: 4, max: 3 }), "{e:?}");
}

#[test]
fn guest_byte_strings_need_negotiation() {
    let v = wv(vec![o(&[("blob", 1)]), Node::Bytes(vec![0xff, 0xfe])]);
    let e = wit_to_struct(&v, WireOptions::default(), Limits::default()).expect_err("should fail");
    assert!(matches!(&e, ConvertError::ByteStringsNotNegotiated { path } if path.0 == "blob"), "{e:?}");
    let got = wit_to_struct(&v, negotiated(), Limits::default()).expect("encode");
    assert_eq!(got, map([("blob", sp(sig::BYTE_STRING, [("value", s("//4="))]))]));
    // Bytes that are valid UTF-8 fall back to a plain string.
    let v = wv(vec![Node::Bytes(b"ok".to_vec())]);
    assert_eq!(wit_to_value(&v, WireOptions::default(), Limits::default()).expect("encode"), s("ok"));
}

// ---- spans of the latest encoding ------------------------------------------------

fn at(start: u32, len: u32) -> Span {
    Span { start, len }
}

/// A map `{k: <node>}` in the latest encoding, over `text`.
fn flat_map(node: super::Node, text: &str) -> Value {
    Value {
        nodes: vec![super::Node::Object(at(0, 1)), node],
        items: Vec::new(),
        fields: vec![(at(0, 1), 1)],
        text: text.to_owned(),
    }
}

#[track_caller]
fn assert_bad_span(v: Value, buffer: &str) {
    match wit_to_struct(&v, negotiated(), Limits::default()) {
        Err(e @ ConvertError::BadSpan { .. }) => {
            let msg = e.to_string();
            assert!(msg.contains(buffer) && msg.contains("`k`"), "{msg}");
        }
        other => panic!("expected a bad span of {buffer}, got {other:?}"),
    }
}

#[test]
fn guest_spans_must_be_in_range_and_on_character_boundaries() {
    // "k" then "é" (two bytes): 1..3 is the é, 1..2 splits it.
    let ok = flat_map(super::Node::String(Str::Short(at(1, 2))), "ké");
    let sent = wit_to_struct(&ok, negotiated(), Limits::default()).expect("a valid span");
    assert_eq!(sent, map([("k", s("é"))]));
    assert_bad_span(flat_map(super::Node::String(Str::Short(at(1, 1))), "ké"), "text");
    assert_bad_span(flat_map(super::Node::String(Str::Short(at(2, 5))), "ké"), "text");
    assert_bad_span(flat_map(super::Node::String(Str::Short(at(u32::MAX, u32::MAX))), "ké"), "text");
    // A long string needs no span.
    let long = flat_map(super::Node::String(Str::Long("é".repeat(2000))), "k");
    assert_eq!(wit_to_struct(&long, negotiated(), Limits::default()).unwrap(), map([("k", s(&"é".repeat(2000)))]));
    let reference = super::ResourceReference {
        urn: at(0, 1),
        id: Some(super::ReferenceId::Known(at(9, 1))),
        package_version: at(0, 0),
    };
    assert_bad_span(flat_map(super::Node::ResourceReference(reference), "ké"), "text");
    let deps = super::OutputValue { value: None, secret: false, dependencies: vec![at(0, 1), at(1, 1)] };
    assert_bad_span(flat_map(super::Node::Output(deps), "ké"), "text");
    // Children: an array past the end of `items`, an object past `fields`.
    assert_bad_span(flat_map(super::Node::Array(at(0, 1)), "k"), "items");
    assert_bad_span(flat_map(super::Node::Object(at(1, 1)), "k"), "fields");
    // A key that is not in the text fails as the object's own span would.
    let mut v = flat_map(super::Node::Null, "k");
    v.fields[0].0 = at(3, 1);
    assert!(matches!(wit_to_struct(&v, negotiated(), Limits::default()), Err(ConvertError::BadSpan { .. })));
    // Two arrays sharing one span of `items` share its children.
    let v = Value {
        nodes: vec![
            super::Node::Array(at(0, 2)),
            super::Node::Array(at(2, 1)),
            super::Node::Array(at(2, 1)),
            super::Node::Null,
        ],
        items: vec![1, 2, 3],
        fields: Vec::new(),
        text: String::new(),
    };
    assert!(matches!(
        wit_to_value(&v, negotiated(), Limits::default()),
        Err(ConvertError::SharedNode { child: 3, .. })
    ));
}

#[test]
fn long_strings_move_whole_and_short_ones_share_the_text() {
    let long = "x".repeat(LONG_STRING);
    let original = map([("s", s(&long)), ("a", sp(sig::ASSET, [("text", s(&long))])), ("short", s("y"))]);
    let wit = struct_to_wit(&original).unwrap();
    let long_string = |n: &super::Node| matches!(n, super::Node::String(Str::Long(l)) if l.len() == LONG_STRING);
    assert!(wit.nodes.iter().any(long_string));
    let long_text = |n: &super::Node| {
        matches!(n, super::Node::Asset(super::Asset { source: Some(super::AssetSource::Text(Str::Long(_))), .. }))
    };
    assert!(wit.nodes.iter().any(long_text));
    // The keys and the short string.
    assert_eq!(wit.text, "asshorty");
    roundtrip(original);
}

/// Raw words of an array of `n` strings that all name the same 10 bytes of
/// text: a small value that expands `n` times over when built.
fn overlapping_strings(n: u32) -> Words {
    use pulumi_wasm_words::kind;
    let mut words = vec![n + 1, n, 0, 0, kind::ARRAY, 0, n];
    for _ in 0..n {
        words.extend([kind::STRING, 0, 10]);
    }
    words.extend(1..=n);
    Words { words, text: "abcdefghij".into(), long: vec![] }
}

#[test]
fn guest_overlapping_spans_count_against_the_byte_budget() {
    let limits = Limits { max_bytes: 50, ..Limits::default() };
    let built = wit_into_value(overlapping_strings(5), negotiated(), limits).expect("50 bytes fit");
    assert!(matches!(built.kind, Some(Kind::ListValue(l)) if l.values.len() == 5 && l.values[4] == s("abcdefghij")));
    let e = wit_into_value(overlapping_strings(6), negotiated(), limits).expect_err("60 bytes do not");
    assert!(matches!(e, ConvertError::TooManyBytes { max: 50 }), "{e:?}");
    assert_eq!(e.to_string(), "the value's strings and keys come to more than 0 MiB");
    // The default budget: 10 bytes named 42 million times would be 420 MB.
    assert_eq!(Limits::default().max_bytes, 400 << 20);
    let e = wit_into_value(overlapping_strings(3_000_000), negotiated(), Limits::default());
    assert!(e.is_ok(), "30 MB is within the default budget");
}

#[test]
fn wire_values_are_held_to_the_node_limit_before_they_are_expanded() {
    let limits = Limits { max_nodes: 10, ..Limits::default() };
    let list =
        |n: usize| WireValue { kind: Some(Kind::ListValue(ListValue { values: vec![WireValue::default(); n] })) };
    let within = map([("a", list(8))]);
    assert!(from_wire::struct_into_wit_within(within, limits).is_ok(), "root, list and 8 elements: 10 nodes");
    let over = map([("a", list(9))]);
    let e = from_wire::struct_into_wit_within(over, limits).expect_err("11 nodes");
    assert!(matches!(e, ConvertError::TooManyNodes { count, max: 10 } if count > 10), "{e:?}");
    let wide = Struct { fields: (0..11).map(|i| (format!("k{i}"), WireValue::default())).collect() };
    let e = from_wire::struct_into_wit_within(wide, limits).expect_err("a root of 11 fields");
    assert!(matches!(e, ConvertError::TooManyNodes { count, max: 10 } if count > 10), "{e:?}");
}

#[test]
fn a_known_only_answer_refuses_unknowns_by_path() {
    let known_only = WireOptions { known_only: true, ..WireOptions::default() };
    let send = |v: WireValue| {
        let wit = struct_to_wit(&single(obj([("a", list(vec![n(1.0), v]))]))).expect("decode");
        wit_to_struct(&wit, known_only, Limits::default())
    };
    for unknown in [s(sig::UNKNOWN_STRING), sp(sig::OUTPUT_VALUE, [("dependencies", list(vec![s(URN)]))])] {
        let e = send(unknown).unwrap_err().to_string();
        assert!(e.contains("`v.a[1]` is unknown"), "{e}");
    }
    send(sp(sig::OUTPUT_VALUE, [("value", s("known"))])).expect("a known output value is known");
    send(sp(sig::RESOURCE_REFERENCE, [("urn", s(URN)), ("id", s(""))])).expect("a reference's id may be unknown");
    // A guest's string that is a sentinel would be read as one.
    let sentinel = wv(vec![o(&[("a", 1)]), Node::String(sig::UNKNOWN_NUMBER.into())]);
    let e = wit_to_struct(&sentinel, known_only, Limits::default()).unwrap_err().to_string();
    assert!(e.contains("`a` is unknown"), "{e}");
    assert!(wit_to_struct(&sentinel, WireOptions::default(), Limits::default()).is_ok(), "a preview may");
    // Unless the reference goes as its id, which would be the unknown sentinel.
    let plain = WireOptions { plain_references: true, ..known_only };
    let wit = struct_to_wit(&single(sp(sig::RESOURCE_REFERENCE, [("urn", s(URN)), ("id", s(""))]))).expect("decode");
    let e = wit_to_struct(&wit, plain, Limits::default()).unwrap_err().to_string();
    assert!(e.contains("`v` is unknown"), "{e}");
    let wit = struct_to_wit(&single(sp(sig::RESOURCE_REFERENCE, [("urn", s(URN)), ("id", s("i-1"))]))).expect("decode");
    assert_eq!(wit_to_struct(&wit, plain, Limits::default()).expect("a known id"), single(s("i-1")));
}
