//! The measured phases' primitives: the long-lived providers, calls timed
//! one by one (latency) and for a window (throughput), and the quiet
//! before each phase.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context;
use pulumirpc::resource_provider_client::ResourceProviderClient;
use tonic::transport::Channel;

use crate::engine;
use crate::plugin::Plugin;
use crate::report::Stats;
use crate::workload::{Calls, Op, Request, Resource, Runtime};

/// The six long-lived providers: each runtime, each resource.
pub struct Fleet {
    pub plugins: Vec<(Runtime, Resource, Plugin)>,
    pub logs: engine::LogCount,
}

impl Fleet {
    pub fn plugin(&self, rt: Runtime, r: Resource) -> &Plugin {
        &self.plugins.iter().find(|(a, b, _)| *a == rt && *b == r).expect("started").2
    }

    pub fn client(&self, rt: Runtime, r: Resource) -> ResourceProviderClient<Channel> {
        self.plugin(rt, r).client.clone()
    }

    /// Context for a failed call: which provider, and the end of its stderr.
    pub fn blame(&self, rt: Runtime, r: Resource) -> String {
        let err = self.plugin(rt, r).stderr();
        let tail: String = err.chars().rev().take(2000).collect::<Vec<_>>().into_iter().rev().collect();
        format!("{} {r:?} provider; its stderr ends: {tail}", rt.label())
    }
}
/// Lets the machine go quiet before a measured phase: a provider may still
/// be busy after its own phase (Python's server is, for a few hundred ms),
/// and that would tax whichever runtime is measured next. Without this, the
/// runtime measured after Python lost up to 40% at 8 concurrent calls. The
/// providers' logs must have stopped too: after a burst of Creates, all
/// for one resource and so sent one at a time, a provider forwards its
/// backlog for seconds (up to its 8 MiB log budget).
pub async fn settle(fleet: &Fleet) {
    tokio::time::sleep(Duration::from_millis(300)).await;
    fleet.logs.quiet().await;
}

/// The latency of one call in every runtime, in `Runtime::ALL`'s order:
/// WASM and native interleaved (see [`latency`]), so the ratios the targets
/// use compare calls made moments apart; Python alone afterwards, as its
/// server stays busy after its calls and would tax the other two.
pub async fn compare(
    fleet: &Fleet,
    r: Resource,
    n: usize,
    request: impl Fn(Runtime) -> Request,
) -> anyhow::Result<Vec<Stats>> {
    settle(fleet).await;
    let pair = [Runtime::Wasm, Runtime::Native];
    let mut stats = latency(&pair.map(|rt| fleet.client(rt, r)), n, |i| request(pair[i]))
        .await
        .with_context(|| format!("{} and {}", fleet.blame(pair[0], r), fleet.blame(pair[1], r)))?;
    settle(fleet).await;
    let python = latency(&[fleet.client(Runtime::Python, r)], n, |_| request(Runtime::Python)).await;
    stats.extend(python.with_context(|| fleet.blame(Runtime::Python, r))?);
    Ok(stats)
}

/// `n` sequential calls to each of `clients` (after a tenth as many
/// unmeasured), alternating call by call and reversing the order each
/// round, each call timed alone. On this shared machine noise comes in
/// bursts of milliseconds to seconds: measured one after the other, a burst
/// lands on one runtime's figures only (GetPluginInfo, the same code in both,
/// once read a p99 of 0.45x); interleaved, it taxes both alike.
pub async fn latency(
    clients: &[ResourceProviderClient<Channel>],
    n: usize,
    request: impl Fn(usize) -> Request,
) -> anyhow::Result<Vec<Stats>> {
    let mut clients = clients.to_vec();
    let mut samples = vec![Vec::with_capacity(n); clients.len()];
    let warm_up = (n / 10).max(10);
    for round in 0..warm_up + n {
        for k in 0..clients.len() {
            let i = if round % 2 == 0 { k } else { clients.len() - 1 - k };
            let req = request(i);
            let t = Instant::now();
            req.send(&mut clients[i]).await?;
            if round >= warm_up {
                samples[i].push(t.elapsed());
            }
        }
    }
    Ok(samples.into_iter().map(Stats::new).collect())
}

/// Rounds of each throughput figure (see [`crate::report::Report::throughput`]).
pub const THROUGHPUT_ROUNDS: usize = 7;

/// Calls a second from `concurrency` callers on one connection, each
/// calling until `window` has passed (after a tenth as long unmeasured):
/// every runtime gets the same time, whatever its rate. Calls still in
/// flight at the end are waited for and counted, over the time they took.
pub async fn throughput(
    client: ResourceProviderClient<Channel>,
    calls: Arc<Calls>,
    op: Op,
    window: Duration,
    concurrency: usize,
) -> anyhow::Result<f64> {
    call_for(client.clone(), calls.clone(), op, window / 10, concurrency).await?;
    let t = Instant::now();
    let done = call_for(client, calls, op, window, concurrency).await?;
    Ok(done as f64 / t.elapsed().as_secs_f64())
}

/// `callers` callers each sending `op` until `window` has passed; how many
/// calls were answered.
pub async fn call_for(
    client: ResourceProviderClient<Channel>,
    calls: Arc<Calls>,
    op: Op,
    window: Duration,
    callers: usize,
) -> anyhow::Result<usize> {
    let until = Instant::now() + window;
    let done = Arc::new(AtomicUsize::new(0));
    let tasks: Vec<_> = (0..callers)
        .map(|_| {
            let (mut client, calls, done) = (client.clone(), calls.clone(), done.clone());
            tokio::spawn(async move {
                while Instant::now() < until {
                    calls.request(op).send(&mut client).await?;
                    done.fetch_add(1, Ordering::Relaxed);
                }
                Ok::<_, tonic::Status>(())
            })
        })
        .collect();
    for t in tasks {
        t.await??;
    }
    Ok(done.load(Ordering::Relaxed))
}
