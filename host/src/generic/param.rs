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
use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

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
                "{}; usage: pulumi package add wasm [-- --allow-http URL ...] <component> [-- <its arguments>]",
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
        if crate::sha256::hex_of(&p.component.digest).is_none() {
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
/// carrying the value. Only the top level is parsed: its values pass through
/// as written. (A tree of a 64 MiB schema of small objects would take
/// gigabytes of the host's memory.)
pub fn rewrite_schema(schema: &str, name: &str, version: &str, value: &[u8]) -> Result<String, GenericError> {
    if schema.len() > MAX_SCHEMA_BYTES {
        return Err(GenericError::Guest(format!("the component's schema of {} bytes is too large", schema.len())));
    }
    let not_json =
        |e: serde_json::Error| GenericError::Guest(format!("the component's schema is not a JSON object: {e}"));
    let mut doc: BTreeMap<String, Cow<'_, RawValue>> = serde_json::from_str(schema).map_err(not_json)?;
    let named = doc.get("name").and_then(|n| serde_json::from_str::<String>(n.get()).ok());
    if named.as_deref() != Some(name) {
        return Err(GenericError::Guest(format!(
            "the component's schema is for package {named:?}, but it was parameterized as {name:?}"
        )));
    }
    let parameterization = serde_json::json!({
        "baseProvider": { "name": BASE_NAME, "version": BASE_VERSION },
        "parameter": B64.encode(value),
    });
    let raw = |v: &serde_json::Value| RawValue::from_string(v.to_string()).map(Cow::Owned).map_err(not_json);
    // The plugin this package runs on is `wasm`, this host: a download URL
    // in a component's schema would tell the engine where to fetch that
    // native executable from (and the SDKs to register the package with
    // it), which is not the component's to say. Any case: the CLI's JSON
    // reader matches keys without it.
    // So are the fields set next (a `Version` would otherwise compete).
    let replaced = ["pluginDownloadURL", "version", "parameterization"];
    doc.retain(|key, _| !replaced.iter().any(|r| key.eq_ignore_ascii_case(r)));
    doc.insert("version".into(), raw(&version.into())?);
    doc.insert("parameterization".into(), raw(&parameterization)?);
    serde_json::to_string(&doc).map_err(not_json)
}

/// The guest's own value, from the `parameterization.parameter` of the
/// schema it answers after an args call (the rest is skipped, not kept).
pub fn guest_value_from_schema(schema: &str) -> Result<Vec<u8>, GenericError> {
    #[derive(Deserialize)]
    struct Doc {
        parameterization: Option<Parameterization>,
    }
    #[derive(Deserialize)]
    struct Parameterization {
        parameter: Option<String>,
    }
    let doc: Doc = serde_json::from_str(schema)
        .map_err(|e| GenericError::Guest(format!("the component's schema is not JSON: {e}")))?;
    let parameter = doc.parameterization.and_then(|p| p.parameter).ok_or_else(|| {
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
        assert!(rewrite_schema(r#"["p"]"#, "p", "1.0.0", b"v").is_err(), "not an object");
    }

    /// What the Pulumi CLI passes on: its own first `--` dropped, a second kept.
    #[test]
    fn args_take_grants_then_the_source_then_the_component_s_own() {
        let args = |a: &[&str]| ArgsForm::parse(&a.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap();
        let form =
            args(&["--allow-package", "random", "--allow-dir", r"C:\data:/data", "./pets.wasm", "--", "--its-flag"]);
        assert_eq!((form.grants.allow_package, form.source.as_str()), (vec!["random".to_owned()], "./pets.wasm"));
        assert_eq!(form.grants.allow_dir, [r"C:\data:/data"]);
        assert_eq!(form.guest, ["--its-flag"]);
        let form = args(&["./records.wasm", "shop", "Item=title:string"]);
        assert_eq!(form.guest, ["shop", "Item=title:string"]);
    }

    #[test]
    fn a_schema_is_rewritten_at_its_top_level_only() {
        let schema = r#"{"name":"p","version":"0.0.1","resources":{"p:index:B":{"z":1,"a":1.50}},"parameterization":7,"pluginDownloadURL":"https://x.example/","PluginDownloadUrl":"https://y.example/"}"#;
        let out: serde_json::Value =
            serde_json::from_str(&rewrite_schema(schema, "p", "1.2.3", b"v").unwrap()).unwrap();
        assert_eq!(out["version"], "1.2.3");
        let urls = out.as_object().unwrap().keys().filter(|k| k.eq_ignore_ascii_case("pluginDownloadURL")).count();
        assert_eq!(urls, 0, "where the engine fetches `wasm` is not the component's to say, in any case");
        assert_eq!(out["parameterization"]["baseProvider"]["name"], BASE_NAME);
        assert_eq!(B64.decode(out["parameterization"]["parameter"].as_str().unwrap()).unwrap(), b"v");
        // Inner values pass as written: not parsed into a tree and printed again.
        let text = rewrite_schema(schema, "p", "1.2.3", b"v").unwrap();
        assert!(text.contains(r#""resources":{"p:index:B":{"z":1,"a":1.50}}"#), "{text}");
        // The value is read back without the rest.
        assert_eq!(guest_value_from_schema(&text).unwrap(), b"v");
        assert!(guest_value_from_schema(r#"{"name":"p","resources":{}}"#).is_err());
    }
}
