//! `pets`: a component provider. `pets:index:Kennel` is a component made of
//! `random:index:RandomPet` resources (from the `random` example), registered
//! through the engine's resource monitor the way a Pulumi program would; its
//! method `adopt` (`pets:index:Kennel/adopt`, served by Call) adds one more.
//!
//! Inputs of a kennel: `size` (how many pets, default 2), `nameLength` (words
//! per pet name, default 2) and `owner` (optional; prefixes every name, and
//! stays secret if it is). Outputs: `petNames` (one per pet, each depending
//! on its pet), `owner` and `size`.

use pulumi_wasm_sdk::component::{self, Component, Resource};
use pulumi_wasm_sdk::*;

pub const KENNEL: &str = "pets:index:Kennel";
pub const ADOPT: &str = "pets:index:Kennel/adopt";
pub const PET: &str = "random:index:RandomPet";

// The pets are `random`'s resources: the user must grant that package.
pulumi_wasm_sdk::declare_needs! { packages: ["random"] }

/// Most pets one kennel may hold.
const MAX_SIZE: f64 = 32.0;

#[derive(Default)]
pub struct Pets;

/// A pet's name as a value that depends on the pet: its ID, or unknown
/// during a preview before the pet exists. Secret when its inputs were.
fn pet_name(pet: &Resource) -> Value {
    let secret = pet.state.values().any(Value::contains_secrets);
    let value = (!pet.id.is_empty()).then(|| Box::new(Value::String(pet.id.clone())));
    Value::Output(Output { value, secret, dependencies: vec![pet.urn.clone()] })
}

fn number(inputs: &PropertyMap, key: &str, default: f64) -> Result<f64> {
    match inputs.get(key).map(Value::plain) {
        None | Some(Value::Null) => Ok(default),
        Some(Value::Number(n)) if n.fract() == 0.0 && *n >= 1.0 => Ok(*n),
        // Not known yet (a preview): any valid number will do for planning.
        Some(Value::Output(_) | Value::Unknown(_)) => Ok(default),
        Some(other) => Err(Error::invalid(format!("`{key}` must be a whole number of at least 1, not {other}"))),
    }
}

impl Provider for Pets {
    fn info(&self) -> PluginInfo {
        PluginInfo::new("pets", env!("CARGO_PKG_VERSION"))
    }

    fn get_schema(&mut self, _req: GetSchemaRequest) -> Result<String> {
        Ok(schema().to_string())
    }

    fn construct(&mut self, req: ConstructRequest) -> Result<ConstructResponse> {
        if req.resource_type != KENNEL {
            return Err(Error::unknown_type(&req.resource_type));
        }
        let inputs = component::inputs(&req);
        let size = number(&inputs, "size", 2.0)?;
        if size > MAX_SIZE {
            return Err(Error::invalid(format!("a kennel holds at most {MAX_SIZE} pets")));
        }
        let length = inputs.get("nameLength").cloned().unwrap_or(Value::Number(2.0));
        let owner = inputs.get("owner").cloned().filter(|o| !o.plain().is_null());

        let kennel = Component::new(&req)?;
        let mut names = Vec::new();
        for i in 0..size as usize {
            let mut pet_inputs = PropertyMap::from([("length".to_owned(), length.clone())]);
            if let Some(owner) = &owner {
                pet_inputs.insert("prefix".into(), owner.clone());
            }
            let pet = kennel.custom(PET, &format!("{}-pet-{i}", req.name), pet_inputs, kennel.child())?;
            names.push(pet_name(&pet));
        }
        let mut outputs =
            PropertyMap::from([("petNames".to_owned(), Value::Array(names)), ("size".to_owned(), Value::Number(size))]);
        if let Some(owner) = owner {
            outputs.insert("owner".into(), owner);
        }
        kennel.finish(outputs)
    }

    fn call(&mut self, req: CallRequest) -> Result<CallResponse> {
        if req.token != ADOPT {
            return Err(Error::unknown_function(&req.token));
        }
        let kennel = Component::from_call(&req)?;
        let args = component::args(&req);
        let name = args.get("name").and_then(Value::as_str).filter(|n| !n.is_empty());
        let Some(name) = name.map(str::to_owned) else {
            return Err(Error::invalid("adopt needs a `name`"));
        };
        let kennel_name = kennel.urn.rsplit("::").next().unwrap_or("kennel").to_owned();
        let inputs =
            PropertyMap::from([("length".to_owned(), Value::Number(1.0)), ("prefix".to_owned(), args["name"].clone())]);
        let pet = kennel.custom(PET, &format!("{kennel_name}-adopted-{name}"), inputs, kennel.child())?;
        Ok(component::call_response(PropertyMap::from([("pet".to_owned(), pet_name(&pet))])))
    }
}

/// The package schema: one component with one method.
pub fn schema() -> serde_json::Value {
    serde_json::json!({
        "name": "pets",
        "version": env!("CARGO_PKG_VERSION"),
        "description": "A kennel of random pets: a component provider run as a WebAssembly component.",
        "resources": {
            KENNEL: {
                "isComponent": true,
                "description": "A kennel: `size` random pets whose names may start with the owner's name.",
                "inputProperties": {
                    "size": { "type": "integer", "description": "How many pets (default 2)." },
                    "nameLength": { "type": "integer", "description": "Words per pet name (default 2)." },
                    "owner": { "type": "string", "description": "Prefix of every pet name." }
                },
                "properties": {
                    "petNames": { "type": "array", "items": { "type": "string" } },
                    "size": { "type": "integer" },
                    "owner": { "type": "string" }
                },
                "required": ["petNames", "size"],
                "methods": { "adopt": ADOPT }
            }
        },
        "functions": {
            ADOPT: {
                "description": "Adopts one more pet into the kennel.",
                "inputs": {
                    "properties": {
                        "__self__": { "$ref": "#/resources/pets:index:Kennel" },
                        "name": { "type": "string" }
                    },
                    "required": ["__self__", "name"]
                },
                "outputs": {
                    "properties": { "pet": { "type": "string" } },
                    "required": ["pet"]
                }
            }
        }
    })
}

export_provider!(Pets);
