//! Whether this machine lets a parameterized package run with the grants
//! its value pins.
//!
//! The value travels inside a generated SDK, so whoever generated the SDK
//! chose those grants. They are honoured only when
//! - there are none (limits up to the host's own count as none);
//! - the user's policy gives each of them to every provider already (its
//!   `[defaults]`, `--allow-*`): a `[providers.<name>]` section does not
//!   count, since a component chooses its own name;
//! - this machine approved exactly this component under exactly these grants:
//!   `pulumi package add` here (the args form) records that, and so does
//!   `pulumi-wasm approve ID` for a package refused before (the refusal
//!   keeps what was asked for, so the user approves what they were shown);
//! - or `PULUMI_WASM_APPROVED` lists the id (CI, for a repository's own SDKs).
//!
//! The id hashes the component's digest, the grants and the guest's own
//! parameter (which may be a program the component runs): another
//! component, another guest value or one grant more asks again.

use serde::{Deserialize, Serialize};

use super::param::Parameter;
use crate::runtime::{Grants, Policy};
use crate::store::{Store, digest};

/// What is approved, as kept in the store and shown to the user.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Record {
    /// The component's own name and version, for the reader.
    pub name: String,
    pub version: String,
    /// `sha256:<hex>` of the component.
    pub component: String,
    /// Where the value says it comes from, for the reader.
    pub source: String,
    pub grants: Grants,
    /// The guest's own parameter: `<name> <version> sha256:<hex of its value>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guest: Option<String>,
}

impl Record {
    pub fn of(parameter: &Parameter) -> Record {
        let c = &parameter.component;
        let guest = parameter.guest.as_ref().map(|g| format!("{} {} sha256:{}", g.name, g.version, digest(&g.bytes())));
        Record {
            name: c.name.clone(),
            version: c.version.clone(),
            component: c.digest.clone(),
            source: c.source.clone(),
            grants: parameter.grants.clone(),
            guest,
        }
    }

    /// Only what is approved counts: the component, the grants, the guest's parameter.
    pub fn id(&self) -> String {
        let approved = (&self.component, &self.grants, &self.guest);
        digest(&serde_json::to_vec(&approved).expect("a parameter's grants serialize"))
    }

    /// `name version` (and the guest's package), escaped: they are the
    /// value's word until the component loads.
    pub fn package(&self) -> String {
        let guest = self.guest.as_deref().map(|g| format!(", as {}", g.escape_debug())).unwrap_or_default();
        format!("{} {}{guest}", self.name.escape_debug(), self.version.escape_debug())
    }

    /// The component and where the value says it comes from, escaped.
    pub fn origin(&self) -> String {
        format!("{} from {}", self.component.escape_debug(), self.source.escape_debug())
    }

    pub fn encode(&self) -> Vec<u8> {
        serde_json::to_vec_pretty(self).expect("a record serializes")
    }

    /// The record in `bytes` if it is the one `id` names: a file counts
    /// only if it holds what its name says (a mis-copied or edited one does not).
    pub fn named(bytes: &[u8], id: &str) -> Option<Record> {
        serde_json::from_slice::<Record>(bytes).ok().filter(|r| r.id() == id)
    }
}

/// This executable, as the user would type it: `pulumi-wasm`, or the
/// plugin's own path (it takes `approve` too), which the user may not have
/// on their PATH.
fn command() -> String {
    let exe = std::env::current_exe().ok();
    match exe.as_deref().and_then(|p| p.to_str()) {
        Some(p) if p.contains(char::is_whitespace) => format!("'{p}'"),
        Some(p) => p.to_owned(),
        None => "pulumi-wasm".to_owned(),
    }
}

/// Where approvals come from (see the module's doc).
pub struct Approvals<'a> {
    /// What the user grants every provider: the policy's defaults, their
    /// limits filled in with the host's (a value may ask for no more).
    pub local: Grants,
    pub store: &'a Store,
    /// `PULUMI_WASM_APPROVED`.
    pub listed: &'a [String],
}

impl<'a> Approvals<'a> {
    /// `policy`'s defaults as what every provider gets, with the host's
    /// `limits` ([`Runtime::default_limits`](crate::runtime::Runtime::default_limits))
    /// where the policy sets none.
    pub fn new(policy: &Policy, limits: Grants, store: &'a Store, listed: &'a [String]) -> Self {
        let mut local = limits;
        local.merge(policy.defaults.clone());
        Approvals { local, store, listed }
    }

