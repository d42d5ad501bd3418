//! What the user grants each provider. Grants only ever come from the user
//! (policy file, flags); a component can declare needs, never grant them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    #[error("reading policy {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("policy {path}: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("invalid grant {0:?}: {1}")]
    Grant(String, String),
}

/// The policy file: defaults for every provider plus per-provider sections.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Policy {
    #[serde(default)]
    pub defaults: Grants,
    #[serde(default)]
    pub providers: BTreeMap<String, Grants>,
}

/// Grants and limits for one provider. Serializable: a parameterized
/// provider's value pins the grants it was added with.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Grants {
    /// Outbound HTTP allow-list: `scheme://host[:port]`, host may be `*.suffix`, port `*`.
    /// Only public addresses, unless the grant names an IP address or
    /// `localhost` itself: a granted name's DNS is not the user's to trust.
    #[serde(default)]
    pub http: Vec<String>,
    /// Like `http`, and the names may also resolve to private, loopback and
    /// link-local addresses (an internal service reached by name).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub http_private: Vec<String>,
    /// Host environment variables the provider may read.
    #[serde(default)]
    pub env: Vec<String>,
    #[serde(default)]
    pub dirs: Vec<DirGrant>,
    /// Packages whose resources, functions and reads a component may ask
    /// the engine for from `construct` and `call` (`*`: any but the engine's
    /// own `pulumi`, which is granted only by name). Its own
    /// package needs no grant. Through the engine a component acts with the
    /// user's authority (another provider's credentials, a local command),
    /// so this is a grant like any other.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub packages: Vec<String>,
    /// Linear memory of one instance, in MiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_mb: Option<usize>,
    /// Linear memory all of the provider's instances may hold at once, in
    /// MiB (never less than `memory-mb`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_total_mb: Option<usize>,
    /// In a `[providers.<name>]` section only: the section is the grant of
    /// the component with these bytes (`sha256:<hex>`, as `pulumi-wasm
    /// info` prints it), not of any component that calls itself `<name>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_s: Option<u64>,
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct DirGrant {
    pub host: PathBuf,
    pub guest: String,
    #[serde(default)]
    pub read_only: bool,
}

/// The grant flags, as the CLI and `pulumi package add wasm` take them.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct GrantFlags {
    /// Grant outbound HTTP to `scheme://host[:port]` (repeatable).
    #[arg(long, value_name = "URL")]
    pub allow_http: Vec<String>,
    /// As --allow-http, and the name may resolve to a private or loopback address.
    #[arg(long, value_name = "URL")]
    pub allow_http_private: Vec<String>,
    /// Grant reading a host environment variable (repeatable).
    #[arg(long, value_name = "NAME")]
    pub allow_env: Vec<String>,
    /// Grant a directory as `HOST:GUEST[:ro]` (repeatable).
    #[arg(long, value_name = "HOST:GUEST[:ro]")]
    pub allow_dir: Vec<String>,
    /// Grant registering, invoking and reading another package's resources
    /// through the engine, from construct and call (repeatable; `*`: any but `pulumi`).
    #[arg(long, value_name = "PACKAGE")]
    pub allow_package: Vec<String>,
}

impl GrantFlags {
    /// The flags as grants, validated.
    pub fn grants(&self) -> Result<Grants, PolicyError> {
        let grants = Grants {
            http: self.allow_http.clone(),
            http_private: self.allow_http_private.clone(),
            env: self.allow_env.clone(),
            dirs: self.allow_dir.iter().map(|d| Grants::parse_dir_flag(d).map(absolute)).collect::<Result<_, _>>()?,
            packages: self.allow_package.clone(),
            digest: None,
            memory_mb: None,
            memory_total_mb: None,
            timeout_s: None,
        };
        grants.validate()?;
        Ok(grants)
    }
}

/// A flag's directory, relative to where the flag was given: a grant
/// pinned in a parameterized package's value must mean the same directory
/// wherever the value is later used.
fn absolute(mut d: DirGrant) -> DirGrant {
    if let Ok(abs) = std::path::absolute(&d.host) {
        d.host = abs;
    }
    d
}

