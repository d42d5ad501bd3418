//! Conversion between adjacent contract versions: [`Down`] for what the
//! host hands an older component (requests, import results), [`Up`] for
//! what it hands back (answers, import arguments). Every type is listed
//! once below by its fields or cases, and [`adapter!`] implements both
//! traits from that listing for each pair of versions (`v3`: 0.3.0 and
//! 0.2.0, `v2`: 0.2.0 and 0.1.0); a 0.1.0 component's calls go through
//! both. Values, the one type whose shape changes each time, convert by
//! the functions each pair names (`words`, `flat`).

/// From the host's types to an older component's.
pub trait Down {
    type Old;
    fn down(&self) -> Self::Old;
}

/// From an older component's types to the host's.
pub trait Up {
    type New;
    fn up(self) -> Self::New;
}

macro_rules! same {
    ($($t:ty),*) => {$(
        impl Down for $t {
            type Old = $t;
            fn down(&self) -> $t {
                self.clone()
            }
        }
        impl Up for $t {
            type New = $t;
            fn up(self) -> $t {
                self
            }
        }
    )*};
}

same!((), bool, u8, u32, i32, u64, i64, f64, String);

impl Down for str {
    type Old = String;
    fn down(&self) -> String {
        self.to_owned()
    }
}

impl<T: Down> Down for Vec<T> {
    type Old = Vec<T::Old>;
    fn down(&self) -> Self::Old {
        self.iter().map(Down::down).collect()
    }
}

impl<T: Up> Up for Vec<T> {
    type New = Vec<T::New>;
    fn up(self) -> Self::New {
        self.into_iter().map(Up::up).collect()
    }
}

impl<T: Down> Down for Option<T> {
    type Old = Option<T::Old>;
    fn down(&self) -> Self::Old {
        self.as_ref().map(Down::down)
    }
}

impl<T: Up> Up for Option<T> {
    type New = Option<T::New>;
    fn up(self) -> Self::New {
        self.map(Up::up)
    }
}

impl<A: Down, B: Down> Down for (A, B) {
    type Old = (A::Old, B::Old);
    fn down(&self) -> Self::Old {
        (self.0.down(), self.1.down())
    }
}

impl<A: Up, B: Up> Up for (A, B) {
    type New = (A::New, B::New);
    fn up(self) -> Self::New {
        (self.0.up(), self.1.up())
    }
}

impl<T: Down, E: Down> Down for Result<T, E> {
    type Old = Result<T::Old, E::Old>;
    fn down(&self) -> Self::Old {
        self.as_ref().map(Down::down).map_err(Down::down)
    }
}

impl<T: Up, E: Up> Up for Result<T, E> {
    type New = Result<T::New, E::New>;
    fn up(self) -> Self::New {
        self.map(Up::up).map_err(Up::up)
    }
}

/// Records by their fields; after `;`, the fields 0.1.0 does not have,
/// each with the value an older component's record gets (down, they are
/// left out: the component cannot see them).
macro_rules! records {
    ($($m:ident :: $name:ident { $($f:ident),* $(,)? $(; $($added:ident = $default:expr),* $(,)?)? })*) => {$(
        impl Down for new::$m::$name {
            type Old = old::$m::$name;
            fn down(&self) -> Self::Old {
                old::$m::$name { $($f: self.$f.down()),* }
            }
        }
        impl Up for old::$m::$name {
            type New = new::$m::$name;
            fn up(self) -> Self::New {
                new::$m::$name { $($f: self.$f.up(),)* $($($added: $default),*)? }
            }
        }
    )*};
}

/// Records by their fields, every field on both sides (the newer version
/// added none): the same listing as [`records!`], the fields after `;` too.
macro_rules! records_same {
    ($($m:ident :: $name:ident { $($f:ident),* $(,)? $(; $($added:ident = $default:expr),* $(,)?)? })*) => {$(
        impl Down for new::$m::$name {
            type Old = old::$m::$name;
            fn down(&self) -> Self::Old {
                old::$m::$name { $($f: self.$f.down(),)* $($($added: self.$added.down()),*)? }
            }
        }
        impl Up for old::$m::$name {
            type New = new::$m::$name;
            fn up(self) -> Self::New {
                new::$m::$name { $($f: self.$f.up(),)* $($($added: self.$added.up()),*)? }
            }
        }
    )*};
}

/// Variants and enums by their cases, with a name for each payload.
macro_rules! variants {
    ($($m:ident :: $name:ident { $($case:ident $(($v:ident))?),* $(,)? })*) => {$(
        impl Down for new::$m::$name {
            type Old = old::$m::$name;
            fn down(&self) -> Self::Old {
                match self {
                    $(Self::$case $(($v))? => old::$m::$name::$case $(($v.down()))?),*
                }
            }
        }
        impl Up for old::$m::$name {
            type New = new::$m::$name;
            fn up(self) -> Self::New {
                match self {
                    $(Self::$case $(($v))? => new::$m::$name::$case $(($v.up()))?),*
                }
            }
        }
    )*};
}

