//! Log-linear latency histogram with fio's bucket layout.
//!
//! Layout (fio `stat.h`, `FIO_IO_U_PLAT_BITS = 6`, `FIO_IO_U_PLAT_GROUP_NR = 29`): values
//! below 128 ns have a bucket each; above, every power of two is split into 64 equal
//! buckets, for 29 groups (1856 buckets, top group starting at 2^33 ns ≈ 8.6 s; larger values
//! land in the last bucket, while the exact maximum is kept beside the histogram).
//!
//! Error bound: a bucket in the group starting at 2^k ns has width 2^(k-6), so a value read
//! back as its bucket's midpoint is off by at most half a width: 2^(k-7) / 2^k = 1/128 ≈
//! 0.78 % of the value. Because the layout equals fio's, percentiles are comparable with
//! fio's `json+` `bins` bucket for bucket.
//!
//! Recording is one index computation (a leading-zeros count and two shifts) and one
//! increment; no allocation after construction.

pub const PLAT_BITS: u32 = 6;
pub const PLAT_VAL: u64 = 1 << PLAT_BITS;
pub const PLAT_GROUP_NR: usize = 29;
pub const PLAT_NR: usize = PLAT_GROUP_NR * PLAT_VAL as usize;
/// Relative error of a value read back from its bucket (1/128).
pub const MAX_RELATIVE_ERROR: f64 = 1.0 / 128.0;
pub const LAYOUT: &str = "fio plat: 64 buckets per power of two, 29 groups, values in ns";

/// Bucket index of a value (fio's `plat_val_to_idx`).
#[inline]
pub fn bucket_index(value: u64) -> usize {
    if value < PLAT_VAL << 1 {
        return value as usize;
    }
    let msb = 63 - value.leading_zeros();
    let error_bits = msb - PLAT_BITS;
    let base = ((error_bits + 1) << PLAT_BITS) as usize;
    let offset = ((PLAT_VAL - 1) & (value >> error_bits)) as usize;
    (base + offset).min(PLAT_NR - 1)
}

/// Lowest value that maps to bucket `idx`.
pub fn bucket_lo(idx: usize) -> u64 {
    if idx < (PLAT_VAL << 1) as usize {
        return idx as u64;
    }
    let error_bits = (idx >> PLAT_BITS) as u32 - 1;
    let base = 1u64 << (error_bits + PLAT_BITS);
    base + (idx as u64 % PLAT_VAL) * (1u64 << error_bits)
}

/// Representative (midpoint) value of bucket `idx` (fio's `plat_idx_to_val`).
pub fn bucket_value(idx: usize) -> u64 {
    if idx < (PLAT_VAL << 1) as usize {
        return idx as u64;
    }
    let error_bits = (idx >> PLAT_BITS) as u32 - 1;
    bucket_lo(idx) + (1u64 << error_bits) / 2
}

/// Counts per bucket plus exact count, sum, min and max.
#[derive(Clone, Debug)]
pub struct Histogram {
    buckets: Box<[u64; PLAT_NR]>,
    count: u64,
    sum: u128,
    min: u64,
    max: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            buckets: Box::new([0; PLAT_NR]),
            count: 0,
            sum: 0,
            min: u64::MAX,
            max: 0,
        }
    }
}

