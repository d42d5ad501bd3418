//! The latest encoding of a value, lists of 32-bit words (wit/README.md,
//! "Values as words"), to and from the host's [`tree`](super::tree).
//!
//! A tree and its words have the same nodes in the same order, and the same
//! `text`, `items` and fields, so packing is one pass that moves every
//! buffer and unpacking one pass that checks what words alone can get wrong
//! (lengths, kinds, operands, indices into `long`, `blobs` and `extra`).
//! Spans and the shape of the tree are checked afterwards on the tree, in
//! `convert::value`, as for every value.
//!
//! Written by hand: it is the contract's own format, and the pass over
//! nodes is what makes a word list cheaper than the canonical ABI's
//! field-by-field lowering of variants.

use super::tree as t;
use super::types as w;

/// Node kinds: a node's first word.
pub mod kind {
    pub const NULL: u32 = 0;
    pub const BOOL: u32 = 1;
    pub const NUMBER: u32 = 2;
    pub const STRING: u32 = 3;
    pub const LONG_STRING: u32 = 4;
    pub const BYTES: u32 = 5;
    pub const ARRAY: u32 = 6;
    pub const OBJECT: u32 = 7;
    pub const SECRET: u32 = 8;
    pub const UNKNOWN: u32 = 9;
    pub const ASSET: u32 = 10;
    pub const ARCHIVE: u32 = 11;
    pub const REFERENCE: u32 = 12;
    pub const OUTPUT: u32 = 13;
}

/// The sources of an asset's and an archive's operands (their fourth word).
pub mod source {
    pub const NONE: u32 = 0;
    pub const TEXT: u32 = 1;
    pub const LONG_TEXT: u32 = 2;
    pub const PATH: u32 = 3;
    pub const URI: u32 = 4;
    pub const ASSETS: u32 = 5;
}

/// A resource reference's ID (its operands' third word).
pub mod id {
    pub const NONE: u32 = 0;
    pub const KNOWN: u32 = 1;
    pub const UNKNOWN: u32 = 2;
}

/// Words of `extra` per asset and per archive: hash present, hash span,
/// source, two source operands.
const ASSET_WORDS: usize = 6;
/// URN span, ID kind, ID span, package version span.
const REFERENCE_WORDS: usize = 7;
/// Value present, value node, secret, dependency count; then a span per dependency.
const OUTPUT_WORDS: usize = 4;

const UNKNOWN_KINDS: [t::UnknownKind; 7] = [
    t::UnknownKind::Bool,
    t::UnknownKind::Number,
    t::UnknownKind::String,
    t::UnknownKind::Array,
    t::UnknownKind::Asset,
    t::UnknownKind::Archive,
    t::UnknownKind::Object,
];

