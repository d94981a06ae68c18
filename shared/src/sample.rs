//! Per-interval samples and the whole-run summary.
//!
//! A [`Sample`] is a true per-interval figure (what happened between `start_ns` and
//! `end_ns`), not a running average. MB/s is 10^6 bytes per second, as CrystalDiskMark
//! reports it; MiB/s is given beside it.

use serde::{Deserialize, Serialize};

/// Latency of the I/Os completed in a window, submit → completion, in nanoseconds.
/// Percentiles come from a log-linear histogram (fio's layout, ≤ 0.8 % relative error).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LatencyStats {
    pub min_ns: u64,
    pub mean_ns: u64,
    pub p50_ns: u64,
    pub p90_ns: u64,
    pub p99_ns: u64,
    pub p99_9_ns: u64,
    pub p99_99_ns: u64,
    pub max_ns: u64,
}

/// One direction (read, write or trim) over a window.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DirSample {
    pub bytes: u64,
    pub ios: u64,
    /// 10^6 bytes per second.
    pub mb_s: f64,
    /// 2^20 bytes per second.
    pub mib_s: f64,
    pub iops: f64,
    pub lat: LatencyStats,
    /// Bytes in this direction since the run (after ramp) started, this window included.
    pub cum_bytes: u64,
}

impl DirSample {
    /// Nothing happened in this direction, ever (how a run without trims leaves `trim`:
    /// left out of the JSON).
    pub fn is_idle(&self) -> bool {
        self.ios == 0 && self.cum_bytes == 0
    }

    /// Adds the window that follows (see [`Sample::absorb`]); `window_ns` is the joined length.
    fn absorb(&mut self, next: &DirSample, window_ns: u64) {
        let ios = self.ios + next.ios;
        let l = &mut self.lat;
        let m = &next.lat;
        if next.ios > 0 {
            l.min_ns = if self.ios == 0 {
                m.min_ns
            } else {
                l.min_ns.min(m.min_ns)
            };
            l.mean_ns = ((u128::from(l.mean_ns) * u128::from(self.ios)
                + u128::from(m.mean_ns) * u128::from(next.ios))
                / u128::from(ios)) as u64;
            l.p50_ns = l.p50_ns.max(m.p50_ns);
            l.p90_ns = l.p90_ns.max(m.p90_ns);
            l.p99_ns = l.p99_ns.max(m.p99_ns);
            l.p99_9_ns = l.p99_9_ns.max(m.p99_9_ns);
            l.p99_99_ns = l.p99_99_ns.max(m.p99_99_ns);
            l.max_ns = l.max_ns.max(m.max_ns);
        }
        self.ios = ios;
        self.bytes += next.bytes;
        self.cum_bytes = next.cum_bytes.max(self.cum_bytes);
        *self = self.with_rates(window_ns);
    }

    /// Fills in the rates from `bytes`, `ios` and the window length.
    pub fn with_rates(mut self, window_ns: u64) -> Self {
        let secs = window_ns as f64 / 1e9;
        if secs > 0.0 {
            self.mb_s = self.bytes as f64 / 1e6 / secs;
            self.mib_s = self.bytes as f64 / (1u64 << 20) as f64 / secs;
            self.iops = self.ios as f64 / secs;
        }
        self
    }
}

/// What happened on the target in one interval.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Sample {
    /// Per-run sequence number, from 0.
    pub seq: u64,
    /// Window start and end, nanoseconds since the run (after ramp) started.
    pub start_ns: u64,
    pub end_ns: u64,
    pub read: DirSample,
    pub write: DirSample,
    /// Trims (discards), for the trim workloads.
    #[serde(default, skip_serializing_if = "DirSample::is_idle")]
    pub trim: DirSample,
    /// Lowest offset touched in the window (bytes), for speed-against-position plots.
    pub offset_lo: Option<u64>,
    /// One past the highest byte touched in the window.
    pub offset_hi: Option<u64>,
    /// The device's temperature at the end of the window, in °C, when it reports one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temp_c: Option<f64>,
    /// The step of a multi-step run (preset) this interval belongs to.
    #[serde(default)]
    pub step: u32,
    /// Per target, for a run over several targets at once (this sample is their sum).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<PartSample>,
    /// The busiest job thread's busy time over the window (on CPU or waiting for one, from
    /// schedstat), in percent: near 100 it never waited on the target, so the load generator
    /// (or the CPU it shares), not the target, set the pace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_cpu_pct: Option<f64>,
    /// An idle interval before a step (CrystalDiskMark's pause, a cache-recovery idle, the
    /// idle between passes): nothing was asked of the target, so it is no stall; charts
    /// leave it out and break their lines there.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pause: bool,
}

