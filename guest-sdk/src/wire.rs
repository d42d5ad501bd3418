//! Conversion between [`Value`](crate::Value) and the flattened WIT `value`
//! (see wit/README.md).
//!
//! The codec is written once, as a macro over a module of `types` bindings:
//! here over the SDK's own (wit-bindgen), and in `pulumi-wasm-native` over
//! the host's (wasmtime's), so a provider served natively converts its values
//! with this very code and the benchmarks' baseline differs from a component
//! by WebAssembly alone. The two bindings are distinct Rust types of the
//! same WIT, which is why a macro and not a generic function.

use crate::value::PropertyMap;
use crate::wit::pulumi::provider::types as w;

/// The value codec over the `types` bindings at `$types`: `decode`,
/// `decode_map` and `encode_map_owned`. Not part of the SDK's API.
#[doc(hidden)]
#[macro_export]
macro_rules! __value_codec {
    ($types:path) => {
        use $crate::{
            Archive, ArchiveMember, ArchiveSource, Asset, AssetSource, Output, PropertyMap, RefId, ResourceRef,
            UnknownKind, Value,
        };
        use $types as w;

        /// Flattens any value, as [`encode_map_owned`] does a map.
        pub fn encode_owned(v: Value) -> w::Value {
            let mut sizes = Sizes::default();
            sizes.value(&v);
            let mut enc = Encoder::with_sizes(&sizes);
            enc.push(v);
            enc.into_value()
        }

        /// Flattens a map into pre-order nodes, the root first, children
        /// after parents; every string goes into the one `text`.
        // Not inlined: every export uses it, and one copy keeps components small.
        #[inline(never)]
        pub fn encode_map_owned(m: PropertyMap) -> w::Value {
            let mut sizes = Sizes::default();
            sizes.object(&m);
            let mut enc = Encoder::with_sizes(&sizes);
            enc.push_object(m);
            enc.into_value()
        }

        /// The lengths the encoder's four buffers reach for a value, counted
        /// first so each is allocated once: growing them by doubling cost a
        /// small map's response five allocations and copies of its text alone.
        #[derive(Default)]
        struct Sizes {
            nodes: usize,
            items: usize,
            fields: usize,
            text: usize,
        }

        impl Sizes {
            fn str(&mut self, s: &str) {
                if s.len() < LONG_STRING {
                    self.text += s.len();
                }
            }

            fn object(&mut self, m: &PropertyMap) {
                self.nodes += 1;
                self.fields += m.len();
                for (k, v) in m {
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
                        self.text += r.urn.len() + r.package_version.len();
                        if let Some(RefId::Known(id)) = &r.id {
                            self.text += id.len();
                        }
                    }
                    Value::Output(o) => {
                        self.text += o.dependencies.iter().map(String::len).sum::<usize>();
                        if let Some(inner) = &o.value {
                            self.value(inner);
                        }
                    }
                    Value::Null | Value::Bool(_) | Value::Number(_) | Value::Bytes(_) | Value::Unknown(_) => {}
                }
                self.nodes += 1;
            }

            fn asset(&mut self, a: &Asset) {
                self.text += a.hash.as_ref().map_or(0, String::len);
                match &a.source {
                    Some(AssetSource::Text(t)) => self.str(t),
                    Some(AssetSource::Path(s) | AssetSource::Uri(s)) => self.text += s.len(),
                    None => {}
                }
            }

            fn archive(&mut self, a: &Archive) {
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

        struct Encoder {
            nodes: Vec<w::Node>,
            items: Vec<u32>,
            fields: Vec<(w::Span, u32)>,
            text: String,
        }

        /// Strings this long or longer get their own `str.long`: moved, not
        /// copied into the shared text (the host uses the same length).
        const LONG_STRING: usize = 1 << 10;

        fn span(start: usize, end: usize) -> w::Span {
            w::Span { start: start as u32, len: (end - start) as u32 }
        }

        impl Encoder {
            fn with_sizes(s: &Sizes) -> Self {
                Encoder {
                    nodes: Vec::with_capacity(s.nodes),
                    items: Vec::with_capacity(s.items),
                    fields: Vec::with_capacity(s.fields),
                    text: String::with_capacity(s.text),
                }
            }

            fn into_value(self) -> w::Value {
                w::Value { nodes: self.nodes, items: self.items, fields: self.fields, text: self.text }
            }

            fn reserve(&mut self) -> usize {
                self.nodes.push(w::Node::Null);
                self.nodes.len() - 1
            }

            fn text(&mut self, s: &str) -> w::Span {
                let start = self.text.len();
                self.text.push_str(s);
                span(start, self.text.len())
            }

            fn str(&mut self, s: String) -> w::Str {
                if s.len() >= LONG_STRING { w::Str::Long(s) } else { w::Str::Short(self.text(&s)) }
            }

            fn opt_text(&mut self, s: Option<String>) -> Option<w::Span> {
                s.map(|s| self.text(&s))
            }

            fn push(&mut self, v: Value) -> u32 {
                let v = match v {
                    Value::Object(m) => return self.push_object(m),
                    other => other,
                };
                let at = self.reserve();
                let node = match v {
                    Value::Null => w::Node::Null,
                    Value::Bool(b) => w::Node::Bool(b),
                    Value::Number(n) => w::Node::Number(n),
                    Value::String(s) => w::Node::String(self.str(s)),
                    Value::Bytes(b) => w::Node::Bytes(b),
                    Value::Array(a) => {
                        // The array's children are one span of `items`, taken before
                        // any of them pushes children of its own.
                        let (start, count) = (self.items.len(), a.len());
                        self.items.resize(start + count, 0);
                        for (j, c) in a.into_iter().enumerate() {
                            let child = self.push(c);
                            self.items[start + j] = child;
                        }
                        w::Node::Array(span(start, start + count))
                    }
                    Value::Object(_) => unreachable!("handled above"),
                    Value::Asset(a) => w::Node::Asset(self.asset(a)),
                    Value::Archive(a) => w::Node::Archive(self.archive(a)),
                    Value::Secret(inner) => w::Node::Secret(self.push(*inner)),
                    Value::Unknown(k) => w::Node::Unknown(unknown_out(k)),
                    Value::ResourceRef(r) => w::Node::ResourceReference(w::ResourceReference {
                        urn: self.text(&r.urn),
                        id: r.id.map(|id| match id {
                            RefId::Known(s) => w::ReferenceId::Known(self.text(&s)),
                            RefId::Unknown => w::ReferenceId::Unknown,
                        }),
                        package_version: self.text(&r.package_version),
                    }),
                    Value::Output(o) => w::Node::Output(w::OutputValue {
                        value: o.value.map(|v| self.push(*v)),
                        secret: o.secret,
                        dependencies: o.dependencies.iter().map(|d| self.text(d)).collect(),
                    }),
                };
                self.nodes[at] = node;
                at as u32
            }

            fn push_object(&mut self, m: PropertyMap) -> u32 {
                let at = self.reserve();
                // Keys first, so that the object's pairs are one span of `fields`.
                let (start, count) = (self.fields.len(), m.len());
                for k in m.keys() {
                    let key = self.text(k);
                    self.fields.push((key, 0));
                }
                for (j, v) in m.into_values().enumerate() {
                    let child = self.push(v);
                    self.fields[start + j].1 = child;
                }
                self.nodes[at] = w::Node::Object(span(start, start + count));
                at as u32
            }

            fn asset(&mut self, a: Asset) -> w::Asset {
                w::Asset {
                    hash: self.opt_text(a.hash),
                    source: a.source.map(|s| match s {
                        AssetSource::Text(t) => w::AssetSource::Text(self.str(t)),
                        AssetSource::Path(p) => w::AssetSource::Path(self.text(&p)),
                        AssetSource::Uri(u) => w::AssetSource::Uri(self.text(&u)),
                    }),
                }
            }

            fn archive(&mut self, a: Archive) -> w::Archive {
                let hash = self.opt_text(a.hash);
                let source = a.source.map(|s| match s {
                    ArchiveSource::Path(p) => w::ArchiveSource::Path(self.text(&p)),
                    ArchiveSource::Uri(u) => w::ArchiveSource::Uri(self.text(&u)),
                    ArchiveSource::Assets(members) => {
                        let start = self.fields.len();
                        for k in members.keys() {
                            let key = self.text(k);
                            self.fields.push((key, 0));
                        }
                        let count = members.len();
                        for (j, m) in members.into_values().enumerate() {
                            let at = self.reserve();
                            self.nodes[at] = match m {
                                ArchiveMember::Asset(a) => w::Node::Asset(self.asset(a)),
                                ArchiveMember::Archive(a) => w::Node::Archive(self.archive(a)),
                            };
                            self.fields[start + j].1 = at as u32;
                        }
                        w::ArchiveSource::Assets(span(start, start + count))
                    }
                });
                w::Archive { hash, source }
            }
        }

        fn unknown_out(k: UnknownKind) -> w::UnknownKind {
            match k {
                UnknownKind::Bool => w::UnknownKind::Bool,
                UnknownKind::Number => w::UnknownKind::Number,
                UnknownKind::String => w::UnknownKind::String,
                UnknownKind::Array => w::UnknownKind::Array,
                UnknownKind::Asset => w::UnknownKind::Asset,
                UnknownKind::Archive => w::UnknownKind::Archive,
                UnknownKind::Object => w::UnknownKind::Object,
            }
        }

        fn unknown_in(k: w::UnknownKind) -> UnknownKind {
            match k {
                w::UnknownKind::Bool => UnknownKind::Bool,
                w::UnknownKind::Number => UnknownKind::Number,
                w::UnknownKind::String => UnknownKind::String,
                w::UnknownKind::Array => UnknownKind::Array,
                w::UnknownKind::Asset => UnknownKind::Asset,
                w::UnknownKind::Archive => UnknownKind::Archive,
                w::UnknownKind::Object => UnknownKind::Object,
            }
        }

        /// Rebuilds the tree. The host validates what it sends; the checks here only
        /// keep a bad index or span from panicking the guest.
        #[inline(never)]
        pub fn decode(v: w::Value) -> Result<Value, String> {
            let mut d = Decoder {
                slots: v.nodes.into_iter().map(Some).collect(),
                items: v.items,
                fields: v.fields,
                text: v.text,
            };
            if d.slots.is_empty() {
                return Err("empty value".into());
            }
            d.take(0, None)
        }

        pub fn decode_map(v: w::Value) -> Result<PropertyMap, String> {
            match decode(v)? {
                Value::Object(m) => Ok(m),
                other => Err(format!("expected an object, got {}", other.kind_name())),
            }
        }

        struct Decoder {
            slots: Vec<Option<w::Node>>,
            items: Vec<u32>,
            fields: Vec<(w::Span, u32)>,
            text: String,
        }

        fn range(s: w::Span) -> ::std::ops::Range<usize> {
            let start = s.start as usize;
            start..start.saturating_add(s.len as usize)
        }

        impl Decoder {
            fn str(&self, s: w::Span) -> Result<String, String> {
                self.text.get(range(s)).map(str::to_owned).ok_or_else(|| format!("bad text span {s:?}"))
            }

            fn string(&self, s: w::Str) -> Result<String, String> {
                match s {
                    w::Str::Short(s) => self.str(s),
                    w::Str::Long(s) => Ok(s),
                }
            }

            fn opt_str(&self, s: Option<w::Span>) -> Result<Option<String>, String> {
                s.map(|s| self.str(s)).transpose()
            }

            fn pairs(&self, s: w::Span) -> Result<Vec<(String, u32)>, String> {
                let pairs = self.fields.get(range(s)).ok_or_else(|| format!("bad fields span {s:?}"))?;
                pairs.iter().map(|&(k, i)| Ok((self.str(k)?, i))).collect()
            }

            fn take(&mut self, at: u32, parent: Option<u32>) -> Result<Value, String> {
                if parent.is_some_and(|p| at <= p) {
                    return Err(format!("node {at} does not follow its parent"));
                }
                let node = self
                    .slots
                    .get_mut(at as usize)
                    .and_then(Option::take)
                    .ok_or_else(|| format!("node {at} is missing or used twice"))?;
                let me = Some(at);
                Ok(match node {
                    w::Node::Null => Value::Null,
                    w::Node::Bool(b) => Value::Bool(b),
                    w::Node::Number(n) => Value::Number(n),
                    w::Node::String(s) => Value::String(self.string(s)?),
                    w::Node::Bytes(b) => Value::Bytes(b),
                    w::Node::Array(s) => {
                        let r = range(s);
                        if self.items.get(r.clone()).is_none() {
                            return Err(format!("bad items span {s:?}"));
                        }
                        Value::Array(r.map(|j| self.take(self.items[j], me)).collect::<Result<_, _>>()?)
                    }
                    w::Node::Object(s) => {
                        let r = range(s);
                        if self.fields.get(r.clone()).is_none() {
                            return Err(format!("bad fields span {s:?}"));
                        }
                        // One pass into one list; collecting it into the map
                        // sorts the keys, whatever order they came in.
                        let mut entries = Vec::with_capacity(r.len());
                        for j in r {
                            let (k, i) = self.fields[j];
                            entries.push((self.str(k)?, self.take(i, me)?));
                        }
                        Value::Object(entries.into_iter().collect())
                    }
                    w::Node::Asset(a) => Value::Asset(self.asset(a)?),
                    w::Node::Archive(a) => Value::Archive(self.archive(a, at)?),
                    w::Node::Secret(i) => Value::Secret(Box::new(self.take(i, me)?)),
                    w::Node::Unknown(k) => Value::Unknown(unknown_in(k)),
                    w::Node::ResourceReference(r) => Value::ResourceRef(ResourceRef {
                        urn: self.str(r.urn)?,
                        id: match r.id {
                            None => None,
                            Some(w::ReferenceId::Known(s)) => Some(RefId::Known(self.str(s)?)),
                            Some(w::ReferenceId::Unknown) => Some(RefId::Unknown),
                        },
                        package_version: self.str(r.package_version)?,
                    }),
                    w::Node::Output(o) => Value::Output(Output {
                        value: o.value.map(|i| self.take(i, me).map(Box::new)).transpose()?,
                        secret: o.secret,
                        dependencies: o.dependencies.iter().map(|&d| self.str(d)).collect::<Result<_, _>>()?,
                    }),
                })
            }

            fn asset(&self, a: w::Asset) -> Result<Asset, String> {
                Ok(Asset {
                    hash: self.opt_str(a.hash)?,
                    source: match a.source {
                        None => None,
                        Some(w::AssetSource::Text(t)) => Some(AssetSource::Text(self.string(t)?)),
                        Some(w::AssetSource::Path(p)) => Some(AssetSource::Path(self.str(p)?)),
                        Some(w::AssetSource::Uri(u)) => Some(AssetSource::Uri(self.str(u)?)),
                    },
                })
            }

            fn archive(&mut self, a: w::Archive, at: u32) -> Result<Archive, String> {
                let source = match a.source {
                    None => None,
                    Some(w::ArchiveSource::Path(p)) => Some(ArchiveSource::Path(self.str(p)?)),
                    Some(w::ArchiveSource::Uri(u)) => Some(ArchiveSource::Uri(self.str(u)?)),
                    Some(w::ArchiveSource::Assets(s)) => {
                        let mut out = ::std::collections::BTreeMap::new();
                        for (name, i) in self.pairs(s)? {
                            let member = match self.take(i, Some(at))? {
                                Value::Asset(a) => ArchiveMember::Asset(a),
                                Value::Archive(a) => ArchiveMember::Archive(a),
                                other => return Err(format!("archive member {name} is a {}", other.kind_name())),
                            };
                            out.insert(name, member);
                        }
                        Some(ArchiveSource::Assets(out))
                    }
                };
                Ok(Archive { hash: self.opt_str(a.hash)?, source })
            }
        }
    };
}

mod codec {
    crate::__value_codec!(crate::wit::pulumi::provider::types);
}

pub(crate) use codec::{decode, decode_map, encode_map_owned, encode_owned};

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
/// # Safety
/// `a` and `b` must each point to `n` readable bytes.
#[cfg_attr(not(any(test, target_arch = "wasm32")), allow(dead_code))]
unsafe fn compare_words(a: *const u8, b: *const u8, n: usize) -> i32 {
    let mut i = 0;
    while i + 8 <= n {
        // SAFETY: `i + 8 <= n` readable bytes; the loads may be unaligned.
        let (x, y) = unsafe { ((a.add(i) as *const u64).read_unaligned(), (b.add(i) as *const u64).read_unaligned()) };
        if x != y {
            // Little-endian (as wasm is): the first differing byte is the lowest differing one.
            let (x, y) = (x.to_le(), y.to_le());
            let shift = (x ^ y).trailing_zeros() & !7;
            return i32::from((x >> shift) as u8) - i32::from((y >> shift) as u8);
        }
        i += 8;
    }
    while i < n {
        // SAFETY: `i < n`.
        let (x, y) = unsafe { (*a.add(i), *b.add(i)) };
        if x != y {
            return i32::from(x) - i32::from(y);
        }
        i += 1;
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::props;
    use crate::value::*;

    #[test]
    fn every_kind_round_trips() {
        let mut members = std::collections::BTreeMap::new();
        members.insert("a.txt".to_string(), ArchiveMember::Asset(Asset::text("hi")));
        members.insert(
            "inner".to_string(),
            ArchiveMember::Archive(Archive { hash: None, source: Some(ArchiveSource::Path("x.zip".into())) }),
        );
        let m = props! {
            "null" => Value::Null,
            "b" => true,
            "n" => 1.5,
            "s" => "str",
            "bytes" => Value::Bytes(vec![0xff, 0x00]),
            "arr" => vec![Value::from(1), Value::Unknown(UnknownKind::Number)],
            "obj" => props! { "deep" => props! { "deeper" => "x" } },
            "secret" => Value::secret("shh"),
            "asset" => Asset::uri("https://example.com/a"),
            "archive" => Archive { hash: Some("h".into()), source: Some(ArchiveSource::Assets(members)) },
            "ref" => Value::ResourceRef(ResourceRef { urn: "urn:x".into(), id: Some(RefId::Unknown), package_version: "1.0.0".into() }),
            "out" => Value::Output(Output { value: Some(Box::new("v".into())), secret: true, dependencies: vec!["urn:d".into()] }),
            "unknown-out" => Value::Output(Output { value: None, secret: false, dependencies: vec![] }),
            "long" => "é".repeat(1000),
            "long-asset" => Asset::text("x".repeat(4096)),
        };
        let wire = encode_map(&m);
        let span = |s: w::Span| s.start as usize..(s.start + s.len) as usize;
        for (i, n) in wire.nodes.iter().enumerate() {
            let children: Vec<u32> = match n {
                w::Node::Array(a) => wire.items[span(*a)].to_vec(),
                w::Node::Object(f) => wire.fields[span(*f)].iter().map(|(_, i)| *i).collect(),
                w::Node::Secret(c) => vec![*c],
                _ => vec![],
            };
            assert!(children.iter().all(|c| *c as usize > i), "pre-order violated at {i}");
        }
        let long = wire.nodes.iter().filter(|n| match n {
            w::Node::String(w::Str::Long(_)) => true,
            w::Node::Asset(a) => matches!(a.source, Some(w::AssetSource::Text(w::Str::Long(_)))),
            _ => false,
        });
        assert_eq!(long.count(), 2, "strings of 1 KiB and more move whole");
        // Sized up front: every buffer allocated once, at its final length.
        let sizes = [wire.nodes.capacity(), wire.items.capacity(), wire.fields.capacity(), wire.text.capacity()];
        assert_eq!(sizes, [wire.nodes.len(), wire.items.len(), wire.fields.len(), wire.text.len()]);
        assert_eq!(decode_map(wire).unwrap(), m);
    }

    #[test]
    fn bad_indices_and_spans_are_errors_not_panics() {
        let value = |nodes: Vec<w::Node>, items: Vec<u32>, text: &str| w::Value {
            nodes,
            items,
            fields: vec![(w::Span { start: 0, len: 1 }, 1), (w::Span { start: 5, len: 1 }, 1)],
            text: text.into(),
        };
        let all = |len| w::Span { start: 0, len };
        let cyclic = value(vec![w::Node::Array(all(1))], vec![0], "");
        assert!(decode(cyclic).is_err());
        let shared = value(vec![w::Node::Array(all(2)), w::Node::Null], vec![1, 1], "");
        assert!(decode(shared).is_err());
        let missing = value(vec![w::Node::Secret(7)], vec![], "");
        assert!(decode(missing).is_err());
        assert!(decode(value(vec![], vec![], "")).is_err());
        // Spans past their buffer, or splitting a character.
        let past = value(vec![w::Node::Array(all(3)), w::Node::Null], vec![1], "");
        assert!(decode(past).is_err());
        let split = value(vec![w::Node::String(w::Str::Short(w::Span { start: 0, len: 1 }))], vec![], "é");
        assert!(decode(split).is_err());
        let key = value(vec![w::Node::Object(w::Span { start: 1, len: 1 }), w::Node::Null], vec![], "k");
        assert!(decode(key).is_err());
        let fine = value(vec![w::Node::Object(all(1)), w::Node::Null], vec![], "k");
        assert_eq!(decode_map(fine).unwrap(), crate::props! { "k" => Value::Null });
    }

    #[test]
    fn compare_words_orders_like_byte_comparison() {
        let samples: [&[u8]; 9] =
            [b"", b"a", b"ab", b"abcdefgh", b"abcdefgi", b"abcdefghij", b"abcdefghik", b"\xffbcdefgh", b"abcdefg\x01x"];
        let mut pairs: Vec<(Vec<u8>, Vec<u8>)> =
            samples.iter().flat_map(|a| samples.iter().map(|b| (a.to_vec(), b.to_vec()))).collect();
        // Every length up to two words and a half, differing (up or down) at every position.
        let base = b"klmnopqrstuvwxyzabcd";
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
}
