//! `records`: a parameterized provider whose resource types come from its
//! parameter. `pulumi package add wasm ./records.wasm -- shop
//! Item=title:string,sku!:string` makes a package `shop` with a resource
//! `shop:index:Item`; its resources are virtual records, kept only in the state.
//!
//! Each `parameterize` call adds a sub-package (see [`spec`] for the args and
//! the value bytes). One call is a *replacement*: GetSchema with no sub-package
//! name answers that package. Several calls are an *extension*: GetSchema and
//! every resource call are routed by package name, and the base package
//! `records` (resource `records:index:Note`) keeps working next to them.
//! Only `parameterize` sets state, so the host can replay it into any instance.

mod record;
mod schema;
pub mod spec;

use std::collections::BTreeMap;
use std::sync::LazyLock;

use pulumi_wasm_sdk::*;

use spec::{Kind, Prop, Props, Spec};

pub const BASE: &str = "records";
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The base package: one type of its own, so an extension can show it still works.
static BASE_SPEC: LazyLock<Spec> = LazyLock::new(|| {
    let text = Prop { kind: Kind::String, optional: false, replace: false };
    Spec::new(BASE, VERSION, BTreeMap::from([("Note".into(), Props::from([("text".into(), text)]))]))
});

#[derive(Default)]
pub struct Records {
    /// Sub-packages by name, as `parameterize` set them up.
    packages: BTreeMap<String, Spec>,
}

impl Records {
    /// The base package or a sub-package, by name.
    fn package(&self, name: &str) -> Option<&Spec> {
        if name == BASE { Some(&BASE_SPEC) } else { self.packages.get(name) }
    }

    fn known(&self) -> String {
        std::iter::once(BASE).chain(self.packages.keys().map(String::as_str)).collect::<Vec<_>>().join(", ")
    }

    /// The package GetSchema asks for: by name, else the only sub-package
    /// (replacement), else the base.
    fn schema_package(&self, req: &GetSchemaRequest) -> Result<&Spec> {
        let spec = match (req.subpackage_name.as_str(), self.packages.len()) {
            ("", 1) => self.packages.values().next().expect("one package"),
            ("", _) => &BASE_SPEC,
            (name, _) => self.package(name).ok_or_else(|| {
                Error::NotFound(format!("no package '{name}' here (this provider serves: {})", self.known()))
            })?,
        };
        let want = &req.subpackage_version;
        if !want.is_empty() && *want != spec.version {
            let (name, have) = (&spec.name, &spec.version);
            return Err(Error::NotFound(format!("package '{name}' is at version {have}, not {want}")));
        }
        Ok(spec)
    }

    /// The record type of a resource request, from its type token (or, when
    /// that is empty, its URN): `<package>:index:<Type>`.
    fn route<'a>(&'a self, resource_type: &'a str, urn: &'a str) -> Result<Target<'a>> {
        let token = if resource_type.is_empty() { urn_type(urn) } else { resource_type };
        let mut parts = token.split(':');
        let (pkg, module, ty) = match (parts.next(), parts.next(), parts.next(), parts.next()) {
            (Some(p), Some(m), Some(t), None) => (p, m, t),
            _ => return Err(Error::invalid(format!("malformed resource type '{token}'"))),
        };
        let spec = self.package(pkg).ok_or_else(|| {
            Error::invalid(format!("unknown resource type '{token}': no package '{pkg}' (known: {})", self.known()))
        })?;
        match spec.types.get_key_value(ty).filter(|_| module == "index") {
            Some((ty, props)) => Ok(Target { token, ty, props }),
            None => {
                let types: Vec<String> = spec.types.keys().map(|t| schema::token(pkg, t)).collect();
                Err(Error::invalid(format!("unknown resource type '{token}' (known: {})", types.join(", "))))
            }
        }
    }
}

/// `urn:pulumi:<stack>::<project>::<parent$...$type>::<name>` -> the type.
fn urn_type(urn: &str) -> &str {
    urn.split("::").nth(2).and_then(|q| q.rsplit('$').next()).unwrap_or("")
}

/// The record type a resource call is about.
struct Target<'a> {
    token: &'a str,
    ty: &'a str,
    props: &'a Props,
}

