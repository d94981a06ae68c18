//! One measurement from a user's spec to a report: probe (or create) the target, validate
//! into a plan, run, assemble the report. The CLI and, later, the service go through here.

use crate::presets::AnalysisOptions;
use crate::report;
use crate::runner::{self, Observer, StartError};
use crate::stats::Histogram;
use crate::target::{TargetError, TargetInfo};
use crate::workload::plan::{null_target, wanted_target_size};
use crate::workload::Plan;
use shared::analysis::Timeline;
use shared::{
    Backend, RunReport, RunStatus, RunSummary, Sample, SpecError, Step, StepReport, WorkloadSpec,
};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Why a measurement could not start. Nothing was measured.
#[derive(Debug, thiserror::Error)]
pub enum MeasureError {
    #[error("invalid workload: {}", join(.0))]
    Spec(Vec<SpecError>),
    #[error(transparent)]
    Target(#[from] TargetError),
    #[error(transparent)]
    Start(#[from] StartError),
}

fn join(errs: &[SpecError]) -> String {
    errs.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// Validates `spec` on its own (before touching the target) and against the target.
pub fn plan(spec: &WorkloadSpec, target: &Path) -> Result<Plan, MeasureError> {
    spec.validate().map_err(MeasureError::Spec)?;
    let info = if spec.backend == Backend::Null {
        null_target(spec, target)
    } else {
        TargetInfo::probe(target, wanted_target_size(spec))?
    };
    Plan::new(spec, info).map_err(MeasureError::Spec)
}

/// Runs a validated plan to its end and returns its report (also when stopped or failed).
pub fn run(
    plan: Plan,
    cancel: Arc<AtomicBool>,
    observer: &mut dyn Observer,
) -> Result<RunReport, MeasureError> {
    let started = crate::env::unix_ms();
    let plan = Arc::new(plan);
    let snapshot = crate::devices::Snapshot::take(plan.target());
    let outcome = runner::run(&plan, cancel, observer)?;
    let mut report = report::build(&plan, outcome, started);
    snapshot.finish(&mut report.environment, report.summary.write.bytes);
    report.analysis = crate::analyze::analyze(&report, &AnalysisOptions::for_spec(plan.spec()));
    Ok(report)
}

/// One step of a sequence with its validated plan.
pub struct StepPlan {
    pub step: Step,
    pub plan: Plan,
}

/// Plans every step against the target before anything runs: a bad step fails the whole
/// sequence up front, naming the step.
pub fn plan_steps(steps: &[Step], target: &Path) -> Result<Vec<StepPlan>, MeasureError> {
    steps
        .iter()
        .map(|s| {
            let plan = plan(&s.spec, target).map_err(|e| match e {
                MeasureError::Spec(errs) => MeasureError::Spec(
                    errs.into_iter()
                        .map(|mut err| {
                            err.message = format!("{} (step '{}')", err.message, s.name);
                            err
                        })
                        .collect(),
                ),
                other => other,
            })?;
            Ok(StepPlan {
                step: s.clone(),
                plan,
            })
        })
        .collect()
}

/// Runs the steps one after the other on the same target as one run: samples continue
/// their `seq` and time across steps (pauses are sampled as idle intervals), each step gets
/// its summary, and the analyses run over the whole. Stops at the first step that is
/// stopped or fails; what was measured is kept.
pub fn run_steps(
    steps: Vec<StepPlan>,
    opts: &AnalysisOptions,
    cancel: Arc<AtomicBool>,
    observer: &mut dyn Observer,
) -> Result<RunReport, MeasureError> {
    let started = crate::env::unix_ms();
    let snapshot = steps
        .first()
        .map(|s| crate::devices::Snapshot::take(s.plan.target()));
    let mut seq = Sequence::default();
    let mut first: Option<RunReport> = None;
    for (index, sp) in steps.into_iter().enumerate() {
        let index = index as u32;
        let StepPlan { step, plan } = sp;
        if step.pause_before_ms > 0
            && !seq.idle(
                step.pause_before_ms,
                plan.spec().interval_ms,
                index,
                &cancel,
                observer,
            )
        {
            break;
        }
        let plan = Arc::new(plan);
        let mut round = 0u32;
        loop {
            round += 1;
            let outcome = runner::run(
                &plan,
                Arc::clone(&cancel),
                &mut Shifted {
                    seq: &seq,
                    step: index,
                    inner: observer,
                },
            )?;
            let name = match step.until_steady {
                Some(_) => format!("{} {round}", step.name),
                None => step.name.clone(),
            };
            let report = report::build(&plan, outcome, started);
            let go_on = report.status == RunStatus::Completed;
            seq.add_step(name, index, report, &mut first);
            if !go_on {
                return Ok(with_snapshot(seq.finish(first, opts), snapshot));
            }
            match step.until_steady {
                Some(max) if round < max => {
                    let rounds: Vec<f64> = seq
                        .steps
                        .iter()
                        .filter(|s| s.name.starts_with(&step.name))
                        .map(|s| s.summary.read.iops + s.summary.write.iops)
                        .collect();
                    if shared::analysis::steady_state_rounds(&rounds).attained {
                        break;
                    }
                }
                _ => break,
            }
        }
        if cancel.load(std::sync::atomic::Ordering::Relaxed) {
            break;
        }
    }
    Ok(with_snapshot(seq.finish(first, opts), snapshot))
}

fn with_snapshot(mut r: RunReport, s: Option<crate::devices::Snapshot>) -> RunReport {
    if let Some(s) = s {
        s.finish(&mut r.environment, r.summary.write.bytes);
    }
    r
}

/// Passes a step's samples on with the run's `seq`, time and byte counts.
struct Shifted<'a> {
    seq: &'a Sequence,
    step: u32,
    inner: &'a mut dyn Observer,
}

impl Observer for Shifted<'_> {
    fn layout(&mut self, bytes: u64) {
        self.inner.layout(bytes);
    }
    fn sample(&mut self, sample: &Sample) {
        self.inner
            .sample(&self.seq.shift(sample.clone(), self.step));
    }
}

/// The run being assembled from its steps.
#[derive(Default)]
struct Sequence {
    samples: Vec<Sample>,
    steps: Vec<StepReport>,
    histograms: (Histogram, Histogram),
    timeline: Timeline,
    /// Where the next step starts: time, seq, cumulative bytes.
    t_ns: u64,
    next_seq: u64,
    cum: (u64, u64),
    status: Option<RunStatus>,
    error: Option<shared::RunError>,
    fsync_ns: Option<u64>,
}

impl Sequence {
    fn shift(&self, mut s: Sample, step: u32) -> Sample {
        s.seq += self.next_seq;
        s.start_ns += self.t_ns;
        s.end_ns += self.t_ns;
        s.read.cum_bytes += self.cum.0;
        s.write.cum_bytes += self.cum.1;
        s.step = step;
        s
    }

