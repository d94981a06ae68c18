//! The fine view of a run, kept cheaply on the hot path: bytes completed per 10 ms bucket,
//! a log2 histogram of the gaps between successive completions, and the I/Os slower than
//! [`SLOW_IO_NS`] with their offsets (a bounded few). Sustained-rate and stall analysis
//! need this resolution; per-I/O logging would cost far more.

use shared::analysis::{SlowIo, Timeline};

pub const BUCKET_NS: u64 = 10_000_000;
/// I/Os slower than this are recorded individually (up to `SLOW_KEEP` per interval and
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

/// Buckets a timeline keeps in memory: 10 ms for the first 10.9 minutes; past that,
/// neighbours merge and the bucket doubles, so a run of any length holds at most this many
/// (512 KiB). The exact 10 ms buckets go to a [`Spill`] as they are made.
pub const TIMELINE_CAP: usize = 1 << 16;

/// Bytes per time bucket, bounded: at most `cap` buckets, each `BUCKET_NS` × 2^k long.
#[derive(Clone, Debug)]
pub struct FineSeries {
    bytes: Vec<u64>,
    bucket_ns: u64,
    cap: usize,
}

impl Default for FineSeries {
    fn default() -> Self {
        FineSeries::new(TIMELINE_CAP)
    }
}

impl FineSeries {
    pub fn new(cap: usize) -> Self {
        // Reserved, not touched (see `SampleSeries::new`); coarsening is in place.
        FineSeries {
            bytes: Vec::with_capacity(cap.max(2)),
            bucket_ns: BUCKET_NS,
            cap: cap.max(2),
        }
    }

    pub fn bucket_ns(&self) -> u64 {
        self.bucket_ns
    }

    pub fn bytes(&self) -> &[u64] {
        &self.bytes
    }

    pub fn into_bytes(self) -> Vec<u64> {
        self.bytes
    }

    /// Time covered so far.
    pub fn len_ns(&self) -> u64 {
        self.bytes.len() as u64 * self.bucket_ns
    }

    /// Whether neighbouring buckets were merged (the run outgrew the cap).
    pub fn coarsened(&self) -> bool {
        self.bucket_ns > BUCKET_NS
    }

    fn coarsen(&mut self) {
        let n = self.bytes.len().div_ceil(2);
        for i in 0..n {
            let pair = self.bytes[2 * i] + self.bytes.get(2 * i + 1).copied().unwrap_or(0);
            self.bytes[i] = pair;
        }
        self.bytes.truncate(n);
        self.bucket_ns *= 2;
    }

    /// Covers the time up to `end_ns` (zeros where nothing was added).
    pub fn extend_to(&mut self, end_ns: u64) {
        while end_ns.div_ceil(self.bucket_ns) as usize > self.cap {
            self.coarsen();
        }
        let n = end_ns.div_ceil(self.bucket_ns) as usize;
        if n > self.bytes.len() {
            self.bytes.resize(n, 0);
        }
    }

    /// `bytes` completed at `at_ns`.
    pub fn add(&mut self, at_ns: u64, bytes: u64) {
        self.extend_to(at_ns + 1);
        let i = (at_ns / self.bucket_ns) as usize;
        self.bytes[i] += bytes;
    }

    /// Adds a series of buckets of `bucket_ns` that starts at `at_ns`.
    pub fn add_series(&mut self, at_ns: u64, bucket_ns: u64, src: &[u64]) {
        while self.bucket_ns < bucket_ns {
            self.coarsen();
        }
        self.extend_to(at_ns + src.len() as u64 * bucket_ns);
        for (i, b) in src.iter().enumerate().filter(|(_, b)| **b > 0) {
            self.add(at_ns + i as u64 * bucket_ns, *b);
        }
    }
}

/// The exact 10 ms buckets of a run, in an unnamed temporary file (gone with the process;
/// in [`set_spill_dir`]'s directory):
/// what the bounded [`FineSeries`] merged, for the detectors that need every bucket and
/// for export. Appends are buffered; a write error drops the spill (the run goes on and its
/// detectors use the bounded series).
#[derive(Debug)]
pub struct Spill {
    out: std::io::BufWriter<std::fs::File>,
    len: u64,
}

/// Where spills go (`serve`: its data directory; the CLI: the directory of its output
/// files); the system's temporary directory when unset. Set once, before runs.
static SPILL_DIR: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();

/// Puts every later spill in `dir` (the first call wins): a day of 10 ms buckets is 69 MB,
/// better on the disk the agent writes to than in a `/tmp` that may be RAM.
pub fn set_spill_dir(dir: &std::path::Path) {
    let _ = SPILL_DIR.set(dir.to_path_buf());
}

impl Spill {
    pub fn new() -> Option<Spill> {
        let f = match SPILL_DIR.get() {
            Some(d) => tempfile::tempfile_in(d),
            None => tempfile::tempfile(),
        }
        .ok()?;
        Some(Spill {
            out: std::io::BufWriter::with_capacity(64 * 1024, f),
            len: 0,
        })
    }

    /// Buckets written so far.
    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn push(&mut self, bytes: u64) -> std::io::Result<()> {
        use std::io::Write;
        self.out.write_all(&bytes.to_le_bytes())?;
        self.len += 1;
        Ok(())
    }

    /// Zero buckets up to `len` buckets in all.
    pub fn pad_to(&mut self, len: u64) -> std::io::Result<()> {
        while self.len < len {
            self.push(0)?;
        }
        Ok(())
    }

    /// Appends every bucket of `other`.
    pub fn append(&mut self, other: &mut Spill) -> std::io::Result<()> {
        other.flush()?;
        let mut failed = None;
        for b in other.reader(0, other.len) {
            match b {
                Ok(b) => self.push(b)?,
                Err(e) => failed = Some(e),
            }
        }
        failed.map_or(Ok(()), Err)
    }

