//! Merges the jobs' interval statistics into per-interval samples, in order, and keeps the
//! whole-run totals (the summary and its full histograms).
//!
//! Interval `i` is complete when every job has reported it or has finished earlier; jobs
//! report every interval in order, empty ones included, so a stalled device shows up as
//! intervals with zero bytes rather than as a gap.

use super::fine::TimelineBuilder;
use super::histogram::{self, Histogram};
use super::interval::{DirCounters, IntervalStats};
use shared::sample::HistBucket;
use shared::{DirSample, HistogramDump, LatencyStats, RunSummary, Sample};
use std::collections::BTreeMap;

/// Latency statistics of a histogram.
pub fn latency_stats(h: &Histogram) -> LatencyStats {
    let p = |pct| h.percentile(pct).unwrap_or(0);
    LatencyStats {
        min_ns: h.min().unwrap_or(0),
        mean_ns: h.mean().unwrap_or(0),
        p50_ns: p(50.0),
        p90_ns: p(90.0),
        p99_ns: p(99.0),
        p99_9_ns: p(99.9),
        p99_99_ns: p(99.99),
        max_ns: h.max().unwrap_or(0),
    }
}

fn dir_sample(c: &DirCounters, window_ns: u64, cum_bytes: u64) -> DirSample {
    DirSample {
        bytes: c.bytes,
        ios: c.ios,
        lat: latency_stats(&c.hist),
        cum_bytes,
        ..DirSample::default()
    }
    .with_rates(window_ns)
}

/// The summary and histograms of one window of counters (a latency search's final window):
/// its rates over the window's own length.
pub fn window_figures(w: &IntervalStats) -> (RunSummary, HistogramDump) {
    let ns = w.end_ns.saturating_sub(w.start_ns);
    let summary = RunSummary {
        duration_ns: ns,
        read: dir_sample(&w.read, ns, w.read.bytes),
        write: dir_sample(&w.write, ns, w.write.bytes),
        trim: dir_sample(&w.trim, ns, w.trim.bytes),
        samples: 1,
        fsync_ns: None,
        flush: None,
    };
    let histogram = HistogramDump {
        layout: histogram::LAYOUT.to_string(),
        max_relative_error: histogram::MAX_RELATIVE_ERROR,
        read: dump(&w.read.hist),
        write: dump(&w.write.hist),
        trim: dump(&w.trim.hist),
        flush: Vec::new(),
    };
    (summary, histogram)
}

pub fn dump(h: &Histogram) -> Vec<HistBucket> {
    h.nonzero()
        .map(|(i, count)| HistBucket {
            index: i as u32,
            lo_ns: histogram::bucket_lo(i),
            ns: histogram::bucket_value(i),
            count,
        })
        .collect()
}

#[derive(Debug)]
struct JobProgress {
    /// Next interval index this job will report.
    next: u64,
    finished: bool,
}

#[derive(Debug)]
pub struct Merger {
    jobs: Vec<JobProgress>,
    pending: BTreeMap<u64, IntervalStats>,
    next_index: u64,
    next_seq: u64,
    read_total: DirCounters,
    write_total: DirCounters,
    trim_total: DirCounters,
    flush_total: DirCounters,
    end_ns: u64,
    timeline: TimelineBuilder,
}

impl Merger {
    pub fn new(jobs: usize) -> Self {
        Merger {
            jobs: (0..jobs)
                .map(|_| JobProgress {
                    next: 0,
                    finished: false,
                })
                .collect(),
            pending: BTreeMap::new(),
            next_index: 0,
            next_seq: 0,
            read_total: DirCounters::default(),
            write_total: DirCounters::default(),
            trim_total: DirCounters::default(),
            flush_total: DirCounters::default(),
            end_ns: 0,
            timeline: TimelineBuilder::spilling(),
        }
    }

    /// Adds one job's interval.
    pub fn add(&mut self, job: usize, stats: IntervalStats) {
        self.jobs[job].next = stats.index + 1;
        self.end_ns = self.end_ns.max(stats.end_ns);
        match self.pending.get_mut(&stats.index) {
            Some(acc) => {
                acc.read.merge(&stats.read);
                acc.write.merge(&stats.write);
                acc.trim.merge(&stats.trim);
                acc.flush.merge(&stats.flush);
                acc.offset_lo = acc.offset_lo.min(stats.offset_lo);
                acc.offset_hi = acc.offset_hi.max(stats.offset_hi);
                acc.start_ns = acc.start_ns.min(stats.start_ns);
                acc.end_ns = acc.end_ns.max(stats.end_ns);
                acc.fine.merge(&stats.fine);
                acc.cpu_ns = acc.cpu_ns.max(stats.cpu_ns);
            }
            None => {
                self.pending.insert(stats.index, stats);
            }
        }
    }

    /// Marks a job as done: it reports no further interval.
    pub fn finish(&mut self, job: usize, end_ns: u64) {
        self.jobs[job].finished = true;
        self.end_ns = self.end_ns.max(end_ns);
    }

