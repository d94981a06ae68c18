//! The integration tests: one binary, a module per area (ripgrep's layout), so the agent and
//! its dependencies are linked once. They drive the real `diskscope` binary, which
//! `scripts/test.sh` builds first (see `tests::diskscope_bin`).

mod access_patterns;
mod align;
mod batch;
mod block_device;
mod bssplit;
mod cpus;
mod dashboard;
mod docs;
mod durability;
mod emulated_ssd;
mod error_scan;
mod fakecap;
mod family;
mod figures;
mod file_target;
mod files;
mod fill_level;
mod fio_agreement;
mod fio_jobs;
mod fleet;
mod flushcheck;
mod group;
mod hardening;
mod io_path;
mod latency_target;
mod long_run_bench;
mod long_runs;
mod openapi;
mod pacing;
mod pipeline_bench;
mod plausibility;
mod probe;
mod prometheus;

mod regions;
mod remote;
mod repeat;
mod replay;
mod service;
mod stop_rules;
mod trim;
mod verify;
mod views;
