//! Latency when nobody loads the drive (`diskscope probe`, the `probe` preset): one request
//! every interval, as ioping makes them, each timed on its own; the first ones (a drive
//! waking from a power state, a cold cache) made and shown apart, not counted.

use serde::{Deserialize, Serialize};

/// Longest time between two requests (1 hour).
pub const MAX_INTERVAL_US: u64 = 3_600_000_000;
/// Most requests shown apart before counting.
pub const MAX_WARMUP: u32 = 1000;
/// Most requests made back to back at each tick.
pub const MAX_BURST: u32 = 1000;

/// How a probe makes its requests (the size, span, direction and caching are the
/// workload's own `bs`, `size`, `offset`, `rw` and `direct`).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ProbeSpec {
    /// From the start of one request (or burst) to the start of the next, µs (ioping's
    /// `-i`); 0 makes them one after another.
    pub interval_us: u64,
    /// Requests to make, the warm-up's included (ioping's `-c`); none: until the run time
    /// is up or it is stopped.
    #[serde(default)]
    pub count: Option<u64>,
    /// Requests made first and shown apart, not counted (ioping's `-a`, default 1).
    #[serde(default = "one")]
    pub warmup: u32,
    /// Requests made back to back at each tick (ioping's `-b`; 0 or 1: one).
    #[serde(default)]
    pub burst: u32,
}

fn one() -> u32 {
    1
}

impl Default for ProbeSpec {
    fn default() -> Self {
        ProbeSpec {
            interval_us: 1_000_000,
            count: None,
            warmup: 1,
            burst: 0,
        }
    }
}

impl ProbeSpec {
    /// Problems, each naming its field and value.
    pub fn check(&self) -> Vec<(&'static str, String, String)> {
        let mut out = Vec::new();
        if self.interval_us > MAX_INTERVAL_US {
            out.push((
                "probe.interval_us",
                self.interval_us.to_string(),
                "at most an hour (3600000000 µs)".to_string(),
            ));
        }
        if self.count == Some(0) {
            out.push((
                "probe.count",
                "0".to_string(),
                "1 or more requests (or none: until stopped)".to_string(),
            ));
        }
        if self.warmup > MAX_WARMUP {
            out.push((
                "probe.warmup",
                self.warmup.to_string(),
                format!("at most {MAX_WARMUP}"),
            ));
        }
        if self.burst > MAX_BURST {
            out.push((
                "probe.burst",
                self.burst.to_string(),
                format!("at most {MAX_BURST}"),
            ));
        }
        out
    }
}

/// One request of a probe, as it is shown live (ioping's line).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Request {
    /// 1 for the first request.
    pub n: u64,
    /// When it completed, ns since the run's start.
    pub at_ns: u64,
    pub lat_ns: u64,
    pub offset: u64,
    pub bytes: u64,
    pub write: bool,
    /// A warm-up request: shown, not counted.
    pub warmup: bool,
}

/// What a probe's requests came to (`analysis.probe`), as ioping sums them up: the
/// counted requests' min, average, max and mdev (the standard deviation), the warm-up's
/// shown apart, and all requests made over the run's time.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ProbeSummary {
    /// Counted requests, and their bytes.
    pub count: u64,
    pub bytes: u64,
    /// Their latencies added up (ioping's "requests completed in"), ns.
    pub busy_ns: u64,
    pub min_ns: u64,
    pub avg_ns: u64,
    pub max_ns: u64,
    pub mdev_ns: u64,
    /// The warm-up requests' latencies, in order, ns.
    pub warmup_ns: Vec<u64>,
    /// All requests made (the warm-up's included) and their bytes (ioping's "generated").
    pub requests: u64,
    pub requests_bytes: u64,
}

/// The running sums a [`ProbeSummary`] comes from (a request's figures added in; flat in
/// memory whatever the count, the warm-up aside).
#[derive(Clone, Debug, Default)]
pub struct Tally {
    sum: u128,
    sum_sq: u128,
    s: ProbeSummary,
}

impl Tally {
    pub fn add(&mut self, r: &Request) {
        let s = &mut self.s;
        s.requests += 1;
        s.requests_bytes += r.bytes;
        if r.warmup {
            if s.warmup_ns.len() < MAX_WARMUP as usize {
                s.warmup_ns.push(r.lat_ns);
            }
            return;
        }
        s.min_ns = if s.count == 0 {
            r.lat_ns
        } else {
            s.min_ns.min(r.lat_ns)
        };
        s.max_ns = s.max_ns.max(r.lat_ns);
        s.count += 1;
        s.bytes += r.bytes;
        s.busy_ns = s.busy_ns.saturating_add(r.lat_ns);
        self.sum += u128::from(r.lat_ns);
        self.sum_sq += u128::from(r.lat_ns) * u128::from(r.lat_ns);
    }

    pub fn summary(&self) -> ProbeSummary {
        let mut s = self.s.clone();
        if s.count > 0 {
            let n = u128::from(s.count);
            let avg = self.sum / n;
            s.avg_ns = avg as u64;
            // E[x²] − E[x]², in whole ns² (exact in u128 for any latency a request has).
            let var = (self.sum_sq / n).saturating_sub(avg * avg);
            s.mdev_ns = (var as f64).sqrt() as u64;
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(n: u64, lat_ns: u64, warmup: bool) -> Request {
        Request {
            n,
            at_ns: n * 1000,
            lat_ns,
            offset: 0,
            bytes: 4096,
            write: false,
            warmup,
        }
    }

    /// ioping's figures: min/avg/max/mdev of the counted requests (its mdev is the
    /// standard deviation: 601.6 µs and 1.64 ms give avg 1.12 ms, mdev 518.7 µs), the
    /// warm-up apart, all requests in "generated".
    #[test]
    fn a_tally_sums_up_as_ioping_does() {
        let mut t = Tally::default();
        for r in [
            req(1, 2_890_000, true),
            req(2, 601_600, false),
            req(3, 1_640_000, false),
        ] {
            t.add(&r);
        }
        let s = t.summary();
        assert_eq!(
            (s.count, s.requests, s.bytes, s.requests_bytes),
            (2, 3, 8192, 12288)
        );
        assert_eq!(
            (s.min_ns, s.avg_ns, s.max_ns),
            (601_600, 1_120_800, 1_640_000)
        );
        assert_eq!(s.mdev_ns, 519_200);
        assert_eq!(s.warmup_ns, [2_890_000]);
        assert_eq!(s.busy_ns, 2_241_600);
        assert_eq!(
            ProbeSpec {
                count: Some(0),
                ..Default::default()
            }
            .check()[0]
                .0,
            "probe.count"
        );
    }
}
