//! What each chart shows, built from samples (live or stored) as [`ChartData`]: throughput,
//! IOPS, latency, temperature, throughput against position, runs overlaid, block-size sweep.

use crate::grid::SweepPoint;
use crate::plot::{ChartData, Fmt, Marker, Series, YAxis, BREAK};
use shared::{LatencyStats, Rate, Sample, WorkloadSpec};

pub const READ: (u8, u8, u8) = (52, 120, 246);
pub const WRITE: (u8, u8, u8) = (230, 80, 60);
pub const TRIM: (u8, u8, u8) = (150, 110, 40);
pub const PALETTE: [(u8, u8, u8); 6] = [
    (52, 120, 246),
    (230, 80, 60),
    (60, 160, 90),
    (240, 160, 40),
    (150, 90, 200),
    (90, 90, 90),
];

/// A line over time: each sample at its end; `f`'s `None` (nothing to show) and pauses
/// leave a gap, and the line breaks where a step ends, so that it never joins two
/// different workloads or runs through a pause.
fn over_time(samples: &[Sample], f: impl Fn(&Sample) -> Option<f64>) -> Vec<(f64, f64)> {
    let mut out: Vec<(f64, f64)> = Vec::with_capacity(samples.len());
    let mut prev: Option<&Sample> = None;
    for x in samples {
        let t = x.end_ns as f64 / 1e9;
        let v = if x.pause { None } else { f(x) };
        let joined = prev.is_some_and(|p| p.step == x.step && !p.pause);
        match v {
            Some(v) => {
                if !joined && out.last().is_some_and(|p| !p.1.is_nan()) {
                    out.push((x.start_ns as f64 / 1e9, BREAK));
                }
                out.push((t, v));
            }
            None if out.last().is_some_and(|p| !p.1.is_nan()) => out.push((t, BREAK)),
            None => {}
        }
        prev = Some(x).filter(|_| v.is_some());
    }
    out
}

/// Breaks every line at each of `at` (seconds): a stored run's step boundaries, rounds
/// included (the rounds of a step share its samples' step index, but each is a workload of
/// its own: a steady-state round, a latency search's next depth).
pub fn break_at(c: &mut ChartData, at: &[f64]) {
    for s in &mut c.series {
        let mut out = Vec::with_capacity(s.points.len() + at.len());
        let mut next = at.iter().copied().peekable();
        for (i, p) in s.points.iter().enumerate() {
            out.push(*p);
            let Some(q) = s.points.get(i + 1) else { break };
            while next.peek().is_some_and(|t| *t < p.0 - 1e-9) {
                next.next();
            }
            if let Some(&t) = next.peek() {
                if p.0 <= t + 1e-9 && q.0 > t + 1e-9 && !p.1.is_nan() && !q.1.is_nan() {
                    out.push((t, BREAK));
                    next.next();
                }
            }
        }
        s.points = out;
    }
}

/// The steps (by index) in which a direction moved data: a read line has nothing to say
/// during a write step.
fn active_steps(samples: &[Sample], read: bool) -> std::collections::BTreeSet<u32> {
    samples
        .iter()
        .filter(|s| {
            if read {
                s.read.ios > 0
            } else {
                s.write.ios > 0
            }
        })
        .map(|s| s.step)
        .collect()
}

fn timed(title: &str, y_desc: &str, axis: YAxis, y_fmt: Fmt) -> ChartData {
    ChartData {
        title: title.into(),
        x_desc: "time".into(),
        y_desc: y_desc.into(),
        axis,
        x_fmt: Fmt::Seconds,
        y_fmt,
        series: Vec::new(),
        markers: Vec::new(),
    }
}

/// Read and write lines, only for the directions that moved data, each only over the
/// steps it ran in (a stall inside them is a zero, a step of the other direction a gap).
fn directions(samples: &[Sample], f: fn(&shared::DirSample) -> f64) -> Vec<Series> {
    let mut out = Vec::new();
    let (reads, writes) = (active_steps(samples, true), active_steps(samples, false));
    let trims = samples.iter().any(|s| s.trim.ios > 0);
    if !reads.is_empty() || (writes.is_empty() && !trims) {
        out.push(Series {
            name: "read".into(),
            color: READ,
            points: over_time(samples, |x| {
                (reads.contains(&x.step) || writes.is_empty()).then(|| f(&x.read))
            }),
        });
    }
    if !writes.is_empty() {
        out.push(Series {
            name: "write".into(),
            color: WRITE,
            points: over_time(samples, |x| writes.contains(&x.step).then(|| f(&x.write))),
        });
    }
    if trims {
        out.push(Series {
            name: "trim".into(),
            color: TRIM,
            points: over_time(samples, |x| Some(f(&x.trim))),
        });
    }
    out
}

