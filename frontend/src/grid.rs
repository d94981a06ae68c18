//! Several runs read as one result: a CrystalDiskMark-style grid (one row per test, read
//! and write side by side) when they are different tests, and a block-size chart when they
//! are the same test at different block sizes (an ATTO-style sweep). The grouping is
//! `shared::steps`' (the same code groups a preset run's steps, here and in the CLI).

use shared::api::RunInfo;

pub use shared::steps::{grid_from_steps, sweep_from_steps, test_label, GridRow, SweepPoint};

/// What each picked run measured: its steps (a preset's tests, not its first step's spec
/// over its whole-run summary), or its one workload.
fn measured(runs: &[RunInfo]) -> Vec<(&shared::WorkloadSpec, &shared::RunSummary)> {
    runs.iter()
        .flat_map(|r| {
            let steps: Vec<_> = r.steps.iter().map(|s| (&s.spec, &s.summary)).collect();
            if steps.is_empty() {
                r.summary
                    .as_ref()
                    .map(|s| (&r.spec, s))
                    .into_iter()
                    .collect()
            } else {
                steps
            }
        })
        .collect()
}

/// The grid of picked runs, when they are two or more different tests.
pub fn grid(runs: &[RunInfo]) -> Option<Vec<GridRow>> {
    shared::steps::grid(&measured(runs))
}

/// The block-size sweep among picked runs.
pub fn block_size_sweep(runs: &[RunInfo]) -> Option<Vec<SweepPoint>> {
    shared::steps::sweep(&measured(runs))
}

#[cfg(test)]
mod tests {
    use super::*;
    use shared::report::RunStatus;
    use shared::{RunSummary, RwMode, WorkloadSpec};

    fn run(rw: RwMode, bs: u64, qd: u32, mb_s: f64) -> RunInfo {
        let mut s = RunSummary {
            duration_ns: 1_000_000_000,
            ..RunSummary::default()
        };
        let d = if rw.read_pct(50) == 100 {
            &mut s.read
        } else {
            &mut s.write
        };
        d.mb_s = mb_s;
        d.ios = 10;
        d.iops = mb_s * 1e6 / bs as f64;
        RunInfo {
            id: 1,
            name: None,
            target: "/t".into(),
            preset: None,
            status: RunStatus::Completed,
            created_ms: 0,
            ended_ms: None,
            spec: WorkloadSpec {
                rw,
                bs,
                iodepth: qd,
                ..WorkloadSpec::default()
            },
            environment: None,
            summary: Some(s),
            error: None,
            steps: Vec::new(),
            analysis: None,
            targets: Vec::new(),
            plan: Vec::new(),
            line: String::new(),
            findings: Vec::new(),
        }
    }

    #[test]
    fn cdm_grid_rows_pair_read_and_write_in_cdm_order() {
        let runs = vec![
            run(RwMode::RandRead, 4096, 1, 60.0),
            run(RwMode::Read, 1 << 20, 8, 3500.0),
            run(RwMode::Write, 1 << 20, 8, 3000.0),
            run(RwMode::Write, 1 << 20, 8, 3100.0),
            run(RwMode::RandWrite, 4096, 32, 400.0),
        ];
        let g = grid(&runs).expect("grid");
        let labels: Vec<&str> = g.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(labels, ["SEQ1M Q8T1", "RND4K Q32T1", "RND4K Q1T1"]);
        assert_eq!(
            (g[0].read_best, g[0].write_best),
            (Some(3500.0), Some(3100.0))
        );
        assert_eq!(g[2].write_best, None);
        assert!(grid(&runs[..1]).is_none(), "one test is not a grid");
    }

    #[test]
    fn a_cdm_run_gives_best_and_mean_per_test() {
        let step = |name: &str, rw: RwMode, bs: u64, qd: u32, mb: f64| {
            let r = run(rw, bs, qd, mb);
            shared::StepReport {
                name: name.into(),
                spec: r.spec,
                summary: r.summary.unwrap_or_default(),
                ..Default::default()
            }
        };
        let steps = vec![
            step("SEQ1M Q8T1 read #1", RwMode::Read, 1 << 20, 8, 3000.0),
            step("SEQ1M Q8T1 read #2", RwMode::Read, 1 << 20, 8, 3400.0),
            step("SEQ1M Q8T1 write #1", RwMode::Write, 1 << 20, 8, 2000.0),
            step("RND4K Q1T1 read #1", RwMode::RandRead, 4096, 1, 60.0),
        ];
        let g = grid_from_steps(&steps).expect("grid");
        assert_eq!(g[0].label, "SEQ1M Q8T1");
        assert_eq!(
            (g[0].read_best, g[0].read_mean),
            (Some(3400.0), Some(3200.0))
        );
        assert_eq!((g[0].write_best, g[0].passes), (Some(2000.0), 2));
        assert_eq!(g[1].write_best, None);
        let atto: Vec<_> = [512u64, 4096, 1 << 20]
            .iter()
            .map(|&bs| step("x", RwMode::Read, bs, 4, bs as f64 / 1000.0))
            .collect();
        let s = sweep_from_steps(&atto).expect("sweep");
        assert_eq!(
            s.iter().map(|p| p.bs).collect::<Vec<_>>(),
            [512, 4096, 1 << 20]
        );
    }

    #[test]
    fn a_sweep_is_one_test_at_several_block_sizes() {
        let runs = vec![
            run(RwMode::Read, 1 << 20, 4, 3000.0),
            run(RwMode::Read, 4096, 4, 200.0),
            run(RwMode::Read, 64 << 10, 4, 1500.0),
        ];
        let s = block_size_sweep(&runs).expect("sweep");
        assert_eq!(
            s.iter().map(|p| p.bs).collect::<Vec<_>>(),
            [4096, 64 << 10, 1 << 20]
        );
        let mixed = vec![
            run(RwMode::Read, 4096, 4, 1.0),
            run(RwMode::RandRead, 8192, 4, 1.0),
        ];
        assert!(block_size_sweep(&mixed).is_none());
    }
}
