//! The agent as a service: which targets it may touch ([`access`]), who may do what
//! ([`tokens`]), the named workloads it offers ([`crate::presets`]), and the [`manager`] that runs
//! one measurement per target, persists its samples and fans them out to subscribers.

pub mod access;
pub mod counters;
pub mod manager;
pub mod tokens;

use std::path::PathBuf;

/// The data directory: `--data-dir`, `DISKSCOPE_DATA_DIR`, `$XDG_DATA_HOME/diskscope`, or
/// `~/.local/share/diskscope`.
pub fn data_dir(flag: Option<&PathBuf>) -> PathBuf {
    if let Some(d) = flag {
        return d.clone();
    }
    if let Some(d) = std::env::var_os("DISKSCOPE_DATA_DIR") {
        return PathBuf::from(d);
    }
    if let Some(d) = std::env::var_os("XDG_DATA_HOME") {
        return PathBuf::from(d).join("diskscope");
    }
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."));
    home.join(".local/share/diskscope")
}

/// Size of the default scratch target created in the data directory on first use.
pub const SCRATCH_SIZE: u64 = 1 << 30;
pub const SCRATCH_NAME: &str = "scratch.bin";

/// A positive size from environment variable `name` (a tuning knob), else `default`.
pub fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(default)
}
