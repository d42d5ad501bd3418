//! Where a registry may send a pull: the token service its challenge names
//! and the redirects it answers with are its choice, and the registry a
//! Parameterize value names is a stranger's (unless the user names it too).
//! So a stranger's registry on the internet may send a pull on over HTTPS
//! only, to no loopback, private or link-local address (the cloud metadata
//! service, a local admin port). One on loopback or a private address may
//! send it anywhere; one reached over plain HTTP (`--insecure`) also over
//! plain HTTP. A registry the user names may send it anywhere (their
//! storage may well be `http://10.0.0.5:9000`).
//!
//! Addresses are judged as written: a host name resolving inward is not
//! caught here (over HTTPS only, the plain-HTTP metadata services are out of
//! reach anyway).

use std::net::{IpAddr, Ipv4Addr};

use reqwest::Url;

/// Whether a pull from a stranger's registry at `origin` may go to `target`.
pub fn allowed(origin: &Url, target: &Url) -> Result<(), String> {
    let plain = origin.scheme() == "http";
    match target.scheme() {
        "https" => {}
        "http" if plain => {}
        other => return Err(format!("{} is {other}, not https", without_query(target))),
    }
    if internal(target) && !internal(origin) {
        return Err(format!("{} is a loopback, private or link-local address", without_query(target)));
    }
    Ok(())
}

/// Whether `a` and `b` are the same scheme, host and port.
pub fn same_origin(a: &Url, b: &Url) -> bool {
    (a.scheme(), a.host_str(), a.port_or_known_default()) == (b.scheme(), b.host_str(), b.port_or_known_default())
}

/// `url` without its query, which may hold a signature (a CDN's signed URL).
pub fn without_query(url: &Url) -> String {
    let mut url = url.clone();
    url.set_query(None);
    url.to_string()
}

/// `localhost`, or an address literal that is loopback, private (RFC 1918,
/// unique local), link-local, shared (100.64/10) or "this network" (0/8),
/// also inside an IPv4-mapped, -compatible or NAT64 IPv6 address. (The `url`
/// crate has already turned `2130706433` or `0x7f.1` into `127.0.0.1`.)
fn internal(url: &Url) -> bool {
    let host = url.host_str().unwrap_or_default().trim_end_matches('.').to_ascii_lowercase();
    if host == "localhost" || host.ends_with(".localhost") {
        return true;
    }
    let Ok(ip) = host.trim_matches(['[', ']']).parse::<IpAddr>() else { return false };
    let v4 = |ip: Ipv4Addr| {
        let [a, b, ..] = ip.octets();
        let shared = a == 100 && (b & 0xc0) == 64;
        ip.is_loopback() || ip.is_private() || ip.is_link_local() || a == 0 || shared
    };
    match ip {
        IpAddr::V4(ip) => v4(ip),
        IpAddr::V6(ip) if ip.is_loopback() || ip.is_unspecified() => true,
        IpAddr::V6(ip) if ip.is_unique_local() || ip.is_unicast_link_local() => true,
        IpAddr::V6(ip) => {
            let nat64 = ip.segments()[..6] == [0x64, 0xff9b, 0, 0, 0, 0];
            let embedded = Ipv4Addr::from_bits(ip.to_bits() as u32);
            ip.to_ipv4().is_some_and(v4) || (nat64 && v4(embedded))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(text: &str) -> Url {
        Url::parse(text).unwrap()
    }

    #[test]
    fn a_registry_on_the_internet_sends_pulls_over_https_to_the_internet_only() {
        let ghcr = url("https://ghcr.io/v2/acme/x/manifests/1");
        allowed(&ghcr, &url("https://pkg-containers.githubusercontent.com/blob?sig=1")).unwrap();
        let refused = |target: &str| allowed(&ghcr, &url(target)).unwrap_err();
        assert!(refused("http://cdn.example/blob").contains("not https"));
        assert!(refused("ftp://cdn.example/blob").contains("is ftp"));
        for inward in [
            "https://169.254.169.254/latest/meta-data",
            "https://127.0.0.1:8080/x",
            "https://localhost/x",
            "https://10.0.0.8/x",
            "https://192.168.1.1/x",
            "https://100.64.0.1/x",
            "https://[::1]/x",
            "https://[fd00::1]/x",
            "https://[fe80::1]/x",
            "https://[::ffff:127.0.0.1]/x",
            "https://[::7f00:1]/x",
            "https://[64:ff9b::a9fe:a9fe]/x",
            "https://0.0.0.0/x",
            "https://0.1.2.3/x",
            "https://localhost./x",
            "https://2130706433/x",
            "https://0x7f.1/x",
        ] {
            assert!(refused(inward).contains("loopback, private or link-local"), "{inward}");
        }
        // A signature in the query is not repeated.
        assert!(!refused("http://cdn.example/blob?X-Amz-Signature=secret").contains("secret"));
    }

    #[test]
    fn a_plain_or_internal_registry_may_send_pulls_anywhere() {
        let local = url("http://127.0.0.1:5000/v2/acme/x/manifests/1");
        allowed(&local, &url("http://127.0.0.1:5001/token")).unwrap();
        allowed(&local, &url("https://ghcr.io/token")).unwrap();
        let insecure = url("http://registry.corp.example/v2/x/manifests/1");
        allowed(&insecure, &url("http://registry.corp.example/token")).unwrap();
        assert!(allowed(&insecure, &url("http://10.1.2.3/token")).is_err(), "a remote name is not internal");
        let private = url("https://10.1.2.3/v2/x/manifests/1");
        allowed(&private, &url("https://10.1.2.4/blob")).unwrap();
    }

    #[test]
    fn origins_compare_scheme_host_and_port() {
        assert!(same_origin(&url("https://r.example/a"), &url("https://r.example:443/b?x")));
        assert!(!same_origin(&url("https://r.example/a"), &url("https://cdn.example/a")));
        assert!(!same_origin(&url("https://r.example/a"), &url("http://r.example/a")));
        assert!(!same_origin(&url("http://r.example/a"), &url("http://r.example:8080/a")));
    }
}
