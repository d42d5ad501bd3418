//! Property tests of the SDK's values: the WIT encoding round-trips every
//! value exactly, and [`Differ`] is consistent with itself and with [`same`].

use std::collections::{BTreeMap, BTreeSet};

use proptest::collection::vec;
use proptest::prelude::*;

use crate::Differ;
use crate::diff::same;
use crate::provider::DiffChanges;
use crate::value::*;
use crate::wire::{decode_map, encode_map};

fn key() -> impl Strategy<Value = String> + Clone {
    prop_oneof![4 => "[a-c]{1,2}", 1 => "\\PC{0,3}"]
}

fn text() -> impl Strategy<Value = String> + Clone {
    "\\PC{0,5}"
}

fn unknown_kind() -> impl Strategy<Value = UnknownKind> {
    prop::sample::select(UnknownKind::ALL.to_vec())
}

fn asset() -> impl Strategy<Value = Asset> + Clone {
    let source = prop_oneof![
        text().prop_map(|t| AssetSource::Text(t.into())),
        text().prop_map(AssetSource::Path),
        text().prop_map(AssetSource::Uri)
    ];
    (prop::option::of(text()), prop::option::of(source)).prop_map(|(hash, source)| Asset { hash, source })
}

/// Values without NaN when `nan` is false (a NaN is never equal to itself,
/// so it is always a change: right for a diff, not for reflexivity tests).
fn value(nan: bool) -> impl Strategy<Value = Value> {
    let number = if nan { prop_oneof![any::<f64>(), Just(f64::NAN)].boxed() } else { (-1e6..1e6f64).boxed() };
    let reference = (text(), prop::option::of(prop::option::of(text())), text()).prop_map(|(urn, id, v)| {
        Value::ResourceRef(ResourceRef {
            urn,
            id: id.map(|id| id.map_or(RefId::Unknown, RefId::Known)),
            package_version: v,
        })
    });
    let member = prop_oneof![
        asset().prop_map(ArchiveMember::Asset),
        text().prop_map(|p| ArchiveMember::Archive(Archive { hash: None, source: Some(ArchiveSource::Path(p)) })),
    ];
    let archive = (prop::option::of(text()), prop::collection::btree_map(key(), member, 0..3))
        .prop_map(|(hash, m)| Value::Archive(Archive { hash, source: Some(ArchiveSource::Assets(m)) }));
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        number.prop_map(Value::Number),
        text().prop_map(Value::String),
        vec(any::<u8>(), 0..4).prop_map(Value::Bytes),
        asset().prop_map(Value::Asset),
        archive,
        unknown_kind().prop_map(Value::Unknown),
        reference,
    ];
    leaf.prop_recursive(5, 48, 4, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(key(), inner.clone(), 0..4).prop_map(Value::Object),
            inner.clone().prop_map(|v| Value::Secret(Box::new(v))),
            (prop::option::of(inner), any::<bool>(), vec(text(), 0..2)).prop_map(|(v, secret, dependencies)| {
                Value::Output(Output { value: v.map(Box::new), secret, dependencies })
            }),
        ]
    })
}

fn map(nan: bool) -> impl Strategy<Value = PropertyMap> {
    prop::collection::btree_map(key(), value(nan), 0..5)
}

fn present(v: Option<&Value>) -> Option<&Value> {
    v.filter(|v| !v.plain().is_null())
}

/// Absent and null are the same property.
fn stable(a: Option<&Value>, b: Option<&Value>) -> bool {
    match (present(a), present(b)) {
        (None, None) => true,
        (Some(a), Some(b)) => same(a, b),
        _ => false,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn the_wit_encoding_round_trips_every_value(m in map(true)) {
        // Debug, so NaNs compare equal to themselves.
        prop_assert_eq!(format!("{:?}", decode_map(encode_map(&m)).unwrap()), format!("{m:?}"));
    }

    #[test]
    fn a_map_without_unknowns_has_no_diff_with_itself(m in map(false)) {
        prop_assume!(!m.values().any(Value::contains_unknowns));
        let d = Differ::new().diff(&m, &m.clone());
        prop_assert_eq!(d.changes, DiffChanges::None);
        prop_assert!(d.detailed_diff.unwrap_or_default().is_empty());
    }

    #[test]
    fn a_map_with_unknowns_always_differs_from_itself(m in map(false)) {
        prop_assume!(m.values().any(Value::contains_unknowns));
        prop_assert_eq!(Differ::new().diff(&m, &m.clone()).changes, DiffChanges::Some);
    }

    #[test]
    fn the_diff_sorts_every_key_once_and_agrees_with_same(
        a in map(false), b in map(false), replace in vec(key(), 0..2), swap in any::<bool>(),
    ) {
        // Keys only: paths (`a.b`, `*`) are diff.rs's tests'.
        prop_assume!(replace.iter().all(|k| !k.contains(['.', '[', '*'])));
        let (olds, news) = if swap { (b, a) } else { (a, b) };
        let d = Differ::new().replace_on_changes(&replace).diff(&olds, &news);
        let keys: BTreeSet<&String> = olds.keys().chain(news.keys()).collect();
        let diffs: BTreeSet<&String> = d.diffs.iter().collect();
        let stables: BTreeSet<&String> = d.stables.iter().collect();
        prop_assert!(diffs.is_disjoint(&stables));
        prop_assert_eq!(diffs.union(&stables).copied().collect::<BTreeSet<_>>(), keys.clone());
        prop_assert_eq!(d.changes == DiffChanges::None, diffs.is_empty());
        for k in keys {
            prop_assert_eq!(stables.contains(k), stable(olds.get(k), news.get(k)), "key {:?}", k);
        }
        // Replaces are the changed keys that replace; each changed key has a detailed entry under it.
        let want: Vec<&String> = d.diffs.iter().filter(|k| replace.contains(k)).collect();
        prop_assert_eq!(d.replaces.iter().collect::<Vec<_>>(), want);
        let detailed: BTreeMap<String, _> = d.detailed_diff.unwrap_or_default().into_iter().collect();
        for k in &d.diffs {
            let mut top = String::new();
            crate::diff::push_key(&mut top, k);
            prop_assert!(detailed.keys().any(|p| p == &top || p.starts_with(&format!("{top}.")) || p.starts_with(&format!("{top}["))), "no entry for {:?}", k);
        }
    }
}
