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
    // 20 nodes, 2 items, 1 field, and extra: the byte string 2, assets and
    // archives 6 each, references 7 each, the outputs 4 + 2 per dependency.
    let extra = 2 + 5 * 6 + 3 * 7 + (4 + 4) + 4;
    assert_eq!(words.words[..4], [20, 2, 1, extra]);
    assert_eq!(words.words.len(), 4 + 60 + 2 + 3 + extra as usize);
    assert_eq!(words.words[64..69], [1, 2, 0, 1, 4], "items, then the field");
    assert_eq!(words.long.len(), 2, "the long string and the long asset text");
    assert_eq!(words.words[69..71], [2, 0x00ff], "the byte string: its length, then its bytes");
    let back = unpack(words).expect("unpacks");
    assert_eq!(format!("{back:?}"), format!("{tree:?}"));
}

/// Where node `n` and word `k` of extra are in the every-kind value's words.
fn node(n: usize) -> usize {
    4 + 3 * n
}
fn extra(k: usize) -> usize {
    69 + k
}

/// The packed every-kind value with `f` applied to it.
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
fn the_counts_must_add_up_to_the_words() {
    fails(|v| _ = v.words.pop(), "are 133, but 20 nodes, 2 items, 1 fields and 65 words of extra make 134");
    fails(|v| v.words[1] = 3, "make 135");
    fails(|v| v.words.truncate(3), "are 3, fewer than the four counts");
    // Counts that would wrap around in 32 bits.
    fails(|v| v.words[..4].copy_from_slice(&[u32::MAX, u32::MAX, u32::MAX, 7]), "make");
}

#[test]
fn kinds_and_flags_must_be_known() {
    fails(|v| v.words[node(0)] = 14, "node 0: kind 14 is not one of 0-13");
    fails(|v| v.words[node(1) + 1] = 2, "node 1: its bool is 2");
    fails(|v| v.words[node(9) + 1] = 7, "node 9: unknown kind 7");
    // The first asset's operands follow the byte string's two words: hash flag, then source.
    fails(|v| v.words[extra(2)] = 9, "node 10: its hash flag is 9");
    fails(|v| v.words[extra(2 + 3)] = 5, "node 10: asset source 5");
    // Archives take assets (5) but not text (1).
    fails(|v| v.words[extra(20 + 3)] = 1, "node 13: archive source 1");
    fails(|v| v.words[extra(32 + 2)] = 3, "node 15: resource reference ID kind 3");
}

#[test]
fn long_strings_are_each_used_by_one_node() {
    // Node 3 (a short string) made to use long string 0 as node 4 does.
    fails(
        |v| v.words[node(3)..node(4)].copy_from_slice(&[kind::LONG_STRING, 0, 0]),
        "node 4: long string 0 is used by an earlier node",
    );
    fails(|v| v.words[node(4) + 1] = 9, "node 4: long string 9 is past the end of long");
    fails(|v| v.long.push(String::new()), "long has 1 strings that no node uses");
}

#[test]
fn extra_words_follow_each_other_in_node_order_and_are_all_used() {
    // The second asset (node 11) pointing back at the first's operands.
    fails(|v| v.words[node(11) + 1] = 2, "node 11: its operands start at word 2 of extra, not at word 8");
    fails(|v| v.words[node(5) + 1] = 1, "node 5: its operands start at word 1 of extra, not at word 0");
    // One word of extra more, counted, that no node uses.
    fails(
        |v| {
            v.words.push(0);
            v.words[3] += 1;
        },
        "extra has 1 words that no node uses",
    );
    // An output or a byte string promising more words than there are.
    fails(|v| v.words[extra(53 + 3)] = u32::MAX, "node 18: its 8589934594 words of operands run past the end");
    fails(|v| v.words[extra(0)] = u32::MAX, "node 5: its 1073741825 words of operands run past");
    // A byte string made longer takes the next node's operands for its own.
    fails(|v| v.words[extra(0)] = 9, "node 10: its operands start at word 2 of extra, not at word 4");
}

