//! Offset generators: sequential, uniform random, skewed random (zipf, pareto, normal,
//! zoned), and random cover-once; a random generator can continue sequentially for a share of its I/Os.
//!
//! Cover-once walks a bijection of `0..2^k` (k the smallest with 2^k ≥ blocks) built from
//! xor-shift and odd-multiplier rounds masked to k bits, skipping values ≥ blocks (cycle
//! walking, under 2 draws per block on average). Every block of the span is visited exactly
//! once per pass, in an order that looks random; a new pass uses a new permutation. This is
//! what fio's random map or LFSR gives, at a few nanoseconds per offset and no memory.

use super::rng::Rng;
use shared::access::{Distribution, Zone};

/// A span of whole blocks on the target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    /// First byte.
    pub start: u64,
    /// Number of blocks of `bs` bytes.
    pub blocks: u64,
    pub bs: u64,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Order {
    Sequential,
    Uniform,
    /// Random with a skewed distribution (never `Uniform`).
    Skewed(Distribution),
    CoverOnce,
}

#[derive(Clone, Debug)]
pub struct OffsetGen {
    span: Span,
    kind: Kind,
    /// Random kinds: the percentage of I/Os that continue after the previous block.
    seq_pct: u64,
    prev: u64,
}

#[derive(Clone, Debug)]
enum Kind {
    Sequential {
        next: u64,
    },
    Uniform {
        rng: Rng,
    },
    Skewed {
        rng: Rng,
        sampler: Sampler,
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
            Order::Skewed(d) => Kind::Skewed {
                rng,
                sampler: Sampler::new(&d, span.blocks, span.bs),
            },
            Order::CoverOnce => {
                let mut rng = rng;
                Kind::CoverOnce {
                    perm: Permutation::new(span.blocks, &mut rng),
                    counter: 0,
                    rng,
                }
            }
        };
        OffsetGen {
            span,
            kind,
            seq_pct: 0,
            prev: 0,
        }
    }

    /// Random kinds continue after the previous block for `pct` percent of their I/Os.
    pub fn with_seq_pct(mut self, pct: u8) -> Self {
        self.seq_pct = u64::from(pct.min(100));
        self
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
            Kind::Uniform { rng } => {
                if self.seq_pct > 0 && rng.below(100) < self.seq_pct {
                    (self.prev + 1) % self.span.blocks
                } else {
                    rng.below(self.span.blocks)
                }
            }
            Kind::Skewed { rng, sampler } => {
                if self.seq_pct > 0 && rng.below(100) < self.seq_pct {
                    (self.prev + 1) % self.span.blocks
                } else {
                    sampler.block(rng)
                }
            }
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
        self.prev = block;
        self.span.start + block * self.span.bs
    }

    /// Byte offset of the next I/O of `len` bytes (a size mix), aligned to `span.bs` and
    /// inside the span: it covers `k` blocks; a sequential one starts where the previous
    /// ended (from the span's start when it would not fit), a drawn one that would pass the
    /// end is moved back to end there, and a sequential share continues after it.
    #[inline]
    pub fn next_offset_len(&mut self, len: u64) -> u64 {
        let k = len.div_ceil(self.span.bs).max(1);
        if k == 1 {
            return self.next_offset();
        }
        let blocks = self.span.blocks;
        let k = k.min(blocks);
        let block = match &mut self.kind {
            Kind::Sequential { next } => {
                let b = if *next + k > blocks { 0 } else { *next };
                *next = if b + k >= blocks { 0 } else { b + k };
                b
            }
            _ => {
                let b = (self.next_offset() - self.span.start) / self.span.bs;
                b.min(blocks - k)
            }
        };
        self.prev = block + k - 1;
        self.span.start + block * self.span.bs
    }
}