/// Every type of the contract but values: after `;`, the fields 0.2.0
/// added to 0.1.0, with what a 0.1.0 component's record gets.
macro_rules! listing {
    ($records:ident) => {
        variants! {
            types::AliasParent { Inherit, NoParent, Urn(u) }
            types::Alias { Urn(u), Spec(s) }
            types::Error {
                Unimplemented(m), InvalidArgument(m), NotFound(m), FailedPrecondition(m), Unavailable(m),
                Cancelled(m), Failed(m), MissingKeys(k), InitFailed(f),
            }
            logging::Severity { Debug, Info, Warning, Error }
            rp::ParameterizeRequest { Args(a), Value(v) }
            rp::AutonamingMode { Propose, Enforce, Disable }
            rp::DiffChanges { Unknown, None, Some }
            rp::DiffKind { Add, AddReplace, Delete, DeleteReplace, Update, UpdateReplace }
            rp::ListResponse { Computed, Page(p) }
        }

        $records! {
            types::AliasSpec { name, type_, stack, project, parent }
            types::CheckFailure { property, reason }
            types::InitFailure { id, properties, inputs, reasons }
            types::MissingKey { name, description }
            monitor::CustomTimeouts { create, update, delete; read = String::new() }
            monitor::ResourceOptions {
                parent, provider, providers, dependencies, property_dependencies, protect, ignore_changes, aliases,
                custom_timeouts, delete_before_replace, retain_on_delete, deleted_with, replace_on_changes,
                additional_secret_outputs, version, plugin_download_url, import_id;
                resource_hooks = None, replace_with = Vec::new(), replacement_trigger = None,
            }
            monitor::RegisterResourceRequest { type_, name, custom, remote, object, options, accepts_output_values }
            monitor::RegisterResourceResponse { urn, id, object, stable, stables, property_dependencies }
            monitor::InvokeRequest { token, args, provider, version }
            monitor::InvokeResponse { return_, failures }
            monitor::ReadResourceRequest {
                id, type_, name, parent, properties, dependencies, provider, version, additional_secret_outputs,
            }
            monitor::ReadResourceResponse { urn, properties }
            rp::PluginInfo { name, version; supports_autonaming_configuration = false }
            rp::ParameterValue { name, version, value }
            rp::PackageRef { name, version }
            rp::GetSchemaRequest { version, subpackage_name, subpackage_version }
            rp::Autonaming { proposed_name, mode }
            rp::CheckRequest { urn, name, type_, olds, news, random_seed, autonaming, old_outputs }
            rp::CheckResponse { inputs, failures }
            rp::DiffRequest { id, urn, name, type_, olds, news, old_inputs, ignore_changes }
            rp::PropertyDiff { kind, input_diff }
            rp::DiffResponse { changes, replaces, stables, delete_before_replace, diffs, detailed_diff }
            rp::ConfigureRequest { variables, args, id, urn, name, type_ }
            rp::ConfigureResponse { supports_autonaming_configuration }
            rp::InvokeRequest { token, args, preview }
            rp::InvokeResponse { outputs, failures }
            rp::Deployment {
                project, stack, organization, config, config_secret_keys, dry_run, parallel, monitor_endpoint,
                accepts_output_values,
            }
            rp::CallRequest { token, args, arg_dependencies, deployment }
            rp::CallResponse { outputs, return_dependencies, failures }
            rp::CreateRequest { urn, name, type_, properties, timeout, preview }
            rp::CreateResponse { id, properties, refresh_before_update }
            rp::ReadRequest { id, urn, name, type_, properties, inputs, timeout }
            rp::ReadResponse { id, properties, inputs, refresh_before_update }
            rp::UpdateRequest { id, urn, name, type_, olds, news, old_inputs, timeout, ignore_changes, preview }
            rp::UpdateResponse { properties, refresh_before_update }
            rp::DeleteRequest { id, urn, name, type_, properties, old_inputs, timeout }
            rp::CustomTimeouts { create, update, delete; read = String::new() }
            rp::ConstructRequest {
                deployment, type_, name, parent, inputs, input_dependencies, providers, dependencies, protect,
                additional_secret_outputs, custom_timeouts, deleted_with, delete_before_replace, ignore_changes,
                replace_on_changes, retain_on_delete, aliases;
                resource_hooks = None, replace_with = Vec::new(), replacement_trigger = None,
            }
            rp::ConstructResponse { urn, state, state_dependencies }
            rp::ListRequest { token, query, limit, page_size, continuation_token }
            rp::ListItem { id, name }
            rp::Mapping { provider, data }
        }
    };
}

