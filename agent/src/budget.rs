//! The memory budget of a run: what a plan will pin (buffers rounded up to whole 2 MiB huge
//! pages and faulted in at set-up, rings, per-job state) is computed before anything
//! starts, and a plan over the budget is refused naming the fields that size it. The budget
//! is half of the machine's RAM unless `--max-memory` says otherwise, so that no request,
//! however large the validator lets its fields be, can get the agent OOM-killed.

use crate::engine::buf::BufferPool;
use shared::{SpecError, WorkloadSpec};
use std::sync::OnceLock;

static MAX_MEMORY: OnceLock<u64> = OnceLock::new();

/// Per-job bytes beyond the buffers: ring, slots, interval histograms, offset generator.
const JOB_OVERHEAD: u64 = 1 << 20;

/// Sets the budget (`--max-memory`); the first call wins.
pub fn set_max(bytes: u64) {
    let _ = MAX_MEMORY.set(bytes);
}

/// The budget in bytes: `--max-memory`, else half of `MemTotal`.
pub fn max() -> u64 {
    *MAX_MEMORY.get_or_init(|| mem_total().map_or(1 << 30, |t| t / 2))
}

fn mem_total() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Bytes one workload pins while it runs, per target: each job's buffer pool as the engine
/// lays it out, and the job's state.
pub fn needed(spec: &WorkloadSpec) -> u64 {
    let buffers = u64::from(spec.iodepth).saturating_mul(spec.buffer_sets());
    let huge = spec.iomem == shared::spec::BufferMemory::Huge;
    BufferPool::footprint(spec.buffer_bs(), buffers, huge)
        .saturating_add(JOB_OVERHEAD)
        .saturating_mul(u64::from(spec.jobs))
}

/// Refuses a workload on `targets` targets at once that needs more than the budget.
pub fn check(spec: &WorkloadSpec, targets: u64) -> Result<(), SpecError> {
    let need = needed(spec).saturating_mul(targets.max(1));
    let max = max();
    if need <= max {
        return Ok(());
    }
    let on = if targets > 1 {
        format!(" on {targets} targets")
    } else {
        String::new()
    };
    Err(SpecError::new(
        "jobs",
        spec.jobs,
        format!(
            "jobs {} × iodepth {} × bs {}{on} needs {} MiB of memory, over the agent's budget of {} MiB (--max-memory): lower jobs, iodepth or bs",
            spec.jobs,
            spec.iodepth,
            spec.buffer_bs(),
            need >> 20,
            max >> 20
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_largest_spec_the_validator_accepts_is_over_any_budget() {
        let mut spec = WorkloadSpec {
            jobs: 64,
            iodepth: 64,
            bs: 32 << 20,
            ..WorkloadSpec::default()
        };
        assert!(spec.validate().is_ok(), "the validator alone lets it pass");
        assert_eq!(needed(&spec), 64 * (2048 << 20) + 64 * JOB_OVERHEAD);
        let e = check(&spec, 1).unwrap_err();
        assert_eq!(e.field, "jobs");
        assert!(e.to_string().contains("131136 MiB"), "{e}");
        // Buffers sit on whole 4 KiB pages: 1024 × 512 B takes 4 MiB, not 512 KiB.
        spec.jobs = 1;
        spec.iodepth = 1024;
        spec.bs = 512;
        assert_eq!(needed(&spec), (4 << 20) + JOB_OVERHEAD);
    }

    #[test]
    fn the_estimate_is_what_a_pool_faults_in() {
        for (len, count) in [(512usize, 1024usize), (4096, 1), (1 << 20, 3), (3 << 20, 2)] {
            let pool = BufferPool::new(len, count, true).expect("pool");
            let ours = BufferPool::footprint(len as u64, count as u64, true);
            assert_eq!(ours, pool.mapped_bytes(), "{len} × {count}");
            // The kernel's account (smaps) of the huge pages it faulted in, when THP is on.
            if pool.huge_bytes() > 0 {
                assert_eq!(ours, pool.huge_bytes(), "{len} × {count}: smaps");
            }
            // In 4 KiB pages (fio's iomem=malloc): whole pages, none of them huge.
            let pages = BufferPool::new(len, count, false).expect("pool");
            let ours = BufferPool::footprint(len as u64, count as u64, false);
            assert_eq!(ours, pages.mapped_bytes(), "{len} × {count} in pages");
            assert_eq!(pages.huge_bytes(), 0, "{len} × {count} in pages");
        }
    }
}
