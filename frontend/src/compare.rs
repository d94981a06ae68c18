//! Comparing runs: per-metric ratios of each run against the first one picked ("B/A").

use shared::analysis::repeat::{self, Stat};
use shared::api::RunInfo;
use shared::preset::{Dir, RunKind, StepKey};
use shared::{RunSummary, StepReport};

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

/// One metric of one test across the picked runs.
#[derive(Clone, Debug, PartialEq)]
pub struct StepRow {
    pub key: StepKey,
    pub metric: &'static str,
    /// Per picked run, in order: the metric over the test's passes (none when the run
    /// lacks the test).
    pub stats: Vec<Option<Stat>>,
    /// Per picked run after the first: its mean over the first's, and the 95 % interval
    /// when both have two or more passes.
    pub ratios: Vec<Option<(f64, Option<repeat::Ratio>)>>,
    pub higher_is_better: bool,
}

/// Picked runs compared test by test.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepCompare {
    pub rows: Vec<StepRow>,
    /// What was left out and why (different kinds of run; tests only some runs have).
    pub note: Option<String>,
}

/// A run's tests as the comparison keys them, with their summaries (passes and rounds of
/// one test share a key). A run without steps is its one workload.
fn tests_of(r: &RunInfo) -> Vec<(StepKey, &RunSummary)> {
    let kind = r.kind();
    if r.steps.is_empty() {
        let one = StepReport {
            name: "custom".into(),
            spec: r.spec.clone(),
            ..StepReport::default()
        };
        return r
            .summary
            .as_ref()
            .map(|s| (RunKind::Custom.step_key(&one), s))
            .into_iter()
            .collect();
    }
    r.steps
        .iter()
        .filter(|s| s.summary.duration_ns > 0)
        .map(|s| (kind.step_key(s), &s.summary))
        .collect()
}

type Metric = (&'static str, fn(&RunSummary) -> f64, bool);

fn metrics(dir: Dir) -> &'static [Metric] {
    const READ: &[Metric] = &[
        ("MB/s", |s| s.read.mb_s, true),
        ("IOPS", |s| s.read.iops, true),
        ("p99 µs", |s| s.read.lat.p99_ns as f64 / 1e3, false),
    ];
    const WRITE: &[Metric] = &[
        ("MB/s", |s| s.write.mb_s, true),
        ("IOPS", |s| s.write.iops, true),
        ("p99 µs", |s| s.write.lat.p99_ns as f64 / 1e3, false),
    ];
    const MIXED: &[Metric] = &[
        ("read MB/s", |s| s.read.mb_s, true),
        ("write MB/s", |s| s.write.mb_s, true),
        ("IOPS", |s| s.read.iops + s.write.iops, true),
        (
            "p99 µs",
            |s| s.read.lat.p99_ns.max(s.write.lat.p99_ns) as f64 / 1e3,
            false,
        ),
    ];
    match dir {
        Dir::Read => READ,
        Dir::Write => WRITE,
        Dir::Mixed => MIXED,
    }
}

