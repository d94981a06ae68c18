//! One measurement from a user's spec to a report: probe (or create) the target, validate
//! into a plan, run, assemble the report and its analyses. Every front end (CLI, service)
//! goes through here, in one of three ways: one plan ([`run`]), steps as one run
//! ([`steps::run_steps`]: presets), several plans at once ([`multi::run_multi`]: one
//! workload on several targets, or a job file's jobs that run together).

mod multi;
mod steps;

pub use multi::{merge_parts, run_multi, Msg as PartMsg, Part, MAX_PARTS};
pub use steps::{plan_steps, planned_steps, run_steps, StepPlan};

/// The buffer memory each step of a run holds (the steps that run at once together).
pub fn steps_memory(plans: &[StepPlan]) -> impl Iterator<Item = u64> + '_ {
    steps::phase_needs(plans).map(|(_, need)| need)
}

use crate::io_target::{Locator, TargetError};
use crate::presets::AnalysisOptions;
use crate::report;
use crate::runner::{self, Observer, StartError};
use crate::workload::plan::{null_target, wanted_target_size};
use crate::workload::Plan;
use shared::{RunReport, SpecError, WorkloadSpec};
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
    /// A run over several targets was given none.
    #[error("no target to run on")]
    NoTargets,
}

fn join(errs: &[SpecError]) -> String {
    errs.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// Validates `spec` on its own (before touching the target) and against the target.
pub fn plan(spec: &WorkloadSpec, target: &Path) -> Result<Plan, MeasureError> {
    plan_on(spec, &Locator::path(target))
}

/// [`plan`] on a target given as a path or as the descriptor the access check opened.
pub fn plan_on(spec: &WorkloadSpec, target: &Locator) -> Result<Plan, MeasureError> {
    spec.validate().map_err(MeasureError::Spec)?;
    // A replay's trace is read once, here: the directions it holds decide whether the run
    // writes (and so every write check after), its I/Os are what the plan issues.
    let (spec, trace) = match &spec.replay {
        Some(r) => {
            let trace = crate::trace::library::load(&r.trace).map_err(|e| {
                MeasureError::Spec(vec![SpecError::new("replay", &r.trace, e.to_string())])
            })?;
            let derived = crate::workload::replay::derive_spec(spec, r, &trace);
            (derived, Some((r.trace.clone(), trace)))
        }
        None => (spec.clone(), None),
    };
    let spec = &spec;
    crate::budget::check(spec, 1).map_err(|e| MeasureError::Spec(vec![e]))?;
    let info = if spec.backend.opens_nothing() {
        null_target(spec, &target.path)
    } else if spec.files.is_some() {
        target.probe_dir()?
    } else {
        let writes = spec.rw.read_pct(spec.read_pct) < 100;
        target.probe(wanted_target_size(spec), writes)?
    };
    let mut plan = Plan::new(spec, info).map_err(MeasureError::Spec)?;
    if let Some((name, trace)) = trace {
        plan = plan
            .with_replay(&name, &trace)
            .map_err(MeasureError::Spec)?;
    }
    if !plan.writes() {
        let (start, end) = plan.span_bytes();
        crate::io_target::refuse_holes(plan.target(), start, end)?;
    }
    Ok(plan)
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
    let mut outcome = runner::run(&plan, cancel, observer)?;
    let mut fine = outcome.fine.take();
    let mut report = report::build(&plan, outcome, started);
    snapshot.finish(&mut report.environment, report.summary.write.bytes);
    crate::analyze::finish(
        &mut report,
        &AnalysisOptions::for_spec(plan.spec()),
        fine.as_mut(),
    );
    if let Some(sp) = fine.as_mut() {
        if sp.flush().is_ok() {
            observer.exact_timeline(sp);
        }
    }
    Ok(report)
}
