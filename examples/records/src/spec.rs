//! The parameter: a package name, version and record types, parsed from
//! `pulumi package add` args and encoded as canonical JSON for the value form.

use std::collections::BTreeMap;

use pulumi_wasm_sdk::{Error, Result};
use serde::{Deserialize, Serialize};

/// Version of the value encoding; bumped if the JSON shape ever changes.
const VALUE_VERSION: u32 = 1;
const MAX_NAME: usize = 64;

/// A generated package. Maps keep names sorted, so the JSON encoding is
/// canonical: the same spec always gives the same bytes, whatever the arg order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    pub v: u32,
    pub name: String,
    pub version: String,
    /// Type name (PascalCase) -> its properties.
    pub types: BTreeMap<String, Props>,
}

/// Property name (camelCase) -> its declaration.
pub type Props = BTreeMap<String, Prop>;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    String,
    Number,
    Integer,
    Boolean,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Prop {
    #[serde(rename = "type")]
    pub kind: Kind,
    /// `?`: may be left out.
    #[serde(default, skip_serializing_if = "is_false")]
    pub optional: bool,
    /// `!`: a change replaces the resource.
    #[serde(default, skip_serializing_if = "is_false")]
    pub replace: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::String => "string",
            Kind::Number => "number",
            Kind::Integer => "integer",
            Kind::Boolean => "boolean",
        }
    }

    fn parse(s: &str) -> Option<Kind> {
        [Kind::String, Kind::Number, Kind::Integer, Kind::Boolean].into_iter().find(|k| k.name() == s)
    }
}

impl Spec {
    /// A spec built in code (the base package), not validated.
    pub fn new(name: &str, version: &str, types: BTreeMap<String, Props>) -> Spec {
        Spec { v: VALUE_VERSION, name: name.into(), version: version.into(), types }
    }

    /// `[--version=X.Y.Z] <package> <Type>=<prop>[?|!]:<type>,... ...`; `default_version`
    /// is the provider's own.
    pub fn from_args(args: &[String], default_version: &str) -> Result<Spec> {
        let mut rest = args;
        let mut version = default_version.to_owned();
        while let Some(flag) = rest.first().filter(|a| a.starts_with('-')) {
            let v = flag.strip_prefix("--version=").ok_or_else(|| {
                Error::invalid(format!("unknown flag '{flag}': the only flag is --version=X.Y.Z, before the package"))
            })?;
            version = v.to_owned();
            rest = &rest[1..];
        }
        let usage = "expected: [--version=X.Y.Z] <package> <Type>=<prop>:<type>,... (types: string, number, \
                     integer, boolean; `prop?` optional, `prop!` replaces on change)";
        let (name, defs) = rest.split_first().ok_or_else(|| Error::invalid(format!("no package name; {usage}")))?;
        if defs.is_empty() {
            return Err(Error::invalid(format!("package '{name}' declares no types; {usage}")));
        }
        let mut types = BTreeMap::new();
        for def in defs {
            let (ty, props) = parse_type(def)?;
            if types.insert(ty.clone(), props).is_some() {
                return Err(Error::invalid(format!("'{def}': type '{ty}' is declared twice")));
            }
        }
        let spec = Spec::new(name, &version, types);
        spec.validate()?;
        Ok(spec)
    }

    /// The value bytes: compact JSON, keys in a fixed order.
    pub fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("a spec always serialises")
    }

    /// Decodes and re-validates value bytes (they come back from SDKs, not only from us).
    pub fn from_bytes(bytes: &[u8]) -> Result<Spec> {
        let spec: Spec = serde_json::from_slice(bytes)
            .map_err(|e| Error::invalid(format!("the parameter value is not a records spec: {e}")))?;
        if spec.v != VALUE_VERSION {
            let v = spec.v;
            return Err(Error::invalid(format!("parameter value version {v} is not supported (expected 1)")));
        }
        spec.validate()?;
        Ok(spec)
    }

    fn validate(&self) -> Result<()> {
        check_package_name(&self.name)?;
        check_version(&self.version)?;
        for (ty, props) in &self.types {
            check_type_name(ty)?;
            if props.is_empty() {
                return Err(Error::invalid(format!("type '{ty}' has no properties")));
            }
            for prop in props.keys() {
                check_property_name(ty, prop)?;
            }
        }
        Ok(())
    }
}

