//! The codec's round trips and its checks of what a host sends.

use super::*;
use crate::props;
use crate::value::*;

#[test]
fn every_kind_round_trips() {
    let m = crate::testing::every_kind();
    let wire = encode_map(&m);
    let w = &wire.words;
    let [n, i, f, e] = [w[0], w[1], w[2], w[3]].map(|c| c as usize);
    assert_eq!(w.len(), 4 + 3 * n + i + 3 * f + e, "the counts add up, and sizing was exact");
    assert_eq!(w.capacity(), w.len(), "one allocation");
    let (items, fields) = (4 + 3 * n, 4 + 3 * n + i);
    for at in 0..n {
        let [kind, a, b] = w[4 + 3 * at..7 + 3 * at].try_into().unwrap();
        let children: Vec<u32> = match kind {
            6 => w[items + a as usize..items + (a + b) as usize].to_vec(),
            7 => w[fields + 3 * a as usize..fields + 3 * (a + b) as usize].chunks(3).map(|f| f[2]).collect(),
            8 => vec![a],
            _ => vec![],
        };
        assert!(children.iter().all(|c| *c as usize > at), "pre-order violated at {at}");
    }
    let long_strings = (0..n).filter(|&at| w[4 + 3 * at] == 4).count();
    assert_eq!((long_strings, wire.long.len()), (1, 2), "strings of 1 KiB and more move whole, asset text too");
    assert_eq!(wire.text.capacity(), wire.text.len());
    assert_eq!(decode_map(wire).unwrap(), m);
}

/// A typed state goes out as sorted pairs: the words must be those of the
/// same properties as a map, to the word, the text and the long strings.
#[test]
fn pairs_encode_as_the_same_map_would() {
    let m = props! {
        "b" => true,
        "obj" => props! { "deep" => props! { "deeper" => "x" } },
        "secret" => Value::secret(vec![Value::from("a"), Value::from(2)]),
        "asset" => Asset::text("x".repeat(4096)),
        "long" => "é".repeat(1000),
        "a" => 1.5,
    };
    let mut fields = crate::Fields::default();
    for (k, v) in m.iter().rev() {
        fields.push(k.clone(), v.clone());
    }
    fields.sort();
    let (from_pairs, from_map) = (encode_outputs(crate::Outputs::Fields(fields)), encode_map(&m));
    assert_eq!(from_pairs.words, from_map.words);
    assert_eq!((from_pairs.text, from_pairs.long), (from_map.text, from_map.long));
    assert_eq!(from_pairs.words.capacity(), from_pairs.words.len(), "sized exactly, one allocation");
}

/// A value of `nodes` over the same two fields, `k` then a key past the
/// text, both naming node 1; counts that add up.
fn words(nodes: &[[u32; 3]], items: Vec<u32>, text: &str) -> w::Value {
    let fields = [0, 1, 1, 5, 1, 1];
    let counts = [nodes.len() as u32, items.len() as u32, 2, 0];
    w::Value { words: [&counts[..], &nodes.concat(), &items, &fields].concat(), text: text.into(), long: vec![] }
}

#[test]
fn bad_indices_and_spans_are_errors_not_panics() {
    const NULL: [u32; 3] = [0, 0, 0];
    let cyclic = words(&[[6, 0, 1]], vec![0], "");
    assert!(decode(cyclic).is_err());
    let shared = words(&[[6, 0, 2], NULL], vec![1, 1], "");
    assert!(decode(shared).is_err());
    let missing = words(&[[8, 7, 0]], vec![], "");
    assert!(decode(missing).is_err());
    assert!(decode(words(&[], vec![], "")).is_err());
    // Spans past their section, or splitting a character.
    let past = words(&[[6, 0, 3], NULL], vec![1], "");
    assert!(decode(past).is_err());
    let split = words(&[[3, 0, 1]], vec![], "é");
    assert!(decode(split).is_err());
    let key = words(&[[7, 1, 1], NULL], vec![], "k");
    assert!(decode(key).is_err());
    let fields_past = words(&[[7, 1, u32::MAX], NULL], vec![], "k");
    assert!(decode(fields_past).is_err());
    // Indices into long and extra that are not there; kinds that are not.
    for node in [[4, 0, 0], [5, 0, 0], [10, 0, 0], [11, 0, 0], [12, 0, 0], [13, 0, 0], [9, 7, 0], [14, 0, 0]] {
        assert!(decode(words(&[node], vec![], "")).is_err(), "{node:?}");
    }
    // Counts that do not add up.
    let mut wrong = words(&[NULL], vec![], "");
    wrong.words[2] = 3;
    assert!(decode(wrong).is_err());
    let fine = words(&[[7, 0, 1], NULL], vec![], "k");
    assert_eq!(decode_map(fine).unwrap(), crate::props! { "k" => Value::Null });
}

