//! `[oci://]registry[:port]/repository[:tag][@sha256:<hex>]`.

use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;

use super::OciError;

/// Where an artifact lives in a registry. The registry is always explicit
/// (no Docker Hub default): a component reference must say where it goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reference {
    /// `host[:port]`, `[v6-address][:port]` for IPv6.
    pub registry: String,
    /// `name[/name...]`, lower case.
    pub repository: String,
    pub tag: Option<String>,
    /// Lower-case hex SHA-256 of the manifest, when pinned with `@sha256:`.
    pub digest: Option<String>,
}

pub const SCHEME: &str = "oci://";

impl Reference {
    /// The same artifact pinned to a manifest digest: `registry/repository@sha256:<hex>`.
    pub fn pinned(&self, manifest_digest: &str) -> Reference {
        Reference { tag: None, digest: Some(manifest_digest.to_owned()), ..self.clone() }
    }

    /// The registry's host without the port or IPv6 brackets.
    pub fn host(&self) -> &str {
        let r = self.registry.as_str();
        if let Some(rest) = r.strip_prefix('[') {
            return rest.split(']').next().unwrap_or(rest);
        }
        r.rsplit_once(':').map_or(r, |(host, _)| host)
    }

    /// `localhost`, 127.0.0.0/8 or ::1: registries plain HTTP is allowed for by default.
    pub fn is_loopback(&self) -> bool {
        let host = self.host();
        host.eq_ignore_ascii_case("localhost") || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
    }

    pub(crate) fn to_client(&self) -> oci_client::Reference {
        let (registry, repository) = (self.registry.clone(), self.repository.clone());
        match (&self.tag, &self.digest) {
            (Some(tag), Some(d)) => {
                oci_client::Reference::with_tag_and_digest(registry, repository, tag.clone(), format!("sha256:{d}"))
            }
            (None, Some(d)) => oci_client::Reference::with_digest(registry, repository, format!("sha256:{d}")),
            (tag, None) => {
                oci_client::Reference::with_tag(registry, repository, tag.clone().unwrap_or_else(|| "latest".into()))
            }
        }
    }
}

impl fmt::Display for Reference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.registry, self.repository)?;
        if let Some(tag) = &self.tag {
            write!(f, ":{tag}")?;
        }
        if let Some(digest) = &self.digest {
            write!(f, "@sha256:{digest}")?;
        }
        Ok(())
    }
}

impl FromStr for Reference {
    type Err = OciError;

    fn from_str(text: &str) -> Result<Reference, OciError> {
        let bad = |why: String| OciError::BadReference {
            reference: crate::text::printable(text, 300),
            why: crate::text::printable(&why, 300),
        };
        let s = text.strip_prefix(SCHEME).unwrap_or(text);
        let (s, digest) = match s.split_once('@') {
            Some((rest, d)) => {
                let hex = d.strip_prefix("sha256:").ok_or_else(|| bad(format!("digest '{d}' is not sha256:<hex>")))?;
                if !crate::sha256::is_hex(hex) {
                    return Err(bad(format!("digest '{d}' is not sha256: and 64 lower-case hex digits")));
                }
                (rest, Some(hex.to_owned()))
            }
            None => (s, None),
        };
        let (registry, path) = s
            .split_once('/')
            .ok_or_else(|| bad("expected registry/repository, e.g. localhost:5000/providers/random:0.1.0".into()))?;
        check_registry(registry).map_err(bad)?;
        // A ':' after the registry can only start the tag.
        let (repository, tag) = match path.rsplit_once(':') {
            Some((repo, tag)) => (repo, Some(tag)),
            None => (path, None),
        };
        check_repository(repository).map_err(bad)?;
        if let Some(tag) = tag {
            let ok = tag.len() <= 128
                && tag.bytes().next().is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_')
                && tag.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
            if !ok {
                return Err(bad(format!("tag '{tag}' must be [A-Za-z0-9_][A-Za-z0-9._-]*, at most 128 characters")));
            }
        }
        Ok(Reference {
            registry: registry.to_owned(),
            repository: repository.to_owned(),
            tag: tag.map(str::to_owned),
            digest,
        })
    }
}

