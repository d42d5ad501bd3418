//! Echoes a property map, in `pulumi:provider@0.1.0`'s node encoding, in
//! 0.2.0's one buffer (`flat`) and in 0.3.0's words. Each decodes into the
//! same owned tree, as the SDK does before a provider sees a value, and
//! encodes it back, so they differ only in what the encoding costs. Only
//! the kinds of the benchmark's inputs (null, bool, number, string, array,
//! object) are decoded; in the node encoding other leaves (the 1 MB input's
//! asset) pass through as they came, and the other two are not sent them.

// The generated export glue of `echo-flat` takes the value's eight flat words.
#![allow(clippy::too_many_arguments)]

use std::collections::BTreeMap;

wit_bindgen::generate!({ path: "../wit", world: "pulumi-bench:abi/abi", generate_all });

use pulumi::provider0_1_0::types::Node;
use pulumi::provider0_2_0::types as flat;
use pulumi::provider0_3_0::types as words;

enum V {
    Null,
    Bool(bool),
    Num(f64),
    Str(String),
    Arr(Vec<V>),
    Obj(BTreeMap<String, V>),
    /// A leaf node of another kind, moved through untouched.
    Other(Box<Node>),
}

struct Abi;

impl Guest for Abi {
    fn echo_nodes(v: Value) -> Value {
        let mut slots: Vec<Option<Node>> = v.nodes.into_iter().map(Some).collect();
        let tree = from_nodes(&mut slots, 0);
        let mut nodes = Vec::with_capacity(slots.len());
        to_nodes(&mut nodes, tree);
        Value { nodes }
    }

    fn echo_flat(v: flat::Value) -> flat::Value {
        let tree = from_flat(&v, 0);
        let mut out = flat::Value {
            nodes: Vec::with_capacity(v.nodes.len()),
            items: Vec::with_capacity(v.items.len()),
            fields: Vec::with_capacity(v.fields.len()),
            text: String::with_capacity(v.text.len()),
        };
        to_flat(&mut out, tree);
        out
    }

    fn echo_words(v: words::Value) -> words::Value {
        let sections = Sections::of(&v.words);
        let tree = from_words(&v, &sections, 0);
        // The same tree comes back: the same counts, so the words are sized
        // once and written in place, as the SDK's encoder sizes them first.
        let mut out = Out {
            words: vec![0; v.words.len()],
            text: String::with_capacity(v.text.len()),
            at: sections,
            next: [0; 3],
        };
        out.words[..4].copy_from_slice(&v.words[..4]);
        to_words(&mut out, tree);
        words::Value { words: out.words, text: out.text, long: Vec::new() }
    }
}

export!(Abi);

// The current encoding: strings move out of the nodes and back in.

fn from_nodes(slots: &mut [Option<Node>], at: u32) -> V {
    match slots.get_mut(at as usize).and_then(Option::take) {
        Some(Node::Bool(b)) => V::Bool(b),
        Some(Node::Number(n)) => V::Num(n),
        Some(Node::String(s)) => V::Str(s),
        Some(Node::Array(items)) => V::Arr(items.into_iter().map(|i| from_nodes(slots, i)).collect()),
        Some(Node::Object(fields)) => V::Obj(fields.into_iter().map(|(k, i)| (k, from_nodes(slots, i))).collect()),
        // Leaves only: a node with children would keep indices that no longer hold.
        Some(leaf @ (Node::Asset(_) | Node::Bytes(_) | Node::Unknown(_) | Node::ResourceReference(_))) => {
            V::Other(Box::new(leaf))
        }
        _ => V::Null,
    }
}

fn to_nodes(nodes: &mut Vec<Node>, v: V) -> u32 {
    let at = nodes.len();
    nodes.push(Node::Null);
    nodes[at] = match v {
        V::Null => Node::Null,
        V::Bool(b) => Node::Bool(b),
        V::Num(n) => Node::Number(n),
        V::Str(s) => Node::String(s),
        V::Arr(items) => Node::Array(items.into_iter().map(|c| to_nodes(nodes, c)).collect()),
        V::Obj(fields) => Node::Object(fields.into_iter().map(|(k, c)| (k, to_nodes(nodes, c))).collect()),
        V::Other(node) => *node,
    };
    at as u32
}

// The candidate: strings are copied out of the one text buffer into owned
// strings, and appended to the result's buffer.

fn span(s: flat::Span) -> std::ops::Range<usize> {
    s.start as usize..s.start as usize + s.len as usize
}

fn text(v: &flat::Value, s: flat::Span) -> String {
    v.text.get(span(s)).unwrap_or_default().to_owned()
}

fn range<T>(list: &[T], s: flat::Span) -> &[T] {
    list.get(span(s)).unwrap_or_default()
}

fn from_flat(v: &flat::Value, at: u32) -> V {
    match v.nodes.get(at as usize) {
        Some(flat::Node::Bool(b)) => V::Bool(*b),
        Some(flat::Node::Number(n)) => V::Num(*n),
        Some(flat::Node::String(flat::Str::Short(s))) => V::Str(text(v, *s)),
        Some(flat::Node::String(flat::Str::Long(s))) => V::Str(s.clone()),
        Some(flat::Node::Array(s)) => V::Arr(range(&v.items, *s).iter().map(|&i| from_flat(v, i)).collect()),
        Some(flat::Node::Object(s)) => {
            V::Obj(range(&v.fields, *s).iter().map(|&(k, i)| (text(v, k), from_flat(v, i))).collect())
        }
        _ => V::Null,
    }
}

