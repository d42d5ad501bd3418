//! What the benchmark sends: the inputs, and the five resource calls of each
//! provider built from them the way the engine builds them.

use std::collections::BTreeMap;

use prost_types::value::Kind;
use prost_types::{ListValue, Struct, Value};
use pulumirpc::resource_provider_client::ResourceProviderClient;
use pulumirpc::*;
use sha2::{Digest, Sha256};
use tonic::transport::Channel;
use tonic::{Response, Status};

/// The special-value signature key and the asset signature (Pulumi's).
const SIG_KEY: &str = "4dabf18193072939515e22adb298388d";
const ASSET_SIG: &str = "c44067f5952c0a294b673a41bacd8c17";

/// Which runtime serves the provider.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Runtime {
    Wasm,
    Native,
    Python,
}

impl Runtime {
    pub const ALL: [Runtime; 3] = [Runtime::Wasm, Runtime::Native, Runtime::Python];

    pub fn label(self) -> &'static str {
        match self {
            Runtime::Wasm => "WASM",
            Runtime::Native => "native",
            Runtime::Python => "Python",
        }
    }
}

/// Which resource: the random string (examples/random, or its Python
/// mirror), or the pass-through thing (the echo test provider's, or its
/// mirror) that accepts any properties.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resource {
    RandomString,
    Thing,
}

pub fn token(rt: Runtime, r: Resource) -> &'static str {
    match (rt, r) {
        (Runtime::Python, Resource::RandomString) => "pyrandom:index:RandomString",
        (Runtime::Python, Resource::Thing) => "pyrandom:index:Thing",
        (_, Resource::RandomString) => "random:index:RandomString",
        (_, Resource::Thing) => "echo:index:Thing",
    }
}

/// One kind of input of the latency table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Input {
    SmallMap,
    HundredProps,
    Asset1M,
}

impl Input {
    pub const ALL: [Input; 3] = [Input::SmallMap, Input::HundredProps, Input::Asset1M];

    pub fn label(self) -> &'static str {
        match self {
            Input::SmallMap => "small map",
            Input::HundredProps => "100 properties",
            Input::Asset1M => "1 MB asset",
        }
    }

    pub fn resource(self) -> Resource {
        match self {
            Input::SmallMap => Resource::RandomString,
            _ => Resource::Thing,
        }
    }

    pub fn news(self) -> Struct {
        match self {
            Input::SmallMap => small_map(),
            Input::HundredProps => hundred_props(),
            Input::Asset1M => asset_1m(),
        }
    }
}

fn v(kind: Kind) -> Value {
    Value { kind: Some(kind) }
}

fn s(x: impl Into<String>) -> Value {
    v(Kind::StringValue(x.into()))
}

fn n(x: f64) -> Value {
    v(Kind::NumberValue(x))
}

fn obj<'a>(fields: impl IntoIterator<Item = (&'a str, Value)>) -> Struct {
    Struct { fields: fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect() }
}

/// A RandomString's inputs: a few properties and a two-entry `keepers` map.
pub fn small_map() -> Struct {
    let keepers = obj([("build", s("1234")), ("env", s("dev"))]);
    obj([
        ("length", n(32.0)),
        ("special", v(Kind::BoolValue(false))),
        ("minNumeric", n(4.0)),
        ("keepers", v(Kind::StructValue(keepers))),
    ])
}

/// 100 top-level properties: strings, numbers, bools and small objects.
pub fn hundred_props() -> Struct {
    let mut fields = BTreeMap::new();
    for i in 0..100 {
        let value = match i % 4 {
            0 => s(format!("the value of property number {i}")),
            1 => n(i as f64 * 1.5),
            2 => v(Kind::BoolValue(i % 3 == 0)),
            _ => v(Kind::StructValue(obj([
                ("name", s(format!("nested-{i}"))),
                ("count", n(i as f64)),
                ("tags", v(Kind::ListValue(ListValue { values: vec![s("a"), s("b"), s("c")] }))),
            ]))),
        };
        fields.insert(format!("prop{i:03}"), value);
    }
    Struct { fields }
}

/// One text asset of 1 MiB, with its hash, as the engine sends assets.
pub fn asset_1m() -> Struct {
    let line = "0123456789 abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ ~!@#$%^&*()_+ lorem ipsum dolor sit\n";
    let text: String = line.chars().cycle().take(1 << 20).collect();
    let hash = hex(&Sha256::digest(text.as_bytes()));
    let asset = obj([(SIG_KEY, s(ASSET_SIG)), ("hash", s(hash)), ("text", s(text))]);
    obj([("name", s("blob")), ("content", v(Kind::StructValue(asset)))])
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub fn urn(token: &str, name: &str) -> String {
    format!("urn:pulumi:bench::bench::{token}::{name}")
}

/// The five calls for one resource, built as the engine would after a
/// Check and a Create of `news`.
#[derive(Clone)]
pub struct Calls {
    pub check: CheckRequest,
    pub diff: DiffRequest,
    pub create: CreateRequest,
    pub update: UpdateRequest,
    pub delete: DeleteRequest,
}

/// The resource calls of the tables, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    Check,
    Diff,
    Create,
    Update,
    Delete,
}

impl Op {
    pub const ALL: [Op; 5] = [Op::Check, Op::Diff, Op::Create, Op::Update, Op::Delete];

