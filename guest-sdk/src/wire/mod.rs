//! Conversion between [`Value`](crate::Value) and the WIT `value`, a tree
//! flattened into lists of 32-bit words (see wit/README.md, "Values as words").
//!
//! The codec is written once, as a macro over a module of `types` bindings:
//! here over the SDK's own (wit-bindgen), and in `pulumi-wasm-native` over
//! the host's (wasmtime's), so a provider served natively converts its values
//! with this very code and the benchmarks' baseline differs from a component
//! by WebAssembly alone. The two bindings are distinct Rust types of the
//! same WIT, which is why a macro and not a generic function. Reading is
//! not in the macro: [`read`] works on the plain lists a value is made of.

pub mod consts;
pub mod read;

use crate::value::PropertyMap;
use crate::wit::pulumi::provider::types as w;

/// The value codec over the `types` bindings at `$types`: `words`, `decode`,
/// `decode_map`, `encode_owned`, `encode_map_owned` and `encode_outputs`. Not part of the SDK's API.
#[doc(hidden)]
#[macro_export]
macro_rules! __value_codec {
    ($types:path) => {
        use $crate::{
            Archive, ArchiveMember, ArchiveSource, Asset, AssetSource, Outputs, PropertyMap, RefId, UnknownKind, Value,
        };
        use $types as w;

        use $crate::__private::words::consts::*;

        /// Flattens any value, as [`encode_map_owned`] does a map.
        pub fn encode_owned(v: Value) -> w::Value {
            let mut sizes = Sizes::default();
            sizes.value(&v);
            let mut enc = Encoder::with_sizes(&sizes);
            enc.push(v);
            enc.into_value()
        }

        /// Flattens a map into pre-order nodes, the root first, children
        /// after parents; every short string goes into the one `text`.
        // Not inlined: every export uses it, and one copy keeps components small.
        #[inline(never)]
        pub fn encode_map_owned(m: PropertyMap) -> w::Value {
            let mut sizes = Sizes::default();
            sizes.object(&m);
            let mut enc = Encoder::with_sizes(&sizes);
            enc.push_object(m);
            enc.into_value()
        }

        /// [`encode_map_owned`] of a map or of sorted pairs (a typed state).
        pub fn encode_outputs(o: Outputs) -> w::Value {
            let f = match o {
                Outputs::Map(m) => return encode_map_owned(m),
                Outputs::Fields(f) => f,
            };
            let mut sizes = Sizes::default();
            sizes.pairs(f.iter());
            let mut enc = Encoder::with_sizes(&sizes);
            let at = enc.reserve();
            let span = enc.keys(f.iter().map(|(k, _)| k));
            enc.children(at, span, f.into_values());
            enc.into_value()
        }

        /// The lengths the encoder's buffers reach for a value, counted
        /// first so each is allocated once: growing them by doubling cost a
        /// small map's response five allocations and copies of its text alone.
        #[derive(Default)]
        struct Sizes {
            nodes: usize,
            items: usize,
            fields: usize,
            extra: usize,
            text: usize,
        }

        impl Sizes {
            fn str(&mut self, s: &str) {
                if s.len() < LONG {
                    self.text += s.len();
                }
            }

            fn object(&mut self, m: &PropertyMap) {
                self.pairs(m.iter().map(|(k, v)| (k.as_str(), v)))
            }

            fn pairs<'p>(&mut self, pairs: impl ExactSizeIterator<Item = (&'p str, &'p Value)>) {
                self.nodes += 1;
                self.fields += pairs.len();
                for (k, v) in pairs {
                    self.text += k.len();
                    self.value(v);
                }
            }

            fn value(&mut self, v: &Value) {
                match v {
                    Value::Object(m) => return self.object(m),
                    Value::String(s) => self.str(s),
                    Value::Array(a) => {
                        self.items += a.len();
                        a.iter().for_each(|c| self.value(c));
                    }
                    Value::Secret(inner) => self.value(inner),
                    Value::Asset(a) => self.asset(a),
                    Value::Archive(a) => self.archive(a),
                    Value::ResourceRef(r) => {
                        self.extra += REFERENCE_WORDS;
                        self.text += r.urn.len() + r.package_version.len();
                        if let Some(RefId::Known(id)) = &r.id {
                            self.text += id.len();
                        }
                    }
                    Value::Output(o) => {
                        self.extra += OUTPUT_WORDS + 2 * o.dependencies.len();
                        self.text += o.dependencies.iter().map(String::len).sum::<usize>();
                        if let Some(inner) = &o.value {
                            self.value(inner);
                        }
                    }
                    Value::Bytes(b) => self.extra += 1 + b.len().div_ceil(4),
                    Value::Null | Value::Bool(_) | Value::Number(_) | Value::Unknown(_) => {}
                }
                self.nodes += 1;
            }

            fn asset(&mut self, a: &Asset) {
                self.extra += ASSET_WORDS;
                self.text += a.hash.as_ref().map_or(0, String::len);
                match &a.source {
                    // A held text goes back as its handle: no text.
                    Some(AssetSource::Text(t)) if t.handle().is_some() => {}
                    Some(AssetSource::Text(t)) => self.str(t),
                    Some(AssetSource::Path(s) | AssetSource::Uri(s)) => self.text += s.len(),
                    None => {}
                }
            }

            fn archive(&mut self, a: &Archive) {
                self.extra += ASSET_WORDS;
                self.text += a.hash.as_ref().map_or(0, String::len);
                match &a.source {
                    Some(ArchiveSource::Path(s) | ArchiveSource::Uri(s)) => self.text += s.len(),
                    Some(ArchiveSource::Assets(members)) => {
                        self.fields += members.len();
                        for (k, m) in members {
                            self.text += k.len();
                            self.nodes += 1;
                            match m {
                                ArchiveMember::Asset(a) => self.asset(a),
                                ArchiveMember::Archive(a) => self.archive(a),
                            }
                        }
                    }
                    None => {}
                }
            }
        }

        /// The value being written, into words sized by [`Sizes`]: each
        /// section has a cursor. Nodes are numbered in pre-order, and a
        /// node's words of `extra` are written when it is numbered, before
        /// any child's, which keeps `extra` in node order as the contract asks.
        struct Encoder {
            words: Vec<u32>,
            text: String,
            long: Vec<String>,
            /// Where the items, fields and extra sections begin in `words`.
            items_at: usize,
            fields_at: usize,
            extra_at: usize,
            /// The next node's number, and the next free entry of each section.
            node: usize,
            item: usize,
            field: usize,
            extra: usize,
        }

        impl Encoder {
            fn with_sizes(s: &Sizes) -> Self {
                let items_at = HEADER + 3 * s.nodes;
                let fields_at = items_at + s.items;
                let extra_at = fields_at + 3 * s.fields;
                let mut words = vec![0; extra_at + s.extra];
                words[..HEADER].copy_from_slice(&[s.nodes, s.items, s.fields, s.extra].map(|n| n as u32));
                Encoder {
                    words,
                    text: String::with_capacity(s.text),
                    long: Vec::new(),
                    items_at,
                    fields_at,
                    extra_at,
                    node: 0,
                    item: 0,
                    field: 0,
                    extra: 0,
                }
            }

            fn into_value(self) -> w::Value {
                debug_assert_eq!(self.extra_at + self.extra, self.words.len(), "Sizes counted every word");
                w::Value { words: self.words, text: self.text, long: self.long }
            }

            /// The next node's number; the node is null until [`Encoder::set`].
            fn reserve(&mut self) -> u32 {
                self.node += 1;
                (self.node - 1) as u32
            }

            fn set(&mut self, at: u32, kind: u32, a: u32, b: u32) {
                let i = HEADER + at as usize * 3;
                self.words[i..i + 3].copy_from_slice(&[kind, a, b]);
            }

            /// Appends a node's operands to extra; where they start.
            fn put_extra(&mut self, operands: &[u32]) -> u32 {
                let at = self.extra_at + self.extra;
                self.words[at..at + operands.len()].copy_from_slice(operands);
                self.extra += operands.len();
                (self.extra - operands.len()) as u32
            }

            fn text(&mut self, s: &str) -> [u32; 2] {
                let start = self.text.len() as u32;
                self.text.push_str(s);
                [start, s.len() as u32]
            }

            /// A string's kind and operands: a span of `text`, or its place in `long`.
            fn str(&mut self, s: String) -> (u32, [u32; 2]) {
                if s.len() >= LONG {
                    self.long.push(s);
                    (LONG_STRING, [self.long.len() as u32 - 1, 0])
                } else {
                    (STRING, self.text(&s))
                }
            }

            fn hash(&mut self, h: Option<String>) -> [u32; 3] {
                match h {
                    Some(h) => {
                        let [s, l] = self.text(&h);
                        [1, s, l]
                    }
                    None => [0, 0, 0],
                }
            }

            fn push(&mut self, v: Value) -> u32 {
                let v = match v {
                    Value::Object(m) => return self.push_object(m),
                    other => other,
                };
                let at = self.reserve();
                match v {
                    Value::Null => {}
                    Value::Bool(b) => self.set(at, BOOL, b as u32, 0),
                    Value::Number(n) => {
                        let bits = n.to_bits();
                        self.set(at, NUMBER, bits as u32, (bits >> 32) as u32)
                    }
                    Value::String(s) => {
                        let (kind, [a, b]) = self.str(s);
                        self.set(at, kind, a, b)
                    }
                    Value::Bytes(b) => {
                        // The length, then the bytes four to a word, little-endian.
                        let e = self.put_extra(&[b.len() as u32]);
                        for c in b.chunks(4) {
                            let mut word = [0; 4];
                            word[..c.len()].copy_from_slice(c);
                            self.put_extra(&[u32::from_le_bytes(word)]);
                        }
                        self.set(at, BYTES, e, 0)
                    }
                    Value::Array(a) => {
                        // The array's children are one span of `items`, taken before
                        // any of them pushes children of its own.
                        let (start, count) = (self.item, a.len());
                        self.item += count;
                        for (j, c) in a.into_iter().enumerate() {
                            let child = self.push(c);
                            self.words[self.items_at + start + j] = child;
                        }
                        self.set(at, ARRAY, start as u32, count as u32)
                    }
                    Value::Object(_) => unreachable!("handled above"),
                    Value::Asset(a) => self.asset(at, a),
                    Value::Archive(a) => self.archive(at, a),
                    Value::Secret(inner) => {
                        let child = self.push(*inner);
                        self.set(at, SECRET, child, 0)
                    }
                    Value::Unknown(k) => self.set(at, UNKNOWN, unknown_out(k), 0),
                    Value::ResourceRef(r) => {
                        let [u, ul] = self.text(&r.urn);
                        let (id_kind, [x, y]) = match r.id {
                            None => (id::NONE, [0, 0]),
                            Some(RefId::Known(s)) => (id::KNOWN, self.text(&s)),
                            Some(RefId::Unknown) => (id::UNKNOWN, [0, 0]),
                        };
                        let [p, pl] = self.text(&r.package_version);
                        let e = self.put_extra(&[u, ul, id_kind, x, y, p, pl]);
                        self.set(at, REFERENCE, e, 0)
                    }
                    Value::Output(o) => {
                        // This node's operands first; the value's node number once pushed.
                        let present = o.value.is_some() as u32;
                        let e = self.put_extra(&[present, 0, o.secret as u32, o.dependencies.len() as u32]);
                        for d in &o.dependencies {
                            let span = self.text(d);
                            self.put_extra(&span);
                        }
                        if let Some(v) = o.value {
                            let child = self.push(*v);
                            self.words[self.extra_at + e as usize + 1] = child;
                        }
                        self.set(at, OUTPUT, e, 0)
                    }
                }
                at
            }

            /// Keys first, so that the object's pairs are one span of fields.
            fn keys<'k>(&mut self, keys: impl ExactSizeIterator<Item = &'k str>) -> (usize, usize) {
                let (start, count) = (self.field, keys.len());
                for (j, k) in keys.enumerate() {
                    let [s, l] = self.text(k);
                    let at = self.fields_at + 3 * (start + j);
                    self.words[at] = s;
                    self.words[at + 1] = l;
                }
                self.field += count;
                (start, count)
            }

            fn set_child(&mut self, field: usize, child: u32) {
                self.words[self.fields_at + 3 * field + 2] = child;
            }

            fn push_object(&mut self, m: PropertyMap) -> u32 {
                let at = self.reserve();
                let span = self.keys(m.keys().map(String::as_str));
                self.children(at, span, m.into_values())
            }

            /// The values of the object at node `at` whose keys are `span` of fields.
            fn children(
                &mut self,
                at: u32,
                (start, count): (usize, usize),
                values: impl Iterator<Item = Value>,
            ) -> u32 {
                for (j, v) in values.enumerate() {
                    let child = self.push(v);
                    self.set_child(start + j, child);
                }
                self.set(at, OBJECT, start as u32, count as u32);
                at
            }

            fn asset(&mut self, at: u32, a: Asset) {
                let [h, hs, hl] = self.hash(a.hash);
                let (src, [x, y]) = match a.source {
                    None => (source::NONE, [0, 0]),
                    Some(AssetSource::Text(t)) => match t.handle() {
                        Some((handle, len)) => (source::HELD_TEXT, [handle, len]),
                        None => match self.str(t.into_string()) {
                            (LONG_STRING, ops) => (source::LONG_TEXT, ops),
                            (_, ops) => (source::TEXT, ops),
                        },
                    },
                    Some(AssetSource::Path(p)) => (source::PATH, self.text(&p)),
                    Some(AssetSource::Uri(u)) => (source::URI, self.text(&u)),
                };
                let e = self.put_extra(&[h, hs, hl, src, x, y]);
                self.set(at, ASSET, e, 0)
            }

            fn archive(&mut self, at: u32, a: Archive) {
                let [h, hs, hl] = self.hash(a.hash);
                let mut members = None;
                let (src, [x, y]) = match a.source {
                    None => (source::NONE, [0, 0]),
                    Some(ArchiveSource::Path(p)) => (source::PATH, self.text(&p)),
                    Some(ArchiveSource::Uri(u)) => (source::URI, self.text(&u)),
                    Some(ArchiveSource::Assets(m)) => {
                        let (start, count) = self.keys(m.keys().map(String::as_str));
                        members = Some((start, m));
                        (source::ASSETS, [start as u32, count as u32])
                    }
                };
                let e = self.put_extra(&[h, hs, hl, src, x, y]);
                self.set(at, ARCHIVE, e, 0);
                // The members after the archive's own operands: they come later in node order.
                if let Some((start, m)) = members {
                    for (j, m) in m.into_values().enumerate() {
                        let child = self.reserve();
                        match m {
                            ArchiveMember::Asset(a) => self.asset(child, a),
                            ArchiveMember::Archive(a) => self.archive(child, a),
                        }
                        self.set_child(start + j, child);
                    }
                }
            }
        }

        /// The kind's position among `unknown-kind`'s cases (and in [`UnknownKind::ALL`]).
        fn unknown_out(k: UnknownKind) -> u32 {
            match k {
                UnknownKind::Bool => 0,
                UnknownKind::Number => 1,
                UnknownKind::String => 2,
                UnknownKind::Array => 3,
                UnknownKind::Asset => 4,
                UnknownKind::Archive => 5,
                UnknownKind::Object => 6,
            }
        }

        /// Checks a value's words, to read them where they lie. The host
        /// validates what it sends; the checks only keep a bad index, span
        /// or count from panicking the guest.
        pub fn words(v: w::Value) -> $crate::Result<$crate::__private::words::Words> {
            $crate::__private::words::Words::new(v.words, v.text, v.long)
                .map_err(|e| $crate::Error::InvalidArgument(format!("malformed property map: {e}")))
        }

        /// Rebuilds the tree; errors say the value is malformed.
        #[inline(never)]
        pub fn decode(v: w::Value) -> $crate::Result<Value> {
            $crate::__private::words::Words::new(v.words, v.text, v.long)
                .map($crate::__private::words::Words::into_value)
                .map_err(|e| $crate::Error::InvalidArgument(format!("malformed value: {e}")))
        }

        /// The root object, built; errors say the map is malformed.
        pub fn decode_map(v: w::Value) -> $crate::Result<PropertyMap> {
            words(v)?.into_map()
        }
    };
}

