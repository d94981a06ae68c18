//! Refuses writes to block devices that something else is using: mounted (itself or one of
//! its partitions), used as swap, or held by another device (LVM, MD, dm-crypt). Reads are
//! always allowed. Reasons are collected so the error says exactly why.

use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

/// `major:minor` of a device number, as sysfs and mountinfo write it.
fn dev_id(rdev: u64) -> String {
    format!("{}:{}", libc::major(rdev), libc::minor(rdev))
}

/// Device numbers of a block device and of its partitions, with their names.
fn device_and_partitions(rdev: u64) -> Vec<(String, String)> {
    let id = dev_id(rdev);
    let base = Path::new("/sys/dev/block").join(&id);
    let name = std::fs::canonicalize(&base)
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| id.clone());
    let mut out = vec![(id, name)];
    if let Ok(entries) = std::fs::read_dir(&base) {
        for e in entries.filter_map(Result::ok) {
            let p = e.path();
            if p.join("partition").exists() {
                if let Ok(dev) = std::fs::read_to_string(p.join("dev")) {
                    out.push((
                        dev.trim().to_string(),
                        e.file_name().to_string_lossy().into_owned(),
                    ));
                }
            }
        }
    }
    out
}

/// Why writing to the block device with device number `rdev` would hurt something.
pub fn in_use_reasons(rdev: u64) -> Vec<String> {
    let devs = device_and_partitions(rdev);
    let mut reasons = Vec::new();
    if let Ok(info) = std::fs::read_to_string("/proc/self/mountinfo") {
        for line in info.lines() {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() < 5 {
                continue;
            }
            if let Some((_, name)) = devs.iter().find(|(id, _)| id == f[2]) {
                reasons.push(format!("{name} is mounted at {}", f[4]));
            }
        }
    }
    if let Ok(swaps) = std::fs::read_to_string("/proc/swaps") {
        for line in swaps.lines().skip(1) {
            let Some(swap) = line.split_whitespace().next() else {
                continue;
            };
            let Ok(meta) = std::fs::metadata(swap) else {
                continue;
            };
            if meta.file_type().is_block_device() {
                if let Some((_, name)) = devs.iter().find(|(id, _)| *id == dev_id(meta.rdev())) {
                    reasons.push(format!("{name} is in use as swap"));
                }
            }
        }
    }
    for (id, name) in &devs {
        let holders = Path::new("/sys/dev/block").join(id).join("holders");
        if let Ok(entries) = std::fs::read_dir(holders) {
            for h in entries.filter_map(Result::ok) {
                reasons.push(format!(
                    "{name} is held by {}",
                    h.file_name().to_string_lossy()
                ));
            }
        }
    }
    reasons
}
