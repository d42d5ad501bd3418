//! Property tests of the value conversion: whatever a guest returns and
//! whatever the wire carries, the conversion answers with a value or an
//! error, never a panic, and what it sends on is stable when read back.
//! Values are compared by their protobuf encoding, so NaNs compare too.

use proptest::collection::vec;
use proptest::prelude::*;
use prost::Message;
use prost_types::value::Kind;
use prost_types::{ListValue, Struct, Value as WireValue};

use super::*;
// Guest values are generated in 0.1.0's nodes (each string and child list in
// place) and converted as an 0.1.0 component's are; `hostile_flat` makes
// values in the latest encoding directly, with any spans.
use crate::runtime::bindings::nodes_into_flat;
use crate::runtime::bindings::v0_1_0::pulumi::provider::types as old;
use old::{Archive, ArchiveSource, Asset, AssetSource, Node, OutputValue, ReferenceId, ResourceReference, UnknownKind};

const SIGNATURES: [&str; 7] = [
    sig::SECRET,
    sig::RESOURCE_REFERENCE,
    sig::OUTPUT_VALUE,
    sig::ASSET,
    sig::ARCHIVE,
    sig::BYTE_STRING,
    "not-a-signature",
];

/// Property names, with the ones that mean something to the conversion.
fn key() -> impl Strategy<Value = String> + Clone {
    prop_oneof![
        4 => "[a-z]{0,3}",
        1 => Just(sig::KEY.to_owned()),
        1 => prop::sample::select(&["value", "hash", "text", "path", "uri", "assets", "urn", "id", "secret", "dependencies", "packageVersion"][..]).prop_map(str::to_owned),
        1 => "\\PC{0,3}",
    ]
}

fn text() -> impl Strategy<Value = String> + Clone {
    let sentinels: Vec<&str> = UNKNOWNS.iter().map(|(_, s)| *s).collect();
    prop_oneof![4 => "\\PC{0,6}", 1 => prop::sample::select(sentinels).prop_map(str::to_owned)]
}

fn number() -> impl Strategy<Value = f64> {
    prop_oneof![any::<f64>(), Just(f64::NAN), Just(f64::INFINITY), Just(-0.0)]
}

// ---- guest output: node lists -------------------------------------------------

fn unknown_kind() -> impl Strategy<Value = UnknownKind> {
    prop::sample::select(vec![
        UnknownKind::Bool,
        UnknownKind::Number,
        UnknownKind::String,
        UnknownKind::Array,
        UnknownKind::Asset,
        UnknownKind::Archive,
        UnknownKind::Object,
    ])
}

fn asset() -> impl Strategy<Value = Asset> {
    let source = prop_oneof![
        text().prop_map(AssetSource::Text),
        text().prop_map(AssetSource::Path),
        text().prop_map(AssetSource::Uri),
    ];
    (prop::option::of(text()), prop::option::of(source)).prop_map(|(hash, source)| Asset { hash, source })
}

/// A resource reference; its ID absent, unknown, or any string (sentinels too).
fn reference() -> impl Strategy<Value = Node> {
    (text(), prop::option::of(prop::option::of(text())), text()).prop_map(|(urn, id, v)| {
        Node::ResourceReference(ResourceReference {
            urn,
            id: id.map(|id| id.map_or(ReferenceId::Unknown, ReferenceId::Known)),
            package_version: v,
        })
    })
}

/// A node whose child indices are anything below `len + 2`: mostly broken
/// structures (cycles, sharing, out of range), some valid ones.
fn node(len: u32) -> impl Strategy<Value = Node> {
    let idx = 0..len + 2;
    let members = vec((key(), idx.clone()), 0..3)
        .prop_map(|m| Node::Archive(Archive { hash: None, source: Some(ArchiveSource::Assets(m)) }));
    let output = (prop::option::of(idx.clone()), any::<bool>(), vec(text(), 0..2))
        .prop_map(|(value, secret, dependencies)| Node::Output(OutputValue { value, secret, dependencies }));
    prop_oneof![
        4 => leaf(),
        1 => vec(idx.clone(), 0..3).prop_map(Node::Array),
        1 => vec((key(), idx.clone()), 0..4).prop_map(Node::Object),
        1 => members,
        1 => idx.prop_map(Node::Secret),
        1 => output,
    ]
}

