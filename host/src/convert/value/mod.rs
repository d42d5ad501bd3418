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
//!
//! Each direction has its module (`from_wire`, `to_wire`); what both use
//! (signatures, errors, limits, the buffers of a tree) is here.

use std::collections::{BTreeMap, HashSet};
use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use prost_types::value::Kind;
use prost_types::{ListValue, Struct, Value as WireValue};

use crate::runtime::bindings::MAX_VALUE_BYTES;
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
    #[error("the value at {path} is unknown, and only a preview may leave a value unknown")]
    UnknownOutsidePreview { path: PropertyPath },
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
    #[error(
        "the value at {path} is nested too deep to be read back when the engine sends it again: \
         more than {max} Protocol Buffers messages deep (about 31 levels of objects)"
    )]
    TooDeepForTheWire { path: PropertyPath, max: usize },
    #[error("the value has {count} nodes, more than the limit of {max}")]
    TooManyNodes { count: usize, max: usize },
    #[error("the value's strings and keys come to more than {} MiB", max >> 20)]
    TooManyBytes { max: usize },
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
    /// Most bytes of strings, keys and byte strings in one value, each
    /// counted as often as the value names it.
    pub max_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_depth: 128, max_nodes: 4_000_000, max_bytes: MAX_VALUE_BYTES }
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
    /// The answer must be known throughout: the engine reads a real Create's,
    /// Update's and any Read's results refusing unknowns, and drops the whole
    /// answer, a new resource's id included, when it finds one.
    pub known_only: bool,
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
        // Keys are shown cut: a guest's key may be megabytes, shared by every
        // level of the path, and quoting can make it several times longer.
        const SHOWN: usize = 64;
        let mut out = String::new();
        for seg in segs.iter().rev() {
            let (k, cut) = match seg {
                Seg::Index(k) => {
                    out.push_str(&format!("[{k}]"));
                    continue;
                }
                Seg::Key(k) if k.len() > SHOWN => (&k[..k.floor_char_boundary(SHOWN)], "..."),
                Seg::Key(k) => (*k, ""),
            };
            if !k.is_empty() && cut.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            } else {
                out.push_str(&format!("[{k:?}{cut}]"));
            }
        }
        PropertyPath(out)
    }
}

/// No parent (the root, or not referenced yet).
const NONE: u32 = u32::MAX;

mod from_wire;
mod to_wire;

pub use from_wire::{
    opt_struct_into_wit, opt_struct_to_wit, struct_into_wit, struct_to_wit, value_into_wit, value_to_wit,
};
pub use to_wire::{wit_into_struct, wit_into_value, wit_to_struct, wit_to_value};

#[cfg(test)]
mod tests;

#[cfg(test)]
mod props;
