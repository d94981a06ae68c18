//! The runner owns one run: lays out the target when reads need it, starts one thread per
//! job, merges their interval statistics into samples (handed to the caller as they
//! complete), watches for io_uring worker threads, and returns everything measured, also
//! when the run was stopped or failed part-way.

use crate::engine::job::{job_thread, JobMsg, RunShared, StartGate};
use crate::io_target::{self, TargetError, TargetKind};
use crate::stats::fine::Spill;
use crate::stats::{Decimated, IntervalStats, Merger, SampleSeries};
use crate::stop_rules::Verdict;
use crate::temperature::TempSource;
use crate::workload::Plan;
use shared::analysis::verify::Verify;
use shared::{HistogramDump, RunError, RunStatus, RunSummary, Sample};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

/// Everything a run measured and how it ran.
#[derive(Debug)]
pub struct RunOutcome {
    pub status: RunStatus,
    pub error: Option<RunError>,
    /// The samples, bounded ([`SampleSeries`]: every one on runs of up to
    /// [`crate::stats::series::SAMPLE_CAP`] intervals, merged neighbours past that).
    pub samples: Vec<Sample>,
    pub summary: RunSummary,
    pub histogram: HistogramDump,
    /// Bytes per 10 ms, completion gaps, slow I/Os.
    pub timeline: shared::analysis::Timeline,
    /// The exact 10 ms buckets on disk, when the timeline above had to merge them.
    pub fine: Option<Spill>,
    /// The backend that ran, and why it differs from the requested one.
    pub backend: String,
    pub backend_note: Option<String>,
    pub ring_features: Vec<String>,
    /// Buffers, block-layer splits and worker threads, measured over the run.
    pub io_path: shared::IoPath,
    pub laid_out_bytes: u64,
    /// What the read-back of a `verify` run found (all jobs).
    pub verify: Option<Verify>,
    /// The error scan's map (all jobs' cells added up).
    pub scan: Option<shared::analysis::scan::ScanMap>,
    /// A replay's figures (the trace's and what the replay measured).
    pub replay: Option<shared::analysis::replay::Replay>,
    /// A latency search: the depth each job ended at, and the final windows' completions.
    pub search: Option<(Vec<u32>, Option<IntervalStats>)>,
    /// When the I/O began (ms since the Unix epoch), for a run told when to start
    /// ([`Observer::start_at`]).
    pub started_at_ms: Option<u64>,
    /// A files phase's first-done and last-done rates.
    pub files_done: Option<shared::files::Done>,
    /// A probe's requests summed up.
    pub probe: Option<shared::probe::ProbeSummary>,
    /// A flush check's writer: its witness session and what it recorded.
    pub flushcheck: Option<shared::flushcheck::Written>,
}

/// Why a run could not start. Nothing was measured.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Target(#[from] TargetError),
    #[error("{0}")]
    Setup(String),
    #[error("cannot start a job thread: {0}")]
    Thread(std::io::Error),
}

/// Receives progress while a run goes on.
pub trait Observer {
    /// About to lay out `bytes` of real data before the run (file targets with holes).
    fn layout(&mut self, _bytes: u64) {}
    /// One merged sample, as soon as every job has reported its interval.
    fn sample(&mut self, sample: &Sample);
    /// Every 10 ms bucket of the run, once at its end (after the analyses): for storage and
    /// export. Not called when no temporary file could hold them.
    fn exact_timeline(&mut self, _buckets: &mut Spill) {}
    /// The wall-clock time the run's I/O is to begin (a group's shared start): the start
    /// gate opens then, after set-up, not before.
    fn start_at(&self) -> Option<SystemTime> {
        None
    }
    /// One request of a probe, as it completed.
    fn request(&mut self, _r: &shared::probe::Request) {}
}

/// Sleeps until `at` (if given), seeing `cancel` within 50 ms. Returns when it woke, in ms
/// since the Unix epoch, for a run that waited.
fn wait_for_start(at: Option<SystemTime>, cancel: &AtomicBool) -> Option<u64> {
    let at = at?;
    while !cancel.load(Ordering::Relaxed) {
        match at.duration_since(SystemTime::now()) {
            Ok(left) if !left.is_zero() => std::thread::sleep(left.min(Duration::from_millis(50))),
            _ => break,
        }
    }
    Some(crate::env::unix_ms())
}

