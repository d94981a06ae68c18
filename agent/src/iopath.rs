//! What the kernel did with a run's I/O, measured per run: the block device's request
//! counters (`/sys/dev/block/M:m/stat`) before and after, to tell whether the block layer
//! split the run's I/Os, and the CPU time of io_uring's worker threads (`iou-wrk-*`, from
//! `/proc/self/task/*/schedstat`), to tell whether the kernel handed I/O to workers instead
//! of issuing it inline. Both change the figures (a split 1 MiB read from 4 KiB pages ran at
//! half speed on virtio), so a report states them instead of assuming them from settings.
//!
//! In `serve`, runs on other targets at the same time share the process: their worker
//! threads count here too. The device counters include other traffic to the same device;
//! requests per I/O is only computed when the device saw at least half the run's bytes.

use crate::io_target::{TargetInfo, TargetKind};
use shared::{IoPath, RunSummary};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The sysfs directory of the block device under `target` (the device itself, or the
/// partition or disk holding the file's filesystem). `None` for virtual filesystems
/// (tmpfs, FUSE) and label targets.
pub fn sysfs_dir(target: &TargetInfo) -> Option<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    if target.kind == TargetKind::None {
        return None;
    }
    let meta = std::fs::metadata(&target.path).ok()?;
    let devno = match target.kind {
        TargetKind::Block => meta.rdev(),
        _ => meta.dev(),
    };
    let sysdev =
        Path::new("/sys/dev/block").join(format!("{}:{}", libc::major(devno), libc::minor(devno)));
    std::fs::canonicalize(sysdev).ok()
}

/// A block device's completed requests and sectors (`stat`: fields 1, 3, 5, 7).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct DiskCounters {
    reads: u64,
    read_bytes: u64,
    writes: u64,
    write_bytes: u64,
}

impl DiskCounters {
    fn parse(stat: &str) -> Option<DiskCounters> {
        let f: Vec<u64> = stat
            .split_whitespace()
            .map(str::parse)
            .collect::<Result<_, _>>()
            .ok()?;
        (f.len() >= 7).then(|| DiskCounters {
            reads: f[0],
            read_bytes: f[2] * 512,
            writes: f[4],
            write_bytes: f[6] * 512,
        })
    }

    fn read(dir: &Path) -> Option<DiskCounters> {
        DiskCounters::parse(&std::fs::read_to_string(dir.join("stat")).ok()?)
    }
}

/// Run time (ns) of every io_uring worker thread of this process now.
fn worker_times() -> HashMap<u32, u64> {
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return HashMap::new();
    };
    dir.filter_map(Result::ok)
        .filter_map(|t| {
            let comm = std::fs::read_to_string(t.path().join("comm")).ok()?;
            if !comm.starts_with("iou-wrk") {
                return None;
            }
            let tid = t.file_name().to_str()?.parse().ok()?;
            let ns = std::fs::read_to_string(t.path().join("schedstat"))
                .ok()
                .and_then(|s| s.split_whitespace().next()?.parse().ok())
                .unwrap_or(0);
            Some((tid, ns))
        })
        .collect()
}

/// Watches one run: take it before the jobs start, poll it now and then (a worker thread
/// exits a few seconds after its last I/O), finish it after the jobs ended.
#[derive(Debug)]
pub struct Probe {
    dir: Option<PathBuf>,
    before: Option<DiskCounters>,
    /// Worker threads that existed at the start, with their run time then.
    baseline: HashMap<u32, u64>,
    /// Every worker seen since, with its latest run time.
    latest: HashMap<u32, u64>,
}

impl Probe {
    pub fn start(target: &TargetInfo) -> Probe {
        let dir = sysfs_dir(target);
        let before = dir.as_deref().and_then(DiskCounters::read);
        let baseline = worker_times();
        Probe {
            dir,
            before,
            latest: baseline.clone(),
            baseline,
        }
    }

    pub fn poll(&mut self) {
        for (tid, ns) in worker_times() {
            let e = self.latest.entry(tid).or_insert(0);
            *e = (*e).max(ns);
        }
    }

