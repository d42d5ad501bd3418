//! `RandomString` and `RandomPassword`: a string of characters drawn from the
//! enabled classes, with at least `min*` characters of each class.

use std::collections::BTreeMap;

use pulumi_wasm_sdk::typed::*;

use crate::rng::{Rng, SecureRng, choose, shuffle};

pub const MAX_LENGTH: u32 = 1024;

/// The special characters used unless `overrideSpecial` is set.
pub const DEFAULT_SPECIAL: &str = "!@#$%&*()-_=+[]{}<>:?";

#[derive(PulumiType, Clone, Debug, PartialEq)]
#[pulumi(replace_on_changes)]
pub struct StringArgs {
    /// The length of the string desired. Between 1 and 1024; at least the sum of the `min*` counts.
    #[pulumi(min = 1, max = MAX_LENGTH)]
    pub length: u32,
    /// Include uppercase alphabet characters in the result.
    #[pulumi(default = true)]
    pub upper: bool,
    /// Include lowercase alphabet characters in the result.
    #[pulumi(default = true)]
    pub lower: bool,
    /// Include numeric characters in the result.
    #[pulumi(default = true)]
    pub numeric: bool,
    /// Include special characters in the result. These are `!@#$%&*()-_=+[]{}<>:?` unless `overrideSpecial` is set.
    #[pulumi(default = true)]
    pub special: bool,
    /// Supply your own list of special characters to use for string generation. This overrides the default
    /// character list in the special argument. The `special` argument must still be set to true for any
    /// overwritten characters to be used in generation.
    pub override_special: Option<String>,
    /// Minimum number of uppercase alphabet characters in the result. Must be 0 when `upper` is false.
    #[pulumi(default = 0, max = MAX_LENGTH)]
    pub min_upper: u32,
    /// Minimum number of lowercase alphabet characters in the result. Must be 0 when `lower` is false.
    #[pulumi(default = 0, max = MAX_LENGTH)]
    pub min_lower: u32,
    /// Minimum number of numeric characters in the result. Must be 0 when `numeric` is false.
    #[pulumi(default = 0, max = MAX_LENGTH)]
    pub min_numeric: u32,
    /// Minimum number of special characters in the result. Must be 0 when `special` is false.
    #[pulumi(default = 0, max = MAX_LENGTH)]
    pub min_special: u32,
    /// Arbitrary map of values that, when changed, will trigger recreation of the resource.
    pub keepers: Option<BTreeMap<String, String>>,
}

/// Generates a random permutation of alphanumeric characters and optionally special characters. The result is
/// not secret: use `RandomPassword` for passwords. The resource's ID is the result. Changing any input generates a
/// new string.
#[derive(PulumiType)]
pub struct StringState {
    #[pulumi(flatten)]
    pub args: StringArgs,
    /// The generated random string.
    pub result: String,
}

/// Identical to `RandomString`, except that the result is treated as a secret. The resource's ID is `none`.
#[derive(PulumiType)]
pub struct PasswordState {
    #[pulumi(flatten)]
    pub args: StringArgs,
    /// The generated random string.
    #[pulumi(secret)]
    pub result: String,
}

/// A character class: whether it is on, its minimum count, its characters.
struct Class<'a> {
    on: bool,
    min: u32,
    chars: &'a str,
    flag: &'static str,
    min_key: &'static str,
}

