//! The run report: one JSON document with everything measured and how.

use crate::sample::{HistogramDump, RunSummary, Sample};
use crate::spec::WorkloadSpec;
use serde::{Deserialize, Serialize};

/// Where a run is in its life, and how it ended.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    Running,
    Completed,
    /// Stopped by the user (Ctrl-C, stop button); results up to the stop are kept.
    Stopped,
    /// Ended by an error (ENOSPC, EIO, ...); results up to the error are kept.
    Failed,
    /// The agent went away while the run was going; its samples up to then are kept.
    Interrupted,
}

impl RunStatus {
    pub const ALL: [RunStatus; 5] = [
        RunStatus::Running,
        RunStatus::Completed,
        RunStatus::Stopped,
        RunStatus::Failed,
        RunStatus::Interrupted,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Completed => "completed",
            RunStatus::Stopped => "stopped",
            RunStatus::Failed => "failed",
            RunStatus::Interrupted => "interrupted",
        }
    }

    pub fn parse(s: &str) -> Option<RunStatus> {
        RunStatus::ALL.into_iter().find(|r| r.as_str() == s)
    }
}

/// Why a run failed, with where it failed when an I/O failed.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct RunError {
    pub message: String,
    /// `read` or `write` when an I/O failed.
    pub op: Option<String>,
    /// Byte offset of the failed I/O.
    pub offset: Option<u64>,
    /// The OS error number (e.g. 28 for ENOSPC).
    pub errno: Option<i32>,
}

/// Where and how the numbers were measured.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Environment {
    pub host: String,
    pub kernel: String,
    pub diskscope_version: String,
    pub cpu_model: Option<String>,
    /// Unix time in milliseconds when the run started.
    pub started_at_ms: u64,
    /// The backend that ran (may differ from the requested one after a fallback).
    pub backend: String,
    /// Why the backend differs from the requested one, when it does.
    pub backend_note: Option<String>,
    pub target: String,
    /// `file`, `block` or `none` (null backend).
    pub target_kind: String,
    pub target_size: u64,
    pub logical_block_size: u32,
    /// Whether O_DIRECT was in effect.
    pub direct: bool,
    /// Bytes laid out with real data before the run (file targets that had holes).
    pub laid_out_bytes: u64,
    /// io_uring kernel worker threads (`iou-wrk-*`) seen during the run: when non-zero the
    /// kernel handed I/O to worker threads instead of issuing it inline (as on tmpfs), and
    /// the figures are not comparable with inline submission.
    pub io_workers_seen: u32,
    /// Ring features that could be used (fixed buffers, registered file, ...).
    pub ring_features: Vec<String>,
    pub warnings: Vec<String>,
    /// The block device under the target (the device itself, or the one holding the
    /// file) with its health just before the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_before: Option<crate::devices::DeviceInfo>,
    /// Its health just after the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_after: Option<crate::devices::DeviceHealth>,
    /// For a file target: its filesystem, free space and whether O_DIRECT works there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filesystem: Option<crate::devices::FsInfo>,
}

/// The document written by `diskscope run --json` and served by the API's export.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct RunReport {
    pub protocol_version: u32,
    pub status: RunStatus,
    pub error: Option<RunError>,
    pub spec: WorkloadSpec,
    pub environment: Environment,
    pub summary: RunSummary,
    pub samples: Vec<Sample>,
    pub histogram: HistogramDump,
    /// The steps of a preset run (empty for a single workload).
    #[serde(default)]
    pub steps: Vec<crate::steps::StepReport>,
    /// What the analyses found (cache cliff, steady state, sustained rate, ...).
    #[serde(default)]
    pub analysis: crate::analysis::Analysis,
    /// Bytes per 10 ms, completion gaps and slow I/Os.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeline: Option<crate::analysis::Timeline>,
    /// A run over several targets at once: each target's summary (the run's summary and
    /// samples are their sum).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<TargetPart>,
}

/// One target of a multi-target run.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct TargetPart {
    pub path: String,
    pub summary: RunSummary,
    pub status: Option<RunStatus>,
}
