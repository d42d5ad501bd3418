//! The `parameterization` block of a parameterized package's schema.
//!
//! A parameterized provider answers `parameterize` with a sub-package and must
//! put, in that sub-package's schema, the base plugin it runs on and the bytes
//! that recreate it: SDKs embed them and later send them back as
//! `ParameterizeRequest::Value`. Pulumi stores those bytes as base64.
//!
//! ```ignore
//! schema["parameterization"] = Parameterization::new(&self.info(), spec.to_bytes()).to_json();
//! ```

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value as Json, json};

use crate::provider::PluginInfo;

/// A base plugin and the parameter value that turns it into a sub-package.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parameterization {
    /// The plugin the engine boots: this provider's own name and version.
    pub base_name: String,
    pub base_version: String,
    /// The bytes a later `ParameterizeRequest::Value` carries.
    pub value: Vec<u8>,
}

impl Parameterization {
    /// `base` is the provider's own `info()`.
    pub fn new(base: &PluginInfo, value: impl Into<Vec<u8>>) -> Self {
        Parameterization { base_name: base.name.clone(), base_version: base.version.clone(), value: value.into() }
    }

    /// `{"baseProvider": {"name", "version"}, "parameter": "<base64>"}`.
    pub fn to_json(&self) -> Json {
        json!({
            "baseProvider": { "name": self.base_name, "version": self.base_version },
            "parameter": STANDARD.encode(&self.value),
        })
    }

    /// Reads the block back from a whole schema, as a host or a test does to
    /// learn the value: `None` when the schema has no (well-formed) block.
    pub fn from_schema(schema: &Json) -> Option<Self> {
        let block = schema.get("parameterization")?;
        let base = block.get("baseProvider")?;
        Some(Parameterization {
            base_name: base.get("name")?.as_str()?.to_owned(),
            base_version: base.get("version")?.as_str()?.to_owned(),
            value: STANDARD.decode(block.get("parameter")?.as_str()?).ok()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_through_a_schema() {
        let info = PluginInfo::new("base", "1.2.3");
        let p = Parameterization::new(&info, b"{\"v\":1}\xff".to_vec());
        let block = p.to_json();
        assert_eq!(block["baseProvider"], json!({ "name": "base", "version": "1.2.3" }));
        assert_eq!(block["parameter"], "eyJ2Ijoxff8=");
        let schema = json!({ "name": "sub", "version": "0.0.1", "parameterization": block });
        assert_eq!(Parameterization::from_schema(&schema), Some(p));
    }

    #[test]
    fn a_missing_or_malformed_block_is_none() {
        assert_eq!(Parameterization::from_schema(&json!({ "name": "x" })), None);
        let bad = json!({ "parameterization": { "baseProvider": { "name": "b", "version": "1" }, "parameter": "%%" } });
        assert_eq!(Parameterization::from_schema(&bad), None);
    }
}
