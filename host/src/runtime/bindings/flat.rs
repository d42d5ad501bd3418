//! Values between 0.1.0's encoding (strings and child lists in each node)
//! and the latest's (strings as spans of one `text`, child lists as spans
//! of `items` and `fields`). Node indices carry over unchanged, so a
//! value's structure, well-formed or not, is the same in both; whether it
//! is well-formed is checked once, in the latest encoding, where every
//! value is checked (`convert::value`).

use super::adapt::v2::{new, old};
use super::spans::{push_str, push_text, range, span};

use new::types as n;
use old::types as o;

/// From an older component: never fails, never panics.
pub fn nodes_into_flat(v: o::Value) -> n::Value {
    let mut b = Builder::default();
    let nodes = v.nodes.into_iter().map(|node| b.node(node)).collect();
    n::Value { nodes, items: b.items, fields: b.fields, text: b.text }
}

#[derive(Default)]
struct Builder {
    text: String,
    items: Vec<u32>,
    fields: Vec<(n::Span, u32)>,
}

impl Builder {
    fn text(&mut self, s: &str) -> n::Span {
        push_text(&mut self.text, s)
    }

    fn str(&mut self, s: String) -> n::Str {
        push_str(&mut self.text, s)
    }

    fn items(&mut self, children: Vec<u32>) -> n::Span {
        let start = self.items.len();
        self.items.extend(children);
        span(start, self.items.len())
    }

    fn fields(&mut self, pairs: Vec<(String, u32)>) -> n::Span {
        let start = self.fields.len();
        for (key, child) in pairs {
            let key = self.text(&key);
            self.fields.push((key, child));
        }
        span(start, self.fields.len())
    }

    fn asset(&mut self, a: o::Asset) -> n::Asset {
        n::Asset {
            hash: a.hash.map(|h| self.text(&h)),
            source: a.source.map(|s| match s {
                o::AssetSource::Text(t) => n::AssetSource::Text(self.str(t)),
                o::AssetSource::Path(p) => n::AssetSource::Path(self.text(&p)),
                o::AssetSource::Uri(u) => n::AssetSource::Uri(self.text(&u)),
            }),
        }
    }

    fn node(&mut self, node: o::Node) -> n::Node {
        match node {
            o::Node::Null => n::Node::Null,
            o::Node::Bool(b) => n::Node::Bool(b),
            o::Node::Number(x) => n::Node::Number(x),
            o::Node::String(s) => n::Node::String(self.str(s)),
            o::Node::Bytes(b) => n::Node::Bytes(b),
            o::Node::Array(children) => n::Node::Array(self.items(children)),
            o::Node::Object(pairs) => n::Node::Object(self.fields(pairs)),
            o::Node::Asset(a) => n::Node::Asset(self.asset(a)),
            o::Node::Archive(a) => n::Node::Archive(n::Archive {
                hash: a.hash.map(|h| self.text(&h)),
                source: a.source.map(|s| match s {
                    o::ArchiveSource::Assets(members) => n::ArchiveSource::Assets(self.fields(members)),
                    o::ArchiveSource::Path(p) => n::ArchiveSource::Path(self.text(&p)),
                    o::ArchiveSource::Uri(u) => n::ArchiveSource::Uri(self.text(&u)),
                }),
            }),
            o::Node::Secret(child) => n::Node::Secret(child),
            o::Node::Unknown(kind) => n::Node::Unknown(unknown_up(kind)),
            o::Node::ResourceReference(r) => n::Node::ResourceReference(n::ResourceReference {
                urn: self.text(&r.urn),
                id: r.id.map(|id| match id {
                    o::ReferenceId::Known(s) => n::ReferenceId::Known(self.text(&s)),
                    o::ReferenceId::Unknown => n::ReferenceId::Unknown,
                }),
                package_version: self.text(&r.package_version),
            }),
            o::Node::Output(out) => n::Node::Output(n::OutputValue {
                value: out.value,
                secret: out.secret,
                dependencies: out.dependencies.iter().map(|d| self.text(d)).collect(),
            }),
        }
    }
}

