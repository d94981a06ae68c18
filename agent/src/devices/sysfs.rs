//! Block-device discovery from sysfs, /proc/self/mountinfo and /proc/swaps. Every input is
//! a parameter, so fixture trees (an NVMe drive, a SATA drive, a USB bridge, loop and dm
//! devices) test it without the hardware.

use shared::devices::{DeviceInfo, Link, PcieLink};
use std::path::Path;

fn read(p: &Path) -> Option<String> {
    std::fs::read_to_string(p)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

fn read_num<T: std::str::FromStr>(p: &Path) -> Option<T> {
    read(p)?.parse().ok()
}

fn names_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|it| {
            it.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// The transport, from the device name and where sysfs places it.
fn transport(name: &str, real: &Path) -> &'static str {
    let path = real.to_string_lossy();
    match name {
        n if n.starts_with("nvme") => "nvme",
        n if n.starts_with("loop") => "loop",
        n if n.starts_with("dm-") => "dm",
        n if n.starts_with("md") => "md",
        n if n.starts_with("vd") => "virtio",
        n if n.starts_with("mmcblk") => "mmc",
        _ if path.contains("/usb") => "usb",
        n if n.starts_with("sd") || n.starts_with("hd") => "sata/scsi",
        _ => "unknown",
    }
}

/// One line of /proc/self/mountinfo.
pub struct MountEntry<'a> {
    /// `major:minor` of the mounted device.
    pub dev: &'a str,
    pub mount_point: &'a str,
    pub fs_type: &'a str,
}

/// The entries of mountinfo text (fields 3 and 5, and the type after the `-` separator).
pub fn mount_entries(mountinfo: &str) -> impl Iterator<Item = MountEntry<'_>> {
    mountinfo.lines().filter_map(|line| {
        let f: Vec<&str> = line.split_whitespace().collect();
        let sep = f.iter().position(|x| *x == "-")?;
        Some(MountEntry {
            dev: f.get(2)?,
            mount_point: f.get(4)?,
            fs_type: f.get(sep + 1).copied().unwrap_or(""),
        })
    })
}

/// Mount points of the devices numbered `ids` (`major:minor`), from mountinfo text.
fn mounts(mountinfo: &str, ids: &[(String, String)]) -> Vec<String> {
    mount_entries(mountinfo)
        .filter_map(|m| {
            let (_, name) = ids.iter().find(|(id, _)| id == m.dev)?;
            Some(format!("{name} on {}", m.mount_point))
        })
        .collect()
}

/// Every block device under `sys/block` with a non-zero size. `swaps` lists the device
/// paths in use as swap (the first column of /proc/swaps).
pub fn discover(sys: &Path, mountinfo: &str, swaps: &[String]) -> Vec<DeviceInfo> {
    let block = sys.join("block");
    names_in(&block)
        .iter()
        .filter_map(|name| describe(&block, name, mountinfo, swaps))
        .collect()
}