/// Stalls the analyses found, for the time charts: stretches with no completion (at least
/// the threshold long) and the slow I/Os.
pub fn stall_marker(a: &shared::analysis::Analysis) -> Option<Marker> {
    let st = a.stalls.as_ref()?;
    let spans: Vec<(f64, f64)> = st
        .gaps
        .iter()
        .map(|g| (g.start_s, g.start_s + g.ms / 1e3))
        .collect();
    let ticks: Vec<f64> = st.ios.iter().map(|i| i.at_ns as f64 / 1e9).collect();
    if spans.is_empty() && ticks.is_empty() {
        return None;
    }
    let mut parts = Vec::new();
    if st.gaps_total > 0 {
        parts.push(format!(
            "{} gaps ≥ {:.0} ms",
            st.gaps_total, st.threshold_ms
        ));
    }
    if st.slow_ios_total > 0 {
        parts.push(format!("{} slow I/Os", st.slow_ios_total));
    }
    Some(Marker::Stalls {
        spans,
        ticks,
        label: format!("stalls: {}", parts.join(", ")),
    })
}

/// MB/s per direction; a required byte rate shows as a level, and a cache cliff (found
/// live, by the same analysis as the agent's) as a line.
pub fn throughput(samples: &[Sample], spec: Option<&WorkloadSpec>) -> ChartData {
    let mut c = timed("Throughput", "MB/s", YAxis::Linear, Fmt::Count);
    c.series = directions(samples, |d| d.mb_s);
    // Several targets at once: a line per target beside the sum.
    let targets = samples.iter().map(|s| s.parts.len()).max().unwrap_or(0);
    if targets > 1 {
        for t in 0..targets {
            c.series.push(Series {
                name: format!("target {}", t + 1),
                color: PALETTE[(t + 2) % PALETTE.len()],
                points: samples
                    .iter()
                    .filter_map(|s| {
                        let p = s.parts.iter().find(|p| p.target as usize == t)?;
                        Some((s.end_ns as f64 / 1e9, p.read_mb_s + p.write_mb_s))
                    })
                    .collect(),
            });
        }
    }
    if samples.iter().any(|s| s.step > 0) {
        // Several steps: a cliff across different workloads means nothing; the agent's
        // analysis (per step) marks it when the run ends.
    } else if samples.iter().any(|s| s.write.ios > 0) {
        let a = shared::analysis::Analysis {
            cache_cliff: Some(shared::analysis::cache_cliff(samples)),
            ..Default::default()
        };
        c.markers.extend(analysis_markers(&a, &[]));
    }
    if let Some(Rate::BytesPerSec(b)) = spec.and_then(|s| s.rate) {
        let mb = b as f64 / 1e6;
        c.markers.push(Marker::Level {
            y: mb,
            label: format!("required {mb:.0} MB/s"),
        });
    }
    c
}

/// What the analyses mark on time charts: where the cache ran out, the steady-state window.
pub fn analysis_markers(
    a: &shared::analysis::Analysis,
    steps: &[shared::StepReport],
) -> Vec<Marker> {
    let mut out = Vec::new();
    if let Some(c) = a.cache_cliff.as_ref().filter(|c| c.detected) {
        if let (Some(at), Some(bytes)) = (c.at_s, c.cache_bytes) {
            out.push(Marker::At {
                x: at,
                label: format!("cache full after {}", shared::units::format_bytes(bytes)),
            });
        }
    }
    if let Some(s) = a.steady_state.as_ref().filter(|s| s.attained) {
        let window = match (s.window_start_s, s.window_end_s, s.round) {
            (Some(a), Some(b), _) => Some((a, b)),
            (_, _, Some(r)) => {
                let rounds: Vec<&shared::StepReport> = steps
                    .iter()
                    // Runs stored before steps carried their round were named "round N".
                    .filter(|s| s.round.is_some() || s.name.starts_with("round "))
                    .collect();
                let (r, w) = (r as usize, shared::analysis::STEADY_WINDOW);
                match (
                    rounds.get(r.saturating_sub(w)),
                    rounds.get(r.saturating_sub(1)),
                ) {
                    (Some(a), Some(b)) => Some((a.start_ns as f64 / 1e9, b.end_ns as f64 / 1e9)),
                    _ => None,
                }
            }
            _ => None,
        };
        if let Some((x0, x1)) = window {
            out.push(Marker::Band {
                x0,
                x1,
                label: "steady state".into(),
            });
        }
    }
    out
}

