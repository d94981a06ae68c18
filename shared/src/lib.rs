//! Wire types shared by the diskscope agent and the dashboard.
//!
//! Everything here is plain data with serde derives: the workload a user asks for
//! ([`WorkloadSpec`]) and its target-independent validation, the per-interval [`Sample`]s an
//! engine produces, the whole-run [`RunSummary`], and the [`RunReport`] document written by
//! `diskscope run --json`. The crate compiles for wasm32 as well as native, so it holds no
//! tokio, no `std::fs` and no threads: the dashboard reads the same types as the agent
//! writes (and leaves validation to the agent: `POST /api/v1/specs/check`).

pub mod access;
pub mod analysis;
pub mod api;
pub mod bssplit;
pub mod devices;
pub mod durability;
pub mod files;
pub mod flushcheck;
pub mod group;
pub mod headline;
pub mod lenient;
pub mod options;
pub mod origin;
pub mod pacing;
pub mod preset;
pub mod probe;
pub mod qd_search;
pub mod replay;
pub mod report;
pub mod sample;
pub mod spec;
pub mod steady;
pub mod steps;
pub mod units;

pub use report::{Environment, IoPath, RunError, RunReport, RunStatus, TargetPart};
pub use sample::{DirSample, HistogramDump, LatencyStats, PartSample, RunSummary, Sample};
pub use spec::{Backend, DataPattern, Rate, RwMode, SpecError, WorkloadSpec};
pub use steps::{PresetOptions, Step, StepReport};

/// Version of the wire protocol (samples, reports, API messages). Bumped on any breaking change.
pub const PROTOCOL_VERSION: u32 = 1;
