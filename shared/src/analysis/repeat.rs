//! Repeated runs (`repeat`): each metric's spread over the passes (mean, standard deviation,
//! coefficient of variation, min, max, a 95 % confidence interval of the mean from Student's
//! t), and whether two repeated runs differ (the ratio of their means with a 95 % interval,
//! Welch's on the log scale).

use serde::{Deserialize, Serialize};

/// A pass-to-pass spread above this (CV, percent) is a warning: the figure is noise-bound.
pub const CV_WARN_PCT: f64 = 5.0;

/// Two-sided 95 % quantiles of Student's t for 1..=30 degrees of freedom.
const T95: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
];

/// Student's t 95 % quantile for `df` degrees of freedom (fractional df from Welch's
/// formula are rounded down: the wider interval).
pub fn t95(df: f64) -> f64 {
    if df.is_nan() || df < 1.0 {
        return f64::INFINITY;
    }
    let d = df.floor() as usize;
    match T95.get(d - 1) {
        Some(t) => *t,
        // Within 0.002 of the exact quantile above 30 degrees of freedom.
        None => 1.96 + 2.5 / df,
    }
}

/// One metric over the passes.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Stat {
    pub n: u32,
    pub mean: f64,
    /// Sample standard deviation (n − 1); 0 for one pass.
    pub sd: f64,
    /// sd / mean, percent.
    pub cv_pct: f64,
    pub min: f64,
    pub max: f64,
    /// 95 % confidence interval of the mean (the mean itself for one pass).
    pub ci_lo: f64,
    pub ci_hi: f64,
    /// Every pass's value, in order.
    pub values: Vec<f64>,
}

impl Stat {
    pub fn of(values: &[f64]) -> Option<Stat> {
        let n = values.len();
        if n == 0 {
            return None;
        }
        let mean = values.iter().sum::<f64>() / n as f64;
        let sd = if n > 1 {
            (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
        } else {
            0.0
        };
        let half = if n > 1 {
            t95((n - 1) as f64) * sd / (n as f64).sqrt()
        } else {
            0.0
        };
        Some(Stat {
            n: n as u32,
            mean,
            sd,
            cv_pct: if mean != 0.0 {
                100.0 * sd / mean.abs()
            } else {
                0.0
            },
            min: values.iter().copied().fold(f64::INFINITY, f64::min),
            max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            ci_lo: mean - half,
            ci_hi: mean + half,
            values: values.to_vec(),
        })
    }
}

/// A metric of a run (or of one preset step) over its passes.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(target_arch = "wasm32", serde(from = "MetricWire"))]
pub struct Metric {
    /// The preset step, without its pass (none for a single workload).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<String>,
    /// `read MB/s`, `write IOPS`, `read p99 µs`, ...
    pub name: String,
    #[serde(flatten)]
    pub stat: Stat,
}

/// [`Metric`] as JSON has it, the [`Stat`] fields beside the name: what the browser reads
/// (`#[serde(flatten)]` would buffer each metric through serde's `Content`; see
/// [`crate::api::wire`]).
#[derive(Deserialize)]
pub struct MetricWire {
    #[serde(default)]
    step: Option<String>,
    name: String,
    n: u32,
    mean: f64,
    sd: f64,
    cv_pct: f64,
    min: f64,
    max: f64,
    ci_lo: f64,
    ci_hi: f64,
    values: Vec<f64>,
}

impl From<MetricWire> for Metric {
    fn from(w: MetricWire) -> Self {
        let MetricWire {
            step,
            name,
            n,
            mean,
            sd,
            cv_pct,
            min,
            max,
            ci_lo,
            ci_hi,
            values,
        } = w;
        let stat = Stat {
            n,
            mean,
            sd,
            cv_pct,
            min,
            max,
            ci_lo,
            ci_hi,
            values,
        };
        Metric { step, name, stat }
    }
}

impl Metric {
    /// `step 'X' read MB/s` or `read MB/s`.
    pub fn label(&self) -> String {
        match &self.step {
            Some(s) => format!("{s}: {}", self.name),
            None => self.name.clone(),
        }
    }
}

/// The statistics of a repeated run.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Repeat {
    pub passes: u32,
    pub metrics: Vec<Metric>,
}

impl Repeat {
    /// The metrics whose spread is above [`CV_WARN_PCT`].
    pub fn noisy(&self) -> impl Iterator<Item = &Metric> {
        self.metrics.iter().filter(|m| m.stat.cv_pct > CV_WARN_PCT)
    }