/// `Item=title:string,sku!:string,note?:string`.
fn parse_type(def: &str) -> Result<(String, Props)> {
    let bad = |why: String| Error::invalid(format!("'{def}': {why}"));
    let (ty, list) = def.split_once('=').ok_or_else(|| bad("expected <Type>=<prop>:<type>,...".into()))?;
    check_type_name(ty).map_err(|e| bad(e.to_string()))?;
    let mut props = Props::new();
    for item in list.split(',') {
        let (mut name, kind) = item.split_once(':').ok_or_else(|| bad(format!("'{item}' is not <prop>:<type>")))?;
        let kind = Kind::parse(kind)
            .ok_or_else(|| bad(format!("'{item}': unknown type '{kind}' (use string, number, integer or boolean)")))?;
        let mut prop = Prop { kind, optional: false, replace: false };
        // Markers after the name, in either order, each at most once.
        while let Some(m) = name.strip_suffix(['?', '!']) {
            let flag = if name.ends_with('?') { &mut prop.optional } else { &mut prop.replace };
            if std::mem::replace(flag, true) {
                return Err(bad(format!("'{item}': a marker is repeated")));
            }
            name = m;
        }
        check_property_name(ty, name).map_err(|e| bad(e.to_string()))?;
        if props.insert(name.to_owned(), prop).is_some() {
            return Err(bad(format!("property '{name}' is declared twice")));
        }
    }
    Ok((ty.to_owned(), props))
}

/// As the host's: it becomes a token prefix and a plugin name. `records` is
/// this provider's own package, whose tokens a sub-package must not shadow.
fn check_package_name(name: &str) -> Result<()> {
    let ok = (1..=MAX_NAME).contains(&name.len())
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
    if !ok {
        return Err(Error::invalid(format!(
            "package name '{name}': use 1-{MAX_NAME} lowercase letters, digits, '-' or '_', starting with a letter"
        )));
    }
    if matches!(name, "records" | "pulumi") {
        return Err(Error::invalid(format!("package name '{name}' is reserved")));
    }
    Ok(())
}

fn check_version(version: &str) -> Result<()> {
    semver::Version::parse(version)
        .map(drop)
        .map_err(|e| Error::invalid(format!("version '{version}' is not semver (X.Y.Z): {e}")))
}

/// PascalCase; `Provider` is the name SDKs give the package's provider class.
fn check_type_name(ty: &str) -> Result<()> {
    if !is_ident(ty, |c| c.is_ascii_uppercase()) {
        return Err(Error::invalid(format!("type name '{ty}' must be PascalCase (A-Z, then letters and digits)")));
    }
    if ty == "Provider" {
        return Err(Error::invalid("type name 'Provider' is reserved".to_string()));
    }
    Ok(())
}

/// camelCase; `id` and `urn` are every resource's own outputs.
fn check_property_name(ty: &str, prop: &str) -> Result<()> {
    if !is_ident(prop, |c| c.is_ascii_lowercase()) {
        return Err(Error::invalid(format!(
            "property name '{prop}' of '{ty}' must be camelCase (a-z, then letters and digits)"
        )));
    }
    if matches!(prop, "id" | "urn") {
        return Err(Error::invalid(format!("property name '{prop}' of '{ty}' is reserved")));
    }
    Ok(())
}

fn is_ident(s: &str, first: impl Fn(char) -> bool) -> bool {
    s.len() <= MAX_NAME && s.starts_with(first) && s.chars().all(|c| c.is_ascii_alphanumeric())
}