    /// Makes every bucket pushed so far readable.
    pub fn flush(&mut self) -> std::io::Result<()> {
        use std::io::Write;
        self.out.flush()
    }

    /// Buckets `[from, to)` (of those flushed) read back in order, 64 KiB at a time with
    /// positioned reads (the file's own offset stays the writer's).
    pub fn reader(&self, from: u64, to: u64) -> impl Iterator<Item = std::io::Result<u64>> + '_ {
        use std::os::unix::fs::FileExt;
        let f = self.out.get_ref();
        let to = to.min(self.len);
        let mut at = from.min(to);
        let mut buf = vec![0u8; 64 * 1024];
        let (mut pos, mut filled) = (0usize, 0usize);
        std::iter::from_fn(move || {
            if pos == filled {
                if at >= to {
                    return None;
                }
                let want = ((to - at) * 8).min(buf.len() as u64) as usize;
                if let Err(e) = f.read_exact_at(&mut buf[..want], at * 8) {
                    at = to;
                    pos = 0;
                    filled = 0;
                    return Some(Err(e));
                }
                at += want as u64 / 8;
                pos = 0;
                filled = want;
            }
            let mut b = [0u8; 8];
            b.copy_from_slice(&buf[pos..pos + 8]);
            pos += 8;
            Some(Ok(u64::from_le_bytes(b)))
        })
    }
}

/// The run's timeline, built interval by interval: bounded in memory ([`FineSeries`]),
/// exact on disk ([`Spill`], when a temporary file could be made).
#[derive(Debug, Default)]
pub struct TimelineBuilder {
    t: Timeline,
    series: FineSeries,
    /// 10 ms buckets pushed so far (the spill's length when there is one).
    fine_len: u64,
    spill: Option<Spill>,
}

impl TimelineBuilder {
    /// A builder that also keeps every 10 ms bucket in a temporary file.
    pub fn spilling() -> Self {
        TimelineBuilder {
            spill: Spill::new(),
            ..Default::default()
        }
    }

    /// Appends one merged interval lasting `window_ns`.
    pub fn push(&mut self, fine: &FineStats, window_ns: u64) {
        let mut n = window_ns.div_ceil(BUCKET_NS) as usize;
        if n == 0 && fine.buckets.iter().any(|b| *b > 0) {
            n = 1;
        }
        let start = self.fine_len;
        let mut exact = [0u64; 128];
        let small = n <= exact.len();
        self.series.extend_to((start + n as u64) * BUCKET_NS);
        for (i, b) in fine.buckets.iter().enumerate().filter(|(_, b)| **b > 0) {
            // A completion reaped just after the boundary counts in the interval's last
            // bucket, so that intervals stay aligned with time.
            let j = i.min(n - 1);
            self.series.add((start + j as u64) * BUCKET_NS, *b);
            if small {
                exact[j] += b;
            }
        }
        if let Some(sp) = &mut self.spill {
            let ok = if small {
                exact[..n].iter().try_for_each(|b| sp.push(*b))
            } else {
                (0..n).try_for_each(|j| {
                    let last = j == n - 1;
                    let b: u64 = if last {
                        fine.buckets.iter().skip(j).sum()
                    } else {
                        fine.buckets.get(j).copied().unwrap_or(0)
                    };
                    sp.push(b)
                })
            };
            if ok.is_err() {
                self.spill = None;
            }
        }
        self.fine_len += n as u64;
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

    /// The timeline, its buckets moved rather than copied (a long run's are 512 KiB). Take
    /// the spill first.
    pub fn build(self) -> Timeline {
        let bucket_ms = (self.series.bucket_ns() / 1_000_000) as u32;
        let mut t = Timeline {
            bytes: self.series.into_bytes(),
            bucket_ms,
            ..self.t
        };
        while t.gaps_log2_us.last() == Some(&0) {
            t.gaps_log2_us.pop();
        }
        t
    }

    /// The exact buckets, when they were kept.
    pub fn take_spill(&mut self) -> Option<Spill> {
        self.spill.take()
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

    #[test]
    fn a_timeline_past_its_cap_merges_neighbours_and_the_spill_keeps_every_bucket() {
        let mut t = TimelineBuilder {
            series: FineSeries::new(64),
            ..TimelineBuilder::spilling()
        };
        let mut exact = Vec::new();
        for i in 0..50u64 {
            let mut f = FineStats::default();
            for j in 0..10u64 {
                f.completed(j * BUCKET_NS + 1, i * 10 + j);
                exact.push(i * 10 + j);
            }
            t.push(&f, 10 * BUCKET_NS);
        }
        let mut sp = t.take_spill().expect("spill");
        let tl = t.build();
        assert!(tl.bytes.len() <= 64, "{} buckets", tl.bytes.len());
        assert_eq!(
            tl.bucket_ms, 80,
            "500 buckets of 10 ms fit 64 once merged three times"
        );
        assert_eq!(tl.bytes.iter().sum::<u64>(), exact.iter().sum::<u64>());
        assert_eq!(tl.bytes[0], exact[..8].iter().sum::<u64>());
        sp.flush().expect("flush");
        assert_eq!(sp.len(), 500);
        let back: Vec<u64> = sp.reader(0, 500).map(|b| b.expect("read")).collect();
        assert_eq!(back, exact);
        // Reading does not move where the next bucket is written.
        sp.push(7).expect("push");
        sp.flush().expect("flush");
        let tail: Vec<u64> = sp.reader(498, 501).map(|b| b.expect("read")).collect();
        assert_eq!(tail, vec![exact[498], exact[499], 7]);
    }
}
