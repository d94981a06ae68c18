//! What the reviews hunt for by hand, found automatically: pure functions over a run's
//! samples (and its fine timeline and steps). Each documents its method. "Not enough data"
//! and "not found" are verdicts, never errors. They live in `shared` so that the agent (JSON,
//! CLI summary) and the dashboard (markers) compute the same thing.

mod cliff;
pub mod fill;
mod fine;
pub mod latency;
mod misc;
pub mod plausible;
mod recovery;
pub mod repeat;
pub mod replay;
pub mod scan;
mod steady;
mod sustain;
mod thermal;
pub mod verify;

pub use cliff::cache_cliff;
pub use fine::{
    cache_cliff_fine, completion_unit, gaps, gaps_in, units_per_window, windows, UNITS_PER_WINDOW,
};
pub use misc::{block_size, compressibility, first_last, stalls};
pub use recovery::{cache_recovery, Phase};
pub use steady::{steady_state_rounds, steady_state_windows, WINDOW as STEADY_WINDOW};
pub use sustain::{sustain, sustain_in};
pub use thermal::thermal;

use serde::{Deserialize, Serialize};

/// How an analysis came out.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Found,
    #[default]
    NotFound,
    NotEnoughData,
}

/// Every analysis that applies to a run; absent ones did not apply (e.g. no required rate).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Analysis {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_cliff: Option<CacheCliff>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady_state: Option<SteadyState>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_last: Option<FirstLast>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg(not(target_arch = "wasm32"))]
    pub thermal: Option<Thermal>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sustain: Option<Sustain>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg(not(target_arch = "wasm32"))]
    pub block_size: Option<BlockSize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compressibility: Option<Compressibility>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stalls: Option<Stalls>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_recovery: Option<CacheRecovery>,
    /// The read-back of a `verify` run: bad blocks by kind and offset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<verify::Verify>,
    /// `fakecap`: the capacity the read-back of unique blocks found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fakecap: Option<verify::FakeCap>,
    /// Error scans (`scan`): the map by position of each scanned workload or step.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scan: Vec<scan::ScanMap>,
    /// The figures held against the link, the device and the load generator's CPU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plausibility: Option<plausible::Plausibility>,
    /// A repeated run (`repeat`): each metric's spread over the passes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<repeat::Repeat>,
    /// `fill-level`: speed against fill level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fill_level: Option<fill::FillLevel>,
    /// `latency-target`: the highest IOPS under the p99 limit, and the rounds of the search.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_target: Option<latency::LatencyTarget>,
    /// fio's `latency_target` search: the depth each job found and its final window's
    /// figures. (Not read by the dashboard, which shows the run's own figures.)
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(target_arch = "wasm32", serde(skip))]
    pub qd_search: Vec<crate::qd_search::QdSearch>,
    /// Trace replays (`replay`): one per replayed workload or step.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replay: Vec<replay::Replay>,
    /// Application presets: storage bandwidth per application and overall.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub apps: Option<replay::AppScores>,
    /// A group run's hosts, their clocks and faults, and elbencho's first/last-done figures.
    /// (Not in the wasm build: the dashboard shows a group's hosts from `targets`.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg(not(target_arch = "wasm32"))]
    pub group: Option<crate::group::Group>,
    /// A files phase's first-done and last-done rates (a step's own report; the run's
    /// steps carry them). (Not in the wasm build.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg(not(target_arch = "wasm32"))]
    pub files_done: Option<crate::files::Done>,
    /// A probe's requests summed up as ioping does (min, avg, max, mdev; the warm-up apart).
    /// (Not in the wasm build.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg(not(target_arch = "wasm32"))]
    pub probe: Option<crate::probe::ProbeSummary>,
    /// A flush check's writer: its witness session and what it recorded there.
    /// (Not in the wasm build: the one-line result says it.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg(not(target_arch = "wasm32"))]
    pub flushcheck: Option<crate::flushcheck::Written>,
}

