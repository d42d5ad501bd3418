//! Outbound HTTP for providers (cargo feature `http`), over `wasi:http`.
//!
//! Provider methods are synchronous, so this client is blocking: each
//! request runs to completion on a small event loop inside the call.
//!
//! ```ignore
//! use pulumi_wasm_sdk::http::{self, Method};
//!
//! let item: serde_json::Value = http::get("https://api.example.com/items/a")?.error_for_status()?.json()?;
//! let resp = http::Request::new(Method::Put, "https://api.example.com/items/a")
//!     .bearer_auth(&token)
//!     .json(&serde_json::json!({ "value": "v" }))
//!     .send()?;
//! ```
//!
//! The host sends every request itself and checks it against the user's
//! grants (scheme, host, port). A request it refuses fails with
//! [`Error::FailedPrecondition`] naming the
//! URL; the provider needs no code for that: return the error with `?`.
//!
//! Redirects are **not** followed unless asked for with
//! [`Request::follow_redirects`]; each hop is then a new request that the host
//! checks again. By default a 3xx response is returned as it is
//! ([`Response::location`] tells where it points).
//!
//! Every request has timeouts (connect, first byte, between bytes, and an
//! overall one) and a cap on the response body it reads into memory.
//!
//! In a native build (`cargo test`) there is no host: requests go to the
//! test's `testing::HttpMock`.

use std::fmt;
use std::time::Duration;

use crate::Error;

type Result<T, E = Error> = std::result::Result<T, E>;

/// Default time to establish the connection.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// Default time from sending the request to the first byte of the response.
pub const DEFAULT_FIRST_BYTE_TIMEOUT: Duration = Duration::from_secs(60);
/// Default longest pause between two chunks of the response body.
pub const DEFAULT_BETWEEN_BYTES_TIMEOUT: Duration = Duration::from_secs(60);
/// Default cap on the whole exchange, redirects included.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);
/// Default cap on a response body read into memory.
pub const DEFAULT_MAX_RESPONSE_BYTES: usize = 32 << 20;

/// An HTTP method.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Method {
    Get,
    Head,
    Post,
    Put,
    Patch,
    Delete,
    Options,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Head => "HEAD",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Patch => "PATCH",
            Method::Delete => "DELETE",
            Method::Options => "OPTIONS",
        }
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `GET url`, with the default timeouts; 3xx responses are returned, not followed.
pub fn get(url: impl Into<String>) -> Result<Response> {
    Request::get(url).send()
}

/// Percent-encodes `s` for use as one path segment (`/items/{segment}`).
pub fn encode_path_segment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => out.push(b as char),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// An HTTP request, built and then sent with [`Request::send`].
#[derive(Clone, Debug)]
pub struct Request {
    method: Method,
    url: String,
    headers: Vec<(String, String)>,
    body: Option<Vec<u8>>,
    /// A serialization error from [`Request::json`], reported by `send`.
    invalid: Option<String>,
    connect_timeout: Duration,
    first_byte_timeout: Duration,
    between_bytes_timeout: Duration,
    timeout: Duration,
    max_response_bytes: usize,
    max_redirects: u32,
    /// Lower-case names of headers sent only to the first origin.
    secret: Vec<String>,
}

impl Request {
    pub fn new(method: Method, url: impl Into<String>) -> Request {
        Request {
            method,
            url: url.into(),
            headers: Vec::new(),
            body: None,
            invalid: None,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            first_byte_timeout: DEFAULT_FIRST_BYTE_TIMEOUT,
            between_bytes_timeout: DEFAULT_BETWEEN_BYTES_TIMEOUT,
            timeout: DEFAULT_TIMEOUT,
            max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
            secret: Vec::new(),
            max_redirects: 0,
        }
    }

    pub fn get(url: impl Into<String>) -> Request {
        Request::new(Method::Get, url)
    }
    pub fn post(url: impl Into<String>) -> Request {
        Request::new(Method::Post, url)
    }
    pub fn put(url: impl Into<String>) -> Request {
        Request::new(Method::Put, url)
    }
    pub fn patch(url: impl Into<String>) -> Request {
        Request::new(Method::Patch, url)
    }
    pub fn delete(url: impl Into<String>) -> Request {
        Request::new(Method::Delete, url)
    }