    /// Idles for `ms`, emitting one empty sample per interval. False when cancelled.
    fn idle(
        &mut self,
        ms: u64,
        interval_ms: u64,
        step: u32,
        cancel: &AtomicBool,
        observer: &mut dyn Observer,
    ) -> bool {
        let start = std::time::Instant::now();
        let mut done_ms = 0;
        while done_ms < ms {
            let chunk = interval_ms.min(ms - done_ms);
            let deadline = start + std::time::Duration::from_millis(done_ms + chunk);
            while std::time::Instant::now() < deadline {
                if cancel.load(std::sync::atomic::Ordering::Relaxed) {
                    self.status = Some(RunStatus::Stopped);
                    return false;
                }
                std::thread::sleep(
                    std::time::Duration::from_millis(20).min(deadline - std::time::Instant::now()),
                );
            }
            let mut s = Sample {
                seq: self.next_seq,
                start_ns: self.t_ns,
                end_ns: self.t_ns + chunk * 1_000_000,
                step,
                ..Sample::default()
            };
            s.read.cum_bytes = self.cum.0;
            s.write.cum_bytes = self.cum.1;
            observer.sample(&s);
            self.samples.push(s);
            self.next_seq += 1;
            self.t_ns += chunk * 1_000_000;
            self.timeline
                .bytes
                .extend(std::iter::repeat_n(0, (chunk / 10) as usize));
            done_ms += chunk;
        }
        true
    }

