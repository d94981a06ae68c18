//! Offset generators: sequential, uniform random, and random cover-once.
//!
//! Cover-once walks a bijection of `0..2^k` (k the smallest with 2^k ≥ blocks) built from
//! xor-shift and odd-multiplier rounds masked to k bits, skipping values ≥ blocks (cycle
//! walking, under 2 draws per block on average). Every block of the span is visited exactly
//! once per pass, in an order that looks random; a new pass uses a new permutation. This is
//! what fio's random map or LFSR gives, at a few nanoseconds per offset and no memory.

use super::rng::Rng;

/// A span of whole blocks on the target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    /// First byte.
    pub start: u64,
    /// Number of blocks of `bs` bytes.
    pub blocks: u64,
    pub bs: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    Sequential,
    Uniform,
    CoverOnce,
}

#[derive(Clone, Debug)]
pub struct OffsetGen {
    span: Span,
    kind: Kind,
}

#[derive(Clone, Debug)]
enum Kind {
    Sequential {
        next: u64,
    },
    Uniform {
        rng: Rng,
    },
    CoverOnce {
        perm: Permutation,
        counter: u64,
        rng: Rng,
    },
}

impl OffsetGen {
    pub fn new(span: Span, order: Order, rng: Rng) -> Self {
        let kind = match order {
            Order::Sequential => Kind::Sequential { next: 0 },
            Order::Uniform => Kind::Uniform { rng },
            Order::CoverOnce => {
                let mut rng = rng;
                Kind::CoverOnce {
                    perm: Permutation::new(span.blocks, &mut rng),
                    counter: 0,
                    rng,
                }
            }
        };
        OffsetGen { span, kind }
    }

    /// Byte offset of the next I/O.
    #[inline]
    pub fn next_offset(&mut self) -> u64 {
        let block = match &mut self.kind {
            Kind::Sequential { next } => {
                let b = *next;
                *next = if b + 1 == self.span.blocks { 0 } else { b + 1 };
                b
            }
            Kind::Uniform { rng } => rng.below(self.span.blocks),
            Kind::CoverOnce { perm, counter, rng } => loop {
                if *counter > perm.mask {
                    *perm = Permutation::new(self.span.blocks, rng);
                    *counter = 0;
                }
                let v = perm.apply(*counter);
                *counter += 1;
                if v < self.span.blocks {
                    break v;
                }
            },
        };
        self.span.start + block * self.span.bs
    }
}

/// A bijection on `0..=mask` (mask = 2^k − 1).
#[derive(Clone, Debug)]
struct Permutation {
    mask: u64,
    shift: u32,
    keys: [u64; 3],
    mults: [u64; 3],
}

impl Permutation {
    fn new(blocks: u64, rng: &mut Rng) -> Self {
        let bits = 64 - blocks.saturating_sub(1).leading_zeros();
        let mask = if bits >= 64 {
            u64::MAX
        } else {
            (1u64 << bits) - 1
        };
        Permutation {
            mask,
            shift: (bits / 2).max(1),
            keys: [rng.next_u64(), rng.next_u64(), rng.next_u64()],
            mults: [rng.next_u64() | 1, rng.next_u64() | 1, rng.next_u64() | 1],
        }
    }

    /// Each step is a bijection modulo 2^k: xor with a key, multiply by an odd number,
    /// xor-shift right (the high bits feed the low ones).
    #[inline]
    fn apply(&self, mut x: u64) -> u64 {
        for i in 0..3 {
            x = (x ^ self.keys[i]) & self.mask;
            x = x.wrapping_mul(self.mults[i]) & self.mask;
            x ^= x >> self.shift;
        }
        x
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(blocks: u64) -> Span {
        Span {
            start: 8192,
            blocks,
            bs: 4096,
        }
    }

    #[test]
    fn cover_once_visits_every_block_exactly_once_per_pass() {
        for blocks in [1u64, 2, 3, 1000, 4096, 65_537] {
            let mut g = OffsetGen::new(span(blocks), Order::CoverOnce, Rng::new(3, 0));
            for _pass in 0..2 {
                let mut seen = vec![false; blocks as usize];
                for _ in 0..blocks {
                    let off = g.next_offset();
                    let b = ((off - 8192) / 4096) as usize;
                    assert!(!seen[b], "block {b} twice in a pass of {blocks}");
                    seen[b] = true;
                }
                assert!(seen.iter().all(|&s| s));
            }
        }
    }

    #[test]
    fn cover_once_is_not_sequential() {
        let mut g = OffsetGen::new(span(1 << 16), Order::CoverOnce, Rng::new(9, 0));
        let offs: Vec<u64> = (0..1000).map(|_| g.next_offset()).collect();
        let ascending = offs.windows(2).filter(|w| w[1] == w[0] + 4096).count();
        assert!(ascending < 20, "{ascending} sequential steps");
    }

    #[test]
    fn sequential_wraps_and_uniform_stays_inside() {
        let mut g = OffsetGen::new(span(3), Order::Sequential, Rng::new(0, 0));
        let offs: Vec<u64> = (0..4).map(|_| g.next_offset()).collect();
        assert_eq!(offs, vec![8192, 12288, 16384, 8192]);
        let mut u = OffsetGen::new(span(100), Order::Uniform, Rng::new(0, 0));
        for _ in 0..10_000 {
            let o = u.next_offset();
            assert!((8192..8192 + 100 * 4096).contains(&o) && o.is_multiple_of(4096));
        }
    }
}