#[test]
fn a_value_the_host_built_unpacks_for_an_older_component() {
    let tree = every_kind();
    assert_eq!(format!("{:?}", unpack_trusted(&pack(tree.clone()))), format!("{tree:?}"));
    let mut bad = pack(tree);
    bad.words.push(0);
    let empty = unpack_trusted(&bad);
    assert!(matches!(empty.nodes[..], [t::Node::Object(s)] if s.len == 0), "an empty map, not a panic");
}

/// Inside an RPC whose component reads held texts (`runtime::held`), a long
/// asset text is kept back as a handle and its length; other long strings
/// still travel in `long`. Unpacked in the same RPC, the text comes back.
#[tokio::test]
async fn long_asset_texts_are_held_inside_an_enabled_scope() {
    let tree = every_kind();
    crate::runtime::held::scope(true, async {
        let words = pack(tree.clone());
        assert_eq!(words.long, vec!["L".repeat(2000)], "only the long string, not the asset text");
        // The long asset is node 10; its operands are extra's words 2-7.
        assert_eq!(words.words[node(10)], kind::ASSET);
        let [hash, _, _, src, handle, len] = words.words[extra(2)..extra(8)] else { unreachable!() };
        assert_eq!((hash, src, len), (1, source::HELD_TEXT, 1));
        assert_eq!(crate::runtime::held::text(handle).as_deref(), Some("T"));
        let mut named = vec![];
        held_handles(&words, &mut |h| named.push(h));
        assert_eq!(named, [handle], "the words name the one held text");
        let back = unpack(words).expect("unpacks in the same RPC");
        assert_eq!(format!("{back:?}"), format!("{tree:?}"));
    })
    .await;
}

#[tokio::test]
async fn a_held_text_must_be_this_calls_and_its_length_right() {
    let (words, handle) = crate::runtime::held::scope(true, async {
        let words = pack(every_kind());
        let handle = words.words[extra(6)];
        let mut wrong = words.clone();
        wrong.words[extra(7)] = 2;
        let e = unpack(wrong).expect_err("a wrong length").to_string();
        assert!(e.contains(&format!("held text {handle} is 1 bytes, not 2")), "{e}");
        let mut other = words.clone();
        other.words[extra(6)] = handle.wrapping_add(1);
        let e = unpack(other).expect_err("a handle not given out").to_string();
        assert!(e.contains("is not one this call was given"), "{e}");
        (words, handle)
    })
    .await;
    // The same words after the RPC, whose table is gone.
    let e = unpack(words).expect_err("outside the RPC").to_string();
    assert!(e.contains(&format!("node 10: held text {handle} is not one this call was given")), "{e}");
}

/// A value may name one held text many times; each use is a copy, so the
/// copies count against a budget and stop at it.
#[tokio::test]
async fn held_texts_named_again_and_again_stop_at_the_budget() {
    let text = t::Str::Long("x".repeat(2000));
    let asset = t::Node::Asset(t::Asset { hash: None, source: Some(t::AssetSource::Text(text)) });
    let tree = t::Value {
        nodes: vec![t::Node::Array(sp(0, 3)), asset.clone(), asset.clone(), asset],
        items: vec![1, 2, 3],
        fields: vec![],
        text: String::new(),
    };
    crate::runtime::held::scope(true, async {
        let mut words = pack(tree);
        // Extra starts after the counts, 4 nodes and 3 items; 6 words per asset.
        let operands = |k: usize| HEADER + 12 + 3 + 6 * k;
        let first = words.words[operands(0) + 4];
        assert_eq!(words.words[operands(0) + 3], source::HELD_TEXT);
        for k in 1..3 {
            words.words[operands(k) + 4] = first;
        }
        let e = unpack_within(words.clone(), 5999).expect_err("three copies of 2000 bytes");
        assert!(matches!(e, WordsError::TooManyBytes { max: 5999 }), "{e:?}");
        let back = unpack_within(words, 6000).expect("within the budget");
        assert_eq!(back.nodes.len(), 4);
    })
    .await;
    assert_eq!(MAX_VALUE_BYTES, 400 << 20);
}
