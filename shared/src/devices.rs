//! What the agent knows of the block devices on its host (`diskscope devices`,
//! `GET /api/v1/devices`): identity, geometry, transport, PCIe link, partitions, mounts,
//! holders, whether writes would be refused and why, and health/temperature when readable.

use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PcieLink {
    /// e.g. `16.0 GT/s PCIe`.
    pub current_speed: Option<String>,
    pub current_width: Option<u32>,
    pub max_speed: Option<String>,
    pub max_width: Option<u32>,
}

/// The link a device sits behind, and the most payload it can carry.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Link {
    /// `pcie`, `sata`, `usb` or `emulated`.
    pub kind: String,
    /// As the user knows it: `PCIe 8.0 GT/s x4`, `SATA 6.0 Gbps`, `USB 5000 Mb/s`.
    pub desc: String,
    /// The link's payload ceiling in MB/s (10^6 bytes per second), after line encoding:
    /// no transfer over it can be faster.
    pub mb_s: f64,
}

impl Link {
    /// A PCIe link from sysfs's `current_link_speed` (`8.0 GT/s PCIe`) and width: 8b/10b
    /// encoding up to 5 GT/s, 128b/130b from 8 GT/s.
    pub fn pcie(speed: &str, width: u32) -> Option<Link> {
        let gt: f64 = speed.split_whitespace().next()?.parse().ok()?;
        let enc = if gt < 8.0 { 0.8 } else { 128.0 / 130.0 };
        (gt > 0.0 && width > 0).then(|| Link {
            kind: "pcie".into(),
            desc: format!("PCIe {gt:.1} GT/s x{width}"),
            mb_s: gt * 1e3 * f64::from(width) * enc / 8.0,
        })
    }

    /// A SATA link from `sata_spd` (`6.0 Gbps`; 8b/10b).
    pub fn sata(spd: &str) -> Option<Link> {
        let g: f64 = spd.split_whitespace().next()?.parse().ok()?;
        (g > 0.0).then(|| Link {
            kind: "sata".into(),
            desc: format!("SATA {g:.1} Gbps"),
            mb_s: g * 1e3 * 0.8 / 8.0,
        })
    }

    /// A USB link from a USB device's `speed` in Mb/s (480, 5000, 10000, 20000): 8b/10b at
    /// 5 Gb/s, 128b/132b above; USB 2's protocol carries about 35 MB/s of 60.
    pub fn usb(mbit: &str) -> Option<Link> {
        let m: f64 = mbit.trim().parse().ok()?;
        let enc = match m {
            m if m <= 480.0 => 0.6,
            m if m <= 5000.0 => 0.8,
            _ => 128.0 / 132.0,
        };
        (m > 0.0).then(|| Link {
            kind: "usb".into(),
            desc: format!("USB {m:.0} Mb/s"),
            mb_s: m * enc / 8.0,
        })
    }
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
    /// The link the device sits behind (PCIe, SATA, USB), when sysfs tells.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<Link>,
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
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FsInfo {
    /// `ext4`, `xfs`, `tmpfs`, `fuse`, ...
    pub fs_type: String,
    pub mount_point: String,
    pub free_bytes: u64,
    pub direct_io: bool,
}

/// A 128-bit NVMe counter as printed: no drive's count reaches 2^64, and printing a `u64`
/// keeps 128-bit formatting out of the dashboard's bundle.
pub fn count(n: u128) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
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
        out.push(format!("{} new media error(s)", count(n)));
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

#[cfg(test)]
mod link_tests {
    use super::Link;

    #[test]
    fn link_ceilings_follow_the_encoding() {
        let l = Link::pcie("8.0 GT/s PCIe", 4).expect("pcie");
        assert!((l.mb_s - 3938.5).abs() < 1.0, "{l:?}");
        assert_eq!(l.desc, "PCIe 8.0 GT/s x4");
        assert_eq!(Link::pcie("2.5 GT/s PCIe", 1).map(|l| l.mb_s), Some(250.0));
        assert_eq!(Link::sata("6.0 Gbps").map(|l| l.mb_s), Some(600.0));
        assert_eq!(Link::usb("5000").map(|l| l.mb_s), Some(500.0));
        assert_eq!(Link::usb("480").map(|l| l.mb_s), Some(36.0));
        assert!(Link::sata("<unknown>").is_none());
    }
}
