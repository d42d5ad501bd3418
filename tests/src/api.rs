//! A real HTTP server on loopback that plays the key-value REST API of the
//! `kv` example (see examples/kv/src/api.rs), plus a few routes the sandbox
//! tests use (`/hello`, `/slow`, configurable redirects). It records every request.

use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde::{Deserialize, Serialize};
use tokio::net::TcpListener;

/// An item as the API stores it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Item {
    pub key: String,
    pub value: String,
    pub tags: Option<BTreeMap<String, String>>,
}

#[derive(Deserialize)]
struct PutBody {
    value: String,
    #[serde(default)]
    tags: Option<BTreeMap<String, String>>,
}

/// One request the server received.
#[derive(Clone, Debug)]
pub struct Seen {
    pub method: String,
    pub path: String,
    pub authorization: Option<String>,
}

#[derive(Default)]
struct ApiState {
    items: Mutex<BTreeMap<String, Item>>,
    token: Option<String>,
    seen: Mutex<Vec<Seen>>,
    redirects: Mutex<HashMap<String, String>>,
}

/// The API server; stops when dropped.
pub struct KvApi {
    pub addr: SocketAddr,
    state: Arc<ApiState>,
    task: tokio::task::JoinHandle<()>,
}

impl KvApi {
    /// Serves on 127.0.0.1 at a free port; with `token`, every `/items`
    /// request must carry `Authorization: Bearer <token>` (else 401).
    pub async fn start(token: Option<&str>) -> KvApi {
        let state = Arc::new(ApiState { token: token.map(str::to_owned), ..Default::default() });
        let app = Router::new()
            .route("/items/{key}", get(get_item).put(put_item).delete(delete_item))
            .route("/hello", get(|| async { "hello" }))
            // Answers after 10 s: for timeouts.
            .route(
                "/slow",
                get(|| async {
                    tokio::time::sleep(std::time::Duration::from_secs(10)).await;
                    "finally"
                }),
            )
            .fallback(fallback)
            .layer(axum::middleware::from_fn_with_state(state.clone(), record))
            .with_state(state.clone());
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind the API port");
        let addr = listener.local_addr().expect("local addr");
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        KvApi { addr, state, task }
    }

    /// `http://127.0.0.1:<port>`: the endpoint, and the origin to grant.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn item(&self, key: &str) -> Option<Item> {
        self.state.items.lock().unwrap().get(key).cloned()
    }

    pub fn items(&self) -> BTreeMap<String, Item> {
        self.state.items.lock().unwrap().clone()
    }

    /// Changes an item behind the provider's back (drift).
    pub fn put_direct(&self, key: &str, value: &str, tags: Option<BTreeMap<String, String>>) {
        let item = Item { key: key.to_owned(), value: value.to_owned(), tags };
        self.state.items.lock().unwrap().insert(key.to_owned(), item);
    }

    pub fn remove_direct(&self, key: &str) {
        self.state.items.lock().unwrap().remove(key);
    }

    /// Answers `GET path` with `302 Location: to`.
    pub fn redirect(&self, path: &str, to: &str) {
        self.state.redirects.lock().unwrap().insert(path.to_owned(), to.to_owned());
    }

    /// Every request received so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.state.seen.lock().unwrap().clone()
    }

    /// `METHOD path` of every request, in order.
    pub fn requests(&self) -> Vec<String> {
        self.seen().into_iter().map(|s| format!("{} {}", s.method, s.path)).collect()
    }
}

impl Drop for KvApi {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn record(
    State(state): State<Arc<ApiState>>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let authorization = req.headers().get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()).map(str::to_owned);
    let seen = Seen { method: req.method().to_string(), path: req.uri().path().to_owned(), authorization };
    state.seen.lock().unwrap().push(seen);
    next.run(req).await
}

/// The 401 answer when the API wants a token and the request lacks it.
fn unauthorized(state: &ApiState, headers: &HeaderMap) -> Option<Response> {
    let token = state.token.as_ref()?;
    let given = headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok());
    (given != Some(format!("Bearer {token}").as_str()))
        .then(|| (StatusCode::UNAUTHORIZED, "missing or wrong bearer token").into_response())
}

async fn get_item(State(state): State<Arc<ApiState>>, headers: HeaderMap, Path(key): Path<String>) -> Response {
    if let Some(r) = unauthorized(&state, &headers) {
        return r;
    }
    match state.items.lock().unwrap().get(&key) {
        Some(item) => axum::Json(item.clone()).into_response(),
        None => (StatusCode::NOT_FOUND, format!("no item {key}")).into_response(),
    }
}

async fn put_item(
    State(state): State<Arc<ApiState>>,
    headers: HeaderMap,
    Path(key): Path<String>,
    body: Bytes,
) -> Response {
    if let Some(r) = unauthorized(&state, &headers) {
        return r;
    }
    let body: PutBody = match serde_json::from_slice(&body) {
        Ok(b) => b,
        Err(e) => return (StatusCode::BAD_REQUEST, format!("bad item: {e}")).into_response(),
    };
    let mut items = state.items.lock().unwrap();
    let create_only = headers.get(header::IF_NONE_MATCH).is_some_and(|v| v == "*");
    if create_only && items.contains_key(&key) {
        return (StatusCode::PRECONDITION_FAILED, format!("item {key} exists")).into_response();
    }
    let item = Item { key: key.clone(), value: body.value, tags: body.tags };
    let status = if items.insert(key, item.clone()).is_some() { StatusCode::OK } else { StatusCode::CREATED };
    (status, axum::Json(item)).into_response()
}

async fn delete_item(State(state): State<Arc<ApiState>>, headers: HeaderMap, Path(key): Path<String>) -> Response {
    if let Some(r) = unauthorized(&state, &headers) {
        return r;
    }
    match state.items.lock().unwrap().remove(&key) {
        Some(_) => StatusCode::NO_CONTENT.into_response(),
        None => (StatusCode::NOT_FOUND, format!("no item {key}")).into_response(),
    }
}

async fn fallback(State(state): State<Arc<ApiState>>, method: Method, uri: Uri) -> Response {
    let to = state.redirects.lock().unwrap().get(uri.path()).cloned();
    match to {
        Some(to) if method == Method::GET || method == Method::POST => {
            (StatusCode::FOUND, [(header::LOCATION, to)], "redirecting").into_response()
        }
        _ => (StatusCode::NOT_FOUND, format!("no route {method} {}", uri.path())).into_response(),
    }
}
