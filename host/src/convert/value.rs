//! Property values: protobuf `Struct`/`Value`, with Pulumi's encoding of special
//! values, to and from the flattened WIT `value`. The work is done on the
//! host's tree of it (nodes, with every string a span of one `text` and
//! every child list a span of `items` or `fields`), which `words` packs into
//! the contract's words and unpacks.
//!
//! Wire -> WIT: the input comes from the engine and was decoded by prost, but the
//! walk still bounds depth and uses an explicit stack, never recursion. Nodes come
//! out in pre-order, so every child index is greater than its parent's.
//!
//! WIT -> wire: the input is untrusted guest output. The whole value is
//! validated first (spans, indices, single ownership, keys, depth, size), then
//! the wire value is built bottom-up in one backwards pass, again without
//! recursion.

use std::collections::{BTreeMap, HashSet};
use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use prost_types::value::Kind;
use prost_types::{ListValue, Struct, Value as WireValue};

use crate::runtime::bindings::spans::{push_str, push_text, range, span};
use crate::runtime::bindings::tree::{
    Archive, ArchiveSource, Asset, AssetSource, Node, OutputValue, ReferenceId, ResourceReference, Span, Str,
    UnknownKind, Value,
};
use crate::runtime::bindings::types::Value as Words;
use crate::runtime::bindings::words::{self, WordsError};

/// Pulumi's signature key, special-value signatures and unknown sentinels.
pub mod sig {
    /// Field whose string value marks a struct as a special value.
    pub const KEY: &str = "4dabf18193072939515e22adb298388d";
    /// Secret: `{sig, value}`.
    pub const SECRET: &str = "1b47061264138c4ac30d75fd1eb44270";
    /// Resource reference: `{sig, urn, id?, packageVersion?}`.
    pub const RESOURCE_REFERENCE: &str = "5cf8f73096256a8f31e491e813e4eb8e";
    /// Output value: `{sig, value?, secret?, dependencies?}`; no `value` means unknown.
    pub const OUTPUT_VALUE: &str = "d0e6a833031e9bbcd3f4e8bde6ca49a4";
    /// Asset: `{sig, hash?, text?|path?|uri?}`.
    pub const ASSET: &str = "c44067f5952c0a294b673a41bacd8c17";
    /// Archive: `{sig, hash?, assets?|path?|uri?}`.
    pub const ARCHIVE: &str = "0def7320c3a5731c473e5ecbe6d01bc7";
    /// Byte string (a non-UTF-8 string): `{sig, value: base64}`.
    pub const BYTE_STRING: &str = "803fd3297a5875dc03ca845dda5d2a98";
    /// Unknown bool.
    pub const UNKNOWN_BOOL: &str = "1c4a061d-8072-4f0a-a4cb-0ff528b18fe7";
    /// Unknown number.
    pub const UNKNOWN_NUMBER: &str = "3eeb2bf0-c639-47a8-9e75-3b44932eb421";
    /// Unknown string; also the generic unknown and the unknown resource ID.
    pub const UNKNOWN_STRING: &str = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";
    /// Unknown array.
    pub const UNKNOWN_ARRAY: &str = "6a19a0b0-7e62-4c92-b797-7f8e31da9cc2";
    /// Unknown asset.
    pub const UNKNOWN_ASSET: &str = "030794c1-ac77-496b-92df-f27374a8bd58";
    /// Unknown archive.
    pub const UNKNOWN_ARCHIVE: &str = "e48ece36-62e2-4504-bad9-02848725956a";
    /// Unknown object.
    pub const UNKNOWN_OBJECT: &str = "dd056dcd-154b-4c76-9bd3-c8f88648b5ff";
}

/// Where in a value something went wrong, e.g. `tags.env` or `items[3]`.
/// Empty for the root.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PropertyPath(pub String);

impl fmt::Display for PropertyPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() { f.write_str("the top level") } else { write!(f, "`{}`", self.0) }
    }
}

