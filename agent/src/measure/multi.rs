//! Several plans at once (each its own jobs and ring): one workload on several targets, or
//! a job file's jobs that run together.

use super::{run, MeasureError};
use crate::presets::AnalysisOptions;
use crate::runner::{self, Observer};
use crate::stats::{TargetMerger, Totals};
use crate::workload::Plan;
use shared::analysis::Timeline;
use shared::{RunReport, RunStatus, Sample};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// The most plans one run holds at once (targets of one workload, or a job file's jobs):
/// each is its own job threads and ring.
pub const MAX_PARTS: usize = 64;

/// A plan of a run of several at once, with the fio job it runs (none: the run's one
/// workload on this plan's target).
pub struct Part {
    pub job: Option<String>,
    pub plan: Plan,
}

impl Part {
    /// The run's one workload on this part's target.
    pub fn target(plan: Plan) -> Self {
        Part { job: None, plan }
    }
}

/// Runs several plans at once (each its own jobs and ring): the run's samples are the sum
/// of the parts' samples of the same interval, each with a sample per part; the summary
/// sums bytes and I/Os and merges the latency histograms, and each part keeps its own. The
/// four recorders case (four drives written together) and a job file's jobs that run
/// together (a reader beside a writer, each with its own depth and rate).
pub fn run_multi(
    parts: Vec<Part>,
    cancel: Arc<AtomicBool>,
    observer: &mut dyn Observer,
) -> Result<RunReport, MeasureError> {
    run_parts(parts, cancel, observer).map(|(r, _)| r)
}

/// [`run_multi`], with the parts' 10 ms timelines added up bucket by bucket (a step of
/// jobs at once among other steps: the run's timeline goes on through it). `None` when the
/// parts' buckets differ in width.
pub fn run_multi_timeline(
    parts: Vec<Part>,
    cancel: Arc<AtomicBool>,
    observer: &mut dyn Observer,
) -> Result<(RunReport, Option<Timeline>), MeasureError> {
    run_parts(parts, cancel, observer)
}

/// The parts' timelines added up: bytes and completion gaps bucket by bucket, slow I/Os
/// together (each part's own job threads, started within milliseconds of each other).
fn sum_timelines<'a>(mut ts: impl Iterator<Item = &'a Timeline>) -> Option<Timeline> {
    let mut sum = ts.next()?.clone();
    for t in ts {
        if t.bucket_ms != sum.bucket_ms {
            return None;
        }
        for (acc, v) in [
            (&mut sum.bytes, &t.bytes),
            (&mut sum.gaps_log2_us, &t.gaps_log2_us),
        ] {
            if acc.len() < v.len() {
                acc.resize(v.len(), 0);
            }
            acc.iter_mut().zip(v).for_each(|(a, b)| *a += b);
        }
        let room = crate::stats::fine::SLOW_KEEP_RUN.saturating_sub(sum.slow_ios.len());
        sum.slow_ios.extend(t.slow_ios.iter().take(room).cloned());
        sum.slow_ios_total += t.slow_ios_total;
    }
    Some(sum)
}

fn run_parts(
    parts: Vec<Part>,
    cancel: Arc<AtomicBool>,
    observer: &mut dyn Observer,
) -> Result<(RunReport, Option<Timeline>), MeasureError> {
    let n = parts.len();
    let (tx, rx) = std::sync::mpsc::channel::<Msg>();
    let mut handles = Vec::new();
    let mut jobs = Vec::with_capacity(n);
    let start_at = observer.start_at();
    for (i, Part { job, plan }) in parts.into_iter().enumerate() {
        jobs.push(job);
        let tx = tx.clone();
        let cancel = Arc::clone(&cancel);
        let h = std::thread::Builder::new()
            .name(format!("ds-part-{i}"))
            .spawn(move || {
                let path = plan.target().path.display().to_string();
                let mut fwd = Forward {
                    i,
                    tx: tx.clone(),
                    start_at,
                };
                let r = run(plan, cancel, &mut fwd).map(|r| (r, path));
                let _ = tx.send(Msg::Done(i, Box::new(r)));
            })
            .map_err(|e| MeasureError::Start(runner::StartError::Thread(e)))?;
        handles.push(h);
    }
    drop(tx);
    merge_parts(
        rx,
        jobs,
        || handles.into_iter().for_each(|h| drop(h.join())),
        observer,
    )
}

/// The merging half of a run of parts at once, wherever the parts run (here on threads,
/// or on other agents for a group run, `crate::group`): each part's samples as they come
/// on `rx`, summed per interval and given to `observer` in order, then each part's end
/// with its report and label, merged into the run's report (`joined` is called once every
/// part has ended). `jobs` has one entry per part.
pub fn merge_parts(
    rx: std::sync::mpsc::Receiver<Msg>,
    jobs: Vec<Option<String>>,
    joined: impl FnOnce(),
    observer: &mut dyn Observer,
) -> Result<(RunReport, Option<Timeline>), MeasureError> {
    let n = jobs.len();
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
    joined();
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
    let timeline = sum_timelines(reports.iter().filter_map(|(r, _)| r.timeline.as_ref()));
    report.timeline = None;
    report.status = reports
        .iter()
        .map(|(r, _)| r.status)
        .find(|s| *s != RunStatus::Completed)
        .unwrap_or(RunStatus::Completed);
    report.error = reports.iter().find_map(|(r, _)| r.error.clone());
    // Each target once (a job file's jobs may share one).
    let mut paths: Vec<&str> = Vec::new();
    for (_, p) in &reports {
        if !paths.contains(&p.as_str()) {
            paths.push(p);
        }
    }
    report.environment.target = paths.join(" + ");
    report.targets = reports
        .iter()
        .zip(jobs)
        .map(|((r, p), job)| shared::TargetPart {
            path: p.clone(),
            job,
            summary: r.summary.clone(),
            histogram: Some(r.histogram.clone()),
            status: Some(r.status),
            verify: r.analysis.verify.clone(),
            step: None,
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
    Ok((report, timeline))
}

/// What a target's thread tells the merging one: a sample, or its end with its report and
/// path. (Samples dominate the traffic; the rare end is boxed, the samples are not.)
#[allow(clippy::large_enum_variant)]
pub enum Msg {
    Sample(usize, Sample),
    Done(usize, Box<Result<(RunReport, String), MeasureError>>),
}

/// A target's observer: its samples to the merging thread.
struct Forward {
    i: usize,
    tx: std::sync::mpsc::Sender<Msg>,
    /// The run's start time, if it was told one (every part waits for it).
    start_at: Option<std::time::SystemTime>,
}

impl Observer for Forward {
    fn sample(&mut self, s: &Sample) {
        let _ = self.tx.send(Msg::Sample(self.i, s.clone()));
    }
    fn start_at(&self) -> Option<std::time::SystemTime> {
        self.start_at
    }
}
