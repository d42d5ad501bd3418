//! [`PulumiType`]: how a Rust type maps to a Pulumi property (schema, decoding,
//! encoding), with the implementations for primitives, containers, assets and archives.

use std::collections::BTreeMap;

use super::decode::{Decoder, Input, Source};
use super::schema::{Json, Types};
use crate::fields::Fields;
use crate::value::{Archive, Asset, PropertyMap, UnknownKind, Value};
use crate::wire::read::Node;

/// A type whose values are numbers: what `#[pulumi(min = ..., max = ...)]`
/// may bound. Implement it for a newtype that decodes from a number; on
/// any other field the bounds would check nothing, so they do not compile:
///
/// ```compile_fail,E0277
/// use pulumi_wasm_sdk::typed::*;
///
/// #[derive(PulumiType)]
/// pub struct Args {
///     #[pulumi(min = 1)]
///     pub name: String,
/// }
/// ```
#[diagnostic::on_unimplemented(
    message = "`min` and `max` bound numbers, and `{Self}` is not a number type",
    note = "implement `Bounded` for a type that decodes from a number"
)]
pub trait Bounded {}

macro_rules! bounded {
    ($($t:ty),*) => { $(impl Bounded for $t {})* };
}
bounded!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize, f32, f64);
impl<T: Bounded> Bounded for Option<T> {}

/// What `#[pulumi(default = ...)]` takes for a field of this type: an
/// expression of type [`Given`](Defaulted::Given), so a default of the
/// wrong kind does not compile, as it would otherwise reach the schema
/// and fail every Check that leaves the field out. `Given` is the type
/// itself, except `&'static str` for `String` and the inner type's for
/// `Option` and `Box`; a float field takes a float literal (`2.0`).
///
/// ```compile_fail,E0308
/// use pulumi_wasm_sdk::typed::*;
///
/// #[derive(PulumiType)]
/// pub struct Args {
///     #[pulumi(default = "2")]
///     pub size: u32,
/// }
/// ```
#[diagnostic::on_unimplemented(
    message = "`#[pulumi(default = ...)]` is not available on a field of type `{Self}`",
    note = "`#[pulumi(default)]` alone takes `Default::default()`; or implement `Defaulted`"
)]
pub trait Defaulted {
    /// The type of a `default = ...` expression.
    type Given;
    /// The default as a property value.
    fn given(v: Self::Given) -> Value;
}

/// `Defaulted` for types whose default is given as themselves.
macro_rules! defaulted_as_self {
    ($($t:ty),*) => {$(
        impl Defaulted for $t {
            type Given = Self;
            fn given(v: Self) -> Value {
                PulumiType::encode(&v)
            }
        }
    )*};
}
defaulted_as_self!(bool, i8, i16, i32, i64, isize, u8, u16, u32, u64, usize, f32, f64, Value, Asset, Archive);

impl Defaulted for String {
    type Given = &'static str;
    fn given(v: &'static str) -> Value {
        Value::String(v.to_owned())
    }
}

impl<T: Defaulted> Defaulted for Option<T> {
    type Given = T::Given;
    fn given(v: T::Given) -> Value {
        T::given(v)
    }
}

impl<T: Defaulted> Defaulted for Box<T> {
    type Given = T::Given;
    fn given(v: T::Given) -> Value {
        T::given(v)
    }
}

impl<T: PulumiType> Defaulted for Vec<T> {
    type Given = Self;
    fn given(v: Self) -> Value {
        v.encode()
    }
}

impl<T: PulumiType> Defaulted for BTreeMap<String, T> {
    type Given = Self;
    fn given(v: Self) -> Value {
        v.encode()
    }
}

/// A Rust type that can be a Pulumi property. Derive it for structs (objects)
/// and unit-only enums (string enums) with `#[derive(PulumiType)]`.
pub trait PulumiType: Sized {
    /// The kind of unknown a preview shows for an output of this type.
    const UNKNOWN: UnknownKind;

    /// The schema of a property of this type (`{"type": "string"}`, a `$ref`, ...);
    /// named types it uses are added to `types`.
    fn schema(types: &mut Types) -> Json;

