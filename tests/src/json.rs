//! Protobuf `Struct` <-> `serde_json` for writing and asserting requests.

use prost_types::value::Kind;
use prost_types::{ListValue, Struct, Value};
use serde_json::json;

// Pulumi's wire signatures, spelled out here rather than taken from the host
// so that the tests check the host's against Pulumi's values.
/// The key that marks an object as a special value; its value names the kind.
pub const SIG_KEY: &str = "4dabf18193072939515e22adb298388d";
pub const SECRET_SIG: &str = "1b47061264138c4ac30d75fd1eb44270";
pub const RESOURCE_REF_SIG: &str = "5cf8f73096256a8f31e491e813e4eb8e";
pub const OUTPUT_SIG: &str = "d0e6a833031e9bbcd3f4e8bde6ca49a4";
pub const ASSET_SIG: &str = "c44067f5952c0a294b673a41bacd8c17";
pub const ARCHIVE_SIG: &str = "0def7320c3a5731c473e5ecbe6d01bc7";
pub const BYTES_SIG: &str = "803fd3297a5875dc03ca845dda5d2a98";

/// The wire form of a special value: `fields` plus the signature of `kind`
/// (secret, ref, output, asset, archive or bytes; anything else is used as
/// the signature itself, to send ones the host must refuse).
pub fn sig(kind: &str, mut fields: serde_json::Value) -> serde_json::Value {
    let sig = match kind {
        "secret" => SECRET_SIG,
        "ref" => RESOURCE_REF_SIG,
        "output" => OUTPUT_SIG,
        "asset" => ASSET_SIG,
        "archive" => ARCHIVE_SIG,
        "bytes" => BYTES_SIG,
        other => other,
    };
    fields[SIG_KEY] = json!(sig);
    fields
}

/// A secret's wire form.
pub fn secret(value: serde_json::Value) -> serde_json::Value {
    json!({ SIG_KEY: SECRET_SIG, "value": value })
}

/// A `Struct` from a JSON object (panics on anything else: tests only).
pub fn to_struct(j: serde_json::Value) -> Struct {
    match to_value(j).kind {
        Some(Kind::StructValue(s)) => s,
        other => panic!("expected an object, got {other:?}"),
    }
}

pub fn to_value(j: serde_json::Value) -> Value {
    use serde_json::Value as J;
    let kind = match j {
        J::Null => Kind::NullValue(0),
        J::Bool(b) => Kind::BoolValue(b),
        J::Number(n) => Kind::NumberValue(n.as_f64().expect("finite number")),
        J::String(s) => Kind::StringValue(s),
        J::Array(a) => Kind::ListValue(ListValue { values: a.into_iter().map(to_value).collect() }),
        J::Object(m) => Kind::StructValue(Struct { fields: m.into_iter().map(|(k, v)| (k, to_value(v))).collect() }),
    };
    Value { kind: Some(kind) }
}

/// JSON of a `Struct` (`None` becomes `{}`), for assertions.
pub fn from_struct(s: Option<&Struct>) -> serde_json::Value {
    serde_json::Value::Object(
        s.map(|s| s.fields.iter().map(|(k, v)| (k.clone(), from_value(v))).collect()).unwrap_or_default(),
    )
}

pub fn from_value(v: &Value) -> serde_json::Value {
    use serde_json::Value as J;
    match &v.kind {
        None | Some(Kind::NullValue(_)) => J::Null,
        Some(Kind::BoolValue(b)) => J::Bool(*b),
        Some(Kind::NumberValue(n)) => serde_json::Number::from_f64(*n).map_or(J::Null, J::Number),
        Some(Kind::StringValue(s)) => J::String(s.clone()),
        Some(Kind::ListValue(l)) => J::Array(l.values.iter().map(from_value).collect()),
        Some(Kind::StructValue(s)) => from_struct(Some(s)),
    }
}
