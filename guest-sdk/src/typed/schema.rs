//! The package schema, built from the types: property specs, named object
//! and enum types, resources, functions and provider configuration.

use std::collections::BTreeMap;

use serde_json::{Map, json};

use super::types::{Object, Property};
use crate::serde::to_json;

/// A schema fragment.
pub type Json = serde_json::Value;

/// The named types (`#/types/...`) a schema refers to.
pub struct Types {
    package: String,
    defs: BTreeMap<String, Json>,
    /// Which type each token was defined for.
    owners: BTreeMap<String, String>,
}

impl Types {
    pub fn new(package: &str) -> Self {
        Types { package: package.to_owned(), defs: BTreeMap::new(), owners: BTreeMap::new() }
    }

    /// The token of a named type: its own, or `<package>:index:<name>`.
    pub fn token(&self, token: Option<&str>, name: &str) -> String {
        token.map_or_else(|| format!("{}:index:{name}", self.package), str::to_owned)
    }

    /// Defines a type once (recursive types see their own reference) and refers to it.
    ///
    /// Panics when two types claim one token (two `Rule` structs in two
    /// modules are both `<package>:index:Rule` by default): the schema
    /// would describe one of them, and SDKs generated from it would send
    /// the wrong shape for the other. Registering a resource twice panics
    /// for the same reason; `#[pulumi(token = "...")]` tells them apart.
    fn define(&mut self, token: String, owner: String, build: impl FnOnce(&mut Types) -> Json) -> Json {
        match self.owners.get(&token) {
            None => {
                self.owners.insert(token.clone(), owner);
                self.defs.insert(token.clone(), Json::Null);
                let spec = build(self);
                self.defs.insert(token.clone(), spec);
            }
            Some(first) if *first == owner => {}
            Some(first) => panic!(
                "two types claim the schema token {token}: {first} and {owner}; give one `#[pulumi(token = \"...\")]`"
            ),
        }
        json!({ "$ref": format!("#/types/{token}") })
    }

    /// A reference to the object type `T`, defined on first use.
    pub fn object<T: Object>(&mut self) -> Json {
        let token = self.token(T::TOKEN, T::NAME);
        self.define(token, std::any::type_name::<T>().to_owned(), |types| {
            let props = T::properties();
            // As an input's: a nested `replace_on_changes` field replaces the
            // resource holding it (generated SDKs pass its path on).
            let mut spec = object_spec(props, types, true, |p| p.required_input());
            spec.insert("type".into(), json!("object"));
            describe(&mut spec, T::DESCRIPTION);
            Json::Object(spec)
        })
    }

    /// A reference to a string enum, defined on first use. `values`: (value, description).
    pub fn enumeration(&mut self, name: &str, token: Option<&str>, description: &str, values: &[(&str, &str)]) -> Json {
        let token = self.token(token, name);
        // An enum is told by its values: two with the same ones are one type on the wire.
        let owner = format!("the enum {name} of {:?}", values.iter().map(|(v, _)| v).collect::<Vec<_>>());
        self.define(token, owner, |_| {
            let values: Vec<Json> = values
                .iter()
                .map(|(value, doc)| {
                    let mut v = Map::new();
                    v.insert("value".into(), json!(value));
                    describe(&mut v, doc);
                    Json::Object(v)
                })
                .collect();
            let mut spec = Map::new();
            spec.insert("type".into(), json!("string"));
            spec.insert("enum".into(), Json::Array(values));
            describe(&mut spec, description);
            Json::Object(spec)
        })
    }

    /// Whether values of `spec` (a property's, or a named type's it refers
    /// to) are other than text: stack configuration, which is all text,
    /// is parsed as JSON for them.
    pub(crate) fn parsed_from_text(&self, spec: &Json) -> bool {
        let named = spec.get("$ref").and_then(Json::as_str).and_then(|r| r.strip_prefix("#/types/"));
        let spec = named.and_then(|token| self.defs.get(token)).unwrap_or(spec);
        matches!(spec.get("type").and_then(Json::as_str), Some("integer" | "number" | "boolean" | "array" | "object"))
    }

