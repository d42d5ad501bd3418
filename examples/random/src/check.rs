//! Input validation shared by every resource and the invoke.
//!
//! A [`Checker`] reads one property at a time, records a [`CheckFailure`]
//! (named by the property path) for each type or range error, applies
//! defaults, and copies every value it accepts into the checked inputs
//! untouched, so secret wrappers are kept. Unknown values (previews) are
//! passed through as they are and read as "not known yet" (`None`).

use pulumi_wasm_sdk::{CheckFailure, CheckResponse, PropertyMap, Value};

/// An integer property: its default (`None` = required) and inclusive range.
#[derive(Clone, Copy, Debug)]
pub struct Int {
    pub default: Option<i64>,
    pub min: i64,
    pub max: i64,
}

impl Int {
    pub fn required(min: i64, max: i64) -> Self {
        Int { default: None, min, max }
    }

    pub fn defaults_to(default: i64, min: i64, max: i64) -> Self {
        Int { default: Some(default), min, max }
    }
}

/// What a property holds, once nulls are read as absent.
enum Slot<'a> {
    Absent,
    Unknown,
    Known(&'a Value),
}

pub struct Checker<'a> {
    news: &'a PropertyMap,
    allowed: &'a [&'a str],
    inputs: PropertyMap,
    failures: Vec<CheckFailure>,
    require_known: bool,
}

impl<'a> Checker<'a> {
    /// Checks `news`, whose only valid keys are `allowed`.
    pub fn new(news: &'a PropertyMap, allowed: &'a [&'a str]) -> Self {
        Checker { news, allowed, inputs: PropertyMap::new(), failures: vec![], require_known: false }
    }

    /// Unknown values are failures (for functions, which never take unknowns).
    pub fn require_known(mut self) -> Self {
        self.require_known = true;
        self
    }

    pub fn fail(&mut self, property: &str, reason: impl Into<String>) {
        self.failures.push(CheckFailure { property: property.to_owned(), reason: reason.into() });
    }

    fn slot(&mut self, key: &str) -> Slot<'a> {
        let news: &'a PropertyMap = self.news;
        match news.get(key) {
            None => Slot::Absent,
            Some(v) if v.contains_unknowns() => {
                self.inputs.insert(key.to_owned(), v.clone());
                if self.require_known {
                    self.fail(key, "must be known");
                }
                Slot::Unknown
            }
            Some(v) if v.plain().is_null() => Slot::Absent,
            Some(v) => {
                self.inputs.insert(key.to_owned(), v.clone());
                Slot::Known(v)
            }
        }
    }

    /// A whole number in the range of `rule`.
    pub fn integer(&mut self, key: &str, rule: Int) -> Option<i64> {
        let v = match self.slot(key) {
            Slot::Unknown => return None,
            Slot::Absent => {
                let Some(d) = rule.default else {
                    self.fail(key, "is required");
                    return None;
                };
                self.inputs.insert(key.to_owned(), Value::from(d));
                return Some(d);
            }
            Slot::Known(v) => v,
        };
        let Some(n) = v.as_f64() else {
            self.fail(key, format!("must be a number, not a {}", v.plain().kind_name()));
            return None;
        };
        if !n.is_finite() || n.fract() != 0.0 {
            self.fail(key, "must be a whole number");
            None
        } else if n < rule.min as f64 {
            self.fail(key, format!("must be at least {}", rule.min));
            None
        } else if n > rule.max as f64 {
            self.fail(key, format!("must be at most {}", rule.max));
            None
        } else {
            Some(n as i64)
        }
    }

    pub fn boolean(&mut self, key: &str, default: bool) -> Option<bool> {
        match self.slot(key) {
            Slot::Unknown => None,
            Slot::Absent => {
                self.inputs.insert(key.to_owned(), Value::Bool(default));
                Some(default)
            }
            Slot::Known(v) => {
                let b = v.as_bool();
                if b.is_none() {
                    self.fail(key, format!("must be a boolean, not a {}", v.plain().kind_name()));
                }
                b
            }
        }
    }

    /// A string with a default.
    pub fn string(&mut self, key: &str, default: &str) -> Option<String> {
        match self.slot(key) {
            Slot::Unknown => None,
            Slot::Absent => {
                self.inputs.insert(key.to_owned(), Value::from(default));
                Some(default.to_owned())
            }
            Slot::Known(v) => self.known_string(key, v),
        }
    }

    /// A string without a default: `Some(None)` when absent, `None` when not known.
    pub fn optional_string(&mut self, key: &str) -> Option<Option<String>> {
        match self.slot(key) {
            Slot::Unknown => None,
            Slot::Absent => Some(None),
            Slot::Known(v) => self.known_string(key, v).map(Some),
        }
    }

