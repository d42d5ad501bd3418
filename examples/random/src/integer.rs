//! The `randomInteger` function: a whole number in `min..=max`.
//!
//! Without `seed` the number comes from the system generator. With `seed`
//! it is deterministic: the seed's UTF-8 bytes are hashed with 64-bit FNV-1a,
//! which seeds SplitMix64, and the first unbiased draw in the range is the
//! result (see `rng.rs`). The same seed, `min` and `max` give the same
//! result everywhere.

use pulumi_wasm_sdk::{InvokeResponse, PropertyMap, Result, Value, props};

use crate::check::{Checker, Int};
use crate::rng::{Rng, SplitMix64, below};

pub const TOKEN: &str = "random:index:randomInteger";

const ARGS: &[&str] = &["min", "max", "seed"];

/// Numbers are doubles on the wire: stay where every integer is exact.
const MAX_SAFE: i64 = (1 << 53) - 1;

pub fn invoke(args: &PropertyMap, rng: &mut dyn Rng) -> Result<InvokeResponse> {
    let mut c = Checker::new(args, ARGS).require_known();
    let min = c.integer("min", Int::required(-MAX_SAFE, MAX_SAFE));
    let max = c.integer("max", Int::required(-MAX_SAFE, MAX_SAFE));
    let seed = c.optional_string("seed");
    if let (Some(min), Some(max)) = (min, max)
        && min > max
    {
        c.fail("min", format!("must not be greater than `max` ({max})"));
    }
    let failures = c.finish().failures;
    let (Some(min), Some(max), Some(seed), true) = (min, max, seed, failures.is_empty()) else {
        return Ok(InvokeResponse { outputs: PropertyMap::new(), failures });
    };
    let n = match seed {
        Some(seed) => between(&mut SplitMix64::from_seed(&seed), min, max)?,
        None => between(rng, min, max)?,
    };
    // A secret argument (e.g. the seed) makes the result secret too.
    let result = if args.values().any(Value::contains_secrets) { Value::secret(n) } else { Value::from(n) };
    Ok(InvokeResponse { outputs: props! { "result" => result }, failures: vec![] })
}

/// A uniform integer in `min..=max` (both within ±2^53, `min <= max`).
pub fn between(rng: &mut dyn Rng, min: i64, max: i64) -> Result<i64> {
    let span = (max - min) as u64 + 1;
    Ok(min + below(rng, span)? as i64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::OsRng;

    fn result(args: PropertyMap) -> f64 {
        let r = invoke(&args, &mut OsRng).unwrap();
        assert!(r.failures.is_empty(), "{:?}", r.failures);
        r.outputs["result"].as_f64().unwrap()
    }

    #[test]
    fn seed_makes_the_result_deterministic() {
        let args = props! { "min" => 1, "max" => 1_000_000, "seed" => "my-seed" };
        let first = result(args.clone());
        for _ in 0..5 {
            assert_eq!(result(args.clone()), first);
        }
        // Pinned (computed independently from the documented algorithm): it must not drift.
        assert_eq!(first, 904_253.0);
        assert_eq!(result(props! { "min" => 1, "max" => 6, "seed" => "dice" }), 2.0);
        let others: Vec<f64> = ["a", "b", "c", "d"]
            .iter()
            .map(|s| result(props! { "min" => 1, "max" => 1_000_000, "seed" => *s }))
            .collect();
        assert!(others.iter().any(|n| *n != first), "different seeds should differ");
    }

    #[test]
    fn results_stay_in_range() {
        for _ in 0..100 {
            let n = result(props! { "min" => -3, "max" => 3 });
            assert!((-3.0..=3.0).contains(&n));
        }
        assert_eq!(result(props! { "min" => 7, "max" => 7 }), 7.0);
        let wide = result(props! { "min" => -MAX_SAFE, "max" => MAX_SAFE, "seed" => "x" });
        assert!(wide.abs() <= MAX_SAFE as f64);
    }

    #[test]
    fn bad_arguments_are_failures() {
        let cases = [
            (props! { "min" => 5, "max" => 1 }, "min", "must not be greater than `max` (1)"),
            (props! { "max" => 1 }, "min", "is required"),
            (props! { "min" => 1, "max" => 2.5 }, "max", "must be a whole number"),
            (props! { "min" => 1, "max" => 2, "seed" => 3 }, "seed", "must be a string, not a number"),
            (
                props! { "min" => 1, "max" => Value::Unknown(pulumi_wasm_sdk::UnknownKind::Number) },
                "max",
                "must be known",
            ),
        ];
        for (args, property, reason) in cases {
            let r = invoke(&args, &mut OsRng).unwrap();
            assert!(r.outputs.is_empty());
            let got: Vec<(&str, &str)> = r.failures.iter().map(|f| (f.property.as_str(), f.reason.as_str())).collect();
            assert_eq!(got, vec![(property, reason)]);
        }
    }

    #[test]
    fn secret_seed_gives_secret_result() {
        let args = props! { "min" => 0, "max" => 9, "seed" => Value::secret("s") };
        let r = invoke(&args, &mut OsRng).unwrap();
        assert!(matches!(r.outputs["result"], Value::Secret(_)));
    }
}
