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
    /// Paths below the top level (`tags.env`, `items[*].name`), as segments.
    replace_below: Vec<Vec<Seg>>,
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
        Differ {
            replace_on: vec![],
            replace_below: vec![],
            ignore: vec![],
            input_diff: true,
            delete_before_replace: false,
        }
    }

    /// A change under any of these forces a replacement: top-level keys,
    /// or property paths (`tags.env`, `items[*].name`; `*` is any key or
    /// index, and `*` alone every property), as Pulumi's `replaceOnChanges`
    /// takes them. A top-level key spelled like a path (`a.b`) is that key
    /// too, where the inputs have it. A value not known yet above such a
    /// path counts as replacing: it may change below.
    pub fn replace_on_changes<S: AsRef<str>>(mut self, keys: &[S]) -> Self {
        for key in keys.iter().map(AsRef::as_ref) {
            self.replace_on.push(key.to_owned());
            // Most are plain keys: those are not parsed.
            if !key.contains(['.', '[', '*']) {
                continue;
            }
            match segments(key) {
                Some(path) if path.len() > 1 || path[0] == Seg::Any => self.replace_below.push(path),
                _ => {}
            }
        }
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
                let replacing = |(_, d): &(String, PropertyDiff)| {
                    matches!(d.kind, DiffKind::AddReplace | DiffKind::DeleteReplace | DiffKind::UpdateReplace)
                };
                if replace || self.replaces_below(&mut detailed[before..]) || detailed[before..].iter().any(replacing) {
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

    /// Marks the changes under a path given to `replace_on_changes` as
    /// replacing; whether there were any. The engine's own `replaceOnChanges`
    /// does the same to a detailed diff: a change at or below the path.
    fn replaces_below(&self, changes: &mut [(String, PropertyDiff)]) -> bool {
        if self.replace_below.is_empty() {
            return false;
        }
        let mut any = false;
        for (path, change) in changes {
            let Some(at) = segments(path) else { continue };
            let under = |p: &Vec<Seg>| p.len() <= at.len() && p.iter().zip(&at).all(|(p, a)| *p == Seg::Any || p == a);
            if self.replace_below.iter().any(under) {
                change.kind = match change.kind {
                    DiffKind::Add => DiffKind::AddReplace,
                    DiffKind::Delete => DiffKind::DeleteReplace,
                    DiffKind::Update => DiffKind::UpdateReplace,
                    replacing => replacing,
                };
                any = true;
            }
        }
        any
    }

    /// Whether a path given to `replace_on_changes` lies below `path`.
    fn may_replace_under(&self, path: &str) -> bool {
        let Some(at) = segments(path) else { return false };
        let above = |p: &Vec<Seg>| p.len() > at.len() && p.iter().zip(&at).all(|(p, a)| *p == Seg::Any || p == a);
        self.replace_below.iter().any(above)
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
            // Element by element, then the extra ones added or deleted, as
            // the engine's own diff of arrays: a change to the first subnet's
            // CIDR is still `subnets[0].cidr` when a subnet is added too.
            (Some(Value::Array(a)), Some(Value::Array(b))) => {
                let len = path.len();
                for (i, (x, y)) in a.iter().zip(b).enumerate() {
                    push_index(path, i);
                    self.compare(path, Some(x), Some(y), replace, out);
                    path.truncate(len);
                }
                let extra = |kind| PropertyDiff { kind, input_diff: self.input_diff };
                for i in b.len()..a.len() {
                    push_index(path, i);
                    out.push((path.clone(), extra(pick(replace, DiffKind::Delete, DiffKind::DeleteReplace))));
                    path.truncate(len);
                }
                for i in a.len()..b.len() {
                    push_index(path, i);
                    out.push((path.clone(), extra(pick(replace, DiffKind::Add, DiffKind::AddReplace))));
                    path.truncate(len);
                }
                return;
            }
            (Some(a), Some(b)) if same(a, b) => return,
            // Not known yet, with a replacing path below it: it may change
            // there, so the preview says replace rather than promise an update.
            (_, Some(b)) if unknown(b) && self.may_replace_under(path) => DiffKind::UpdateReplace,
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
        // Pulumi's paths escape only `"` inside a quoted key.
        (_, false) => {
            let _ = write!(path, "[\"{}\"]", key.replace('"', "\\\""));
        }
    }
}

/// One step of a property path; `*` in a pattern is any key or index.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Seg {
    Key(String),
    Index(usize),
    Any,
}

/// Whether one of two property paths (or patterns, `*` any key or index)
/// lies at or below the other, as the engine relates a `replaceOnChanges`
/// path to a changed one; paths that do not parse relate to nothing.
pub(crate) fn related(a: &str, b: &str) -> bool {
    let (Some(a), Some(b)) = (segments(a), segments(b)) else { return false };
    a.iter().zip(&b).all(|(x, y)| *x == Seg::Any || *y == Seg::Any || x == y)
}

