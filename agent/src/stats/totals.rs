//! Sums over several reports or samples: a preset's steps into one run, a multi-target
//! run's targets into one sample per interval.

use super::Histogram;
use shared::{RunReport, RunSummary, Sample};

/// Whole-run totals merged from several reports (steps of a preset, targets of a
/// multi-target run): bytes and the latency histograms rebuilt from their buckets.
#[derive(Default)]
pub struct Totals {
    read: Histogram,
    write: Histogram,
    trim: Histogram,
    flush: Histogram,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub trim_bytes: u64,
}

impl Totals {
    pub fn add(&mut self, r: &RunReport) {
        self.add_summary(&r.summary, &r.histogram);
    }

    /// Adds one summary and its histogram (a report's, or a step's).
    pub fn add_summary(&mut self, s: &RunSummary, h: &shared::HistogramDump) {
        let hist = |b: &[shared::sample::HistBucket], d: &shared::DirSample| {
            let buckets: Vec<(usize, u64)> =
                b.iter().map(|x| (x.index as usize, x.count)).collect();
            Histogram::from_buckets(&buckets, d.lat.min_ns, d.lat.mean_ns, d.lat.max_ns)
        };
        self.read.merge(&hist(&h.read, &s.read));
        self.write.merge(&hist(&h.write, &s.write));
        self.trim.merge(&hist(&h.trim, &s.trim));
        if let Some(f) = &s.flush {
            self.flush.merge(&hist(&h.flush, f));
        }
        self.read_bytes += s.read.bytes;
        self.write_bytes += s.write.bytes;
        self.trim_bytes += s.trim.bytes;
    }

    /// Sets `report`'s summary and histogram to these totals over `duration_ns`.
    pub fn apply(
        &self,
        report: &mut RunReport,
        duration_ns: u64,
        samples: u64,
        fsync_ns: Option<u64>,
    ) {
        let (summary, histogram) = self.summary(duration_ns, samples, fsync_ns);
        report.summary = summary;
        report.histogram.read = histogram.read;
        report.histogram.write = histogram.write;
        report.histogram.trim = histogram.trim;
        report.histogram.flush = histogram.flush;
    }

    /// These totals as a summary over `duration_ns` and their histogram's buckets.
    pub fn summary(
        &self,
        duration_ns: u64,
        samples: u64,
        fsync_ns: Option<u64>,
    ) -> (RunSummary, shared::HistogramDump) {
        let dir = |h: &Histogram, bytes: u64| {
            shared::DirSample {
                bytes,
                ios: h.count(),
                lat: super::merge::latency_stats(h),
                cum_bytes: bytes,
                ..shared::DirSample::default()
            }
            .with_rates(duration_ns)
        };
        let summary = RunSummary {
            duration_ns,
            read: dir(&self.read, self.read_bytes),
            write: dir(&self.write, self.write_bytes),
            trim: dir(&self.trim, self.trim_bytes),
            samples,
            fsync_ns,
            flush: (self.flush.count() > 0).then(|| dir(&self.flush, 0)),
        };
        let histogram = shared::HistogramDump {
            read: super::merge::dump(&self.read),
            write: super::merge::dump(&self.write),
            trim: super::merge::dump(&self.trim),
            flush: super::merge::dump(&self.flush),
            ..shared::HistogramDump::default()
        };
        (summary, histogram)
    }
}

fn part_dir(d: &shared::DirSample) -> shared::sample::PartDir {
    shared::sample::PartDir {
        bytes: d.bytes,
        ios: d.ios,
        lat_mean_ns: d.lat.mean_ns,
    }
}

/// The sum of the targets' samples of interval `seq`.
pub fn sum_samples(seq: u64, row: &[Option<Sample>]) -> Sample {
    let mut out = Sample {
        seq,
        ..Sample::default()
    };
    let parts: Vec<&Sample> = row.iter().flatten().collect();
    out.start_ns = parts.iter().map(|s| s.start_ns).min().unwrap_or(0);
    out.end_ns = parts.iter().map(|s| s.end_ns).max().unwrap_or(0);
    let add = |acc: &mut shared::DirSample, d: &shared::DirSample| {
        let ios = acc.ios + d.ios;
        if ios > 0 {
            acc.lat.mean_ns = ((acc.lat.mean_ns as u128 * acc.ios as u128
                + d.lat.mean_ns as u128 * d.ios as u128)
                / ios as u128) as u64;
        }
        if d.ios > 0 {
            acc.lat.min_ns = if acc.ios == 0 {
                d.lat.min_ns
            } else {
                acc.lat.min_ns.min(d.lat.min_ns)
            };
        }
        // Percentiles of a sum cannot be rebuilt from the parts' percentiles: the slowest
        // target's bounds them from above and is what a recorder waits for.
        acc.lat.p50_ns = acc.lat.p50_ns.max(d.lat.p50_ns);
        acc.lat.p90_ns = acc.lat.p90_ns.max(d.lat.p90_ns);
        acc.lat.p99_ns = acc.lat.p99_ns.max(d.lat.p99_ns);
        acc.lat.p99_9_ns = acc.lat.p99_9_ns.max(d.lat.p99_9_ns);
        acc.lat.p99_99_ns = acc.lat.p99_99_ns.max(d.lat.p99_99_ns);
        acc.lat.max_ns = acc.lat.max_ns.max(d.lat.max_ns);
        acc.ios = ios;
        acc.bytes += d.bytes;
        acc.mb_s += d.mb_s;
        acc.mib_s += d.mib_s;
        acc.iops += d.iops;
        acc.cum_bytes += d.cum_bytes;
    };
    for (i, s) in row.iter().enumerate() {
        let Some(s) = s else { continue };
        add(&mut out.read, &s.read);
        add(&mut out.write, &s.write);
        add(&mut out.trim, &s.trim);
        out.temp_c = match (out.temp_c, s.temp_c) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        out.parts.push(shared::PartSample {
            target: i as u32,
            read_mb_s: s.read.mb_s,
            write_mb_s: s.write.mb_s,
            iops: s.total_iops(),
            bytes: s.total_bytes(),
            p99_ns: s.read.lat.p99_ns.max(s.write.lat.p99_ns),
            dirs: [&s.read, &s.write].map(part_dir),
            trim: part_dir(&s.trim),
        });
    }
    out
}
