//! Reading a value's words (wit/README.md, "Values as words") where they lie.
//!
//! [`Words::new`] checks everything once: counts, kinds, spans, indices, and
//! that the nodes form a tree (each child referenced once, after its
//! parent, so every walk ends and none visits a node twice). After that a
//! [`Node`] reads without checks that can fail. A typed decode reads the
//! properties it declares straight from the words, with no [`Value`] built
//! in between (a small map's Create spent ~1.4 µs of a component's ~7.5 µs
//! building the map it then decoded; BENCHMARKS.md, nineteenth session);
//! [`Words::into_value`] builds the whole tree for everything else.
//!
//! Not in the codec macro: the words are plain lists, the same for every
//! version of the bindings.

use std::cell::OnceCell;
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::ops::Range;

use super::consts::*;
use crate::text::Text;
use crate::value::{
    Archive, ArchiveMember, ArchiveSource, Asset, AssetSource, Output, PropertyMap, RefId, ResourceRef, UnknownKind,
    Value,
};

/// A value's words, checked. Not part of the SDK's API.
#[doc(hidden)]
pub struct Words {
    words: Vec<u32>,
    text: String,
    long: Vec<String>,
    /// Where the items and fields sections are in `words`, and where extra begins.
    items: Range<usize>,
    fields: Range<usize>,
    extra: usize,
}

fn not_a_map(kind: &str) -> crate::Error {
    crate::Error::InvalidArgument(format!("malformed property map: expected an object, got {kind}"))
}

/// A number node's operands: its bits, low word first.
fn number(a: u32, b: u32) -> f64 {
    f64::from_bits(u64::from(a) | (u64::from(b) << 32))
}

fn range(start: u32, len: u32) -> Range<usize> {
    let start = start as usize;
    start..start.saturating_add(len as usize)
}

impl Words {
    /// Checks the words; a bad count, kind, span or index, or a node
    /// referenced twice or before its parent, is an error, never a panic.
    pub fn new(words: Vec<u32>, text: String, long: Vec<String>) -> Result<Words, String> {
        let Some(&[n, i, f, e]) = words.get(..HEADER) else { return Err("no counts".into()) };
        let [n, i, f, e] = [n, i, f, e].map(|c| c as usize);
        let items_at = HEADER.saturating_add(n.saturating_mul(3));
        let fields_at = items_at.saturating_add(i);
        let extra_at = fields_at.saturating_add(f.saturating_mul(3));
        if n == 0 || extra_at.saturating_add(e) != words.len() {
            return Err(format!("{n} nodes, {i} items, {f} fields and {e} words of extra in {} words", words.len()));
        }
        let w = Words { words, text, long, items: items_at..fields_at, fields: fields_at..extra_at, extra: extra_at };
        Check { w: &w, used: vec![false; n], long_used: vec![false; w.long.len()] }.all(n)?;
        Ok(w)
    }

    /// The root.
    pub fn root(&self) -> Node<'_> {
        Node { w: self, at: 0 }
    }

    /// The root object's fields.
    pub fn map(&self) -> crate::Result<Map<'_>> {
        let root = self.root();
        root.object().ok_or_else(|| not_a_map(root.kind_name()))
    }

    /// The root object, built.
    pub fn into_map(self) -> crate::Result<PropertyMap> {
        match self.into_value() {
            Value::Object(m) => Ok(m),
            other => Err(not_a_map(other.kind_name())),
        }
    }

    /// The whole tree, long strings moved rather than copied.
    pub fn into_value(mut self) -> Value {
        let long = std::mem::take(&mut self.long).into_iter().map(Some).collect();
        Build { w: &self, long: Long::Take(long) }.value(0)
    }

    fn node(&self, at: u32) -> [u32; 3] {
        let i = HEADER + at as usize * 3;
        [self.words[i], self.words[i + 1], self.words[i + 2]]
    }

    fn str(&self, start: u32, len: u32) -> &str {
        &self.text[range(start, len)]
    }

    fn extra(&self, at: u32, n: usize) -> &[u32] {
        let start = self.extra + at as usize;
        &self.words[start..start + n]
    }

    /// The words of `count` fields from `start`: (key start, key length, child) each.
    fn pairs(&self, start: u32, count: u32) -> Range<usize> {
        let r = range(start, count);
        self.fields.start + r.start * 3..self.fields.start + r.end * 3
    }

    /// The (key, child) pairs in `span` of the fields section.
    fn entries(&self, span: Range<usize>) -> impl ExactSizeIterator<Item = (&str, u32)> {
        self.words[span].chunks_exact(3).map(|c| (self.str(c[0], c[1]), c[2]))
    }
}

