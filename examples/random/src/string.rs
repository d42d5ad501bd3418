//! `RandomString` and `RandomPassword`: a string of characters drawn from the
//! enabled classes, with at least `min*` characters of each class.

use std::collections::BTreeMap;

use pulumi_wasm_sdk::typed::*;

use crate::rng::{Rng, SecureRng, choose, index};

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

    /// Draws the string: each class's minimum at positions drawn without
    /// repeats, every other position from all enabled classes. Classes that
    /// are all ASCII (the usual case) are drawn as bytes: no characters
    /// decoded from the class strings or encoded into the result. The same
    /// draws pick the same characters either way.
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
///
/// The result has the distribution of drawing the minimums, then the rest,
/// then shuffling the whole (pulumi-random's way): the minimums land on
/// uniformly random distinct positions, and the rest, drawn independently
/// of one another, may fill the other positions in any order. Choosing
/// only the minimums' positions takes one draw for each of them instead of
/// one for every character of the shuffle.
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
        spans.push((class.min as usize, start..pool.len()));
    }
    let length = length as usize;
    let placed: usize = spans.iter().map(|(min, _)| min).sum();
    let Some(&first) = pool.first() else {
        return Err(Error::InvalidArgument("no character class is enabled".into()));
    };
    if placed > length {
        return Err(Error::InvalidArgument(format!("the minimums ({placed}) exceed the length ({length})")));
    }
    // The first `placed` steps of a Fisher-Yates shuffle of the positions.
    let mut positions: Vec<usize> = (0..length).collect();
    for i in 0..placed {
        positions.swap(i, i + index(rng, length - i)?);
    }
    let mut out = vec![first; length];
    let mut free = positions.into_iter();
    for (min, span) in spans {
        for at in free.by_ref().take(min) {
            out[at] = *choose(rng, &pool[span.clone()])?;
        }
    }
    for at in free {
        out[at] = *choose(rng, &pool)?;
    }
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

    /// The minimums are not kept in front: their positions are uniformly
    /// random, as if the whole string were shuffled. Length 2 from upper
    /// case and digits with one digit required: a position holds a digit
    /// with probability 1/2 + 1/2 * 10/36 (the required digit is there, or
    /// the free draw is a digit), both with probability 10/36.
    #[test]
    fn minimums_land_anywhere() {
        let (args, _) = check(props! { "length" => 2, "lower" => false, "special" => false, "minNumeric" => 1 });
        let args = args.unwrap();
        let mut rng = SplitMix64::new(8);
        let (mut at, mut both, n) = ([0u32; 2], 0u32, 40_000);
        for _ in 0..n {
            let s = args.generate(&mut rng).unwrap().into_bytes();
            assert!(s.iter().any(u8::is_ascii_digit), "{s:?}");
            for (i, c) in s.iter().enumerate() {
                at[i] += u32::from(c.is_ascii_digit());
            }
            both += u32::from(s.iter().all(u8::is_ascii_digit));
        }
        let share = |k: u32| f64::from(k) / f64::from(n);
        // Standard deviations ~0.0024 and ~0.0022: 0.015 is over six.
        for k in at {
            assert!((share(k) - (0.5 + 0.5 * 10.0 / 36.0)).abs() < 0.015, "{at:?}");
        }
        assert!((share(both) - 10.0 / 36.0).abs() < 0.015, "{both}");
    }

    #[test]
    fn generate_refuses_what_validation_would() {
        let (args, _) = check(props! { "length" => 4 });
        let mut args = args.unwrap();
        args.min_upper = 5;
        assert!(args.generate(&mut SplitMix64::new(1)).is_err());
        (args.upper, args.lower, args.numeric, args.special, args.min_upper) = (false, false, false, false, 0);
        assert!(args.generate(&mut SplitMix64::new(1)).is_err());
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
