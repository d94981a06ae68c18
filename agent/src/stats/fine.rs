//! The fine view of a run, kept cheaply on the hot path: bytes completed per 10 ms bucket,
//! a log2 histogram of the gaps between successive completions, and the I/Os slower than
//! [`SLOW_IO_NS`] with their offsets (a bounded few). Sustained-rate and stall analysis
//! need this resolution; per-I/O logging would cost far more.

use shared::analysis::{SlowIo, Timeline};

pub const BUCKET_NS: u64 = 10_000_000;
/// I/Os slower than this are recorded individually (up to [`SLOW_KEEP`] per interval and
/// job, [`SLOW_KEEP_RUN`] per run; all are counted).
pub const SLOW_IO_NS: u64 = 100_000_000;
const SLOW_KEEP: usize = 32;
pub const SLOW_KEEP_RUN: usize = 500;
pub const GAP_BUCKETS: usize = 32;

#[derive(Clone, Debug, Default)]
pub struct FineStats {
    /// Bytes per bucket from the interval's start.
    pub buckets: Vec<u64>,
    pub gaps: [u64; GAP_BUCKETS],
    pub slow: Vec<SlowIo>,
    pub slow_total: u64,
}

impl FineStats {
    /// `bytes` completed `rel_ns` after the interval started.
    #[inline]
    pub fn completed(&mut self, rel_ns: u64, bytes: u64) {
        let i = (rel_ns / BUCKET_NS) as usize;
        if i >= self.buckets.len() {
            self.buckets.resize(i + 1, 0);
        }
        self.buckets[i] += bytes;
    }

    /// One gap of `ns` before a round of completions, and `extra` zero gaps within it.
    #[inline]
    pub fn gap(&mut self, ns: u64, extra: u64) {
        let us = ns / 1000;
        let i = if us == 0 {
            0
        } else {
            (63 - us.leading_zeros()) as usize
        };
        self.gaps[i.min(GAP_BUCKETS - 1)] += 1;
        self.gaps[0] += extra;
    }

    #[inline]
    pub fn slow(&mut self, io: SlowIo) {
        self.slow_total += 1;
        if self.slow.len() < SLOW_KEEP {
            self.slow.push(io);
        }
    }

    pub fn merge(&mut self, other: &FineStats) {
        if other.buckets.len() > self.buckets.len() {
            self.buckets.resize(other.buckets.len(), 0);
        }
        for (a, b) in self.buckets.iter_mut().zip(&other.buckets) {
            *a += b;
        }
        for (a, b) in self.gaps.iter_mut().zip(&other.gaps) {
            *a += b;
        }
        self.slow.extend(other.slow.iter().cloned());
        self.slow_total += other.slow_total;
    }
}

/// The run's timeline, built interval by interval.
#[derive(Debug, Default)]
pub struct TimelineBuilder {
    t: Timeline,
}

impl TimelineBuilder {
    /// Appends one merged interval lasting `window_ns`.
    pub fn push(&mut self, fine: &FineStats, window_ns: u64) {
        let mut n = window_ns.div_ceil(BUCKET_NS) as usize;
        if n == 0 && fine.buckets.iter().any(|b| *b > 0) {
            n = 1;
        }
        let start = self.t.bytes.len();
        self.t.bytes.resize(start + n, 0);
        for (i, b) in fine.buckets.iter().enumerate().filter(|(_, b)| **b > 0) {
            // A completion reaped just after the boundary counts in the interval's last
            // bucket, so that intervals stay aligned with time.
            let j = (start + i).min(start + n - 1);
            self.t.bytes[j] += b;
        }
        if self.t.gaps_log2_us.len() < GAP_BUCKETS {
            self.t.gaps_log2_us.resize(GAP_BUCKETS, 0);
        }
        for (a, b) in self.t.gaps_log2_us.iter_mut().zip(&fine.gaps) {
            *a += b;
        }
        let room = SLOW_KEEP_RUN.saturating_sub(self.t.slow_ios.len());
        self.t.slow_ios.extend(fine.slow.iter().take(room).cloned());
        self.t.slow_ios_total += fine.slow_total;
    }

    pub fn build(&self) -> Timeline {
        let mut t = self.t.clone();
        t.bucket_ms = (BUCKET_NS / 1_000_000) as u32;
        while t.gaps_log2_us.last() == Some(&0) {
            t.gaps_log2_us.pop();
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_line_up_across_intervals_and_jobs() {
        let mut a = FineStats::default();
        a.completed(5_000_000, 100);
        a.completed(995_000_000, 7);
        let mut b = FineStats::default();
        b.completed(15_000_000, 50);
        b.gap(3_000_000, 2);
        a.merge(&b);
        let mut t = TimelineBuilder::default();
        t.push(&a, 1_000_000_000);
        t.push(&FineStats::default(), 1_000_000_000);
        let tl = t.build();
        assert_eq!(tl.bucket_ms, 10);
        assert_eq!(tl.bytes.len(), 200);
        assert_eq!((tl.bytes[0], tl.bytes[1], tl.bytes[99]), (100, 50, 7));
        assert_eq!(
            tl.gaps_log2_us[11], 1,
            "3 ms = 3000 µs lies in [2048, 4096)"
        );
        assert_eq!(tl.gaps_log2_us[0], 2);
    }
}
