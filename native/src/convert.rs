//! The host's WIT types (what the gRPC server hands a backend) to the SDK's
//! types (what a [`Provider`](pulumi_wasm_sdk::Provider) takes), and back.
//!
//! Both sides are owned, so strings and byte lists move rather than copy:
//! this is the work a component does after the canonical ABI has copied the
//! request into its memory, minus that copy.

use pulumi_wasm_host::runtime::bindings::{rp, types as w};
use pulumi_wasm_sdk as sdk;
use pulumi_wasm_sdk::__private::wit::exports::pulumi::provider::resource_provider::CustomTimeouts;
use sdk::__private::words::Words;
use sdk::PropertyMap;

// ---------------------------------------------------------------------------
// Values: flattened WIT nodes <-> the SDK's tree
// ---------------------------------------------------------------------------

mod codec {
    // The SDK's own value codec, over the host's bindings: what a component
    // runs after the canonical ABI has copied the request into its memory.
    pulumi_wasm_sdk::__value_codec!(pulumi_wasm_host::runtime::bindings::types);
}

// A property map from the host, and any value (a replacement trigger). The
// host built them from the wire in pre-order, but a bad index is still an
// error rather than a panic.
use codec::decode as value;
pub use codec::decode_map as map;

fn opt_map(v: Option<w::Value>) -> sdk::Result<Option<PropertyMap>> {
    v.map(map).transpose()
}

/// A property map for the host: pre-order nodes, the root first.
pub fn wire_map(m: PropertyMap) -> w::Value {
    codec::encode_map_owned(m)
}

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

pub fn error(e: sdk::Error) -> w::Error {
    use sdk::Error as E;
    match e {
        E::Unimplemented(m) => w::Error::Unimplemented(m),
        E::InvalidArgument(m) => w::Error::InvalidArgument(m),
        E::NotFound(m) => w::Error::NotFound(m),
        E::FailedPrecondition(m) => w::Error::FailedPrecondition(m),
        E::Unavailable(m) => w::Error::Unavailable(m),
        E::Cancelled(m) => w::Error::Cancelled(m),
        E::Failed(m) => w::Error::Failed(m),
        E::MissingKeys(keys) => w::Error::MissingKeys(
            keys.into_iter().map(|k| w::MissingKey { name: k.name, description: k.description }).collect(),
        ),
        E::InitFailed { id, properties, inputs, reasons } => w::Error::InitFailed(w::InitFailure {
            id,
            properties: wire_map(properties),
            inputs: inputs.map(wire_map),
            reasons,
        }),
    }
}

fn failures(f: Vec<sdk::CheckFailure>) -> Vec<w::CheckFailure> {
    f.into_iter().map(|f| w::CheckFailure { property: f.property, reason: f.reason }).collect()
}

fn deps_in(d: rp::DependencyMap) -> sdk::Dependencies {
    d.into_iter().collect()
}

fn deps_out(d: sdk::Dependencies) -> rp::DependencyMap {
    d.into_iter().collect()
}

fn deployment(d: rp::Deployment) -> sdk::Deployment {
    sdk::Deployment {
        project: d.project,
        stack: d.stack,
        organization: d.organization,
        config: d.config,
        config_secret_keys: d.config_secret_keys,
        dry_run: d.dry_run,
        parallel: d.parallel,
        monitor_endpoint: d.monitor_endpoint,
        accepts_output_values: d.accepts_output_values,
    }
}

// ---------------------------------------------------------------------------
// Requests (host -> SDK)
// ---------------------------------------------------------------------------

pub fn parameterize(r: rp::ParameterizeRequest) -> sdk::ParameterizeRequest {
    match r {
        rp::ParameterizeRequest::Args(a) => sdk::ParameterizeRequest::Args(a),
        rp::ParameterizeRequest::Value(v) => {
            sdk::ParameterizeRequest::Value(sdk::ParameterValue { name: v.name, version: v.version, value: v.value })
        }
    }
}

pub fn get_schema(r: rp::GetSchemaRequest) -> sdk::GetSchemaRequest {
    sdk::GetSchemaRequest {
        version: r.version,
        subpackage_name: r.subpackage_name,
        subpackage_version: r.subpackage_version,
    }
}

