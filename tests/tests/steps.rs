//! Replays the provider calls the engine makes for Pulumi's "steps" scenario
//! (tests/integration/steps): Same, Create, Update, Delete, CreateReplacement,
//! DeleteReplaced, delete-before-replace, and a failed update that leaves the
//! replaced resource pending deletion until the next run.

use std::collections::BTreeMap;

use e2e_tests::{Plugin, TestEngine, component, from_struct, to_struct};
use pulumirpc::diff_response::DiffChanges;
use pulumirpc::*;
use serde_json::{Value, json};
use tonic::Code;

const THING: &str = "echo:index:Thing";

/// What the engine's checkpoint holds for a resource.
#[derive(Clone, Debug)]
struct Res {
    id: String,
    inputs: prost_types::Struct,
    outputs: prost_types::Struct,
}

/// The engine's side: a checkpoint and the provider calls that steps make.
struct Engine {
    p: Plugin,
    state: BTreeMap<String, Res>,
    pending_delete: Vec<(String, Res)>,
    ops: Vec<String>,
}

fn urn(name: &str) -> String {
    format!("urn:pulumi:dev::steps::{THING}::{name}")
}

/// The provider's verdict on a resource's new inputs.
enum Plan {
    Same,
    Update,
    Replace { delete_first: bool },
}

