//! Steady state by the SNIA PTS rule: over a window of 5 rounds, (max − min) ≤ 20 % of the
//! mean and the excursion of the least-squares line across the window ≤ 10 % of the mean.
//! The first window that meets both is reported (its last round).

use super::{mean, SteadyState, Verdict};
use crate::Sample;

pub const WINDOW: usize = 5;
const MAX_RANGE_PCT: f64 = 20.0;
const MAX_SLOPE_PCT: f64 = 10.0;

struct Check {
    mean: f64,
    range_pct: f64,
    slope_pct: f64,
}

fn check(w: &[f64]) -> Check {
    let m = mean(w);
    let (lo, hi) = w
        .iter()
        .fold((f64::MAX, f64::MIN), |(lo, hi), &v| (lo.min(v), hi.max(v)));
    let n = w.len() as f64;
    let xm = (n - 1.0) / 2.0;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (i, &y) in w.iter().enumerate() {
        let dx = i as f64 - xm;
        sxy += dx * (y - m);
        sxx += dx * dx;
    }
    let slope = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    let pct = |v: f64| {
        if m > 0.0 {
            v / m * 100.0
        } else {
            f64::INFINITY
        }
    };
    Check {
        mean: m,
        range_pct: pct(hi - lo),
        slope_pct: pct((slope * (n - 1.0)).abs()),
    }
}

/// Steady state over per-round measures (e.g. IOPS of each 1-minute round).
pub fn steady_state_rounds(rounds: &[f64]) -> SteadyState {
    let mut out = SteadyState {
        rounds: rounds.to_vec(),
        ..SteadyState::default()
    };
    if rounds.len() < WINDOW {
        out.verdict = Verdict::NotEnoughData;
        return out;
    }
    let mut last = None;
    for end in WINDOW..=rounds.len() {
        let c = check(&rounds[end - WINDOW..end]);
        let ok = c.range_pct <= MAX_RANGE_PCT && c.slope_pct <= MAX_SLOPE_PCT;
        last = Some((end, c));
        if ok {
            break;
        }
    }
    if let Some((end, c)) = last {
        out.attained = c.range_pct <= MAX_RANGE_PCT && c.slope_pct <= MAX_SLOPE_PCT;
        out.verdict = if out.attained {
            Verdict::Found
        } else {
            Verdict::NotFound
        };
        out.round = Some(end as u32);
        out.mean = Some(c.mean);
        out.range_pct = Some(c.range_pct);
        out.slope_pct = Some(c.slope_pct);
    }
    out
}

/// Steady state over a single long run, judged on consecutive windows of `window_s` seconds
/// (total IOPS per window) as if each were a round.
pub fn steady_state_windows(samples: &[Sample], window_s: f64) -> SteadyState {
    let mut rounds = Vec::new();
    let mut bounds = Vec::new();
    let (mut ios, mut start) = (0u64, None::<u64>);
    let window_ns = (window_s * 1e9) as u64;
    for s in samples {
        let st = *start.get_or_insert(s.start_ns);
        if s.end_ns > st {
            ios += s.total_ios();
        }
        if s.end_ns - st >= window_ns {
            rounds.push(ios as f64 / ((s.end_ns - st) as f64 / 1e9));
            bounds.push((st, s.end_ns));
            ios = 0;
            start = None;
        }
    }
    let mut out = steady_state_rounds(&rounds);
    if out.attained {
        if let Some(r) = out.round {
            let end = r as usize;
            out.window_start_s = Some(bounds[end - WINDOW].0 as f64 / 1e9);
            out.window_end_s = Some(bounds[end - 1].1 as f64 / 1e9);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attained_after_the_transient() {
        // Fresh-out-of-box fast, falling, then settling with noise (the PTS curve).
        let rounds = [
            90_000.0, 60_000.0, 40_000.0, 31_000.0, 30_500.0, 29_800.0, 30_200.0, 30_100.0,
            29_900.0,
        ];
        let s = steady_state_rounds(&rounds);
        assert!(s.attained, "{s:?}");
        assert_eq!(s.round, Some(8));
        assert!(s.range_pct.unwrap() <= 20.0 && s.slope_pct.unwrap() <= 10.0);
    }

    #[test]
    fn a_falling_run_never_settles() {
        let rounds: Vec<f64> = (0..12).map(|i| 100_000.0 * 0.9f64.powi(i)).collect();
        let s = steady_state_rounds(&rounds);
        assert!(!s.attained);
        assert_eq!(s.verdict, Verdict::NotFound);
        assert_eq!(
            steady_state_rounds(&rounds[..3]).verdict,
            Verdict::NotEnoughData
        );
    }

    #[test]
    fn windows_of_a_long_run_give_the_window_times() {
        let samples: Vec<Sample> = (0..60u64)
            .map(|i| {
                let mut s = Sample {
                    seq: i,
                    start_ns: i * 1_000_000_000,
                    end_ns: (i + 1) * 1_000_000_000,
                    ..Sample::default()
                };
                s.write.ios = if i < 20 { 50_000 - i * 2000 } else { 10_000 };
                s
            })
            .collect();
        let s = steady_state_windows(&samples, 5.0);
        assert!(s.attained, "{s:?}");
        assert_eq!(s.window_start_s, Some(20.0));
        assert_eq!(s.window_end_s, Some(45.0));
    }
}
