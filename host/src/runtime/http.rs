//! Outbound HTTP for guests (wasi:http), through the user's allow-list.
//!
//! The host checks every request the guest sends (redirects are new requests,
//! so they are checked too), resolves the name itself, refuses private and
//! loopback addresses unless a grant names them exactly, connects to the
//! address it checked (no second lookup to rebind), and bounds every phase
//! with a timeout. wasmtime's default sender resolves by itself, which is
//! why this is written here. An instance holds at most [`MAX_CONNECTIONS`]
//! at once; each lives only as long as the guest's handles on its response.

use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use http_body_util::BodyExt;
use hyper::body::{Body, Frame, SizeHint};
use tokio::net::TcpStream;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use wasmtime::StoreContextMut;
use wasmtime::component::{Linker, Resource};
use wasmtime_wasi_http::WasiHttpView;
use wasmtime_wasi_http::io::TokioIo;
use wasmtime_wasi_http::{Error as HttpError, RequestOptions, WasiBody, WasiHttpHooks};

use super::policy::HttpGrant;
use super::state::HostState;

/// Longest any phase of a request may take, whatever the guest asks for.
const MAX_TIMEOUT: Duration = Duration::from_secs(120);
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// Longest authority (`host:port`) and method a guest may set on a request.
/// wasmtime-wasi-http keeps both as given, with no bound of their own, in
/// the host, where up to 10,000 requests of 128 MiB each would fit in one
/// call. A DNS name is at most 253 bytes; methods are short words.
const MAX_AUTHORITY: usize = 1024;
const MAX_METHOD: usize = 64;

/// Replaces wasmtime-wasi-http's setters of a request's authority and method
/// with ones that refuse longer values first, as invalid ones (the answer
/// the guest gets for any authority or method it may not set).
pub(super) fn bound_request_fields(linker: &mut Linker<HostState>) -> wasmtime::Result<()> {
    use wasmtime_wasi_http::p2::bindings::http::types::{HostOutgoingRequest as Setters, Method};
    use wasmtime_wasi_http::p2::types::HostOutgoingRequest as Request;
    linker.allow_shadowing(true);
    let mut types = linker.instance(HTTP_TYPES)?;
    types.func_wrap(
        "[method]outgoing-request.set-authority",
        |mut store: StoreContextMut<'_, HostState>, (req, authority): (Resource<Request>, Option<String>)| {
            if authority.as_ref().is_some_and(|a| a.len() > MAX_AUTHORITY) {
                return Ok((Err(()),));
            }
            Setters::set_authority(&mut store.data_mut().http(), req, authority).map(|r| (r,))
        },
    )?;
    types.func_wrap(
        "[method]outgoing-request.set-method",
        |mut store: StoreContextMut<'_, HostState>, (req, method): (Resource<Request>, Method)| {
            if matches!(&method, Method::Other(m) if m.len() > MAX_METHOD) {
                return Ok((Err(()),));
            }
            Setters::set_method(&mut store.data_mut().http(), req, method).map(|r| (r,))
        },
    )?;
    linker.allow_shadowing(false);
    Ok(())
}

/// The name wasmtime-wasi-http defines its types under (a component's import
/// of any 0.2.x version resolves to it).
pub(super) const HTTP_TYPES: &str = "wasi:http/types@0.2.12";

/// Denials seen during a call, so the error can name the missing grant.
pub type Denials = Arc<Mutex<Vec<String>>>;

/// Connections one instance may hold open at once (a socket each, and the
/// buffers `handles.rs` charges for). A response kept unread keeps its
/// connection, so past this a request waits for one to close, up to its
/// connect timeout.
pub const MAX_CONNECTIONS: usize = 16;

pub struct HttpHooks {
    pub grants: Arc<Vec<HttpGrant>>,
    pub provider: String,
    pub denials: Denials,
    /// [`MAX_CONNECTIONS`] permits: one held by each open connection.
    pub connections: Arc<Semaphore>,
    /// [`MAX_LOOKUPS`] permits: one held by each name lookup until it ends.
    pub lookups: Arc<Semaphore>,
}

type Sent = Result<(http::Response<WasiBody>, Box<dyn Future<Output = Result<(), HttpError>> + Send>), HttpError>;

impl WasiHttpHooks for HttpHooks {
    fn send_request(
        &mut self,
        request: http::Request<WasiBody>,
        options: Option<RequestOptions>,
        _fut: Box<dyn Future<Output = Result<(), HttpError>> + Send>,
    ) -> Box<dyn Future<Output = Sent> + Send> {
        let grants = self.grants.clone();
        let deny = Denier { provider: self.provider.clone(), denials: self.denials.clone() };
        let (connections, lookups) = (self.connections.clone(), self.lookups.clone());
        Box::new(async move { send(request, options, &grants, &deny, connections, lookups).await })
    }

