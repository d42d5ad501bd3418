//! `random`: a Pulumi provider of random values, modelled on pulumi-random.
//!
//! Resources `RandomString`, `RandomPassword` (secret result), `RandomId` and
//! `RandomPet`, and the function `randomInteger`. Every input change replaces
//! the resource, so a new value is generated; `keepers` exist only to force
//! that. The package schema is `schema.json` beside this crate's manifest.

mod check;
mod id;
mod integer;
mod pet;
mod rng;
mod string;

use pulumi_wasm_sdk::{
    CheckRequest, CheckResponse, CreateRequest, CreateResponse, DeleteRequest, DiffRequest, DiffResponse, Differ,
    Error, GetSchemaRequest, InvokeRequest, InvokeResponse, PluginInfo, PropertyMap, Provider, ReadRequest,
    ReadResponse, Result, UpdateRequest, UpdateResponse, log,
};

use check::Checker;
use rng::{OsRng, Rng};

const SCHEMA: &str = include_str!("../schema.json");
/// The placeholder version in `schema.json`, replaced by the crate's.
const SCHEMA_VERSION: &str = "\"version\": \"0.0.0\"";

#[derive(Default)]
pub struct Random;

/// The resource types of the package.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    String,
    Password,
    Id,
    Pet,
}

/// A resource's parameters once its inputs are checked and fully known.
enum Plan {
    String { params: string::Params, password: bool },
    Id(id::Params),
    Pet(pet::Params),
}

/// What creating a resource produced.
pub struct Generated {
    pub id: String,
    pub outputs: PropertyMap,
    /// The log line (never the value of a secret).
    pub summary: String,
}

impl Kind {
    fn from_token(token: &str) -> Result<Kind> {
        match token {
            "random:index:RandomString" => Ok(Kind::String),
            "random:index:RandomPassword" => Ok(Kind::Password),
            "random:index:RandomId" => Ok(Kind::Id),
            "random:index:RandomPet" => Ok(Kind::Pet),
            _ => Err(Error::unknown_type(token)),
        }
    }

    fn inputs(self) -> &'static [&'static str] {
        match self {
            Kind::String | Kind::Password => string::INPUTS,
            Kind::Id => id::INPUTS,
            Kind::Pet => pet::INPUTS,
        }
    }

    /// Validates `c`'s inputs; the plan once they are all known.
    fn check(self, c: &mut Checker) -> Option<Plan> {
        match self {
            Kind::String => string::check(c).map(|params| Plan::String { params, password: false }),
            Kind::Password => string::check(c).map(|params| Plan::String { params, password: true }),
            Kind::Id => id::check(c).map(Plan::Id),
            Kind::Pet => pet::check(c).map(Plan::Pet),
        }
    }

    /// The generated outputs, as unknowns for previews.
    fn unknown_outputs(self) -> PropertyMap {
        match self {
            Kind::String => string::unknown_outputs(false),
            Kind::Password => string::unknown_outputs(true),
            Kind::Id => id::unknown_outputs(),
            Kind::Pet => PropertyMap::new(),
        }
    }

    /// Just the inputs of a state.
    fn inputs_of(self, state: &PropertyMap) -> PropertyMap {
        state.iter().filter(|(k, _)| self.inputs().contains(&k.as_str())).map(|(k, v)| (k.clone(), v.clone())).collect()
    }
}

impl Plan {
    fn generate(&self, rng: &mut dyn Rng) -> Result<Generated> {
        match self {
            Plan::String { params, password } => string::create(params, rng, *password),
            Plan::Id(p) => id::create(p, rng),
            Plan::Pet(p) => pet::create(p, rng),
        }
    }
}

impl Provider for Random {
    fn info(&self) -> PluginInfo {
        PluginInfo { name: "random".into(), version: env!("CARGO_PKG_VERSION").into() }
    }

    fn get_schema(&mut self, _req: GetSchemaRequest) -> Result<String> {
        Ok(SCHEMA.replacen(SCHEMA_VERSION, &format!("\"version\": \"{}\"", env!("CARGO_PKG_VERSION")), 1))
    }

    fn check(&mut self, req: CheckRequest) -> Result<CheckResponse> {
        let kind = Kind::from_token(&req.resource_type)?;
        let mut c = Checker::new(&req.news, kind.inputs());
        kind.check(&mut c);
        Ok(c.finish())
    }

    /// Any change of an input replaces the resource. The old side is the old
    /// inputs, or the inputs kept in the state for resources recorded without them.
    fn diff(&mut self, req: DiffRequest) -> Result<DiffResponse> {
        let kind = Kind::from_token(&req.resource_type)?;
        let olds = if req.old_inputs.is_empty() { kind.inputs_of(&req.olds) } else { req.old_inputs };
        Ok(Differ::new().replace_on_changes(kind.inputs()).ignore(&req.ignore_changes).diff(&olds, &req.news))
    }

    fn create(&mut self, req: CreateRequest) -> Result<CreateResponse> {
        let kind = Kind::from_token(&req.resource_type)?;
        let mut c = Checker::new(&req.properties, kind.inputs());
        let plan = kind.check(&mut c);
        let CheckResponse { inputs: mut properties, failures } = c.finish();
        if !failures.is_empty() {
            return Err(Error::invalid(format!("invalid inputs: {}", check::describe(&failures))));
        }
        if req.preview {
            // Random results cannot be known before they are drawn.
            properties.extend(kind.unknown_outputs());
            return Ok(CreateResponse { id: String::new(), properties, refresh_before_update: false });
        }
        let plan = plan.ok_or_else(|| Error::invalid("inputs must be known to create the resource"))?;
        let generated = plan.generate(&mut OsRng)?;
        log::for_urn(&req.urn).info(&generated.summary);
        properties.extend(generated.outputs);
        Ok(CreateResponse { id: generated.id, properties, refresh_before_update: false })
    }

    /// Nothing exists outside the state: it is read back unchanged.
    fn read(&mut self, req: ReadRequest) -> Result<ReadResponse> {
        let kind = Kind::from_token(&req.resource_type)?;
        let inputs = if req.inputs.is_empty() { kind.inputs_of(&req.properties) } else { req.inputs };
        Ok(ReadResponse { id: req.id, properties: req.properties, inputs, refresh_before_update: false })
    }

    /// Not reached (every change replaces): the new inputs over the old outputs.
    fn update(&mut self, req: UpdateRequest) -> Result<UpdateResponse> {
        let kind = Kind::from_token(&req.resource_type)?;
        let mut properties = req.olds;
        properties.retain(|k, _| !kind.inputs().contains(&k.as_str()));
        properties.extend(req.news);
        Ok(UpdateResponse { properties, refresh_before_update: false })
    }

    fn delete(&mut self, req: DeleteRequest) -> Result<()> {
        Kind::from_token(&req.resource_type).map(|_| ())
    }

    fn invoke(&mut self, req: InvokeRequest) -> Result<InvokeResponse> {
        match req.token.as_str() {
            integer::TOKEN => integer::invoke(&req.args, &mut OsRng),
            other => Err(Error::unknown_function(other)),
        }
    }
}

pulumi_wasm_sdk::export_provider!(Random);

#[cfg(test)]
mod tests;
