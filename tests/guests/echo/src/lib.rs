//! A test provider, package `echo`:
//! - `echo:index:echo` (invoke) returns its arguments unchanged, so every
//!   value kind can be round-tripped through the host;
//! - `echo:index:log` logs `message` at each severity, tied to `urn` if given;
//! - `echo:index:panic` panics (a trap the host must contain);
//! - `echo:index:config` sleeps `sleepMs` (or busy-waits `spinMs`), then returns the configuration this
//!   instance received, how many Configure calls it ran and an ID unique to
//!   the instance (pool and replay tests);
//! - Configure sleeps its configuration's `sleepMs`, so that setup calls overlap;
//! - `echo:index:Thing` is a resource whose `replace` input forces replacement,
//!   `dbr: true` asks for delete-before-replace, `fail: true` makes
//!   Update fail (the steps test's injected fault), and `hang: true` makes
//!   Update hang without reporting anything; a Read of a Thing whose state
//!   has `forgetInputs: true` answers with no inputs, and one with
//!   `failRead: true` fails as not initialised, with that state;
//! - creating a Thing with `hang` reports partial state (id `partial-<name>`)
//!   and then hangs: `"cooperative"` until the engine cancels (then it
//!   returns an init failure itself), `"stubborn"` forever, ignoring it;
//!   with `sleepMs` or `spinMs` it sleeps or busy-waits that long first;
//! - Check passes inputs through, so values round-trip there too; with the
//!   engine's autonaming options it sets `name` to the proposed name (when
//!   absent, or always when the engine enforces it). The provider says it
//!   supports autonaming in its plugin info.

use pulumi_wasm_sdk::*;

#[derive(Default)]
struct Echo {
    config: PropertyMap,
    instance: String,
    /// How many Configure calls this instance ran, replays included.
    configures: u32,
}

const THING: &str = "echo:index:Thing";

fn new_id() -> Result<String> {
    let mut b = [0u8; 8];
    getrandom::fill(&mut b).map_err(|e| Error::Failed(e.to_string()))?;
    Ok(b.iter().map(|x| format!("{x:02x}")).collect())
}

fn thing(t: &str) -> Result<()> {
    if t == THING { Ok(()) } else { Err(Error::unknown_type(t)) }
}

impl Provider for Echo {
    fn info(&self) -> PluginInfo {
        PluginInfo::new("echo", env!("CARGO_PKG_VERSION")).with_autonaming()
    }

    fn check(&mut self, req: CheckRequest) -> Result<CheckResponse> {
        let mut inputs = req.news;
        if let Some(a) = req.autonaming {
            let name = Value::from(a.proposed_name);
            match a.mode {
                AutonamingMode::Enforce => {
                    inputs.insert("name".into(), name);
                }
                AutonamingMode::Propose => {
                    inputs.entry("name".into()).or_insert(name);
                }
                AutonamingMode::Disable => {}
            }
        }
        Ok(CheckResponse { inputs, failures: vec![] })
    }

