//! Distribution of provider components through OCI registries, in the Wasm
//! OCI artifact layout (see `artifact.rs`): `push` uploads a component, `pull`
//! downloads one and verifies it.
//!
//! Pushing (token and basic auth, uploads) goes through `oci-client`;
//! pulling through `fetch.rs`, which bounds every body a registry sends. This
//! module adds the artifact layout, the checks a pulled component must pass
//! (manifest digest when pinned, layout, size, layer digest) and progress.
//! Plain HTTP is used for loopback registries only, unless
//! [`OciOptions::insecure`]. Like `store`, it uses nothing of `runtime`: the
//! caller supplies the package name and version.

mod artifact;
mod auth;
mod fetch;
mod progress;
mod reach;
mod reference;

use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use oci_client::client::{ClientConfig, ClientProtocol};
use oci_client::errors::{OciDistributionError, OciErrorCode};
use oci_client::manifest::OCI_IMAGE_MEDIA_TYPE;
use oci_client::{Client, RegistryOperation};
use sha2::{Digest, Sha256};

use fetch::{FetchError, Fetcher};

use crate::store;
use crate::text::printable;
pub use artifact::{WASM_CONFIG_MEDIA_TYPE, WASM_LAYER_MEDIA_TYPE};
pub use progress::{Direction, PROGRESS_MIN_BYTES, Progress, Transfer};
pub use reference::{Reference, SCHEME};

/// The largest component pushed or pulled: the runtime's
/// `MAX_COMPONENT_BYTES`, repeated because this module does not depend on
/// `runtime` (a test keeps the two equal).
pub const MAX_COMPONENT_BYTES: usize = 256 << 20;
/// A manifest is a small JSON document; a registry sending more is not serving one of ours.
pub const MAX_MANIFEST_BYTES: usize = 4 << 20;
/// How long a Docker credential helper may take to answer, unless
/// `PULUMI_WASM_OCI_HELPER_TIMEOUT` says otherwise.
const HELPER_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a pull waits for an answer, and for a manifest or a token whole,
/// unless `PULUMI_WASM_OCI_TIMEOUT` says otherwise.
const PULL_TIMEOUT: Duration = Duration::from_secs(120);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a registry may go silent in the middle of an answer.
const READ_TIMEOUT: Duration = Duration::from_secs(120);
const USER_AGENT: &str = concat!("pulumi-wasm/", env!("CARGO_PKG_VERSION"));
/// Uploads go in pieces of this size, so progress can be counted.
const UPLOAD_PIECE: usize = 256 << 10;

