//! The pull side of the registry protocol, over reqwest directly.
//!
//! Written here rather than left to `oci-client` because that crate reads
//! manifests, token answers and error bodies whole into memory, and the
//! registry a Parameterize value names is whoever generated the SDK's choice:
//! one answering with an endless body would take the plugin's memory. Here
//! every body is read up to a bound and within a deadline, a layer's foreign
//! `urls` are never followed, redirects are followed here (where a stranger's
//! registry may send a pull is `reach.rs`'s rule) and the registry's
//! credentials go to the registry alone: a challenge is answered only from
//! it, and no hop elsewhere carries them. Pushing (to a registry the user
//! names) stays with `oci-client`.

use std::time::Duration;

use bytes::Bytes;
use http_auth::parser::ChallengeParser;
use http_body_util::{BodyExt, LengthLimitError, Limited};
use oci_client::secrets::RegistryAuth;
use reqwest::header::{ACCEPT, AUTHORIZATION, HeaderMap, HeaderValue, LOCATION, WWW_AUTHENTICATE};
use reqwest::{Response, StatusCode, Url};
use tokio::time::{Instant, timeout, timeout_at};

use super::Reference;
use super::reach::{self, without_query};
use crate::text::printable;

/// A registry's token answer is a small JSON object (a JWT inside).
const MAX_TOKEN_BYTES: usize = 1 << 20;
/// Only the start of an error body is read (and shown).
const MAX_ERROR_BYTES: usize = 16 << 10;
/// An error detail quoted in a message stops here.
const MAX_DETAIL_CHARS: usize = 300;
/// How long the start of an error body may take.
const ERROR_TIMEOUT: Duration = Duration::from_secs(10);
/// The slowest a component may arrive, after the pull's timeout: 64 KiB/s
/// (256 MiB in about 70 minutes).
const MIN_BYTES_PER_SECOND: u64 = 64 << 10;
/// The most redirects one request follows.
const MAX_HOPS: usize = 5;
/// How often a GET the registry answered "too many requests" or "unavailable
/// for now" is asked again, and the longest wait before one: Docker Hub's
/// anonymous limit resets over hours, which no pull should sit out.
const MAX_RETRIES: u32 = 3;
const MAX_RETRY_WAIT: Duration = Duration::from_secs(10);

