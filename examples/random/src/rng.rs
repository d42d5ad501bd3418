//! Sources of randomness and unbiased sampling from them.
//!
//! Resources draw from [`SecureRng`]: a CSPRNG seeded from the operating
//! system (built for wasm32-wasip2, the host's `wasi:random/random`), read a
//! block at a time. A seeded
//! `randomInteger` draws from [`SplitMix64`] seeded with the 64-bit FNV-1a
//! hash of the seed: both are written out here, so the result for a seed is
//! the same on every platform and with every Rust version (unlike
//! `std::hash`, whose algorithm may change).

use pulumi_wasm_sdk::{Error, Result};

pub trait Rng {
    fn next_u64(&mut self) -> Result<u64>;

    fn next_u32(&mut self) -> Result<u32> {
        Ok(self.next_u64()? as u32)
    }

    fn fill_bytes(&mut self, buf: &mut [u8]) -> Result<()> {
        for chunk in buf.chunks_mut(8) {
            let word = self.next_u64()?.to_le_bytes();
            chunk.copy_from_slice(&word[..chunk.len()]);
        }
        Ok(())
    }
}

/// Cryptographically secure randomness for one call: a ChaCha12 generator
/// seeded and reseeded from the operating system (`rand`'s thread
/// generator), read [`BLOCK`] bytes at a time. Built for wasm32-wasip2 that
/// generator is the host's: a block is one `wasi:random/random` call, and
/// the host runs the cipher natively. A generator inside the component
/// would run it as portable code (a ChaCha20 keyed once per call, as until
/// the twelfth session, was a quarter of a small Create's guest time;
/// BENCHMARKS.md).
pub struct SecureRng {
    block: [u8; BLOCK],
    /// Bytes of `block` already used.
    used: usize,
}

/// Bytes read per request: a 16-character string's draws.
pub const BLOCK: usize = 256;

impl SecureRng {
    /// Reads nothing until the first draw.
    pub fn new() -> Result<Self> {
        Ok(SecureRng { block: [0; BLOCK], used: BLOCK })
    }

    /// The next `N` bytes of the block, reading a new block when it runs out.
    fn take<const N: usize>(&mut self) -> Result<[u8; N]> {
        if self.used + N > BLOCK {
            secure_fill(&mut self.block)?;
            self.used = 0;
        }
        let bytes = self.block[self.used..self.used + N].try_into().expect("N bytes");
        self.used += N;
        Ok(bytes)
    }
}

/// Fills `buf` with secure random bytes in one request.
#[cfg(all(target_os = "wasi", target_env = "p2"))]
fn secure_fill(buf: &mut [u8]) -> Result<()> {
    // Not `getrandom`, which asks for 8 bytes per call.
    let bytes = wasip2::random::random::get_random_bytes(buf.len() as u64);
    if bytes.len() != buf.len() {
        return Err(Error::Unavailable(format!("the host gave {} random bytes for {}", bytes.len(), buf.len())));
    }
    buf.copy_from_slice(&bytes);
    Ok(())
}

/// Fills `buf` with secure random bytes in one request.
#[cfg(not(all(target_os = "wasi", target_env = "p2")))]
fn secure_fill(buf: &mut [u8]) -> Result<()> {
    rand::Rng::fill_bytes(&mut rand::rng(), buf);
    Ok(())
}

impl Rng for SecureRng {
    fn next_u64(&mut self) -> Result<u64> {
        self.take().map(u64::from_le_bytes)
    }

    fn next_u32(&mut self) -> Result<u32> {
        self.take().map(u32::from_le_bytes)
    }

    fn fill_bytes(&mut self, buf: &mut [u8]) -> Result<()> {
        secure_fill(buf)
    }
}

/// A small deterministic generator (Steele, Lea and Flood's SplitMix64).
/// Not for secrets: only for seeded, reproducible results and tests.
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(state: u64) -> Self {
        SplitMix64(state)
    }

    pub fn from_seed(seed: &str) -> Self {
        SplitMix64::new(fnv1a(seed.as_bytes()))
    }
}

impl Rng for SplitMix64 {
    fn next_u64(&mut self) -> Result<u64> {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        Ok(z ^ (z >> 31))
    }
}

/// 64-bit FNV-1a.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3))
}

/// A uniform number in `0..n` (`n > 0`), by rejection so there is no modulo bias.
pub fn below<R: Rng + ?Sized>(rng: &mut R, n: u64) -> Result<u64> {
    if n == 0 {
        return Err(Error::Failed("cannot draw from an empty range".into()));
    }
    // 2^64 mod n draws at the top would make the low results more likely.
    let excess = (u64::MAX % n).wrapping_add(1) % n;
    loop {
        let x = rng.next_u64()?;
        if x <= u64::MAX - excess {
            return Ok(x % n);
        }
    }
}

