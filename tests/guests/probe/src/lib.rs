//! Test guest for the resource monitor: `create` and `invoke` try to use it
//! (the host must refuse: it exists only during construct and call);
//! `construct` registers a component with one child, invokes a function,
//! reads a resource and returns what it got, so a test can see the monitor
//! working in the same process afterwards; with `spinMs` it also works that
//! long after registering the child; with `downloadFrom`, `withProviderRef`
//! or `aliasOf` it registers a child naming a plugin download URL, a
//! provider reference or an alias instead, with `componentType` a local
//! component of that type, with `outputsFor` outputs of that URN, with
//! `placeUnder` a child and a read under that parent, and says
//! how that went in `outcome`; with `answerAs` it answers with that URN as
//! its component's, with `answerChild` with the URN of a child it registers
//! (`custom`, or `component`: of its own type and name, under itself);
//! with `selfAlias` it registers itself with that alias URN besides the
//! program's, and with `specUnder` a child aliased by a spec whose parent
//! is that URN (`""`: no parent; `inherit`: its own), of project
//! `specProject` if given.
//! `call` registers a child under its `placeUnder` argument (and, if
//! that went, one under the child) and reads one there, saying how each
//! went; it does not read its `__self__` (the host does).
//! Parameterized (`args: [name]`, or a value), it becomes package `name`; `construct` uses its type's package
//! for the child, the invoke and the read, and with `withProvider` also
//! registers an explicit provider of it first.

use pulumi_wasm_sdk::component::{self, Alias, AliasParent, AliasSpec, Component, Options};
use pulumi_wasm_sdk::*;

#[derive(Default)]
pub struct Probe;

impl Provider for Probe {
    fn info(&self) -> PluginInfo {
        PluginInfo::new("probe", env!("CARGO_PKG_VERSION"))
    }

    /// Becomes package `name` at this version; the value's bytes are not read.
    fn parameterize(&mut self, req: ParameterizeRequest) -> Result<PackageRef> {
        let name = match req {
            ParameterizeRequest::Args(args) => args.first().cloned().unwrap_or_default(),
            ParameterizeRequest::Value(v) => v.name,
        };
        Ok(PackageRef { name, version: env!("CARGO_PKG_VERSION").into() })
    }

