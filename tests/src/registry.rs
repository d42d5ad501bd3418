//! A real OCI registry: Debian's `docker-registry` (distribution v2.8) on a
//! free loopback port, storing in a temporary directory, killed on drop;
//! open, behind basic auth (htpasswd), behind a bearer-token service
//! (`token.rs`) the way ghcr.io and Docker Hub are, or over HTTPS only.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::token::{self, TokenService};

pub struct Registry {
    /// `127.0.0.1:PORT`.
    pub address: String,
    /// The storage root (`docker/registry/v2/...` below it).
    pub storage: PathBuf,
    /// The token service, for a registry started with [`Auth::Token`].
    pub tokens: Option<TokenService>,
    /// For a registry started with [`Registry::start_tls`]: the PEM file of
    /// the CA that signed its certificate (for `0.0.0.0`, `127.0.0.1`, `localhost`).
    pub ca: Option<PathBuf>,
    child: Child,
    dir: tempfile::TempDir,
}

/// Who may use a registry.
pub enum Auth<'a> {
    /// Anyone, for anything.
    Open,
    /// Basic auth: these users (name, password), for anything.
    Basic(&'a [(&'a str, &'a str)]),
    /// Bearer tokens from a [`TokenService`]: anyone may pull (but not from
    /// `private/...`), these users may pull and push anything.
    Token(&'a [(&'a str, &'a str)]),
}

/// `$PULUMI_WASM_REGISTRY_BIN`, else `docker-registry` from `/usr/bin` or the `PATH`.
fn registry_bin() -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let candidates: Vec<PathBuf> = match std::env::var_os("PULUMI_WASM_REGISTRY_BIN") {
        Some(bin) => vec![PathBuf::from(bin)],
        None => std::iter::once(PathBuf::from("/usr/bin"))
            .chain(std::env::split_paths(&path))
            .map(|dir| dir.join("docker-registry"))
            .collect(),
    };
    // Missing is a failure, not a skip: these tests are the only check of the registry code.
    candidates.into_iter().find(|bin| bin.is_file()).unwrap_or_else(|| {
        panic!(
            "docker-registry is not installed: the OCI tests need a real registry; \
             install it with `apt-get install -y docker-registry` (.ci/run does), \
             or point PULUMI_WASM_REGISTRY_BIN at a distribution v2 `registry` binary"
        )
    })
}

impl Registry {
    /// Starts an open registry and waits until it answers.
    pub fn start() -> Registry {
        Registry::start_with(Auth::Open)
    }

    /// Starts a registry with `auth` and waits until `GET /v2/` answers.
    pub fn start_with(auth: Auth) -> Registry {
        Registry::launch(auth, false)
    }

    /// Starts an open registry that serves HTTPS only, with a certificate
    /// from a CA of its own ([`Registry::ca`]).
    pub fn start_tls() -> Registry {
        Registry::launch(Auth::Open, true)
    }

    fn launch(auth: Auth, tls: bool) -> Registry {
        let bin = registry_bin();
        let mut dir = tempfile::tempdir().expect("a temporary directory");
        let storage = dir.path().join("storage");
        let (tls_yaml, ca) = if tls { tls_files(dir.path()) } else { (String::new(), None) };
        let (auth_yaml, mut tokens) = match auth {
            Auth::Open => (String::new(), None),
            Auth::Basic(users) => {
                let file = dir.path().join("htpasswd");
                let lines: Vec<String> = users
                    .iter()
                    .map(|(user, password)| format!("{user}:{}", bcrypt::hash(password, 4).expect("bcrypt")))
                    .collect();
                std::fs::write(&file, lines.join("\n") + "\n").expect("writing htpasswd");
                (format!("auth:\n  htpasswd:\n    realm: tests\n    path: {}\n", file.display()), None)
            }
            Auth::Token(users) => {
                let service = TokenService::start(users);
                let bundle = dir.path().join("token-issuer.pem");
                std::fs::write(&bundle, service.certificate_pem()).expect("writing the token issuer's certificate");
                let yaml = format!(
                    "auth:\n  token:\n    realm: {}\n    service: {}\n    issuer: {}\n    rootcertbundle: {}\n",
                    service.realm(),
                    token::SERVICE,
                    token::ISSUER,
                    bundle.display()
                );
                (yaml, Some(service))
            }
        };
        // The port is free when asked; another process may take it before the
        // registry binds it, so a registry that exits at once is retried.
        for _ in 0..5 {
            let port = TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free port").port();
            let address = format!("127.0.0.1:{port}");
            let config = dir.path().join("config.yml");
            let yaml = format!(
                "version: 0.1\nlog:\n  level: warn\n  accesslog:\n    disabled: true\n\
                 storage:\n  filesystem:\n    rootdirectory: {}\n  delete:\n    enabled: true\n\
                 http:\n  addr: {address}\n{tls_yaml}{auth_yaml}",
                storage.display()
            );
            std::fs::write(&config, yaml).expect("writing the registry config");
            let log = std::fs::File::create(dir.path().join("registry.log")).expect("a log file");
            let child = Command::new(&bin)
                .arg("serve")
                .arg(&config)
                .env_clear()
                .stdin(Stdio::null())
                .stdout(log.try_clone().expect("the log file"))
                .stderr(log)
                .spawn()
                .unwrap_or_else(|e| panic!("starting {}: {e}", bin.display()));
            let (service, ca) = (tokens.take(), ca.clone());
            let mut registry = Registry { address, storage: storage.clone(), tokens: service, ca, child, dir };
            if registry.wait_ready() {
                return registry;
            }
            tokens = registry.tokens.take();
            dir = registry.stop();
        }
        panic!(
            "docker-registry did not start; its log:\n{}",
            std::fs::read_to_string(dir.path().join("registry.log")).unwrap_or_default()
        );
    }