/// Write past the cache, idle, write again: how much of the cache the idle time gave back.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CacheRecovery {
    pub verdict: Verdict,
    /// The cache cliff of the first write and of the second.
    pub first: CacheCliff,
    pub second: CacheCliff,
    /// Idle time between the writes.
    pub idle_s: f64,
    /// Bytes of the second write.
    pub second_written_bytes: u64,
    /// Bytes the second write wrote at the fast level: the cache the idle time gave back.
    pub recovered_bytes: Option<u64>,
    /// Recovered over the first write's cache (1.0: fully recovered).
    pub recovered_share: Option<f64>,
}

/// A sustained drop of write speed after a number of bytes: an SLC cache running full.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CacheCliff {
    pub verdict: Verdict,
    pub detected: bool,
    /// Bytes written before the sustained drop.
    pub cache_bytes: Option<u64>,
    /// Seconds into the run where the drop happened.
    pub at_s: Option<f64>,
    pub pre_mbps: Option<f64>,
    pub post_mbps: Option<f64>,
    /// post / pre.
    pub ratio: Option<f64>,
    /// 0..1: how cleanly the samples fall on either side of the step.
    pub confidence: f64,
}

/// The SNIA PTS steady-state rule over a window of rounds.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SteadyState {
    pub verdict: Verdict,
    pub attained: bool,
    /// The last round (1-based) of the first window that met the rule.
    pub round: Option<u32>,
    /// The window in seconds, when judged over time windows instead of rounds.
    pub window_start_s: Option<f64>,
    pub window_end_s: Option<f64>,
    /// Mean of the measure (IOPS) over the window.
    pub mean: Option<f64>,
    /// (max − min) / mean over the window, in percent (rule: ≤ 20).
    pub range_pct: Option<f64>,
    /// Excursion of the best-fit line across the window / mean, in percent (rule: ≤ 10).
    pub slope_pct: Option<f64>,
    /// The measure per round (or window), for plotting.
    pub rounds: Vec<f64>,
    /// Under fio's rule (the spec's `steady`): the window's largest deviation from its
    /// mean, its slope per second, and what the rule compared with its limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_deviation: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slope: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub criterion: Option<f64>,
}

/// First and last window of a long run (Iometer's first/last minute).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FirstLast {
    pub verdict: Verdict,
    pub window_s: f64,
    pub first_iops: f64,
    pub last_iops: f64,
    pub first_mbps: f64,
    pub last_mbps: f64,
    /// last / first IOPS.
    pub iops_ratio: Option<f64>,
    pub mbps_ratio: Option<f64>,
}

/// Why a run slowed down.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Slowdown {
    /// A sawtooth locked to temperature near its plateau.
    Thermal,
    /// A step at a fixed number of bytes with flat temperature.
    Cache,
    /// Periodic dips.
    Gc,
    #[default]
    None,
}

/// The classification's name as the JSON spells it.
impl std::fmt::Display for Slowdown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Slowdown::Thermal => "thermal",
            Slowdown::Cache => "cache",
            Slowdown::Gc => "gc",
            Slowdown::None => "none",
        })
    }
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Thermal {
    pub verdict: Verdict,
    pub min_c: Option<f64>,
    pub max_c: Option<f64>,
    pub mean_c: Option<f64>,
    pub samples_with_temperature: u64,
    pub classification: Slowdown,
    /// Throughput drops counted (≥ 30 % below the running level).
    pub drops: u32,
    pub reason: String,
}

