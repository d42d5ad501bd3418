//! What a guest was not granted stays out of reach: files, environment
//! variables, hosts over HTTP, sockets.

use super::*;

/// `root/secret.txt` outside the grant; `root/granted` (granted as `/data`,
/// read-only) holds a file and symlinks that point outside.
struct Tree {
    _dir: tempfile::TempDir,
    root: std::path::PathBuf,
}

const SECRET: &str = "TOP-SECRET-7f3c9";

fn tree() -> Tree {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("secret.txt"), SECRET).unwrap();
    let granted = root.join("granted");
    std::fs::create_dir(&granted).unwrap();
    std::fs::write(granted.join("inside.txt"), "inside").unwrap();
    std::os::unix::fs::symlink("../secret.txt", granted.join("link")).unwrap();
    std::os::unix::fs::symlink(root.join("secret.txt"), granted.join("abslink")).unwrap();
    std::os::unix::fs::symlink("..", granted.join("dirlink")).unwrap();
    std::fs::create_dir(root.join("ro")).unwrap();
    std::fs::write(root.join("ro/keep.txt"), "original").unwrap();
    std::fs::create_dir(root.join("rw")).unwrap();
    Tree { _dir: dir, root }
}

fn dirs_policy(t: &Tree) -> String {
    let r = t.root.display();
    policy(
        30,
        None,
        &format!(
            "dirs = [{{ host = \"{r}/granted\", guest = \"/data\", read-only = true }}, \
             {{ host = \"{r}/ro\", guest = \"/ro\", read-only = true }}, {{ host = \"{r}/rw\", guest = \"/rw\" }}]"
        ),
    )
}

#[tokio::test]
async fn files_outside_the_granted_directory_cannot_be_read() {
    let t = tree();
    let (_engine, mut p) = hostile_with(&dirs_policy(&t)).await;
    // The grant works: a file inside it is readable.
    let inside = contained(&mut p, "readOutside", json!({"path": "/data/inside.txt"})).await.unwrap();
    assert_eq!(inside["content"], "inside");
    let host_path = t.root.join("secret.txt").display().to_string();
    for path in [
        "../secret.txt",
        "/data/../secret.txt",
        "/data/../../secret.txt",
        host_path.as_str(),
        "/etc/passwd",
        "/data/link",
        "/data/link/",
        "/data/abslink",
        "/data/dirlink/secret.txt",
        "/data/dirlink/granted/inside.txt",
    ] {
        let s = refused(&mut p, "readOutside", json!({"path": path})).await;
        assert_eq!(s.code(), Code::Unknown, "{path}: {s:?}");
        assert!(s.message().contains(path), "the error names the path: {:?}", s.message());
        assert!(!s.message().contains(SECRET), "{path} leaked the secret");
    }
    // WASI resolves paths against the granted directories inside the guest, so
    // the host never sees these reads; the component's declared needs name the grant.
    let s = refused(&mut p, "readOutside", json!({"path": "/etc/passwd"})).await;
    let note = "missing grant: dir \"/\" for provider hostile (the component declares it)";
    assert!(s.message().contains(note), "{:?}", s.message());
    // Not on errors no grant explains: a function that does not exist.
    let s = refused(&mut p, "noSuchAttack", json!({})).await;
    assert_eq!(s.code(), Code::InvalidArgument, "{s:?}");
    assert!(!s.message().contains("missing grant"), "{:?}", s.message());
}

#[tokio::test]
async fn read_only_grants_cannot_be_written() {
    let t = tree();
    let (_engine, mut p) = hostile_with(&dirs_policy(&t)).await;
    // A read-write grant can be written: the failures below are the read-only flag's doing.
    contained(&mut p, "writeReadOnly", json!({"path": "/rw/new.txt"})).await.unwrap();
    assert_eq!(std::fs::read_to_string(t.root.join("rw/new.txt")).unwrap(), "written by hostile");
    let keep = contained(&mut p, "readOutside", json!({"path": "/ro/keep.txt"})).await.unwrap();
    assert_eq!(keep["content"], "original");
    for (path, op) in [
        ("/ro/new.txt", "write"),
        ("/ro/keep.txt", "write"),
        ("/ro/keep.txt", "append"),
        ("/ro/keep.txt", "remove"),
        ("/ro/keep.txt", "rename"),
        ("/ro/sub", "mkdir"),
        ("/data/inside.txt", "write"),
        ("/data/link", "write"),
    ] {
        let s = refused(&mut p, "writeReadOnly", json!({"path": path, "op": op})).await;
        assert_eq!(s.code(), Code::Unknown, "{op} {path}: {s:?}");
        assert!(s.message().contains(path), "the error names the path: {:?}", s.message());
    }
    assert_eq!(std::fs::read_to_string(t.root.join("ro/keep.txt")).unwrap(), "original");
    assert_eq!(std::fs::read_to_string(t.root.join("secret.txt")).unwrap(), SECRET);
    let ro: Vec<_> = std::fs::read_dir(t.root.join("ro")).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(ro, vec!["keep.txt"], "nothing was created in the read-only directory");
}