/// Why a value could not be converted. Paths name the property, e.g. `tags.env`
/// or `items[3]`; node numbers are positions in a guest value's node list.
#[derive(Debug, thiserror::Error)]
pub enum ConvertError {
    // Wire input.
    #[error("malformed {what} at {path}: {reason}")]
    Malformed { path: PropertyPath, what: &'static str, reason: String },
    #[error("unrecognized signature '{signature}' in property map at {path}")]
    UnrecognizedSignature { path: PropertyPath, signature: String },
    #[error("invalid base64 in the byte string at {path}: {source}")]
    InvalidBase64 { path: PropertyPath, source: base64::DecodeError },

    // Guest output.
    #[error("malformed value: {0}")]
    Words(#[from] WordsError),
    #[error("the byte string at {path} is not valid UTF-8 and the engine did not negotiate byte strings")]
    ByteStringsNotNegotiated { path: PropertyPath },
    #[error("the value has no nodes")]
    Empty,
    #[error("the root of a property map must be an object, not {found}")]
    RootNotObject { found: &'static str },
    #[error("node {node} at {path} refers to node {child}, but there are only {len} nodes")]
    ChildOutOfRange { path: PropertyPath, node: u32, child: u32, len: usize },
    #[error("node {node} at {path} refers to node {child}, which does not come after it")]
    ChildNotAfterParent { path: PropertyPath, node: u32, child: u32 },
    #[error("node {child} at {path} is referenced twice, by nodes {first} and {second}")]
    SharedNode { path: PropertyPath, child: u32, first: u32, second: u32 },
    #[error("node {node} is not referenced by any node before it")]
    Unreferenced { node: u32 },
    #[error("archive member at {path} must be an asset or an archive, not {found}")]
    ArchiveMember { path: PropertyPath, found: &'static str },
    #[error("duplicate key '{key}' at {path}")]
    DuplicateKey { path: PropertyPath, key: String },
    #[error("the key '{}' at {path} is reserved for Pulumi's special values", sig::KEY)]
    ReservedKey { path: PropertyPath },
    #[error("the value at {path} is nested more than {max} levels deep")]
    TooDeep { path: PropertyPath, max: usize },
    #[error("the value has {count} nodes, more than the limit of {max}")]
    TooManyNodes { count: usize, max: usize },
    #[error("node {node} at {path} has a span of its value's {buffer} that {reason}")]
    BadSpan { path: PropertyPath, node: u32, buffer: &'static str, reason: &'static str },
    #[error("the value's {buffer} is larger than 4 GiB")]
    TooLarge { buffer: &'static str },

    // Other request/response fields (used by `convert::requests`).
    #[error("{0}")]
    Request(String),
    #[error("{0}")]
    Response(String),
}

/// Bounds on guest-produced values.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Deepest node allowed; the root is at depth 0.
    pub max_depth: usize,
    /// Most nodes allowed in one value.
    pub max_nodes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_depth: 128, max_nodes: 4_000_000 }
    }
}

/// What the engine negotiated for values sent to it.
#[derive(Clone, Copy, Debug, Default)]
pub struct WireOptions {
    /// The engine accepts byte strings (`accepts_byte_string` in Handshake).
    pub byte_strings: bool,
    /// The caller takes no secrets (a client that did not handshake and sent
    /// `acceptSecrets: false` to Configure): a secret is sent as its value.
    pub plain_secrets: bool,
    /// The caller takes no resource references (as above, `acceptResources`):
    /// a reference is sent as its ID, or its URN if it has none.
    pub plain_references: bool,
}

/// A property map with no properties.
pub fn empty_map() -> Words {
    words::pack(Value { nodes: vec![Node::Object(EMPTY)], items: Vec::new(), fields: Vec::new(), text: String::new() })
}

const EMPTY: Span = Span { start: 0, len: 0 };

const UNKNOWNS: [(UnknownKind, &str); 7] = [
    (UnknownKind::Bool, sig::UNKNOWN_BOOL),
    (UnknownKind::Number, sig::UNKNOWN_NUMBER),
    (UnknownKind::String, sig::UNKNOWN_STRING),
    (UnknownKind::Array, sig::UNKNOWN_ARRAY),
    (UnknownKind::Asset, sig::UNKNOWN_ASSET),
    (UnknownKind::Archive, sig::UNKNOWN_ARCHIVE),
    (UnknownKind::Object, sig::UNKNOWN_OBJECT),
];

/// One of the engine's unknown sentinels, of any kind.
pub fn is_unknown_sentinel(s: &str) -> bool {
    unknown_kind(s).is_some()
}

/// A reference ID the engine reads as known: not empty, not an unknown sentinel.
fn known_id(id: &str) -> bool {
    !id.is_empty() && unknown_kind(id).is_none()
}

fn unknown_kind(s: &str) -> Option<UnknownKind> {
    if s.len() != sig::UNKNOWN_BOOL.len() {
        return None;
    }
    UNKNOWNS.iter().find(|(_, v)| *v == s).map(|(k, _)| *k)
}

fn sentinel(kind: UnknownKind) -> &'static str {
    UNKNOWNS.iter().find(|(k, _)| *k == kind).map_or(sig::UNKNOWN_STRING, |(_, v)| v)
}

/// A short name of the node's kind, for messages.
fn kind_name(node: &Node) -> &'static str {
    match node {
        Node::Null => "null",
        Node::Bool(_) => "a bool",
        Node::Number(_) => "a number",
        Node::String(_) => "a string",
        Node::Bytes(_) => "a byte string",
        Node::Array(_) => "an array",
        Node::Object(_) => "an object",
        Node::Asset(_) => "an asset",
        Node::Archive(_) => "an archive",
        Node::Secret(_) => "a secret",
        Node::Unknown(_) => "an unknown",
        Node::ResourceReference(_) => "a resource reference",
        Node::Output(_) => "an output value",
    }
}

