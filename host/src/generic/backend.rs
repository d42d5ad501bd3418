//! The parameterized provider as a [`Backend`]: Parameterize and GetSchema
//! are its own; every other call is routed to the sub-package that owns the
//! request's token and served by that component's pool.

use std::sync::Arc;
use std::time::Duration;

use super::{GenericProvider, Sub, not_parameterized, param};
use crate::runtime::bindings::{rp, types};
use crate::runtime::{Backend, CallError, CallResult, LogQueue, LogSeverity, urn_type};

/// Backend methods that pass the request to the pool of the sub-package
/// owning `request.<field>`.
macro_rules! routed {
    ($($name:ident($ty:ty) -> $ret:ty, by $field:ident;)*) => {
        $(
            async fn $name(&self, timeout: Option<Duration>, req: $ty) -> CallResult<$ret> {
                let sub = self.route(&req.$field)?;
                sub.unit.loaded.pool.$name(timeout, req).await
            }
        )*
    };
}

impl Backend for GenericProvider {
    async fn parameterize(
        &self,
        _timeout: Option<Duration>,
        req: rp::ParameterizeRequest,
    ) -> CallResult<rp::PackageRef> {
        let sub = match req {
            rp::ParameterizeRequest::Args(args) => self.parameterize_args(args).await?,
            rp::ParameterizeRequest::Value(value) => self.parameterize_value(value).await?,
        };
        Ok(rp::PackageRef { name: sub.name.clone(), version: sub.version.clone() })
    }

    async fn get_schema(&self, timeout: Option<Duration>, req: rp::GetSchemaRequest) -> CallResult<String> {
        let sub = match self.schema_sub(&req)? {
            Some(sub) => sub,
            None => return Ok(param::base_schema()),
        };
        // A component that was not parameterized itself knows no sub-packages.
        let forward = rp::GetSchemaRequest {
            version: req.version,
            subpackage_name: if sub.forwarded { sub.name.clone() } else { String::new() },
            subpackage_version: if sub.forwarded { sub.version.clone() } else { String::new() },
        };
        let schema = sub.unit.loaded.pool.get_schema(timeout, forward).await?;
        Ok(param::rewrite_schema(&schema, &sub.name, &sub.version, &sub.value)?)
    }

    routed! {
        check_config(rp::CheckRequest) -> rp::CheckResponse, by type_;
        diff_config(rp::DiffRequest) -> rp::DiffResponse, by type_;
        invoke(rp::InvokeRequest) -> rp::InvokeResponse, by token;
        call(rp::CallRequest) -> rp::CallResponse, by token;
        diff(rp::DiffRequest) -> rp::DiffResponse, by type_;
        create(rp::CreateRequest) -> rp::CreateResponse, by type_;
        read(rp::ReadRequest) -> rp::ReadResponse, by type_;
        update(rp::UpdateRequest) -> rp::UpdateResponse, by type_;
        delete(rp::DeleteRequest) -> (), by type_;
        construct(rp::ConstructRequest) -> rp::ConstructResponse, by type_;
        list(rp::ListRequest) -> rp::ListResponse, by token;
    }

    /// The provider says at Handshake, before it serves any component, that
    /// it takes the engine's autonaming options, so that components that
    /// take them get them; one that does not gets none, and names its
    /// resources as it always does, as the engine would have it with a
    /// provider that does not take them (saying so once).
    async fn check(&self, timeout: Option<Duration>, mut req: rp::CheckRequest) -> CallResult<rp::CheckResponse> {
        let sub = self.route(&req.type_)?;
        if req.autonaming.is_some() && !sub.unit.loaded.autonaming {
            req.autonaming = None;
            if !sub.unit.told_no_autonaming.swap(true, std::sync::atomic::Ordering::Relaxed) {
                let message = format!(
                    "component {} (package {}) does not take the stack's autonaming configuration: \
                     its resources are named as it names them",
                    sub.unit.loaded.name, sub.name
                );
                LogQueue::new(self.logs.clone()).send(LogSeverity::Warning, message, Some(req.urn.clone()), false);
            }
        }
        sub.unit.loaded.pool.check(timeout, req).await
    }

    /// Configures the package the provider resource is for: by its type, or
    /// its URN's. An engine that names neither configures the components
    /// whose packages the variables name (`kv:endpoint`), so that one
    /// package's configuration, secrets among it, reaches no other
    /// component; every component when there are none.
    async fn configure(
        &self,
        timeout: Option<Duration>,
        req: rp::ConfigureRequest,
    ) -> CallResult<rp::ConfigureResponse> {
        let urn_type = urn_type(&req.urn).filter(|t| t.starts_with("pulumi:providers:")).unwrap_or_default();
        let named_type = [req.type_.as_str(), urn_type].into_iter().find(|t| !t.is_empty());
        if let Some(sub) = named_type.map(|t| self.route(t)).transpose()? {
            return sub.unit.loaded.pool.configure(timeout, req).await;
        }
        let named: std::collections::BTreeSet<&str> =
            req.variables.iter().filter_map(|(key, _)| key.split_once(':').map(|(package, _)| package)).collect();
        let units = if named.is_empty() { self.units() } else { self.units_of(|package| named.contains(package)) };
        if units.is_empty() && !named.is_empty() {
            let named: Vec<&str> = named.into_iter().collect();
            return Err(CallError::Provider {
                error: types::Error::InvalidArgument(format!(
                    "the configuration is for package {}, which this provider does not serve",
                    named.join(", ")
                )),
                denials: Vec::new(),
            });
        }
        let mut last = Err(not_parameterized());
        for unit in units {
            last = Ok(unit.loaded.pool.configure(timeout, req.clone()).await?);
        }
        last
    }

