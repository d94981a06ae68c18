//! A run's samples, bounded: every sample up to [`SAMPLE_CAP`]; past that, neighbouring
//! samples of the same step merge ([`Sample::absorb`]: bytes and I/Os add up, latency keeps
//! its bounds) and each kept sample covers twice as many intervals. Memory stays flat at any
//! run length; a run shorter than the cap keeps every sample as it was. The exact samples
//! are stored (SQLite in `serve`) or streamed (the CLI's `--json`, `--csv`) as they come.

use shared::Sample;

/// Samples kept in memory for the report's analyses (about 0.8 MiB).
pub const SAMPLE_CAP: usize = 2048;

#[derive(Debug)]
pub struct SampleSeries {
    kept: Vec<Sample>,
    /// The sample being filled, and how many intervals it holds.
    pending: Option<(Sample, u64)>,
    /// Intervals per kept sample (a power of two).
    per: u64,
    cap: usize,
    count: u64,
}

impl Default for SampleSeries {
    fn default() -> Self {
        SampleSeries::new(SAMPLE_CAP)
    }
}

impl SampleSeries {
    pub fn new(cap: usize) -> Self {
        // Reserved, not touched: the pages count once samples fill them, and the series
        // never reallocates (merging is in place).
        SampleSeries {
            kept: Vec::with_capacity(cap.max(2)),
            pending: None,
            per: 1,
            cap: cap.max(2),
            count: 0,
        }
    }

    /// Intervals seen (not merged: the run's sample count).
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Intervals per kept sample; 1 while nothing was merged.
    pub fn per(&self) -> u64 {
        self.per
    }

    pub fn push(&mut self, s: Sample) {
        self.count += 1;
        match &mut self.pending {
            Some((p, n)) if p.joins(&s) => {
                p.absorb(&s);
                *n += 1;
            }
            _ => {
                self.flush();
                self.pending = Some((s, 1));
            }
        }
        if self.pending.as_ref().is_some_and(|(_, n)| *n >= self.per) {
            self.flush();
        }
    }

    fn flush(&mut self) {
        if let Some((p, _)) = self.pending.take() {
            self.kept.push(p);
            if self.kept.len() >= self.cap {
                self.compact();
            }
        }
    }

    /// Merges neighbours of the same step pairwise; each kept sample then covers twice the
    /// intervals.
    fn compact(&mut self) {
        self.kept = Sample::merge_neighbours(std::mem::take(&mut self.kept));
        self.per *= 2;
    }

    /// The kept samples, in order.
    pub fn into_vec(mut self) -> Vec<Sample> {
        self.flush();
        self.kept
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(seq: u64, bytes: u64, step: u32) -> Sample {
        let mut s = Sample {
            seq,
            start_ns: seq * 100_000_000,
            end_ns: (seq + 1) * 100_000_000,
            step,
            ..Sample::default()
        };
        s.write.bytes = bytes;
        s.write.ios = bytes / 4096;
        s.write.cum_bytes = (seq + 1) * bytes;
        s.write = s.write.with_rates(100_000_000);
        s
    }

    #[test]
    fn short_runs_keep_every_sample_unchanged() {
        let mut s = SampleSeries::new(16);
        let all: Vec<Sample> = (0..15).map(|i| sample(i, 4096 * (i + 1), 0)).collect();
        for x in &all {
            s.push(x.clone());
        }
        assert_eq!(s.count(), 15);
        assert_eq!(s.into_vec(), all);
    }

    #[test]
    fn long_runs_stay_bounded_and_keep_the_totals() {
        let mut s = SampleSeries::new(16);
        let n = 10_000u64;
        for i in 0..n {
            s.push(sample(i, 4096 * (1 + i % 7), u32::from(i >= 5_000)));
        }
        assert_eq!(s.count(), n);
        let per = s.per();
        let kept = s.into_vec();
        assert!(kept.len() <= 16 + 2, "{} kept", kept.len());
        assert!(per >= n / 16, "each kept sample covers {per} intervals");
        let bytes: u64 = kept.iter().map(|k| k.write.bytes).sum();
        assert_eq!(bytes, (0..n).map(|i| 4096 * (1 + i % 7)).sum::<u64>());
        assert_eq!(kept.last().map(|k| k.end_ns), Some(n * 100_000_000));
        // Windows tile the run and never straddle the step boundary.
        for w in kept.windows(2) {
            assert_eq!(w[0].end_ns, w[1].start_ns);
        }
        let boundary = kept.iter().position(|k| k.step == 1).unwrap();
        assert_eq!(kept[boundary].start_ns, 5_000 * 100_000_000);
        // MB/s of a merged window is its bytes over its time.
        for k in &kept {
            let secs = (k.end_ns - k.start_ns) as f64 / 1e9;
            assert!((k.write.mb_s - k.write.bytes as f64 / 1e6 / secs).abs() < 1e-6);
        }
    }
}

/// Readings kept at most `cap` at a time: past it, every other one is dropped and only every
/// `stride`-th new one kept (temperature every 100 ms over a day stays a few thousand points).
#[derive(Debug)]
pub struct Decimated<T> {
    kept: Vec<T>,
    stride: u64,
    seen: u64,
    cap: usize,
}

/// Temperature readings kept for the thermal classification.
pub const TEMP_CAP: usize = 4096;

impl<T> Default for Decimated<T> {
    fn default() -> Self {
        Decimated::new(TEMP_CAP)
    }
}

impl<T> Decimated<T> {
    pub fn new(cap: usize) -> Self {
        Decimated {
            kept: Vec::new(),
            stride: 1,
            seen: 0,
            cap: cap.max(2),
        }
    }

    pub fn push(&mut self, x: T) {
        let keep = self.seen.is_multiple_of(self.stride);
        self.seen += 1;
        if !keep {
            return;
        }
        self.kept.push(x);
        if self.kept.len() >= self.cap {
            let mut i = 0;
            self.kept.retain(|_| {
                i += 1;
                i % 2 == 1
            });
            self.stride *= 2;
        }
    }

    pub fn into_vec(self) -> Vec<T> {
        self.kept
    }
}