/// Draws block numbers of a skewed distribution in O(1) per draw, with no table (any
/// span size).
#[derive(Clone, Debug)]
enum Sampler {
    Zipf(Zipf),
    /// block = blocks × (1 − u^pow), pow = ln h / ln(1 − h).
    Pareto {
        blocks: u64,
        pow: f64,
    },
    /// Around the middle, `sd` blocks of standard deviation.
    Normal {
        blocks: u64,
        sd: f64,
    },
    /// A zone `(first block, blocks)` for each percent of the accesses, then a uniform
    /// block within it.
    Zoned(super::sizes::ByPercent<(u64, u64)>),
}

/// A zoned distribution's zones over `blocks` blocks of `bs` bytes, in blocks, or why they
/// do not fit (a zone past the span, or one with accesses and no whole block). None for
/// the other distributions.
pub fn zone_blocks(d: &Distribution, blocks: u64, bs: u64) -> Option<Result<Vec<Zone>, String>> {
    let zones = match d.zones(blocks.saturating_mul(bs))? {
        Ok(z) => z,
        Err(e) => return Some(Err(e)),
    };
    let mut out = Vec::with_capacity(zones.len());
    for (
        i,
        Zone {
            access_pct,
            start,
            len,
        },
    ) in zones.into_iter().enumerate()
    {
        let (first, end) = (start / bs, (start + len) / bs);
        if access_pct > 0 && end <= first {
            return Some(Err(format!(
                "zone {} ({len} bytes from byte {start} of a {}-byte span) holds no whole block of {bs} bytes",
                i + 1,
                blocks * bs
            )));
        }
        out.push(Zone {
            access_pct,
            start: first,
            len: end.saturating_sub(first),
        });
    }
    Some(Ok(out))
}

impl Sampler {
    fn new(d: &Distribution, blocks: u64, bs: u64) -> Sampler {
        let blocks = blocks.max(1);
        if let Some(Ok(zones)) = zone_blocks(d, blocks, bs.max(1)) {
            return Sampler::Zoned(super::sizes::ByPercent::new(
                zones.iter().map(|z| ((z.start, z.len), z.access_pct)),
            ));
        }
        match *d {
            Distribution::Zipf(theta) => Sampler::Zipf(Zipf::new(blocks, theta)),
            Distribution::Pareto(h) => Sampler::Pareto {
                blocks,
                pow: h.ln() / (1.0 - h).ln(),
            },
            Distribution::Normal(pct) => Sampler::Normal {
                blocks,
                sd: blocks as f64 * pct / 100.0,
            },
            // (never built for uniform, nor for zones the plan found not to fit; a flat
            // zipf is uniform)
            Distribution::Uniform | Distribution::Zoned(_) | Distribution::ZonedAbs(_) => {
                Sampler::Zipf(Zipf::new(blocks, 1e-9))
            }
        }
    }

    #[inline]
    fn block(&self, rng: &mut Rng) -> u64 {
        match self {
            Sampler::Zipf(z) => z.sample(rng) - 1,
            Sampler::Pareto { blocks, pow } => {
                let x = *blocks as f64 * (1.0 - unit(rng).powf(*pow));
                (x as u64).min(blocks - 1)
            }
            Sampler::Normal { blocks, sd } => loop {
                // Box–Muller; draws outside the span are drawn again.
                let (u1, u2) = (1.0 - unit(rng), unit(rng));
                let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
                let x = *blocks as f64 / 2.0 + z * sd;
                if x >= 0.0 && x < *blocks as f64 {
                    break x as u64;
                }
            },
            Sampler::Zoned(zones) => {
                let (first, n) = zones.pick(rng);
                first + rng.below(n)
            }
        }
    }
}

