//! `kv`: a provider whose resources live in a remote JSON REST API, written
//! with typed resources (`pulumi_wasm_sdk::typed`).
//!
//! `kv:index:Item` (inputs `key`, `value`, optional `tags`) is one item of a
//! small key-value API (see [`api`]). The provider configuration's `endpoint`
//! is the API's base URL; an API token, when needed, comes from the `KV_TOKEN`
//! environment variable. Neither reaches the provider unless the user grants
//! it: outbound HTTP to the endpoint and the variable are declared below as
//! needs, so `pulumi-wasm grants` can show them and a denial names them.
//! The schema, Check, Diff, previews and secrets follow from the types.

pub mod api;

use std::collections::BTreeMap;

use pulumi_wasm_sdk::typed::*;
use serde::{Deserialize, Serialize};

use api::{Api, Put};

pulumi_wasm_sdk::declare_needs! { http: ["http://127.0.0.1"], env: ["KV_TOKEN"] }

pub const ITEM: &str = "kv:index:Item";
const MAX_KEY: usize = 256;

/// A string type whose `rule` runs as it is decoded, so Check and CheckConfig
/// report a bad value at its own path next to every other failure
/// (`Resource::validate` only runs once all inputs decode).
macro_rules! checked_string {
    ($(#[$doc:meta])* $name:ident, $rule:path) => {
        $(#[$doc])*
        #[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub String);

        impl PulumiType for $name {
            const UNKNOWN: UnknownKind = UnknownKind::String;
            fn schema(types: &mut Types) -> Json {
                String::schema(types)
            }
            fn decode(v: &Value, cx: &mut Decoder) -> Option<Self> {
                let s = String::decode(v, cx)?;
                if let Some(why) = $rule(&s) {
                    cx.fail(why);
                    return None;
                }
                Some($name(s))
            }
            fn encode(&self) -> Value {
                self.0.encode()
            }
        }
    };
}

checked_string!(
    /// An item's key: 1 to 256 bytes.
    Key,
    key_problem
);
checked_string!(
    /// The API's base URL: `http(s)://host[:port][/base]`.
    Endpoint,
    check_endpoint
);

fn key_problem(key: &str) -> Option<String> {
    match key.len() {
        0 => Some("must not be empty".into()),
        n if n > MAX_KEY => Some(format!("longer than {MAX_KEY} bytes")),
        _ => None,
    }
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

/// One item of the key-value API. The key is the resource's ID; changing it
/// replaces the item; a program that gives none gets one named after the
/// resource (the engine's autonaming). Refresh detects changes made
/// directly in the API.
// The inputs, the state, and the JSON the API stores.
#[derive(PulumiType, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Item {
    /// The item's key (1 to 256 characters); by default named after the resource.
    #[pulumi(autoname, replace_on_changes)]
    #[serde(default)]
    pub key: Key,
    /// The item's value.
    pub value: String,
    /// Free-form labels.
    #[serde(default)]
    pub tags: Option<BTreeMap<String, String>>,
}

/// The provider configuration.
#[derive(PulumiType)]
pub struct Config {
    /// Base URL of the key-value API, e.g. `https://kv.example.com`. The host must grant outbound HTTP to it.
    pub endpoint: Endpoint,
}

/// A client for the configured endpoint, with the token if the user passes `KV_TOKEN` through.
fn api(ctx: &Context) -> Result<Api> {
    let config = ctx.config::<Config>().ok_or_else(|| {
        Error::FailedPrecondition("the kv provider is not configured: set `kv:endpoint` in the stack config".into())
    })?;
    let token = std::env::var("KV_TOKEN").ok().filter(|t| !t.is_empty());
    Ok(Api::new(&config.endpoint.0, token))
}

/// `kv:index:Item`. Check, Diff (`key` replaces), previews and secrets are the
/// SDK's; the methods below are the calls to the API.
pub struct KvItem;

impl Resource for KvItem {
    const TOKEN: &'static str = ITEM;
    type Inputs = Item;
    type State = Item;

    /// `PUT` with `If-None-Match: *`, so an existing item is never adopted by accident.
    fn create(&self, ctx: &Context, item: Item) -> Result<(String, Item)> {
        let api = api(ctx)?;
        let stored = api.put(&item, Put::CreateOnly, ctx.timeout)?;
        ctx.log().info(&format!("created item '{}' at {}", stored.key.0, api.endpoint()));
        Ok((stored.key.0.clone(), stored))
    }

    /// A value or tags changed on the server come back as drift, a deleted item as gone.
    fn read(&self, ctx: &Context, id: String, _state: Item) -> Result<Option<(String, Item)>> {
        Ok(api(ctx)?.get(&id, ctx.timeout)?.map(|item| (id, item)))
    }

    /// `pulumi import kv:index:Item name <key>`: the item is all the state there is.
    fn import(&self, ctx: &Context, id: String) -> Result<Option<(String, Item)>> {
        Ok(api(ctx)?.get(&id, ctx.timeout)?.map(|item| (id, item)))
    }

    fn update(&self, ctx: &Context, id: &str, _olds: Item, item: Item) -> Result<Item> {
        if item.key.0 != id {
            let (old, new) = (id, &item.key.0);
            return Err(Error::invalid(format!("the key changed from '{old}' to '{new}': that is a replacement")));
        }
        api(ctx)?.put(&item, Put::Upsert, ctx.timeout)
    }

    /// An item already gone is fine.
    fn delete(&self, ctx: &Context, id: &str, _state: Item) -> Result<()> {
        api(ctx)?.delete(id, ctx.timeout)
    }
}

pub struct Kv;

impl Package for Kv {
    fn build() -> Builder {
        Builder::new("kv", env!("CARGO_PKG_VERSION"))
            .display_name("KV")
            .description(
                "Items in a small JSON key-value REST API, managed by a WebAssembly-component provider. The \
                 provider only reaches the API the user grants it.",
            )
            .keywords(&["pulumi", "kv", "wasm"])
            .license("Apache-2.0")
            .config::<Config>()
            .resource(KvItem)
    }
}

pulumi_wasm_sdk::export_provider!(Typed<Kv>);

#[cfg(test)]
mod tests_api;

#[cfg(test)]
mod tests {
    use super::*;
    use pulumi_wasm_sdk::{ConfigureRequest, CreateRequest, Provider, props};

    fn check_request(news: PropertyMap) -> CheckRequest {
        CheckRequest {
            urn: "urn:pulumi:dev::p::kv:index:Item::a".into(),
            name: "a".into(),
            resource_type: ITEM.into(),
            olds: PropertyMap::new(),
            news,
            random_seed: vec![],
            autonaming: None,
            old_outputs: None,
        }
    }

    fn paths(r: CheckResponse) -> Vec<String> {
        r.failures.into_iter().map(|f| f.property).collect()
    }

    fn check(news: PropertyMap) -> Vec<String> {
        paths(Typed::<Kv>::default().check(check_request(news)).unwrap())
    }

    #[test]
    fn check_validates_inputs_by_path() {
        assert!(check(props! { "key" => "a", "value" => "v", "tags" => props! { "env" => "dev" } }).is_empty());
        assert!(check(props! { "key" => Value::Unknown(UnknownKind::String), "value" => "v" }).is_empty());
        assert_eq!(check(props! { "key" => "", "value" => 1 }), vec!["key", "value"]);
        assert_eq!(check(props! { "key" => "k".repeat(MAX_KEY + 1), "value" => "v" }), vec!["key"]);
        // No key: named after the resource (autonaming), so not a failure.
        assert_eq!(
            check(props! { "value" => "v", "tags" => props! { "n" => 1 }, "extra" => true }),
            vec!["extra", "tags.n"]
        );
    }

    #[test]
    fn previews_send_nothing_and_keep_secrets() {
        // Not configured: anything that reached the API would fail.
        let create = |properties, preview| {
            Typed::<Kv>::default().create(CreateRequest {
                urn: String::new(),
                name: "a".into(),
                resource_type: ITEM.into(),
                properties,
                timeout: 0.0,
                preview,
            })
        };
        let inputs = props! { "key" => "a", "value" => Value::secret("s"), "tags" => props! { "t" => "1" } };
        let preview = create(inputs.clone(), true).unwrap();
        assert_eq!((preview.id.as_str(), preview.properties), ("", inputs.clone()));
        let err = create(inputs, false).unwrap_err();
        assert!(matches!(&err, Error::FailedPrecondition(m) if m.contains("kv:endpoint")), "{err:?}");
    }

    #[test]
    fn key_changes_replace_and_value_changes_update() {
        let diff = |olds: PropertyMap, news: PropertyMap| {
            Typed::<Kv>::default()
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
        let mut kv = Typed::<Kv>::default();
        let config = |kv: &mut Typed<Kv>, news| paths(kv.check_config(check_request(news)).unwrap());
        assert!(config(&mut kv, props! { "endpoint" => "http://127.0.0.1:8080", "version" => "1" }).is_empty());
        assert_eq!(config(&mut kv, props! { "endpoint" => "ftp://x" }), vec!["endpoint"]);
        assert_eq!(config(&mut kv, props! {}), vec!["endpoint"]);
        let configure = |args| {
            Typed::<Kv>::default().configure(ConfigureRequest {
                variables: Default::default(),
                args,
                id: String::new(),
                urn: String::new(),
                name: String::new(),
                resource_type: "pulumi:providers:kv".into(),
            })
        };
        assert!(configure(props! { "endpoint" => "https://kv.example.com" }).is_ok());
        assert!(matches!(configure(props! { "endpoint" => "ftp://x" }), Err(Error::InvalidArgument(_))));
        assert!(matches!(configure(props! {}), Err(Error::MissingKeys(k)) if k[0].name == "kv:endpoint"));
    }
}
