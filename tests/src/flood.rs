//! A hostile registry: it answers a pull with a body that does not end (up
//! to a gigabyte), in one of the places a client reads, and counts
//! what it managed to send before the client hung up. A client that bounds
//! what it reads hangs up after a few megabytes; one that does not takes it all.
//! Other modes trickle, redirect forever, or test whom credentials go to
//! (every request is logged with whether it carried any).

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Where the endless body goes.
#[derive(Clone, Copy, Debug)]
pub enum Flood {
    /// The manifest, chunked, with no length.
    Manifest,
    /// The manifest, declaring a 10 GiB `Content-Length`.
    DeclaredManifest,
    /// The token service's answer (the registry answers 401 with a bearer challenge).
    Token,
    /// The body of a 500, which starts with a terminal escape sequence.
    ErrorBody,
    /// The component: the manifest says 1,000 bytes, the blob does not end.
    Blob,
    /// The manifest, one byte every 100 ms (for a minute at most).
    Trickle,
    /// The component, after a good manifest, one byte every 100 ms.
    TrickleBlob,
    /// The manifest request redirects to itself, forever.
    Redirects,
    /// Not a flood: the registry serves the manifest without asking for
    /// credentials, then redirects the blob to another origin, which
    /// answers 401 with a bearer challenge of its own.
    RedirectedChallenge,
    /// Not a flood: `/v2/` asks for nothing, the manifest asks for basic
    /// credentials (and is served with them); the blob is not there.
    OpenV2,
    /// Not a flood: the registry challenges every request without
    /// the token `t` with a bearer challenge; its token service redirects to
    /// another origin, which hands out `t`; with it the manifest is served,
    /// and the blob is not there.
    RedirectedToken,
    /// Not a flood: the manifest is answered 429 (`Retry-After: 1`) twice,
    /// then served; the blob is not there.
    RateLimitedTwice,
    /// Not a flood: every request is answered 429, with no advice.
    RateLimited,
}

/// The layer size [`Flood::Blob`]'s manifest declares.
pub const BLOB_SIZE: u64 = 1000;

/// The most any flood sends, so a test of an unbounded client ends too.
pub const CAP: u64 = 1 << 30;

pub struct FloodRegistry {
    pub address: String,
    /// Where [`Flood::RedirectedChallenge`] sends the blob, and
    /// [`Flood::RedirectedToken`] the token request: another origin (another port).
    pub elsewhere: String,
    state: Arc<State>,
}

struct State {
    flood: Flood,
    sent: AtomicU64,
    /// `host path authorization?` for each request.
    seen: Mutex<Vec<String>>,
    stop: AtomicBool,
    address: String,
    elsewhere: String,
}

impl FloodRegistry {
    /// Serves on two free loopback ports until dropped.
    pub fn start(flood: Flood) -> FloodRegistry {
        let bind = |ip: &str| {
            let listener = TcpListener::bind(format!("{ip}:0")).expect("a free port");
            let address = listener.local_addr().expect("its address").to_string();
            (listener, address)
        };
        let ((listener, address), (other, elsewhere)) = (bind("127.0.0.1"), bind("127.0.0.1"));
        let state = Arc::new(State {
            flood,
            sent: AtomicU64::new(0),
            seen: Mutex::default(),
            stop: AtomicBool::new(false),
            address: address.clone(),
            elsewhere: elsewhere.clone(),
        });
        for listener in [listener, other] {
            let state = state.clone();
            std::thread::spawn(move || {
                for stream in listener.incoming() {
                    if state.stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let Ok(stream) = stream else { continue };
                    let state = state.clone();
                    std::thread::spawn(move || serve(stream, &state));
                }
            });
        }
        FloodRegistry { address, elsewhere, state }
    }

    /// Body bytes written so far.
    pub fn sent(&self) -> u64 {
        self.state.sent.load(Ordering::Relaxed)
    }