/// A uniform draw in [0, 1).
#[inline]
fn unit(rng: &mut Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// Zipf over ranks 1..=n with exponent s by rejection-inversion (Hörmann and Derflinger,
/// 1996, as Apache Commons RNG implements it): a constant number of draws per sample on
/// average, for any n and any s > 0.
#[derive(Clone, Debug)]
struct Zipf {
    n: u64,
    s: f64,
    h_x1: f64,
    h_n: f64,
    cut: f64,
}

impl Zipf {
    fn new(n: u64, s: f64) -> Zipf {
        let h_x1 = h_integral(1.5, s) - 1.0;
        let h_n = h_integral(n as f64 + 0.5, s);
        let cut = 2.0 - h_integral_inverse(h_integral(2.5, s) - h(2.0, s), s);
        Zipf {
            n,
            s,
            h_x1,
            h_n,
            cut,
        }
    }

    #[inline]
    fn sample(&self, rng: &mut Rng) -> u64 {
        loop {
            let u = self.h_n + unit(rng) * (self.h_x1 - self.h_n);
            let x = h_integral_inverse(u, self.s);
            let k = ((x + 0.5) as u64).clamp(1, self.n);
            let kf = k as f64;
            if kf - x <= self.cut || u >= h_integral(kf + 0.5, self.s) - h(kf, self.s) {
                return k;
            }
        }
    }
}

fn h(x: f64, s: f64) -> f64 {
    (-s * x.ln()).exp()
}

fn h_integral(x: f64, s: f64) -> f64 {
    let l = x.ln();
    helper2((1.0 - s) * l) * l
}

fn h_integral_inverse(x: f64, s: f64) -> f64 {
    let t = (x * (1.0 - s)).max(-1.0);
    (helper1(t) * x).exp()
}

/// ln(1 + x) / x, exact near 0.
fn helper1(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

/// (e^x − 1) / x, exact near 0.
fn helper2(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x / 3.0 * (1.0 + 0.25 * x))
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

    /// Block numbers of `n` draws over `blocks` blocks.
    fn draws(order: Order, blocks: u64, seq_pct: u8, n: usize) -> Vec<u64> {
        let mut g = OffsetGen::new(span(blocks), order, Rng::new(11, 0)).with_seq_pct(seq_pct);
        (0..n).map(|_| (g.next_offset() - 8192) / 4096).collect()
    }

    #[test]
    fn zipf_draws_follow_the_power_law() {
        let (blocks, n, theta) = (1000u64, 400_000, 1.2f64);
        let mut hits = vec![0u64; blocks as usize];
        for b in draws(Order::Skewed(Distribution::Zipf(theta)), blocks, 0, n) {
            hits[b as usize] += 1;
        }
        let norm: f64 = (1..=blocks).map(|k| (k as f64).powf(-theta)).sum();
        // The first 20 blocks hold most of the mass: each within 3 % of its expected share
        // (or 4 standard errors), and the whole span's top and tail too.
        for (k, got) in hits.iter().take(20).enumerate() {
            let p = ((k + 1) as f64).powf(-theta) / norm;
            let want = p * n as f64;
            let tol = (0.03 * want).max(4.0 * want.sqrt());
            assert!(
                (*got as f64 - want).abs() < tol,
                "block {k}: {got} vs {want:.0}"
            );
        }
        let tail: u64 = hits[500..].iter().sum();
        let p_tail: f64 = (501..=blocks).map(|k| (k as f64).powf(-theta)).sum::<f64>() / norm;
        let want = p_tail * n as f64;
        assert!(
            (tail as f64 - want).abs() < 0.05 * want,
            "tail {tail} vs {want:.0}"
        );
    }

    #[test]
    fn zoned_draws_give_each_zone_its_share_uniformly_within_it() {
        // fio's HOWTO example, and the same zones in bytes; 10 % of the span is left over.
        let blocks = 10_000u64;
        for d in [
            Distribution::Zoned(vec![(60, 10), (30, 20), (8, 30), (2, 30)]),
            Distribution::ZonedAbs(vec![
                (60, 1000 * 4096),
                (30, 2000 * 4096),
                (8, 3000 * 4096),
                (2, 3000 * 4096),
            ]),
        ] {
            let n = 400_000;
            let got = draws(Order::Skewed(d.clone()), blocks, 0, n);
            let share = |lo: u64, hi: u64| {
                got.iter().filter(|b| (lo..hi).contains(*b)).count() as f64 / n as f64
            };
            for (lo, hi, want) in [
                (0, 1000, 0.60),
                (1000, 3000, 0.30),
                (3000, 6000, 0.08),
                (6000, 9000, 0.02),
                (9000, 10_000, 0.0),
            ] {
                let sd = (want * (1.0 - want) / n as f64).sqrt();
                assert!((share(lo, hi) - want).abs() <= 5.0 * sd, "{d}: {lo}..{hi}");
            }
            // Uniform within a zone: its halves are even.
            assert!((share(0, 500) - share(500, 1000)).abs() < 0.01, "{d}");
        }
        // A zone too small for a block is named.
        let d = Distribution::Zoned(vec![(50, 1), (50, 99)]);
        let e = zone_blocks(&d, 50, 4096)
            .expect("zoned")
            .expect_err("1 % of 50 blocks");
        assert!(
            e.contains(
                "zone 1 (2048 bytes from byte 0 of a 204800-byte span) holds no whole block"
            ),
            "{e}"
        );
    }

    #[test]
    fn sized_ios_stay_inside_the_span_and_sequential_ones_follow_each_other() {
        let (blocks, bs) = (100u64, 4096u64);
        let lens = [4096u64, 65536, 16384, 4096, 256 << 10, 8192];
        let mut g = OffsetGen::new(span(blocks), Order::Sequential, Rng::new(1, 0));
        let mut end = 8192;
        for i in 0..1000 {
            let len = lens[i % lens.len()];
            let off = g.next_offset_len(len);
            assert!(
                off >= 8192 && off + len <= 8192 + blocks * bs,
                "{off} + {len}"
            );
            assert_eq!((off - 8192) % bs, 0);
            // Where the previous ended, or back at the start when it would not fit.
            assert!(off == end || off == 8192, "{i}: {off} after {end}");
            end = off + len;
        }
        for order in [Order::Uniform, Order::Skewed(Distribution::Zipf(1.1))] {
            let mut g = OffsetGen::new(span(blocks), order, Rng::new(2, 0)).with_seq_pct(50);
            for i in 0..10_000 {
                let len = lens[i % lens.len()];
                let off = g.next_offset_len(len);
                assert!(
                    off >= 8192 && off + len <= 8192 + blocks * bs,
                    "{off} + {len}"
                );
            }
        }
    }

    #[test]
    fn pareto_gives_h_of_the_ios_to_the_first_one_minus_h_of_the_span() {
        for h in [0.8, 0.9, 0.6] {
            let blocks = 100_000u64;
            let d = draws(Order::Skewed(Distribution::Pareto(h)), blocks, 0, 200_000);
            let hot = d
                .iter()
                .filter(|b| (**b as f64) < (1.0 - h) * blocks as f64)
                .count();
            let share = hot as f64 / d.len() as f64;
            assert!((share - h).abs() < 0.01, "h {h}: {share}");
            assert!(d.iter().all(|b| *b < blocks));
        }
    }

    #[test]
    fn normal_draws_centre_on_the_middle_with_the_asked_spread() {
        let blocks = 100_000u64;
        let d = draws(Order::Skewed(Distribution::Normal(5.0)), blocks, 0, 200_000);
        let sd = 0.05 * blocks as f64;
        let mid = blocks as f64 / 2.0;
        let within = |k: f64| {
            d.iter()
                .filter(|b| ((**b as f64) - mid).abs() < k * sd)
                .count() as f64
                / d.len() as f64
        };
        assert!((within(1.0) - 0.6827).abs() < 0.01, "{}", within(1.0));
        assert!((within(2.0) - 0.9545).abs() < 0.01, "{}", within(2.0));
    }

    #[test]
    fn a_sequential_share_continues_after_the_previous_block() {
        for (order, pct) in [
            (Order::Uniform, 70u8),
            (Order::Skewed(Distribution::Zipf(0.8)), 30),
        ] {
            let blocks = 1 << 20;
            let d = draws(order.clone(), blocks, pct, 100_000);
            let seq = d.windows(2).filter(|w| w[1] == (w[0] + 1) % blocks).count();
            let share = seq as f64 / (d.len() - 1) as f64;
            assert!(
                (share - f64::from(pct) / 100.0).abs() < 0.01,
                "{order:?}: {share}"
            );
        }
    }

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