#[derive(Debug, thiserror::Error)]
pub enum OciError {
    #[error("bad OCI reference '{reference}': {why}")]
    BadReference { reference: String, why: String },
    #[error("not a Wasm component artifact: {why}")]
    NotWasm { why: String },
    #[error(
        "{what} digest mismatch: expected sha256:{expected}, got sha256:{actual} (the registry's copy is corrupt or was tampered with)"
    )]
    DigestMismatch { what: &'static str, expected: String, actual: String },
    #[error("{what} of {size} bytes is over the {limit}-byte limit")]
    TooLarge { what: &'static str, size: u64, limit: usize },
    #[error("the component layer has {found} bytes where its descriptor says {expected}")]
    SizeMismatch { expected: u64, found: u64 },
    #[error("cannot push to {reference}: {why}")]
    CannotPush { reference: String, why: String },
    /// The message carries `error`'s whole chain (reqwest keeps the cause, e.g. "connection refused", in its source).
    #[error("{op} {reference}: {}{hint}", printable(&chain(error.as_ref()), 2000))]
    Registry { op: &'static str, reference: String, error: Box<dyn std::error::Error + Send + Sync>, hint: String },
    #[error("cannot make an HTTP client: {0}")]
    Client(String),
    #[error("set both PULUMI_WASM_OCI_USERNAME and PULUMI_WASM_OCI_PASSWORD, or neither")]
    HalfCredentials,
    #[error("{0} is a number of seconds, not '{1}'")]
    BadTimeout(&'static str, String),
    #[error("the credentials for {registry} in {} cannot be read: {why}", file.display())]
    Credentials { registry: String, file: std::path::PathBuf, why: String },
}

impl OciError {
    /// A registry failure; one that refused the credentials says which were
    /// used and how to give others.
    fn registry(op: &'static str, reference: &Reference, error: OciDistributionError, used: &auth::Source) -> Self {
        let refused = refused(&error);
        OciError::failed(op, reference, Box::new(error), refused, used)
    }

    /// A failure of a pull (see `fetch.rs`).
    fn fetch(op: &'static str, reference: &Reference, error: FetchError, used: &auth::Source) -> Self {
        let refused = error.refused();
        if error.rate_limited() {
            let hint = match used {
                auth::Source::Anonymous => format!(
                    " (the registry limits how often it is asked, anonymous pulls the most: `docker login {}`, or try again later)",
                    reference.registry
                ),
                _ => " (the registry limits how often it is asked: try again later)".to_owned(),
            };
            return OciError::Registry { op, reference: reference.to_string(), error: Box::new(error), hint };
        }
        OciError::failed(op, reference, Box::new(error), refused, used)
    }

    fn failed(
        op: &'static str,
        reference: &Reference,
        error: Box<dyn std::error::Error + Send + Sync>,
        refused: bool,
        used: &auth::Source,
    ) -> Self {
        let hint = match used {
            _ if !refused => String::new(),
            auth::Source::Anonymous => format!(
                " (the registry wants credentials: run `docker login {}`, or set PULUMI_WASM_OCI_USERNAME and PULUMI_WASM_OCI_PASSWORD)",
                reference.registry
            ),
            // Not a ready-made assignment: this registry may be one a stranger's SDK named.
            auth::Source::Withheld => format!(
                " (sent {used}: a parameterized package's value named this registry, not you; \
                 PULUMI_WASM_OCI_REGISTRY sends them to the one registry it names, if you trust it)"
            ),
            auth::Source::Unreadable(why) => format!(" (the registry wants credentials, and {why})"),
            auth::Source::IdentityToken(_) => {
                format!(" (sent {used}: set PULUMI_WASM_OCI_USERNAME and PULUMI_WASM_OCI_PASSWORD)")
            }
            _ => format!(" (the registry or its token service refused {used})"),
        };
        OciError::Registry { op, reference: reference.to_string(), error, hint }
    }
}

/// Whether the registry or its token service turned the credentials down.
fn refused(error: &OciDistributionError) -> bool {
    use OciDistributionError as E;
    match error {
        E::AuthenticationFailure(_) | E::UnauthorizedError { .. } => true,
        E::RequestError(e) => e.status().is_some_and(|s| s == 401 || s == 403),
        E::ServerError { code, .. } => *code == 401 || *code == 403,
        E::RegistryError { envelope, .. } => {
            envelope.errors.iter().any(|e| matches!(e.code, OciErrorCode::Unauthorized | OciErrorCode::Denied))
        }
        _ => false,
    }
}

/// `error: its source: its source's source...`.
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut next = error.source();
    while let Some(e) = next {
        let more = e.to_string();
        // Some layers repeat their source's message in their own.
        if !text.contains(&more) {
            text = format!("{text}: {more}");
        }
        next = e.source();
    }
    text
}

/// How to reach registries.
#[derive(Clone)]
pub struct OciOptions {
    /// Plain HTTP to any registry, not only loopback ones (after
    /// [`OciOptions::scoped`], only to the one `credentials_registry` names).
    pub insecure: bool,
    /// Basic-auth username and password for every registry (or only
    /// `credentials_registry`); otherwise each registry gets what `docker
    /// login` stored for it, if anything (see `auth.rs`).
    pub credentials: Option<(String, String)>,
    /// The one registry `credentials` go to, when set.
    pub credentials_registry: Option<String>,
    /// How long a Docker credential helper may take: a helper waiting on a
    /// prompt nobody sees (a keychain, pinentry) must not hang a plugin
    /// before its port line.
    pub helper_timeout: Duration,
    /// How long a pull waits for an answer's head, and for a manifest or a
    /// token with its body; a component gets this plus a minute per 3.75 MiB.
    pub timeout: Duration,
    /// Set by [`OciOptions::scoped`].
    scoped: bool,
}

impl Default for OciOptions {
    fn default() -> Self {
        OciOptions {
            insecure: false,
            credentials: None,
            credentials_registry: None,
            helper_timeout: HELPER_TIMEOUT,
            timeout: PULL_TIMEOUT,
            scoped: false,
        }
    }
}

impl OciOptions {
    /// `PULUMI_WASM_OCI_INSECURE=1` (or `true`), `PULUMI_WASM_OCI_USERNAME` and
    /// `PULUMI_WASM_OCI_PASSWORD` (for `PULUMI_WASM_OCI_REGISTRY` only, when
    /// set), `PULUMI_WASM_OCI_HELPER_TIMEOUT` and `PULUMI_WASM_OCI_TIMEOUT` (seconds).
    pub fn from_env() -> Result<OciOptions, OciError> {
        let var = |name| std::env::var(name).ok().filter(|v| !v.is_empty());
        let insecure = var("PULUMI_WASM_OCI_INSECURE").is_some_and(|v| v == "1" || v.eq_ignore_ascii_case("true"));
        let credentials = match (var("PULUMI_WASM_OCI_USERNAME"), var("PULUMI_WASM_OCI_PASSWORD")) {
            (Some(user), Some(password)) => Some((user, password)),
            (None, None) => None,
            _ => return Err(OciError::HalfCredentials),
        };
        let seconds = |name: &'static str, default| match var(name) {
            None => Ok(default),
            Some(text) => text
                .parse::<f64>()
                .ok()
                .and_then(|secs| Duration::try_from_secs_f64(secs).ok())
                .ok_or(OciError::BadTimeout(name, text)),
        };
        let helper_timeout = seconds("PULUMI_WASM_OCI_HELPER_TIMEOUT", HELPER_TIMEOUT)?;
        let timeout = seconds("PULUMI_WASM_OCI_TIMEOUT", PULL_TIMEOUT)?;
        let credentials_registry = var("PULUMI_WASM_OCI_REGISTRY");
        Ok(OciOptions { insecure, credentials, credentials_registry, helper_timeout, timeout, scoped: false })
    }

    /// For a reference the user did not give (a Parameterize value's recorded
    /// source, written by whoever generated the SDK): the environment's
    /// credentials go to it only if `PULUMI_WASM_OCI_REGISTRY` names its
    /// registry, never to whatever registry a stranger's SDK names. So does
    /// `insecure`: over plain HTTP anyone on the way could answer with a
    /// basic-auth challenge and take a `docker login` password.
    pub fn scoped(mut self) -> Self {
        // An empty scope names no registry (and the refusal can say why none were sent).
        self.credentials_registry.get_or_insert_default();
        self.scoped = true;
        self
    }

    /// Whether `reference` is a stranger's (after [`OciOptions::scoped`]) and
    /// `PULUMI_WASM_OCI_REGISTRY` does not name its registry: no plain HTTP
    /// then, and where it may send the pull is checked (`reach.rs`).
    fn guarded(&self, reference: &Reference) -> bool {
        let named = self.credentials_registry.as_deref().is_some_and(|r| auth::same_registry(r, &reference.registry));
        self.scoped && !named
    }

    /// The credentials for `reference`'s registry, looked up on a blocking
    /// thread (a Docker credential helper is a process), for at most
    /// [`OciOptions::helper_timeout`].
    async fn credentials(&self, reference: &Reference) -> Result<auth::Credentials, OciError> {
        let (env, target) = (self.credentials.clone(), reference.clone());
        let scope = self.credentials_registry.clone();
        let lookup = tokio::task::spawn_blocking(move || auth::credentials(env.as_ref(), scope.as_deref(), &target));
        let found = match tokio::time::timeout(self.helper_timeout, lookup).await {
            Ok(done) => done.unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic())),
            Err(_) => Err(OciError::Credentials {
                registry: reference.registry.clone(),
                file: auth::docker_config_file().unwrap_or_default(),
                why: format!(
                    "its credential helper did not answer within {:?} (PULUMI_WASM_OCI_HELPER_TIMEOUT)",
                    self.helper_timeout
                ),
            }),
        };
        match found {
            // A broken helper (Docker Desktop uninstalled, WSL without its
            // `.exe`) need not stop a public pull: none are sent, and a
            // registry that wants some gets this reason in its refusal.
            Err(e @ OciError::Credentials { .. }) => {
                tracing::warn!("{e}; going on without credentials");
                Ok(auth::Credentials {
                    auth: oci_client::secrets::RegistryAuth::Anonymous,
                    source: auth::Source::Unreadable(e.to_string()),
                })
            }
            found => found,
        }
    }
}