    fn known_string(&mut self, key: &str, v: &Value) -> Option<String> {
        let s = v.as_str().map(str::to_owned);
        if s.is_none() {
            self.fail(key, format!("must be a string, not a {}", v.plain().kind_name()));
        }
        s
    }

    /// A map of strings (e.g. `keepers`); unknown entries are accepted.
    pub fn string_map(&mut self, key: &str) {
        // Not `slot`: a map with some unknown entries still has its known ones checked.
        let news: &'a PropertyMap = self.news;
        let Some(v) = news.get(key).filter(|v| !v.plain().is_null()) else {
            return;
        };
        self.inputs.insert(key.to_owned(), v.clone());
        let Some(entries) = v.as_object() else {
            if !v.contains_unknowns() {
                self.fail(key, format!("must be a map of strings, not a {}", v.plain().kind_name()));
            }
            return;
        };
        for (k, e) in entries {
            if !e.contains_unknowns() && e.as_str().is_none() {
                let reason = format!("must be a string, not a {}", e.plain().kind_name());
                self.fail(&path_key(key, k), reason);
            }
        }
    }

    /// The checked inputs (defaults applied) and the failures. Keys that are
    /// not inputs of the resource are failures.
    pub fn finish(mut self) -> CheckResponse {
        for (k, v) in self.news {
            if !self.allowed.contains(&k.as_str()) && !v.plain().is_null() {
                self.failures.push(CheckFailure { property: k.clone(), reason: "is not a known property".to_owned() });
                self.inputs.insert(k.clone(), v.clone());
            }
        }
        CheckResponse { inputs: self.inputs, failures: self.failures }
    }
}

/// `map.key`, or `map["odd key"]` when the key is not a plain identifier.
fn path_key(map: &str, key: &str) -> String {
    let plain = key.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if plain { format!("{map}.{key}") } else { format!("{map}[{key:?}]") }
}

/// One line for an error message: `length: must be at least 1; ...`.
pub fn describe(failures: &[CheckFailure]) -> String {
    let parts: Vec<String> = failures.iter().map(|f| format!("{}: {}", f.property, f.reason)).collect();
    parts.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use pulumi_wasm_sdk::{UnknownKind, props};

    #[test]
    fn defaults_types_ranges_and_unknowns() {
        let news = props! {
            "n" => Value::secret(3),
            "big" => 2000,
            "half" => 1.5,
            "b" => "yes",
            "u" => Value::Unknown(UnknownKind::Number),
            "m" => props! { "ok" => "x", "bad key" => 1, "later" => Value::Unknown(UnknownKind::String) },
            "extra" => 1,
        };
        let allowed = ["n", "big", "half", "b", "u", "m", "d"];
        let mut c = Checker::new(&news, &allowed);
        assert_eq!(c.integer("n", Int::required(1, 10)), Some(3));
        assert_eq!(c.integer("big", Int::required(1, 1024)), None);
        assert_eq!(c.integer("half", Int::required(0, 10)), None);
        assert_eq!(c.boolean("b", true), None);
        assert_eq!(c.integer("u", Int::required(1, 10)), None);
        assert_eq!(c.integer("d", Int::defaults_to(7, 0, 10)), Some(7));
        c.string_map("m");
        let r = c.finish();
        let got: Vec<(&str, &str)> = r.failures.iter().map(|f| (f.property.as_str(), f.reason.as_str())).collect();
        assert_eq!(
            got,
            vec![
                ("big", "must be at most 1024"),
                ("half", "must be a whole number"),
                ("b", "must be a boolean, not a string"),
                ("m[\"bad key\"]", "must be a string, not a number"),
                ("extra", "is not a known property"),
            ]
        );
        assert_eq!(r.inputs["n"], Value::secret(3), "secrets are kept");
        assert_eq!(r.inputs["u"], Value::Unknown(UnknownKind::Number), "unknowns pass through");
        assert_eq!(r.inputs["d"], Value::Number(7.0), "defaults are applied");
    }

    #[test]
    fn required_and_known_only() {
        let news = props! { "a" => Value::Unknown(UnknownKind::Number), "s" => Value::Null };
        let mut c = Checker::new(&news, &["a", "b", "s"]).require_known();
        assert_eq!(c.integer("a", Int::required(0, 1)), None);
        assert_eq!(c.integer("b", Int::required(0, 1)), None);
        assert_eq!(c.optional_string("s"), Some(None), "null reads as absent");
        assert_eq!(describe(&c.finish().failures), "a: must be known; b: is required");
    }
}