/// The checks of [`Words::new`], node by node in order.
struct Check<'a> {
    w: &'a Words,
    used: Vec<bool>,
    long_used: Vec<bool>,
}

impl Check<'_> {
    fn all(mut self, n: usize) -> Result<(), String> {
        (0..n as u32).try_for_each(|at| self.node(at))
    }

    fn text(&self, start: u32, len: u32) -> Result<(), String> {
        match self.w.text.get(range(start, len)) {
            Some(_) => Ok(()),
            None => Err(format!("bad text span {start}+{len}")),
        }
    }

    fn long(&mut self, i: u32) -> Result<(), String> {
        match self.long_used.get_mut(i as usize) {
            Some(used) if !*used => {
                *used = true;
                Ok(())
            }
            _ => Err(format!("long string {i} is missing or used twice")),
        }
    }

    fn extra(&self, at: u32, n: usize) -> Result<&[u32], String> {
        let start = self.w.extra.saturating_add(at as usize);
        self.w.words.get(start..start.saturating_add(n)).ok_or_else(|| format!("bad extra offset {at}"))
    }

    /// `child` of `parent`: after it, and not yet anyone's.
    fn child(&mut self, child: u32, parent: u32) -> Result<(), String> {
        match self.used.get_mut(child as usize) {
            Some(used) if !*used && child > parent => {
                *used = true;
                Ok(())
            }
            _ => Err(format!("node {child} is missing, used twice or before its parent {parent}")),
        }
    }

    /// The (key, child) fields `start..start+count`, each checked.
    fn fields(&mut self, start: u32, count: u32, parent: u32) -> Result<Range<usize>, String> {
        let r = range(start, count);
        if r.end > self.w.fields.len() / 3 {
            return Err(format!("bad fields span {start}+{count}"));
        }
        let span = self.w.pairs(start, count);
        for j in span.clone().step_by(3) {
            let [ks, kl, child] = [self.w.words[j], self.w.words[j + 1], self.w.words[j + 2]];
            self.text(ks, kl)?;
            self.child(child, parent)?;
        }
        Ok(span)
    }

    fn hash(&self, w: &[u32]) -> Result<(), String> {
        if w[0] == 1 { self.text(w[1], w[2]) } else { Ok(()) }
    }

    fn node(&mut self, at: u32) -> Result<(), String> {
        let [kind, a, b] = self.w.node(at);
        match kind {
            NULL | BOOL | NUMBER => {}
            STRING => self.text(a, b)?,
            LONG_STRING => self.long(a)?,
            BYTES => {
                let len = self.extra(a, 1)?[0] as usize;
                self.extra(a.saturating_add(1), len.div_ceil(4))?;
            }
            ARRAY => {
                let r = range(a, b);
                if r.end > self.w.items.len() {
                    return Err(format!("bad items span {a}+{b}"));
                }
                let base = self.w.items.start;
                r.into_iter().try_for_each(|j| self.child(self.w.words[base + j], at))?;
            }
            OBJECT => {
                self.fields(a, b, at)?;
            }
            SECRET => self.child(a, at)?,
            UNKNOWN if (a as usize) < UnknownKind::ALL.len() => {}
            UNKNOWN => return Err(format!("node {at} has unknown kind {a}")),
            ASSET => {
                let w: [u32; ASSET_WORDS] = self.extra(a, ASSET_WORDS)?.try_into().expect("six words");
                self.hash(&w)?;
                match w[3] {
                    source::TEXT | source::PATH | source::URI => self.text(w[4], w[5])?,
                    source::LONG_TEXT => self.long(w[4])?,
                    _ => {}
                }
            }
            ARCHIVE => {
                let w: [u32; ASSET_WORDS] = self.extra(a, ASSET_WORDS)?.try_into().expect("six words");
                self.hash(&w)?;
                match w[3] {
                    source::PATH | source::URI => self.text(w[4], w[5])?,
                    source::ASSETS => {
                        let span = self.fields(w[4], w[5], at)?;
                        for (name, child) in self.w.entries(span) {
                            if !matches!(self.w.node(child)[0], ASSET | ARCHIVE) {
                                return Err(format!("archive member {name} is neither an asset nor an archive"));
                            }
                        }
                    }
                    _ => {}
                }
            }
            REFERENCE => {
                let w: [u32; REFERENCE_WORDS] = self.extra(a, REFERENCE_WORDS)?.try_into().expect("seven words");
                self.text(w[0], w[1])?;
                if w[2] == id::KNOWN {
                    self.text(w[3], w[4])?;
                }
                self.text(w[5], w[6])?;
            }
            OUTPUT => {
                let w: [u32; OUTPUT_WORDS] = self.extra(a, OUTPUT_WORDS)?.try_into().expect("four words");
                let deps = self.extra(a.saturating_add(OUTPUT_WORDS as u32), (w[3] as usize).saturating_mul(2))?;
                deps.chunks_exact(2).try_for_each(|d| self.text(d[0], d[1]))?;
                if w[0] == 1 {
                    self.child(w[1], at)?;
                }
            }
            other => return Err(format!("node {at} has kind {other}")),
        }
        Ok(())
    }
}