pub fn check(r: rp::CheckRequest) -> sdk::Result<sdk::CheckRequest> {
    Ok(sdk::CheckRequest {
        urn: r.urn,
        name: r.name,
        resource_type: r.type_,
        olds: map(r.olds)?,
        news: map(r.news)?,
        random_seed: r.random_seed,
        autonaming: r.autonaming.map(|a| sdk::Autonaming {
            proposed_name: a.proposed_name,
            mode: match a.mode {
                rp::AutonamingMode::Propose => sdk::AutonamingMode::Propose,
                rp::AutonamingMode::Enforce => sdk::AutonamingMode::Enforce,
                rp::AutonamingMode::Disable => sdk::AutonamingMode::Disable,
            },
        }),
        old_outputs: opt_map(r.old_outputs)?,
    })
}

pub fn diff(r: rp::DiffRequest) -> sdk::Result<sdk::DiffRequest> {
    Ok(sdk::DiffRequest {
        id: r.id,
        urn: r.urn,
        name: r.name,
        resource_type: r.type_,
        olds: map(r.olds)?,
        news: map(r.news)?,
        old_inputs: map(r.old_inputs)?,
        ignore_changes: r.ignore_changes,
    })
}

pub fn configure(r: rp::ConfigureRequest) -> sdk::Result<sdk::ConfigureRequest> {
    Ok(sdk::ConfigureRequest {
        variables: r.variables.into_iter().collect(),
        args: map(r.args)?,
        id: r.id,
        urn: r.urn,
        name: r.name,
        resource_type: r.type_,
    })
}

pub fn invoke(r: rp::InvokeRequest) -> sdk::Result<sdk::InvokeRequest> {
    Ok(sdk::InvokeRequest { token: r.token, args: map(r.args)?, preview: r.preview })
}

pub fn call(r: rp::CallRequest) -> sdk::Result<sdk::CallRequest> {
    Ok(sdk::CallRequest {
        token: r.token,
        args: map(r.args)?,
        arg_dependencies: deps_in(r.arg_dependencies),
        deployment: deployment(r.deployment),
    })
}

/// The request, and its properties still in words (what
/// [`Provider::create_outputs`](sdk::Provider::create_outputs) takes).
pub fn create(r: rp::CreateRequest) -> sdk::Result<(sdk::CreateRequest, Words)> {
    let properties = codec::words(r.properties)?;
    let req = sdk::CreateRequest {
        urn: r.urn,
        name: r.name,
        resource_type: r.type_,
        properties: PropertyMap::new(),
        timeout: r.timeout,
        preview: r.preview,
    };
    Ok((req, properties))
}

pub fn read(r: rp::ReadRequest) -> sdk::Result<sdk::ReadRequest> {
    Ok(sdk::ReadRequest {
        id: r.id,
        urn: r.urn,
        name: r.name,
        resource_type: r.type_,
        properties: map(r.properties)?,
        inputs: map(r.inputs)?,
        timeout: r.timeout,
    })
}

/// The request, and its olds, news and old inputs still in words (what
/// [`Provider::update_outputs`](sdk::Provider::update_outputs) takes).
pub fn update(r: rp::UpdateRequest) -> sdk::Result<(sdk::UpdateRequest, [Words; 3])> {
    let maps = [codec::words(r.olds)?, codec::words(r.news)?, codec::words(r.old_inputs)?];
    let req = sdk::UpdateRequest {
        id: r.id,
        urn: r.urn,
        name: r.name,
        resource_type: r.type_,
        olds: PropertyMap::new(),
        news: PropertyMap::new(),
        old_inputs: PropertyMap::new(),
        timeout: r.timeout,
        ignore_changes: r.ignore_changes,
        preview: r.preview,
    };
    Ok((req, maps))
}