    /// The requests so far: `host path` and ` authorization` when one came.
    pub fn seen(&self) -> Vec<String> {
        self.state.seen.lock().expect("the log").clone()
    }
}

impl Drop for FloodRegistry {
    fn drop(&mut self) {
        self.state.stop.store(true, Ordering::Relaxed);
        let _ = TcpStream::connect(&self.address);
        let _ = TcpStream::connect(&self.elsewhere);
    }
}

/// Answers the requests on one connection until it closes or a flood ends it.
fn serve(stream: TcpStream, state: &State) {
    let mut reader = BufReader::new(stream.try_clone().expect("a second handle"));
    let (mut out, sent, here) = (stream, &state.sent, stream_host(&reader));
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
            return;
        }
        let (mut authorized, mut token_t) = (false, false);
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).unwrap_or(0) == 0 || header.trim().is_empty() {
                break;
            }
            let header = header.to_ascii_lowercase();
            authorized |= header.starts_with("authorization:");
            token_t |= header.trim_end() == "authorization: bearer t";
        }
        let path = request_line.split_whitespace().nth(1).unwrap_or("/").to_owned();
        let auth = if authorized { " authorization" } else { "" };
        state.seen.lock().expect("the log").push(format!("{here} {path}{auth}"));
        let head = |status: &str, extra: &str| format!("HTTP/1.1 {status}\r\n{extra}");
        let reply = |out: &mut TcpStream, status: &str, extra: &str, body: &str| {
            let head = head(status, &format!("{extra}Content-Length: {}\r\n\r\n", body.len()));
            out.write_all(format!("{head}{body}").as_bytes()).is_ok()
        };
        let chunked = "Transfer-Encoding: chunked\r\n";
        let challenge =
            |host: &str| format!("WWW-Authenticate: Bearer realm=\"http://{host}/token\",service=\"flood\"\r\n");
        let (manifest, token) = (path.contains("/manifests/"), path.starts_with("/token"));
        let written = match state.flood {
            Flood::Manifest => flow(&mut out, &head("200 OK", chunked), true, sent),
            Flood::DeclaredManifest => {
                flow(&mut out, &head("200 OK", &format!("Content-Length: {}\r\n", 10u64 << 30)), false, sent)
            }
            Flood::Token if token => flow(&mut out, &head("200 OK", chunked), true, sent),
            Flood::Token => reply(&mut out, "401 Unauthorized", &challenge(&state.address), ""),
            Flood::ErrorBody => flow(&mut out, &head("500 Internal Server Error", chunked), true, sent),
            Flood::Blob | Flood::TrickleBlob | Flood::RedirectedChallenge if manifest => {
                reply(&mut out, "200 OK", "", &wasm_manifest())
            }
            Flood::Blob => flow(&mut out, &head("200 OK", chunked), true, sent),
            Flood::Trickle | Flood::TrickleBlob => trickle(&mut out, &head("200 OK", chunked)),
            Flood::Redirects => reply(&mut out, "307 Temporary Redirect", &format!("Location: {path}\r\n"), ""),
            Flood::OpenV2 if manifest && authorized => reply(&mut out, "200 OK", "", &wasm_manifest()),
            Flood::OpenV2 if manifest => {
                reply(&mut out, "401 Unauthorized", "WWW-Authenticate: Basic realm=\"flood\"\r\n", "")
            }
            Flood::OpenV2 if path == "/v2/" => reply(&mut out, "200 OK", "", "{}"),
            Flood::OpenV2 => reply(&mut out, "404 Not Found", "", ""),
            Flood::RedirectedChallenge if token => reply(&mut out, "200 OK", "", r#"{"token":"t"}"#),
            Flood::RedirectedChallenge if path.starts_with("/elsewhere") => {
                reply(&mut out, "401 Unauthorized", &challenge(&state.elsewhere), "")
            }
            Flood::RedirectedChallenge if path.contains("/blobs/") => {
                let location = format!("Location: http://{}/elsewhere/blob\r\n", state.elsewhere);
                reply(&mut out, "307 Temporary Redirect", &location, "")
            }
            // The registry's `/v2/`: no challenge.
            Flood::RedirectedChallenge => reply(&mut out, "200 OK", "", "{}"),
            Flood::RedirectedToken if token && here == state.elsewhere => {
                reply(&mut out, "200 OK", "", r#"{"token":"t"}"#)
            }
            Flood::RedirectedToken if token => {
                let location = format!("Location: http://{}{path}\r\n", state.elsewhere);
                reply(&mut out, "307 Temporary Redirect", &location, "")
            }
            Flood::RedirectedToken if !token_t => reply(&mut out, "401 Unauthorized", &challenge(&state.address), ""),
            Flood::RedirectedToken if manifest => reply(&mut out, "200 OK", "", &wasm_manifest()),
            Flood::RedirectedToken => reply(&mut out, "404 Not Found", "", ""),
            Flood::RateLimitedTwice if manifest => {
                let asked = state.seen.lock().expect("the log").iter().filter(|l| l.contains("/manifests/")).count();
                if asked <= 2 {
                    reply(&mut out, "429 Too Many Requests", "Retry-After: 1\r\n", "")
                } else {
                    reply(&mut out, "200 OK", "", &wasm_manifest())
                }
            }
            Flood::RateLimitedTwice => reply(&mut out, "404 Not Found", "", ""),
            Flood::RateLimited => reply(&mut out, "429 Too Many Requests", "", ""),
        };
        if !written {
            return;
        }
    }
}