/// I/O per second per direction; a required IOPS rate shows as a level.
pub fn iops(samples: &[Sample], spec: Option<&WorkloadSpec>) -> ChartData {
    let mut c = timed("IOPS", "I/O per second", YAxis::Linear, Fmt::Count);
    c.series = directions(samples, |d| d.iops);
    if let Some(Rate::Iops(n)) = spec.and_then(|s| s.rate) {
        c.markers.push(Marker::Level {
            y: n as f64,
            label: format!("required {n} IOPS"),
        });
    }
    c
}

/// p50, p99 and max of whichever directions ran, on a log scale.
pub fn latency(samples: &[Sample]) -> ChartData {
    let mut c = timed("Latency (log scale)", "latency", YAxis::Log, Fmt::Micros);
    let us = |x: &Sample, f: fn(&LatencyStats) -> u64| {
        f(&x.read.lat).max(f(&x.write.lat)).max(f(&x.trim.lat)) as f64 / 1e3
    };
    // An interval without I/O has no latency: a gap, not a 0 on the log axis' floor.
    let line = |name: &str, color, f: fn(&LatencyStats) -> u64| Series {
        name: name.into(),
        color,
        points: over_time(samples, |x| {
            (x.read.ios + x.write.ios + x.trim.ios > 0).then(|| us(x, f))
        }),
    };
    c.series = vec![
        line("p50", (60, 160, 90), |l| l.p50_ns),
        line("p99", (240, 160, 40), |l| l.p99_ns),
        line("max", (200, 60, 60), |l| l.max_ns),
    ];
    c
}

/// Temperature, when the target reports one.
pub fn temperature(samples: &[Sample]) -> Option<ChartData> {
    let points: Vec<(f64, f64)> = samples
        .iter()
        .filter_map(|s| s.temp_c.map(|t| (s.end_ns as f64 / 1e9, t)))
        .collect();
    if points.is_empty() {
        return None;
    }
    let mut c = timed("Temperature", "°C", YAxis::Linear, Fmt::Celsius);
    c.series = vec![Series {
        name: "device".into(),
        color: (200, 120, 30),
        points,
    }];
    Some(c)
}

/// Throughput against where on the target it was measured (the HD Tune graph), for
/// sequential runs whose samples carry offsets.
/// HD Tune's transfer-rate chart: MB/s against position, a series per direction (the write
/// pass and the read pass of a full-span run), each interval at the middle of what it
/// covered.
pub fn span_by_position(samples: &[Sample]) -> Option<ChartData> {
    let series: Vec<Series> = [("write", WRITE, false), ("read", READ, true)]
        .into_iter()
        .filter_map(|(name, color, read)| {
            let mut points: Vec<(f64, f64)> = samples
                .iter()
                .filter_map(|s| {
                    let d = if read { &s.read } else { &s.write };
                    let (lo, hi) = (s.offset_lo?, s.offset_hi?);
                    (d.bytes > 0).then(|| ((lo as f64 + hi as f64) / 2.0 / 1e9, d.mb_s))
                })
                .collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            (points.len() >= 2).then(|| Series {
                name: name.into(),
                color,
                points,
            })
        })
        .collect();
    (!series.is_empty()).then(|| ChartData {
        title: "Transfer rate by position".into(),
        x_desc: "position on the target".into(),
        y_desc: "MB/s".into(),
        axis: YAxis::Linear,
        x_fmt: Fmt::Gigabytes,
        y_fmt: Fmt::Count,
        series,
        markers: Vec::new(),
    })
}

