//! Where a registry may send a pull: the token service its challenge names
//! and the redirects it answers with are its choice, and the registry a
//! Parameterize value names is a stranger's. So a pull from a registry on
//! the internet goes on over HTTPS only, to no loopback, private or
//! link-local address (the cloud metadata service, a local admin port); a
//! registry that is itself plain or internal may send it anywhere.
//!
//! Addresses are judged as written: a host name resolving inward is not
//! caught here.

use std::net::IpAddr;

use reqwest::Url;

/// The most redirects one request follows.
const MAX_HOPS: usize = 5;

/// Whether a pull that started at `origin` (the registry) may go to `target`.
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

/// The redirect policy of the pull client: at most [`MAX_HOPS`], each [`allowed`].
pub fn redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let checked = match attempt.previous() {
            previous if previous.len() > MAX_HOPS => Err(format!("more than {MAX_HOPS} redirects")),
            [origin, ..] => allowed(origin, attempt.url()).map_err(|why| format!("a redirect to {why}")),
            [] => Ok(()),
        };
        match checked {
            Ok(()) => attempt.follow(),
            Err(why) => attempt.error(why),
        }
    })
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
/// unique local), link-local, shared (100.64/10) or unspecified.
fn internal(url: &Url) -> bool {
    let host = url.host_str().unwrap_or_default();
    if host.eq_ignore_ascii_case("localhost") || host.to_ascii_lowercase().ends_with(".localhost") {
        return true;
    }
    let Ok(ip) = host.trim_matches(['[', ']']).parse::<IpAddr>() else { return false };
    let v4 = |ip: std::net::Ipv4Addr| {
        let shared = ip.octets()[0] == 100 && (ip.octets()[1] & 0xc0) == 64;
        ip.is_loopback() || ip.is_private() || ip.is_link_local() || ip.is_unspecified() || shared
    };
    match ip {
        IpAddr::V4(ip) => v4(ip),
        IpAddr::V6(ip) => match ip.to_ipv4_mapped() {
            Some(ip) => v4(ip),
            None => ip.is_loopback() || ip.is_unspecified() || ip.is_unique_local() || ip.is_unicast_link_local(),
        },
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
            "https://0.0.0.0/x",
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