    /// Lines for the CLI: one per metric.
    pub fn lines(&self) -> Vec<String> {
        let mut out = vec![format!(
            "repeat: {} passes; mean ± sd (CV) [95 % CI] min..max per metric",
            self.passes
        )];
        for m in &self.metrics {
            let s = &m.stat;
            out.push(format!(
                "  {:<34} {:>10.1} ± {:<8.1} ({:>4.1} %) [{:.1}..{:.1}] {:.1}..{:.1}",
                m.label(),
                s.mean,
                s.sd,
                s.cv_pct,
                s.ci_lo,
                s.ci_hi,
                s.min,
                s.max
            ));
        }
        out
    }
}

/// The metrics of one pass: for each direction that moved data, MB/s, IOPS, p50 and p99
/// latency (µs).
pub fn pass_metrics(s: &crate::RunSummary) -> Vec<(String, f64)> {
    let mut out = Vec::new();
    for (dir, d) in [("read", &s.read), ("write", &s.write)] {
        if d.ios == 0 {
            continue;
        }
        out.push((format!("{dir} MB/s"), d.mb_s));
        out.push((format!("{dir} IOPS"), d.iops));
        out.push((format!("{dir} p50 µs"), d.lat.p50_ns as f64 / 1e3));
        out.push((format!("{dir} p99 µs"), d.lat.p99_ns as f64 / 1e3));
    }
    out
}

/// The statistics over passes: each pass is a list of (step, metric name, value); metrics
/// are matched by step and name, in the order of the first pass.
pub fn repeat_stats(passes: &[Vec<(Option<String>, String, f64)>]) -> Repeat {
    let mut metrics: Vec<Metric> = Vec::new();
    let mut values: Vec<Vec<f64>> = Vec::new();
    for pass in passes {
        for (step, name, v) in pass {
            let i = match metrics
                .iter()
                .position(|m| &m.step == step && &m.name == name)
            {
                Some(i) => i,
                None => {
                    metrics.push(Metric {
                        step: step.clone(),
                        name: name.clone(),
                        stat: Stat::default(),
                    });
                    values.push(Vec::new());
                    metrics.len() - 1
                }
            };
            values[i].push(*v);
        }
    }
    for (m, v) in metrics.iter_mut().zip(&values) {
        m.stat = Stat::of(v).unwrap_or_default();
    }
    Repeat {
        passes: passes.len() as u32,
        metrics,
    }
}

/// B over A with its 95 % interval.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Ratio {
    pub ratio: f64,
    pub lo: f64,
    pub hi: f64,
    /// The interval excludes 1.
    pub significant: bool,
}

/// The ratio of B's mean to A's with a 95 % confidence interval: Welch's interval for the
/// difference of log means (delta method: the variance of log(mean) is the squared CV over
/// n), with Welch–Satterthwaite degrees of freedom. `None` without two passes on each side
/// or with a mean of zero.
pub fn ratio(a: &Stat, b: &Stat) -> Option<Ratio> {
    if a.n < 2 || b.n < 2 || a.mean <= 0.0 || b.mean <= 0.0 {
        return None;
    }
    let va = (a.sd / a.mean).powi(2) / f64::from(a.n);
    let vb = (b.sd / b.mean).powi(2) / f64::from(b.n);
    let r = b.mean / a.mean;
    let se = (va + vb).sqrt();
    let (lo, hi) = if se == 0.0 {
        (r, r)
    } else {
        let df =
            (va + vb).powi(2) / (va.powi(2) / f64::from(a.n - 1) + vb.powi(2) / f64::from(b.n - 1));
        let t = t95(df);
        ((r.ln() - t * se).exp(), (r.ln() + t * se).exp())
    };
    Some(Ratio {
        ratio: r,
        lo,
        hi,
        significant: lo > 1.0 || hi < 1.0,
    })
}

impl Ratio {
    /// "B is 1.12x A (95 % CI 1.08-1.16)", or "no significant difference" when the interval
    /// holds 1.
    pub fn sentence(&self) -> String {
        if self.significant {
            format!(
                "B is {:.2}x A (95 % CI {:.2}-{:.2})",
                self.ratio, self.lo, self.hi
            )
        } else {
            format!(
                "no significant difference (B is {:.2}x A, 95 % CI {:.2}-{:.2})",
                self.ratio, self.lo, self.hi
            )
        }
    }
}

