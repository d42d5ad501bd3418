//! The encoding table (`--inproc` and full runs): what the value encoding
//! itself costs a component call. The same property map goes through a
//! guest (`bench/abi/guest`) and back as the host hands it to a component
//! of each contract version, in pairs:
//! - for the small map and the 100 properties, 0.2.0's one buffer (nodes
//!   as variants, fields as tuples; through the host's adapter) against
//!   0.3.0's words (nodes and fields as lists of 32-bit words, straight);
//! - for the 1 MB asset, 0.1.0's nodes (one string per key and value, one
//!   list per array and object; through the adapters) against a candidate
//!   for a later version: the asset's text kept in the host, as a handle
//!   would keep it. The guest gets the asset with its hash only, and the
//!   host puts the text back on the way out.
//!
//! Each side times the host's conversion from protobuf, the call (lowering,
//! the guest's decode and encode, lifting, post-return) and the conversion
//! back: the host's own functions, validation included.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, ensure};
use prost_types::Struct;
use prost_types::value::Kind;
use pulumi_wasm_host::convert::value::{Limits, WireOptions, sig, struct_into_wit, wit_into_struct};
use pulumi_wasm_host::runtime::bindings::words::{pack, unpack_trusted};
use pulumi_wasm_host::runtime::bindings::{flat_to_nodes, nodes_into_flat};
use wasmtime::component::{Component, Linker, ResourceTable};
use wasmtime::{Config, Engine, Store};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use crate::report::Stats;
use crate::workload::Input;

mod bindings {
    wasmtime::component::bindgen!({
        path: "abi/wit",
        world: "pulumi-bench:abi/abi",
        exports: { default: async },
        with: {
            "pulumi:provider/types@0.1.0": pulumi_wasm_host::runtime::bindings::v0_1_0::pulumi::provider::types,
            "pulumi:provider/types@0.2.0": pulumi_wasm_host::runtime::bindings::tree,
            "pulumi:provider/types@0.3.0": pulumi_wasm_host::runtime::bindings::types,
        },
    });
}

use bindings::Abi;

struct State {
    wasi: WasiCtx,
    table: ResourceTable,
}

impl WasiView for State {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView { ctx: &mut self.wasi, table: &mut self.table }
    }
}

/// The guest, instantiated once, as a pool's instance is reused. The engine
/// has wasmtime's default settings: the host's pooling allocator changes
/// how instances are made, not what lowering and lifting cost.
pub struct Guest {
    store: Store<State>,
    abi: Abi,
}

impl Guest {
    pub async fn load(guest_dir: &Path) -> anyhow::Result<Guest> {
        let path = guest_dir.join("abi_guest.wasm");
        let engine = w(Engine::new(Config::new().wasm_component_model(true)))?;
        let component =
            w(Component::from_file(&engine, &path)).with_context(|| format!("loading {}", path.display()))?;
        let mut linker = Linker::new(&engine);
        w(wasmtime_wasi::p2::add_to_linker_async(&mut linker))?;
        let mut store = Store::new(&engine, State { wasi: WasiCtx::builder().build(), table: ResourceTable::new() });
        let abi = w(Abi::instantiate_async(&mut store, &component, &linker).await)?;
        Ok(Guest { store, abi })
    }

    /// Times one round trip's three stages: `to` makes the value (and what
    /// the host keeps aside), `call` sends it through the guest, `back`
    /// turns the result into protobuf. The value sent is dropped between
    /// the stages, as the host drops a request, and timed in none of them.
    async fn stages<V, K, O>(
        &mut self,
        to: impl FnOnce() -> anyhow::Result<(V, K)>,
        call: impl AsyncFnOnce(&Abi, &mut Store<State>, &V) -> wasmtime::Result<O>,
        back: impl FnOnce(O, K) -> anyhow::Result<Struct>,
    ) -> anyhow::Result<(Struct, [Duration; 3])> {
        let t = Instant::now();
        let (v, kept) = to()?;
        let to = t.elapsed();
        let t = Instant::now();
        let out = w(call(&self.abi, &mut self.store, &v).await)?;
        let call = t.elapsed();
        drop(v);
        let t = Instant::now();
        let back = back(out, kept)?;
        Ok((back, [to, call, t.elapsed()]))
    }

    /// Through the guest in 0.1.0's encoding, as the host serves an 0.1.0
    /// component: its own conversion, then the adapters' to and from nodes.
    async fn nodes(&mut self, s: Struct) -> anyhow::Result<(Struct, [Duration; 3])> {
        self.stages(
            || Ok((flat_to_nodes(&unpack_trusted(&struct_into_wit(s)?)), ())),
            async |abi, store, v| abi.call_echo_nodes(store, v).await,
            |out, ()| Ok(wit_into_struct(pack(nodes_into_flat(out)), WireOptions::default(), Limits::default())?),
        )
        .await
    }

