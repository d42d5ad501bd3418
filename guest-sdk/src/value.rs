//! `Value`: a Pulumi property value as an ordinary recursive Rust enum.

use std::collections::BTreeMap;
use std::fmt;

pub use crate::text::Text;

/// A resource's properties: keys in sorted order, so output is deterministic.
pub type PropertyMap = BTreeMap<String, Value>;

/// A property value, with every kind Pulumi can send explicit. Neither
/// `Display` nor `Debug` shows what a secret holds: a request printed
/// with `{:?}` into a log line must not put the user's secret there.
#[derive(Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Number(f64),
    String(String),
    /// A string whose bytes are not valid UTF-8.
    Bytes(Vec<u8>),
    Array(Vec<Value>),
    Object(PropertyMap),
    Asset(Asset),
    Archive(Archive),
    /// The inner value must be kept secret.
    Secret(Box<Value>),
    /// Not known yet (a preview); the kind says what it will be.
    Unknown(UnknownKind),
    ResourceRef(ResourceRef),
    Output(Output),
}

/// What an unknown value will turn out to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnknownKind {
    Bool,
    Number,
    String,
    Array,
    Asset,
    Archive,
    Object,
}

impl UnknownKind {
    /// Every kind, in the order of the contract's `unknown-kind` cases.
    pub const ALL: [UnknownKind; 7] = [
        UnknownKind::Bool,
        UnknownKind::Number,
        UnknownKind::String,
        UnknownKind::Array,
        UnknownKind::Asset,
        UnknownKind::Archive,
        UnknownKind::Object,
    ];
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AssetSource {
    /// Inline contents. In a component, a long text (1 KiB or more) the
    /// engine sent stays in the host until it is read (see [`Text`]).
    Text(Text),
    Path(String),
    Uri(String),
}

#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Asset {
    pub hash: Option<String>,
    pub source: Option<AssetSource>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArchiveMember {
    Asset(Asset),
    Archive(Archive),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArchiveSource {
    Assets(BTreeMap<String, ArchiveMember>),
    Path(String),
    Uri(String),
}

#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Archive {
    pub hash: Option<String>,
    pub source: Option<ArchiveSource>,
}

/// The ID of a referenced resource.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RefId {
    Known(String),
    Unknown,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceRef {
    pub urn: String,
    /// `None` for component resources.
    pub id: Option<RefId>,
    /// Empty when unset.
    pub package_version: String,
}

/// A value with its secretness and dependencies (`value: None` = unknown).
/// Its `Debug` does not show a secret one's value.
#[derive(Clone, PartialEq)]
pub struct Output {
    pub value: Option<Box<Value>>,
    pub secret: bool,
    pub dependencies: Vec<String>,
}

impl Asset {
    pub fn text(s: impl Into<String>) -> Self {
        Asset { hash: None, source: Some(AssetSource::Text(Text::from(s.into()))) }
    }
    pub fn path(s: impl Into<String>) -> Self {
        Asset { hash: None, source: Some(AssetSource::Path(s.into())) }
    }
    pub fn uri(s: impl Into<String>) -> Self {
        Asset { hash: None, source: Some(AssetSource::Uri(s.into())) }
    }
}

impl Value {
    /// Wraps `v` as a secret (idempotent).
    pub fn secret(v: impl Into<Value>) -> Value {
        match v.into() {
            s @ Value::Secret(_) => s,
            other => Value::Secret(Box::new(other)),
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// True when this value, or anything inside it, is unknown.
    pub fn contains_unknowns(&self) -> bool {
        match self {
            Value::Unknown(_) => true,
            Value::Output(o) => o.value.as_ref().is_none_or(|v| v.contains_unknowns()),
            Value::Secret(v) => v.contains_unknowns(),
            Value::Array(a) => a.iter().any(Value::contains_unknowns),
            Value::Object(m) => m.values().any(Value::contains_unknowns),
            Value::ResourceRef(r) => r.id == Some(RefId::Unknown),
            _ => false,
        }
    }

    /// True when this value, or anything inside it, is secret.
    pub fn contains_secrets(&self) -> bool {
        match self {
            Value::Secret(_) => true,
            Value::Output(o) => o.secret || o.value.as_ref().is_some_and(|v| v.contains_secrets()),
            Value::Array(a) => a.iter().any(Value::contains_secrets),
            Value::Object(m) => m.values().any(Value::contains_secrets),
            _ => false,
        }
    }

    /// Reads every held asset text inside (see [`Text`]), so the value can
    /// be kept past the call that received it.
    pub fn read_held_texts(&mut self) {
        fn asset(a: &mut Asset) {
            if let Some(AssetSource::Text(t)) = &mut a.source
                && t.is_held()
            {
                *t = Text::from(t.as_str().to_owned());
            }
        }
        fn archive(a: &mut Archive) {
            if let Some(ArchiveSource::Assets(members)) = &mut a.source {
                for member in members.values_mut() {
                    match member {
                        ArchiveMember::Asset(a) => asset(a),
                        ArchiveMember::Archive(a) => archive(a),
                    }
                }
            }
        }
        match self {
            Value::Asset(a) => asset(a),
            Value::Archive(a) => archive(a),
            Value::Secret(v) => v.read_held_texts(),
            Value::Output(Output { value: Some(v), .. }) => v.read_held_texts(),
            Value::Array(items) => items.iter_mut().for_each(Value::read_held_texts),
            Value::Object(m) => m.values_mut().for_each(Value::read_held_texts),
            _ => {}
        }
    }

    /// The value with secret and known-output wrappers removed, at this level only.
    pub fn plain(&self) -> &Value {
        match self {
            Value::Secret(v) => v.plain(),
            Value::Output(Output { value: Some(v), .. }) => v.plain(),
            v => v,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self.plain() {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self.plain() {
            Value::Number(n) => Some(*n),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self.plain() {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&[Value]> {
        match self.plain() {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    pub fn as_object(&self) -> Option<&PropertyMap> {
        match self.plain() {
            Value::Object(m) => Some(m),
            _ => None,
        }
    }

    /// A field of an object value.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.as_object()?.get(key)
    }

    /// The kind name used in error messages.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "bool",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::Bytes(_) => "bytes",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
            Value::Asset(_) => "asset",
            Value::Archive(_) => "archive",
            Value::Secret(_) => "secret",
            Value::Unknown(_) => "unknown",
            Value::ResourceRef(_) => "resource reference",
            Value::Output(_) => "output",
        }
    }
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => f.write_str("Null"),
            Value::Bool(b) => f.debug_tuple("Bool").field(b).finish(),
            Value::Number(n) => f.debug_tuple("Number").field(n).finish(),
            Value::String(s) => f.debug_tuple("String").field(s).finish(),
            Value::Bytes(b) => f.debug_tuple("Bytes").field(b).finish(),
            Value::Array(a) => f.debug_tuple("Array").field(a).finish(),
            Value::Object(m) => f.debug_tuple("Object").field(m).finish(),
            Value::Asset(a) => f.debug_tuple("Asset").field(a).finish(),
            Value::Archive(a) => f.debug_tuple("Archive").field(a).finish(),
            Value::Secret(_) => f.write_str("Secret(..)"),
            Value::Unknown(k) => f.debug_tuple("Unknown").field(k).finish(),
            Value::ResourceRef(r) => f.debug_tuple("ResourceRef").field(r).finish(),
            Value::Output(o) => f.debug_tuple("Output").field(o).finish(),
        }
    }
}

impl fmt::Debug for Output {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = f.debug_struct("Output");
        match &self.value {
            Some(_) if self.secret => out.field("value", &format_args!("..")),
            value => out.field("value", value),
        };
        out.field("secret", &self.secret).field("dependencies", &self.dependencies).finish()
    }
}

impl fmt::Display for Value {
    /// Plain JSON-like text; secrets are masked so they never reach a log by accident.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => f.write_str("null"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Number(n) => write!(f, "{n}"),
            Value::String(s) => write!(f, "{s:?}"),
            Value::Bytes(b) => write!(f, "<{} bytes>", b.len()),
            Value::Array(a) => {
                f.write_str("[")?;
                for (i, v) in a.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{v}")?;
                }
                f.write_str("]")
            }
            Value::Object(m) => {
                f.write_str("{")?;
                for (i, (k, v)) in m.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{k:?}:{v}")?;
                }
                f.write_str("}")
            }
            Value::Asset(_) => f.write_str("<asset>"),
            Value::Archive(_) => f.write_str("<archive>"),
            Value::Secret(_) => f.write_str("[secret]"),
            Value::Unknown(_) => f.write_str("<unknown>"),
            Value::ResourceRef(r) => write!(f, "<ref {}>", r.urn),
            Value::Output(o) if o.secret => f.write_str("[secret]"),
            Value::Output(Output { value: Some(v), .. }) => write!(f, "{v}"),
            Value::Output(_) => f.write_str("<unknown>"),
        }
    }
}

