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
    /// Instead of requests every interval: the first request after each quiet time
    /// (`--idle-sweep`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_sweep: Option<IdleSweep>,
}

/// The idle-wake curve's plan: each quiet time `repeat` times, each time after a request
/// that finds the drive awake.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct IdleSweep {
    /// The quiet times, µs, shortest first.
    pub idle_us: Vec<u64>,
    pub repeat: u32,
}

/// Most quiet times in a sweep, and most repeats of each.
pub const MAX_SWEEP_STEPS: usize = 64;
pub const MAX_SWEEP_REPEAT: u32 = 100;

impl IdleSweep {
    /// 1 ms to `max_us` in steps of 1-2-5, ending at `max_us` (30 s at most: 15 steps),
    /// `repeat` times each.
    pub fn up_to(max_us: u64, repeat: u32) -> IdleSweep {
        let mut idle_us = Vec::new();
        let mut decade = 1000u64;
        'out: loop {
            for m in [1, 2, 5] {
                let v = decade * m;
                if v > max_us.min(30_000_000) {
                    break 'out;
                }
                idle_us.push(v);
            }
            decade *= 10;
        }
        // The longest asked for ends the sweep (30 s after 20 s).
        let max = max_us.min(30_000_000);
        if idle_us.last().is_some_and(|&l| l < max) {
            idle_us.push(max);
        }
        IdleSweep { idle_us, repeat }
    }
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
            idle_sweep: None,
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
        if let Some(w) = &self.idle_sweep {
            let sorted = w.idle_us.windows(2).all(|p| p[0] < p[1]);
            if w.idle_us.is_empty() || w.idle_us.len() > MAX_SWEEP_STEPS || !sorted {
                out.push((
                    "probe.idle_sweep.idle_us",
                    format!("{} quiet times", w.idle_us.len()),
                    format!("1..{MAX_SWEEP_STEPS}, shortest first, each once"),
                ));
            }
            if w.idle_us.iter().any(|&u| u > MAX_INTERVAL_US) {
                out.push((
                    "probe.idle_sweep.idle_us",
                    w.idle_us.last().copied().unwrap_or(0).to_string(),
                    "an hour at most".to_string(),
                ));
            }
            if !(1..=MAX_SWEEP_REPEAT).contains(&w.repeat) {
                out.push((
                    "probe.idle_sweep.repeat",
                    w.repeat.to_string(),
                    format!("1..{MAX_SWEEP_REPEAT}"),
                ));
            }
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
    /// An idle sweep's measured request: the quiet time before it, ns (0: none).
    #[serde(default)]
    pub idle_ns: u64,
    /// An idle sweep's request that finds the drive awake (right after another): the
    /// curve's baseline.
    #[serde(default)]
    pub prime: bool,
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
    /// An idle sweep's curve: the first request's latency after each quiet time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_curve: Option<IdleCurve>,
    /// The device's power settings, read beside an idle sweep.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power: Option<PowerSettings>,
}

/// What the device and the kernel say of its power management: the NVMe controller's
/// power-state table and APST (Identify Controller, Get Features 0x0C), and sysfs's
/// settings. Each that could not be read is in `missing`, with why.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PowerSettings {
    /// The block device read (`/dev/nvme0n1`), if the target has one.
    pub device: Option<String>,
    pub nvme_states: Vec<NvmeState>,
    /// APST: supported by the controller, enabled, and its table (to which state after
    /// how long idle).
    pub apst_supported: Option<bool>,
    pub apst_enabled: Option<bool>,
    pub apst: Vec<ApstEntry>,
    /// sysfs, as written there.
    pub pm_qos_latency_tolerance_us: Option<String>,
    pub nvme_default_ps_max_latency_us: Option<String>,
    pub link_power_management_policy: Option<String>,
    pub runtime_pm: Option<String>,
    pub missing: Vec<String>,
}

/// One NVMe power state descriptor.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct NvmeState {
    pub state: u8,
    pub max_power_w: f64,
    pub non_operational: bool,
    pub entry_latency_us: u32,
    pub exit_latency_us: u32,
}

/// One APST entry: after `idle_ms` idle in state `from`, the controller goes to `state`.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ApstEntry {
    pub from: u8,
    pub state: u8,
    pub idle_ms: u32,
}

