//! `bench`: the WASM host against the same provider served natively, and
//! against a Python provider, side by side in one run, as ratios.
//!
//! ```sh
//! cargo run --release -p bench            # builds what it needs, prints the tables (Markdown)
//! cargo run --release -p bench -- --quick # a tenth of the iterations: a smoke run
//! cargo run --release -p bench -- --runs 3 # three runs: how often each target is met
//! ```
//!
//! Every provider is started as the engine starts a plugin and driven over
//! gRPC on loopback. See BENCHMARKS.md for what is measured and how.

mod abi;
mod engine;
mod handlers;
mod inproc;
mod lifecycle;
mod measure;
mod plugin;
mod report;
mod workload;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::Parser;
use prost_types::Struct;
use pulumirpc::resource_provider_client::ResourceProviderClient;
use pulumirpc::*;
use tonic::transport::Channel;

use engine::StandInEngine;
use lifecycle::lifecycle;
use measure::{Fleet, THROUGHPUT_ROUNDS, call_for, compare, settle, throughput};
use plugin::{Launch, Plugin};
use report::Report;
use workload::{Input, Op, Request, Resource, Runtime, token};

#[derive(Parser)]
#[command(about = "Benchmarks the WASM host against the same provider run natively, and against a Python provider")]
struct Args {
    /// A tenth of the iterations: a smoke run, not figures to keep.
    #[arg(long)]
    quick: bool,
    /// Do not build the components, the host and the native binaries first.
    #[arg(long)]
    no_build: bool,
    /// The Python interpreter of the Python peer (default: `python3`'s).
    #[arg(long)]
    python: Option<PathBuf>,
    /// Also write the report to this file.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Instead of the report: start one provider (`wasm`, `native` or
    /// `python`), print its pid, and send it one call (`--op`) from
    /// `--callers` callers for `--seconds`; for profilers (`perf record -p PID`).
    #[arg(long, value_name = "RUNTIME")]
    hammer: Option<String>,
    /// The call `--hammer` sends: check, diff, create, update or delete.
    #[arg(long, default_value = "check")]
    op: String,
    /// The input `--hammer` sends: small, hundred or asset.
    #[arg(long, default_value = "small")]
    input: String,
    #[arg(long, default_value_t = 10)]
    seconds: u64,
    /// How many concurrent callers `--hammer` runs.
    #[arg(long, default_value_t = 8)]
    callers: usize,
    /// Only the in-process tables (no gRPC): the backend call alone, and
    /// each runtime's RPC handlers.
    #[arg(long)]
    inproc: bool,
    /// Only the start-up table, over this many rounds of starts (a full
    /// run makes 10): a closer look at the start figures.
    #[arg(long, value_name = "ROUNDS")]
    starts: Option<usize>,
    /// Repeat the whole run this many times, each with fresh providers:
    /// first how often each target was met and each run's figure for it,
    /// then each run's report. One run is one draw on a noisy machine.
    #[arg(long, default_value_t = 1, value_name = "N", conflicts_with_all = ["inproc", "hammer"])]
    runs: usize,
}

/// How much of everything to do.
struct Plan {
    starts: usize,
    latency: fn(Input) -> usize,
    /// How long each runtime is measured in each throughput round.
    throughput_window: Duration,
    concurrency: [usize; 3],
    lifecycle: [usize; 2],
    parallel: usize,
}

const FULL: Plan = Plan {
    starts: 10,
    latency: |i| match i {
        Input::SmallMap => 2000,
        Input::HundredProps => 1000,
        Input::Asset1M => 1000,
    },
    throughput_window: Duration::from_secs(1),
    concurrency: [1, 8, 64],
    lifecycle: [1_000, 10_000],
    parallel: 16,
};

const QUICK: Plan = Plan {
    starts: 3,
    latency: |i| match i {
        Input::SmallMap => 200,
        Input::HundredProps => 100,
        Input::Asset1M => 100,
    },
    throughput_window: Duration::from_millis(100),
    concurrency: [1, 8, 64],
    lifecycle: [100, 1_000],
    parallel: 16,
};

/// Where everything is.
struct Paths {
    root: PathBuf,
    release: PathBuf,
    guest: PathBuf,
    python: PathBuf,
}

