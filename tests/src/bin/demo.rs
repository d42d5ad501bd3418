//! The main job, end to end: pack the `random` example into a plugin folder,
//! start it exactly as the Pulumi engine does, and drive it through
//! preview -> up -> update -> destroy, printing each call.

use std::time::Duration;

use e2e_tests::{Plugin, TestEngine, component, from_struct, to_struct};
use pulumirpc::diff_response::DiffChanges;
use pulumirpc::*;
use serde_json::{Value, json};

const PET: &str = "random:index:RandomPet";
const STRING: &str = "random:index:RandomString";

struct Resource {
    name: &'static str,
    token: &'static str,
    inputs: Option<prost_types::Struct>,
    id: String,
    state: Option<prost_types::Struct>,
}

fn urn(token: &str, name: &str) -> String {
    format!("urn:pulumi:demo::random-demo::{token}::{name}")
}

/// Outputs as JSON, with Pulumi's unknown sentinel (a value a preview cannot know yet) shown as `<unknown>`.
fn show(s: &Option<prost_types::Struct>) -> String {
    const UNKNOWN: &str = "\"04da6b54-80e4-46f7-96ec-b56ff0331ba9\"";
    from_struct(s.as_ref()).to_string().replace(UNKNOWN, "<unknown>")
}

async fn check(p: &mut Plugin, token: &str, name: &str, news: Value) -> anyhow::Result<Option<prost_types::Struct>> {
    let r = p
        .client
        .check(CheckRequest {
            urn: urn(token, name),
            name: name.into(),
            r#type: token.into(),
            news: Some(to_struct(news)),
            random_seed: vec![1; 32],
            ..Default::default()
        })
        .await?
        .into_inner();
    anyhow::ensure!(r.failures.is_empty(), "check failed: {:?}", r.failures);
    Ok(r.inputs)
}

async fn create(p: &mut Plugin, r: &mut Resource, preview: bool) -> anyhow::Result<()> {
    let out = p
        .client
        .create(CreateRequest {
            urn: urn(r.token, r.name),
            name: r.name.into(),
            r#type: r.token.into(),
            properties: r.inputs.clone(),
            preview,
            ..Default::default()
        })
        .await?
        .into_inner();
    let label = if preview { "  + create (preview)" } else { "  + create" };
    println!("{label} {} {}: id={:?} outputs={}", r.token, r.name, out.id, show(&out.properties));
    if !preview {
        r.id = out.id;
        r.state = out.properties;
    }
    Ok(())
}

async fn delete(p: &mut Plugin, r: &Resource) -> anyhow::Result<()> {
    p.client
        .delete(DeleteRequest {
            id: r.id.clone(),
            urn: urn(r.token, r.name),
            name: r.name.into(),
            r#type: r.token.into(),
            properties: r.state.clone(),
            old_inputs: r.inputs.clone(),
            ..Default::default()
        })
        .await?;
    println!("  - delete {} {} (id {})", r.token, r.name, r.id);
    Ok(())
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let engine = TestEngine::start().await;
    println!("engine (test stand-in) listening on {}", engine.address);
    let mut p = Plugin::packed(&component("random-provider"), Some(&engine.address)).await?;
    println!("started pulumi-resource-random as the engine does; it printed port {}", p.port);
    let version = p.boot(&engine.address, json!({})).await?;
    println!("handshake + configure done; provider version {version}\n");

    let mut pet = Resource { name: "pet", token: PET, inputs: None, id: String::new(), state: None };
    let mut pw = Resource { name: "pw", token: STRING, inputs: None, id: String::new(), state: None };

    println!("== preview");
    pet.inputs = check(&mut p, PET, "pet", json!({"length": 3})).await?;
    pw.inputs = check(&mut p, STRING, "pw", json!({"length": 24, "keepers": {"rotation": "1"}})).await?;
    create(&mut p, &mut pet, true).await?;
    create(&mut p, &mut pw, true).await?;

    println!("\n== up");
    create(&mut p, &mut pet, false).await?;
    create(&mut p, &mut pw, false).await?;

    println!("\n== update (rotate the string's keeper)");
    for (r, news) in [(&mut pet, json!({"length": 3})), (&mut pw, json!({"length": 24, "keepers": {"rotation": "2"}}))]
    {
        let news = check(&mut p, r.token, r.name, news).await?;
        let d = p
            .client
            .diff(DiffRequest {
                id: r.id.clone(),
                urn: urn(r.token, r.name),
                name: r.name.into(),
                r#type: r.token.into(),
                olds: r.state.clone(),
                news: news.clone(),
                old_inputs: r.inputs.clone(),
                ..Default::default()
            })
            .await?
            .into_inner();
        if d.changes == DiffChanges::DiffNone as i32 {
            println!("  = same {} {}", r.token, r.name);
            continue;
        }
        let detail: Vec<String> = d
            .detailed_diff
            .iter()
            .map(|(k, v)| format!("{k}:{:?}", property_diff::Kind::try_from(v.kind).unwrap_or_default()))
            .collect();
        println!("  ~ diff {} {}: replaces={:?} detailed=[{}]", r.token, r.name, d.replaces, detail.join(", "));
        let old = Resource {
            name: r.name,
            token: r.token,
            inputs: r.inputs.clone(),
            id: r.id.clone(),
            state: r.state.clone(),
        };
        r.inputs = news;
        create(&mut p, r, false).await?;
        delete(&mut p, &old).await?;
    }

    println!("\n== destroy");
    delete(&mut p, &pw).await?;
    delete(&mut p, &pet).await?;

    tokio::time::sleep(Duration::from_millis(200)).await;
    println!("\n== messages the provider sent to the engine (Engine.Log)");
    for l in engine.logs() {
        println!(
            "  [{}] {} {}",
            LogSeverity::try_from(l.severity).map(|s| s.as_str_name()).unwrap_or("?"),
            l.urn,
            l.message
        );
    }
    p.client.cancel(()).await?;
    let status = p.wait(Duration::from_secs(5)).await;
    println!("\nCancel sent; plugin exited: {}", status.map(|s| s.to_string()).unwrap_or_else(|| "no".into()));
    Ok(())
}