    pub(crate) fn into_defs(self) -> BTreeMap<String, Json> {
        self.defs
    }
}

fn describe(spec: &mut Map<String, Json>, description: &str) {
    if !description.is_empty() {
        spec.insert("description".into(), json!(description));
    }
}

/// One property's spec; `input` adds `replaceOnChanges`.
pub(crate) fn property_spec(p: &Property, types: &mut Types, input: bool) -> Json {
    let mut spec = match (p.schema)(types) {
        Json::Object(m) => m,
        other => Map::from_iter([("type".to_owned(), other)]),
    };
    describe(&mut spec, p.description);
    // The schema only has room for primitive defaults.
    if let Some(d) =
        p.default.as_ref().and_then(|d| to_json(d).ok()).filter(|d| d.is_boolean() || d.is_number() || d.is_string())
    {
        spec.insert("default".into(), d);
    }
    if p.secret {
        spec.insert("secret".into(), json!(true));
    }
    if input && p.replace_on_changes {
        spec.insert("replaceOnChanges".into(), json!(true));
    }
    Json::Object(spec)
}

/// `{"properties": ..., "required": [...]}` (required left out when empty).
fn object_spec(
    props: &[Property],
    types: &mut Types,
    input: bool,
    required: impl Fn(&Property) -> bool,
) -> Map<String, Json> {
    let mut out = Map::new();
    out.insert("properties".into(), properties(props, types, input));
    if let Some(names) = required_names(props, required) {
        out.insert("required".into(), names);
    }
    out
}

fn properties(props: &[Property], types: &mut Types, input: bool) -> Json {
    Json::Object(props.iter().map(|p| (p.name.to_owned(), property_spec(p, types, input))).collect())
}

/// The names of the required properties; `None` when there are none.
fn required_names(props: &[Property], required: impl Fn(&Property) -> bool) -> Option<Json> {
    let names: Vec<Json> = props.iter().filter(|p| required(p)).map(|p| json!(p.name)).collect();
    (!names.is_empty()).then_some(Json::Array(names))
}

/// A resource: inputs (with replaceOnChanges) and state. Defaulted inputs are
/// optional to set but always present in the state.
pub(crate) fn resource(description: &str, inputs: &[Property], state: &[Property], types: &mut Types) -> Json {
    let mut spec = Map::new();
    describe(&mut spec, description);
    spec.insert("inputProperties".into(), properties(inputs, types, true));
    if let Some(required) = required_names(inputs, Property::required_input) {
        spec.insert("requiredInputs".into(), required);
    }
    spec.extend(object_spec(state, types, false, |p| !p.optional));
    Json::Object(spec)
}

pub(crate) fn function(description: &str, args: &[Property], outputs: &[Property], types: &mut Types) -> Json {
    let mut spec = Map::new();
    describe(&mut spec, description);
    spec.insert("inputs".into(), Json::Object(object_spec(args, types, false, Property::required_input)));
    spec.insert("outputs".into(), Json::Object(object_spec(outputs, types, false, |p| !p.optional)));
    Json::Object(spec)
}

/// The `config` section and the `provider` resource for configuration `props`.
pub(crate) fn config(props: &[Property], types: &mut Types) -> (Json, Json) {
    let variables = properties(props, types, false);
    // Pulumi's schema names the list of *required* variables `defaults`.
    let mut config = Map::new();
    config.insert("variables".into(), variables.clone());
    let mut provider = Map::new();
    provider.insert("inputProperties".into(), variables);
    if let Some(required) = required_names(props, Property::required_input) {
        config.insert("defaults".into(), required.clone());
        provider.insert("requiredInputs".into(), required);
    }
    (Json::Object(config), Json::Object(provider))
}