    pub fn method(&self) -> Method {
        self.method
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    /// Adds a header (a repeated name adds another value).
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// A header carrying a credential (an API key, a session): like
    /// [`Request::header`], but not sent on when a followed redirect leaves
    /// the origin, as `authorization`, `proxy-authorization` and `cookie`
    /// never are.
    pub fn secret_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        let name = name.into();
        self.secret.push(name.to_ascii_lowercase());
        self.header(name, value)
    }

    /// `Authorization: Bearer <token>`.
    pub fn bearer_auth(self, token: &str) -> Self {
        self.header("authorization", format!("Bearer {token}"))
    }

    /// The raw request body.
    pub fn body(mut self, body: impl Into<Vec<u8>>) -> Self {
        self.body = Some(body.into());
        self
    }

    /// A JSON body (and `content-type: application/json` unless already set).
    pub fn json<T: serde::Serialize + ?Sized>(mut self, value: &T) -> Self {
        match serde_json::to_vec(value) {
            Ok(bytes) => self.body = Some(bytes),
            Err(e) => self.invalid = Some(format!("serializing the JSON body: {e}")),
        }
        if self.header_value("content-type").is_none() {
            self = self.header("content-type", "application/json");
        }
        self
    }

    /// How long to wait for the connection (default 30 s).
    pub fn connect_timeout(mut self, d: Duration) -> Self {
        self.connect_timeout = d;
        self
    }

    /// How long to wait for the first byte of the response (default 60 s).
    pub fn first_byte_timeout(mut self, d: Duration) -> Self {
        self.first_byte_timeout = d;
        self
    }

    /// The longest pause between two chunks of the response body (default 60 s).
    pub fn between_bytes_timeout(mut self, d: Duration) -> Self {
        self.between_bytes_timeout = d;
        self
    }

    /// A cap on the whole exchange, body and redirects included (default 300 s).
    /// The host's per-call deadline applies as well.
    pub fn timeout(mut self, d: Duration) -> Self {
        self.timeout = d;
        self
    }

    /// The largest response body read into memory (default 32 MiB); a longer
    /// one fails the request.
    pub fn max_response_bytes(mut self, n: usize) -> Self {
        self.max_response_bytes = n;
        self
    }

    /// Follows up to `max` redirects, each sent as a new request that the
    /// host checks against the grants. A 303 (and a 301/302 answering
    /// anything but GET/HEAD) becomes a GET without a body; credentials
    /// (`authorization`, `proxy-authorization`, `cookie` and
    /// [`Request::secret_header`]s) are dropped when a redirect leaves the
    /// original scheme, host and port. A redirect from https to http is
    /// refused. Default 0: 3xx responses are returned.
    pub fn follow_redirects(mut self, max: u32) -> Self {
        self.max_redirects = max;
        self
    }

    fn header_value(&self, name: &str) -> Option<&str> {
        header_in(&self.headers, name)
    }

    /// Sends the request and reads the whole response. A non-2xx status is
    /// not an error here: see [`Response::error_for_status`].
    pub fn send(self) -> Result<Response> {
        if let Some(why) = &self.invalid {
            return Err(Error::InvalidArgument(format!("{} {}: {why}", self.method, self.url)));
        }
        let first = Target::parse(&self.url)?;
        imp::send(self, first)
    }
}

/// A response, read into memory.
#[derive(Clone, Debug)]
pub struct Response {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    url: String,
    method: Method,
}

impl Response {
    pub fn status(&self) -> u16 {
        self.status
    }

    /// 200-299.
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// 300-399.
    pub fn is_redirect(&self) -> bool {
        (300..400).contains(&self.status)
    }

    /// The URL that answered (after any redirects followed).
    pub fn url(&self) -> &str {
        &self.url
    }

    pub fn headers(&self) -> &[(String, String)] {
        &self.headers
    }

    /// The first value of a header, by case-insensitive name.
    pub fn header(&self, name: &str) -> Option<&str> {
        header_in(&self.headers, name)
    }

    /// Where a 3xx response points, as an absolute URL.
    pub fn location(&self) -> Option<String> {
        let loc = self.header("location")?;
        Target::parse(&self.url).ok()?.join(loc).map(|t| t.url)
    }

    pub fn bytes(&self) -> &[u8] {
        &self.body
    }

    pub fn into_bytes(self) -> Vec<u8> {
        self.body
    }

    /// The body as UTF-8 text.
    pub fn text(&self) -> Result<String> {
        String::from_utf8(self.body.clone())
            .map_err(|_| Error::Failed(format!("{} {}: the response body is not UTF-8", self.method, self.url)))
    }

