//! A hostile test provider, package `hostile`: each invoke tries one attack
//! on the host's sandbox or limits (`tests/tests/sandbox/` drives them).
//!
//! | token `hostile:index:…` | args | attack |
//! |---|---|---|
//! | `loop` | | spins forever |
//! | `membomb` | | allocates (and touches) memory until it fails |
//! | `hold` | `mb`, `sleepMs` | allocates and touches `mb` MiB, then sleeps `sleepMs` holding them |
//! | `recurse` | `shadow` | unbounded recursion (the wasm stack, or with `shadow` the in-memory one) |
//! | `readOutside` | `path` | reads a file; returns `content` |
//! | `writeReadOnly` | `path`, `op` | `write` (default), `append`, `remove`, `mkdir` or `rename` a path |
//! | `env` | `name` | whether the variable is visible, and every name that is |
//! | `http` | `url`, `follow`, `method`, `firstByteMs`, `connectMs`, `betweenBytesMs` | a request through the SDK client; returns `status`, `body`, `location` |
//! | `socket` | `addr`, `kind` | `tcp` connect (default), `udp` send, or a `dns` lookup |
//! | `huge` | `mb`, `shape` | returns a huge value: one `string` of `mb` MiB (default 600), or that many bytes of `nodes` |
//! | `malformed` | `kind` | returns a malformed WIT value (see [`malformed`]) |
//! | `panic` | | panics mid-call |
//! | `logFlood` | `count`, `size`, `urn` | calls the log import `count` times (default 1,000,000) with `size`-byte messages (default 65,537); with `urn`, tied to it and numbered from 0 (`"7 xxx..."`) |
//! | `held` | `asset`, `read`, `times` | whether a text asset's text arrived held (in the host); with `read`, reads it; returns `held`, `length`, `head`, and the asset as it came, twice (`asset`, `again`), and `times` more in `copies` |
//! | `keepHeld` | `asset` | keeps a text asset's text, unread, past the call |
//! | `readKept` | | reads the text `keepHeld` kept: a held text from an earlier call |
//! | `leakHandles` | `count` | keeps `count` more host handles (clock pollables) past the call; returns how many this instance keeps (`kept`) |
//! | `setAuthority` | `length`, `method` | sets an outgoing request's authority to `length` bytes (and its method to `method`, if given), sending nothing; returns `authority` and `method`: whether each was taken |
//! | `setHeader` | `length` | puts a header of `length` bytes into a fields handle; returns `header`: whether it was taken (past the host's bound, wasmtime traps) |
//! | `pin` | `kind`, `count`, `grow`, `authority`, `keep` | makes `count` handles of `kind` that hold memory or files in the host and keeps them past the call (`bodies`, `fields`, `streams`, `listings`, `files`, `responses`: see `pin`), then grows linear memory by `grow` bytes; returns `kept` and what one body `buffered` |
//! | `say` | `text`, `fail` | logs `text`, then fails with it (with `fail`) or answers with a check failure whose property and reason are `text` |
//! | `ok` | `sleepMs` | a normal quick call: `{"ok": true}` |
//!
//! One resource: `hostile:index:Malformed` (`kind`, `initFailed`) is
//! created as `made-1` with a malformed state (a `malformed` kind), answered
//! as a success or, with `initFailed`, as a create that did not finish; its
//! update is always one that did not finish, with such a state.
//!
//! `huge`, `malformed` and that resource bypass the SDK's adapter: this crate
//! implements the raw WIT export trait and hands every other call to the SDK.

use std::hint::black_box;

use pulumi_wasm_sdk::__private::Adapter;
use pulumi_wasm_sdk::__private::wit::exports::pulumi::provider::resource_provider as rp;
use pulumi_wasm_sdk::__private::wit::pulumi::provider::types as t;
use pulumi_wasm_sdk::http;
use pulumi_wasm_sdk::*;

// It declares it wants everything: a declaration grants nothing, which the
// sandbox tests prove (the variables and paths below stay out of reach).
pulumi_wasm_sdk::declare_needs!(
    r#"{"http": ["https://*", "http://*:*"], "env": ["HOSTILE_SECRET", "HOME"], "dirs": ["/"]}"#
);

#[derive(Default)]
pub struct Hostile;

/// What `keepHeld` keeps for `readKept`.
static KEPT: std::sync::Mutex<Option<Text>> = std::sync::Mutex::new(None);

fn arg_str<'a>(args: &'a PropertyMap, key: &str) -> Result<&'a str> {
    args.get(key).and_then(Value::as_str).ok_or_else(|| Error::invalid(format!("`{key}` (a string) is required")))
}

/// The text of the text asset at `key`.
fn arg_text<'a>(args: &'a PropertyMap, key: &str) -> Result<&'a Text> {
    match args.get(key) {
        Some(Value::Asset(Asset { source: Some(AssetSource::Text(text)), .. })) => Ok(text),
        _ => Err(Error::invalid(format!("`{key}` (a text asset) is required"))),
    }
}