    fn add_step(&mut self, name: String, index: u32, r: RunReport, first: &mut Option<RunReport>) {
        let first_seq = self.next_seq;
        let start_ns = self.t_ns;
        let n = r.samples.len() as u64;
        for s in &r.samples {
            let shifted = self.shift(s.clone(), index);
            self.samples.push(shifted);
        }
        let hist = |b: &[shared::sample::HistBucket], d: &shared::DirSample| {
            let buckets: Vec<(usize, u64)> =
                b.iter().map(|x| (x.index as usize, x.count)).collect();
            Histogram::from_buckets(&buckets, d.lat.min_ns, d.lat.mean_ns, d.lat.max_ns)
        };
        self.histograms
            .0
            .merge(&hist(&r.histogram.read, &r.summary.read));
        self.histograms
            .1
            .merge(&hist(&r.histogram.write, &r.summary.write));
        if let Some(t) = &r.timeline {
            // Align the timeline with the step's start.
            let at = (start_ns / 10_000_000) as usize;
            if self.timeline.bytes.len() < at {
                self.timeline.bytes.resize(at, 0);
            }
            self.timeline.bytes.extend(&t.bytes);
            if self.timeline.gaps_log2_us.len() < t.gaps_log2_us.len() {
                self.timeline.gaps_log2_us.resize(t.gaps_log2_us.len(), 0);
            }
            for (a, b) in self.timeline.gaps_log2_us.iter_mut().zip(&t.gaps_log2_us) {
                *a += b;
            }
            let room =
                crate::stats::fine::SLOW_KEEP_RUN.saturating_sub(self.timeline.slow_ios.len());
            self.timeline
                .slow_ios
                .extend(t.slow_ios.iter().take(room).map(|io| {
                    let mut io = io.clone();
                    io.at_ns += start_ns;
                    io
                }));
            self.timeline.slow_ios_total += t.slow_ios_total;
            self.timeline.bucket_ms = t.bucket_ms;
        }
        self.next_seq += n;
        self.t_ns += r
            .summary
            .duration_ns
            .max(r.samples.last().map_or(0, |s| s.end_ns));
        self.cum.0 += r.summary.read.bytes;
        self.cum.1 += r.summary.write.bytes;
        if let Some(f) = r.summary.fsync_ns {
            *self.fsync_ns.get_or_insert(0) += f;
        }
        self.steps.push(StepReport {
            index: self.steps.len() as u32,
            name,
            spec: r.spec.clone(),
            summary: r.summary.clone(),
            start_ns,
            end_ns: self.t_ns,
            first_seq,
            samples: n,
        });
        self.status = Some(r.status);
        if r.error.is_some() {
            self.error = r.error.clone();
        }
        if first.is_none() {
            *first = Some(r);
        }
    }

    fn finish(self, first: Option<RunReport>, opts: &AnalysisOptions) -> RunReport {
        let mut report = first.unwrap_or_else(|| RunReport {
            protocol_version: shared::PROTOCOL_VERSION,
            status: RunStatus::Stopped,
            error: None,
            spec: WorkloadSpec::default(),
            environment: shared::Environment::default(),
            summary: RunSummary::default(),
            samples: Vec::new(),
            histogram: shared::HistogramDump::default(),
            steps: Vec::new(),
            analysis: Default::default(),
            timeline: None,
        });
        let dir = |h: &Histogram, bytes: u64| {
            shared::DirSample {
                bytes,
                ios: h.count(),
                lat: crate::stats::merge::latency_stats(h),
                cum_bytes: bytes,
                ..shared::DirSample::default()
            }
            .with_rates(self.t_ns)
        };
        report.summary = RunSummary {
            duration_ns: self.t_ns,
            read: dir(&self.histograms.0, self.cum.0),
            write: dir(&self.histograms.1, self.cum.1),
            samples: self.samples.len() as u64,
            fsync_ns: self.fsync_ns,
        };
        report.histogram.read = crate::stats::merge::dump(&self.histograms.0);
        report.histogram.write = crate::stats::merge::dump(&self.histograms.1);
        report.samples = self.samples;
        report.status = self.status.unwrap_or(RunStatus::Stopped);
        report.error = self.error;
        report.timeline = (!self.timeline.bytes.is_empty()).then_some(self.timeline);
        report.steps = self.steps;
        report.analysis = crate::analyze::analyze(&report, opts);
        report
    }
}