/// The shared buffers of a value, read through spans. A span out of range
/// (or, in `text`, off a character boundary) reads as nothing; validation
/// refuses such spans before anything relies on what they hold.
#[derive(Clone, Copy)]
struct Buffers<'a> {
    text: &'a str,
    items: &'a [u32],
    fields: &'a [(Span, u32)],
}

impl<'a> Buffers<'a> {
    fn of(v: &'a Value) -> Self {
        Buffers { text: &v.text, items: &v.items, fields: &v.fields }
    }

    fn str(self, s: Span) -> Option<&'a str> {
        self.text.get(range(s))
    }

    fn items(self, s: Span) -> Option<&'a [u32]> {
        self.items.get(range(s))
    }

    fn fields(self, s: Span) -> Option<&'a [(Span, u32)]> {
        self.fields.get(range(s))
    }

    /// The named children of an object or an archive of members.
    fn named(self, node: &Node) -> Option<&'a [(Span, u32)]> {
        match node {
            Node::Object(s) | Node::Archive(Archive { source: Some(ArchiveSource::Assets(s)), .. }) => {
                Some(self.fields(*s).unwrap_or_default())
            }
            _ => None,
        }
    }

    /// Every child index of a node, in order.
    fn children(self, node: &Node) -> impl Iterator<Item = u32> + 'a {
        let (one, list): (Option<u32>, &[u32]) = match node {
            Node::Array(s) => (None, self.items(*s).unwrap_or_default()),
            Node::Secret(c) => (Some(*c), &[]),
            Node::Output(o) => (o.value, &[]),
            _ => (None, &[]),
        };
        let named = self.named(node).unwrap_or_default();
        one.into_iter().chain(list.iter().copied()).chain(named.iter().map(|(_, c)| *c))
    }

    /// The path of node `i`, following `parent` links (each strictly smaller) to the root.
    fn path_of(self, nodes: &[Node], parent: &[u32], mut i: u32) -> PropertyPath {
        enum Seg<'a> {
            Key(&'a str),
            Index(usize),
        }
        let mut segs = Vec::new();
        while i != 0 {
            let Some(&p) = parent.get(i as usize) else { break };
            if p >= i {
                break;
            }
            match nodes.get(p as usize) {
                Some(Node::Array(s)) => {
                    segs.extend(self.items(*s).unwrap_or_default().iter().position(|&c| c == i).map(Seg::Index))
                }
                Some(n) => {
                    let named = self.named(n).unwrap_or_default();
                    let key = named.iter().find(|(_, c)| *c == i).map(|(k, _)| self.str(*k).unwrap_or("?"));
                    segs.extend(key.map(Seg::Key));
                }
                None => {}
            }
            i = p;
        }
        let mut out = String::new();
        for seg in segs.iter().rev() {
            match seg {
                Seg::Index(k) => out.push_str(&format!("[{k}]")),
                Seg::Key(k)
                    if !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') =>
                {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(k);
                }
                Seg::Key(k) => out.push_str(&format!("[{k:?}]")),
            }
        }
        PropertyPath(out)
    }
}

/// No parent (the root, or not referenced yet).
const NONE: u32 = u32::MAX;

// ---------------------------------------------------------------------------
// Wire -> WIT
// ---------------------------------------------------------------------------

/// A property map from the wire. The root is always an object node.
pub fn struct_into_wit(s: Struct) -> Result<Words, ConvertError> {
    let mut d = Decoder::new(Limits::default().max_depth);
    d.reserve(s.fields.len());
    d.nodes.push(Node::Null);
    d.parent.push(NONE);
    d.nodes[0] = d.object(s, 0, 0);
    d.run().map(words::pack)
}

/// [`struct_into_wit`] of a borrowed map (copies it).
pub fn struct_to_wit(s: &Struct) -> Result<Words, ConvertError> {
    struct_into_wit(s.clone())
}

/// An optional property map from the wire; `None` is the empty map.
pub fn opt_struct_into_wit(s: Option<Struct>) -> Result<Words, ConvertError> {
    s.map_or_else(|| Ok(empty_map()), struct_into_wit)
}

/// [`opt_struct_into_wit`] of a borrowed map (copies it).
pub fn opt_struct_to_wit(s: Option<&Struct>) -> Result<Words, ConvertError> {
    s.map_or_else(|| Ok(empty_map()), struct_to_wit)
}

/// A single value from the wire. `kind: None` is null.
pub fn value_into_wit(v: WireValue) -> Result<Words, ConvertError> {
    let mut d = Decoder::new(Limits::default().max_depth);
    d.push(v, NONE, 0, 0, false);
    d.run().map(words::pack)
}

/// [`value_into_wit`] of a borrowed value (copies it).
pub fn value_to_wit(v: &WireValue) -> Result<Words, ConvertError> {
    value_into_wit(v.clone())
}