/// Did the target keep up with a constant-rate producer?
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Sustain {
    pub verdict: Verdict,
    pub required_mbps: f64,
    pub pass: bool,
    /// The buffer the verdict allows: `buffer_ms` of data at the required rate.
    pub buffer_ms: u64,
    /// Longest time with no completion at all.
    pub longest_stall_ms: u64,
    /// The RAM buffer that would have hidden every shortfall: max over time of bytes
    /// demanded minus bytes completed.
    pub buffer_bytes_needed: u64,
    pub windows_below_10ms: u64,
    pub windows_below_100ms: u64,
    pub windows_below_1s: u64,
    /// Per tenth of the bytes written (the span, for a single sequential pass).
    pub bands: Vec<Band>,
    pub achieved_mbps: f64,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Band {
    pub band: u32,
    pub mbps: f64,
    pub pass: bool,
}

/// One block size's result in a sweep.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BlockSizePoint {
    pub bs: u64,
    pub iops: f64,
    pub mbps: f64,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BlockSize {
    pub verdict: Verdict,
    pub best_iops_bs: Option<u64>,
    pub best_mbps_bs: Option<u64>,
    /// Smallest block size reaching 90 % of the best MB/s.
    pub saturation_bs: Option<u64>,
    pub points: Vec<BlockSizePoint>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PatternResult {
    pub pattern: String,
    pub mbps: f64,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Compressibility {
    pub verdict: Verdict,
    pub patterns: Vec<PatternResult>,
    /// MB/s with zeros / MB/s with random data (1.12–1.54× on compressing controllers).
    pub zeros_random_ratio: Option<f64>,
}

/// An interval whose slowest I/O took longer than the threshold.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct StallInterval {
    pub seq: u64,
    pub start_s: f64,
    pub max_latency_ms: f64,
    pub mbps: f64,
}

/// One I/O that took longer than the threshold.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SlowIo {
    /// Nanoseconds since the run started, at completion.
    pub at_ns: u64,
    pub offset: u64,
    pub latency_ns: u64,
    pub write: bool,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Stalls {
    pub verdict: Verdict,
    pub threshold_ms: f64,
    pub intervals: Vec<StallInterval>,
    /// The slow I/Os the engine recorded (at most a few hundred), with their offsets.
    pub ios: Vec<SlowIo>,
    pub slow_ios_total: u64,
    /// Stretches of the 10 ms timeline with no completion at all, at least the threshold
    /// long, inside a workload (not its pauses): stalls placed to 10 ms at any sample
    /// interval (at most [`MAX_GAPS`] listed; all counted).
    #[serde(default)]
    pub gaps: Vec<Gap>,
    #[serde(default)]
    pub gaps_total: u64,
}

/// At most this many gaps are listed.
pub const MAX_GAPS: usize = 500;

/// A stretch with no completion.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Gap {
    /// Seconds into the run where it began.
    pub start_s: f64,
    pub ms: f64,
}

/// Bytes completed per fixed time bucket (10 ms) over the whole run, and the gaps between
/// successive completions: the fine view that sustained-rate and stall analysis need.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Timeline {
    pub bucket_ms: u32,
    pub bytes: Vec<u64>,
    /// Gaps between successive completions of a job: count per power-of-two bucket of
    /// microseconds (`gaps[i]` counts gaps in `[2^i, 2^(i+1))` µs; `gaps[0]` also below 1 µs).
    pub gaps_log2_us: Vec<u64>,
    pub slow_ios: Vec<SlowIo>,
    pub slow_ios_total: u64,
    /// The target's temperature, read every runner tick (at most every 100 ms), when it
    /// reports one: thermal classification at any sample interval.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub temps: Vec<TempPoint>,
}

/// One temperature reading, milliseconds since the run started.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TempPoint {
    pub at_ms: u64,
    pub c: f64,
}

impl Analysis {
    /// One line per finding, for the CLI summary and the dashboard (same words in both).
    /// The results of the presets that have their own (fill level, latency target).
    #[cfg(not(target_arch = "wasm32"))]
    fn preset_lines(&self) -> Vec<String> {
        let fill = self.fill_level.as_ref().map(fill::FillLevel::summary_line);
        let lat = self
            .latency_target
            .as_ref()
            .map(latency::LatencyTarget::summary_line);
        let apps = self.apps.as_ref().map(replay::AppScores::summary_line);
        let fakecap = self.fakecap.as_ref().map(verify::FakeCap::summary_line);
        let mut lines: Vec<String> = fakecap
            .into_iter()
            .chain(apps)
            .chain(fill)
            .chain(lat)
            .collect();
        lines.extend(self.replay.iter().flat_map(replay::Replay::lines));
        lines
    }

