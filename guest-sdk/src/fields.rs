//! A resource's properties as pairs sorted by name: how a typed resource
//! hands its state to the wire encoder. A [`PropertyMap`] would allocate a
//! key and tree nodes per property, only to be walked once and freed
//! (in-process, a small-map Create without it: 9.2 -> 8.7 µs through a
//! component, 5.5 -> 4.5 natively; BENCHMARKS.md). Not part of the API:
//! the export layers and the derive use it.

use std::borrow::Cow;

use crate::value::{PropertyMap, Value};

/// Pairs of name and value; sorted by name once [`Fields::sort`] has run.
#[doc(hidden)]
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Fields(Vec<(Cow<'static, str>, Value)>);

impl Fields {
    pub fn with_capacity(n: usize) -> Self {
        Fields(Vec::with_capacity(n))
    }

    pub fn push(&mut self, name: impl Into<Cow<'static, str>>, v: Value) {
        self.0.push((name.into(), v));
    }

    /// Sorts by name; of two pairs with one name the later stays, as in a
    /// map the later insert does.
    pub fn sort(&mut self) {
        self.0.sort_by(|a, b| a.0.cmp(&b.0));
        self.0.dedup_by(|later, earlier| {
            let same = later.0 == earlier.0;
            if same {
                std::mem::swap(&mut later.1, &mut earlier.1);
            }
            same
        });
    }

    /// The value named `name`; the pairs must be sorted.
    pub fn get_mut(&mut self, name: &str) -> Option<&mut Value> {
        let i = self.0.binary_search_by(|(k, _)| k.as_ref().cmp(name)).ok()?;
        Some(&mut self.0[i].1)
    }

    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&str, &Value)> {
        self.0.iter().map(|(k, v)| (k.as_ref(), v))
    }

    pub fn into_values(self) -> impl ExactSizeIterator<Item = Value> {
        self.0.into_iter().map(|(_, v)| v)
    }

    pub fn into_map(self) -> PropertyMap {
        self.into_iter().collect()
    }
}

/// The pairs with owned names, in their order; collected into a map, of
/// two with one name the later wins.
impl IntoIterator for Fields {
    type Item = (String, Value);
    type IntoIter = std::iter::Map<
        std::vec::IntoIter<(Cow<'static, str>, Value)>,
        fn((Cow<'static, str>, Value)) -> (String, Value),
    >;

    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter().map(|(k, v)| (k.into_owned(), v))
    }
}

/// Properties on their way to the wire: a map (every untyped result) or
/// sorted pairs (a typed resource's state).
#[doc(hidden)]
#[derive(Clone, Debug, PartialEq)]
pub enum Outputs {
    Map(PropertyMap),
    Fields(Fields),
}

impl Outputs {
    pub fn into_map(self) -> PropertyMap {
        match self {
            Outputs::Map(m) => m,
            Outputs::Fields(f) => f.into_map(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorting_keeps_the_later_of_two_pairs_as_a_map_does() {
        let mut f = Fields::default();
        for (k, v) in [("b", 1), ("a", 2), ("b", 3), ("c", 4), ("a", 5)] {
            f.push(k, Value::from(v));
        }
        let mut m = PropertyMap::new();
        for (k, v) in f.iter() {
            m.insert(k.to_owned(), v.clone());
        }
        f.sort();
        let pairs: Vec<(&str, &Value)> = f.iter().collect();
        assert_eq!(pairs, m.iter().map(|(k, v)| (k.as_str(), v)).collect::<Vec<_>>());
        assert_eq!(f.get_mut("b"), Some(&mut Value::from(3)));
        assert_eq!(f.get_mut("d"), None);
        assert_eq!(f.into_map(), m);
    }
}