/// The device `block/<name>`; `None` when it has no size (or does not exist).
fn describe(block: &Path, name: &str, mountinfo: &str, swaps: &[String]) -> Option<DeviceInfo> {
    let name = name.to_string();
    let dir = block.join(&name);
    let size = read_num::<u64>(&dir.join("size")).unwrap_or(0) * 512;
    if size == 0 {
        return None;
    }
    let real = std::fs::canonicalize(&dir).unwrap_or_else(|_| dir.clone());
    let transport = transport(&name, &real);
    let dev = dir.join("device");
    // NVMe namespaces: `device` is the controller; its `device` the PCI function.
    let pcie = (transport == "nvme")
        .then(|| {
            let pci = dev.join("device");
            let link = PcieLink {
                current_speed: read(&pci.join("current_link_speed")),
                current_width: read_num(&pci.join("current_link_width")),
                max_speed: read(&pci.join("max_link_speed")),
                max_width: read_num(&pci.join("max_link_width")),
            };
            (link != PcieLink::default()).then_some(link)
        })
        .flatten();
    let link = link(transport, &real, pcie.as_ref());
    let partitions: Vec<String> = names_in(&dir)
        .into_iter()
        .filter(|p| dir.join(p).join("partition").exists())
        .collect();
    let mut ids: Vec<(String, String)> = Vec::new();
    if let Some(id) = read(&dir.join("dev")) {
        ids.push((id, name.clone()));
    }
    for p in &partitions {
        if let Some(id) = read(&dir.join(p).join("dev")) {
            ids.push((id, p.clone()));
        }
    }
    let mounts = mounts(mountinfo, &ids);
    // (held device or partition, holder)
    let mut held: Vec<(String, String)> = Vec::new();
    for (n, d) in
        std::iter::once((&name, dir.clone())).chain(partitions.iter().map(|p| (p, dir.join(p))))
    {
        held.extend(
            names_in(&d.join("holders"))
                .into_iter()
                .map(|h| (n.clone(), h)),
        );
    }
    let swap_names: Vec<&String> = ids
        .iter()
        .map(|(_, n)| n)
        .filter(|n| {
            swaps
                .iter()
                .any(|s| s.rsplit('/').next() == Some(n.as_str()))
        })
        .collect();
    let mut in_use: Vec<String> = mounts
        .iter()
        .map(|m| m.replacen(" on ", " is mounted at ", 1))
        .collect();
    in_use.extend(swap_names.iter().map(|n| format!("{n} is in use as swap")));
    in_use.extend(held.iter().map(|(n, h)| format!("{n} is held by {h}")));
    Some(DeviceInfo {
        path: format!("/dev/{name}"),
        name: name.clone(),
        model: read(&dev.join("model")).or_else(|| read(&dir.join("dm/name"))),
        serial: read(&dev.join("serial")),
        firmware: read(&dev.join("firmware_rev")).or_else(|| read(&dev.join("rev"))),
        wwn: read(&dir.join("wwid")).or_else(|| read(&dev.join("wwid"))),
        size,
        logical_block_size: read_num(&dir.join("queue/logical_block_size")).unwrap_or(512),
        physical_block_size: read_num(&dir.join("queue/physical_block_size")).unwrap_or(512),
        rotational: read(&dir.join("queue/rotational")).as_deref() == Some("1"),
        transport: transport.to_string(),
        pcie,
        link,
        partitions,
        mounts,
        holders: held.iter().map(|(_, h)| h.clone()).collect(),
        swap: !swap_names.is_empty(),
        in_use,
        health: None,
    })
}

/// The link in front of a device: its PCIe link (NVMe), the SATA link of the `ataN` port it
/// hangs off (`ataN/linkN/ata_link/linkN/sata_spd`), or the USB device above it (the
/// nearest ancestor with `speed` and `idVendor`).
fn link(transport: &str, real: &Path, pcie: Option<&PcieLink>) -> Option<Link> {
    if let Some(p) = pcie {
        return Link::pcie(p.current_speed.as_deref()?, p.current_width?);
    }
    let mut up = real.ancestors();
    match transport {
        "usb" => up
            .find(|a| a.join("speed").exists() && a.join("idVendor").exists())
            .and_then(|a| Link::usb(&read(&a.join("speed"))?)),
        "sata/scsi" => up
            .find_map(|a| {
                let n = a.file_name()?.to_str()?.strip_prefix("ata")?;
                n.parse::<u32>().ok()?;
                read(&a.join(format!("link{n}/ata_link/link{n}/sata_spd")))
            })
            .and_then(|spd| Link::sata(&spd)),
        _ => None,
    }
}

/// The swap devices listed in /proc/swaps text.
pub fn swap_devices(swaps: &str) -> Vec<String> {
    swaps
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next().map(String::from))
        .collect()
}

fn system_tables() -> (String, Vec<String>) {
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let swaps = swap_devices(&std::fs::read_to_string("/proc/swaps").unwrap_or_default());
    (mountinfo, swaps)
}

/// The host's devices, from the real /sys and /proc.
pub fn discover_system() -> Vec<DeviceInfo> {
    let (mountinfo, swaps) = system_tables();
    discover(Path::new("/sys"), &mountinfo, &swaps)
}

/// One device of the host by its kernel name (`nvme0n1`), without looking at the others.
pub fn describe_system(name: &str) -> Option<DeviceInfo> {
    let (mountinfo, swaps) = system_tables();
    describe(Path::new("/sys/block"), name, &mountinfo, &swaps)
}

