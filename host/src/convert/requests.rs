//! Requests from the wire into WIT records, and WIT responses back to the wire.
//! Values go through [`super::value`]; everything else is field mapping.

use std::collections::HashMap;

use prost_types::Struct;
use pulumirpc as pb;
use pulumirpc::{check_request::autonaming_options::Mode, diff_response::DiffChanges, property_diff::Kind};

use super::value::{ConvertError, Limits, WireOptions, opt_struct_into_wit, value_into_wit, wit_into_struct};
use crate::runtime::MAX_SCHEMA_BYTES;
use crate::runtime::bindings::{rp, types};
use crate::text;

/// A WIT response that becomes a wire response.
pub trait IntoWire {
    type Wire;
    /// The engine reads the answer refusing unknowns, as it does a Read's
    /// (a Create's and Update's only outside a preview: see `Effect`).
    const KNOWN_ONLY: bool = false;
    fn into_wire(self, o: WireOptions) -> Result<Self::Wire, ConvertError>;
    /// Calls `f` with each of the answer's values (for `runtime::held`).
    fn each_value(&self, _f: &mut dyn FnMut(&types::Value)) {}
    /// The id of the resource a Create made: kept even when the rest of
    /// the answer is invalid.
    fn made(&self) -> Option<&str> {
        None
    }
}

// Requests and responses are taken by value: their strings and byte lists
// move across, so a large value (an asset, a big map) is never copied here.

fn map(s: Option<Struct>) -> Result<types::Value, ConvertError> {
    opt_struct_into_wit(s)
}

fn opt_map(s: Option<Struct>) -> Result<Option<types::Value>, ConvertError> {
    s.map(|s| opt_struct_into_wit(Some(s))).transpose()
}

fn out(v: types::Value, o: WireOptions) -> Result<Option<Struct>, ConvertError> {
    wit_into_struct(v, o, Limits::default()).map(Some)
}