    /// True once `GET /v2/` gets an HTTP answer; false if the process exits first.
    fn wait_ready(&mut self) -> bool {
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return false;
            }
            // Any answer will do: 401 behind auth, 400 (plain HTTP to HTTPS) with TLS.
            if self.http("GET", "/v2/", &[], b"").is_ok_and(|(status, _)| status != 0) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("docker-registry at {} did not answer GET /v2/ within 20 s; log:\n{}", self.address, self.log());
    }

    fn stop(mut self) -> tempfile::TempDir {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let dir = tempfile::tempdir().expect("a temporary directory");
        std::mem::replace(&mut self.dir, dir)
    }

    /// What the registry logged.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("registry.log")).unwrap_or_default()
    }

    /// Where the registry keeps the blob with this (hex) digest.
    pub fn blob_data(&self, digest: &str) -> PathBuf {
        self.storage.join(format!("docker/registry/v2/blobs/sha256/{}/{digest}/data", &digest[..2]))
    }

    /// One plain HTTP/1.1 request (`Connection: close`); the status and the body.
    pub fn http(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> std::io::Result<(u16, Vec<u8>)> {
        let mut stream = TcpStream::connect(&self.address)?;
        stream.set_read_timeout(Some(Duration::from_secs(10)))?;
        let mut request = format!("{method} {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n", self.address);
        for (name, value) in headers {
            request.push_str(&format!("{name}: {value}\r\n"));
        }
        request.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
        stream.write_all(request.as_bytes())?;
        stream.write_all(body)?;
        let mut response = Vec::new();
        stream.read_to_end(&mut response)?;
        let split = response.windows(4).position(|w| w == b"\r\n\r\n").map_or(response.len(), |p| p + 4);
        let head = String::from_utf8_lossy(&response[..split]);
        let status = head.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
        Ok((status, response[split..].to_vec()))
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A CA, and a server certificate it signed for the loopback names; the
/// registry's `tls:` configuration and the CA's PEM file.
fn tls_files(dir: &std::path::Path) -> (String, Option<PathBuf>) {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
    let ca_key = KeyPair::generate().expect("a CA key");
    let mut ca_params = CertificateParams::new(Vec::new()).expect("CA parameters");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca_cert = ca_params.self_signed(&ca_key).expect("the CA certificate");
    let key = KeyPair::generate().expect("a server key");
    let names = vec!["0.0.0.0".to_owned(), "127.0.0.1".to_owned(), "localhost".to_owned()];
    let params = CertificateParams::new(names).expect("server parameters");
    let cert = params.signed_by(&key, &Issuer::new(ca_params, ca_key)).expect("the server certificate");
    let (ca, cert_file, key_file) = (dir.join("ca.pem"), dir.join("server.pem"), dir.join("server-key.pem"));
    std::fs::write(&ca, ca_cert.pem()).expect("writing the CA");
    std::fs::write(&cert_file, cert.pem()).expect("writing the certificate");
    std::fs::write(&key_file, key.serialize_pem()).expect("writing the key");
    let yaml = format!("  tls:\n    certificate: {}\n    key: {}\n", cert_file.display(), key_file.display());
    (yaml, Some(ca))
}

/// Writes a Docker config directory (what `DOCKER_CONFIG` names) whose
/// `config.json` is `config`; returns the directory.
pub fn docker_config(dir: &std::path::Path, config: serde_json::Value) -> String {
    std::fs::create_dir_all(dir).expect("the Docker config directory");
    std::fs::write(dir.join("config.json"), config.to_string()).expect("writing config.json");
    dir.to_string_lossy().into_owned()
}

/// An `auths` entry's `auth`, as `docker login` writes it.
pub fn basic(user: &str, password: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"))
}

/// `wasm` with a custom section of `extra` bytes appended: the same component, another digest.
pub fn padded_component(wasm: &[u8], extra: usize) -> Vec<u8> {
    let name = b"pulumi-wasm-test-padding";
    let payload_len = 1 + name.len() + extra;
    let mut out = wasm.to_vec();
    out.push(0); // custom section
    let mut n = payload_len as u32;
    loop {
        let byte = (n & 0x7f) as u8;
        n >>= 7;
        out.push(if n == 0 { byte } else { byte | 0x80 });
        if n == 0 {
            break;
        }
    }
    out.push(name.len() as u8);
    out.extend_from_slice(name);
    out.resize(out.len() + extra, 0xa5);
    out
}
