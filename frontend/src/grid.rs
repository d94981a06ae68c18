//! Several runs read as one result: a CrystalDiskMark-style grid (one row per test, read
//! and write side by side) when they are different tests, and a block-size chart when they
//! are the same test at different block sizes (an ATTO-style sweep).

use shared::api::RunInfo;
use shared::{RunSummary, WorkloadSpec};

pub use shared::steps::{grid_from_steps, test_label, StepGridRow};

/// One row of the grid: the best read and write of the runs with that label.
#[derive(Clone, Debug, PartialEq)]
pub struct GridRow {
    pub label: String,
    pub read_mb_s: Option<f64>,
    pub write_mb_s: Option<f64>,
    pub read_iops: Option<f64>,
    pub write_iops: Option<f64>,
}

fn summary(r: &RunInfo) -> Option<&RunSummary> {
    r.summary.as_ref().filter(|s| s.duration_ns > 0)
}

/// The grid, when the runs cover two or more different tests. Rows keep CrystalDiskMark's
/// order: sequential before random, larger blocks and deeper queues first.
pub fn grid(runs: &[RunInfo]) -> Option<Vec<GridRow>> {
    let mut rows: Vec<(WorkloadSpec, GridRow)> = Vec::new();
    for r in runs {
        let Some(s) = summary(r) else { continue };
        let label = test_label(&r.spec);
        let i = match rows.iter().position(|(_, row)| row.label == label) {
            Some(i) => i,
            None => {
                rows.push((
                    r.spec.clone(),
                    GridRow {
                        label,
                        read_mb_s: None,
                        write_mb_s: None,
                        read_iops: None,
                        write_iops: None,
                    },
                ));
                rows.len() - 1
            }
        };
        let row = &mut rows[i].1;
        let best = |cur: Option<f64>, v: f64| Some(cur.map_or(v, |c| c.max(v)));
        if s.read.ios > 0 {
            row.read_mb_s = best(row.read_mb_s, s.read.mb_s);
            row.read_iops = best(row.read_iops, s.read.iops);
        }
        if s.write.ios > 0 {
            row.write_mb_s = best(row.write_mb_s, s.write.mb_s);
            row.write_iops = best(row.write_iops, s.write.iops);
        }
    }
    if rows.len() < 2 {
        return None;
    }
    rows.sort_by_key(|(spec, _)| {
        (
            spec.rw.is_random(),
            std::cmp::Reverse(spec.bs),
            std::cmp::Reverse(spec.iodepth),
            std::cmp::Reverse(spec.jobs),
        )
    });
    Some(rows.into_iter().map(|(_, row)| row).collect())
}

/// A block-size sweep among a run's steps (ATTO, ORION): MB/s per block size of the mode,
/// depth and job count with the most block sizes.
pub fn sweep_from_steps(steps: &[shared::StepReport]) -> Option<Vec<SweepPoint>> {
    let key = |s: &shared::StepReport| (s.spec.rw.is_random(), s.spec.iodepth, s.spec.jobs);
    let mut best: Option<Vec<SweepPoint>> = None;
    for s in steps {
        let mut pts: Vec<SweepPoint> = Vec::new();
        for t in steps.iter().filter(|t| key(t) == key(s)) {
            let p = match pts.iter_mut().find(|p| p.bs == t.spec.bs) {
                Some(p) => p,
                None => {
                    pts.push(SweepPoint {
                        bs: t.spec.bs,
                        read_mb_s: 0.0,
                        write_mb_s: 0.0,
                        iops: 0.0,
                    });
                    pts.last_mut()?
                }
            };
            p.read_mb_s = p.read_mb_s.max(t.summary.read.mb_s);
            p.write_mb_s = p.write_mb_s.max(t.summary.write.mb_s);
            p.iops = p.iops.max(t.summary.read.iops + t.summary.write.iops);
        }
        if pts.len() >= 2 && best.as_ref().is_none_or(|b| pts.len() > b.len()) {
            pts.sort_by_key(|p| p.bs);
            best = Some(pts);
        }
    }
    best
}

/// One block size of a sweep.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepPoint {
    pub bs: u64,
    pub read_mb_s: f64,
    pub write_mb_s: f64,
    pub iops: f64,
}

/// The sweep, when the runs are one test (mode, depth, jobs) at two or more block sizes.
pub fn block_size_sweep(runs: &[RunInfo]) -> Option<Vec<SweepPoint>> {
    let done: Vec<(&RunInfo, &RunSummary)> = runs
        .iter()
        .filter_map(|r| summary(r).map(|s| (r, s)))
        .collect();
    let (first, _) = done.first()?;
    let same = |r: &RunInfo| {
        (r.spec.rw.is_random(), r.spec.iodepth, r.spec.jobs)
            == (
                first.spec.rw.is_random(),
                first.spec.iodepth,
                first.spec.jobs,
            )
    };
    if !done.iter().all(|(r, _)| same(r)) {
        return None;
    }
    let mut pts: Vec<SweepPoint> = Vec::new();
    for (r, s) in &done {
        let p = match pts.iter_mut().find(|p| p.bs == r.spec.bs) {
            Some(p) => p,
            None => {
                pts.push(SweepPoint {
                    bs: r.spec.bs,
                    read_mb_s: 0.0,
                    write_mb_s: 0.0,
                    iops: 0.0,
                });
                pts.last_mut()?
            }
        };
        p.read_mb_s = p.read_mb_s.max(s.read.mb_s);
        p.write_mb_s = p.write_mb_s.max(s.write.mb_s);
        p.iops = p.iops.max(s.read.iops + s.write.iops);
    }
    if pts.len() < 2 {
        return None;
    }
    pts.sort_by_key(|p| p.bs);
    Some(pts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use shared::report::RunStatus;
    use shared::RwMode;

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
            (g[0].read_mb_s, g[0].write_mb_s),
            (Some(3500.0), Some(3100.0))
        );
        assert_eq!(g[2].write_mb_s, None);
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