    /// What one write to a request's body may hand over: the body buffers
    /// two of them in the host until sent (see `handles.rs`).
    fn p2_outgoing_body_chunk_size(&mut self) -> usize {
        super::handles::BODY_CHUNK
    }
}

struct Denier {
    provider: String,
    denials: Denials,
}

/// Denials kept (and logged) per call: a guest may try any number.
const MAX_DENIALS: usize = 16;
/// Longest denial kept: it names a guest's URL, which may be huge.
const MAX_DENIAL: usize = 512;

impl Denier {
    fn deny(&self, what: String) -> HttpError {
        self.note(what);
        HttpError::HttpRequestDenied
    }

    fn note(&self, what: String) {
        note(&self.denials, what);
    }
}

/// Keeps `what` for the call's error, and logs it.
pub(super) fn note(denials: &Denials, what: String) {
    // Logged and quoted in statuses: escaped as they are (`crate::text`).
    let what = crate::text::escape_within(what, &[], MAX_DENIAL);
    if let Ok(mut d) = denials.lock()
        && d.len() < MAX_DENIALS
    {
        tracing::warn!("sandbox: {what}");
        d.push(what);
    }
}

/// Name lookups running at once, process-wide. The system resolver runs on
/// tokio's blocking threads and cannot be stopped: a lookup the guest gave
/// up on (its connect timeout may be a millisecond) keeps its thread until
/// the resolver answers, so without a bound a guest looking up names that
/// never answer would take every blocking thread, and with them the
/// filesystem calls and artifact loads of every guest.
static LOOKUPS: Semaphore = Semaphore::const_new(32);

/// Name lookups one instance may have running at once, so that one guest
/// cannot take all of [`LOOKUPS`] alone.
pub const MAX_LOOKUPS: usize = 8;

/// `host`'s addresses (an address itself needs no lookup); a lookup holds
/// one of `mine` (the instance's [`MAX_LOOKUPS`]) and one of [`LOOKUPS`]
/// until the resolver answers, however long the caller waits.
async fn lookup(host: String, port: u16, mine: Arc<Semaphore>) -> Result<Vec<SocketAddr>, HttpError> {
    if let Ok(ip) = host.trim_start_matches('[').trim_end_matches(']').parse::<std::net::IpAddr>() {
        return Ok(vec![SocketAddr::new(ip, port)]);
    }
    let dns = || HttpError::DnsError { rcode: None, info_code: None };
    let own = mine.acquire_owned().await.map_err(|_| dns())?;
    let permit = LOOKUPS.acquire().await.map_err(|_| dns())?;
    let lookup = tokio::spawn(async move {
        let _held = (own, permit);
        tokio::net::lookup_host((host.as_str(), port)).await.map(|a| a.collect::<Vec<_>>())
    });
    lookup.await.map_err(|_| dns())?.map_err(|_| dns())
}

