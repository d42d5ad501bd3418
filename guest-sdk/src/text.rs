//! [`Text`]: an asset's inline contents, which in a component may stay in
//! the host until read.

use std::fmt;
use std::ops::Deref;
use std::sync::OnceLock;

/// The text of an [`AssetSource::Text`](crate::AssetSource::Text).
///
/// Built by a provider, it is an ordinary string. Received by a component
/// (contract 0.3.1), a text of 1 KiB or more is *held*: the host keeps it
/// and the component has a handle, so a call that only passes the asset on
/// (a Delete, a Diff by hash, a Create that returns its inputs) copies none
/// of it. Reading it (`as_str`, or any `str` method through `Deref`) fetches
/// it from the host once; giving it back unread hands the host the handle.
///
/// A handle is good for the call that received it. A provider that keeps a
/// held text past that call (in a static, say) reads it first, with
/// [`Text::as_str`] or [`Text::into_string`]; reading it later is an error
/// that ends the call (a panic, which the host reports).
#[derive(Clone)]
pub struct Text(Repr);

#[derive(Clone)]
enum Repr {
    Owned(String),
    Held { handle: u32, len: u32, read: OnceLock<String> },
}

impl Text {
    /// A text the host holds: `len` bytes behind `handle`. For the value codec.
    #[doc(hidden)]
    pub fn held(handle: u32, len: u32) -> Self {
        Text(Repr::Held { handle, len, read: OnceLock::new() })
    }

    /// The handle and length of a held text, read or not: given back to the
    /// host in its place. For the value codec.
    #[doc(hidden)]
    pub fn handle(&self) -> Option<(u32, u32)> {
        match &self.0 {
            Repr::Held { handle, len, .. } => Some((*handle, *len)),
            Repr::Owned(_) => None,
        }
    }

    /// Whether the text is still in the host, unread.
    pub fn is_held(&self) -> bool {
        matches!(&self.0, Repr::Held { read, .. } if read.get().is_none())
    }

    /// The text, fetched from the host the first time if it holds it.
    pub fn as_str(&self) -> &str {
        match &self.0 {
            Repr::Owned(s) => s,
            Repr::Held { handle, len, read } => read.get_or_init(|| fetch(*handle, *len)),
        }
    }

    /// Its length in bytes, without fetching it.
    pub fn len(&self) -> usize {
        match &self.0 {
            Repr::Owned(s) => s.len(),
            Repr::Held { len, .. } => *len as usize,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The text as a `String`, fetched from the host if it holds it.
    pub fn into_string(self) -> String {
        match self.0 {
            Repr::Owned(s) => s,
            Repr::Held { handle, len, read } => read.into_inner().unwrap_or_else(|| fetch(handle, len)),
        }
    }
}

#[cfg(target_arch = "wasm32")]
fn fetch(handle: u32, len: u32) -> String {
    match crate::wit::pulumi::provider::context::asset_text(handle) {
        Some(text) if text.len() == len as usize => text,
        Some(text) => panic!("the host gave {} bytes for held asset text {handle}, not {len}", text.len()),
        None => panic!(
            "held asset text {handle} is not this call's: a held text is good for the call that received it; \
             read it then (Text::as_str) to keep it"
        ),
    }
}

/// Natively the host gives every text in full, so nothing is ever held.
#[cfg(not(target_arch = "wasm32"))]
fn fetch(handle: u32, _len: u32) -> String {
    panic!("held asset text {handle} outside a component: natively the host holds no texts")
}

impl Deref for Text {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Text {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

/// Two texts the host holds under one handle are equal without fetching either.
impl PartialEq for Text {
    fn eq(&self, other: &Text) -> bool {
        match (self.handle(), other.handle()) {
            (Some((a, _)), Some((b, _))) if a == b => true,
            _ => self.len() == other.len() && self.as_str() == other.as_str(),
        }
    }
}

impl Eq for Text {}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        self.len() == other.len() && self.as_str() == other
    }
}

impl PartialEq<&str> for Text {
    fn eq(&self, other: &&str) -> bool {
        self == *other
    }
}

impl From<String> for Text {
    fn from(s: String) -> Self {
        Text(Repr::Owned(s))
    }
}

impl From<&str> for Text {
    fn from(s: &str) -> Self {
        Text(Repr::Owned(s.to_owned()))
    }
}

impl From<Text> for String {
    fn from(t: Text) -> String {
        t.into_string()
    }
}

/// Shows a held text unread as its length, so that logging a value does
/// not fetch a megabyte.
impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Repr::Held { handle, len, read } if read.get().is_none() => {
                write!(f, "Text(held {handle}, {len} bytes)")
            }
            _ => fmt::Debug::fmt(self.as_str(), f),
        }
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_owned_text_is_a_string() {
        let t = Text::from("abc");
        assert_eq!((t.as_str(), t.len(), t.is_held(), t.handle()), ("abc", 3, false, None));
        assert_eq!(t, "abc");
        assert_eq!(t, Text::from("abc".to_owned()));
        assert_ne!(t, Text::from("abd"));
        assert_eq!(format!("{t} {t:?}"), "abc \"abc\"");
        assert_eq!(String::from(t), "abc");
    }

    #[test]
    fn a_held_text_is_not_fetched_to_be_measured_compared_by_handle_or_shown() {
        let t = Text::held(7, 2048);
        assert_eq!((t.len(), t.is_held(), t.handle()), (2048, true, Some((7, 2048))));
        // Natively a fetch would panic: none of these fetch.
        assert_eq!(t, Text::held(7, 2048));
        assert_ne!(t, Text::from("short"), "different lengths differ without a fetch");
        assert_eq!(format!("{t:?}"), "Text(held 7, 2048 bytes)");
    }

    /// A value kept past its call reads every held text inside, however
    /// deep: natively that read is the panic, which shows it was reached.
    #[test]
    #[should_panic(expected = "held asset text 9 outside a component")]
    fn keeping_a_value_reads_its_held_texts_wherever_they_are() {
        use crate::value::{Archive, ArchiveMember, ArchiveSource, Asset, AssetSource, Value};
        let held = Asset { hash: None, source: Some(AssetSource::Text(Text::held(9, 4096))) };
        let mut kept = Value::Asset(Asset::text("owned"));
        kept.read_held_texts();
        assert!(matches!(&kept, Value::Asset(a) if matches!(&a.source, Some(AssetSource::Text(t)) if t == "owned")));
        let members = [("f".to_owned(), ArchiveMember::Asset(held))].into();
        let archive = Archive { hash: None, source: Some(ArchiveSource::Assets(members)) };
        let mut value = Value::secret(Value::Object([("a".to_owned(), Value::Archive(archive))].into()));
        value.read_held_texts();
    }

    #[test]
    #[should_panic(expected = "outside a component")]
    fn natively_a_held_text_cannot_be_read() {
        let _ = Text::held(1, 2048).as_str().len();
    }
}