    /// Just a name and a version: enough to be served by the generic provider.
    fn get_schema(&mut self, req: GetSchemaRequest) -> Result<String> {
        let name = if req.subpackage_name.is_empty() { "probe" } else { req.subpackage_name.as_str() };
        Ok(format!(r#"{{"name":"{name}","version":"{}"}}"#, env!("CARGO_PKG_VERSION")))
    }

    /// Not allowed: registers a resource from Create.
    fn create(&mut self, req: CreateRequest) -> Result<CreateResponse> {
        let r =
            component::register_resource("probe:index:Sneaky", &req.name, true, &req.properties, Options::default())?;
        Ok(CreateResponse { id: r.id, properties: r.state, ..Default::default() })
    }

    /// Not allowed: an invoke through the monitor from Invoke.
    fn invoke(&mut self, req: InvokeRequest) -> Result<InvokeResponse> {
        let r = component::invoke("probe:index:echo", &req.args, "")?;
        Ok(InvokeResponse { outputs: r.outputs, failures: r.failures })
    }

    fn call(&mut self, req: CallRequest) -> Result<CallResponse> {
        let thing = format!("{}:index:Thing", req.token.split(':').next().unwrap_or("probe"));
        let args = component::args(&req);
        let parent = args.get("placeUnder").and_then(Value::as_str).unwrap_or_default().to_owned();
        let under = |parent: &str| Options { parent: parent.to_owned(), ..Options::default() };
        let said = |r: Result<()>| Value::String(r.map_or_else(|e| format!("{e:?}"), |()| "registered".into()));
        let none = PropertyMap::new();
        let placed = component::register_resource(&thing, "placed", true, &none, under(&parent));
        let nested = match &placed {
            Ok(child) => said(component::register_resource(&thing, "nested", true, &none, under(&child.urn)).map(drop)),
            Err(_) => Value::String("not tried".into()),
        };
        let read = component::read_resource(&thing, "read", "ext-1", &none, under(&parent)).map(drop);
        Ok(component::call_response(PropertyMap::from([
            ("outcome".to_owned(), said(placed.map(drop))),
            ("nested".to_owned(), nested),
            ("read".to_owned(), said(read)),
        ])))
    }

    fn construct(&mut self, req: ConstructRequest) -> Result<ConstructResponse> {
        let package = req.resource_type.split(':').next().unwrap_or("probe").to_owned();
        if let Some(urn) = req.inputs.get("selfAlias").and_then(Value::as_str) {
            let options = Options::from_construct(&req).alias(Alias::Urn(urn.to_owned()));
            component::register_resource(&req.resource_type, &req.name, false, &PropertyMap::new(), options)?;
        }
        let me = Component::new(&req)?;
        let inputs = component::inputs(&req);
        let spec = |name: &str, parent| AliasSpec {
            name: name.into(),
            type_: String::new(),
            stack: String::new(),
            project: String::new(),
            parent,
        };
        // Earlier identities under the component: by URN, and by spec.
        let (above, _) = me.urn.rsplit_once("::").unwrap_or_default();
        let options = me
            .child()
            .alias(Alias::Urn(format!("{above}$probe:index:Thing::older")))
            .alias(Alias::Spec(spec("old-thing", AliasParent::Urn(me.urn.clone()))));
        // `withProvider`: an explicit provider of the package first.
        if req.inputs.get("withProvider").and_then(Value::as_bool) == Some(true) {
            let provider = format!("{}-provider", req.name);
            me.custom(&format!("pulumi:providers:{package}"), &provider, PropertyMap::new(), me.child())?;
        }
        let thing = format!("{package}:index:Thing");
        // `downloadFrom`: a child naming where the engine would download its
        // plugin from; `withProviderRef`: one naming a provider reference;
        // `aliasOf`: one taking over a URN (another package's: the host
        // refuses them, and the state says how).
        let input = |key: &str| req.inputs.get(key).and_then(Value::as_str).map(str::to_owned);
        let (download, provider, alias) = (input("downloadFrom"), input("withProviderRef"), input("aliasOf"));
        let outcome = |r: Result<()>| Value::String(r.map_or_else(|e| format!("{e:?}"), |()| "registered".into()));
        if download.is_some() || provider.is_some() || alias.is_some() {
            let mut options = Options {
                plugin_download_url: download.unwrap_or_default(),
                provider: provider.unwrap_or_default(),
                ..me.child()
            };
            if let Some(urn) = alias {
                options = options.alias(Alias::Urn(urn));
            }
            let r = me.custom(&thing, "fetched", PropertyMap::new(), options).map(drop);
            return me.finish(PropertyMap::from([("outcome".to_owned(), outcome(r))]));
        }
        // `specUnder`: a child aliased by a spec naming that parent.
        if let Some(parent) = input("specUnder") {
            let parent = match parent.as_str() {
                "" => AliasParent::NoParent,
                "inherit" => AliasParent::Inherit,
                _ => AliasParent::Urn(parent),
            };
            let project = input("specProject").unwrap_or_default();
            let options = me.child().alias(Alias::Spec(AliasSpec { project, ..spec("moved", parent) }));
            let r = me.custom(&thing, "moved", PropertyMap::new(), options).map(drop);
            return me.finish(PropertyMap::from([("outcome".to_owned(), outcome(r))]));
        }
        // `componentType`: a local component of that type, in the stack.
        if let Some(type_) = input("componentType") {
            let r = component::register_resource(&type_, &req.name, false, &PropertyMap::new(), me.child());
            return me.finish(PropertyMap::from([("outcome".to_owned(), outcome(r.map(drop)))]));
        }
        // `placeUnder`: a child and a read under that parent ("" the stack's top).
        if let Some(parent) = input("placeUnder") {
            let under = || Options { parent: parent.clone(), ..me.child() };
            let r = me.custom(&thing, "placed", PropertyMap::new(), under()).map(drop);
            let read = component::read_resource(&thing, "read", "ext-1", &PropertyMap::new(), under()).map(drop);
            let outcomes = [("outcome".to_owned(), outcome(r)), ("read".to_owned(), outcome(read))];
            return me.finish(PropertyMap::from(outcomes));
        }
        // `outputsFor`: outputs for another resource's URN (`finish` sets its own).
        if let Some(urn) = input("outputsFor") {
            let r = component::register_outputs(&urn, &PropertyMap::from([("x".to_owned(), Value::Number(1.0))]));
            return me.finish(PropertyMap::from([("outcome".to_owned(), outcome(r))]));
        }
        // `answerAs`: its own component registered, another URN in the answer;
        // `answerChild`: a child's.
        if let Some(urn) = input("answerAs") {
            let mut answer = me.finish(PropertyMap::new())?;
            answer.urn = urn;
            return Ok(answer);
        } else if let Some(kind) = input("answerChild") {
            let child = match kind.as_str() {
                "custom" => me.custom(&thing, "answered", PropertyMap::new(), me.child())?,
                _ => me.component(&req.resource_type, &req.name, PropertyMap::new(), me.child())?,
            };
            let mut answer = me.finish(PropertyMap::new())?;
            answer.urn = child.urn;
            return Ok(answer);
        }
        let child = me.custom(&thing, &format!("{}-thing", req.name), inputs.clone(), options)?;
        // `spinMs`: work that long after the child is registered (deadline tests).
        if let Some(ms) = req.inputs.get("spinMs").and_then(Value::as_f64) {
            let until = std::time::Instant::now() + std::time::Duration::from_secs_f64(ms / 1000.0);
            while std::time::Instant::now() < until {
                std::hint::black_box(0);
            }
        }
        let echoed = component::invoke(&format!("{package}:index:echo"), &req.inputs, "")?;
        let read = component::read_resource(&thing, "existing", "ext-1", &PropertyMap::new(), me.child())?;
        let failed = match component::invoke("test:index:fail", &PropertyMap::new(), "") {
            Err(Error::NotFound(m)) => m,
            other => format!("unexpected: {other:?}"),
        };
        me.finish(PropertyMap::from([
            ("child".to_owned(), child.output("id")),
            ("childId".to_owned(), Value::String(child.id.clone())),
            ("echoed".to_owned(), Value::Object(echoed.outputs)),
            ("readUrn".to_owned(), Value::String(read.urn)),
            ("failed".to_owned(), Value::String(failed)),
        ]))
    }
}

export_provider!(Probe);
