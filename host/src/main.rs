//! `pulumi-wasm`: serve a WebAssembly-component provider to the Pulumi engine.
//!
//! Run as `pulumi-resource-<name>` (a packed plugin folder) it behaves exactly
//! like a native provider plugin and serves `pulumi-resource-<name>.wasm`
//! from beside itself. Run as `pulumi-resource-wasm` with no component beside
//! it, it is the parameterized provider that loads any component on
//! `Parameterize` (`pulumi package add wasm <component>`).

mod cli;
mod commands;
mod plugin;
mod registry;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, bail};
use clap::Parser;
use cli::{Cli, Command, EngineArgs, PluginCli, RuntimeArgs};
use commands::{Source, load_component};
use pulumi_wasm_host::generic::GenericProvider;
use pulumi_wasm_host::runtime::{Deferred, LOG_CHANNEL, LoadedProvider, Policy, Runtime, Sandbox};
use pulumi_wasm_host::server::{EngineLink, ProviderService, ServeOptions, WasmProvider, serve};
use pulumi_wasm_host::store::Store;
use pulumi_wasm_host::text;

fn main() {
    forget_empty_settings();
    if let Err(e) = run() {
        // One readable line (the engine shows a plugin's stderr when it exits early).
        // Errors quote components, registries and files: escaped for the terminal.
        eprintln!("error: {}", text::escape(&format!("{e:#}"), text::LINES));
        std::process::exit(1);
    }
}

/// A `PULUMI_WASM_*` variable set to nothing (`PULUMI_WASM_POLICY= pulumi up`,
/// or a CI template's empty default) means unset, as the library's own
/// readers take it; clap would take it as a flag given no value and refuse.
fn forget_empty_settings() {
    let empty: Vec<_> = std::env::vars_os()
        .filter(|(k, v)| v.is_empty() && k.to_str().is_some_and(|k| k.starts_with("PULUMI_WASM_")))
        .map(|(k, _)| k)
        .collect();
    for name in empty {
        // SAFETY: called first thing in `main`, before any other thread
        // exists that could read the environment concurrently.
        unsafe { std::env::remove_var(name) };
    }
}

fn run() -> anyhow::Result<()> {
    let runtime = pulumi_wasm_host::server::provider_runtime()?;
    let outcome = dispatch(&runtime);
    // Blocking work still running (a component compiling behind a warm
    // start's port line) must not hold the process after it has stopped serving.
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    outcome
}

fn dispatch(runtime: &tokio::runtime::Runtime) -> anyhow::Result<()> {
    let exe = std::env::args_os().next().map(PathBuf::from).unwrap_or_default();
    match plugin::name_of(&exe) {
        // The plugin's own executable takes `approve` too: a refusal names it,
        // and the user may not have `pulumi-wasm` on their PATH. (The engine
        // passes flags and an address, never a word.)
        Some(_) if std::env::args_os().nth(1).is_some_and(|a| a == "approve") => {
            let Command::Approve { ids, list, revoke, yes } = Cli::parse().command else {
                bail!("expected the approve command");
            };
            commands::approvals(&ids, list, revoke, yes)
        }
        Some(name) => {
            let cli = PluginCli::parse();
            init_logging(&cli.engine);
            let exe = std::env::current_exe().context("locating this executable")?;
            let beside = plugin::beside(&exe, "policy.toml");
            if name == GENERIC_PLUGIN && !plugin::beside(&exe, "wasm").exists() {
                return runtime.block_on(run_generic(cli.engine, cli.runtime, Some(&beside)));
            }
            let (_, component) = plugin_component()?;
            runtime.block_on(run_serve(component, cli.engine, cli.runtime, Some(&beside)))
        }
        None => {
            let command = Cli::parse().command;
            match &command {
                Command::Serve { engine, .. } | Command::Generic { engine, .. } => init_logging(engine),
                // The commands' own warnings (a credential helper that failed,
                // ...), not those of the component run to learn its name (the
                // grants it lacks concern serving it).
                _ => init_logging_at("warn,pulumi_wasm_host::runtime=error"),
            }
            run_command(runtime, command)
        }
    }
}