/// Something wrong with one wire value; becomes a [`ConvertError`] once its path is known.
enum Fault {
    Malformed(&'static str, String),
    Signature(String),
    Base64(base64::DecodeError),
    Member(&'static str),
    TooDeep,
}

fn missing(what: &'static str, field: &str) -> Fault {
    Fault::Malformed(what, format!("missing `{field}`"))
}

fn not_a(what: &'static str, field: &str, expected: &str) -> Fault {
    Fault::Malformed(what, format!("`{field}` must be {expected}"))
}

/// Takes field `field` of a special value, which must be a string if present.
fn take_str(s: &mut Struct, what: &'static str, field: &str) -> Result<Option<String>, Fault> {
    match s.fields.remove(field).map(|v| v.kind) {
        None => Ok(None),
        Some(Some(Kind::StringValue(v))) => Ok(Some(v)),
        Some(_) => Err(not_a(what, field, "a string")),
    }
}

/// A wire value waiting for its node: it goes in child slot `slot` of node `parent`.
struct Task {
    value: WireValue,
    parent: u32,
    slot: usize,
    depth: usize,
    /// An archive member, which must be an asset or an archive.
    member: bool,
}

struct Decoder {
    nodes: Vec<Node>,
    parent: Vec<u32>,
    text: String,
    items: Vec<u32>,
    fields: Vec<(Span, u32)>,
    stack: Vec<Task>,
    max_depth: usize,
}

impl Decoder {
    fn new(max_depth: usize) -> Self {
        Decoder {
            nodes: Vec::new(),
            parent: Vec::new(),
            text: String::new(),
            items: Vec::new(),
            fields: Vec::new(),
            stack: Vec::new(),
            max_depth,
        }
    }

    /// Room for a map of `fields` top-level properties, about one nested
    /// value each: small maps are then built without growing any buffer
    /// (each growth a copy, and under load a contended allocator lock).
    fn reserve(&mut self, fields: usize) {
        let nodes = 2 * fields + 1;
        self.nodes.reserve(nodes);
        self.parent.reserve(nodes);
        self.fields.reserve(nodes);
        self.stack.reserve(fields);
        self.text.reserve(16 * nodes);
    }

    fn push(&mut self, value: WireValue, parent: u32, slot: usize, depth: usize, member: bool) {
        self.stack.push(Task { value, parent, slot, depth, member });
    }

    fn text(&mut self, s: &str) -> Span {
        push_text(&mut self.text, s)
    }

    fn str(&mut self, s: String) -> Str {
        push_str(&mut self.text, s)
    }

    /// Points child slot `slot` of node `parent` at `child`, filling the placeholder.
    fn set_child(&mut self, parent: u32, slot: usize, child: u32) {
        let target = match self.nodes.get_mut(parent as usize) {
            Some(Node::Array(s)) => self.items.get_mut(s.start as usize + slot),
            Some(Node::Object(s) | Node::Archive(Archive { source: Some(ArchiveSource::Assets(s)), .. })) => {
                self.fields.get_mut(s.start as usize + slot).map(|(_, c)| c)
            }
            Some(Node::Secret(c) | Node::Output(OutputValue { value: Some(c), .. })) => Some(c),
            _ => None,
        };
        if let Some(t) = target {
            *t = child;
        }
    }

    /// Children are pushed last-first, so popping the stack visits them in pre-order.
    fn run(mut self) -> Result<Value, ConvertError> {
        while let Some(t) = self.stack.pop() {
            let count = self.nodes.len();
            let idx = u32::try_from(count)
                .ok()
                .filter(|&i| i != NONE)
                .ok_or(ConvertError::TooManyNodes { count, max: NONE as usize })?;
            self.nodes.push(Node::Null);
            self.parent.push(t.parent);
            self.set_child(t.parent, t.slot, idx);
            let decoded = if t.depth > self.max_depth { Err(Fault::TooDeep) } else { self.decode(t, idx) };
            match decoded {
                Ok(node) => self.nodes[idx as usize] = node,
                Err(fault) => {
                    let bufs = Buffers { text: &self.text, items: &self.items, fields: &self.fields };
                    let path = bufs.path_of(&self.nodes, &self.parent, idx);
                    return Err(match fault {
                        Fault::Malformed(what, reason) => ConvertError::Malformed { path, what, reason },
                        Fault::Signature(signature) => ConvertError::UnrecognizedSignature { path, signature },
                        Fault::Base64(source) => ConvertError::InvalidBase64 { path, source },
                        Fault::Member(found) => ConvertError::ArchiveMember { path, found },
                        Fault::TooDeep => ConvertError::TooDeep { path, max: self.max_depth },
                    });
                }
            }
        }
        for (buffer, len) in [("text", self.text.len()), ("items", self.items.len()), ("fields", self.fields.len())] {
            if u32::try_from(len).is_err() {
                return Err(ConvertError::TooLarge { buffer });
            }
        }
        Ok(Value { nodes: self.nodes, items: self.items, fields: self.fields, text: self.text })
    }

    fn decode(&mut self, t: Task, idx: u32) -> Result<Node, Fault> {
        let Task { value, depth, member, .. } = t;
        let node = match value.kind {
            None | Some(Kind::NullValue(_)) => Node::Null,
            Some(Kind::BoolValue(b)) => Node::Bool(b),
            Some(Kind::NumberValue(n)) => Node::Number(n),
            Some(Kind::StringValue(s)) => match unknown_kind(&s) {
                Some(kind) => Node::Unknown(kind),
                None => Node::String(self.str(s)),
            },
            Some(Kind::ListValue(l)) => {
                let start = self.items.len();
                self.items.resize(start + l.values.len(), 0);
                for (slot, v) in l.values.into_iter().enumerate().rev() {
                    self.push(v, idx, slot, depth + 1, false);
                }
                Node::Array(span(start, self.items.len()))
            }
            Some(Kind::StructValue(mut s)) => match s.fields.remove(sig::KEY) {
                None => self.object(s, idx, depth),
                Some(signature) => self.special(s, signature, idx, depth)?,
            },
        };
        if member && !matches!(node, Node::Asset(_) | Node::Archive(_)) {
            return Err(Fault::Member(kind_name(&node)));
        }
        Ok(node)
    }

    /// Appends `fields`' keys and pushes their values as children of node
    /// `idx`; returns the span of `fields` they take.
    fn children(&mut self, fields: BTreeMap<String, WireValue>, idx: u32, depth: usize, member: bool) -> Span {
        let start = self.fields.len();
        let mut values = Vec::with_capacity(fields.len());
        for (k, v) in fields {
            let key = self.text(&k);
            self.fields.push((key, 0));
            values.push(v);
        }
        for (slot, v) in values.into_iter().enumerate().rev() {
            self.push(v, idx, slot, depth + 1, member);
        }
        span(start, self.fields.len())
    }

    /// A plain object; also the root of a property map, whatever its keys.
    fn object(&mut self, s: Struct, idx: u32, depth: usize) -> Node {
        Node::Object(self.children(s.fields, idx, depth, false))
    }

    fn opt_text(&mut self, s: Option<String>) -> Option<Span> {
        s.map(|s| self.text(&s))
    }

    /// A special value: `s` without its signature key.
    fn special(&mut self, mut s: Struct, signature: WireValue, idx: u32, depth: usize) -> Result<Node, Fault> {
        let Some(Kind::StringValue(signature)) = signature.kind else {
            return Err(not_a("special value", sig::KEY, "a string signature"));
        };
        match signature.as_str() {
            sig::SECRET => {
                let v = s.fields.remove("value").ok_or_else(|| missing("secret", "value"))?;
                self.push(v, idx, 0, depth + 1, false);
                Ok(Node::Secret(0))
            }
            sig::RESOURCE_REFERENCE => {
                const W: &str = "resource reference";
                let urn = take_str(&mut s, W, "urn")?.ok_or_else(|| missing(W, "urn"))?;
                let id = match take_str(&mut s, W, "id")? {
                    None => None,
                    Some(id) if !known_id(&id) => Some(ReferenceId::Unknown),
                    Some(id) => Some(ReferenceId::Known(self.text(&id))),
                };
                let package_version = take_str(&mut s, W, "packageVersion")?.unwrap_or_default();
                let (urn, package_version) = (self.text(&urn), self.text(&package_version));
                Ok(Node::ResourceReference(ResourceReference { urn, id, package_version }))
            }
            sig::OUTPUT_VALUE => {
                const W: &str = "output value";
                let secret = match s.fields.get("secret").map(|v| &v.kind) {
                    None => false,
                    Some(Some(Kind::BoolValue(b))) => *b,
                    Some(_) => return Err(not_a(W, "secret", "a bool")),
                };
                let dependencies = match s.fields.remove("dependencies").map(|v| v.kind) {
                    None => Vec::new(),
                    Some(Some(Kind::ListValue(l))) => l
                        .values
                        .into_iter()
                        .map(|d| match d.kind {
                            Some(Kind::StringValue(urn)) => Ok(self.text(&urn)),
                            _ => Err(not_a(W, "dependencies", "a list of strings")),
                        })
                        .collect::<Result<_, _>>()?,
                    Some(_) => return Err(not_a(W, "dependencies", "a list of strings")),
                };
                let value = s.fields.remove("value").map(|v| {
                    self.push(v, idx, 0, depth + 1, false);
                    0
                });
                Ok(Node::Output(OutputValue { value, secret, dependencies }))
            }
            // One source at most; like Pulumi, path wins over uri, and uri over text.
            sig::ASSET => {
                const W: &str = "asset";
                let hash = take_str(&mut s, W, "hash")?;
                let hash = self.opt_text(hash);
                let source = if let Some(p) = take_str(&mut s, W, "path")? {
                    Some(AssetSource::Path(self.text(&p)))
                } else if let Some(u) = take_str(&mut s, W, "uri")? {
                    Some(AssetSource::Uri(self.text(&u)))
                } else {
                    take_str(&mut s, W, "text")?.map(|t| AssetSource::Text(self.str(t)))
                };
                Ok(Node::Asset(Asset { hash, source }))
            }
            sig::ARCHIVE => {
                const W: &str = "archive";
                let hash = take_str(&mut s, W, "hash")?;
                let hash = self.opt_text(hash);
                let source = if let Some(p) = take_str(&mut s, W, "path")? {
                    Some(ArchiveSource::Path(self.text(&p)))
                } else if let Some(u) = take_str(&mut s, W, "uri")? {
                    Some(ArchiveSource::Uri(self.text(&u)))
                } else {
                    match s.fields.remove("assets").map(|v| v.kind) {
                        None => None,
                        Some(Some(Kind::StructValue(members))) => {
                            Some(ArchiveSource::Assets(self.children(members.fields, idx, depth, true)))
                        }
                        Some(_) => return Err(not_a(W, "assets", "an object")),
                    }
                };
                Ok(Node::Archive(Archive { hash, source }))
            }
            sig::BYTE_STRING => {
                const W: &str = "byte string";
                let b64 = take_str(&mut s, W, "value")?.ok_or_else(|| missing(W, "value"))?;
                BASE64.decode(b64).map(Node::Bytes).map_err(Fault::Base64)
            }
            other => Err(Fault::Signature(other.to_owned())),
        }
    }
}

// ---------------------------------------------------------------------------
// WIT -> wire
// ---------------------------------------------------------------------------

/// A guest property map to the wire. The root must be an object. Long
/// strings move into the result; the rest are copied out of the value's
/// text and words.
pub fn wit_into_struct(v: Words, opts: WireOptions, limits: Limits) -> Result<Struct, ConvertError> {
    let v = unpack(v, limits)?;
    root_object(&v)?;
    as_struct(tree_into_value(v, opts, limits)?)
}

/// [`wit_into_struct`] of a borrowed value (copies it).
pub fn wit_to_struct(v: &Words, opts: WireOptions, limits: Limits) -> Result<Struct, ConvertError> {
    wit_into_struct(v.clone(), opts, limits)
}

fn root_object(v: &Value) -> Result<(), ConvertError> {
    match v.nodes.first() {
        None => Err(ConvertError::Empty),
        Some(Node::Object(_)) => Ok(()),
        Some(root) => Err(ConvertError::RootNotObject { found: kind_name(root) }),
    }
}

fn as_struct(v: WireValue) -> Result<Struct, ConvertError> {
    match v.kind {
        Some(Kind::StructValue(s)) => Ok(s),
        _ => Err(ConvertError::RootNotObject { found: "a special value" }),
    }
}

/// A guest value to the wire.
pub fn wit_into_value(v: Words, opts: WireOptions, limits: Limits) -> Result<WireValue, ConvertError> {
    tree_into_value(unpack(v, limits)?, opts, limits)
}

/// The tree of a guest's words. The node count is checked here, before a
/// tree of them is built, and nowhere else: every guest value comes this way.
fn unpack(v: Words, limits: Limits) -> Result<Value, ConvertError> {
    let count = words::node_count(&v);
    if count > limits.max_nodes || count > NONE as usize {
        return Err(ConvertError::TooManyNodes { count, max: limits.max_nodes.min(NONE as usize) });
    }
    Ok(words::unpack(v)?)
}

/// [`wit_into_value`] of a borrowed value (copies it).
pub fn wit_to_value(v: &Words, opts: WireOptions, limits: Limits) -> Result<WireValue, ConvertError> {
    wit_into_value(v.clone(), opts, limits)
}

fn tree_into_value(v: Value, opts: WireOptions, limits: Limits) -> Result<WireValue, ConvertError> {
    validate(&v, opts, limits)?;
    Ok(build(v, opts))
}

/// Every span of `text` a node holds (keys are checked with their object).
fn text_spans(node: &Node) -> impl Iterator<Item = Span> + '_ {
    let fixed: [Option<Span>; 3] = match node {
        Node::String(Str::Short(s)) => [Some(*s), None, None],
        Node::Asset(a) => {
            let source = match a.source {
                Some(AssetSource::Text(Str::Short(s)) | AssetSource::Path(s) | AssetSource::Uri(s)) => Some(s),
                _ => None,
            };
            [a.hash, source, None]
        }
        Node::Archive(a) => {
            let source = match a.source {
                Some(ArchiveSource::Path(s) | ArchiveSource::Uri(s)) => Some(s),
                _ => None,
            };
            [a.hash, source, None]
        }
        Node::ResourceReference(r) => {
            let id = match r.id {
                Some(ReferenceId::Known(s)) => Some(s),
                _ => None,
            };
            [Some(r.urn), Some(r.package_version), id]
        }
        _ => [None; 3],
    };
    let deps: &[Span] = match node {
        Node::Output(o) => &o.dependencies,
        _ => &[],
    };
    fixed.into_iter().flatten().chain(deps.iter().copied())
}

/// Checks everything [`build`] relies on, in one forward pass over the nodes.
fn validate(v: &Value, opts: WireOptions, limits: Limits) -> Result<(), ConvertError> {
    let nodes = &v.nodes;
    let bufs = Buffers::of(v);
    let count = nodes.len();
    // The node count was bounded by `unpack`, before the tree was built.
    if count == 0 {
        return Err(ConvertError::Empty);
    }
    let mut parent = vec![NONE; count];
    let mut depth = vec![0usize; count];
    let mut keys = HashSet::new();
    for (i, node) in nodes.iter().enumerate() {
        let idx = i as u32;
        // Any valid reference to node i comes from a node before it, all seen by now.
        if i > 0 && parent[i] == NONE {
            return Err(ConvertError::Unreferenced { node: idx });
        }
        let bad_span = |buffer, reason| ConvertError::BadSpan {
            path: bufs.path_of(nodes, &parent, idx),
            node: idx,
            buffer,
            reason,
        };
        for s in text_spans(node) {
            if bufs.str(s).is_none() {
                return Err(bad_span("text", "is past its end or splits a character"));
            }
        }
        match node {
            Node::Array(s) if bufs.items(*s).is_none() => return Err(bad_span("items", "is past its end")),
            Node::Object(s) | Node::Archive(Archive { source: Some(ArchiveSource::Assets(s)), .. })
                if bufs.fields(*s).is_none() =>
            {
                return Err(bad_span("fields", "is past its end"));
            }
            Node::Bytes(b) if !opts.byte_strings && std::str::from_utf8(b).is_err() => {
                return Err(ConvertError::ByteStringsNotNegotiated { path: bufs.path_of(nodes, &parent, idx) });
            }
            _ => {}
        }
        if let Some(named) = bufs.named(node) {
            keys.clear();
            for (key, _) in named {
                let Some(key) = bufs.str(*key) else {
                    return Err(bad_span("text", "is past its end or splits a character"));
                };
                if !keys.insert(key) {
                    let path = bufs.path_of(nodes, &parent, idx);
                    return Err(ConvertError::DuplicateKey { path, key: key.to_owned() });
                }
                if key == sig::KEY && matches!(node, Node::Object(_)) {
                    return Err(ConvertError::ReservedKey { path: bufs.path_of(nodes, &parent, idx) });
                }
            }
        }
        let members = matches!(node, Node::Archive(_));
        for child in bufs.children(node) {
            let c = child as usize;
            if c >= count {
                let path = bufs.path_of(nodes, &parent, idx);
                return Err(ConvertError::ChildOutOfRange { path, node: idx, child, len: count });
            }
            if child <= idx {
                let path = bufs.path_of(nodes, &parent, idx);
                return Err(ConvertError::ChildNotAfterParent { path, node: idx, child });
            }
            if parent[c] != NONE {
                let (first, second) = (parent[c], idx);
                let path = bufs.path_of(nodes, &parent, child);
                return Err(ConvertError::SharedNode { path, child, first, second });
            }
            parent[c] = idx;
            depth[c] = depth[i] + 1;
            if depth[c] > limits.max_depth {
                let path = bufs.path_of(nodes, &parent, child);
                return Err(ConvertError::TooDeep { path, max: limits.max_depth });
            }
            if members && !matches!(nodes[c], Node::Asset(_) | Node::Archive(_)) {
                let path = bufs.path_of(nodes, &parent, child);
                return Err(ConvertError::ArchiveMember { path, found: kind_name(&nodes[c]) });
            }
        }
    }
    Ok(())
}

fn wire(kind: Kind) -> WireValue {
    WireValue { kind: Some(kind) }
}

fn string(s: impl Into<String>) -> WireValue {
    wire(Kind::StringValue(s.into()))
}

/// A special value: a struct with the signature and the given fields.
fn special<'a>(signature: &str, fields: impl IntoIterator<Item = (&'a str, WireValue)>) -> WireValue {
    let mut map = BTreeMap::from([(sig::KEY.to_owned(), string(signature))]);
    map.extend(fields.into_iter().map(|(k, v)| (k.to_owned(), v)));
    wire(Kind::StructValue(Struct { fields: map }))
}