/// Where [`Build`] gets long strings: moved out of an owned value, or copied.
enum Long<'a> {
    Take(Vec<Option<String>>),
    Copy(&'a [String]),
}

/// Builds [`Value`]s from checked words.
struct Build<'a> {
    w: &'a Words,
    long: Long<'a>,
}

impl<'a> Build<'a> {
    /// A builder that copies long strings, leaving `w` whole.
    fn copying(w: &'a Words) -> Self {
        Build { w, long: Long::Copy(&w.long) }
    }

    fn long(&mut self, i: u32) -> String {
        match &mut self.long {
            Long::Take(all) => all[i as usize].take().expect("checked: each long string is used once"),
            Long::Copy(all) => all[i as usize].clone(),
        }
    }

    fn str(&self, start: u32, len: u32) -> String {
        self.w.str(start, len).to_owned()
    }

    fn hash(&self, w: &[u32]) -> Option<String> {
        (w[0] == 1).then(|| self.str(w[1], w[2]))
    }

    fn value(&mut self, at: u32) -> Value {
        let [kind, a, b] = self.w.node(at);
        match kind {
            NULL => Value::Null,
            BOOL => Value::Bool(a != 0),
            NUMBER => Value::Number(number(a, b)),
            STRING => Value::String(self.str(a, b)),
            LONG_STRING => Value::String(self.long(a)),
            BYTES => {
                let len = self.w.extra(a, 1)[0] as usize;
                let words = self.w.extra(a + 1, len.div_ceil(4));
                let mut bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
                bytes.truncate(len);
                Value::Bytes(bytes)
            }
            ARRAY => {
                let base = self.w.items.start;
                Value::Array(range(a, b).map(|j| self.value(self.w.words[base + j])).collect())
            }
            OBJECT => Value::Object(self.object(self.w.pairs(a, b))),
            ASSET => Value::Asset(self.asset(a)),
            ARCHIVE => Value::Archive(self.archive(a)),
            SECRET => Value::Secret(Box::new(self.value(a))),
            UNKNOWN => Value::Unknown(UnknownKind::ALL[a as usize]),
            REFERENCE => {
                let w = self.w.extra(a, REFERENCE_WORDS);
                Value::ResourceRef(ResourceRef {
                    urn: self.str(w[0], w[1]),
                    id: match w[2] {
                        id::KNOWN => Some(RefId::Known(self.str(w[3], w[4]))),
                        id::UNKNOWN => Some(RefId::Unknown),
                        _ => None,
                    },
                    package_version: self.str(w[5], w[6]),
                })
            }
            OUTPUT => {
                let w = self.w.extra(a, OUTPUT_WORDS);
                let (present, child, secret, count) = (w[0] == 1, w[1], w[2] == 1, w[3] as usize);
                let deps = self.w.extra(a + OUTPUT_WORDS as u32, count * 2);
                let dependencies = deps.chunks_exact(2).map(|d| self.str(d[0], d[1])).collect();
                let value = present.then(|| Box::new(self.value(child)));
                Value::Output(Output { value, secret, dependencies })
            }
            _ => unreachable!("checked: node {at} has a known kind"),
        }
    }