/// One target's share of an interval in a multi-target run.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PartSample {
    /// Index into the run's targets.
    pub target: u32,
    pub read_mb_s: f64,
    pub write_mb_s: f64,
    pub iops: f64,
    pub bytes: u64,
    pub p99_ns: u64,
    /// Each direction's bytes, I/Os and mean latency (ns): what fio's per-job logs of jobs
    /// that run at once hold. (Not read by the dashboard.)
    #[serde(default)]
    #[cfg_attr(target_arch = "wasm32", serde(skip))]
    pub dirs: [PartDir; 2],
    /// The trims', as `dirs` holds the reads' and writes'.
    #[serde(default, skip_serializing_if = "PartDir::is_idle")]
    #[cfg_attr(target_arch = "wasm32", serde(skip))]
    pub trim: PartDir,
}

/// One direction of a part's interval.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PartDir {
    pub bytes: u64,
    pub ios: u64,
    pub lat_mean_ns: u64,
}

impl PartDir {
    pub fn is_idle(&self) -> bool {
        self.ios == 0
    }

    /// This window followed by `next`: amounts add up, the mean latency is I/O-weighted.
    fn absorb(&mut self, next: &PartDir) {
        let ios = self.ios + next.ios;
        if ios > 0 {
            let sum = u128::from(self.lat_mean_ns) * u128::from(self.ios)
                + u128::from(next.lat_mean_ns) * u128::from(next.ios);
            self.lat_mean_ns = (sum / u128::from(ios)) as u64;
        }
        self.ios = ios;
        self.bytes += next.bytes;
    }
}

impl Sample {
    /// Extends this sample by the one that follows it (`next`, same step): one window from
    /// this start to `next`'s end. Bytes and I/Os add up and the rates follow from them;
    /// latency keeps the lower minimum, the I/O-weighted mean and the higher percentiles
    /// and maximum (a bound, never an invented figure); the hotter temperature.
    pub fn absorb(&mut self, next: &Sample) {
        let t_self = self.end_ns.saturating_sub(self.start_ns) as f64;
        let t_next = next.end_ns.saturating_sub(next.start_ns) as f64;
        self.end_ns = next.end_ns.max(self.end_ns);
        let window = self.end_ns.saturating_sub(self.start_ns);
        self.read.absorb(&next.read, window);
        self.write.absorb(&next.write, window);
        self.trim.absorb(&next.trim, window);
        self.offset_lo = match (self.offset_lo, next.offset_lo) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.offset_hi = self.offset_hi.max(next.offset_hi);
        self.temp_c = match (self.temp_c, next.temp_c) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        self.job_cpu_pct = match (self.job_cpu_pct, next.job_cpu_pct) {
            (Some(a), Some(b)) if t_self + t_next > 0.0 => {
                Some((a * t_self + b * t_next) / (t_self + t_next))
            }
            (a, b) => a.or(b),
        };
        // Rates times their window are amounts: the joined rate is their time-weighted mean.
        let total = (t_self + t_next).max(1.0);
        let join = |a: f64, b: f64| (a * t_self + b * t_next) / total;
        for q in &mut self.parts {
            let p = next.parts.iter().find(|p| p.target == q.target);
            let (r, w, i, p99) = p.map_or((0.0, 0.0, 0.0, 0), |p| {
                (p.read_mb_s, p.write_mb_s, p.iops, p.p99_ns)
            });
            q.read_mb_s = join(q.read_mb_s, r);
            q.write_mb_s = join(q.write_mb_s, w);
            q.iops = join(q.iops, i);
            q.bytes += p.map_or(0, |p| p.bytes);
            q.p99_ns = q.p99_ns.max(p99);
            if let Some(p) = p {
                q.dirs[0].absorb(&p.dirs[0]);
                q.dirs[1].absorb(&p.dirs[1]);
                q.trim.absorb(&p.trim);
            }
        }
        for p in &next.parts {
            if !self.parts.iter().any(|q| q.target == p.target) {
                let mut p = p.clone();
                p.read_mb_s = join(0.0, p.read_mb_s);
                p.write_mb_s = join(0.0, p.write_mb_s);
                p.iops = join(0.0, p.iops);
                self.parts.push(p);
            }
        }
    }

    /// Whether `next` may merge into this sample: the same step, and both a pause or
    /// neither (a pause and the step after it share the step index).
    pub fn joins(&self, next: &Sample) -> bool {
        self.step == next.step && self.pause == next.pause
    }

