//! Refuses writes to block devices that something else is using: mounted (itself or one of
//! its partitions), used as swap, or held by another device (LVM, MD, dm-crypt); and finds
//! partition tables and filesystem signatures, which the service refuses to overwrite unless
//! the operator armed the device. Reads are always allowed. Reasons are collected so the
//! error says exactly why.

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

/// Known on-disk signatures: (byte offset, magic, what it means).
const SIGNATURES: &[(u64, &[u8], &str)] = &[
    (510, &[0x55, 0xAA], "an MBR partition table or boot sector"),
    (512, b"EFI PART", "a GPT partition table"),
    (4096, b"EFI PART", "a GPT partition table (4K sectors)"),
    (1080, &[0x53, 0xEF], "an ext2/3/4 filesystem"),
    (0, b"XFSB", "an XFS filesystem"),
    (65600, b"_BHRfS_M", "a btrfs filesystem"),
    (3, b"NTFS    ", "an NTFS filesystem"),
    (82, b"FAT32   ", "a FAT32 filesystem"),
    (54, b"FAT1", "a FAT filesystem"),
    (0, b"LUKS\xba\xbe", "a LUKS encrypted volume"),
    (536, b"LVM2 001", "an LVM physical volume"),
    (4086, b"SWAPSPACE2", "a swap area"),
    (32769, b"CD001", "an ISO 9660 filesystem"),
    (3, b"EXFAT   ", "an exFAT filesystem"),
    (0, b"ZFS", "a ZFS label"),
];

/// Which signatures the first bytes of a device carry.
pub fn signatures(head: &[u8]) -> Vec<&'static str> {
    let mut found: Vec<&'static str> = SIGNATURES
        .iter()
        .filter(|(off, magic, _)| {
            let off = *off as usize;
            head.get(off..off + magic.len()) == Some(*magic)
        })
        .map(|(_, _, what)| *what)
        .collect();
    found.dedup();
    found
}

/// Bytes to read from the start of a device to see every signature above.
pub const SIGNATURE_SPAN: usize = 65600 + 8;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_signatures_at_their_offsets() {
        let mut head = vec![0u8; SIGNATURE_SPAN];
        assert!(signatures(&head).is_empty());
        head[1080] = 0x53;
        head[1081] = 0xEF;
        assert_eq!(signatures(&head), vec!["an ext2/3/4 filesystem"]);
        head[512..520].copy_from_slice(b"EFI PART");
        assert_eq!(signatures(&head).len(), 2);
        assert!(
            signatures(&head[..100]).is_empty(),
            "a short read finds nothing it cannot see"
        );
    }
}