#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    #[error(transparent)]
    Http(reqwest::Error),
    /// `own`: the registry itself answered (not a host it redirected to).
    #[error("{url} answered {status}{}", detail(message))]
    Status { url: String, status: StatusCode, message: String, own: bool },
    /// `own`: the token service itself answered (not a host it redirected to).
    #[error("the token service at {realm} answered {status}{}", detail(message))]
    Token { realm: String, status: StatusCode, message: String, own: bool },
    #[error("{what} from {url} is over the {limit}-byte limit")]
    TooLarge { what: &'static str, url: String, limit: usize },
    #[error("{what} from {url} declares {declared} bytes, over the {limit}-byte limit")]
    Declared { what: &'static str, url: String, declared: u64, limit: usize },
    #[error("{what} from {url} took longer than {after:?}")]
    TimedOut { what: &'static str, url: String, after: Duration },
    #[error("{0}")]
    Protocol(String),
}

impl From<reqwest::Error> for FetchError {
    /// Without the URL's query, which may hold a signature (a CDN's signed URL).
    fn from(mut error: reqwest::Error) -> Self {
        if let Some(url) = error.url_mut() {
            url.set_query(None);
        }
        FetchError::Http(error)
    }
}

impl FetchError {
    /// Whether the registry still said "too many requests" after the retries.
    pub fn rate_limited(&self) -> bool {
        matches!(self, FetchError::Status { status: StatusCode::TOO_MANY_REQUESTS, .. })
    }

    /// Whether the registry or its token service turned the credentials down.
    pub fn refused(&self) -> bool {
        match self {
            FetchError::Status { status, own: true, .. } | FetchError::Token { status, own: true, .. } => {
                *status == StatusCode::UNAUTHORIZED || *status == StatusCode::FORBIDDEN
            }
            _ => false,
        }
    }
}

fn detail(message: &str) -> String {
    if message.is_empty() { String::new() } else { format!(": {message}") }
}

/// One pull's requests to one repository. A registry that answers 401 gets
/// the challenge's flow once (a bearer token for `repository:<name>:pull`,
/// or basic auth), and the answer is kept for the next request. With
/// credentials to give, the registry's `/v2/` is asked for its challenge
/// first, as some registries hide a private repository behind a 404.
pub struct Fetcher<'a> {
    /// Follows no redirects: [`Fetcher::follow`] does.
    http: reqwest::Client,
    /// `<scheme>://<registry>/v2/`.
    origin: Url,
    reference: &'a Reference,
    auth: &'a RegistryAuth,
    /// A stranger's registry: where it may send the pull is checked ([`reach::allowed`]).
    guarded: bool,
    /// For an answer's head, and for a manifest or a token with its body: a
    /// registry trickling one byte at a time must not hold a Parameterize
    /// call for hours.
    timeout: Duration,
    authorization: Option<HeaderValue>,
    /// `/v2/` was asked for its challenge.
    probed: bool,
    /// A challenge was answered (once is all a pull gets).
    challenged: bool,
}

/// How a [`Fetcher`] reaches its registry.
pub struct Reach {
    /// Plain HTTP rather than HTTPS.
    pub plain: bool,
    /// Whether a stranger named the registry (see [`Fetcher::guarded`]).
    pub guarded: bool,
    pub timeout: Duration,
}

impl<'a> Fetcher<'a> {
    pub fn new(
        http: reqwest::Client,
        reference: &'a Reference,
        reach: Reach,
        auth: &'a RegistryAuth,
    ) -> Result<Fetcher<'a>, FetchError> {
        // Docker Hub serves the registry API under another name: resolved as pushes resolve it.
        let client_reference = reference.to_client();
        let registry = client_reference.resolve_registry();
        let scheme = if reach.plain { "http" } else { "https" };
        let origin = Url::parse(&format!("{scheme}://{registry}/v2/"))
            .map_err(|e| FetchError::Protocol(format!("registry {registry}: {e}")))?;
        let authorization = match auth {
            RegistryAuth::Bearer(token) => bearer(token),
            _ => None,
        };
        let (guarded, timeout) = (reach.guarded, reach.timeout);
        Ok(Fetcher { http, origin, reference, auth, guarded, timeout, authorization, probed: false, challenged: false })
    }

    /// The manifest the reference names (its digest, else its tag, else
    /// `latest`), read up to `limit` bytes.
    pub async fn manifest(&mut self, accept: &str, limit: usize) -> Result<Vec<u8>, FetchError> {
        let r = self.reference;
        let name = match (&r.digest, &r.tag) {
            (Some(digest), _) => format!("sha256:{digest}"),
            (None, Some(tag)) => tag.clone(),
            (None, None) => "latest".to_owned(),
        };
        let url = self.url(&format!("manifests/{name}"))?;
        let response = match self.get(&url, Some(accept), true).await {
            // `push` tags a component's version, never `latest`: say so.
            Err(FetchError::Status { url, status: StatusCode::NOT_FOUND, message, own: true })
                if r.digest.is_none() && r.tag.is_none() =>
            {
                let message = format!(
                    "{}no tag was named, so `latest` was asked for; `pulumi-wasm push` tags a component's version: \
                     name it (oci://{}/{}:<version>)",
                    if message.is_empty() { String::new() } else { format!("{message}; ") },
                    r.registry,
                    r.repository
                );
                return Err(FetchError::Status { url, status: StatusCode::NOT_FOUND, message, own: true });
            }
            other => other?,
        };
        read(response, "the manifest", limit).await
    }

    /// The blob with lower-case hex SHA-256 `digest` and `size` bytes, to be
    /// read (and checked) as it arrives.
    pub async fn blob(&mut self, digest: &str, size: u64) -> Result<Blob, FetchError> {
        let url = self.url(&format!("blobs/sha256:{digest}"))?;
        let response = self.get(&url, None, false).await?;
        let after = self.timeout + Duration::from_secs(size / MIN_BYTES_PER_SECOND);
        Ok(Blob { url: without_query(response.url()), response, deadline: Instant::now() + after, after })
    }

    fn url(&self, path: &str) -> Result<Url, FetchError> {
        let repository = &self.reference.repository;
        self.origin.join(&format!("{repository}/{path}")).map_err(|e| FetchError::Protocol(format!("{path}: {e}")))
    }

    /// GETs `url` (the registry's), answering one challenge from the
    /// registry; `small` as in [`Ask`].
    async fn get(&mut self, url: &Url, accept: Option<&str>, small: bool) -> Result<Response, FetchError> {
        if !self.probed && matches!(self.auth, RegistryAuth::Basic(..)) {
            self.probed = true;
            let probe = self.http.get(self.origin.clone()).timeout(self.timeout);
            let probe = self.send(probe, "the registry's challenge", &self.origin).await?;
            if probe.status() == StatusCode::UNAUTHORIZED {
                self.challenged = true;
                self.authorization = self.answer(probe.headers()).await?;
            }
        }
        let mut retries = 0;
        loop {
            let authorization = self.authorization.as_ref();
            let response = self.follow(Ask { url, what: "the answer", accept, authorization, small }).await?;
            let own = reach::same_origin(response.url(), &self.origin);
            let status = response.status();
            if retries < MAX_RETRIES
                && matches!(status, StatusCode::TOO_MANY_REQUESTS | StatusCode::SERVICE_UNAVAILABLE)
            {
                let wait = retry_after(response.headers()).unwrap_or(Duration::from_secs(1 << retries));
                let wait = wait.min(MAX_RETRY_WAIT);
                tracing::warn!("{} answered {status}; asking again in {wait:?}", without_query(response.url()));
                retries += 1;
                tokio::time::sleep(wait).await;
                continue;
            }
            // Only the registry's own challenge: a redirect target's would get the registry's credentials.
            if response.status() == StatusCode::UNAUTHORIZED && own && !self.challenged {
                self.challenged = true;
                if let Some(authorization) = self.answer(response.headers()).await? {
                    self.authorization = Some(authorization);
                    continue;
                }
            }
            return success(response, own).await;
        }
    }

    /// GETs `ask.url` and the redirects it answers with, up to [`MAX_HOPS`].
    /// The authorization goes only to the first URL's origin (reqwest's own
    /// following would send it again to a second hop on another host).
    async fn follow(&self, ask: Ask<'_>) -> Result<Response, FetchError> {
        let mut at = ask.url.clone();
        for _ in 0..=MAX_HOPS {
            let mut request = self.http.get(at.clone());
            if ask.small {
                request = request.timeout(self.timeout);
            }
            if let Some(accept) = ask.accept {
                request = request.header(ACCEPT, accept);
            }
            if let Some(authorization) = ask.authorization.filter(|_| reach::same_origin(&at, ask.url)) {
                request = request.header(AUTHORIZATION, authorization.clone());
            }
            let response = self.send(request, ask.what, &at).await?;
            let location = response.headers().get(LOCATION).and_then(|l| l.to_str().ok());
            let Some(location) = location.filter(|_| response.status().is_redirection()) else {
                return Ok(response);
            };
            let from = without_query(&at);
            let next = at.join(location).map_err(|e| FetchError::Protocol(format!("{from} redirected to {e}")))?;
            if !matches!(next.scheme(), "http" | "https") {
                return Err(FetchError::Protocol(format!("{from} redirected to {}", next.scheme())));
            }
            if self.guarded {
                reach::allowed(&self.origin, &next)
                    .map_err(|why| FetchError::Protocol(format!("{from} redirected to {why}")))?;
            }
            at = next;
        }
        Err(FetchError::Protocol(format!("{} redirected more than {MAX_HOPS} times", without_query(ask.url))))
    }

    /// Sends `request`, waiting at most the timeout for the answer's head.
    async fn send(
        &self,
        request: reqwest::RequestBuilder,
        what: &'static str,
        url: &Url,
    ) -> Result<Response, FetchError> {
        match timeout(self.timeout, request.send()).await {
            Ok(sent) => Ok(sent?),
            Err(_) => Err(FetchError::TimedOut { what, url: without_query(url), after: self.timeout }),
        }
    }

    /// What to send after a 401 with these headers: a token from the
    /// challenge's realm for a bearer challenge, else the basic credentials
    /// (if any).
    async fn answer(&self, headers: &HeaderMap) -> Result<Option<HeaderValue>, FetchError> {
        let challenges = headers.get_all(WWW_AUTHENTICATE).iter().filter_map(|v| v.to_str().ok());
        let bearer = challenges.flat_map(ChallengeParser::new).flatten().find_map(|c| {
            let param = |name: &str| c.params.iter().find(|(k, _)| k.eq_ignore_ascii_case(name));
            let realm = param("realm").map(|(_, v)| v.to_unescaped());
            let service = param("service").map(|(_, v)| v.to_unescaped());
            c.scheme.eq_ignore_ascii_case("bearer").then_some((realm, service))
        });
        match bearer {
            Some((Some(realm), service)) => self.token(&realm, service.as_deref()).await.map(Some),
            Some((None, _)) => Err(FetchError::Protocol("the registry's bearer challenge names no realm".into())),
            None => Ok(self.basic()),
        }
    }

    /// The basic credentials as a header, when there are any.
    fn basic(&self) -> Option<HeaderValue> {
        match self.auth {
            RegistryAuth::Basic(user, password) => Some(basic(user, password)),
            _ => None,
        }
    }

    /// Asks the token service at `realm` for a pull token, with the basic
    /// credentials when there are any.
    async fn token(&self, realm: &str, service: Option<&str>) -> Result<HeaderValue, FetchError> {
        let shown = printable(realm, MAX_DETAIL_CHARS);
        let protocol = |why: String| FetchError::Protocol(format!("the registry's token service {shown:?} {why}"));
        let url = Url::parse(realm).map_err(|e| protocol(format!("is not a URL: {e}")))?;
        if self.guarded {
            reach::allowed(&self.origin, &url).map_err(protocol)?;
        }
        let url = token_url(url, &self.reference.repository, service);
        let credentials = self.basic();
        let what = "the token service's answer";
        let ask = Ask { url: &url, what, accept: None, authorization: credentials.as_ref(), small: true };
        let response = self.follow(ask).await?;
        let status = response.status();
        if !status.is_success() {
            let own = reach::same_origin(response.url(), &url);
            let realm = if own { shown } else { format!("{shown}, redirected to {},", without_query(response.url())) };
            let message = message(response).await;
            return Err(FetchError::Token { realm, status, message, own });
        }
        #[derive(serde::Deserialize)]
        struct Answer {
            token: Option<String>,
            access_token: Option<String>,
        }
        let body = read(response, "the token service's answer", MAX_TOKEN_BYTES).await?;
        let answer: Answer = serde_json::from_slice(&body).map_err(|e| protocol(format!("answered no token: {e}")))?;
        let token = answer.token.or(answer.access_token).filter(|t| !t.is_empty());
        let token = token.ok_or_else(|| protocol("answered no token".into()))?;
        bearer(&token).ok_or_else(|| protocol("answered an unusable token".into()))
    }
}

