//! How far a run is and when it will end, from its spec, the target size and the latest
//! sample (bytes done are cumulative in every sample).

use shared::{Sample, WorkloadSpec};

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Progress {
    pub done_bytes: u64,
    /// Bytes the run will move, when it ends by volume.
    pub total_bytes: Option<u64>,
    /// 0..=1, when the end is known.
    pub fraction: Option<f64>,
    pub elapsed_s: f64,
    /// Seconds left, when the end is known.
    pub eta_s: Option<f64>,
}

/// Progress of a run of `spec` on a target of `target_size` bytes after `last`.
pub fn progress(spec: &WorkloadSpec, target_size: Option<u64>, last: Option<&Sample>) -> Progress {
    let done = last.map_or(0, |s| s.read.cum_bytes + s.write.cum_bytes);
    let elapsed_s = last.map_or(0.0, |s| s.end_ns as f64 / 1e9);
    let span = spec
        .size
        .or_else(|| target_size.map(|t| t.saturating_sub(spec.offset)));
    let total = match (spec.io_size, spec.runtime_ms) {
        (Some(io), _) => Some(io),
        (None, Some(_)) => None,
        (None, None) => span.map(|s| s.saturating_mul(u64::from(spec.loops))),
    };
    let by_time = spec.runtime_ms.map(|ms| {
        let t = ms as f64 / 1e3;
        ((elapsed_s / t).min(1.0), (t - elapsed_s).max(0.0))
    });
    let by_bytes = total.filter(|t| *t > 0).map(|t| {
        let f = (done as f64 / t as f64).min(1.0);
        let rate = if elapsed_s > 0.0 {
            done as f64 / elapsed_s
        } else {
            0.0
        };
        let eta = (rate > 0.0).then(|| (t.saturating_sub(done)) as f64 / rate);
        (f, eta)
    });
    let (fraction, eta_s) = match (by_time, by_bytes) {
        (Some((ft, et)), Some((fb, eb))) => (Some(ft.max(fb)), Some(eb.map_or(et, |e| e.min(et)))),
        (Some((ft, et)), None) => (Some(ft), Some(et)),
        (None, Some((fb, eb))) => (Some(fb), eb),
        (None, None) => (None, None),
    };
    Progress {
        done_bytes: done,
        total_bytes: total,
        fraction,
        elapsed_s,
        eta_s,
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
        let p = progress(&spec, Some(1 << 30), Some(&at(4.0, 123)));
        assert_eq!(
            (p.fraction, p.eta_s, p.total_bytes),
            (Some(0.4), Some(6.0), None)
        );
    }

    #[test]
    fn volume_runs_use_the_span_and_the_average_rate() {
        let spec = WorkloadSpec {
            offset: 1 << 20,
            loops: 2,
            ..WorkloadSpec::default()
        };
        let target = (100 << 20) + (1 << 20);
        let p = progress(&spec, Some(target), Some(&at(10.0, 50 << 20)));
        assert_eq!(p.total_bytes, Some(200 << 20));
        assert_eq!(p.fraction, Some(0.25));
        assert_eq!(p.eta_s, Some(30.0));
        let none = progress(&spec, None, None);
        assert_eq!((none.fraction, none.eta_s), (None, None));
    }

    #[test]
    fn eta_reads_like_a_clock() {
        assert_eq!(fmt_eta(12.2), "12 s");
        assert_eq!(fmt_eta(247.0), "4:07");
        assert_eq!(fmt_eta(3909.0), "1:05:09");
    }
}
