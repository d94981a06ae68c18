//! Each preset's result in the form its users know (CrystalDiskMark's tiles, ATTO's bars,
//! HD Tune's min/avg/max, a sustain verdict, ...), and the one line a history row, the
//! kiosk, the fleet wall and `diskscope runs` show. Which form a run gets is its
//! [`crate::preset::RunKind`]'s [`HeadlineKind`]; the dashboard draws it
//! (`frontend/src/views/headline.rs`).

use crate::analysis::{CacheRecovery, Compressibility, FirstLast, SteadyState, Sustain};
use crate::api::RunInfo;
use crate::preset::{HeadlineKind, RunKind};
use crate::steps::{GridRow, SweepPoint};
#[cfg(not(target_arch = "wasm32"))]
use crate::units::format_bytes;
use crate::units::format_ns;
use crate::{DirSample, Sample};

/// Lowest, mean and highest MB/s of one direction over a run's intervals.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MinAvgMax {
    pub min: f64,
    pub avg: f64,
    pub max: f64,
}

/// What a run's result page opens with.
#[derive(Clone, Debug, PartialEq)]
pub enum Headline {
    /// `cdm`, `cdm-peak`: the 2×4 tiles (read and write per test, best and mean).
    Cdm(Vec<GridRow>),
    /// `atto`: read and write MB/s by transfer size, smallest first.
    Atto(Vec<SweepPoint>),
    /// `full-span`: speed by position, min/avg/max per direction.
    FullSpan {
        read: Option<MinAvgMax>,
        write: Option<MinAvgMax>,
    },
    Sustain(Sustain),
    /// `iometer-mix`: first vs last window.
    FirstLast(FirstLast),
    /// `snia-steady`: the rounds and the steady-state window.
    Steady(SteadyState),
    /// `cache-recovery`: the cache before and after the idle time.
    Recovery(CacheRecovery),
    /// `compress-probe`: MB/s per data pattern and the zeros/random ratio.
    Compress(Compressibility),
    /// A single workload: its figures per direction.
    Single {
        read: Option<DirSample>,
        write: Option<DirSample>,
    },
    /// A preset with no form of its own (its panels and steps below say it all).
    Steps,
}

fn dir(d: DirSample) -> Option<DirSample> {
    (d.ios > 0).then_some(d)
}

/// MB/s of one direction over the samples that moved data in it.
pub fn min_avg_max(samples: &[Sample], read: bool) -> Option<MinAvgMax> {
    let rates: Vec<(f64, u64, u64)> = samples
        .iter()
        .map(|s| {
            let d = if read { &s.read } else { &s.write };
            (d.mb_s, d.bytes, s.end_ns.saturating_sub(s.start_ns))
        })
        .filter(|&(_, bytes, _)| bytes > 0)
        .collect();
    if rates.is_empty() {
        return None;
    }
    let (bytes, ns) = rates
        .iter()
        .fold((0u64, 0u64), |(b, n), &(_, bb, nn)| (b + bb, n + nn));
    let avg = if ns > 0 {
        bytes as f64 / (ns as f64 / 1e9) / 1e6
    } else {
        0.0
    };
    let min = rates.iter().map(|r| r.0).fold(f64::INFINITY, f64::min);
    let max = rates.iter().map(|r| r.0).fold(0.0, f64::max);
    Some(MinAvgMax { min, avg, max })
}

/// The run's headline; `samples` are its charts' samples (for full-span's min/max).
pub fn headline(r: &RunInfo, samples: &[Sample]) -> Headline {
    let a = r.analysis.clone().unwrap_or_default();
    match RunKind::of(r.preset.as_deref()).headline() {
        HeadlineKind::Cdm => {
            crate::steps::grid_from_steps(&r.steps).map_or(Headline::Steps, Headline::Cdm)
        }
        HeadlineKind::Atto => {
            crate::steps::sweep_from_steps(&r.steps).map_or(Headline::Steps, |mut p| {
                p.sort_by_key(|x| x.bs);
                Headline::Atto(p)
            })
        }
        HeadlineKind::FullSpan => Headline::FullSpan {
            read: min_avg_max(samples, true),
            write: min_avg_max(samples, false),
        },
        HeadlineKind::Sustain => a.sustain.map_or(Headline::Steps, Headline::Sustain),
        HeadlineKind::FirstLast => a.first_last.map_or(Headline::Steps, Headline::FirstLast),
        HeadlineKind::Steady => a.steady_state.map_or(Headline::Steps, Headline::Steady),
        HeadlineKind::Recovery => a.cache_recovery.map_or(Headline::Steps, Headline::Recovery),
        HeadlineKind::Compress => a
            .compressibility
            .map_or(Headline::Steps, Headline::Compress),
        HeadlineKind::Steps => Headline::Steps,
        // A single workload repeated is several steps: its statistics say it (`Steps`).
        HeadlineKind::Single if r.steps.len() > 1 => Headline::Steps,
        HeadlineKind::Single => {
            let s = r.summary.clone().unwrap_or_default();
            Headline::Single {
                read: dir(s.read),
                write: dir(s.write),
            }
        }
    }
}