/// Runs `plan` to the end (or until `cancel` is set, or an error).
pub fn run(
    plan: &Arc<Plan>,
    cancel: Arc<AtomicBool>,
    observer: &mut dyn Observer,
) -> Result<RunOutcome, StartError> {
    let spec = plan.spec();
    let target = plan.target();
    // The claim is held until the run ends.
    let Prepared {
        laid_out_bytes,
        claim,
        files_note,
    } = prepare(plan, observer)?;
    let n = plan.jobs().len();
    let shared = Arc::new(RunShared {
        gate: StartGate::default(),
        cancel,
        abort: AtomicBool::new(false),
        ramp_ns: spec.ramp_ms * 1_000_000,
        interval_ns: spec.interval_ms * 1_000_000,
        runtime_ns: spec.runtime_ms.map(|ms| ms * 1_000_000),
        first_done_ns: std::sync::atomic::AtomicU64::new(u64::MAX),
        backlog: Default::default(),
    });
    let (tx, rx) = mpsc::channel();
    let mut handles = Vec::with_capacity(n);
    for j in 0..n {
        let (plan, job_shared, tx) = (Arc::clone(plan), Arc::clone(&shared), tx.clone());
        let h = std::thread::Builder::new()
            .name(format!("ds-job-{j}"))
            .spawn(move || {
                let s = plan.spec();
                match (&s.files, &s.probe, &s.flushcheck) {
                    (Some(_), _, _) => crate::files::job_thread(&plan, j, &job_shared, &tx),
                    (None, Some(_), _) => crate::probe::job_thread(&plan, j, &job_shared, &tx),
                    (None, None, Some(_)) => {
                        crate::flushcheck::job_thread(&plan, j, &job_shared, &tx)
                    }
                    (None, None, None) => job_thread(&plan, j, &job_shared, &tx),
                }
            });
        match h {
            Ok(h) => handles.push(h),
            Err(e) => {
                shared.gate.open(None);
                handles.into_iter().for_each(|h| drop(h.join()));
                return Err(StartError::Thread(e));
            }
        }
    }
    drop(tx);
    let mut out = Collector::new(n);
    // A verifying job sends its read-back's result after `Done`.
    let verifying = plan.jobs().iter().filter(|j| j.verify).count();
    out.running += verifying;
    if verifying > 0 {
        out.verify = Some(Verify::default());
    }
    out.temp = TempSource::for_target(target);
    out.rules = crate::stop_rules::StopRules::of(spec);
    let mut setup_error = None;
    for _ in 0..n {
        match rx.recv() {
            Ok(JobMsg::Ready { result: Ok(s), .. }) => {
                out.setup(s.backend, s.note, s.features, s.buffers)
            }
            Ok(JobMsg::Ready { result: Err(e), .. }) => {
                setup_error.get_or_insert(e);
            }
            Ok(_) | Err(_) => {
                setup_error.get_or_insert_with(|| "a job ended during set-up".to_string());
            }
        }
    }
    if let Some(e) = setup_error {
        shared.gate.open(None);
        handles.into_iter().for_each(|h| drop(h.join()));
        return Err(StartError::Setup(e));
    }
    let started_at_ms = wait_for_start(observer.start_at(), &shared.cancel);
    let mut probe = crate::iopath::Probe::start(target);
    let epoch = Instant::now();
    shared.gate.open(Some(epoch));
    let ramp = Duration::from_millis(spec.ramp_ms);
    let mut next_temp = epoch + ramp;
    let tick = Duration::from_millis(spec.interval_ms.min(100));
    let mut next_probe = Instant::now();
    while out.running > 0 {
        match rx.recv_timeout(tick) {
            Ok(msg) => out.handle(msg, &shared, observer),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
        let now = Instant::now();
        if now >= next_temp {
            out.read_temperature((now - epoch).saturating_sub(ramp));
            next_temp = now + TEMP_EVERY;
        }
        if now >= next_probe {
            probe.poll();
            next_probe = Instant::now() + Duration::from_millis(spec.interval_ms);
        }
    }
    handles.into_iter().for_each(|h| drop(h.join()));
    drop(claim);
    let cancelled = shared.cancel.load(Ordering::Relaxed);
    let mut outcome = out.finish(cancelled, laid_out_bytes, probe);
    outcome.started_at_ms = started_at_ms;
    if spec.files.is_some() {
        let ended_early = cancelled || outcome.error.is_some();
        let notes = [files_note, crate::files::finish(plan, ended_early)];
        let notes: Vec<String> = notes.into_iter().flatten().collect();
        if !notes.is_empty() {
            outcome.backend_note = Some(notes.join("; "));
        }
    }
    Ok(outcome)
}

/// What a run set up before its threads: the bytes laid out for reads, an exclusive claim
/// on a block device being written, the files workload's notes.
struct Prepared {
    laid_out_bytes: u64,
    claim: Option<std::fs::File>,
    files_note: Option<String>,
}

/// Opens the target once (surfacing permission and O_DIRECT errors before any thread
/// starts), claims a block device being written, lays out a file's holes before reads; the
/// files workload instead makes (or finds) its work directory.
fn prepare(plan: &Plan, observer: &mut dyn Observer) -> Result<Prepared, StartError> {
    let (spec, target) = (plan.spec(), plan.target());
    let mut out = Prepared {
        laid_out_bytes: 0,
        claim: None,
        files_note: None,
    };
    if spec.files.is_some() {
        out.files_note = crate::files::prepare(plan).map_err(StartError::Setup)?;
        return Ok(out);
    }
    if target.kind == TargetKind::None {
        return Ok(out);
    }
    drop(target.open_with(plan.writes(), spec.direct, spec.write_sync)?);
    if plan.writes() {
        out.claim = target.claim()?;
    }
    if plan.reads() && target.kind == TargetKind::File {
        let (start, end) = plan.span_bytes();
        out.laid_out_bytes = io_target::ensure_written(
            target,
            start,
            end,
            spec.direct,
            plan.writes(),
            &mut |bytes| observer.layout(bytes),
        )?;
    }
    Ok(out)
}

/// How often the target's temperature goes into the fine timeline.
const TEMP_EVERY: Duration = Duration::from_millis(100);

/// The runner's side of the merge.
struct Collector {
    merger: Merger,
    samples: SampleSeries,
    running: usize,
    error: Option<RunError>,
    fsync_ns: Option<u64>,
    backend: String,
    backend_note: Option<String>,
    ring_features: Vec<String>,
    /// Bytes of buffers mapped by the jobs, and of them in huge pages.
    buffers: (u64, u64),
    /// Read into every sample when the target reports a temperature.
    temp: Option<TempSource>,
    /// Read every [`TEMP_EVERY`], for the timeline.
    temps: Decimated<shared::analysis::TempPoint>,
    verify: Option<Verify>,
    scan: Option<shared::analysis::scan::ScanMap>,
    replay: Option<shared::analysis::replay::Replay>,
    /// A latency search's depths (by job) and final windows' completions, merged.
    search: Option<(Vec<u32>, Option<IntervalStats>)>,
    /// The spec's rate floor and steady-state rule, judging each merged interval.
    rules: crate::stop_rules::StopRules,
    /// The files workload's operations and bytes of all jobs when the first job ended, and
    /// when that was.
    first_done: Option<(u64, u64)>,
    first_end_ns: u64,
    /// A probe's requests, summed.
    probe: Option<shared::probe::Tally>,
    /// A flush check's writer's session.
    flushcheck: Option<shared::flushcheck::Written>,
}

impl Collector {
    fn new(n: usize) -> Self {
        Collector {
            merger: Merger::new(n),
            samples: SampleSeries::default(),
            running: n,
            error: None,
            fsync_ns: None,
            backend: String::new(),
            backend_note: None,
            ring_features: Vec::new(),
            buffers: (0, 0),
            temp: None,
            temps: Decimated::default(),
            verify: None,
            scan: None,
            replay: None,
            search: None,
            rules: Default::default(),
            first_done: None,
            first_end_ns: u64::MAX,
            probe: None,
            flushcheck: None,
        }
    }

    /// A files phase's rate until the first job ended and until the last one did.
    fn files_done(&self, s: &shared::RunSummary) -> Option<shared::files::Done> {
        let (ops, bytes) = self.first_done?;
        let figure = shared::group::Figure::over;
        Some(shared::files::Done {
            first: figure(self.first_end_ns, ops, bytes),
            last: figure(
                s.duration_ns,
                s.read.ios + s.write.ios,
                s.read.bytes + s.write.bytes,
            ),
        })
    }

    fn setup(
        &mut self,
        backend: &str,
        note: Option<String>,
        features: Vec<String>,
        buffers: (u64, u64),
    ) {
        self.buffers.0 += buffers.0;
        self.buffers.1 += buffers.1;
        self.backend = backend.to_string();
        if note.is_some() {
            self.backend_note = note;
        }
        if self.ring_features.is_empty() {
            self.ring_features = features;
        }
    }

    fn read_temperature(&mut self, since_start: Duration) {
        if let Some(c) = self.temp.as_ref().and_then(TempSource::read) {
            self.temps.push(shared::analysis::TempPoint {
                at_ms: since_start.as_millis() as u64,
                c,
            });
        }
    }

    fn handle(&mut self, msg: JobMsg, shared: &RunShared, observer: &mut dyn Observer) {
        match msg {
            JobMsg::Searched { job, depth, tally } => {
                let (depths, merged) = self.search.get_or_insert_with(Default::default);
                if depths.len() <= job {
                    depths.resize(job + 1, 0);
                }
                depths[job] = depth;
                if let Some(t) = tally {
                    match merged {
                        Some(m) => {
                            m.read.merge(&t.read);
                            m.write.merge(&t.write);
                            m.start_ns = m.start_ns.min(t.start_ns);
                            m.end_ns = m.end_ns.max(t.end_ns);
                        }
                        None => *merged = Some(t),
                    }
                }
            }
            JobMsg::Interval { job, stats } => self.merger.add(job, stats),
            JobMsg::Done {
                job,
                end_ns,
                error,
                fsync_ns,
            } => {
                self.merger.finish(job, end_ns);
                self.first_end_ns = self.first_end_ns.min(end_ns);
                self.running -= 1;
                if let Some(f) = fsync_ns {
                    self.fsync_ns = Some(self.fsync_ns.unwrap_or(0).max(f));
                }
                if let Some(e) = error {
                    shared.abort.store(true, Ordering::Relaxed);
                    self.error.get_or_insert(e);
                }
            }
            JobMsg::Verified { verify, error, .. } => {
                self.running -= 1;
                if let Some(v) = &mut self.verify {
                    v.add(&verify);
                }
                if let Some(e) = error {
                    shared.abort.store(true, Ordering::Relaxed);
                    self.error.get_or_insert(e);
                }
            }
            JobMsg::Mapped { map, .. } => match &mut self.scan {
                Some(m) => m.add(&map),
                None => self.scan = Some(map),
            },
            JobMsg::Replayed { replay, .. } => self.replay = Some(*replay),
            JobMsg::Witnessed(w) => self.flushcheck = Some(*w),
            JobMsg::FirstDone { ops, bytes, .. } => {
                let d = self.first_done.get_or_insert((0, 0));
                d.0 += ops;
                d.1 += bytes;
            }
            JobMsg::Request(r) => {
                shared.backlog.fetch_sub(1, Ordering::Relaxed);
                self.probe.get_or_insert_with(Default::default).add(&r);
                observer.request(&r);
            }
            JobMsg::Ready { .. } => {}
        }
        for mut s in self.merger.take_ready() {
            s.temp_c = self.temp.as_ref().and_then(TempSource::read);
            match self.rules.judge(&s) {
                Verdict::Go => {}
                // Ends the jobs as time being up does: no error, not a user's stop.
                Verdict::Steady => shared.abort.store(true, Ordering::Relaxed),
                Verdict::Fail(e) => {
                    if self.error.is_none() {
                        shared.abort.store(true, Ordering::Relaxed);
                        self.error = Some(e);
                    }
                }
            }
            observer.sample(&s);
            self.samples.push(s);
        }
    }

    fn finish(
        mut self,
        cancelled: bool,
        laid_out_bytes: u64,
        probe: crate::iopath::Probe,
    ) -> RunOutcome {
        let status = match (&self.error, cancelled) {
            (Some(_), _) => RunStatus::Failed,
            (None, true) => RunStatus::Stopped,
            (None, false) => RunStatus::Completed,
        };
        let summary = self.merger.summary(self.fsync_ns);
        let files_done = self.files_done(&summary);
        let histogram = self.merger.histogram();
        let fine = self.merger.take_spill();
        RunOutcome {
            status,
            io_path: probe.finish(&summary, self.buffers),
            summary,
            histogram,
            timeline: shared::analysis::Timeline {
                temps: self.temps.into_vec(),
                ..self.merger.into_timeline()
            },
            fine,
            error: self.error,
            samples: self.samples.into_vec(),
            backend: self.backend,
            backend_note: self.backend_note,
            ring_features: self.ring_features,
            laid_out_bytes,
            verify: self.verify,
            scan: self.scan,
            replay: self.replay,
            files_done,
            probe: self.probe.map(|t| t.summary()),
            flushcheck: self.flushcheck,
            search: self.search,
            started_at_ms: None,
        }
    }
}
