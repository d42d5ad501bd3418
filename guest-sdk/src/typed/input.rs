//! Where a typed decode reads from: a built [`Value`] (a [`PropertyMap`]),
//! or the words a request came in, read where they lie (a [`Node`], a
//! [`Map`]). The [`Decoder`] is written once over both.

use super::decode::Decoder;
use super::types::{PulumiType, is_secret};
use crate::value::{Output, PropertyMap, Value};
use crate::wire::read::{Layer, Map, Node};

/// What a decode reads a value from: a [`Value`], or a [`Node`] of the
/// words a request came in, read where it lies. Not part of the SDK's API.
#[doc(hidden)]
pub trait Input: Copy {
    #[doc(hidden)]
    fn layer(self) -> Layer<Self>;
    /// The number under any secret and known-output layers.
    #[doc(hidden)]
    fn number(self) -> Option<f64>;
    #[doc(hidden)]
    fn is_null(self) -> bool;
    #[doc(hidden)]
    fn is_secret(self) -> bool;
    /// Decodes a known, plain value with `T`.
    #[doc(hidden)]
    fn decode<T: PulumiType>(self, cx: &mut Decoder) -> Option<T>;
}

impl Input for &Value {
    fn layer(self) -> Layer<Self> {
        match self {
            Value::Null => Layer::Null,
            Value::Unknown(_) => Layer::Unknown,
            Value::Secret(inner) => Layer::Secret(inner),
            Value::Output(Output { value, secret, .. }) => Layer::Output(*secret, value.as_deref()),
            _ => Layer::Known,
        }
    }
    fn number(self) -> Option<f64> {
        self.as_f64()
    }
    fn is_null(self) -> bool {
        Value::is_null(self)
    }
    fn is_secret(self) -> bool {
        is_secret(self)
    }
    fn decode<T: PulumiType>(self, cx: &mut Decoder) -> Option<T> {
        T::decode(self, cx)
    }
}

impl Input for Node<'_> {
    fn layer(self) -> Layer<Self> {
        Node::layer(self)
    }
    fn number(self) -> Option<f64> {
        self.plain().as_f64()
    }
    fn is_null(self) -> bool {
        Node::is_null(self)
    }
    fn is_secret(self) -> bool {
        matches!(self.layer(), Layer::Secret(_) | Layer::Output(true, _))
    }
    fn decode<T: PulumiType>(self, cx: &mut Decoder) -> Option<T> {
        T::decode_node(self, cx)
    }
}

/// The properties an object is decoded from: a [`PropertyMap`], or the
/// fields of an object [`Node`]. Not part of the SDK's API.
#[doc(hidden)]
pub trait Source {
    #[doc(hidden)]
    type In<'a>: Input
    where
        Self: 'a;
    /// The property named `name`.
    #[doc(hidden)]
    fn property(&self, name: &str) -> Option<Self::In<'_>>;
    /// Each property's name, and whether it is null.
    #[doc(hidden)]
    fn names(&self) -> impl Iterator<Item = (&str, bool)>;
    /// `f` of the properties as a map: built, for words.
    #[doc(hidden)]
    fn with_map<R>(&self, f: impl FnOnce(&PropertyMap) -> R) -> R;
    /// The properties as a map of their own.
    #[doc(hidden)]
    fn to_map(&self) -> PropertyMap;
}

impl Source for PropertyMap {
    type In<'a> = &'a Value;
    fn property(&self, name: &str) -> Option<&Value> {
        self.get(name)
    }
    fn names(&self) -> impl Iterator<Item = (&str, bool)> {
        self.iter().map(|(k, v)| (k.as_str(), v.is_null()))
    }
    fn with_map<R>(&self, f: impl FnOnce(&PropertyMap) -> R) -> R {
        f(self)
    }
    fn to_map(&self) -> PropertyMap {
        self.clone()
    }
}

impl<'w> Source for Map<'w> {
    type In<'a>
        = Node<'w>
    where
        Self: 'a;
    fn property(&self, name: &str) -> Option<Node<'w>> {
        self.get(name)
    }
    fn names(&self) -> impl Iterator<Item = (&str, bool)> {
        self.iter().map(|(k, v)| (k, v.is_null()))
    }
    fn with_map<R>(&self, f: impl FnOnce(&PropertyMap) -> R) -> R {
        f(&Map::to_map(self))
    }
    fn to_map(&self) -> PropertyMap {
        Map::to_map(self)
    }
}