    /// Through the guest in the node encoding, with every asset's text left
    /// in the host: what a handle per asset would spare the call.
    async fn handles(&mut self, mut s: Struct) -> anyhow::Result<(Struct, [Duration; 3])> {
        self.stages(
            || {
                let mut kept = Vec::new();
                for_each_asset(&mut s, &mut |asset| kept.extend(asset.fields.remove("text")));
                Ok((flat_to_nodes(&unpack_trusted(&struct_into_wit(s)?)), kept))
            },
            async |abi, store, v| abi.call_echo_nodes(store, v).await,
            |out, kept| {
                let mut back = wit_into_struct(pack(nodes_into_flat(out)), WireOptions::default(), Limits::default())?;
                // The guest returns the assets in the order it got them.
                let mut kept = kept.into_iter();
                for_each_asset(&mut back, &mut |asset| {
                    if let Some(text) = kept.next() {
                        asset.fields.insert("text".into(), text);
                    }
                });
                Ok(back)
            },
        )
        .await
    }

    /// Through the guest in 0.2.0's encoding, as the host serves a 0.2.0
    /// component: its own conversion, then the adapter's to and from words.
    async fn flat(&mut self, s: Struct) -> anyhow::Result<(Struct, [Duration; 3])> {
        self.stages(
            || Ok((unpack_trusted(&struct_into_wit(s)?), ())),
            async |abi, store, v| abi.call_echo_flat(store, v).await,
            |out, ()| Ok(wit_into_struct(pack(out), WireOptions::default(), Limits::default())?),
        )
        .await
    }

    /// Through the guest in the latest encoding, 0.3.0's words, as the host
    /// serves a component built against it.
    async fn words(&mut self, s: Struct) -> anyhow::Result<(Struct, [Duration; 3])> {
        self.stages(
            || Ok((struct_into_wit(s)?, ())),
            async |abi, store, v| abi.call_echo_words(store, v).await,
            |out, ()| Ok(wit_into_struct(out, WireOptions::default(), Limits::default())?),
        )
        .await
    }
}

/// wasmtime's errors are not `std::error::Error`s.
fn w<T>(r: wasmtime::Result<T>) -> anyhow::Result<T> {
    r.map_err(|e| anyhow::anyhow!("{e:#}"))
}

/// Every asset (a struct with the asset signature) in `s`, depth first.
fn for_each_asset(s: &mut Struct, f: &mut dyn FnMut(&mut Struct)) {
    let is_asset = |s: &Struct| {
        s.fields.get(sig::KEY).and_then(|v| v.kind.as_ref()) == Some(&Kind::StringValue(sig::ASSET.into()))
    };
    if is_asset(s) {
        return f(s);
    }
    for v in s.fields.values_mut() {
        match &mut v.kind {
            Some(Kind::StructValue(inner)) => for_each_asset(inner, f),
            Some(Kind::ListValue(l)) => {
                for item in &mut l.values {
                    if let Some(Kind::StructValue(inner)) = &mut item.kind {
                        for_each_asset(inner, f);
                    }
                }
            }
            _ => {}
        }
    }
}

/// The pair an input is measured with: a baseline and a candidate.
#[derive(Clone, Copy)]
pub enum Candidate {
    /// 0.2.0's one buffer (through the adapter) against 0.3.0's words.
    Words,
    /// 0.1.0's nodes against the same with every asset's text kept in the host.
    TextInHost,
}

impl Candidate {
    pub fn baseline_label(self) -> &'static str {
        match self {
            Candidate::Words => "0.2.0, one buffer, through the adapter",
            Candidate::TextInHost => "0.1.0 nodes, through the adapters",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Candidate::Words => "0.3.0, words",
            Candidate::TextInHost => "asset text kept in the host",
        }
    }
}

/// One input's figures, each stage's p50 in order (from protobuf, the
/// call, back to protobuf): the baseline, then the candidate.
pub struct Row {
    pub input: Input,
    pub candidate: Candidate,
    pub baseline: [Stats; 3],
    pub other: [Stats; 3],
}

/// Times `n` round trips of each input in its baseline and its candidate,
/// alternating call by call (after a tenth as many unmeasured); checks each
/// comes back as it went in.
pub async fn measure(guest: &mut Guest, n: usize) -> anyhow::Result<Vec<Row>> {
    let mut rows = Vec::new();
    for input in Input::ALL {
        let candidate = match input {
            Input::Asset1M => Candidate::TextInHost,
            _ => Candidate::Words,
        };
        let news = input.news();
        let mut samples: [[Vec<Duration>; 3]; 2] = Default::default();
        for i in 0..n + (n / 10).max(10) {
            let ((a, ta), (b, tb)) = match candidate {
                Candidate::Words => (guest.flat(news.clone()).await?, guest.words(news.clone()).await?),
                Candidate::TextInHost => (guest.nodes(news.clone()).await?, guest.handles(news.clone()).await?),
            };
            ensure!(a == news && b == news, "{}: a round trip changed the value", input.label());
            if i >= (n / 10).max(10) {
                for (k, (x, y)) in ta.into_iter().zip(tb).enumerate() {
                    samples[0][k].push(x);
                    samples[1][k].push(y);
                }
            }
        }
        let [baseline, other] = samples.map(|side| side.map(Stats::new));
        rows.push(Row { input, candidate, baseline, other });
    }
    Ok(rows)
}
