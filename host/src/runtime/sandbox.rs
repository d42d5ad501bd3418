//! Turns the user's grants for one provider into the WASI context and limits
//! its instances run with. Everything not granted is denied.

use std::sync::Arc;
use std::time::Duration;

use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxBuilder};

use super::RuntimeError;
use super::engine::RuntimeConfig;
use super::needs::Needs;
use super::policy::{DirGrant, Grants, HttpGrant};
use super::state::MAX_RANDOM_BYTES;

/// The longest deadline a call gets, whatever a policy, a flag or a request
/// says: a week (the server caps a request's `timeout` with it). Deadlines are
/// `Instant`s, which a far larger duration would overflow (a panic).
pub const MAX_CALL_TIMEOUT: Duration = Duration::from_secs(7 * 86_400);

/// The most a policy or a flag may let a provider's instances hold
/// together, in MiB: 1 TiB, or on a 32-bit host just under 4 GiB (bytes
/// of it must fit a `usize`).
pub const MAX_TOTAL_MEMORY_MB: usize = if usize::BITS >= 64 { 1 << 20 } else { 4095 };

#[derive(Clone, Debug)]
pub struct Sandbox {
    pub provider: String,
    pub grants: Grants,
    pub http: Arc<Vec<HttpGrant>>,
    /// Granted variables present in the host environment, with their values.
    env: Vec<(String, String)>,
    pub memory: usize,
    /// What all of the provider's instances may hold together, in bytes:
    /// never below `memory`.
    pub memory_total: usize,
    pub timeout: Duration,
    /// Why a guest may miss a variable or a directory without the host ever
    /// seeing it asked for (WASI hands over the environment and the preopens
    /// up front): declared needs not granted, granted variables not set.
    /// Added to a failed call's error when a missing grant could explain it
    /// (a crash, or any error but a bad argument, unimplemented, cancelled).
    pub notes: Vec<String>,
}

impl Sandbox {
    /// Nothing granted: how a component runs before its name is known.
    pub fn deny_all(config: &RuntimeConfig) -> Sandbox {
        Sandbox {
            provider: String::new(),
            grants: Grants::default(),
            http: Arc::default(),
            env: vec![],
            memory: config.max_memory,
            memory_total: config.max_total_memory.max(config.max_memory),
            timeout: config.call_timeout.min(MAX_CALL_TIMEOUT),
            notes: vec![],
        }
    }

    /// Nothing granted, within the largest limits any of `candidates` (see
    /// [`crate::runtime::Policy::for_any_name`]) sets: how a component runs
    /// its start code and says its name, so that a policy's limits hold
    /// from the first instruction, not only once it is named.
    pub fn before_naming(config: &RuntimeConfig, candidates: &[Grants]) -> Sandbox {
        let (memory, memory_total, timeout) = candidates
            .iter()
            .map(|g| limits(g, config))
            .fold((0, 0, Duration::ZERO), |(m, t, d), (gm, gt, gd)| (m.max(gm), t.max(gt), d.max(gd)));
        Sandbox { memory, memory_total, timeout, ..Sandbox::deny_all(config) }
    }

    pub fn new(provider: &str, grants: Grants, config: &RuntimeConfig) -> Result<Sandbox, RuntimeError> {
        grants.validate().map_err(|e| RuntimeError::Policy(e.to_string()))?;
        for d in &grants.dirs {
            if !d.host.is_dir() {
                return Err(RuntimeError::Policy(format!("granted directory {} does not exist", d.host.display())));
            }
        }
        let env: Vec<(String, String)> =
            grants.env.iter().filter_map(|k| std::env::var(k).ok().map(|v| (k.clone(), v))).collect();
        // A set: merged policies may grant a variable twice.
        let unset: std::collections::BTreeSet<&String> =
            grants.env.iter().filter(|k| !env.iter().any(|(set, _)| set == *k)).collect();
        let notes = unset
            .into_iter()
            .map(|k| format!("env \"{k}\" is granted to provider {provider} but not set in its environment"))
            .collect();
        let (memory, memory_total, timeout) = limits(&grants, config);
        Ok(Sandbox {
            notes,
            provider: provider.to_owned(),
            http: Arc::new(grants.http_grants()),
            env,
            memory,
            memory_total,
            timeout,
            grants,
        })
    }

