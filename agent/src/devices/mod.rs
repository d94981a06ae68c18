//! The host's block devices and their health: discovery from sysfs ([`sysfs`]), the NVMe
//! health log through the admin passthrough ioctl ([`nvme`]), `smartctl --json` for
//! SATA/SAS/USB ([`smart`]), and hwmon temperature as the fallback.

pub mod nvme;
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
    let info = crate::target::TargetInfo {
        path: dev.to_path_buf(),
        kind: crate::target::TargetKind::Block,
        size: d.size,
        logical_block_size: d.logical_block_size,
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
