//! Decoding property maps into typed values: every failure is collected with
//! its property path (`tags.env`, `items[0].name`), unknowns are recorded
//! rather than failed, and secret paths are remembered so that outputs at the
//! same paths can be marked secret again.

use std::borrow::Cow;

pub use super::input::{Input, Source};
use super::types::{Object, Property, PulumiType};
use crate::diff::{push_index, push_key};
use crate::fields::Fields;
use crate::provider::CheckFailure;
use crate::value::{PropertyMap, Value};
use crate::wire::read::{Layer, Node};

/// One step of a property path. A declared property's key is borrowed (a
/// path is pushed for every field of every decode; only a map's keys are copied).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Seg {
    Key(Cow<'static, str>),
    Index(usize),
}

/// A path as Pulumi writes it: `a.b[0]["c.d"]`.
pub fn render(path: &[Seg]) -> String {
    let mut out = String::new();
    for seg in path {
        match seg {
            Seg::Key(k) => push_key(&mut out, k),
            Seg::Index(i) => push_index(&mut out, *i),
        }
    }
    out
}

/// `a` or `an`, for messages.
fn article(kind: &str) -> String {
    let vowel = kind.starts_with(['a', 'e', 'i', 'o', 'u']);
    format!("{} {kind}", if vowel { "an" } else { "a" })
}

/// A value with its wrappers stripped.
enum Slot<I> {
    Absent,
    Unknown,
    Known(I),
}

/// The state of one decoding: where it is, and what it found so far.
pub struct Decoder {
    path: Vec<Seg>,
    failures: Vec<CheckFailure>,
    unknowns: Vec<String>,
    secrets: Vec<Vec<Seg>>,
    /// Keys an object does not declare are failures (inputs), or ignored (state).
    strict: bool,
    /// Unknowns are failures (function arguments), or recorded (resource inputs).
    require_known: bool,
    /// Absent properties take their defaults and secret properties are
    /// recorded as secret here, as [`normalize`](super::normalize) would
    /// have done to the map: the calls that need only the typed value skip
    /// building the normalized map (a small map's Create: ~1 of 10 µs in a
    /// component, BENCHMARKS.md).
    defaults: bool,
}

impl Decoder {
    pub(crate) fn new(strict: bool, require_known: bool) -> Self {
        Decoder {
            path: vec![],
            failures: vec![],
            unknowns: vec![],
            secrets: vec![],
            strict,
            require_known,
            defaults: false,
        }
    }

    /// The current property path.
    pub fn path(&self) -> String {
        render(&self.path)
    }

    /// Records a failure at the current path.
    pub fn fail(&mut self, reason: impl Into<String>) {
        self.failures.push(CheckFailure { property: self.path(), reason: reason.into() });
    }

    /// Records "must be `expected`, not a `kind`"; always `None`.
    pub fn mismatch<T>(&mut self, expected: &str, v: &Value) -> Option<T> {
        self.mismatch_kind(expected, v.kind_name())
    }

    /// [`Decoder::mismatch`] of a value of kind `kind` ([`Value::kind_name`]).
    #[doc(hidden)]
    pub fn mismatch_kind<T>(&mut self, expected: &str, kind: &str) -> Option<T> {
        self.fail(format!("must be {expected}, not {}", article(kind)));
        None
    }

    /// Records that the value at the current path is unknown; always `None`.
    pub fn unknown<T>(&mut self) -> Option<T> {
        if self.require_known {
            self.fail("must be known");
        } else {
            self.unknowns.push(self.path());
        }
        None
    }

    // The generic methods below are thin: the work that does not depend on
    // the type is in non-generic ones, so each field type adds little code.

    fn enter(&mut self, seg: Seg) {
        self.path.push(seg);
    }

    fn leave(&mut self) {
        self.path.pop();
    }