/// Builds the wire value of a validated value, last node first, so each
/// node's children (all after it) are already built and each is taken once.
fn build(v: Value, opts: WireOptions) -> WireValue {
    let Value { nodes, items, fields, text } = v;
    let bufs = Buffers { text: &text, items: &items, fields: &fields };
    // Validated: every span is in range.
    let text = |s: Span| bufs.str(s).unwrap_or_default();
    let str = |s: Str| match s {
        Str::Short(s) => text(s).to_owned(),
        Str::Long(s) => s,
    };
    let mut done: Vec<Option<WireValue>> = Vec::new();
    done.resize_with(nodes.len(), || None);
    let named = |s: Span, done: &mut Vec<Option<WireValue>>| -> BTreeMap<String, WireValue> {
        let pairs = bufs.fields(s).unwrap_or_default();
        pairs.iter().map(|&(k, c)| (text(k).to_owned(), take(done, c))).collect()
    };
    for (i, node) in nodes.into_iter().enumerate().rev() {
        let v = match node {
            Node::Null => wire(Kind::NullValue(0)),
            Node::Bool(b) => wire(Kind::BoolValue(b)),
            Node::Number(n) => wire(Kind::NumberValue(n)),
            Node::String(s) => string(str(s)),
            Node::Bytes(b) if opts.byte_strings => byte_string(&b),
            // Validation let through only UTF-8 bytes when byte strings are not negotiated.
            Node::Bytes(b) => String::from_utf8(b).map_or_else(|e| byte_string(e.as_bytes()), string),
            Node::Array(s) => {
                let values = bufs.items(s).unwrap_or_default().iter().map(|&c| take(&mut done, c)).collect();
                wire(Kind::ListValue(ListValue { values }))
            }
            Node::Object(s) => wire(Kind::StructValue(Struct { fields: named(s, &mut done) })),
            Node::Asset(a) => {
                let hash = a.hash.map(|h| ("hash", string(text(h))));
                let source = a.source.map(|s| match s {
                    AssetSource::Text(t) => ("text", string(str(t))),
                    AssetSource::Path(p) => ("path", string(text(p))),
                    AssetSource::Uri(u) => ("uri", string(text(u))),
                });
                special(sig::ASSET, hash.into_iter().chain(source))
            }
            Node::Archive(a) => {
                let source = match a.source {
                    None => None,
                    Some(ArchiveSource::Path(p)) => Some(("path", string(text(p)))),
                    Some(ArchiveSource::Uri(u)) => Some(("uri", string(text(u)))),
                    Some(ArchiveSource::Assets(m)) => {
                        Some(("assets", wire(Kind::StructValue(Struct { fields: named(m, &mut done) }))))
                    }
                };
                let hash = a.hash.map(|h| ("hash", string(text(h))));
                special(sig::ARCHIVE, hash.into_iter().chain(source))
            }
            Node::Secret(c) if opts.plain_secrets => take(&mut done, c),
            Node::Secret(c) => special(sig::SECRET, [("value", take(&mut done, c))]),
            Node::Unknown(k) => string(sentinel(k)),
            // As Pulumi's own SDKs send a reference to a caller that takes none.
            Node::ResourceReference(r) if opts.plain_references => match r.id {
                Some(ReferenceId::Known(id)) if known_id(text(id)) => string(text(id)),
                Some(_) => string(sig::UNKNOWN_STRING),
                None => string(text(r.urn)),
            },
            Node::ResourceReference(r) => {
                // The engine reads an empty ID or an unknown sentinel as an
                // unknown ID; a guest's "known" one is sent as what it will be read as.
                let id = r.id.map(|id| match id {
                    ReferenceId::Known(id) if known_id(text(id)) => ("id", string(text(id))),
                    ReferenceId::Known(_) | ReferenceId::Unknown => ("id", string("")),
                });
                let version = Some(text(r.package_version)).filter(|v| !v.is_empty());
                let version = version.map(|v| ("packageVersion", string(v)));
                special(sig::RESOURCE_REFERENCE, [("urn", string(text(r.urn)))].into_iter().chain(id).chain(version))
            }
            Node::Output(o) => {
                let value = o.value.map(|c| ("value", take(&mut done, c)));
                let secret = o.secret.then(|| ("secret", wire(Kind::BoolValue(true))));
                let deps = (!o.dependencies.is_empty()).then(|| {
                    let values = o.dependencies.iter().map(|&d| string(text(d))).collect();
                    ("dependencies", wire(Kind::ListValue(ListValue { values })))
                });
                special(sig::OUTPUT_VALUE, value.into_iter().chain(secret).chain(deps))
            }
        };
        done[i] = Some(v);
    }
    take(&mut done, 0)
}

/// Takes the built child `c`; validation guarantees it is there, exactly once.
fn take(done: &mut [Option<WireValue>], c: u32) -> WireValue {
    done.get_mut(c as usize).and_then(Option::take).unwrap_or_default()
}

/// Pulumi's byte string: `{sig, value: base64}`.
fn byte_string(b: &[u8]) -> WireValue {
    special(sig::BYTE_STRING, [("value", string(BASE64.encode(b)))])
}

#[cfg(test)]
#[path = "value_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "value_props.rs"]
mod props;
