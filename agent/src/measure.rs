//! One measurement from a user's spec to a report: probe (or create) the target, validate
//! into a plan, run, assemble the report. The CLI and, later, the service go through here.

use crate::report;
use crate::runner::{self, Observer, StartError};
use crate::target::{TargetError, TargetInfo};
use crate::workload::plan::{null_target, wanted_target_size};
use crate::workload::Plan;
use shared::{Backend, RunReport, SpecError, WorkloadSpec};
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
    let outcome = runner::run(&plan, cancel, observer)?;
    Ok(report::build(&plan, outcome, started))
}
