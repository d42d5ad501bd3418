//! The latest encoding of a value, lists of 32-bit words (wit/README.md,
//! "Values as words"), to and from the host's [`tree`](super::tree).
//!
//! A tree and its words have the same nodes in the same order, and the same
//! `text`, items and fields, so packing is one pass that writes the words
//! and unpacking one pass that checks what words alone can get wrong
//! (counts, kinds, operands, indices into `long` and `extra`).
//! Spans and the shape of the tree are checked afterwards on the tree, in
//! `convert::value`, as for every value.
//!
//! Written by hand: it is the contract's own format, and the pass over
//! nodes is what makes a word list cheaper than the canonical ABI's
//! field-by-field lowering of variants.

use super::MAX_VALUE_BYTES;
use super::tree as t;
use super::types as w;
use crate::runtime::held;

// The contract's numbers, which the guest SDK reads from the same crate.
use pulumi_wasm_words::{ASSET_WORDS, HEADER, OUTPUT_WORDS, REFERENCE_WORDS};
pub use pulumi_wasm_words::{id, kind, source};

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
    #[error("the value's words {0}")]
    Counts(String),
    #[error("node {node}: {reason}")]
    Node { node: u32, reason: String },
    #[error("the value's extra has {left} words that no node uses")]
    ExtraLeft { left: usize },
    #[error("the value's long has {left} strings that no node uses")]
    LongLeft { left: usize },
    #[error("the value names held texts of more than {} MiB in all", max >> 20)]
    TooManyBytes { max: usize },
}

/// The number of nodes a value says it has (its first word), for limits
/// checked before anything is unpacked.
pub fn node_count(v: &w::Value) -> usize {
    v.words.first().map_or(0, |&n| n as usize)
}

fn span(s: t::Span) -> [u32; 2] {
    [s.start, s.len]
}

/// How many words of `extra` a node takes.
fn extra_words(node: &t::Node) -> usize {
    match node {
        t::Node::Asset(_) | t::Node::Archive(_) => ASSET_WORDS,
        t::Node::ResourceReference(_) => REFERENCE_WORDS,
        t::Node::Output(o) => OUTPUT_WORDS + 2 * o.dependencies.len(),
        t::Node::Bytes(b) => 1 + b.len().div_ceil(4),
        _ => 0,
    }
}

/// A tree in words: sized first, so the words are one allocation written in place.
pub fn pack(v: t::Value) -> w::Value {
    let (n, i, f) = (v.nodes.len(), v.items.len(), v.fields.len());
    let e: usize = v.nodes.iter().map(extra_words).sum();
    let mut words = vec![0; HEADER + 3 * n + i + 3 * f + e];
    words[..HEADER].copy_from_slice(&[n as u32, i as u32, f as u32, e as u32]);
    let items_at = HEADER + 3 * n;
    let fields_at = items_at + i;
    let extra_at = fields_at + 3 * f;
    words[items_at..fields_at].copy_from_slice(&v.items);
    for (j, (key, child)) in v.fields.into_iter().enumerate() {
        words[fields_at + 3 * j..fields_at + 3 * j + 3].copy_from_slice(&[key.start, key.len, child]);
    }
    let mut p = Packer { words, extra_at, extra: extra_at, long: Vec::new() };
    for (at, node) in v.nodes.into_iter().enumerate() {
        let node = p.node(node);
        p.words[HEADER + 3 * at..HEADER + 3 * at + 3].copy_from_slice(&node);
    }
    w::Value { words: p.words, text: v.text, long: p.long }
}

struct Packer {
    words: Vec<u32>,
    /// Where extra begins in `words`, and where the next node's operands go.
    extra_at: usize,
    extra: usize,
    long: Vec<String>,
}

impl Packer {
    /// Appends a node's operands to extra; the node's words.
    fn put_extra(&mut self, kind: u32, operands: &[u32]) -> [u32; 3] {
        let at = (self.extra - self.extra_at) as u32;
        self.words[self.extra..self.extra + operands.len()].copy_from_slice(operands);
        self.extra += operands.len();
        [kind, at, 0]
    }

    fn long(&mut self, s: String) -> u32 {
        self.long.push(s);
        self.long.len() as u32 - 1
    }

