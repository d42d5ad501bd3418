//! The backend call alone, in this process and without gRPC: the wasm pool
//! (`pulumi_wasm_host::runtime::Pool`) against the native backend
//! (`pulumi_wasm_native::NativeBackend`), both given the host's WIT requests.
//! This isolates what WebAssembly costs per call from everything the two
//! share (gRPC, HTTP/2, protobuf <-> WIT translation). A component that
//! reads held texts gets its long asset texts as handles, as from the
//! server; what it answers with them is resolved by the conversion to
//! protobuf, which is left out here (the handler table has it).

use std::future::Future;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use pulumi_wasm_host::runtime::bindings::{rp, types, words};
use pulumi_wasm_host::runtime::held;
use pulumi_wasm_host::runtime::{
    ArtifactCache, Backend, CallError, LogQueue, Policy, Pool, Runtime as WasmRuntime, RuntimeConfig,
};
use pulumi_wasm_native::NativeBackend;
use pulumi_wasm_sdk::Provider;
use pulumirpc as pb;

use crate::report::Stats;
use crate::workload::{Input, Op, Resource, Runtime, check_request, token, urn};

/// The five WIT requests for one resource, after a Check and a Create.
struct WitCalls {
    check: rp::CheckRequest,
    diff: rp::DiffRequest,
    create: rp::CreateRequest,
    update: rp::UpdateRequest,
    delete: rp::DeleteRequest,
}

fn failed(e: CallError) -> anyhow::Error {
    anyhow::anyhow!("{e:?}")
}

async fn prepare<B: Backend>(b: &B, token: &str, news: prost_types::Struct) -> anyhow::Result<WitCalls> {
    let check = rp::CheckRequest::try_from(check_request(token, "inproc", news))?;
    let inputs = b.check(None, check.clone()).await.map_err(failed)?.inputs;
    let wire = pb::CreateRequest {
        urn: urn(token, "inproc"),
        name: "inproc".into(),
        r#type: token.into(),
        ..Default::default()
    };
    let mut create = rp::CreateRequest::try_from(wire)?;
    create.properties = inputs.clone();
    let created = b.create(None, create.clone()).await.map_err(failed)?;
    let (id, state) = (created.id, created.properties);
    let (u, n, t) = (create.urn.clone(), create.name.clone(), create.type_.clone());
    Ok(WitCalls {
        check,
        diff: rp::DiffRequest {
            id: id.clone(),
            urn: u.clone(),
            name: n.clone(),
            type_: t.clone(),
            olds: state.clone(),
            news: inputs.clone(),
            old_inputs: inputs.clone(),
            ignore_changes: vec![],
        },
        create,
        update: rp::UpdateRequest {
            id: id.clone(),
            urn: u.clone(),
            name: n.clone(),
            type_: t.clone(),
            olds: state.clone(),
            news: inputs.clone(),
            old_inputs: inputs.clone(),
            timeout: 0.0,
            ignore_changes: vec![],
            preview: false,
        },
        delete: rp::DeleteRequest {
            id,
            urn: u,
            name: n,
            type_: t,
            properties: state,
            old_inputs: inputs,
            timeout: 0.0,
        },
    })
}

/// Times `n` calls of `op` (after a tenth as many unmeasured).
async fn time<B: Backend>(b: &B, calls: &WitCalls, op: Op, n: usize) -> anyhow::Result<Stats> {
    async fn one<B: Backend>(b: &B, calls: &WitCalls, op: Op) -> anyhow::Result<Duration> {
        async fn timed<T, E: std::fmt::Debug>(f: impl Future<Output = Result<T, E>>) -> anyhow::Result<Duration> {
            let t = Instant::now();
            f.await.map_err(|e| anyhow::anyhow!("{e:?}"))?;
            Ok(t.elapsed())
        }
        // As the server does for a component that reads held texts: the
        // RPC's table of them, which the request's long asset texts go into
        // (outside the timing, like the rest of the request's conversion).
        let holds = b.reads_held_texts();
        let hold = |values: &mut [&mut types::Value]| {
            if holds {
                for v in values {
                    **v = words::pack(words::unpack_trusted(v));
                }
            }
        };
        held::scope(holds, async {
            match op {
                Op::Check => {
                    let mut r = calls.check.clone();
                    hold(&mut [&mut r.olds, &mut r.news]);
                    timed(b.check(None, r)).await
                }
                Op::Diff => {
                    let mut r = calls.diff.clone();
                    hold(&mut [&mut r.olds, &mut r.news, &mut r.old_inputs]);
                    timed(b.diff(None, r)).await
                }
                Op::Create => {
                    let mut r = calls.create.clone();
                    hold(&mut [&mut r.properties]);
                    timed(b.create(None, r)).await
                }
                Op::Update => {
                    let mut r = calls.update.clone();
                    hold(&mut [&mut r.olds, &mut r.news, &mut r.old_inputs]);
                    timed(b.update(None, r)).await
                }
                Op::Delete => {
                    let mut r = calls.delete.clone();
                    hold(&mut [&mut r.properties, &mut r.old_inputs]);
                    timed(b.delete(None, r)).await
                }
            }
        })
        .await
    }
    for _ in 0..(n / 10).max(10) {
        one(b, calls, op).await?;
    }
    let mut samples = Vec::with_capacity(n);
    for _ in 0..n {
        samples.push(one(b, calls, op).await?);
    }
    Ok(Stats::new(samples))
}