/// What words alone got wrong, by node.
#[derive(Debug, thiserror::Error)]
pub enum WordsError {
    #[error("the value's {list} has {len} words, not a multiple of 3")]
    Ragged { list: &'static str, len: usize },
    #[error("node {node}: {reason}")]
    Node { node: u32, reason: String },
    #[error("the value's extra has {left} words that no node uses")]
    ExtraLeft { left: usize },
    #[error("the value's {list} has {left} entries that no node uses")]
    Unused { list: &'static str, left: usize },
}

fn span(s: t::Span) -> [u32; 2] {
    [s.start, s.len]
}

/// A tree in words. Moves every buffer; only the node list is rewritten.
pub fn pack(v: t::Value) -> w::Value {
    let mut p = Packer { nodes: Vec::with_capacity(v.nodes.len() * 3), ..Packer::default() };
    for node in v.nodes {
        p.node(node);
    }
    let mut fields = Vec::with_capacity(v.fields.len() * 3);
    for (key, child) in v.fields {
        fields.extend([key.start, key.len, child]);
    }
    w::Value { nodes: p.nodes, items: v.items, fields, extra: p.extra, text: v.text, long: p.long, blobs: p.blobs }
}

#[derive(Default)]
struct Packer {
    nodes: Vec<u32>,
    extra: Vec<u32>,
    long: Vec<String>,
    blobs: Vec<Vec<u8>>,
}

impl Packer {
    fn put(&mut self, kind: u32, a: u32, b: u32) {
        self.nodes.extend([kind, a, b]);
    }

    /// A node whose operands are in `extra`: its second word says where.
    fn put_extra(&mut self, kind: u32, words: &[u32]) {
        let at = self.extra.len() as u32;
        self.extra.extend_from_slice(words);
        self.put(kind, at, 0);
    }

    fn long(&mut self, s: String) -> u32 {
        self.long.push(s);
        self.long.len() as u32 - 1
    }

    fn node(&mut self, node: t::Node) {
        match node {
            t::Node::Null => self.put(kind::NULL, 0, 0),
            t::Node::Bool(b) => self.put(kind::BOOL, b as u32, 0),
            t::Node::Number(x) => {
                let bits = x.to_bits();
                self.put(kind::NUMBER, bits as u32, (bits >> 32) as u32)
            }
            t::Node::String(t::Str::Short(s)) => self.put(kind::STRING, s.start, s.len),
            t::Node::String(t::Str::Long(s)) => {
                let i = self.long(s);
                self.put(kind::LONG_STRING, i, 0)
            }
            t::Node::Bytes(b) => {
                self.blobs.push(b);
                self.put(kind::BYTES, self.blobs.len() as u32 - 1, 0)
            }
            t::Node::Array(s) => self.put(kind::ARRAY, s.start, s.len),
            t::Node::Object(s) => self.put(kind::OBJECT, s.start, s.len),
            t::Node::Secret(c) => self.put(kind::SECRET, c, 0),
            t::Node::Unknown(k) => self.put(kind::UNKNOWN, k as u32, 0),
            t::Node::Asset(a) => {
                let (source, [x, y]) = match a.source {
                    None => (source::NONE, [0, 0]),
                    Some(t::AssetSource::Text(t::Str::Short(s))) => (source::TEXT, span(s)),
                    Some(t::AssetSource::Text(t::Str::Long(s))) => (source::LONG_TEXT, [self.long(s), 0]),
                    Some(t::AssetSource::Path(s)) => (source::PATH, span(s)),
                    Some(t::AssetSource::Uri(s)) => (source::URI, span(s)),
                };
                let [h, hs, hl] = hash(a.hash);
                self.put_extra(kind::ASSET, &[h, hs, hl, source, x, y])
            }
            t::Node::Archive(a) => {
                let (source, [x, y]) = match a.source {
                    None => (source::NONE, [0, 0]),
                    Some(t::ArchiveSource::Assets(s)) => (source::ASSETS, span(s)),
                    Some(t::ArchiveSource::Path(s)) => (source::PATH, span(s)),
                    Some(t::ArchiveSource::Uri(s)) => (source::URI, span(s)),
                };
                let [h, hs, hl] = hash(a.hash);
                self.put_extra(kind::ARCHIVE, &[h, hs, hl, source, x, y])
            }
            t::Node::ResourceReference(r) => {
                let (id, [x, y]) = match r.id {
                    None => (id::NONE, [0, 0]),
                    Some(t::ReferenceId::Known(s)) => (id::KNOWN, span(s)),
                    Some(t::ReferenceId::Unknown) => (id::UNKNOWN, [0, 0]),
                };
                let [u, ul] = span(r.urn);
                let [v, vl] = span(r.package_version);
                self.put_extra(kind::REFERENCE, &[u, ul, id, x, y, v, vl])
            }
            t::Node::Output(o) => {
                let at = self.extra.len() as u32;
                let count = o.dependencies.len() as u32;
                self.extra.extend([o.value.is_some() as u32, o.value.unwrap_or(0), o.secret as u32, count]);
                for d in o.dependencies {
                    self.extra.extend(span(d));
                }
                self.put(kind::OUTPUT, at, 0)
            }
        }
    }
}

fn hash(h: Option<t::Span>) -> [u32; 3] {
    match h {
        Some(s) => [1, s.start, s.len],
        None => [0, 0, 0],
    }
}

/// Words as a tree, checking what words alone can get wrong: lengths,
/// kinds, flags, indices into `long` and `blobs` (each used by one node, so
/// a guest cannot make one megabyte string count a thousand times), and
/// `extra` (each node's operands right after the previous node's, and all
/// of it used). Moves every buffer.
pub fn unpack(v: w::Value) -> Result<t::Value, WordsError> {
    if !v.nodes.len().is_multiple_of(3) {
        return Err(WordsError::Ragged { list: "nodes", len: v.nodes.len() });
    }
    if !v.fields.len().is_multiple_of(3) {
        return Err(WordsError::Ragged { list: "fields", len: v.fields.len() });
    }
    let mut u = Unpacker {
        extra: &v.extra,
        at: 0,
        long: v.long.into_iter().map(Some).collect(),
        blobs: v.blobs.into_iter().map(Some).collect(),
        node: 0,
    };
    let mut nodes = Vec::with_capacity(v.nodes.len() / 3);
    for (n, words) in v.nodes.chunks_exact(3).enumerate() {
        u.node = n as u32;
        nodes.push(u.node_of(words[0], words[1], words[2])?);
    }
    if u.at != v.extra.len() {
        return Err(WordsError::ExtraLeft { left: v.extra.len() - u.at });
    }
    for (list, left) in [("long", u.long.iter().flatten().count()), ("blobs", u.blobs.iter().flatten().count())] {
        if left > 0 {
            return Err(WordsError::Unused { list, left });
        }
    }
    let fields = v.fields.chunks_exact(3).map(|f| (t::Span { start: f[0], len: f[1] }, f[2])).collect();
    Ok(t::Value { nodes, items: v.items, fields, text: v.text })
}

struct Unpacker<'a> {
    extra: &'a [u32],
    /// Where the next node's operands in `extra` must start.
    at: usize,
    long: Vec<Option<String>>,
    blobs: Vec<Option<Vec<u8>>>,
    node: u32,
}

impl Unpacker<'_> {
    fn bad<T>(&self, reason: impl Into<String>) -> Result<T, WordsError> {
        Err(WordsError::Node { node: self.node, reason: reason.into() })
    }

