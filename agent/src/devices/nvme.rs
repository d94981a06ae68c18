//! NVMe SMART / Health Information log page (log identifier 0x02), read with the admin
//! passthrough ioctl and decoded by the NVMe base specification's layout (little-endian;
//! temperatures in kelvin; data units of 1000 × 512 bytes; 128-bit counters).

use shared::devices::DeviceHealth;
use std::os::fd::AsRawFd;
use std::path::Path;

pub const LOG_LEN: usize = 512;
/// Bytes in one of the health log's data units (1000 × 512).
pub const DATA_UNIT: u128 = 512_000;

fn u16_at(b: &[u8], o: usize) -> u16 {
    u16::from_le_bytes([b[o], b[o + 1]])
}

fn u32_at(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]])
}

fn u128_at(b: &[u8], o: usize) -> u128 {
    let mut a = [0u8; 16];
    a.copy_from_slice(&b[o..o + 16]);
    u128::from_le_bytes(a)
}

fn kelvin(k: u16) -> Option<f64> {
    (k != 0).then(|| f64::from(k) - 273.15)
}

/// Decodes a health log page.
pub fn parse_health_log(b: &[u8; LOG_LEN]) -> DeviceHealth {
    let unit = DATA_UNIT;
    DeviceHealth {
        source: "nvme".into(),
        critical_warning: Some(b[0]),
        temperature_c: kelvin(u16_at(b, 1)),
        available_spare_pct: Some(b[3]),
        available_spare_threshold_pct: Some(b[4]),
        percentage_used: Some(b[5]),
        bytes_read: Some(u128_at(b, 32).saturating_mul(unit)),
        bytes_written: Some(u128_at(b, 48).saturating_mul(unit)),
        power_cycles: Some(u128_at(b, 112)),
        power_on_hours: Some(u128_at(b, 128)),
        unsafe_shutdowns: Some(u128_at(b, 144)),
        media_errors: Some(u128_at(b, 160)),
        warning_temp_minutes: Some(u32_at(b, 192)),
        critical_temp_minutes: Some(u32_at(b, 196)),
        sensors_c: (0..8)
            .filter_map(|i| kelvin(u16_at(b, 200 + 2 * i)))
            .collect(),
        thermal_t1_transitions: Some(u32_at(b, 216)),
        thermal_t2_transitions: Some(u32_at(b, 220)),
        thermal_t1_seconds: Some(u32_at(b, 224)),
        thermal_t2_seconds: Some(u32_at(b, 228)),
    }
}

/// `struct nvme_admin_cmd` of <linux/nvme_ioctl.h>.
#[repr(C)]
#[derive(Default)]
struct AdminCmd {
    opcode: u8,
    flags: u8,
    rsvd1: u16,
    nsid: u32,
    cdw2: u32,
    cdw3: u32,
    metadata: u64,
    addr: u64,
    metadata_len: u32,
    data_len: u32,
    cdw10: u32,
    cdw11: u32,
    cdw12: u32,
    cdw13: u32,
    cdw14: u32,
    cdw15: u32,
    timeout_ms: u32,
    result: u32,
}

/// `_IOWR('N', 0x41, struct nvme_admin_cmd)`.
const NVME_IOCTL_ADMIN_CMD: libc::c_ulong = 0xC048_4E41;

/// Reads the health log of the NVMe device (namespace or controller node) at `dev`.
pub fn read_health_log(dev: &Path) -> std::io::Result<[u8; LOG_LEN]> {
    let f = std::fs::File::open(dev)?;
    let mut buf = [0u8; LOG_LEN];
    let numd = (LOG_LEN / 4 - 1) as u32;
    let mut cmd = AdminCmd {
        opcode: 0x02,
        nsid: 0xFFFF_FFFF,
        addr: buf.as_mut_ptr() as u64,
        data_len: LOG_LEN as u32,
        cdw10: ((numd & 0xFFFF) << 16) | 0x02,
        cdw11: numd >> 16,
        ..AdminCmd::default()
    };
    // SAFETY: `cmd` is a valid nvme_admin_cmd whose `addr` points at `buf`, which outlives
    // the call and is `data_len` bytes long; the kernel writes at most that many bytes.
    let r = unsafe { libc::ioctl(f.as_raw_fd(), NVME_IOCTL_ADMIN_CMD as _, &mut cmd) };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    if r > 0 {
        return Err(std::io::Error::other(format!("NVMe status {r:#x}")));
    }
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A page built to the specification with known values.
    fn page() -> [u8; LOG_LEN] {
        let mut b = [0u8; LOG_LEN];
        b[0] = 0x02; // temperature warning
        b[1..3].copy_from_slice(&318u16.to_le_bytes()); // 44.85 °C
        b[3] = 100;
        b[4] = 10;
        b[5] = 3;
        b[32..48].copy_from_slice(&1_000_000u128.to_le_bytes());
        // 2^70 data units written: needs the full 128 bits.
        b[48..64].copy_from_slice(&(1u128 << 70).to_le_bytes());
        b[112..128].copy_from_slice(&1234u128.to_le_bytes());
        b[128..144].copy_from_slice(&5678u128.to_le_bytes());
        b[144..160].copy_from_slice(&42u128.to_le_bytes());
        b[160..176].copy_from_slice(&7u128.to_le_bytes());
        b[192..196].copy_from_slice(&15u32.to_le_bytes());
        b[196..200].copy_from_slice(&2u32.to_le_bytes());
        b[200..202].copy_from_slice(&323u16.to_le_bytes());
        b[202..204].copy_from_slice(&333u16.to_le_bytes());
        b[216..220].copy_from_slice(&9u32.to_le_bytes());
        b[220..224].copy_from_slice(&1u32.to_le_bytes());
        b[224..228].copy_from_slice(&600u32.to_le_bytes());
        b[228..232].copy_from_slice(&30u32.to_le_bytes());
        b
    }

    #[test]
    fn decodes_every_field_of_the_health_page() {
        let h = parse_health_log(&page());
        assert_eq!(h.critical_warning, Some(2));
        assert!((h.temperature_c.unwrap() - 44.85).abs() < 1e-9);
        assert_eq!(
            (
                h.available_spare_pct,
                h.available_spare_threshold_pct,
                h.percentage_used
            ),
            (Some(100), Some(10), Some(3))
        );
        assert_eq!(h.bytes_read, Some(512_000_000_000));
        assert_eq!(h.bytes_written, Some((1u128 << 70) * 512_000));
        assert_eq!(
            (
                h.power_cycles,
                h.power_on_hours,
                h.unsafe_shutdowns,
                h.media_errors
            ),
            (Some(1234), Some(5678), Some(42), Some(7))
        );
        assert_eq!(
            (h.warning_temp_minutes, h.critical_temp_minutes),
            (Some(15), Some(2))
        );
        assert_eq!(h.sensors_c.len(), 2, "absent sensors (0 K) are left out");
        assert!((h.sensors_c[1] - 59.85).abs() < 1e-9);
        assert_eq!(
            (
                h.thermal_t1_transitions,
                h.thermal_t2_transitions,
                h.thermal_t1_seconds,
                h.thermal_t2_seconds
            ),
            (Some(9), Some(1), Some(600), Some(30))
        );
    }

    #[test]
    fn the_admin_command_has_the_kernel_layout() {
        assert_eq!(std::mem::size_of::<AdminCmd>(), 72);
    }
}