    /// The body parsed as JSON.
    pub fn json<T: serde::de::DeserializeOwned>(&self) -> Result<T> {
        serde_json::from_slice(&self.body).map_err(|e| {
            Error::Failed(format!("{} {}: the response is not the expected JSON: {e}", self.method, self.url))
        })
    }

    /// `Ok(self)` for 2xx; otherwise an error with the status and the start
    /// of the body (5xx, 429 and 408 are `Unavailable`: retrying may help).
    pub fn error_for_status(self) -> Result<Self> {
        if self.is_success() {
            return Ok(self);
        }
        let text = String::from_utf8_lossy(&self.body[..self.body.len().min(512)]).trim().to_owned();
        let message = if text.is_empty() {
            format!("{} {} answered {}", self.method, self.url, self.status)
        } else {
            format!("{} {} answered {}: {text}", self.method, self.url, self.status)
        };
        Err(match self.status {
            408 | 429 | 500..=599 => Error::Unavailable(message),
            _ => Error::Failed(message),
        })
    }
}

/// The first value of header `name` (in any case) in `headers`.
fn header_in<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
}

/// Headers never sent on to another origin.
const CREDENTIALS: [&str; 3] = ["authorization", "proxy-authorization", "cookie"];

/// The request as it goes out on each hop of the redirects it follows.
struct Hop {
    method: Method,
    target: Target,
    headers: Vec<(String, String)>,
    body: Option<Vec<u8>>,
    hops: u32,
}

impl Hop {
    fn first(req: &Request, first: &Target) -> Hop {
        let (headers, body) = (req.headers.clone(), req.body.clone());
        Hop { method: req.method, target: first.clone(), headers, body, hops: 0 }
    }

    /// Whether `resp` is a redirect to follow; if so, becomes the next hop.
    fn follow(&mut self, req: &Request, resp: &Response) -> Result<bool> {
        let Some(next) = resp.location().filter(|_| matches!(resp.status, 301 | 302 | 303 | 307 | 308)) else {
            return Ok(false);
        };
        if req.max_redirects == 0 {
            return Ok(false);
        }
        if self.hops >= req.max_redirects {
            return Err(Error::Failed(format!(
                "{} {}: more than {} redirects (last to {next})",
                req.method, req.url, req.max_redirects
            )));
        }
        self.hops += 1;
        let next = Target::parse(&next)?;
        // The body and the headers left would go out in clear.
        if self.target.scheme == "https" && next.scheme == "http" {
            return Err(Error::FailedPrecondition(format!(
                "{} {}: refused to follow a redirect from https to {}",
                req.method, req.url, next.url
            )));
        }
        let becomes_get = resp.status == 303 || (matches!(resp.status, 301 | 302) && self.method != Method::Head);
        if becomes_get && self.method != Method::Get && self.method != Method::Head {
            self.method = Method::Get;
            self.body = None;
            self.headers
                .retain(|(n, _)| !n.eq_ignore_ascii_case("content-type") && !n.eq_ignore_ascii_case("content-length"));
        }
        if next.origin() != self.target.origin() {
            let named = |n: &str, c: &str| n.eq_ignore_ascii_case(c);
            self.headers
                .retain(|(n, _)| !CREDENTIALS.iter().any(|c| named(n, c)) && !req.secret.iter().any(|c| named(n, c)));
        }
        self.target = next;
        Ok(true)
    }
}

/// A parsed absolute http(s) URL.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Target {
    url: String,
    scheme: String,
    /// `host[:port]` as written.
    authority: String,
    /// Path and query, starting with `/`.
    path: String,
}

impl Target {
    fn parse(url: &str) -> Result<Target> {
        let bad = |why: &str| Error::InvalidArgument(format!("invalid URL {url:?}: {why}"));
        let (scheme, rest) = url.split_once("://").ok_or_else(|| bad("expected http:// or https://"))?;
        let scheme = scheme.to_ascii_lowercase();
        if scheme != "http" && scheme != "https" {
            return Err(bad("only http and https are supported"));
        }
        let rest = rest.split('#').next().unwrap_or_default();
        let (authority, path) = match rest.find(['/', '?']) {
            Some(i) if rest.as_bytes()[i] == b'?' => (&rest[..i], format!("/{}", &rest[i..])),
            Some(i) => (&rest[..i], rest[i..].to_owned()),
            None => (rest, "/".to_owned()),
        };
        if authority.is_empty() {
            return Err(bad("no host"));
        }
        if authority.contains('@') {
            return Err(bad("credentials in URLs are not supported; use a header"));
        }
        if url.bytes().any(|b| b <= b' ' || b == 0x7f) {
            return Err(bad("spaces and control characters must be percent-encoded"));
        }
        Ok(Target { url: format!("{scheme}://{authority}{path}"), scheme, authority: authority.to_owned(), path })
    }

