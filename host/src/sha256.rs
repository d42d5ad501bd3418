//! SHA-256 digests as this host writes and reads them: 64 lower-case hex
//! digits, after `sha256:` where OCI, policies and parameter values name
//! them. One definition, because a digest names a blob in the store, an
//! artifact in the cache, an approval and a pinned component, and a
//! digest one reader accepts another must not refuse (or the reverse).
//! Nothing but these digits reaches a path.

use sha2::{Digest, Sha256};

/// Lower-case hex SHA-256 of `bytes`.
pub fn of(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Whether `hex` is what [`of`] writes.
pub fn is_hex(hex: &str) -> bool {
    hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// The hex digits of a `sha256:<hex>` digest, or `None` if it is not one.
pub fn hex_of(prefixed: &str) -> Option<&str> {
    prefixed.strip_prefix("sha256:").filter(|hex| is_hex(hex))
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_lower_case_sha256_hex_is_a_digest() {
        let good = super::of(b"x");
        assert!(super::is_hex(&good));
        assert_eq!(super::hex_of(&format!("sha256:{good}")), Some(good.as_str()));
        for bad in [good.to_uppercase(), good[1..].to_owned(), format!("{good}0"), format!("../{}", &good[3..])] {
            assert!(!super::is_hex(&bad), "{bad}");
            assert_eq!(super::hex_of(&format!("sha256:{bad}")), None);
        }
        assert_eq!(super::hex_of(&good), None, "the prefix is needed");
        assert_eq!(super::hex_of(&format!("sha512:{good}")), None);
    }
}