/// `pulumi-wasm <command>`, logging set up.
fn run_command(runtime: &tokio::runtime::Runtime, command: Command) -> anyhow::Result<()> {
    match command {
        Command::Serve { component, engine, runtime: rt } => runtime.block_on(run_serve(component, engine, rt, None)),
        Command::Generic { engine, runtime: rt } => runtime.block_on(run_generic(engine, rt, None)),
        Command::Pack { component: None, out, runtime: rt, .. } => pack_generic(&out, &rt),
        Command::Pack { component: Some(component), out, runtime: rt, .. } => {
            runtime.block_on(pack(load_component(&component)?, &out, &rt))
        }
        Command::Grants { component, runtime: rt } => {
            // A packed plugin's component runs with the policy packed beside it.
            let packed = plugin::beside(&component.with_extension(""), "policy.toml");
            let beside = (component.extension().is_some_and(|e| e == "wasm") && packed.is_file()).then_some(packed);
            runtime.block_on(grants(load_component(&component)?, &rt, beside.as_deref()))
        }
        Command::Info { component, runtime: rt } => runtime.block_on(async {
            let loaded = identify(&load_component(&component)?, &rt).await?;
            let cached = if loaded.cache_hit { "yes" } else { "no" };
            println!("name:    {}\nversion: {}", loaded.name, loaded.version);
            println!("digest:  sha256:{}\ncached:  {cached}", loaded.digest);
            println!("contract: pulumi:provider@{}", loaded.contract);
            Ok(())
        }),
        Command::Install { component, runtime: rt } => runtime.block_on(async {
            if component.to_str().is_some_and(|c| c.starts_with(pulumi_wasm_host::oci::SCHEME)) {
                bail!(
                    "install takes a file; a registry's component is installed with: pulumi-wasm pull {}",
                    component.display()
                );
            }
            let wasm = std::fs::read(&component).with_context(|| format!("reading {}", component.display()))?;
            let source = Source { wasm: wasm.into(), label: component.display().to_string() };
            let loaded = identify(&source, &rt).await?;
            commands::install(&component, &source.wasm, &loaded.name, &loaded.version)
        }),
        Command::Ls { name } => commands::ls(name.as_deref()),
        Command::Remove { package } => commands::remove(&package),
        Command::Approve { ids, list, revoke, yes } => commands::approvals(&ids, list, revoke, yes),
        Command::Push { component, reference, oci, runtime: rt } => runtime.block_on(async {
            let source = load_component(&component)?;
            let loaded = identify(&source, &rt).await?;
            registry::push(&source, &reference, &loaded.name, &loaded.version, &oci.options()?).await
        }),
        Command::Pull { reference, oci, runtime: rt } => runtime.block_on(async {
            let (reference, pulled) = registry::pull(&reference, &oci.options()?).await?;
            let source = Source { wasm: pulled.wasm.clone().into(), label: reference.to_string() };
            let loaded = identify(&source, &rt).await?;
            registry::install(&reference, &pulled, &loaded.name, &loaded.version)
        }),
    }
}

/// A packed plugin keeps its component beside itself (see [`plugin`]);
/// returns the executable and the component.
fn plugin_component() -> anyhow::Result<(PathBuf, PathBuf)> {
    let exe = std::env::current_exe().context("locating this executable")?;
    let wasm = plugin::beside(&exe, "wasm");
    if !wasm.is_file() {
        bail!("no component at {} (a packed plugin keeps it beside {})", wasm.display(), exe.display());
    }
    Ok((exe, wasm))
}

fn init_logging(engine: &EngineArgs) {
    init_logging_at(match engine.verbosity.unwrap_or(0) {
        0 => "warn",
        1..=3 => "info",
        _ => "debug",
    });
}

/// Logs at `level` (unless `RUST_LOG` says otherwise) to stderr.
fn init_logging_at(level: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(level));
    // Stdout belongs to the port line; logs go to stderr, which the engine
    // captures and shows through the CLI's colouriser.
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(|| text::Unmarked(std::io::stderr())).init();
}