impl PowerSettings {
    /// The APST states an idle drive passes through, from state 0: each with the idle
    /// time it is entered after (the table's times add up along the chain).
    pub fn apst_chain(&self) -> Vec<(u8, u64)> {
        let mut out = Vec::new();
        let (mut from, mut at) = (0u8, 0u64);
        while let Some(e) = self.apst.iter().find(|e| e.from == from && e.idle_ms > 0) {
            if out.iter().any(|(s, _)| *s == e.state) || e.state == from {
                break;
            }
            at += u64::from(e.idle_ms);
            out.push((e.state, at));
            from = e.state;
        }
        out
    }

    /// The APST state a knee points at: the one entered within the knee's span (after the
    /// quiet time before it, up to its own), when APST is on.
    pub fn state_at(&self, k: &Knee) -> Option<u8> {
        if self.apst_enabled != Some(true) {
            return None;
        }
        let (lo, hi) = (k.after_us / 1000, k.idle_us / 1000);
        self.apst_chain()
            .into_iter()
            .rev()
            .find(|(_, at)| *at > lo && *at <= hi)
            .map(|(s, _)| s)
    }
}

/// Latency of the first request after each quiet time, against the drive's awake latency:
/// where it rises in steps, a power state begins (a knee: its idle time and what waking
/// from it costs).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct IdleCurve {
    /// The awake latency: the median of the requests made right after another, ns.
    pub awake_ns: u64,
    /// What counts as a step up: the awake latencies' spread (4 × their median absolute
    /// deviation), at least a fifth of the awake latency and [`MIN_STEP_NS`], ns.
    pub threshold_ns: u64,
    pub steps: Vec<IdleStep>,
    pub knees: Vec<Knee>,
}

/// One quiet time of the sweep.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct IdleStep {
    pub idle_us: u64,
    /// The first request's latency after it: median, least and most of the repeats, ns.
    pub median_ns: u64,
    pub min_ns: u64,
    pub max_ns: u64,
    /// Above the awake latency (median), ns.
    pub extra_ns: u64,
}

/// A power state found: it begins between the quiet time before `idle_us` and `idle_us`,
/// and the first request after it costs `wake_ns` more than an awake one.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Knee {
    pub after_us: u64,
    pub idle_us: u64,
    pub wake_ns: u64,
}

/// The least step up that counts as a power state's wake: the host's own wake after a
/// quiet time (its thread and CPU waking) costs up to ~100 µs on a VM (measured on the
/// emulated drive: 92 µs at 50 ms of idle), and the wakes sought are of a millisecond or
/// more.
pub const MIN_STEP_NS: u64 = 200_000;

fn median(v: &mut [u64]) -> u64 {
    v.sort_unstable();
    v.get(v.len() / 2).copied().unwrap_or(0)
}

impl IdleCurve {
    /// The curve from the measured requests (`(idle_ns, lat_ns)`) and the awake ones.
    pub fn of(points: &[(u64, u64)], awake: &[u64]) -> IdleCurve {
        let mut a = awake.to_vec();
        let awake_ns = median(&mut a);
        let mut dev: Vec<u64> = a.iter().map(|&x| x.abs_diff(awake_ns)).collect();
        let threshold_ns = (4 * median(&mut dev)).max(awake_ns / 5).max(MIN_STEP_NS);
        let mut idles: Vec<u64> = points.iter().map(|p| p.0).collect();
        idles.sort_unstable();
        idles.dedup();
        let steps: Vec<IdleStep> = idles
            .iter()
            .map(|&idle| {
                let mut l: Vec<u64> = points.iter().filter(|p| p.0 == idle).map(|p| p.1).collect();
                let median_ns = median(&mut l);
                IdleStep {
                    idle_us: idle / 1000,
                    median_ns,
                    min_ns: l.first().copied().unwrap_or(0),
                    max_ns: l.last().copied().unwrap_or(0),
                    extra_ns: median_ns.saturating_sub(awake_ns),
                }
            })
            .collect();
        // A knee where the extra latency rises past the level reached by more than the
        // threshold (and a quarter of the level: a wake's own jitter grows with it), and the
        // next quiet time (the same state or a deeper one) stays past it too; its wake is
        // the extra latency there. The level follows the highest step since.
        let mut knees = Vec::new();
        let mut level = 0u64;
        let up = |extra: u64, level: u64| extra > level + threshold_ns.max(level / 4);
        for (i, s) in steps.iter().enumerate() {
            let held = steps.get(i + 1).is_none_or(|n| up(n.extra_ns, level));
            if up(s.extra_ns, level) && held {
                knees.push(Knee {
                    after_us: if i == 0 { 0 } else { steps[i - 1].idle_us },
                    idle_us: s.idle_us,
                    wake_ns: s.extra_ns,
                });
            }
            if knees.last().is_some_and(|k| k.idle_us <= s.idle_us) {
                level = level.max(s.extra_ns);
            }
        }
        IdleCurve {
            awake_ns,
            threshold_ns,
            steps,
            knees,
        }
    }
}

