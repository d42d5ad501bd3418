//! WIT -> wire: an untrusted guest value, validated whole, then built into
//! the protobuf value bottom-up in one backwards pass.

use super::*;

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

/// How many nested Protocol Buffers messages deep a value from a guest may
/// reach. Whatever the engine stores it sends back in later requests, and
/// prost, this host's decoder, stops at 100 (the engine, in Go, reads far
/// deeper): a value past it would be stored and then fail every later
/// Diff, Update, Read and Delete of its resource. The root map is the
/// first message; 96 leaves room for a secret the engine may wrap around
/// an output.
const MAX_WIRE_LEVELS: usize = 96;

/// The messages between a node's `Value` and its children's: an object's
/// (and a secret's or output's signature object) is a `Struct`, a map
/// entry and a `Value`; a list's a `ListValue` and a `Value`; an
/// archive's members sit in a map inside its object.
fn wire_levels(parent: &Node) -> usize {
    match parent {
        Node::Array(_) => 2,
        Node::Archive(_) => 6,
        _ => 3,
    }
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
    // Each node's depth in the tree and in protobuf messages, in one array:
    // the root map's entries hold their values at the third message.
    let mut depth = vec![(0usize, 0usize); count];
    let mut keys = HashSet::new();
    // What the built value will hold: spans may overlap, so this counts each
    // use, which is what `build` copies.
    let mut bytes = 0usize;
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
            bytes = bytes.saturating_add(s.len as usize);
        }
        bytes = bytes.saturating_add(match node {
            Node::String(Str::Long(s)) => s.len(),
            Node::Asset(Asset { source: Some(AssetSource::Text(Str::Long(s))), .. }) => s.len(),
            Node::Bytes(b) => b.len().div_ceil(3) * 4,
            _ => 0,
        });
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
            Node::Unknown(_) | Node::Output(OutputValue { value: None, .. }) if opts.known_only => {
                return Err(ConvertError::UnknownOutsidePreview { path: bufs.path_of(nodes, &parent, idx) });
            }
            // A string that is an unknown sentinel is an unknown on the wire: there
            // is no other way to send that text.
            Node::String(s)
                if opts.known_only
                    && match s {
                        Str::Short(span) => bufs.str(*span).is_some_and(|t| unknown_kind(t).is_some()),
                        Str::Long(t) => unknown_kind(t).is_some(),
                    } =>
            {
                return Err(ConvertError::UnknownOutsidePreview { path: bufs.path_of(nodes, &parent, idx) });
            }
            // Sent as the unknown sentinel to a caller that takes no references.
            Node::ResourceReference(ResourceReference { id: Some(id), .. })
                if opts.known_only
                    && opts.plain_references
                    && !matches!(id, ReferenceId::Known(id) if bufs.str(*id).is_some_and(known_id)) =>
            {
                return Err(ConvertError::UnknownOutsidePreview { path: bufs.path_of(nodes, &parent, idx) });
            }
            _ => {}
        }
        if let Some(named) = bufs.named(node) {
            keys.clear();
            for (key, _) in named {
                let Some(key) = bufs.str(*key) else {
                    return Err(bad_span("text", "is past its end or splits a character"));
                };
                bytes = bytes.saturating_add(key.len());
                if !keys.insert(key) {
                    let path = bufs.path_of(nodes, &parent, idx);
                    return Err(ConvertError::DuplicateKey { path, key: key.to_owned() });
                }
                if key == sig::KEY && matches!(node, Node::Object(_)) {
                    return Err(ConvertError::ReservedKey { path: bufs.path_of(nodes, &parent, idx) });
                }
            }
        }
        if bytes > limits.max_bytes {
            return Err(ConvertError::TooManyBytes { max: limits.max_bytes });
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
            depth[c] = (depth[i].0 + 1, depth[i].1 + wire_levels(node));
            if depth[c].0 > limits.max_depth {
                let path = bufs.path_of(nodes, &parent, child);
                return Err(ConvertError::TooDeep { path, max: limits.max_depth });
            }
            // A leaf may be a signature object itself (an asset, a reference): 3 more.
            if depth[c].1 + 3 > MAX_WIRE_LEVELS {
                let path = bufs.path_of(nodes, &parent, child);
                return Err(ConvertError::TooDeepForTheWire { path, max: MAX_WIRE_LEVELS });
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
