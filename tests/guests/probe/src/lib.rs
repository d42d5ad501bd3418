//! Test guest for the resource monitor: `create` and `invoke` try to use it
//! (the host must refuse: it exists only during construct and call);
//! `construct` registers a component with one child, invokes a function,
//! reads a resource and returns what it got, so a test can see the monitor
//! working in the same process afterwards; with `spinMs` it also works that
//! long after registering the child.

use pulumi_wasm_sdk::component::{self, Alias, AliasParent, AliasSpec, Component, Options};
use pulumi_wasm_sdk::*;

#[derive(Default)]
pub struct Probe;

impl Provider for Probe {
    fn info(&self) -> PluginInfo {
        PluginInfo::new("probe", env!("CARGO_PKG_VERSION"))
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

    fn construct(&mut self, req: ConstructRequest) -> Result<ConstructResponse> {
        let me = Component::new(&req)?;
        let inputs = component::inputs(&req);
        let spec = AliasSpec {
            name: "old-thing".into(),
            type_: String::new(),
            stack: String::new(),
            project: String::new(),
            parent: AliasParent::NoParent,
        };
        let options = me
            .child()
            .alias(Alias::Urn("urn:pulumi:dev::proj::probe:index:Thing::older".into()))
            .alias(Alias::Spec(spec));
        let child = me.custom("probe:index:Thing", &format!("{}-thing", req.name), inputs.clone(), options)?;
        // `spinMs`: work that long after the child is registered (deadline tests).
        if let Some(ms) = req.inputs.get("spinMs").and_then(Value::as_f64) {
            let until = std::time::Instant::now() + std::time::Duration::from_secs_f64(ms / 1000.0);
            while std::time::Instant::now() < until {
                std::hint::black_box(0);
            }
        }
        let echoed = component::invoke("probe:index:echo", &req.inputs, "")?;
        let read = component::read_resource("probe:index:Thing", "existing", "ext-1", &PropertyMap::new(), me.child())?;
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