#[tokio::test]
async fn only_granted_environment_variables_are_visible() {
    let launch = Launch::new()
        .policy(&policy(30, None, "env = [\"HOSTILE_GRANTED\"]"), PolicyAt::EnvVar)
        .env("HOSTILE_SECRET", "do-not-leak")
        .env("HOSTILE_GRANTED", "fine");
    let (_engine, mut p) = hostile(launch).await;
    // The guest declares it needs HOSTILE_SECRET and HOME: declaring grants nothing.
    for name in ["HOSTILE_SECRET", "HOME", "PATH", "PULUMI_WASM_POLICY", "PULUMI_WASM_CACHE_DIR"] {
        let r = contained(&mut p, "env", json!({"name": name})).await.unwrap();
        assert_eq!(r["visible"], false, "{name} must not be visible: {r}");
        assert_eq!(r["names"], json!(["HOSTILE_GRANTED"]), "only the granted variable exists for the guest");
    }
    let r = contained(&mut p, "env", json!({"name": "HOSTILE_GRANTED"})).await.unwrap();
    assert_eq!(r["visible"], true);
    assert_eq!(r["value"], "fine");
}

#[tokio::test]
async fn http_to_an_ungranted_host_is_denied_naming_the_grant() {
    let granted = KvApi::start(None).await;
    let other = KvApi::start(None).await;
    let (_engine, mut p) = hostile_with(&policy(30, None, &format!("http = [\"{}\"]", granted.url()))).await;
    let ok = contained(&mut p, "http", json!({"url": format!("{}/hello", granted.url())})).await.unwrap();
    assert_eq!(ok["status"], 200.0);
    assert_eq!(ok["body"], "hello");
    let denied = [
        format!("{}/hello", other.url()),
        // The same port by another name, and another scheme: neither is the grant.
        format!("http://localhost:{}/hello", granted.addr.port()),
        format!("https://{}/hello", granted.addr),
    ];
    for url in &denied {
        let s = refused(&mut p, "http", json!({"url": url})).await;
        let origin = url.trim_end_matches("/hello");
        assert_status(&s, Code::FailedPrecondition, &["denied", "missing grant", origin]);
    }
    assert!(other.seen().is_empty(), "the ungranted server was never contacted: {:?}", other.requests());
    assert_eq!(granted.requests(), vec!["GET /hello"], "only the granted request reached the granted server");
}

#[tokio::test]
async fn a_wildcard_grant_does_not_open_loopback() {
    let server = KvApi::start(None).await;
    let port = server.addr.port();
    // Any host on that port, but no grant names the loopback address itself.
    let (_engine, mut p) = hostile_with(&policy(30, None, &format!("http = [\"http://*:{port}\"]"))).await;
    for host in ["127.0.0.1", "localhost"] {
        let url = format!("http://{host}:{port}/hello");
        let s = refused(&mut p, "http", json!({"url": url})).await;
        assert_status(&s, Code::FailedPrecondition, &["missing grant", "loopback", &format!("{host}:{port}")]);
    }
    assert!(server.seen().is_empty(), "the loopback server was never contacted: {:?}", server.requests());
}

#[tokio::test]
async fn the_guests_http_timeouts_are_applied() {
    let server = KvApi::start(None).await;
    let (_engine, mut p) = hostile_with(&policy(30, None, &format!("http = [\"{}\"]", server.url()))).await;
    let start = Instant::now();
    let s = refused(&mut p, "http", json!({"url": format!("{}/slow", server.url()), "firstByteMs": 500})).await;
    assert_status(&s, Code::Unavailable, &["timed out", "/slow"]);
    assert!(start.elapsed() < Duration::from_secs(8), "gave up after {:?}, not after 0.5 s", start.elapsed());
}

/// A server on loopback that keeps every connection open: it answers the
/// first read with `reply` (nothing when empty), then says no more.
pub(super) async fn stalling_server(reply: &'static [u8]) -> (u16, tokio::task::JoinHandle<()>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let held = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((mut socket, _)) = listener.accept().await {
            if !reply.is_empty() {
                let mut request = [0u8; 4096];
                let _ = socket.read(&mut request).await;
                let _ = socket.write_all(reply).await;
            }
            open.push(socket);
        }
    });
    (port, held)
}

/// Calls the hostile `http` attack on `url` under a grant for it, with the
/// timeout `option` at 500 ms; it must end well before the call's deadline.
async fn times_out_early(url: &str, option: &str) -> Status {
    let (_engine, mut p) = hostile_with(&policy(30, None, &format!("http = [\"{url}\"]"))).await;
    let start = Instant::now();
    let s = refused(&mut p, "http", json!({"url": format!("{url}/"), option: 500})).await;
    assert_ne!(s.code(), Code::DeadlineExceeded, "{s:?}");
    assert!(start.elapsed() < Duration::from_secs(8), "gave up after {:?}, not after 0.5 s", start.elapsed());
    s
}

