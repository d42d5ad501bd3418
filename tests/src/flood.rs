//! A hostile registry: it answers a pull with a body that does not end (up
//! to a gigabyte), in one of the places a client reads, and counts
//! what it managed to send before the client hung up. A client that bounds
//! what it reads hangs up after a few megabytes; one that does not takes it all.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

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
}

/// The layer size [`Flood::Blob`]'s manifest declares.
pub const BLOB_SIZE: u64 = 1000;

/// The most any flood sends, so a test of an unbounded client ends too.
pub const CAP: u64 = 1 << 30;

pub struct FloodRegistry {
    pub address: String,
    sent: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
}

impl FloodRegistry {
    /// Serves on a free loopback port until dropped.
    pub fn start(flood: Flood) -> FloodRegistry {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a free port");
        let address = listener.local_addr().expect("its address").to_string();
        let (sent, stop) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicBool::new(false)));
        let (thread_sent, thread_stop, realm) = (sent.clone(), stop.clone(), format!("http://{address}/token"));
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if thread_stop.load(Ordering::Relaxed) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let (sent, realm) = (thread_sent.clone(), realm.clone());
                std::thread::spawn(move || serve(stream, flood, &realm, &sent));
            }
        });
        FloodRegistry { address, sent, stop }
    }

    /// Body bytes written so far.
    pub fn sent(&self) -> u64 {
        self.sent.load(Ordering::Relaxed)
    }
}

impl Drop for FloodRegistry {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = TcpStream::connect(&self.address);
    }
}

/// Answers the requests on one connection until it closes or a flood ends it.
fn serve(stream: TcpStream, flood: Flood, realm: &str, sent: &AtomicU64) {
    let mut reader = BufReader::new(stream.try_clone().expect("a second handle"));
    let mut out = stream;
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
            return;
        }
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).unwrap_or(0) == 0 || header.trim().is_empty() {
                break;
            }
        }
        let path = request_line.split_whitespace().nth(1).unwrap_or("/").to_owned();
        let head = |status: &str, extra: &str| format!("HTTP/1.1 {status}\r\n{extra}");
        let written = match (flood, path.starts_with("/token")) {
            (Flood::Manifest, _) => flow(&mut out, &head("200 OK", "Transfer-Encoding: chunked\r\n"), true, sent),
            (Flood::DeclaredManifest, _) => {
                flow(&mut out, &head("200 OK", &format!("Content-Length: {}\r\n", 10u64 << 30)), false, sent)
            }
            (Flood::Token, false) => {
                let challenge = format!("WWW-Authenticate: Bearer realm=\"{realm}\",service=\"flood\"\r\n");
                out.write_all(head("401 Unauthorized", &format!("{challenge}Content-Length: 0\r\n\r\n")).as_bytes())
                    .is_ok()
            }
            (Flood::Token, true) => flow(&mut out, &head("200 OK", "Transfer-Encoding: chunked\r\n"), true, sent),
            (Flood::ErrorBody, _) => {
                flow(&mut out, &head("500 Internal Server Error", "Transfer-Encoding: chunked\r\n"), true, sent)
            }
            (Flood::Blob, _) if path.contains("/manifests/") => {
                let manifest = wasm_manifest();
                let length = format!("Content-Length: {}\r\n\r\n", manifest.len());
                out.write_all(format!("{}{manifest}", head("200 OK", &length)).as_bytes()).is_ok()
            }
            (Flood::Blob, _) => flow(&mut out, &head("200 OK", "Transfer-Encoding: chunked\r\n"), true, sent),
        };
        if !written {
            return;
        }
    }
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
