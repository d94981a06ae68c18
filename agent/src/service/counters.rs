//! What the agent has moved per target since it started, for `/metrics`: Prometheus
//! counters (bytes and I/Os per direction, added as each sample is stored, so `rate()` over
//! them is the throughput during a run) and a latency histogram in Prometheus buckets,
//! derived from each run's engine histogram when the run ends (a probe's requests as they
//! come: its run may last days). Per target, never per run:
//! a run adds to its target's series instead of starting new ones.

use shared::sample::HistBucket;
use shared::{HistogramDump, Sample};
use std::collections::BTreeMap;
use std::sync::Mutex;

/// Upper bounds of the latency buckets, seconds (10 µs .. 10 s).
pub const LATENCY_BUCKETS_S: [f64; 19] = [
    0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
    0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// One direction of one target.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DirTotals {
    pub bytes: u64,
    pub ios: u64,
    /// I/Os at or under each bound of [`LATENCY_BUCKETS_S`] (cumulative, as Prometheus
    /// exposes them).
    pub le: [u64; LATENCY_BUCKETS_S.len()],
    /// Every I/O the histogram holds, and the sum of their latencies (s).
    pub count: u64,
    pub sum_s: f64,
}

impl DirTotals {
    fn add_histogram(&mut self, buckets: &[HistBucket]) {
        for b in buckets {
            // A bucket's representative value is within 1/128 of every latency in it.
            let s = b.ns as f64 / 1e9;
            for (i, bound) in LATENCY_BUCKETS_S.iter().enumerate() {
                if s <= *bound {
                    self.le[i] += b.count;
                }
            }
            self.count += b.count;
            self.sum_s += s * b.count as f64;
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct TargetTotals {
    pub read: DirTotals,
    pub write: DirTotals,
    pub trim: DirTotals,
    /// The newest sustain verdict on the target (`true`: it kept the rate), and how many
    /// sustain runs failed.
    pub sustain_pass: Option<bool>,
    pub sustain_failures: u64,
}

/// The agent's counters, by target path.
#[derive(Debug, Default)]
pub struct Counters {
    by_target: Mutex<BTreeMap<String, TargetTotals>>,
}

impl Counters {
    fn with<R>(&self, target: &str, f: impl FnOnce(&mut TargetTotals) -> R) -> R {
        let mut m = self.by_target.lock().unwrap_or_else(|p| p.into_inner());
        f(m.entry(target.to_string()).or_default())
    }

    /// A stored sample of a run on `target`.
    pub fn sample(&self, target: &str, s: &Sample) {
        self.with(target, |t| {
            t.read.bytes += s.read.bytes;
            t.read.ios += s.read.ios;
            t.write.bytes += s.write.bytes;
            t.write.ios += s.write.ios;
            t.trim.bytes += s.trim.bytes;
            t.trim.ios += s.trim.ios;
        });
    }

    /// The latencies of a run that ended on `target`.
    pub fn histogram(&self, target: &str, h: &HistogramDump) {
        self.with(target, |t| {
            t.read.add_histogram(&h.read);
            t.write.add_histogram(&h.write);
            t.trim.add_histogram(&h.trim);
        });
    }

    /// One request of a probe on `target`, as it completed.
    pub fn request(&self, target: &str, write: bool, lat_ns: u64) {
        let one = [HistBucket {
            index: 0,
            lo_ns: lat_ns,
            ns: lat_ns,
            count: 1,
        }];
        self.with(target, |t| {
            if write {
                t.write.add_histogram(&one);
            } else {
                t.read.add_histogram(&one);
            }
        });
    }

    /// A sustain run on `target` ended with this verdict.
    pub fn sustain(&self, target: &str, pass: bool) {
        self.with(target, |t| {
            t.sustain_pass = Some(pass);
            t.sustain_failures += u64::from(!pass);
        });
    }

    pub fn snapshot(&self) -> BTreeMap<String, TargetTotals> {
        self.by_target
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_cumulative_and_add_up() {
        let c = Counters::default();
        let h = HistogramDump {
            read: vec![
                HistBucket {
                    index: 0,
                    lo_ns: 9_000,
                    ns: 9_500,
                    count: 3,
                },
                HistBucket {
                    index: 1,
                    lo_ns: 900_000,
                    ns: 950_000,
                    count: 2,
                },
            ],
            ..HistogramDump::default()
        };
        c.histogram("/t", &h);
        c.histogram("/t", &h);
        let t = &c.snapshot()["/t"];
        assert_eq!(t.read.le[0], 6, "9.5 µs is under 10 µs");
        assert_eq!(t.read.le[5], 6, "under 500 µs");
        assert_eq!(t.read.le[6], 10, "under 1 ms");
        assert_eq!(t.read.count, 10);
        assert!((t.read.sum_s - 2.0 * (3.0 * 9.5e-6 + 2.0 * 950e-6)).abs() < 1e-12);
        assert_eq!(t.write.count, 0);
    }
}