fn pairs<V>(m: HashMap<String, V>) -> Vec<(String, V)> {
    let mut v: Vec<_> = m.into_iter().collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

fn deps_in<D>(m: HashMap<String, D>, urns: impl Fn(D) -> Vec<String>) -> rp::DependencyMap {
    let mut v: Vec<_> = m.into_iter().map(|(k, d)| (k, urns(d))).collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

fn deps_out<D>(d: rp::DependencyMap, make: impl Fn(Vec<String>) -> D) -> HashMap<String, D> {
    d.into_iter().map(|(k, urns)| (k, make(urns))).collect()
}

/// The deployment fields Call and Construct requests share (same names, different messages).
macro_rules! deployment {
    ($r:expr) => {
        rp::Deployment {
            project: $r.project,
            stack: $r.stack,
            organization: $r.organization,
            config: pairs($r.config),
            config_secret_keys: $r.config_secret_keys,
            dry_run: $r.dry_run,
            parallel: $r.parallel,
            monitor_endpoint: $r.monitor_endpoint,
            accepts_output_values: $r.accepts_output_values,
        }
    };
}

/// The guest's failures, which the engine prints on the user's terminal:
/// what a terminal would act on is escaped ([`text`]), and each is cut to
/// [`text::MAX_MESSAGE`].
fn failures(f: Vec<types::CheckFailure>) -> Vec<pb::CheckFailure> {
    f.into_iter()
        .map(|f| pb::CheckFailure {
            property: text::escape_within(f.property, &[], text::MAX_MESSAGE),
            reason: text::escape_within(f.reason, text::LINES, text::MAX_MESSAGE),
        })
        .collect()
}

impl TryFrom<pb::ParameterizeRequest> for rp::ParameterizeRequest {
    type Error = ConvertError;
    fn try_from(r: pb::ParameterizeRequest) -> Result<Self, ConvertError> {
        use pb::parameterize_request::Parameters;
        match r.parameters {
            Some(Parameters::Args(a)) => Ok(rp::ParameterizeRequest::Args(a.args)),
            Some(Parameters::Value(v)) => Ok(rp::ParameterizeRequest::Value(rp::ParameterValue {
                name: v.name,
                version: v.version,
                value: v.value,
            })),
            None => Err(ConvertError::Request("parameterize needs either args or a value".into())),
        }
    }
}

impl IntoWire for rp::PackageRef {
    type Wire = pb::ParameterizeResponse;
    fn into_wire(self, _: WireOptions) -> Result<Self::Wire, ConvertError> {
        Ok(pb::ParameterizeResponse { name: self.name, version: self.version })
    }
}

impl TryFrom<pb::GetSchemaRequest> for rp::GetSchemaRequest {
    type Error = ConvertError;
    fn try_from(r: pb::GetSchemaRequest) -> Result<Self, ConvertError> {
        Ok(rp::GetSchemaRequest {
            version: r.version,
            subpackage_name: r.subpackage_name,
            subpackage_version: r.subpackage_version,
        })
    }
}

impl IntoWire for String {
    type Wire = pb::GetSchemaResponse;
    fn into_wire(self, _: WireOptions) -> Result<Self::Wire, ConvertError> {
        if self.len() > MAX_SCHEMA_BYTES {
            return Err(ConvertError::Response(format!("schema of {} bytes is too large", self.len())));
        }
        // Checked, not built: a tree of 64 MiB of small values would take
        // over a gigabyte of the host's memory for nothing.
        serde_json::from_str::<serde::de::IgnoredAny>(&self)
            .map_err(|e| ConvertError::Response(format!("schema is not valid JSON: {e}")))?;
        Ok(pb::GetSchemaResponse { schema: self })
    }
}

impl TryFrom<pb::CheckRequest> for rp::CheckRequest {
    type Error = ConvertError;
    fn try_from(r: pb::CheckRequest) -> Result<Self, ConvertError> {
        Ok(rp::CheckRequest {
            urn: r.urn,
            name: r.name,
            type_: r.r#type,
            olds: map(r.olds)?,
            news: map(r.news)?,
            random_seed: r.random_seed,
            autonaming: r.autonaming.map(|a| rp::Autonaming {
                mode: match a.mode() {
                    Mode::Propose => rp::AutonamingMode::Propose,
                    Mode::Enforce => rp::AutonamingMode::Enforce,
                    Mode::Disable => rp::AutonamingMode::Disable,
                },
                proposed_name: a.proposed_name,
            }),
            old_outputs: opt_map(r.old_outputs)?,
        })
    }
}

impl IntoWire for rp::CheckResponse {
    type Wire = pb::CheckResponse;
    fn each_value(&self, f: &mut dyn FnMut(&types::Value)) {
        f(&self.inputs);
    }
    fn into_wire(self, o: WireOptions) -> Result<Self::Wire, ConvertError> {
        Ok(pb::CheckResponse { inputs: out(self.inputs, o)?, failures: failures(self.failures) })
    }
}

impl TryFrom<pb::DiffRequest> for rp::DiffRequest {
    type Error = ConvertError;
    fn try_from(r: pb::DiffRequest) -> Result<Self, ConvertError> {
        Ok(rp::DiffRequest {
            id: r.id,
            urn: r.urn,
            name: r.name,
            type_: r.r#type,
            olds: map(r.olds)?,
            news: map(r.news)?,
            old_inputs: map(r.old_inputs)?,
            ignore_changes: r.ignore_changes,
        })
    }
}

impl IntoWire for rp::DiffResponse {
    type Wire = pb::DiffResponse;
    fn into_wire(self, _: WireOptions) -> Result<Self::Wire, ConvertError> {
        let changes = match self.changes {
            rp::DiffChanges::Unknown => DiffChanges::DiffUnknown,
            rp::DiffChanges::None => DiffChanges::DiffNone,
            rp::DiffChanges::Some => DiffChanges::DiffSome,
        };
        let has_detailed_diff = self.detailed_diff.is_some();
        let detailed_diff = self
            .detailed_diff
            .unwrap_or_default()
            .into_iter()
            .map(|(path, d)| {
                let kind = match d.kind {
                    rp::DiffKind::Add => Kind::Add,
                    rp::DiffKind::AddReplace => Kind::AddReplace,
                    rp::DiffKind::Delete => Kind::Delete,
                    rp::DiffKind::DeleteReplace => Kind::DeleteReplace,
                    rp::DiffKind::Update => Kind::Update,
                    rp::DiffKind::UpdateReplace => Kind::UpdateReplace,
                };
                (path, pb::PropertyDiff { kind: kind as i32, input_diff: d.input_diff })
            })
            .collect();
        Ok(pb::DiffResponse {
            replaces: self.replaces,
            stables: self.stables,
            delete_before_replace: self.delete_before_replace,
            changes: changes as i32,
            diffs: self.diffs,
            detailed_diff,
            has_detailed_diff,
        })
    }
}

impl TryFrom<pb::ConfigureRequest> for rp::ConfigureRequest {
    type Error = ConvertError;
    fn try_from(r: pb::ConfigureRequest) -> Result<Self, ConvertError> {
        Ok(rp::ConfigureRequest {
            variables: pairs(r.variables),
            args: map(r.args)?,
            id: r.id.unwrap_or_default(),
            urn: r.urn.unwrap_or_default(),
            name: r.name.unwrap_or_default(),
            type_: r.r#type.unwrap_or_default(),
        })
    }
}

impl IntoWire for rp::ConfigureResponse {
    type Wire = pb::ConfigureResponse;
    fn into_wire(self, _: WireOptions) -> Result<Self::Wire, ConvertError> {
        // The host translates every value kind, so it accepts them all for the guest.
        Ok(pb::ConfigureResponse {
            accept_secrets: true,
            supports_preview: true,
            accept_resources: true,
            accept_outputs: true,
            supports_autonaming_configuration: self.supports_autonaming_configuration,
        })
    }
}

impl TryFrom<pb::InvokeRequest> for rp::InvokeRequest {
    type Error = ConvertError;
    fn try_from(r: pb::InvokeRequest) -> Result<Self, ConvertError> {
        Ok(rp::InvokeRequest { token: r.tok, args: map(r.args)?, preview: r.preview })
    }
}

impl IntoWire for rp::InvokeResponse {
    type Wire = pb::InvokeResponse;
    fn each_value(&self, f: &mut dyn FnMut(&types::Value)) {
        f(&self.outputs);
    }
    fn into_wire(self, o: WireOptions) -> Result<Self::Wire, ConvertError> {
        Ok(pb::InvokeResponse { r#return: out(self.outputs, o)?, failures: failures(self.failures) })
    }
}

impl TryFrom<pb::CallRequest> for rp::CallRequest {
    type Error = ConvertError;
    fn try_from(r: pb::CallRequest) -> Result<Self, ConvertError> {
        Ok(rp::CallRequest {
            token: r.tok,
            args: map(r.args)?,
            arg_dependencies: deps_in(r.arg_dependencies, |d| d.urns),
            deployment: deployment!(r),
        })
    }
}

impl IntoWire for rp::CallResponse {
    type Wire = pb::CallResponse;
    fn each_value(&self, f: &mut dyn FnMut(&types::Value)) {
        f(&self.outputs);
    }
    fn into_wire(self, o: WireOptions) -> Result<Self::Wire, ConvertError> {
        Ok(pb::CallResponse {
            r#return: out(self.outputs, o)?,
            failures: failures(self.failures),
            return_dependencies: deps_out(self.return_dependencies, |urns| pb::call_response::ReturnDependencies {
                urns,
            }),
        })
    }
}

impl TryFrom<pb::CreateRequest> for rp::CreateRequest {
    type Error = ConvertError;
    fn try_from(r: pb::CreateRequest) -> Result<Self, ConvertError> {
        Ok(rp::CreateRequest {
            urn: r.urn,
            name: r.name,
            type_: r.r#type,
            properties: map(r.properties)?,
            timeout: r.timeout,
            preview: r.preview,
        })
    }
}

impl IntoWire for rp::CreateResponse {
    type Wire = pb::CreateResponse;
    fn each_value(&self, f: &mut dyn FnMut(&types::Value)) {
        f(&self.properties);
    }
    fn made(&self) -> Option<&str> {
        Some(&self.id).filter(|id| !id.is_empty()).map(String::as_str)
    }
    fn into_wire(self, o: WireOptions) -> Result<Self::Wire, ConvertError> {
        Ok(pb::CreateResponse {
            id: self.id,
            properties: out(self.properties, o)?,
            refresh_before_update: self.refresh_before_update,
        })
    }
}

impl TryFrom<pb::ReadRequest> for rp::ReadRequest {
    type Error = ConvertError;
    fn try_from(r: pb::ReadRequest) -> Result<Self, ConvertError> {
        Ok(rp::ReadRequest {
            id: r.id,
            urn: r.urn,
            name: r.name,
            type_: r.r#type,
            properties: map(r.properties)?,
            inputs: map(r.inputs)?,
            timeout: r.timeout,
        })
    }
}

/// A resource that is gone (no id) is answered with no properties and no
/// inputs at all: the engine's import and `get` take "no properties" as
/// "does not exist", and an empty map as a resource with an empty state.
impl IntoWire for rp::ReadResponse {
    type Wire = pb::ReadResponse;
    const KNOWN_ONLY: bool = true;
    fn each_value(&self, f: &mut dyn FnMut(&types::Value)) {
        if !self.id.is_empty() {
            f(&self.properties);
            f(&self.inputs);
        }
    }
    fn into_wire(self, o: WireOptions) -> Result<Self::Wire, ConvertError> {
        if self.id.is_empty() {
            return Ok(pb::ReadResponse { refresh_before_update: self.refresh_before_update, ..Default::default() });
        }
        Ok(pb::ReadResponse {
            id: self.id,
            properties: out(self.properties, o)?,
            inputs: out(self.inputs, o)?,
            refresh_before_update: self.refresh_before_update,
        })
    }
}

impl TryFrom<pb::UpdateRequest> for rp::UpdateRequest {
    type Error = ConvertError;
    fn try_from(r: pb::UpdateRequest) -> Result<Self, ConvertError> {
        Ok(rp::UpdateRequest {
            id: r.id,
            urn: r.urn,
            name: r.name,
            type_: r.r#type,
            olds: map(r.olds)?,
            news: map(r.news)?,
            old_inputs: map(r.old_inputs)?,
            timeout: r.timeout,
            ignore_changes: r.ignore_changes,
            preview: r.preview,
        })
    }
}

impl IntoWire for rp::UpdateResponse {
    type Wire = pb::UpdateResponse;
    fn each_value(&self, f: &mut dyn FnMut(&types::Value)) {
        f(&self.properties);
    }
    fn into_wire(self, o: WireOptions) -> Result<Self::Wire, ConvertError> {
        Ok(pb::UpdateResponse {
            properties: out(self.properties, o)?,
            refresh_before_update: self.refresh_before_update,
        })
    }
}

impl TryFrom<pb::DeleteRequest> for rp::DeleteRequest {
    type Error = ConvertError;
    fn try_from(r: pb::DeleteRequest) -> Result<Self, ConvertError> {
        Ok(rp::DeleteRequest {
            id: r.id,
            urn: r.urn,
            name: r.name,
            type_: r.r#type,
            properties: map(r.properties)?,
            old_inputs: map(r.old_inputs)?,
            timeout: r.timeout,
        })
    }
}

impl IntoWire for () {
    type Wire = ();
    fn into_wire(self, _: WireOptions) -> Result<(), ConvertError> {
        Ok(())
    }
}

impl TryFrom<pb::ConstructRequest> for rp::ConstructRequest {
    type Error = ConvertError;
    fn try_from(r: pb::ConstructRequest) -> Result<Self, ConvertError> {
        Ok(rp::ConstructRequest {
            deployment: deployment!(r),
            type_: r.r#type,
            name: r.name,
            parent: r.parent,
            inputs: map(r.inputs)?,
            input_dependencies: deps_in(r.input_dependencies, |d| d.urns),
            providers: pairs(r.providers),
            dependencies: r.dependencies,
            protect: r.protect,
            additional_secret_outputs: r.additional_secret_outputs,
            custom_timeouts: r.custom_timeouts.as_ref().map(|t| rp::CustomTimeouts {
                create: t.create.clone(),
                update: t.update.clone(),
                delete: t.delete.clone(),
                read: t.read.clone(),
            }),
            deleted_with: r.deleted_with,
            delete_before_replace: r.delete_before_replace,
            ignore_changes: r.ignore_changes,
            replace_on_changes: r.replace_on_changes,
            retain_on_delete: r.retain_on_delete,
            aliases: r.aliases.iter().filter_map(alias).collect(),
            resource_hooks: r.resource_hooks.map(|h| crate::resource_hooks!(h => types::ResourceHooks)),
            replace_with: r.replace_with,
            replacement_trigger: r.replacement_trigger.map(value_into_wit).transpose()?,
        })
    }
}

impl IntoWire for rp::ConstructResponse {
    type Wire = pb::ConstructResponse;
    fn each_value(&self, f: &mut dyn FnMut(&types::Value)) {
        f(&self.state);
    }
    fn into_wire(self, o: WireOptions) -> Result<Self::Wire, ConvertError> {
        Ok(pb::ConstructResponse {
            urn: self.urn,
            state: out(self.state, o)?,
            state_dependencies: deps_out(self.state_dependencies, |urns| {
                pb::construct_response::PropertyDependencies { urns }
            }),
        })
    }
}

impl TryFrom<pb::ListRequest> for rp::ListRequest {
    type Error = ConvertError;
    fn try_from(r: pb::ListRequest) -> Result<Self, ConvertError> {
        Ok(rp::ListRequest {
            token: r.token,
            query: opt_map(r.query)?,
            limit: r.limit,
            page_size: r.page_size,
            continuation_token: r.continuation_token,
        })
    }
}

impl IntoWire for rp::ListResponse {
    /// The messages of the response stream, in order.
    type Wire = Vec<pb::ListResponse>;
    fn into_wire(self, _: WireOptions) -> Result<Self::Wire, ConvertError> {
        use pb::list_response::{Computed, Continuation, Response, Result as Item};
        let msg = |r| pb::ListResponse { response: Some(r) };
        Ok(match self {
            rp::ListResponse::Computed => vec![msg(Response::Computed(Computed {}))],
            rp::ListResponse::Page((items, next)) => items
                .into_iter()
                .map(|i| msg(Response::Result(Item { id: i.id, name: i.name })))
                .chain(next.map(|t| msg(Response::Continuation(Continuation { continuation_token: t }))))
                .collect(),
        })
    }
}

impl IntoWire for Option<rp::Mapping> {
    type Wire = pb::GetMappingResponse;
    fn into_wire(self, _: WireOptions) -> Result<Self::Wire, ConvertError> {
        let m = self.unwrap_or(rp::Mapping { provider: String::new(), data: vec![] });
        Ok(pb::GetMappingResponse { provider: m.provider, data: m.data })
    }
}

impl IntoWire for Vec<String> {
    type Wire = pb::GetMappingsResponse;
    fn into_wire(self, _: WireOptions) -> Result<Self::Wire, ConvertError> {
        Ok(pb::GetMappingsResponse { providers: self })
    }
}

/// An alias from the engine; one with neither form set carries nothing.
fn alias(a: &pb::Alias) -> Option<types::Alias> {
    use pb::alias::{Alias as A, spec::Parent};
    Some(match a.alias.as_ref()? {
        A::Urn(urn) => types::Alias::Urn(urn.clone()),
        A::Spec(s) => types::Alias::Spec(types::AliasSpec {
            name: s.name.clone(),
            type_: s.r#type.clone(),
            stack: s.stack.clone(),
            project: s.project.clone(),
            parent: match &s.parent {
                None => types::AliasParent::Inherit,
                Some(Parent::NoParent(_)) => types::AliasParent::NoParent,
                Some(Parent::ParentUrn(u)) => types::AliasParent::Urn(u.clone()),
            },
        }),
    })
}

/// The engine's `ErrorResourceInitFailed` detail for a guest's init
/// failure; when its state or inputs do not convert, the error and the
/// detail without them (the id and reasons), for the caller to decide.
pub fn init_failure(
    f: types::InitFailure,
    o: WireOptions,
) -> Result<pb::ErrorResourceInitFailed, (pb::ErrorResourceInitFailed, ConvertError)> {
    let (properties, inputs) = (out(f.properties, o), f.inputs.map(|i| out(i, o)).transpose());
    let mut detail = pb::ErrorResourceInitFailed {
        id: f.id,
        properties: None,
        reasons: f.reasons.into_iter().map(|r| text::escape_within(r, text::LINES, text::MAX_MESSAGE)).collect(),
        inputs: None,
        refresh_before_update: false,
    };
    match (properties, inputs) {
        (Ok(properties), Ok(inputs)) => {
            (detail.properties, detail.inputs) = (properties, inputs.flatten());
            Ok(detail)
        }
        (Err(e), _) | (_, Err(e)) => Err((detail, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_guests_schema_must_be_json_within_bounds() {
        let ok = |s: &str| s.to_owned().into_wire(WireOptions::default());
        assert_eq!(ok(r#"{"name": "p", "resources": {}}"#).expect("valid").schema, r#"{"name": "p", "resources": {}}"#);
        assert!(ok(r#"{"name": "p"} trailing"#).is_err());
        assert!(ok(&"[".repeat(100_000)).is_err(), "too deep: refused, not a stack overflow");
        let big = format!("[{}0]", "0,".repeat(1 << 20));
        assert!(ok(&big).is_ok(), "a long array is checked without building it");
        assert!(ok(&" ".repeat(MAX_SCHEMA_BYTES + 1)).is_err());
    }
}
