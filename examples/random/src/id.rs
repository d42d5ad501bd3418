//! `RandomId`: random bytes, shown as hex, base64 (URL-safe and standard) and
//! decimal, each with the optional prefix in front.

use std::collections::BTreeMap;

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use pulumi_wasm_sdk::typed::*;

use crate::rng::{Rng, SecureRng};

pub const MAX_BYTES: u32 = 1024;

#[derive(PulumiType, Clone, Debug, PartialEq)]
#[pulumi(replace_on_changes)]
pub struct IdArgs {
    /// The number of random bytes to produce. Between 1 and 1024.
    #[pulumi(min = 1, max = MAX_BYTES)]
    pub byte_length: u32,
    /// Arbitrary string to prefix the output value with. This string is supplied as-is, meaning it is not
    /// guaranteed to be URL-safe or base64 encoded.
    pub prefix: Option<String>,
    /// Arbitrary map of values that, when changed, will trigger recreation of the resource.
    pub keepers: Option<BTreeMap<String, String>>,
}

/// Generates random bytes, presented as hexadecimal, base64 and decimal strings. The resource's ID is `b64Url`.
/// Changing any input generates new bytes.
#[derive(PulumiType)]
pub struct IdState {
    #[pulumi(flatten)]
    pub args: IdArgs,
    /// The generated id presented in padded hexadecimal digits. This result will always be twice as long as the
    /// requested byte length.
    pub hex: String,
    /// The generated id presented in base64, using the URL-friendly character set: case-sensitive letters, digits
    /// and the characters `_` and `-`. This is also the resource's ID.
    pub b64_url: String,
    /// The generated id presented in base64 without additional transformations.
    pub b64_std: String,
    /// The generated id presented in non-padded decimal digits.
    pub dec: String,
}

impl IdState {
    /// The outputs for `bytes`, each with the prefix.
    pub fn new(args: IdArgs, bytes: &[u8]) -> Self {
        let p = args.prefix.clone().unwrap_or_default();
        let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        IdState {
            hex: format!("{p}{hex}"),
            b64_url: format!("{p}{}", URL_SAFE_NO_PAD.encode(bytes)),
            b64_std: format!("{p}{}", STANDARD.encode(bytes)),
            dec: format!("{p}{}", decimal(bytes)),
            args,
        }
    }
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

pub fn generate(args: IdArgs, rng: &mut dyn Rng) -> Result<IdState> {
    let mut bytes = vec![0u8; args.byte_length as usize];
    rng.fill_bytes(&mut bytes)?;
    Ok(IdState::new(args, &bytes))
}

pub struct RandomId;

impl Resource for RandomId {
    const TOKEN: &'static str = "random:index:RandomId";
    type Inputs = IdArgs;
    type State = IdState;

    /// The ID is `b64Url`.
    fn create(&self, ctx: &Context, args: IdArgs) -> Result<(String, IdState)> {
        ctx.log().info(&format!("generated a random id of {} bytes", args.byte_length));
        let state = generate(args, &mut SecureRng::new()?)?;
        Ok((state.b64_url.clone(), state))
    }

    fn update(&self, _ctx: &Context, _id: &str, olds: IdState, args: IdArgs) -> Result<IdState> {
        Ok(IdState { args, ..olds })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;

    fn args(byte_length: u32, prefix: &str) -> IdArgs {
        IdArgs { byte_length, prefix: Some(prefix.to_owned()), keepers: None }
    }

    #[test]
    fn encodings() {
        let out = IdState::new(args(3, "p-"), &[0x00, 0xfb, 0xff]);
        assert_eq!(out.hex, "p-00fbff");
        assert_eq!(out.b64_url, "p-APv_");
        assert_eq!(out.b64_std, "p-APv/");
        assert_eq!(out.dec, "p-64511");
        assert_eq!(decimal(&[]), "0");
        assert_eq!(decimal(&[0, 0]), "0");
        assert_eq!(decimal(&[0xff; 8]), u64::MAX.to_string());
        assert_eq!(decimal(&[0x01, 0, 0, 0, 0, 0, 0, 0, 0]), "18446744073709551616");
    }

    #[test]
    fn generates_the_requested_bytes() {
        let state = generate(args(8, ""), &mut SplitMix64::new(9)).unwrap();
        assert_eq!(state.hex.len(), 16);
        assert_eq!(URL_SAFE_NO_PAD.decode(&state.b64_url).unwrap().len(), 8);
    }
}