async fn send(
    mut req: http::Request<WasiBody>,
    options: Option<RequestOptions>,
    grants: &[HttpGrant],
    deny: &Denier,
    connections: Arc<Semaphore>,
    lookups: Arc<Semaphore>,
) -> Sent {
    let uri = req.uri().clone();
    let scheme = uri.scheme_str().unwrap_or("https").to_ascii_lowercase();
    let host = uri.host().ok_or(HttpError::HttpRequestUriInvalid)?.to_owned();
    let port = uri.port_u16().unwrap_or(if scheme == "https" { 443 } else { 80 });
    let target = format!("{scheme}://{host}:{port}");
    let matching: Vec<&HttpGrant> = grants.iter().filter(|g| g.allows(&scheme, &host, port)).collect();
    if matching.is_empty() {
        return Err(deny.deny(format!("missing grant: http \"{target}\" for provider {}", deny.provider)));
    }
    let private_ok = matching.iter().any(|g| g.reaches_private(&host));

    let timeout = |pick: fn(&RequestOptions) -> Option<Duration>| {
        options.as_ref().and_then(pick).unwrap_or(DEFAULT_TIMEOUT).min(MAX_TIMEOUT)
    };
    let connect_timeout = timeout(|o| o.connect_timeout);
    let first_byte_timeout = timeout(|o| o.first_byte_timeout);
    let between_bytes = timeout(|o| o.between_bytes_timeout);
    let timeouts = Timeouts { connect: connect_timeout, first_byte: first_byte_timeout, between_bytes };

    let Ok(Ok(permit)) = tokio::time::timeout(connect_timeout, connections.acquire_owned()).await else {
        deny.note(format!(
            "{target}: provider {} keeps {MAX_CONNECTIONS} connections open, the most one instance may (a response kept unread keeps its connection)",
            deny.provider
        ));
        return Err(HttpError::ConnectionLimitReached);
    };

    let addrs: Vec<SocketAddr> = tokio::time::timeout(connect_timeout, lookup(host.clone(), port, lookups))
        .await
        .map_err(|_| HttpError::ConnectionTimeout)??
        .into_iter()
        .filter(|a| private_ok || is_public(a.ip()))
        .collect();
    if addrs.is_empty() {
        return Err(deny.deny(format!(
            "{target} resolves only to private or loopback addresses; missing grant: http-private \"{target}\" (or http naming the address itself) for provider {}",
            deny.provider
        )));
    }

    let tcp = tokio::time::timeout(connect_timeout, TcpStream::connect(&addrs[..]))
        .await
        .map_err(|_| HttpError::ConnectionTimeout)?
        .map_err(|_| HttpError::ConnectionRefused)?;
    *req.uri_mut() = http::Uri::builder()
        .path_and_query(uri.path_and_query().map_or("/", |p| p.as_str()))
        .build()
        .map_err(|_| HttpError::HttpRequestUriInvalid)?;

    if scheme == "https" {
        let name =
            rustls::pki_types::ServerName::try_from(host.clone()).map_err(|_| HttpError::HttpRequestUriInvalid)?;
        // The handshake is part of connecting: a server that accepts and
        // then says nothing must not hold the call until its deadline.
        let tls = tokio::time::timeout(connect_timeout, tls_connector().connect(name, tcp))
            .await
            .map_err(|_| HttpError::ConnectionTimeout)?
            .map_err(|_| HttpError::TlsCertificateError)?;
        exchange(TokioIo::new(tls), req, timeouts, permit).await
    } else {
        exchange(TokioIo::new(tcp), req, timeouts, permit).await
    }
}

#[derive(Clone, Copy)]
struct Timeouts {
    connect: Duration,
    first_byte: Duration,
    between_bytes: Duration,
}

/// HTTP/1.1 over an established stream. The connection is driven here
/// until the response's head arrives, then handed back with `permit` as
/// the work that goes on: wasmtime runs it for as long as the guest keeps
/// the response, its body or its trailers, and ends it when they go.
async fn exchange<S>(
    io: TokioIo<S>,
    req: http::Request<WasiBody>,
    timeouts: Timeouts,
    permit: OwnedSemaphorePermit,
) -> Sent
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin + 'static,
{
    let handshake = hyper::client::conn::http1::Builder::new().max_buf_size(super::handles::READ_BUFFER).handshake(io);
    let (mut sender, conn) = tokio::time::timeout(timeouts.connect, handshake)
        .await
        .map_err(|_| HttpError::ConnectionTimeout)?
        .map_err(HttpError::from)?;
    let mut conn = Some(Box::pin(conn));
    let mut send = std::pin::pin!(tokio::time::timeout(timeouts.first_byte, sender.send_request(req)));
    let sent = std::future::poll_fn(|cx| {
        if let Poll::Ready(sent) = send.as_mut().poll(cx) {
            return Poll::Ready(sent);
        }
        let Some(Poll::Ready(ended)) = conn.as_mut().map(|c| c.as_mut().poll(cx)) else { return Poll::Pending };
        conn = None;
        match ended {
            // Closed after answering: the answer is there to take.
            Ok(()) => send.as_mut().poll(cx),
            Err(e) => Poll::Ready(Ok(Err(e))),
        }
    })
    .await;
    let res = sent.map_err(|_| HttpError::ConnectionReadTimeout)?.map_err(HttpError::from)?;
    let goes_on = async move {
        let _permit = permit;
        match conn {
            Some(conn) => conn.await.map_err(HttpError::from),
            None => Ok(()),
        }
    };
    let res = res.map(|body| Gaps::new(body.map_err(HttpError::from), timeouts.between_bytes).boxed_unsync());
    Ok((res, Box::new(goes_on)))
}

/// A response body that fails once the guest has waited `gap` for its next
/// frame: a server that sends its headers and then stalls must not hold the
/// call until its deadline. The wait counts from the first poll that finds
/// nothing, so time the guest spends elsewhere is not the server's.
/// Written here: http-body-util has no such wrapper.
struct Gaps<B> {
    body: B,
    gap: Duration,
    timer: Pin<Box<tokio::time::Sleep>>,
    waiting: bool,
}