/// A map keeps the later of two fields with one name; reading in place
/// finds the same one. And a checked node of any kind reads in place as
/// it builds.
#[test]
fn reading_in_place_agrees_with_the_built_value() {
    let nodes = [[7, 0, 2], [1, 0, 0], [1, 1, 0]].concat();
    let twice =
        w::Value { words: [&[3, 0, 2, 0][..], &nodes, &[0, 1, 1, 0, 1, 2]].concat(), text: "k".into(), long: vec![] };
    let checked = super::words(twice.clone()).unwrap();
    let m = checked.map().unwrap();
    assert_eq!(m.get("k").and_then(|n| n.as_bool()), Some(true));
    assert_eq!(m.to_map(), decode_map(twice).unwrap());
    assert_eq!(m.to_map(), crate::props! { "k" => true });
    let all = crate::props! {
        "s" => "x".repeat(2000),
        "n" => 1.5,
        "a" => vec![Value::from(true), Value::Null],
        "o" => crate::props! { "k" => Value::secret("v") },
    };
    let checked = super::words(encode_map(&all)).unwrap();
    let m = checked.map().unwrap();
    assert_eq!(m.iter().map(|(k, n)| (k.to_owned(), n.to_value())).collect::<PropertyMap>(), all);
    assert_eq!(m.get("s").and_then(|n| n.as_str()), Some("x".repeat(2000).as_str()));
    assert_eq!(m.get("n").and_then(|n| n.as_f64()), Some(1.5));
    assert_eq!(m.get("a").and_then(|n| n.items()).map(|i| i.len()), Some(2));
    assert!(m.get("absent").is_none());
    assert!(checked.root().as_str().is_none());
    assert!(super::words(encode_owned(Value::from(1))).unwrap().map().is_err());
}

/// Past a few fields, a lookup searches sorted keys by halves and
/// scans others; both find every key, and nothing else.
#[test]
fn lookups_find_every_key_in_sorted_and_unsorted_objects() {
    let big: PropertyMap = (0..40).map(|i| (format!("k{i}"), Value::from(i))).collect();
    let sorted = encode_map(&big);
    // The same fields with the first two swapped: no longer in order.
    let mut unsorted = sorted.clone();
    let at = consts::HEADER + 3 * (unsorted.words[0] as usize) + unsorted.words[1] as usize;
    let (first, second) = (unsorted.words[at..at + 3].to_vec(), unsorted.words[at + 3..at + 6].to_vec());
    unsorted.words[at..at + 3].copy_from_slice(&second);
    unsorted.words[at + 3..at + 6].copy_from_slice(&first);
    for v in [sorted, unsorted] {
        let checked = super::words(v).unwrap();
        let m = checked.map().unwrap();
        for (k, v) in &big {
            assert_eq!(m.get(k).map(|n| n.to_value()).as_ref(), Some(v), "{k}");
        }
        for absent in ["", "k", "k40", "j0", "l0", "k00"] {
            assert!(m.get(absent).is_none(), "{absent}");
        }
        assert_eq!(m.to_map(), big);
    }
}

#[test]
fn compare_words_orders_like_byte_comparison() {
    let samples: [&[u8]; 9] =
        [b"", b"a", b"ab", b"abcdefgh", b"abcdefgi", b"abcdefghij", b"abcdefghik", b"\xffbcdefgh", b"abcdefg\x01x"];
    let mut pairs: Vec<(Vec<u8>, Vec<u8>)> =
        samples.iter().flat_map(|a| samples.iter().map(|b| (a.to_vec(), b.to_vec()))).collect();
    // Every length up to five words, differing (up or down) at every position:
    // the short cases without a loop (up to 16 bytes) and the loop's.
    let base = b"klmnopqrstuvwxyzabcdefghijklmnopqrstuvwx";
    for len in 0..=base.len() {
        let a = &base[..len];
        pairs.push((a.to_vec(), a.to_vec()));
        for at in 0..len {
            for delta in [1u8, 0x80] {
                let mut b = a.to_vec();
                b[at] = b[at].wrapping_add(delta);
                pairs.push((a.to_vec(), b));
            }
        }
    }
    for (a, b) in pairs {
        let n = a.len().min(b.len());
        // SAFETY: both have `n` bytes.
        let got = unsafe { super::compare_words(a.as_ptr(), b.as_ptr(), n) }.signum();
        let want = a[..n].cmp(&b[..n]) as i32;
        assert_eq!(got, want, "{a:?} vs {b:?}");
    }
}
