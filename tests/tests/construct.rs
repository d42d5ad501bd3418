//! Component providers through the real host process: Construct and Call of
//! the `pets` example against a stand-in `ResourceMonitor` that records what
//! it receives (registrations, parents, options, dependencies, outputs), and
//! the monitor refused outside Construct and Call (`probe` test guest).

use std::collections::HashMap;

use e2e_tests::json::{OUTPUT_SIG, RESOURCE_REF_SIG, SIG_KEY, secret};
use e2e_tests::monitor::{id_of, urn};
use e2e_tests::{Launch, Plugin, TestEngine, TestMonitor, booted, component, from_struct, older_component, to_struct};
use pulumirpc::*;
use serde_json::{Value as Json, json};
use tonic::Code;

const KENNEL: &str = "pets:index:Kennel";
const PET: &str = "random:index:RandomPet";
const STACK_URN: &str = "urn:pulumi:dev::proj::pulumi:pulumi:Stack::proj-dev";
const DEP_URN: &str = "urn:pulumi:dev::proj::random:index:RandomString::owner-name";
const OTHER_DEP: &str = "urn:pulumi:dev::proj::random:index:RandomId::other";
const PROVIDER_REF: &str = "urn:pulumi:dev::proj::pulumi:providers:random::default::prov-1";
const UNKNOWN: &str = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";
const NOT_AVAILABLE: &str = "the resource monitor is only available during construct and call";

async fn serve(crate_name: &str) -> (TestEngine, Plugin) {
    granted(&component(crate_name)).await
}

/// Started with the packages the test components ask the engine for
/// granted: `random` (the kennel's pets), `test` (the probe's failing invoke).
async fn granted(file: &std::path::Path) -> (TestEngine, Plugin) {
    let launch = Launch::new().arg("--allow-package").arg("random").arg("--allow-package").arg("test");
    launched_file(file, &launch).await
}

fn deps(pairs: &[(&str, &[&str])]) -> HashMap<String, construct_request::PropertyDependencies> {
    pairs
        .iter()
        .map(|(k, urns)| {
            (
                k.to_string(),
                construct_request::PropertyDependencies { urns: urns.iter().map(|u| u.to_string()).collect() },
            )
        })
        .collect()
}

/// A Construct of a kennel with every option the engine propagates.
fn construct(monitor: &TestMonitor, inputs: Json, accepts_output_values: bool, dry_run: bool) -> ConstructRequest {
    ConstructRequest {
        project: "proj".into(),
        stack: "dev".into(),
        monitor_endpoint: monitor.address.clone(),
        dry_run,
        accepts_output_values,
        r#type: KENNEL.into(),
        name: "k".into(),
        parent: STACK_URN.into(),
        inputs: Some(to_struct(inputs)),
        input_dependencies: deps(&[("owner", &[DEP_URN])]),
        providers: HashMap::from([("random".to_string(), PROVIDER_REF.to_string())]),
        dependencies: vec![OTHER_DEP.into()],
        protect: Some(true),
        additional_secret_outputs: vec!["size".into()],
        custom_timeouts: Some(construct_request::CustomTimeouts {
            create: "5m".into(),
            update: "6m".into(),
            delete: "7m".into(),
            read: "8m".into(),
        }),
        deleted_with: OTHER_DEP.into(),
        delete_before_replace: Some(true),
        ignore_changes: vec!["nameLength".into()],
        replace_on_changes: vec!["owner".into()],
        retain_on_delete: Some(true),
        aliases: vec![
            Alias { alias: Some(alias::Alias::Urn(OLD_KENNEL_URN.into())) },
            Alias {
                alias: Some(alias::Alias::Spec(alias::Spec {
                    name: "old-k".into(),
                    parent: Some(alias::spec::Parent::NoParent(true)),
                    ..Default::default()
                })),
            },
        ],
        resource_hooks: Some(construct_request::ResourceHooksBinding {
            before_create: vec!["audit".into()],
            on_error: vec!["page".into()],
            ..Default::default()
        }),
        replace_with: vec![OTHER_DEP.into()],
        replacement_trigger: Some(trigger()),
        ..Default::default()
    }
}

/// A replacement trigger: any value, here a string.
fn trigger() -> prost_types::Value {
    prost_types::Value { kind: Some(prost_types::value::Kind::StringValue("generation-2".into())) }
}

const OLD_KENNEL_URN: &str = "urn:pulumi:dev::proj::pets:index:Kennel::old";

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

#[tokio::test]
async fn construct_registers_the_component_and_its_children_through_the_monitor() {
    registers_the_component_and_its_children(&component("pets-provider")).await;
}

/// The same through a component built against 0.2.0, which has every
/// option 0.3.0 has: only values change shape, through the host's adapter
/// both ways (the request's and the monitor's).
#[tokio::test]
async fn a_0_2_0_component_constructs_through_the_monitor_with_every_option() {
    registers_the_component_and_its_children(&older_component("0.2.0", "pets_provider")).await;
}

