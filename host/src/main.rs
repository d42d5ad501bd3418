//! `pulumi-wasm`: serve a WebAssembly-component provider to the Pulumi engine.
//!
//! Run as `pulumi-resource-<name>` (a packed plugin folder) it behaves exactly
//! like a native provider plugin and serves `pulumi-resource-<name>.wasm`
//! from beside itself.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::{Args, Parser, Subcommand};
use pulumi_wasm_host::runtime::{ArtifactCache, LoadedProvider, Runtime, RuntimeConfig};
use pulumi_wasm_host::server::{EngineLink, ServeOptions, WasmProvider, serve};

#[derive(Parser)]
#[command(name = "pulumi-wasm", version, about = "Serve WebAssembly-component Pulumi providers")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve a component as a provider plugin, exactly as the engine starts one.
    Serve {
        /// The provider component (.wasm).
        component: PathBuf,
        #[command(flatten)]
        engine: EngineArgs,
        #[command(flatten)]
        runtime: RuntimeArgs,
    },
    /// Make a plugin folder: `<out>/pulumi-resource-<name>` (this host) plus the component.
    Pack {
        component: PathBuf,
        /// The folder a Pulumi.yaml `plugins: providers: - path:` entry points at.
        #[arg(long, short)]
        out: PathBuf,
        #[command(flatten)]
        runtime: RuntimeArgs,
    },
    /// Print a component's package name, version and digest.
    Info {
        component: PathBuf,
        #[command(flatten)]
        runtime: RuntimeArgs,
    },
}

/// What the engine passes to every provider plugin: flags first, then its address.
#[derive(Args, Debug)]
struct EngineArgs {
    #[arg(long)]
    logtostderr: bool,
    /// Log verbosity, as `-v=N`.
    #[arg(short = 'v', value_name = "N")]
    verbosity: Option<u8>,
    #[arg(long)]
    logflow: bool,
    /// The engine's tracing endpoint (accepted; tracing export is not implemented).
    #[arg(long, value_name = "ENDPOINT")]
    tracing: Option<String>,
    /// The engine's gRPC address. Absent in attach mode: the engine sends it
    /// with `Handshake` or `Attach`.
    engine_address: Option<String>,
}

/// The plugin process's own command line when started as `pulumi-resource-<name>`.
#[derive(Parser)]
struct PluginCli {
    #[command(flatten)]
    engine: EngineArgs,
    #[command(flatten)]
    runtime: RuntimeArgs,
}

#[derive(Args, Debug, Clone)]
struct RuntimeArgs {
    /// Instances of the provider that may run calls concurrently.
    #[arg(long, env = "PULUMI_WASM_MAX_INSTANCES", default_value_t = 8)]
    max_instances: usize,
    /// Linear memory cap per instance, in MiB.
    #[arg(long, env = "PULUMI_WASM_MAX_MEMORY_MB", default_value_t = 512)]
    max_memory_mb: usize,
    /// Deadline for calls whose request has no timeout, in seconds.
    #[arg(long, env = "PULUMI_WASM_CALL_TIMEOUT", default_value_t = 900)]
    call_timeout: u64,
    /// Where compiled components are cached (default: ~/.cache/pulumi-wasm).
    #[arg(long, env = "PULUMI_WASM_CACHE_DIR")]
    cache_dir: Option<PathBuf>,
    /// Compile every time instead of using the cache.
    #[arg(long)]
    no_cache: bool,
}

impl RuntimeArgs {
    fn config(&self) -> RuntimeConfig {
        let cache = if self.no_cache {
            None
        } else {
            self.cache_dir.clone().or_else(ArtifactCache::default_dir).map(ArtifactCache::new)
        };
        RuntimeConfig {
            max_instances: self.max_instances.clamp(1, 256),
            max_memory: self.max_memory_mb.clamp(1, 4096) << 20,
            call_timeout: Duration::from_secs(self.call_timeout.max(1)),
            cache,
        }
    }
}