async fn run_serve(
    component: PathBuf,
    engine: EngineArgs,
    rt: RuntimeArgs,
    beside: Option<&Path>,
) -> anyhow::Result<()> {
    let _ = (engine.logtostderr, engine.logflow, &engine.tracing);
    let config = rt.config();
    let policy = rt.policy(beside)?;
    let link = EngineLink::new(engine.engine_address);
    let (log_tx, log_rx) = tokio::sync::mpsc::channel(LOG_CHANNEL);
    link.forward_logs(log_rx);
    // A component file served before and unchanged since is a warm start: its
    // record says what it is, so the port line goes out at once and the
    // component loads from its cached artifact while the engine connects
    // (calls wait for it). Anything else loads before the port line.
    let known = match &config.cache {
        // A record that does not hold up counts as none: the file is loaded as on a first start.
        Some(cache) if component.is_file() => cache
            .known_file(&component)
            .and_then(|known| semver::Version::parse(&known.version).ok().map(|version| (known, version))),
        _ => None,
    };
    let served = match known {
        Some((known, version)) => {
            tracing::info!("warm start: {} loads behind the port line", component.display());
            // The sandbox is made now so a policy error still stops the start.
            let sandbox = Sandbox::new(&known.name, policy.for_provider(&known.name, &known.digest), &config)?;
            // What the record promises; a file loaded instead must be the same.
            let expected = (known.name.clone(), version.clone());
            let autonaming = known.autonaming;
            let port_line = Arc::new(tokio::sync::Notify::new());
            let printed = port_line.clone();
            let load = async move {
                // Loading starts once the engine has the port line: until
                // then it would only compete with the start for the cores.
                printed.notified().await;
                tracing::info!("loading {} {} from the cache", expected.0, expected.1);
                let runtime = Runtime::new(config)?;
                let cached = runtime.load_known(known, log_tx.clone(), sandbox).await;
                let loaded = match cached.with_context(|| format!("loading {}", component.display()))? {
                    Some(loaded) => loaded,
                    // The artifact is gone: load the file as on a first start.
                    None => {
                        let loaded = load_file(&runtime, &component, log_tx, &policy).await?;
                        if (&loaded.name, &loaded.version) != (&expected.0, &expected.1) {
                            bail!(
                                "{} changed while starting (now {} {})",
                                component.display(),
                                loaded.name,
                                loaded.version
                            );
                        }
                        loaded
                    }
                };
                log_loaded(&loaded);
                Ok(loaded.into_served_pool())
            };
            let deferred = Deferred::spawn(async move { load.await.map_err(|e: anyhow::Error| format!("{e:#}")) });
            let service = ProviderService::with_backend(Arc::new(deferred), &version, link);
            let options = ServeOptions { port_line: Some(port_line), ..rt.serve_options() };
            serve(service.supports_autonaming(autonaming), options).await
        }
        None => {
            let runtime = Runtime::new(config)?;
            let loaded = load_file(&runtime, &component, log_tx, &policy).await?;
            log_loaded(&loaded);
            serve(WasmProvider::new(loaded, link), rt.serve_options()).await
        }
    };
    Ok(served?)
}

/// Reads, hashes and loads a component file, and records it so that its
/// next start is a warm one.
async fn load_file(
    runtime: &Arc<Runtime>,
    component: &Path,
    logs: tokio::sync::mpsc::Sender<pulumi_wasm_host::runtime::GuestLog>,
    policy: &Policy,
) -> anyhow::Result<LoadedProvider> {
    let file = component.to_owned();
    let (source, seen) = tokio::task::spawn_blocking(move || {
        // The file's identity before reading it: a change meanwhile shows as a new identity.
        let seen = pulumi_wasm_host::runtime::SeenFile::stat(&file);
        load_component(&file).map(|s| (s, seen))
    })
    .await??;
    let loaded = runtime.load(source.wasm, logs, policy).await.with_context(|| format!("loading {}", source.label))?;
    if let Some(seen) = seen {
        runtime.remember_file(component, seen, &loaded).await;
    }
    Ok(loaded)
}