    /// `scheme://host:port`, with the scheme's default port made explicit.
    fn origin(&self) -> String {
        let has_port = match self.authority.rfind(':') {
            Some(i) => !self.authority[i..].contains(']'),
            None => false,
        };
        if has_port {
            format!("{}://{}", self.scheme, self.authority.to_ascii_lowercase())
        } else {
            let port = if self.scheme == "https" { 443 } else { 80 };
            format!("{}://{}:{port}", self.scheme, self.authority.to_ascii_lowercase())
        }
    }

    /// Resolves a `Location` header against this URL.
    fn join(&self, location: &str) -> Option<Target> {
        let location = location.trim();
        // Absolute only if `://` comes before any path, query or fragment
        // (`/next?u=https://x` is a path).
        let start = location.find(['/', '?', '#']).unwrap_or(location.len());
        if location.find("://").is_some_and(|i| i < start) {
            return Target::parse(location).ok();
        }
        if let Some(rest) = location.strip_prefix("//") {
            return Target::parse(&format!("{}://{rest}", self.scheme)).ok();
        }
        let path = if location.starts_with('/') {
            location.to_owned()
        } else {
            let base = self.path.split('?').next().unwrap_or("/");
            let dir = &base[..base.rfind('/').map_or(0, |i| i + 1)];
            format!("{dir}{location}")
        };
        Target::parse(&format!("{}://{}{path}", self.scheme, self.authority)).ok()
    }
}

#[cfg(target_arch = "wasm32")]
#[path = "wasi.rs"]
mod imp;

