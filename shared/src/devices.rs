//! What the agent knows of the block devices on its host (`diskscope devices`,
//! `GET /api/v1/devices`): identity, geometry, transport, PCIe link, partitions, mounts,
//! holders, whether writes would be refused and why, and health/temperature when readable.

use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct PcieLink {
    /// e.g. `16.0 GT/s PCIe`.
    pub current_speed: Option<String>,
    pub current_width: Option<u32>,
    pub max_speed: Option<String>,
    pub max_width: Option<u32>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct DeviceInfo {
    /// `/dev/nvme0n1`.
    pub path: String,
    pub name: String,
    pub model: Option<String>,
    pub serial: Option<String>,
    pub firmware: Option<String>,
    pub wwn: Option<String>,
    /// Bytes.
    pub size: u64,
    pub logical_block_size: u32,
    pub physical_block_size: u32,
    pub rotational: bool,
    /// `nvme`, `sata/scsi`, `usb`, `virtio`, `loop`, `dm`, `md`, `mmc` or `unknown`.
    pub transport: String,
    pub pcie: Option<PcieLink>,
    pub partitions: Vec<String>,
    /// `name on mountpoint` for the device and its partitions.
    pub mounts: Vec<String>,
    pub holders: Vec<String>,
    pub swap: bool,
    /// Why a write would be refused (mounted, swap, held); empty when free.
    pub in_use: Vec<String>,
    pub health: Option<DeviceHealth>,
}

/// Health and wear as the device reports it. Counters are absent when the source has none.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct DeviceHealth {
    /// `nvme` (health log page 0x02), `smartctl` or `hwmon`.
    pub source: String,
    pub temperature_c: Option<f64>,
    /// Further temperature sensors (NVMe sensors 1..8).
    pub sensors_c: Vec<f64>,
    pub critical_warning: Option<u8>,
    pub available_spare_pct: Option<u8>,
    pub available_spare_threshold_pct: Option<u8>,
    pub percentage_used: Option<u8>,
    /// Bytes read and written according to the drive.
    pub bytes_read: Option<u128>,
    pub bytes_written: Option<u128>,
    pub power_cycles: Option<u128>,
    pub power_on_hours: Option<u128>,
    pub unsafe_shutdowns: Option<u128>,
    pub media_errors: Option<u128>,
    pub warning_temp_minutes: Option<u32>,
    pub critical_temp_minutes: Option<u32>,
    pub thermal_t1_transitions: Option<u32>,
    pub thermal_t2_transitions: Option<u32>,
    pub thermal_t1_seconds: Option<u32>,
    pub thermal_t2_seconds: Option<u32>,
}

/// Where a file target lives.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct FsInfo {
    /// `ext4`, `xfs`, `tmpfs`, `fuse`, ...
    pub fs_type: String,
    pub mount_point: String,
    pub free_bytes: u64,
    pub direct_io: bool,
}

/// What changed on the drive during a run, one line each (the drive's own byte counter next
/// to what the run wrote, throttle counters that moved, wear, errors).
pub fn health_changes(before: &DeviceHealth, after: &DeviceHealth, run_wrote: u64) -> Vec<String> {
    /// How much a counter grew, when both readings exist and it did not go backwards.
    fn grew<T: PartialOrd + std::ops::Sub<Output = T>>(a: Option<T>, b: Option<T>) -> Option<T> {
        match (a, b) {
            (Some(a), Some(b)) if b >= a => Some(b - a),
            _ => None,
        }
    }
    let mut out = Vec::new();
    if let Some(w) = grew(before.bytes_written, after.bytes_written) {
        out.push(format!(
            "the drive counted {:.2} GB written (the run wrote {:.2} GB)",
            w as f64 / 1e9,
            run_wrote as f64 / 1e9
        ));
    }
    if let Some(n) =
        grew(before.thermal_t1_transitions, after.thermal_t1_transitions).filter(|n| *n > 0)
    {
        out.push(format!("thermal throttling (T1) engaged {n} time(s)"));
    }
    if let Some(n) =
        grew(before.thermal_t2_transitions, after.thermal_t2_transitions).filter(|n| *n > 0)
    {
        out.push(format!("heavy thermal throttling (T2) engaged {n} time(s)"));
    }
    if let Some(n) =
        grew(before.warning_temp_minutes, after.warning_temp_minutes).filter(|n| *n > 0)
    {
        out.push(format!("{n} minute(s) above the warning temperature"));
    }
    if let Some(n) = grew(before.media_errors, after.media_errors).filter(|n| *n > 0) {
        out.push(format!("{n} new media error(s)"));
    }
    if let (Some(a), Some(b)) = (before.percentage_used, after.percentage_used) {
        if b > a {
            out.push(format!("wear rose from {a} % to {b} % used"));
        }
    }
    if let (Some(a), Some(b)) = (before.temperature_c, after.temperature_c) {
        out.push(format!("temperature {a:.0} °C before, {b:.0} °C after"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_name_what_moved() {
        let before = DeviceHealth {
            bytes_written: Some(1_000_000_000_000),
            thermal_t1_transitions: Some(4),
            temperature_c: Some(41.0),
            ..DeviceHealth::default()
        };
        let after = DeviceHealth {
            bytes_written: Some(1_012_300_000_000),
            thermal_t1_transitions: Some(7),
            temperature_c: Some(68.0),
            ..DeviceHealth::default()
        };
        let c = health_changes(&before, &after, 12_000_000_000);
        assert_eq!(
            c[0],
            "the drive counted 12.30 GB written (the run wrote 12.00 GB)"
        );
        assert_eq!(c[1], "thermal throttling (T1) engaged 3 time(s)");
        assert_eq!(c[2], "temperature 41 °C before, 68 °C after");
    }
}
