//! Runs made of steps: presets (CrystalDiskMark grid, ATTO sweep, steady state, ...) are
//! sequences of workloads run one after the other on the same target, recorded as one run.

use crate::sample::RunSummary;
use crate::spec::{Rate, WorkloadSpec};
use serde::{Deserialize, Serialize};

/// One workload of a sequence.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// What the step measures, e.g. `SEQ1M Q8T1 read #2`.
    pub name: String,
    pub spec: WorkloadSpec,
    /// Idle time before the step (CrystalDiskMark's pause, cache recovery), sampled as zeros.
    #[serde(default)]
    pub pause_before_ms: u64,
    /// Repeat the step as rounds until the PTS steady-state rule holds, at most this many.
    #[serde(default)]
    pub until_steady: Option<u32>,
}

/// Knobs a preset takes (CLI flags, `"options"` in the API); each preset documents which.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct PresetOptions {
    /// Test size / span (cdm: 1 GiB; iometer-mix: 1 GiB; snia-steady: the target).
    pub size: Option<u64>,
    /// Passes per test (cdm: 5).
    pub count: Option<u32>,
    /// Time per step (cdm: 5 s; iometer-mix: 10 min; atto: 3 s; orion: 5 s; rounds: 60 s).
    pub runtime_ms: Option<u64>,
    /// The rate a `sustain` run must hold (e.g. 3200 MB/s).
    pub rate: Option<Rate>,
    /// Parallel streams for `sustain` (each at rate / streams).
    pub streams: Option<u32>,
    /// Idle between steps (cdm: 1 s; cache-recovery: 30 s).
    pub idle_ms: Option<u64>,
    /// The RAM buffer a `sustain` pass may rely on (default 1000 ms of data).
    pub buffer_ms: Option<u64>,
    /// Block size for full-span, fill, sustain (default 1 MiB; fill 4 MiB).
    pub bs: Option<u64>,
}

/// What one step measured. Its samples are the run's samples with this `step` index.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct StepReport {
    pub index: u32,
    pub name: String,
    pub spec: WorkloadSpec,
    pub summary: RunSummary,
    /// Where the step lies in the run's time (ns since the run started).
    pub start_ns: u64,
    pub end_ns: u64,
    pub first_seq: u64,
    pub samples: u64,
}

/// CrystalDiskMark's name for a test: `SEQ1M Q8T1`, `RND4K Q32T1`.
pub fn test_label(spec: &WorkloadSpec) -> String {
    let kind = if spec.rw.is_random() { "RND" } else { "SEQ" };
    format!(
        "{kind}{} Q{}T{}",
        crate::units::size_short(spec.bs),
        spec.iodepth,
        spec.jobs
    )
}

/// One test of a CrystalDiskMark-style run (a `cdm` preset): best and mean over its passes.
#[derive(Clone, Debug, PartialEq)]
pub struct StepGridRow {
    pub label: String,
    pub read_best: Option<f64>,
    pub read_mean: Option<f64>,
    pub write_best: Option<f64>,
    pub write_mean: Option<f64>,
    pub passes: usize,
}

/// The grid of a run whose steps are tests with passes (`SEQ1M Q8T1 read #2`): MB/s best
/// and mean per test and direction, in the run's order. `None` unless two or more tests.
pub fn grid_from_steps(steps: &[StepReport]) -> Option<Vec<StepGridRow>> {
    let mut rows: Vec<StepGridRow> = Vec::new();
    let mut values: Vec<(Vec<f64>, Vec<f64>)> = Vec::new();
    for s in steps {
        let label = test_label(&s.spec);
        let i = match rows.iter().position(|r| r.label == label) {
            Some(i) => i,
            None => {
                rows.push(StepGridRow {
                    label,
                    read_best: None,
                    read_mean: None,
                    write_best: None,
                    write_mean: None,
                    passes: 0,
                });
                values.push((Vec::new(), Vec::new()));
                rows.len() - 1
            }
        };
        let sum = &s.summary;
        if sum.read.ios > 0 {
            values[i].0.push(sum.read.mb_s);
        }
        if sum.write.ios > 0 {
            values[i].1.push(sum.write.mb_s);
        }
    }
    if rows.len() < 2 {
        return None;
    }
    let best = |v: &[f64]| v.iter().cloned().reduce(f64::max);
    let mean = |v: &[f64]| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
    for (row, (r, w)) in rows.iter_mut().zip(&values) {
        row.read_best = best(r);
        row.read_mean = mean(r);
        row.write_best = best(w);
        row.write_mean = mean(w);
        row.passes = r.len().max(w.len());
    }
    Some(rows)
}