/// One GET and what goes with it.
struct Ask<'a> {
    url: &'a Url,
    /// What the answer is, for messages.
    what: &'static str,
    accept: Option<&'a str>,
    /// Sent to `url`'s origin only, on no hop elsewhere.
    authorization: Option<&'a HeaderValue>,
    /// The timeout bounds each exchange, body included, else only its head.
    small: bool,
}

/// A blob arriving, with its deadline: the pull's timeout plus its size at
/// [`MIN_BYTES_PER_SECOND`].
pub struct Blob {
    pub response: Response,
    url: String,
    deadline: Instant,
    after: Duration,
}

impl Blob {
    /// The next piece, `None` at the end.
    pub async fn chunk(&mut self) -> Result<Option<Bytes>, FetchError> {
        match timeout_at(self.deadline, self.response.chunk()).await {
            Ok(piece) => Ok(piece?),
            Err(_) => Err(FetchError::TimedOut { what: "the component", url: self.url.clone(), after: self.after }),
        }
    }
}

/// The token request for a pull of `repository` from the service at `realm`.
fn token_url(mut realm: Url, repository: &str, service: Option<&str>) -> Url {
    realm.query_pairs_mut().append_pair("scope", &format!("repository:{repository}:pull"));
    if let Some(service) = service {
        realm.query_pairs_mut().append_pair("service", service);
    }
    realm
}