fn main() {
    if let Err(e) = run() {
        // One readable line (the engine shows a plugin's stderr when it exits early).
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

fn run() -> anyhow::Result<()> {
    let exe = std::env::args_os().next().map(PathBuf::from).unwrap_or_default();
    let plugin_name =
        exe.file_name().and_then(|n| n.to_str()).and_then(|n| n.strip_prefix("pulumi-resource-")).map(str::to_owned);
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    match plugin_name {
        Some(_) => {
            let cli = PluginCli::parse();
            let component = plugin_component()?;
            init_logging(&cli.engine);
            runtime.block_on(run_serve(&component, cli.engine, cli.runtime))
        }
        None => match Cli::parse().command {
            Command::Serve { component, engine, runtime: rt } => {
                init_logging(&engine);
                runtime.block_on(run_serve(&component, engine, rt))
            }
            Command::Pack { component, out, runtime: rt } => runtime.block_on(pack(&component, &out, &rt)),
            Command::Info { component, runtime: rt } => runtime.block_on(async {
                let loaded = identify(&component, &rt).await?;
                let cached = if loaded.cache_hit { "yes" } else { "no" };
                println!("name:    {}\nversion: {}", loaded.name, loaded.version);
                println!("digest:  sha256:{}\ncached:  {cached}", loaded.digest);
                Ok(())
            }),
        },
    }
}

/// A packed plugin keeps its component next to itself as `<exe>.wasm`.
fn plugin_component() -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe().context("locating this executable")?;
    let mut wasm = exe.clone().into_os_string();
    wasm.push(".wasm");
    let wasm = PathBuf::from(wasm);
    if !wasm.is_file() {
        bail!("no component at {} (a packed plugin keeps it beside {})", wasm.display(), exe.display());
    }
    Ok(wasm)
}

fn init_logging(engine: &EngineArgs) {
    let level = match engine.verbosity.unwrap_or(0) {
        0 => "warn",
        1..=3 => "info",
        _ => "debug",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(level));
    // Stdout belongs to the port line; logs go to stderr, which the engine captures.
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).init();
}

async fn run_serve(component: &Path, engine: EngineArgs, rt: RuntimeArgs) -> anyhow::Result<()> {
    let _ = (engine.logtostderr, engine.logflow, &engine.tracing);
    let wasm: Arc<[u8]> = std::fs::read(component).with_context(|| format!("reading {}", component.display()))?.into();
    let runtime = Runtime::new(rt.config())?;
    let (log_tx, log_rx) = tokio::sync::mpsc::channel(1024);
    let loaded = runtime.load(wasm, log_tx).await.with_context(|| format!("loading {}", component.display()))?;
    tracing::info!(
        "loaded {} {} (sha256:{}, cached: {})",
        loaded.name,
        loaded.version,
        loaded.digest,
        loaded.cache_hit
    );
    let link = EngineLink::new(engine.engine_address);
    let forwarder = link.spawn_log_forwarder(log_rx);
    serve(WasmProvider::new(loaded, link), ServeOptions::default()).await?;
    forwarder.abort();
    Ok(())
}

async fn identify(component: &Path, rt: &RuntimeArgs) -> anyhow::Result<LoadedProvider> {
    let wasm: Arc<[u8]> = std::fs::read(component).with_context(|| format!("reading {}", component.display()))?.into();
    let runtime = Runtime::new(rt.config())?;
    let (log_tx, _log_rx) = tokio::sync::mpsc::channel(16);
    Ok(runtime.load(wasm, log_tx).await?)
}

async fn pack(component: &Path, out: &Path, rt: &RuntimeArgs) -> anyhow::Result<()> {
    let LoadedProvider { name, version, .. } = identify(component, rt).await?;
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let exe = std::env::current_exe().context("locating this executable")?;
    let plugin = out.join(format!("pulumi-resource-{name}"));
    let mut wasm_path = plugin.clone().into_os_string();
    wasm_path.push(".wasm");
    std::fs::copy(&exe, &plugin).with_context(|| format!("writing {}", plugin.display()))?;
    std::fs::copy(component, &wasm_path).context("copying the component")?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&plugin, std::fs::Permissions::from_mode(0o755))?;
    }
    println!("packed {name} {version} into {}", out.display());
    println!("Pulumi.yaml:\n  plugins:\n    providers:\n      - name: {name}\n        path: {}", out.display());
    Ok(())
}
