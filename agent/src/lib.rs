//! The diskscope agent: an io_uring storage benchmark engine with per-interval statistics.
//!
//! Flow: a [`shared::WorkloadSpec`] and a target path go through [`measure::plan`] (probe the
//! target, validate into a [`workload::Plan`]); [`runner::run`] starts one
//! [`engine`] thread per job and merges their interval [`stats`] into samples; [`report`]
//! turns the outcome into the JSON/CSV/terminal output. [`cli`] is the command line.

pub mod analyze;
pub mod api;
pub mod budget;
pub mod cli;
pub mod client;
pub mod cpus;
pub mod devices;
pub mod emulate;
pub mod engine;
pub mod env;
pub mod files;
pub mod fiojob;
pub mod flushcheck;
pub mod group;
pub mod io_target;
pub mod iopath;
pub mod measure;
pub mod presets;
pub mod probe;
pub mod report;
pub mod runner;
pub mod service;
pub mod stats;
pub mod stop_rules;
pub mod store;
pub mod temperature;
pub mod trace;
pub mod workload;
