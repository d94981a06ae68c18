//! Named workloads the agent offers (`GET /api/v1/presets`, `"preset": NAME`). Single-step
//! for now; multi-step presets (CrystalDiskMark grid, ATTO sweep, ...) build on these.

use shared::api::Preset;
use shared::{RwMode, WorkloadSpec};

fn preset(name: &str, description: &str, rw: RwMode, bs: u64, iodepth: u32, secs: u64) -> Preset {
    Preset {
        name: name.to_string(),
        description: description.to_string(),
        spec: WorkloadSpec {
            rw,
            bs,
            iodepth,
            runtime_ms: Some(secs * 1000),
            ..WorkloadSpec::default()
        },
    }
}

/// Every preset, the default (`quick`) first.
pub fn all() -> Vec<Preset> {
    vec![
        preset(
            "quick",
            "sequential 1 MiB writes, QD8, 10 s: cache and sustained write rate at a glance",
            RwMode::Write,
            1 << 20,
            8,
            10,
        ),
        preset(
            "seq1m-q8-read",
            "SEQ1M Q8T1 read, 10 s",
            RwMode::Read,
            1 << 20,
            8,
            10,
        ),
        preset(
            "seq1m-q8-write",
            "SEQ1M Q8T1 write, 10 s",
            RwMode::Write,
            1 << 20,
            8,
            10,
        ),
        preset(
            "rnd4k-q32-read",
            "RND4K Q32T1 read, 10 s",
            RwMode::RandRead,
            4096,
            32,
            10,
        ),
        preset(
            "rnd4k-q32-write",
            "RND4K Q32T1 write, 10 s",
            RwMode::RandWrite,
            4096,
            32,
            10,
        ),
        preset(
            "rnd4k-q1-read",
            "RND4K Q1T1 read, 10 s",
            RwMode::RandRead,
            4096,
            1,
            10,
        ),
        preset(
            "rnd4k-q1-write",
            "RND4K Q1T1 write, 10 s",
            RwMode::RandWrite,
            4096,
            1,
            10,
        ),
    ]
}

pub fn find(name: &str) -> Option<Preset> {
    all().into_iter().find(|p| p.name == name)
}

#[cfg(test)]
mod tests {
    #[test]
    fn presets_are_valid_and_unique() {
        let all = super::all();
        assert_eq!(all[0].name, "quick");
        for p in &all {
            assert!(p.spec.validate().is_ok(), "{}", p.name);
            assert_eq!(all.iter().filter(|q| q.name == p.name).count(), 1);
        }
    }
}
