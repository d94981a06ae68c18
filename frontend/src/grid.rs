//! Several runs read as one result: a CrystalDiskMark-style grid (one row per test, read
//! and write side by side) when they are different tests, and a block-size chart when they
//! are the same test at different block sizes (an ATTO-style sweep).

use shared::api::RunInfo;
use shared::{RunSummary, WorkloadSpec};

/// CrystalDiskMark's name for a test: `SEQ1M Q8T1`, `RND4K Q32T1`.
pub fn test_label(spec: &WorkloadSpec) -> String {
    let kind = if spec.rw.is_random() { "RND" } else { "SEQ" };
    format!(
        "{kind}{} Q{}T{}",
        crate::form::size_text(spec.bs),
        spec.iodepth,
        spec.jobs
    )
}

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
