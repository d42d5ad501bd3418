//! `RandomId`: random bytes, shown as hex, base64 (URL-safe and standard) and
//! decimal, each with the optional prefix in front.

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use pulumi_wasm_sdk::{PropertyMap, Result, UnknownKind, Value};

use crate::Generated;
use crate::check::{Checker, Int};
use crate::rng::Rng;

pub const INPUTS: &[&str] = &["byteLength", "prefix", "keepers"];

pub const MAX_BYTES: i64 = 1024;

const OUTPUTS: [&str; 4] = ["hex", "b64Url", "b64Std", "dec"];

#[derive(Clone, Debug, PartialEq)]
pub struct Params {
    pub byte_length: usize,
    pub prefix: String,
}

pub fn check(c: &mut Checker) -> Option<Params> {
    let byte_length = c.integer("byteLength", Int::required(1, MAX_BYTES));
    let prefix = c.optional_string("prefix");
    c.string_map("keepers");
    Some(Params { byte_length: byte_length? as usize, prefix: prefix?.unwrap_or_default() })
}

/// The outputs for `bytes`; `b64Url` is also the resource ID.
pub fn encode(bytes: &[u8], prefix: &str) -> PropertyMap {
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let forms = [hex, URL_SAFE_NO_PAD.encode(bytes), STANDARD.encode(bytes), decimal(bytes)];
    OUTPUTS.iter().zip(forms).map(|(k, v)| (k.to_string(), Value::String(format!("{prefix}{v}")))).collect()
}

/// The bytes read as one big-endian unsigned number, in decimal.
pub fn decimal(bytes: &[u8]) -> String {
    let mut number: Vec<u8> = bytes.iter().copied().skip_while(|b| *b == 0).collect();
    let mut digits = Vec::new();
    while !number.is_empty() {
        // Long division by 10; the remainder is the next digit from the right.
        let mut rem = 0u32;
        for b in number.iter_mut() {
            let cur = rem * 256 + u32::from(*b);
            *b = (cur / 10) as u8;
            rem = cur % 10;
        }
        digits.push(char::from(b'0' + rem as u8));
        let zeros = number.iter().take_while(|b| **b == 0).count();
        number.drain(..zeros);
    }
    if digits.is_empty() {
        return "0".to_owned();
    }
    digits.iter().rev().collect()
}

pub fn create(p: &Params, rng: &mut dyn Rng) -> Result<Generated> {
    let mut bytes = vec![0u8; p.byte_length];
    rng.fill_bytes(&mut bytes)?;
    let outputs = encode(&bytes, &p.prefix);
    let id = outputs["b64Url"].as_str().unwrap_or_default().to_owned();
    Ok(Generated { id, outputs, summary: format!("generated a random id of {} bytes", p.byte_length) })
}

pub fn unknown_outputs() -> PropertyMap {
    OUTPUTS.iter().map(|k| (k.to_string(), Value::Unknown(UnknownKind::String))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;
    use pulumi_wasm_sdk::props;

    #[test]
    fn encodings() {
        let out = encode(&[0x00, 0xfb, 0xff], "p-");
        assert_eq!(out["hex"].as_str(), Some("p-00fbff"));
        assert_eq!(out["b64Url"].as_str(), Some("p-APv_"));
        assert_eq!(out["b64Std"].as_str(), Some("p-APv/"));
        assert_eq!(out["dec"].as_str(), Some("p-64511"));
        assert_eq!(decimal(&[]), "0");
        assert_eq!(decimal(&[0, 0]), "0");
        assert_eq!(decimal(&[0xff; 8]), u64::MAX.to_string());
        assert_eq!(decimal(&[0x01, 0, 0, 0, 0, 0, 0, 0, 0]), "18446744073709551616");
    }

    #[test]
    fn create_uses_b64url_as_id() {
        let news = props! { "byteLength" => 8 };
        let mut c = Checker::new(&news, INPUTS);
        let p = check(&mut c).unwrap();
        assert!(c.finish().failures.is_empty());
        let g = create(&p, &mut SplitMix64::new(9)).unwrap();
        assert_eq!(g.outputs["b64Url"].as_str(), Some(g.id.as_str()));
        assert_eq!(g.outputs["hex"].as_str().unwrap().len(), 16);
    }

    #[test]
    fn byte_length_is_checked() {
        let news = props! { "byteLength" => 0 };
        let mut c = Checker::new(&news, INPUTS);
        assert_eq!(check(&mut c), None);
        let f = &c.finish().failures[0];
        assert_eq!((f.property.as_str(), f.reason.as_str()), ("byteLength", "must be at least 1"));
    }
}