/// One direction of a summary.
#[cfg(not(target_arch = "wasm32"))]
fn direction(s: &crate::RunSummary, read: bool) -> DirSample {
    if read {
        s.read
    } else {
        s.write
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn mbs(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0} MB/s")
    } else {
        format!("{x:.1} MB/s")
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn figures(d: &DirSample) -> String {
    format!(
        "{} · {:.0} IOPS · p99 {}",
        mbs(d.mb_s),
        d.iops,
        format_ns(d.lat.p99_ns)
    )
}

/// The line of a run whose result is not a rate: a probe's, a flush check's.
#[cfg(not(target_arch = "wasm32"))]
fn own_line(r: &RunInfo) -> Option<String> {
    let a = r.analysis.as_ref()?;
    // A probe's figures are its requests' latencies (ioping's statistics, the warm-up
    // apart), not MB/s.
    if let Some(p) = &a.probe {
        return Some(format!(
            "{} requests · min/avg/max/mdev {} / {} / {} / {}",
            p.count,
            format_ns(p.min_ns),
            format_ns(p.avg_ns),
            format_ns(p.max_ns),
            format_ns(p.mdev_ns)
        ));
    }
    // A flush check's result is its witness session: what to verify after the cut.
    if let Some(w) = &a.flushcheck {
        return Some(format!(
            "flush check {}{}",
            w.line(),
            w.stopped
                .as_ref()
                .map_or(String::new(), |why| format!(" · stopped: {why}"))
        ));
    }
    None
}

/// The run's result in one line (a history row, the kiosk between runs). The agent makes
/// it for each run it serves ([`RunInfo::line`]); the dashboard shows that (and its build
/// leaves this out).
#[cfg(not(target_arch = "wasm32"))]
pub fn line(r: &RunInfo) -> String {
    if let Some(own) = own_line(r) {
        return own;
    }
    match headline(r, &[]) {
        Headline::Cdm(rows) => {
            let cell = |g: &GridRow| {
                format!(
                    "{} R {} W {}",
                    g.label,
                    g.read_best.map_or("–".into(), |v| format!("{v:.0}")),
                    g.write_best.map_or("–".into(), |v| format!("{v:.0}"))
                )
            };
            let mut parts: Vec<String> = rows.first().map(cell).into_iter().collect();
            if rows.len() > 1 {
                parts.extend(rows.last().map(cell));
            }
            format!("{} MB/s", parts.join(" · "))
        }
        Headline::Atto(points) => {
            let best = |f: fn(&SweepPoint) -> f64| {
                points
                    .iter()
                    .max_by(|a, b| f(a).total_cmp(&f(b)))
                    .map(|p| format!("{} at {}", mbs(f(p)), format_bytes(p.bs)))
                    .unwrap_or_default()
            };
            format!(
                "read max {} · write max {}",
                best(|p| p.read_mb_s),
                best(|p| p.write_mb_s)
            )
        }
        Headline::FullSpan { .. } => {
            let avg = |read: bool| {
                r.steps
                    .iter()
                    .map(|s| direction(&s.summary, read))
                    .find(|d| d.ios > 0)
                    .map(|d| mbs(d.mb_s))
            };
            let mut parts = Vec::new();
            if let Some(w) = avg(false) {
                parts.push(format!("write avg {w}"));
            }
            if let Some(rd) = avg(true) {
                parts.push(format!("read avg {rd}"));
            }
            format!("whole span: {}", parts.join(" · "))
        }
        Headline::Sustain(s) => format!(
            "{} · {} required, {} achieved · longest stall {} ms",
            if s.pass { "PASS" } else { "FAIL" },
            mbs(s.required_mbps),
            mbs(s.achieved_mbps),
            s.longest_stall_ms
        ),
        Headline::FirstLast(f) => format!(
            "first {} {:.0} IOPS → last {:.0} IOPS ({})",
            crate::units::fmt_seconds(f.window_s),
            f.first_iops,
            f.last_iops,
            f.iops_ratio
                .map_or("–".into(), |x| format!("{:+.0} %", (x - 1.0) * 100.0))
        ),
        Headline::Steady(s) => match (s.attained, s.round, s.mean) {
            (true, Some(round), Some(mean)) => {
                format!("steady state at round {round}: {mean:.0} IOPS")
            }
            _ => format!("no steady state in {} rounds", s.rounds.len()),
        },
        Headline::Recovery(c) => match c.recovered_share {
            Some(share) => format!(
                "{:.0} % of the cache back after {:.0} s idle",
                share * 100.0,
                c.idle_s
            ),
            None => format!("cache after {:.0} s idle: not found", c.idle_s),
        },
        Headline::Compress(c) => {
            let pats: Vec<String> = c
                .patterns
                .iter()
                .map(|p| format!("{} {}", p.pattern, mbs(p.mbps)))
                .collect();
            match c.zeros_random_ratio {
                Some(x) => format!("zeros/random {x:.2}× · {}", pats.join(" · ")),
                None => pats.join(" · "),
            }
        }
        Headline::Single { read, write } => {
            let mut parts = Vec::new();
            if let Some(d) = read {
                parts.push(format!("read {}", figures(&d)));
            }
            if let Some(d) = write {
                parts.push(format!("write {}", figures(&d)));
            }
            if parts.is_empty() {
                "nothing measured".into()
            } else {
                parts.join(" · ")
            }
        }
        Headline::Steps => steps_line(r),
    }
}

/// A preset without a form of its own: its own finding (fake capacity, application
/// score, fill levels, latency target) when it has one, else its best step per direction.
#[cfg(not(target_arch = "wasm32"))]
fn steps_line(r: &RunInfo) -> String {
    // Small files: each phase's operations per second.
    if r.preset.as_deref() == Some("files") {
        let mut line = String::new();
        for s in &r.steps {
            let name = s.name.split_once(' ').map_or(s.name.as_str(), |(n, _)| n);
            let ops = (s.summary.read.iops + s.summary.write.iops) as u64;
            if !line.is_empty() {
                line.push_str(" · ");
            }
            line.push_str(name);
            line.push(' ');
            line.push_str(&ops.to_string());
            line.push_str("/s");
            // elbencho's pair, where the jobs ended far apart.
            if let Some(d) = s.files_done.filter(crate::files::Done::differ) {
                line.push_str(" (first done ");
                line.push_str(&(d.first.iops as u64).to_string());
                line.push_str("/s, last ");
                line.push_str(&(d.last.iops as u64).to_string());
                line.push_str("/s)");
            }
        }
        return line;
    }
    if let Some(l) = r
        .analysis
        .as_ref()
        .and_then(|a| a.summary_lines().into_iter().next())
        .filter(|l| !l.contains("not enough"))
    {
        return l;
    }
    let best = |read: bool| {
        r.steps
            .iter()
            .map(|s| (direction(&s.summary, read), s))
            .filter(|(d, _)| d.ios > 0)
            .max_by(|a, b| a.0.mb_s.total_cmp(&b.0.mb_s))
            .map(|(d, s)| {
                format!(
                    "{} {} ({})",
                    if read { "read" } else { "write" },
                    mbs(d.mb_s),
                    s.name
                )
            })
    };
    let mut parts: Vec<String> = [best(true), best(false)].into_iter().flatten().collect();
    parts.push(format!("{} steps", r.steps.len()));
    format!("best {}", parts.join(" · "))
}

/// An interval's figures as the kiosk and the wall show them.
#[derive(Clone, Debug, PartialEq)]
pub struct LiveFigures {
    /// The large number: MB/s.
    pub big: String,
    /// What the number is: `MB/s`, or `MB/s read + write` when both directions ran.
    pub unit: String,
    /// IOPS and p99 (and each direction's MB/s for a mix).
    pub sub: String,
    pub temp: Option<String>,
}

/// The interval's figures; a pause between steps reads as a pause, not as zeros.
pub fn live_figures(x: &Sample) -> LiveFigures {
    let temp = x.temp_c.map(|t| format!("{t:.0} °C"));
    if x.pause {
        return LiveFigures {
            big: "–".into(),
            unit: String::new(),
            sub: "pause between steps".into(),
            temp,
        };
    }
    let mix = x.read.ios > 0 && x.write.ios > 0;
    let p99 = format_ns(x.read.lat.p99_ns.max(x.write.lat.p99_ns));
    // A probe's few requests (or a metadata run's): their latency is the figure, not MB/s.
    let low = x.total_mb_s() < 1.0 && x.total_iops() > 0.0;
    LiveFigures {
        big: if low {
            format_ns(x.read.lat.p50_ns.max(x.write.lat.p50_ns))
        } else {
            format!("{:.0}", x.total_mb_s())
        },
        unit: match (low, mix) {
            (true, _) => "median latency",
            (false, true) => "MB/s read + write",
            (false, false) => "MB/s",
        }
        .into(),
        sub: if mix && !low {
            format!(
                "read {:.0} · write {:.0} MB/s · {:.0} IOPS · p99 {p99}",
                x.read.mb_s,
                x.write.mb_s,
                x.total_iops()
            )
        } else {
            format!("{:.0} IOPS · p99 {p99}", x.total_iops())
        },
        temp,
    }
}

/// The test a run is, as a person names it: the preset, else the workload.
pub fn test_name(r: &RunInfo) -> String {
    match &r.preset {
        Some(p) => p.clone(),
        None => r.spec.label(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::RunStatus;
    use crate::{RunSummary, RwMode, StepReport, WorkloadSpec};

    fn summary(read: f64, write: f64) -> RunSummary {
        let mut s = RunSummary {
            duration_ns: 1_000_000_000,
            ..RunSummary::default()
        };
        for (d, v) in [(&mut s.read, read), (&mut s.write, write)] {
            if v > 0.0 {
                d.mb_s = v;
                d.ios = 10;
                d.bytes = 1 << 20;
            }
        }
        s
    }

    fn step(name: &str, rw: RwMode, bs: u64, qd: u32, mb_s: f64) -> StepReport {
        let read = rw.read_pct(50) == 100;
        StepReport {
            index: 0,
            name: name.into(),
            spec: WorkloadSpec {
                rw,
                bs,
                iodepth: qd,
                ..WorkloadSpec::default()
            },
            summary: if read {
                summary(mb_s, 0.0)
            } else {
                summary(0.0, mb_s)
            },
            start_ns: 0,
            end_ns: 0,
            first_seq: 0,
            samples: 1,
            io_path: None,
            round: None,
            histogram: None,
            verify: None,
            pass: None,
            files_done: None,
        }
    }

    fn run(preset: Option<&str>, steps: Vec<StepReport>) -> RunInfo {
        RunInfo {
            id: 1,
            name: None,
            target: "/t".into(),
            preset: preset.map(Into::into),
            status: RunStatus::Completed,
            created_ms: 0,
            ended_ms: None,
            spec: WorkloadSpec::default(),
            environment: None,
            summary: Some(summary(557.0, 1174.0)),
            error: None,
            steps,
            analysis: None,
            targets: Vec::new(),
            plan: Vec::new(),
            line: String::new(),
            findings: Vec::new(),
        }
    }

    #[test]
    fn a_cdm_run_opens_with_its_tiles_not_the_aggregate() {
        let r = run(
            Some("cdm"),
            vec![
                step("a", RwMode::Read, 1 << 20, 8, 3500.0),
                step("b", RwMode::Write, 1 << 20, 8, 3000.0),
                step("c", RwMode::RandRead, 4096, 1, 60.0),
                step("d", RwMode::RandWrite, 4096, 1, 150.0),
            ],
        );
        match headline(&r, &[]) {
            Headline::Cdm(rows) => assert_eq!(rows.len(), 2),
            other => panic!("{other:?}"),
        }
        let l = line(&r);
        assert!(l.contains("SEQ1M Q8T1 R 3500 W 3000"), "{l}");
        assert!(l.contains("RND4K Q1T1 R 60 W 150"), "{l}");
        assert!(!l.contains("557"), "the aggregate leaked: {l}");
    }

    /// A files run's line: each phase's operations per second, and elbencho's first/last
    /// pair where the two differ by more than 10 %.
    #[test]
    fn a_files_run_reads_its_phases_with_their_first_and_last_done() {
        let mut create = step("create (10 files)", RwMode::Write, 4096, 1, 1.0);
        create.summary.write.iops = 40_000.0;
        let fig = |iops| crate::group::Figure {
            iops,
            ..Default::default()
        };
        create.files_done = Some(crate::files::Done {
            first: fig(52_000.4),
            last: fig(40_000.0),
        });
        let mut stat = step("stat (10 files)", RwMode::Read, 4096, 1, 1.0);
        stat.summary.read.iops = 900_000.0;
        stat.files_done = Some(crate::files::Done {
            first: fig(950_000.0),
            last: fig(900_000.0),
        });
        let l = line(&run(Some("files"), vec![create, stat]));
        assert_eq!(
            l,
            "create 40000/s (first done 52000/s, last 40000/s) · stat 900000/s"
        );
    }

    #[test]
    fn atto_is_by_transfer_size_smallest_first() {
        let r = run(
            Some("atto"),
            vec![
                step("w64k", RwMode::Write, 65536, 4, 900.0),
                step("r64k", RwMode::Read, 65536, 4, 1200.0),
                step("w512", RwMode::Write, 512, 4, 20.0),
                step("r512", RwMode::Read, 512, 4, 30.0),
            ],
        );
        match headline(&r, &[]) {
            Headline::Atto(p) => {
                assert_eq!(p.iter().map(|x| x.bs).collect::<Vec<_>>(), vec![512, 65536]);
                assert_eq!((p[0].read_mb_s, p[0].write_mb_s), (30.0, 20.0));
            }
            other => panic!("{other:?}"),
        }
        assert!(
            line(&r).contains("read max 1200 MB/s at 64 KiB"),
            "{}",
            line(&r)
        );
    }

    #[test]
    fn single_workloads_show_their_figures_and_full_span_its_range() {
        let r = run(None, Vec::new());
        assert!(line(&r).starts_with("read 557 MB/s"), "{}", line(&r));
        let sample = |mb_s: f64| {
            let mut s = Sample {
                end_ns: 1_000_000_000,
                ..Sample::default()
            };
            s.read.mb_s = mb_s;
            s.read.bytes = (mb_s * 1e6) as u64;
            s
        };
        let m = min_avg_max(&[sample(100.0), sample(300.0), sample(0.0)], true).expect("read");
        assert_eq!((m.min, m.avg, m.max), (100.0, 200.0, 300.0));
        assert!(min_avg_max(&[sample(100.0)], false).is_none());
        let sustain = RunInfo {
            analysis: Some(crate::analysis::Analysis {
                sustain: Some(Sustain {
                    pass: false,
                    required_mbps: 3200.0,
                    achieved_mbps: 2900.0,
                    longest_stall_ms: 40,
                    ..Sustain::default()
                }),
                ..Default::default()
            }),
            ..run(Some("sustain"), Vec::new())
        };
        assert!(line(&sustain).starts_with("FAIL · 3200 MB/s required, 2900 MB/s achieved"));
    }

    #[test]
    fn a_probe_reads_as_its_requests_latencies() {
        let probe = RunInfo {
            analysis: Some(crate::analysis::Analysis {
                probe: Some(crate::probe::ProbeSummary {
                    count: 29,
                    min_ns: 98_000,
                    avg_ns: 141_200,
                    max_ns: 2_310_000,
                    mdev_ns: 9_730,
                    ..Default::default()
                }),
                ..Default::default()
            }),
            ..run(Some("probe"), Vec::new())
        };
        assert_eq!(
            line(&probe),
            format!(
                "29 requests · min/avg/max/mdev {} / {} / {} / {}",
                format_ns(98_000),
                format_ns(141_200),
                format_ns(2_310_000),
                format_ns(9_730)
            )
        );
    }
}