    fn get_schema(&mut self, _req: GetSchemaRequest) -> Result<String> {
        Ok(format!(r#"{{"name":"echo","version":"{}"}}"#, env!("CARGO_PKG_VERSION")))
    }

    fn configure(&mut self, req: ConfigureRequest) -> Result<ConfigureResponse> {
        // `sleepMs` in the configuration: tests make setup calls overlap.
        let ms = req.args.get("sleepMs").and_then(Value::as_f64).unwrap_or(0.0) as u64;
        if ms > 0 {
            std::thread::sleep(std::time::Duration::from_millis(ms));
        }
        self.config = req.args;
        self.configures += 1;
        Ok(ConfigureResponse { supports_autonaming_configuration: false })
    }

    fn invoke(&mut self, req: InvokeRequest) -> Result<InvokeResponse> {
        match req.token.as_str() {
            "echo:index:config" => {
                pause(&req.args);
                if self.instance.is_empty() {
                    self.instance = new_id()?;
                }
                let outputs = props! {
                    "config" => Value::Object(self.config.clone()),
                    "instance" => self.instance.clone(),
                    "configures" => f64::from(self.configures),
                };
                Ok(InvokeResponse { outputs, failures: vec![] })
            }
            "echo:index:echo" => Ok(InvokeResponse { outputs: req.args, failures: vec![] }),
            "echo:index:log" => {
                let msg = req.args.get("message").and_then(Value::as_str).unwrap_or("hello");
                match req.args.get("urn").and_then(Value::as_str) {
                    Some(urn) => log::for_urn(urn).warn(msg),
                    None => {
                        log::debug(msg);
                        log::info(msg);
                        log::warn(msg);
                        log::error(msg);
                    }
                }
                Ok(InvokeResponse::default())
            }
            "echo:index:panic" => panic!("echo was asked to panic"),
            other => Err(Error::unknown_function(other)),
        }
    }

    fn diff(&mut self, req: DiffRequest) -> Result<DiffResponse> {
        thing(&req.resource_type)?;
        let dbr = req.news.get("dbr").and_then(Value::as_bool).unwrap_or(false);
        Ok(Differ::new()
            .replace_on_changes(&["replace"])
            .ignore(&["fail"])
            .delete_before_replace(dbr)
            .diff(&req.old_inputs, &req.news))
    }

    fn create(&mut self, req: CreateRequest) -> Result<CreateResponse> {
        thing(&req.resource_type)?;
        if let Some(mode) = req.properties.get("hang").and_then(Value::as_str) {
            return hang(mode, &req);
        }
        pause(&req.properties);
        let id = if req.preview { String::new() } else { new_id()? };
        log::for_urn(&req.urn).info(&format!("created thing {id}"));
        Ok(CreateResponse { id, properties: req.properties, refresh_before_update: false })
    }

    fn read(&mut self, req: ReadRequest) -> Result<ReadResponse> {
        thing(&req.resource_type)?;
        // `forgetInputs`: answer with no inputs, as a provider that cannot tell them.
        let forget = req.properties.get("forgetInputs").and_then(Value::as_bool) == Some(true);
        let inputs = if forget { PropertyMap::new() } else { req.inputs };
        // `failRead`: found, but not whole (an init failure with this state).
        if req.properties.get("failRead").and_then(Value::as_bool) == Some(true) {
            let reasons = vec!["read half-way".into()];
            return Err(Error::InitFailed { id: req.id, properties: req.properties, inputs: None, reasons });
        }
        Ok(ReadResponse { id: req.id, properties: req.properties, inputs, refresh_before_update: false })
    }

    fn update(&mut self, req: UpdateRequest) -> Result<UpdateResponse> {
        thing(&req.resource_type)?;
        if req.news.get("fail").and_then(Value::as_bool) == Some(true) {
            return Err(Error::Failed(format!("injected fault updating {}", req.id)));
        }
        // An update that never returns and reports nothing: the host must interrupt it.
        if req.news.get("hang").and_then(Value::as_bool) == Some(true) {
            loop {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
        }
        Ok(UpdateResponse { properties: req.news, refresh_before_update: false })
    }

    fn delete(&mut self, req: DeleteRequest) -> Result<()> {
        thing(&req.resource_type)
    }
}

/// Sleeps `sleepMs`, then busy-waits `spinMs` (deadline tests).
fn pause(m: &PropertyMap) {
    let ms = |k: &str| m.get(k).and_then(Value::as_f64).unwrap_or(0.0) as u64;
    std::thread::sleep(std::time::Duration::from_millis(ms("sleepMs")));
    let spin = std::time::Instant::now();
    while spin.elapsed() < std::time::Duration::from_millis(ms("spinMs")) {
        std::hint::spin_loop();
    }
}

/// Reports half-made state, then waits: the cancellation and deadline tests.
fn hang(mode: &str, req: &CreateRequest) -> Result<CreateResponse> {
    let id = format!("partial-{}", req.name);
    let mut state = req.properties.clone();
    state.insert("stage".into(), "half".into());
    context::report_partial_state(&id, &state);
    // Made, then gives up with an ordinary error, as if it never became ready.
    if mode == "failing" {
        return Err(Error::Failed(format!("{id} never became ready")));
    }
    loop {
        if mode == "cooperative" && context::cancelled() {
            return Err(Error::InitFailed {
                id,
                properties: state,
                inputs: None,
                reasons: vec!["cancelled half-way".into()],
            });
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

export_provider!(Echo);