/// Native builds (unit tests, debugging) have no wasi:http host: requests
/// go to the test's [`crate::testing::HttpMock`], if any.
#[cfg(not(target_arch = "wasm32"))]
#[path = "mock.rs"]
pub(crate) mod imp;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_parsed_and_locations_resolved() {
        let t = Target::parse("HTTP://127.0.0.1:8080/items/a?x=1#frag").unwrap();
        assert_eq!(t.url, "http://127.0.0.1:8080/items/a?x=1");
        assert_eq!(t.origin(), "http://127.0.0.1:8080");
        assert_eq!(Target::parse("https://api.example.com").unwrap().origin(), "https://api.example.com:443");
        assert_eq!(Target::parse("https://h?q").unwrap().path, "/?q");
        for bad in ["ftp://x/", "127.0.0.1/x", "http:///x", "http://u:p@h/", "http://h/a b"] {
            assert!(matches!(Target::parse(bad), Err(Error::InvalidArgument(_))), "{bad}");
        }
        let resp = |loc: &str| Response {
            status: 302,
            headers: vec![("Location".into(), loc.into())],
            body: vec![],
            url: "http://h:1/a/b?c".into(),
            method: Method::Get,
        };
        assert_eq!(resp("http://other/x").location().unwrap(), "http://other/x");
        assert_eq!(resp("//other:2/x").location().unwrap(), "http://other:2/x");
        assert_eq!(resp("/root").location().unwrap(), "http://h:1/root");
        assert_eq!(resp("sib?q").location().unwrap(), "http://h:1/a/sib?q");
        assert_eq!(resp("/next?u=https://x").location().unwrap(), "http://h:1/next?u=https://x");
    }

    #[test]
    fn statuses_map_to_errors_and_bodies_decode() {
        let r = |status: u16, body: &str| Response {
            status,
            headers: vec![],
            body: body.as_bytes().to_vec(),
            url: "http://h/x".into(),
            method: Method::Get,
        };
        assert!(r(204, "").error_for_status().is_ok());
        assert!(matches!(r(503, "busy").error_for_status(), Err(Error::Unavailable(m)) if m.contains("503: busy")));
        assert!(matches!(r(404, "").error_for_status(), Err(Error::Failed(m)) if m.ends_with("answered 404")));
        assert_eq!(r(200, r#"{"a":1}"#).json::<serde_json::Value>().unwrap()["a"], 1);
        assert!(r(200, "nope").json::<serde_json::Value>().is_err());
        assert_eq!(encode_path_segment("a b/c~d"), "a%20b%2Fc~d");
    }

    #[test]
    fn requests_build_and_fail_natively_without_a_host() {
        let req = Request::put("http://h/x").bearer_auth("t").json(&serde_json::json!({"v": 1}));
        assert_eq!(req.header_value("Content-Type"), Some("application/json"));
        assert_eq!(req.header_value("authorization"), Some("Bearer t"));
        assert!(matches!(req.send(), Err(Error::Failed(m)) if m.contains("HttpMock")));
        assert!(matches!(get("nope"), Err(Error::InvalidArgument(_))));
    }

    #[test]
    fn followed_redirects_change_method_and_leave_credentials_at_the_origin() {
        use crate::testing::{HttpMock, Reply};
        let api = HttpMock::install();
        api.on(Method::Post, "https://api.example.com/a", |_| Reply::redirect(303, "/b"))
            .on(Method::Get, "https://api.example.com/b", |_| Reply::redirect(307, "https://cdn.example.net/c"))
            .on(Method::Get, "https://cdn.example.net/c", |sent| Reply::status(200).body(sent.url.clone()));
        let req = || {
            Request::post("https://API.example.com/a")
                .bearer_auth("t")
                .header("proxy-authorization", "p")
                .header("cookie", "c")
                .secret_header("X-Api-Key", "k")
                .header("accept", "text/plain")
                .json(&serde_json::json!({"v": 1}))
        };
        // Not asked to follow: the 303 is the answer.
        assert_eq!(req().send().unwrap().location().unwrap(), "https://API.example.com/b");
        let resp = req().follow_redirects(5).send().unwrap();
        assert_eq!(
            (resp.status(), resp.url(), resp.text().unwrap()),
            (200, "https://cdn.example.net/c", resp.url().to_owned())
        );
        let sent = api.sent();
        let hops: Vec<_> = sent[1..].iter().map(|s| (s.method, s.path(), s.body.len())).collect();
        assert_eq!(
            hops,
            [(Method::Post, "/a".into(), 7), (Method::Get, "/b".into(), 0), (Method::Get, "/c".into(), 0)]
        );
        let names = |i: usize| sent[i].headers.iter().map(|(n, _)| n.to_ascii_lowercase()).collect::<Vec<_>>();
        assert_eq!(names(2), ["authorization", "proxy-authorization", "cookie", "x-api-key", "accept"], "same origin");
        assert_eq!(names(3), ["accept"], "another origin gets no credentials");
        api.on(Method::Get, "https://api.example.com/down", |_| Reply::redirect(302, "http://api.example.com/c"));
        let down = Request::get("https://api.example.com/down").follow_redirects(3).send().unwrap_err();
        assert!(matches!(&down, Error::FailedPrecondition(m) if m.contains("from https to http")), "{down:?}");
        let looping = req().follow_redirects(1).send().unwrap_err();
        assert!(matches!(&looping, Error::Failed(m) if m.contains("more than 1 redirects")), "{looping:?}");
        let big = Request::get("https://cdn.example.net/c").max_response_bytes(3).send().unwrap_err();
        assert!(matches!(&big, Error::Failed(m) if m.contains("larger than the 3 bytes")), "{big:?}");
        drop(api);
        assert!(matches!(get("https://cdn.example.net/c"), Err(Error::Failed(_))), "uninstalled");
    }

    #[test]
    fn mocks_stack_and_handlers_may_send_requests_themselves() {
        use crate::testing::{HttpMock, Reply};
        let outer = HttpMock::install();
        outer.fallback(|_| Reply::status(200).body("outer"));
        let inner = HttpMock::install();
        // A gateway fronting a backend, through the mock itself.
        inner
            .on(Method::Get, "https://gw/x", |_| {
                Reply::status(200).body(get("https://backend/x").unwrap().into_bytes())
            })
            .on(Method::Get, "https://backend/x", |_| Reply::status(200).body("backend"));
        inner.on(Method::Get, "https://loop/x", |_| Reply::status(200).body(format!("{:?}", get("https://loop/x"))));
        assert_eq!(get("https://gw/x").unwrap().text().unwrap(), "backend");
        assert!(get("https://loop/x").unwrap().text().unwrap().contains("already running"));
        assert!(get("https://elsewhere/").is_err(), "the inner mock answers, without a fallback");
        drop(inner);
        assert_eq!(get("https://elsewhere/").unwrap().text().unwrap(), "outer", "the outer one answers again");
        assert_eq!(outer.sent().len(), 1);
    }
}
