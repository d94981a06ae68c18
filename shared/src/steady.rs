//! fio's steady-state stop rule (`steadystate`, `ss_dur`, `ss_ramp`): over a rolling window
//! of per-interval IOPS or bandwidth, the largest deviation from the window's mean, or the
//! slope of its least-squares line, within a limit (absolute, or a percentage of the mean)
//! ends the job as done.

use serde::{Deserialize, Serialize};
use std::fmt;

/// What the rule watches.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum SteadyMeasure {
    /// I/Os per second, reads and writes together.
    Iops,
    /// Bytes per second, reads and writes together.
    Bw,
}

/// A steady-state rule: `iops:2%`, `bw_slope:0.3%`, `iops:500` (fio's syntax).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct SteadyRule {
    pub measure: SteadyMeasure,
    /// Judge the slope of the window's least-squares line (per second) instead of the
    /// largest deviation from its mean.
    pub slope: bool,
    /// The limit: of the deviation or slope, in the measure's units or (`pct`) in percent
    /// of the window's mean.
    pub limit: f64,
    pub pct: bool,
    /// The rolling window (fio's `ss_dur`).
    pub window_ms: u64,
    /// Time from the start before values are collected (fio's `ss_ramp`).
    pub ramp_ms: u64,
}

/// A window's figures under a rule.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Judged {
    pub mean: f64,
    /// Largest |value − mean|.
    pub max_deviation: f64,
    /// Least-squares slope, per second.
    pub slope: f64,
    /// What the rule compares with its limit (its size): the deviation or the slope (signed,
    /// as fio prints it), in percent of the mean when the rule is in percent.
    pub criterion: f64,
    pub attained: bool,
}

impl SteadyRule {
    /// Judges a window of (time in seconds, value) points, one per interval (read three
    /// times, never copied: the runner judges every interval).
    pub fn judge<I>(&self, window: I) -> Judged
    where
        I: Iterator<Item = (f64, f64)> + Clone,
    {
        let len = window.clone().count();
        let n = len.max(1) as f64;
        let (st, sv) = window
            .clone()
            .fold((0.0, 0.0), |(st, sv), (t, v)| (st + t, sv + v));
        let (mean_t, mean) = (st / n, sv / n);
        let (max_deviation, sxy, sxx) = window.fold((0.0f64, 0.0, 0.0), |(m, sxy, sxx), (t, v)| {
            (
                m.max((v - mean).abs()),
                sxy + (t - mean_t) * (v - mean),
                sxx + (t - mean_t) * (t - mean_t),
            )
        });
        let slope = if sxx > 0.0 { sxy / sxx } else { 0.0 };
        // A slope keeps its sign, as fio prints it; the limit holds its size.
        let raw = if self.slope { slope } else { max_deviation };
        // fio divides a slope by the window's mean as a whole number (its steady-state code
        // keeps that mean in an integer); a deviation by the exact mean. Both as fio 3.33
        // prints them (checked against its own windows in the suite's stop_rules test).
        let base = if self.slope { mean.floor() } else { mean };
        let criterion = if self.pct {
            if base > 0.0 {
                100.0 * raw / base
            } else {
                f64::INFINITY
            }
        } else {
            raw
        };
        Judged {
            mean,
            max_deviation,
            slope,
            criterion,
            attained: len >= 2 && criterion.abs() <= self.limit,
        }
    }

    /// Why the rule cannot be used, if it cannot.
    pub fn check(&self) -> Result<(), String> {
        if !self.limit.is_finite() || self.limit < 0.0 {
            return Err("the limit must be a number ≥ 0".into());
        }
        if !(1_000..=86_400_000).contains(&self.window_ms) || self.ramp_ms > 86_400_000 {
            return Err("the window must be 1 s..24 h, the ramp at most 24 h".into());
        }
        Ok(())
    }
}