fn nodes() -> impl Strategy<Value = Vec<Node>> {
    (0u32..10).prop_flat_map(|len| vec(node(len), len as usize))
}

/// A node without children.
fn leaf() -> impl Strategy<Value = Node> {
    let archive = prop_oneof![text().prop_map(ArchiveSource::Path), text().prop_map(ArchiveSource::Uri)];
    prop_oneof![
        Just(Node::Null),
        any::<bool>().prop_map(Node::Bool),
        number().prop_map(Node::Number),
        text().prop_map(Node::String),
        vec(any::<u8>(), 0..4).prop_map(Node::Bytes),
        asset().prop_map(Node::Asset),
        (prop::option::of(text()), prop::option::of(archive))
            .prop_map(|(hash, source)| Node::Archive(Archive { hash, source })),
        unknown_kind().prop_map(Node::Unknown),
        reference(),
    ]
}

/// A well-formed tree, as an SDK would flatten it; its contents may still
/// be refused (duplicate or reserved keys, archive members that are not
/// assets, byte strings the engine did not negotiate).
#[derive(Clone, Debug)]
enum Tree {
    Leaf(Node),
    Array(Vec<Tree>),
    Object(Vec<(String, Tree)>),
    Secret(Box<Tree>),
    Output(Option<Box<Tree>>, bool, Vec<String>),
    Members(Vec<(String, Tree)>),
}

fn tree() -> impl Strategy<Value = Tree> {
    leaf().prop_map(Tree::Leaf).prop_recursive(6, 64, 5, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..5).prop_map(Tree::Array),
            vec((key(), inner.clone()), 0..5).prop_map(Tree::Object),
            inner.clone().prop_map(|t| Tree::Secret(Box::new(t))),
            (prop::option::of(inner.clone()), any::<bool>(), vec(text(), 0..2))
                .prop_map(|(v, secret, deps)| Tree::Output(v.map(Box::new), secret, deps)),
            vec((key(), inner), 0..3).prop_map(Tree::Members),
        ]
    })
}

/// Pre-order, as the WIT contract asks: a parent before its children.
fn flatten(t: Tree, nodes: &mut Vec<Node>) -> u32 {
    let at = nodes.len();
    nodes.push(Node::Null);
    let node = match t {
        Tree::Leaf(n) => n,
        Tree::Array(items) => Node::Array(items.into_iter().map(|c| flatten(c, nodes)).collect()),
        Tree::Object(fields) => Node::Object(fields.into_iter().map(|(k, c)| (k, flatten(c, nodes))).collect()),
        Tree::Secret(c) => Node::Secret(flatten(*c, nodes)),
        Tree::Output(v, secret, dependencies) => {
            Node::Output(OutputValue { value: v.map(|c| flatten(*c, nodes)), secret, dependencies })
        }
        Tree::Members(m) => {
            let list = m.into_iter().map(|(k, c)| (k, flatten(c, nodes))).collect();
            Node::Archive(Archive { hash: None, source: Some(ArchiveSource::Assets(list)) })
        }
    };
    nodes[at] = node;
    at as u32
}

/// A span of a buffer of `len`: mostly in range, sometimes past its end.
fn span(len: usize) -> impl Strategy<Value = Span> {
    let len = len as u32;
    (0..len + 3, 0..len + 3).prop_map(|(start, len)| Span { start, len })
}

