//! Structural diffs with detailed, path-level results.

use crate::provider::{DiffChanges, DiffKind, DiffResponse, PropertyDiff};
use crate::value::{Output, PropertyMap, RefId, ResourceRef, Value};

/// Builds a [`DiffResponse`] by comparing two property maps.
///
/// ```ignore
/// Differ::new().replace_on_changes(&["length", "keepers"]).diff(&req.old_inputs, &req.news)
/// ```
#[derive(Clone, Debug)]
pub struct Differ {
    replace_on: Vec<String>,
    ignore: Vec<String>,
    input_diff: bool,
    delete_before_replace: bool,
}

impl Default for Differ {
    fn default() -> Self {
        Self::new()
    }
}

impl Differ {
    /// Compares old inputs with new inputs (the usual case).
    pub fn new() -> Self {
        Differ { replace_on: vec![], ignore: vec![], input_diff: true, delete_before_replace: false }
    }

    /// A change under any of these top-level keys forces a replacement.
    pub fn replace_on_changes<S: AsRef<str>>(mut self, keys: &[S]) -> Self {
        self.replace_on.extend(keys.iter().map(|k| k.as_ref().to_owned()));
        self
    }

    /// Top-level keys whose changes are ignored.
    pub fn ignore<S: AsRef<str>>(mut self, keys: &[S]) -> Self {
        self.ignore.extend(keys.iter().map(|k| k.as_ref().to_owned()));
        self
    }

    /// The old side is the resource's state, not its old inputs.
    pub fn against_state(mut self) -> Self {
        self.input_diff = false;
        self
    }

    /// Delete the old resource before creating its replacement.
    pub fn delete_before_replace(mut self, yes: bool) -> Self {
        self.delete_before_replace = yes;
        self
    }

    pub fn diff(&self, olds: &PropertyMap, news: &PropertyMap) -> DiffResponse {
        let mut detailed = Vec::new();
        let (mut diffs, mut replaces, mut stables) = (vec![], vec![], vec![]);
        let mut path = String::new();
        for (key, old, new) in union(olds, news) {
            if self.ignore.iter().any(|k| k == key) {
                continue;
            }
            let replace = self.replace_on.iter().any(|k| k == key);
            let before = detailed.len();
            path.clear();
            push_key(&mut path, key);
            self.compare(&mut path, old, new, replace, &mut detailed);
            if detailed.len() == before {
                stables.push(key.clone());
            } else {
                diffs.push(key.clone());
                if replace {
                    replaces.push(key.clone());
                }
            }
        }
        DiffResponse {
            changes: if diffs.is_empty() { DiffChanges::None } else { DiffChanges::Some },
            delete_before_replace: self.delete_before_replace && !replaces.is_empty(),
            replaces,
            stables,
            diffs,
            detailed_diff: Some(detailed),
        }
    }

    /// Compares the values at `path`, which is left as it was found: one
    /// buffer serves the whole walk, copied only where a difference is recorded.
    fn compare(
        &self,
        path: &mut String,
        old: Option<&Value>,
        new: Option<&Value>,
        replace: bool,
        out: &mut Vec<(String, PropertyDiff)>,
    ) {
        let kind = match (present(old), present(new)) {
            (None, None) => return,
            (None, Some(_)) => pick(replace, DiffKind::Add, DiffKind::AddReplace),
            (Some(_), None) => pick(replace, DiffKind::Delete, DiffKind::DeleteReplace),
            (Some(Value::Object(a)), Some(Value::Object(b))) => {
                let len = path.len();
                for (k, x, y) in union(a, b) {
                    push_key(path, k);
                    self.compare(path, x, y, replace, out);
                    path.truncate(len);
                }
                return;
            }
            (Some(Value::Array(a)), Some(Value::Array(b))) if a.len() == b.len() => {
                let len = path.len();
                for (i, (x, y)) in a.iter().zip(b).enumerate() {
                    push_index(path, i);
                    self.compare(path, Some(x), Some(y), replace, out);
                    path.truncate(len);
                }
                return;
            }
            (Some(a), Some(b)) if same(a, b) => return,
            _ => pick(replace, DiffKind::Update, DiffKind::UpdateReplace),
        };
        out.push((path.clone(), PropertyDiff { kind, input_diff: self.input_diff }));
    }
}

