//! A plain component: by args, then by value in a fresh process; what the
//! value pins (the digest, the grants); sources from the store.

use super::*;

#[tokio::test]
async fn a_component_by_args_then_by_value_in_a_fresh_process() {
    let bench = Bench::new().await;
    // The component lives in the user's project, where `pulumi package add` was run.
    let project = bench.dir.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let wasm = project.join("random.wasm");
    std::fs::copy(component("random-provider"), &wasm).unwrap();
    let digest = sha256_of(&wasm);
    let version = env!("CARGO_PKG_VERSION");

    // Before Parameterize it is the bare base provider, and says what to do.
    let mut p = bench.start("store").await;
    assert_eq!(p.client.get_plugin_info(()).await.unwrap().into_inner().version, version);
    let base = schema(&mut p, "", "").await;
    assert_eq!(base["name"], "wasm");
    let err = p.client.check(CheckRequest { r#type: STRING.into(), ..Default::default() }).await.unwrap_err();
    assert_status(&err, Code::FailedPrecondition, &["pulumi package add wasm"]);

    // `pulumi package add wasm ./random.wasm`.
    let added = by_args(&mut p, &[wasm.to_str().unwrap()]).await.unwrap();
    assert_eq!((added.name.as_str(), added.version.as_str()), ("random", version));
    let first_schema = schema(&mut p, "", "").await;
    assert_eq!(first_schema["name"], "random");
    assert_eq!(first_schema["version"], version);
    assert!(first_schema["resources"][STRING].is_object());
    let value = value_of(&first_schema);
    let decoded: Json = serde_json::from_slice(&value).unwrap();
    assert_eq!(decoded["component"]["digest"], format!("sha256:{digest}"), "{decoded}");
    assert_eq!(decoded["component"]["name"], "random");
    p.boot(&bench.engine.address, json!({})).await.unwrap();
    let first = random_lifecycle(&mut p).await;
    drop(p);

    // A later run: a fresh process gets the value, and behaves identically.
    let mut p = bench.start("store").await;
    let again = by_value(&mut p, "random", version, &value).await.unwrap();
    assert_eq!((again.name.as_str(), again.version.as_str()), ("random", version));
    assert_eq!(schema(&mut p, "random", version).await, first_schema);
    p.boot(&bench.engine.address, json!({})).await.unwrap();
    assert_eq!(random_lifecycle(&mut p).await, first);
    drop(p);

    // The value is for one package: another name is refused (the engine's own check, made early).
    let mut p = bench.start("store").await;
    let err = by_value(&mut p, "other", version, &value).await.unwrap_err();
    assert_status(&err, Code::InvalidArgument, &["random", "other"]);

    // With an empty store the recorded file is read again, its digest checked,
    // and the bytes kept in that store's blobs for the runs after.
    let blob = |store: &str| bench.store(store).join("blobs/sha256").join(format!("{digest}.wasm"));
    assert!(!blob("empty-store").exists());
    let mut p = bench.start("empty-store").await;
    by_value(&mut p, "random", version, &value).await.unwrap();
    drop(p);
    assert!(blob("empty-store").is_file(), "the refetched bytes are kept in the store");
    assert_eq!(sha256_of(&blob("empty-store")), digest);

    // The file changed since (and no copy is cached): refused, naming both digests.
    std::fs::copy(component("echo-provider"), &wasm).unwrap();
    let mut p = bench.start("another-empty-store").await;
    let err = by_value(&mut p, "random", version, &value).await.unwrap_err();
    assert_status(
        &err,
        Code::FailedPrecondition,
        &[&format!("sha256:{digest}"), &format!("sha256:{}", sha256_of(&wasm))],
    );
    drop(p);
    assert!(!bench.store("another-empty-store").join("blobs").exists(), "refused bytes are not kept");
    // ... while the stores that cached the original (by args, and by the
    // refetch above) still have exactly those bytes, which run; the user is
    // told the file changed and how to take the new build.
    for store in ["store", "empty-store"] {
        let mut p = bench.start(store).await;
        by_value(&mut p, "random", version, &value).await.unwrap_or_else(|e| panic!("{store}: {e}"));
        let said = p.stderr_with("has changed since", std::time::Duration::from_secs(10)).await;
        assert!(
            said.contains(&format!("pulumi package add wasm {}", wasm.canonicalize().unwrap().display())),
            "{said}"
        );
    }

    // A forged value (the digest edited) is refused too.
    let mut forged = decoded.clone();
    forged["component"]["digest"] = json!(format!("sha256:{}", "0".repeat(64)));
    let mut p = bench.start("another-empty-store").await;
    let err = by_value(&mut p, "random", version, &serde_json::to_vec(&forged).unwrap()).await.unwrap_err();
    assert_status(&err, Code::FailedPrecondition, &["pins sha256:0000", "pulumi package add wasm "]);
    let err = by_value(&mut p, "random", version, b"not json").await.unwrap_err();
    assert_status(&err, Code::InvalidArgument, &["bad parameter value"]);
}

#[tokio::test]
async fn the_parameterized_provider_leaves_long_asset_texts_in_the_host() {
    let bench = Bench::new().await;
    let mut p = bench.start("store").await;
    let hostile = component("hostile-provider");
    by_args(&mut p, &[hostile.to_str().unwrap()]).await.unwrap();
    let asset = json!({ SIG_KEY: ASSET_SIG, "text": "t".repeat(4096) });
    let args = json!({ "asset": asset, "read": true });
    let req = InvokeRequest { tok: "hostile:index:held".into(), args: Some(to_struct(args)), preview: false };
    let out = from_struct(p.client.invoke(req).await.unwrap().into_inner().r#return.as_ref());
    assert_eq!(out["held"], json!(true), "the text reached the routed component as a handle");
    assert_eq!((&out["length"], &out["head"]), (&json!(4096.0), &json!("t".repeat(16))));
    assert_eq!(out["asset"], asset);
}

/// A component's own resources, registered from its `construct`, are
/// routed as the package's generated SDK routes them: by a reference for
/// `wasm` parameterized with the value its schema hands out.
#[tokio::test]
async fn a_components_own_resources_from_construct_carry_its_package() {
    let bench = Bench::new().await;
    let mut p = bench.start("store").await;
    let wasm = component("probe-provider");
    by_args(&mut p, &[wasm.to_str().unwrap()]).await.unwrap();
    let value = value_of(&schema(&mut p, "", "").await);
    let monitor = e2e_tests::TestMonitor::start().await;
    let req = ConstructRequest {
        monitor_endpoint: monitor.address.clone(),
        r#type: "probe:index:Component".into(),
        name: "c".into(),
        parent: "urn:pulumi:dev::proj::pulumi:pulumi:Stack::proj-dev".into(),
        inputs: Some(to_struct(json!({ "x": 1 }))),
        ..Default::default()
    };
    p.client.construct(req).await.unwrap();
    let received = monitor.received();
    let [package] = received.packages.as_slice() else { panic!("one package: {:?}", received.packages) };
    assert_eq!((package.name.as_str(), package.version.as_str()), ("wasm", env!("CARGO_PKG_VERSION")));
    let made = package.parameterization.as_ref().unwrap();
    assert_eq!((made.name.as_str(), made.version.as_str()), ("probe", env!("CARGO_PKG_VERSION")));
    assert_eq!(made.value, value, "the value the schema hands out, which the SDK registers too");
    let child = received.registrations.iter().find(|r| r.r#type == "probe:index:Thing").unwrap();
    assert_eq!(child.package_ref, "pkg-1");
    assert!(received.reads.iter().all(|r| r.package_ref == "pkg-1") && !received.reads.is_empty());
}

#[tokio::test]
async fn args_are_validated_and_sources_resolve_from_the_store() {
    let bench = Bench::new().await;
    let version = env!("CARGO_PKG_VERSION");
    let mut p = bench.start("store").await;
    let err = by_args(&mut p, &[]).await.unwrap_err();
    assert_status(&err, Code::InvalidArgument, &["usage: pulumi package add wasm"]);
    let err = by_args(&mut p, &["--allow-http", "ftp://x", "random.wasm"]).await.unwrap_err();
    assert_status(&err, Code::InvalidArgument, &["ftp://x"]);
    let err = by_args(&mut p, &["/nowhere/random.wasm"]).await.unwrap_err();
    assert_status(&err, Code::NotFound, &["/nowhere/random.wasm"]);
    let err = by_args(&mut p, &["random@^0.1"]).await.unwrap_err();
    assert_status(&err, Code::NotFound, &["no installed package named 'random'"]);

    // Installed, `name@requirement` finds it.
    let out = std::process::Command::new(host_bin())
        .args(["install", component("random-provider").to_str().unwrap()])
        .env("PULUMI_WASM_STORE", bench.store("store"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let added = by_args(&mut p, &["random@^0.1"]).await.unwrap();
    assert_eq!((added.name.as_str(), added.version.as_str()), ("random", version));
    let value: Json = serde_json::from_slice(&value_of(&schema(&mut p, "", "").await)).unwrap();
    assert_eq!(value["component"]["source"], format!("random@={version}"));

    // A component that is not a provider is refused clearly, and the host keeps serving.
    let junk = bench.dir.path().join("junk.wasm");
    std::fs::write(&junk, b"\0asm junk").unwrap();
    let mut q = bench.start("store").await;
    let err = by_args(&mut q, &[junk.to_str().unwrap()]).await.unwrap_err();
    assert_status(&err, Code::FailedPrecondition, &["not a WebAssembly component"]);
    let kept = bench.store("store").join("blobs/sha256").join(format!("{}.wasm", sha256_of(&junk)));
    assert!(!kept.exists(), "bytes that are not a provider are not kept in the store");
    assert_eq!(by_args(&mut q, &["random@^0.1"]).await.unwrap().name, "random");
}

const ITEM: &str = "kv:index:Item";

pub(super) async fn kv_create(p: &mut Plugin, key: &str) -> Result<CreateResponse, Status> {
    let urn = format!("urn:pulumi:dev::proj::{ITEM}::{key}");
    let props = to_struct(json!({"key": key, "value": "v"}));
    let req = CreateRequest {
        urn,
        name: key.into(),
        r#type: ITEM.into(),
        properties: Some(props),
        timeout: 30.0,
        ..Default::default()
    };
    p.client.create(req).await.map(|r| r.into_inner())
}

#[tokio::test]
async fn grants_given_to_package_add_are_pinned_in_the_value() {
    let api = KvApi::start(None).await;
    let bench = Bench::new().await;
    let kv = component("kv-provider");
    let version = env!("CARGO_PKG_VERSION");

    // Without a grant the provider cannot reach its API, and says which grant is missing.
    let mut p = bench.start("store").await;
    by_args(&mut p, &[kv.to_str().unwrap()]).await.unwrap();
    p.boot(&bench.engine.address, json!({"endpoint": api.url()})).await.unwrap();
    let err = kv_create(&mut p, "a").await.unwrap_err();
    assert_status(&err, Code::FailedPrecondition, &["missing grant", &api.url()]);
    drop(p);

    // A policy section for the name the component gives itself is not its
    // grant here: any component can take that name.
    let policy = bench.dir.path().join("kv-policy.toml");
    std::fs::write(&policy, format!("[providers.kv]\nhttp = [\"{}\"]\nenv = [\"HOME\"]\n", api.url())).unwrap();
    let mut p = bench.start_with("store", &[("PULUMI_WASM_POLICY", policy.to_str().unwrap())]).await;
    by_args(&mut p, &[kv.to_str().unwrap()]).await.unwrap();
    let decoded: Json = serde_json::from_slice(&value_of(&schema(&mut p, "", "").await)).unwrap();
    assert_eq!((&decoded["grants"]["http"], &decoded["grants"]["env"]), (&json!([]), &json!([])), "{decoded}");
    assert!(p.stderr_with("is not applied", std::time::Duration::from_secs(10)).await.contains("[providers.kv]"));
    drop(p);

    // `pulumi package add wasm -- --allow-http <api> kv.wasm`: the grant goes into the value.
    let mut p = bench.start("store").await;
    by_args(&mut p, &["--allow-http", &api.url(), kv.to_str().unwrap()]).await.unwrap();
    let value = value_of(&schema(&mut p, "", "").await);
    let decoded: Json = serde_json::from_slice(&value).unwrap();
    assert_eq!(decoded["grants"]["http"], json!([api.url()]), "{decoded}");
    drop(p);

    // A later run on this machine needs no policy: the value carries the
    // grant, which `package add` here approved (approval.rs: elsewhere).
    let mut p = bench.start("store").await;
    by_value(&mut p, "kv", version, &value).await.unwrap();
    p.boot(&bench.engine.address, json!({"endpoint": api.url()})).await.unwrap();
    let created = kv_create(&mut p, "b").await.unwrap_or_else(|e| panic!("{e}; stderr: {}", p.stderr()));
    assert_eq!(created.id, "b");
    assert!(api.item("b").is_some());
}

/// An engine that names no provider in Configure (neither its type nor its
/// URN): one package's configuration, secrets among it, reaches only the
/// component serving that package, not every component in the process.
#[tokio::test]
async fn a_configure_naming_no_provider_reaches_only_the_packages_its_variables_name() {
    let bench = Bench::new().await;
    let mut p = bench.start("store").await;
    by_args(&mut p, &[component("echo-provider").to_str().unwrap()]).await.unwrap();
    by_args(&mut p, &[component("random-provider").to_str().unwrap()]).await.unwrap();
    let configure = |package: &str| ConfigureRequest {
        variables: [(format!("{package}:token"), "s3cret".to_owned())].into(),
        args: Some(to_struct(json!({ "token": "s3cret" }))),
        accept_secrets: true,
        accept_resources: true,
        ..Default::default()
    };
    let config = |p: &mut Plugin| {
        let req = InvokeRequest { tok: "echo:index:config".into(), args: Some(to_struct(json!({}))), preview: false };
        let mut client = p.client.clone();
        async move { from_struct(client.invoke(req).await.unwrap().into_inner().r#return.as_ref()) }
    };
    p.client.configure(configure("random")).await.unwrap();
    let seen = config(&mut p).await;
    assert_eq!((&seen["config"], &seen["configures"]), (&json!({}), &json!(0.0)), "random's did not reach echo");
    p.client.configure(configure("echo")).await.unwrap();
    assert_eq!(config(&mut p).await["config"]["token"], "s3cret");
    let err = p.client.configure(configure("aws")).await.unwrap_err();
    assert_status(&err, Code::InvalidArgument, &["package aws", "does not serve"]);
}

/// The components the parameterized provider serves share one engine's
/// instance slots (`3 * max-instances + max-waiting + 4`: 7 here). Instances
/// one component keeps idle give way when another needs a slot: seven
/// components keep one each from a call, then echo needs a second.
#[tokio::test]
async fn components_share_the_instance_slots_and_idle_ones_give_way() {
    let bench = Bench::new().await;
    let small = [("PULUMI_WASM_MAX_INSTANCES", "1"), ("PULUMI_WASM_MAX_WAITING", "0")];
    let mut p = bench.start_with("store", &small).await;
    for name in ["random", "echo", "pets", "probe", "records", "hostile", "kv"] {
        let file = bench.dir.path().join(format!("{name}.wasm"));
        let crate_name = if name == "records" { name.to_owned() } else { format!("{name}-provider") };
        std::fs::copy(component(&crate_name), &file).unwrap();
        by_args(&mut p, &[file.to_str().unwrap()]).await.unwrap_or_else(|e| panic!("{name}: {e}"));
        // A call leaves the instance it ran on idle.
        let version = env!("CARGO_PKG_VERSION").to_owned();
        let req = GetSchemaRequest { version: 0, subpackage_name: name.into(), subpackage_version: version };
        p.client.get_schema(req).await.unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    // Echo's instance sleeps in an invoke; a Construct (which echo does not
    // implement) needs another.
    let mut client = p.client.clone();
    let args = Some(to_struct(json!({ "sleepMs": 1500 })));
    let sleeping = tokio::spawn(async move {
        client.invoke(InvokeRequest { tok: "echo:index:config".into(), args, preview: false }).await
    });
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let construct = ConstructRequest { r#type: "echo:index:Component".into(), name: "c".into(), ..Default::default() };
    let err = p.client.construct(construct).await.unwrap_err();
    assert_eq!(err.code(), Code::Unimplemented, "{err:?}");
    assert!(sleeping.await.unwrap().is_ok());
}

/// The parameterized provider says at Handshake that it takes the stack's
/// autonaming options, before it serves any component: echo, which takes
/// them, gets them; random, which does not, gets none (as the engine would
/// have it with a provider of its own that does not), and the user is told
/// once.
#[tokio::test]
async fn autonaming_options_reach_the_components_that_take_them() {
    use pulumirpc::check_request::{AutonamingOptions, autonaming_options::Mode};
    let bench = Bench::new().await;
    let mut p = bench.start("store").await;
    let request = ProviderHandshakeRequest { engine_address: bench.engine.address.clone(), ..Default::default() };
    let hs = p.client.handshake(request).await.unwrap().into_inner();
    assert!(hs.supports_autonaming_configuration);
    for name in ["echo", "random"] {
        let file = bench.dir.path().join(format!("{name}.wasm"));
        std::fs::copy(component(&format!("{name}-provider")), &file).unwrap();
        by_args(&mut p, &[file.to_str().unwrap()]).await.unwrap();
    }
    let options = || Some(AutonamingOptions { proposed_name: "proposed-1a2b".into(), mode: Mode::Enforce as i32 });
    let check = |type_: &str, news: Json| CheckRequest {
        urn: format!("urn:pulumi:dev::proj::{type_}::t"),
        r#type: type_.into(),
        news: Some(to_struct(news)),
        random_seed: vec![7; 32],
        autonaming: options(),
        ..Default::default()
    };
    let echoed = p.client.check(check("echo:index:Thing", json!({"name": "mine"}))).await.unwrap().into_inner();
    assert_eq!(from_struct(echoed.inputs.as_ref())["name"], "proposed-1a2b", "enforced by echo");
    for _ in 0..2 {
        let checked = p.client.check(check(STRING, json!({"length": 4}))).await.unwrap().into_inner();
        assert!(checked.failures.is_empty(), "{:?}", checked.failures);
    }
    let told = bench.engine.wait_for_log(|l| l.message.contains("does not take the stack's autonaming")).await;
    let told = told.expect("the user is told");
    assert!(told.message.starts_with("component random (package random)"), "{}", told.message);
    assert_eq!(told.urn, format!("urn:pulumi:dev::proj::{STRING}::t"));
    let times = bench.engine.logs().iter().filter(|l| l.message.contains("autonaming configuration")).count();
    assert_eq!(times, 1, "once");
}