impl SteadyRule {
    /// fio's `steadystate=` text (`iops:2%`, `iops_slope:0.3%`, `bw:20%`, `bw_slope:1M`, an
    /// absolute limit in I/Os or bytes per second), with its window and ramp.
    pub fn parse(text: &str, window_ms: u64, ramp_ms: u64) -> Result<Self, String> {
        let err = || {
            format!("'{text}': expected iops, iops_slope, bw or bw_slope, ':' and a limit (e.g. iops:2%)")
        };
        let (kind, limit) = text.split_once(':').ok_or_else(err)?;
        let (measure, slope) = match kind.trim() {
            "iops" => (SteadyMeasure::Iops, false),
            "iops_slope" => (SteadyMeasure::Iops, true),
            "bw" => (SteadyMeasure::Bw, false),
            "bw_slope" => (SteadyMeasure::Bw, true),
            _ => return Err(err()),
        };
        let limit = limit.trim();
        let (limit, pct) = match limit.strip_suffix('%') {
            Some(p) => (p.trim().parse::<f64>().map_err(|_| err())?, true),
            None => match limit.parse::<f64>() {
                Ok(v) => (v, false),
                Err(_) if measure == SteadyMeasure::Bw => (
                    crate::units::parse_size(limit).map_err(|_| err())? as f64,
                    false,
                ),
                Err(_) => return Err(err()),
            },
        };
        let rule = SteadyRule {
            measure,
            slope,
            limit,
            pct,
            window_ms,
            ramp_ms,
        };
        rule.check().map(|()| rule)
    }
}

impl fmt::Display for SteadyRule {
    /// fio's own spelling, as its JSON's "ss": `iops:2.000000%`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = match self.measure {
            SteadyMeasure::Iops => "iops",
            SteadyMeasure::Bw => "bw",
        };
        let s = if self.slope { "_slope" } else { "" };
        let p = if self.pct { "%" } else { "" };
        write!(f, "{m}{s}:{:.6}{p}", self.limit)
    }
}

/// A rule fed a run's samples in order: where it is first met, or how the last full
/// window stood. The agent stops the run where it says so, and the report's analysis is the
/// same watch fed the stored samples.
#[derive(Clone, Debug)]
pub struct SteadyWatch {
    rule: SteadyRule,
    per_window: usize,
    /// (start s, end s, value) of the window's samples.
    window: std::collections::VecDeque<(f64, f64, f64)>,
    last: Option<(Judged, f64, f64)>,
}

impl SteadyWatch {
    /// A watch over samples of `interval_ms`: a window holds `window_ms / interval_ms` of them
    /// (fio: `ss_dur / ss_interval`), at least 2.
    pub fn new(rule: SteadyRule, interval_ms: u64) -> Self {
        SteadyWatch {
            rule,
            per_window: ((rule.window_ms / interval_ms.max(1)) as usize).max(2),
            window: Default::default(),
            last: None,
        }
    }

    /// Takes the next sample; true once the rule is met (and from then on).
    pub fn push(&mut self, s: &crate::Sample) -> bool {
        if self.attained() {
            return true;
        }
        let secs = s.end_ns.saturating_sub(s.start_ns) as f64 / 1e9;
        if s.pause || secs <= 0.0 || s.start_ns < self.rule.ramp_ms * 1_000_000 {
            return false;
        }
        let (ios, bytes) = (s.total_ios(), s.total_bytes());
        let v = match self.rule.measure {
            SteadyMeasure::Iops => ios as f64 / secs,
            SteadyMeasure::Bw => bytes as f64 / secs,
        };
        self.window
            .push_back((s.start_ns as f64 / 1e9, s.end_ns as f64 / 1e9, v));
        if self.window.len() > self.per_window {
            self.window.pop_front();
        }
        if self.window.len() == self.per_window {
            let pts = self.window.iter().map(|&(_, e, v)| (e, v));
            let from = self.window.front().map_or(0.0, |w| w.0);
            let to = self.window.back().map_or(0.0, |w| w.1);
            self.last = Some((self.rule.judge(pts), from, to));
        }
        self.attained()
    }

    pub fn rule(&self) -> &SteadyRule {
        &self.rule
    }

    pub fn attained(&self) -> bool {
        self.last.is_some_and(|(j, _, _)| j.attained)
    }