    fn complete(&self, index: u64) -> bool {
        self.jobs.iter().all(|j| j.finished || j.next > index)
    }

    /// Samples for every interval that all jobs have reported, in order.
    pub fn take_ready(&mut self) -> Vec<Sample> {
        let mut out = Vec::new();
        while self.complete(self.next_index) {
            let Some(stats) = self.pending.remove(&self.next_index) else {
                if self.jobs.iter().all(|j| j.finished) {
                    break;
                }
                // Every live job is past this index yet nobody reported it: cannot happen
                // (jobs report every interval), but never stall on it.
                self.next_index += 1;
                continue;
            };
            self.next_index += 1;
            out.push(self.sample(stats));
        }
        out
    }

    fn sample(&mut self, s: IntervalStats) -> Sample {
        self.read_total.merge(&s.read);
        self.write_total.merge(&s.write);
        self.trim_total.merge(&s.trim);
        self.flush_total.merge(&s.flush);
        let window = s.end_ns.saturating_sub(s.start_ns);
        self.timeline.push(&s.fine, window);
        let touched = s.offset_hi > 0;
        let sample = Sample {
            seq: self.next_seq,
            start_ns: s.start_ns,
            end_ns: s.end_ns,
            read: dir_sample(&s.read, window, self.read_total.bytes),
            write: dir_sample(&s.write, window, self.write_total.bytes),
            trim: dir_sample(&s.trim, window, self.trim_total.bytes),
            offset_lo: touched.then_some(s.offset_lo),
            offset_hi: touched.then_some(s.offset_hi),
            temp_c: None,
            step: 0,
            parts: Vec::new(),
            job_cpu_pct: s
                .cpu_ns
                .filter(|_| window > 0)
                .map(|c| (c as f64 / window as f64 * 100.0).min(100.0)),
            pause: false,
        };
        self.next_seq += 1;
        sample
    }

    /// The whole-run summary over everything merged so far.
    pub fn summary(&self, fsync_ns: Option<u64>) -> RunSummary {
        RunSummary {
            duration_ns: self.end_ns,
            read: dir_sample(&self.read_total, self.end_ns, self.read_total.bytes),
            write: dir_sample(&self.write_total, self.end_ns, self.write_total.bytes),
            trim: dir_sample(&self.trim_total, self.end_ns, self.trim_total.bytes),
            samples: self.next_seq,
            fsync_ns,
            flush: (self.flush_total.ios > 0)
                .then(|| dir_sample(&self.flush_total, self.end_ns, 0)),
        }
    }

    /// Bytes per 10 ms over the whole run, completion gaps and slow I/Os (the last use of
    /// the merger: take the spill first).
    pub fn into_timeline(self) -> shared::analysis::Timeline {
        self.timeline.build()
    }

    /// The exact 10 ms buckets on disk, when they could be kept (see [`super::fine::Spill`]).
    pub fn take_spill(&mut self) -> Option<super::fine::Spill> {
        self.timeline.take_spill()
    }

    pub fn histogram(&self) -> HistogramDump {
        HistogramDump {
            layout: histogram::LAYOUT.to_string(),
            max_relative_error: histogram::MAX_RELATIVE_ERROR,
            read: dump(&self.read_total.hist),
            write: dump(&self.write_total.hist),
            trim: dump(&self.trim_total.hist),
            flush: dump(&self.flush_total.hist),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Dir;

    fn interval(index: u64, ios: u64) -> IntervalStats {
        let mut s = IntervalStats::new(index, index * 1000, (index + 1) * 1000);
        for i in 0..ios {
            s.record(Dir::Write, 4096, 100 + i, i * 4096);
        }
        s
    }

    #[test]
    fn waits_for_every_job_and_sums() {
        let mut m = Merger::new(2);
        m.add(0, interval(0, 3));
        assert!(
            m.take_ready().is_empty(),
            "job 1 has not reported interval 0"
        );
        m.add(1, interval(0, 2));
        m.add(0, interval(1, 1));
        let ready = m.take_ready();
        assert_eq!(ready.len(), 1);
        assert_eq!(ready[0].write.ios, 5);
        assert_eq!(ready[0].write.bytes, 5 * 4096);
        assert_eq!(ready[0].offset_hi, Some(3 * 4096));
        // job 1 ends; interval 1 is now complete with job 0's share only
        m.finish(1, 1000);
        let ready = m.take_ready();
        assert_eq!(ready.len(), 1);
        assert_eq!(ready[0].seq, 1);
        assert_eq!(ready[0].write.cum_bytes, 6 * 4096);
        m.finish(0, 2000);
        assert!(m.take_ready().is_empty());
        let sum = m.summary(None);
        assert_eq!(sum.write.ios, 6);
        assert_eq!(sum.samples, 2);
        assert_eq!(sum.duration_ns, 2000);
        // 6 × 4096 B in 2 µs
        assert!((sum.write.mb_s - 6.0 * 4096.0 / 1e6 / 2e-6).abs() < 1e-6);
    }
}