/// Builds fixture trees in tests.
#[cfg(test)]
pub(crate) struct Fixture {
    pub root: tempfile::TempDir,
}

#[cfg(test)]
impl Fixture {
    pub fn new() -> Self {
        Fixture {
            root: tempfile::tempdir().expect("tempdir"),
        }
    }

    /// A device placed at `devices/<real>` with `block/<name>` linking to it (as sysfs does).
    pub fn device(&self, name: &str, real: &str, files: &[(&str, &str)]) -> std::path::PathBuf {
        let dir = self.root.path().join("devices").join(real);
        std::fs::create_dir_all(&dir).expect("mkdir");
        for (rel, text) in files {
            let p = dir.join(rel);
            std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
            std::fs::write(p, format!("{text}\n")).expect("write");
        }
        std::fs::create_dir_all(self.root.path().join("block")).expect("mkdir");
        std::os::unix::fs::symlink(&dir, self.root.path().join("block").join(name)).expect("link");
        dir
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sys() -> Fixture {
        let f = Fixture::new();
        // NVMe namespace under its controller under a PCIe function.
        let pci = "pci0000:00/0000:00:01.1/0000:01:00.0";
        f.device(
            "nvme0n1",
            &format!("{pci}/nvme/nvme0/nvme0n1"),
            &[
                ("size", "3907029168"),
                ("dev", "259:0"),
                ("wwid", "eui.0025385b11b0c7d4"),
                ("queue/logical_block_size", "512"),
                ("queue/physical_block_size", "512"),
                ("queue/rotational", "0"),
                ("nvme0n1p1/partition", "1"),
                ("nvme0n1p1/dev", "259:1"),
                ("nvme0n1p2/partition", "2"),
                ("nvme0n1p2/dev", "259:2"),
            ],
        );
        let ctrl = f.root.path().join("devices").join(pci).join("nvme/nvme0");
        for (k, v) in [
            ("model", "Samsung SSD 990 PRO 2TB"),
            ("serial", "S73WNJ0W123456"),
            ("firmware_rev", "4B2QJXD7"),
        ] {
            std::fs::write(ctrl.join(k), format!("{v}\n")).expect("write");
        }
        std::os::unix::fs::symlink(
            &ctrl,
            f.root
                .path()
                .join("devices")
                .join(pci)
                .join("nvme/nvme0/nvme0n1/device"),
        )
        .expect("link");
        let func = f.root.path().join("devices").join(pci);
        for (k, v) in [
            ("current_link_speed", "16.0 GT/s PCIe"),
            ("current_link_width", "4"),
            ("max_link_speed", "16.0 GT/s PCIe"),
            ("max_link_width", "4"),
        ] {
            std::fs::write(func.join(k), format!("{v}\n")).expect("write");
        }
        std::os::unix::fs::symlink(&func, ctrl.join("device")).expect("link");
        // SATA disk, rotational, on an AHCI port.
        f.device(
            "sda",
            "pci0000:00/0000:00:17.0/ata1/host0/target0:0:0/0:0:0:0/block/sda",
            &[
                ("size", "7814037168"),
                ("dev", "8:0"),
                ("queue/logical_block_size", "512"),
                ("queue/physical_block_size", "4096"),
                ("queue/rotational", "1"),
                ("device/model", "ST4000DM004-2CV1"),
                ("device/rev", "0001"),
                ("sda1/partition", "1"),
                ("sda1/dev", "8:1"),
                ("sda1/holders/md0/.keep", ""),
            ],
        );
        let ata = f.root.path().join("devices/pci0000:00/0000:00:17.0/ata1");
        std::fs::create_dir_all(ata.join("link1/ata_link/link1")).expect("mkdir");
        std::fs::write(ata.join("link1/ata_link/link1/sata_spd"), "6.0 Gbps\n").expect("write");
        // USB bridge.
        f.device(
            "sdb",
            "pci0000:00/0000:00:14.0/usb2/2-1/2-1:1.0/host6/target6:0:0/6:0:0:0/block/sdb",
            &[
                ("size", "1953525168"),
                ("dev", "8:16"),
                ("queue/rotational", "0"),
                ("device/model", "RTL9210B-CG"),
            ],
        );
        let usb = f
            .root
            .path()
            .join("devices/pci0000:00/0000:00:14.0/usb2/2-1");
        for (k, v) in [("speed", "5000"), ("idVendor", "0bda")] {
            std::fs::write(usb.join(k), format!("{v}\n")).expect("write");
        }
        f.device(
            "loop3",
            "virtual/block/loop3",
            &[
                ("size", "2097152"),
                ("dev", "7:3"),
                ("queue/logical_block_size", "4096"),
            ],
        );
        f.device(
            "loop4",
            "virtual/block/loop4",
            &[("size", "0"), ("dev", "7:4")],
        );
        f.device(
            "dm-0",
            "virtual/block/dm-0",
            &[
                ("size", "409600"),
                ("dev", "253:0"),
                ("dm/name", "vg0-data"),
            ],
        );
        f
    }

    const MOUNTINFO: &str = "29 1 259:2 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p2 rw\n30 29 259:1 / /boot/efi rw - vfat /dev/nvme0n1p1 rw\n";

    #[test]
    fn finds_identity_geometry_transport_and_use() {
        let f = sys();
        let swaps =
            swap_devices("Filename Type Size Used Priority\n/dev/dm-0 partition 204800 0 -2\n");
        let d = discover(f.root.path(), MOUNTINFO, &swaps);
        let by = |n: &str| {
            d.iter()
                .find(|x| x.name == n)
                .unwrap_or_else(|| panic!("{n} missing: {d:?}"))
        };
        assert!(
            d.iter().all(|x| x.name != "loop4"),
            "empty loop devices are skipped"
        );

        let nvme = by("nvme0n1");
        assert_eq!(nvme.transport, "nvme");
        assert_eq!(nvme.model.as_deref(), Some("Samsung SSD 990 PRO 2TB"));
        assert_eq!(nvme.serial.as_deref(), Some("S73WNJ0W123456"));
        assert_eq!(nvme.firmware.as_deref(), Some("4B2QJXD7"));
        assert_eq!(nvme.wwn.as_deref(), Some("eui.0025385b11b0c7d4"));
        assert_eq!(nvme.size, 3_907_029_168 * 512);
        let link = nvme.pcie.as_ref().expect("pcie");
        assert_eq!(
            (link.current_width, link.max_speed.as_deref()),
            (Some(4), Some("16.0 GT/s PCIe"))
        );
        assert_eq!(nvme.partitions, ["nvme0n1p1", "nvme0n1p2"]);
        assert_eq!(nvme.mounts, ["nvme0n1p2 on /", "nvme0n1p1 on /boot/efi"]);
        assert!(
            nvme.in_use.iter().any(|r| r == "nvme0n1p2 is mounted at /"),
            "{:?}",
            nvme.in_use
        );

        let sata = by("sda");
        assert_eq!(
            (
                sata.transport.as_str(),
                sata.rotational,
                sata.physical_block_size
            ),
            ("sata/scsi", true, 4096)
        );
        assert_eq!(sata.firmware.as_deref(), Some("0001"));
        assert_eq!(sata.holders, ["md0"]);
        assert_eq!(sata.in_use, ["sda1 is held by md0"]);

        assert_eq!(by("sdb").transport, "usb");
        let mb_s = |n: &str| by(n).link.as_ref().map(|l| (l.kind.clone(), l.mb_s));
        assert_eq!(mb_s("sda"), Some(("sata".into(), 600.0)));
        assert_eq!(mb_s("sdb"), Some(("usb".into(), 500.0)));
        let nv = mb_s("nvme0n1").expect("pcie link");
        assert!((nv.1 - 7876.9).abs() < 1.0, "{nv:?}");
        assert_eq!(mb_s("loop3"), None);
        let lp = by("loop3");
        assert_eq!(
            (lp.transport.as_str(), lp.logical_block_size),
            ("loop", 4096)
        );
        assert!(lp.in_use.is_empty());
        let dm = by("dm-0");
        assert_eq!(
            (dm.transport.as_str(), dm.model.as_deref(), dm.swap),
            ("dm", Some("vg0-data"), true)
        );
        assert_eq!(dm.in_use, ["dm-0 is in use as swap"]);
    }
}