    /// Halves a series: neighbours of the same step merged pairwise ([`Sample::absorb`]),
    /// the same bytes and time in half the points (bounded views of long runs).
    /// In place: the vector keeps its capacity (a bounded view never reallocates).
    pub fn merge_neighbours(mut samples: Vec<Sample>) -> Vec<Sample> {
        // Positions below `w` are merged results, `w..r` spent, `r..` still to read.
        let (mut w, mut r) = (0, 0);
        while r < samples.len() {
            samples.swap(w, r);
            let pair = samples.get(r + 1).is_some_and(|b| samples[w].joins(b));
            if pair {
                let (done, rest) = samples.split_at_mut(r + 1);
                done[w].absorb(&rest[0]);
                r += 2;
            } else {
                r += 1;
            }
            w += 1;
        }
        samples.truncate(w);
        samples
    }

    /// Bytes read, written and trimmed.
    pub fn total_bytes(&self) -> u64 {
        self.read.bytes + self.write.bytes + self.trim.bytes
    }

    /// I/Os read, written and trimmed.
    pub fn total_ios(&self) -> u64 {
        self.read.ios + self.write.ios + self.trim.ios
    }

    pub fn total_mb_s(&self) -> f64 {
        self.read.mb_s + self.write.mb_s + self.trim.mb_s
    }

    pub fn total_iops(&self) -> f64 {
        self.read.iops + self.write.iops + self.trim.iops
    }
}

/// The whole run: the same fields as a sample, over the measured time.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RunSummary {
    /// Measured time (ramp excluded), nanoseconds.
    pub duration_ns: u64,
    pub read: DirSample,
    pub write: DirSample,
    /// Trims (discards), for the trim workloads.
    #[serde(default, skip_serializing_if = "DirSample::is_idle")]
    pub trim: DirSample,
    pub samples: u64,
    /// Time spent in the final fsync (included in `duration_ns`), when `end_fsync` was set.
    pub fsync_ns: Option<u64>,
    /// The flushes made during the run (`flush`: fsync or fdatasync every N writes): how
    /// many (`ios`, `iops` per second), their latency; `bytes` is 0. `None` without flushes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flush: Option<DirSample>,
}

/// Non-empty buckets of a latency histogram, for exact re-aggregation and plotting.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct HistogramDump {
    /// How buckets are laid out, e.g. `fio plat: 64 buckets per power of two, 29 groups`.
    pub layout: String,
    /// Relative error bound of a value read back from its bucket.
    pub max_relative_error: f64,
    pub read: Vec<HistBucket>,
    pub write: Vec<HistBucket>,
    /// The trims' latencies.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trim: Vec<HistBucket>,
    /// The flushes' latencies (`RunSummary::flush`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flush: Vec<HistBucket>,
}

/// One non-empty bucket: its index in the layout, its lower bound and representative
/// (midpoint) value in ns, and how many I/Os fell in it.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct HistBucket {
    pub index: u32,
    pub lo_ns: u64,
    pub ns: u64,
    pub count: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(seq: u64, step: u32) -> Sample {
        let mut s = Sample {
            seq,
            start_ns: seq * 100,
            end_ns: (seq + 1) * 100,
            step,
            ..Sample::default()
        };
        s.write.bytes = seq + 1;
        s.write.ios = 1;
        s
    }

    /// Pairs within a step merge, a step's odd one out stays alone, nothing is lost, and
    /// the vector is the same allocation.
    #[test]
    fn merging_neighbours_halves_a_series_in_place_without_crossing_steps() {
        let steps = [0, 0, 0, 1, 1, 1, 1, 2];
        let mut v = Vec::with_capacity(16);
        v.extend(
            steps
                .iter()
                .enumerate()
                .map(|(i, &st)| sample(i as u64, st)),
        );
        let before = v.as_ptr();
        let out = Sample::merge_neighbours(v);
        assert_eq!(out.as_ptr(), before);
        assert_eq!(out.capacity(), 16);
        let shape: Vec<(u64, u64, u32, u64)> = out
            .iter()
            .map(|s| (s.start_ns, s.end_ns, s.step, s.write.ios))
            .collect();
        assert_eq!(
            shape,
            [
                (0, 200, 0, 2),
                (200, 300, 0, 1),
                (300, 500, 1, 2),
                (500, 700, 1, 2),
                (700, 800, 2, 1)
            ]
        );
        let bytes: u64 = out.iter().map(|s| s.write.bytes).sum();
        assert_eq!(bytes, (1..=8).sum::<u64>());
        assert!(Sample::merge_neighbours(Vec::new()).is_empty());
    }
}
