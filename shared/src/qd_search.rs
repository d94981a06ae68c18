//! fio's `latency_target`: each job looks for the deepest queue (up to its `iodepth`) at
//! which `percentile` % of its I/Os complete within the target, judging one window at a
//! time, starting at QD1, doubling while windows hold and bisecting once one fails; when a
//! window holds at the depth it already had, one more window runs there as the final one
//! (its figures kept apart, as fio's statistics restart there) and the job ends after it.

use serde::{Deserialize, Serialize};

/// The rule a job searches by (fio's `latency_target`, `latency_window`,
/// `latency_percentile`).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LatencyRule {
    /// An I/O's latency (submission to completion) must be at most this, µs.
    pub target_us: u64,
    /// Each depth is judged over this long, ms.
    pub window_ms: u64,
    /// The share of a window's I/Os that must meet the target, percent (0 < p ≤ 100; at
    /// 100 a single slow I/O lowers the depth at once, and at QD1 fails the run).
    pub percentile: f64,
}

/// Most µs a latency target can be (60 s), and most ms a window (1 h).
pub const MAX_TARGET_US: u64 = 60_000_000;
pub const MAX_WINDOW_MS: u64 = 3_600_000;

impl LatencyRule {
    /// Why the rule cannot run, naming the value.
    pub fn check(&self) -> Result<(), String> {
        if !(1..=MAX_TARGET_US).contains(&self.target_us) {
            return Err(format!(
                "target_us = {}: must be 1 µs..60 s",
                self.target_us
            ));
        }
        if !(1..=MAX_WINDOW_MS).contains(&self.window_ms) {
            return Err(format!("window_ms = {}: must be 1 ms..1 h", self.window_ms));
        }
        if !(self.percentile > 0.0 && self.percentile <= 100.0) {
            return Err(format!(
                "percentile = {}: must be above 0 and at most 100",
                self.percentile
            ));
        }
        Ok(())
    }
}

/// What the search found (`analysis.qd_search`).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct QdSearch {
    /// The step of the run (0 for a run of one workload).
    pub step: u32,
    pub rule: LatencyRule,
    /// The depth each job ended at (fio's `latency_depth`).
    pub depths: Vec<u32>,
    /// The final windows' figures (the jobs' together), when a job reached its final
    /// window: what fio's statistics hold after it restarted them there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_window: Option<FinalWindow>,
}

impl QdSearch {
    /// One line for the terminal: the rule, the depth found and the final window's figures.
    pub fn summary_line(&self) -> String {
        let fmt = crate::units::format_ns;
        let depths = match self.depths.as_slice() {
            [one] => format!("QD{one}"),
            many => format!(
                "QD {} (by job)",
                many.iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        let head = format!(
            "latency target {} for {} % of I/Os over {} windows: {depths}",
            fmt(self.rule.target_us * 1_000),
            self.rule.percentile,
            fmt(self.rule.window_ms * 1_000_000)
        );
        match &self.final_window {
            Some(w) => {
                let s = &w.summary;
                format!(
                    "{head}; final window {}: {:.0} IOPS, {:.1} MB/s, p99 {}",
                    fmt(s.duration_ns),
                    s.read.iops + s.write.iops,
                    s.read.mb_s + s.write.mb_s,
                    fmt(s.read.lat.p99_ns.max(s.write.lat.p99_ns))
                )
            }
            None => format!("{head}; the final window was not reached"),
        }
    }
}

/// The figures of the final windows.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FinalWindow {
    /// Where it started in the step's measured time, ns.
    pub from_ns: u64,
    pub summary: crate::RunSummary,
    pub histogram: crate::HistogramDump,
}