impl Histogram {
    #[inline]
    pub fn record(&mut self, value: u64) {
        self.buckets[bucket_index(value)] += 1;
        self.count += 1;
        self.sum += u128::from(value);
        self.min = self.min.min(value);
        self.max = self.max.max(value);
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn min(&self) -> Option<u64> {
        (self.count > 0).then_some(self.min)
    }

    pub fn max(&self) -> Option<u64> {
        (self.count > 0).then_some(self.max)
    }

    pub fn mean(&self) -> Option<u64> {
        (self.count > 0).then(|| (self.sum / u128::from(self.count)) as u64)
    }

    /// Adds every count of `other` into `self`.
    pub fn merge(&mut self, other: &Histogram) {
        if other.count == 0 {
            return;
        }
        for (a, b) in self.buckets.iter_mut().zip(other.buckets.iter()) {
            *a += b;
        }
        self.count += other.count;
        self.sum += other.sum;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }

    /// Rebuilds a histogram from its non-empty buckets and the exact min, mean and max that
    /// were measured with it (for merging the histograms of a run's steps).
    pub fn from_buckets(buckets: &[(usize, u64)], min: u64, mean: u64, max: u64) -> Histogram {
        let mut h = Histogram::default();
        for &(i, n) in buckets {
            if i < PLAT_NR {
                h.buckets[i] += n;
                h.count += n;
            }
        }
        if h.count > 0 {
            h.sum = u128::from(mean) * u128::from(h.count);
            h.min = min;
            h.max = max;
        }
        h
    }

    /// Empties the histogram, keeping its allocation.
    pub fn clear(&mut self) {
        if self.count > 0 {
            self.buckets.fill(0);
        }
        self.count = 0;
        self.sum = 0;
        self.min = u64::MAX;
        self.max = 0;
    }

    /// The value below which `pct` % of the recorded values fall, read back as the midpoint
    /// of its bucket (fio's method) and clamped to the exact min and max.
    pub fn percentile(&self, pct: f64) -> Option<u64> {
        if self.count == 0 {
            return None;
        }
        let rank = ((pct / 100.0) * self.count as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (idx, &n) in self.buckets.iter().enumerate() {
            seen += n;
            if seen >= rank {
                return Some(bucket_value(idx).clamp(self.min, self.max));
            }
        }
        Some(self.max)
    }

    /// Non-empty buckets as `(index, count)`.
    pub fn nonzero(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        self.buckets
            .iter()
            .enumerate()
            .filter(|(_, &n)| n > 0)
            .map(|(i, &n)| (i, n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_and_value_are_consistent() {
        for idx in 0..PLAT_NR - 1 {
            let lo = bucket_lo(idx);
            assert_eq!(bucket_index(lo), idx, "lo of {idx}");
            let next = bucket_lo(idx + 1);
            assert_eq!(bucket_index(next - 1), idx, "hi of {idx}");
            let mid = bucket_value(idx);
            assert!(lo <= mid && mid < next);
        }
        // fio's figures: 128 ns starts the first split group; the last bucket saturates.
        assert_eq!(bucket_index(128), 128);
        assert_eq!(bucket_index(u64::MAX), PLAT_NR - 1);
    }

    #[test]
    fn error_bound_holds_for_every_value_range() {
        let mut v = 1u64;
        while v < 1 << 33 {
            let back = bucket_value(bucket_index(v));
            let err = (back as f64 - v as f64).abs() / v as f64;
            assert!(
                err <= MAX_RELATIVE_ERROR,
                "value {v} read back as {back} ({err})"
            );
            v = v * 9 / 8 + 1;
        }
    }

    /// Percentiles against exact percentiles of random data (sorted), within the bound.
    #[test]
    fn percentiles_match_exact_within_bound() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for spread in [1_000u64, 100_000, 50_000_000] {
            let mut values: Vec<u64> = (0..200_000)
                .map(|_| {
                    // log-uniform-ish latencies with a long tail
                    let r = next();
                    50 + (r % spread) * (1 + (r >> 60)) / 4
                })
                .collect();
            let mut h = Histogram::default();
            values.iter().for_each(|&v| h.record(v));
            values.sort_unstable();
            for pct in [1.0, 50.0, 90.0, 99.0, 99.9, 99.99, 100.0] {
                let rank = ((pct / 100.0) * values.len() as f64).ceil() as usize;
                let exact = values[rank.max(1) - 1];
                let got = h.percentile(pct).expect("non-empty");
                let err = (got as f64 - exact as f64).abs() / exact as f64;
                assert!(
                    err <= MAX_RELATIVE_ERROR,
                    "p{pct}: exact {exact}, histogram {got}, error {err}"
                );
            }
            assert_eq!(h.min(), Some(values[0]));
            assert_eq!(h.max(), values.last().copied());
        }
    }

    #[test]
    fn merge_adds_up() {
        let mut a = Histogram::default();
        let mut b = Histogram::default();
        (1..1000).for_each(|v| a.record(v * 1000));
        (1000..2000).for_each(|v| b.record(v * 1000));
        a.merge(&b);
        assert_eq!(a.count(), 1999);
        assert_eq!(a.min(), Some(1000));
        assert_eq!(a.max(), Some(1_999_000));
        a.clear();
        assert_eq!(a.count(), 0);
        assert_eq!(a.percentile(50.0), None);
    }
}
