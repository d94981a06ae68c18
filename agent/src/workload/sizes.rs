//! Each I/O's length under a size mix (`bssplit`): a length for each percent of the I/Os,
//! drawn in O(1) with no allocation.

use super::rng::Rng;
use shared::bssplit::BsSplit;

#[derive(Debug, Clone)]
pub struct SizeMix {
    by_percent: Box<[u32; 100]>,
}

impl SizeMix {
    /// The mix of a validated split (its shares add up to 100).
    pub fn new(split: &BsSplit) -> Self {
        let mut by_percent = Box::new([0u32; 100]);
        let mut p = 0usize;
        for &(bs, share) in &split.0 {
            let n = usize::from(share);
            for slot in by_percent.iter_mut().skip(p).take(n) {
                *slot = bs as u32;
            }
            p += n;
        }
        // (a split that does not fill 100 % was refused; what is left takes the last size)
        let last = split.0.last().map_or(0, |&(bs, _)| bs as u32);
        for slot in by_percent.iter_mut().skip(p) {
            *slot = last;
        }
        SizeMix { by_percent }
    }

    #[inline]
    pub fn pick(&self, rng: &mut Rng) -> u64 {
        u64::from(self.by_percent[rng.below(100) as usize])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_come_in_their_shares() {
        let split: BsSplit = "4k/60:64k/30:1m/10".parse().expect("split");
        let mix = SizeMix::new(&split);
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