/// The result of [`push`].
#[derive(Clone, Debug)]
pub struct Pushed {
    /// Where it was pushed, with the tag used.
    pub reference: Reference,
    /// `registry/repository@sha256:<manifest digest>`.
    pub pinned: Reference,
    /// Lower-case hex SHA-256 of the manifest.
    pub manifest_digest: String,
    /// Lower-case hex SHA-256 of the component (as [`store::digest`]).
    pub layer_digest: String,
    /// False when the registry already had the component's bytes.
    pub uploaded: bool,
}

/// The result of [`pull`]: a component whose bytes matched every digest on the way.
#[derive(Clone, Debug)]
pub struct Pulled {
    pub wasm: Vec<u8>,
    /// Lower-case hex SHA-256 of `wasm` (as [`store::digest`]).
    pub digest: String,
    pub manifest_digest: String,
    /// The manifest's `org.opencontainers.image.title` and `.version` annotations.
    pub name: Option<String>,
    pub version: Option<String>,
    /// True when the bytes came from the store rather than the registry.
    pub cached: bool,
}

/// Pushes `wasm` (package `name` `version`) to `reference`, tagged with its
/// tag, else with the version (`+` becomes `_`: tags cannot hold `+`).
pub async fn push(
    reference: &Reference,
    wasm: &[u8],
    name: &str,
    version: &str,
    options: &OciOptions,
    progress: &Progress,
) -> Result<Pushed, OciError> {
    if reference.digest.is_some() {
        return Err(OciError::CannotPush {
            reference: reference.to_string(),
            why: "a digest is what the registry gives back; push to a tag (or to none: the version is the tag)".into(),
        });
    }
    if wasm.len() > MAX_COMPONENT_BYTES {
        return Err(OciError::TooLarge { what: "component", size: wasm.len() as u64, limit: MAX_COMPONENT_BYTES });
    }
    let tag = reference.tag.clone().unwrap_or_else(|| version.replace('+', "_"));
    let target = Reference { tag: Some(tag), ..reference.clone() };
    let layer_digest = store::digest(wasm);
    let built = artifact::build(wasm, &layer_digest, name, version, created());
    let (client, r, creds) = (client(&target, options), target.to_client(), options.credentials(&target).await?);
    let (target_ref, source) = (&target, &creds.source);
    let err = |op| move |error| OciError::registry(op, target_ref, error, source);

    client.auth(&r, &creds.auth, RegistryOperation::Push).await.map_err(err("authenticating for"))?;
    let layer = format!("sha256:{layer_digest}");
    let uploaded = !client.blob_exists(&r, &layer).await.map_err(err("checking for the component at"))?;
    if uploaded {
        let bytes = Bytes::copy_from_slice(wasm);
        let size = bytes.len();
        let mut meter = progress.meter(Direction::Push, &layer_digest, size as u64);
        let pieces = (0..size).step_by(UPLOAD_PIECE).map(move |at| bytes.slice(at..(at + UPLOAD_PIECE).min(size)));
        let stream = futures::stream::iter(pieces).map(move |piece| {
            meter.advance(piece.len() as u64);
            Ok(piece)
        });
        client
            .push_blob_stream(&r, stream, &layer, Some(size as u64))
            .await
            .map_err(err("pushing the component to"))?;
    }
    let config_digest = format!("sha256:{}", built.config_digest);
    client.push_blob(&r, built.config, &config_digest).await.map_err(err("pushing the config to"))?;
    let manifest_digest = store::digest(&built.manifest);
    let media_type = http::HeaderValue::from_static(OCI_IMAGE_MEDIA_TYPE);
    client.push_manifest_raw(&r, built.manifest, media_type).await.map_err(err("pushing the manifest to"))?;
    Ok(Pushed { pinned: target.pinned(&manifest_digest), reference: target, manifest_digest, layer_digest, uploaded })
}