    /// The analysis: the window that met the rule, or the last full one.
    pub fn result(&self) -> crate::analysis::SteadyState {
        use crate::analysis::{SteadyState, Verdict};
        let Some((j, from, to)) = self.last else {
            return SteadyState {
                verdict: Verdict::NotEnoughData,
                ..SteadyState::default()
            };
        };
        SteadyState {
            verdict: if j.attained {
                Verdict::Found
            } else {
                Verdict::NotFound
            },
            attained: j.attained,
            window_start_s: Some(from),
            window_end_s: Some(to),
            mean: Some(j.mean),
            rounds: self.window.iter().map(|w| w.2).collect(),
            max_deviation: Some(j.max_deviation),
            slope: Some(j.slope),
            criterion: Some(j.criterion),
            ..SteadyState::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(slope: bool, limit: f64, pct: bool) -> SteadyRule {
        SteadyRule {
            measure: SteadyMeasure::Iops,
            slope,
            limit,
            pct,
            window_ms: 3_000,
            ramp_ms: 0,
        }
    }

    #[test]
    fn deviation_and_slope_are_fios() {
        // fio 3.33's own figures for iops [10135, 9272, 9718]: mean 9708.33, max deviation
        // 436.333333, criterion 4.494421 %.
        let w = [(1.0, 10135.0), (2.0, 9272.0), (3.0, 9718.0)];
        let j = rule(false, 50.0, true).judge(w.iter().copied());
        assert!((j.mean - 9708.333333).abs() < 1e-3);
        assert!((j.max_deviation - 436.333333).abs() < 1e-3);
        assert!((j.criterion - 4.494421).abs() < 1e-4, "{}", j.criterion);
        assert!(j.attained);
        assert!(!rule(false, 4.0, true).judge(w.iter().copied()).attained);
        // A line rising 10 a second: slope 10, 0.1 % of a mean of 10,000.
        let w: Vec<(f64, f64)> = (0..5)
            .map(|i| (i as f64, 9980.0 + 10.0 * i as f64))
            .collect();
        let j = rule(true, 0.1, true).judge(w.iter().copied());
        assert!((j.slope - 10.0).abs() < 1e-9 && (j.criterion - 0.1).abs() < 1e-9);
        assert!(j.attained);
        assert!(!rule(true, 9.0, false).judge(w.iter().copied()).attained);
        assert_eq!(rule(true, 0.3, true).to_string(), "iops_slope:0.300000%");
        assert_eq!(
            SteadyRule::parse("iops_slope:0.3%", 3_000, 0),
            Ok(rule(true, 0.3, true))
        );
        let bw = SteadyRule::parse("bw:1M", 3_000, 500).expect("bw");
        assert_eq!((bw.limit, bw.pct, bw.ramp_ms), (1_048_576.0, false, 500));
        for bad in ["lat:2%", "iops", "iops:x%", "iops:-1"] {
            assert!(SteadyRule::parse(bad, 3_000, 0).is_err(), "{bad}");
        }
        assert!(SteadyRule::parse("iops:2%", 0, 0)
            .is_err_and(|e| e.contains("window must be 1 s..24 h")));
    }

    #[test]
    fn the_watch_meets_the_rule_on_the_first_steady_window_after_the_ramp() {
        let r = SteadyRule {
            ramp_ms: 2_000,
            ..rule(false, 5.0, true)
        };
        let mut w = SteadyWatch::new(r, 1_000);
        // 1 s samples of 4K I/Os: wild during the ramp, then 1000, 1100, 1000, 1010, 1000.
        let iops = [5000, 100, 1000, 1100, 1000, 1010, 1000];
        let met: Vec<bool> = iops
            .iter()
            .enumerate()
            .map(|(i, &n)| {
                let mut s = crate::Sample {
                    start_ns: i as u64 * 1_000_000_000,
                    end_ns: (i as u64 + 1) * 1_000_000_000,
                    ..crate::Sample::default()
                };
                s.read.ios = n;
                w.push(&s)
            })
            .collect();
        // Windows of 3 from t = 2 s: [1000 1100 1000] deviates 6.4 %, [1100 1000 1010] 6.0 %,
        // [1000 1010 1000] 0.66 %: met at the seventh sample.
        assert_eq!(met, [false, false, false, false, false, false, true]);
        let a = w.result();
        assert!(a.attained);
        assert_eq!((a.window_start_s, a.window_end_s), (Some(4.0), Some(7.0)));
        assert_eq!(a.rounds, vec![1000.0, 1010.0, 1000.0]);
    }
}