/// The running sums a [`ProbeSummary`] comes from (a request's figures added in; flat in
/// memory whatever the count, the warm-up aside).
#[derive(Clone, Debug, Default)]
pub struct Tally {
    sum: u128,
    sum_sq: u128,
    s: ProbeSummary,
    /// An idle sweep's measured requests (quiet time, latency) and awake ones (bounded by
    /// the sweep's plan).
    points: Vec<(u64, u64)>,
    awake: Vec<u64>,
}

/// Most requests of a sweep kept for its curve.
const MAX_SWEEP_POINTS: usize = MAX_SWEEP_STEPS * MAX_SWEEP_REPEAT as usize;

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
        if r.idle_ns > 0 && self.points.len() < MAX_SWEEP_POINTS {
            self.points.push((r.idle_ns, r.lat_ns));
        }
        if r.prime && self.awake.len() < MAX_SWEEP_POINTS {
            self.awake.push(r.lat_ns);
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
        if !self.points.is_empty() {
            s.idle_curve = Some(IdleCurve::of(&self.points, &self.awake));
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
            idle_ns: 0,
            prime: false,
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

    /// The knees over 500 randomly drawn power-state models (one or two states, their idle
    /// times and wakes drawn log-uniformly, awake latencies of 50..400 µs with ±25 % noise
    /// and a host overhead added to each quiet time): every state is found, at the first
    /// quiet time at or past its own (so within one step) and with its wake within ±20 %.
    #[test]
    fn knees_are_found_on_drawn_models() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut u = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 53) as f64
        };
        let sweep = IdleSweep::up_to(30_000_000, 3);
        assert_eq!(sweep.idle_us.len(), 15);
        for model in 0..500 {
            let mut log = |lo: f64, hi: f64| (lo.ln() + u() * (hi.ln() - lo.ln())).exp();
            let awake_us = log(50.0, 400.0);
            let t1_ms = log(1.5, 3000.0);
            let w1_us = log(1000.0, 8000.0);
            let mut states = vec![(t1_ms, w1_us)];
            if t1_ms < 1000.0 && model % 2 == 0 {
                states.push((log(t1_ms * 4.0, 25_000.0), log(w1_us * 1.6, 40_000.0)));
            }
            let wake = |idle_ms: f64| {
                states
                    .iter()
                    .filter(|s| idle_ms >= s.0)
                    .map(|s| s.1)
                    .fold(0.0, f64::max)
            };
            let mut noise = || 1.0 + 0.5 * (u() - 0.5);
            let awake: Vec<u64> = (0..45).map(|_| (awake_us * noise() * 1e3) as u64).collect();
            let mut points = Vec::new();
            for &idle in &sweep.idle_us {
                for _ in 0..sweep.repeat {
                    let overhead_ms = 0.2 * noise();
                    let lat_us = awake_us * noise() + wake(idle as f64 / 1e3 + overhead_ms);
                    points.push((idle * 1000, (lat_us * 1e3) as u64));
                }
            }
            let c = IdleCurve::of(&points, &awake);
            assert_eq!(
                c.knees.len(),
                states.len(),
                "model {model}: {states:?} {c:?}"
            );
            for (k, (t_ms, w_us)) in c.knees.iter().zip(&states) {
                let first_past = sweep
                    .idle_us
                    .iter()
                    .position(|&i| i as f64 / 1e3 + 0.2 >= *t_ms);
                let found = sweep.idle_us.iter().position(|&i| i == k.idle_us);
                let near = matches!((first_past, found), (Some(a), Some(b)) if a.abs_diff(b) <= 1);
                assert!(
                    near,
                    "model {model}: state at {t_ms:.1} ms found at {} µs",
                    k.idle_us
                );
                let ratio = k.wake_ns as f64 / 1e3 / w_us;
                assert!(
                    (0.8..=1.2).contains(&ratio),
                    "model {model}: wake {w_us:.0} µs, found {k:?}"
                );
            }
        }
    }
}
