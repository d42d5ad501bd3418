//! Each provider's whole call without the transport: the RPC handlers called
//! in this process with the same protobuf requests the latency table sends,
//! so protobuf <-> value translation and the provider's code are in, the
//! HTTP/2 and gRPC stacks are out. WASM and native: the host's
//! `ProviderService` over the pool and the native backend. Python: the Pulumi
//! SDK's `ProviderServicer` over the Python peer, in a Python process of its
//! own (`bench/python/handlers.py`), timed there.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use prost::Message;
use pulumi_wasm_host::runtime::Backend;
use pulumi_wasm_host::server::{EngineLink, ProviderService};
use pulumi_wasm_sdk::Provider;
use pulumirpc::resource_provider_server::ResourceProvider;
use pulumirpc::*;
use tokio::io::AsyncWriteExt;
use tonic::{Request, Status};

use crate::inproc::Backends;
use crate::report::Stats;
use crate::workload::{Calls, Input, Op, Resource, Rpc, Runtime, hex, prepare, token, urn};

/// A provider's gRPC service, called directly.
struct Handlers<B: Backend>(ProviderService<B>);

impl<B: Backend> Rpc for Handlers<B> {
    async fn plugin_info(&mut self) -> Result<(), Status> {
        self.0.get_plugin_info(Request::new(())).await.map(drop)
    }
    async fn check(&mut self, r: CheckRequest) -> Result<CheckResponse, Status> {
        ResourceProvider::check(&self.0, Request::new(r)).await.map(tonic::Response::into_inner)
    }
    async fn diff(&mut self, r: DiffRequest) -> Result<DiffResponse, Status> {
        ResourceProvider::diff(&self.0, Request::new(r)).await.map(tonic::Response::into_inner)
    }
    async fn create(&mut self, r: CreateRequest) -> Result<CreateResponse, Status> {
        ResourceProvider::create(&self.0, Request::new(r)).await.map(tonic::Response::into_inner)
    }
    async fn update(&mut self, r: UpdateRequest) -> Result<UpdateResponse, Status> {
        ResourceProvider::update(&self.0, Request::new(r)).await.map(tonic::Response::into_inner)
    }
    async fn delete(&mut self, r: DeleteRequest) -> Result<(), Status> {
        ResourceProvider::delete(&self.0, Request::new(r)).await.map(drop)
    }
}

fn service<B: Backend>(backend: &std::sync::Arc<B>) -> Handlers<B> {
    let version = semver::Version::new(0, 1, 0);
    Handlers(ProviderService::with_backend(backend.clone(), &version, EngineLink::new(None)))
}

const NAME: &str = "handler";

/// Times `n` calls of `op` after a tenth as many unmeasured; the request is
/// built before the clock starts.
async fn time(h: &mut impl Rpc, calls: &Calls, op: Op, n: usize) -> anyhow::Result<Stats> {
    for _ in 0..(n / 10).max(10) {
        calls.request(op).send(h).await?;
    }
    let mut samples = Vec::with_capacity(n);
    for _ in 0..n {
        let r = calls.request(op);
        let t = Instant::now();
        r.send(h).await?;
        samples.push(t.elapsed());
    }
    Ok(Stats::new(samples))
}

/// Every call of one resource: (WASM, native).
async fn both(
    wasm: &mut impl Rpc,
    native: &mut impl Rpc,
    input: Input,
    n: usize,
) -> anyhow::Result<Vec<(Op, [Stats; 2])>> {
    let t = token(Runtime::Wasm, input.resource());
    let (w, nat) = (prepare(wasm, t, NAME, input.news()).await?, prepare(native, t, NAME, input.news()).await?);
    let mut out = Vec::new();
    for op in Op::ALL {
        out.push((op, [time(wasm, &w, op, n).await?, time(native, &nat, op, n).await?]));
    }
    Ok(out)
}

/// Per input and call: (WASM, native, Python) latency of the whole handler.
pub async fn measure(
    b: &Backends<impl Provider, impl Provider>,
    python: &Path,
    root: &Path,
    n: fn(Input) -> usize,
) -> anyhow::Result<Vec<(Input, Op, [Stats; 3])>> {
    let mut py = python_handlers(python, root, n).await?;
    let mut out = Vec::new();
    for input in Input::ALL {
        let rows = match input.resource() {
            Resource::RandomString => {
                both(&mut service(&b.wasm_random), &mut service(&b.native_random), input, n(input)).await?
            }
            Resource::Thing => both(&mut service(&b.wasm_echo), &mut service(&b.native_echo), input, n(input)).await?,
        };
        for (op, [w, nat]) in rows {
            let p = py.remove(&(input, op)).with_context(|| format!("no Python figures for {op:?} {input:?}"))?;
            out.push((input, op, [w, nat, p]));
        }
    }
    Ok(out)
}

/// Runs `bench/python/handlers.py` over the same inputs; it answers with
/// each call's samples in nanoseconds.
async fn python_handlers(
    python: &Path,
    root: &Path,
    n: fn(Input) -> usize,
) -> anyhow::Result<std::collections::HashMap<(Input, Op), Stats>> {
    let cases: Vec<serde_json::Value> = Input::ALL
        .iter()
        .map(|&input| {
            let t = token(Runtime::Python, input.resource());
            serde_json::json!({
                "input": input.label(),
                "token": t,
                "name": NAME,
                "urn": urn(t, NAME),
                "news": hex(&input.news().encode_to_vec()),
                "n": n(input),
            })
        })
        .collect();
    let script = root.join("bench/python/handlers.py");
    let mut child = tokio::process::Command::new(python)
        .arg(&script)
        .current_dir(root.join("bench/python"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .with_context(|| format!("starting {} {}", python.display(), script.display()))?;
    let mut stdin = child.stdin.take().context("the script's stdin")?;
    stdin.write_all(serde_json::json!({ "cases": cases }).to_string().as_bytes()).await?;
    drop(stdin);
    let done = child.wait_with_output().await?;
    if !done.status.success() {
        bail!("{} failed: {}", script.display(), String::from_utf8_lossy(&done.stderr));
    }
    let figures: serde_json::Value = serde_json::from_slice(&done.stdout).context("the script's answer")?;
    let mut out = std::collections::HashMap::new();
    for input in Input::ALL {
        for op in Op::ALL {
            let samples = figures[input.label()][op.label()]
                .as_array()
                .with_context(|| format!("no samples for {} {}", op.label(), input.label()))?;
            let samples: Vec<Duration> =
                samples.iter().filter_map(serde_json::Value::as_u64).map(Duration::from_nanos).collect();
            anyhow::ensure!(!samples.is_empty(), "no samples for {} {}", op.label(), input.label());
            out.insert((input, op), Stats::new(samples));
        }
    }
    Ok(out)
}
