//! The run manager: at most one run per target, each on its own thread; every sample is
//! written to the store (one transaction per interval) and then broadcast to subscribers.
//!
//! The broadcast channel is bounded and never blocks the sender: a subscriber that falls
//! behind misses messages (it is told to resync and catches up from the store), while the
//! engine and the other subscribers go on. Because a sample is stored before it is
//! broadcast, the store always holds everything a subscriber may have missed.

use super::access::{AccessError, AccessPolicy};
use crate::io_target::Locator;
use crate::measure::{self, MeasureError, StepPlan};
use crate::presets::{self, AnalysisOptions, PresetError};
use crate::runner::Observer;
use crate::store::{NewRun, RunEnd, RunId, Store, StoreError};
use shared::api::{CreateRun, RunEvent};
use shared::{RunError, RunStatus, Sample, Step};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use tokio::sync::broadcast;

/// Most targets one run measures at once (each has its own jobs and threads).
const MAX_TARGETS: usize = measure::MAX_PARTS;

/// Messages fanned out to subscribers.
#[derive(Debug, Clone)]
pub enum Event {
    Sample {
        run_id: RunId,
        sample: Arc<Sample>,
    },
    Lifecycle {
        run_id: RunId,
        event: RunEvent,
        error: Option<RunError>,
    },
}

/// Capacity of the fan-out channel; a subscriber this far behind must resync.
/// `DISKSCOPE_EVENT_CAPACITY` overrides it (tests use a tiny one to force resyncs).
const EVENT_CAPACITY: usize = 1024;

fn event_capacity() -> usize {
    super::env_usize("DISKSCOPE_EVENT_CAPACITY", EVENT_CAPACITY)
}

