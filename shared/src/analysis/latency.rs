//! The `latency-target` search: the highest IOPS whose p99 latency stays under a limit.
//! Queue depth doubles from 1 while p99 holds; past the first depth that breaks it, the
//! rate is stepped down at that depth (¾, ½, ¼ of the way from the last good IOPS to the
//! failing round's) until a round holds. Each round is a step of the run.

use serde::{Deserialize, Serialize};

/// The deepest queue the search tries.
pub const MAX_DEPTH: u32 = 256;

/// One round of the search: what it ran and what it measured.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Round {
    pub iodepth: u32,
    /// The rate cap (IOPS), for the rounds that step the rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_iops: Option<u64>,
    pub iops: f64,
    pub p99_us: f64,
    /// p99 under the limit.
    pub ok: bool,
}

impl Round {
    /// The round a step ran (`spec`) and measured (`s`), judged against `limit_us`.
    pub fn of(spec: &crate::WorkloadSpec, s: &crate::RunSummary, limit_us: f64) -> Round {
        let p99_us = s.read.lat.p99_ns.max(s.write.lat.p99_ns) as f64 / 1e3;
        Round {
            iodepth: spec.iodepth,
            rate_iops: match spec.rate {
                Some(crate::Rate::Iops(r)) => Some(r),
                _ => None,
            },
            iops: s.read.iops + s.write.iops,
            p99_us,
            ok: p99_us <= limit_us,
        }
    }

    /// The step name of a round: `QD8`, `QD16 at 40000 IOPS`.
    pub fn name(iodepth: u32, rate: Option<u64>) -> String {
        match rate {
            Some(r) => format!("QD{iodepth} at {r} IOPS"),
            None => format!("QD{iodepth}"),
        }
    }
}

/// The next round to run after `rounds` under `limit_us`: (queue depth, rate cap), or
/// `None` when the search is over.
pub fn next_round(rounds: &[Round]) -> Option<(u32, Option<u64>)> {
    let last = rounds.last()?;
    let stepping_rate = rounds.iter().any(|r| r.rate_iops.is_some());
    if last.ok {
        // Doubling the depth, or done: a rate round that holds is the answer.
        return (!stepping_rate && last.iodepth < MAX_DEPTH).then(|| (last.iodepth * 2, None));
    }
    // The first failing round (at its depth, uncapped) and the best good one before it.
    let fail = rounds.iter().find(|r| !r.ok && r.rate_iops.is_none())?;
    let good = rounds
        .iter()
        .filter(|r| r.ok && r.rate_iops.is_none())
        .map(|r| r.iops)
        .fold(0.0, f64::max);
    let tried = rounds.iter().filter(|r| r.rate_iops.is_some()).count() as u32;
    if tried >= 3 || fail.iops <= good {
        return None;
    }
    let k = 3 - tried;
    let rate = good + (fail.iops - good) * f64::from(k) / 4.0;
    (rate >= 1.0).then_some((fail.iodepth, Some(rate as u64)))
}

/// The search's result.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LatencyTarget {
    pub limit_us: f64,
    pub rounds: Vec<Round>,
    /// The round with the most IOPS under the limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best: Option<Round>,
}

impl LatencyTarget {
    pub fn new(limit_us: f64, rounds: Vec<Round>) -> Self {
        let best = rounds
            .iter()
            .filter(|r| r.ok)
            .copied()
            .max_by(|a, b| a.iops.total_cmp(&b.iops));
        LatencyTarget {
            limit_us,
            rounds,
            best,
        }
    }

    pub fn summary_line(&self) -> String {
        match &self.best {
            Some(b) => format!(
                "latency target: {:.0} IOPS with p99 {:.0} µs ≤ {:.0} µs at QD{}{} ({} rounds)",
                b.iops,
                b.p99_us,
                self.limit_us,
                b.iodepth,
                b.rate_iops
                    .map(|r| format!(", capped at {r} IOPS"))
                    .unwrap_or_default(),
                self.rounds.len()
            ),
            None => format!(
                "latency target: no round kept p99 under {:.0} µs ({} rounds)",
                self.limit_us,
                self.rounds.len()
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A drive whose p99 grows with the depth and whose IOPS saturate at 40k.
    fn measure(qd: u32, rate: Option<u64>, limit: f64) -> Round {
        let open = (10_000.0 * f64::from(qd)).min(40_000.0);
        let iops = rate.map_or(open, |r| (r as f64).min(open));
        let p99 = 100.0 * (iops / 10_000.0).powi(2) + 20.0 * f64::from(qd);
        Round {
            iodepth: qd,
            rate_iops: rate,
            iops,
            p99_us: p99,
            ok: p99 <= limit,
        }
    }

    #[test]
    fn the_search_doubles_depth_then_steps_the_rate() {
        let limit = 750.0;
        let mut rounds = vec![measure(1, None, limit)];
        while let Some((qd, rate)) = next_round(&rounds) {
            rounds.push(measure(qd, rate, limit));
            assert!(rounds.len() < 20, "{rounds:?}");
        }
        let depths: Vec<u32> = rounds.iter().map(|r| r.iodepth).collect();
        // QD1 (120 µs) and QD2 (440 µs) hold, QD4 (1680 µs) breaks; rates at QD4 from
        // 20k + ¾ of 20k down until one holds.
        assert_eq!(depths, [1, 2, 4, 4, 4, 4], "{rounds:?}");
        let t = LatencyTarget::new(limit, rounds);
        let best = t.best.expect("best");
        assert_eq!((best.iodepth, best.rate_iops), (4, Some(25_000)), "{t:?}");
        assert!(t
            .summary_line()
            .starts_with("latency target: 25000 IOPS with p99"));
        // A limit nothing meets.
        let mut rounds = vec![measure(1, None, 10.0)];
        while let Some((qd, rate)) = next_round(&rounds) {
            rounds.push(measure(qd, rate, 10.0));
        }
        assert!(LatencyTarget::new(10.0, rounds).best.is_none());
    }
}
