//! Echoes a property map, in `pulumi:provider@0.1.0`'s node encoding and in
//! 0.2.0's one buffer (`flat`). Both decode into the same owned tree, as the
//! SDK does before a provider sees a value, and encode it back, so the two
//! differ only in what the encoding costs. Only the kinds of the
//! benchmark's inputs (null, bool, number, string, array, object) are
//! decoded; in the node encoding other leaves (the 1 MB input's asset) pass
//! through as they came, and the one-buffer echo is not sent them.

// The generated export glue of `echo-flat` takes the value's eight flat words.
#![allow(clippy::too_many_arguments)]

use std::collections::BTreeMap;

wit_bindgen::generate!({ path: "../wit", world: "pulumi-bench:abi/abi", generate_all });

use pulumi::provider0_1_0::types::Node;
use pulumi::provider0_2_0::types as flat;

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