fn arg_num(args: &PropertyMap, key: &str, default: f64) -> f64 {
    args.get(key).and_then(Value::as_f64).unwrap_or(default)
}

fn arg_bool(args: &PropertyMap, key: &str) -> bool {
    args.get(key).and_then(Value::as_bool).unwrap_or(false)
}

fn out(outputs: PropertyMap) -> Result<InvokeResponse> {
    Ok(InvokeResponse { outputs, failures: vec![] })
}

#[allow(unconditional_recursion)]
#[inline(never)]
fn dive(depth: u64) -> u64 {
    // Not a tail call, and opaque to the optimiser: every level is a real wasm frame.
    let r = dive(black_box(depth + 1));
    black_box(r) ^ depth
}

#[allow(unconditional_recursion)]
#[inline(never)]
fn dive_shadow(depth: u64) -> u64 {
    // A buffer whose address escapes lives on the shadow stack in linear memory.
    let mut buf = [0u8; 4096];
    buf[(depth % 4096) as usize] = depth as u8;
    black_box(&mut buf);
    let r = dive_shadow(black_box(depth + 1));
    r ^ u64::from(buf[(r % 4096) as usize])
}

fn fs_attack(args: &PropertyMap) -> Result<InvokeResponse> {
    let path = arg_str(args, "path")?;
    let op = args.get("op").and_then(Value::as_str).unwrap_or("write");
    let result = match op {
        "write" => std::fs::write(path, b"written by hostile"),
        "append" => {
            use std::io::Write;
            std::fs::OpenOptions::new().append(true).open(path).and_then(|mut f| f.write_all(b" appended by hostile"))
        }
        "remove" => std::fs::remove_file(path),
        "mkdir" => std::fs::create_dir(path),
        "rename" => std::fs::rename(path, format!("{path}.moved")),
        other => return Err(Error::invalid(format!("unknown op {other:?}"))),
    };
    match result {
        Ok(()) => out(props! { "done" => true }),
        Err(e) => Err(Error::Failed(format!("{op} {path}: {e}"))),
    }
}

/// Straight to wasi:random, one call for all the bytes (as the random example does).
#[cfg(all(target_os = "wasi", target_env = "p2"))]
fn random_bytes(asked: u64) -> Result<Vec<u8>> {
    Ok(wasip2::random::random::get_random_bytes(asked))
}

#[cfg(not(all(target_os = "wasi", target_env = "p2")))]
fn random_bytes(_asked: u64) -> Result<Vec<u8>> {
    Err(Error::Unimplemented("wasi:random is asked only in a component".into()))
}

/// Busy forever, with nothing the compiler may remove: only the host's deadline ends it.
fn spin_forever() -> ! {
    let mut x = 0u64;
    loop {
        x = black_box(x.wrapping_add(1));
    }
}

/// Set by `slowCancel`: this instance's `cancel` export then never returns.
static SLOW_CANCEL: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Handles this instance keeps past its calls (the host must not let them pile up).
static LEAKED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

#[cfg(all(target_os = "wasi", target_env = "p2"))]
fn leak_handles(count: usize) -> usize {
    for _ in 0..count {
        std::mem::forget(wasip2::clocks::monotonic_clock::subscribe_duration(1));
    }
    LEAKED.fetch_add(count, std::sync::atomic::Ordering::Relaxed) + count
}

/// Whether the host takes an authority of `length` bytes, and `method`.
#[cfg(all(target_os = "wasi", target_env = "p2"))]
fn set_authority(length: usize, method: &str) -> (bool, bool) {
    use wasip2::http::types::{Fields, Method, OutgoingRequest};
    let request = OutgoingRequest::new(Fields::new());
    let authority = "a".repeat(length.saturating_sub(3)) + ":80";
    let took_authority = request.set_authority(Some(&authority)).is_ok();
    let took_method = method.is_empty() || request.set_method(&Method::Other(method.to_owned())).is_ok();
    (took_authority, took_method)
}

#[cfg(not(all(target_os = "wasi", target_env = "p2")))]
fn set_authority(_: usize, _: &str) -> (bool, bool) {
    (false, false)
}

/// Whether the host takes a header of `length` bytes into a fields handle
/// (kept in the host, outside the guest's memory).
#[cfg(all(target_os = "wasi", target_env = "p2"))]
fn set_header(length: usize) -> bool {
    wasip2::http::types::Fields::from_list(&[("x-big".to_owned(), vec![b'a'; length])]).is_ok()
}

#[cfg(not(all(target_os = "wasi", target_env = "p2")))]
fn set_header(_: usize) -> bool {
    false
}