/// The picked runs compared on the tests they share (matched by the typed step identity,
/// each test's passes kept as a mean with its confidence interval), B over A; runs of
/// different kinds are compared only on what they share, and the note says so.
pub fn by_step(runs: &[RunInfo]) -> StepCompare {
    let per_run: Vec<Vec<(StepKey, &RunSummary)>> = runs.iter().map(tests_of).collect();
    if per_run.is_empty() {
        return StepCompare::default();
    }
    // Keys in the first run's order, then those only later runs have.
    let mut keys: Vec<StepKey> = Vec::new();
    for (k, _) in per_run.iter().flatten() {
        if !keys.contains(k) {
            keys.push(k.clone());
        }
    }
    let shared_keys: Vec<StepKey> = keys
        .iter()
        .filter(|k| per_run.iter().all(|t| t.iter().any(|(x, _)| x == *k)))
        .cloned()
        .collect();
    let mut rows = Vec::new();
    for key in &shared_keys {
        for &(metric, f, higher_is_better) in metrics(key.dir) {
            let stats: Vec<Option<Stat>> = per_run
                .iter()
                .map(|t| {
                    let v: Vec<f64> = t
                        .iter()
                        .filter(|(k, _)| k == key)
                        .map(|(_, s)| f(s))
                        .collect();
                    Stat::of(&v)
                })
                .collect();
            if stats.iter().flatten().all(|s| s.mean == 0.0) {
                continue;
            }
            let a = stats.first().cloned().flatten();
            let ratios = stats
                .iter()
                .skip(1)
                .map(|b| match (&a, b) {
                    (Some(a), Some(b)) if a.mean > 0.0 => {
                        Some((b.mean / a.mean, repeat::ratio(a, b)))
                    }
                    _ => None,
                })
                .collect();
            rows.push(StepRow {
                key: key.clone(),
                metric,
                stats,
                ratios,
                higher_is_better,
            });
        }
    }
    let kinds: Vec<String> = runs
        .iter()
        .map(|r| format!("run {} ({})", r.id, crate::headline::test_name(r)))
        .collect();
    let same_kind = runs.windows(2).all(|w| w[0].kind() == w[1].kind());
    let left_out = keys.len() - shared_keys.len();
    let note = if shared_keys.is_empty() {
        Some(format!(
            "{}: no test in common, nothing to compare side by side",
            kinds.join(", ")
        ))
    } else if !same_kind || left_out > 0 {
        let names: Vec<String> = shared_keys.iter().map(ToString::to_string).collect();
        Some(format!(
            "{}{}: compared only on the {} test{} they share ({}){}",
            kinds.join(", "),
            if same_kind {
                ""
            } else {
                " are different kinds of run"
            },
            shared_keys.len(),
            if shared_keys.len() == 1 { "" } else { "s" },
            names.join(", "),
            if left_out > 0 {
                format!("; {left_out} test(s) only some of them ran are left out")
            } else {
                String::new()
            }
        ))
    } else {
        None
    };
    StepCompare { rows, note }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(name: &str, rw: shared::RwMode, mb_s: f64) -> StepReport {
        let mut summary = RunSummary {
            duration_ns: 1_000_000_000,
            ..RunSummary::default()
        };
        let d = if rw.read_pct(50) == 100 {
            &mut summary.read
        } else {
            &mut summary.write
        };
        d.mb_s = mb_s;
        d.ios = 1;
        StepReport {
            name: name.into(),
            spec: shared::WorkloadSpec {
                rw,
                bs: if rw.is_random() { 4096 } else { 1 << 20 },
                iodepth: if rw.is_random() { 32 } else { 8 },
                ..shared::WorkloadSpec::default()
            },
            summary,
            ..StepReport::default()
        }
    }

    fn info(id: i64, preset: Option<&str>, steps: Vec<StepReport>) -> RunInfo {
        let first = steps.first().cloned().unwrap_or_default();
        RunInfo {
            id,
            name: None,
            target: "/t".into(),
            preset: preset.map(Into::into),
            status: shared::RunStatus::Completed,
            created_ms: 0,
            ended_ms: None,
            spec: first.spec.clone(),
            environment: None,
            summary: Some(first.summary.clone()),
            error: None,
            steps: if preset.is_some() { steps } else { Vec::new() },
            analysis: None,
            targets: Vec::new(),
            plan: Vec::new(),
            line: String::new(),
            findings: Vec::new(),
        }
    }

    #[test]
    fn preset_runs_compare_step_by_step_and_different_kinds_only_on_what_they_share() {
        use shared::RwMode::*;
        let a = info(
            1,
            Some("cdm"),
            vec![
                step("SEQ1M Q8T1 read #1", Read, 5000.0),
                step("SEQ1M Q8T1 read #2", Read, 5100.0),
                step("SEQ1M Q8T1 write #1", Write, 3000.0),
                step("RND4K Q32T1 read #1", RandRead, 400.0),
            ],
        );
        let b = info(
            2,
            Some("cdm"),
            vec![
                step("SEQ1M Q8T1 read #1", Read, 2500.0),
                step("SEQ1M Q8T1 read #2", Read, 2550.0),
                step("SEQ1M Q8T1 write #1", Write, 1500.0),
                step("RND4K Q32T1 read #1", RandRead, 200.0),
            ],
        );
        let c = by_step(&[a.clone(), b]);
        assert_eq!(c.note, None);
        let seq = c
            .rows
            .iter()
            .find(|r| r.key.test == "SEQ1M Q8T1" && r.key.dir == Dir::Read && r.metric == "MB/s")
            .expect("row");
        assert_eq!(
            seq.stats[0].as_ref().map(|s| (s.n, s.mean)),
            Some((2, 5050.0))
        );
        let (ratio, ci) = seq.ratios[0].clone().expect("ratio");
        assert!((ratio - 0.5).abs() < 1e-9);
        assert!(ci.is_some_and(|c| c.significant && c.hi < 1.0));
        // A single randread against the cdm run: only RND4K Q32T1 read is shared.
        let single = info(3, None, vec![step("custom", RandRead, 380.0)]);
        let c = by_step(&[a, single]);
        let keys: Vec<String> = c.rows.iter().map(|r| r.key.to_string()).collect();
        assert!(keys.iter().all(|k| k == "RND4K Q32T1 read"), "{keys:?}");
        let note = c.note.expect("a note");
        assert!(
            note.contains("different kinds of run") && note.contains("RND4K Q32T1 read"),
            "{note}"
        );
    }

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