/// The request, and its properties and old inputs still in words (what
/// [`Provider::delete_words`](sdk::Provider::delete_words) takes).
pub fn delete(r: rp::DeleteRequest) -> sdk::Result<(sdk::DeleteRequest, [Words; 2])> {
    let maps = [codec::words(r.properties)?, codec::words(r.old_inputs)?];
    let req = sdk::DeleteRequest {
        id: r.id,
        urn: r.urn,
        name: r.name,
        resource_type: r.type_,
        properties: PropertyMap::new(),
        old_inputs: PropertyMap::new(),
        timeout: r.timeout,
    };
    Ok((req, maps))
}

pub fn construct(r: rp::ConstructRequest) -> sdk::Result<sdk::ConstructRequest> {
    Ok(sdk::ConstructRequest {
        deployment: deployment(r.deployment),
        resource_type: r.type_,
        name: r.name,
        parent: r.parent,
        inputs: map(r.inputs)?,
        input_dependencies: deps_in(r.input_dependencies),
        providers: r.providers.into_iter().collect(),
        dependencies: r.dependencies,
        protect: r.protect,
        additional_secret_outputs: r.additional_secret_outputs,
        custom_timeouts: r.custom_timeouts.map(|t| CustomTimeouts {
            create: t.create,
            update: t.update,
            delete: t.delete,
            read: t.read,
        }),
        deleted_with: r.deleted_with,
        delete_before_replace: r.delete_before_replace,
        ignore_changes: r.ignore_changes,
        replace_on_changes: r.replace_on_changes,
        retain_on_delete: r.retain_on_delete,
        aliases: r.aliases.into_iter().map(alias).collect(),
        resource_hooks: r.resource_hooks.map(|h| pulumi_wasm_host::resource_hooks!(h => sdk::ResourceHooks)),
        replace_with: r.replace_with,
        replacement_trigger: r.replacement_trigger.map(value).transpose()?,
    })
}

fn alias(a: w::Alias) -> sdk::Alias {
    match a {
        w::Alias::Urn(u) => sdk::Alias::Urn(u),
        w::Alias::Spec(s) => sdk::Alias::Spec(sdk::AliasSpec {
            name: s.name,
            type_: s.type_,
            stack: s.stack,
            project: s.project,
            parent: match s.parent {
                w::AliasParent::Inherit => sdk::AliasParent::Inherit,
                w::AliasParent::NoParent => sdk::AliasParent::NoParent,
                w::AliasParent::Urn(u) => sdk::AliasParent::Urn(u),
            },
        }),
    }
}

pub fn list(r: rp::ListRequest) -> sdk::Result<sdk::ListRequest> {
    Ok(sdk::ListRequest {
        token: r.token,
        query: opt_map(r.query)?,
        limit: r.limit,
        page_size: r.page_size,
        continuation_token: r.continuation_token,
    })
}

// ---------------------------------------------------------------------------
// Responses (SDK -> host)
// ---------------------------------------------------------------------------

pub fn package_ref(r: sdk::PackageRef) -> rp::PackageRef {
    rp::PackageRef { name: r.name, version: r.version }
}

pub fn check_response(r: sdk::CheckResponse) -> rp::CheckResponse {
    rp::CheckResponse { inputs: wire_map(r.inputs), failures: failures(r.failures) }
}

pub fn diff_response(r: sdk::DiffResponse) -> rp::DiffResponse {
    let kind = |k| match k {
        sdk::DiffKind::Add => rp::DiffKind::Add,
        sdk::DiffKind::AddReplace => rp::DiffKind::AddReplace,
        sdk::DiffKind::Delete => rp::DiffKind::Delete,
        sdk::DiffKind::DeleteReplace => rp::DiffKind::DeleteReplace,
        sdk::DiffKind::Update => rp::DiffKind::Update,
        sdk::DiffKind::UpdateReplace => rp::DiffKind::UpdateReplace,
    };
    rp::DiffResponse {
        changes: match r.changes {
            sdk::DiffChanges::Unknown => rp::DiffChanges::Unknown,
            sdk::DiffChanges::None => rp::DiffChanges::None,
            sdk::DiffChanges::Some => rp::DiffChanges::Some,
        },
        replaces: r.replaces,
        stables: r.stables,
        delete_before_replace: r.delete_before_replace,
        diffs: r.diffs,
        detailed_diff: r.detailed_diff.map(|d| {
            d.into_iter()
                .map(|(path, p)| (path, rp::PropertyDiff { kind: kind(p.kind), input_diff: p.input_diff }))
                .collect()
        }),
    }
}