/// A value in the latest encoding whose spans are anything: past the ends
/// of the buffers, splitting a multi-byte character, shared by two nodes.
fn hostile_flat() -> impl Strategy<Value = Value> {
    ("[a-zé€😀]{0,10}", vec(0u32..8, 0..8), 0usize..8)
        .prop_flat_map(|(text, items, fields)| {
            let t = text.len();
            let reference = (span(t), span(t), prop::option::of(span(t))).prop_map(|(urn, package_version, id)| {
                super::Node::ResourceReference(super::ResourceReference {
                    urn,
                    id: id.map(super::ReferenceId::Known),
                    package_version,
                })
            });
            let asset = (prop::option::of(span(t)), span(t)).prop_map(|(hash, s)| {
                super::Node::Asset(super::Asset { hash, source: Some(super::AssetSource::Text(super::Str::Short(s))) })
            });
            let node = prop_oneof![
                Just(super::Node::Null),
                span(t).prop_map(|s| super::Node::String(super::Str::Short(s))),
                "\\PC{0,3}".prop_map(|s| super::Node::String(super::Str::Long(s))),
                span(items.len()).prop_map(super::Node::Array),
                span(fields).prop_map(super::Node::Object),
                span(fields).prop_map(|s| super::Node::Archive(super::Archive {
                    hash: None,
                    source: Some(super::ArchiveSource::Assets(s)),
                })),
                vec(span(t), 0..2).prop_map(|dependencies| super::Node::Output(super::OutputValue {
                    value: None,
                    secret: false,
                    dependencies,
                })),
                reference,
                asset,
            ];
            (vec(node, 1..8), vec((span(t), 0u32..8), fields), Just(items), Just(text))
        })
        .prop_map(|(nodes, fields, items, text)| Value { nodes, items, fields, text })
}

/// What a guest's value becomes on the wire must read back as itself: the
/// engine, or this host in a later call, gets the same value again.
fn stable_on_the_wire(sent: &WireValue) {
    let wit = value_to_wit(sent).expect("what the host sends must read back");
    let again = wit_to_value(&wit, WireOptions { byte_strings: true, ..WireOptions::default() }, Limits::default())
        .expect("and convert again");
    assert_eq!(again.encode_to_vec(), sent.encode_to_vec(), "not stable: {sent:?} -> {again:?}");
}

// ---- the wire: protobuf values ------------------------------------------------

fn wire_leaf() -> impl Strategy<Value = WireValue> {
    prop_oneof![
        Just(None),
        Just(Some(Kind::NullValue(0))),
        any::<bool>().prop_map(|b| Some(Kind::BoolValue(b))),
        number().prop_map(|n| Some(Kind::NumberValue(n))),
        text().prop_map(|s| Some(Kind::StringValue(s))),
    ]
    .prop_map(|kind| WireValue { kind })
}

/// Plain values, and structs that carry a signature (valid or not) among
/// fields that may or may not be what that signature needs.
fn wire_value() -> impl Strategy<Value = WireValue> {
    wire_leaf().prop_recursive(5, 48, 4, |inner| {
        let fields = vec((key(), inner.clone()), 0..4);
        prop_oneof![
            vec(inner.clone(), 0..4).prop_map(|values| WireValue { kind: Some(Kind::ListValue(ListValue { values })) }),
            fields
                .clone()
                .prop_map(|f| WireValue { kind: Some(Kind::StructValue(Struct { fields: f.into_iter().collect() })) }),
            (prop::sample::select(&SIGNATURES[..]), fields).prop_map(|(signature, f)| {
                let mut fields: std::collections::BTreeMap<_, _> = f.into_iter().collect();
                fields.insert(sig::KEY.to_owned(), WireValue { kind: Some(Kind::StringValue(signature.to_owned())) });
                WireValue { kind: Some(Kind::StructValue(Struct { fields })) }
            }),
        ]
    })
}