/// Pulls the component at `reference` (tag `latest` when it names neither a
/// tag nor a digest), checking the manifest against a pinned digest, the
/// layout, the size limits and the component against its layer digest. The
/// manifest is always fetched; the component is not when `cache` holds a blob
/// with its digest (the store verifies it on reading). Nothing is written to `cache`.
pub async fn pull(
    reference: &Reference,
    options: &OciOptions,
    progress: &Progress,
    cache: Option<&store::Store>,
) -> Result<Pulled, OciError> {
    let creds = options.credentials(reference).await?;
    let source = &creds.source;
    let err = |op| move |error| OciError::fetch(op, reference, error, source);
    let reach = fetch::Reach {
        plain: plain(reference, options),
        guarded: options.guarded(reference),
        timeout: options.timeout,
    };
    let mut fetcher = Fetcher::new(http_client()?, reference, reach, &creds.auth).map_err(err("reaching"))?;
    let manifest =
        fetcher.manifest(OCI_IMAGE_MEDIA_TYPE, MAX_MANIFEST_BYTES).await.map_err(err("pulling the manifest of"))?;
    let manifest_digest = store::digest(&manifest);
    if let Some(pinned) = &reference.digest
        && *pinned != manifest_digest
    {
        return Err(OciError::DigestMismatch { what: "manifest", expected: pinned.clone(), actual: manifest_digest });
    }
    let artifact = artifact::parse(&manifest)?;
    // Read and checked against its digest (up to 256 MiB) on a blocking thread.
    let cached = match cache {
        Some(store) => {
            let (store, digest) = (store.clone(), artifact.layer_digest.clone());
            tokio::task::spawn_blocking(move || store.read_blob(&digest).ok()).await.ok().flatten()
        }
        None => None,
    };
    if let Some(wasm) = cached {
        let (name, version) = (artifact.name, artifact.version);
        return Ok(Pulled { wasm, digest: artifact.layer_digest, manifest_digest, name, version, cached: true });
    }
    let mut blob =
        fetcher.blob(&artifact.layer_digest, artifact.size).await.map_err(err("pulling the component of"))?;
    if let Some(len) = blob.response.content_length().filter(|len| *len != artifact.size) {
        return Err(OciError::SizeMismatch { expected: artifact.size, found: len });
    }
    let mut meter = progress.meter(Direction::Pull, &artifact.layer_digest, artifact.size);
    // Grown as bytes arrive rather than reserved up front: the size is the registry's word.
    let (mut wasm, mut hasher) = (Vec::with_capacity(artifact.size.min(1 << 20) as usize), Sha256::new());
    while let Some(piece) = blob.chunk().await.map_err(err("pulling the component of"))? {
        if wasm.len() + piece.len() > artifact.size as usize {
            return Err(OciError::SizeMismatch { expected: artifact.size, found: (wasm.len() + piece.len()) as u64 });
        }
        hasher.update(&piece);
        wasm.extend_from_slice(&piece);
        meter.advance(piece.len() as u64);
    }
    if wasm.len() as u64 != artifact.size {
        return Err(OciError::SizeMismatch { expected: artifact.size, found: wasm.len() as u64 });
    }
    let digest = hex::encode(hasher.finalize());
    if digest != artifact.layer_digest {
        return Err(OciError::DigestMismatch {
            what: "component layer",
            expected: artifact.layer_digest,
            actual: digest,
        });
    }
    Ok(Pulled { wasm, digest, manifest_digest, name: artifact.name, version: artifact.version, cached: false })
}

