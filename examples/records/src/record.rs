//! One record type at work: inputs checked against its properties, and its IDs.

use pulumi_wasm_sdk::{CheckFailure, PropertyMap, Value};

use crate::spec::{Kind, Props};

/// Checks `news` against `props`: a failure per unknown, missing or mistyped
/// property (sorted by name). Unknown values pass: they are only known after
/// a preview. Nulls count as absent and are dropped from the inputs.
pub fn check(props: &Props, news: &PropertyMap) -> (PropertyMap, Vec<CheckFailure>) {
    let mut failures = Vec::new();
    let mut fail = |property: &str, reason: String| failures.push(CheckFailure { property: property.into(), reason });
    let inputs: PropertyMap = news.iter().filter(|(_, v)| !v.is_null()).map(|(k, v)| (k.clone(), v.clone())).collect();
    for (name, value) in &inputs {
        match props.get(name) {
            None => {
                let known: Vec<&str> = props.keys().map(String::as_str).collect();
                fail(name, format!("unknown property (expected one of: {})", known.join(", ")));
            }
            Some(p) => {
                if let Some(why) = mistyped(p.kind, value) {
                    fail(name, why);
                }
            }
        }
    }
    for (name, p) in props {
        if !p.optional && !inputs.contains_key(name) {
            fail(name, format!("missing required property ({})", p.kind.name()));
        }
    }
    failures.sort_by(|a, b| a.property.cmp(&b.property));
    (inputs, failures)
}

/// Why `value` is not a `kind`, if it is not.
fn mistyped(kind: Kind, value: &Value) -> Option<String> {
    let ok = match (kind, value.plain()) {
        // `plain()` unwraps known outputs, so an output left is an unknown one.
        (_, Value::Unknown(_) | Value::Output(_)) => true,
        (Kind::String, Value::String(_)) | (Kind::Boolean, Value::Bool(_)) => true,
        (Kind::Number, Value::Number(n)) => n.is_finite(),
        // Whole numbers that survive a round trip through f64 (|n| <= 2^53).
        (Kind::Integer, Value::Number(n)) => n.fract() == 0.0 && n.abs() <= 9_007_199_254_740_992.0,
        _ => false,
    };
    let article = if kind == Kind::Integer { "an" } else { "a" };
    (!ok).then(|| format!("must be {article} {}, not {}", kind.name(), describe(value.plain())))
}

fn describe(v: &Value) -> String {
    match v {
        Value::Number(n) => format!("the number {n}"),
        other => format!("a {}", other.kind_name()),
    }
}

/// `<type-lowercase>-<16 hex digits>`: a hash of the URN and the inputs, so
/// the same resource with the same inputs always gets the same ID, and no
/// counter (state) is needed. Secret values enter only masked, so the ID
/// reveals nothing of them.
pub fn id(ty: &str, urn: &str, inputs: &PropertyMap) -> String {
    let text = format!("{urn}\n{}", Value::Object(inputs.clone()));
    format!("{}-{:016x}", ty.to_ascii_lowercase(), fnv1a(text.as_bytes()))
}

/// FNV-1a, 64-bit: stable across Rust versions, unlike `DefaultHasher`.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3))
}
