//! Typed access to property values through serde: `from_map::<MyArgs>(&props)`
//! and `to_map(&my_state)`. Secrets are read through; unknowns are errors
//! (check `Value::contains_unknowns` first in previews).
//!
//! A typed struct has no room for secrecy, so what `to_map` gives back is
//! plain: build outputs with [`to_map_like`]`(&state, &req.properties)` so an
//! input the user made secret stays secret in the state (the engine takes a
//! provider's outputs as they are: a plain value is stored in plain text).

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::value::{PropertyMap, Value};

/// Why a value could not be converted.
#[derive(Debug)]
pub struct SerdeError(String);

impl std::fmt::Display for SerdeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SerdeError {}

impl From<SerdeError> for crate::Error {
    fn from(e: SerdeError) -> Self {
        crate::Error::InvalidArgument(e.0)
    }
}

/// Plain JSON view of a value: secrets unwrapped, unknowns and assets refused.
pub fn to_json(v: &Value) -> Result<serde_json::Value, SerdeError> {
    use serde_json::Value as J;
    Ok(match v.plain() {
        Value::Null => J::Null,
        Value::Bool(b) => J::Bool(*b),
        // Integral numbers become JSON integers so they deserialize into integer fields.
        Value::Number(n) if n.fract() == 0.0 && n.abs() < 9.007_199_254_740_992e15 => J::from(*n as i64),
        Value::Number(n) => serde_json::Number::from_f64(*n).map_or(J::Null, J::Number),
        Value::String(s) => J::String(s.clone()),
        Value::Array(a) => J::Array(a.iter().map(to_json).collect::<Result<_, _>>()?),
        Value::Object(m) => {
            J::Object(m.iter().map(|(k, v)| Ok((k.clone(), to_json(v)?))).collect::<Result<_, SerdeError>>()?)
        }
        Value::ResourceRef(r) => J::String(match &r.id {
            Some(crate::RefId::Known(id)) => id.clone(),
            _ => r.urn.clone(),
        }),
        other => return Err(SerdeError(format!("a {} value has no plain form", other.kind_name()))),
    })
}

/// A value from plain JSON (integers become numbers).
pub fn from_json(j: serde_json::Value) -> Value {
    use serde_json::Value as J;
    match j {
        J::Null => Value::Null,
        J::Bool(b) => Value::Bool(b),
        J::Number(n) => Value::Number(n.as_f64().unwrap_or(f64::NAN)),
        J::String(s) => Value::String(s),
        J::Array(a) => Value::Array(a.into_iter().map(from_json).collect()),
        J::Object(m) => Value::Object(m.into_iter().map(|(k, v)| (k, from_json(v))).collect()),
    }
}

/// Deserializes a typed struct from a property map.
pub fn from_map<T: DeserializeOwned>(m: &PropertyMap) -> Result<T, SerdeError> {
    from_value(&Value::Object(m.clone()))
}

pub fn from_value<T: DeserializeOwned>(v: &Value) -> Result<T, SerdeError> {
    serde_json::from_value(to_json(v)?).map_err(|e| SerdeError(e.to_string()))
}

/// Serializes a typed struct into a property map.
pub fn to_map<T: Serialize>(t: &T) -> Result<PropertyMap, SerdeError> {
    match to_value(t)? {
        Value::Object(m) => Ok(m),
        other => Err(SerdeError(format!("expected an object, got {}", other.kind_name()))),
    }
}

/// [`to_map`], with every property that was secret in `inputs` secret in
/// the result too, at the same path within objects; a list that held a
/// secret is secret whole.
pub fn to_map_like<T: Serialize>(t: &T, inputs: &PropertyMap) -> Result<PropertyMap, SerdeError> {
    let mut out = to_map(t)?;
    for (key, value) in &mut out {
        if let Some(like) = inputs.get(key) {
            seal_like(value, like);
        }
    }
    Ok(out)
}

/// Makes `out` secret where `like`, the input it came from, is.
fn seal_like(out: &mut Value, like: &Value) {
    let secret = matches!(like, Value::Secret(_)) || matches!(like, Value::Output(o) if o.secret);
    if secret {
        *out = Value::secret(std::mem::replace(out, Value::Null));
        return;
    }
    match (out, like.plain()) {
        (Value::Object(out), Value::Object(like)) => {
            for (key, value) in out {
                if let Some(like) = like.get(key) {
                    seal_like(value, like);
                }
            }
        }
        // Items are matched by nothing surer than their place, which a
        // provider may change: a list with any secret in it is secret whole.
        (out @ Value::Array(_), Value::Array(like)) if like.iter().any(Value::contains_secrets) => {
            *out = Value::secret(std::mem::replace(out, Value::Null));
        }
        _ => {}
    }
}

pub fn to_value<T: Serialize>(t: &T) -> Result<Value, SerdeError> {
    serde_json::to_value(t).map(from_json).map_err(|e| SerdeError(e.to_string()))
}

impl Serialize for Value {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        to_json(self).map_err(serde::ser::Error::custom)?.serialize(s)
    }
}

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        serde_json::Value::deserialize(d).map(from_json)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::props;

    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct Args {
        length: u32,
        #[serde(default)]
        prefix: Option<String>,
    }

    #[test]
    fn typed_round_trip_reads_through_secrets() {
        let m = props! { "length" => Value::secret(12) };
        let args: Args = from_map(&m).unwrap();
        assert_eq!(args, Args { length: 12, prefix: None });
        assert_eq!(to_map(&args).unwrap()["length"], Value::Number(12.0));
        let unknown = props! { "length" => Value::Unknown(crate::UnknownKind::Number) };
        assert!(from_map::<Args>(&unknown).is_err());
    }

    #[derive(Serialize, Deserialize)]
    struct Login {
        user: String,
        password: String,
        tags: Vec<String>,
        extra: u32,
    }

    #[test]
    fn outputs_like_the_inputs_keep_their_secrets() {
        let inputs = props! {
            "user" => "ann",
            "password" => Value::secret("hunter2"),
            "tags" => Value::Array(vec!["a".into(), Value::secret("b")]),
        };
        let mut given = inputs.clone();
        given.insert("extra".into(), 1.into());
        let login: Login = from_map(&given).unwrap();
        assert_eq!(to_map(&login).unwrap()["password"], Value::from("hunter2"), "to_map alone is plain");
        let out = to_map_like(&login, &inputs).unwrap();
        assert_eq!(out["password"], Value::secret("hunter2"));
        assert_eq!(out["tags"], Value::secret(Value::Array(vec!["a".into(), "b".into()])));
        assert_eq!((&out["user"], &out["extra"]), (&Value::from("ann"), &Value::Number(1.0)));
    }
}