    async fn get_mapping(
        &self,
        timeout: Option<Duration>,
        key: String,
        provider: String,
    ) -> CallResult<Option<rp::Mapping>> {
        for unit in self.units() {
            if let Some(m) = unit.loaded.pool.get_mapping(timeout, key.clone(), provider.clone()).await? {
                return Ok(Some(m));
            }
        }
        Ok(None)
    }

    /// Every component's names, once each. One that does not implement the
    /// call has none: the engine reads UNIMPLEMENTED as "ask GetMapping with
    /// no name", which would hide what the others answered.
    async fn get_mappings(&self, timeout: Option<Duration>, key: String) -> CallResult<Vec<String>> {
        let mut answers = Vec::new();
        for unit in self.units() {
            answers.push(unit.loaded.pool.get_mappings(timeout, key.clone()).await);
        }
        merge_mappings(answers)
    }

    /// Only when every component loaded so far reads them: a request's
    /// texts are held before it is routed to one of them.
    fn reads_held_texts(&self) -> bool {
        let subs = self.subs.read().expect("subs lock");
        !subs.is_empty() && subs.iter().all(|s| s.unit.loaded.pool.reads_held_texts())
    }

    async fn cancel(&self, grace: Duration) {
        futures::future::join_all(self.units().iter().map(|u| u.loaded.pool.cancel(grace))).await;
    }

    fn resume(&self) {
        self.units().iter().for_each(|u| u.loaded.pool.resume());
    }
}

/// The components' answers to GetMappings as one: their names in order,
/// without repeats; UNIMPLEMENTED only when none implements it.
fn merge_mappings(answers: Vec<CallResult<Vec<String>>>) -> CallResult<Vec<String>> {
    let unimplemented =
        |a: &CallResult<_>| matches!(a, Err(CallError::Provider { error: types::Error::Unimplemented(_), .. }));
    let (mut seen, mut all, mut refusal) = (std::collections::HashSet::new(), Vec::new(), None);
    let mut implemented = false;
    for answer in answers {
        if unimplemented(&answer) {
            refusal = Some(answer);
            continue;
        }
        implemented = true;
        all.extend(answer?.into_iter().filter(|name| seen.insert(name.clone())));
    }
    match refusal {
        Some(refusal) if !implemented => refusal,
        _ => Ok(all),
    }
}

impl GenericProvider {
    /// The sub-package a GetSchema asks for; `None` before any Parameterize.
    fn schema_sub(&self, req: &rp::GetSchemaRequest) -> Result<Option<Arc<Sub>>, CallError> {
        let subs = self.subs.read().expect("subs lock");
        if subs.is_empty() {
            return Ok(None);
        }
        let invalid = |m: String| CallError::Provider { error: types::Error::InvalidArgument(m), denials: Vec::new() };
        let sub = if req.subpackage_name.is_empty() {
            match subs.as_slice() {
                [only] => only.clone(),
                _ => {
                    let names: Vec<&str> = subs.iter().map(|s| s.name.as_str()).collect();
                    return Err(invalid(format!("several packages are served here ({}); name one", names.join(", "))));
                }
            }
        } else {
            subs.iter()
                .find(|s| s.name == req.subpackage_name)
                .cloned()
                .ok_or_else(|| invalid(format!("package {} was never parameterized here", req.subpackage_name)))?
        };
        if !req.subpackage_version.is_empty() && req.subpackage_version != sub.version {
            return Err(invalid(format!(
                "package {} is served at version {}, not {}",
                sub.name, sub.version, req.subpackage_version
            )));
        }
        Ok(Some(sub))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> CallResult<Vec<String>> {
        Ok(list.iter().map(|n| n.to_string()).collect())
    }

    fn refused(error: types::Error) -> CallResult<Vec<String>> {
        Err(CallError::Provider { error, denials: Vec::new() })
    }

    #[test]
    fn mappings_are_every_component_s_names_once() {
        let merged = merge_mappings(vec![names(&["aws", "gcp"]), names(&["azure", "aws"]), names(&["gcp"])]);
        assert_eq!(merged.unwrap(), ["aws", "gcp", "azure"]);
        // A component that does not implement the call has none to add.
        let unimplemented = || refused(types::Error::Unimplemented("get-mappings".into()));
        assert_eq!(merge_mappings(vec![unimplemented(), names(&["aws"])]).unwrap(), ["aws"]);
        assert!(merge_mappings(vec![unimplemented(), names(&[])]).unwrap().is_empty());
        // Only when none does is the call unimplemented (the engine then asks GetMapping).
        let none = merge_mappings(vec![unimplemented(), unimplemented()]).unwrap_err();
        assert!(matches!(none, CallError::Provider { error: types::Error::Unimplemented(_), .. }));
        // Another failure is the answer.
        let failed = merge_mappings(vec![names(&["aws"]), refused(types::Error::Failed("boom".into()))]);
        assert!(matches!(failed, Err(CallError::Provider { error: types::Error::Failed(_), .. })));
    }
}
