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

/// One admin command with a data buffer: the controller's completion dword (`result`).
fn admin(dev: &Path, opcode: u8, cdw10: u32, buf: &mut [u8]) -> std::io::Result<u32> {
    let f = std::fs::File::open(dev)?;
    let mut cmd = AdminCmd {
        opcode,
        addr: buf.as_mut_ptr() as u64,
        data_len: buf.len() as u32,
        cdw10,
        ..AdminCmd::default()
    };
    // SAFETY: as in `read_health_log`: `addr` points at `buf`, `data_len` bytes long, which
    // outlives the call.
    let r = unsafe { libc::ioctl(f.as_raw_fd(), NVME_IOCTL_ADMIN_CMD as _, &mut cmd) };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    if r > 0 {
        return Err(std::io::Error::other(format!("NVMe status {r:#x}")));
    }
    Ok(cmd.result)
}

/// Identify Controller (CNS 1): 4096 bytes.
pub fn identify_controller(dev: &Path) -> std::io::Result<Vec<u8>> {
    let mut buf = vec![0u8; 4096];
    admin(dev, 0x06, 1, &mut buf)?;
    Ok(buf)
}

/// Get Features, Autonomous Power State Transition (0x0C): whether it is enabled, and its
/// 256-byte table.
pub fn apst(dev: &Path) -> std::io::Result<(bool, Vec<u8>)> {
    let mut buf = vec![0u8; 256];
    let result = admin(dev, 0x0A, 0x0C, &mut buf)?;
    Ok((result & 1 == 1, buf))
}

/// The power state descriptors of an Identify Controller page (NPSS at byte 263 is their
/// count less one; each 32 bytes from byte 2048: max power in centiwatts, or in 0.0001 W
/// with MXPS; non-operational; entry and exit latencies in µs), and whether APST is
/// supported (APSTA, byte 265 bit 0).
pub fn power_states(id: &[u8]) -> (Vec<shared::probe::NvmeState>, bool) {
    if id.len() < 4096 {
        return (Vec::new(), false);
    }
    let n = usize::from(id[263]) + 1;
    let states = (0..n.min(32))
        .map(|i| {
            let d = &id[2048 + 32 * i..2048 + 32 * (i + 1)];
            let scale = if d[3] & 1 == 1 { 1e-4 } else { 1e-2 };
            shared::probe::NvmeState {
                state: i as u8,
                max_power_w: f64::from(u16_at(d, 0)) * scale,
                non_operational: d[3] & 2 == 2,
                entry_latency_us: u32_at(d, 4),
                exit_latency_us: u32_at(d, 8),
            }
        })
        .collect();
    (states, id[265] & 1 == 1)
}

/// The APST table's entries that transition (bits 7:3 the state to go to, bits 31:8 the
/// idle time in ms), each by the state it is for.
pub fn apst_entries(table: &[u8]) -> Vec<shared::probe::ApstEntry> {
    (0..table.len() / 8)
        .filter_map(|i| {
            let v = u32_at(table, 8 * i);
            let idle_ms = v >> 8;
            (idle_ms > 0).then_some(shared::probe::ApstEntry {
                from: i as u8,
                state: ((v >> 3) & 0x1F) as u8,
                idle_ms,
            })
        })
        .collect()
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

    /// A controller of three operational states and two non-operational ones (a typical
    /// client drive's table), APST on: PS0 → PS3 after 100 ms, PS3 → PS4 after 2 s.
    #[test]
    fn power_states_and_apst_decode_by_the_specification() {
        let mut id = vec![0u8; 4096];
        id[263] = 4;
        id[265] = 1;
        let psd = [
            (900u16, 0u8, 0u32, 0u32),
            (460, 0, 0, 0),
            (380, 0, 0, 0),
            (500, 3, 2000, 2000),
            (50, 3, 2000, 10_000),
        ];
        for (i, (mp, flags, enlat, exlat)) in psd.iter().enumerate() {
            let d = 2048 + 32 * i;
            id[d..d + 2].copy_from_slice(&mp.to_le_bytes());
            id[d + 3] = *flags;
            id[d + 4..d + 8].copy_from_slice(&enlat.to_le_bytes());
            id[d + 8..d + 12].copy_from_slice(&exlat.to_le_bytes());
        }
        let (states, apsta) = power_states(&id);
        assert!(apsta);
        assert_eq!(states.len(), 5);
        assert!((states[0].max_power_w - 9.0).abs() < 1e-9);
        // MXPS: the fourth state's 500 is in 0.0001 W.
        assert!((states[3].max_power_w - 0.05).abs() < 1e-9 && states[3].non_operational);
        assert_eq!(
            (states[4].entry_latency_us, states[4].exit_latency_us),
            (2000, 10_000)
        );
        let mut table = vec![0u8; 256];
        for (from, to, ms) in [(0u32, 3u32, 100u32), (1, 3, 100), (2, 3, 100), (3, 4, 2000)] {
            let v = (ms << 8) | (to << 3);
            table[8 * from as usize..8 * from as usize + 4].copy_from_slice(&v.to_le_bytes());
        }
        let p = shared::probe::PowerSettings {
            apst_enabled: Some(true),
            apst: apst_entries(&table),
            ..Default::default()
        };
        assert_eq!(p.apst_chain(), [(3, 100), (4, 2100)]);
        let knee = |after_us, idle_us| shared::probe::Knee {
            after_us,
            idle_us,
            wake_ns: 1,
        };
        assert_eq!(p.state_at(&knee(50_000, 100_000)), Some(3));
        assert_eq!(p.state_at(&knee(2_000_000, 5_000_000)), Some(4));
        assert_eq!(p.state_at(&knee(200_000, 500_000)), None);
    }
}