    /// A property of an object, with an optional inclusive numeric range.
    pub fn property<T: PulumiType>(
        &mut self,
        m: &(impl Source + ?Sized),
        p: &'static Property,
        min: Option<f64>,
        max: Option<f64>,
    ) -> Option<T> {
        let v = m.property(p.name).filter(|v| !v.is_null());
        self.enter(Seg::Key(Cow::Borrowed(p.name)));
        let r = match (v, &p.default) {
            (Some(v), _) => self.present(v, p, min, max),
            (None, Some(d)) if self.defaults => self.present(d, p, min, max),
            (None, _) => self.value_in::<T, &Value>(None),
        };
        self.leave();
        r
    }

    /// [`Decoder::property`] of a value that is there (or its default).
    fn present<T: PulumiType, I: Input>(
        &mut self,
        v: I,
        p: &Property,
        min: Option<f64>,
        max: Option<f64>,
    ) -> Option<T> {
        // Recorded before any secret inside it, in the order `normalize`'s
        // outer wrapper would have put them.
        if self.defaults && p.secret && !v.is_secret() {
            self.secrets.push(self.path.clone());
        }
        if self.in_range(v.number(), min, max) { self.value_in(Some(v)) } else { None }
    }

    /// Ranges are checked first: "at least 1" says more than a type's own bounds.
    fn in_range(&mut self, n: Option<f64>, min: Option<f64>, max: Option<f64>) -> bool {
        let Some(n) = n else { return true };
        // NaN is below nothing and above nothing: a bounded field would take it.
        if n.is_nan() && (min.is_some() || max.is_some()) {
            self.fail("must be a number, not NaN");
        } else if let Some(min) = min.filter(|min| n < *min) {
            self.fail(format!("must be at least {min}"));
        } else if let Some(max) = max.filter(|max| n > *max) {
            self.fail(format!("must be at most {max}"));
        } else {
            return true;
        }
        false
    }

    pub fn element<T: PulumiType>(&mut self, index: usize, v: &Value) -> Option<T> {
        self.element_in(index, v)
    }

    pub(crate) fn element_in<T: PulumiType, I: Input>(&mut self, index: usize, v: I) -> Option<T> {
        self.enter(Seg::Index(index));
        let r = self.value_in(Some(v));
        self.leave();
        r
    }

    pub fn entry<T: PulumiType>(&mut self, key: &str, v: &Value) -> Option<T> {
        self.keyed(key.to_owned(), v).1
    }

    /// [`Decoder::entry`] that gives the key back: the copy the path needed
    /// becomes the decoded map's own, one allocation instead of two.
    pub(crate) fn keyed<T: PulumiType, I: Input>(&mut self, key: String, v: I) -> (String, Option<T>) {
        self.enter(Seg::Key(Cow::Owned(key)));
        let r = self.value_in(Some(v));
        match self.path.pop() {
            Some(Seg::Key(Cow::Owned(key))) => (key, r),
            _ => unreachable!("the path ends with the key pushed above"),
        }
    }

    /// Strips secret and output layers (remembering secrets), handles
    /// absent, null and unknown values, then decodes with `T`.
    pub fn value<T: PulumiType>(&mut self, v: Option<&Value>) -> Option<T> {
        self.value_in(v)
    }

    fn value_in<T: PulumiType, I: Input>(&mut self, v: Option<I>) -> Option<T> {
        match self.strip(v) {
            Slot::Known(v) => v.decode(self),
            Slot::Unknown => None,
            Slot::Absent => {
                let v = T::absent();
                if v.is_none() {
                    self.fail("is required");
                }
                v
            }
        }
    }

    fn strip<I: Input>(&mut self, v: Option<I>) -> Slot<I> {
        let Some(mut v) = v else { return Slot::Absent };
        loop {
            v = match v.layer() {
                Layer::Secret(inner) => {
                    self.secrets.push(self.path.clone());
                    inner
                }
                Layer::Output(secret, value) => {
                    if secret {
                        self.secrets.push(self.path.clone());
                    }
                    match value {
                        Some(inner) => inner,
                        None => break,
                    }
                }
                Layer::Unknown => break,
                Layer::Null => return Slot::Absent,
                Layer::Known => return Slot::Known(v),
            };
        }
        self.unknown::<()>();
        Slot::Unknown
    }

