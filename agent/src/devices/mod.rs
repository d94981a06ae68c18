//! The host's block devices and their health: discovery from sysfs ([`sysfs`]), the NVMe
//! health log through the admin passthrough ioctl ([`nvme`]), `smartctl --json` for
//! SATA/SAS/USB ([`smart`]), and hwmon temperature as the fallback.

pub mod nvme;
pub mod power;
pub mod smart;
pub mod sysfs;

use shared::devices::{DeviceHealth, DeviceInfo};
use std::path::Path;

/// Health of one device from the best source it offers, `None` when none answers.
pub fn health(d: &DeviceInfo) -> Option<DeviceHealth> {
    let dev = Path::new(&d.path);
    if d.transport == "nvme" {
        if let Ok(page) = nvme::read_health_log(dev) {
            return Some(nvme::parse_health_log(&page));
        }
    }
    if matches!(d.transport.as_str(), "sata/scsi" | "usb" | "nvme") {
        if let Some(h) = smart::read(dev) {
            return Some(h);
        }
    }
    let info = crate::io_target::TargetInfo {
        path: dev.to_path_buf(),
        kind: crate::io_target::TargetKind::Block,
        size: d.size,
        logical_block_size: d.logical_block_size,
        pin: None,
        created: false,
    };
    let t = crate::temperature::TempSource::for_target(&info)?.read()?;
    Some(DeviceHealth {
        source: "hwmon".into(),
        temperature_c: Some(t),
        ..DeviceHealth::default()
    })
}

/// Every device with its health (blocking: ioctls and smartctl).
pub fn list() -> Vec<DeviceInfo> {
    let mut all = sysfs::discover_system();
    for d in &mut all {
        d.health = health(d);
    }
    all
}

/// The block device under `target` (itself, or the whole disk holding the file's
/// filesystem), with its health now. `None` for files on virtual filesystems.
pub fn under(target: &crate::io_target::TargetInfo) -> Option<DeviceInfo> {
    let mut d = identify(target)?;
    d.health = health(&d);
    Some(d)
}

/// The block device under `target`, without its health (no ioctl, no smartctl).
pub fn identify(target: &crate::io_target::TargetInfo) -> Option<DeviceInfo> {
    let real = crate::iopath::sysfs_dir(target)?;
    // A partition's directory sits inside its disk's.
    let disk = if real.join("partition").exists() {
        real.parent()?.to_path_buf()
    } else {
        real
    };
    let name = disk.file_name()?.to_string_lossy().into_owned();
    sysfs::describe_system(&name)
}

/// The filesystem a file target lives on.
pub fn filesystem(target: &crate::io_target::TargetInfo) -> Option<shared::devices::FsInfo> {
    use std::os::unix::fs::MetadataExt;
    if target.kind != crate::io_target::TargetKind::File {
        return None;
    }
    let meta = std::fs::metadata(&target.path).ok()?;
    let id = format!("{}:{}", libc::major(meta.dev()), libc::minor(meta.dev()));
    let info = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    // The longest mount point of that device that contains the file.
    let m = sysfs::mount_entries(&info)
        .filter(|m| m.dev == id && target.path.starts_with(m.mount_point))
        .max_by_key(|m| m.mount_point.len())?;
    let (mount_point, fs_type) = (m.mount_point.to_string(), m.fs_type.to_string());
    let free_bytes = crate::io_target::free_space(&target.path).unwrap_or(0);
    let direct_io = {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECT)
            .open(&target.path)
            .is_ok()
    };
    Some(shared::devices::FsInfo {
        fs_type,
        mount_point,
        free_bytes,
        direct_io,
    })
}

/// Health and identity before a run, to compare with after.
pub struct Snapshot {
    device: Option<DeviceInfo>,
    filesystem: Option<shared::devices::FsInfo>,
    link: Option<shared::devices::Link>,
}

/// The file beside a file target in which the emulated drive (`diskscope emulate`) publishes
/// its link's MB/s, as it publishes its temperature in `hwmon/temp1_input`.
pub const EMULATED_LINK_FILE: &str = "link_mb_s";

/// The emulated link beside a file target, if any.
fn emulated_link(target: &crate::io_target::TargetInfo) -> Option<shared::devices::Link> {
    if target.kind != crate::io_target::TargetKind::File {
        return None;
    }
    let text = std::fs::read_to_string(target.path.parent()?.join(EMULATED_LINK_FILE)).ok()?;
    let mb_s: f64 = text.trim().parse().ok()?;
    (mb_s > 0.0).then(|| shared::devices::Link {
        kind: "emulated".into(),
        desc: "emulated link".into(),
        mb_s,
    })
}

impl Snapshot {
    pub fn take(target: &crate::io_target::TargetInfo) -> Snapshot {
        let device = under(target);
        let link = device
            .as_ref()
            .and_then(|d| d.link.clone())
            .or_else(|| emulated_link(target));
        Snapshot {
            device,
            filesystem: filesystem(target),
            link,
        }
    }

    /// Records the snapshot and the device's health now into the report's environment, and
    /// what changed on the drive as warnings.
    pub fn finish(self, env: &mut shared::Environment, run_wrote: u64) {
        if let Some(d) = &self.device {
            let after = health(d);
            if let (Some(b), Some(a)) = (&d.health, &after) {
                env.warnings.extend(
                    shared::devices::health_changes(b, a, run_wrote)
                        .into_iter()
                        .map(|c| format!("drive: {c}")),
                );
            }
            env.device_after = after;
        }
        env.link = self.link;
        env.rotational = self
            .device
            .as_ref()
            .filter(|d| matches!(d.transport.as_str(), "sata/scsi" | "usb" | "nvme"))
            .map(|d| d.rotational);
        env.device_before = self.device;
        env.filesystem = self.filesystem;
    }
}