impl Paths {
    fn find(python: Option<PathBuf>) -> anyhow::Result<Paths> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().context("bench/ has a parent")?.to_path_buf();
        let target = std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| root.join("target"));
        let python = match python {
            Some(p) => p,
            None => {
                // The interpreter itself, not a shim script in front of it (pyenv's adds ~50 ms a start).
                let out = std::process::Command::new("python3")
                    .args(["-c", "import sys; print(sys.executable)"])
                    .output()
                    .context("running python3")?;
                PathBuf::from(String::from_utf8(out.stdout)?.trim())
            }
        };
        // BENCH_GUEST_DIR: components from elsewhere (e.g. built with other settings).
        let guest = std::env::var_os("BENCH_GUEST_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| target.join("wasm32-wasip2").join("guest"));
        Ok(Paths { release: target.join("release"), guest, root, python })
    }
}

/// The in-process tables: the backend call alone, each runtime's RPC
/// handlers, and the value encoding alone.
async fn in_process(report: &mut Report, paths: &Paths, cache: &Path, plan: &Plan) -> anyhow::Result<()> {
    // The allocator settings of the provider processes, which the backends
    // here stand for: without them a 1 MB string is mapped and unmapped on
    // every call, whichever phase ran before deciding how much.
    pulumi_wasm_host::server::keep_freed_memory();
    let backends = inproc::load(&paths.guest, cache).await?;
    progress("the backend call alone, in-process");
    report.inproc(inproc::measure(&backends, plan.latency).await?);
    progress("the RPC handlers without the transport, in-process");
    report.handlers(handlers::measure(&backends, &paths.python, &paths.root, plan.latency).await?);
    progress("the value encoding alone, in-process");
    let mut guest = abi::Guest::load(&paths.guest).await?;
    report.abi(abi::measure(&mut guest, (plan.latency)(Input::HundredProps)).await?);
    Ok(())
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let mut plan = if args.quick { QUICK } else { FULL };
    if let Some(n) = args.starts {
        plan.starts = n;
    }
    let paths = Paths::find(args.python.clone())?;
    if !args.no_build {
        build(&paths)?;
    }
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    if let Some(which) = &args.hammer {
        return rt.block_on(hammer(&paths, which, &args));
    }
    let text = if args.inproc {
        let report = rt.block_on(async {
            let mut report = Report::new(args.quick);
            let cache = tempfile::tempdir()?;
            in_process(&mut report, &paths, cache.path(), &plan).await?;
            Ok::<_, anyhow::Error>(report)
        })?;
        report.markdown()
    } else {
        let runs = args.runs.max(1);
        let mut reports = Vec::new();
        for i in 1..=runs {
            if runs > 1 {
                progress(&format!("run {i} of {runs}"));
            }
            reports.push(rt.block_on(run(&plan, &paths, args.quick, args.starts.is_some()))?);
        }
        match reports.as_slice() {
            [one] => one.markdown(),
            all => {
                let mut text = report::over_runs(all);
                for (i, r) in all.iter().enumerate() {
                    text.push_str(&format!("\n## Run {} of {runs}\n\n{}", i + 1, r.markdown()));
                }
                text
            }
        }
    };
    println!("{text}");
    if let Some(out) = &args.out {
        std::fs::write(out, &text).with_context(|| format!("writing {}", out.display()))?;
    }
    Ok(())
}

fn sh(cmd: &mut std::process::Command) -> anyhow::Result<()> {
    eprintln!("+ {cmd:?}");
    // Stdout is the report's.
    let status = cmd.stdout(std::io::stderr()).status().with_context(|| format!("running {cmd:?}"))?;
    anyhow::ensure!(status.success(), "{cmd:?} failed: {status}");
    Ok(())
}

/// The components (profile `guest`), and the host and native plugins (release).
fn build(paths: &Paths) -> anyhow::Result<()> {
    sh(&mut std::process::Command::new(paths.root.join("scripts/build-examples")))?;
    sh(std::process::Command::new("cargo").current_dir(&paths.root).args([
        "build",
        "--release",
        "-p",
        "pulumi-wasm-host",
        "-p",
        "pulumi-wasm-native",
        "-p",
        "bench",
        "--bins",
    ]))
}

fn progress(msg: &str) {
    eprintln!("[bench] {msg}");
}

