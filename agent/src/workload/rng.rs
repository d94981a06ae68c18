//! A small, fast pseudo-random generator for offsets, mix decisions and data scrambling.
//!
//! xorshift64* (Vigna): one multiply and three shifts per value, period 2^64 − 1. Statistical
//! quality far beyond what offset selection needs; not for cryptography.

#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator for stream `stream` of seed `seed` (e.g. one stream per job).
    pub fn new(seed: u64, stream: u64) -> Self {
        // splitmix64 of the inputs, so nearby seeds give unrelated streams; never zero.
        let mut z = seed ^ stream.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        Rng(z | 1)
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in `0..n` (Lemire's multiply-high; bias below 2^-32 for n < 2^32 blocks).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    pub fn fill(&mut self, buf: &mut [u8]) {
        let mut chunks = buf.chunks_exact_mut(8);
        for c in &mut chunks {
            c.copy_from_slice(&self.next_u64().to_le_bytes());
        }
        let rest = chunks.into_remainder();
        let last = self.next_u64().to_le_bytes();
        rest.copy_from_slice(&last[..rest.len()]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn below_stays_in_range_and_spreads() {
        let mut r = Rng::new(1, 2);
        let mut hits = [0u32; 10];
        for _ in 0..100_000 {
            let v = r.below(10);
            hits[v as usize] += 1;
        }
        for h in hits {
            assert!((9_000..11_000).contains(&h), "{hits:?}");
        }
    }

    #[test]
    fn streams_differ() {
        assert_ne!(Rng::new(7, 0).next_u64(), Rng::new(7, 1).next_u64());
    }
}