/// To an older component. The host only hands a guest values it built or
/// checked, but a span out of range reads as empty rather than panicking.
pub fn flat_to_nodes(v: &n::Value) -> o::Value {
    let r = Reader(v);
    o::Value { nodes: v.nodes.iter().map(|node| r.node(node)).collect() }
}

struct Reader<'a>(&'a n::Value);

impl Reader<'_> {
    fn text(&self, s: n::Span) -> String {
        self.0.text.get(range(s)).unwrap_or_default().to_owned()
    }

    fn str(&self, s: &n::Str) -> String {
        match s {
            n::Str::Short(span) => self.text(*span),
            n::Str::Long(s) => s.clone(),
        }
    }

    fn items(&self, s: n::Span) -> Vec<u32> {
        self.0.items.get(range(s)).unwrap_or_default().to_vec()
    }

    fn fields(&self, s: n::Span) -> Vec<(String, u32)> {
        let pairs = self.0.fields.get(range(s)).unwrap_or_default();
        pairs.iter().map(|&(key, child)| (self.text(key), child)).collect()
    }

    fn asset(&self, a: &n::Asset) -> o::Asset {
        o::Asset {
            hash: a.hash.map(|h| self.text(h)),
            source: a.source.as_ref().map(|s| match s {
                n::AssetSource::Text(t) => o::AssetSource::Text(self.str(t)),
                n::AssetSource::Path(p) => o::AssetSource::Path(self.text(*p)),
                n::AssetSource::Uri(u) => o::AssetSource::Uri(self.text(*u)),
            }),
        }
    }

    fn node(&self, node: &n::Node) -> o::Node {
        match node {
            n::Node::Null => o::Node::Null,
            n::Node::Bool(b) => o::Node::Bool(*b),
            n::Node::Number(x) => o::Node::Number(*x),
            n::Node::String(s) => o::Node::String(self.str(s)),
            n::Node::Bytes(b) => o::Node::Bytes(b.clone()),
            n::Node::Array(s) => o::Node::Array(self.items(*s)),
            n::Node::Object(s) => o::Node::Object(self.fields(*s)),
            n::Node::Asset(a) => o::Node::Asset(self.asset(a)),
            n::Node::Archive(a) => o::Node::Archive(o::Archive {
                hash: a.hash.map(|h| self.text(h)),
                source: a.source.map(|s| match s {
                    n::ArchiveSource::Assets(m) => o::ArchiveSource::Assets(self.fields(m)),
                    n::ArchiveSource::Path(p) => o::ArchiveSource::Path(self.text(p)),
                    n::ArchiveSource::Uri(u) => o::ArchiveSource::Uri(self.text(u)),
                }),
            }),
            n::Node::Secret(child) => o::Node::Secret(*child),
            n::Node::Unknown(kind) => o::Node::Unknown(unknown_down(*kind)),
            n::Node::ResourceReference(r) => o::Node::ResourceReference(o::ResourceReference {
                urn: self.text(r.urn),
                id: r.id.map(|id| match id {
                    n::ReferenceId::Known(s) => o::ReferenceId::Known(self.text(s)),
                    n::ReferenceId::Unknown => o::ReferenceId::Unknown,
                }),
                package_version: self.text(r.package_version),
            }),
            n::Node::Output(out) => o::Node::Output(o::OutputValue {
                value: out.value,
                secret: out.secret,
                dependencies: out.dependencies.iter().map(|&d| self.text(d)).collect(),
            }),
        }
    }
}

macro_rules! unknown_kinds {
    ($($k:ident),*) => {
        fn unknown_up(k: o::UnknownKind) -> n::UnknownKind {
            match k { $(o::UnknownKind::$k => n::UnknownKind::$k),* }
        }
        fn unknown_down(k: n::UnknownKind) -> o::UnknownKind {
            match k { $(n::UnknownKind::$k => o::UnknownKind::$k),* }
        }
    };
}

unknown_kinds!(Bool, Number, String, Array, Asset, Archive, Object);