    fn object(&mut self, span: Range<usize>) -> PropertyMap {
        // One list, then the map: collecting sorts the keys, whatever order
        // they came in, and builds the tree in one pass.
        let w = self.w;
        let entries: Vec<(String, Value)> =
            w.entries(span).map(|(k, child)| (k.to_owned(), self.value(child))).collect();
        entries.into_iter().collect()
    }

    fn asset(&mut self, at: u32) -> Asset {
        let w = self.w.extra(at, ASSET_WORDS);
        let (x, y) = (w[4], w[5]);
        Asset {
            hash: self.hash(w),
            source: match w[3] {
                source::TEXT => Some(AssetSource::Text(self.str(x, y).into())),
                source::LONG_TEXT => Some(AssetSource::Text(self.long(x).into())),
                source::HELD_TEXT => Some(AssetSource::Text(Text::held(x, y))),
                source::PATH => Some(AssetSource::Path(self.str(x, y))),
                source::URI => Some(AssetSource::Uri(self.str(x, y))),
                _ => None,
            },
        }
    }

    fn archive(&mut self, at: u32) -> Archive {
        let w = self.w.extra(at, ASSET_WORDS);
        let (x, y) = (w[4], w[5]);
        let source = match w[3] {
            source::PATH => Some(ArchiveSource::Path(self.str(x, y))),
            source::URI => Some(ArchiveSource::Uri(self.str(x, y))),
            source::ASSETS => {
                let w = self.w;
                let mut out = BTreeMap::new();
                for (name, child) in w.entries(w.pairs(x, y)) {
                    let member = match self.value(child) {
                        Value::Asset(a) => ArchiveMember::Asset(a),
                        Value::Archive(a) => ArchiveMember::Archive(a),
                        _ => unreachable!("checked: archive members are assets or archives"),
                    };
                    out.insert(name.to_owned(), member);
                }
                Some(ArchiveSource::Assets(out))
            }
            _ => None,
        };
        Archive { hash: self.hash(w), source }
    }
}

/// One node of checked [`Words`]. Not part of the SDK's API.
#[doc(hidden)]
#[derive(Clone, Copy)]
pub struct Node<'a> {
    w: &'a Words,
    at: u32,
}

/// A value's outer layer, as a decode strips it: of a [`Node`] or of a
/// [`Value`]. Not part of the SDK's API.
#[doc(hidden)]
pub enum Layer<I> {
    Null,
    Unknown,
    Secret(I),
    /// An output value: secret or not, known or not.
    Output(bool, Option<I>),
    Known,
}

impl<'a> Node<'a> {
    fn op(self) -> [u32; 3] {
        self.w.node(self.at)
    }

