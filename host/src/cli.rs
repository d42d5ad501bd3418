//! Command-line arguments: the engine's, the runtime's and the sandbox's.

// The doc comments on arguments are clap's --help text, where NAME[@REQ]
// and <pid> mean what they say, not rustdoc links or HTML.
#![allow(rustdoc::broken_intra_doc_links, rustdoc::invalid_html_tags)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use clap::{Args, Parser, Subcommand};
use pulumi_wasm_host::runtime::{ArtifactCache, GrantFlags, MAX_TOTAL_MEMORY_MB, Policy, RuntimeConfig};
use pulumi_wasm_host::server::ServeOptions;

#[derive(Parser)]
#[command(name = "pulumi-wasm", version, about = "Serve WebAssembly-component Pulumi providers")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Serve a component as a provider plugin, exactly as the engine starts one.
    Serve {
        /// The provider component: a .wasm file, or NAME[@SEMVER-REQ] from the store.
        component: PathBuf,
        #[command(flatten)]
        engine: EngineArgs,
        #[command(flatten)]
        runtime: RuntimeArgs,
    },
    /// Serve the parameterized provider (what `pulumi-resource-wasm` runs): no
    /// component until the engine calls Parameterize.
    Generic {
        #[command(flatten)]
        engine: EngineArgs,
        #[command(flatten)]
        runtime: RuntimeArgs,
    },
    /// Make a plugin folder: `<out>/pulumi-resource-<name>` (this host) plus the
    /// component; with `--generic`, `<out>/pulumi-resource-wasm` alone.
    Pack {
        /// A .wasm file, or NAME[@SEMVER-REQ] from the store.
        #[arg(required_unless_present = "generic", conflicts_with = "generic")]
        component: Option<PathBuf>,
        /// Pack the parameterized provider `pulumi-resource-wasm` instead of one component.
        #[arg(long)]
        generic: bool,
        /// The folder a Pulumi.yaml `plugins: providers: - path:` entry points at.
        #[arg(long, short)]
        out: PathBuf,
        #[command(flatten)]
        runtime: RuntimeArgs,
    },
    /// Print a component's package name, version and digest.
    Info {
        /// A .wasm file, or NAME[@SEMVER-REQ] from the store.
        component: PathBuf,
        #[command(flatten)]
        runtime: RuntimeArgs,
    },
    /// Show what a component declares it needs, what the policy grants, and what is missing.
    Grants {
        /// A .wasm file, or NAME[@SEMVER-REQ] from the store.
        component: PathBuf,
        #[command(flatten)]
        runtime: RuntimeArgs,
    },
    /// Add a component to the provider store ($PULUMI_WASM_STORE, default
    /// ~/.local/share/pulumi-wasm/store) under its own name and version.
    Install {
        /// The provider component (.wasm).
        component: PathBuf,
        #[command(flatten)]
        runtime: RuntimeArgs,
    },
    /// List the components in the provider store.
    Ls {
        /// Only this package (NAME), or the versions a requirement accepts (NAME@SEMVER-REQ).
        name: Option<String>,
    },
    /// Let a parameterized package run with the grants its SDK pins, as asked
    /// for when it was refused (`pulumi up` names the id and the grants).
    Approve {
        /// The ids the refusals named.
        #[arg(required_unless_present = "list")]
        ids: Vec<String>,
        /// List what is approved instead.
        #[arg(long, conflicts_with_all = ["ids", "revoke"])]
        list: bool,
        /// Take the approvals of these ids back.
        #[arg(long)]
        revoke: bool,
        /// Approve without asking (what is approved is still shown); needed
        /// when stdin is not a terminal.
        #[arg(long, short, conflicts_with = "list")]
        yes: bool,
    },
    /// Remove one version from the provider store (its bytes go when no other version uses them).
    Remove {
        /// NAME@VERSION, e.g. random@0.1.0.
        package: String,
    },
    /// Push a component to an OCI registry (Wasm artifact layout); prints its pinned reference.
    Push {
        /// A .wasm file, NAME[@SEMVER-REQ] from the store, or oci://REFERENCE.
        component: PathBuf,
        /// [oci://]REGISTRY[:PORT]/REPOSITORY[:TAG]; the tag defaults to the component's version.
        reference: String,
        #[command(flatten)]
        oci: OciArgs,
        #[command(flatten)]
        runtime: RuntimeArgs,
    },
    /// Pull a component from an OCI registry into the provider store, under its own name and version.
    Pull {
        /// [oci://]REGISTRY[:PORT]/REPOSITORY[:TAG][@sha256:DIGEST].
        reference: String,
        #[command(flatten)]
        oci: OciArgs,
        #[command(flatten)]
        runtime: RuntimeArgs,
    },
}

/// Registry access for `push` and `pull`. Credentials: `PULUMI_WASM_OCI_USERNAME` and
/// `PULUMI_WASM_OCI_PASSWORD` when set (for `PULUMI_WASM_OCI_REGISTRY` only, when
/// that is set), else what `docker login` stored for the registry.
#[derive(Args, Debug, Clone)]
pub struct OciArgs {
    /// Plain HTTP to a registry that is not on loopback (also PULUMI_WASM_OCI_INSECURE=1).
    #[arg(long)]
    pub insecure: bool,
}

impl OciArgs {
    pub fn options(&self) -> anyhow::Result<pulumi_wasm_host::oci::OciOptions> {
        let mut options = pulumi_wasm_host::oci::OciOptions::from_env()?;
        options.insecure |= self.insecure;
        Ok(options)
    }
}