fn check_registry(registry: &str) -> Result<(), String> {
    let (host, port) = if let Some(rest) = registry.strip_prefix('[') {
        let (v6, after) = rest.split_once(']').ok_or_else(|| format!("registry '{registry}': unclosed '['"))?;
        v6.parse::<std::net::Ipv6Addr>().map_err(|_| format!("registry '{registry}': bad IPv6 address"))?;
        (None, after.strip_prefix(':').or(if after.is_empty() { None } else { Some(after) }))
    } else {
        match registry.rsplit_once(':') {
            Some((h, p)) => (Some(h), Some(p)),
            None => (Some(registry), None),
        }
    };
    if let Some(host) = host {
        let label_ok = |l: &str| !l.is_empty() && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
        if host.is_empty() || !host.split('.').all(label_ok) {
            return Err(format!("registry '{registry}' is not host[:port]"));
        }
    }
    if let Some(port) = port
        && port.parse::<u16>().is_err()
    {
        return Err(format!("registry '{registry}': port '{port}' is not a number up to 65535"));
    }
    Ok(())
}

fn check_repository(repository: &str) -> Result<(), String> {
    // Distribution's grammar: lower-case alphanumeric runs joined by `.`, `_`, `__` or dashes.
    let component_ok = |c: &str| {
        c.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"._-".contains(&b))
            && c.bytes().next().is_some_and(|b| b.is_ascii_alphanumeric())
            && c.bytes().last().is_some_and(|b| b.is_ascii_alphanumeric())
    };
    if repository.is_empty() || repository.len() > 255 || !repository.split('/').all(component_ok) {
        return Err(format!(
            "repository '{repository}' must be lower-case name[/name...] (letters, digits, '.', '_', '-' inside names)"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEX: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    fn parse(s: &str) -> Reference {
        s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    fn error(s: &str) -> String {
        s.parse::<Reference>().expect_err(s).to_string()
    }

    #[test]
    fn parses_every_part() {
        let r = parse(&format!("oci://localhost:5000/providers/random:0.1.0@sha256:{HEX}"));
        assert_eq!(r.registry, "localhost:5000");
        assert_eq!(r.repository, "providers/random");
        assert_eq!(r.tag.as_deref(), Some("0.1.0"));
        assert_eq!(r.digest.as_deref(), Some(HEX));
        assert_eq!(r.to_string(), format!("localhost:5000/providers/random:0.1.0@sha256:{HEX}"));
        assert_eq!(r.pinned("ab").to_string(), "localhost:5000/providers/random@sha256:ab");

        let r = parse("ghcr.io/acme/random");
        assert_eq!((r.registry.as_str(), &r.tag, &r.digest), ("ghcr.io", &None, &None));
        assert!(!r.is_loopback());
        let r = parse(&format!("[::1]:5000/random@sha256:{HEX}"));
        assert_eq!((r.registry.as_str(), r.host(), &r.tag), ("[::1]:5000", "::1", &None));
        assert_eq!(r.to_client().to_string(), format!("[::1]:5000/random@sha256:{HEX}"));
        assert_eq!(parse("registry.example.com/r").to_client().tag(), Some("latest"));
    }

    #[test]
    fn loopback_registries() {
        for r in ["localhost/a", "LOCALHOST:1/a", "127.0.0.1:5000/a", "127.9.8.7/a", "[::1]/a", "[::1]:80/a"] {
            assert!(parse(r).is_loopback(), "{r}");
        }
        for r in ["example.com/a", "10.0.0.1:5000/a", "localhost.example.com/a", "[::2]:5000/a", "128.0.0.1/a"] {
            assert!(!parse(r).is_loopback(), "{r}");
        }
    }

    #[test]
    fn clear_errors() {
        assert!(error("random").contains("expected registry/repository"));
        assert!(error("localhost:5000/Random").contains("repository 'Random' must be lower-case"));
        assert!(error("localhost:5000/a//b").contains("repository 'a//b'"));
        assert!(error("localhost:99999/a").contains("port '99999'"));
        assert!(error("local_host/a").contains("not host[:port]"));
        assert!(error("localhost/a:-x").contains("tag '-x'"));
        assert!(error("localhost/a@sha512:00").contains("not sha256:<hex>"));
        assert!(error("localhost/a@sha256:ABC").contains("64 lower-case hex"));
        assert!(error("[::1/a").contains("unclosed"));
        assert!(error("oci://localhost/a@sha256:1").starts_with("bad OCI reference 'oci://localhost/a@sha256:1'"));
    }
}
