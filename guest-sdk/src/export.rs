//! Adapts a [`Provider`] to the generated WIT export trait: converts the
//! flattened WIT values to [`Value`](crate::Value) trees and back.

use std::any::Any;
use std::cell::RefCell;
use std::marker::PhantomData;

use crate::provider::*;
use crate::value::PropertyMap;
// `value`: any value from the host (a replacement trigger).
use crate::wire::{decode as value, decode_map as map, encode_map_owned as encode_map, encode_outputs, words};
use crate::wit::exports::pulumi::provider::resource_provider as rp;
use crate::wit::pulumi::provider::types as t;

/// The export type `export_provider!` registers for a provider type `P`.
pub struct Adapter<P>(PhantomData<P>);

thread_local! {
    // One provider per component instance; components are single-threaded.
    static INSTANCE: RefCell<Option<Box<dyn Any>>> = const { RefCell::new(None) };
}

fn with<P: Provider, R>(f: impl FnOnce(&mut P) -> R) -> R {
    INSTANCE.with(|cell| {
        let mut slot = cell.borrow_mut();
        let any = slot.get_or_insert_with(|| Box::new(P::default()));
        let provider = any.downcast_mut::<P>().expect("export_provider! registers one type");
        f(provider)
    })
}

fn opt_map(v: Option<t::Value>) -> Result<Option<PropertyMap>> {
    v.map(map).transpose()
}

fn deps(d: Vec<(String, Vec<String>)>) -> Dependencies {
    d.into_iter().collect()
}

fn wire_deps(d: Dependencies) -> Vec<(String, Vec<String>)> {
    d.into_iter().collect()
}

fn wire_error(e: Error) -> t::Error {
    match e {
        Error::Unimplemented(m) => t::Error::Unimplemented(m),
        Error::InvalidArgument(m) => t::Error::InvalidArgument(m),
        Error::NotFound(m) => t::Error::NotFound(m),
        Error::FailedPrecondition(m) => t::Error::FailedPrecondition(m),
        Error::Unavailable(m) => t::Error::Unavailable(m),
        Error::Cancelled(m) => t::Error::Cancelled(m),
        Error::Failed(m) => t::Error::Failed(m),
        Error::MissingKeys(k) => t::Error::MissingKeys(k),
        Error::InitFailed { id, properties, inputs, reasons } => t::Error::InitFailed(t::InitFailure {
            id,
            properties: encode_map(properties),
            inputs: inputs.map(encode_map),
            reasons,
        }),
    }
}

/// Runs one export: decode, call the provider, encode.
fn run<P: Provider, T>(f: impl FnOnce(&mut P) -> Result<T>) -> Result<T, t::Error> {
    with::<P, _>(f).map_err(wire_error)
}

fn check_req(r: rp::CheckRequest) -> Result<CheckRequest> {
    Ok(CheckRequest {
        urn: r.urn,
        name: r.name,
        resource_type: r.type_,
        olds: map(r.olds)?,
        news: map(r.news)?,
        random_seed: r.random_seed,
        autonaming: r.autonaming,
        old_outputs: opt_map(r.old_outputs)?,
    })
}

fn check_resp(r: CheckResponse) -> rp::CheckResponse {
    rp::CheckResponse { inputs: encode_map(r.inputs), failures: r.failures }
}