/// A property path as [`push_key`] and [`push_index`] write it (`a.b`,
/// `a["x.y"]`, `a[0]`), or as a pattern (`a[*].b`, `a.*`); `None` when it
/// is not one.
fn segments(path: &str) -> Option<Vec<Seg>> {
    let mut out = Vec::new();
    let mut rest = path;
    while !rest.is_empty() {
        if let Some(inner) = rest.strip_prefix('[') {
            if let Some(quoted) = inner.strip_prefix('"') {
                let (key, after) = unquote(quoted)?;
                out.push(Seg::Key(key));
                rest = after.strip_prefix(']')?;
            } else {
                let (inside, after) = inner.split_once(']')?;
                out.push(if inside == "*" { Seg::Any } else { Seg::Index(inside.parse().ok()?) });
                rest = after;
            }
            continue;
        }
        if !out.is_empty() {
            rest = rest.strip_prefix('.')?;
        }
        let end = rest.find(['.', '[']).unwrap_or(rest.len());
        let (key, after) = rest.split_at(end);
        if key.is_empty() {
            return None;
        }
        out.push(if key == "*" { Seg::Any } else { Seg::Key(key.to_owned()) });
        rest = after;
    }
    (!out.is_empty()).then_some(out)
}

/// A quoted key after its opening quote, as Pulumi parses one: `\"` is a
/// quote, any other backslash itself. The key, and what follows its closing quote.
fn unquote(s: &str) -> Option<(String, &str)> {
    let mut key = String::new();
    let mut chars = s.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Some((key, &s[i + 1..])),
            '\\' if chars.next_if(|(_, c)| *c == '"').is_some() => key.push('"'),
            c => key.push(c),
        }
    }
    None
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

    /// Paths below the top level, as `replaceOnChanges` takes them: a
    /// change at or below one replaces; beside it, or above it, does not.
    #[test]
    fn nested_replace_paths_replace_only_what_is_under_them() {
        let olds = props! {
            "tags" => props! { "env" => "dev", "team" => "a", "a.b" => 1 },
            "items" => vec![Value::from(props! { "name" => "x", "n" => 1 })],
        };
        let differ = Differ::new().replace_on_changes(&["tags.env", "items[*].name", r#"tags["a.b"]"#]);
        let kinds = |news: PropertyMap| {
            let d = differ.diff(&olds, &news);
            let detailed: Vec<(String, DiffKind)> =
                d.detailed_diff.unwrap().into_iter().map(|(p, d)| (p, d.kind)).collect();
            (d.replaces, detailed)
        };
        let tags = |env: &str, team: &str, ab: i32| props! { "env" => env, "team" => team, "a.b" => ab };
        let items = |name: &str, n: i32| vec![Value::from(props! { "name" => name, "n" => n })];
        let (replaces, detailed) = kinds(props! { "tags" => tags("prod", "a", 1), "items" => items("x", 1) });
        assert_eq!((replaces, detailed), (vec!["tags".to_owned()], vec![("tags.env".into(), DiffKind::UpdateReplace)]));
        let (replaces, detailed) = kinds(props! { "tags" => tags("dev", "b", 1), "items" => items("x", 2) });
        assert!(replaces.is_empty(), "{detailed:?}");
        assert_eq!(detailed, [("items[0].n".into(), DiffKind::Update), ("tags.team".into(), DiffKind::Update)]);
        let (replaces, detailed) = kinds(props! { "tags" => tags("dev", "a", 2), "items" => items("y", 1) });
        assert_eq!(replaces, ["items", "tags"]);
        assert_eq!(
            detailed,
            [("items[0].name".into(), DiffKind::UpdateReplace), (r#"tags["a.b"]"#.into(), DiffKind::UpdateReplace)]
        );
        // `*` is any key; a pattern that is not a path is a top-level key as given.
        let d = Differ::new().replace_on_changes(&["tags.*"]).diff(&olds, &props! { "tags" => tags("dev", "b", 1) });
        assert!(d.replaces.contains(&"tags".to_owned()), "{d:?}");
        assert_eq!(segments("a[0].b"), Some(vec![Seg::Key("a".into()), Seg::Index(0), Seg::Key("b".into())]));
        assert_eq!(segments(r#"["x\"y"].z"#), Some(vec![Seg::Key("x\"y".into()), Seg::Key("z".into())]));
        for bad in ["a..b", "a[", "a[x]", ".a", "a.", "[\"open"] {
            assert_eq!(segments(bad), None, "{bad}");
        }
    }

    /// Lists of different lengths are still compared element by element,
    /// as the engine's diff does: a replacing change is not hidden by an
    /// added element. An element added or removed is not a change below it.
    #[test]
    fn a_list_that_grows_or_shrinks_keeps_its_element_changes() {
        let item = |name: &str| Value::from(props! { "name" => name, "n" => 1 });
        let differ = Differ::new().replace_on_changes(&["items[*].name"]);
        let kinds = |olds: Vec<Value>, news: Vec<Value>| {
            let d = differ.diff(&props! { "items" => olds }, &props! { "items" => news });
            let detailed: Vec<(String, DiffKind)> =
                d.detailed_diff.unwrap().into_iter().map(|(p, d)| (p, d.kind)).collect();
            (d.replaces, detailed)
        };
        let (replaces, detailed) = kinds(vec![item("x")], vec![item("y"), item("z")]);
        assert_eq!(replaces, ["items"]);
        assert_eq!(detailed, [("items[0].name".into(), DiffKind::UpdateReplace), ("items[1]".into(), DiffKind::Add)]);
        let (replaces, detailed) = kinds(vec![item("x"), item("z")], vec![item("x")]);
        assert!(replaces.is_empty(), "{detailed:?}");
        assert_eq!(detailed, [("items[1]".into(), DiffKind::Delete)]);
        let (_, detailed) = kinds(vec![], vec![item("x")]);
        assert_eq!(detailed, [("items[0]".into(), DiffKind::Add)]);
        // A top-level replacing key replaces whatever its elements do.
        let d = Differ::new()
            .replace_on_changes(&["items"])
            .diff(&props! { "items" => vec![item("x")] }, &props! { "items" => vec![item("x"), item("y")] });
        assert_eq!(d.replaces, ["items"]);
        let detailed = d.detailed_diff.unwrap();
        assert_eq!((detailed[0].0.as_str(), detailed[0].1.kind), ("items[1]", DiffKind::AddReplace));
    }

    /// An unknown with a replacing path below it may replace: the preview
    /// says so. Elsewhere an unknown is an update.
    #[test]
    fn an_unknown_above_a_replacing_path_previews_a_replacement() {
        let unknown = || Value::Unknown(crate::UnknownKind::Array);
        let olds = props! { "items" => vec![Value::from(props! { "name" => "x" })], "tags" => props! { "env" => "a" }, "n" => 1 };
        let differ = Differ::new().replace_on_changes(&["items[*].name", "tags.env"]);
        let d =
            differ.diff(&olds, &props! { "items" => unknown(), "tags" => props! { "env" => "a" }, "n" => unknown() });
        assert_eq!((d.replaces, d.diffs), (vec!["items".to_owned()], vec!["items".to_owned(), "n".to_owned()]));
        let element = props! { "items" => vec![unknown()], "tags" => unknown(), "n" => 1 };
        let d = differ.diff(&olds, &element);
        let detailed: Vec<(String, DiffKind)> =
            d.detailed_diff.unwrap().into_iter().map(|(p, d)| (p, d.kind)).collect();
        assert_eq!(detailed, [("items[0]".into(), DiffKind::UpdateReplace), ("tags".into(), DiffKind::UpdateReplace)]);
        let d = Differ::new()
            .replace_on_changes(&["tags.env"])
            .diff(&olds, &props! { "tags" => props! { "team" => unknown() } });
        assert!(d.replaces.contains(&"tags".to_owned()), "env went away: {d:?}");
    }

    /// Keys in paths are quoted as Pulumi parses them: only `"` is escaped.
    #[test]
    fn quoted_keys_escape_only_quotes() {
        let mut path = String::from("m");
        push_key(&mut path, r#"C:\tmp "x""#);
        assert_eq!(path, r#"m["C:\tmp \"x\""]"#);
        assert_eq!(segments(&path), Some(vec![Seg::Key("m".into()), Seg::Key(r#"C:\tmp "x""#.into())]));
        let d =
            Differ::new().diff(&props! { "m" => props! { "a\nb" => 1 } }, &props! { "m" => props! { "a\nb" => 2 } });
        assert_eq!(d.detailed_diff.unwrap()[0].0, "m[\"a\nb\"]", "a newline is itself");
        let d = Differ::new()
            .replace_on_changes(&[r#"m["C:\tmp"]"#])
            .diff(&props! { "m" => props! { r"C:\tmp" => 1 } }, &props! { "m" => props! { r"C:\tmp" => 2 } });
        assert_eq!(d.replaces, ["m"]);
    }

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

    /// As the engine relates a program's `replaceOnChanges` to a change.
    #[test]
    fn paths_are_related_at_above_or_below_each_other() {
        assert!(related("tags", "tags.env") && related("tags.env", "tags") && related("tags", "tags"));
        assert!(related("items[*].name", "items[2].name") && related("*", "anything"));
        assert!(!related("tags.env", "tags.team") && !related("a", "b") && !related("a..b", "a"));
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