fn push_text(out: &mut flat::Value, s: &str) -> flat::Span {
    let start = out.text.len() as u32;
    out.text.push_str(s);
    flat::Span { start, len: s.len() as u32 }
}

fn to_flat(out: &mut flat::Value, v: V) -> u32 {
    let at = out.nodes.len();
    out.nodes.push(flat::Node::Null);
    out.nodes[at] = match v {
        V::Null | V::Other(_) => flat::Node::Null,
        V::Bool(b) => flat::Node::Bool(b),
        V::Num(n) => flat::Node::Number(n),
        // The inputs' strings are all short.
        V::Str(s) => flat::Node::String(flat::Str::Short(push_text(out, &s))),
        V::Arr(items) => {
            let children: Vec<u32> = items.into_iter().map(|c| to_flat(out, c)).collect();
            let span = flat::Span { start: out.items.len() as u32, len: children.len() as u32 };
            out.items.extend(children);
            flat::Node::Array(span)
        }
        V::Obj(fields) => {
            let children: Vec<(flat::Span, u32)> =
                fields.into_iter().map(|(k, c)| (push_text(out, &k), to_flat(out, c))).collect();
            let span = flat::Span { start: out.fields.len() as u32, len: children.len() as u32 };
            out.fields.extend(children);
            flat::Node::Object(span)
        }
    };
    at as u32
}

// 0.3.0: four counts, then nodes of three words (kind, two operands),
// items, fields of three (key span, child); strings as in 0.2.0.

/// Where the nodes, items and fields sections begin in a value's words.
#[derive(Clone, Copy)]
struct Sections([usize; 3]);

impl Sections {
    fn of(words: &[u32]) -> Sections {
        let count = |i: usize| words.get(i).copied().unwrap_or(0) as usize;
        let items = 4 + 3 * count(0);
        Sections([4, items, items + count(1)])
    }
}

fn from_words(v: &words::Value, s: &Sections, at: u32) -> V {
    let [nodes, items, fields] = s.0;
    let i = nodes + at as usize * 3;
    let Some(&[kind, a, b]) = v.words.get(i..i + 3) else { return V::Null };
    let text = |start: u32, len: u32| v.text.get(start as usize..(start + len) as usize).unwrap_or_default().to_owned();
    let (a, b) = (a as usize, b as usize);
    match kind {
        1 => V::Bool(a == 1),
        2 => V::Num(f64::from_bits(a as u64 | ((b as u64) << 32))),
        3 => V::Str(text(a as u32, b as u32)),
        4 => V::Str(v.long.get(a).cloned().unwrap_or_default()),
        6 => V::Arr(
            v.words.get(items + a..items + a + b).unwrap_or_default().iter().map(|&c| from_words(v, s, c)).collect(),
        ),
        7 => {
            let pairs = v.words.get(fields + 3 * a..fields + 3 * (a + b)).unwrap_or_default();
            V::Obj(pairs.chunks(3).map(|f| (text(f[0], f[1]), from_words(v, s, f[2]))).collect())
        }
        _ => V::Null,
    }
}

struct Out {
    words: Vec<u32>,
    text: String,
    at: Sections,
    /// The next node, item and field.
    next: [usize; 3],
}

impl Out {
    fn text(&mut self, s: &str) -> [u32; 2] {
        self.text.push_str(s);
        [(self.text.len() - s.len()) as u32, s.len() as u32]
    }

    /// `n` consecutive entries of section `k`; the first's number.
    fn take(&mut self, k: usize, n: usize) -> usize {
        self.next[k] += n;
        self.next[k] - n
    }
}

fn to_words(out: &mut Out, v: V) -> u32 {
    let [nodes, items, fields] = out.at.0;
    let at = out.take(0, 1);
    let node = match v {
        V::Null | V::Other(_) => [0, 0, 0],
        V::Bool(b) => [1, b as u32, 0],
        V::Num(n) => [2, n.to_bits() as u32, (n.to_bits() >> 32) as u32],
        // The inputs' strings are all short.
        V::Str(s) => {
            let [start, len] = out.text(&s);
            [3, start, len]
        }
        V::Arr(children) => {
            // Children's numbers in one span of items, taken before they take their own.
            let start = out.take(1, children.len());
            let count = children.len();
            for (j, c) in children.into_iter().enumerate() {
                out.words[items + start + j] = to_words(out, c);
            }
            [6, start as u32, count as u32]
        }
        V::Obj(pairs) => {
            let (start, count) = (out.take(2, pairs.len()), pairs.len());
            for (j, k) in pairs.keys().enumerate() {
                let [s, l] = out.text(k);
                out.words[fields + 3 * (start + j)..fields + 3 * (start + j) + 2].copy_from_slice(&[s, l]);
            }
            for (j, c) in pairs.into_values().enumerate() {
                out.words[fields + 3 * (start + j) + 2] = to_words(out, c);
            }
            [7, start as u32, count as u32]
        }
    };
    out.words[nodes + 3 * at..nodes + 3 * at + 3].copy_from_slice(&node);
    at as u32
}
