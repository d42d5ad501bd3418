//! The Pulumi package schema of a spec: one resource per record type.

use pulumi_wasm_sdk::Parameterization;
use serde_json::{Map, Value as Json, json};

use crate::spec::{Props, Spec};

/// `parameterization` is `None` for the base package and the block naming
/// this provider for a generated one.
pub fn schema(spec: &Spec, parameterization: Option<Parameterization>) -> Json {
    let resources: Map<String, Json> =
        spec.types.iter().map(|(ty, props)| (token(&spec.name, ty), resource(ty, props))).collect();
    let mut s = json!({
        "name": spec.name,
        "version": spec.version,
        "displayName": spec.name,
        "description": format!("Virtual records ({}), kept only in Pulumi's state.", spec.name),
        "keywords": ["pulumi", "records", "wasm"],
        "license": "Apache-2.0",
        "resources": resources,
    });
    if let Some(p) = parameterization {
        s["parameterization"] = p.to_json();
    }
    s
}

pub fn token(package: &str, ty: &str) -> String {
    format!("{package}:index:{ty}")
}

/// Outputs equal inputs, so both sides list the same properties; only the
/// inputs carry `replaceOnChanges`.
fn resource(ty: &str, props: &Props) -> Json {
    let required: Vec<&String> = props.iter().filter(|(_, p)| !p.optional).map(|(n, _)| n).collect();
    let spec = |input: bool| -> Map<String, Json> {
        props
            .iter()
            .map(|(name, p)| {
                let mut s = json!({ "type": p.kind.name() });
                if input && p.replace {
                    s["replaceOnChanges"] = json!(true);
                }
                (name.clone(), s)
            })
            .collect()
    };
    json!({
        "description": format!("A record of type `{ty}`: its outputs are its inputs."),
        "inputProperties": spec(true),
        "requiredInputs": required,
        "properties": spec(false),
        "required": required,
    })
}