/// Writes `head`, then a chunked body one byte every 100 ms for a minute at
/// most. False: the connection is done.
fn trickle(out: &mut TcpStream, head: &str) -> bool {
    if out.write_all(format!("{head}\r\n").as_bytes()).is_err() {
        return false;
    }
    for _ in 0..600 {
        if out.write_all(b"1\r\n \r\n").is_err() {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    false
}

/// The address a connection came in on.
fn stream_host(reader: &BufReader<TcpStream>) -> String {
    reader.get_ref().local_addr().map(|a| a.to_string()).unwrap_or_default()
}

/// Writes `head` and then a body of up to [`CAP`] bytes, chunked or not.
/// False when the client hung up first (or the body ended the connection).
fn flow(out: &mut TcpStream, head: &str, chunked: bool, sent: &AtomicU64) -> bool {
    const PIECE: usize = 64 << 10;
    if out.write_all(format!("{head}Content-Type: application/json\r\n\r\n").as_bytes()).is_err() {
        return false;
    }
    // A body that starts like a registry's JSON error and never closes.
    let frame = |body: &[u8]| {
        if chunked { [format!("{:x}\r\n", body.len()).as_bytes(), body, b"\r\n"].concat() } else { body.to_vec() }
    };
    let start = b"{\"errors\":[{\"code\":\"DENIED\",\"message\":\"flood \x1b[2J";
    let mut piece = vec![b'x'; PIECE];
    piece[..start.len()].copy_from_slice(start);
    let (first, rest) = (frame(&piece), frame(&[b'x'; PIECE]));
    for body in std::iter::once(&first).chain(std::iter::repeat(&rest)) {
        if sent.load(Ordering::Relaxed) >= CAP {
            break;
        }
        if out.write_all(body).is_err() {
            return false;
        }
        sent.fetch_add(PIECE as u64, Ordering::Relaxed);
    }
    if chunked {
        let _ = out.write_all(b"0\r\n\r\n");
    }
    false
}

/// A Wasm artifact manifest whose one layer is [`BLOB_SIZE`] bytes.
fn wasm_manifest() -> String {
    let digest = format!("sha256:{}", "ab".repeat(32));
    serde_json::json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": { "mediaType": "application/vnd.wasm.config.v0+json", "digest": digest, "size": 2 },
        "layers": [{ "mediaType": "application/wasm", "digest": digest, "size": BLOB_SIZE }],
    })
    .to_string()
}
