//! Comparing runs: per-metric ratios of each run against the first one picked ("B/A").

use shared::RunSummary;

/// One compared metric.
#[derive(Clone, Debug, PartialEq)]
pub struct Ratio {
    pub metric: &'static str,
    pub a: f64,
    pub b: f64,
    /// `b / a`, `None` when `a` is zero (nothing to compare against).
    pub ratio: Option<f64>,
    /// Whether a higher value is better (throughput) or worse (latency).
    pub higher_is_better: bool,
}

impl Ratio {
    /// `1.37×`, or `–` when there is nothing to compare.
    pub fn label(&self) -> String {
        self.ratio
            .map_or_else(|| "–".to_string(), |r| format!("{r:.2}×"))
    }
}

fn ratio(metric: &'static str, a: f64, b: f64, higher_is_better: bool) -> Ratio {
    Ratio {
        metric,
        a,
        b,
        ratio: (a > 0.0).then(|| b / a),
        higher_is_better,
    }
}

/// The metrics that matter, B against A; metrics both runs lack are left out.
pub fn ratios(a: &RunSummary, b: &RunSummary) -> Vec<Ratio> {
    let us = |ns: u64| ns as f64 / 1e3;
    [
        ratio("read MB/s", a.read.mb_s, b.read.mb_s, true),
        ratio("write MB/s", a.write.mb_s, b.write.mb_s, true),
        ratio(
            "IOPS",
            a.read.iops + a.write.iops,
            b.read.iops + b.write.iops,
            true,
        ),
        ratio(
            "read p99 µs",
            us(a.read.lat.p99_ns),
            us(b.read.lat.p99_ns),
            false,
        ),
        ratio(
            "write p99 µs",
            us(a.write.lat.p99_ns),
            us(b.write.lat.p99_ns),
            false,
        ),
    ]
    .into_iter()
    .filter(|r| r.a > 0.0 || r.b > 0.0)
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_are_b_over_a_and_skip_absent_metrics() {
        let mut a = RunSummary::default();
        let mut b = RunSummary::default();
        a.write.mb_s = 100.0;
        b.write.mb_s = 137.0;
        a.write.iops = 1000.0;
        b.write.iops = 500.0;
        let r = ratios(&a, &b);
        assert_eq!(
            r.iter().map(|x| x.metric).collect::<Vec<_>>(),
            vec!["write MB/s", "IOPS"]
        );
        assert_eq!(r[0].label(), "1.37×");
        assert_eq!(r[1].label(), "0.50×");
        b.read.mb_s = 5.0;
        assert_eq!(
            ratios(&a, &b)[0].label(),
            "–",
            "nothing to compare a read against"
        );
    }
}