    fn node(&mut self, node: t::Node) -> [u32; 3] {
        match node {
            t::Node::Null => [kind::NULL, 0, 0],
            t::Node::Bool(b) => [kind::BOOL, b as u32, 0],
            t::Node::Number(x) => {
                let bits = x.to_bits();
                [kind::NUMBER, bits as u32, (bits >> 32) as u32]
            }
            t::Node::String(t::Str::Short(s)) => [kind::STRING, s.start, s.len],
            t::Node::String(t::Str::Long(s)) => [kind::LONG_STRING, self.long(s), 0],
            t::Node::Bytes(b) => {
                // The length, then the bytes four to a word, little-endian.
                let mut operands = Vec::with_capacity(1 + b.len().div_ceil(4));
                operands.push(b.len() as u32);
                operands.extend(b.chunks(4).map(|c| {
                    let mut word = [0; 4];
                    word[..c.len()].copy_from_slice(c);
                    u32::from_le_bytes(word)
                }));
                self.put_extra(kind::BYTES, &operands)
            }
            t::Node::Array(s) => [kind::ARRAY, s.start, s.len],
            t::Node::Object(s) => [kind::OBJECT, s.start, s.len],
            t::Node::Secret(c) => [kind::SECRET, c, 0],
            t::Node::Unknown(k) => [kind::UNKNOWN, k as u32, 0],
            t::Node::Asset(a) => {
                let (source, [x, y]) = match a.source {
                    None => (source::NONE, [0, 0]),
                    Some(t::AssetSource::Text(t::Str::Short(s))) => (source::TEXT, span(s)),
                    // Kept in the host when the component reads held texts.
                    Some(t::AssetSource::Text(t::Str::Long(s))) => {
                        let len = s.len() as u32;
                        match held::hold(s) {
                            Ok(handle) => (source::HELD_TEXT, [handle, len]),
                            Err(s) => (source::LONG_TEXT, [self.long(s), 0]),
                        }
                    }
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
                let mut operands = Vec::with_capacity(OUTPUT_WORDS + 2 * o.dependencies.len());
                let count = o.dependencies.len() as u32;
                operands.extend([o.value.is_some() as u32, o.value.unwrap_or(0), o.secret as u32, count]);
                operands.extend(o.dependencies.into_iter().flat_map(span));
                self.put_extra(kind::OUTPUT, &operands)
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

/// Words as a tree, checking what words alone can get wrong: the counts,
/// kinds, flags, indices into `long` (each used by one node, so a guest
/// cannot make one megabyte string count a thousand times), and `extra`
/// (each node's operands right after the previous node's, and all of it
/// used).
pub fn unpack(v: w::Value) -> Result<t::Value, WordsError> {
    unpack_within(v, MAX_VALUE_BYTES)
}

/// [`unpack`], copying at most `max_held` bytes of held texts.
fn unpack_within(v: w::Value, max_held: usize) -> Result<t::Value, WordsError> {
    let words = &v.words;
    let Some(&[n, i, f, e]) = words.get(..HEADER) else {
        return Err(WordsError::Counts(format!("are {}, fewer than the four counts", words.len())));
    };
    // In u64: four counts near u32::MAX cannot wrap around to a small total.
    let need = HEADER as u64 + 3 * u64::from(n) + u64::from(i) + 3 * u64::from(f) + u64::from(e);
    if need != words.len() as u64 {
        return Err(WordsError::Counts(format!(
            "are {}, but {n} nodes, {i} items, {f} fields and {e} words of extra make {need}",
            words.len()
        )));
    }
    let (n, i, f) = (n as usize, i as usize, f as usize);
    let (nodes, rest) = words[HEADER..].split_at(3 * n);
    let (items, rest) = rest.split_at(i);
    let (fields, extra) = rest.split_at(3 * f);
    let long = v.long.into_iter().map(Some).collect();
    let mut u = Unpacker { extra, at: 0, long, node: 0, held: 0, max_held };
    let mut tree = Vec::with_capacity(n);
    for (at, node) in nodes.chunks_exact(3).enumerate() {
        u.node = at as u32;
        tree.push(u.node_of(node[0], node[1], node[2])?);
    }
    if u.at != extra.len() {
        return Err(WordsError::ExtraLeft { left: extra.len() - u.at });
    }
    let left = u.long.iter().flatten().count();
    if left > 0 {
        return Err(WordsError::LongLeft { left });
    }
    let fields = fields.chunks_exact(3).map(|f| (t::Span { start: f[0], len: f[1] }, f[2])).collect();
    Ok(t::Value { nodes: tree, items: items.to_vec(), fields, text: v.text })
}

struct Unpacker<'a> {
    extra: &'a [u32],
    /// Where the next node's operands in `extra` must start.
    at: usize,
    long: Vec<Option<String>>,
    node: u32,
    /// Bytes of held texts copied into the tree so far: a value may name
    /// one text many times, and each use is a copy.
    held: usize,
    max_held: usize,
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

    /// The text behind a handle this RPC gave out, whose length is `len`,
    /// within the value's budget ([`MAX_VALUE_BYTES`]).
    fn held(&mut self, handle: u32, len: u32) -> Result<String, WordsError> {
        self.held = self.held.saturating_add(len as usize);
        if self.held > self.max_held {
            return Err(WordsError::TooManyBytes { max: self.max_held });
        }
        held::resolve(handle, len).or_else(|reason| self.bad(reason))
    }

    /// This node's operands in `extra`, which must start at `at`: the first
    /// `n`, and with `more` the count of words after them that are its too.
    fn extra(&mut self, at: u32, n: usize, more: impl Fn(&[u32]) -> usize) -> Result<&[u32], WordsError> {
        if at as usize != self.at {
            return self.bad(format!("its operands start at word {at} of extra, not at word {}", self.at));
        }
        let Some(first) = self.extra.get(self.at..self.at + n) else {
            return self.bad("its operands run past the end of extra");
        };
        // A count cannot promise more words than there are.
        let all = n.saturating_add(more(first));
        match self.extra.get(self.at..self.at.saturating_add(all)) {
            Some(words) => {
                self.at += all;
                Ok(words)
            }
            None => self.bad(format!("its {all} words of operands run past the end of extra")),
        }
    }

    fn fixed<const N: usize>(&mut self, at: u32) -> Result<[u32; N], WordsError> {
        Ok(self.extra(at, N, |_| 0)?.try_into().expect("N words"))
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
            kind::BYTES => {
                let w = self.extra(a, 1, |w| (w[0] as usize).div_ceil(4))?;
                let len = w[0] as usize;
                let mut bytes: Vec<u8> = w[1..].iter().flat_map(|w| w.to_le_bytes()).collect();
                bytes.truncate(len);
                t::Node::Bytes(bytes)
            }
            kind::ARRAY => t::Node::Array(s),
            kind::OBJECT => t::Node::Object(s),
            kind::SECRET => t::Node::Secret(a),
            kind::UNKNOWN => match UNKNOWN_KINDS.get(a as usize) {
                Some(k) => t::Node::Unknown(*k),
                None => return self.bad(format!("unknown kind {a} is not one of the 7")),
            },
            kind::ASSET => {
                let w: [u32; ASSET_WORDS] = self.fixed(a)?;
                let hash = self.hash(&w)?;
                let s = t::Span { start: w[4], len: w[5] };
                let source = match w[3] {
                    source::NONE => None,
                    source::TEXT => Some(t::AssetSource::Text(t::Str::Short(s))),
                    source::LONG_TEXT => Some(t::AssetSource::Text(t::Str::Long(self.long(w[4])?))),
                    source::PATH => Some(t::AssetSource::Path(s)),
                    source::URI => Some(t::AssetSource::Uri(s)),
                    source::HELD_TEXT => Some(t::AssetSource::Text(t::Str::Long(self.held(w[4], w[5])?))),
                    other => return self.bad(format!("asset source {other} is not one of 0-4 or 6")),
                };
                t::Node::Asset(t::Asset { hash, source })
            }
            kind::ARCHIVE => {
                let w: [u32; ASSET_WORDS] = self.fixed(a)?;
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
                let w: [u32; REFERENCE_WORDS] = self.fixed(a)?;
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
                let w = self.extra(a, OUTPUT_WORDS, |w| (w[3] as usize).saturating_mul(2))?.to_vec();
                let value = self.flag(w[0], "value flag")?.then_some(w[1]);
                let secret = self.flag(w[2], "secret flag")?;
                let dependencies =
                    w[OUTPUT_WORDS..].chunks_exact(2).map(|d| t::Span { start: d[0], len: d[1] }).collect();
                t::Node::Output(t::OutputValue { value, secret, dependencies })
            }
            other => return self.bad(format!("kind {other} is not one of 0-13")),
        })
    }
}

/// Calls `f` with the handle of every held text `v` names, from its words
/// alone (before [`unpack`] checks them: a malformed value fails there).
pub fn held_handles(v: &w::Value, f: &mut dyn FnMut(u32)) {
    let words = &v.words;
    let Some(&[n, i, fields, _]) = words.get(..HEADER) else { return };
    let extra_at = HEADER as u64 + 3 * u64::from(n) + u64::from(i) + 3 * u64::from(fields);
    let nodes = words.get(HEADER..).unwrap_or_default().chunks_exact(3).take(n as usize);
    for node in nodes.filter(|node| node[0] == kind::ASSET) {
        let at = (extra_at + u64::from(node[1])) as usize;
        if let Some(&[_, _, _, source::HELD_TEXT, handle, _]) = words.get(at..at.saturating_add(ASSET_WORDS)) {
            f(handle);
        }
    }
}

/// [`unpack`] of a value the host built, for an older component, which
/// can only get values the host built or checked: never fails, and were it
/// to, the component would see an empty map rather than the host panicking.
pub fn unpack_trusted(v: &w::Value) -> t::Value {
    unpack(v.clone()).unwrap_or_else(|e| {
        tracing::error!("a value the host built did not unpack: {e}");
        let nodes = vec![t::Node::Object(t::Span { start: 0, len: 0 })];
        t::Value { nodes, items: vec![], fields: vec![], text: String::new() }
    })
}

#[cfg(test)]
#[path = "words_tests.rs"]
mod tests;