impl<B> Gaps<B> {
    fn new(body: B, gap: Duration) -> Self {
        Gaps { body, gap, timer: Box::pin(tokio::time::sleep(gap)), waiting: false }
    }
}

impl<B: Body<Error = HttpError> + Unpin> Body for Gaps<B> {
    type Data = B::Data;
    type Error = HttpError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, HttpError>>> {
        match Pin::new(&mut self.body).poll_frame(cx) {
            Poll::Ready(frame) => {
                self.waiting = false;
                Poll::Ready(frame)
            }
            Poll::Pending => {
                if !self.waiting {
                    self.waiting = true;
                    let until = tokio::time::Instant::now() + self.gap;
                    self.timer.as_mut().reset(until);
                }
                match self.timer.as_mut().poll(cx) {
                    Poll::Ready(()) => Poll::Ready(Some(Err(HttpError::ConnectionReadTimeout))),
                    Poll::Pending => Poll::Pending,
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

fn tls_connector() -> tokio_rustls::TlsConnector {
    static CONFIG: std::sync::OnceLock<Arc<rustls::ClientConfig>> = std::sync::OnceLock::new();
    let config = CONFIG.get_or_init(|| {
        let roots = rustls::RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.into() };
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("ring supports the default protocol versions")
            .with_root_certificates(roots)
            .with_no_client_auth();
        Arc::new(config)
    });
    tokio_rustls::TlsConnector::from(config.clone())
}

/// Globally routable: not loopback, private, link-local, shared, unspecified,
/// multicast, broadcast or documentation space. IPv6 forms that carry an
/// IPv4 address (mapped, compatible, NAT64's well-known prefix) are judged
/// by it; 6to4, Teredo, local-use NAT64 and site-local are refused, since
/// they can lead into private IPv4 space.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            !(v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || v4.is_documentation()
                || a == 0
                || (a == 100 && (64..128).contains(&b))
                || (a == 198 && (18..20).contains(&b))
                || a >= 240)
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_public(IpAddr::V4(v4));
            }
            let s = v6.segments();
            let last_32 = std::net::Ipv4Addr::from(u128::from(v6) as u32);
            // ::a.b.c.d (IPv4-compatible) and 64:ff9b::a.b.c.d (NAT64).
            if (s[..6] == [0; 6] && !v6.is_loopback() && !v6.is_unspecified()) || s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
                return is_public(IpAddr::V4(last_32));
            }
            let first = s[0];
            !(v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (first & 0xfe00) == 0xfc00
                || (first & 0xffc0) == 0xfe80
                || (first & 0xffc0) == 0xfec0
                || first == 0x2002
                || (first == 0x2001 && s[1] == 0)
                || (first == 0x64 && s[1] == 0xff9b && s[2] == 1)
                || (first == 0x2001 && s[1] == 0x0db8))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn lookups_take_the_instance_s_slots_and_addresses_need_none() {
        let none = || Arc::new(Semaphore::new(0));
        let ip = lookup("127.0.0.1".into(), 80, none()).await.unwrap();
        assert_eq!(ip, [SocketAddr::from(([127, 0, 0, 1], 80))]);
        assert_eq!(lookup("[::1]".into(), 443, none()).await.unwrap()[0].port(), 443);
        // A name waits for one of the instance's slots.
        let waited = tokio::time::timeout(Duration::from_millis(200), lookup("localhost".into(), 80, none())).await;
        assert!(waited.is_err(), "no slot, no lookup");
        let mine = Arc::new(Semaphore::new(MAX_LOOKUPS));
        assert!(!lookup("localhost".into(), 80, mine.clone()).await.unwrap().is_empty());
        assert_eq!(mine.available_permits(), MAX_LOOKUPS, "given back when the resolver answered");
    }

    #[test]
    fn private_and_special_addresses_are_not_public() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "::1",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "::127.0.0.1",
            "::a9fe:a9fe",
            "64:ff9b::a9fe:a9fe",
            "64:ff9b::10.0.0.1",
            "64:ff9b:1::1",
            "2002:a9fe:a9fe::1",
            "2001:0:4136:e378:8000:63bf:3fff:fdd2",
            "fec0::1",
        ] {
            assert!(!is_public(ip.parse().unwrap()), "{ip}");
        }
        for ip in ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "64:ff9b::8.8.8.8", "::8.8.8.8"] {
            assert!(is_public(ip.parse().unwrap()), "{ip}");
        }
    }
}