    /// Decodes a value that is known, not null and not secret: the [`Decoder`]
    /// strips those layers first. Failures are recorded on `cx`, which knows the path.
    fn decode(v: &Value, cx: &mut Decoder) -> Option<Self>;

    /// [`PulumiType::decode`] of a node of the words a request came in,
    /// read where it lies. By default the node's value is built and
    /// decoded. Not part of the SDK's API.
    #[doc(hidden)]
    fn decode_node(n: Node<'_>, cx: &mut Decoder) -> Option<Self> {
        Self::decode(&n.to_value(), cx)
    }

    fn encode(&self) -> Value;

    /// What an absent or null property decodes to; `None`: the property is required.
    fn absent() -> Option<Self> {
        None
    }

    /// Fills in defaults and marks secret fields inside a raw value of this type.
    fn normalize(_v: &mut Value) {}

    /// Paths inside a value of this type whose change replaces the resource
    /// holding it: a nested object's `replace_on_changes` fields (`size`,
    /// `[*].name` in a list, `*.name` in a map). Derived for objects.
    fn replace_paths() -> Vec<String> {
        Vec::new()
    }
}

/// A struct whose fields are Pulumi properties (derived).
pub trait Object: PulumiType {
    /// The Rust type name: the default last part of its type token.
    const NAME: &'static str;
    /// `#[pulumi(token = "pkg:module:Name")]`; default `<package>:index:<NAME>`.
    const TOKEN: Option<&'static str>;
    /// The doc comment.
    const DESCRIPTION: &'static str;

    /// Every property, flattened fields included. Built once: every call
    /// decodes, normalizes and diffs against it (the derive caches it).
    fn properties() -> &'static [Property];
    /// Decodes the fields from `m`; all of them, so every failure is reported.
    fn decode_fields(m: &PropertyMap, cx: &mut Decoder) -> Option<Self>;

    /// [`Object::decode_fields`] from a map or from an object of the words
    /// (the derive reads those where they lie; by default they are built
    /// into a map). Not part of the SDK's API.
    #[doc(hidden)]
    fn decode_from<S: Source + ?Sized>(m: &S, cx: &mut Decoder) -> Option<Self> {
        m.with_map(|m| Self::decode_fields(m, cx))
    }
    /// The paths whose change replaces a resource with these fields
    /// ([`replace_paths_of`] its properties, walked from this type): what
    /// the default Diff replaces on. The derive builds them once. Not part
    /// of the SDK's API.
    #[doc(hidden)]
    fn resource_replace_paths() -> std::borrow::Cow<'static, [String]> {
        std::borrow::Cow::Owned(replace_paths_from_top(Self::properties()))
    }
    /// Appends the fields as pairs; the derive emits each run of fields
    /// between flattened ones in name order.
    fn encode_into(&self, out: &mut Fields);

    /// Inserts the fields into `out`; of two with one name the later wins.
    fn encode_fields(&self, out: &mut PropertyMap) {
        out.extend(self.to_fields());
    }

    fn to_map(&self) -> PropertyMap {
        self.to_fields().into_map()
    }

    /// The fields as pairs sorted by name: what the wire encoder takes.
    fn to_fields(&self) -> Fields {
        let mut f = Fields::with_capacity(Self::properties().len());
        self.encode_into(&mut f);
        f.sort();
        f
    }
}

/// One property of an [`Object`], as the derive describes it.
#[derive(Clone, Debug)]
pub struct Property {
    pub name: &'static str,
    pub description: &'static str,
    /// `Option<T>`: may be absent.
    pub optional: bool,
    pub secret: bool,
    pub replace_on_changes: bool,
    pub default: Option<Value>,
    /// The resource's name: Check chooses it when the program gives none
    /// (see [`autoname`](super::autoname)), so it is never a required input.
    pub autoname: bool,
    pub unknown: UnknownKind,
    pub(crate) schema: fn(&mut Types) -> Json,
    pub(crate) normalize: fn(&mut Value),
    /// Its type's [`PulumiType::replace_paths`].
    pub(crate) nested_replaces: fn() -> Vec<String>,
}