/// Every key of either map, in order, with its value on each side: one
/// pass over both sorted maps rather than a set of keys and a lookup per key.
fn union<'a>(
    a: &'a PropertyMap,
    b: &'a PropertyMap,
) -> impl Iterator<Item = (&'a String, Option<&'a Value>, Option<&'a Value>)> {
    use itertools::EitherOrBoth::{Both, Left, Right};
    itertools::merge_join_by(a, b, |(x, _), (y, _)| x.cmp(y)).map(|pair| match pair {
        Both((k, x), (_, y)) => (k, Some(x), Some(y)),
        Left((k, x)) => (k, Some(x), None),
        Right((k, y)) => (k, None, Some(y)),
    })
}

/// Unknown at this level: an unknown, an unknown output, or a reference
/// whose ID is not known yet.
fn unknown(v: &Value) -> bool {
    matches!(
        v,
        Value::Unknown(_)
            | Value::Output(Output { value: None, .. })
            | Value::ResourceRef(ResourceRef { id: Some(RefId::Unknown), .. })
    )
}

/// The value under secret and known-output wrappers, or `None` when it is
/// absent or null: a null property is an absent one, as in the engine's own diff.
fn present(v: Option<&Value>) -> Option<&Value> {
    v.map(Value::plain).filter(|v| !v.is_null())
}

fn pick(replace: bool, plain: DiffKind, replacing: DiffKind) -> DiffKind {
    if replace { replacing } else { plain }
}

/// Equal, ignoring secret wrappers and null properties (absent ones); an
/// unknown never equals anything. Assets and archives that both carry a
/// hash are equal when the hashes are, whatever their sources say, as in the
/// engine (whose `Equals` compares hashes only); without both, by value.
pub fn same(a: &Value, b: &Value) -> bool {
    match (a.plain(), b.plain()) {
        (a, b) if unknown(a) || unknown(b) => false,
        (Value::Asset(x), Value::Asset(y)) => same_hash(&x.hash, &y.hash).unwrap_or_else(|| x == y),
        (Value::Archive(x), Value::Archive(y)) => same_hash(&x.hash, &y.hash).unwrap_or_else(|| x == y),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b)),
        (Value::Object(x), Value::Object(y)) => union(x, y).all(|(_, v, w)| match (present(v), present(w)) {
            (None, None) => true,
            (Some(v), Some(w)) => same(v, w),
            _ => false,
        }),
        (x, y) => x == y,
    }
}

/// Whether two hashes agree, when both are known.
fn same_hash(a: &Option<String>, b: &Option<String>) -> Option<bool> {
    match (a.as_deref(), b.as_deref()) {
        (Some(a), Some(b)) if !a.is_empty() && !b.is_empty() => Some(a == b),
        _ => None,
    }
}

/// Appends a key to a Pulumi property path (`a.b`, `a["b.c"]`).
pub(crate) fn push_key(path: &mut String, key: &str) {
    use std::fmt::Write;
    let simple = key.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    match (path.is_empty(), simple) {
        (true, true) => path.push_str(key),
        (false, true) => {
            path.push('.');
            path.push_str(key);
        }
        (_, false) => {
            let _ = write!(path, "[{key:?}]");
        }
    }
}

