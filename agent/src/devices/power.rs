//! A device's power settings beside an idle sweep: the NVMe controller's power states and
//! APST (admin commands on the device node), and what sysfs holds (the NVMe controller's
//! latency tolerance, nvme_core's APST limit, a SATA host's link power management, runtime
//! PM). What cannot be read is said, with why.

use shared::probe::PowerSettings;
use std::path::{Path, PathBuf};

/// The settings of the device under `target`.
pub fn settings(target: &crate::io_target::TargetInfo) -> PowerSettings {
    let mut p = PowerSettings::default();
    let Some(dev) = super::identify(target) else {
        p.missing
            .push("every setting: the target has no block device under it".into());
        return p;
    };
    p.device = Some(dev.path.clone());
    let sys = PathBuf::from("/sys/block").join(&dev.name);
    let nvme = dev.name.starts_with("nvme");
    if nvme {
        nvme_states(Path::new(&dev.path), &mut p);
    } else {
        p.missing
            .push("NVMe power states and APST: not an NVMe device".into());
    }
    let device = std::fs::canonicalize(sys.join("device")).ok();
    let read = |path: Option<PathBuf>| {
        path.and_then(|f| std::fs::read_to_string(f).ok())
            .map(|s| s.trim().to_string())
    };
    // An NVMe namespace's `device` is its controller (nvme0).
    p.pm_qos_latency_tolerance_us = read(
        device
            .as_ref()
            .map(|d| d.join("power/pm_qos_latency_tolerance_us")),
    );
    p.nvme_default_ps_max_latency_us = read(Some(PathBuf::from(
        "/sys/module/nvme_core/parameters/default_ps_max_latency_us",
    )));
    p.link_power_management_policy = read(device.as_deref().and_then(sata_policy));
    p.runtime_pm = read(device.as_ref().map(|d| d.join("power/control")));
    for (name, got, why) in [
        (
            "pm_qos_latency_tolerance_us",
            p.pm_qos_latency_tolerance_us.is_some(),
            "the device's controller has none in sysfs",
        ),
        (
            "nvme_core default_ps_max_latency_us",
            p.nvme_default_ps_max_latency_us.is_some(),
            "the nvme_core module is not loaded",
        ),
        (
            "link_power_management_policy",
            p.link_power_management_policy.is_some(),
            "not on a SATA host",
        ),
        (
            "runtime PM",
            p.runtime_pm.is_some(),
            "no power/control in sysfs",
        ),
    ] {
        if !got {
            p.missing.push(format!("{name}: {why}"));
        }
    }
    p
}

fn nvme_states(dev: &Path, p: &mut PowerSettings) {
    match super::nvme::identify_controller(dev) {
        Ok(id) => {
            let (states, apsta) = super::nvme::power_states(&id);
            p.nvme_states = states;
            p.apst_supported = Some(apsta);
        }
        Err(e) => p.missing.push(format!(
            "NVMe power states: Identify Controller on {}: {e}",
            dev.display()
        )),
    }
    match super::nvme::apst(dev) {
        Ok((on, table)) => {
            p.apst_enabled = Some(on);
            p.apst = super::nvme::apst_entries(&table);
        }
        Err(e) => p
            .missing
            .push(format!("APST: Get Features 0x0C on {}: {e}", dev.display())),
    }
}

/// A SATA device's host's `link_power_management_policy` (an ancestor of the device in
/// sysfs holds `scsi_host/hostN/`).
fn sata_policy(device: &Path) -> Option<PathBuf> {
    device.ancestors().find_map(|a| {
        std::fs::read_dir(a.join("scsi_host"))
            .ok()?
            .flatten()
            .map(|e| e.path().join("link_power_management_policy"))
            .find(|f| f.exists())
    })
}