impl Property {
    pub fn of<T: PulumiType>(name: &'static str, description: &'static str) -> Self {
        Property {
            name,
            description,
            optional: T::absent().is_some(),
            secret: false,
            replace_on_changes: false,
            default: None,
            autoname: false,
            unknown: T::UNKNOWN,
            schema: T::schema,
            normalize: T::normalize,
            nested_replaces: T::replace_paths,
        }
    }

    pub fn secret(mut self) -> Self {
        self.secret = true;
        self
    }

    pub fn replace_on_changes(mut self) -> Self {
        self.replace_on_changes = true;
        self
    }

    pub fn autoname(mut self) -> Self {
        self.autoname = true;
        self
    }

    pub fn with_default(mut self, v: Value) -> Self {
        self.default = (!v.is_null()).then_some(v);
        self
    }

    /// Must be given as an input: not optional and without a default.
    pub fn required_input(&self) -> bool {
        !self.optional && self.default.is_none() && !self.autoname
    }
}

/// Adds an encoded field (derive helper): nulls are left out, secrets wrapped.
#[doc(hidden)]
pub fn put(out: &mut Fields, name: &'static str, v: Value, secret: bool) {
    if !v.is_null() {
        out.push(name, if secret { Value::secret(v) } else { v });
    }
}

/// The value under secret and known-output wrappers, to fill in place.
fn unwrapped(v: &mut Value) -> &mut Value {
    match v {
        Value::Secret(inner) => unwrapped(inner),
        Value::Output(crate::Output { value: Some(inner), .. }) => unwrapped(inner),
        v => v,
    }
}

pub(crate) fn is_secret(v: &Value) -> bool {
    matches!(v, Value::Secret(_)) || matches!(v, Value::Output(o) if o.secret)
}

/// The paths whose change replaces a resource with these properties: the
/// `replace_on_changes` ones, and those inside their values' types.
pub fn replace_paths_of(props: &[Property]) -> Vec<String> {
    let mut out = Vec::new();
    for p in props {
        if p.replace_on_changes {
            out.push(p.name.to_owned());
        }
        out.extend((p.nested_replaces)().iter().map(|q| under(p.name, q)));
    }
    out
}

/// `q` below `prefix` (`tags` and `env`: `tags.env`; `items` and `[*].id`: `items[*].id`).
fn under(prefix: &str, q: &str) -> String {
    if q.starts_with('[') { format!("{prefix}{q}") } else { format!("{prefix}.{q}") }
}

/// How deep a type that holds itself (a tree, through a list or a `Box`)
/// is walked for [`PulumiType::replace_paths`]: its paths would go on forever.
const RECURSION_LEVELS: usize = 4;