/// One metric of a comparison: both means, B over A, and the interval when both runs
/// were repeated.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CompareRow {
    pub label: String,
    pub a: f64,
    pub b: f64,
    pub ratio: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci: Option<Ratio>,
}

impl CompareRow {
    /// The verdict: the interval's sentence, or the plain ratio when a side has one pass.
    pub fn sentence(&self) -> String {
        match &self.ci {
            Some(r) => r.sentence(),
            None => format!(
                "B is {:.2}x A (one pass on a side: no confidence interval; repeat both runs)",
                self.ratio
            ),
        }
    }
}

/// Each metric both runs have (matched by step and name), B over A.
pub fn compare(a: &Repeat, b: &Repeat) -> Vec<CompareRow> {
    a.metrics
        .iter()
        .filter_map(|ma| {
            let mb = b
                .metrics
                .iter()
                .find(|m| m.step == ma.step && m.name == ma.name)?;
            (ma.stat.mean > 0.0).then(|| CompareRow {
                label: ma.label(),
                a: ma.stat.mean,
                b: mb.stat.mean,
                ratio: mb.stat.mean / ma.stat.mean,
                ci: ratio(&ma.stat, &mb.stat),
            })
        })
        .collect()
}

/// A run's metrics for a comparison: its repeat statistics, or one pass of its summary
/// (per step for a preset).
pub fn of_report(r: &crate::RunReport) -> Repeat {
    if let Some(rep) = &r.analysis.repeat {
        return rep.clone();
    }
    let pass: Vec<(Option<String>, String, f64)> = if r.steps.len() > 1 {
        r.steps
            .iter()
            .flat_map(|s| {
                pass_metrics(&s.summary)
                    .into_iter()
                    .map(|(n, v)| (Some(s.name.clone()), n, v))
            })
            .collect()
    } else {
        pass_metrics(&r.summary)
            .into_iter()
            .map(|(n, v)| (None, n, v))
            .collect()
    };
    repeat_stats(&[pass])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statistics_of_passes() {
        let s = Stat::of(&[100.0, 102.0, 98.0, 101.0, 99.0]).expect("stat");
        assert_eq!((s.n, s.mean, s.min, s.max), (5, 100.0, 98.0, 102.0));
        assert!((s.sd - 1.5811).abs() < 1e-3, "{s:?}");
        assert!((s.cv_pct - 1.5811).abs() < 1e-3);
        // t(4) = 2.776: half-width 2.776 * 1.5811 / sqrt(5) = 1.963.
        assert!((s.ci_hi - 101.963).abs() < 1e-2, "{s:?}");
        let one = Stat::of(&[7.0]).expect("one");
        assert_eq!((one.sd, one.ci_lo, one.ci_hi), (0.0, 7.0, 7.0));
        assert!((t95(45.0) - 2.014).abs() < 0.003);
    }

    #[test]
    fn ratios_say_when_a_difference_is_real() {
        let a = Stat::of(&[100.0, 102.0, 98.0, 101.0, 99.0]).expect("a");
        let b = Stat::of(&[112.0, 113.0, 111.0, 112.5, 111.5]).expect("b");
        let r = ratio(&a, &b).expect("ratio");
        assert!(r.significant && r.lo > 1.08 && r.hi < 1.16, "{r:?}");
        assert_eq!(r.sentence(), "B is 1.12x A (95 % CI 1.10-1.14)");
        let c = Stat::of(&[95.0, 108.0, 99.0, 104.0, 97.0]).expect("c");
        let r = ratio(&a, &c).expect("ratio");
        assert!(!r.significant, "{r:?}");
        assert!(r.sentence().starts_with("no significant difference"));
        assert!(ratio(&a, &Stat::of(&[1.0]).expect("one")).is_none());
    }

    #[test]
    fn metrics_are_matched_by_step_and_name() {
        let pass = |v: f64| {
            vec![
                (Some("SEQ1M".to_string()), "read MB/s".to_string(), v),
                (None, "read MB/s".to_string(), v * 2.0),
            ]
        };
        let r = repeat_stats(&[pass(10.0), pass(12.0)]);
        assert_eq!(r.passes, 2);
        assert_eq!(r.metrics.len(), 2);
        assert_eq!(r.metrics[0].stat.values, [10.0, 12.0]);
        assert_eq!(r.metrics[1].stat.values, [20.0, 24.0]);
        assert_eq!(r.metrics[0].label(), "SEQ1M: read MB/s");
        assert_eq!(r.noisy().count(), 2, "CV 11.8 % > 5 %");
    }
}
