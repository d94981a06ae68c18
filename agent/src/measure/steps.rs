//! Steps as one run (presets): samples continue their `seq` and time across steps, pauses
//! are sampled as idle intervals, each step gets its summary, and the run is bounded like a
//! single one (`stats::series`, `stats::fine`).

use super::{plan_on, MeasureError};
use crate::io_target::Locator;
use crate::presets::AnalysisOptions;
use crate::report;
use crate::runner::{self, Observer};
use crate::stats::fine::{FineSeries, Spill, BUCKET_NS};
use crate::stats::{Decimated, SampleSeries, Totals};
use crate::workload::Plan;
use shared::analysis::Timeline;
use shared::steps::{joined_name, run_step_ranges};
use shared::{RunReport, RunStatus, RunSummary, Sample, Step, StepReport, WorkloadSpec};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// One step of a sequence with its validated plan.
pub struct StepPlan {
    pub step: Step,
    pub plan: Plan,
}

impl StepPlan {
    /// The step as the live view's progress counts it: its pause, its length (time or
    /// bytes), the span it covers, its rounds.
    pub fn planned(&self) -> shared::preset::PlannedStep {
        let spec = self.plan.spec();
        let (lo, hi) = self.plan.span_bytes();
        shared::preset::PlannedStep {
            name: shared::steps::step_label(&self.step.name, self.step.pass),
            pause_ms: self.step.pause_before_ms,
            runtime_ms: spec.runtime_ms.filter(|_| spec.is_time_based()),
            bytes: self.plan.planned_bytes().filter(|_| !spec.is_time_based()),
            span_bytes: hi.saturating_sub(lo),
            max_rounds: self.step.until_steady,
            search: self.step.p99_target_us.is_some(),
        }
    }
}

/// The steps as the live view's progress counts them: a step whose jobs run at once is one
/// (named for its jobs, as long as the longest of them, moving what they move together).
pub fn planned_steps(plans: &[StepPlan]) -> Vec<shared::preset::PlannedStep> {
    run_step_ranges(plans, |p| p.step.with_previous)
        .into_iter()
        .filter_map(|r| {
            let mut all = plans[r].iter().map(StepPlan::planned);
            let first = all.next()?;
            Some(all.fold(first, |mut acc, next| {
                acc.name = joined_name([&acc.name, &next.name].into_iter());
                acc.runtime_ms = acc.runtime_ms.max(next.runtime_ms);
                acc.bytes = acc.bytes.zip(next.bytes).map(|(a, b)| a + b);
                acc.span_bytes = acc.span_bytes.max(next.span_bytes);
                acc
            }))
        })
        .collect()
}

