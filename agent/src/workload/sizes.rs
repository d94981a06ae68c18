//! Draws by whole-percent shares in O(1) with no allocation per draw: a value for each
//! percent of the draws (fio's index of 100). Each I/O's length under a size mix
//! (`bssplit`) and each draw's zone under a zoned distribution come from one.

use super::rng::Rng;
use shared::bssplit::BsSplit;

/// A value for each of the 100 percents.
#[derive(Debug, Clone)]
pub struct ByPercent<T>(Box<[T; 100]>);

impl<T: Copy + Default> ByPercent<T> {
    /// `shares` (value, percent) in order; validated shares add up to 100, and any
    /// percent left over takes the last value.
    pub fn new(shares: impl IntoIterator<Item = (T, u8)>) -> Self {
        let mut table = Box::new([T::default(); 100]);
        let mut p = 0usize;
        let mut last = T::default();
        for (v, share) in shares {
            for slot in table.iter_mut().skip(p).take(usize::from(share)) {
                *slot = v;
            }
            p += usize::from(share);
            last = v;
        }
        for slot in table.iter_mut().skip(p) {
            *slot = last;
        }
        ByPercent(table)
    }

    #[inline]
    pub fn pick(&self, rng: &mut Rng) -> T {
        self.0[rng.below(100) as usize]
    }
}

/// Each I/O's length under a size mix.
pub type SizeMix = ByPercent<u64>;

/// How a job's I/O lengths vary: a split's shares (fio's `bssplit`) or a range (fio's
/// `bsrange`, [`shared::bssplit::range_size`]).
#[derive(Debug, Clone)]
pub enum Sizes {
    Mix(SizeMix),
    Range {
        min: u64,
        max: u64,
    },
    /// One size on a finer or coarser grid of offsets (fio's `blockalign`).
    Fixed(u64),
}

impl Sizes {
    /// The sizes of a validated spec, when they vary or their offsets' grid is not `bs`.
    pub fn of(spec: &shared::WorkloadSpec) -> Option<Self> {
        match (&spec.bssplit, spec.bs_max, spec.offset_grid()) {
            (Some(split), _, _) => Some(Sizes::Mix(SizeMix::of(split))),
            (None, Some(max), _) => Some(Sizes::Range { min: spec.bs, max }),
            (None, None, Some(_)) => Some(Sizes::Fixed(spec.bs)),
            (None, None, None) => None,
        }
    }

    #[inline]
    pub fn pick(&self, rng: &mut Rng) -> u64 {
        match self {
            Sizes::Mix(mix) => mix.pick(rng),
            Sizes::Range { min, max } => shared::bssplit::range_size(*min, *max, rng.below(*max)),
            Sizes::Fixed(bs) => *bs,
        }
    }
}

impl SizeMix {
    /// The mix of a validated split.
    pub fn of(split: &BsSplit) -> Self {
        ByPercent::new(split.0.iter().copied())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_come_in_their_shares() {
        let split: BsSplit = "4k/60:64k/30:1m/10".parse().expect("split");
        let mix = SizeMix::of(&split);
        let mut rng = Rng::new(3, 0);
        let n = 100_000;
        let mut counts = std::collections::BTreeMap::new();
        for _ in 0..n {
            *counts.entry(mix.pick(&mut rng)).or_insert(0u32) += 1;
        }
        for (bs, share) in [(4096u64, 0.6), (65536, 0.3), (1 << 20, 0.1)] {
            let got = f64::from(counts[&bs]) / f64::from(n);
            assert!((got - share).abs() < 0.01, "{bs}: {got}");
        }
        assert_eq!(counts.len(), 3);
    }
}