    /// Notes the component's declared needs that are not granted (env and
    /// dirs; HTTP and package denials are named as they happen).
    pub fn note_needs(&mut self, needs: &Needs) {
        let named_later = |m: &String| m.starts_with("http ") || m.starts_with("package ");
        let unmet = needs.missing(&self.grants).into_iter().filter(|m| !named_later(m));
        let provider = &self.provider;
        self.notes
            .extend(unmet.map(|m| format!("missing grant: {m} for provider {provider} (the component declares it)")));
    }

    /// A fresh WASI context: clocks and randomness always; files, environment
    /// only as granted; no sockets, no name lookup, no stdin.
    pub fn wasi_ctx(&self, stderr: MemoryOutputPipe) -> WasiCtx {
        let mut b = WasiCtxBuilder::new();
        b.stderr(stderr).max_random_size(MAX_RANDOM_BYTES).allow_tcp(false).allow_udp(false);
        b.allow_ip_name_lookup(false);
        for (k, v) in &self.env {
            b.env(k, v);
        }
        for DirGrant { host, guest, read_only } in &self.grants.dirs {
            let perms = if *read_only { FsPerms::ReadOnly } else { FsPerms::ReadWrite };
            if let Err(e) = b.preopened_dir(host, guest, perms) {
                // Checked in `new`; a directory removed since then is simply not granted.
                tracing::warn!("cannot grant {}: {e}", host.display());
            }
        }
        b.build()
    }
}

/// The memory limit, the provider's total and the call timeout `grants` set,
/// the host's where they set none.
fn limits(grants: &Grants, config: &RuntimeConfig) -> (usize, usize, Duration) {
    let memory = grants.memory_mb.map_or(config.max_memory, |mb| mb.clamp(1, 4095) << 20);
    let memory_total =
        grants.memory_total_mb.map_or(config.max_total_memory, |mb| mb.clamp(1, MAX_TOTAL_MEMORY_MB) << 20);
    let timeout = grants.timeout_s.map_or(config.call_timeout, |s| Duration::from_secs(s.max(1))).min(MAX_CALL_TIMEOUT);
    (memory, memory_total.max(memory), timeout)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Before a component names itself it runs within the largest limits
    /// any name could give it, with none of any section's capabilities:
    /// a policy of `[defaults] memory-mb = 64` holds from its start code on.
    #[test]
    fn a_component_not_yet_named_runs_within_the_largest_limits_a_name_could_give() {
        const MIB: usize = 1 << 20;
        let config = RuntimeConfig { cache: None, ..RuntimeConfig::default() };
        let policy: crate::runtime::Policy = toml::from_str(
            "[defaults]\nmemory-mb = 64\ntimeout-s = 30\n\
             [providers.big]\nmemory-mb = 300\nenv = [\"HOME\"]\n\
             [providers.pinned]\nmemory-mb = 900\ndigest = \"sha256:other\"\n",
        )
        .unwrap();
        let s = Sandbox::before_naming(&config, &policy.for_any_name("mine"));
        assert_eq!((s.memory, s.timeout), (300 * MIB, Duration::from_secs(30)), "`big`'s, not the pinned one's");
        assert!(s.env.is_empty() && s.grants.env.is_empty() && s.provider.is_empty(), "no capability");
        let only_defaults: crate::runtime::Policy = toml::from_str("[defaults]\nmemory-mb = 64\n").unwrap();
        let s = Sandbox::before_naming(&config, &only_defaults.for_any_name("mine"));
        assert_eq!((s.memory, s.timeout), (64 * MIB, config.call_timeout));
        let s = Sandbox::before_naming(&config, &crate::runtime::Policy::default().for_any_name("mine"));
        assert_eq!(s.memory, config.max_memory, "no policy: the host's");
    }

    #[test]
    fn deadlines_are_capped_at_a_week() {
        let config = RuntimeConfig { call_timeout: Duration::MAX, cache: None, ..RuntimeConfig::default() };
        assert_eq!(Sandbox::deny_all(&config).timeout, MAX_CALL_TIMEOUT);
        let grants = Grants { timeout_s: Some(u64::MAX), ..Grants::default() };
        assert_eq!(Sandbox::new("p", grants, &config).expect("sandbox").timeout, MAX_CALL_TIMEOUT);
        let grants = Grants { timeout_s: Some(30), ..Grants::default() };
        assert_eq!(Sandbox::new("p", grants, &config).expect("sandbox").timeout, Duration::from_secs(30));
    }
}