/// reqwest is built without a default crypto provider (`rustls-no-provider`)
/// so that only ring, which the runtime's HTTP client already uses, is
/// compiled in; it must be installed before a client is built (an error
/// means one already is).
fn ring_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// The push client.
fn client(reference: &Reference, options: &OciOptions) -> Client {
    ring_provider();
    let plain = plain(reference, options);
    Client::new(ClientConfig {
        protocol: if plain { ClientProtocol::Http } else { ClientProtocol::Https },
        // One PUT per blob: every registry takes it; chunked PATCH uploads vary.
        use_monolithic_push: true,
        // A Wasm artifact is a single manifest, never an index to resolve by platform.
        platform_resolver: None,
        connect_timeout: Some(CONNECT_TIMEOUT),
        read_timeout: Some(READ_TIMEOUT),
        user_agent: USER_AGENT,
        ..ClientConfig::default()
    })
}

/// The pull client, built as `oci-client` builds its own from the push
/// client's settings, except that it follows no redirects (`fetch.rs` does).
fn http_client() -> Result<reqwest::Client, OciError> {
    ring_provider();
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(CONNECT_TIMEOUT)
        .read_timeout(READ_TIMEOUT)
        .user_agent(USER_AGENT)
        .build()
        .map_err(|e| OciError::Client(chain(&e)))
}