/// A uniform index in `0..n` (`n > 0`). Below 2^32 (always, in practice)
/// from one 32-bit draw by Lemire's multiply-and-shift, which divides only
/// to reject the rare draws that would bias it: [`below`] divides in 64 bits
/// twice a draw, which natively LLVM narrows to 32 bits for small numbers
/// but compiled to WebAssembly stays a full 64-bit division (~40 cycles).
/// Under load this made a component's Create ~2.6 µs cheaper
/// (BENCHMARKS.md, "Twelfth session").
pub fn index<R: Rng + ?Sized>(rng: &mut R, n: usize) -> Result<usize> {
    // `below` serves the rest, and refuses an empty range.
    let n = match u32::try_from(n) {
        Ok(n) if n > 0 => n,
        _ => return below(rng, n as u64).map(|i| i as usize),
    };
    let mut m = u64::from(rng.next_u32()?) * u64::from(n);
    if (m as u32) < n {
        // 2^32 mod n: the low products below it would make some results likelier.
        let floor = n.wrapping_neg() % n;
        while (m as u32) < floor {
            m = u64::from(rng.next_u32()?) * u64::from(n);
        }
    }
    Ok((m >> 32) as usize)
}

/// A uniformly chosen item.
pub fn choose<'a, R: Rng + ?Sized, T>(rng: &mut R, items: &'a [T]) -> Result<&'a T> {
    Ok(&items[index(rng, items.len())?])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_matches_reference_vectors() {
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn splitmix64_matches_reference_output() {
        // First outputs for state 1234567 (from the reference C implementation).
        let mut r = SplitMix64::new(1_234_567);
        assert_eq!(r.next_u64().unwrap(), 6_457_827_717_110_365_317);
        assert_eq!(r.next_u64().unwrap(), 3_203_168_211_198_807_973);
    }

    #[test]
    fn below_stays_in_range_and_covers_it() {
        let mut r = SplitMix64::new(7);
        let mut seen = [false; 5];
        for _ in 0..200 {
            seen[below(&mut r, 5).unwrap() as usize] = true;
        }
        assert!(seen.iter().all(|s| *s));
        assert!(below(&mut r, 0).is_err());
        assert_eq!(below(&mut r, 1).unwrap(), 0);
    }

    #[test]
    fn index_is_uniform_and_in_range() {
        let mut r = SplitMix64::new(11);
        let mut counts = [0u32; 7];
        for _ in 0..70_000 {
            counts[index(&mut r, 7).unwrap()] += 1;
        }
        // Each of the 7 expects 10,000 (sd ~93): 600 off is over 6 sd.
        assert!(counts.iter().all(|c| c.abs_diff(10_000) < 600), "{counts:?}");
        assert!(index(&mut r, 0).is_err());
        assert_eq!(index(&mut r, 1).unwrap(), 0);
        // A range of 2^32 - 1 rejects some draws; results still stay below it.
        assert!((0..1000).all(|_| index(&mut r, u32::MAX as usize).unwrap() < u32::MAX as usize));
    }

    /// A generator that replays `words` (then zeros), for the rejection path.
    struct Replay(Vec<u32>);

    impl Rng for Replay {
        fn next_u64(&mut self) -> Result<u64> {
            Ok(u64::from(self.next_u32()?))
        }
        fn next_u32(&mut self) -> Result<u32> {
            Ok(if self.0.is_empty() { 0 } else { self.0.remove(0) })
        }
    }

    #[test]
    fn index_rejects_the_draws_that_would_bias_it() {
        // n = 3: 2^32 mod 3 = 1, so a draw whose product's low word is 0 is rejected.
        // 0 * 3 = 0 (rejected), then 0x8000_0000 * 3 = 0x1_8000_0000: index 1.
        assert_eq!(index(&mut Replay(vec![0, 0x8000_0000]), 3).unwrap(), 1);
        // The top draw maps to the top index.
        assert_eq!(index(&mut Replay(vec![u32::MAX]), 3).unwrap(), 2);
    }

    #[test]
    fn secure_rng_draws_fresh_bytes_past_each_block() {
        // Three blocks' worth of draws: each refill must bring new bytes.
        let draws = 3 * BLOCK / 8;
        let mut r = SecureRng::new().unwrap();
        let words: std::collections::BTreeSet<u64> = (0..draws).map(|_| r.next_u64().unwrap()).collect();
        assert_eq!(words.len(), draws, "64-bit draws from the system do not repeat");
        let (mut a, mut b) = ([0u8; 32], [0u8; 32]);
        SecureRng::new().unwrap().fill_bytes(&mut a).unwrap();
        SecureRng::new().unwrap().fill_bytes(&mut b).unwrap();
        assert_ne!(a, [0u8; 32]);
        assert_ne!(a, b);
    }
}