impl Policy {
    pub fn load(path: &Path) -> Result<Policy, PolicyError> {
        let text = std::fs::read_to_string(path).map_err(|source| PolicyError::Read { path: path.into(), source })?;
        let policy: Policy =
            toml::from_str(&text).map_err(|e| PolicyError::Parse { path: path.into(), message: e.to_string() })?;
        // Resolve relative directories against the policy file, not the cwd.
        let base = path.parent().unwrap_or(Path::new("."));
        let mut policy = policy;
        for g in std::iter::once(&mut policy.defaults).chain(policy.providers.values_mut()) {
            for d in &mut g.dirs {
                if d.host.is_relative() {
                    d.host = base.join(&d.host);
                }
            }
            g.validate()?;
        }
        if policy.defaults.digest.is_some() {
            let why = "a digest names one component: it belongs in a [providers.<name>] section";
            return Err(PolicyError::Parse { path: path.into(), message: why.into() });
        }
        Ok(policy)
    }

    /// The grants of every section that could apply to the component with
    /// `digest`, whatever name it gives itself: the defaults alone (a name
    /// the policy does not have) and each section not pinned to another
    /// component. The limits a component runs under before it has named
    /// itself are the largest of these, since by naming itself it could
    /// have any of them; it gets none of their capabilities then.
    pub fn for_any_name(&self, digest: &str) -> Vec<Grants> {
        let applies = |g: &&Grants| g.digest.as_deref().is_none_or(|d| d.trim_start_matches("sha256:") == digest);
        let sections = self.providers.values().filter(applies).map(|own| {
            let mut g = self.defaults.clone();
            g.merge(own.clone());
            g
        });
        std::iter::once(self.defaults.clone()).chain(sections).collect()
    }

    /// The grants for `provider`, the component with lower-case hex SHA-256
    /// `digest`: the defaults plus its own section, unless that section pins
    /// another component's digest.
    pub fn for_provider(&self, provider: &str, digest: &str) -> Grants {
        let mut g = self.defaults.clone();
        if let Some(own) = self.providers.get(provider) {
            match own.digest.as_deref().map(|d| d.trim_start_matches("sha256:")) {
                Some(pinned) if pinned != digest => tracing::warn!(
                    "policy section [providers.{provider}] is for sha256:{pinned}, not this component \
                     (sha256:{digest}), so it is not applied"
                ),
                _ => g.merge(own.clone()),
            }
        }
        g.digest = None;
        g
    }
}

impl Grants {
    /// Its directories made absolute (relative to the working directory),
    /// so the grants mean the same wherever they are written down.
    pub fn make_dirs_absolute(&mut self) {
        self.dirs = std::mem::take(&mut self.dirs).into_iter().map(absolute).collect();
    }

    /// Adds `other`'s grants; its limits, when set, win.
    pub fn merge(&mut self, other: Grants) {
        self.http.extend(other.http);
        self.http_private.extend(other.http_private);
        self.env.extend(other.env);
        self.dirs.extend(other.dirs);
        self.packages.extend(other.packages);
        self.digest = other.digest.or(self.digest.take());
        self.memory_mb = other.memory_mb.or(self.memory_mb);
        self.memory_total_mb = other.memory_total_mb.or(self.memory_total_mb);
        self.timeout_s = other.timeout_s.or(self.timeout_s);
    }

    pub fn validate(&self) -> Result<(), PolicyError> {
        for h in self.http.iter().chain(&self.http_private) {
            HttpGrant::parse(h)?;
        }
        for d in &self.dirs {
            if !d.guest.starts_with('/') {
                return Err(PolicyError::Grant(d.guest.clone(), "guest paths are absolute".into()));
            }
        }
        if let Some(d) = self.digest.as_ref().filter(|d| crate::sha256::hex_of(d).is_none()) {
            return Err(PolicyError::Grant(d.clone(), "a digest is sha256: and 64 lower-case hex digits".into()));
        }
        // A package name as the package metaschema has it. Tokens are
        // compared as written, as the engine routes them: `aws` is not `AWS`.
        for p in &self.packages {
            let name = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
            if p != "*" && !(p.starts_with(|c: char| c.is_ascii_alphabetic()) && p.chars().all(name)) {
                return Err(PolicyError::Grant(p.clone(), "a package is a name like `random` (or `*`)".into()));
            }
        }
        Ok(())
    }