    /// (Not in the dashboard's build: the agent sends them, `RunInfo::findings`.)
    #[cfg(not(target_arch = "wasm32"))]
    pub fn summary_lines(&self) -> Vec<String> {
        use crate::units::format_bytes;
        let a = self;
        let mut lines = Vec::new();
        lines.extend(a.preset_lines());
        if let Some(w) = &a.flushcheck {
            lines.push(format!(
                "flush check: {} writes recorded durable on the witness {} (session {}); after the power cut and a restart, Targets → Verify after power cut with that witness (the session blank: the newest of this agent on the target) reads each back",
                w.acked, w.witness, w.session
            ));
        }
        if let Some(c) = &a.cache_cliff {
            lines.push(match (c.detected, c.cache_bytes) {
                (true, Some(b)) => format!(
                    "cache cliff: after {} written at {:.1} s, {:.0} → {:.0} MB/s ({:.0} %), confidence {:.2}",
                    format_bytes(b),
                    c.at_s.unwrap_or(0.0),
                    c.pre_mbps.unwrap_or(0.0),
                    c.post_mbps.unwrap_or(0.0),
                    c.ratio.unwrap_or(0.0) * 100.0,
                    c.confidence
                ),
                _ if c.verdict == Verdict::NotEnoughData => "cache cliff: not enough write samples".into(),
                _ => "cache cliff: none (write rate held)".into(),
            });
        }
        if let Some(r) = &a.cache_recovery {
            lines.push(match (r.first.cache_bytes, r.recovered_bytes, r.recovered_share) {
                (Some(c), Some(b), Some(share)) if r.verdict == Verdict::Found => format!(
                    "cache recovery: {} cache in the first write; after {:.1} s idle, {} ({:.0} %) written fast again{}",
                    format_bytes(c),
                    r.idle_s,
                    format_bytes(b),
                    share * 100.0,
                    if b >= r.second_written_bytes {
                        " (the whole second write: at least that much)"
                    } else {
                        ""
                    }
                ),
                _ if r.verdict == Verdict::NotEnoughData => {
                    "cache recovery: not enough data in the first write".into()
                }
                _ => "cache recovery: no cache found in the first write (write more, --size)".into(),
            });
        }
        if let Some(s) = &a.steady_state {
            lines.push(steady_line(s));
        }
        if let Some(f) = &a.first_last {
            if f.verdict == Verdict::Found {
                lines.push(format!(
                    "first vs last {:.0} s: {:.0} → {:.0} IOPS ({:.0} %)",
                    f.window_s,
                    f.first_iops,
                    f.last_iops,
                    f.iops_ratio.unwrap_or(0.0) * 100.0
                ));
            }
        }
        if let Some(t) = &a.thermal {
            if t.classification != Slowdown::None {
                lines.push(format!("slowdown: {} ({})", t.classification, t.reason).to_lowercase());
            }
            if let (Some(lo), Some(hi)) = (t.min_c, t.max_c) {
                lines.push(format!("temperature: {lo:.0}–{hi:.0} °C"));
            }
        }
        if let Some(s) = &a.sustain {
            lines.push(format!(
                "sustain {:.0} MB/s: {} (achieved {:.0} MB/s, buffer needed {}, longest stall {} ms, 1 s windows below: {})",
                s.required_mbps,
                if s.pass { "PASS" } else { "FAIL" },
                s.achieved_mbps,
                format_bytes(s.buffer_bytes_needed),
                s.longest_stall_ms,
                s.windows_below_1s
            ));
        }
        if let Some(b) = &a.block_size {
            if let (Some(i), Some(m)) = (b.best_iops_bs, b.best_mbps_bs) {
                lines.push(format!(
                    "block size: best IOPS at {}, best MB/s at {}, saturates from {}",
                    format_bytes(i),
                    format_bytes(m),
                    b.saturation_bs.map(format_bytes).unwrap_or_default()
                ));
            }
        }
        if let Some(c) = &a.compressibility {
            if let Some(r) = c.zeros_random_ratio {
                lines.push(format!("data pattern: zeros/random = {r:.2}×"));
            }
        }
        if let Some(s) = &a.stalls {
            if s.verdict == Verdict::Found {
                let longest = s.gaps.iter().map(|g| g.ms).fold(0.0, f64::max);
                lines.push(format!(
                    "stalls: {} interval(s) and {} I/O(s) over {:.0} ms; {} gap(s) with no completion for {:.0} ms or more{}",
                    s.intervals.len(),
                    s.slow_ios_total,
                    s.threshold_ms,
                    s.gaps_total,
                    s.threshold_ms,
                    if s.gaps_total > 0 {
                        format!(" (longest {longest:.0} ms)")
                    } else {
                        String::new()
                    }
                ));
            }
        }
        lines
    }
}