/// True when no struct in `v` has the signature key: a plain JSON-like value.
fn plain(v: &WireValue) -> bool {
    match &v.kind {
        Some(Kind::ListValue(l)) => l.values.iter().all(plain),
        Some(Kind::StructValue(s)) => !s.fields.contains_key(sig::KEY) && s.fields.values().all(plain),
        _ => true,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn any_guest_node_list_is_a_value_or_an_error(nodes in nodes(), byte_strings in any::<bool>()) {
        let v = words::pack(nodes_into_flat(old::Value { nodes }));
        let opts = WireOptions { byte_strings, ..WireOptions::default() };
        let borrowed = wit_to_value(&v, opts, Limits::default());
        if let Ok(sent) = &borrowed {
            stable_on_the_wire(sent);
        }
        // A property map must be an object; the same nodes as one never panic either.
        if let Ok(sent) = wit_to_struct(&v, opts, Limits::default()) {
            stable_on_the_wire(&WireValue { kind: Some(Kind::StructValue(sent)) });
        }
        // The owning conversion agrees with the borrowing one.
        let borrowed = borrowed.map(|w| w.encode_to_vec()).map_err(|e| e.to_string());
        let owned = wit_into_value(v, opts, Limits::default()).map(|w| w.encode_to_vec()).map_err(|e| e.to_string());
        prop_assert_eq!(borrowed, owned);
    }

    #[test]
    fn any_guest_value_with_any_spans_is_a_value_or_an_error(v in hostile_flat(), byte_strings in any::<bool>()) {
        let v = words::pack(v);
        let opts = WireOptions { byte_strings, ..WireOptions::default() };
        if let Ok(sent) = wit_to_value(&v, opts, Limits::default()) {
            stable_on_the_wire(&sent);
        }
        if let Ok(sent) = wit_to_struct(&v, opts, Limits::default()) {
            stable_on_the_wire(&WireValue { kind: Some(Kind::StructValue(sent)) });
        }
    }

    #[test]
    fn any_well_formed_guest_tree_is_a_value_or_an_error(t in tree(), byte_strings in any::<bool>()) {
        let mut nodes = Vec::new();
        flatten(t, &mut nodes);
        let v = words::pack(nodes_into_flat(old::Value { nodes }));
        if let Ok(sent) = wit_to_value(&v, WireOptions { byte_strings, ..WireOptions::default() }, Limits::default()) {
            stable_on_the_wire(&sent);
        }
    }

    #[test]
    fn any_word_lists_are_a_value_or_an_error(v in hostile_words(), byte_strings in any::<bool>()) {
        let opts = WireOptions { byte_strings, ..WireOptions::default() };
        if let Ok(sent) = wit_to_value(&v, opts, Limits::default()) {
            stable_on_the_wire(&sent);
        }
        if let Ok(sent) = wit_to_struct(&v, opts, Limits::default()) {
            stable_on_the_wire(&WireValue { kind: Some(Kind::StructValue(sent)) });
        }
    }

    #[test]
    fn any_wire_value_is_a_value_or_an_error(v in wire_value()) {
        let Ok(wit) = value_to_wit(&v) else { return Ok(()) };
        let sent = wit_to_value(&wit, WireOptions { byte_strings: true, ..WireOptions::default() }, Limits::default())
            .expect("a value the host read from the wire converts back");
        stable_on_the_wire(&sent);
        // Plain values come back exactly as they came (an absent kind reads as null).
        if plain(&v) {
            let mut expected = v.clone();
            normalize_absent(&mut expected);
            prop_assert_eq!(sent.encode_to_vec(), expected.encode_to_vec());
        }
        // The owning conversion reads the same nodes.
        let owned = value_into_wit(v).expect("the owning conversion agrees");
        let owned = wit_to_value(&owned, WireOptions { byte_strings: true, ..WireOptions::default() }, Limits::default()).unwrap();
        prop_assert_eq!(owned.encode_to_vec(), sent.encode_to_vec());
    }
}

/// Any words at all: kinds in and just out of range, small operands (so
/// they often land inside the other sections), counts that mostly add up.
fn hostile_words() -> impl Strategy<Value = Words> {
    let word = prop_oneof![3 => 0u32..16, 1 => any::<u32>()];
    let triple = prop::array::uniform3(word.clone());
    (
        vec(triple.clone(), 0..10),
        vec(0u32..8, 0..8),
        vec(triple, 0..4),
        vec(word.clone(), 0..16),
        prop::option::weighted(0.1, prop::array::uniform4(word)),
        "[a-zé€]{0,10}",
        vec("\\PC{0,3}", 0..3),
    )
        .prop_map(|(nodes, items, fields, extra, counts, text, long)| {
            let counts = counts.unwrap_or([nodes.len(), items.len(), fields.len(), extra.len()].map(|n| n as u32));
            let words = [&counts[..], &nodes.concat(), &items, &fields.concat(), &extra].concat();
            Words { words, text, long }
        })
}

/// `kind: None` is read as null, and sent back as one.
fn normalize_absent(v: &mut WireValue) {
    match &mut v.kind {
        None => v.kind = Some(Kind::NullValue(0)),
        Some(Kind::ListValue(l)) => l.values.iter_mut().for_each(normalize_absent),
        Some(Kind::StructValue(s)) => s.fields.values_mut().for_each(normalize_absent),
        _ => {}
    }
}
