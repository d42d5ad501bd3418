//! The Wasm OCI artifact layout (CNCF TAG Runtime's, as `wkg` and
//! `oci-wasm` write it): an image manifest whose config is
//! `application/vnd.wasm.config.v0+json` and whose only layer is the
//! component, `application/wasm`.

use std::collections::BTreeMap;

use oci_client::annotations::{ORG_OPENCONTAINERS_IMAGE_TITLE, ORG_OPENCONTAINERS_IMAGE_VERSION};
use oci_client::manifest::{OCI_IMAGE_MEDIA_TYPE, OciDescriptor, OciImageManifest};
use serde::Serialize;

use super::{MAX_COMPONENT_BYTES, MAX_MANIFEST_BYTES, OciError};
use crate::store;

pub const WASM_CONFIG_MEDIA_TYPE: &str = "application/vnd.wasm.config.v0+json";
pub const WASM_LAYER_MEDIA_TYPE: &str = "application/wasm";

/// The config blob; field for field what `oci-wasm`'s `WasmConfig` reads.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WasmConfig {
    created: String,
    architecture: &'static str,
    os: &'static str,
    layer_digests: Vec<String>,
    component: Option<ComponentInfo>,
}

#[derive(Serialize)]
struct ComponentInfo {
    exports: Vec<String>,
    imports: Vec<String>,
    target: Option<String>,
}

/// A manifest and config ready to push.
pub(crate) struct Built {
    pub manifest: Vec<u8>,
    pub config: Vec<u8>,
    pub config_digest: String,
}

/// The manifest and config for `wasm`, annotated with the package's name and version.
pub(crate) fn build(wasm: &[u8], layer_digest: &str, name: &str, version: &str, created: String) -> Built {
    let config = WasmConfig {
        created,
        architecture: "wasm",
        os: "wasip2",
        layer_digests: vec![format!("sha256:{layer_digest}")],
        component: component_info(wasm),
    };
    let config = serde_json::to_vec(&config).expect("the config serializes");
    let config_digest = store::digest(&config);
    let descriptor = |media_type: &str, digest: &str, size: usize| OciDescriptor {
        media_type: media_type.to_owned(),
        digest: format!("sha256:{digest}"),
        size: size as i64,
        ..OciDescriptor::default()
    };
    let annotations = BTreeMap::from([
        (ORG_OPENCONTAINERS_IMAGE_TITLE.to_owned(), name.to_owned()),
        (ORG_OPENCONTAINERS_IMAGE_VERSION.to_owned(), version.to_owned()),
    ]);
    let manifest = OciImageManifest {
        schema_version: 2,
        media_type: Some(OCI_IMAGE_MEDIA_TYPE.to_owned()),
        config: descriptor(WASM_CONFIG_MEDIA_TYPE, &config_digest, config.len()),
        layers: vec![descriptor(WASM_LAYER_MEDIA_TYPE, layer_digest, wasm.len())],
        subject: None,
        artifact_type: None,
        annotations: Some(annotations),
    };
    let manifest = serde_json::to_vec(&manifest).expect("the manifest serializes");
    Built { manifest, config, config_digest }
}

/// The top-level import and export names (the WIT interfaces); none if the bytes do not parse.
fn component_info(wasm: &[u8]) -> Option<ComponentInfo> {
    use wasmparser::{Parser, Payload};
    let (mut imports, mut exports, mut depth) = (Vec::new(), Vec::new(), 0u32);
    for payload in Parser::new(0).parse_all(wasm) {
        match payload.ok()? {
            Payload::ModuleSection { .. } | Payload::ComponentSection { .. } => depth += 1,
            Payload::End(_) if depth == 0 => break,
            Payload::End(_) => depth -= 1,
            Payload::ComponentImportSection(section) if depth == 0 => {
                for import in section {
                    imports.push(import.ok()?.name.name.to_owned());
                }
            }
            Payload::ComponentExportSection(section) if depth == 0 => {
                for export in section {
                    exports.push(export.ok()?.name.name.to_owned());
                }
            }
            _ => {}
        }
    }
    Some(ComponentInfo { exports, imports, target: None })
}

/// What a pulled manifest says about the component.
#[derive(Debug)]
pub(crate) struct WasmArtifact {
    /// Lower-case hex SHA-256 the layer must hash to.
    pub layer_digest: String,
    pub size: u64,
    pub name: Option<String>,
    pub version: Option<String>,
}