    fn flag(&self, word: u32, what: &str) -> Result<bool, WordsError> {
        match word {
            0 => Ok(false),
            1 => Ok(true),
            other => self.bad(format!("its {what} is {other}, not 0 or 1")),
        }
    }

    fn long(&mut self, i: u32) -> Result<String, WordsError> {
        match self.long.get_mut(i as usize).map(Option::take) {
            Some(Some(s)) => Ok(s),
            Some(None) => self.bad(format!("long string {i} is used by an earlier node too")),
            None => self.bad(format!("long string {i} is past the end of long")),
        }
    }

    /// This node's `n` words of `extra`, which must start at `at`.
    fn extra(&mut self, at: u32, n: usize) -> Result<&[u32], WordsError> {
        if at as usize != self.at {
            return self.bad(format!("its operands start at word {at} of extra, not at word {}", self.at));
        }
        match self.extra.get(self.at..self.at + n) {
            Some(words) => {
                self.at += n;
                Ok(words)
            }
            None => self.bad("its operands run past the end of extra"),
        }
    }

    fn hash(&self, w: &[u32]) -> Result<Option<t::Span>, WordsError> {
        Ok(self.flag(w[0], "hash flag")?.then_some(t::Span { start: w[1], len: w[2] }))
    }

    fn node_of(&mut self, kind: u32, a: u32, b: u32) -> Result<t::Node, WordsError> {
        let s = t::Span { start: a, len: b };
        Ok(match kind {
            kind::NULL => t::Node::Null,
            kind::BOOL => t::Node::Bool(self.flag(a, "bool")?),
            kind::NUMBER => t::Node::Number(f64::from_bits(u64::from(a) | (u64::from(b) << 32))),
            kind::STRING => t::Node::String(t::Str::Short(s)),
            kind::LONG_STRING => t::Node::String(t::Str::Long(self.long(a)?)),
            kind::BYTES => match self.blobs.get_mut(a as usize).map(Option::take) {
                Some(Some(b)) => t::Node::Bytes(b),
                Some(None) => return self.bad(format!("byte string {a} is used by an earlier node too")),
                None => return self.bad(format!("byte string {a} is past the end of blobs")),
            },
            kind::ARRAY => t::Node::Array(s),
            kind::OBJECT => t::Node::Object(s),
            kind::SECRET => t::Node::Secret(a),
            kind::UNKNOWN => match UNKNOWN_KINDS.get(a as usize) {
                Some(k) => t::Node::Unknown(*k),
                None => return self.bad(format!("unknown kind {a} is not one of the 7")),
            },
            kind::ASSET => {
                let w: [u32; ASSET_WORDS] = self.extra(a, ASSET_WORDS)?.try_into().expect("six words");
                let hash = self.hash(&w)?;
                let s = t::Span { start: w[4], len: w[5] };
                let source = match w[3] {
                    source::NONE => None,
                    source::TEXT => Some(t::AssetSource::Text(t::Str::Short(s))),
                    source::LONG_TEXT => Some(t::AssetSource::Text(t::Str::Long(self.long(w[4])?))),
                    source::PATH => Some(t::AssetSource::Path(s)),
                    source::URI => Some(t::AssetSource::Uri(s)),
                    other => return self.bad(format!("asset source {other} is not one of 0-4")),
                };
                t::Node::Asset(t::Asset { hash, source })
            }
            kind::ARCHIVE => {
                let w: [u32; ASSET_WORDS] = self.extra(a, ASSET_WORDS)?.try_into().expect("six words");
                let hash = self.hash(&w)?;
                let s = t::Span { start: w[4], len: w[5] };
                let source = match w[3] {
                    source::NONE => None,
                    source::ASSETS => Some(t::ArchiveSource::Assets(s)),
                    source::PATH => Some(t::ArchiveSource::Path(s)),
                    source::URI => Some(t::ArchiveSource::Uri(s)),
                    other => return self.bad(format!("archive source {other} is not 0, 3, 4 or 5")),
                };
                t::Node::Archive(t::Archive { hash, source })
            }
            kind::REFERENCE => {
                let w: [u32; REFERENCE_WORDS] = self.extra(a, REFERENCE_WORDS)?.try_into().expect("seven words");
                let id = match w[2] {
                    id::NONE => None,
                    id::KNOWN => Some(t::ReferenceId::Known(t::Span { start: w[3], len: w[4] })),
                    id::UNKNOWN => Some(t::ReferenceId::Unknown),
                    other => return self.bad(format!("resource reference ID kind {other} is not 0, 1 or 2")),
                };
                let urn = t::Span { start: w[0], len: w[1] };
                t::Node::ResourceReference(t::ResourceReference {
                    urn,
                    id,
                    package_version: t::Span { start: w[5], len: w[6] },
                })
            }
            kind::OUTPUT => {
                let w: [u32; OUTPUT_WORDS] = self.extra(a, OUTPUT_WORDS)?.try_into().expect("four words");
                let value = self.flag(w[0], "value flag")?.then_some(w[1]);
                let secret = self.flag(w[2], "secret flag")?;
                // Each dependency is two words that are there: a count cannot promise more.
                let count = w[3] as usize;
                if count > (self.extra.len() - self.at) / 2 {
                    return self.bad(format!("its {count} dependencies run past the end of extra"));
                }
                let words = self.extra(self.at as u32, count * 2)?;
                let dependencies = words.chunks_exact(2).map(|d| t::Span { start: d[0], len: d[1] }).collect();
                t::Node::Output(t::OutputValue { value, secret, dependencies })
            }
            other => return self.bad(format!("kind {other} is not one of 0-13")),
        })
    }
}

/// [`unpack`] of a value the host built, for an older component, which
/// can only get values the host built or checked: never fails, and were it
/// to, the component would see an empty map rather than the host panicking.
pub fn unpack_trusted(v: &w::Value) -> t::Value {
    unpack(v.clone()).unwrap_or_else(|e| {
        tracing::error!("a value the host built did not unpack: {e}");
        t::Value {
            nodes: vec![t::Node::Object(t::Span { start: 0, len: 0 })],
            items: vec![],
            fields: vec![],
            text: String::new(),
        }
    })
}

#[cfg(test)]
#[path = "words_tests.rs"]
mod tests;
