//! Protobuf `Struct` <-> `serde_json` for writing and asserting requests.

use prost_types::value::Kind;
use prost_types::{ListValue, Struct, Value};

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