/// Times `n` `get_mapping` calls, which every provider answers with "no
/// mapping" by default: the fixed cost of a call and nothing else.
/// (`get_mappings`, used before the fifth session, is unimplemented by
/// default now.)
async fn empty_call<B: Backend>(b: &B, n: usize) -> anyhow::Result<Stats> {
    let mut samples = Vec::with_capacity(n);
    for i in 0..n + n / 10 {
        let key = "none".to_owned();
        let t = Instant::now();
        b.get_mapping(None, key, String::new()).await.map_err(failed)?;
        if i >= n / 10 {
            samples.push(t.elapsed());
        }
    }
    Ok(Stats::new(samples))
}

/// The fixed cost of a call: (WASM, native).
pub struct Fixed(pub [Stats; 2]);

/// The two providers of the tables, each as a wasm pool and natively, their
/// logs drained alike (no engine here).
/// (`R` and `E`: the SDK's unnamed provider types of the two.)
pub struct Backends<R, E> {
    pub wasm_random: Arc<Pool>,
    pub wasm_echo: Arc<Pool>,
    pub native_random: Arc<NativeBackend<R>>,
    pub native_echo: Arc<NativeBackend<E>>,
}

/// Loads both providers both ways.
pub async fn load(
    guest_dir: &Path,
    cache: &Path,
) -> anyhow::Result<Backends<impl Provider + use<>, impl Provider + use<>>> {
    let runtime =
        WasmRuntime::new(RuntimeConfig { cache: Some(ArtifactCache::new(cache)), ..RuntimeConfig::default() })?;
    let drained = || {
        let (logs, mut rx) = tokio::sync::mpsc::channel(1024);
        tokio::spawn(async move { while rx.recv().await.is_some() {} });
        logs
    };
    let pool = async |file: &str| -> anyhow::Result<Arc<Pool>> {
        let wasm: Arc<[u8]> = std::fs::read(guest_dir.join(file)).with_context(|| file.to_owned())?.into();
        Ok(runtime.load(wasm, drained(), &Policy::default()).await?.pool)
    };
    let (wasm_random, wasm_echo) = (pool("random_provider.wasm").await?, pool("echo_provider.wasm").await?);
    let native_random = NativeBackend::new(random_provider::__pulumi_wasm_provider).with_logs(LogQueue::new(drained()));
    let native_echo = NativeBackend::new(echo_provider::__pulumi_wasm_provider).with_logs(LogQueue::new(drained()));
    Ok(Backends { wasm_random, wasm_echo, native_random: Arc::new(native_random), native_echo: Arc::new(native_echo) })
}

/// Every call of one resource: (WASM, native), each side's calls prepared once.
async fn both(
    wasm: &impl Backend,
    native: &impl Backend,
    input: Input,
    n: usize,
) -> anyhow::Result<Vec<(Op, [Stats; 2])>> {
    let t = token(Runtime::Wasm, input.resource());
    let (w, nat) = (prepare(wasm, t, input.news()).await?, prepare(native, t, input.news()).await?);
    let mut out = Vec::new();
    for op in Op::ALL {
        out.push((op, [time(wasm, &w, op, n).await?, time(native, &nat, op, n).await?]));
    }
    Ok(out)
}

/// Per input and call: (WASM, native) backend-call latency.
pub async fn measure(
    b: &Backends<impl Provider, impl Provider>,
    n: fn(Input) -> usize,
) -> anyhow::Result<(Fixed, Vec<(Input, Op, [Stats; 2])>)> {
    let many = n(Input::SmallMap) * 5;
    let fixed =
        Fixed([empty_call(b.wasm_random.as_ref(), many).await?, empty_call(b.native_random.as_ref(), many).await?]);
    let mut out = Vec::new();
    for input in Input::ALL {
        let rows = match input.resource() {
            Resource::RandomString => both(b.wasm_random.as_ref(), b.native_random.as_ref(), input, n(input)).await?,
            Resource::Thing => both(b.wasm_echo.as_ref(), b.native_echo.as_ref(), input, n(input)).await?,
        };
        out.extend(rows.into_iter().map(|(op, s)| (input, op, s)));
    }
    Ok((fixed, out))
}
