//! One workload on several targets at once (each its own jobs and ring).

use super::{run, MeasureError};
use crate::presets::AnalysisOptions;
use crate::runner::{self, Observer};
use crate::stats::{TargetMerger, Totals};
use crate::workload::Plan;
use shared::{RunReport, RunStatus, Sample};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Runs one workload on several targets at once (each its own jobs and ring): the run's
/// samples are the sum of the targets' samples of the same interval, each with a part per
/// target; the summary sums bytes and I/Os and merges the latency histograms. The four
/// recorders case: four drives written together.
pub fn run_multi(
    plans: Vec<Plan>,
    cancel: Arc<AtomicBool>,
    observer: &mut dyn Observer,
) -> Result<RunReport, MeasureError> {
    let n = plans.len();
    let (tx, rx) = std::sync::mpsc::channel::<Msg>();
    let mut handles = Vec::new();
    for (i, plan) in plans.into_iter().enumerate() {
        let tx = tx.clone();
        let cancel = Arc::clone(&cancel);
        let h = std::thread::Builder::new()
            .name(format!("ds-target-{i}"))
            .spawn(move || {
                let path = plan.target().path.display().to_string();
                let mut fwd = Forward { i, tx: tx.clone() };
                let r = run(plan, cancel, &mut fwd).map(|r| (r, path));
                let _ = tx.send(Msg::Done(i, Box::new(r)));
            })
            .map_err(|e| MeasureError::Start(runner::StartError::Thread(e)))?;
        handles.push(h);
    }
    drop(tx);
    let mut merger = TargetMerger::new(n);
    let mut done: Vec<Option<Result<(RunReport, String), MeasureError>>> =
        (0..n).map(|_| None).collect();
    for msg in rx {
        match msg {
            Msg::Sample(i, s) => merger.sample(i, s),
            Msg::Done(i, r) => {
                done[i] = Some(*r);
                merger.ended(i);
            }
        }
        merger.ready(|s| observer.sample(s));
    }
    for h in handles {
        let _ = h.join();
    }
    merger.ready(|s| observer.sample(s));
    let reports = done.into_iter().flatten().collect::<Result<Vec<_>, _>>()?;
    let Some((first, _)) = reports.first().cloned() else {
        return Err(MeasureError::NoTargets);
    };
    let mut report = first;
    let mut totals = Totals::default();
    let mut dur = 0u64;
    for (r, _) in &reports {
        totals.add(r);
        dur = dur.max(r.summary.duration_ns);
    }
    totals.apply(&mut report, dur, merger.count(), None);
    report.samples = merger.into_samples();
    report.timeline = None;
    report.status = reports
        .iter()
        .map(|(r, _)| r.status)
        .find(|s| *s != RunStatus::Completed)
        .unwrap_or(RunStatus::Completed);
    report.error = reports.iter().find_map(|(r, _)| r.error.clone());
    report.environment.target = reports
        .iter()
        .map(|(_, p)| p.as_str())
        .collect::<Vec<_>>()
        .join(" + ");
    report.targets = reports
        .iter()
        .map(|(r, p)| shared::TargetPart {
            path: p.clone(),
            summary: r.summary.clone(),
            status: Some(r.status),
            verify: r.analysis.verify.clone(),
        })
        .collect();
    // Each target's read-back stays in its part; the run's adds them up.
    report.analysis.verify = reports
        .iter()
        .filter_map(|(r, _)| r.analysis.verify.as_ref())
        .fold(None, |acc: Option<shared::analysis::verify::Verify>, v| {
            let mut acc = acc.unwrap_or_default();
            acc.add(v);
            Some(acc)
        });
    // Each target's scan is its own map (the cells are positions on that target).
    report.analysis.scan = reports
        .iter()
        .flat_map(|(r, _)| r.analysis.scan.iter().cloned())
        .collect();
    let opts = AnalysisOptions::for_spec(&report.spec);
    crate::analyze::finish(&mut report, &opts, None);
    Ok(report)
}

/// What a target's thread tells the merging one: a sample, or its end with its report and
/// path. (Samples dominate the traffic; the rare end is boxed, the samples are not.)
#[allow(clippy::large_enum_variant)]
enum Msg {
    Sample(usize, Sample),
    Done(usize, Box<Result<(RunReport, String), MeasureError>>),
}

/// A target's observer: its samples to the merging thread.
struct Forward {
    i: usize,
    tx: std::sync::mpsc::Sender<Msg>,
}

impl Observer for Forward {
    fn sample(&mut self, s: &Sample) {
        let _ = self.tx.send(Msg::Sample(self.i, s.clone()));
    }
}
