//! The group's result from the merged parts: each host as the result tells of it (clock,
//! start on the shared clock, the time it left), the sustain of the total, and elbencho's
//! first-done, last-done and stonewall figures.

use super::follow::Group as Following;
use crate::presets::AnalysisOptions;
use shared::group::{Figure, Group, Host};
use shared::{RunReport, Sample};

/// Completes the merged `report` of group `g`.
pub fn finish(report: &mut RunReport, g: &Following) {
    let ends = g.ends.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let n = g.members.len();
    let hosts: Vec<Host> = g
        .members
        .iter()
        .zip(&ends)
        .map(|(m, e)| Host {
            started_ms: e
                .started_at_ms
                .map(|t| t as f64 - m.offset_ns as f64 / 1e6 - g.start_ms as f64),
            left_ms: e.left_ms,
            fault: e.fault.clone(),
            ..m.host.clone()
        })
        .collect();
    // A host that left took its histogram with it: its I/Os count in the totals, not in
    // the merged percentiles.
    let unmeasured = ends.iter().fold([0u64; 3], |acc, e| {
        [
            acc[0] + e.unmeasured_ios[0],
            acc[1] + e.unmeasured_ios[1],
            acc[2] + e.unmeasured_ios[2],
        ]
    });
    let d = report.summary.duration_ns;
    let s = &mut report.summary;
    for (dir, extra) in [(&mut s.read, unmeasured[0]), (&mut s.write, unmeasured[1])]
        .into_iter()
        .chain([(&mut s.trim, unmeasured[2])])
    {
        dir.ios += extra;
        *dir = dir.with_rates(d);
    }
    report.steps = merge_steps(&ends);
    // The sustain of the total: what every host was required to carry, added up.
    let mut opts = AnalysisOptions::for_spec(&report.spec);
    let sustains: Vec<(f64, u64)> = ends.iter().filter_map(|e| e.sustain).collect();
    if !sustains.is_empty() {
        opts.required_rate = Some(sustains.iter().map(|(mb, _)| mb * 1e6).sum());
        opts.buffer_ms = sustains
            .iter()
            .map(|(_, b)| *b)
            .max()
            .unwrap_or(opts.buffer_ms);
    }
    crate::analyze::finish(report, &opts, None);
    let addresses: Vec<&str> = hosts.iter().map(|h| h.address.as_str()).collect();
    report.environment.target = format!("group of {n}: {}", addresses.join(", "));
    let warnings = &mut report.environment.warnings;
    let interval = report.spec.interval_ms as f64;
    for h in &hosts {
        if let Some(late) = h.started_ms.filter(|ms| ms.abs() >= interval) {
            warnings.push(format!(
                "{} started {late:.0} ms off the shared start (more than one {interval:.0} ms interval): its samples are a step off the others'",
                h.address
            ));
        }
        if let Some(f) = &h.fault {
            warnings.push(f.clone());
        }
    }
    if unmeasured.iter().any(|&n| n > 0) {
        warnings.push(format!(
            "{} I/O(s) of hosts that left count in the totals but not in the merged latency percentiles (their histograms left with them)",
            unmeasured.iter().sum::<u64>()
        ));
    }
    // A host that left fails the group, whatever the others did after it (with
    // `on_fault = stop` they were stopped because of it).
    if let Some(f) = hosts.iter().find_map(|h| h.fault.as_ref()) {
        report.status = shared::RunStatus::Failed;
        report.error = Some(shared::RunError {
            message: f.clone(),
            op: None,
            offset: None,
            errno: None,
        });
    }
    report.analysis.group = Some(Group {
        start_ms: g.start_ms,
        first_done: first_done(&report.samples, n),
        last_done: figure(report.summary.duration_ns, &totals(&report.summary)),
        stonewall: stonewall(&report.samples, n),
        hosts,
    });
}

/// Bytes and I/Os of a sample, all directions.
fn amounts(s: &Sample) -> (u64, u64) {
    (
        s.read.bytes + s.write.bytes + s.trim.bytes,
        s.read.ios + s.write.ios + s.trim.ios,
    )
}

/// Bytes and I/Os of a summary, all directions.
fn totals(s: &shared::RunSummary) -> (u64, u64) {
    (
        s.read.bytes + s.write.bytes + s.trim.bytes,
        s.read.ios + s.write.ios + s.trim.ios,
    )
}

fn figure(ns: u64, (bytes, ios): &(u64, u64)) -> Figure {
    Figure::over(ns, *ios, *bytes)
}

/// Everything until the first host ended (its last interval included).
fn first_done(samples: &[Sample], hosts: usize) -> Figure {
    let mut last = vec![None; hosts];
    for s in samples {
        for p in &s.parts {
            if let Some(l) = last.get_mut(p.target as usize) {
                *l = Some(s.seq);
            }
        }
    }
    let Some(first_end) = last.iter().flatten().min().copied() else {
        return Figure::default();
    };
    let upto: Vec<&Sample> = samples.iter().filter(|s| s.seq <= first_end).collect();
    let end = upto.iter().map(|s| s.end_ns).max().unwrap_or(0);
    let sum = upto.iter().fold((0, 0), |(b, i), s| {
        let (sb, si) = amounts(s);
        (b + sb, i + si)
    });
    figure(end, &sum)
}

/// The intervals every host reported (all of them running), pauses left out.
fn stonewall(samples: &[Sample], hosts: usize) -> Figure {
    let all: Vec<&Sample> = samples
        .iter()
        .filter(|s| !s.pause && s.parts.len() == hosts)
        .collect();
    let ns = all
        .iter()
        .map(|s| s.end_ns.saturating_sub(s.start_ns))
        .sum();
    let sum = all.iter().fold((0, 0), |(b, i), s| {
        let (sb, si) = amounts(s);
        (b + sb, i + si)
    });
    figure(ns, &sum)
}

/// The hosts' steps merged step by step (by index): amounts added up, latency from the
/// exact merge of the steps' histograms, over the longest host's time of that step; where
/// the step lies in the run is the first host's (they start together).
fn merge_steps(ends: &[super::follow::Ended]) -> Vec<shared::steps::StepReport> {
    let n = ends.iter().map(|e| e.steps.len()).max().unwrap_or(0);
    (0..n)
        .filter_map(|k| {
            let of: Vec<&shared::steps::StepReport> =
                ends.iter().filter_map(|e| e.steps.get(k)).collect();
            let first = *of.first()?;
            let mut totals = crate::stats::Totals::default();
            for s in &of {
                totals.add_summary(&s.summary, &s.histogram.clone().unwrap_or_default());
            }
            let duration = of.iter().map(|s| s.summary.duration_ns).max().unwrap_or(0);
            let fsync = of.iter().filter_map(|s| s.summary.fsync_ns).max();
            let (summary, mut histogram) = totals.summary(duration, first.summary.samples, fsync);
            if let Some(h) = &first.histogram {
                histogram.layout = h.layout.clone();
                histogram.max_relative_error = h.max_relative_error;
            }
            Some(shared::steps::StepReport {
                summary,
                histogram: Some(histogram),
                ..first.clone()
            })
        })
        .collect()
}
