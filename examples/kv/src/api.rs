//! The key-value REST API the provider manages:
//!
//! | request | body | answers |
//! |---|---|---|
//! | `PUT /items/{key}` | `{"value": .., "tags": ..}` | 200/201 with the item; 412 when `If-None-Match: *` and it exists |
//! | `GET /items/{key}` | | 200 with the item, 404 when there is none |
//! | `DELETE /items/{key}` | | 204 (or 200), 404 when there is none |
//!
//! An item ([`Item`]) is `{"key": .., "value": .., "tags": {..} | null}`. With a token,
//! every request carries `Authorization: Bearer <token>`.

use std::collections::BTreeMap;
use std::time::Duration;

use pulumi_wasm_sdk::http::{self, Method, Request, Response};
use pulumi_wasm_sdk::{Error, Result};
use serde::Serialize;

use crate::{Item, Key};

#[derive(Serialize)]
struct Body<'a> {
    value: &'a str,
    tags: &'a Option<BTreeMap<String, String>>,
}

/// A client for one endpoint.
#[derive(Clone, Debug)]
pub struct Api {
    endpoint: String,
    token: Option<String>,
}

/// How a create reacts to an existing item.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Put {
    /// Fail with 412 if the key exists (create: never adopt by accident).
    CreateOnly,
    /// Create or overwrite (update).
    Upsert,
}

impl Api {
    pub fn new(endpoint: &str, token: Option<String>) -> Api {
        Api { endpoint: endpoint.trim_end_matches('/').to_owned(), token }
    }

    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    fn request(&self, method: Method, key: &str, timeout: f64) -> Request {
        let url = format!("{}/items/{}", self.endpoint, http::encode_path_segment(key));
        let mut req = Request::new(method, url).header("accept", "application/json");
        if let Some(token) = &self.token {
            req = req.bearer_auth(token);
        }
        // The engine's custom timeout (seconds) bounds the whole exchange.
        if timeout > 0.0 && timeout.is_finite() {
            req = req.timeout(Duration::from_secs_f64(timeout.min(86_400.0)));
        }
        req
    }

    /// The item, or `None` when the API has no such key.
    pub fn get(&self, key: &str, timeout: f64) -> Result<Option<Item>> {
        let resp = self.request(Method::Get, key, timeout).send()?;
        if resp.status() == 404 {
            return Ok(None);
        }
        let item = self.checked(resp)?.json::<Item>()?;
        Ok(Some(Item { key: Key(key.to_owned()), ..item }))
    }

    /// Writes the item; returns what the API stored.
    pub fn put(&self, item: &Item, mode: Put, timeout: f64) -> Result<Item> {
        let mut req =
            self.request(Method::Put, &item.key.0, timeout).json(&Body { value: &item.value, tags: &item.tags });
        if mode == Put::CreateOnly {
            req = req.header("if-none-match", "*");
        }
        let resp = req.send()?;
        if resp.status() == 412 && mode == Put::CreateOnly {
            return Err(Error::FailedPrecondition(format!(
                "an item with key '{}' already exists at {}: choose another key, or import the item",
                item.key.0, self.endpoint
            )));
        }
        let resp = self.checked(resp)?;
        // An API may answer 204 without a body: then it stored what was sent.
        if resp.bytes().iter().all(u8::is_ascii_whitespace) {
            return Ok(item.clone());
        }
        let stored = resp.json::<Item>()?;
        Ok(Item { key: item.key.clone(), ..stored })
    }

    /// Deletes the item; an item already gone is not an error.
    pub fn delete(&self, key: &str, timeout: f64) -> Result<()> {
        let resp = self.request(Method::Delete, key, timeout).send()?;
        if resp.status() == 404 {
            return Ok(());
        }
        self.checked(resp).map(|_| ())
    }

    fn checked(&self, resp: Response) -> Result<Response> {
        match resp.status() {
            401 | 403 => Err(Error::FailedPrecondition(format!(
                "the kv API at {} refused the request ({}): {}",
                self.endpoint,
                resp.status(),
                if self.token.is_some() {
                    "check the KV_TOKEN the provider was given"
                } else {
                    "it needs a token: set KV_TOKEN and let the provider read it (policy `env = [\"KV_TOKEN\"]`)"
                }
            ))),
            _ => resp.error_for_status(),
        }
    }
}