/// The conversions between versions `$new` and `$old`, in module `$pair`:
/// the listing (with `$records` for its records), values by `$down` and
/// `$up`, and `$old`'s imports served by `$new`'s.
macro_rules! adapter {
    ($pair:ident: $new:ident -> $old:ident, $records:ident, $down:path, $up:path) => {
        pub(super) mod $pair {
            use super::{Down, Up};
            use crate::runtime::state::HostState;

            pub(in crate::runtime::bindings) mod new {
                pub use crate::runtime::bindings::$new::exports::pulumi::provider::resource_provider as rp;
                pub use crate::runtime::bindings::$new::pulumi::provider::{context, logging, monitor, types};
            }

            pub(in crate::runtime::bindings) mod old {
                pub use crate::runtime::bindings::$old::exports::pulumi::provider::resource_provider as rp;
                pub use crate::runtime::bindings::$old::pulumi::provider::{context, logging, monitor, types};
            }

            listing!($records);

            impl Down for new::types::Value {
                type Old = old::types::Value;
                fn down(&self) -> Self::Old {
                    $down(self)
                }
            }

            impl Up for old::types::Value {
                type New = new::types::Value;
                fn up(self) -> Self::New {
                    $up(self)
                }
            }

            // The older version's imports, served by the newer one's.
            impl old::types::Host for HostState {}

            impl old::logging::Host for HostState {
                fn log(
                    &mut self,
                    severity: old::logging::Severity,
                    message: String,
                    urn: Option<String>,
                    ephemeral: bool,
                ) -> wasmtime::Result<()> {
                    new::logging::Host::log(self, severity.up(), message, urn, ephemeral)
                }
            }

            impl old::context::Host for HostState {
                fn cancelled(&mut self) -> wasmtime::Result<bool> {
                    new::context::Host::cancelled(self)
                }

                fn report_partial_state(&mut self, id: String, properties: old::types::Value) -> wasmtime::Result<()> {
                    new::context::Host::report_partial_state(self, id, properties.up())
                }
            }

            type Answer<T> = wasmtime::Result<Result<T, old::types::Error>>;

            impl old::monitor::Host for HostState {
                async fn register_resource(
                    &mut self,
                    request: old::monitor::RegisterResourceRequest,
                ) -> Answer<old::monitor::RegisterResourceResponse> {
                    Ok(new::monitor::Host::register_resource(self, request.up()).await?.down())
                }

                async fn register_resource_outputs(&mut self, urn: String, outputs: old::types::Value) -> Answer<()> {
                    Ok(new::monitor::Host::register_resource_outputs(self, urn, outputs.up()).await?.down())
                }

                async fn invoke(
                    &mut self,
                    request: old::monitor::InvokeRequest,
                ) -> Answer<old::monitor::InvokeResponse> {
                    Ok(new::monitor::Host::invoke(self, request.up()).await?.down())
                }

                async fn read_resource(
                    &mut self,
                    request: old::monitor::ReadResourceRequest,
                ) -> Answer<old::monitor::ReadResourceResponse> {
                    Ok(new::monitor::Host::read_resource(self, request.up()).await?.down())
                }
            }
        }
    };
}

adapter!(v3: v0_3 -> v0_2_0, records_same, crate::runtime::bindings::words::unpack_trusted, crate::runtime::bindings::words::pack);
/// Types 0.2.0 added, which 0.3.0 has as they are.
mod v3_added {
    use super::v3::{new, old};
    use super::{Down, Up};

    records_same! {
        types::ResourceHooks {
            before_create, after_create, before_update, after_update, before_delete, after_delete, on_error,
        }
    }
}

adapter!(v2: v0_2_0 -> v0_1_0, records, crate::runtime::bindings::flat::flat_to_nodes, crate::runtime::bindings::flat::nodes_into_flat);

#[cfg(test)]
mod tests {
    use super::v2::{new, old};
    use super::{Down, Up};

    #[test]
    fn fields_an_older_version_lacks_get_their_defaults_up_and_are_left_out_down() {
        let info = old::rp::PluginInfo { name: "p".into(), version: "1.0.0".into() }.up();
        assert!(!info.supports_autonaming_configuration);
        let t = new::rp::CustomTimeouts {
            create: "1m".into(),
            update: String::new(),
            delete: String::new(),
            read: "2m".into(),
        };
        let down = t.down();
        assert_eq!(down.create, "1m");
        assert_eq!(down.up().read, "", "what 0.1.0 cannot carry does not come back");
    }

    #[test]
    fn variants_keep_their_case_and_payload() {
        let e =
            new::types::Error::MissingKeys(vec![new::types::MissingKey { name: "k".into(), description: "d".into() }]);
        match e.down().up() {
            new::types::Error::MissingKeys(keys) => {
                assert_eq!((keys[0].name.as_str(), keys[0].description.as_str()), ("k", "d"))
            }
            other => panic!("{other:?}"),
        }
        let page = new::rp::ListResponse::Page((
            vec![new::rp::ListItem { id: "i".into(), name: "n".into() }],
            Some("t".into()),
        ));
        assert!(
            matches!(page.down().up(), new::rp::ListResponse::Page((items, Some(t))) if items[0].id == "i" && t == "t")
        );
    }
}