    /// Whether these grants give at least everything `other` gives, entry
    /// by entry as written (no reasoning about wildcards or overlapping
    /// grants: an entry not written here is not covered).
    pub fn covers(&self, other: &Grants) -> bool {
        let http = |h: &String| self.http.contains(h) || self.http_private.contains(h);
        let dir = |d: &DirGrant| {
            self.dirs.iter().any(|m| m.host == d.host && m.guest == d.guest && (d.read_only || !m.read_only))
        };
        let at_most = |theirs: Option<u64>, mine: Option<u64>| theirs.is_none_or(|t| mine.is_some_and(|m| m >= t));
        other.http.iter().all(http)
            && other.http_private.iter().all(|h| self.http_private.contains(h))
            && other.env.iter().all(|e| self.env.contains(e))
            && other.dirs.iter().all(dir)
            && other.packages.iter().all(|p| self.packages.contains(p))
            && at_most(other.memory_mb.map(|m| m as u64), self.memory_mb.map(|m| m as u64))
            && at_most(other.memory_total_mb.map(|m| m as u64), self.memory_total_mb.map(|m| m as u64))
            && at_most(other.timeout_s, self.timeout_s)
    }

    /// Each grant, as a user reads it: `http "https://api.example.com"`.
    /// Quoted with escapes: grants may come from someone else's SDK, and a
    /// control character could hide one on the user's terminal.
    pub fn describe(&self) -> Vec<String> {
        let quoted = |kind: &str, list: &[String]| list.iter().map(|v| format!("{kind} {v:?}")).collect::<Vec<_>>();
        let mut out = quoted("http", &self.http);
        out.extend(quoted("http-private", &self.http_private));
        out.extend(quoted("env", &self.env));
        out.extend(self.dirs.iter().map(|d| {
            let mode = if d.read_only { "read-only" } else { "read-write" };
            format!("dir {:?} as {:?} ({mode})", d.host, d.guest)
        }));
        out.extend(quoted("package", &self.packages));
        out.extend(self.memory_mb.map(|m| format!("memory-mb {m}")));
        out.extend(self.memory_total_mb.map(|m| format!("memory-total-mb {m}")));
        out.extend(self.timeout_s.map(|t| format!("timeout-s {t}")));
        out
    }

    pub fn http_grants(&self) -> Vec<HttpGrant> {
        let private = |h: &String| HttpGrant::parse(h).ok().map(|g| HttpGrant { private: true, ..g });
        self.http
            .iter()
            .filter_map(|h| HttpGrant::parse(h).ok())
            .chain(self.http_private.iter().filter_map(private))
            .collect()
    }

    /// `HOST:GUEST[:ro]`, as given to `--allow-dir`.
    /// Split from the right, so a Windows host path keeps its drive
    /// (`C:\data:/data:ro`).
    pub fn parse_dir_flag(flag: &str) -> Result<DirGrant, PolicyError> {
        let (rest, mode) = match flag.rsplit_once(':') {
            Some((rest, m @ ("ro" | "rw"))) => (rest, Some(m)),
            _ => (flag, None),
        };
        let read_only = mode == Some("ro");
        let bad = || PolicyError::Grant(flag.into(), "expected HOST:GUEST[:ro]".into());
        match rest.rsplit_once(':') {
            // A lone letter is a drive (`C:/data`), not a host path.
            Some((host, guest))
                if guest.starts_with('/')
                    && !host.is_empty()
                    && !(host.len() == 1 && host.as_bytes()[0].is_ascii_alphabetic()) =>
            {
                Ok(DirGrant { host: PathBuf::from(host), guest: guest.to_string(), read_only })
            }
            // A bare host path is seen at the same path, which must be absolute Unix-style.
            _ if rest.starts_with('/') && !rest.contains(':') => {
                Ok(DirGrant { host: PathBuf::from(rest), guest: rest.to_string(), read_only })
            }
            _ => Err(bad()),
        }
    }
}

/// One entry of the HTTP allow-list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpGrant {
    /// `None` allows both http and https.
    pub scheme: Option<String>,
    /// Lower-case host, or `*.suffix` / `*`.
    pub host: String,
    /// `None` = the scheme's default port; `Some(0)` = any port.
    pub port: Option<u16>,
    /// Granted in `http-private`: names may resolve to private addresses.
    pub private: bool,
}