macro_rules! from_number {
    ($($t:ty),*) => {$(
        impl From<$t> for Value {
            fn from(n: $t) -> Value { Value::Number(n as f64) }
        }
    )*};
}
from_number!(f64, f32, i8, i16, i32, i64, u8, u16, u32, u64, usize, isize);

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}
impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::String(s.to_owned())
    }
}
impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::String(s)
    }
}
impl From<Asset> for Value {
    fn from(a: Asset) -> Value {
        Value::Asset(a)
    }
}
impl From<Archive> for Value {
    fn from(a: Archive) -> Value {
        Value::Archive(a)
    }
}
impl From<PropertyMap> for Value {
    fn from(m: PropertyMap) -> Value {
        Value::Object(m)
    }
}
impl<T: Into<Value>> From<Vec<T>> for Value {
    fn from(v: Vec<T>) -> Value {
        Value::Array(v.into_iter().map(Into::into).collect())
    }
}
impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Value {
        v.map_or(Value::Null, Into::into)
    }
}
impl<K: Into<String>, V: Into<Value>> FromIterator<(K, V)> for Value {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Value {
        Value::Object(iter.into_iter().map(|(k, v)| (k.into(), v.into())).collect())
    }
}

/// Builds a [`PropertyMap`]: `props! { "length" => 8, "special" => true }`.
#[macro_export]
macro_rules! props {
    ($($k:expr => $v:expr),* $(,)?) => {{
        #[allow(unused_mut)]
        let mut m = $crate::PropertyMap::new();
        $( m.insert(::std::string::String::from($k), $crate::Value::from($v)); )*
        m
    }};
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn neither_display_nor_debug_shows_a_secret() {
        let hidden =
            Output { value: Some(Box::new("hunter2".into())), secret: true, dependencies: vec!["urn:d".into()] };
        let v = Value::Object(props! { "pw" => Value::secret("hunter2"), "out" => Value::Output(hidden), "n" => 1 });
        for shown in [format!("{v}"), format!("{v:?}"), format!("{v:#?}")] {
            assert!(!shown.contains("hunter2"), "{shown}");
        }
        assert!(format!("{v}").contains(r#""pw":[secret]"#), "{v}");
        let debug = format!("{v:?}");
        assert!(debug.contains("Number(1.0)") && debug.contains("urn:d") && debug.contains("Secret(..)"), "{debug}");
        assert_eq!(format!("{:?}", Value::secret(1)), "Secret(..)");
        let printed = Output { value: Some(Box::new("hunter2".into())), secret: true, dependencies: vec![] };
        assert!(!format!("{printed:?}").contains("hunter2"), "{printed:?}");
        assert_eq!(format!("{:?}", Value::from("plain")), "String(\"plain\")");
    }
}