fn log_loaded(loaded: &LoadedProvider) {
    tracing::info!(
        "loaded {} {} (sha256:{}, cached: {}, built against pulumi:provider@{})",
        loaded.name,
        loaded.version,
        loaded.digest,
        loaded.cache_hit,
        loaded.contract
    );
}

/// The parameterized provider's plugin name: `pulumi package add wasm ...`.
const GENERIC_PLUGIN: &str = "wasm";

/// Serves `pulumi-resource-wasm`: no component until Parameterize.
async fn run_generic(engine: EngineArgs, rt: RuntimeArgs, beside: Option<&Path>) -> anyhow::Result<()> {
    let policy = rt.policy(beside)?;
    let runtime = Runtime::new(rt.config())?;
    let store = Store::open_default()?;
    let (log_tx, log_rx) = tokio::sync::mpsc::channel(LOG_CHANNEL);
    let provider = GenericProvider::new(runtime, log_tx, policy, store, rt.approved.clone());
    let version = semver::Version::parse(env!("CARGO_PKG_VERSION"))?;
    let link = EngineLink::new(engine.engine_address);
    link.forward_logs(log_rx);
    // Components that take the autonaming options get them; the others do not (see its `check`).
    let service = ProviderService::with_backend(Arc::new(provider), &version, link).supports_autonaming(true);
    Ok(serve(service, rt.serve_options()).await?)
}

/// `pack --generic`: a plugin folder holding `pulumi-resource-wasm`.
fn pack_generic(out: &Path, rt: &RuntimeArgs) -> anyhow::Result<()> {
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let exe = std::env::current_exe().context("locating this executable")?;
    let target = plugin::executable(out, GENERIC_PLUGIN);
    copy_executable(&exe, &target)?;
    let version = env!("CARGO_PKG_VERSION");
    println!("packed the parameterized provider {GENERIC_PLUGIN} {version} into {}", out.display());
    // Only the defaults: a component added with `pulumi package add` gets
    // them and the flags given there, not a section for a name it chose.
    let policy = rt.policy(None)?;
    if !policy.providers.is_empty() {
        println!("not packed: the policy's [providers.*] sections (a parameterized component gets [defaults] only)");
    }
    let defaults = Policy { defaults: policy.defaults, ..Policy::default() };
    write_packed_policy(&plugin::beside(&target, "policy.toml"), defaults)?;
    println!(
        "Pulumi.yaml:\n  plugins:\n    providers:\n      - name: {GENERIC_PLUGIN}\n        path: {}",
        out.display()
    );
    println!(
        "then: pulumi package add {GENERIC_PLUGIN} <component.wasm | name@version | oci://ref> [-- its arguments]"
    );
    Ok(())
}

/// Puts a copy of this executable at `target`, replacing what is there
/// whole: a plugin of this folder may be running (written into, its file
/// would be busy, or on macOS a signed binary changed in place and killed
/// at its next start; Windows refuses either way) or starting (it would
/// read a part).
fn copy_executable(exe: &Path, target: &Path) -> anyhow::Result<()> {
    pulumi_wasm_host::atomic::replace_with(target, |file| {
        std::io::copy(&mut std::fs::File::open(exe)?, file)?;
        #[cfg(unix)]
        file.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(0o755))?;
        Ok(())
    })
    .with_context(|| format!("writing {}", target.display()))
}

async fn identify(source: &Source, rt: &RuntimeArgs) -> anyhow::Result<LoadedProvider> {
    identify_under(source, rt, None).await
}

/// As [`identify`], with a packed plugin's policy file first.
async fn identify_under(source: &Source, rt: &RuntimeArgs, beside: Option<&Path>) -> anyhow::Result<LoadedProvider> {
    let policy = rt.policy(beside)?;
    let runtime = Runtime::new(rt.config())?;
    let (log_tx, _log_rx) = tokio::sync::mpsc::channel(16);
    Ok(runtime.load(source.wasm.clone(), log_tx, &policy).await?)
}

