//! The pull side of the registry protocol, over reqwest directly.
//!
//! Written here rather than left to `oci-client` because that crate reads
//! manifests, token answers and error bodies whole into memory, and the
//! registry a Parameterize value names is whoever generated the SDK's choice:
//! one answering with an endless body would take the plugin's memory. Here
//! every body is read up to a bound, a layer's foreign `urls` are never
//! followed, and credentials go to a plain-HTTP token service only on
//! loopback or with `--insecure`. Pushing (to a registry the user names)
//! stays with `oci-client`.

use http_auth::parser::ChallengeParser;
use http_body_util::{BodyExt, LengthLimitError, Limited};
use oci_client::secrets::RegistryAuth;
use reqwest::header::{ACCEPT, AUTHORIZATION, HeaderMap, HeaderValue, WWW_AUTHENTICATE};
use reqwest::{Response, StatusCode, Url};

use super::Reference;

/// A registry's token answer is a small JSON object (a JWT inside).
pub const MAX_TOKEN_BYTES: usize = 1 << 20;
/// Only the start of an error body is read (and shown).
const MAX_ERROR_BYTES: usize = 16 << 10;
/// An error detail quoted in a message stops here.
const MAX_DETAIL_CHARS: usize = 300;
/// How long a manifest or a token may take, body included: a registry
/// trickling one byte at a time must not hold a Parameterize call for hours.
const SMALL_BODY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);

#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    #[error(transparent)]
    Http(#[from] reqwest::Error),
    #[error("{url} answered {status}{}", detail(message))]
    Status { url: String, status: StatusCode, message: String },
    #[error("the token service at {realm} answered {status}{}", detail(message))]
    Token { realm: String, status: StatusCode, message: String },
    #[error("{what} from {url} is over the {limit}-byte limit")]
    TooLarge { what: &'static str, url: String, limit: usize },
    #[error("{0}")]
    Protocol(String),
}

impl FetchError {
    /// Whether the registry or its token service turned the credentials down.
    pub fn refused(&self) -> bool {
        match self {
            FetchError::Status { status, .. } | FetchError::Token { status, .. } => {
                *status == StatusCode::UNAUTHORIZED || *status == StatusCode::FORBIDDEN
            }
            _ => false,
        }
    }
}

fn detail(message: &str) -> String {
    if message.is_empty() { String::new() } else { format!(": {message}") }
}

/// One pull's requests to one repository: a registry that answers 401 gets
/// the challenge's flow once (a bearer token for `repository:<name>:pull`,
/// or basic auth), and the answer is kept for the next request.
pub struct Fetcher<'a> {
    http: reqwest::Client,
    /// `<scheme>://<registry>/v2/<repository>`.
    base: String,
    reference: &'a Reference,
    auth: &'a RegistryAuth,
    /// Plain HTTP to any token service, not only loopback ones.
    insecure: bool,
    authorization: Option<HeaderValue>,
    challenged: bool,
}