mod codec {
    crate::__value_codec!(crate::wit::pulumi::provider::types);
}

pub(crate) use codec::{decode, decode_map, encode_map_owned, encode_outputs, encode_owned, words};

/// [`encode_map_owned`] of a borrowed map (copies every string); the exports
/// encode their own results by value.
pub(crate) fn encode_map(m: &PropertyMap) -> w::Value {
    encode_map_owned(m.clone())
}

/// `memcmp` for the component, eight bytes at a time. wasi-libc's is a byte
/// loop, and every string or byte comparison in a guest goes through it: a
/// Diff of a 1 MB asset spent most of its time there. Defined here, the
/// linker takes it instead of libc's (an archive member is only pulled in for
/// a symbol nothing else defines).
#[cfg(all(target_arch = "wasm32", target_os = "wasi"))]
#[unsafe(no_mangle)]
#[inline(never)] // One copy: inlined into every comparison it grew components by 6%.
pub unsafe extern "C" fn memcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    // SAFETY: the caller's contract is the same.
    unsafe { compare_words(a, b, n) }
}

/// Like C's `memcmp`: the sign of the first differing byte (as unsigned).
///
/// Up to 16 bytes, which covers most property names, it runs no loop: two
/// overlapping words (or half-words, or single bytes) cover the range. In a
/// component every loop iteration also checks the epoch (the deadline), and
/// a byte loop over a short key cost more in those checks than in comparing.
///
/// # Safety
/// `a` and `b` must each point to `n` readable bytes.
#[cfg_attr(not(any(test, target_arch = "wasm32")), allow(dead_code))]
unsafe fn compare_words(a: *const u8, b: *const u8, n: usize) -> i32 {
    // SAFETY (every read below): it ends at or before `n`.
    unsafe {
        if n >= 8 {
            let last = n - 8;
            if last > 8 {
                let mut i = 0;
                while i < last {
                    let d = diff8(a, b, i);
                    if d != 0 {
                        return d;
                    }
                    i += 8;
                }
            } else if last > 0 {
                let d = diff8(a, b, 0);
                if d != 0 {
                    return d;
                }
            }
            // Ends at `n`; the bytes it shares with the words before are equal.
            return diff8(a, b, last);
        }
        if n >= 4 {
            let d = diff4(a, b, 0);
            return if d != 0 { d } else { diff4(a, b, n - 4) };
        }
        let byte = |i: usize| i32::from(*a.add(i)) - i32::from(*b.add(i));
        if n == 0 {
            return 0;
        }
        let d = byte(0);
        if d != 0 || n == 1 {
            return d;
        }
        let d = byte(1);
        if d != 0 || n == 2 { d } else { byte(2) }
    }
}