impl HttpGrant {
    pub fn parse(s: &str) -> Result<HttpGrant, PolicyError> {
        let bad = |why: &str| PolicyError::Grant(s.into(), why.into());
        let (scheme, rest) = match s.split_once("://") {
            Some((scheme @ ("http" | "https"), rest)) => (Some(scheme.to_owned()), rest),
            Some(_) => return Err(bad("scheme must be http or https")),
            None => (None, s),
        };
        let rest = rest.trim_end_matches('/');
        if rest.contains('/') || rest.contains('@') || rest.is_empty() {
            return Err(bad("expected scheme://host[:port] with no path or user"));
        }
        let (host, port) = match rest.rsplit_once(':') {
            Some((h, "*")) if !h.ends_with(']') || rest.starts_with('[') => (h, Some(0)),
            Some((h, p)) if !p.contains(']') => (h, Some(p.parse::<u16>().map_err(|_| bad("bad port"))?)),
            _ => (rest, None),
        };
        let host = host.trim_start_matches('[').trim_end_matches(']').to_ascii_lowercase();
        if host.is_empty()
            || (host.contains('*') && !(host == "*" || host.starts_with("*.") && !host[2..].contains('*')))
        {
            return Err(bad("a wildcard may only be a leading `*.`"));
        }
        Ok(HttpGrant { scheme, host, port, private: false })
    }

    /// Whether this grant allows a request to `scheme://host:port`.
    pub fn allows(&self, scheme: &str, host: &str, port: u16) -> bool {
        if self.scheme.as_deref().is_some_and(|s| s != scheme) {
            return false;
        }
        let default_port = if scheme == "https" { 443 } else { 80 };
        let port_ok = match self.port {
            Some(0) => true,
            Some(p) => p == port,
            None => port == default_port,
        };
        let host = host.trim_start_matches('[').trim_end_matches(']').to_ascii_lowercase();
        let host_ok = match self.host.strip_prefix("*.") {
            _ if self.host == "*" => true,
            Some(suffix) => host.ends_with(&format!(".{suffix}")),
            None => host == self.host,
        };
        port_ok && host_ok
    }