    /// A whole number within `min..=max`.
    pub fn integer(&mut self, v: &Value, min: f64, max: f64) -> Option<f64> {
        let n = if let Value::Number(n) = v { Some(*n) } else { None };
        self.whole(n, v.kind_name(), min, max)
    }

    /// [`Decoder::integer`] of a value of kind `kind`: `n` if it is a number.
    #[doc(hidden)]
    pub fn whole(&mut self, n: Option<f64>, kind: &str, min: f64, max: f64) -> Option<f64> {
        let Some(n) = n else { return self.mismatch_kind("a number", kind) };
        if !n.is_finite() || n.fract() != 0.0 {
            self.fail("must be a whole number");
        } else if n < min {
            self.fail(format!("must be at least {min}"));
        } else if n > max {
            self.fail(format!("must be at most {max}"));
        } else {
            return Some(n);
        }
        None
    }

    /// The index of a string among `values` (string enums).
    pub fn one_of(&mut self, v: &Value, values: &[&str]) -> Option<usize> {
        let Value::String(s) = v else { return self.mismatch("a string", v) };
        let found = values.iter().position(|x| x == s);
        if found.is_none() {
            let quoted: Vec<String> = values.iter().map(|x| format!("{x:?}")).collect();
            // A check failure is printed on the user's terminal: a secret is not repeated.
            let given = if self.within_secret() { String::new() } else { format!(", not {s:?}") };
            self.fail(format!("must be one of {}{given}", quoted.join(", ")));
        }
        found
    }

    /// Whether the value being decoded is secret, or inside a secret.
    fn within_secret(&self) -> bool {
        self.secrets.iter().any(|secret| self.path.starts_with(secret))
    }

    /// A nested object.
    pub fn object<T: Object>(&mut self, v: &Value) -> Option<T> {
        match v {
            Value::Object(m) => self.fields(m),
            other => self.mismatch("an object", other),
        }
    }

    /// [`Decoder::object`] of a node of the words.
    #[doc(hidden)]
    pub fn object_node<T: Object>(&mut self, n: Node<'_>) -> Option<T> {
        match n.object() {
            Some(m) => self.fields(&m),
            None => self.mismatch_kind("an object", n.kind_name()),
        }
    }

    /// The fields of `T` from `m`; keys `T` does not declare are failures when strict.
    pub fn fields<T: Object>(&mut self, m: &(impl Source + ?Sized)) -> Option<T> {
        if self.strict {
            self.unknown_keys(m.names(), T::properties());
        }
        T::decode_from(m, self)
    }

    fn unknown_keys<'k>(&mut self, names: impl Iterator<Item = (&'k str, bool)>, props: &[Property]) {
        for (k, null) in names {
            if !null && !props.iter().any(|p| p.name == k) {
                self.enter(Seg::Key(Cow::Owned(k.to_owned())));
                self.fail("is not a known property");
                self.leave();
            }
        }
    }

    pub(crate) fn finish<T>(self, value: Option<T>) -> Decoded<T> {
        let ok = self.failures.is_empty() && self.unknowns.is_empty();
        Decoded { value: value.filter(|_| ok), failures: self.failures, unknowns: self.unknowns, secrets: self.secrets }
    }
}

/// The result of decoding a property map.
#[derive(Debug)]
pub struct Decoded<T> {
    /// Set when every value is known and valid.
    pub value: Option<T>,
    /// Type, range and required-property failures, by property path.
    pub failures: Vec<CheckFailure>,
    /// Paths of the values not known yet (previews).
    pub unknowns: Vec<String>,
    secrets: Vec<Vec<Seg>>,
}

impl<T> Decoded<T> {
    /// True when some input was secret.
    pub fn had_secrets(&self) -> bool {
        !self.secrets.is_empty()
    }

    /// Marks as secret whatever `out` holds at the paths that were secret in
    /// the decoded map, so a secret input stays secret in the outputs. A
    /// provider may reorder a list or rename a map's keys, so below the top
    /// level a list holding a secret is secret as a whole, and so is an
    /// object that no longer has the secret's key.
    pub fn protect(&self, out: &mut PropertyMap) {
        protect(&self.secrets, out)
    }