/// The difference (as unsigned) of the first differing byte of two unequal
/// words read little-endian, as wasm is: the first byte is the lowest.
#[inline(always)]
fn first_difference(x: u64, y: u64) -> i32 {
    let shift = (x ^ y).trailing_zeros() & !7;
    i32::from((x >> shift) as u8) - i32::from((y >> shift) as u8)
}

/// The 8 bytes of `a` and `b` at `at`, compared (see [`first_difference`]); 0 when equal.
///
/// # Safety
/// Both must have 8 readable bytes at `at`.
#[inline(always)]
unsafe fn diff8(a: *const u8, b: *const u8, at: usize) -> i32 {
    // SAFETY: the caller's; the reads may be unaligned.
    let (x, y) = unsafe { ((a.add(at) as *const u64).read_unaligned(), (b.add(at) as *const u64).read_unaligned()) };
    if x == y { 0 } else { first_difference(u64::from_le(x), u64::from_le(y)) }
}

/// [`diff8`] of 4 bytes.
///
/// # Safety
/// Both must have 4 readable bytes at `at`.
#[inline(always)]
unsafe fn diff4(a: *const u8, b: *const u8, at: usize) -> i32 {
    // SAFETY: the caller's; the reads may be unaligned.
    let (x, y) = unsafe { ((a.add(at) as *const u32).read_unaligned(), (b.add(at) as *const u32).read_unaligned()) };
    if x == y { 0 } else { first_difference(u64::from(u32::from_le(x)), u64::from(u32::from_le(y))) }
}

#[cfg(test)]
mod tests;
