//! Run reports: the JSON document (`--json`), one CSV row per sample (`--csv`), and the
//! terminal summary table.

pub mod csv;
pub mod table;

use crate::env;
use crate::runner::RunOutcome;
use crate::workload::Plan;
use shared::{Backend, Environment, RunReport, PROTOCOL_VERSION};
use std::path::Path;

/// Assembles the report document of a finished (or stopped, or failed) run.
pub fn build(plan: &Plan, outcome: RunOutcome, started_at_ms: u64) -> RunReport {
    let spec = plan.spec();
    let target = plan.target();
    let mut warnings = Vec::new();
    if outcome.io_workers_seen > 0 {
        warnings.push(format!(
            "io_uring handed I/O to {} kernel worker thread(s) (iou-wrk) instead of issuing it inline (it does on tmpfs, and for O_DIRECT writes that allocate blocks in a new or sparse file): these figures include that hand-off and are not comparable with inline submission",
            outcome.io_workers_seen
        ));
    }
    if !spec.direct && spec.backend != Backend::Null {
        warnings.push("buffered I/O (--buffered): figures include the page cache".into());
    }
    if let Some(note) = &outcome.backend_note {
        warnings.push(note.clone());
    }
    let environment = Environment {
        host: env::hostname(),
        kernel: env::kernel(),
        diskscope_version: env::VERSION.to_string(),
        cpu_model: env::cpu_model(),
        started_at_ms,
        backend: outcome.backend,
        backend_note: outcome.backend_note,
        target: target.path.display().to_string(),
        target_kind: target.kind.as_str().to_string(),
        target_size: target.size,
        logical_block_size: target.logical_block_size,
        direct: spec.direct && spec.backend != Backend::Null,
        laid_out_bytes: outcome.laid_out_bytes,
        io_workers_seen: outcome.io_workers_seen,
        ring_features: outcome.ring_features,
        warnings,
        device_before: None,
        device_after: None,
        filesystem: None,
    };
    RunReport {
        protocol_version: PROTOCOL_VERSION,
        status: outcome.status,
        error: outcome.error,
        spec: spec.clone(),
        environment,
        summary: outcome.summary,
        samples: outcome.samples,
        histogram: outcome.histogram,
        steps: Vec::new(),
        analysis: Default::default(),
        timeline: Some(outcome.timeline),
        targets: Vec::new(),
    }
}

/// Writes the report as pretty JSON.
pub fn write_json(path: &Path, report: &RunReport) -> std::io::Result<()> {
    let text = serde_json::to_string_pretty(report).map_err(std::io::Error::other)?;
    std::fs::write(path, text + "\n")
}