pub fn configure_response(r: sdk::ConfigureResponse) -> rp::ConfigureResponse {
    rp::ConfigureResponse { supports_autonaming_configuration: r.supports_autonaming_configuration }
}

pub fn invoke_response(r: sdk::InvokeResponse) -> rp::InvokeResponse {
    rp::InvokeResponse { outputs: wire_map(r.outputs), failures: failures(r.failures) }
}

pub fn call_response(r: sdk::CallResponse) -> rp::CallResponse {
    rp::CallResponse {
        outputs: wire_map(r.outputs),
        return_dependencies: deps_out(r.return_dependencies),
        failures: failures(r.failures),
    }
}

pub fn create_response(r: sdk::Created) -> rp::CreateResponse {
    let properties = codec::encode_outputs(r.properties);
    rp::CreateResponse { id: r.id, properties, refresh_before_update: r.refresh_before_update }
}

pub fn read_response(r: sdk::ReadResponse) -> rp::ReadResponse {
    rp::ReadResponse {
        id: r.id,
        properties: wire_map(r.properties),
        inputs: wire_map(r.inputs),
        refresh_before_update: r.refresh_before_update,
    }
}

pub fn update_response(r: sdk::Updated) -> rp::UpdateResponse {
    rp::UpdateResponse {
        properties: codec::encode_outputs(r.properties),
        refresh_before_update: r.refresh_before_update,
    }
}

pub fn construct_response(r: sdk::ConstructResponse) -> rp::ConstructResponse {
    rp::ConstructResponse { urn: r.urn, state: wire_map(r.state), state_dependencies: deps_out(r.state_dependencies) }
}

pub fn list_response(r: sdk::ListResponse) -> rp::ListResponse {
    match r {
        sdk::ListResponse::Computed => rp::ListResponse::Computed,
        sdk::ListResponse::Page((items, next)) => {
            rp::ListResponse::Page((items.into_iter().map(|i| rp::ListItem { id: i.id, name: i.name }).collect(), next))
        }
    }
}

pub fn mapping(m: Option<sdk::Mapping>) -> Option<rp::Mapping> {
    m.map(|m| rp::Mapping { provider: m.provider, data: m.data })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pulumi_wasm_host::convert::value::{WireOptions, struct_to_wit, wit_to_struct};

    /// Every value kind: SDK -> host WIT -> wire -> host WIT -> SDK is the identity.
    #[test]
    fn every_kind_round_trips_through_the_host() {
        let m = sdk::testing::every_kind();
        let opts = WireOptions { byte_strings: true, ..WireOptions::default() };
        let wire = wit_to_struct(&wire_map(m.clone()), opts, Default::default()).expect("valid for the host");
        let back = map(struct_to_wit(&wire).expect("decodes")).expect("decodes");
        assert_eq!(back, m);
    }

    #[test]
    fn bad_indices_and_spans_are_errors() {
        // The counts, then nodes of three words (kind, two operands) and
        // fields of three (key span, child).
        let value = |nodes: &[[u32; 3]], fields: Vec<u32>| {
            let counts = [nodes.len() as u32, 0, fields.len() as u32 / 3, 0];
            w::Value { words: [&counts[..], &nodes.concat(), &fields].concat(), text: "ab".into(), long: Vec::new() }
        };
        const NULL: [u32; 3] = [0, 0, 0];
        let cyclic = value(&[[7, 0, 1]], vec![0, 1, 0]);
        assert!(map(cyclic).is_err());
        let shared = value(&[[7, 0, 2], NULL], vec![0, 1, 1, 1, 1, 1]);
        assert!(map(shared).is_err());
        let past = value(&[[7, 0, 1], NULL], vec![1, 9, 1]);
        assert!(map(past).is_err());
        assert!(map(value(&[], vec![])).is_err());
        assert!(map(value(&[NULL], vec![])).is_err());
    }
}