/// Makes `count` handles of `kind` that hold memory or files in the host
/// and keeps them past the call: unsent requests with full bodies (no grant
/// needed), fields of 30 KiB, streams of a file, listings of a directory,
/// open files (the first granted directory's `file.txt`), responses of
/// `authority` left unread (or dropped as they come, unless `keep`); then
/// grows linear memory by `grow` bytes. Says how many were made and what
/// one body took.
#[cfg(all(target_os = "wasi", target_env = "p2"))]
fn pin(args: &PropertyMap) -> Result<(usize, u64)> {
    use wasip2::filesystem::types::{DescriptorFlags, OpenFlags, PathFlags};
    use wasip2::http::types::{Fields, OutgoingRequest, RequestOptions, Scheme};
    let kind = arg_str(args, "kind")?;
    let count = arg_num(args, "count", 1.0) as usize;
    let grow = arg_num(args, "grow", 0.0) as usize;
    let dir = wasip2::filesystem::preopens::get_directories().into_iter().next().map(|(d, _)| d);
    let dir = || dir.as_ref().ok_or_else(|| Error::invalid("no directory granted"));
    let file = match kind {
        "streams" | "files" => Some(
            dir()?
                .open_at(PathFlags::empty(), "file.txt", OpenFlags::empty(), DescriptorFlags::READ)
                .map_err(|e| Error::Failed(format!("open file.txt: {e:?}")))?,
        ),
        _ => None,
    };
    let mut buffered = 0;
    for _ in 0..count {
        match kind {
            "bodies" => {
                let request = OutgoingRequest::new(Fields::new());
                let body = request.body().expect("a body");
                let stream = body.write().expect("its stream");
                buffered = 0;
                // Until the host takes no more without sending.
                while let Ok(n @ 1..) = stream.check_write() {
                    stream.write(&vec![b'b'; n as usize]).expect("a write check_write allowed");
                    buffered += n;
                }
                std::mem::forget((stream, body, request));
            }
            "fields" => std::mem::forget(
                Fields::from_list(&[("x-big".to_owned(), vec![b'f'; 30 << 10])]).expect("30 KiB of headers"),
            ),
            "streams" => {
                let file = file.as_ref().expect("opened above");
                let stream = file.read_via_stream(0).map_err(|e| Error::Failed(format!("stream: {e:?}")))?;
                // A read leaves the host holding what it read ahead.
                let _ = stream.read(1);
                std::mem::forget(stream);
            }
            "files" => {
                let opened = dir()?
                    .open_at(PathFlags::empty(), "file.txt", OpenFlags::empty(), DescriptorFlags::READ)
                    .map_err(|e| Error::Failed(format!("open file.txt: {e:?}")))?;
                std::mem::forget(opened);
            }
            "responses" => {
                let request = OutgoingRequest::new(Fields::new());
                let _ = request.set_scheme(Some(&Scheme::Http));
                let _ = request.set_authority(Some(arg_str(args, "authority")?));
                let _ = request.set_path_with_query(Some("/hello"));
                let options = RequestOptions::new();
                let _ = options.set_connect_timeout(Some(500_000_000));
                let sent = wasip2::http::outgoing_handler::handle(request, Some(options))
                    .map_err(|e| Error::Failed(format!("send: {e:?}")))?;
                sent.subscribe().block();
                let response = sent.get().expect("ready").expect("taken once");
                let response = response.map_err(|e| Error::Failed(format!("response: {e:?}")))?;
                if args.get("keep").and_then(Value::as_bool).unwrap_or(true) {
                    std::mem::forget(response);
                }
            }
            "listings" => {
                let listing = dir()?.read_directory().map_err(|e| Error::Failed(format!("list: {e:?}")))?;
                std::mem::forget(listing);
            }
            other => return Err(Error::invalid(format!("unknown kind {other:?}"))),
        }
    }
    black_box(vec![1u8; grow]);
    Ok((count, buffered))
}

#[cfg(not(all(target_os = "wasi", target_env = "p2")))]
fn pin(_: &PropertyMap) -> Result<(usize, u64)> {
    Err(Error::Unimplemented("handles are pinned only in a component".into()))
}

#[cfg(not(all(target_os = "wasi", target_env = "p2")))]
fn leak_handles(count: usize) -> usize {
    LEAKED.fetch_add(count, std::sync::atomic::Ordering::Relaxed) + count
}

fn socket_attack(args: &PropertyMap) -> Result<InvokeResponse> {
    let addr = args.get("addr").and_then(Value::as_str).unwrap_or("127.0.0.1:80");
    let kind = args.get("kind").and_then(Value::as_str).unwrap_or("tcp");
    let result = match kind {
        "tcp" => std::net::TcpStream::connect(addr).map(|s| format!("connected to {:?}", s.peer_addr().ok())),
        "udp" => std::net::UdpSocket::bind("0.0.0.0:0")
            .and_then(|s| s.send_to(b"hostile", addr))
            .map(|n| format!("sent {n} bytes")),
        "dns" => {
            std::net::ToSocketAddrs::to_socket_addrs(addr).map(|a| format!("resolved {:?}", a.collect::<Vec<_>>()))
        }
        other => return Err(Error::invalid(format!("unknown kind {other:?}"))),
    };
    match result {
        Ok(what) => out(props! { "connected" => true, "what" => what }),
        Err(e) => Err(Error::Failed(format!("{kind} {addr}: {e}"))),
    }
}

