//! Wire -> WIT: a value from the engine, decoded by prost, into the host's
//! tree and then words. Depth and node count are bounded (as a guest's
//! values are) and the walk uses an explicit stack; nodes come out in
//! pre-order.

use super::*;

/// A property map from the wire. The root is always an object node.
pub fn struct_into_wit(s: Struct) -> Result<Words, ConvertError> {
    struct_into_wit_within(s, Limits::default())
}

/// The most top-level properties [`Decoder::reserve`] makes room for.
const RESERVE_AT_MOST: usize = 4096;

/// [`struct_into_wit`] within `limits` (depth and nodes).
pub(super) fn struct_into_wit_within(s: Struct, limits: Limits) -> Result<Words, ConvertError> {
    let mut d = Decoder::new(limits);
    d.reserve(s.fields.len());
    d.nodes.push(Node::Null);
    d.parent.push(NONE);
    d.nodes[0] = d.object(s, 0, 0).map_err(|fault| d.error(fault, 0))?;
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
    let mut d = Decoder::new(Limits::default());
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
    TooMany(usize),
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
    max_nodes: usize,
}

impl Decoder {
    fn new(limits: Limits) -> Self {
        Decoder {
            max_nodes: limits.max_nodes,
            nodes: Vec::new(),
            parent: Vec::new(),
            text: String::new(),
            items: Vec::new(),
            fields: Vec::new(),
            stack: Vec::new(),
            max_depth: limits.max_depth,
        }
    }

    /// Room for a map of `fields` top-level properties, about one nested
    /// value each: small maps are then built without growing any buffer
    /// (each growth a copy, and under load a contended allocator lock).
    /// Only for small maps: a request's count is the wire's, reserved before
    /// the node limit is checked, so a huge map grows as it is checked.
    fn reserve(&mut self, fields: usize) {
        let nodes = 2 * fields.min(RESERVE_AT_MOST) + 1;
        self.nodes.reserve(nodes);
        self.parent.reserve(nodes);
        self.fields.reserve(nodes);
        self.stack.reserve(fields.min(RESERVE_AT_MOST));
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
                Err(fault) => return Err(self.error(fault, idx)),
            }
        }
        for (buffer, len) in [("text", self.text.len()), ("items", self.items.len()), ("fields", self.fields.len())] {
            if u32::try_from(len).is_err() {
                return Err(ConvertError::TooLarge { buffer });
            }
        }
        Ok(Value { nodes: self.nodes, items: self.items, fields: self.fields, text: self.text })
    }

    /// `fault` of node `idx`, with its path.
    fn error(&self, fault: Fault, idx: u32) -> ConvertError {
        let bufs = Buffers { text: &self.text, items: &self.items, fields: &self.fields };
        let path = bufs.path_of(&self.nodes, &self.parent, idx);
        match fault {
            Fault::Malformed(what, reason) => ConvertError::Malformed { path, what, reason },
            Fault::Signature(signature) => ConvertError::UnrecognizedSignature { path, signature },
            Fault::Base64(source) => ConvertError::InvalidBase64 { path, source },
            Fault::Member(found) => ConvertError::ArchiveMember { path, found },
            Fault::TooDeep => ConvertError::TooDeep { path, max: self.max_depth },
            Fault::TooMany(count) => ConvertError::TooManyNodes { count, max: self.max_nodes },
        }
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
                self.room_for(l.values.len())?;
                let start = self.items.len();
                self.items.resize(start + l.values.len(), 0);
                for (slot, v) in l.values.into_iter().enumerate().rev() {
                    self.push(v, idx, slot, depth + 1, false);
                }
                Node::Array(span(start, self.items.len()))
            }
            Some(Kind::StructValue(mut s)) => match s.fields.remove(sig::KEY) {
                None => self.object(s, idx, depth)?,
                Some(signature) => self.special(s, signature, idx, depth)?,
            },
        };
        if member && !matches!(node, Node::Asset(_) | Node::Archive(_)) {
            return Err(Fault::Member(kind_name(&node)));
        }
        Ok(node)
    }

    /// Checks that `more` children fit the node limit, before any is kept:
    /// counted with those built and those waiting, so a value of many small
    /// elements is refused before it is expanded into tasks and nodes.
    fn room_for(&self, more: usize) -> Result<(), Fault> {
        let count = self.nodes.len() + self.stack.len() + more;
        if count > self.max_nodes { Err(Fault::TooMany(count)) } else { Ok(()) }
    }

    /// Appends `fields`' keys and pushes their values as children of node
    /// `idx`; returns the span of `fields` they take.
    fn children(
        &mut self,
        fields: BTreeMap<String, WireValue>,
        idx: u32,
        depth: usize,
        member: bool,
    ) -> Result<Span, Fault> {
        self.room_for(fields.len())?;
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
        Ok(span(start, self.fields.len()))
    }

    /// A plain object; also the root of a property map, whatever its keys.
    fn object(&mut self, s: Struct, idx: u32, depth: usize) -> Result<Node, Fault> {
        Ok(Node::Object(self.children(s.fields, idx, depth, false)?))
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
                            Some(ArchiveSource::Assets(self.children(members.fields, idx, depth, true)?))
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