/// Plans every step against the target before anything runs: a bad step fails the whole
/// sequence up front, naming the step.
pub fn plan_steps(steps: &[Step], target: &Locator) -> Result<Vec<StepPlan>, MeasureError> {
    // A file the first step creates is diskscope's for every later step too (also where the
    // filesystem cannot keep the mark).
    let mut target = target.clone();
    // A step with the spec of an earlier one (the passes of `repeat`, a preset's repeated
    // tests) gets that plan: the target is probed and a replay's trace read and laid out
    // once, and the steps share one copy of its I/Os (10,000 passes of a trace would
    // otherwise hold 10,000 copies).
    let mut planned: Vec<(&shared::WorkloadSpec, bool, Plan)> = Vec::new();
    let mut out = Vec::with_capacity(steps.len());
    for s in steps {
        let seen = planned
            .iter()
            .find(|(spec, created, _)| *spec == &s.spec && *created == target.created);
        let plan = match seen {
            Some((_, _, p)) => p.clone(),
            None => {
                let p = plan_on(&s.spec, &target).map_err(|e| match e {
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
                planned.push((&s.spec, target.created, p.clone()));
                p
            }
        };
        target.created |= plan.target().created;
        out.push(StepPlan {
            step: s.clone(),
            plan,
        });
    }
    // Steps that run at once hold their buffers together (each was checked alone).
    if let Some((names, need)) = phase_needs(&out).find(|(_, need)| *need > crate::budget::max()) {
        return Err(MeasureError::Spec(vec![shared::SpecError::new(
            "jobs",
            &names,
            format!(
                "the jobs at once need {} MiB of buffers: more than the memory budget of {} MiB",
                need >> 20,
                crate::budget::max() >> 20
            ),
        )]));
    }
    Ok(out)
}

/// Each step of the run (a step and those that run `with_previous` it): its jobs' names
/// and the buffer memory they hold together.
pub fn phase_needs(plans: &[StepPlan]) -> impl Iterator<Item = (String, u64)> + '_ {
    run_step_ranges(plans, |p| p.step.with_previous)
        .into_iter()
        .map(move |r| {
            let phase = &plans[r];
            let names = joined_name(phase.iter().map(|p| p.step.name.as_str()));
            let need = phase
                .iter()
                .map(|p| crate::budget::needed(p.plan.spec()))
                .fold(0u64, u64::saturating_add);
            (names, need)
        })
}

/// The plan of a latency search's next round: the same workload at queue depth `qd` and
/// the rate cap `rate` (IOPS), checked as any plan.
fn next_round_plan(plan: &Plan, qd: u32, rate: Option<u64>) -> Result<Plan, MeasureError> {
    let mut spec = plan.spec().clone();
    spec.iodepth = qd;
    spec.rate = rate.map(shared::Rate::Iops);
    crate::budget::check(&spec, 1).map_err(|e| MeasureError::Spec(vec![e]))?;
    Plan::new(&spec, plan.target().clone()).map_err(MeasureError::Spec)
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
    // The IOPS of the last step not paced as a share of another (an offered load's 100 %).
    let mut last_max: Option<f64> = None;
    for (index, mut phase) in phases(steps).into_iter().enumerate() {
        let index = index as u32;
        if phase.len() > 1 {
            let (pause, interval) = (
                phase[0].step.pause_before_ms,
                phase[0].plan.spec().interval_ms,
            );
            if pause > 0 && !seq.idle(pause, interval, index, &cancel, observer) {
                break;
            }
            let go_on = run_phase(phase, index, &mut seq, &cancel, observer, &mut first)?;
            if !go_on {
                return Ok(seq.finish(first, opts, observer, snapshot));
            }
            if cancel.load(std::sync::atomic::Ordering::Relaxed) {
                break;
            }
            continue;
        }
        let Some(StepPlan { step, plan }) = phase.pop() else {
            continue;
        };
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
        // An offered load: a share of the maximum the last unpaced step measured.
        let plan = match (step.rate_pct, last_max) {
            (Some(pct), Some(max)) => {
                let rate = (max * f64::from(pct) / 100.0).round().max(1.0) as u64;
                next_round_plan(&plan, plan.spec().iodepth, Some(rate))?
            }
            _ => plan,
        };
        let mut plan = Arc::new(plan);
        // IOPS of each round so far (a step repeated until steady state).
        let mut rounds: Vec<f64> = Vec::new();
        // A latency search's rounds, and the step each next round runs as.
        let mut search = Vec::new();
        let mut this = step.clone();
        loop {
            let mut outcome = runner::run(
                &plan,
                Arc::clone(&cancel),
                &mut Shifted {
                    seq: &seq,
                    step: index,
                    part_base: 0,
                    inner: observer,
                },
            )?;
            let round = step.until_steady.map(|_| rounds.len() as u32 + 1);
            let fine = outcome.fine.take();
            let report = report::build(&plan, outcome, started);
            let go_on = report.status == RunStatus::Completed;
            rounds.push(report.summary.read.iops + report.summary.write.iops);
            if let Some(limit) = step.p99_target_us {
                search.push(shared::analysis::latency::Round::of(
                    &report.spec,
                    &report.summary,
                    limit as f64,
                ));
            }
            if step.rate_pct.is_none() {
                last_max = Some(report.summary.read.iops + report.summary.write.iops);
            }
            seq.add_step(&this, round, index, report, fine, &mut first);
            if !go_on {
                return Ok(seq.finish(first, opts, observer, snapshot));
            }
            if step.p99_target_us.is_some() {
                let Some((qd, rate)) = shared::analysis::latency::next_round(&search) else {
                    break;
                };
                plan = Arc::new(next_round_plan(&plan, qd, rate)?);
                this.name = shared::analysis::latency::Round::name(qd, rate);
                continue;
            }
            match step.until_steady {
                Some(max) if (rounds.len() as u32) < max => {
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
    Ok(seq.finish(first, opts, observer, snapshot))
}

/// The steps in phases: a step and those after it that run `with_previous`.
fn phases(steps: Vec<StepPlan>) -> Vec<Vec<StepPlan>> {
    let ranges = run_step_ranges(&steps, |p| p.step.with_previous);
    let mut all = steps.into_iter();
    ranges
        .iter()
        .map(|r| all.by_ref().take(r.len()).collect())
        .collect()
}

/// Runs a phase's steps at once (a fio stonewall group of several jobs) as one step of the
/// run, named for its jobs, a part each: the parts' summaries and histograms go to the
/// run's `targets` with the step's index, their samples' parts are numbered among them.
/// Returns whether the run goes on.
fn run_phase(
    phase: Vec<StepPlan>,
    index: u32,
    seq: &mut Sequence,
    cancel: &Arc<AtomicBool>,
    observer: &mut dyn Observer,
    first: &mut Option<RunReport>,
) -> Result<bool, MeasureError> {
    let mut step = phase[0].step.clone();
    step.name = joined_name(phase.iter().map(|s| s.step.name.as_str()));
    let parts = phase
        .into_iter()
        .map(|s| super::Part {
            job: Some(s.step.name),
            plan: s.plan,
        })
        .collect();
    let mut shifted = Shifted {
        seq,
        step: index,
        part_base: seq.parts.len() as u32,
        inner: observer,
    };
    let (mut report, timeline) =
        super::multi::run_multi_timeline(parts, Arc::clone(cancel), &mut shifted)?;
    let go_on = report.status == RunStatus::Completed;
    report.timeline = timeline;
    let at = seq.steps.len() as u32;
    let part_base = seq.parts.len() as u32;
    seq.parts.extend(
        std::mem::take(&mut report.targets)
            .into_iter()
            .map(|mut p| {
                p.step = Some(at);
                p
            }),
    );
    for s in &mut report.samples {
        for p in &mut s.parts {
            p.target += part_base;
        }
    }
    seq.add_step(&step, None, index, report, None, first);
    Ok(go_on)
}

/// Passes a step's samples on with the run's `seq`, time and byte counts (and, in a step
/// of jobs at once, its parts numbered among the run's).
struct Shifted<'a> {
    seq: &'a Sequence,
    step: u32,
    part_base: u32,
    inner: &'a mut dyn Observer,
}

impl Observer for Shifted<'_> {
    fn layout(&mut self, bytes: u64) {
        self.inner.layout(bytes);
    }
    fn sample(&mut self, sample: &Sample) {
        let mut s = self.seq.shift(sample.clone(), self.step);
        for p in &mut s.parts {
            p.target += self.part_base;
        }
        self.inner.sample(&s);
    }
    fn start_at(&self) -> Option<std::time::SystemTime> {
        self.inner.start_at()
    }
    fn request(&mut self, r: &shared::probe::Request) {
        self.inner.request(r);
    }
}

/// The run being assembled from its steps, bounded like a single run (`stats::series`,
/// `stats::fine`): merged samples and buckets past the caps, the exact buckets on disk.
struct Sequence {
    samples: SampleSeries,
    steps: Vec<StepReport>,
    totals: Totals,
    /// Gap histogram and slow I/Os; bytes live in `fine`, readings in `temps`.
    timeline: Timeline,
    fine: FineSeries,
    temps: Decimated<shared::analysis::TempPoint>,
    /// Every 10 ms bucket of the run (steps' spills and pauses), while all could be kept.
    spill: Option<Spill>,
    /// Where the next step starts: time and seq (its bytes start at the totals').
    t_ns: u64,
    next_seq: u64,
    status: Option<RunStatus>,
    error: Option<shared::RunError>,
    fsync_ns: Option<u64>,
    /// Summed over the steps.
    io_path: Option<shared::IoPath>,
    /// Warnings of the steps after the first, naming the step.
    warnings: Vec<String>,
    /// The verified steps' read-backs, added up (bad blocks name their step).
    verify: Option<shared::analysis::verify::Verify>,
    /// The error scans' maps, by step.
    scan: Vec<shared::analysis::scan::ScanMap>,
    replay: Vec<shared::analysis::replay::Replay>,
    /// Latency searches, by step.
    qd_search: Vec<shared::qd_search::QdSearch>,
    /// The parts of the steps whose jobs ran at once, each naming its step.
    parts: Vec<shared::TargetPart>,
}

impl Default for Sequence {
    fn default() -> Self {
        Sequence {
            samples: SampleSeries::default(),
            steps: Vec::new(),
            totals: Totals::default(),
            timeline: Timeline::default(),
            fine: FineSeries::default(),
            temps: Decimated::default(),
            spill: Spill::new(),
            t_ns: 0,
            next_seq: 0,
            status: None,
            error: None,
            fsync_ns: None,
            io_path: None,
            warnings: Vec::new(),
            verify: None,
            scan: Vec::new(),
            replay: Vec::new(),
            qd_search: Vec::new(),
            parts: Vec::new(),
        }
    }
}

impl Sequence {
    fn shift(&self, mut s: Sample, step: u32) -> Sample {
        s.seq += self.next_seq;
        s.start_ns += self.t_ns;
        s.end_ns += self.t_ns;
        s.read.cum_bytes += self.totals.read_bytes;
        s.write.cum_bytes += self.totals.write_bytes;
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
                pause: true,
                ..Sample::default()
            };
            s.read.cum_bytes = self.totals.read_bytes;
            s.write.cum_bytes = self.totals.write_bytes;
            observer.sample(&s);
            self.samples.push(s);
            self.next_seq += 1;
            self.t_ns += chunk * 1_000_000;
            let zeros = chunk * 1_000_000 / BUCKET_NS;
            self.fine.extend_to(self.fine.len_ns() + zeros * BUCKET_NS);
            if let Some(sp) = &mut self.spill {
                if sp.pad_to(sp.len() + zeros).is_err() {
                    self.spill = None;
                }
            }
            done_ms += chunk;
        }
        true
    }

    fn add_step(
        &mut self,
        step: &Step,
        round: Option<u32>,
        index: u32,
        r: RunReport,
        fine: Option<Spill>,
        first: &mut Option<RunReport>,
    ) {
        let name = match round {
            Some(r) => format!("{} {r}", step.name),
            None => step.name.clone(),
        };
        let first_seq = self.next_seq;
        let start_ns = self.t_ns;
        // Every interval counts, also where the step's kept samples merged some.
        let n = r.summary.samples.max(r.samples.len() as u64);
        for s in &r.samples {
            let shifted = self.shift(s.clone(), index);
            self.samples.push(shifted);
        }
        if let Some(t) = &r.timeline {
            // Align the timeline with the step's start (after what is there already).
            let at = (start_ns / BUCKET_NS) * BUCKET_NS;
            let at = at.max(self.fine.len_ns());
            self.spill = match (self.spill.take(), fine) {
                (Some(mut sp), Some(mut f)) => sp
                    .pad_to(at / BUCKET_NS)
                    .and_then(|_| sp.append(&mut f))
                    .ok()
                    .map(|_| sp),
                _ => None,
            };
            self.fine
                .add_series(at, u64::from(t.bucket_ms) * 1_000_000, &t.bytes);
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
            let at_ms = start_ns / 1_000_000;
            for p in &t.temps {
                self.temps.push(shared::analysis::TempPoint {
                    at_ms: p.at_ms + at_ms,
                    c: p.c,
                });
            }
        }
        self.next_seq += n;
        self.t_ns += r
            .summary
            .duration_ns
            .max(r.samples.last().map_or(0, |s| s.end_ns));
        self.totals.add(&r);
        if let Some(f) = r.summary.fsync_ns {
            *self.fsync_ns.get_or_insert(0) += f;
        }
        let io_path = r.environment.io_path.clone();
        if let Some(p) = &io_path {
            self.io_path.get_or_insert_with(Default::default).add(p);
        }
        for w in &r.environment.warnings {
            // The first step's warnings are the run's already; later steps say which.
            if first.is_some() {
                let w = format!("step '{name}': {w}");
                if !self.warnings.contains(&w) {
                    self.warnings.push(w);
                }
            }
        }
        let verify = self.add_verify(&r);
        self.add_scan(&r);
        self.replay.extend(r.analysis.replay.iter().cloned());
        self.add_searches(&r);
        self.steps.push(StepReport {
            verify,
            io_path,
            index: self.steps.len() as u32,
            name,
            spec: r.spec.clone(),
            summary: r.summary.clone(),
            start_ns,
            end_ns: self.t_ns,
            first_seq,
            samples: n,
            round,
            pass: step.pass,
            histogram: Some(r.histogram.clone()),
            files_done: r.analysis.files_done,
        });
        self.status = Some(r.status);
        if r.error.is_some() {
            self.error = r.error.clone();
        }
        if first.is_none() {
            // The run's report is built on the first step's (spec, environment); its samples
            // and timeline are the sequence's, so the step's own copies go now rather than
            // sit beside them until the run ends.
            *first = Some(RunReport {
                samples: Vec::new(),
                timeline: None,
                ..r
            });
        }
    }

    /// The step's latency searches, as this step's.
    fn add_searches(&mut self, r: &RunReport) {
        let at = self.steps.len() as u32;
        self.qd_search
            .extend(r.analysis.qd_search.iter().cloned().map(|mut q| {
                q.step = at;
                q
            }));
    }

    /// The step's error-scan map, naming the step.
    fn add_scan(&mut self, r: &RunReport) {
        let step = self.steps.len() as u32;
        self.scan
            .extend(r.analysis.scan.iter().cloned().map(|mut m| {
                m.step = Some(step);
                m
            }));
    }

    /// The step's read-back, its bad blocks naming the step, added to the run's.
    fn add_verify(&mut self, r: &RunReport) -> Option<shared::analysis::verify::Verify> {
        let mut v = r.analysis.verify.clone()?;
        for b in &mut v.first_bad {
            b.step = Some(self.steps.len() as u32);
        }
        let run = self.verify.get_or_insert_with(Default::default);
        // Steps run one after another: their read-back times add up.
        let seconds = run.seconds + v.seconds;
        run.add(&v);
        run.seconds = seconds;
        Some(v)
    }

    fn finish(
        mut self,
        first: Option<RunReport>,
        opts: &AnalysisOptions,
        observer: &mut dyn Observer,
        snapshot: Option<crate::devices::Snapshot>,
    ) -> RunReport {
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
            targets: Vec::new(),
        });
        // Every interval of every step and pause (the kept samples may be merged ones).
        let n = self.next_seq;
        self.totals.apply(&mut report, self.t_ns, n, self.fsync_ns);
        report.samples = self.samples.into_vec();
        report.status = self.status.unwrap_or(RunStatus::Stopped);
        report.error = self.error;
        self.timeline.bucket_ms = (self.fine.bucket_ns() / 1_000_000) as u32;
        self.timeline.bytes = self.fine.into_bytes();
        self.timeline.temps = self.temps.into_vec();
        report.timeline = (!self.timeline.bytes.is_empty()).then_some(self.timeline);
        report.steps = self.steps;
        report.environment.io_path = self.io_path;
        report.environment.io_workers_seen = report
            .environment
            .io_path
            .as_ref()
            .map_or(0, |p| p.worker_threads);
        report.environment.warnings.extend(self.warnings);
        report.analysis.verify = self.verify;
        report.analysis.scan = self.scan;
        report.analysis.replay = self.replay;
        report.analysis.qd_search = self.qd_search;
        report.targets = self.parts;
        // The device before and after, and the link the analyses hold the figures against.
        if let Some(snap) = snapshot {
            snap.finish(&mut report.environment, report.summary.write.bytes);
        }
        crate::analyze::finish(&mut report, opts, self.spill.as_mut());
        if let Some(sp) = self.spill.as_mut() {
            if sp.flush().is_ok() {
                observer.exact_timeline(sp);
            }
        }
        report
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_replay_steps_share_one_copy_of_the_trace() {
        let dir = tempfile::tempdir().expect("tempdir");
        let f = dir.path().join("t.bin");
        std::fs::write(&f, vec![1u8; 8 << 20]).expect("file");
        let spec = shared::WorkloadSpec {
            replay: Some(shared::replay::ReplaySpec {
                timing: Some(shared::replay::Timing::Afap),
                ..shared::replay::ReplaySpec::new("app-files")
            }),
            ..shared::WorkloadSpec::default()
        };
        let step = Step {
            name: "app-files".into(),
            spec,
            pause_before_ms: 0,
            until_steady: None,
            pass: None,
            p99_target_us: None,
            rate_pct: None,
            with_previous: false,
        };
        let steps = shared::steps::repeat_steps(vec![step], 50, 0);
        let plans = plan_steps(&steps, &Locator::path(&f)).expect("plans");
        let first = plans[0].plan.replay().expect("replay") as *const _;
        assert!(plans
            .iter()
            .all(|p| std::ptr::eq(p.plan.replay().expect("replay"), first)));
    }
    use crate::runner::Observer;

    struct Quiet;
    impl Observer for Quiet {
        fn sample(&mut self, _: &Sample) {}
    }

    /// A step whose kept samples were merged (a long run) still counts every interval: in
    /// the run's summary, its step and the next step's first `seq`.
    #[test]
    fn a_long_steps_merged_samples_still_count_every_interval() {
        let mut seq = Sequence::default();
        let mut first = None;
        for (index, intervals) in [(0u32, 5000u64), (1, 30)] {
            let mut series = SampleSeries::new(64);
            for i in 0..intervals {
                let mut s = Sample {
                    seq: i,
                    start_ns: i * 100_000_000,
                    end_ns: (i + 1) * 100_000_000,
                    ..Sample::default()
                };
                s.write.bytes = 1 << 20;
                s.write.cum_bytes = (i + 1) << 20;
                series.push(s);
            }
            let mut r = RunReport {
                protocol_version: shared::PROTOCOL_VERSION,
                status: RunStatus::Completed,
                error: None,
                spec: WorkloadSpec::default(),
                environment: Default::default(),
                summary: RunSummary {
                    duration_ns: intervals * 100_000_000,
                    samples: intervals,
                    ..Default::default()
                },
                samples: series.into_vec(),
                histogram: Default::default(),
                steps: Vec::new(),
                analysis: Default::default(),
                timeline: None,
                targets: Vec::new(),
            };
            r.summary.write.bytes = intervals << 20;
            assert!(r.samples.len() < intervals as usize || intervals < 64);
            let step = Step {
                name: format!("step {index}"),
                spec: WorkloadSpec::default(),
                pause_before_ms: 0,
                until_steady: None,
                pass: None,
                p99_target_us: None,
                rate_pct: None,
                with_previous: false,
            };
            seq.add_step(&step, None, index, r, None, &mut first);
        }
        let report = seq.finish(first, &AnalysisOptions::default(), &mut Quiet, None);
        assert_eq!(report.summary.samples, 5030);
        assert_eq!(report.steps[0].samples, 5000);
        assert_eq!(report.steps[1].first_seq, 5000);
        assert_eq!(report.summary.write.bytes, 5030 << 20);
        assert!(report.samples.len() <= crate::stats::series::SAMPLE_CAP);
    }
}