/// Prefix sums of a series: the sum, mean and squared error about the mean of any stretch
/// `[a, b)` in O(1), so a two-level split search is linear (it runs live in the browser).
pub(crate) struct Prefix {
    s1: Vec<f64>,
    s2: Vec<f64>,
}

impl Prefix {
    pub(crate) fn new(x: &[f64]) -> Prefix {
        let (mut s1, mut s2) = (vec![0.0; x.len() + 1], vec![0.0; x.len() + 1]);
        for (i, v) in x.iter().enumerate() {
            s1[i + 1] = s1[i] + v;
            s2[i + 1] = s2[i] + v * v;
        }
        Prefix { s1, s2 }
    }

    pub(crate) fn sum(&self, a: usize, b: usize) -> f64 {
        self.s1[b] - self.s1[a]
    }

    pub(crate) fn mean(&self, a: usize, b: usize) -> f64 {
        self.sum(a, b) / (b - a).max(1) as f64
    }

    pub(crate) fn sse(&self, a: usize, b: usize) -> f64 {
        let n = (b - a).max(1) as f64;
        let sum = self.sum(a, b);
        (self.s2[b] - self.s2[a]) - sum * sum / n
    }
}

pub(crate) fn mean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        0.0
    } else {
        xs.iter().sum::<f64>() / xs.len() as f64
    }
}

pub(crate) fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    if v.is_empty() {
        0.0
    } else {
        v[v.len() / 2]
    }
}

/// The steady-state analysis in one line: fio's rule over a window of time, or the SNIA
/// rule over rounds.
#[cfg(not(target_arch = "wasm32"))]
fn steady_line(s: &SteadyState) -> String {
    match (s.attained, s.round) {
        // fio's rule (the spec's `steady`): over a window of time, not rounds.
        (ok, _) if s.criterion.is_some() => format!(
            "steady state (fio's rule): {} over {:.1}..{:.1} s (mean {:.0}, criterion {:.2})",
            if ok { "attained" } else { "not attained" },
            s.window_start_s.unwrap_or(0.0),
            s.window_end_s.unwrap_or(0.0),
            s.mean.unwrap_or(0.0),
            s.criterion.unwrap_or(0.0)
        ),
        (true, Some(r)) => format!(
            "steady state: attained at round {r} (mean {:.0} IOPS, range {:.1} %, slope {:.1} %)",
            s.mean.unwrap_or(0.0),
            s.range_pct.unwrap_or(0.0),
            s.slope_pct.unwrap_or(0.0)
        ),
        _ if s.verdict == Verdict::NotEnoughData => "steady state: not enough rounds".into(),
        _ => format!("steady state: not attained in {} rounds", s.rounds.len()),
    }
}