impl Provider for Hostile {
    fn info(&self) -> PluginInfo {
        PluginInfo::new("hostile", env!("CARGO_PKG_VERSION"))
    }

    fn get_schema(&mut self, _req: GetSchemaRequest) -> Result<String> {
        Ok(format!(r#"{{"name":"hostile","version":"{}"}}"#, env!("CARGO_PKG_VERSION")))
    }

    fn invoke(&mut self, req: InvokeRequest) -> Result<InvokeResponse> {
        let args = &req.args;
        match req.token.strip_prefix("hostile:index:").unwrap_or_default() {
            "ok" => {
                let ms = arg_num(args, "sleepMs", 0.0) as u64;
                std::thread::sleep(std::time::Duration::from_millis(ms));
                out(props! { "ok" => true })
            }
            "loop" => spin_forever(),
            "slowCancel" => {
                SLOW_CANCEL.store(true, std::sync::atomic::Ordering::Relaxed);
                std::thread::sleep(std::time::Duration::from_millis(arg_num(args, "sleepMs", 0.0) as u64));
                out(props! { "armed" => true })
            }
            "hold" => {
                let hoard = vec![0xa5u8; (arg_num(args, "mb", 0.0) as usize) << 20];
                std::thread::sleep(std::time::Duration::from_millis(arg_num(args, "sleepMs", 0.0) as u64));
                out(props! { "held" => black_box(hoard).len() as f64 })
            }
            "membomb" => {
                let mut hoard: Vec<Vec<u8>> = Vec::new();
                loop {
                    // Written to, so the pages are really committed.
                    hoard.push(vec![0xa5; 1 << 20]);
                    black_box(&mut hoard);
                }
            }
            "recurse" => {
                let r = if arg_bool(args, "shadow") { dive_shadow(0) } else { dive(0) };
                out(props! { "unreachable" => r })
            }
            "readOutside" => {
                let path = arg_str(args, "path")?;
                match std::fs::read_to_string(path) {
                    Ok(content) => out(props! { "content" => content }),
                    Err(e) => Err(Error::Failed(format!("read {path}: {e}"))),
                }
            }
            "writeReadOnly" => fs_attack(args),
            "env" => {
                let name = arg_str(args, "name")?;
                let value = std::env::var(name).ok();
                let names: Vec<Value> =
                    std::env::vars_os().map(|(k, _)| k.to_string_lossy().into_owned().into()).collect();
                out(props! { "visible" => value.is_some(), "value" => value, "names" => Value::Array(names) })
            }
            "http" => {
                let url = arg_str(args, "url")?;
                let method = match args.get("method").and_then(Value::as_str).unwrap_or("GET") {
                    "GET" => http::Method::Get,
                    "POST" => http::Method::Post,
                    "PUT" => http::Method::Put,
                    "DELETE" => http::Method::Delete,
                    other => return Err(Error::invalid(format!("unknown method {other}"))),
                };
                let mut request = http::Request::new(method, url);
                let follow = arg_num(args, "follow", 0.0) as u32;
                if follow > 0 {
                    request = request.follow_redirects(follow);
                }
                if let Some(ms) = args.get("firstByteMs").and_then(Value::as_f64) {
                    request = request.first_byte_timeout(std::time::Duration::from_millis(ms as u64));
                }
                if let Some(ms) = args.get("connectMs").and_then(Value::as_f64) {
                    request = request.connect_timeout(std::time::Duration::from_millis(ms as u64));
                }
                if let Some(ms) = args.get("betweenBytesMs").and_then(Value::as_f64) {
                    request = request.between_bytes_timeout(std::time::Duration::from_millis(ms as u64));
                }
                if method != http::Method::Get {
                    request = request.body("hostile");
                }
                let resp = request.send()?;
                out(props! {
                    "status" => resp.status(),
                    "body" => String::from_utf8_lossy(resp.bytes()).into_owned(),
                    "location" => resp.location(),
                    "url" => resp.url(),
                })
            }
            "socket" => socket_attack(args),
            "setAuthority" => {
                let method = args.get("method").and_then(Value::as_str).unwrap_or("");
                let (authority, method) = set_authority(arg_num(args, "length", 11.0) as usize, method);
                out(props! { "authority" => authority, "method" => method })
            }
            "setHeader" => out(props! { "header" => set_header(arg_num(args, "length", 16.0) as usize) }),
            "pin" => {
                let (kept, buffered) = pin(args)?;
                out(props! { "kept" => kept as f64, "buffered" => buffered as f64 })
            }
            "leakHandles" => out(props! { "kept" => leak_handles(arg_num(args, "count", 0.0) as usize) as f64 }),
            "random" => {
                let bytes = random_bytes(arg_num(args, "bytes", 0.0) as u64)?;
                let distinct = bytes.iter().collect::<std::collections::BTreeSet<_>>().len();
                let head: String = bytes.iter().take(16).map(|b| format!("{b:02x}")).collect();
                out(props! { "length" => bytes.len() as f64, "distinct" => distinct as f64, "head" => head })
            }
            "held" => {
                let text = arg_text(args, "asset")?;
                let asset = args["asset"].clone();
                let held = text.is_held();
                let head: String =
                    if arg_bool(args, "read") { text.as_str().chars().take(16).collect() } else { String::new() };
                // The asset twice: the host copies the text into one and moves it into the other.
                let again = asset.clone();
                // And `times` more: each a copy of the text once the host builds the answer.
                let copies = vec![asset.clone(); arg_num(args, "times", 0.0) as usize];
                out(props! {
                    "held" => held, "length" => text.len() as f64, "head" => head, "asset" => asset, "again" => again,
                    "copies" => copies,
                })
            }
            "keepHeld" => {
                let text = arg_text(args, "asset")?;
                *KEPT.lock().expect("kept") = Some(text.clone());
                out(props! { "held" => text.is_held() })
            }
            "readKept" => match KEPT.lock().expect("kept").as_ref() {
                Some(text) => out(props! { "length" => text.as_str().len() as f64 }),
                None => Err(Error::invalid("nothing kept: call keepHeld first")),
            },
            "panic" => panic!("hostile was asked to panic"),
            "say" => {
                let text = arg_str(args, "text")?;
                log::log(log::Severity::Warning, text, None, false);
                if arg_bool(args, "fail") {
                    return Err(Error::Failed(text.to_owned()));
                }
                let failure = CheckFailure { property: text.to_owned(), reason: text.to_owned() };
                Ok(InvokeResponse { outputs: PropertyMap::new(), failures: vec![failure] })
            }
            "logFlood" => {
                let count = arg_num(args, "count", 1_000_000.0) as u64;
                let size = arg_num(args, "size", 65_537.0) as usize;
                let message = "x".repeat(size);
                let urn = args.get("urn").and_then(Value::as_str);
                for i in 0..count {
                    match urn {
                        Some(urn) => log::log(log::Severity::Info, &format!("{i} {message}"), Some(urn), false),
                        None => log::log(log::Severity::Info, black_box(&message), None, i % 2 == 0),
                    }
                }
                out(props! { "sent" => count })
            }
            other => Err(Error::unknown_function(&format!("hostile:index:{other}"))),
        }
    }
}

/// A WIT value, as given (no checks: that is the point): nodes as their
/// three words (wit/README.md lists the kinds); strings, keys and child
/// lists go into the value's shared buffers through the helpers.
#[derive(Default)]
struct RawValue {
    nodes: Vec<u32>,
    items: Vec<u32>,
    fields: Vec<u32>,
    extra: Vec<u32>,
    text: String,
    long: Vec<String>,
    /// Counts that say otherwise than the sections (`badCounts`).
    counts: Option<[u32; 4]>,
}

type Node = [u32; 3];
const NULL: Node = [0, 0, 0];
const STRING: u32 = 3;
const LONG_STRING: u32 = 4;
const ARRAY: u32 = 6;
const OBJECT: u32 = 7;
const ASSET: u32 = 10;
const ARCHIVE: u32 = 11;
const OUTPUT: u32 = 13;

fn number(n: f64) -> Node {
    let bits = n.to_bits();
    [2, bits as u32, (bits >> 32) as u32]
}

impl RawValue {
    fn set(&mut self, nodes: &[Node]) {
        self.nodes = nodes.concat();
    }

    fn push(&mut self, node: Node) {
        self.nodes.extend(node);
    }

    fn text(&mut self, s: &str) -> [u32; 2] {
        self.text.push_str(s);
        [(self.text.len() - s.len()) as u32, s.len() as u32]
    }

    fn string(&mut self, s: &str) -> Node {
        let [start, len] = self.text(s);
        [STRING, start, len]
    }

    fn array(&mut self, children: &[u32]) -> Node {
        self.items.extend_from_slice(children);
        [ARRAY, (self.items.len() - children.len()) as u32, children.len() as u32]
    }

    /// The pairs' place in `fields`: their first and their count.
    fn pairs(&mut self, pairs: &[(&str, u32)]) -> [u32; 2] {
        for (k, c) in pairs {
            let [start, len] = self.text(k);
            self.fields.extend([start, len, *c]);
        }
        [(self.fields.len() / 3 - pairs.len()) as u32, pairs.len() as u32]
    }

    fn object(&mut self, pairs: &[(&str, u32)]) -> Node {
        let [start, count] = self.pairs(pairs);
        [OBJECT, start, count]
    }

    /// The counts, then the four sections, in one list of words.
    fn value(self) -> t::Value {
        let RawValue { nodes, items, fields, extra, text, long, counts } = self;
        let counts = counts.unwrap_or([nodes.len() / 3, items.len(), fields.len() / 3, extra.len()].map(|n| n as u32));
        t::Value { words: [&counts[..], &nodes, &items, &fields, &extra].concat(), text, long }
    }
}

fn args_of(req: &rp::InvokeRequest) -> PropertyMap {
    scalars(&req.args)
}

/// Decodes a (well-formed) value the host sent: the root object's plain scalars.
fn scalars(v: &t::Value) -> PropertyMap {
    let text = |start: u32, len: u32| v.text.get(start as usize..(start + len) as usize).unwrap_or_default();
    let (n, i) = (v.words[0] as usize, v.words[1] as usize);
    let fields = &v.words[4 + 3 * n + i..];
    let node = |at: u32| v.words.get(4 + at as usize * 3..4 + at as usize * 3 + 3);
    let mut m = PropertyMap::new();
    if let Some(&[OBJECT, first, count]) = node(0) {
        for f in fields.get(first as usize * 3..(first + count) as usize * 3).unwrap_or_default().chunks(3) {
            let v = match node(f[2]) {
                Some(&[STRING, start, len]) => Value::from(text(start, len)),
                Some(&[LONG_STRING, i, _]) => Value::from(v.long[i as usize].as_str()),
                Some(&[2, lo, hi]) => Value::from(f64::from_bits(u64::from(lo) | (u64::from(hi) << 32))),
                Some(&[1, b, _]) => Value::from(b == 1),
                _ => continue,
            };
            m.insert(text(f[0], f[1]).to_owned(), v);
        }
    }
    m
}

/// Returns a huge value, built in place so the guest holds one copy.
fn huge(args: &PropertyMap) -> Result<rp::InvokeResponse, t::Error> {
    let bytes = (arg_num(args, "mb", 600.0).max(0.0) as usize) << 20;
    let mut r = RawValue::default();
    match args.get("shape").and_then(Value::as_str).unwrap_or("string") {
        "string" => {
            let data = String::from_utf8(vec![b'x'; bytes]).map_err(|_| t::Error::Failed("not utf-8".into()))?;
            let root = r.object(&[("data", 1)]);
            r.long.push(data);
            r.set(&[root, [LONG_STRING, 0, 0]]);
        }
        "nodes" => {
            // 16 guest bytes per element (its three words plus its index in
            // `items`), written straight into the value's one list of words.
            let n = (bytes / 16).max(1) as u32;
            let [start, len] = r.text("data");
            let mut words = Vec::with_capacity(4 + 3 * (n as usize + 2) + n as usize + 3);
            words.extend([n + 2, n, 1, 0, OBJECT, 0, 1, ARRAY, 0, n]);
            words.resize(words.len() + 3 * n as usize, 0);
            words.extend(2..n + 2);
            words.extend([start, len, 1]);
            let outputs = t::Value { words, text: r.text, long: vec![] };
            return Ok(rp::InvokeResponse { outputs, failures: vec![] });
        }
        other => return Err(t::Error::InvalidArgument(format!("unknown shape {other:?}"))),
    }
    Ok(rp::InvokeResponse { outputs: r.value(), failures: vec![] })
}

/// Values that break the flattened-tree rules of `types.wit`:
///
/// - `cycle`: the root's child is the root;
/// - `backwards`: a child index smaller than its parent's;
/// - `shared`: two parents share one child;
/// - `laughs`: 64 levels each pointing twice at the next (2^63 paths if shared nodes were expanded);
/// - `outOfRange`: a child index past the end; `maxIndex`: index `u32::MAX`;
/// - `deep`: a valid but 1,000,000-deep chain of arrays (`depth` to change it);
/// - `rootNotObject`: outputs whose root is a string; `empty`: no nodes at all;
/// - `duplicateKeys`: one object with the same key twice;
/// - `archiveMember`: an archive whose member is a number, not an asset or archive;
/// - `textPastEnd`, `splitCharacter`: a string whose span runs past the
///   text, or ends inside a character; `itemsPastEnd`: an array whose
///   children run past `items`; `fieldsPastEnd`: the same for an object;
/// - and the words' own: `badCounts` (counts that do not add up to the
///   words), `badKind` (a kind that does not exist), `sharedLong` (two nodes
///   with one long string: a megabyte that would count twice), `extraBehind`
///   (two archives with the same operands in `extra`), `heldUnknown` (an
///   asset whose text is a held-text handle the host never gave out);
/// - `overlapping`: a few kilobytes of words naming one 8 MiB stretch of
///   text 1,000 times, as an output value's dependencies (8 GB if each use
///   were copied; spans may overlap, so the host must count every use).
pub fn malformed(kind: &str, depth: u32) -> Option<t::Value> {
    let mut r = RawValue::default();
    match kind {
        "cycle" => {
            let root = r.object(&[("a", 0)]);
            r.set(&[root]);
        }
        "backwards" => {
            let root = r.object(&[("a", 2)]);
            r.set(&[root, NULL, [8, 1, 0]]);
        }
        "shared" => {
            let (root, twice) = (r.object(&[("a", 1), ("b", 1)]), r.string("twice"));
            r.set(&[root, twice]);
        }
        "laughs" => {
            let node = r.object(&[("lol", 1)]);
            r.push(node);
            for i in 1..64u32 {
                let node = r.array(&[i + 1, i + 1]);
                r.push(node);
            }
            let node = r.string("lol");
            r.push(node);
        }
        "outOfRange" => {
            let root = r.object(&[("a", 99)]);
            r.set(&[root]);
        }
        "maxIndex" => {
            let root = r.object(&[("a", u32::MAX)]);
            r.set(&[root]);
        }
        "deep" => {
            let depth = depth.max(2);
            r.nodes.reserve(depth as usize * 3 + 3);
            let node = r.object(&[("deep", 1)]);
            r.push(node);
            for i in 1..depth {
                let node = r.array(&[i + 1]);
                r.push(node);
            }
            r.push(NULL);
        }
        "rootNotObject" => {
            let root = r.string("not an object");
            r.set(&[root]);
        }
        "empty" => {}
        "duplicateKeys" => {
            let root = r.object(&[("a", 1), ("a", 2)]);
            r.set(&[root, NULL, [1, 1, 0]]);
        }
        "archiveMember" => {
            let root = r.object(&[("archive", 1)]);
            let [first, count] = r.pairs(&[("m", 2)]);
            r.extra.extend([0, 0, 0, 5, first, count]);
            r.set(&[root, [ARCHIVE, 0, 0], number(1.0)]);
        }
        "textPastEnd" => {
            let root = r.object(&[("a", 1)]);
            r.set(&[root, [STRING, 0, 1 << 20]]);
        }
        "splitCharacter" => {
            let root = r.object(&[("a", 1)]);
            let [start, _] = r.text("é");
            r.set(&[root, [STRING, start, 1]]);
        }
        "itemsPastEnd" => {
            let root = r.object(&[("a", 1)]);
            r.set(&[root, [ARRAY, 0, 2], NULL]);
        }
        "fieldsPastEnd" => r.set(&[[OBJECT, 0, 1]]),
        "badCounts" => {
            let root = r.object(&[("a", 1)]);
            r.set(&[root, NULL]);
            r.counts = Some([3, 0, 1, 0]);
        }
        "badKind" => {
            let root = r.object(&[("a", 1)]);
            r.set(&[root, [99, 0, 0]]);
        }
        "sharedLong" => {
            let root = r.object(&[("a", 1), ("b", 2)]);
            r.long.push("x".repeat(1 << 20));
            r.set(&[root, [LONG_STRING, 0, 0], [LONG_STRING, 0, 0]]);
        }
        "extraBehind" => {
            let root = r.object(&[("a", 1), ("b", 2)]);
            r.extra.extend([0, 0, 0, 3, 0, 1]);
            r.set(&[root, [ARCHIVE, 0, 0], [ARCHIVE, 0, 0]]);
        }
        "heldUnknown" => {
            let root = r.object(&[("asset", 1)]);
            r.extra.extend([0, 0, 0, 6, u32::MAX - 5, 4096]);
            r.set(&[root, [ASSET, 0, 0]]);
        }
        "overlapping" => {
            let root = r.object(&[("output", 1)]);
            let [start, len] = r.text(&"d".repeat(8 << 20));
            let uses = 1000;
            r.extra.extend([0, 0, 0, uses]);
            for _ in 0..uses {
                r.extra.extend([start, len]);
            }
            r.set(&[root, [OUTPUT, 0, 0]]);
        }
        _ => return None,
    }
    Some(r.value())
}

/// The raw export: `huge` and `malformed` answer here; everything else goes
/// to the SDK's adapter around [`Hostile`].
pub struct Raw;

type Sdk = Adapter<Hostile>;

impl rp::Guest for Raw {
    fn get_plugin_info() -> rp::PluginInfo {
        <Sdk as rp::Guest>::get_plugin_info()
    }
    fn parameterize(req: rp::ParameterizeRequest) -> Result<rp::PackageRef, t::Error> {
        <Sdk as rp::Guest>::parameterize(req)
    }
    fn get_schema(req: rp::GetSchemaRequest) -> Result<String, t::Error> {
        <Sdk as rp::Guest>::get_schema(req)
    }
    fn check_config(req: rp::CheckRequest) -> Result<rp::CheckResponse, t::Error> {
        <Sdk as rp::Guest>::check_config(req)
    }
    fn diff_config(req: rp::DiffRequest) -> Result<rp::DiffResponse, t::Error> {
        <Sdk as rp::Guest>::diff_config(req)
    }
    fn configure(req: rp::ConfigureRequest) -> Result<rp::ConfigureResponse, t::Error> {
        <Sdk as rp::Guest>::configure(req)
    }
    fn invoke(req: rp::InvokeRequest) -> Result<rp::InvokeResponse, t::Error> {
        match req.token.as_str() {
            "hostile:index:huge" => huge(&args_of(&req)),
            "hostile:index:malformed" => {
                let args = args_of(&req);
                let kind = args.get("kind").and_then(Value::as_str).unwrap_or("cycle");
                let depth = arg_num(&args, "depth", 1_000_000.0) as u32;
                let outputs = malformed(kind, depth)
                    .ok_or_else(|| t::Error::InvalidArgument(format!("unknown malformed kind {kind:?}")))?;
                Ok(rp::InvokeResponse { outputs, failures: vec![] })
            }
            _ => <Sdk as rp::Guest>::invoke(req),
        }
    }
    fn call(req: rp::CallRequest) -> Result<rp::CallResponse, t::Error> {
        <Sdk as rp::Guest>::call(req)
    }
    fn check(req: rp::CheckRequest) -> Result<rp::CheckResponse, t::Error> {
        <Sdk as rp::Guest>::check(req)
    }
    fn diff(req: rp::DiffRequest) -> Result<rp::DiffResponse, t::Error> {
        <Sdk as rp::Guest>::diff(req)
    }
    /// `hostile:index:Malformed`: see the crate's docs.
    fn create(req: rp::CreateRequest) -> Result<rp::CreateResponse, t::Error> {
        if req.type_ != "hostile:index:Malformed" {
            return <Sdk as rp::Guest>::create(req);
        }
        let args = scalars(&req.properties);
        let kind = args.get("kind").and_then(Value::as_str).unwrap_or("duplicateKeys");
        let properties =
            malformed(kind, 1_000_000).ok_or_else(|| t::Error::InvalidArgument(format!("unknown kind {kind:?}")))?;
        if args.get("initFailed").and_then(Value::as_bool) == Some(true) {
            let reasons = vec!["half made".into()];
            return Err(t::Error::InitFailed(t::InitFailure {
                id: "made-1".into(),
                properties,
                inputs: None,
                reasons,
            }));
        }
        Ok(rp::CreateResponse { id: "made-1".into(), properties, refresh_before_update: false })
    }
    fn read(req: rp::ReadRequest) -> Result<rp::ReadResponse, t::Error> {
        <Sdk as rp::Guest>::read(req)
    }
    fn update(req: rp::UpdateRequest) -> Result<rp::UpdateResponse, t::Error> {
        if req.type_ != "hostile:index:Malformed" {
            return <Sdk as rp::Guest>::update(req);
        }
        let kind = scalars(&req.news).get("kind").and_then(Value::as_str).unwrap_or("duplicateKeys").to_owned();
        let properties =
            malformed(&kind, 1_000_000).ok_or_else(|| t::Error::InvalidArgument(format!("unknown kind {kind:?}")))?;
        let reasons = vec!["half updated".into()];
        Err(t::Error::InitFailed(t::InitFailure { id: req.id, properties, inputs: None, reasons }))
    }
    fn delete(req: rp::DeleteRequest) -> Result<(), t::Error> {
        <Sdk as rp::Guest>::delete(req)
    }
    fn construct(req: rp::ConstructRequest) -> Result<rp::ConstructResponse, t::Error> {
        <Sdk as rp::Guest>::construct(req)
    }
    fn list(req: rp::ListRequest) -> Result<rp::ListResponse, t::Error> {
        <Sdk as rp::Guest>::list(req)
    }
    fn get_mapping(key: String, provider: String) -> Result<Option<rp::Mapping>, t::Error> {
        <Sdk as rp::Guest>::get_mapping(key, provider)
    }
    fn get_mappings(key: String) -> Result<Vec<String>, t::Error> {
        <Sdk as rp::Guest>::get_mappings(key)
    }
    fn cancel() {
        if SLOW_CANCEL.load(std::sync::atomic::Ordering::Relaxed) {
            spin_forever();
        }
        <Sdk as rp::Guest>::cancel()
    }
}

#[cfg(target_arch = "wasm32")]
pulumi_wasm_sdk::__private::export_world!(Raw with_types_in pulumi_wasm_sdk::__private::wit);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_malformed_kind_is_built() {
        for kind in [
            "cycle",
            "backwards",
            "shared",
            "laughs",
            "outOfRange",
            "maxIndex",
            "rootNotObject",
            "empty",
            "duplicateKeys",
            "archiveMember",
            "textPastEnd",
            "splitCharacter",
            "itemsPastEnd",
            "fieldsPastEnd",
            "overlapping",
        ] {
            assert!(malformed(kind, 0).is_some(), "{kind}");
        }
        assert_eq!(malformed("deep", 10).unwrap().words[0], 11);
        assert!(malformed("nope", 0).is_none());
    }

    #[test]
    fn args_are_read_from_the_raw_request() {
        let mut args = RawValue::default();
        let root = args.object(&[("mb", 1), ("shape", 2)]);
        let shape = args.string("nodes");
        args.set(&[root, number(1.0), shape]);
        let req = rp::InvokeRequest { token: "hostile:index:huge".into(), args: args.value(), preview: false };
        let resp = huge(&args_of(&req)).unwrap();
        assert_eq!(resp.outputs.words[0], (1 << 20) / 16 + 2);
        let one = rp::InvokeRequest { token: String::new(), args: malformed("shared", 0).unwrap(), preview: false };
        assert_eq!(args_of(&one).get("a").and_then(Value::as_str), Some("twice"));
    }
}