/// Checks that `manifest` is the Wasm artifact layout and returns its one layer.
pub(crate) fn parse(manifest: &[u8]) -> Result<WasmArtifact, OciError> {
    // The manifest is the registry's word: quoted only once made printable.
    let not = |why: String| OciError::NotWasm { why: crate::text::printable(&why, 500) };
    if manifest.len() > MAX_MANIFEST_BYTES {
        return Err(OciError::TooLarge { what: "manifest", size: manifest.len() as u64, limit: MAX_MANIFEST_BYTES });
    }
    let m: OciImageManifest = serde_json::from_slice(manifest)
        .map_err(|e| not(format!("the manifest does not parse as an image manifest: {e}")))?;
    if m.schema_version != 2 {
        return Err(not(format!("manifest schemaVersion {} (expected 2)", m.schema_version)));
    }
    if let Some(t) = m.media_type.as_deref().filter(|t| *t != OCI_IMAGE_MEDIA_TYPE) {
        return Err(not(format!("manifest media type {t} (expected {OCI_IMAGE_MEDIA_TYPE})")));
    }
    if m.config.media_type != WASM_CONFIG_MEDIA_TYPE {
        return Err(not(format!("config media type {} (expected {WASM_CONFIG_MEDIA_TYPE})", m.config.media_type)));
    }
    let [layer] = <[OciDescriptor; 1]>::try_from(m.layers).map_err(|layers| {
        let types: Vec<&str> = layers.iter().map(|l| l.media_type.as_str()).collect();
        not(format!("{} layers [{}] (expected exactly one {WASM_LAYER_MEDIA_TYPE})", layers.len(), types.join(", ")))
    })?;
    if layer.media_type != WASM_LAYER_MEDIA_TYPE {
        return Err(not(format!("layer media type {} (expected {WASM_LAYER_MEDIA_TYPE})", layer.media_type)));
    }
    let layer_digest = crate::sha256::hex_of(&layer.digest)
        .ok_or_else(|| not(format!("layer digest '{}' is not sha256:<64 hex digits>", layer.digest)))?
        .to_owned();
    let size = u64::try_from(layer.size).map_err(|_| not(format!("layer size {}", layer.size)))?;
    if size > MAX_COMPONENT_BYTES as u64 {
        return Err(OciError::TooLarge { what: "component", size, limit: MAX_COMPONENT_BYTES });
    }
    let mut annotations = m.annotations.unwrap_or_default();
    Ok(WasmArtifact {
        layer_digest,
        size,
        name: annotations.remove(ORG_OPENCONTAINERS_IMAGE_TITLE).map(|n| crate::text::printable(&n, 100)),
        version: annotations.remove(ORG_OPENCONTAINERS_IMAGE_VERSION).map(|v| crate::text::printable(&v, 100)),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    /// A tiny component that imports an instance `a:b/c` and exports it again.
    fn component() -> Vec<u8> {
        let mut bytes = b"\0asm\x0d\0\x01\0".to_vec();
        // type section: one instance type with no exports.
        bytes.extend([7, 3, 1, 0x42, 0]);
        // import section: `a:b/c` of instance type 0.
        bytes.extend([10, 10, 1, 0, 5]);
        bytes.extend(b"a:b/c");
        bytes.extend([5, 0]);
        // export section: `a:b/c` as instance 0.
        bytes.extend([11, 11, 1, 0, 5]);
        bytes.extend(b"a:b/c");
        bytes.extend([5, 0, 0]);
        bytes
    }

    fn built() -> (Vec<u8>, Built) {
        let wasm = component();
        let digest = store::digest(&wasm);
        let b = build(&wasm, &digest, "random", "0.1.0", "2026-11-22T01:21:29Z".into());
        (wasm, b)
    }

    #[test]
    fn built_manifests_parse_back() {
        let (wasm, b) = built();
        let artifact = parse(&b.manifest).unwrap();
        assert_eq!(artifact.layer_digest, store::digest(&wasm));
        assert_eq!(artifact.size, wasm.len() as u64);
        assert_eq!((artifact.name.as_deref(), artifact.version.as_deref()), (Some("random"), Some("0.1.0")));
        let m: Value = serde_json::from_slice(&b.manifest).unwrap();
        assert_eq!(m["config"]["mediaType"], WASM_CONFIG_MEDIA_TYPE);
        assert_eq!(m["config"]["digest"], format!("sha256:{}", b.config_digest));
        assert_eq!(m["mediaType"], OCI_IMAGE_MEDIA_TYPE);
        let config: Value = serde_json::from_slice(&b.config).unwrap();
        assert_eq!(config["architecture"], "wasm");
        assert_eq!(config["layerDigests"], json!([format!("sha256:{}", artifact.layer_digest)]));
        assert_eq!(config["component"], json!({"exports": ["a:b/c"], "imports": ["a:b/c"], "target": null}));
    }

    #[test]
    fn not_a_component_has_no_component_info() {
        assert!(component_info(b"not wasm").is_none());
    }

    /// The built manifest with `edit` applied, parsed; the error's message.
    fn rejects(edit: impl FnOnce(&mut Value)) -> String {
        let mut m: Value = serde_json::from_slice(&built().1.manifest).unwrap();
        edit(&mut m);
        parse(&serde_json::to_vec(&m).unwrap()).expect_err("should be rejected").to_string()
    }

    #[test]
    fn other_layouts_are_rejected() {
        let e = rejects(|m| m["config"]["mediaType"] = json!("application/vnd.oci.image.config.v1+json"));
        assert!(e.contains("config media type application/vnd.oci.image.config.v1+json"), "{e}");
        let e = rejects(|m| m["layers"][0]["mediaType"] = json!("application/vnd.oci.image.layer.v1.tar"));
        assert!(e.contains("layer media type application/vnd.oci.image.layer.v1.tar"), "{e}");
        let e = rejects(|m| m["layers"] = json!([m["layers"][0].clone(), m["layers"][0].clone()]));
        assert!(e.contains("2 layers [application/wasm, application/wasm]"), "{e}");
        let e = rejects(|m| m["layers"] = json!([]));
        assert!(e.contains("0 layers"), "{e}");
        let e = rejects(|m| m["mediaType"] = json!("application/vnd.oci.image.index.v1+json"));
        assert!(e.contains("manifest media type application/vnd.oci.image.index.v1+json"), "{e}");
        let e = rejects(|m| m["layers"][0]["digest"] = json!("sha512:00"));
        assert!(e.contains("'sha512:00' is not sha256"), "{e}");
        let e = rejects(|m| m["layers"][0]["size"] = json!(300u64 << 20));
        assert!(e.contains("component of 314572800 bytes is over the 268435456-byte limit"), "{e}");
        assert!(e.starts_with("component"), "{e}");
        let e = parse(b"{\"schemaVersion\": 2}").unwrap_err().to_string();
        assert!(e.contains("not a Wasm component artifact") && e.contains("does not parse"), "{e}");
        let huge = vec![b' '; MAX_MANIFEST_BYTES + 1];
        assert!(parse(&huge).unwrap_err().to_string().contains("manifest of"));
    }
}