/// What the engine passes to every provider plugin: flags first, then its address.
#[derive(Args, Debug)]
pub struct EngineArgs {
    #[arg(long)]
    pub logtostderr: bool,
    /// Log verbosity, as `-v=N`.
    #[arg(short = 'v', value_name = "N")]
    pub verbosity: Option<u8>,
    #[arg(long)]
    pub logflow: bool,
    /// The engine's tracing endpoint (accepted; tracing export is not implemented).
    #[arg(long, value_name = "ENDPOINT")]
    pub tracing: Option<String>,
    /// The engine's gRPC address. Absent in attach mode: the engine sends it
    /// with `Handshake` or `Attach`.
    pub engine_address: Option<String>,
}

/// The plugin process's own command line when started as `pulumi-resource-<name>`.
#[derive(Parser)]
pub struct PluginCli {
    #[command(flatten)]
    pub engine: EngineArgs,
    #[command(flatten)]
    pub runtime: RuntimeArgs,
}

#[derive(Args, Debug, Clone)]
pub struct RuntimeArgs {
    /// Instances of the provider that may run calls concurrently (as many again for Construct and Call).
    #[arg(long, env = "PULUMI_WASM_MAX_INSTANCES", default_value_t = 8)]
    pub max_instances: usize,
    /// Instances beyond those that may keep a resource operation waiting
    /// without running (on HTTP, on timers), so that long creates do not
    /// keep the provider's other calls from running.
    #[arg(long, env = "PULUMI_WASM_MAX_WAITING", default_value_t = 32)]
    pub max_waiting: usize,
    /// Linear memory cap per instance, in MiB (a policy's `memory-mb` wins).
    #[arg(long, env = "PULUMI_WASM_MAX_MEMORY_MB", default_value_t = 512)]
    pub max_memory_mb: usize,
    /// Linear memory cap of all of a provider's instances together, in MiB
    /// (a policy's `memory-total-mb` wins).
    #[arg(long, env = "PULUMI_WASM_MAX_TOTAL_MEMORY_MB", default_value_t = 2048)]
    pub max_total_memory_mb: usize,
    /// Deadline for calls whose request has no timeout, in seconds (a policy's `timeout-s` wins).
    #[arg(long, env = "PULUMI_WASM_CALL_TIMEOUT", default_value_t = 900)]
    pub call_timeout: u64,
    /// Where compiled components are cached (default: $PULUMI_WASM_CACHE_DIR if
    /// set and not empty, else `artifacts/` in the provider store).
    // Not clap's `env`: the library reads the variable (empty is unset), so both agree.
    #[arg(long)]
    pub cache_dir: Option<PathBuf>,
    /// Compile every time instead of using the cache.
    #[arg(long)]
    pub no_cache: bool,
    /// The sandbox policy file (TOML; see the README).
    #[arg(long, env = "PULUMI_WASM_POLICY")]
    pub policy: Option<PathBuf>,
    #[command(flatten)]
    pub grants: GrantFlags,
    /// Approval ids (comma-separated): parameterized packages that may run
    /// with the grants their SDK pins without `pulumi-wasm approve` (e.g. in CI).
    #[arg(long, env = "PULUMI_WASM_APPROVED", value_delimiter = ',', value_name = "ID")]
    pub approved: Vec<String>,
    /// Write /tmp/perf-<pid>.map as guests are loaded, so that `perf report` names their functions.
    #[arg(long, env = "PULUMI_WASM_PERF_MAP")]
    pub perf_map: bool,
    /// How often to check that the engine is still there, in milliseconds
    /// (the host shuts down when it is gone; Pulumi's plugins check every 5 minutes).
    #[arg(long, env = "PULUMI_WASM_ENGINE_CHECK_MS", default_value_t = 300_000, hide = true)]
    pub engine_check_ms: u64,
}

impl RuntimeArgs {
    pub fn config(&self) -> RuntimeConfig {
        let cache = if self.no_cache {
            None
        } else {
            // The library's default (beside the store), so `RuntimeConfig::default()` caches where we do.
            self.cache_dir.clone().or_else(ArtifactCache::default_dir).map(ArtifactCache::new)
        };
        RuntimeConfig {
            max_instances: self.max_instances.clamp(1, 256),
            max_waiting: self.max_waiting.min(256),
            max_memory: self.max_memory_mb.clamp(1, 4095) << 20,
            max_total_memory: self.max_total_memory_mb.clamp(1, MAX_TOTAL_MEMORY_MB) << 20,
            call_timeout: Duration::from_secs(self.call_timeout.max(1)),
            cache,
            perf_map: self.perf_map,
            monitors: Some(pulumi_wasm_host::server::monitors()),
        }
    }

    pub fn serve_options(&self) -> ServeOptions {
        ServeOptions { engine_check: Duration::from_millis(self.engine_check_ms.max(10)), ..ServeOptions::default() }
    }

    /// The policy: `beside` (a packed plugin's own policy file), then
    /// `--policy`, then the `--allow-*` flags, which apply to every provider.
    pub fn policy(&self, beside: Option<&Path>) -> anyhow::Result<Policy> {
        let mut policy = Policy::default();
        for path in beside.into_iter().filter(|p| p.is_file()).chain(self.policy.as_deref()) {
            let file = Policy::load(path)?;
            policy.defaults.merge(file.defaults);
            for (name, grants) in file.providers {
                policy.providers.entry(name).or_default().merge(grants);
            }
        }
        let flags = self.grants.grants().context("in the --allow-* flags")?;
        policy.defaults.merge(flags);
        Ok(policy)
    }
}