    pub fn label(self) -> &'static str {
        match self {
            Op::Check => "Check",
            Op::Diff => "Diff",
            Op::Create => "Create",
            Op::Update => "Update",
            Op::Delete => "Delete",
        }
    }
}

pub fn check_request(token: &str, name: &str, news: Struct) -> CheckRequest {
    CheckRequest {
        urn: urn(token, name),
        name: name.to_owned(),
        r#type: token.to_owned(),
        olds: Some(Struct::default()),
        news: Some(news),
        random_seed: vec![7; 32],
        ..Default::default()
    }
}

/// What answers the benchmark's calls: a provider over gRPC, or (for the
/// handler table) a provider's RPC handlers called in this process.
pub trait Rpc {
    async fn plugin_info(&mut self) -> Result<(), Status>;
    async fn check(&mut self, r: CheckRequest) -> Result<CheckResponse, Status>;
    async fn diff(&mut self, r: DiffRequest) -> Result<DiffResponse, Status>;
    async fn create(&mut self, r: CreateRequest) -> Result<CreateResponse, Status>;
    async fn update(&mut self, r: UpdateRequest) -> Result<UpdateResponse, Status>;
    async fn delete(&mut self, r: DeleteRequest) -> Result<(), Status>;
}

impl Rpc for ResourceProviderClient<Channel> {
    async fn plugin_info(&mut self) -> Result<(), Status> {
        ResourceProviderClient::get_plugin_info(self, ()).await.map(drop)
    }
    async fn check(&mut self, r: CheckRequest) -> Result<CheckResponse, Status> {
        ResourceProviderClient::check(self, r).await.map(Response::into_inner)
    }
    async fn diff(&mut self, r: DiffRequest) -> Result<DiffResponse, Status> {
        ResourceProviderClient::diff(self, r).await.map(Response::into_inner)
    }
    async fn create(&mut self, r: CreateRequest) -> Result<CreateResponse, Status> {
        ResourceProviderClient::create(self, r).await.map(Response::into_inner)
    }
    async fn update(&mut self, r: UpdateRequest) -> Result<UpdateResponse, Status> {
        ResourceProviderClient::update(self, r).await.map(Response::into_inner)
    }
    async fn delete(&mut self, r: DeleteRequest) -> Result<(), Status> {
        ResourceProviderClient::delete(self, r).await.map(drop)
    }
}

/// Runs Check and Create once to get the inputs and the state, then builds
/// every call from them. Fails if Check reports failures.
pub async fn prepare(client: &mut impl Rpc, token: &str, name: &str, news: Struct) -> anyhow::Result<Calls> {
    let check = check_request(token, name, news);
    let checked = client.check(check.clone()).await?;
    anyhow::ensure!(checked.failures.is_empty(), "{token}: check failed: {:?}", checked.failures);
    let inputs = checked.inputs;
    let urn = check.urn.clone();
    let create = CreateRequest {
        urn: urn.clone(),
        name: name.to_owned(),
        r#type: token.to_owned(),
        properties: inputs.clone(),
        ..Default::default()
    };
    let created = client.create(create.clone()).await?;
    let (id, state) = (created.id, created.properties);
    Ok(Calls {
        check,
        diff: DiffRequest {
            id: id.clone(),
            urn: urn.clone(),
            name: name.to_owned(),
            r#type: token.to_owned(),
            olds: state.clone(),
            news: inputs.clone(),
            old_inputs: inputs.clone(),
            ..Default::default()
        },
        create,
        update: UpdateRequest {
            id: id.clone(),
            urn: urn.clone(),
            name: name.to_owned(),
            r#type: token.to_owned(),
            olds: state.clone(),
            news: inputs.clone(),
            old_inputs: inputs.clone(),
            ..Default::default()
        },
        delete: DeleteRequest {
            id,
            urn,
            name: name.to_owned(),
            r#type: token.to_owned(),
            properties: state,
            old_inputs: inputs,
            ..Default::default()
        },
    })
}

/// Sends one call; the request is built (cloned) by the caller beforehand.
pub enum Request {
    /// GetPluginInfo: answered by the server, no provider code in it.
    PluginInfo,
    Check(CheckRequest),
    Diff(DiffRequest),
    Create(CreateRequest),
    Update(UpdateRequest),
    Delete(DeleteRequest),
}

impl Calls {
    pub fn request(&self, op: Op) -> Request {
        match op {
            Op::Check => Request::Check(self.check.clone()),
            Op::Diff => Request::Diff(self.diff.clone()),
            Op::Create => Request::Create(self.create.clone()),
            Op::Update => Request::Update(self.update.clone()),
            Op::Delete => Request::Delete(self.delete.clone()),
        }
    }
}

impl Request {
    pub async fn send(self, client: &mut impl Rpc) -> Result<(), Status> {
        match self {
            Request::PluginInfo => client.plugin_info().await?,
            Request::Check(r) => {
                let out = client.check(r).await?;
                if !out.failures.is_empty() {
                    return Err(Status::internal(format!("check failures: {:?}", out.failures)));
                }
            }
            Request::Diff(r) => drop(client.diff(r).await?),
            Request::Create(r) => drop(client.create(r).await?),
            Request::Update(r) => drop(client.update(r).await?),
            Request::Delete(r) => client.delete(r).await?,
        }
        Ok(())
    }
}
