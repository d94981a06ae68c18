//! How far a run is and when it will end, counted through its plan: every step and pause
//! as the agent planned them when the run started (`RunInfo::plan`), the step the latest
//! sample belongs to, and the bytes done (cumulative in every sample). A run stored
//! without a plan counts as one step of its spec.

use shared::preset::PlannedStep;
use shared::{Sample, WorkloadSpec};

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Progress {
    /// Bytes done in the current step.
    pub done_bytes: u64,
    /// Bytes the current step moves, when it ends by volume.
    pub total_bytes: Option<u64>,
    /// Of the whole run, 0..=1, when the end is known.
    pub fraction: Option<f64>,
    pub elapsed_s: f64,
    /// Seconds left of the whole run, when the end is known.
    pub eta_s: Option<f64>,
    /// `step 3 of 8: SEQ1M Q1T1 read #1`, or `pause before step 3 of 8: …` (runs of
    /// several steps).
    pub step: Option<String>,
}

/// One planned step of a run given as a spec alone (runs stored before plans were).
fn from_spec(spec: &WorkloadSpec, target_size: Option<u64>) -> PlannedStep {
    let span = spec
        .size
        .or_else(|| target_size.map(|t| t.saturating_sub(spec.offset)))
        .unwrap_or(0);
    PlannedStep {
        name: spec.label(),
        runtime_ms: spec.runtime_ms.filter(|_| spec.is_time_based()),
        bytes: if spec.is_time_based() {
            None
        } else {
            Some(
                spec.io_size
                    .unwrap_or(span.saturating_mul(u64::from(spec.loops))),
            )
        },
        span_bytes: span,
        ..PlannedStep::default()
    }
}

/// Seconds a step lasts as planned; `None` when only its bytes are known (`rate` bytes/s
/// gives the estimate then) or a search of unknown length.
fn planned_s(p: &PlannedStep, rate: f64) -> Option<f64> {
    if p.search {
        return None;
    }
    let rounds = f64::from(p.max_rounds.unwrap_or(1));
    match (p.runtime_ms, p.bytes) {
        (Some(ms), _) => Some(ms as f64 / 1e3 * rounds),
        (None, Some(b)) if rate > 0.0 => Some(b as f64 / rate),
        _ => None,
    }
}

/// Progress of a run with `plan` (or one step of `spec` when the plan is empty) after
/// `samples` (in `seq` order).
pub fn progress(
    plan: &[PlannedStep],
    spec: &WorkloadSpec,
    target_size: Option<u64>,
    samples: &[Sample],
) -> Progress {
    let single;
    let plan = if plan.is_empty() {
        single = [from_spec(spec, target_size)];
        &single[..]
    } else {
        plan
    };
    let last = samples.last();
    let elapsed_s = last.map_or(0.0, |s| s.end_ns as f64 / 1e9);
    let idx = last.map_or(0, |s| s.step as usize).min(plan.len() - 1);
    let cur = &plan[idx];
    let in_pause = last.is_some_and(|s| s.pause);
    let cum = |s: &Sample| s.read.cum_bytes + s.write.cum_bytes;
    // Where the current step's I/O began: the end of the sample before its first one.
    let first_of_step = samples
        .iter()
        .position(|s| s.step as usize == idx && !s.pause);
    let (step_t0, step_b0) = match first_of_step {
        Some(0) | None => (samples.first().map_or(0.0, |s| s.start_ns as f64 / 1e9), 0),
        Some(i) => (samples[i].start_ns as f64 / 1e9, cum(&samples[i - 1])),
    };
    let done = if in_pause || first_of_step.is_none() {
        0
    } else {
        last.map_or(0, |s| cum(s).saturating_sub(step_b0))
    };
    let step_elapsed = if in_pause { 0.0 } else { elapsed_s - step_t0 };
    let rate = if step_elapsed > 0.0 {
        done as f64 / step_elapsed
    } else {
        0.0
    };
    // Left of the current step: its pause (when in it), then its own time or bytes.
    let pause_left = if in_pause {
        let paused: f64 = samples
            .iter()
            .filter(|s| s.step as usize == idx && s.pause)
            .map(|s| (s.end_ns - s.start_ns) as f64 / 1e9)
            .sum();
        (cur.pause_ms as f64 / 1e3 - paused).max(0.0)
    } else {
        0.0
    };
    let own_left = match (cur.runtime_ms, cur.bytes) {
        _ if cur.search => None,
        (Some(_), _) => planned_s(cur, rate).map(|t| (t - step_elapsed).max(0.0)),
        (None, Some(b)) if rate > 0.0 => Some(b.saturating_sub(done) as f64 / rate),
        (None, Some(_)) if in_pause => planned_s(cur, overall_rate(samples)),
        _ => None,
    };
    let later_rate = if rate > 0.0 {
        rate
    } else {
        overall_rate(samples)
    };
    let later: Option<f64> = plan[idx + 1..]
        .iter()
        .map(|p| planned_s(p, later_rate).map(|t| t + p.pause_ms as f64 / 1e3))
        .sum();
    let eta_s = match (own_left, later) {
        (Some(a), Some(b)) => Some(pause_left + a + b),
        _ => None,
    };
    let fraction = match eta_s {
        Some(e) if elapsed_s + e > 0.0 => Some((elapsed_s / (elapsed_s + e)).clamp(0.0, 1.0)),
        // Only the bytes of one step are known.
        _ if plan.len() == 1 => cur
            .bytes
            .filter(|b| *b > 0)
            .map(|b| (done as f64 / b as f64).min(1.0)),
        _ => None,
    };
    let step = (plan.len() > 1).then(|| {
        let what = if in_pause {
            "pause before step"
        } else {
            "step"
        };
        format!("{what} {} of {}: {}", idx + 1, plan.len(), cur.name)
    });
    Progress {
        done_bytes: done,
        total_bytes: cur.bytes,
        fraction,
        elapsed_s,
        eta_s,
        step,
    }
}

