//! `RandomString` and `RandomPassword`: a string of characters drawn from the
//! enabled classes, with at least `min*` characters of each class.

use pulumi_wasm_sdk::{PropertyMap, Result, UnknownKind, Value, props};

use crate::Generated;
use crate::check::{Checker, Int};
use crate::rng::{Rng, choose, shuffle};

pub const INPUTS: &[&str] = &[
    "length",
    "special",
    "upper",
    "lower",
    "numeric",
    "overrideSpecial",
    "minUpper",
    "minLower",
    "minNumeric",
    "minSpecial",
    "keepers",
];

pub const MAX_LENGTH: i64 = 1024;

/// The special characters used unless `overrideSpecial` is set.
pub const DEFAULT_SPECIAL: &str = "!@#$%&*()-_=+[]{}<>:?";

/// Character classes: the flag that enables one, its minimum count, its characters.
const CLASSES: [(&str, &str, &str); 4] = [
    ("upper", "minUpper", "ABCDEFGHIJKLMNOPQRSTUVWXYZ"),
    ("lower", "minLower", "abcdefghijklmnopqrstuvwxyz"),
    ("numeric", "minNumeric", "0123456789"),
    ("special", "minSpecial", DEFAULT_SPECIAL),
];

/// An enabled character class.
#[derive(Clone, Debug, PartialEq)]
pub struct Class {
    pub chars: Vec<char>,
    pub min: usize,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Params {
    pub length: usize,
    pub classes: Vec<Class>,
}

/// Validates the inputs; the parameters once everything is known and valid.
pub fn check(c: &mut Checker) -> Option<Params> {
    let length = c.integer("length", Int::required(1, MAX_LENGTH));
    let special = match c.optional_string("overrideSpecial") {
        Some(Some(s)) if !s.is_empty() => Some(s),
        Some(_) => Some(DEFAULT_SPECIAL.to_owned()),
        None => None,
    };
    c.string_map("keepers");

    // (enabled, min, characters) per class; `None` = not known yet.
    let mut classes = Vec::new();
    for (flag, min_key, chars) in CLASSES {
        let enabled = c.boolean(flag, true);
        let min = c.integer(min_key, Int::defaults_to(0, 0, MAX_LENGTH));
        if enabled == Some(false) && min.is_some_and(|m| m > 0) {
            c.fail(min_key, format!("must be 0 when `{flag}` is false"));
        }
        let chars = if flag == "special" { special.clone() } else { Some(chars.to_owned()) };
        classes.push((enabled, min, chars));
    }

    if classes.iter().all(|(enabled, ..)| *enabled == Some(false)) {
        c.fail("special", "at least one of `upper`, `lower`, `numeric` and `special` must be true");
    }
    let min_total: Option<i64> = classes.iter().map(|(_, min, _)| *min).sum();
    if let (Some(length), Some(total)) = (length, min_total)
        && total > length
    {
        c.fail(
            "length",
            format!("must be at least the sum of minUpper, minLower, minNumeric and minSpecial ({total})"),
        );
    }

    let mut enabled = Vec::new();
    for (on, min, chars) in classes {
        if on? {
            enabled.push(Class { chars: chars?.chars().collect(), min: min? as usize });
        }
    }
    Some(Params { length: length? as usize, classes: enabled })
}

/// Draws the string: the minimum of each class first, the rest from all
/// enabled classes, then shuffles so the minimums are not in front.
pub fn generate(p: &Params, rng: &mut dyn Rng) -> Result<String> {
    let mut out: Vec<char> = Vec::with_capacity(p.length);
    for class in &p.classes {
        for _ in 0..class.min {
            out.push(*choose(rng, &class.chars)?);
        }
    }
    let pool: Vec<char> = p.classes.iter().flat_map(|c| c.chars.iter().copied()).collect();
    while out.len() < p.length {
        out.push(*choose(rng, &pool)?);
    }
    shuffle(rng, &mut out)?;
    Ok(out.into_iter().collect())
}

/// A `RandomString` (its ID is the result) or a `RandomPassword` (its result
/// is secret and its ID is `none`, as in pulumi-random).
pub fn create(p: &Params, rng: &mut dyn Rng, password: bool) -> Result<Generated> {
    let result = generate(p, rng)?;
    Ok(if password {
        Generated {
            id: "none".to_owned(),
            outputs: props! { "result" => Value::secret(result) },
            summary: format!("generated a random password of {} characters", p.length),
        }
    } else {
        Generated {
            id: result.clone(),
            outputs: props! { "result" => result },
            summary: format!("generated a random string of {} characters", p.length),
        }
    })
}

pub fn unknown_outputs(password: bool) -> PropertyMap {
    let unknown = Value::Unknown(UnknownKind::String);
    props! { "result" => if password { Value::secret(unknown) } else { unknown } }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;

    fn params(news: PropertyMap) -> (Option<Params>, Vec<(String, String)>) {
        let mut c = Checker::new(&news, INPUTS);
        let p = check(&mut c);
        let failures = c.finish().failures.into_iter().map(|f| (f.property, f.reason)).collect();
        (p, failures)
    }

    #[test]
    fn defaults_enable_every_class() {
        let (p, failures) = params(props! { "length" => 12 });
        assert!(failures.is_empty());
        let p = p.unwrap();
        assert_eq!(p.length, 12);
        assert_eq!(p.classes.len(), 4);
        assert_eq!(p.classes[3].chars, DEFAULT_SPECIAL.chars().collect::<Vec<_>>());
    }

    #[test]
    fn generation_honours_classes_and_minimums() {
        let (p, failures) = params(props! {
            "length" => 20, "lower" => false, "overrideSpecial" => "_~",
            "minUpper" => 5, "minNumeric" => 6, "minSpecial" => 7,
        });
        assert!(failures.is_empty(), "{failures:?}");
        let p = p.unwrap();
        let mut rng = SplitMix64::new(42);
        for _ in 0..200 {
            let s = generate(&p, &mut rng).unwrap();
            assert_eq!(s.chars().count(), 20);
            assert!(s.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_' || c == '~'), "{s}");
            assert!(s.chars().filter(char::is_ascii_uppercase).count() >= 5, "{s}");
            assert!(s.chars().filter(char::is_ascii_digit).count() >= 6, "{s}");
            assert!(s.chars().filter(|c| *c == '_' || *c == '~').count() >= 7, "{s}");
        }
    }

    #[test]
    fn only_numeric() {
        let (p, _) = params(props! { "length" => 64, "upper" => false, "lower" => false, "special" => false });
        let s = generate(&p.unwrap(), &mut SplitMix64::new(1)).unwrap();
        assert!(s.chars().all(|c| c.is_ascii_digit()), "{s}");
    }

    #[test]
    fn check_failures_name_the_property() {
        let cases = [
            (props! { "length" => 0 }, "length", "must be at least 1"),
            (props! { "length" => 2000 }, "length", "must be at most 1024"),
            (props! {}, "length", "is required"),
            (props! { "length" => "8" }, "length", "must be a number, not a string"),
            (
                props! { "length" => 4, "minUpper" => 3, "minLower" => 2 },
                "length",
                "must be at least the sum of minUpper, minLower, minNumeric and minSpecial (5)",
            ),
            (
                props! { "length" => 4, "upper" => false, "minUpper" => 1 },
                "minUpper",
                "must be 0 when `upper` is false",
            ),
            (
                props! { "length" => 4, "upper" => false, "lower" => false, "numeric" => false, "special" => false },
                "special",
                "at least one of `upper`, `lower`, `numeric` and `special` must be true",
            ),
            (props! { "length" => 4, "keepers" => props! { "k" => 1 } }, "keepers.k", "must be a string, not a number"),
            (props! { "length" => 4, "bogus" => 1 }, "bogus", "is not a known property"),
        ];
        for (news, property, reason) in cases {
            let (_, failures) = params(news);
            assert_eq!(failures, vec![(property.to_owned(), reason.to_owned())]);
        }
    }

    #[test]
    fn unknown_inputs_pass_through_without_failures() {
        let news =
            props! { "length" => Value::Unknown(UnknownKind::Number), "upper" => Value::Unknown(UnknownKind::Bool) };
        let mut c = Checker::new(&news, INPUTS);
        assert_eq!(check(&mut c), None);
        let r = c.finish();
        assert!(r.failures.is_empty());
        assert_eq!(r.inputs["length"], Value::Unknown(UnknownKind::Number));
        assert_eq!(r.inputs["lower"], Value::Bool(true));
        assert_eq!(r.inputs["minSpecial"], Value::Number(0.0));
    }

    #[test]
    fn password_result_is_secret() {
        let (p, _) = params(props! { "length" => 16 });
        let g = create(&p.unwrap(), &mut SplitMix64::new(3), true).unwrap();
        assert_eq!(g.id, "none");
        assert!(matches!(&g.outputs["result"], Value::Secret(inner) if inner.as_str().unwrap().len() == 16));
    }
}
