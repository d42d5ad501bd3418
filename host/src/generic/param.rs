//! What `pulumi-resource-wasm` is parameterized with: the args form
//! (`pulumi package add wasm [grants] <source> [-- guest args]`) and the
//! value bytes it hands back through the schema, which generated SDKs embed
//! and every later run sends as `Parameterize(value)`.

// The doc comments on arguments are clap's --help text, where NAME[@REQ]
// and <pid> mean what they say, not rustdoc links or HTML.
#![allow(rustdoc::broken_intra_doc_links, rustdoc::invalid_html_tags)]

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use clap::Parser;
use serde::{Deserialize, Serialize};

use super::GenericError;
use crate::runtime::{GrantFlags, Grants, MAX_SCHEMA_BYTES};

/// The base provider named in every schema this host rewrites.
pub const BASE_NAME: &str = "wasm";
/// Its version: this host's.
pub const BASE_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The args form. Grants given here are added to the user's policy for the
/// component and pinned, with the component's digest, in the value.
#[derive(Parser, Debug)]
#[command(name = "pulumi package add wasm", no_binary_name = true, disable_help_flag = true)]
pub struct ArgsForm {
    #[command(flatten)]
    pub grants: GrantFlags,
    /// A .wasm path, NAME[@SEMVER-REQ] from the store, or oci://REGISTRY/REPO[:TAG|@DIGEST].
    pub source: String,
    /// The component's own parameters (after `--`).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub guest: Vec<String>,
}

impl ArgsForm {
    pub fn parse(args: &[String]) -> Result<ArgsForm, GenericError> {
        let mut form = ArgsForm::try_parse_from(args).map_err(|e| {
            GenericError::Args(format!(
                "{}; usage: pulumi package add wasm [--allow-http URL]... <component> [-- <its arguments>]",
                e.render().to_string().lines().next().unwrap_or("bad arguments").trim_start_matches("error: ")
            ))
        })?;
        // `--` between the source and the guest's arguments is a separator, not a guest argument.
        if form.guest.first().is_some_and(|a| a == "--") {
            form.guest.remove(0);
        }
        Ok(form)
    }
}

/// The value bytes: JSON, written once by the args call and read back
/// verbatim later, so the same bytes always name the same component (by
/// digest), the same grants and the same guest parameters.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Parameter {
    /// Format version of this encoding.
    pub wasm: u32,
    pub component: Pinned,
    pub grants: Grants,
    /// The component's own parameterization, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guest: Option<GuestParameter>,
}

/// The component, by content.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pinned {
    /// `sha256:<hex>` of the component bytes.
    pub digest: String,
    /// Where it came from, to fetch it again when it is not cached.
    pub source: String,
    /// The component's own package name and version (before guest parameterization).
    pub name: String,
    pub version: String,
}

/// The guest's own value, nested in ours.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GuestParameter {
    pub name: String,
    pub version: String,
    /// Base64 of the guest's value bytes.
    pub value: String,
}

pub const FORMAT: u32 = 1;

impl Parameter {
    /// Fails only for what JSON cannot hold, e.g. a granted directory whose
    /// path is not UTF-8.
    pub fn encode(&self) -> Result<Vec<u8>, GenericError> {
        serde_json::to_vec(self).map_err(|e| GenericError::Value(format!("cannot record the parameter: {e}")))
    }

    pub fn decode(bytes: &[u8]) -> Result<Parameter, GenericError> {
        let p: Parameter = serde_json::from_slice(bytes)
            .map_err(|e| GenericError::Value(format!("not a pulumi-resource-wasm parameter: {e}")))?;
        if p.wasm != FORMAT {
            return Err(GenericError::Value(format!(
                "parameter format {} is not supported by this host (it reads format {FORMAT}); upgrade pulumi-resource-wasm",
                p.wasm
            )));
        }
        let hex = p.component.digest.strip_prefix("sha256:").unwrap_or("");
        if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()) {
            return Err(GenericError::Value(format!("bad component digest {:?}", p.component.digest)));
        }
        p.grants.validate()?;
        if let Some(g) = &p.guest {
            B64.decode(&g.value).map_err(|e| GenericError::Value(format!("guest value is not base64: {e}")))?;
        }
        Ok(p)
    }

    /// The hex digest, without the algorithm.
    pub fn digest_hex(&self) -> &str {
        self.component.digest.trim_start_matches("sha256:")
    }
}

impl GuestParameter {
    pub fn bytes(&self) -> Vec<u8> {
        B64.decode(&self.value).unwrap_or_default()
    }
}

/// The schema before any Parameterize: the base provider alone.
pub fn base_schema() -> String {
    serde_json::json!({
        "name": BASE_NAME,
        "version": BASE_VERSION,
        "displayName": "WebAssembly provider host",
        "description": "Serves any WebAssembly-component provider: `pulumi package add wasm <component.wasm | name@version | oci://ref> [-- args]`.",
    })
    .to_string()
}

/// A guest's schema as the engine must see it: the sub-package's name and
/// version, and the `parameterization` block naming this base provider and
/// carrying the value.
pub fn rewrite_schema(schema: &str, name: &str, version: &str, value: &[u8]) -> Result<String, GenericError> {
    if schema.len() > MAX_SCHEMA_BYTES {
        return Err(GenericError::Guest(format!("the component's schema of {} bytes is too large", schema.len())));
    }
    let mut doc: serde_json::Value = serde_json::from_str(schema)
        .map_err(|e| GenericError::Guest(format!("the component's schema is not JSON: {e}")))?;
    let obj =
        doc.as_object_mut().ok_or_else(|| GenericError::Guest("the component's schema is not an object".into()))?;
    match obj.get("name").and_then(|n| n.as_str()) {
        Some(n) if n == name => {}
        other => {
            return Err(GenericError::Guest(format!(
                "the component's schema is for package {other:?}, but it was parameterized as {name:?}"
            )));
        }
    }
    obj.insert("version".into(), version.into());
    obj.insert(
        "parameterization".into(),
        serde_json::json!({
            "baseProvider": { "name": BASE_NAME, "version": BASE_VERSION },
            "parameter": B64.encode(value),
        }),
    );
    Ok(doc.to_string())
}

/// The guest's own value, from the `parameterization.parameter` of the
/// schema it answers after an args call.
pub fn guest_value_from_schema(schema: &str) -> Result<Vec<u8>, GenericError> {
    let doc: serde_json::Value = serde_json::from_str(schema)
        .map_err(|e| GenericError::Guest(format!("the component's schema is not JSON: {e}")))?;
    let parameter = doc.pointer("/parameterization/parameter").and_then(|p| p.as_str()).ok_or_else(|| {
        GenericError::Guest(
            "the component accepted parameters but its schema has no parameterization.parameter, \
             so later runs could not reproduce them"
                .into(),
        )
    })?;
    B64.decode(parameter).map_err(|e| GenericError::Guest(format!("the component's parameter is not base64: {e}")))
}

pub fn b64(bytes: &[u8]) -> String {
    B64.encode(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_schema_over_the_limit_is_refused_before_it_is_parsed() {
        let huge = " ".repeat(MAX_SCHEMA_BYTES + 1);
        let e = rewrite_schema(&huge, "p", "1.0.0", b"v").unwrap_err().to_string();
        assert!(e.contains("too large"), "{e}");
        assert!(rewrite_schema(r#"{"name": "q"}"#, "p", "1.0.0", b"v").is_err(), "another package's schema");
    }
}
