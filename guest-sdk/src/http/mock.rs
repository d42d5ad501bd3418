//! Native builds: requests go to the [`HttpMock`] the test installed on its
//! thread, through the same redirect handling and body limit as on wasm.

use std::cell::RefCell;
use std::rc::Rc;

use super::*;

pub(super) fn send(req: Request, first: Target) -> Result<Response> {
    // Not `Unavailable`: a provider that retries those would wait in a test.
    let Some(mock) = MOCK.with(|m| m.borrow().last().cloned()) else {
        return Err(Error::Failed(format!(
            "{} {}: outbound HTTP needs the pulumi-wasm host (wasi:http); this is a native build \
             (in a test, answer it with pulumi_wasm_sdk::testing::HttpMock)",
            req.method, req.url
        )));
    };
    let mut hop = Hop::first(&req, &first);
    loop {
        let resp = answer(&mock, &req, &hop)?;
        if !hop.follow(&req, &resp)? {
            return Ok(resp);
        }
    }
}

thread_local! {
    /// The installed mocks, the last one answering.
    static MOCK: RefCell<Vec<Rc<Routes>>> = const { RefCell::new(Vec::new()) };
}

type Handler = Rc<RefCell<dyn FnMut(&Sent) -> Reply>>;

#[derive(Default)]
struct Routes {
    routes: RefCell<Vec<(Method, String, Handler)>>,
    fallback: RefCell<Option<Handler>>,
    sent: RefCell<Vec<Sent>>,
}

/// One hop's exchange. No borrow is held while the handler runs: it may
/// send requests itself, or reach the mock.
fn answer(mock: &Routes, req: &Request, hop: &Hop) -> Result<Response> {
    let sent = Sent {
        method: hop.method,
        url: hop.target.url.clone(),
        headers: hop.headers.clone(),
        body: hop.body.clone().unwrap_or_default(),
    };
    mock.sent.borrow_mut().push(sent.clone());
    let key = route_key(&sent.url);
    let route = mock.routes.borrow().iter().find(|(m, url, _)| *m == sent.method && *url == key).map(|r| r.2.clone());
    let Some(handler) = route.or_else(|| mock.fallback.borrow().clone()) else {
        return Err(Error::Failed(format!("{} {}: the test's HttpMock has no reply for it", sent.method, sent.url)));
    };
    let reply = match handler.try_borrow_mut() {
        Ok(mut handler) => handler(&sent),
        Err(_) => {
            return Err(Error::Failed(format!(
                "{} {}: the HttpMock handler answering it is already running (it sent this request itself)",
                sent.method, sent.url
            )));
        }
    };
    if reply.body.len() > req.max_response_bytes {
        return Err(Error::Failed(format!(
            "{} {}: the response body is larger than the {} bytes allowed",
            sent.method, sent.url, req.max_response_bytes
        )));
    }
    let body = if sent.method == Method::Head { Vec::new() } else { reply.body };
    Ok(Response { status: reply.status, headers: reply.headers, body, url: sent.url, method: sent.method })
}

/// A URL as routes compare it: scheme and host lower-case, no fragment.
fn route_key(url: &str) -> String {
    match Target::parse(url) {
        Ok(t) => format!("{}://{}{}", t.scheme, t.authority.to_ascii_lowercase(), t.path),
        Err(_) => url.to_owned(),
    }
}

/// Answers the provider's HTTP requests in a native test, in place of the
/// host: each request made on the thread that installed it goes to the
/// handler of its method and URL (or the fallback), through the SDK's own
/// redirect handling and body limit (as in a component), and is recorded.
/// The sandbox's grants and the timeouts are not applied. A request with
/// no handler fails (`Error::Failed`), as does one made on another thread
/// (the mock is per thread, so tests running in parallel do not share
/// one). Dropping it uninstalls it; a mock installed while another is
/// answers until it is dropped, then the other answers again.
///
/// ```
/// use pulumi_wasm_sdk::http::{self, Method};
/// use pulumi_wasm_sdk::testing::{HttpMock, Reply};
///
/// let api = HttpMock::install();
/// api.on(Method::Get, "https://api.example.com/items/a", |_| Reply::json(200, &serde_json::json!({"value": "v"})));
///
/// let item: serde_json::Value = http::get("https://api.example.com/items/a").unwrap().json().unwrap();
/// assert_eq!(item["value"], "v");
/// assert!(http::get("https://api.example.com/items/b").is_err(), "no handler");
/// assert_eq!(api.sent().len(), 2);
/// ```
pub struct HttpMock {
    routes: Rc<Routes>,
}

impl HttpMock {
    /// Installs a mock with no handlers on this thread, over any other.
    pub fn install() -> HttpMock {
        let routes = Rc::new(Routes::default());
        MOCK.with(|m| m.borrow_mut().push(routes.clone()));
        HttpMock { routes }
    }

    /// Answers `method` requests for `url` (the same path and query; scheme
    /// and host in any case) with `handler`; a later handler for the same
    /// pair is not reached.
    pub fn on(&self, method: Method, url: &str, handler: impl FnMut(&Sent) -> Reply + 'static) -> &Self {
        self.routes.routes.borrow_mut().push((method, route_key(url), Rc::new(RefCell::new(handler))));
        self
    }

    /// Answers every request no [`HttpMock::on`] handler takes: a fake API.
    pub fn fallback(&self, handler: impl FnMut(&Sent) -> Reply + 'static) -> &Self {
        *self.routes.fallback.borrow_mut() = Some(Rc::new(RefCell::new(handler)));
        self
    }

    /// Every request sent so far, each hop of a redirect on its own.
    pub fn sent(&self) -> Vec<Sent> {
        self.routes.sent.borrow().clone()
    }
}

impl Drop for HttpMock {
    fn drop(&mut self) {
        MOCK.with(|m| m.borrow_mut().retain(|r| !Rc::ptr_eq(r, &self.routes)));
    }
}

/// A request as the mock received it.
#[derive(Clone, Debug, PartialEq)]
pub struct Sent {
    pub method: Method,
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Sent {
    /// The first value of a header, by case-insensitive name.
    pub fn header(&self, name: &str) -> Option<&str> {
        header_in(&self.headers, name)
    }

    /// The path and query (`/items/a?x=1`).
    pub fn path(&self) -> String {
        Target::parse(&self.url).map(|t| t.path).unwrap_or_default()
    }

    /// The body parsed as JSON.
    pub fn json<T: serde::de::DeserializeOwned>(&self) -> serde_json::Result<T> {
        serde_json::from_slice(&self.body)
    }
}

/// What a mock handler answers.
#[derive(Clone, Debug, PartialEq)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Reply {
    /// A status without headers or body.
    pub fn status(status: u16) -> Reply {
        Reply { status, headers: Vec::new(), body: Vec::new() }
    }

    /// A JSON body with its content type.
    pub fn json<T: serde::Serialize + ?Sized>(status: u16, value: &T) -> Reply {
        let body = serde_json::to_vec(value).expect("a test's JSON reply serializes");
        Reply::status(status).header("content-type", "application/json").body(body)
    }

    /// A redirect to `location`.
    pub fn redirect(status: u16, location: &str) -> Reply {
        Reply::status(status).header("location", location)
    }

    pub fn header(mut self, name: &str, value: &str) -> Reply {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    pub fn body(mut self, body: impl Into<Vec<u8>>) -> Reply {
        self.body = body.into();
        self
    }
}
