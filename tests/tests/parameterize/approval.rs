//! Grants pinned in a value run only where they were approved: the value
//! comes in an SDK, and whoever generated the SDK chose them.

use super::component::kv_create;
use super::*;

/// The approval id a refusal names: `<this plugin> approve <id>`.
fn approval_id(refusal: &Status) -> String {
    let (_, rest) = refusal.message().rsplit_once(" approve ").expect("the refusal names the command");
    rest.chars().take_while(char::is_ascii_hexdigit).collect()
}

/// `<exe> approve ids...` with the store `store`; its stdout.
fn approve_with(exe: &Path, bench: &Bench, store: &str, ids: &[&str]) -> Result<String, String> {
    let out = std::process::Command::new(exe)
        .arg("approve")
        .args(ids)
        .env("PULUMI_WASM_STORE", bench.store(store))
        .output()
        .unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    if out.status.success() { Ok(text(&out.stdout)) } else { Err(text(&out.stderr)) }
}

fn approve(bench: &Bench, store: &str, ids: &[&str]) -> Result<String, String> {
    approve_with(&host_bin(), bench, store, ids)
}

/// `<plugin> approve id` on a real terminal: util-linux `script` runs it on a
/// pseudo-terminal and types `answer` into it. Everything the terminal showed.
fn approve_on_terminal(bench: &Bench, store: &str, id: &str, answer: &str) -> String {
    use std::io::Write;
    let command = format!("'{}' approve {id}", bench.exe.display());
    assert!(!bench.exe.display().to_string().contains('\''), "quoted for the shell");
    let mut child = std::process::Command::new("script")
        .args(["--quiet", "--return", "--command", &command, "/dev/null"])
        .env("PULUMI_WASM_STORE", bench.store(store))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("util-linux `script` runs a command on a pseudo-terminal");
    child.stdin.take().unwrap().write_all(answer.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[tokio::test]
async fn pinned_grants_run_only_where_they_were_approved() {
    let api = KvApi::start(None).await;
    let bench = Bench::new().await;
    let kv = component("kv-provider");
    let version = env!("CARGO_PKG_VERSION");

    // Someone else runs `pulumi package add wasm --allow-http <api> kv.wasm`
    // and ships the SDK; on their machine the value runs as it is.
    let mut p = bench.start("author").await;
    by_args(&mut p, &["--allow-http", &api.url(), kv.to_str().unwrap()]).await.unwrap();
    let value = value_of(&schema(&mut p, "", "").await);
    drop(p);
    let mut p = bench.start("author").await;
    by_value(&mut p, "kv", version, &value).await.unwrap();
    drop(p);

    // Here, the same value is refused before anything is fetched or run, naming the grant and how to approve it.
    let mut p = bench.start("user").await;
    let refused = by_value(&mut p, "kv", version, &value).await.unwrap_err();
    assert_status(&refused, Code::FailedPrecondition, &["not approved", &format!("http \"{}\"", api.url())]);
    let id = approval_id(&refused);
    assert_eq!(id.len(), 64, "{}", refused.message());
    // It names the plugin itself, which takes `approve`: the user may not have pulumi-wasm.
    assert!(refused.message().contains(&format!("{} approve {id}", bench.exe.display())), "{}", refused.message());
    // Refused before anything is fetched: a value naming a source that is gone is refused the same way.
    let mut gone: Json = serde_json::from_slice(&value).unwrap();
    gone["component"]["source"] = json!("/nonexistent/kv.wasm");
    let gone = serde_json::to_vec(&gone).unwrap();
    let again = by_value(&mut p, "kv", version, &gone).await.unwrap_err();
    assert_status(&again, Code::FailedPrecondition, &["not approved", "/nonexistent/kv.wasm"]);
    assert_eq!(approval_id(&again), id, "where it comes from is not what is approved");
    // The process keeps serving: the same package from a value without grants is fine.
    let plain = {
        let mut q = bench.start("author").await;
        by_args(&mut q, &[kv.to_str().unwrap()]).await.unwrap();
        value_of(&schema(&mut q, "", "").await)
    };
    by_value(&mut p, "kv", version, &plain).await.unwrap();
    drop(p);

    // PULUMI_WASM_APPROVED (e.g. CI) lets it run for that process.
    let mut p = bench.start_with("user", &[("PULUMI_WASM_APPROVED", &format!("{},{id}", "0".repeat(64)))]).await;
    by_value(&mut p, "kv", version, &value).await.unwrap();
    p.boot(&bench.engine.address, json!({"endpoint": api.url()})).await.unwrap();
    assert_eq!(kv_create(&mut p, "a").await.unwrap().id, "a");
    drop(p);

    // So does a policy that gives the grant to every provider; not a section
    // for the name the value claims, which any component can take.
    let policy = bench.dir.path().join("policy.toml");
    std::fs::write(&policy, format!("[providers.kv]\nhttp = [\"{}\"]\n", api.url())).unwrap();
    let mut p = bench.start_with("user", &[("PULUMI_WASM_POLICY", policy.to_str().unwrap())]).await;
    let refused = by_value(&mut p, "kv", version, &value).await.unwrap_err();
    assert_status(&refused, Code::FailedPrecondition, &["not approved"]);
    drop(p);
    std::fs::write(&policy, format!("[defaults]\nhttp = [\"{}\"]\n", api.url())).unwrap();
    let mut p = bench.start_with("user", &[("PULUMI_WASM_POLICY", policy.to_str().unwrap())]).await;
    by_value(&mut p, "kv", version, &value).await.unwrap();
    drop(p);

    // Only what was asked for can be approved; `approve` shows it again and
    // asks, and without a terminal to ask on approves only with --yes.
    let unknown = "ab".repeat(32);
    assert!(approve(&bench, "user", &[&unknown]).unwrap_err().contains("nothing asked for approval"));
    let unasked = approve_with(&bench.exe, &bench, "user", &[&id]).unwrap_err();
    assert!(unasked.contains("add --yes"), "{unasked}");
    let mut p = bench.start("user").await;
    by_value(&mut p, "kv", version, &value).await.unwrap_err();
    drop(p);
    // On a terminal it shows the grants, then asks; anything but yes approves nothing.
    let declined = approve_on_terminal(&bench, "user", &id, "n\n");
    let asked = declined.find("Approve these grants? [y/N]").expect(&declined);
    assert!(declined[..asked].contains(&api.url()), "shown before it asks: {declined}");
    assert!(declined.contains(&format!("{id} was not approved")), "{declined}");
    let mut p = bench.start("user").await;
    by_value(&mut p, "kv", version, &value).await.unwrap_err();
    drop(p);
    let shown = approve_with(&bench.exe, &bench, "user", &[&id, "--yes"]).unwrap();
    assert!(
        shown.contains(&format!("kv {version} ("))
            && shown.contains(&api.url())
            && shown.contains(&format!("approved {id}")),
        "{shown}"
    );
    assert!(shown.contains(kv.to_str().unwrap()), "where it comes from: {shown}");
    assert!(approve(&bench, "user", &[&id]).unwrap().contains("approved already"));
    let listed = approve(&bench, "user", &["--list"]).unwrap();
    assert!(listed.contains(&id) && listed.contains(&api.url()), "{listed}");
    let mut p = bench.start("user").await;
    by_value(&mut p, "kv", version, &value).await.unwrap();
    p.boot(&bench.engine.address, json!({"endpoint": api.url()})).await.unwrap();
    assert_eq!(kv_create(&mut p, "b").await.unwrap().id, "b");
    drop(p);

    // One grant more in the value is another approval.
    let mut more: Json = serde_json::from_slice(&value).unwrap();
    more["grants"]["env"] = json!(["HOME"]);
    let more = serde_json::to_vec(&more).unwrap();
    let mut p = bench.start("user").await;
    let refused = by_value(&mut p, "kv", version, &more).await.unwrap_err();
    assert_status(&refused, Code::FailedPrecondition, &["not approved", "env \"HOME\""]);
    let more_id = approval_id(&refused);
    assert_ne!(more_id, id);
    drop(p);
    // A yes on the terminal approves it.
    let accepted = approve_on_terminal(&bench, "user", &more_id, "y\n");
    assert!(accepted.contains("env \"HOME\"") && accepted.contains(&format!("approved {more_id}")), "{accepted}");
    let mut p = bench.start("user").await;
    by_value(&mut p, "kv", version, &more).await.unwrap();
    drop(p);

    // Taken back, the first value is refused again.
    assert!(approve(&bench, "user", &["--revoke", &id]).unwrap().contains("revoked"));
    let mut p = bench.start("user").await;
    let refused = by_value(&mut p, "kv", version, &value).await.unwrap_err();
    assert_eq!(approval_id(&refused), id);
}

/// A teammate's checkout: `pulumi package add` in Alice's project pins the
/// component file and the directory inside it relative to the project, so
/// the value means Bob's own checkout's files, wherever it is. Bob is asked
/// to approve what they are on his machine; nothing climbs out of it.
#[tokio::test]
async fn files_inside_the_project_are_pinned_relative_to_it_for_teammates() {
    let bench = Bench::new().await;
    let checkout = |at: &str, greeting: &str| {
        let project = bench.dir.path().join(at);
        std::fs::create_dir_all(project.join("data")).unwrap();
        std::fs::create_dir_all(project.join("stacks")).unwrap();
        std::fs::write(project.join("Pulumi.yaml"), "name: infra\nruntime: yaml\n").unwrap();
        std::fs::write(project.join("data/greeting.txt"), greeting).unwrap();
        std::fs::copy(component("hostile-provider"), project.join("hostile.wasm")).unwrap();
        project
    };
    let read = |p: &mut Plugin| {
        let mut client = p.client.clone();
        async move {
            let args = to_struct(json!({ "path": "/data/greeting.txt" }));
            let req = InvokeRequest { tok: "hostile:index:readOutside".into(), args: Some(args), preview: false };
            let r = client.invoke(req).await.unwrap().into_inner();
            from_struct(r.r#return.as_ref())["content"].clone()
        }
    };
    let alice = checkout("alice/infra", "alice's");
    let mut p = bench.start_in("alice-store", &[], Some(&alice)).await;
    // Relative to where `package add` runs, and with a trailing `/`.
    by_args(&mut p, &["--allow-dir", "data/:/data:ro", "./hostile.wasm"]).await.unwrap();
    let value = value_of(&schema(&mut p, "", "").await);
    let decoded: Json = serde_json::from_slice(&value).unwrap();
    assert_eq!(decoded["component"]["source"], "./hostile.wasm", "{decoded}");
    assert_eq!(decoded["grants"]["dirs"][0]["host"], "./data", "{decoded}");
    p.boot(&bench.engine.address, json!({})).await.unwrap();
    assert_eq!(read(&mut p).await, json!("alice's"));
    drop(p);
    // Alice's later runs, from anywhere in her project, need no approval.
    let mut p = bench.start_in("alice-store", &[], Some(&alice.join("stacks"))).await;
    by_value(&mut p, "hostile", env!("CARGO_PKG_VERSION"), &value).await.unwrap();
    p.boot(&bench.engine.address, json!({})).await.unwrap();
    assert_eq!(read(&mut p).await, json!("alice's"));
    drop(p);

    // Bob: another checkout, an empty store (the file is read from his checkout).
    let bob = checkout("bob/work/infra", "bob's");
    let mut p = bench.start_in("bob-store", &[], Some(&bob)).await;
    let refused = by_value(&mut p, "hostile", env!("CARGO_PKG_VERSION"), &value).await.unwrap_err();
    let shown = format!("dir {:?} as \"/data\" (read-only)", bob.join("data").display().to_string());
    assert!(refused.message().contains(&shown), "he is shown his own directory: {}", refused.message());
    assert!(!refused.message().contains(alice.to_str().unwrap()), "{}", refused.message());
    let id = approval_id(&refused);
    drop(p);
    let mut p = bench.start_in("bob-store", &[("PULUMI_WASM_APPROVED", &id)], Some(&bob)).await;
    by_value(&mut p, "hostile", env!("CARGO_PKG_VERSION"), &value).await.unwrap();
    p.boot(&bench.engine.address, json!({})).await.unwrap();
    assert_eq!(read(&mut p).await, json!("bob's"));
    drop(p);

    // A value whose relative directory climbs out of the project is refused.
    let mut forged = decoded.clone();
    forged["grants"]["dirs"][0]["host"] = json!("./data/../../../alice/infra/data");
    let forged = serde_json::to_vec(&forged).unwrap();
    let mut p = bench.start_in("bob-store", &[], Some(&bob)).await;
    let e = by_value(&mut p, "hostile", env!("CARGO_PKG_VERSION"), &forged).await.unwrap_err();
    assert_status(&e, Code::InvalidArgument, &["stays inside it"]);
}
