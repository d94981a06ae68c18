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