thread_local! {
    /// The object types [`object_replace_paths`] is walking, outermost first.
    pub(super) static WALKING: std::cell::RefCell<Vec<&'static str>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Gives the walk back its stack when dropped, a panic included.
struct Restore(Vec<&'static str>);

impl Drop for Restore {
    fn drop(&mut self) {
        WALKING.with(|w| *w.borrow_mut() = std::mem::take(&mut self.0));
    }
}

/// [`replace_paths_of`] as from the top, whatever walk is under way: what
/// [`Object::resource_replace_paths`] keeps is the same wherever it is
/// first asked for (derive helper).
#[doc(hidden)]
pub fn replace_paths_from_top(props: &[Property]) -> Vec<String> {
    let _restore = Restore(WALKING.with(|w| std::mem::take(&mut *w.borrow_mut())));
    replace_paths_of(props)
}

/// [`PulumiType::replace_paths`] of an object type (derive helper).
#[doc(hidden)]
pub fn object_replace_paths<T: Object>() -> Vec<String> {
    let name = std::any::type_name::<T>();
    if WALKING.with(|w| w.borrow().iter().filter(|n| **n == name).count()) >= RECURSION_LEVELS {
        return Vec::new();
    }
    WALKING.with(|w| w.borrow_mut().push(name));
    let paths = replace_paths_of(T::properties());
    WALKING.with(|w| w.borrow_mut().pop());
    paths
}

/// [`PulumiType::normalize`] for objects (derive helper).
#[doc(hidden)]
pub fn normalize_object<T: Object>(v: &mut Value) {
    if let Value::Object(m) = unwrapped(v) {
        normalize::<T>(m);
    }
}

/// Applies `T`'s defaults to absent or null properties, drops other nulls and
/// marks secret fields as secrets, recursively. Unknowns are left as they are.
pub fn normalize<T: Object>(m: &mut PropertyMap) {
    normalize_with(m, T::properties())
}

// In place: a property that is present keeps its key and its slot; only
// absent defaults are inserted (and new secrets boxed).
fn normalize_with(m: &mut PropertyMap, props: &[Property]) {
    let seal = |v: &mut Value, secret: bool| {
        if secret && !is_secret(v) {
            *v = Value::secret(std::mem::replace(v, Value::Null));
        }
    };
    for p in props {
        match (m.get_mut(p.name), &p.default) {
            (Some(v), _) if !v.is_null() => {
                (p.normalize)(v);
                seal(v, p.secret);
            }
            (Some(v), Some(d)) => {
                *v = d.clone();
                seal(v, p.secret);
            }
            (Some(_), None) => drop(m.remove(p.name)),
            (None, Some(d)) => {
                let mut d = d.clone();
                seal(&mut d, p.secret);
                m.insert(p.name.to_owned(), d);
            }
            (None, None) => {}
        }
    }
}

fn primitive(name: &str) -> Json {
    serde_json::json!({ "type": name })
}

impl PulumiType for bool {
    const UNKNOWN: UnknownKind = UnknownKind::Bool;
    fn schema(_: &mut Types) -> Json {
        primitive("boolean")
    }
    fn decode(v: &Value, cx: &mut Decoder) -> Option<Self> {
        match v {
            Value::Bool(b) => Some(*b),
            other => cx.mismatch("a boolean", other),
        }
    }
    fn decode_node(n: Node<'_>, cx: &mut Decoder) -> Option<Self> {
        n.as_bool().or_else(|| cx.mismatch_kind("a boolean", n.kind_name()))
    }
    fn encode(&self) -> Value {
        Value::Bool(*self)
    }
}

impl PulumiType for String {
    const UNKNOWN: UnknownKind = UnknownKind::String;
    fn schema(_: &mut Types) -> Json {
        primitive("string")
    }
    fn decode(v: &Value, cx: &mut Decoder) -> Option<Self> {
        match v {
            Value::String(s) => Some(s.clone()),
            other => cx.mismatch("a string", other),
        }
    }
    fn decode_node(n: Node<'_>, cx: &mut Decoder) -> Option<Self> {
        match n.as_str() {
            Some(s) => Some(s.to_owned()),
            None => cx.mismatch_kind("a string", n.kind_name()),
        }
    }
    fn encode(&self) -> Value {
        Value::String(self.clone())
    }
}

macro_rules! integers {
    ($($t:ty),*) => {$(
        impl PulumiType for $t {
            const UNKNOWN: UnknownKind = UnknownKind::Number;
            fn schema(_: &mut Types) -> Json {
                primitive("integer")
            }
            fn decode(v: &Value, cx: &mut Decoder) -> Option<Self> {
                cx.integer(v, <$t>::MIN as f64, <$t>::MAX as f64).map(|n| n as $t)
            }
            fn decode_node(n: Node<'_>, cx: &mut Decoder) -> Option<Self> {
                cx.whole(n.as_f64(), n.kind_name(), <$t>::MIN as f64, <$t>::MAX as f64).map(|n| n as $t)
            }
            fn encode(&self) -> Value {
                Value::from(*self)
            }
        }
    )*};
}
integers!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);

macro_rules! floats {
    ($($t:ty),*) => {$(
        impl PulumiType for $t {
            const UNKNOWN: UnknownKind = UnknownKind::Number;
            fn schema(_: &mut Types) -> Json {
                primitive("number")
            }
            fn decode(v: &Value, cx: &mut Decoder) -> Option<Self> {
                match v {
                    Value::Number(n) => Some(*n as $t),
                    other => cx.mismatch("a number", other),
                }
            }
            fn decode_node(n: Node<'_>, cx: &mut Decoder) -> Option<Self> {
                match n.as_f64() {
                    Some(x) => Some(x as $t),
                    None => cx.mismatch_kind("a number", n.kind_name()),
                }
            }
            fn encode(&self) -> Value {
                Value::from(*self)
            }
        }
    )*};
}
floats!(f32, f64);

impl<T: PulumiType> PulumiType for Option<T> {
    const UNKNOWN: UnknownKind = T::UNKNOWN;
    fn schema(types: &mut Types) -> Json {
        T::schema(types)
    }
    fn decode(v: &Value, cx: &mut Decoder) -> Option<Self> {
        T::decode(v, cx).map(Some)
    }
    fn decode_node(n: Node<'_>, cx: &mut Decoder) -> Option<Self> {
        T::decode_node(n, cx).map(Some)
    }
    fn encode(&self) -> Value {
        self.as_ref().map_or(Value::Null, T::encode)
    }
    fn absent() -> Option<Self> {
        Some(None)
    }
    fn normalize(v: &mut Value) {
        T::normalize(v)
    }
    fn replace_paths() -> Vec<String> {
        T::replace_paths()
    }
}

impl<T: PulumiType> PulumiType for Box<T> {
    const UNKNOWN: UnknownKind = T::UNKNOWN;
    fn schema(types: &mut Types) -> Json {
        T::schema(types)
    }
    fn decode(v: &Value, cx: &mut Decoder) -> Option<Self> {
        T::decode(v, cx).map(Box::new)
    }
    fn decode_node(n: Node<'_>, cx: &mut Decoder) -> Option<Self> {
        T::decode_node(n, cx).map(Box::new)
    }
    fn encode(&self) -> Value {
        T::encode(self)
    }
    fn absent() -> Option<Self> {
        T::absent().map(Box::new)
    }
    fn normalize(v: &mut Value) {
        T::normalize(v)
    }
    fn replace_paths() -> Vec<String> {
        T::replace_paths()
    }
}

/// The elements of an array, each decoded with `T`. Collected first: every
/// element is decoded, so every failure is reported.
fn elements<T: PulumiType, I: Input>(items: impl Iterator<Item = I>, cx: &mut Decoder) -> Option<Vec<T>> {
    let decoded: Vec<Option<T>> = items.enumerate().map(|(i, item)| cx.element_in(i, item)).collect();
    decoded.into_iter().collect()
}

/// The entries of a map, each decoded with `T`; every entry is decoded, so
/// every failure is reported.
fn entries_of<'k, T: PulumiType, I: Input>(
    entries: impl ExactSizeIterator<Item = (&'k str, I)>,
    cx: &mut Decoder,
) -> Option<BTreeMap<String, T>> {
    let mut out = Vec::with_capacity(entries.len());
    let mut ok = true;
    for (k, e) in entries {
        match cx.keyed(k.to_owned(), e) {
            (k, Some(v)) => out.push((k, v)),
            (_, None) => ok = false,
        }
    }
    ok.then(|| out.into_iter().collect())
}

impl<T: PulumiType> PulumiType for Vec<T> {
    const UNKNOWN: UnknownKind = UnknownKind::Array;
    fn schema(types: &mut Types) -> Json {
        serde_json::json!({ "type": "array", "items": T::schema(types) })
    }
    fn decode(v: &Value, cx: &mut Decoder) -> Option<Self> {
        let Value::Array(items) = v else { return cx.mismatch("an array", v) };
        elements(items.iter(), cx)
    }
    fn decode_node(n: Node<'_>, cx: &mut Decoder) -> Option<Self> {
        match n.items() {
            Some(items) => elements(items, cx),
            None => cx.mismatch_kind("an array", n.kind_name()),
        }
    }
    fn encode(&self) -> Value {
        Value::Array(self.iter().map(T::encode).collect())
    }
    fn normalize(v: &mut Value) {
        if let Value::Array(items) = unwrapped(v) {
            items.iter_mut().for_each(T::normalize);
        }
    }
    fn replace_paths() -> Vec<String> {
        T::replace_paths().iter().map(|q| under("[*]", q)).collect()
    }
}

impl<T: PulumiType> PulumiType for BTreeMap<String, T> {
    const UNKNOWN: UnknownKind = UnknownKind::Object;
    fn schema(types: &mut Types) -> Json {
        serde_json::json!({ "type": "object", "additionalProperties": T::schema(types) })
    }
    fn decode(v: &Value, cx: &mut Decoder) -> Option<Self> {
        let Value::Object(entries) = v else { return cx.mismatch("a map", v) };
        entries_of(entries.iter().map(|(k, v)| (k.as_str(), v)), cx)
    }
    fn decode_node(n: Node<'_>, cx: &mut Decoder) -> Option<Self> {
        match n.object() {
            Some(m) => entries_of(m.iter(), cx),
            None => cx.mismatch_kind("a map", n.kind_name()),
        }
    }
    fn encode(&self) -> Value {
        Value::Object(self.iter().map(|(k, v)| (k.clone(), v.encode())).collect())
    }
    fn normalize(v: &mut Value) {
        if let Value::Object(entries) = unwrapped(v) {
            entries.values_mut().for_each(T::normalize);
        }
    }
    fn replace_paths() -> Vec<String> {
        T::replace_paths().iter().map(|q| under("*", q)).collect()
    }
}

/// Any value (`pulumi.json#/Any`), taken as it is.
impl PulumiType for Value {
    const UNKNOWN: UnknownKind = UnknownKind::Object;
    fn schema(_: &mut Types) -> Json {
        serde_json::json!({ "$ref": "pulumi.json#/Any" })
    }
    fn decode(v: &Value, cx: &mut Decoder) -> Option<Self> {
        if v.contains_unknowns() { cx.unknown() } else { Some(v.clone()) }
    }
    fn decode_node(n: Node<'_>, cx: &mut Decoder) -> Option<Self> {
        let v = n.to_value();
        if v.contains_unknowns() { cx.unknown() } else { Some(v) }
    }
    fn encode(&self) -> Value {
        self.clone()
    }
    fn absent() -> Option<Self> {
        Some(Value::Null)
    }
}

impl PulumiType for Asset {
    const UNKNOWN: UnknownKind = UnknownKind::Asset;
    fn schema(_: &mut Types) -> Json {
        serde_json::json!({ "$ref": "pulumi.json#/Asset" })
    }
    fn decode(v: &Value, cx: &mut Decoder) -> Option<Self> {
        match v {
            Value::Asset(a) => Some(a.clone()),
            other => cx.mismatch("an asset", other),
        }
    }
    fn decode_node(n: Node<'_>, cx: &mut Decoder) -> Option<Self> {
        match n.to_value() {
            Value::Asset(a) => Some(a),
            other => cx.mismatch("an asset", &other),
        }
    }
    fn encode(&self) -> Value {
        Value::Asset(self.clone())
    }
}

impl PulumiType for Archive {
    const UNKNOWN: UnknownKind = UnknownKind::Archive;
    fn schema(_: &mut Types) -> Json {
        serde_json::json!({ "$ref": "pulumi.json#/Archive" })
    }
    fn decode(v: &Value, cx: &mut Decoder) -> Option<Self> {
        match v {
            Value::Archive(a) => Some(a.clone()),
            other => cx.mismatch("an archive", other),
        }
    }
    fn decode_node(n: Node<'_>, cx: &mut Decoder) -> Option<Self> {
        match n.to_value() {
            Value::Archive(a) => Some(a),
            other => cx.mismatch("an archive", &other),
        }
    }
    fn encode(&self) -> Value {
        Value::Archive(self.clone())
    }
}