    /// [`Decoded::protect`] of sorted pairs.
    pub(crate) fn protect_fields(&self, out: &mut Fields) {
        protect(&self.secrets, out)
    }

    /// The secret paths, for a [`super::Context`] to protect what the call
    /// reports before it returns.
    pub(crate) fn secret_paths(&self) -> Vec<Vec<Seg>> {
        self.secrets.clone()
    }
}

/// [`Decoded::protect`] with the paths alone.
pub(crate) fn protect_paths(secrets: &[Vec<Seg>], out: &mut PropertyMap) {
    protect(secrets, out)
}

impl<T> Decoded<T> {}

/// The top level of what [`protect`] marks: a map or sorted pairs.
trait Named {
    fn named(&mut self, name: &str) -> Option<&mut Value>;
}

impl Named for PropertyMap {
    fn named(&mut self, name: &str) -> Option<&mut Value> {
        self.get_mut(name)
    }
}

impl Named for Fields {
    fn named(&mut self, name: &str) -> Option<&mut Value> {
        self.get_mut(name)
    }
}

fn protect(secrets: &[Vec<Seg>], out: &mut impl Named) {
    for path in secrets {
        if let Some((Seg::Key(k), rest)) = path.split_first()
            && let Some(v) = out.named(k.as_ref())
        {
            mark(v, rest);
        }
    }
}

fn mark(v: &mut Value, path: &[Seg]) {
    let whole = match (path.split_first(), &mut *v) {
        (_, Value::Secret(_)) => false,
        (None, _) => true,
        (Some((Seg::Key(k), rest)), Value::Object(m)) => match m.get_mut(k.as_ref()) {
            Some(child) => {
                mark(child, rest);
                false
            }
            None => true,
        },
        // Sorted, filtered or deduplicated, the secret need not be at its index any more.
        (Some((Seg::Index(_), _)), Value::Array(_)) => true,
        _ => false,
    };
    if whole {
        *v = Value::secret(std::mem::replace(v, Value::Null));
    }
}

fn decode_in<T: Object, S: Source + ?Sized>(mut cx: Decoder, m: &S) -> Decoded<T> {
    let value = cx.fields::<T>(m);
    cx.finish(value)
}

pub(crate) fn decode_with<T: Object>(m: &PropertyMap, strict: bool, require_known: bool) -> Decoded<T> {
    decode_in(Decoder::new(strict, require_known), m)
}

/// [`decode`] of a map that is not normalized: the same result as
/// normalizing a copy first, without the copy.
pub(crate) fn decode_defaulted<T: Object>(m: &(impl Source + ?Sized)) -> Decoded<T> {
    decode_in(Decoder { defaults: true, ..Decoder::new(true, false) }, m)
}

/// Decodes resource inputs: unknown keys are failures, unknown values are
/// recorded in [`Decoded::unknowns`]. Apply [`normalize`](super::normalize) first for defaults.
pub fn decode<T: Object>(m: &PropertyMap) -> Decoded<T> {
    decode_with(m, true, false)
}

/// Decodes a resource's state (a map, or the words it came in): keys `T`
/// does not declare are ignored, and absent ones take their defaults. A
/// state written by an older version lacks a property added since; with
/// its default it still decodes, so Update, Read and Delete (`pulumi
/// destroy`) keep working across the upgrade. (A property added since with
/// no default must be an `Option`.)
pub fn decode_state<T: Object>(m: &(impl Source + ?Sized)) -> Decoded<T> {
    decode_in(Decoder { defaults: true, ..Decoder::new(false, false) }, m)
}

/// One line for an error message: `length: must be at least 1; ...`.
pub fn describe(failures: &[CheckFailure]) -> String {
    let parts: Vec<String> = failures.iter().map(|f| format!("{}: {}", f.property, f.reason)).collect();
    parts.join("; ")
}
