//! The encoding table (`--inproc` and full runs): what the value encoding
//! itself costs a component call. The same property map goes through a
//! guest (`bench/abi/guest`) and back in `pulumi:provider@0.1.0`'s nodes
//! (one string per key and value, one list per array and object) and in a
//! candidate for a later contract version:
//! - for the small map and the 100 properties, one buffer (`bench/abi/wit`:
//!   every string in one text buffer, every list of children in one of two
//!   shared lists);
//! - for the 1 MB asset, the asset's text kept in the host, as a handle
//!   would keep it: the guest gets the asset with its hash only, and the
//!   host puts the text back on the way out.
//!
//! Each side times the host's conversion from protobuf, the call (lowering,
//! the guest's decode and encode, lifting, post-return) and the conversion
//! back, as the host would do them, validation included.

use std::collections::HashSet;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};
use prost_types::value::Kind;
use prost_types::{ListValue, Struct, Value as WireValue};
use pulumi_wasm_host::convert::value::{Limits, WireOptions, sig, struct_into_wit, wit_into_struct};
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
        with: { "pulumi:provider/types@0.1.0": pulumi_wasm_host::runtime::bindings::v0_1_0::pulumi::provider::types },
    });
}

use bindings::Abi;
use bindings::pulumi_bench::abi::flat;

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
    /// component: its own conversion, then the adapter's to and from nodes.
    async fn nodes(&mut self, s: Struct) -> anyhow::Result<(Struct, [Duration; 3])> {
        self.stages(
            || Ok((flat_to_nodes(&struct_into_wit(s)?), ())),
            async |abi, store, v| abi.call_echo_nodes(store, v).await,
            |out, ()| Ok(wit_into_struct(nodes_into_flat(out), WireOptions::default(), Limits::default())?),
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
                Ok((flat_to_nodes(&struct_into_wit(s)?), kept))
            },
            async |abi, store, v| abi.call_echo_nodes(store, v).await,
            |out, kept| {
                let mut back = wit_into_struct(nodes_into_flat(out), WireOptions::default(), Limits::default())?;
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

    /// Through the guest in the one-buffer candidate.
    async fn flat(&mut self, s: Struct) -> anyhow::Result<(Struct, [Duration; 3])> {
        self.stages(
            || Ok((to_flat(s), ())),
            async |abi, store, v| abi.call_echo_flat(store, v).await,
            |out, ()| from_flat(out, Limits::default()),
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

/// The candidate an input is measured with.
#[derive(Clone, Copy)]
pub enum Candidate {
    OneBuffer,
    TextInHost,
}

impl Candidate {
    pub fn label(self) -> &'static str {
        match self {
            Candidate::OneBuffer => "one buffer",
            Candidate::TextInHost => "asset text kept in the host",
        }
    }
}

/// One input's figures, each stage's p50 in order (from protobuf, the
/// call, back to protobuf): 0.1.0's nodes, then the candidate.
pub struct Row {
    pub input: Input,
    pub candidate: Candidate,
    pub nodes: [Stats; 3],
    pub other: [Stats; 3],
}

/// Times `n` round trips of each input in 0.1.0's encoding and in its
/// candidate, alternating call by call (after a tenth as many unmeasured);
/// checks each comes back as it went in.
pub async fn measure(guest: &mut Guest, n: usize) -> anyhow::Result<Vec<Row>> {
    let mut rows = Vec::new();
    for input in Input::ALL {
        let candidate = match input {
            Input::Asset1M => Candidate::TextInHost,
            _ => Candidate::OneBuffer,
        };
        let news = input.news();
        let mut samples: [[Vec<Duration>; 3]; 2] = Default::default();
        for i in 0..n + (n / 10).max(10) {
            let (a, ta) = guest.nodes(news.clone()).await?;
            let (b, tb) = match candidate {
                Candidate::OneBuffer => guest.flat(news.clone()).await?,
                Candidate::TextInHost => guest.handles(news.clone()).await?,
            };
            ensure!(a == news && b == news, "{}: a round trip changed the value", input.label());
            if i >= (n / 10).max(10) {
                for (k, (x, y)) in ta.into_iter().zip(tb).enumerate() {
                    samples[0][k].push(x);
                    samples[1][k].push(y);
                }
            }
        }
        let [nodes, other] = samples.map(|side| side.map(Stats::new));
        rows.push(Row { input, candidate, nodes, other });
    }
    Ok(rows)
}

// ---------------------------------------------------------------------------
// The candidate encoding on the host's side. Only the kinds the benchmark
// sends (null, bool, number, string, list, struct); special values would
// be decoded here as the host decodes them for the node encoding.
// ---------------------------------------------------------------------------

fn span(start: usize, len: usize) -> flat::Span {
    flat::Span { start: start as u32, len: len as u32 }
}

/// The positions a span covers, computed without overflow.
fn range(s: flat::Span) -> std::ops::Range<usize> {
    s.start as usize..s.start as usize + s.len as usize
}

/// From the wire, in pre-order: strings are appended to the one text
/// buffer; an array's or object's children are appended to `items` or
/// `fields` once they have their node indices.
pub fn to_flat(s: Struct) -> flat::Value {
    let mut out = flat::Value { nodes: Vec::new(), items: Vec::new(), fields: Vec::new(), text: String::new() };
    push_struct(&mut out, s);
    out
}

fn push_text(out: &mut flat::Value, s: &str) -> flat::Span {
    let start = out.text.len();
    out.text.push_str(s);
    span(start, s.len())
}

fn push_struct(out: &mut flat::Value, s: Struct) -> u32 {
    let at = out.nodes.len();
    out.nodes.push(flat::Node::Null);
    let children: Vec<(flat::Span, u32)> =
        s.fields.into_iter().map(|(k, v)| (push_text(out, &k), push_value(out, v))).collect();
    out.nodes[at] = flat::Node::Object(span(out.fields.len(), children.len()));
    out.fields.extend(children);
    at as u32
}

fn push_value(out: &mut flat::Value, v: WireValue) -> u32 {
    let node = match v.kind {
        Some(Kind::StructValue(s)) => return push_struct(out, s),
        Some(Kind::ListValue(l)) => {
            let at = out.nodes.len();
            out.nodes.push(flat::Node::Null);
            let children: Vec<u32> = l.values.into_iter().map(|c| push_value(out, c)).collect();
            out.nodes[at] = flat::Node::Array(span(out.items.len(), children.len()));
            out.items.extend(children);
            return at as u32;
        }
        None | Some(Kind::NullValue(_)) => flat::Node::Null,
        Some(Kind::BoolValue(b)) => flat::Node::Bool(b),
        Some(Kind::NumberValue(n)) => flat::Node::Number(n),
        Some(Kind::StringValue(s)) => flat::Node::String(push_text(out, &s)),
    };
    out.nodes.push(node);
    (out.nodes.len() - 1) as u32
}

/// The guest's value back to the wire, checked first as the host checks
/// the node encoding: spans within their lists and on character
/// boundaries, every child after its parent and referenced once, no
/// duplicate keys, bounded depth and size.
pub fn from_flat(v: flat::Value, limits: Limits) -> anyhow::Result<Struct> {
    validate(&v, limits)?;
    let mut done: Vec<Option<WireValue>> = Vec::new();
    done.resize_with(v.nodes.len(), || None);
    let text = |s: flat::Span| v.text[range(s)].to_owned();
    for (i, node) in v.nodes.iter().enumerate().rev() {
        let kind = match node {
            flat::Node::Bool(b) => Kind::BoolValue(*b),
            flat::Node::Number(n) => Kind::NumberValue(*n),
            flat::Node::String(s) => Kind::StringValue(text(*s)),
            flat::Node::Array(s) => {
                let values = children(&v.items, *s).iter().map(|&c| take(&mut done, c)).collect();
                Kind::ListValue(ListValue { values })
            }
            flat::Node::Object(s) => {
                let fields = children(&v.fields, *s).iter().map(|&(k, c)| (text(k), take(&mut done, c))).collect();
                Kind::StructValue(Struct { fields })
            }
            _ => Kind::NullValue(0),
        };
        done[i] = Some(WireValue { kind: Some(kind) });
    }
    match take(&mut done, 0).kind {
        Some(Kind::StructValue(s)) => Ok(s),
        _ => bail!("the root is not an object"),
    }
}

fn children<T>(list: &[T], s: flat::Span) -> &[T] {
    &list[range(s)]
}

fn take(done: &mut [Option<WireValue>], c: u32) -> WireValue {
    done[c as usize].take().unwrap_or_default()
}

fn validate(v: &flat::Value, limits: Limits) -> anyhow::Result<()> {
    const NONE: u32 = u32::MAX;
    let count = v.nodes.len();
    ensure!(count > 0 && count <= limits.max_nodes, "{count} nodes");
    ensure!(matches!(v.nodes[0], flat::Node::Object(_)), "the root is not an object");
    let in_text = |s: flat::Span| {
        let r = range(s);
        r.end <= v.text.len() && v.text.is_char_boundary(r.start) && v.text.is_char_boundary(r.end)
    };
    let within = |s: flat::Span, len: usize| range(s).end <= len;
    // Each node's parent and depth, filled in as its parent is reached.
    let mut parent = vec![NONE; count];
    let mut depth = vec![0usize; count];
    let mut adopt = |parent: &mut [u32], i: usize, c: u32| -> anyhow::Result<()> {
        let cu = c as usize;
        ensure!(cu < count && cu > i && parent[cu] == NONE, "node {i}: bad child {c}");
        parent[cu] = i as u32;
        depth[cu] = depth[i] + 1;
        ensure!(depth[cu] <= limits.max_depth, "too deep");
        Ok(())
    };
    let mut keys = HashSet::new();
    for (i, node) in v.nodes.iter().enumerate() {
        ensure!(i == 0 || parent[i] != NONE, "node {i} is not referenced");
        match node {
            flat::Node::String(s) => ensure!(in_text(*s), "node {i}: bad span"),
            flat::Node::Array(s) => {
                ensure!(within(*s, v.items.len()), "node {i}: bad span");
                for &c in children(&v.items, *s) {
                    adopt(&mut parent, i, c)?;
                }
            }
            flat::Node::Object(s) => {
                ensure!(within(*s, v.fields.len()), "node {i}: bad span");
                keys.clear();
                for &(k, c) in children(&v.fields, *s) {
                    ensure!(in_text(k), "node {i}: bad key span");
                    let key = &v.text[range(k)];
                    ensure!(keys.insert(key), "node {i}: duplicate key {key}");
                    adopt(&mut parent, i, c)?;
                }
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sp(start: u32, len: u32) -> flat::Span {
        flat::Span { start, len }
    }

    /// `{"a": "é"}`, then spoiled by `spoil`: the host's side of the
    /// candidate must refuse it, as it refuses a bad node list.
    fn refused(spoil: impl FnOnce(&mut flat::Value)) -> bool {
        let mut v = flat::Value {
            nodes: vec![flat::Node::Object(sp(0, 1)), flat::Node::String(sp(1, 2))],
            items: vec![],
            fields: vec![(sp(0, 1), 1)],
            text: "aé".into(),
        };
        assert!(from_flat(v.clone(), Limits::default()).is_ok());
        spoil(&mut v);
        from_flat(v, Limits::default()).is_err()
    }

    #[test]
    fn the_candidate_refuses_what_the_node_encoding_refuses() {
        assert!(refused(|v| v.nodes[1] = flat::Node::String(sp(1, 9))), "a span past the text");
        assert!(refused(|v| v.nodes[1] = flat::Node::String(sp(1, 1))), "a span inside a character");
        assert!(refused(|v| v.nodes[0] = flat::Node::Object(sp(0, 2))), "a span past the fields");
        assert!(refused(|v| v.fields[0].1 = 0), "a child before its parent");
        assert!(refused(|v| v.fields[0].1 = 7), "a child past the nodes");
        assert!(
            refused(|v| {
                v.fields.push((sp(0, 1), 1));
                v.nodes[0] = flat::Node::Object(sp(0, 2));
            }),
            "a duplicate key, and a node with two parents"
        );
        assert!(refused(|v| v.nodes.push(flat::Node::Null)), "a node nothing refers to");
        assert!(refused(|v| v.nodes.swap(0, 1)), "a root that is not an object");
    }

    #[test]
    fn the_candidate_keeps_every_value_it_carries() {
        for input in [Input::SmallMap, Input::HundredProps] {
            let s = input.news();
            assert_eq!(from_flat(to_flat(s.clone()), Limits::default()).unwrap(), s);
        }
    }
}