pub fn by_position(samples: &[Sample], spec: Option<&WorkloadSpec>) -> Option<ChartData> {
    if spec.is_some_and(|s| s.rw.is_random()) {
        return None;
    }
    let windows: Vec<(u64, u64, f64)> = samples
        .iter()
        .filter_map(|s| Some((s.offset_lo?, s.offset_hi?, s.total_mb_s())))
        .collect();
    let lo = windows.iter().map(|w| w.0).min()?;
    let hi = windows.iter().map(|w| w.1).max()?;
    // A window that swept most of the span (a small target passed over many times) has no
    // position to speak of.
    let mut points: Vec<(f64, f64)> = windows
        .iter()
        .filter(|w| (w.1 - w.0) <= (hi - lo) / 2)
        .map(|w| ((w.0 as f64 + w.1 as f64) / 2.0 / 1e9, w.2))
        .collect();
    if points.len() < 2 {
        return None;
    }
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    Some(ChartData {
        title: "Throughput by position".into(),
        x_desc: "position on the target".into(),
        y_desc: "MB/s".into(),
        axis: YAxis::Linear,
        x_fmt: Fmt::Gigabytes,
        y_fmt: Fmt::Count,
        series: vec![Series {
            name: "MB/s".into(),
            color: WRITE,
            points,
        }],
        markers: Vec::new(),
    })
}

/// Several runs on shared axes: `metric` of each over time.
pub fn overlay(
    title: &str,
    y_desc: &str,
    axis: YAxis,
    y_fmt: Fmt,
    runs: &[(i64, Vec<Sample>)],
    metric: fn(&Sample) -> f64,
) -> ChartData {
    let mut c = timed(title, y_desc, axis, y_fmt);
    c.series = runs
        .iter()
        .enumerate()
        .map(|(i, (id, samples))| Series {
            name: format!("run {id}"),
            color: PALETTE[i % PALETTE.len()],
            points: over_time(samples, |x| Some(metric(x))),
        })
        .collect();
    c
}

/// MB/s against block size (log2 axis), read and write.
pub fn sweep(points: &[SweepPoint]) -> ChartData {
    let line = |name: &str, color, f: fn(&SweepPoint) -> f64| Series {
        name: name.into(),
        color,
        points: points
            .iter()
            .map(|p| ((p.bs as f64).log2(), f(p)))
            .collect(),
    };
    let mut series = Vec::new();
    if points.iter().any(|p| p.read_mb_s > 0.0) {
        series.push(line("read", READ, |p| p.read_mb_s));
    }
    if points.iter().any(|p| p.write_mb_s > 0.0) {
        series.push(line("write", WRITE, |p| p.write_mb_s));
    }
    ChartData {
        title: "Throughput by block size".into(),
        x_desc: "block size".into(),
        y_desc: "MB/s".into(),
        axis: YAxis::Linear,
        x_fmt: Fmt::Log2Bytes,
        y_fmt: Fmt::Count,
        series,
        markers: Vec::new(),
    }
}

/// Latency (log) against achieved IOPS, p50 and p99 for each queue depth: the hockey
/// stick of a `load-latency` run.
pub fn load_latency(curves: &[(u32, Vec<shared::steps::LoadPoint>)]) -> ChartData {
    let mut c = timed("Latency against load", "latency", YAxis::Log, Fmt::Micros);
    c.x_desc = "IOPS achieved".into();
    c.x_fmt = Fmt::Count;
    let colors = [(60, 160, 90), (240, 160, 40), (70, 130, 220), (200, 60, 60)];
    for (depth, points) in curves {
        for p99 in [false, true] {
            c.series.push(Series {
                name: format!("QD{depth} {}", if p99 { "p99" } else { "p50" }),
                color: colors[c.series.len() % 4],
                points: points
                    .iter()
                    .map(|p| (p.iops, if p99 { p.p99_ns } else { p.p50_ns } as f64 / 1e3))
                    .collect(),
            });
        }
    }
    c
}