/// A server that accepts connections and never says a word: a TLS
/// handshake with it must time out as connecting does.
#[tokio::test]
async fn a_silent_tls_server_times_out_as_a_connect() {
    let (port, held) = stalling_server(b"").await;
    let s = times_out_early(&format!("https://127.0.0.1:{port}"), "connectMs").await;
    assert_status(&s, Code::Unavailable, &["timed out"]);
    held.abort();
}

/// A server that sends its headers and part of the body, then stalls: the
/// guest's between-bytes timeout ends the read.
#[tokio::test]
async fn a_stalled_body_times_out_between_bytes() {
    let (port, held) = stalling_server(b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nabc").await;
    times_out_early(&format!("http://127.0.0.1:{port}"), "betweenBytesMs").await;
    held.abort();
}

#[tokio::test]
async fn a_redirect_to_an_ungranted_host_is_not_followed() {
    let granted = KvApi::start(None).await;
    let other = KvApi::start(None).await;
    let target = format!("{}/hello", other.url());
    granted.redirect("/away", &target);
    granted.redirect("/home", "/hello");
    let (_engine, mut p) = hostile_with(&policy(30, None, &format!("http = [\"{}\"]", granted.url()))).await;
    // Not following (the default): the 3xx itself is the answer.
    let r = contained(&mut p, "http", json!({"url": format!("{}/away", granted.url())})).await.unwrap();
    assert_eq!(r["status"], 302.0);
    assert_eq!(r["location"], target);
    // Following: the redirect is a new request, checked like any other.
    let s = refused(&mut p, "http", json!({"url": format!("{}/away", granted.url()), "follow": 5})).await;
    assert_status(&s, Code::FailedPrecondition, &["missing grant", &other.url(), "redirected from"]);
    assert!(other.seen().is_empty(), "the redirect target was never contacted: {:?}", other.requests());
    // A redirect within the grant is followed.
    let r = contained(&mut p, "http", json!({"url": format!("{}/home", granted.url()), "follow": 5})).await.unwrap();
    assert_eq!(r["status"], 200.0);
    assert_eq!(r["url"], format!("{}/hello", granted.url()));
}

#[tokio::test]
async fn sockets_cannot_be_opened() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = accepted.clone();
    let acceptor = tokio::spawn(async move {
        while listener.accept().await.is_ok() {
            count.fetch_add(1, Ordering::Relaxed);
        }
    });
    // Even with an HTTP grant for that very address: sockets are not HTTP.
    let (_engine, mut p) = hostile_with(&policy(30, None, &format!("http = [\"http://{addr}\"]"))).await;
    for (kind, target) in [("tcp", addr.as_str()), ("udp", addr.as_str()), ("dns", "localhost:80")] {
        let s = refused(&mut p, "socket", json!({"addr": target, "kind": kind})).await;
        assert_eq!(s.code(), Code::Unknown, "{kind}: {s:?}");
        assert!(s.message().contains(target), "{:?}", s.message());
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(accepted.load(Ordering::Relaxed), 0, "no connection reached the listener");
    acceptor.abort();
}

/// wasi:http keeps a request's authority and method in the host: long ones
/// are refused before they are kept (no grant is needed to make requests
/// that are never sent).
#[tokio::test]
async fn long_authorities_and_methods_are_refused() {
    let (_engine, mut p) = hostile_with(&policy(30, None, "")).await;
    let short = contained(&mut p, "setAuthority", json!({"length": 64, "method": "PROPFIND"})).await.unwrap();
    assert_eq!(short, json!({"authority": true, "method": true}));
    let long = json!({"length": 8 << 20, "method": "X".repeat(4096)});
    let long = contained(&mut p, "setAuthority", long).await.unwrap();
    assert_eq!(long, json!({"authority": false, "method": false}));
}

/// Headers too live in the host, up to 10,000 handles of them per
/// instance: one fields handle holds at most 32 KiB (wasmtime's default
/// is 128 KiB, 1.25 GiB over the handles).
#[tokio::test]
async fn long_headers_are_refused() {
    let (_engine, mut p) = hostile_with(&policy(30, None, "")).await;
    let taken = |length: usize| json!({ "length": length });
    assert_eq!(contained(&mut p, "setHeader", taken(8 << 10)).await.unwrap(), json!({"header": true}));
    // wasmtime ends the guest there: the call fails, the host serves on.
    let e = contained(&mut p, "setHeader", taken(40 << 10)).await.unwrap_err();
    assert_eq!(e.code(), Code::Internal, "{e:?}");
    assert!(e.message().contains("total size of fields exceeds limit"), "{}", e.message());
    assert_eq!(contained(&mut p, "setHeader", taken(16)).await.unwrap(), json!({"header": true}));
}