async fn run(plan: &Plan, paths: &Paths, quick: bool, starts_only: bool) -> anyhow::Result<Report> {
    for exe in ["pulumi-wasm", "pulumi-random-native", "pulumi-echo-native"] {
        if !paths.release.join(exe).is_file() {
            bail!("{} is missing: run without --no-build", paths.release.join(exe).display());
        }
    }
    let check = std::process::Command::new(&paths.python)
        .args(["-c", "import pulumi.provider.experimental.server"])
        .status()
        .context("running the Python interpreter")?;
    anyhow::ensure!(check.success(), "the Python peer needs `pip install pulumi==3.272.0`");

    let tmp = tempfile::tempdir()?;
    let warm_cache = tmp.path().join("cache");
    let pack = |component: &str, name: &str| -> anyhow::Result<PathBuf> {
        let out = tmp.path().join(name);
        sh(std::process::Command::new(paths.release.join("pulumi-wasm"))
            .arg("pack")
            .arg(paths.guest.join(component))
            .arg("--out")
            .arg(&out)
            .env("PULUMI_WASM_CACHE_DIR", &warm_cache))?;
        Ok(out.join(format!("pulumi-resource-{name}")))
    };
    // Packing loads the component, which compiles it into the warm cache.
    let wasm_random = Launch::new(pack("random_provider.wasm", "random")?).env("PULUMI_WASM_CACHE_DIR", &warm_cache);
    let wasm_echo = Launch::new(pack("echo_provider.wasm", "echo")?).env("PULUMI_WASM_CACHE_DIR", &warm_cache);
    let python = Launch::new(paths.root.join("bench/python/pulumi-resource-pyrandom")).env("PYTHON", &paths.python);
    let launch = |rt: Runtime, r: Resource| match (rt, r) {
        (Runtime::Wasm, Resource::RandomString) => wasm_random.clone(),
        (Runtime::Wasm, Resource::Thing) => wasm_echo.clone(),
        (Runtime::Native, Resource::RandomString) => Launch::new(paths.release.join("pulumi-random-native")),
        (Runtime::Native, Resource::Thing) => Launch::new(paths.release.join("pulumi-echo-native")),
        (Runtime::Python, _) => python.clone(),
    };

    let engine = StandInEngine::start().await?;
    let mut report = Report::new(quick);

    // Start to port line. One round first that is not recorded (page cache).
    progress("start-up");
    // Each kind of start, as how to launch its i-th run.
    type Starts<'a> = [(&'static str, Box<dyn Fn(usize) -> Launch + 'a>); 4];
    let kinds: Starts = [
        (
            "WASM, empty cache",
            Box::new(|i| {
                Launch::new(&wasm_random.exe).env("PULUMI_WASM_CACHE_DIR", tmp.path().join(format!("empty-cache-{i}")))
            }),
        ),
        ("WASM, warm cache", Box::new(|_| wasm_random.clone())),
        ("native", Box::new(|_| launch(Runtime::Native, Resource::RandomString))),
        ("Python", Box::new(|_| python.clone())),
    ];
    for round in 0..=plan.starts {
        // Each round in another order, so no kind always follows the same
        // one (a compiling start leaves work behind; see the sleep below).
        let order = (0..kinds.len()).map(|k| &kinds[(k + round) % kinds.len()]);
        for (label, make) in order {
            let mut p = Plugin::start(&make(round), &engine.address).await?;
            // Ready: through the engine's boot sequence, which needs the provider itself.
            boot(&mut p.client, &engine.address).await?;
            if round > 0 {
                report.startup(label, p.startup, p.began.elapsed());
            }
            p.stop().await;
            // Each start on a quiet machine: a compiling start leaves work
            // (its exit, the artifact written back) that would tax the next.
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    if starts_only {
        return Ok(report);
    }
    progress("starting the providers");
    let mut fleet = Fleet { plugins: vec![], logs: engine.log_count() };
    for r in [Resource::RandomString, Resource::Thing] {
        for rt in Runtime::ALL {
            let mut p = Plugin::start(&launch(rt, r), &engine.address).await?;
            if let Err(e) = boot(&mut p.client, &engine.address).await {
                bail!("booting the {} {r:?} provider: {e:#}; stderr: {}", rt.label(), p.stderr());
            }
            fleet.plugins.push((rt, r, p));
        }
    }

    // The floor every call stands on: a round trip the provider's own code
    // takes no part in (GetPluginInfo is answered by the server itself).
    progress("latency: the round trip alone");
    let n = (plan.latency)(Input::SmallMap);
    let floor = compare(&fleet, Resource::RandomString, n, |_| Request::PluginInfo).await?;
    report.round_trip(floor);

    for input in Input::ALL {
        let n = (plan.latency)(input);
        let mut calls = Vec::new();
        for rt in Runtime::ALL {
            let mut client = fleet.client(rt, input.resource());
            let prepared = workload::prepare(&mut client, token(rt, input.resource()), "lat", input.news()).await;
            calls.push(prepared.with_context(|| fleet.blame(rt, input.resource()))?);
        }
        for op in Op::ALL {
            progress(&format!("latency: {} {}", input.label(), op.label()));
            // `calls` is in `Runtime::ALL`'s order, which is the declaration order.
            report.latency(input, op, compare(&fleet, input.resource(), n, |rt| calls[rt as usize].request(op)).await?);
        }
    }

    in_process(&mut report, paths, &warm_cache, plan).await?;

    for op in [Op::Check, Op::Create] {
        let mut calls = Vec::new();
        for rt in Runtime::ALL {
            let mut client = fleet.client(rt, Resource::RandomString);
            let prepared =
                workload::prepare(&mut client, token(rt, Resource::RandomString), "thr", Input::SmallMap.news()).await;
            calls.push(Arc::new(prepared.with_context(|| fleet.blame(rt, Resource::RandomString))?));
        }
        for c in plan.concurrency {
            progress(&format!("throughput: {} at {c} concurrent", op.label()));
            // Rounds of the runtimes in turn, WASM and native swapping places
            // each round: one burst swings by a third here.
            let mut rounds = Vec::new();
            for round in 0..THROUGHPUT_ROUNDS {
                let mut rates = [0.0; 3];
                let order =
                    if round % 2 == 0 { Runtime::ALL } else { [Runtime::Native, Runtime::Wasm, Runtime::Python] };
                for rt in order {
                    settle(&fleet).await;
                    let client = fleet.client(rt, Resource::RandomString);
                    // `calls` and `rates` are in `Runtime::ALL`'s order, which is the declaration order.
                    let rate = throughput(client, calls[rt as usize].clone(), op, plan.throughput_window, c).await;
                    rates[rt as usize] = rate.with_context(|| fleet.blame(rt, Resource::RandomString))?;
                }
                rounds.push(rates);
            }
            report.throughput(op, c, &rounds);
        }
    }

    for n in plan.lifecycle {
        progress(&format!("lifecycle of {n} resources"));
        let mut runs = Vec::new();
        for rt in Runtime::ALL {
            settle(&fleet).await;
            let client = fleet.client(rt, Resource::RandomString);
            let run = lifecycle(client, token(rt, Resource::RandomString), n, plan.parallel).await;
            runs.push(run.with_context(|| fleet.blame(rt, Resource::RandomString))?);
        }
        report.lifecycle(n, runs);
    }

    for r in [Resource::RandomString, Resource::Thing] {
        let rss = Runtime::ALL.map(|rt| {
            fleet.plugins.iter().find(|(a, b, _)| *a == rt && *b == r).and_then(|(_, _, p)| p.peak_rss()).unwrap_or(0)
        });
        report.rss(r, rss);
    }
    report.engine_logs(engine.logs());
    for (_, _, p) in fleet.plugins.drain(..) {
        p.stop().await;
    }
    Ok(report)
}

/// Loads one provider with one call for a while (see `--hammer`).
async fn hammer(paths: &Paths, which: &str, args: &Args) -> anyhow::Result<()> {
    let (op, input, seconds) = (&args.op, args.input.as_str(), args.seconds);
    let rt = match which {
        "wasm" => Runtime::Wasm,
        "native" => Runtime::Native,
        "python" => Runtime::Python,
        other => bail!("--hammer takes wasm, native or python, not {other}"),
    };
    let op = *Op::ALL.iter().find(|o| o.label().eq_ignore_ascii_case(op)).context("--op")?;
    let input = match input {
        "small" => Input::SmallMap,
        "hundred" => Input::HundredProps,
        "asset" => Input::Asset1M,
        other => bail!("--input takes small, hundred or asset, not {other}"),
    };
    let r = input.resource();
    let tmp = tempfile::tempdir()?;
    let launch = match (rt, r) {
        (Runtime::Wasm, _) => {
            let (component, name) = if r == Resource::RandomString {
                ("random_provider.wasm", "random")
            } else {
                ("echo_provider.wasm", "echo")
            };
            let out = tmp.path().join(name);
            sh(std::process::Command::new(paths.release.join("pulumi-wasm"))
                .arg("pack")
                .arg(paths.guest.join(component))
                .arg("--out")
                .arg(&out)
                .env("PULUMI_WASM_CACHE_DIR", tmp.path().join("cache")))?;
            Launch::new(out.join(format!("pulumi-resource-{name}")))
                .env("PULUMI_WASM_CACHE_DIR", tmp.path().join("cache"))
        }
        (Runtime::Native, Resource::RandomString) => Launch::new(paths.release.join("pulumi-random-native")),
        (Runtime::Native, Resource::Thing) => Launch::new(paths.release.join("pulumi-echo-native")),
        (Runtime::Python, _) => {
            Launch::new(paths.root.join("bench/python/pulumi-resource-pyrandom")).env("PYTHON", &paths.python)
        }
    };
    let engine = StandInEngine::start().await?;
    let mut p = Plugin::start(&launch, &engine.address).await?;
    boot(&mut p.client, &engine.address).await?;
    let calls = Arc::new(workload::prepare(&mut p.client, token(rt, r), "hammer", input.news()).await?);
    println!("pid {}", p.pid().unwrap_or(0));
    let done = call_for(p.client.clone(), calls, op, Duration::from_secs(seconds), args.callers).await?;
    println!("{} calls/s", done as f64 / seconds as f64);
    p.stop().await;
    println!("Engine.Log messages received: {}", engine.logs());
    Ok(())
}

/// The engine's boot sequence; the Python SDK has no Handshake (the engine falls back).
async fn boot(client: &mut ResourceProviderClient<Channel>, engine: &str) -> anyhow::Result<()> {
    let _ = client
        .handshake(ProviderHandshakeRequest {
            engine_address: engine.to_owned(),
            configure_with_urn: true,
            supports_views: true,
            invoke_with_preview: true,
            accepts_byte_string: true,
            ..Default::default()
        })
        .await;
    client.get_plugin_info(()).await?;
    let checked = client
        .check_config(CheckRequest {
            urn: "urn:pulumi:bench::bench::pulumi:providers:x::default".into(),
            name: "default".into(),
            r#type: "pulumi:providers:x".into(),
            olds: Some(Struct::default()),
            news: Some(Struct::default()),
            ..Default::default()
        })
        .await?
        .into_inner();
    client
        .configure(ConfigureRequest {
            args: checked.inputs,
            accept_secrets: true,
            accept_resources: true,
            sends_old_inputs: true,
            sends_old_inputs_to_delete: true,
            ..Default::default()
        })
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every call of both in-process tables answers: the backend call in WASM
    /// and natively, and the handlers of all three runtimes, with the
    /// components `scripts/build-examples` made. The bench is not run in CI,
    /// so this is what notices a call it relies on, or the Python SDK's
    /// servicer, changing under it.
    #[tokio::test]
    async fn every_call_of_the_in_process_tables_answers() {
        let paths = Paths::find(None).unwrap();
        let cache = tempfile::tempdir().unwrap();
        let backends = inproc::load(&paths.guest, cache.path()).await.unwrap();
        let (_fixed, rows) = inproc::measure(&backends, |_| 1).await.unwrap();
        assert_eq!(rows.len(), Input::ALL.len() * Op::ALL.len());
        let rows = handlers::measure(&backends, &paths.python, &paths.root, |_| 1).await.unwrap();
        assert_eq!(rows.len(), Input::ALL.len() * Op::ALL.len());
    }

    /// The encoding table's guest echoes every input unchanged, in 0.2.0's
    /// encoding and in 0.3.0's, or in 0.1.0's with and without the 1 MB
    /// asset's text kept in the host (`abi::measure` checks each round trip).
    #[tokio::test]
    async fn each_pair_of_encodings_round_trips_through_the_guest() {
        let paths = Paths::find(None).unwrap();
        let mut guest = abi::Guest::load(&paths.guest).await.unwrap();
        let rows = abi::measure(&mut guest, 1).await.unwrap();
        assert_eq!(rows.len(), Input::ALL.len());
    }
}
