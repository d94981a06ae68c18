//! The rules a run's merged intervals are judged by as they come, which may end it: a rate
//! floor (fio's `rate_min` / `rate_iops_min`: each direction the workload does I/O in must
//! run at least at the floor, or the run fails there, what was measured kept) and a
//! steady-state rule (fio's `steadystate`: the run ends as done once steady,
//! [`shared::steady::SteadyWatch`]).

use shared::report::RunError;
use shared::steady::SteadyWatch;
use shared::{Rate, Sample, WorkloadSpec};

/// What an interval says about the run.
#[derive(Debug)]
pub enum Verdict {
    Go,
    /// Below the floor: the run fails with this.
    Fail(RunError),
    /// Steady: the run is done.
    Steady,
}

/// A spec's rules.
#[derive(Debug, Clone, Default)]
pub struct StopRules {
    floor: Option<RateFloor>,
    steady: Option<SteadyWatch>,
}

impl StopRules {
    pub fn of(spec: &WorkloadSpec) -> Self {
        StopRules {
            floor: RateFloor::of(spec),
            steady: spec.steady.map(|r| SteadyWatch::new(r, spec.interval_ms)),
        }
    }

    /// Judges the next merged interval.
    pub fn judge(&mut self, s: &Sample) -> Verdict {
        if let Some(e) = self.floor.as_ref().and_then(|f| f.judge(s)) {
            return Verdict::Fail(e);
        }
        match self.steady.as_mut().map(|w| w.push(s)) {
            Some(true) => Verdict::Steady,
            _ => Verdict::Go,
        }
    }
}

/// The start of a run that no floor judges: fio's "2 second settle period in the
/// beginning" (`__check_min_rate`), so that a job file fails where fio's fails.
pub const SETTLE_NS: u64 = 2_000_000_000;

/// The floor and the directions it applies to.
#[derive(Debug, Clone)]
pub struct RateFloor {
    min: Rate,
    reads: bool,
    writes: bool,
    interval_ns: u64,
}

impl RateFloor {
    /// The spec's floor, when it has one.
    pub fn of(spec: &WorkloadSpec) -> Option<Self> {
        let read_pct = spec.rw.read_pct(spec.read_pct);
        spec.rate_min.map(|min| RateFloor {
            min,
            reads: read_pct > 0,
            writes: read_pct < 100,
            interval_ns: spec.interval_ms * 1_000_000,
        })
    }

    /// The failure `s` shows, if it does: a direction below the floor over an interval.
    /// Not judged: the first [`SETTLE_NS`] (fio's settle period), a pause, and a last
    /// interval shorter than half of one (fio also judges only whole rate cycles).
    pub fn judge(&self, s: &Sample) -> Option<RunError> {
        let ns = s.end_ns.saturating_sub(s.start_ns);
        if s.pause || ns < self.interval_ns / 2 || s.end_ns <= SETTLE_NS {
            return None;
        }
        let secs = ns as f64 / 1e9;
        [
            ("reads", self.reads, &s.read),
            ("writes", self.writes, &s.write),
        ]
        .into_iter()
        .filter(|(_, on, _)| *on)
        .find_map(|(what, _, d)| {
            let (got, floor, shown) = match self.min {
                Rate::BytesPerSec(b) => (
                    d.bytes as f64 / secs,
                    b as f64,
                    format!("{:.1} MB/s", d.bytes as f64 / secs / 1e6),
                ),
                Rate::Iops(n) => (
                    d.ios as f64 / secs,
                    n as f64,
                    format!("{:.0} IOPS", d.ios as f64 / secs),
                ),
            };
            (got < floor).then(|| RunError {
                message: format!(
                    "rate_min = {} not met: {what} ran {shown} over the interval ending at {:.1} s",
                    self.min,
                    s.end_ns as f64 / 1e9
                ),
                op: None,
                offset: None,
                errno: None,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shared::RwMode;

    fn sample(start_ms: u64, end_ms: u64, read: u64, write: u64) -> Sample {
        let mut s = Sample {
            start_ns: start_ms * 1_000_000,
            end_ns: end_ms * 1_000_000,
            ..Sample::default()
        };
        s.read.bytes = read;
        s.read.ios = read / 4096;
        s.write.bytes = write;
        s.write.ios = write / 4096;
        s
    }

    #[test]
    fn each_direction_the_workload_runs_must_keep_the_floor() {
        let spec = WorkloadSpec {
            rw: RwMode::RandRw,
            read_pct: 70,
            rate_min: Some(Rate::BytesPerSec(10_000_000)),
            ..WorkloadSpec::default()
        };
        let f = RateFloor::of(&spec).expect("floor");
        assert!(f
            .judge(&sample(2000, 3000, 20_000_000, 10_000_000))
            .is_none());
        let e = f
            .judge(&sample(2000, 3000, 20_000_000, 9_000_000))
            .expect("writes below");
        assert_eq!(
            e.message,
            "rate_min = 10000000 B/s not met: writes ran 9.0 MB/s over the interval ending at 3.0 s"
        );
        // The settle period, a short last interval and a pause are not judged.
        assert!(f.judge(&sample(1000, 2000, 0, 0)).is_none());
        assert!(f.judge(&sample(3000, 3300, 0, 0)).is_none());
        let mut paused = sample(3000, 4000, 0, 0);
        paused.pause = true;
        assert!(f.judge(&paused).is_none());
        // A read-only workload is not held to its (absent) writes.
        let reads = WorkloadSpec {
            rw: RwMode::RandRead,
            rate_min: Some(Rate::Iops(1000)),
            ..WorkloadSpec::default()
        };
        let f = RateFloor::of(&reads).expect("floor");
        assert!(f.judge(&sample(2000, 3000, 1000 * 4096, 0)).is_none());
        assert!(f
            .judge(&sample(2000, 3000, 999 * 4096, 0))
            .is_some_and(|e| e.message.contains("reads ran 999 IOPS")));
    }
}