/// A long run for the redraw benchmark: `series` lines of `points` one-second samples, with
/// noise, a cache cliff and stalls, so downsampling has real extremes to keep.
pub fn synthetic(points: u32, series: u32) -> ChartData {
    let mut c = timed("Throughput (benchmark)", "MB/s", YAxis::Linear, Fmt::Count);
    let mut x = 0x2545_f491_4f6c_dd1du64;
    c.series = (0..series)
        .map(|k| Series {
            name: format!("series {k}"),
            color: PALETTE[k as usize % PALETTE.len()],
            points: (0..points)
                .map(|i| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let noise = (x % 1000) as f64 / 10.0;
                    let base = if i < points / 3 { 2500.0 } else { 800.0 };
                    let y = if i % 3607 == 0 {
                        0.0
                    } else {
                        base / f64::from(k + 1) + noise
                    };
                    (f64::from(i), y)
                })
                .collect(),
        })
        .collect();
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seq_write(n: u64) -> Vec<Sample> {
        (0..n)
            .map(|i| {
                let mut s = Sample {
                    seq: i,
                    end_ns: (i + 1) * 1_000_000_000,
                    offset_lo: Some(i << 30),
                    offset_hi: Some((i + 1) << 30),
                    ..Sample::default()
                };
                s.write.ios = 10;
                s.write.mb_s = 1000.0 - i as f64;
                s
            })
            .collect()
    }

    #[test]
    fn a_full_span_run_draws_its_write_and_read_pass_by_position() {
        let mut samples = seq_write(4);
        for s in &mut samples {
            s.write.bytes = 1 << 30;
        }
        // The read pass over the same positions, twice as fast.
        samples.extend(seq_write(4).into_iter().map(|mut s| {
            s.read = s.write;
            s.read.mb_s *= 2.0;
            s.read.bytes = 1 << 30;
            s.write = Default::default();
            s
        }));
        let c = span_by_position(&samples).expect("chart");
        assert_eq!(c.series.len(), 2);
        assert_eq!(
            (c.series[0].name.as_str(), c.series[1].name.as_str()),
            ("write", "read")
        );
        assert_eq!(
            c.series[1].points[0],
            ((0.5 * (1u64 << 30) as f64) / 1e9, 2000.0)
        );
        assert!(
            span_by_position(&samples[..1]).is_none(),
            "one interval is no chart"
        );
    }

    #[test]
    fn lines_break_at_pauses_steps_and_stored_boundaries() {
        let mut samples = seq_write(6);
        for s in &mut samples {
            s.start_ns = s.end_ns - 1_000_000_000;
        }
        samples[2].pause = true;
        samples[2].write.ios = 0;
        samples[3].step = 1;
        samples[4].step = 1;
        samples[5].step = 1;
        let mut c = throughput(&samples, None);
        let segs: Vec<(f64, f64)> = c.series[0]
            .segments()
            .map(|g| (g[0].0, g[g.len() - 1].0))
            .collect();
        assert_eq!(segs, [(1.0, 2.0), (4.0, 6.0)], "{:?}", c.series[0].points);
        // A round boundary inside step 1 (at 5 s), known from the stored steps.
        break_at(&mut c, &[5.0]);
        let segs: Vec<(f64, f64)> = c.series[0]
            .segments()
            .map(|g| (g[0].0, g[g.len() - 1].0))
            .collect();
        assert_eq!(segs, [(1.0, 2.0), (4.0, 5.0), (6.0, 6.0)]);
        // An idle interval has no latency point.
        let lat = latency(&samples);
        assert!(lat.series[0]
            .points
            .iter()
            .all(|p| p.0 != 3.0 || p.1.is_nan()));
    }

    #[test]
    fn only_directions_that_ran_are_drawn_and_a_required_rate_is_a_level() {
        let spec = WorkloadSpec {
            rw: shared::RwMode::Write,
            rate: Some(Rate::BytesPerSec(3_200_000_000)),
            ..WorkloadSpec::default()
        };
        let c = throughput(&seq_write(5), Some(&spec));
        assert_eq!(
            c.series.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
            ["write"]
        );
        assert_eq!(
            c.markers,
            vec![Marker::Level {
                y: 3200.0,
                label: "required 3200 MB/s".into()
            }]
        );
    }

    #[test]
    fn position_chart_uses_window_midpoints_and_skips_random_runs() {
        let c = by_position(&seq_write(3), None).expect("chart");
        let xs: Vec<f64> = c.series[0].points.iter().map(|p| p.0).collect();
        let gb = |b: u64| b as f64 / 1e9;
        assert_eq!(xs, [gb(1 << 29), gb(3 << 29), gb(5 << 29)]);
        let random = WorkloadSpec {
            rw: shared::RwMode::RandWrite,
            ..WorkloadSpec::default()
        };
        assert!(by_position(&seq_write(3), Some(&random)).is_none());
        let mut looped = seq_write(3);
        for s in &mut looped {
            (s.offset_lo, s.offset_hi) = (Some(0), Some(3 << 30));
        }
        assert!(
            by_position(&looped, None).is_none(),
            "every window swept the span"
        );
        assert!(
            temperature(&seq_write(3)).is_none(),
            "no temperature, no chart"
        );
    }
}
