//! SATA, SAS and USB-bridge health from `smartctl --json -a DEV` (smartmontools), when it is
//! installed: temperature, power-on hours, power cycles, bytes written, wear.

use serde_json::Value;
use shared::devices::DeviceHealth;
use std::path::Path;

/// The unsigned number at JSON pointer `at` (`/power_on_time/hours`).
fn num(v: &Value, at: &str) -> Option<u128> {
    v.pointer(at)?.as_u64().map(u128::from)
}

/// Decodes smartctl's JSON (ATA attributes, or the NVMe health log it prints for NVMe and
/// USB-NVMe bridges).
pub fn parse_smartctl(v: &Value) -> Option<DeviceHealth> {
    // Only smartctl's own output (it always carries its version block).
    v.get("smartctl")?;
    let mut h = DeviceHealth {
        source: "smartctl".into(),
        temperature_c: v.pointer("/temperature/current").and_then(Value::as_f64),
        power_on_hours: num(v, "/power_on_time/hours"),
        power_cycles: num(v, "/power_cycle_count"),
        ..DeviceHealth::default()
    };
    let lbs = num(v, "/logical_block_size").unwrap_or(512);
    if let Some(table) = v
        .pointer("/ata_smart_attributes/table")
        .and_then(Value::as_array)
    {
        for a in table {
            let id = a.get("id").and_then(Value::as_u64);
            let raw = a
                .pointer("/raw/value")
                .and_then(Value::as_u64)
                .map(u128::from);
            let value = a.get("value").and_then(Value::as_u64);
            match id {
                Some(241) => h.bytes_written = raw.map(|r| r * lbs),
                Some(242) => h.bytes_read = raw.map(|r| r * lbs),
                Some(5) => h.media_errors = raw,
                Some(192) => h.unsafe_shutdowns = raw,
                // Normalized remaining life (SSD_Life_Left, Media_Wearout_Indicator,
                // Wear_Leveling_Count): 100 new, falling with wear.
                Some(231 | 233 | 177) => {
                    if let Some(v) = value.filter(|v| *v <= 100) {
                        h.percentage_used.get_or_insert(100 - v as u8);
                    }
                }
                _ => {}
            }
        }
    }
    if let Some(n) = v.get("nvme_smart_health_information_log") {
        h.available_spare_pct = num(n, "/available_spare").map(|x| x as u8);
        h.percentage_used = num(n, "/percentage_used").map(|x| x as u8);
        h.bytes_written = num(n, "/data_units_written").map(|x| x * super::nvme::DATA_UNIT);
        h.bytes_read = num(n, "/data_units_read").map(|x| x * super::nvme::DATA_UNIT);
        h.unsafe_shutdowns = num(n, "/unsafe_shutdowns");
        h.media_errors = num(n, "/media_errors");
        h.power_cycles = h.power_cycles.or(num(n, "/power_cycles"));
        h.power_on_hours = h.power_on_hours.or(num(n, "/power_on_hours"));
        h.warning_temp_minutes = num(n, "/warning_temp_time").map(|x| x as u32);
        h.critical_temp_minutes = num(n, "/critical_comp_time").map(|x| x as u32);
    }
    Some(h)
}

/// Runs `smartctl --json -a DEV`; `None` when smartctl is missing or says nothing usable.
pub fn read(dev: &Path) -> Option<DeviceHealth> {
    let out = std::process::Command::new("smartctl")
        .args(["--json", "-a"])
        .arg(dev)
        .output()
        .ok()?;
    let v: Value = serde_json::from_slice(&out.stdout).ok()?;
    parse_smartctl(&v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sata_attributes_become_health() {
        let v: Value = serde_json::from_str(include_str!("../../tests/data/smartctl-sata.json"))
            .expect("fixture");
        let h = parse_smartctl(&v).expect("health");
        assert_eq!(h.temperature_c, Some(31.0));
        assert_eq!(h.power_on_hours, Some(21_345));
        assert_eq!(h.power_cycles, Some(1_024));
        assert_eq!(h.bytes_written, Some(61_034_827_776u128 * 512));
        assert_eq!(h.percentage_used, Some(6));
        assert_eq!(h.media_errors, Some(0));
    }

    #[test]
    fn a_usb_nvme_bridge_reports_the_nvme_log() {
        let v: Value =
            serde_json::from_str(include_str!("../../tests/data/smartctl-usb-nvme.json"))
                .expect("fixture");
        let h = parse_smartctl(&v).expect("health");
        assert_eq!(h.temperature_c, Some(47.0));
        assert_eq!(h.bytes_written, Some(9_876_543u128 * 512_000));
        assert_eq!(
            (h.percentage_used, h.available_spare_pct),
            (Some(2), Some(100))
        );
        assert!(parse_smartctl(&serde_json::json!({"error": "no smartctl"})).is_none());
    }
}