impl Target<'_> {
    /// Check's verdict as an error, for calls that have no failure list.
    fn valid(&self, news: &PropertyMap) -> Result<PropertyMap> {
        let (inputs, failures) = record::check(self.props, news);
        if failures.is_empty() {
            return Ok(inputs);
        }
        let list: Vec<String> = failures.iter().map(|f| format!("{}: {}", f.property, f.reason)).collect();
        Err(Error::invalid(format!("invalid inputs for {}: {}", self.token, list.join("; "))))
    }
}

impl Provider for Records {
    fn info(&self) -> PluginInfo {
        PluginInfo::new(BASE, VERSION)
    }

    fn parameterize(&mut self, req: ParameterizeRequest) -> Result<PackageRef> {
        let spec = match req {
            ParameterizeRequest::Args(args) => Spec::from_args(&args, VERSION)?,
            ParameterizeRequest::Value(v) => {
                let spec = Spec::from_bytes(&v.value)?;
                if (spec.name.as_str(), spec.version.as_str()) != (v.name.as_str(), v.version.as_str()) {
                    let (n, ver) = (&spec.name, &spec.version);
                    let msg = format!(
                        "the parameter value describes {n}@{ver}, but the request names {}@{}",
                        v.name, v.version
                    );
                    return Err(Error::invalid(msg));
                }
                spec
            }
        };
        if self.packages.get(&spec.name).is_some_and(|old| *old != spec) {
            let name = &spec.name;
            return Err(Error::FailedPrecondition(format!(
                "package '{name}' is already parameterized with a different spec; give the new one another name"
            )));
        }
        let package = PackageRef { name: spec.name.clone(), version: spec.version.clone() };
        self.packages.insert(spec.name.clone(), spec);
        Ok(package)
    }

    fn get_schema(&mut self, req: GetSchemaRequest) -> Result<String> {
        let spec = self.schema_package(&req)?;
        let parameterization = (spec.name != BASE).then(|| Parameterization::new(&self.info(), spec.to_bytes()));
        Ok(schema::schema(spec, parameterization).to_string())
    }

    fn check(&mut self, req: CheckRequest) -> Result<CheckResponse> {
        let target = self.route(&req.resource_type, &req.urn)?;
        let (inputs, failures) = record::check(target.props, &req.news);
        Ok(CheckResponse { inputs, failures })
    }

    /// Old inputs against new; a `!` property replaces the record.
    fn diff(&mut self, req: DiffRequest) -> Result<DiffResponse> {
        let target = self.route(&req.resource_type, &req.urn)?;
        let replaces: Vec<&String> = target.props.iter().filter(|(_, p)| p.replace).map(|(n, _)| n).collect();
        let olds = if req.old_inputs.is_empty() { &req.olds } else { &req.old_inputs };
        Ok(Differ::new().replace_on_changes(&replaces).ignore(&req.ignore_changes).diff(olds, &req.news))
    }

    /// Outputs are the inputs; a preview has no ID yet and keeps unknowns.
    fn create(&mut self, req: CreateRequest) -> Result<CreateResponse> {
        let target = self.route(&req.resource_type, &req.urn)?;
        let properties = target.valid(&req.properties)?;
        let id = if req.preview { String::new() } else { record::id(target.ty, &req.urn, &properties) };
        Ok(CreateResponse { id, properties, refresh_before_update: false })
    }

    /// A record exists only in the state: refresh returns it, import has nothing to read.
    fn read(&mut self, req: ReadRequest) -> Result<ReadResponse> {
        let ty = self.route(&req.resource_type, &req.urn)?.ty;
        if req.properties.is_empty() {
            return Err(Error::NotFound(format!(
                "{ty} '{}' cannot be imported: records are virtual and exist only in Pulumi's state",
                req.id
            )));
        }
        let inputs = if req.inputs.is_empty() { req.properties.clone() } else { req.inputs };
        Ok(ReadResponse { id: req.id, properties: req.properties, inputs, refresh_before_update: false })
    }

    fn update(&mut self, req: UpdateRequest) -> Result<UpdateResponse> {
        let properties = self.route(&req.resource_type, &req.urn)?.valid(&req.news)?;
        Ok(UpdateResponse { properties, refresh_before_update: false })
    }

    /// Nothing to remove outside the state; the type is still checked.
    fn delete(&mut self, req: DeleteRequest) -> Result<()> {
        self.route(&req.resource_type, &req.urn).map(drop)
    }
}

export_provider!(Records);

#[cfg(test)]
mod tests;
