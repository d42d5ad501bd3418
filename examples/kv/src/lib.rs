//! `kv`: a provider whose resources live in a remote JSON REST API.
//!
//! `kv:index:Item` (inputs `key`, `value`, optional `tags`) is one item of a
//! small key-value API (see [`api`]). The provider configuration's `endpoint`
//! is the API's base URL; an API token, when needed, comes from the `KV_TOKEN`
//! environment variable. Neither reaches the provider unless the user grants
//! it: outbound HTTP to the endpoint and the variable are declared below as
//! needs, so `pulumi-wasm grants` can show them and a denial names them.

pub mod api;

use std::collections::BTreeMap;

use pulumi_wasm_sdk::{
    CheckFailure, CheckRequest, CheckResponse, ConfigureRequest, ConfigureResponse, CreateRequest, CreateResponse,
    DeleteRequest, DiffRequest, DiffResponse, Differ, Error, GetSchemaRequest, MissingKey, PluginInfo, PropertyMap,
    Provider, ReadRequest, ReadResponse, Result, UpdateRequest, UpdateResponse, Value, log,
};

use api::{Api, Item, Put};

pulumi_wasm_sdk::declare_needs!(r#"{"http": ["http://127.0.0.1"], "env": ["KV_TOKEN"]}"#);

pub const ITEM: &str = "kv:index:Item";
const INPUTS: &[&str] = &["key", "value", "tags"];
const MAX_KEY: usize = 256;

const SCHEMA: &str = include_str!("../schema.json");
const SCHEMA_VERSION: &str = "\"version\": \"0.0.0\"";

#[derive(Default)]
pub struct Kv {
    /// Set by `configure` (which the host replays into every instance).
    api: Option<Api>,
}

fn item_type(token: &str) -> Result<()> {
    if token == ITEM { Ok(()) } else { Err(Error::unknown_type(token)) }
}

fn failure(property: &str, reason: impl Into<String>) -> CheckFailure {
    CheckFailure { property: property.to_owned(), reason: reason.into() }
}

/// Validates an endpoint URL (`http(s)://host[:port][/base]`).
fn check_endpoint(endpoint: &str) -> Option<String> {
    let rest = endpoint.strip_prefix("http://").or_else(|| endpoint.strip_prefix("https://"));
    match rest {
        None => Some("must be an http:// or https:// URL".into()),
        Some(r) if r.is_empty() || r.starts_with('/') => Some("has no host".into()),
        Some(r) if r.contains(['?', '#', '@', ' ']) => {
            Some("must be a plain base URL (no query, user or spaces)".into())
        }
        Some(_) => None,
    }
}

/// Checked inputs as an [`Item`], when every one is known.
fn item_of(props: &PropertyMap) -> Result<Option<Item>> {
    if props.values().any(Value::contains_unknowns) {
        return Ok(None);
    }
    let key = props.get("key").and_then(Value::as_str).ok_or_else(|| Error::invalid("`key` is required"))?;
    let value = props.get("value").and_then(Value::as_str).ok_or_else(|| Error::invalid("`value` is required"))?;
    let tags = match props.get("tags").map(Value::plain) {
        None | Some(Value::Null) => None,
        Some(Value::Object(m)) => Some(
            m.iter()
                .map(|(k, v)| {
                    v.as_str().map(|s| (k.clone(), s.to_owned())).ok_or_else(|| Error::invalid(format!("tags.{k}")))
                })
                .collect::<Result<BTreeMap<_, _>>>()?,
        ),
        Some(other) => return Err(Error::invalid(format!("`tags` must be an object, not {}", other.kind_name()))),
    };
    Ok(Some(Item { key: key.to_owned(), value: value.to_owned(), tags }))
}

/// The resource state for an item; `secret` keeps the value secret when its input was.
fn state_of(item: &Item, secret: bool) -> PropertyMap {
    let mut m = PropertyMap::new();
    m.insert("key".into(), item.key.clone().into());
    let value = Value::from(item.value.clone());
    m.insert("value".into(), if secret { Value::secret(value) } else { value });
    if let Some(tags) = &item.tags {
        m.insert("tags".into(), tags.iter().map(|(k, v)| (k.clone(), v.clone())).collect());
    }
    m
}

fn value_is_secret(props: &PropertyMap) -> bool {
    props.get("value").is_some_and(Value::contains_secrets)
}

impl Kv {
    fn api(&self) -> Result<&Api> {
        self.api.as_ref().ok_or_else(|| {
            Error::FailedPrecondition("the kv provider is not configured: set `kv:endpoint` in the stack config".into())
        })
    }
}

impl Provider for Kv {
    fn info(&self) -> PluginInfo {
        PluginInfo { name: "kv".into(), version: env!("CARGO_PKG_VERSION").into() }
    }

    fn get_schema(&mut self, _req: GetSchemaRequest) -> Result<String> {
        Ok(SCHEMA.replacen(SCHEMA_VERSION, &format!("\"version\": \"{}\"", env!("CARGO_PKG_VERSION")), 1))
    }

    fn check_config(&mut self, req: CheckRequest) -> Result<CheckResponse> {
        let mut failures = vec![];
        match req.news.get("endpoint") {
            None | Some(Value::Null) => failures.push(failure("endpoint", "the kv API's base URL is required")),
            Some(v) if v.contains_unknowns() => {}
            Some(v) => match v.as_str() {
                Some(e) => failures.extend(check_endpoint(e).map(|why| failure("endpoint", why))),
                None => failures.push(failure("endpoint", "must be a string")),
            },
        }
        Ok(CheckResponse { inputs: req.news, failures })
    }

    fn configure(&mut self, req: ConfigureRequest) -> Result<ConfigureResponse> {
        let endpoint = match req.args.get("endpoint") {
            Some(v) if v.contains_unknowns() => None,
            Some(v) => v.as_str().map(str::to_owned),
            None => req.variables.get("kv:config:endpoint").cloned(),
        };
        match endpoint {
            Some(e) => {
                if let Some(why) = check_endpoint(&e) {
                    return Err(Error::invalid(format!("endpoint {e:?} {why}")));
                }
                // Visible only when the user passes the variable through.
                let token = std::env::var("KV_TOKEN").ok().filter(|t| !t.is_empty());
                self.api = Some(Api::new(&e, token));
            }
            None if req.args.get("endpoint").is_some_and(Value::contains_unknowns) => self.api = None,
            None => {
                return Err(Error::MissingKeys(vec![MissingKey {
                    name: "kv:config:endpoint".into(),
                    description: "Base URL of the key-value API.".into(),
                }]));
            }
        }
        Ok(ConfigureResponse { supports_autonaming_configuration: false })
    }

    fn check(&mut self, req: CheckRequest) -> Result<CheckResponse> {
        item_type(&req.resource_type)?;
        let news = req.news;
        let mut failures = vec![];
        match news.get("key") {
            Some(v) if v.contains_unknowns() => {}
            Some(v) => match v.as_str() {
                Some("") => failures.push(failure("key", "must not be empty")),
                Some(k) if k.len() > MAX_KEY => failures.push(failure("key", format!("longer than {MAX_KEY} bytes"))),
                Some(_) => {}
                None => failures.push(failure("key", format!("must be a string, not {}", v.kind_name()))),
            },
            None => failures.push(failure("key", "is required")),
        }
        match news.get("value") {
            Some(v) if v.contains_unknowns() || v.as_str().is_some() => {}
            Some(v) => failures.push(failure("value", format!("must be a string, not {}", v.kind_name()))),
            None => failures.push(failure("value", "is required")),
        }
        match news.get("tags").map(|v| (v, v.plain())) {
            None | Some((_, Value::Null)) => {}
            Some((v, _)) if v.contains_unknowns() => {}
            Some((_, Value::Object(tags))) => {
                for (k, t) in tags {
                    if !t.contains_unknowns() && t.as_str().is_none() {
                        failures.push(failure(&format!("tags.{k}"), "must be a string"));
                    }
                }
            }
            Some((v, _)) => failures.push(failure("tags", format!("must be an object, not {}", v.kind_name()))),
        }
        for k in news.keys().filter(|k| !INPUTS.contains(&k.as_str())) {
            failures.push(failure(k, "is not an input of kv:index:Item"));
        }
        Ok(CheckResponse { inputs: news, failures })
    }

    /// Changing `key` replaces the item; `value` and `tags` update it in place.
    fn diff(&mut self, req: DiffRequest) -> Result<DiffResponse> {
        item_type(&req.resource_type)?;
        let olds = if req.old_inputs.is_empty() { req.olds } else { req.old_inputs };
        let olds: PropertyMap = olds.into_iter().filter(|(k, _)| INPUTS.contains(&k.as_str())).collect();
        Ok(Differ::new().replace_on_changes(&["key"]).ignore(&req.ignore_changes).diff(&olds, &req.news))
    }

    fn create(&mut self, req: CreateRequest) -> Result<CreateResponse> {
        item_type(&req.resource_type)?;
        let secret = value_is_secret(&req.properties);
        let item = item_of(&req.properties)?;
        if req.preview {
            return Ok(CreateResponse { id: String::new(), properties: req.properties, refresh_before_update: false });
        }
        let item = item.ok_or_else(|| Error::invalid("inputs must be known to create an item"))?;
        let api = self.api()?;
        let stored = api.put(&item, Put::CreateOnly, req.timeout)?;
        log::for_urn(&req.urn).info(&format!("created item '{}' at {}", stored.key, api.endpoint()));
        Ok(CreateResponse {
            id: stored.key.clone(),
            properties: state_of(&stored, secret),
            refresh_before_update: false,
        })
    }

    /// Reads the item back from the API: a changed value or tags shows up as
    /// drift, a deleted item as an empty ID.
    fn read(&mut self, req: ReadRequest) -> Result<ReadResponse> {
        item_type(&req.resource_type)?;
        let api = self.api()?;
        let Some(item) = api.get(&req.id, req.timeout)? else {
            return Ok(ReadResponse::default());
        };
        let secret = value_is_secret(&req.properties) || value_is_secret(&req.inputs);
        let state = state_of(&item, secret);
        Ok(ReadResponse { id: req.id, properties: state.clone(), inputs: state, refresh_before_update: false })
    }

    fn update(&mut self, req: UpdateRequest) -> Result<UpdateResponse> {
        item_type(&req.resource_type)?;
        let secret = value_is_secret(&req.news);
        if req.preview {
            return Ok(UpdateResponse { properties: req.news, refresh_before_update: false });
        }
        let item = item_of(&req.news)?.ok_or_else(|| Error::invalid("inputs must be known to update an item"))?;
        if item.key != req.id {
            return Err(Error::invalid(format!(
                "the key changed from '{}' to '{}': that is a replacement",
                req.id, item.key
            )));
        }
        let stored = self.api()?.put(&item, Put::Upsert, req.timeout)?;
        Ok(UpdateResponse { properties: state_of(&stored, secret), refresh_before_update: false })
    }

    fn delete(&mut self, req: DeleteRequest) -> Result<()> {
        item_type(&req.resource_type)?;
        self.api()?.delete(&req.id, req.timeout)
    }
}

pulumi_wasm_sdk::export_provider!(Kv);

#[cfg(test)]
mod tests {
    use super::*;
    use pulumi_wasm_sdk::{UnknownKind, props};

    fn check(news: PropertyMap) -> Vec<String> {
        let req = CheckRequest {
            urn: "urn:pulumi:dev::p::kv:index:Item::a".into(),
            name: "a".into(),
            resource_type: ITEM.into(),
            olds: PropertyMap::new(),
            news,
            random_seed: vec![],
            autonaming: None,
            old_outputs: None,
        };
        Kv::default().check(req).unwrap().failures.into_iter().map(|f| f.property).collect()
    }

    #[test]
    fn check_validates_inputs_by_path() {
        assert!(check(props! { "key" => "a", "value" => "v", "tags" => props! { "env" => "dev" } }).is_empty());
        assert!(check(props! { "key" => Value::Unknown(UnknownKind::String), "value" => "v" }).is_empty());
        assert_eq!(check(props! { "key" => "", "value" => 1 }), vec!["key", "value"]);
        assert_eq!(
            check(props! { "value" => "v", "tags" => props! { "n" => 1 }, "extra" => true }),
            vec!["key", "tags.n", "extra"]
        );
    }

    #[test]
    fn state_keeps_secrets_and_tags() {
        let props = props! { "key" => "a", "value" => Value::secret("s"), "tags" => props! { "t" => "1" } };
        let item = item_of(&props).unwrap().unwrap();
        assert_eq!(item.tags.as_ref().unwrap()["t"], "1");
        assert_eq!(state_of(&item, value_is_secret(&props)), props);
        assert!(item_of(&props! { "key" => Value::Unknown(UnknownKind::String) }).unwrap().is_none());
    }

    #[test]
    fn key_changes_replace_and_value_changes_update() {
        let diff = |olds: PropertyMap, news: PropertyMap| {
            Kv::default()
                .diff(DiffRequest {
                    id: "a".into(),
                    urn: String::new(),
                    name: String::new(),
                    resource_type: ITEM.into(),
                    olds: PropertyMap::new(),
                    news,
                    old_inputs: olds,
                    ignore_changes: vec![],
                })
                .unwrap()
        };
        let d = diff(props! { "key" => "a", "value" => "1" }, props! { "key" => "b", "value" => "1" });
        assert_eq!(d.replaces, vec!["key"]);
        let d = diff(props! { "key" => "a", "value" => "1" }, props! { "key" => "a", "value" => "2" });
        assert!(d.replaces.is_empty() && d.diffs == vec!["value"]);
    }

    #[test]
    fn endpoints_are_validated() {
        assert!(check_endpoint("http://127.0.0.1:8080").is_none());
        assert!(check_endpoint("https://kv.example.com/v1/").is_none());
        for bad in ["ftp://x", "http://", "https:///x", "http://u@h", "127.0.0.1:80"] {
            assert!(check_endpoint(bad).is_some(), "{bad}");
        }
    }
}