#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    #[error(transparent)]
    Measure(#[from] MeasureError),
    #[error(transparent)]
    Access(#[from] AccessError),
    #[error("target {target} is busy with run {run_id}")]
    Busy { target: String, run_id: RunId },
    #[error("give one of \"spec\", \"preset\" or \"fio_job\", not {0}")]
    SpecOrPreset(&'static str),
    #[error("fio_job: {0}")]
    FioJob(#[from] crate::fiojob::JobFileError),
    #[error("preset {0} runs on one target: drop \"also\" (several targets take a \"spec\")")]
    PresetWithAlso(String),
    #[error("a fio_job runs on one target: drop \"also\"")]
    JobWithAlso,
    #[error("preset {0} has no step this target can run")]
    NoSteps(String),
    #[error("{0}")]
    BadRepeat(String),
    #[error("{0}")]
    Witness(String),
    #[error(transparent)]
    Preset(#[from] PresetError),
    #[error("run {0} not found")]
    NotFound(RunId),
    #[error("run {0} is not running")]
    NotRunning(RunId),
    #[error("run {0} is still running: stop it first")]
    StillRunning(RunId),
    #[error("the agent is shutting down")]
    ShuttingDown,
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(
        "writing to {0} destroys the data on it: repeat the device path in \"confirm\" to go ahead"
    )]
    ConfirmDevice(String),
    #[error("this run needs {need} MiB of memory and the runs going hold {in_use} MiB of the agent's {max} MiB budget (--max-memory): wait for them or lower jobs, iodepth or bs")]
    Memory { need: u64, in_use: u64, max: u64 },
    #[error("{0} targets in one run: at most {MAX_TARGETS} (\"also\" lists the further ones)")]
    TooManyTargets(usize),
    #[error("target {0} is named twice: \"also\" lists further targets, each once")]
    Repeated(String),
    #[error("cannot start the run thread: {0}")]
    Thread(std::io::Error),
    #[error("start_at_ms = {0}: at most a minute ahead of this agent's clock ({1})")]
    StartAt(u64, u64),
    #[error(transparent)]
    Group(#[from] crate::group::GroupError),
    #[error("\"agents\" makes a group run: send it to POST /api/v1/groups")]
    GroupHere,
}

#[derive(Debug)]
struct Active {
    id: RunId,
    target: PathBuf,
    /// Further targets of a multi-target run.
    others: Vec<PathBuf>,
    cancel: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    /// Bytes the run pins (its largest step, on all its targets): runs at once share the
    /// memory budget.
    memory: u64,
    /// The preset it runs, if any (`/metrics`' `diskscope_run_active`).
    preset: Option<String>,
    /// Its I/O is over and its end is being recorded: it holds no target any more.
    ended: bool,
}

impl Active {
    /// The run measures `target` (its first target or a further one).
    fn holds(&self, target: &std::path::Path) -> bool {
        !self.ended && (self.target == target || self.others.iter().any(|o| o == target))
    }
}

#[derive(Debug)]
pub struct Manager {
    store: Arc<Store>,
    access: AccessPolicy,
    active: Mutex<HashMap<RunId, Active>>,
    events: broadcast::Sender<Event>,
    shutting_down: AtomicBool,
    /// Ends the database could not record (its file system failed under it).
    ended: Mutex<HashMap<RunId, (RunStatus, RunError)>>,
    /// Bytes, I/Os and latencies per target since the agent started (`/metrics`).
    counters: super::counters::Counters,
}

impl Manager {
    pub fn new(store: Arc<Store>, access: AccessPolicy) -> Arc<Manager> {
        let (events, _) = broadcast::channel(event_capacity());
        Arc::new(Manager {
            store,
            access,
            active: Mutex::new(HashMap::new()),
            events,
            shutting_down: AtomicBool::new(false),
            ended: Mutex::new(HashMap::new()),
            counters: Default::default(),
        })
    }

    pub fn counters(&self) -> &super::counters::Counters {
        &self.counters
    }

    /// The active runs: target and preset of each.
    pub fn active_runs(&self) -> Vec<(std::path::PathBuf, Option<String>)> {
        self.active()
            .values()
            .map(|a| (a.target.clone(), a.preset.clone()))
            .collect()
    }

    fn active(&self) -> MutexGuard<'_, HashMap<RunId, Active>> {
        self.active.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn store(&self) -> &Arc<Store> {
        &self.store
    }

    pub fn access(&self) -> &AccessPolicy {
        &self.access
    }

    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.events.subscribe()
    }

    /// The most recently started run still going, if any.
    pub fn current_run(&self) -> Option<RunId> {
        self.active().keys().max().copied()
    }

    /// The run going on `target`, if any.
    pub fn busy_with(&self, target: &std::path::Path) -> Option<RunId> {
        self.active()
            .values()
            .find(|a| a.holds(target))
            .map(|a| a.id)
    }

    /// A write to `target` (as the request named it) may go ahead: the access rules allow it
    /// and, for a block device, `confirm` repeats its path (comma-separated when a run
    /// writes several devices).
    fn authorize_write(
        &self,
        target: &crate::io_target::TargetInfo,
        named: &str,
        confirm: Option<&str>,
    ) -> Result<(), ServiceError> {
        self.access.check_write(target)?;
        if target.kind != crate::io_target::TargetKind::Block {
            return Ok(());
        }
        let confirmed = confirm.is_some_and(|c| {
            c.split(',')
                .map(str::trim)
                .any(|x| x == named || std::path::Path::new(x) == target.path)
        });
        if confirmed {
            Ok(())
        } else {
            Err(ServiceError::ConfirmDevice(
                target.path.display().to_string(),
            ))
        }
    }

    /// Validates, checks access and starts a run. Blocking (probes and may create the target).
    /// In phases: what needs no target, opening the targets, then under the lock the claim,
    /// the steps and their plans, the memory budget, and the run's thread.
    pub fn start(self: &Arc<Self>, req: &CreateRun) -> Result<RunId, ServiceError> {
        let create_size = self.check_request(req)?;
        // The null backend opens nothing: its target is a label (still an allowed path).
        let label = req.spec.as_ref().is_some_and(|s| s.backend.opens_nothing());
        let open = |t: &str, size: Option<u64>| {
            if label {
                return Ok(Locator::path(&self.access.resolve_target(t)?));
            }
            self.access.open_target(t, size)
        };
        let target = open(&req.target, create_size)?;
        let also: Vec<Locator> = req
            .also
            .iter()
            .map(|t| open(t, create_size))
            .collect::<Result<_, _>>()?;
        // Hold the lock from the busy check to the insert: one run per target.
        let active = self.active();
        check_free(&active, &target, &also)?;
        let (mut steps, analysis, keep_steps, together) = steps_of(req, &target)?;
        give_witness_token(&mut steps, req.witness_token.as_deref())?;
        // A job file's run is named for its jobs unless the request names it.
        let job_names = req.fio_job.as_ref().map(|_| {
            let names: Vec<&str> = steps.iter().map(|s| s.name.as_str()).collect();
            names.join(" + ")
        });
        let repeat = req.repeat.unwrap_or(1);
        if together && repeat > 1 {
            return Err(ServiceError::BadRepeat(format!(
                "repeat = {repeat}: a job file whose jobs run at once is not repeated (yet)"
            )));
        }
        shared::steps::check_repeat(repeat, steps.len()).map_err(ServiceError::BadRepeat)?;
        let steps = shared::steps::repeat_steps(steps, repeat, req.repeat_idle_ms.unwrap_or(0));
        let keep_steps = keep_steps || repeat > 1;
        let plans = measure::plan_steps(&steps, &target)?;
        let Some(first) = plans.first() else {
            return Err(ServiceError::NoSteps(
                req.preset.clone().unwrap_or_default(),
            ));
        };
        if plans.iter().any(|p| p.plan.writes()) {
            self.authorize_write(first.plan.target(), &req.target, req.confirm.as_deref())?;
        }
        let spec = first.plan.spec().clone();
        // The run holds its largest step's memory on every target (each step was checked
        // alone when it was planned); runs at once share the budget.
        let memory = memory_of(&plans, together, also.len());
        let in_use: u64 = active.values().map(|a| a.memory).sum();
        if in_use.saturating_add(memory) > crate::budget::max() {
            return Err(ServiceError::Memory {
                need: memory >> 20,
                in_use: in_use >> 20,
                max: crate::budget::max() >> 20,
            });
        }
        // The further targets of a multi-target run: same workload, same checks.
        let mut also_plans = Vec::new();
        for p in &also {
            let plan = measure::plan_on(&spec, p)?;
            if plan.writes() {
                let named = p.path.display().to_string();
                self.authorize_write(plan.target(), &named, req.confirm.as_deref())?;
            }
            also_plans.push(plan);
        }
        let path = target.path.clone();
        // Jobs at once are no sequence of steps: progress follows the run's own spec.
        let plan: Vec<_> = if together {
            Vec::new()
        } else {
            measure::planned_steps(&plans)
        };
        let id = self.store.create_run(&NewRun {
            name: req.name.as_deref().or(job_names.as_deref()),
            target: &path.display().to_string(),
            preset: req.preset.as_deref(),
            spec: &spec,
            created_ms: crate::env::unix_ms(),
            plan: &plan,
            job_file: req.fio_job.as_deref(),
        })?;
        let cancel = Arc::new(AtomicBool::new(false));
        let me = Arc::clone(self);
        let run_cancel = Arc::clone(&cancel);
        let start_at = req
            .start_at_ms
            .map(|ms| std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms));
        let thread = std::thread::Builder::new()
            .name(format!("ds-run-{id}"))
            .spawn(move || {
                let how = if together {
                    How::Together
                } else if also_plans.is_empty() {
                    How::Steps { keep_steps }
                } else {
                    How::Targets(also_plans)
                };
                me.run_thread(id, plans, how, analysis, run_cancel, start_at)
            })
            .map_err(ServiceError::Thread)?;
        self.register(
            active,
            Active {
                id,
                target: path,
                others: also.into_iter().map(|l| l.path).collect(),
                cancel,
                thread: Some(thread),
                memory,
                preset: req.preset.clone(),
                ended: false,
            },
        );
        Ok(id)
    }

    /// Makes a started run active (under the lock its checks were made under) and tells the
    /// subscribers it started.
    fn register(&self, mut active: MutexGuard<'_, HashMap<RunId, Active>>, run: Active) {
        let id = run.id;
        active.insert(id, run);
        drop(active);
        let _ = self.events.send(Event::Lifecycle {
            run_id: id,
            event: RunEvent::Started,
            error: None,
        });
    }

    /// Starts a group run (`POST /api/v1/groups`): the run on every member at a shared
    /// start, and here a run that follows and merges them (stored, streamed and stopped
    /// like any run; a stop stops every member). Blocking: the members' clocks are
    /// measured and their runs started before this returns.
    pub fn start_group(self: &Arc<Self>, req: &CreateRun) -> Result<RunId, ServiceError> {
        if self.shutting_down.load(Ordering::Relaxed) {
            return Err(ServiceError::ShuttingDown);
        }
        let started = crate::group::start(req)?;
        let runs: Vec<String> = started
            .runs()
            .map(|(a, id)| format!("{a} run {id}"))
            .collect();
        let label = format!("group of {}: {}", runs.len(), runs.join(", "));
        let created = self.store.create_run(&NewRun {
            name: req.name.as_deref(),
            target: &label,
            preset: req.preset.as_deref(),
            spec: &started.spec,
            created_ms: crate::env::unix_ms(),
            plan: &[],
            job_file: req.fio_job.as_deref(),
        });
        let id = match created {
            Ok(id) => id,
            Err(e) => {
                crate::group::abandon(&started);
                return Err(e.into());
            }
        };
        let cancel = Arc::new(AtomicBool::new(false));
        let (me, run_cancel) = (Arc::clone(self), Arc::clone(&cancel));
        let analysis = AnalysisOptions::for_spec(&started.spec);
        let how = How::Group(Box::new(started));
        let active = self.active();
        let thread = std::thread::Builder::new()
            .name(format!("ds-group-{id}"))
            .spawn(move || me.run_thread(id, Vec::new(), how, analysis, run_cancel, None))
            .map_err(ServiceError::Thread)?;
        self.register(
            active,
            Active {
                id,
                target: PathBuf::from(label),
                others: Vec::new(),
                cancel,
                thread: Some(thread),
                memory: 0,
                preset: req.preset.clone(),
                ended: false,
            },
        );
        Ok(id)
    }

    /// Everything about a request that can be checked before a target is opened (or
    /// created). Returns the size a missing file target is created at, if any.
    fn check_request(&self, req: &CreateRun) -> Result<Option<u64>, ServiceError> {
        if self.shutting_down.load(Ordering::Relaxed) {
            return Err(ServiceError::ShuttingDown);
        }
        if req.also.len() >= MAX_TARGETS {
            return Err(ServiceError::TooManyTargets(1 + req.also.len()));
        }
        if !req.agents.is_empty() {
            return Err(ServiceError::GroupHere);
        }
        let latest = crate::env::unix_ms() + shared::group::MAX_START_WAIT_MS;
        if let Some(at) = req.start_at_ms.filter(|&at| at > latest) {
            return Err(ServiceError::StartAt(at, latest));
        }
        if let Some(spec) = &req.spec {
            spec.validate()
                .map_err(|e| ServiceError::Measure(MeasureError::Spec(e)))?;
            crate::budget::check(spec, 1 + req.also.len() as u64)
                .map_err(|e| ServiceError::Measure(MeasureError::Spec(vec![e])))?;
        }
        let job_span = match &req.fio_job {
            Some(text) if req.also.is_empty() => job_steps(text, &req.target)?
                .steps
                .iter()
                .filter_map(|s| s.spec.size.map(|z| z.saturating_add(s.spec.offset)))
                .max(),
            Some(_) => return Err(ServiceError::JobWithAlso),
            None => None,
        };
        if let Some(name) = &req.preset {
            if !presets::names().contains(&name.as_str()) {
                return Err(PresetError::Unknown(name.clone()).into());
            }
            if !req.also.is_empty() {
                return Err(ServiceError::PresetWithAlso(name.clone()));
            }
        }
        match (req.repeat, req.repeat_idle_ms) {
            (Some(n), _) if shared::steps::check_repeat(n, 1).is_err() => {
                return Err(ServiceError::BadRepeat(format!(
                    "repeat = {n}: must be 1..{}",
                    shared::steps::MAX_REPEAT
                )));
            }
            (Some(n), _) if n > 1 && !req.also.is_empty() => {
                return Err(ServiceError::BadRepeat(format!(
                    "repeat = {n}: repeated runs are on one target: drop \"also\""
                )));
            }
            (_, Some(ms)) if ms > shared::spec::MAX_DURATION_MS => {
                return Err(ServiceError::BadRepeat(format!(
                    "repeat_idle_ms = {ms}: at most {}",
                    shared::spec::MAX_DURATION_MS
                )));
            }
            _ => {}
        }
        // Create a missing file only with a size to create it at (the scratch file has one).
        Ok(match (&req.spec, &req.preset) {
            (Some(spec), None) => crate::workload::plan::wanted_target_size(spec),
            (None, Some(name)) => presets::create_size(
                name,
                &req.options.clone().unwrap_or_default(),
                std::path::Path::new(&req.target),
            ),
            // A job file's: the largest span a job gives.
            _ => job_span,
        })
    }

    /// What a run's end adds to `/metrics`: its latency histogram (not a probe's: its
    /// requests were counted as they came, its run may last days) and a sustain verdict.
    fn count_end(&self, target: &str, report: &shared::RunReport) {
        if report.analysis.probe.is_none() {
            self.counters.histogram(target, &report.histogram);
        }
        if let Some(s) = &report.analysis.sustain {
            self.counters.sustain(target, s.pass);
        }
    }

    fn run_thread(
        self: Arc<Self>,
        id: RunId,
        plans: Vec<StepPlan>,
        how: How,
        analysis: AnalysisOptions,
        cancel: Arc<AtomicBool>,
        start_at: Option<std::time::SystemTime>,
    ) {
        // `start` inserts the run before it lets go of the lock this waits for.
        let target = self
            .active()
            .get(&id)
            .map(|a| a.target.display().to_string())
            .unwrap_or_default();
        // A group's I/O is its members', counted in their agents' `/metrics`, not again here.
        let counted = !matches!(how, How::Group(_));
        let mut persist = Persist {
            store: &self.store,
            events: &self.events,
            counters: &self.counters,
            target: target.clone(),
            run_id: id,
            cancel: Arc::clone(&cancel),
            failure: None,
            start_at,
            counted,
        };
        let keep_steps = matches!(how, How::Steps { keep_steps: true } | How::Group(_));
        let result = run_how(plans, how, &analysis, cancel, &mut persist);
        let store_failure = persist.failure.take();
        let result = match (result, store_failure) {
            // Samples that cannot be stored end the run as failed, naming the database.
            (Ok(mut report), Some(message)) => {
                report.status = RunStatus::Failed;
                report.error = Some(RunError {
                    message,
                    op: None,
                    offset: None,
                    errno: None,
                });
                Ok(report)
            }
            (r, _) => r,
        };
        // Its I/O is over: the targets and the memory are free before the end is recorded,
        // so that a client that reads the recorded end can start the next run on them (the
        // entry stays until then, for `shutdown` to wait on).
        if let Some(a) = self.active().get_mut(&id) {
            a.ended = true;
            a.memory = 0;
        }
        let (state, end_error) = match result {
            Ok(mut report) => {
                if !keep_steps {
                    report.steps.clear();
                }
                let state = report.status;
                if counted {
                    self.count_end(&target, &report);
                }
                let end = RunEnd {
                    state,
                    ended_ms: crate::env::unix_ms(),
                    environment: Some(&report.environment),
                    summary: Some(&report.summary),
                    error: report.error.as_ref(),
                    histogram: Some(&report.histogram),
                    steps: &report.steps,
                    analysis: Some(&report.analysis),
                    timeline: report.timeline.as_ref(),
                    targets: &report.targets,
                };
                if let Err(e) = self.store.finish_run(id, &end) {
                    self.unrecorded(id, state, report.error.clone(), &e);
                }
                (state, report.error.clone())
            }
            Err(e) => {
                let err = RunError {
                    message: e.to_string(),
                    op: None,
                    offset: None,
                    errno: None,
                };
                let end = RunEnd {
                    state: RunStatus::Failed,
                    ended_ms: crate::env::unix_ms(),
                    environment: None,
                    summary: None,
                    error: Some(&err),
                    histogram: None,
                    steps: &[],
                    analysis: None,
                    timeline: None,
                    targets: &[],
                };
                if let Err(e) = self.store.finish_run(id, &end) {
                    self.unrecorded(id, RunStatus::Failed, Some(err.clone()), &e);
                }
                (RunStatus::Failed, Some(err))
            }
        };
        self.active().remove(&id);
        let event = match state {
            RunStatus::Completed => RunEvent::Completed,
            RunStatus::Stopped | RunStatus::Interrupted => RunEvent::Stopped,
            RunStatus::Failed | RunStatus::Running => RunEvent::Failed,
        };
        let _ = self.events.send(Event::Lifecycle {
            run_id: id,
            event,
            error: end_error,
        });
    }

    /// Remembers how a run ended when the database could not record it, so the API still
    /// tells the truth (the row says `running` until a restart marks it interrupted).
    fn unrecorded(&self, id: RunId, state: RunStatus, error: Option<RunError>, e: &StoreError) {
        let path = self.store.path().display();
        tracing::error!(run = id, "cannot record the end of run {id} in {path}: {e}");
        let error = error.unwrap_or_else(|| RunError {
            message: format!("the end of the run could not be recorded in {path}: {e}"),
            op: None,
            offset: None,
            errno: None,
        });
        self.ended
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(id, (state, error));
    }

    /// How a run ended that the database could not record, if so.
    pub fn unrecorded_end(&self, id: RunId) -> Option<(RunStatus, RunError)> {
        self.ended
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&id)
            .cloned()
    }

    /// Asks a running run to stop (within one interval).
    pub fn stop(&self, id: RunId) -> Result<(), ServiceError> {
        match self.active().get(&id) {
            Some(a) => {
                a.cancel.store(true, Ordering::SeqCst);
                Ok(())
            }
            None => match self.store.get_run(id)? {
                Some(_) => Err(ServiceError::NotRunning(id)),
                None => Err(ServiceError::NotFound(id)),
            },
        }
    }

    /// Deletes a finished run and all it recorded.
    pub fn delete(&self, id: RunId) -> Result<(), ServiceError> {
        if self.active().contains_key(&id) {
            return Err(ServiceError::StillRunning(id));
        }
        if self.store.delete_run(id)? {
            Ok(())
        } else {
            Err(ServiceError::NotFound(id))
        }
    }

    /// Stops every run and waits for each to record how it ended. No new run starts after.
    pub fn shutdown(&self) {
        self.shutting_down.store(true, Ordering::SeqCst);
        let threads: Vec<JoinHandle<()>> = {
            let mut active = self.active();
            active
                .values_mut()
                .filter_map(|a| {
                    a.cancel.store(true, Ordering::SeqCst);
                    a.thread.take()
                })
                .collect()
        };
        for t in threads {
            let _ = t.join();
        }
    }
}

/// None of the run's targets is busy, and none is named twice.
fn check_free(
    active: &HashMap<RunId, Active>,
    target: &Locator,
    also: &[Locator],
) -> Result<(), ServiceError> {
    let mut seen = vec![&target.path];
    for a in also {
        if seen.contains(&&a.path) {
            return Err(ServiceError::Repeated(a.path.display().to_string()));
        }
        seen.push(&a.path);
    }
    for p in &seen {
        if let Some(a) = active.values().find(|a| a.holds(p)) {
            return Err(ServiceError::Busy {
                target: p.display().to_string(),
                run_id: a.id,
            });
        }
    }
    Ok(())
}

/// The steps a request runs (a spec is one step named "custom"; a preset is built for the
/// target's size), the analyses' options, and whether the run keeps its steps.
/// The memory a run holds: a job file's jobs at once hold theirs together; otherwise the
/// largest step's, on every target.
fn memory_of(plans: &[StepPlan], together: bool, also: usize) -> u64 {
    if together {
        let needs = plans.iter().map(|p| crate::budget::needed(p.plan.spec()));
        needs.fold(0u64, u64::saturating_add)
    } else {
        // A step whose jobs run at once holds their memory together.
        let needs = measure::steps_memory(plans);
        needs.max().unwrap_or(0).saturating_mul(1 + also as u64)
    }
}

/// Runs `plans` as `how` says.
fn run_how(
    plans: Vec<StepPlan>,
    how: How,
    analysis: &AnalysisOptions,
    cancel: Arc<AtomicBool>,
    persist: &mut Persist<'_>,
) -> Result<shared::RunReport, MeasureError> {
    match how {
        How::Steps { .. } => measure::run_steps(plans, analysis, cancel, persist),
        How::Targets(also) => {
            let all: Vec<measure::Part> = plans
                .into_iter()
                .map(|s| s.plan)
                .take(1)
                .chain(also)
                .map(measure::Part::target)
                .collect();
            measure::run_multi(all, cancel, persist)
        }
        How::Together => {
            let all = plans
                .into_iter()
                .map(|s| measure::Part {
                    job: Some(s.step.name),
                    plan: s.plan,
                })
                .collect();
            measure::run_multi(all, cancel, persist)
        }
        How::Group(started) => crate::group::follow(*started, cancel, persist),
    }
}

/// How a run's plans run.
enum How {
    /// One after another (a single workload is one step); `keep_steps`: the report keeps
    /// them (presets, job files, repeats).
    Steps { keep_steps: bool },
    /// The first plan's workload on these further targets too, at once.
    Targets(Vec<crate::workload::Plan>),
    /// A job file's jobs, all at once.
    Together,
    /// A group: the same run on other agents, followed and merged (`crate::group`).
    Group(Box<crate::group::Started>),
}

/// A flush check's steps get the witness's token from the request (held in memory with the
/// plans, never stored); a token without a flush check, or a flush check without one, is
/// refused before anything opens the witness.
fn give_witness_token(steps: &mut [Step], token: Option<&str>) -> Result<(), ServiceError> {
    let checks = steps.iter().any(|s| s.spec.flushcheck.is_some());
    match (checks, token) {
        (true, Some(t)) if !t.is_empty() => {
            presets::give_witness_token(steps, t);
            Ok(())
        }
        (true, _) => Err(ServiceError::Witness(
            "a flush check records on its witness with the witness's operator token: give witness_token".into(),
        )),
        (false, Some(_)) => Err(ServiceError::Witness(
            "witness_token goes with a flush check (preset flushcheck) only".into(),
        )),
        (false, None) => Ok(()),
    }
}

/// The request's steps, their analyses, whether the report keeps them, and whether they
/// are a job file's jobs that run at once.
fn steps_of(
    req: &CreateRun,
    target: &Locator,
) -> Result<(Vec<Step>, AnalysisOptions, bool, bool), ServiceError> {
    match (&req.spec, &req.preset, &req.fio_job) {
        (Some(spec), None, None) => {
            let step = Step {
                name: "custom".into(),
                spec: spec.clone(),
                pause_before_ms: 0,
                until_steady: None,
                pass: None,
                p99_target_us: None,
                rate_pct: None,
                with_previous: false,
            };
            Ok((vec![step], AnalysisOptions::for_spec(spec), false, false))
        }
        (None, Some(name), None) => {
            let options = req.options.clone().unwrap_or_default();
            let info = if presets::in_directory(name) {
                target.probe_dir()
            } else {
                target.probe(None, false)
            }
            .map_err(|e| ServiceError::Measure(MeasureError::Target(e)))?;
            let built = presets::build(name, &options, info.size, info.logical_block_size)?;
            Ok((built.steps, built.analysis, true, false))
        }
        (None, None, Some(text)) => {
            let jobs = job_steps(text, &req.target)?;
            let analysis = AnalysisOptions::for_spec(&jobs.steps[0].spec);
            Ok((jobs.steps, analysis, true, jobs.together))
        }
        (None, None, None) => Err(ServiceError::SpecOrPreset("none")),
        _ => Err(ServiceError::SpecOrPreset("several")),
    }
}

/// A fio job file as it would run on `target` (`POST /api/v1/fio-jobs/check`): the same
/// parsing and checks as a run started from it, and nothing started.
pub fn check_fio_job(
    req: &shared::api::CheckFioJob,
) -> Result<shared::api::FioJobSteps, ServiceError> {
    job_steps(&req.fio_job, &req.target)
}

/// A workload's problems as a run would meet them before any target is opened: the
/// validator's, then the memory budget's.
pub fn check_spec(spec: &shared::WorkloadSpec) -> shared::api::SpecCheck {
    let mut problems = spec.validate().err().unwrap_or_default();
    if problems.is_empty() {
        problems.extend(crate::budget::check(spec, 1).err());
    }
    shared::api::SpecCheck { problems }
}

/// A workload as the form's fields hold it: the spec they make and the problems, keyed by
/// option (an unknown key is one, named). The validator's and the budget's problems are
/// judged only once every text reads, and filed under the first option of their field.
pub fn read_spec(f: &shared::api::SpecFields) -> shared::api::SpecRead {
    use shared::options::{self, OPTIONS};
    let mut problems: Vec<shared::SpecError> = f
        .fields
        .iter()
        .filter(|(k, _)| options::by_key(k).is_none())
        .map(|(k, v)| shared::SpecError::new(k, format!("'{v}'"), "no such workload option"))
        .collect();
    let (spec, errs) = options::spec_from(f.fields.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    for (key, message) in errs {
        let text = f.fields.get(key).map_or("", String::as_str);
        problems.push(shared::SpecError::new(key, format!("'{text}'"), message));
    }
    if problems.is_empty() {
        for mut p in check_spec(&spec).problems {
            if let Some(o) = OPTIONS
                .iter()
                .find(|o| o.api == p.field || o.key == p.field)
            {
                p.field = o.key.to_string();
            }
            problems.push(p);
        }
    }
    shared::api::SpecRead { spec, problems }
}

/// A request's fio job file as steps (stonewall groups), each step's workload held to the
/// same validation and memory budget as a `spec` (a job file is input like any other). The
/// jobs run on the request's `target`: a job that names another `filename` is refused, so that
/// no one reads a result as that file's.
/// With the steps (or the jobs, when the file is one group of several that run at once),
/// the differences they run with (`note:`s).
fn job_steps(text: &str, target: &str) -> Result<shared::api::FioJobSteps, ServiceError> {
    let jobs = crate::fiojob::JobFile::from_request(text)?;
    let elsewhere = jobs.jobs.iter().find_map(|j| {
        j.path()
            .filter(|p| p.as_path() != std::path::Path::new(target))
            .map(|p| (j, p))
    });
    if let Some((job, named)) = elsewhere {
        return Err(ServiceError::FioJob(crate::fiojob::JobFileError::Syntax {
            at: job.at.clone(),
            message: format!(
                "job '{}' names filename={} but the request's target is {target}: the jobs run on the target (drop filename or make it the target)",
                job.name,
                named.display()
            ),
        }));
    }
    let together = jobs.together(Some(std::path::Path::new(target)))?;
    let steps = match &together {
        // Each job a step of its own, all run at once.
        Some(group) => group
            .iter()
            .map(|(job, _)| Step {
                name: job.name.clone(),
                spec: job.spec.clone(),
                pause_before_ms: 0,
                until_steady: None,
                pass: None,
                p99_target_us: None,
                rate_pct: None,
                with_previous: false,
            })
            .collect(),
        None => jobs.steps()?,
    };
    for s in &steps {
        s.spec
            .validate()
            .map_err(|e| ServiceError::Measure(MeasureError::Spec(e)))?;
        crate::budget::check(&s.spec, 1)
            .map_err(|e| ServiceError::Measure(MeasureError::Spec(vec![e])))?;
    }
    if steps.is_empty() {
        return Err(ServiceError::NoSteps("fio_job".into()));
    }
    Ok(shared::api::FioJobSteps {
        name: steps
            .iter()
            .map(|s| s.name.as_str())
            .collect::<Vec<_>>()
            .join(" + "),
        steps,
        notes: jobs.notes(),
        together: together.is_some(),
    })
}

/// Persists every sample, then broadcasts it. A sample that cannot be stored is not
/// broadcast and stops the run: it ends `failed` with the database path and the error
/// (history must not have holes the live view did not show).
struct Persist<'a> {
    store: &'a Store,
    events: &'a broadcast::Sender<Event>,
    counters: &'a super::counters::Counters,
    /// The run's target, as `/metrics` labels it.
    target: String,
    run_id: RunId,
    cancel: Arc<AtomicBool>,
    failure: Option<String>,
    /// The request's start time (`start_at_ms`), if any.
    start_at: Option<std::time::SystemTime>,
    /// Its samples count in `/metrics` (not a group's: each member counts its own).
    counted: bool,
}

impl Observer for Persist<'_> {
    fn sample(&mut self, sample: &Sample) {
        if let Err(e) = self.store.append_sample(self.run_id, sample) {
            let message = format!(
                "cannot store sample {} of run {} in {}: {e}",
                sample.seq,
                self.run_id,
                self.store.path().display()
            );
            tracing::error!(run = self.run_id, "{message}");
            if self.failure.is_none() {
                self.failure = Some(message);
            }
            self.cancel.store(true, Ordering::SeqCst);
            // Only stored samples go live: a viewer never sees what history will not have.
            return;
        }
        if self.counted {
            self.counters.sample(&self.target, sample);
        }
        let _ = self.events.send(Event::Sample {
            run_id: self.run_id,
            sample: Arc::new(sample.clone()),
        });
    }

    fn start_at(&self) -> Option<std::time::SystemTime> {
        self.start_at
    }

    /// A probe's request goes into `/metrics`' latency histogram as it comes, so an alert
    /// on its p99 over the last minutes sees a run that lasts days.
    fn request(&mut self, r: &shared::probe::Request) {
        if self.counted && !r.warmup {
            self.counters.request(&self.target, r.write, r.lat_ns);
        }
    }

    fn exact_timeline(&mut self, buckets: &mut crate::stats::fine::Spill) {
        let n = buckets.len();
        if let Err(e) = self
            .store
            .put_exact_timeline(self.run_id, buckets.reader(0, n))
        {
            // The samples and the bounded timeline are stored; only the export of every
            // 10 ms bucket is missing.
            tracing::warn!(
                run = self.run_id,
                "cannot store the 10 ms timeline of run {} in {}: {e}",
                self.run_id,
                self.store.path().display()
            );
        }
    }
}