    /// Whether this grant (which allows `host`) lets it reach private,
    /// loopback and link-local addresses: an `http-private` grant, or one
    /// that names that IP address or `localhost` itself. A name granted in
    /// `http` reaches public addresses only, whatever its DNS says: whoever
    /// controls that DNS (maybe the provider's author) could otherwise point
    /// it at the user's network or a cloud's metadata service.
    pub fn reaches_private(&self, host: &str) -> bool {
        let host = host.trim_start_matches('[').trim_end_matches(']').to_ascii_lowercase();
        let names_address = host == "localhost" || host.parse::<std::net::IpAddr>().is_ok();
        self.private || (names_address && self.host == host)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_grants_match_scheme_host_and_port() {
        let g = HttpGrant::parse("https://*.example.com").unwrap();
        assert!(g.allows("https", "api.example.com", 443));
        assert!(!g.allows("https", "example.com", 443), "the wildcard needs a subdomain");
        assert!(!g.allows("https", "evil-example.com", 443));
        assert!(!g.allows("http", "api.example.com", 80));
        assert!(!g.allows("https", "api.example.com", 8443));
        let any = HttpGrant::parse("http://127.0.0.1:*").unwrap();
        assert!(any.allows("http", "127.0.0.1", 41234) && any.reaches_private("127.0.0.1"));
        let both = HttpGrant::parse("localhost:8080").unwrap();
        assert!(both.allows("http", "LOCALHOST", 8080) && both.allows("https", "localhost", 8080));
        for bad in ["ftp://x", "https://a/b", "https://a*b.com", "https://x:99999", "https://u@x"] {
            assert!(HttpGrant::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn only_addresses_localhost_and_http_private_grants_reach_private_addresses() {
        let grants = |http: &[&str], private: &[&str]| Grants {
            http: http.iter().map(|s| s.to_string()).collect(),
            http_private: private.iter().map(|s| s.to_string()).collect(),
            ..Grants::default()
        };
        let reaches = |g: &Grants, host: &str, port: u16| {
            let matching: Vec<HttpGrant> =
                g.http_grants().into_iter().filter(|h| h.allows("http", host, port)).collect();
            assert!(!matching.is_empty(), "{host} is granted");
            matching.iter().any(|h| h.reaches_private(host))
        };
        let g = grants(
            &["http://api.vendor.example", "http://10.0.0.5:8080", "http://[::1]:81", "http://localhost:82"],
            &[],
        );
        assert!(!reaches(&g, "api.vendor.example", 80), "a granted name reaches public addresses only");
        assert!(reaches(&g, "10.0.0.5", 8080) && reaches(&g, "::1", 81) && reaches(&g, "LOCALHOST", 82));
        let g = grants(&["http://*.corp.example"], &["http://kv.corp.example"]);
        assert!(!reaches(&g, "other.corp.example", 80), "a wildcard never does");
        assert!(reaches(&g, "kv.corp.example", 80), "http-private: an internal service by name");
        // Grants carried in a Parameterize value keep their meaning, and old values still parse.
        let json = serde_json::to_string(&g).unwrap();
        assert_eq!(serde_json::from_str::<Grants>(&json).unwrap(), g);
        let old: Grants = serde_json::from_str(r#"{"http":["http://a"],"env":[],"dirs":[]}"#).unwrap();
        assert!(old.http_private.is_empty());
        assert!(grants(&[], &["ftp://x"]).validate().is_err());
    }

    #[test]
    fn policy_merges_defaults_and_resolves_relative_dirs() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("policy.toml");
        std::fs::write(
            &path,
            r#"
            [defaults]
            memory-mb = 256
            env = ["HOME_ONLY"]
            [providers.kv]
            http = ["http://127.0.0.1:8080"]
            dirs = [{ host = "data", guest = "/data", read-only = true }]
            timeout-s = 5
            memory-total-mb = 1024
            "#,
        )
        .unwrap();
        let p = Policy::load(&path).unwrap();
        let kv = p.for_provider("kv", "ab");
        assert_eq!(kv.memory_mb, Some(256));
        assert_eq!(kv.timeout_s, Some(5));
        assert_eq!((kv.memory_total_mb, p.for_provider("other", "ab").memory_total_mb), (Some(1024), None));
        assert!(kv.describe().contains(&"memory-total-mb 1024".to_owned()), "{:?}", kv.describe());
        assert_eq!(kv.env, vec!["HOME_ONLY"]);
        assert_eq!(kv.dirs[0].host, dir.path().join("data"));
        assert!(p.for_provider("other", "ab").http.is_empty());
        std::fs::write(&path, "[providers.kv]\nhttp = [\"ftp://x\"]\n").unwrap();
        assert!(Policy::load(&path).is_err());
        std::fs::write(&path, "[providers.kv]\nnetwork = true\n").unwrap();
        assert!(Policy::load(&path).is_err(), "unknown keys are errors, not silently ignored");
    }

    #[test]
    fn a_section_pinned_by_digest_is_that_component_s_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("policy.toml");
        let mine = "ab".repeat(32);
        let section = |digest: &str| format!("[providers.kv]\ndigest = \"{digest}\"\nenv = [\"KV_TOKEN\"]\n");
        std::fs::write(&path, section(&format!("sha256:{mine}"))).unwrap();
        let p = Policy::load(&path).unwrap();
        assert_eq!(p.for_provider("kv", &mine).env, ["KV_TOKEN"]);
        assert_eq!(p.for_provider("kv", &mine).digest, None, "the digest is no grant");
        assert!(p.for_provider("kv", &"cd".repeat(32)).env.is_empty(), "another component calling itself kv");
        for bad in [mine.clone(), format!("sha256:{}", "AB".repeat(32)), "sha256:abc".into()] {
            std::fs::write(&path, section(&bad)).unwrap();
            assert!(Policy::load(&path).is_err(), "{bad}");
        }
        std::fs::write(&path, format!("[defaults]\ndigest = \"sha256:{mine}\"\n")).unwrap();
        assert!(Policy::load(&path).unwrap_err().to_string().contains("[providers.<name>] section"));
    }

    #[test]
    fn dir_flags() {
        let d = Grants::parse_dir_flag("/srv/data:/data:ro").unwrap();
        assert_eq!(d, DirGrant { host: "/srv/data".into(), guest: "/data".into(), read_only: true });
        assert!(!Grants::parse_dir_flag("/tmp:/t").unwrap().read_only);
        assert!(Grants::parse_dir_flag("a:b:c:d").is_err());
        // A Windows host path keeps its drive.
        let d = Grants::parse_dir_flag(r"C:\data:/data:ro").unwrap();
        assert_eq!(d, DirGrant { host: r"C:\data".into(), guest: "/data".into(), read_only: true });
        assert_eq!(Grants::parse_dir_flag(r"C:\data:/data").unwrap().host, PathBuf::from(r"C:\data"));
        assert!(Grants::parse_dir_flag(r"C:\data").is_err(), "no guest path to see it at");
        assert!(Grants::parse_dir_flag("C:/data").is_err(), "a drive, not a host path `C`");
        assert_eq!(Grants::parse_dir_flag("C:/data:/data").unwrap().host, PathBuf::from("C:/data"));
        assert_eq!(Grants::parse_dir_flag("/srv/data:rw").unwrap().guest, "/srv/data");
        let flags = GrantFlags { allow_dir: vec!["data:/data".into()], ..GrantFlags::default() };
        assert_eq!(flags.grants().unwrap().dirs[0].host, std::env::current_dir().unwrap().join("data"));
    }

    #[test]
    fn covers_is_entry_by_entry() {
        let flags = |http: &[&str], env: &[&str], dirs: &[&str]| {
            GrantFlags {
                allow_http: http.iter().map(|s| s.to_string()).collect(),
                allow_env: env.iter().map(|s| s.to_string()).collect(),
                allow_dir: dirs.iter().map(|s| s.to_string()).collect(),
                ..GrantFlags::default()
            }
            .grants()
            .unwrap()
        };
        let mine = flags(&["https://api.example.com", "https://*.example.org"], &["TOKEN"], &["/srv:/srv"]);
        assert!(mine.covers(&Grants::default()));
        assert!(mine.covers(&flags(&["https://api.example.com"], &[], &["/srv:/srv:ro"])));
        assert!(mine.covers(&mine));
        // Not written here, even if a wildcard here would match it.
        assert!(!mine.covers(&flags(&["https://a.example.org"], &[], &[])));
        assert!(!mine.covers(&flags(&[], &["HOME"], &[])));
        assert!(!mine.covers(&flags(&[], &[], &["/srv:/data"])));
        let ro = flags(&[], &[], &["/srv:/srv:ro"]);
        assert!(!ro.covers(&flags(&[], &[], &["/srv:/srv"])), "read-only does not cover read-write");
        // An http-private grant covers the same entry in http, not the reverse.
        let private = Grants { http_private: vec!["https://api.example.com".into()], ..Grants::default() };
        assert!(private.covers(&flags(&["https://api.example.com"], &[], &[])));
        assert!(!flags(&["https://api.example.com"], &[], &[]).covers(&private));
        // Limits: a value's limit needs one at least as large here.
        let limits = |memory_mb, timeout_s| Grants { memory_mb, timeout_s, ..Grants::default() };
        assert!(!Grants::default().covers(&limits(Some(64), None)));
        assert!(limits(Some(128), Some(60)).covers(&limits(Some(64), Some(60))));
        assert!(!limits(Some(128), Some(60)).covers(&limits(Some(256), None)));
        let total = |mb| Grants { memory_total_mb: mb, ..Grants::default() };
        assert!(total(Some(2048)).covers(&total(Some(1024))) && total(None).covers(&total(None)));
        assert!(!total(Some(1024)).covers(&total(Some(2048))) && !total(None).covers(&total(Some(1))));
        // Packages, as written.
        let packages = |p: &[&str]| Grants { packages: p.iter().map(|s| s.to_string()).collect(), ..Grants::default() };
        assert!(packages(&["random", "aws"]).covers(&packages(&["aws"])));
        assert!(!packages(&["random"]).covers(&packages(&["aws"])));
        assert!(!packages(&["*"]).covers(&packages(&["aws"])), "entry by entry");
        packages(&["random", "*", "my_pkg-2"]).validate().unwrap();
        for bad in ["", "aws:s3", "pulumi:providers:aws", "a b", "1aws", "-x", "**"] {
            assert!(packages(&[bad]).validate().is_err(), "{bad:?}");
        }
        assert_eq!(
            mine.describe(),
            [
                "http \"https://api.example.com\"",
                "http \"https://*.example.org\"",
                "env \"TOKEN\"",
                "dir \"/srv\" as \"/srv\" (read-write)",
            ]
        );
        let sneaky = Grants { env: vec!["A\u{1b}[2K\rB".into()], ..Grants::default() };
        assert_eq!(sneaky.describe(), ["env \"A\\u{1b}[2K\\rB\""]);
    }
}
