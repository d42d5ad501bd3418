//! A registry token service, the other half of the bearer-token flow that
//! ghcr.io, Docker Hub and most hosted registries use: a client the registry
//! turns away (401 with `WWW-Authenticate: Bearer realm=...`) asks this
//! service for a token for a scope (`repository:acme/x:pull,push`), with
//! basic auth or none, and retries with the token. The registry checks the
//! token's ES256 signature against the certificate it was configured with
//! (`rootcertbundle`), and its issuer, audience, expiry and granted actions.
//!
//! Policy: anyone may pull, except from repositories under `private/`; the
//! given users may pull and push anything. Unknown users or wrong passwords
//! get 401.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use ring::rand::SystemRandom;
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair};
use serde_json::json;

/// The registry's `service` (the token's audience) and the token's issuer.
pub const SERVICE: &str = "pulumi-wasm-tests";
pub const ISSUER: &str = "pulumi-wasm-tests-issuer";

pub struct TokenService {
    address: String,
    certificate_pem: String,
    /// One line per token request answered: `user scope -> granted actions` or `user refused`.
    log: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
}

struct Signer {
    key: EcdsaKeyPair,
    certificate_der: Vec<u8>,
    users: Vec<(String, String)>,
    rng: SystemRandom,
}

impl TokenService {
    /// Serves on a free loopback port until dropped.
    pub fn start(users: &[(&str, &str)]) -> TokenService {
        let issued = rcgen::generate_simple_self_signed(vec!["token-issuer".to_owned()]).expect("a certificate");
        let rng = SystemRandom::new();
        let key = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &issued.signing_key.serialize_der(), &rng)
            .expect("rcgen's P-256 key");
        let signer = Signer {
            key,
            certificate_der: issued.cert.der().to_vec(),
            users: users.iter().map(|(u, p)| (u.to_string(), p.to_string())).collect(),
            rng,
        };
        let listener = TcpListener::bind("127.0.0.1:0").expect("a free port");
        let address = listener.local_addr().expect("its address").to_string();
        let (log, stop) = (Arc::new(Mutex::new(Vec::new())), Arc::new(AtomicBool::new(false)));
        let (thread_log, thread_stop) = (log.clone(), stop.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if thread_stop.load(Ordering::Relaxed) {
                    break;
                }
                if let Ok(stream) = stream {
                    let _ = signer.answer(stream, &thread_log);
                }
            }
        });
        TokenService { address, certificate_pem: issued.cert.pem(), log, stop }
    }

    /// The `realm` the registry sends clients to.
    pub fn realm(&self) -> String {
        format!("http://{}/token", self.address)
    }

    /// The certificate whose key signs the tokens (PEM).
    pub fn certificate_pem(&self) -> &str {
        &self.certificate_pem
    }

    /// What the service answered so far, one line per request.
    pub fn log(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }
}

impl Drop for TokenService {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = TcpStream::connect(&self.address); // wakes the accept loop
    }
}

impl Signer {
    /// One HTTP/1.1 request, answered and closed.
    fn answer(&self, stream: TcpStream, log: &Mutex<Vec<String>>) -> std::io::Result<()> {
        let mut reader = BufReader::new(stream.try_clone()?);
        let mut request_line = String::new();
        reader.read_line(&mut request_line)?;
        let mut authorization = None;
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line)? == 0 || line.trim().is_empty() {
                break;
            }
            if let Some((name, value)) = line.split_once(':')
                && name.eq_ignore_ascii_case("authorization")
            {
                authorization = Some(value.trim().to_owned());
            }
        }
        let target = request_line.split_whitespace().nth(1).unwrap_or("");
        let query = target.split_once('?').map_or("", |(_, q)| q);
        let scopes: Vec<String> = url::form_urlencoded::parse(query.as_bytes())
            .filter(|(k, _)| k == "scope")
            .map(|(_, v)| v.into())
            .collect();

        let user = match authorization.as_deref().map(|a| self.user(a)) {
            None => "anonymous".to_owned(),
            Some(Some(user)) => user,
            Some(None) => {
                log.lock().unwrap().push(format!("{} refused", authorization.unwrap_or_default()));
                return respond(stream, "401 Unauthorized", r#"{"details":"bad credentials"}"#);
            }
        };
        let mut access = Vec::new();
        for scope in &scopes {
            // `repository:<name>:<action,action>`; the name may hold `/` but not `:`.
            let mut parts = scope.splitn(3, ':');
            let (Some(kind), Some(name), Some(actions)) = (parts.next(), parts.next(), parts.next()) else {
                continue;
            };
            let public = !name.starts_with("private/");
            let granted: Vec<&str> =
                actions.split(',').filter(|a| user != "anonymous" || (*a == "pull" && public)).collect();
            log.lock().unwrap().push(format!("{user} {scope} -> {}", granted.join(",")));
            access.push(json!({ "type": kind, "name": name, "actions": granted }));
        }
        let token = self.token(&user, access);
        let body = json!({ "token": token, "access_token": token, "expires_in": 300 }).to_string();
        respond(stream, "200 OK", &body)
    }

    /// The user a `Basic` authorization names, if the password is right.
    fn user(&self, authorization: &str) -> Option<String> {
        let encoded = authorization.strip_prefix("Basic ")?;
        let decoded = String::from_utf8(STANDARD.decode(encoded).ok()?).ok()?;
        let (user, password) = decoded.split_once(':')?;
        self.users.iter().any(|(u, p)| u == user && p == password).then(|| user.to_owned())
    }

    /// A JWT the registry accepts: ES256, the signing certificate in `x5c`.
    fn token(&self, user: &str, access: Vec<serde_json::Value>) -> String {
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs();
        let header = json!({ "typ": "JWT", "alg": "ES256", "x5c": [STANDARD.encode(&self.certificate_der)] });
        let claims = json!({
            "iss": ISSUER, "sub": user, "aud": SERVICE,
            "exp": now + 300, "nbf": now - 60, "iat": now - 60, "jti": format!("{now}-{}", access.len()),
            "access": access,
        });
        let signed =
            format!("{}.{}", URL_SAFE_NO_PAD.encode(header.to_string()), URL_SAFE_NO_PAD.encode(claims.to_string()));
        let signature = self.key.sign(&self.rng, signed.as_bytes()).expect("signing");
        format!("{signed}.{}", URL_SAFE_NO_PAD.encode(signature.as_ref()))
    }
}

fn respond(mut stream: TcpStream, status: &str, body: &str) -> std::io::Result<()> {
    write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}