fn bearer(token: &str) -> Option<HeaderValue> {
    let mut value = HeaderValue::from_str(&format!("Bearer {token}")).ok()?;
    value.set_sensitive(true);
    Some(value)
}

fn basic(user: &str, password: &str) -> HeaderValue {
    use base64::Engine;
    let encoded = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
    let mut value = HeaderValue::from_str(&format!("Basic {encoded}")).expect("base64 is a valid header");
    value.set_sensitive(true);
    value
}

/// A `Retry-After` in seconds (the date form is taken as no advice).
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let seconds = headers.get(reqwest::header::RETRY_AFTER)?.to_str().ok()?.trim().parse::<u64>().ok()?;
    Some(Duration::from_secs(seconds))
}

/// `response` when it succeeded, else an error carrying the start of its
/// body; `own` when the registry itself answered.
async fn success(response: Response, own: bool) -> Result<Response, FetchError> {
    let status = response.status();
    if status.is_success() {
        return Ok(response);
    }
    let url = without_query(response.url());
    Err(FetchError::Status { url, status, message: message(response).await, own })
}

/// The registry's own words for a failure: the codes and messages of an OCI
/// error body, else its first line, from what of the first `MAX_ERROR_BYTES`
/// arrives within [`ERROR_TIMEOUT`], made [`printable`].
async fn message(mut response: Response) -> String {
    let mut body = Vec::new();
    let _ = timeout(ERROR_TIMEOUT, async {
        while body.len() < MAX_ERROR_BYTES
            && let Ok(Some(piece)) = response.chunk().await
        {
            body.extend_from_slice(&piece);
        }
    })
    .await;
    body.truncate(MAX_ERROR_BYTES);
    #[derive(serde::Deserialize)]
    struct Envelope {
        errors: Vec<Entry>,
    }
    #[derive(serde::Deserialize)]
    struct Entry {
        code: Option<String>,
        message: Option<String>,
    }
    let text = match serde_json::from_slice::<Envelope>(&body) {
        Ok(envelope) => envelope
            .errors
            .into_iter()
            .map(|e| [e.code, e.message].into_iter().flatten().collect::<Vec<_>>().join(": "))
            .collect::<Vec<_>>()
            .join("; "),
        Err(_) => String::from_utf8_lossy(&body).lines().next().unwrap_or_default().to_owned(),
    };
    printable(text.trim(), MAX_DETAIL_CHARS)
}