    fn at(self, at: u32) -> Node<'a> {
        Node { w: self.w, at }
    }

    /// As [`Value::kind_name`] names it.
    pub(crate) fn kind_name(self) -> &'static str {
        match self.op()[0] {
            NULL => "null",
            BOOL => "bool",
            NUMBER => "number",
            STRING | LONG_STRING => "string",
            BYTES => "bytes",
            ARRAY => "array",
            OBJECT => "object",
            ASSET => "asset",
            ARCHIVE => "archive",
            SECRET => "secret",
            UNKNOWN => "unknown",
            REFERENCE => "resource reference",
            _ => "output",
        }
    }

    pub(crate) fn layer(self) -> Layer<Node<'a>> {
        let [kind, a, _] = self.op();
        match kind {
            NULL => Layer::Null,
            UNKNOWN => Layer::Unknown,
            SECRET => Layer::Secret(self.at(a)),
            OUTPUT => {
                let w = self.w.extra(a, OUTPUT_WORDS);
                Layer::Output(w[2] == 1, (w[0] == 1).then(|| self.at(w[1])))
            }
            _ => Layer::Known,
        }
    }

    /// The node under secret and known-output layers, as [`Value::plain`].
    pub(crate) fn plain(self) -> Node<'a> {
        match self.layer() {
            Layer::Secret(inner) | Layer::Output(_, Some(inner)) => inner.plain(),
            _ => self,
        }
    }

    pub(crate) fn is_null(self) -> bool {
        self.op()[0] == NULL
    }

    pub(crate) fn as_bool(self) -> Option<bool> {
        let [kind, a, _] = self.op();
        (kind == BOOL).then_some(a != 0)
    }

    pub(crate) fn as_f64(self) -> Option<f64> {
        let [kind, a, b] = self.op();
        (kind == NUMBER).then(|| number(a, b))
    }

    pub(crate) fn as_str(self) -> Option<&'a str> {
        match self.op() {
            [STRING, a, b] => Some(self.w.str(a, b)),
            [LONG_STRING, a, _] => Some(&self.w.long[a as usize]),
            _ => None,
        }
    }

    pub(crate) fn items(self) -> Option<impl ExactSizeIterator<Item = Node<'a>>> {
        let [kind, a, b] = self.op();
        let base = self.w.items.start;
        (kind == ARRAY).then(|| range(a, b).map(move |j| self.at(self.w.words[base + j])))
    }

    pub(crate) fn object(self) -> Option<Map<'a>> {
        let [kind, a, b] = self.op();
        (kind == OBJECT).then(|| Map { w: self.w, span: self.w.pairs(a, b), sorted: OnceCell::new() })
    }

    /// The value, built (long strings copied).
    pub(crate) fn to_value(self) -> Value {
        Build::copying(self.w).value(self.at)
    }
}

/// An object node's fields. Not part of the SDK's API.
#[doc(hidden)]
#[derive(Clone)]
pub struct Map<'a> {
    w: &'a Words,
    span: Range<usize>,
    /// Keys strictly in order, as the host and the SDK write them (from
    /// sorted maps): a lookup can then search by halves. Found out at the
    /// first lookup, and only past [`LINEAR`] fields: an object that is
    /// only iterated never compares its keys.
    sorted: OnceCell<bool>,
}

/// Up to this many fields a lookup scans them all: most keys differ from
/// the name in length, a word compared without reading the text.
const LINEAR: usize = 8;

impl<'a> Map<'a> {
    fn sorted(&self) -> bool {
        *self.sorted.get_or_init(|| {
            let n = self.len();
            n > LINEAR && (1..n).all(|i| self.key(i - 1) < self.key(i))
        })
    }

    fn len(&self) -> usize {
        self.span.len() / 3
    }

    fn key(&self, i: usize) -> &'a str {
        let j = self.span.start + 3 * i;
        self.w.str(self.w.words[j], self.w.words[j + 1])
    }

    fn node(&self, i: usize) -> Node<'a> {
        Node { w: self.w, at: self.w.words[self.span.start + 3 * i + 2] }
    }

    /// The field named `name`; of two, the later, as a map built from the
    /// fields keeps.
    pub(crate) fn get(&self, name: &str) -> Option<Node<'a>> {
        if self.sorted() {
            let (mut lo, mut hi) = (0, self.len());
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                match self.key(mid).cmp(name) {
                    Ordering::Less => lo = mid + 1,
                    Ordering::Greater => hi = mid,
                    Ordering::Equal => return Some(self.node(mid)),
                }
            }
            return None;
        }
        let words = &self.w.words[self.span.clone()];
        let at = words.chunks_exact(3).rposition(|c| c[1] as usize == name.len() && self.w.str(c[0], c[1]) == name)?;
        Some(self.node(at))
    }

    pub(crate) fn iter(&self) -> impl ExactSizeIterator<Item = (&'a str, Node<'a>)> + use<'a> {
        let w = self.w;
        w.entries(self.span.clone()).map(move |(k, at)| (k, Node { w, at }))
    }

    /// The fields, built into a map.
    pub(crate) fn to_map(&self) -> PropertyMap {
        Build::copying(self.w).object(self.span.clone())
    }
}