/// Whether `reference`'s registry is reached over plain HTTP.
fn plain(reference: &Reference, options: &OciOptions) -> bool {
    let plain = (options.insecure && !options.guarded(reference)) || reference.is_loopback();
    if plain && !reference.is_loopback() {
        tracing::warn!("plain HTTP to {} (--insecure)", reference.registry);
    }
    plain
}

/// The config's `created`: `SOURCE_DATE_EPOCH` when set, else the Unix epoch,
/// never the clock, so the same component always gives the same manifest
/// digest (pushing again changes nothing; digests are reproducible).
fn created() -> String {
    let secs = std::env::var("SOURCE_DATE_EPOCH").ok().and_then(|s| s.trim().parse().ok()).unwrap_or(0);
    store::utc(secs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insecure_reaches_a_registry_a_value_names_only_when_the_user_named_it_too() {
        let corp: Reference = "registry.corp.example/acme/x:1".parse().unwrap();
        let local: Reference = "127.0.0.1:5000/acme/x:1".parse().unwrap();
        let insecure = OciOptions { insecure: true, ..OciOptions::default() };
        assert!(plain(&corp, &insecure), "a reference the user gives");
        assert!(!plain(&corp, &insecure.clone().scoped()), "a reference a value names");
        let named = OciOptions { credentials_registry: Some(corp.registry.clone()), ..insecure.clone() };
        assert!(plain(&corp, &named.scoped()));
        // Named as the credentials' scope names it: Docker Hub under another of its names.
        let hub: Reference = "docker.io/acme/x:1".parse().unwrap();
        let named = OciOptions { credentials_registry: Some("index.docker.io".into()), ..insecure.clone() };
        assert!(plain(&hub, &named.scoped()));
        assert!(plain(&local, &OciOptions::default().scoped()), "loopback is always plain");
        assert!(!plain(&corp, &OciOptions::default()));
    }

    /// `runtime::engine` is private to `runtime`; its source is the next best thing to compare with.
    #[test]
    fn the_component_limit_is_the_runtimes() {
        let engine = include_str!("../runtime/engine.rs");
        let line =
            engine.lines().find(|l| l.starts_with("pub const MAX_COMPONENT_BYTES")).expect("the runtime's limit");
        assert_eq!(line, "pub const MAX_COMPONENT_BYTES: usize = 256 << 20;");
        assert_eq!(super::MAX_COMPONENT_BYTES, 256 << 20);
    }
}