    /// `Ok` when `record` may run; else the message telling the user how to
    /// approve it, having kept the record for `pulumi-wasm approve`.
    pub fn check(&self, record: &Record) -> Result<(), String> {
        if record.grants == Grants::default() || self.local.covers(&record.grants) {
            return Ok(());
        }
        let id = record.id();
        if self.listed.iter().any(|l| l.trim() == id) {
            return Ok(());
        }
        match self.store.read_approval(&id, true) {
            Ok(Some(bytes)) if Record::named(&bytes, &id).is_some() => return Ok(()),
            Ok(_) => {}
            Err(e) => tracing::warn!("reading approval {id}: {e}"),
        }
        if let Err(e) = self.store.write_approval(&id, &record.encode(), false) {
            tracing::warn!("keeping the request for approval {id}: {e}");
        }
        Err(format!(
            "{} (component {}) pins grants this machine has not approved: {}. Whoever generated the SDK \
             chose them. To let it run with them, approve once with `{} approve {id}` (it shows them \
             and asks), or list the id in PULUMI_WASM_APPROVED (e.g. in CI), or grant them to every \
             provider in your policy's [defaults]",
            record.package(),
            record.origin(),
            record.grants.describe().join(", "),
            command(),
        ))
    }

    /// Records that the user approved `record` on this machine (the args form).
    pub fn approve(&self, record: &Record) {
        if record.grants == Grants::default() {
            return;
        }
        let id = record.id();
        if let Err(e) = self.store.write_approval(&id, &record.encode(), true) {
            tracing::warn!("recording approval {id}: {e} (later runs will ask for it)");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(http: &[&str]) -> Record {
        let grants = Grants { http: http.iter().map(|h| h.to_string()).collect(), ..Grants::default() };
        let component = format!("sha256:{}", "a".repeat(64));
        Record {
            name: "kv".into(),
            version: "0.1.0".into(),
            component,
            source: "/x/kv.wasm".into(),
            grants,
            guest: None,
        }
    }

    #[test]
    fn approvals_come_from_the_user_only() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        let policy = Policy::default();
        let none: &[String] = &[];
        let limits =
            || Grants { memory_mb: Some(512), memory_total_mb: Some(2048), timeout_s: Some(900), ..Grants::default() };
        let approvals = Approvals::new(&policy, limits(), &store, none);
        let asks = record(&["https://api.example.com"]);
        assert!(approvals.check(&record(&[])).is_ok(), "no grants, nothing to approve");
        let refused = approvals.check(&asks).unwrap_err();
        assert!(refused.contains(&format!(" approve {}", asks.id())) && refused.contains("/x/kv.wasm"), "{refused}");
        assert!(store.read_approval(&asks.id(), false).unwrap().is_some(), "kept for `approve`");

        // The id is of the component, the grants and the guest's parameter; not of names.
        let renamed = Record { name: "other".into(), source: "elsewhere".into(), ..asks.clone() };
        assert_eq!(renamed.id(), asks.id());
        assert_ne!(record(&["https://api.example.com", "https://x.example.com"]).id(), asks.id());
        let program = |p: &str| Record { guest: Some(format!("shop 1.0.0 sha256:{p}")), ..asks.clone() };
        assert_ne!(program("1").id(), asks.id());
        assert_ne!(program("1").id(), program("2").id());

        // A file named for the id but holding other grants does not count.
        store.write_approval(&asks.id(), &record(&[]).encode(), true).unwrap();
        assert!(approvals.check(&asks).is_err());
        approvals.approve(&asks);
        assert!(approvals.check(&asks).is_ok());

        let listed = [asks.id()];
        let elsewhere = Store::new(dir.path().join("elsewhere"));
        assert!(Approvals::new(&policy, limits(), &elsewhere, &listed).check(&asks).is_ok());
        // The policy's defaults cover; a section for the name the value claims does not.
        let mut policy = Policy::default();
        policy.providers.insert("kv".into(), asks.grants.clone());
        assert!(Approvals::new(&policy, limits(), &elsewhere, none).check(&asks).is_err());
        policy.defaults = asks.grants.clone();
        assert!(Approvals::new(&policy, limits(), &elsewhere, none).check(&asks).is_ok());
        // Limits up to the host's own need no approval; more do.
        let limited = |memory_mb, timeout_s, memory_total_mb| Record {
            grants: Grants { memory_mb, timeout_s, memory_total_mb, ..Grants::default() },
            ..asks.clone()
        };
        let here = Approvals::new(&Policy::default(), limits(), &elsewhere, none);
        assert!(here.check(&limited(Some(64), Some(30), Some(1024))).is_ok());
        assert!(here.check(&limited(Some(512), Some(900), Some(2048))).is_ok());
        assert!(here.check(&limited(Some(4095), None, None)).is_err());
        assert!(here.check(&limited(None, Some(86_400), None)).is_err());
        assert!(here.check(&limited(None, None, Some(4096))).is_err());
        // The user's policy sets its own.
        let mut policy = Policy::default();
        policy.defaults.memory_total_mb = Some(8192);
        assert!(Approvals::new(&policy, limits(), &elsewhere, none).check(&limited(None, None, Some(4096))).is_ok());

        // What the value says reaches the user's terminal escaped.
        let sneaky = Record { name: "kv\u{1b}[2K".into(), ..record(&["https://x\u{1b}[1A.example.com"]) };
        let refused = approvals.check(&sneaky).unwrap_err();
        assert!(!refused.contains('\u{1b}') && refused.contains("kv\\u{1b}[2K"), "{refused}");
    }
}