async fn registers_the_component_and_its_children(file: &std::path::Path) {
    let (_engine, mut p) = granted(file).await;
    let monitor = TestMonitor::start().await;
    let inputs = json!({ "size": 2, "nameLength": 3, "owner": secret(json!("ann")) });
    let r = p.client.construct(construct(&monitor, inputs, false, false)).await.unwrap().into_inner();

    let kennel_urn = urn(KENNEL, "k", STACK_URN);
    let received = monitor.received();
    let names: Vec<&str> = received.registrations.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["k", "k-pet-0", "k-pet-1"], "the component first, then its children in order");

    // The component itself: the options of the Construct request, propagated.
    let k = monitor.registration("k");
    assert_eq!(k.r#type, KENNEL);
    assert!(!k.custom && !k.remote);
    assert_eq!(k.parent, STACK_URN);
    assert_eq!(k.protect, Some(true));
    assert_eq!(k.dependencies, [OTHER_DEP]);
    assert_eq!(k.providers, HashMap::from([("random".to_string(), PROVIDER_REF.to_string())]));
    let timeouts = k.custom_timeouts.as_ref().expect("custom timeouts");
    let all = [&timeouts.create, &timeouts.update, &timeouts.delete, &timeouts.read].map(String::as_str);
    assert_eq!(all, ["5m", "6m", "7m", "8m"]);
    let hooks = k.hooks.as_ref().expect("resource hooks");
    assert_eq!((&hooks.before_create[..], &hooks.on_error[..]), (&["audit".to_owned()][..], &["page".to_owned()][..]));
    assert_eq!(k.replace_with, [OTHER_DEP]);
    assert_eq!(k.replacement_trigger, Some(trigger()), "any value, not only a map");
    assert_eq!(k.deleted_with, OTHER_DEP);
    assert!(k.delete_before_replace && k.delete_before_replace_defined);
    assert_eq!(k.ignore_changes, ["nameLength"]);
    assert_eq!(k.replace_on_changes, ["owner"]);
    assert_eq!(k.retain_on_delete, Some(true));
    assert_eq!(k.additional_secret_outputs, ["size"]);
    assert_eq!(k.aliases, construct(&monitor, json!({}), false, false).aliases, "the request's aliases, as sent");
    assert!(k.accept_secrets && k.accept_resources, "the host takes secrets and references back");

    // The children: custom, parented to the component, the component's
    // providers, inputs with the secret kept and its dependency tracked.
    for (i, name) in ["k-pet-0", "k-pet-1"].into_iter().enumerate() {
        let pet = monitor.registration(name);
        assert_eq!(pet.r#type, PET, "{name}");
        assert!(pet.custom, "{name}");
        assert_eq!(pet.parent, kennel_urn, "child {i} is parented to the component");
        assert_eq!(pet.providers.get("random").map(String::as_str), Some(PROVIDER_REF));
        assert_eq!(from_struct(pet.object.as_ref()), json!({ "length": 3.0, "prefix": secret(json!("ann")) }));
        let prefix_deps = pet.property_dependencies.get("prefix").map(|d| d.urns.clone());
        assert_eq!(prefix_deps, Some(vec![DEP_URN.to_string()]), "inputDependencies reach the child");
        assert_eq!(pet.dependencies, [DEP_URN]);
        assert_eq!(pet.protect, None, "the component's own options are not forced on children");
    }

    // The component's outputs, registered once, secrets kept.
    assert_eq!(received.outputs.len(), 1);
    assert_eq!(received.outputs[0].urn, kennel_urn);
    let pet_names = json!([secret(json!(id_of("k-pet-0"))), secret(json!(id_of("k-pet-1")))]);
    assert_eq!(
        from_struct(received.outputs[0].outputs.as_ref()),
        json!({ "petNames": pet_names, "owner": secret(json!("ann")), "size": 2.0 })
    );

    // The Construct response: plain state and state dependencies.
    assert_eq!(r.urn, kennel_urn);
    assert_eq!(
        from_struct(r.state.as_ref()),
        json!({ "petNames": pet_names, "owner": secret(json!("ann")), "size": 2.0 })
    );
    let state_deps: HashMap<String, Vec<String>> =
        r.state_dependencies.into_iter().map(|(k, d)| (k, sorted(d.urns))).collect();
    assert_eq!(
        state_deps,
        HashMap::from([
            ("petNames".to_string(), vec![urn(PET, "k-pet-0", &kennel_urn), urn(PET, "k-pet-1", &kennel_urn)]),
            ("owner".to_string(), vec![DEP_URN.to_string()]),
        ])
    );
}

#[tokio::test]
async fn construct_returns_output_values_when_the_engine_accepts_them() {
    let (_engine, mut p) = serve("pets-provider").await;
    let monitor = TestMonitor::start().await;
    let inputs = json!({ "size": 1, "owner": secret(json!("bo")) });
    let r = p.client.construct(construct(&monitor, inputs, true, false)).await.unwrap().into_inner();
    let kennel_urn = urn(KENNEL, "k", STACK_URN);
    let pet_urn = urn(PET, "k-pet-0", &kennel_urn);
    assert_eq!(
        from_struct(r.state.as_ref()),
        json!({
            // The secret names inside; the output value itself is not secret.
            "petNames": { SIG_KEY: OUTPUT_SIG, "value": [secret(json!(id_of("k-pet-0")))], "dependencies": [pet_urn] },
            "owner": { SIG_KEY: OUTPUT_SIG, "value": "bo", "secret": true, "dependencies": [DEP_URN] },
            // The host leaves out `secret: false` and empty dependencies.
            "size": { SIG_KEY: OUTPUT_SIG, "value": 1.0 },
        })
    );
}

#[tokio::test]
async fn construct_during_a_preview_leaves_unknown_ids_unknown() {
    let (_engine, mut p) = serve("pets-provider").await;
    let monitor = TestMonitor::preview().await;
    let r = p.client.construct(construct(&monitor, json!({ "size": 2 }), false, true)).await.unwrap().into_inner();
    let state = from_struct(r.state.as_ref());
    assert_eq!(state["petNames"], json!([UNKNOWN, UNKNOWN]), "{state}");
    assert_eq!(monitor.received().registrations.len(), 3);
}

/// A component built against 0.1.0 constructs through the host's adapter:
/// the monitor's imports of its version, and the options 0.1.0 carries
/// (what it cannot see, it cannot pass on).
#[tokio::test]
async fn a_0_1_0_component_constructs_through_the_monitor() {
    let (_engine, mut p) = granted(&older_component("0.1.0", "pets_provider")).await;
    let monitor = TestMonitor::start().await;
    let inputs = json!({ "size": 2, "nameLength": 3, "owner": secret(json!("ann")) });
    let r = p.client.construct(construct(&monitor, inputs, false, false)).await.unwrap().into_inner();
    assert_eq!(r.urn, urn(KENNEL, "k", STACK_URN));
    let names: Vec<String> = monitor.received().registrations.iter().map(|r| r.name.clone()).collect();
    assert_eq!(names, ["k", "k-pet-0", "k-pet-1"]);
    let k = monitor.registration("k");
    assert_eq!((k.protect, k.retain_on_delete), (Some(true), Some(true)));
    assert_eq!(k.aliases, construct(&monitor, json!({}), false, false).aliases);
    let timeouts = k.custom_timeouts.as_ref().expect("custom timeouts");
    assert_eq!((timeouts.create.as_str(), timeouts.read.as_str()), ("5m", ""), "0.1.0 has no read timeout");
    assert!(k.hooks.is_none() && k.replace_with.is_empty() && k.replacement_trigger.is_none());
    // Values both ways through the adapter: a secret into the guest and
    // out to the monitor, and the outputs it registers.
    let pet = monitor.registration("k-pet-1");
    assert_eq!(from_struct(pet.object.as_ref()), json!({ "length": 3.0, "prefix": secret(json!("ann")) }));
    let received = monitor.received();
    let pet_names = json!([secret(json!(id_of("k-pet-0"))), secret(json!(id_of("k-pet-1")))]);
    assert_eq!(
        from_struct(received.outputs[0].outputs.as_ref()),
        json!({ "petNames": pet_names, "owner": secret(json!("ann")), "size": 2.0 })
    );
}

#[tokio::test]
async fn call_runs_a_method_that_registers_a_child_with_arg_and_return_dependencies() {
    calls_a_method(&component("pets-provider")).await;
}

#[tokio::test]
async fn a_0_1_0_component_runs_a_method_through_the_monitor() {
    calls_a_method(&older_component("0.1.0", "pets_provider")).await;
}

#[tokio::test]
async fn a_0_2_0_component_runs_a_method_through_the_monitor() {
    calls_a_method(&older_component("0.2.0", "pets_provider")).await;
}

async fn calls_a_method(file: &std::path::Path) {
    let (_engine, mut p) = granted(file).await;
    let monitor = TestMonitor::start().await;
    let kennel_urn = urn(KENNEL, "k", STACK_URN);
    let args = json!({
        "__self__": { SIG_KEY: RESOURCE_REF_SIG, "urn": kennel_urn },
        "name": "rex",
    });
    let r = p
        .client
        .call(CallRequest {
            tok: "pets:index:Kennel/adopt".into(),
            args: Some(to_struct(args)),
            arg_dependencies: HashMap::from([(
                "name".to_string(),
                call_request::ArgumentDependencies { urns: vec![DEP_URN.into()] },
            )]),
            project: "proj".into(),
            stack: "dev".into(),
            monitor_endpoint: monitor.address.clone(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();

    let pet = monitor.registration("k-adopted-rex");
    assert_eq!(pet.r#type, PET);
    assert!(pet.custom);
    assert_eq!(pet.parent, kennel_urn);
    assert_eq!(from_struct(pet.object.as_ref()), json!({ "length": 1.0, "prefix": "rex" }));
    assert_eq!(pet.property_dependencies.get("prefix").map(|d| d.urns.clone()), Some(vec![DEP_URN.to_string()]));
    assert_eq!(monitor.received().registrations.len(), 1, "a method registers only what it adds");

    assert!(r.failures.is_empty(), "{:?}", r.failures);
    assert_eq!(from_struct(r.r#return.as_ref()), json!({ "pet": id_of("k-adopted-rex") }));
    let ret: HashMap<String, Vec<String>> = r.return_dependencies.into_iter().map(|(k, d)| (k, d.urns)).collect();
    assert_eq!(ret, HashMap::from([("pet".to_string(), vec![urn(PET, "k-adopted-rex", &kennel_urn)])]));
}

#[tokio::test]
async fn construct_and_call_fail_clearly_when_the_monitor_is_unreachable() {
    let (_engine, mut p) = serve("pets-provider").await;
    let monitor = TestMonitor::start().await;
    let mut req = construct(&monitor, json!({}), false, false);
    req.monitor_endpoint = "127.0.0.1:1".into();
    let e = p.client.construct(req).await.unwrap_err();
    assert_eq!(e.code(), Code::Unavailable, "{e:?}");
    assert!(e.message().contains("cannot reach the resource monitor"), "{e:?}");
    // The host keeps serving.
    let ok = p.client.construct(construct(&monitor, json!({ "size": 1 }), false, false)).await;
    assert!(ok.is_ok(), "{ok:?}");
}

/// A resource whose name would act on the user's terminal (the engine
/// shows it as a row) is refused before the engine hears of it: here a
/// kennel, which the SDK registers under the Construct's name.
#[tokio::test]
async fn a_resource_named_with_an_escape_sequence_never_reaches_the_engine() {
    let (_engine, mut p) = serve("pets-provider").await;
    let monitor = TestMonitor::start().await;
    let mut req = construct(&monitor, json!({ "size": 1 }), false, false);
    req.name = "k\x1b]52;c;ZXZpbA==\x07".into();
    let e = p.client.construct(req).await.unwrap_err();
    let m = e.message();
    assert!(m.contains("name \"k\\u{1b}]52;c;ZXZpbA==\\u{7}\" holds control or invisible characters"), "{e:?}");
    // Pulumi's colour markup, which the CLI would act on, is refused too.
    let mut req = construct(&monitor, json!({ "size": 1 }), false, false);
    req.name = "k<{%fg 1%}>".into();
    let e = p.client.construct(req).await.unwrap_err();
    assert!(e.message().contains("name \"k<\\{%fg 1%\\}>\" holds"), "{e:?}");
    assert!(monitor.received().registrations.is_empty(), "{:?}", monitor.received().registrations);
    let ok = p.client.construct(construct(&monitor, json!({ "size": 1 }), false, false)).await;
    assert!(ok.is_ok(), "{ok:?}");
}

/// Through the engine a component acts with the user's authority (another
/// provider's credentials, a local command), so it reaches only its own
/// package and those granted: the kennel's `random` pets are refused, before
/// the engine hears of them, until `--allow-package random`, and the error
/// names the grant. No component may name where the engine downloads a
/// plugin from (the engine would run that plugin natively).
#[tokio::test]
async fn a_component_reaches_through_the_engine_only_the_packages_it_is_granted() {
    let (_engine, mut p) = booted(&component("pets-provider")).await;
    let monitor = TestMonitor::start().await;
    let e = p.client.construct(construct(&monitor, json!({ "size": 1 }), false, false)).await.unwrap_err();
    assert_eq!(e.code(), Code::FailedPrecondition, "{e:?}");
    assert!(e.message().contains("missing grant: package \"random\" for provider pets"), "{e:?}");
    let types: Vec<String> = monitor.received().registrations.iter().map(|r| r.r#type.clone()).collect();
    assert_eq!(types, [KENNEL], "only the kennel itself, a local component, reached the engine");
    assert!(p.is_running());

    let (_engine, mut p) = serve("pets-provider").await;
    let monitor = TestMonitor::start().await;
    p.client.construct(construct(&monitor, json!({ "size": 1 }), false, false)).await.unwrap();
    assert!(monitor.received().registrations.iter().any(|r| r.r#type == "random:index:RandomPet"));

    let (_engine, mut p) = serve("probe-provider").await;
    let monitor = TestMonitor::start().await;
    let fetched = probe(&monitor, "d", json!({ "downloadFrom": "https://plugins.example/evil.tar.gz" }));
    let outcome = outcome_of(&mut p, fetched).await;
    assert!(outcome.contains("may not name where the engine downloads a plugin from"), "{outcome}");
    // Its own type handed to another package's provider is refused too.
    let aws = "urn:pulumi:dev::proj::pulumi:providers:aws::default::prov-9";
    let outcome = outcome_of(&mut p, probe(&monitor, "h", json!({ "withProviderRef": aws }))).await;
    assert!(outcome.contains("registering with provider") && outcome.contains("missing grant: package"), "{outcome}");
    assert!(outcome.contains("aws") && outcome.contains("for provider probe"), "{outcome}");
    assert!(monitor.received().registrations.iter().all(|r| r.name != "fetched"));
}

/// A URN names a resource in the user's state. A registration taking one
/// over (a local component of that type and name, or an alias) would carry
/// its state over, secret outputs among it, and outputs set for it would
/// overwrite what its provider recorded: each is held to the packages the
/// component may reach, and outputs to what it registered itself.
#[tokio::test]
async fn a_component_takes_over_no_other_package_s_resource() {
    let (_engine, mut p) = serve("probe-provider").await;
    let monitor = TestMonitor::start().await;
    let key = "urn:pulumi:dev::proj::aws:iam:AccessKey::deploy";
    let cases = [
        ("alias", json!({ "aliasOf": key }), "aliasing \\\"aws:iam:AccessKey\\\": missing grant: package"),
        (
            "deploy",
            json!({ "componentType": "aws:iam:AccessKey" }),
            "registering \\\"aws:iam:AccessKey\\\": missing grant",
        ),
        ("outputs", json!({ "outputsFor": key }), "only of resources it registered in the same call"),
        // Under a kennel the user parented their key to, its URN is this one's.
        (
            "nested",
            json!({ "componentType": "probe:index:Component$aws:iam:AccessKey" }),
            "not a `package:module:member` token",
        ),
    ];
    for (name, inputs, refusal) in cases {
        let outcome = outcome_of(&mut p, probe(&monitor, name, inputs)).await;
        assert!(outcome.contains(refusal) && outcome.contains("FailedPrecondition"), "{name}: {outcome}");
    }
    // Its own resources, but at the stack's top level or under another of
    // the user's resources, where one the user declared may have that URN.
    let kennel = "urn:pulumi:dev::proj::other:index:Kennel::rex";
    for parent in ["", kennel] {
        let state = from_struct(
            p.client
                .construct(probe(&monitor, "placed", json!({ "placeUnder": parent })))
                .await
                .unwrap()
                .into_inner()
                .state
                .as_ref(),
        );
        for key in ["outcome", "read"] {
            let said = state[key].as_str().unwrap_or_default();
            assert!(
                said.contains("puts its resources under itself") && said.contains("FailedPrecondition"),
                "{parent:?} {key}: {state}"
            );
        }
    }
    let received = monitor.received();
    assert!(received.registrations.iter().all(|r| r.r#type == "probe:index:Component"), "{received:?}");
    assert!(received.reads.is_empty(), "{received:?}");
    let set: Vec<&str> = received.outputs.iter().map(|o| o.urn.as_str()).collect();
    assert_eq!(set.len(), 6, "each component's own, from `finish`: {set:?}");
    assert!(set.iter().all(|u| u.contains("::probe:index:Component::")), "{set:?}");

    // Its own package's: an alias of one of its own, and granted, another
    // package's; but only under where the child goes (a URN names its
    // parents' types), never at the top level or under the user's.
    let under_me = |type_: &str, name: &str| format!("urn:pulumi:dev::proj::probe:index:Component${type_}::{name}");
    let own = under_me("probe:index:Thing", "older");
    assert_eq!(outcome_of(&mut p, probe(&monitor, "own", json!({ "aliasOf": own }))).await, "registered");
    let me = urn("probe:index:Component", "moved", STACK_URN);
    for under in [me.as_str(), "inherit"] {
        let outcome = outcome_of(&mut p, probe(&monitor, "moved", json!({ "specUnder": under }))).await;
        assert_eq!(outcome, "registered", "{under}");
    }
    let elsewhere = [
        json!({ "aliasOf": "urn:pulumi:dev::proj::probe:index:Thing::older" }),
        json!({ "aliasOf": "urn:pulumi:dev::proj::other:index:Kennel$probe:index:Thing::older" }),
        json!({ "aliasOf": under_me("probe:index:Thing", "older").replace("urn:pulumi:dev::", "urn:pulumi:prod::") }),
        json!({ "specUnder": "" }),
        json!({ "specUnder": kennel }),
        // The engine splices a spec's project into the URN, `::` and all.
        json!({ "specUnder": "inherit", "specProject": "proj::aws:iam:AccessKey" }),
    ];
    for inputs in elsewhere {
        let outcome = outcome_of(&mut p, probe(&monitor, "moved", inputs.clone())).await;
        assert!(outcome.contains("alias only earlier identities under where they go now"), "{inputs}: {outcome}");
    }
    // The component itself keeps the program's aliases (see the pets
    // construct above), and takes no other.
    let another = urn("probe:index:Component", "another", STACK_URN);
    let e = p.client.construct(probe(&monitor, "me", json!({ "selfAlias": another }))).await.unwrap_err();
    assert_eq!(e.code(), Code::FailedPrecondition, "{e:?}");
    assert!(e.message().contains("takes only the aliases the program gave it"), "{e:?}");

    // An answer naming the user's key as the component the program's SDK
    // parents to and resolves outputs against; then one naming its own.
    for (what, inputs) in [
        ("the user's key", json!({ "answerAs": key })),
        ("its own custom child", json!({ "answerChild": "custom" })),
        ("a component of its type and name under itself", json!({ "answerChild": "component" })),
    ] {
        let e = p.client.construct(probe(&monitor, "answer", inputs)).await.unwrap_err();
        assert_eq!(e.code(), Code::FailedPrecondition, "{what}: {e:?}");
        assert!(e.message().contains("it registered as a component in the same call"), "{what}: {e:?}");
    }
    let answered = urn("probe:index:Component", "mine", STACK_URN);
    let r = p.client.construct(probe(&monitor, "mine", json!({ "answerAs": answered.clone() }))).await.unwrap();
    assert_eq!(r.into_inner().urn, answered);
    let (_engine, mut p) = launched("probe-provider", &Launch::new().arg("--allow-package").arg("aws")).await;
    let monitor = TestMonitor::start().await;
    let aliased = json!({ "aliasOf": under_me("aws:iam:AccessKey", "deploy") });
    for (name, inputs) in [("alias", aliased), ("deploy", json!({ "componentType": "aws:iam:AccessKey" }))] {
        assert_eq!(outcome_of(&mut p, probe(&monitor, name, inputs)).await, "registered", "{name}");
    }
    assert!(monitor.received().registrations.iter().any(|r| r.r#type == "aws:iam:AccessKey"));
    // Granted, the user's own key at the top level is still not its to take.
    let outcome = outcome_of(&mut p, probe(&monitor, "alias", json!({ "aliasOf": key }))).await;
    assert!(outcome.contains("alias only earlier identities under where they go now"), "{outcome}");
}

/// A method's registrations and reads go under the component it is
/// called on (its `__self__`, however sent), or under what the same call
/// registered; anywhere else one could take over a resource the user
/// declared there, as in a construct.
#[tokio::test]
async fn a_method_puts_its_resources_under_the_component_it_is_called_on() {
    let (_engine, p) = serve("probe-provider").await;
    let monitor = TestMonitor::start().await;
    let me = urn("probe:index:Component", "mine", STACK_URN);
    let reference = json!({ SIG_KEY: RESOURCE_REF_SIG, "urn": me });
    let kennel = "urn:pulumi:dev::proj::other:index:Kennel::rex";
    let call = |this: Option<Json>, parent: &str| {
        let mut args = json!({ "placeUnder": parent });
        if let Some(this) = this {
            args["__self__"] = this;
        }
        let request = CallRequest {
            tok: "probe:index:Component/place".into(),
            args: Some(to_struct(args)),
            project: "proj".into(),
            stack: "dev".into(),
            monitor_endpoint: monitor.address.clone(),
            ..Default::default()
        };
        let mut client = p.client.clone();
        async move { from_struct(client.call(request).await.unwrap().into_inner().r#return.as_ref()) }
    };
    // Under itself, sent as a reference, as a secret one, or as its URN.
    let secret_ref = json!({ SIG_KEY: e2e_tests::json::SECRET_SIG, "value": reference });
    for this in [reference.clone(), secret_ref, json!(me)] {
        let said = call(Some(this.clone()), &me).await;
        assert_eq!(said, json!({ "outcome": "registered", "nested": "registered", "read": "registered" }), "{this}");
    }
    let placed = urn("probe:index:Thing", "placed", &me);
    assert_eq!(monitor.registration("nested").parent, placed, "under what the call registered");
    let before = monitor.received();
    // At the stack's top level, under another of the user's resources, or
    // with no component of the method's type named (a method's result may
    // be a reference to any resource, which the program may call on).
    let other = json!({ SIG_KEY: RESOURCE_REF_SIG, "urn": kennel });
    for (this, parent, rule) in [
        (Some(reference.clone()), "", "under the component it is called on"),
        (Some(reference.clone()), kennel, "under the component it is called on"),
        (None, me.as_str(), "no `__self__` of the method's type"),
        (Some(other.clone()), me.as_str(), "no `__self__` of the method's type"),
        (Some(other), kennel, "no `__self__` of the method's type"),
    ] {
        let said = call(this, parent).await;
        for key in ["outcome", "read"] {
            let text = said[key].as_str().unwrap_or_default();
            assert!(text.contains(rule) && text.contains("FailedPrecondition"), "{parent:?} {key}: {said}");
        }
        assert_eq!(said["nested"], "not tried", "{said}");
    }
    let after = monitor.received();
    assert_eq!(after.registrations.len(), before.registrations.len(), "{after:?}");
    assert_eq!(after.reads.len(), before.reads.len(), "{after:?}");
}

/// A child's `id` is its output; in a preview, what the engine left out of
/// its answer (the id of a resource not created yet too) is unknown, not null.
#[tokio::test]
async fn a_child_s_id_is_its_output_and_unknown_in_a_preview() {
    let (_engine, mut p) = serve("probe-provider").await;
    for (monitor, dry_run, child) in [
        (TestMonitor::start().await, false, json!(id_of("c-thing"))),
        (TestMonitor::preview().await, true, json!(UNKNOWN)),
    ] {
        let req = ConstructRequest {
            monitor_endpoint: monitor.address.clone(),
            r#type: "probe:index:Component".into(),
            name: "c".into(),
            parent: STACK_URN.into(),
            inputs: Some(to_struct(json!({}))),
            dry_run,
            ..Default::default()
        };
        let state = from_struct(p.client.construct(req).await.unwrap().into_inner().state.as_ref());
        assert_eq!(state["child"], child, "dry run {dry_run}: {state}");
    }
}

/// What a probe construct says its misuse came to.
async fn outcome_of(p: &mut Plugin, request: ConstructRequest) -> String {
    let state = from_struct(p.client.construct(request).await.unwrap().into_inner().state.as_ref());
    state["outcome"].as_str().unwrap_or_else(|| panic!("{state}")).to_owned()
}

#[tokio::test]
async fn the_monitor_is_refused_outside_construct_and_call_and_the_host_keeps_serving() {
    let (_engine, mut p) = serve("probe-provider").await;
    let monitor = TestMonitor::start().await;
    let create = CreateRequest {
        urn: "urn:pulumi:dev::proj::probe:index:Thing::t".into(),
        r#type: "probe:index:Thing".into(),
        name: "t".into(),
        properties: Some(to_struct(json!({ "a": 1 }))),
        ..Default::default()
    };

    let e = p.client.create(create.clone()).await.unwrap_err();
    assert_eq!(e.code(), Code::FailedPrecondition, "{e:?}");
    assert!(e.message().contains(NOT_AVAILABLE), "{e:?}");
    let e = p
        .client
        .invoke(InvokeRequest {
            tok: "probe:index:census".into(),
            args: Some(to_struct(json!({}))),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::FailedPrecondition, "{e:?}");
    assert!(e.message().contains(NOT_AVAILABLE), "{e:?}");

    // Construct on the same process: the monitor works (register, invoke,
    // read, a monitor error surfacing as a typed error).
    let req = ConstructRequest {
        monitor_endpoint: monitor.address.clone(),
        r#type: "probe:index:Component".into(),
        name: "c".into(),
        parent: STACK_URN.into(),
        inputs: Some(to_struct(json!({ "x": secret(json!("s")) }))),
        ..Default::default()
    };
    let r = p.client.construct(req).await.unwrap().into_inner();
    let c_urn = urn("probe:index:Component", "c", STACK_URN);
    assert_eq!(r.urn, c_urn);
    let state = from_struct(r.state.as_ref());
    assert_eq!(state["childId"], json!(id_of("c-thing")));
    assert_eq!(state["echoed"], json!({ "x": secret(json!("s")) }), "secrets survive an invoke both ways");
    assert_eq!(state["readUrn"], json!(urn("probe:index:Thing", "existing", &c_urn)));
    assert!(state["failed"].as_str().unwrap().contains("no function test:index:fail"), "{state}");
    let received = monitor.received();
    assert_eq!(received.registrations.len(), 2);
    assert_eq!(from_struct(received.registrations[1].object.as_ref()), json!({ "x": secret(json!("s")) }));
    let aliases: Vec<_> = received.registrations[1].aliases.iter().map(|a| a.alias.clone().unwrap()).collect();
    assert_eq!(
        aliases,
        [
            alias::Alias::Urn("urn:pulumi:dev::proj::probe:index:Component$probe:index:Thing::older".into()),
            alias::Alias::Spec(alias::Spec {
                name: "old-thing".into(),
                parent: Some(alias::spec::Parent::ParentUrn(c_urn.clone())),
                ..Default::default()
            }),
        ],
        "aliases as URNs and as specs"
    );
    assert!(received.registrations[1].alias_specs);
    assert_eq!(received.reads.len(), 1);
    assert_eq!((received.reads[0].id.as_str(), received.reads[0].parent.as_str()), ("ext-1", c_urn.as_str()));
    assert_eq!(received.invokes.len(), 2);
    // Not parameterized: the engine routes its resources by their package, with no reference.
    assert!(received.packages.is_empty() && received.registrations.iter().all(|r| r.package_ref.is_empty()));

    // After Construct the monitor is gone again.
    let e = p.client.create(create).await.unwrap_err();
    assert_eq!(e.code(), Code::FailedPrecondition, "{e:?}");
    assert!(e.message().contains(NOT_AVAILABLE), "{e:?}");
    assert_eq!(monitor.received().registrations.len(), 2, "nothing reached the monitor from Create");
    assert!(p.is_running());
}

/// A Parameterize answer the engine could not use is refused with a clear
/// error: a value answered as another package (the probe answers its own
/// version), or a name that is not a package name.
#[tokio::test]
async fn a_parameterize_answer_must_be_the_package_asked_for() {
    let (_engine, mut p) = serve("probe-provider").await;
    use parameterize_request::{Parameters, ParametersArgs, ParametersValue};
    let value = ParametersValue { name: "fleet".into(), version: "9.9.9".into(), value: b"v1".into() };
    let err = p.client.parameterize(ParameterizeRequest { parameters: Some(Parameters::Value(value)) }).await;
    let err = err.unwrap_err();
    assert_eq!(err.code(), tonic::Code::Internal, "{err:?}");
    let said = format!(
        "Parameterize with the value of package fleet 9.9.9 answered package fleet {}",
        env!("CARGO_PKG_VERSION")
    );
    assert_eq!(err.message(), said);
    let args = ParametersArgs { args: vec!["not a name!".into()] };
    let err = p.client.parameterize(ParameterizeRequest { parameters: Some(Parameters::Args(args)) }).await;
    let err = err.unwrap_err();
    assert!(err.message().contains("the package name \"not a name!\": not a package name"), "{err:?}");
    // Refused, so not kept: the provider serves no `fleet` package (its
    // Construct registers none, whether or not it may make the component).
    let monitor = TestMonitor::start().await;
    let req = ConstructRequest {
        monitor_endpoint: monitor.address.clone(),
        r#type: "fleet:index:Component".into(),
        name: "c".into(),
        parent: STACK_URN.into(),
        inputs: Some(to_struct(json!({ "x": 1 }))),
        ..Default::default()
    };
    let _ = p.client.construct(req).await;
    assert!(monitor.received().packages.is_empty(), "{:?}", monitor.received().packages);
}

/// A provider parameterized into another package registers that package
/// with the monitor (once per Construct) before the first of its own
/// resources, so the engine sends them to this plugin parameterized so,
/// not to a plugin of the package's name; other packages' tokens, and the
/// local component itself, carry no reference.
#[tokio::test]
async fn a_parameterized_provider_s_own_resources_carry_its_package() {
    let (_engine, mut p) = serve("probe-provider").await;
    use parameterize_request::{Parameters, ParametersValue};
    let value =
        ParametersValue { name: "fleet".into(), version: env!("CARGO_PKG_VERSION").into(), value: b"v1".into() };
    let request = ParameterizeRequest { parameters: Some(Parameters::Value(value)) };
    p.client.parameterize(request).await.unwrap();
    let monitor = TestMonitor::start().await;
    for name in ["a", "b"] {
        let req = ConstructRequest {
            monitor_endpoint: monitor.address.clone(),
            r#type: "fleet:index:Component".into(),
            name: name.into(),
            parent: STACK_URN.into(),
            inputs: Some(to_struct(json!({ "x": 1, "withProvider": name == "a" }))),
            ..Default::default()
        };
        p.client.construct(req).await.unwrap();
    }
    let received = monitor.received();
    assert_eq!(received.packages.len(), 2, "once per Construct: {:?}", received.packages);
    for (package, reference) in received.packages.iter().zip(["pkg-1", "pkg-2"]) {
        assert_eq!((package.name.as_str(), package.version.as_str()), ("probe", env!("CARGO_PKG_VERSION")));
        let made = package.parameterization.as_ref().unwrap();
        let version = env!("CARGO_PKG_VERSION");
        assert_eq!((made.name.as_str(), made.version.as_str(), made.value.as_slice()), ("fleet", version, &b"v1"[..]));
        assert!(package.extension.is_none());
        let ours: Vec<_> =
            received.registrations.iter().filter(|r| r.package_ref == reference).map(|r| &r.r#type).collect();
        // The first Construct also registered an explicit provider of the package.
        let expected = if reference == "pkg-1" {
            &["pulumi:providers:fleet", "fleet:index:Thing"][..]
        } else {
            &["fleet:index:Thing"]
        };
        assert_eq!(ours, expected, "{reference}: {:?}", received.registrations);
    }
    let component = received.registrations.iter().find(|r| r.r#type == "fleet:index:Component").unwrap();
    assert!(component.package_ref.is_empty(), "a local component needs no provider");
    assert!(received.reads.iter().all(|r| r.r#type == "fleet:index:Thing" && r.package_ref.starts_with("pkg-")));
    // An engine from before RegisterPackage: the resources go as they did then.
    let old_engine = TestMonitor::without_packages().await;
    let req = ConstructRequest {
        monitor_endpoint: old_engine.address.clone(),
        r#type: "fleet:index:Component".into(),
        name: "c".into(),
        parent: STACK_URN.into(),
        ..Default::default()
    };
    p.client.construct(req).await.unwrap();
    let old = old_engine.received();
    assert!(old.registrations.len() == 2 && old.registrations.iter().all(|r| r.package_ref.is_empty()), "{old:?}");
    let invokes: Vec<_> = received.invokes.iter().map(|i| (i.tok.as_str(), i.package_ref.as_str())).collect();
    assert_eq!(
        invokes,
        [
            ("fleet:index:echo", "pkg-1"),
            ("test:index:fail", ""),
            ("fleet:index:echo", "pkg-2"),
            ("test:index:fail", "")
        ]
    );
}

/// Waits until the monitor has received `n` registrations; fails after a
/// minute (a Construct that failed before registering would never get there).
async fn registrations(monitor: &TestMonitor, n: usize) {
    let arrived = async {
        while monitor.received().registrations.len() < n {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    };
    let waited = tokio::time::timeout(std::time::Duration::from_secs(60), arrived).await;
    waited.unwrap_or_else(|_| panic!("fewer than {n} registrations: {:#?}", monitor.received().registrations));
}

/// Probe Constructs of components named `names`, each on its own task.
fn spawn_constructs(
    p: &Plugin,
    monitor: &TestMonitor,
    names: &[&str],
) -> Vec<tokio::task::JoinHandle<Result<tonic::Response<ConstructResponse>, tonic::Status>>> {
    let spawn = |name: &&str| {
        let mut client = p.client.clone();
        let request = probe(monitor, name, json!({}));
        tokio::spawn(async move { client.construct(request).await })
    };
    names.iter().map(spawn).collect()
}

/// A Check of a probe resource: a call that needs no monitor.
fn thing_check() -> CheckRequest {
    CheckRequest {
        urn: "urn:pulumi:dev::proj::probe:index:Thing::t".into(),
        name: "t".into(),
        r#type: "probe:index:Thing".into(),
        news: Some(to_struct(json!({}))),
        ..Default::default()
    }
}

/// A probe Construct of component `name` with `inputs`.
fn probe(monitor: &TestMonitor, name: &str, inputs: Json) -> ConstructRequest {
    ConstructRequest {
        monitor_endpoint: monitor.address.clone(),
        r#type: "probe:index:Component".into(),
        name: name.into(),
        parent: STACK_URN.into(),
        inputs: Some(to_struct(inputs)),
        ..Default::default()
    }
}

async fn launched(crate_name: &str, launch: &Launch) -> (TestEngine, Plugin) {
    launched_file(&component(crate_name), launch).await
}

async fn launched_file(file: &std::path::Path, launch: &Launch) -> (TestEngine, Plugin) {
    let engine = TestEngine::start().await;
    let mut p = Plugin::launch(file, Some(&engine.address), launch).await.unwrap();
    p.boot(&engine.address, json!({})).await.unwrap();
    (engine, p)
}

#[tokio::test]
async fn time_spent_waiting_on_the_engine_does_not_count_against_the_deadline() {
    let (_engine, p) = launched("probe-provider", &Launch::new().env("PULUMI_WASM_CALL_TIMEOUT", "3")).await;
    let monitor = TestMonitor::gated().await;
    let mut client = p.client.clone();
    // After the wait the guest works for 1.5 s: inside wasm, where the epoch
    // deadline applies, and past 3 s since the call began.
    let request = probe(&monitor, "c", json!({ "spinMs": 1500 }));
    let call = tokio::spawn(async move { client.construct(request).await });
    // The registrations wait, as the engine's do while it works, for twice
    // the deadline.
    registrations(&monitor, 1).await;
    tokio::time::sleep(std::time::Duration::from_secs(6)).await;
    monitor.open();
    let r = call.await.unwrap().expect("the Construct is not cut off while the engine works");
    assert_eq!(r.into_inner().urn, urn("probe:index:Component", "c", STACK_URN));
    // The guest's own work still has a deadline.
    let spin = probe(&monitor, "d", json!({ "spinMs": 10_000 }));
    let err = p.client.clone().construct(spin).await.unwrap_err();
    assert_eq!(err.code(), Code::DeadlineExceeded, "{err:?}");
}

/// Constructs waiting on the engine hold at most `2 * (max_instances +
/// max_waiting)` instances (here two); one past that fails at once, saying
/// so, rather than queue (a nested Construct would wait for its parents,
/// which wait on the engine for it). Unbounded, eight of them (as a
/// component registering its own type under itself again and again would
/// send) took every instance slot of the engine, and resource calls found none.
#[tokio::test]
async fn constructs_waiting_on_the_engine_leave_instances_for_resource_calls() {
    let launch = Launch::new().env("PULUMI_WASM_MAX_INSTANCES", "1").env("PULUMI_WASM_MAX_WAITING", "0");
    let (_engine, p) = launched("probe-provider", &launch).await;
    let monitor = TestMonitor::gated().await;
    let calls = spawn_constructs(&p, &monitor, &["a", "b", "c", "d", "e", "f", "g", "h"]);
    registrations(&monitor, 2).await;
    let check = tokio::time::timeout(std::time::Duration::from_secs(60), p.client.clone().check(thing_check())).await;
    assert!(check.expect("answered").is_ok(), "a resource call still finds an instance");
    monitor.open();
    let mut refused = 0;
    for c in calls {
        match c.await.unwrap() {
            Ok(_) => {}
            Err(e) => {
                assert_eq!(e.code(), Code::ResourceExhausted, "{e:?}");
                assert!(e.message().contains("2 Constructs and Calls of this provider are running"), "{e:?}");
                refused += 1;
            }
        }
    }
    assert_eq!(refused, 6, "two waited on the engine and finished");
}

#[tokio::test]
async fn constructs_waiting_on_the_engine_hold_no_permit() {
    let (_engine, p) = launched("probe-provider", &Launch::new().env("PULUMI_WASM_MAX_INSTANCES", "1")).await;
    let monitor = TestMonitor::gated().await;
    // One permit for Construct and Call, and one Construct waiting on the
    // engine: a second (as the engine would send for a nested component of
    // this provider) still runs, and a resource call is still served.
    let calls = spawn_constructs(&p, &monitor, &["a", "b"]);
    registrations(&monitor, 2).await;
    // (Were it queued behind them, it would wait for as long as they do: forever here.)
    let answered =
        tokio::time::timeout(std::time::Duration::from_secs(60), p.client.clone().check(thing_check())).await;
    assert!(answered.expect("the Check was queued behind the Constructs").is_ok());
    assert!(calls.iter().all(|c| !c.is_finished()), "the Constructs are still waiting on the engine");
    monitor.open();
    for c in calls {
        c.await.unwrap().expect("both Constructs finish once the engine answers");
    }
}