impl StringArgs {
    fn classes(&self) -> [Class<'_>; 4] {
        let special = self.override_special.as_deref().filter(|s| !s.is_empty()).unwrap_or(DEFAULT_SPECIAL);
        let class = |on, min, chars, flag, min_key| Class { on, min, chars, flag, min_key };
        [
            class(self.upper, self.min_upper, "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "upper", "minUpper"),
            class(self.lower, self.min_lower, "abcdefghijklmnopqrstuvwxyz", "lower", "minLower"),
            class(self.numeric, self.min_numeric, "0123456789", "numeric", "minNumeric"),
            class(self.special, self.min_special, special, "special", "minSpecial"),
        ]
    }

    /// The checks between properties (types and ranges are checked by the SDK).
    pub fn failures(&self) -> Vec<CheckFailure> {
        let classes = self.classes();
        let mut out: Vec<CheckFailure> = classes
            .iter()
            .filter(|c| !c.on && c.min > 0)
            .map(|c| CheckFailure::new(c.min_key, format!("must be 0 when `{}` is false", c.flag)))
            .collect();
        if classes.iter().all(|c| !c.on) {
            out.push(CheckFailure::new(
                "special",
                "at least one of `upper`, `lower`, `numeric` and `special` must be true",
            ));
        }
        let total: u32 = classes.iter().map(|c| c.min).sum();
        if total > self.length {
            let reason = format!("must be at least the sum of minUpper, minLower, minNumeric and minSpecial ({total})");
            out.push(CheckFailure::new("length", reason));
        }
        out
    }

    /// Draws the string: the minimum of each class first, the rest from all
    /// enabled classes, then shuffles so the minimums are not in front.
    /// Classes that are all ASCII (the usual case) are drawn as bytes: no
    /// characters decoded from the class strings or encoded into the result.
    /// The same draws pick the same characters either way.
    pub fn generate<R: Rng + ?Sized>(&self, rng: &mut R) -> Result<String> {
        let classes = self.classes();
        if classes.iter().all(|c| c.chars.is_ascii()) {
            let out = draw(rng, &classes, self.length, str::bytes)?;
            return Ok(String::from_utf8(out).expect("ASCII is UTF-8"));
        }
        Ok(draw(rng, &classes, self.length, str::chars)?.into_iter().collect())
    }
}

/// [`StringArgs::generate`] over the units `split` makes of each enabled
/// class's characters (its bytes, or its `char`s).
fn draw<'c, R, T, I>(rng: &mut R, classes: &[Class<'c>], length: u32, split: fn(&'c str) -> I) -> Result<Vec<T>>
where
    R: Rng + ?Sized,
    T: Copy,
    I: Iterator<Item = T>,
{
    // Every enabled class's characters in one list, each class a span of it.
    let mut pool: Vec<T> = Vec::with_capacity(96);
    let mut spans = Vec::with_capacity(4);
    for class in classes.iter().filter(|c| c.on) {
        let start = pool.len();
        pool.extend(split(class.chars));
        spans.push((class.min, start..pool.len()));
    }
    let mut out: Vec<T> = Vec::with_capacity(length as usize);
    for (min, span) in spans {
        for _ in 0..min {
            out.push(*choose(rng, &pool[span.clone()])?);
        }
    }
    while out.len() < length as usize {
        out.push(*choose(rng, &pool)?);
    }
    shuffle(rng, &mut out)?;
    Ok(out)
}

pub struct RandomString;

impl Resource for RandomString {
    const TOKEN: &'static str = "random:index:RandomString";
    type Inputs = StringArgs;
    type State = StringState;

    fn validate(&self, args: &StringArgs) -> Vec<CheckFailure> {
        args.failures()
    }

    /// The ID is the result.
    fn create(&self, ctx: &Context, args: StringArgs) -> Result<(String, StringState)> {
        let result = args.generate(&mut SecureRng::new()?)?;
        ctx.log().info(&format!("generated a random string of {} characters", args.length));
        Ok((result.clone(), StringState { args, result }))
    }

    /// Only reached without changes (every input replaces): the result is kept.
    fn update(&self, _ctx: &Context, _id: &str, olds: StringState, args: StringArgs) -> Result<StringState> {
        Ok(StringState { args, ..olds })
    }
}

pub struct RandomPassword;

impl Resource for RandomPassword {
    const TOKEN: &'static str = "random:index:RandomPassword";
    type Inputs = StringArgs;
    type State = PasswordState;

    fn validate(&self, args: &StringArgs) -> Vec<CheckFailure> {
        args.failures()
    }

    /// The ID is `none`, as in pulumi-random: never the secret.
    fn create(&self, ctx: &Context, args: StringArgs) -> Result<(String, PasswordState)> {
        let result = args.generate(&mut SecureRng::new()?)?;
        ctx.log().info(&format!("generated a random password of {} characters", args.length));
        Ok(("none".to_owned(), PasswordState { args, result }))
    }

    fn update(&self, _ctx: &Context, _id: &str, olds: PasswordState, args: StringArgs) -> Result<PasswordState> {
        Ok(PasswordState { args, ..olds })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;
    use pulumi_wasm_sdk::props;

    /// Checks `news` as the engine would: the arguments once valid and known, and the failures.
    fn check(news: PropertyMap) -> (Option<StringArgs>, Vec<(String, String)>) {
        let r = check_inputs(&RandomString, news);
        let failures = r.failures.into_iter().map(|f| (f.property, f.reason)).collect();
        (decode::<StringArgs>(&r.inputs).value, failures)
    }

    #[test]
    fn defaults_enable_every_class() {
        let (args, failures) = check(props! { "length" => 12 });
        assert!(failures.is_empty());
        let args = args.unwrap();
        assert_eq!(args.length, 12);
        assert!(args.upper && args.lower && args.numeric && args.special);
        assert_eq!(args.classes()[3].chars, DEFAULT_SPECIAL);
    }

    #[test]
    fn generation_honours_classes_and_minimums() {
        let (args, failures) = check(props! {
            "length" => 20, "lower" => false, "overrideSpecial" => "_~",
            "minUpper" => 5, "minNumeric" => 6, "minSpecial" => 7,
        });
        assert!(failures.is_empty(), "{failures:?}");
        let args = args.unwrap();
        let mut rng = SplitMix64::new(42);
        for _ in 0..200 {
            let s = args.generate(&mut rng).unwrap();
            assert_eq!(s.chars().count(), 20);
            assert!(s.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_' || c == '~'), "{s}");
            assert!(s.chars().filter(char::is_ascii_uppercase).count() >= 5, "{s}");
            assert!(s.chars().filter(char::is_ascii_digit).count() >= 6, "{s}");
            assert!(s.chars().filter(|c| *c == '_' || *c == '~').count() >= 7, "{s}");
        }
    }

    /// Bytes for ASCII classes, `char`s otherwise: the same draws give the
    /// same string either way, and characters beyond ASCII come out whole.
    #[test]
    fn ascii_and_other_classes_draw_alike() {
        let (args, _) = check(props! { "length" => 40, "minSpecial" => 3 });
        let args = args.unwrap();
        let classes = args.classes();
        for seed in 0..50 {
            let bytes = args.generate(&mut SplitMix64::new(seed)).unwrap();
            let chars: String =
                draw(&mut SplitMix64::new(seed), &classes, 40, str::chars).unwrap().into_iter().collect();
            assert_eq!(bytes, chars);
        }
        let (args, _) = check(props! { "length" => 30, "overrideSpecial" => "äß€", "minSpecial" => 10 });
        let s = args.unwrap().generate(&mut SplitMix64::new(3)).unwrap();
        assert_eq!(s.chars().count(), 30);
        assert!(s.chars().filter(|c| "äß€".contains(*c)).count() >= 10, "{s}");
    }

    #[test]
    fn only_numeric() {
        let (args, _) = check(props! { "length" => 64, "upper" => false, "lower" => false, "special" => false });
        let s = args.unwrap().generate(&mut SplitMix64::new(1)).unwrap();
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
            (props! { "length" => 4, "minSpecial" => -1 }, "minSpecial", "must be at least 0"),
            (props! { "length" => 4, "bogus" => 1 }, "bogus", "is not a known property"),
        ];
        for (news, property, reason) in cases {
            let (_, failures) = check(news);
            assert_eq!(failures, vec![(property.to_owned(), reason.to_owned())]);
        }
    }

    #[test]
    fn unknown_inputs_pass_through_without_failures() {
        let news =
            props! { "length" => Value::Unknown(UnknownKind::Number), "upper" => Value::Unknown(UnknownKind::Bool) };
        let r = check_inputs(&RandomString, news);
        assert!(r.failures.is_empty());
        assert_eq!(r.inputs["length"], Value::Unknown(UnknownKind::Number));
        assert_eq!(r.inputs["lower"], Value::Bool(true));
        assert_eq!(r.inputs["minSpecial"], Value::Number(0.0));
    }
}