impl Engine {
    async fn check(&mut self, name: &str, news: Value) -> prost_types::Struct {
        let olds = self.state.get(name).map(|r| r.inputs.clone());
        let r = self
            .p
            .client
            .check(CheckRequest {
                urn: urn(name),
                name: name.into(),
                r#type: THING.into(),
                olds,
                news: Some(to_struct(news)),
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner();
        assert!(r.failures.is_empty());
        r.inputs.unwrap()
    }

    async fn plan(&mut self, name: &str, news: &prost_types::Struct) -> Plan {
        let old = self.state[name].clone();
        let d = self
            .p
            .client
            .diff(DiffRequest {
                id: old.id,
                urn: urn(name),
                name: name.into(),
                r#type: THING.into(),
                olds: Some(old.outputs),
                news: Some(news.clone()),
                old_inputs: Some(old.inputs),
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner();
        match (DiffChanges::try_from(d.changes).unwrap(), d.replaces.is_empty()) {
            (DiffChanges::DiffNone, _) => Plan::Same,
            (_, true) => Plan::Update,
            (_, false) => Plan::Replace { delete_first: d.delete_before_replace },
        }
    }

    async fn create(&mut self, name: &str, inputs: prost_types::Struct) -> Res {
        let r = self
            .p
            .client
            .create(CreateRequest {
                urn: urn(name),
                name: name.into(),
                r#type: THING.into(),
                properties: Some(inputs.clone()),
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner();
        assert!(!r.id.is_empty());
        Res { id: r.id, inputs, outputs: r.properties.unwrap() }
    }

    async fn delete(&mut self, name: &str, res: &Res) {
        self.p
            .client
            .delete(DeleteRequest {
                id: res.id.clone(),
                urn: urn(name),
                name: name.into(),
                r#type: THING.into(),
                properties: Some(res.outputs.clone()),
                old_inputs: Some(res.inputs.clone()),
                ..Default::default()
            })
            .await
            .unwrap();
    }

    async fn update(&mut self, name: &str, news: prost_types::Struct) -> Result<(), tonic::Status> {
        let old = self.state[name].clone();
        let r = self
            .p
            .client
            .update(UpdateRequest {
                id: old.id.clone(),
                urn: urn(name),
                name: name.into(),
                r#type: THING.into(),
                olds: Some(old.outputs),
                news: Some(news.clone()),
                old_inputs: Some(old.inputs),
                ..Default::default()
            })
            .await?
            .into_inner();
        self.state.insert(name.into(), Res { id: old.id, inputs: news, outputs: r.properties.unwrap() });
        Ok(())
    }

    /// Runs one program: the desired resources in order. Replaced resources
    /// are deleted at the end (create-before-delete) unless the provider asks
    /// otherwise; resources no longer declared are deleted; a failure stops
    /// the run and leaves replaced resources pending deletion.
    async fn run(&mut self, desired: &[(&str, Value)]) -> Result<(), tonic::Status> {
        self.ops.clear();
        let mut replaced = Vec::new();
        for (name, news) in desired {
            let news = self.resolve(news.clone());
            let news = self.check(name, news).await;
            if !self.state.contains_key(*name) {
                let r = self.create(name, news).await;
                self.state.insert(name.to_string(), r);
                self.ops.push(format!("create {name}"));
                continue;
            }
            match self.plan(name, &news).await {
                Plan::Same => self.ops.push(format!("same {name}")),
                Plan::Update => {
                    if let Err(e) = self.update(name, news).await {
                        self.pending_delete.append(&mut replaced);
                        self.ops.push(format!("failed update {name}"));
                        return Err(e);
                    }
                    self.ops.push(format!("update {name}"));
                }
                Plan::Replace { delete_first: true } => {
                    let old = self.state.remove(*name).unwrap();
                    self.delete(name, &old).await;
                    self.ops.push(format!("delete-replaced {name}"));
                    let r = self.create(name, news).await;
                    self.state.insert(name.to_string(), r);
                    self.ops.push(format!("create-replacement {name}"));
                }
                Plan::Replace { delete_first: false } => {
                    let r = self.create(name, news).await;
                    let old = self.state.insert(name.to_string(), r).unwrap();
                    replaced.push((name.to_string(), old));
                    self.ops.push(format!("create-replacement {name}"));
                }
            }
        }
        let declared: Vec<&str> = desired.iter().map(|(n, _)| *n).collect();
        let gone: Vec<String> = self.state.keys().filter(|k| !declared.contains(&k.as_str())).cloned().collect();
        for name in gone {
            let r = self.state.remove(&name).unwrap();
            self.delete(&name, &r).await;
            self.ops.push(format!("delete {name}"));
        }
        for (name, old) in replaced.into_iter().chain(std::mem::take(&mut self.pending_delete)) {
            self.delete(&name, &old).await;
            self.ops.push(format!("delete-replaced {name}"));
        }
        Ok(())
    }

    /// Replaces `"$id:<name>"` strings with that resource's current ID, as the
    /// engine resolves a dependency on another resource's output.
    fn resolve(&self, v: Value) -> Value {
        match v {
            Value::String(s) if s.starts_with("$id:") => json!(self.id(&s[4..])),
            Value::Object(m) => Value::Object(m.into_iter().map(|(k, v)| (k, self.resolve(v))).collect()),
            other => other,
        }
    }

    fn id(&self, name: &str) -> String {
        self.state[name].id.clone()
    }

    fn output(&self, name: &str, key: &str) -> Value {
        from_struct(Some(&self.state[name].outputs))[key].clone()
    }
}

#[tokio::test]
async fn the_steps_scenario() {
    let engine = TestEngine::start().await;
    let mut p = Plugin::packed(&component("echo-provider"), Some(&engine.address)).await.unwrap();
    p.boot(&engine.address, json!({})).await.unwrap();
    let mut e = Engine { p, state: BTreeMap::new(), pending_delete: vec![], ops: vec![] };

    // Step 1: populate the world; c depends on a through a's ID.
    let c = |extra: Value| {
        let mut v = json!({"ref": "$id:a"});
        v.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        v
    };
    e.run(&[
        ("a", json!({"replace": "a1"})),
        ("b", json!({"state": 1})),
        ("c", c(json!({}))),
        ("d", json!({"state": 1})),
    ])
    .await
    .unwrap();
    assert_eq!(e.ops, ["create a", "create b", "create c", "create d"]);
    assert_eq!(e.output("c", "ref"), json!(e.id("a")));

    // Step 2: Same(a), Update(b), Same(c), Delete(d), Create(e).
    e.run(&[
        ("a", json!({"replace": "a1"})),
        ("b", json!({"state": 2})),
        ("c", c(json!({}))),
        ("e", json!({"state": 1})),
    ])
    .await
    .unwrap();
    assert_eq!(e.ops, ["same a", "update b", "same c", "create e", "delete d"]);
    assert_eq!(e.output("b", "state"), json!(2.0));

    // Step 3: CreateReplacement(a), Update(c) to a's new ID, Same(e), Delete(b), DeleteReplaced(a).
    let a2 = e.id("a");
    e.run(&[("a", json!({"replace": "a3"})), ("c", c(json!({}))), ("e", json!({"state": 1}))]).await.unwrap();
    assert_eq!(e.ops, ["create-replacement a", "update c", "same e", "delete b", "delete-replaced a"]);
    assert_ne!(e.id("a"), a2, "the replacement has a new ID");
    assert_eq!(e.output("c", "ref"), json!(e.id("a")));

    // Step 4: Same(a); c replaced with delete-before-replace; Same(e).
    let c3 = e.id("c");
    let step4_c = c(json!({"replace": "c4", "dbr": true}));
    e.run(&[("a", json!({"replace": "a3"})), ("c", step4_c.clone()), ("e", json!({"state": 1}))]).await.unwrap();
    assert_eq!(e.ops, ["same a", "delete-replaced c", "create-replacement c", "same e"]);
    assert_ne!(e.id("c"), c3);

    // Step 5: a replaced, and the update of c to the new ID fails (injected
    // fault): the old a is never deleted and stays pending deletion.
    let a4 = e.id("a");
    let err = e
        .run(&[
            ("a", json!({"replace": "a5"})),
            ("c", c(json!({"replace": "c4", "dbr": true, "fail": true}))),
            ("e", json!({"state": 1})),
        ])
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::Unknown);
    assert!(err.message().contains("injected fault"), "{}", err.message());
    assert_eq!(e.ops, ["create-replacement a", "failed update c"]);
    assert_eq!(e.pending_delete.len(), 1);
    assert_eq!(e.pending_delete[0].1.id, a4);

    // Step 6: delete everything, then the pending delete.
    e.run(&[]).await.unwrap();
    assert_eq!(e.ops, ["delete a", "delete c", "delete e", "delete-replaced a"]);
    assert!(e.state.is_empty() && e.pending_delete.is_empty());
}

/// A refresh: the engine keeps the stored inputs when the provider sends none
/// back, so a provider that cannot tell its inputs must not send an empty map.
#[tokio::test]
async fn a_refresh_without_inputs_keeps_the_stored_ones_and_an_import_gets_what_it_read() {
    let engine = TestEngine::start().await;
    let mut p = Plugin::packed(&component("echo-provider"), Some(&engine.address)).await.unwrap();
    p.boot(&engine.address, json!({})).await.unwrap();
    let read = |state: Value, inputs: Option<Value>| ReadRequest {
        id: "thing-1".into(),
        urn: urn("r"),
        name: "r".into(),
        r#type: THING.into(),
        properties: Some(to_struct(state)),
        inputs: inputs.map(to_struct),
        ..Default::default()
    };
    let forgot = p.client.read(read(json!({"forgetInputs": true}), Some(json!({"a": 1})))).await.unwrap();
    assert_eq!(forgot.into_inner().inputs, None, "absent: keep the stored inputs");
    let kept = p.client.read(read(json!({"a": 1}), Some(json!({"a": 1})))).await.unwrap().into_inner();
    assert_eq!(kept.inputs, Some(to_struct(json!({"a": 1}))));
    // An import (the engine sends no inputs) has none to keep: whatever the
    // provider read is sent, even nothing.
    let imported = p.client.read(read(json!({"forgetInputs": true}), None)).await.unwrap().into_inner();
    assert_eq!(imported.inputs, Some(to_struct(json!({}))));
}