/// Bytes per second over the run so far (pauses included).
fn overall_rate(samples: &[Sample]) -> f64 {
    let Some(last) = samples.iter().rev().find(|s| !s.pause) else {
        return 0.0;
    };
    let moved: f64 = samples
        .iter()
        .filter(|s| !s.pause)
        .map(|s| (s.end_ns - s.start_ns) as f64 / 1e9)
        .sum();
    let bytes = last.read.cum_bytes + last.write.cum_bytes;
    if moved > 0.0 {
        bytes as f64 / moved
    } else {
        0.0
    }
}

/// `1:05:09`, `4:07` or `12 s`.
pub fn fmt_eta(s: f64) -> String {
    let s = s.round() as u64;
    match s {
        0..=59 => format!("{s} s"),
        60..=3599 => format!("{}:{:02}", s / 60, s % 60),
        _ => format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: f64, written: u64) -> Sample {
        let mut s = Sample {
            start_ns: ((secs - 1.0).max(0.0) * 1e9) as u64,
            end_ns: (secs * 1e9) as u64,
            ..Sample::default()
        };
        s.write.cum_bytes = written;
        s
    }

    #[test]
    fn time_based_runs_count_down_the_clock() {
        let spec = WorkloadSpec {
            runtime_ms: Some(10_000),
            ..WorkloadSpec::default()
        };
        let samples: Vec<Sample> = (1..=4).map(|i| at(f64::from(i), 123)).collect();
        let p = progress(&[], &spec, Some(1 << 30), &samples);
        assert_eq!(
            (p.fraction, p.eta_s, p.total_bytes),
            (Some(0.4), Some(6.0), None)
        );
        assert_eq!(p.step, None);
    }

    #[test]
    fn volume_runs_use_the_span_and_the_average_rate() {
        let spec = WorkloadSpec {
            offset: 1 << 20,
            loops: 2,
            ..WorkloadSpec::default()
        };
        let target = (100 << 20) + (1 << 20);
        let samples: Vec<Sample> = (1..=10)
            .map(|i| at(f64::from(i), i as u64 * (5 << 20)))
            .collect();
        let p = progress(&[], &spec, Some(target), &samples);
        assert_eq!(p.total_bytes, Some(200 << 20));
        assert_eq!(p.fraction, Some(0.25));
        assert_eq!(p.eta_s, Some(30.0));
        let none = progress(&[], &spec, None, &[]);
        assert_eq!(none.eta_s, None);
    }

    /// A cdm-like plan: 8 steps of 1 s with 0.5 s pauses before all but the first
    /// (11.5 s in all).
    fn cdm_plan() -> Vec<PlannedStep> {
        (0..8)
            .map(|i| PlannedStep {
                name: format!("test {i}"),
                pause_ms: if i == 0 { 0 } else { 500 },
                runtime_ms: Some(1000),
                ..PlannedStep::default()
            })
            .collect()
    }

    /// Samples of 0.5 s through the plan up to `until` seconds.
    fn through(plan: &[PlannedStep], until: f64) -> Vec<Sample> {
        let mut out = Vec::new();
        let mut t = 0.0;
        for (i, p) in plan.iter().enumerate() {
            for (pause, secs) in [(true, p.pause_ms as f64 / 1e3), (false, 1.0)] {
                let mut left = secs;
                while left > 1e-9 && t + 0.5 <= until + 1e-9 {
                    let mut s = at(t + 0.5, 0);
                    s.start_ns = (t * 1e9) as u64;
                    s.step = i as u32;
                    s.pause = pause;
                    out.push(s);
                    t += 0.5;
                    left -= 0.5;
                }
            }
        }
        out
    }

    #[test]
    fn a_multi_step_run_counts_every_step_and_pause() {
        let plan = cdm_plan();
        let spec = WorkloadSpec::default();
        // Half a second into step 4, 5 s of the planned 11.5 s.
        let p = progress(&plan, &spec, None, &through(&plan, 5.0));
        assert_eq!(p.fraction, Some(5.0 / 11.5));
        assert_eq!(p.eta_s, Some(6.5));
        assert_eq!(p.step.as_deref(), Some("step 4 of 8: test 3"));
        // In the pause before step 5.
        let p = progress(&plan, &spec, None, &through(&plan, 6.0));
        assert_eq!(p.step.as_deref(), Some("pause before step 5 of 8: test 4"));
        let end = progress(&plan, &spec, None, &through(&plan, 11.5));
        assert_eq!(end.fraction, Some(1.0));
    }

    #[test]
    fn eta_reads_like_a_clock() {
        assert_eq!(fmt_eta(12.2), "12 s");
        assert_eq!(fmt_eta(247.0), "4:07");
        assert_eq!(fmt_eta(3909.0), "1:05:09");
    }
}
