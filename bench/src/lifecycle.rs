//! The lifecycle phase: N resources created, updated and deleted the way
//! `pulumi up`, `pulumi up` and `pulumi destroy` would.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::Context;
use prost_types::Struct;
use pulumirpc::resource_provider_client::ResourceProviderClient;
use pulumirpc::*;
use tonic::transport::Channel;

use crate::report::Lifecycle;
use crate::workload::{self, check_request};

/// What the lifecycle keeps per resource between phases.
struct Made {
    id: String,
    inputs: Option<Struct>,
    state: Option<Struct>,
}

/// `n` RandomStrings through create (Check, Create), update (Check, Diff,
/// Update) and delete (Delete), `parallel` resources at a time, as
/// `pulumi up`, `pulumi up` and `pulumi destroy` would.
pub async fn lifecycle(
    client: ResourceProviderClient<Channel>,
    token: &'static str,
    n: usize,
    parallel: usize,
) -> anyhow::Result<Lifecycle> {
    let made: Arc<Vec<Mutex<Option<Made>>>> = Arc::new((0..n).map(|_| Mutex::new(None)).collect());
    let news = |i: usize| {
        let mut s = workload::small_map();
        if let Some(prost_types::Value { kind: Some(prost_types::value::Kind::StructValue(k)) }) =
            s.fields.get_mut("keepers")
        {
            k.fields.insert(
                "index".into(),
                prost_types::Value { kind: Some(prost_types::value::Kind::StringValue(i.to_string())) },
            );
        }
        s
    };
    let phase = |step: u8| {
        let next = Arc::new(AtomicUsize::new(0));
        let tasks: Vec<_> = (0..parallel)
            .map(|_| {
                let (mut client, next, made) = (client.clone(), next.clone(), made.clone());
                tokio::spawn(async move {
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= n {
                            return Ok::<_, anyhow::Error>(());
                        }
                        let name = format!("r{i}");
                        let urn = workload::urn(token, &name);
                        match step {
                            0 => {
                                let checked = client.check(check_request(token, &name, news(i))).await?.into_inner();
                                anyhow::ensure!(checked.failures.is_empty(), "{:?}", checked.failures);
                                let created = client
                                    .create(CreateRequest {
                                        urn,
                                        name,
                                        r#type: token.into(),
                                        properties: checked.inputs.clone(),
                                        ..Default::default()
                                    })
                                    .await?
                                    .into_inner();
                                let m = Made { id: created.id, inputs: checked.inputs, state: created.properties };
                                *made[i].lock().unwrap() = Some(m);
                            }
                            1 => {
                                let m = made[i].lock().unwrap().take().context("created")?;
                                let mut check = check_request(token, &name, news(i));
                                check.olds = m.inputs.clone();
                                let checked = client.check(check).await?.into_inner();
                                client
                                    .diff(DiffRequest {
                                        id: m.id.clone(),
                                        urn: urn.clone(),
                                        name: name.clone(),
                                        r#type: token.into(),
                                        olds: m.state.clone(),
                                        news: checked.inputs.clone(),
                                        old_inputs: m.inputs.clone(),
                                        ..Default::default()
                                    })
                                    .await?;
                                let updated = client
                                    .update(UpdateRequest {
                                        id: m.id.clone(),
                                        urn,
                                        name,
                                        r#type: token.into(),
                                        olds: m.state,
                                        news: checked.inputs.clone(),
                                        old_inputs: m.inputs,
                                        ..Default::default()
                                    })
                                    .await?
                                    .into_inner();
                                let m = Made { id: m.id, inputs: checked.inputs, state: updated.properties };
                                *made[i].lock().unwrap() = Some(m);
                            }
                            _ => {
                                let m = made[i].lock().unwrap().take().context("updated")?;
                                client
                                    .delete(DeleteRequest {
                                        id: m.id,
                                        urn,
                                        name,
                                        r#type: token.into(),
                                        properties: m.state,
                                        old_inputs: m.inputs,
                                        ..Default::default()
                                    })
                                    .await?;
                            }
                        }
                    }
                })
            })
            .collect();
        async move {
            let t = Instant::now();
            for task in tasks {
                task.await??;
            }
            Ok::<_, anyhow::Error>(t.elapsed())
        }
    };
    let create = phase(0).await?;
    let update = phase(1).await?;
    let delete = phase(2).await?;
    Ok(Lifecycle { create, update, delete })
}
