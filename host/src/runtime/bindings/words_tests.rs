use super::*;

fn sp(start: u32, len: u32) -> t::Span {
    t::Span { start, len }
}

/// One node of every kind and case, in one tree (its shape does not matter here).
fn every_kind() -> t::Value {
    use t::Node as N;
    let nodes = vec![
        N::Null,
        N::Bool(true),
        N::Number(-1.5e300),
        N::String(t::Str::Short(sp(0, 3))),
        N::String(t::Str::Long("L".repeat(2000))),
        N::Bytes(vec![0xff, 0]),
        N::Array(sp(0, 2)),
        N::Object(sp(0, 1)),
        N::Secret(3),
        N::Unknown(t::UnknownKind::Archive),
        N::Asset(t::Asset { hash: Some(sp(1, 2)), source: Some(t::AssetSource::Text(t::Str::Long("T".into()))) }),
        N::Asset(t::Asset { hash: None, source: Some(t::AssetSource::Path(sp(2, 1))) }),
        N::Asset(t::Asset { hash: None, source: None }),
        N::Archive(t::Archive { hash: Some(sp(0, 1)), source: Some(t::ArchiveSource::Assets(sp(0, 1))) }),
        N::Archive(t::Archive { hash: None, source: Some(t::ArchiveSource::Uri(sp(1, 1))) }),
        N::ResourceReference(t::ResourceReference {
            urn: sp(0, 3),
            id: Some(t::ReferenceId::Known(sp(1, 1))),
            package_version: sp(0, 0),
        }),
        N::ResourceReference(t::ResourceReference {
            urn: sp(0, 1),
            id: Some(t::ReferenceId::Unknown),
            package_version: sp(2, 1),
        }),
        N::ResourceReference(t::ResourceReference { urn: sp(0, 1), id: None, package_version: sp(0, 0) }),
        N::Output(t::OutputValue { value: Some(1), secret: true, dependencies: vec![sp(0, 1), sp(1, 2)] }),
        N::Output(t::OutputValue { value: None, secret: false, dependencies: vec![] }),
    ];
    t::Value { nodes, items: vec![1, 2], fields: vec![(sp(0, 1), 4)], text: "abc".into() }
}

#[test]
fn every_node_kind_packs_and_unpacks_unchanged() {
    let tree = every_kind();
    let words = pack(tree.clone());
    assert_eq!(words.nodes.len(), tree.nodes.len() * 3);
    assert_eq!(words.fields, vec![0, 1, 4]);
    assert_eq!(words.long.len(), 2, "the long string and the long asset text");
    assert_eq!(words.blobs, vec![vec![0xff, 0]]);
    let back = unpack(words).expect("unpacks");
    assert_eq!(format!("{back:?}"), format!("{tree:?}"));
}

/// The packed every-kind value with `f` applied to its words.
fn broken(f: impl FnOnce(&mut w::Value)) -> String {
    let mut words = pack(every_kind());
    f(&mut words);
    unpack(words).expect_err("should fail").to_string()
}

#[track_caller]
fn fails(f: impl FnOnce(&mut w::Value), needle: &str) {
    let e = broken(f);
    assert!(e.contains(needle), "{e:?} should contain {needle:?}");
}

#[test]
fn lists_of_triples_must_be_whole() {
    fails(|v| _ = v.nodes.pop(), "nodes has 59 words, not a multiple of 3");
    fails(|v| v.fields.push(0), "fields has 4 words");
}

#[test]
fn kinds_and_flags_must_be_known() {
    fails(|v| v.nodes[0] = 14, "node 0: kind 14 is not one of 0-13");
    fails(|v| v.nodes[3 + 1] = 2, "node 1: its bool is 2");
    fails(|v| v.nodes[9 * 3 + 1] = 7, "node 9: unknown kind 7");
    // The first asset's operands start the extra words: hash flag, then source.
    fails(|v| v.extra[0] = 9, "node 10: its hash flag is 9");
    fails(|v| v.extra[3] = 5, "node 10: asset source 5");
    // Archives take assets (5) but not text (1).
    fails(|v| v.extra[18 + 3] = 1, "node 13: archive source 1");
    fails(|v| v.extra[30 + 2] = 3, "node 15: resource reference ID kind 3");
}

#[test]
fn long_strings_and_blobs_are_each_used_by_one_node() {
    // Node 3 (a short string) made to use long string 0 as node 4 does.
    fails(
        |v| v.nodes[9..12].copy_from_slice(&[kind::LONG_STRING, 0, 0]),
        "node 4: long string 0 is used by an earlier node",
    );
    fails(|v| v.nodes[12 + 1] = 9, "node 4: long string 9 is past the end of long");
    fails(|v| v.long.push(String::new()), "long has 1 entries that no node uses");
    fails(|v| v.nodes[0..3].copy_from_slice(&[kind::BYTES, 0, 0]), "node 5: byte string 0 is used by an earlier node");
    fails(|v| v.blobs.clear(), "node 5: byte string 0 is past the end of blobs");
    fails(|v| v.blobs.push(vec![]), "blobs has 1 entries that no node uses");
}

#[test]
fn extra_words_follow_each_other_in_node_order_and_are_all_used() {
    // The second asset (node 11) pointing back at the first's operands.
    fails(|v| v.nodes[11 * 3 + 1] = 0, "node 11: its operands start at word 0 of extra, not at word 6");
    fails(|v| v.extra.push(0), "extra has 1 words that no node uses");
    fails(|v| _ = v.extra.pop(), "node 19: its operands run past the end of extra");
    // An output promising more dependencies than there are words.
    let first_output = 6 * 5 + 7 * 3;
    fails(|v| v.extra[first_output + 3] = u32::MAX, "node 18: its 4294967295 dependencies run past the end of extra");
}

#[test]
fn a_value_the_host_built_unpacks_for_an_older_component() {
    let tree = every_kind();
    assert_eq!(format!("{:?}", unpack_trusted(&pack(tree.clone()))), format!("{tree:?}"));
    let mut bad = pack(tree);
    bad.nodes.push(0);
    let empty = unpack_trusted(&bad);
    assert!(matches!(empty.nodes[..], [t::Node::Object(s)] if s.len == 0), "an empty map, not a panic");
}