fn diff_req(r: rp::DiffRequest) -> Result<DiffRequest> {
    Ok(DiffRequest {
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

impl<P: Provider> rp::Guest for Adapter<P> {
    fn get_plugin_info() -> PluginInfo {
        with::<P, _>(|p| p.info())
    }

    fn parameterize(req: ParameterizeRequest) -> Result<PackageRef, t::Error> {
        run::<P, _>(|p| p.parameterize(req))
    }

    fn get_schema(req: GetSchemaRequest) -> Result<String, t::Error> {
        run::<P, _>(|p| p.get_schema(req))
    }

    fn check_config(req: rp::CheckRequest) -> Result<rp::CheckResponse, t::Error> {
        run::<P, _>(|p| p.check_config(check_req(req)?).map(check_resp))
    }

    fn diff_config(req: rp::DiffRequest) -> Result<DiffResponse, t::Error> {
        run::<P, _>(|p| p.diff_config(diff_req(req)?))
    }

    fn configure(req: rp::ConfigureRequest) -> Result<ConfigureResponse, t::Error> {
        run::<P, _>(|p| {
            p.configure(ConfigureRequest {
                variables: req.variables.into_iter().collect(),
                args: map(req.args)?,
                id: req.id,
                urn: req.urn,
                name: req.name,
                resource_type: req.type_,
            })
        })
    }

    fn invoke(req: rp::InvokeRequest) -> Result<rp::InvokeResponse, t::Error> {
        run::<P, _>(|p| {
            let r = p.invoke(InvokeRequest { token: req.token, args: map(req.args)?, preview: req.preview })?;
            Ok(rp::InvokeResponse { outputs: encode_map(r.outputs), failures: r.failures })
        })
    }

    fn call(req: rp::CallRequest) -> Result<rp::CallResponse, t::Error> {
        run::<P, _>(|p| {
            let r = p.call(CallRequest {
                token: req.token,
                args: map(req.args)?,
                arg_dependencies: deps(req.arg_dependencies),
                deployment: req.deployment,
            })?;
            Ok(rp::CallResponse {
                outputs: encode_map(r.outputs),
                return_dependencies: wire_deps(r.return_dependencies),
                failures: r.failures,
            })
        })
    }

    fn check(req: rp::CheckRequest) -> Result<rp::CheckResponse, t::Error> {
        run::<P, _>(|p| p.check(check_req(req)?).map(check_resp))
    }

    fn diff(req: rp::DiffRequest) -> Result<DiffResponse, t::Error> {
        run::<P, _>(|p| p.diff(diff_req(req)?))
    }

    fn create(req: rp::CreateRequest) -> Result<rp::CreateResponse, t::Error> {
        run::<P, _>(|p| {
            let properties = words(req.properties)?;
            let r = p.create_outputs(
                CreateRequest {
                    urn: req.urn,
                    name: req.name,
                    resource_type: req.type_,
                    properties: PropertyMap::new(),
                    timeout: req.timeout,
                    preview: req.preview,
                },
                properties,
            )?;
            Ok(rp::CreateResponse {
                id: r.id,
                properties: encode_outputs(r.properties),
                refresh_before_update: r.refresh_before_update,
            })
        })
    }

    fn read(req: rp::ReadRequest) -> Result<rp::ReadResponse, t::Error> {
        run::<P, _>(|p| {
            let r = p.read(ReadRequest {
                id: req.id,
                urn: req.urn,
                name: req.name,
                resource_type: req.type_,
                properties: map(req.properties)?,
                inputs: map(req.inputs)?,
                timeout: req.timeout,
            })?;
            Ok(rp::ReadResponse {
                id: r.id,
                properties: encode_map(r.properties),
                inputs: encode_map(r.inputs),
                refresh_before_update: r.refresh_before_update,
            })
        })
    }

    fn update(req: rp::UpdateRequest) -> Result<rp::UpdateResponse, t::Error> {
        run::<P, _>(|p| {
            let (olds, news, old_inputs) = (words(req.olds)?, words(req.news)?, words(req.old_inputs)?);
            let r = p.update_outputs(
                UpdateRequest {
                    id: req.id,
                    urn: req.urn,
                    name: req.name,
                    resource_type: req.type_,
                    olds: PropertyMap::new(),
                    news: PropertyMap::new(),
                    old_inputs: PropertyMap::new(),
                    timeout: req.timeout,
                    ignore_changes: req.ignore_changes,
                    preview: req.preview,
                },
                olds,
                news,
                old_inputs,
            )?;
            Ok(rp::UpdateResponse {
                properties: encode_outputs(r.properties),
                refresh_before_update: r.refresh_before_update,
            })
        })
    }

    fn delete(req: rp::DeleteRequest) -> Result<(), t::Error> {
        run::<P, _>(|p| {
            let (properties, old_inputs) = (words(req.properties)?, words(req.old_inputs)?);
            let req = DeleteRequest {
                id: req.id,
                urn: req.urn,
                name: req.name,
                resource_type: req.type_,
                properties: PropertyMap::new(),
                old_inputs: PropertyMap::new(),
                timeout: req.timeout,
            };
            p.delete_words(req, properties, old_inputs)
        })
    }

    fn construct(req: rp::ConstructRequest) -> Result<rp::ConstructResponse, t::Error> {
        run::<P, _>(|p| {
            let r = p.construct(ConstructRequest {
                deployment: req.deployment,
                resource_type: req.type_,
                name: req.name,
                parent: req.parent,
                inputs: map(req.inputs)?,
                input_dependencies: deps(req.input_dependencies),
                providers: req.providers.into_iter().collect(),
                dependencies: req.dependencies,
                protect: req.protect,
                additional_secret_outputs: req.additional_secret_outputs,
                custom_timeouts: req.custom_timeouts,
                deleted_with: req.deleted_with,
                delete_before_replace: req.delete_before_replace,
                ignore_changes: req.ignore_changes,
                replace_on_changes: req.replace_on_changes,
                retain_on_delete: req.retain_on_delete,
                aliases: req.aliases,
                resource_hooks: req.resource_hooks,
                replace_with: req.replace_with,
                replacement_trigger: req.replacement_trigger.map(value).transpose()?,
            })?;
            Ok(rp::ConstructResponse {
                urn: r.urn,
                state: encode_map(r.state),
                state_dependencies: wire_deps(r.state_dependencies),
            })
        })
    }

    fn list(req: rp::ListRequest) -> Result<ListResponse, t::Error> {
        run::<P, _>(|p| {
            p.list(ListRequest {
                token: req.token,
                query: opt_map(req.query)?,
                limit: req.limit,
                page_size: req.page_size,
                continuation_token: req.continuation_token,
            })
        })
    }

    fn get_mapping(key: String, provider: String) -> Result<Option<Mapping>, t::Error> {
        run::<P, _>(|p| p.get_mapping(key, provider))
    }

    fn get_mappings(key: String) -> Result<Vec<String>, t::Error> {
        run::<P, _>(|p| p.get_mappings(key))
    }

    fn cancel() {
        with::<P, _>(|p| p.cancel())
    }
}

/// Exports a [`Provider`] type as this component's `resource-provider`.
///
/// ```ignore
/// #[derive(Default)]
/// struct Random;
/// impl pulumi_wasm_sdk::Provider for Random { /* ... */ }
/// pulumi_wasm_sdk::export_provider!(Random);
/// ```
#[macro_export]
macro_rules! export_provider {
    ($provider:ty) => {
        // Only components export: native builds (tests, debugging) skip the
        // symbols, whose names native linkers reject.
        #[cfg(target_arch = "wasm32")]
        #[doc(hidden)]
        type __PulumiWasmExport = $crate::__private::Adapter<$provider>;
        #[cfg(target_arch = "wasm32")]
        $crate::__private::export_world!(__PulumiWasmExport with_types_in $crate::__private::wit);
        /// The provider as an ordinary Rust value, for native use (tests, an in-process host).
        #[cfg(not(target_arch = "wasm32"))]
        #[doc(hidden)]
        pub fn __pulumi_wasm_provider() -> impl $crate::Provider {
            <$provider as ::core::default::Default>::default()
        }
    };
}