/// The grants a packed plugin runs with: what it got from the policy
/// (`--policy` or `PULUMI_WASM_POLICY`) and the `--allow-*` flags, written
/// as one file beside it (directories absolute), or none. A file left from
/// an earlier pack is replaced, so a grant can be taken back.
fn write_packed_policy(path: &Path, mut policy: Policy) -> anyhow::Result<()> {
    let all = std::iter::once(&mut policy.defaults).chain(policy.providers.values_mut());
    let mut described = Vec::new();
    for grants in all {
        grants.make_dirs_absolute();
        described.extend(grants.describe());
    }
    if described.is_empty() {
        match std::fs::remove_file(path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(e).with_context(|| format!("removing {}", path.display()));
            }
            _ => {}
        }
        println!("grants: none");
        return Ok(());
    }
    let text = toml::to_string(&policy).context("writing the grants as TOML")?;
    pulumi_wasm_host::atomic::write(path, text.as_bytes()).with_context(|| format!("writing {}", path.display()))?;
    println!("grants (in {}): {}", path.display(), described.join(", "));
    Ok(())
}

async fn pack(source: Source, out: &Path, rt: &RuntimeArgs) -> anyhow::Result<()> {
    let LoadedProvider { name, version, pool, digest, .. } = identify(&source, rt).await?;
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let exe = std::env::current_exe().context("locating this executable")?;
    let target = plugin::executable(out, &name);
    let wasm_path = plugin::beside(&target, "wasm");
    // What an interrupted pack left (a copy of the executable, maybe).
    pulumi_wasm_host::atomic::sweep(out, std::time::Duration::from_secs(3600));
    // Each file replaced whole, the component first: a plugin starting
    // meanwhile finds it beside the old policy, pinned to the old bytes,
    // and refuses to run rather than run it with the old grants.
    pulumi_wasm_host::atomic::write(&wasm_path, &source.wasm).context("copying the component")?;
    // Pinned to these bytes: a component put in the folder later gets none of it.
    let grants =
        pulumi_wasm_host::runtime::Grants { digest: Some(format!("sha256:{digest}")), ..pool.sandbox().grants.clone() };
    let packed = Policy { providers: [(name.clone(), grants)].into(), ..Policy::default() };
    write_packed_policy(&plugin::beside(&target, "policy.toml"), packed)?;
    copy_executable(&exe, &target)?;
    println!("packed {name} {version} into {}", out.display());
    println!("Pulumi.yaml:\n  plugins:\n    providers:\n      - name: {name}\n        path: {}", out.display());
    Ok(())
}

async fn grants(source: Source, rt: &RuntimeArgs, beside: Option<&Path>) -> anyhow::Result<()> {
    let loaded = identify_under(&source, rt, beside).await?;
    if let Some(file) = beside {
        println!("policy packed beside it: {}", file.display());
    }
    let sandbox = loaded.pool.sandbox();
    let g = &sandbox.grants;
    let list = |v: &[String]| if v.is_empty() { "(none)".to_owned() } else { v.join(", ") };
    println!("{} {}", loaded.name, loaded.version);
    println!(
        "declares:\n  http: {}\n  env:  {}\n  dirs: {}\n  packages: {}",
        list(&loaded.needs.http),
        list(&loaded.needs.env),
        list(&loaded.needs.dirs),
        list(&loaded.needs.packages)
    );
    if !loaded.needs.unknown.is_empty() {
        println!("  keys this host does not read: {}", list(&loaded.needs.unknown));
    }
    let dirs: Vec<String> = g
        .dirs
        .iter()
        .map(|d| format!("{} -> {}{}", d.host.display(), d.guest, if d.read_only { " (ro)" } else { "" }))
        .collect();
    println!(
        "granted:\n  http: {}\n  env:  {}\n  dirs: {}\n  packages: {}",
        list(&g.http),
        list(&g.env),
        list(&dirs),
        list(&g.packages)
    );
    if !g.http_private.is_empty() {
        println!("  http-private: {}", list(&g.http_private));
    }
    println!("  memory: {} MiB, call timeout: {:?}", sandbox.memory >> 20, sandbox.timeout);
    let missing = loaded.needs.missing(g);
    println!("missing: {}", list(&missing));
    let unset: Vec<String> = g.env.iter().filter(|k| std::env::var_os(k).is_none()).cloned().collect();
    println!("granted but not set: {}", list(&unset));
    Ok(())
}