/// The whole body of `response`, or `TooLarge` as soon as it passes `limit`
/// (at once when its declared length does).
async fn read(response: Response, what: &'static str, limit: usize) -> Result<Vec<u8>, FetchError> {
    let url = without_query(response.url());
    let too_large = || FetchError::TooLarge { what, url: url.clone(), limit };
    if let Some(declared) = response.content_length().filter(|len| *len > limit as u64) {
        return Err(FetchError::Declared { what, url, declared, limit });
    }
    let body = http::Response::from(response).into_body();
    match Limited::new(body, limit).collect().await {
        Ok(collected) => Ok(collected.to_bytes().to_vec()),
        Err(e) if e.is::<LengthLimitError>() => Err(too_large()),
        Err(e) => match e.downcast::<reqwest::Error>() {
            Ok(e) => Err((*e).into()),
            Err(e) => Err(FetchError::Protocol(format!("reading {what} from {url}: {e}"))),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_requests_ask_for_a_pull_of_the_repository() {
        let realm = Url::parse("https://ghcr.io/token").unwrap();
        let url = token_url(realm, "acme/x", Some("ghcr.io"));
        assert_eq!(url.as_str(), "https://ghcr.io/token?scope=repository%3Aacme%2Fx%3Apull&service=ghcr.io");
    }
}