impl<'a> Fetcher<'a> {
    pub fn new(
        http: reqwest::Client,
        reference: &'a Reference,
        plain: bool,
        insecure: bool,
        auth: &'a RegistryAuth,
    ) -> Fetcher<'a> {
        // Docker Hub serves the registry API under another name, as `oci-client` resolves it.
        let registry = if reference.registry == "docker.io" { "index.docker.io" } else { &reference.registry };
        let scheme = if plain { "http" } else { "https" };
        let base = format!("{scheme}://{registry}/v2/{}", reference.repository);
        let authorization = match auth {
            RegistryAuth::Bearer(token) => bearer(token),
            _ => None,
        };
        Fetcher { http, base, reference, auth, insecure, authorization, challenged: false }
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
        let url = format!("{}/manifests/{name}", self.base);
        let response = self.get(&url, Some(accept), Some(SMALL_BODY_TIMEOUT)).await?;
        read(response, "the manifest", limit).await
    }

    /// The blob with lower-case hex SHA-256 `digest`, for the caller to read
    /// (and bound, and check) as it arrives. Redirects are followed; reqwest
    /// drops the credentials when one leaves the registry's host.
    pub async fn blob(&mut self, digest: &str) -> Result<Response, FetchError> {
        let url = format!("{}/blobs/sha256:{digest}", self.base);
        self.get(&url, None, None).await
    }

    /// GETs `url`, answering one challenge; `timeout` bounds the whole exchange, body included.
    async fn get(
        &mut self,
        url: &str,
        accept: Option<&str>,
        timeout: Option<std::time::Duration>,
    ) -> Result<Response, FetchError> {
        loop {
            let mut request = self.http.get(url);
            if let Some(timeout) = timeout {
                request = request.timeout(timeout);
            }
            if let Some(accept) = accept {
                request = request.header(ACCEPT, accept);
            }
            if let Some(authorization) = &self.authorization {
                request = request.header(AUTHORIZATION, authorization.clone());
            }
            let response = request.send().await?;
            if response.status() == StatusCode::UNAUTHORIZED && !self.challenged {
                self.challenged = true;
                if let Some(authorization) = self.answer(response.headers()).await? {
                    self.authorization = Some(authorization);
                    continue;
                }
            }
            return success(response).await;
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
            None => Ok(match self.auth {
                RegistryAuth::Basic(user, password) => Some(basic(user, password)),
                _ => None,
            }),
        }
    }

    /// Asks the token service at `realm` for a pull token, with the basic
    /// credentials when there are any.
    async fn token(&self, realm: &str, service: Option<&str>) -> Result<HeaderValue, FetchError> {
        let protocol = |why: String| FetchError::Protocol(format!("the registry's token service {realm:?} {why}"));
        let url = token_url(realm, &self.reference.repository, service, self.insecure).map_err(protocol)?;
        let mut request = self.http.get(url).timeout(SMALL_BODY_TIMEOUT);
        if let RegistryAuth::Basic(user, password) = self.auth {
            request = request.header(AUTHORIZATION, basic(user, password));
        }
        let response = request.send().await?;
        let status = response.status();
        if !status.is_success() {
            let message = message(response).await;
            return Err(FetchError::Token { realm: realm.to_owned(), status, message });
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

/// The token request for a pull of `repository` from the service at `realm`:
/// HTTPS, or plain HTTP on loopback or when `insecure` (it may carry the
/// user's password).
fn token_url(realm: &str, repository: &str, service: Option<&str>, insecure: bool) -> Result<Url, String> {
    let mut url = Url::parse(realm).map_err(|e| format!("is not a URL: {e}"))?;
    let host = url.host_str().unwrap_or_default();
    let loopback = host.eq_ignore_ascii_case("localhost")
        || host.trim_matches(['[', ']']).parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback());
    match url.scheme() {
        "https" => {}
        "http" if loopback || insecure => {}
        other => return Err(format!("is {other}, not https (plain HTTP only on loopback or with --insecure)")),
    }
    url.query_pairs_mut().append_pair("scope", &format!("repository:{repository}:pull"));
    if let Some(service) = service {
        url.query_pairs_mut().append_pair("service", service);
    }
    Ok(url)
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

/// `response` when it succeeded, else an error carrying the start of its body.
async fn success(response: Response) -> Result<Response, FetchError> {
    let status = response.status();
    if status.is_success() {
        return Ok(response);
    }
    let url = response.url().to_string();
    Err(FetchError::Status { url, status, message: message(response).await })
}

/// The registry's own words for a failure: the codes and messages of an OCI
/// error body, else its first line, from at most `MAX_ERROR_BYTES`, with
/// control characters blanked (they reach a terminal).
async fn message(mut response: Response) -> String {
    let mut body = Vec::new();
    while body.len() < MAX_ERROR_BYTES
        && let Ok(Some(piece)) = response.chunk().await
    {
        body.extend_from_slice(&piece);
    }
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
    text.trim().chars().take(MAX_DETAIL_CHARS).map(|c| if c.is_control() { ' ' } else { c }).collect()
}

/// The whole body of `response`, or `TooLarge` as soon as it passes `limit`
/// (at once when its declared length does).
async fn read(response: Response, what: &'static str, limit: usize) -> Result<Vec<u8>, FetchError> {
    let url = response.url().to_string();
    let too_large = || FetchError::TooLarge { what, url: url.clone(), limit };
    if response.content_length().is_some_and(|len| len > limit as u64) {
        return Err(too_large());
    }
    let body = http::Response::from(response).into_body();
    match Limited::new(body, limit).collect().await {
        Ok(collected) => Ok(collected.to_bytes().to_vec()),
        Err(e) if e.is::<LengthLimitError>() => Err(too_large()),
        Err(e) => match e.downcast::<reqwest::Error>() {
            Ok(e) => Err(FetchError::Http(*e)),
            Err(e) => Err(FetchError::Protocol(format!("reading {what} from {url}: {e}"))),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::token_url;

    #[test]
    fn token_services_are_https_unless_loopback_or_insecure() {
        let url = token_url("https://auth.example/token", "acme/x", Some("reg"), false).unwrap();
        assert_eq!(url.as_str(), "https://auth.example/token?scope=repository%3Aacme%2Fx%3Apull&service=reg");
        for realm in ["http://127.0.0.1:5000/t", "http://localhost/t", "http://[::1]:9/t"] {
            assert!(token_url(realm, "x", None, false).is_ok(), "{realm}");
        }
        let plain = token_url("http://auth.example/token", "x", None, false).unwrap_err();
        assert!(plain.contains("not https"), "{plain}");
        assert!(token_url("http://auth.example/token", "x", None, true).is_ok());
        assert!(token_url("file:///etc/passwd", "x", None, true).unwrap_err().contains("is file"));
        assert!(token_url("not a url", "x", None, false).unwrap_err().contains("not a URL"));
    }
}