    /// The run's I/O path, given what it measured and its buffers.
    pub fn finish(mut self, summary: &RunSummary, buffers: (u64, u64)) -> IoPath {
        self.poll();
        let mut p = IoPath {
            buffer_bytes: buffers.0,
            huge_page_bytes: buffers.1,
            ..IoPath::default()
        };
        let (mut threads, mut ns) = (0u32, 0u64);
        for (tid, now) in &self.latest {
            let ran = now.saturating_sub(self.baseline.get(tid).copied().unwrap_or(0));
            let new = !self.baseline.contains_key(tid);
            if ran > 0 || new {
                threads += 1;
                ns += ran;
            }
        }
        p.worker_threads = threads;
        p.worker_cpu_ms = ns as f64 / 1e6;
        let (Some(dir), Some(before)) = (&self.dir, self.before) else {
            return p;
        };
        let Some(after) = DiskCounters::read(dir) else {
            return p;
        };
        p.device = dir.file_name().map(|n| n.to_string_lossy().into_owned());
        p.device_reads = after.reads.saturating_sub(before.reads);
        p.device_read_bytes = after.read_bytes.saturating_sub(before.read_bytes);
        p.device_writes = after.writes.saturating_sub(before.writes);
        p.device_write_bytes = after.write_bytes.saturating_sub(before.write_bytes);
        p.read_requests_per_io = requests_per_io(
            p.device_reads,
            p.device_read_bytes,
            summary.read.ios,
            summary.read.bytes,
        );
        p.write_requests_per_io = requests_per_io(
            p.device_writes,
            p.device_write_bytes,
            summary.write.ios,
            summary.write.bytes,
        );
        p
    }
}

/// The run's mean I/O size over the device's mean request size: 1 when every I/O went to
/// the device as one request, 2 when each was split in two, below 1 when requests were
/// merged. Ramp I/Os reach the device but not the summary, so sizes are compared, not
/// counts. `None` when the device saw less than half of the run's bytes (page cache, the
/// data went elsewhere) or either side has nothing.
fn requests_per_io(dev_reqs: u64, dev_bytes: u64, ios: u64, bytes: u64) -> Option<f64> {
    if dev_reqs == 0 || ios == 0 || bytes == 0 || dev_bytes * 2 < bytes {
        return None;
    }
    let io_size = bytes as f64 / ios as f64;
    let req_size = dev_bytes as f64 / dev_reqs as f64;
    Some(io_size / req_size)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disk_stat_fields() {
        let c = DiskCounters::parse(
            "   12345      6   987654   321   4567   89   1000000   55   0   400   900   0 0 0 0 0 0",
        )
        .expect("stat");
        assert_eq!(
            c,
            DiskCounters {
                reads: 12345,
                read_bytes: 987654 * 512,
                writes: 4567,
                write_bytes: 1000000 * 512,
            }
        );
        assert!(DiskCounters::parse("1 2 x").is_none());
    }

    #[test]
    fn requests_per_io_compares_sizes() {
        // 1,000 reads of 1 MiB that reached the device as 2,000 requests of 512 KiB.
        let r = requests_per_io(2000, 1000 << 20, 1000, 1000 << 20).expect("ratio");
        assert!((r - 2.0).abs() < 1e-9);
        // A ramp adds requests and bytes alike: the ratio stays 1.
        let r = requests_per_io(1200, 1200 << 12, 1000, 1000 << 12).expect("ratio");
        assert!((r - 1.0).abs() < 1e-9);
        // The device saw almost nothing of it (page cache): no claim.
        assert_eq!(requests_per_io(3, 3 << 12, 1000, 1000 << 12), None);
        assert_eq!(requests_per_io(0, 0, 0, 0), None);
    }

    #[test]
    fn label_targets_have_no_device() {
        let t = TargetInfo {
            path: PathBuf::from("none"),
            kind: TargetKind::None,
            size: 0,
            logical_block_size: 512,
            pin: None,
            created: false,
        };
        let p = Probe::start(&t).finish(&RunSummary::default(), (2 << 20, 2 << 20));
        assert_eq!(p.device, None);
        assert_eq!(p.backing(), "2 MiB huge pages");
    }
}