/// Appends an array index to a Pulumi property path (`a[0]`).
pub(crate) fn push_index(path: &mut String, index: usize) {
    use std::fmt::Write;
    let _ = write!(path, "[{index}]");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::props;

    #[test]
    fn nested_changes_get_paths_and_replace_kinds() {
        let olds = props! { "length" => 8, "tags" => props! { "env" => "dev", "a.b" => 1 }, "keep" => "x" };
        let news =
            props! { "length" => 9, "tags" => props! { "env" => "prod" }, "keep" => Value::secret("x"), "new" => true };
        let d = Differ::new().replace_on_changes(&["length"]).diff(&olds, &news);
        assert_eq!(d.changes, DiffChanges::Some);
        assert_eq!(d.replaces, vec!["length"]);
        assert_eq!(d.diffs, vec!["length", "new", "tags"]);
        assert_eq!(d.stables, vec!["keep"]);
        let detailed: Vec<(String, DiffKind)> =
            d.detailed_diff.unwrap().into_iter().map(|(p, k)| (p, k.kind)).collect();
        assert_eq!(
            detailed,
            vec![
                ("length".to_string(), DiffKind::UpdateReplace),
                ("new".to_string(), DiffKind::Add),
                ("tags[\"a.b\"]".to_string(), DiffKind::Delete),
                ("tags.env".to_string(), DiffKind::Update),
            ]
        );
    }

    #[test]
    fn unknowns_are_changes_and_ignored_keys_are_skipped() {
        let olds = props! { "a" => 1, "b" => 2 };
        let news = props! { "a" => Value::Unknown(crate::UnknownKind::Number), "b" => 3 };
        let d = Differ::new().ignore(&["b"]).diff(&olds, &news);
        assert_eq!(d.diffs, vec!["a"]);
        let none = Differ::new().diff(&olds, &olds.clone());
        assert_eq!(none.changes, DiffChanges::None);
    }

    #[test]
    fn an_unknown_output_is_a_change_even_against_itself() {
        let unknown = Value::Output(Output { value: None, secret: false, dependencies: vec!["urn:a".into()] });
        assert!(!same(&unknown, &unknown.clone()));
        let m = props! { "a" => unknown };
        assert_eq!(Differ::new().diff(&m, &m.clone()).diffs, vec!["a"]);
    }

    #[test]
    fn assets_and_archives_with_hashes_compare_by_hash() {
        use crate::value::{Archive, ArchiveSource, Asset, AssetSource};
        let text = |hash: Option<&str>, t: &str| {
            Value::Asset(Asset { hash: hash.map(str::to_owned), source: Some(AssetSource::Text(t.into())) })
        };
        // The engine's rule: the hash decides, not the contents.
        assert!(same(&text(Some("h1"), "a"), &text(Some("h1"), "b")));
        assert!(!same(&text(Some("h1"), "a"), &text(Some("h2"), "a")));
        // Without both hashes, by value.
        assert!(same(&text(None, "a"), &text(None, "a")));
        assert!(!same(&text(None, "a"), &text(None, "b")));
        assert!(!same(&text(Some("h1"), "a"), &text(None, "a")));
        let archive = |hash: &str, path: &str| {
            Value::Archive(Archive { hash: Some(hash.into()), source: Some(ArchiveSource::Path(path.into())) })
        };
        assert!(same(&archive("h", "a.zip"), &archive("h", "b.zip")));
        assert!(!same(&archive("h", "a.zip"), &archive("g", "a.zip")));
        let m = |v: Value| props! { "content" => v };
        let d = Differ::new().diff(&m(text(Some("h1"), "a")), &m(Value::secret(text(Some("h1"), "b"))));
        assert_eq!(d.changes, DiffChanges::None, "{d:?}");
    }

    #[test]
    fn null_is_absent() {
        let olds = props! { "a" => 1, "gone" => Value::Null, "inner" => props! { "x" => Value::Null } };
        let news = props! { "a" => 1, "new" => Value::Null, "inner" => props! {} };
        let d = Differ::new().diff(&olds, &news);
        assert_eq!(d.changes, DiffChanges::None, "{d:?}");
        assert_eq!(d.stables, vec!["a", "gone", "inner", "new"]);
        let d = Differ::new().diff(&olds, &props! { "a" => Value::Null });
        assert_eq!(d.diffs, vec!["a", "inner"]);
        assert_eq!(d.detailed_diff.unwrap()[0].1.kind, DiffKind::Delete);
    }
}
