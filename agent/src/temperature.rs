//! Where a target's temperature can be read during a run, hwmon style (millidegrees Celsius
//! in a `temp1_input` file): for a block device, its device's hwmon directory in sysfs (NVMe
//! drives have one); for a file, a `hwmon/temp1_input` beside it, which is where the
//! emulated SSD (`diskscope emulate`) publishes its model's temperature. Read once per
//! sample interval, off the hot path.

use crate::io_target::{TargetInfo, TargetKind};
use std::path::{Path, PathBuf};

#[derive(Clone, Debug, PartialEq)]
pub struct TempSource {
    pub path: PathBuf,
}

impl TempSource {
    pub fn for_target(t: &TargetInfo) -> Option<TempSource> {
        let candidates: Vec<PathBuf> = match t.kind {
            TargetKind::File => t
                .path
                .parent()
                .map(|d| vec![d.join("hwmon/temp1_input")])
                .unwrap_or_default(),
            TargetKind::Block => {
                let name = t
                    .path
                    .canonicalize()
                    .ok()?
                    .file_name()?
                    .to_string_lossy()
                    .into_owned();
                let dev = Path::new("/sys/block").join(name).join("device");
                hwmon_inputs(&dev)
                    .into_iter()
                    .chain(hwmon_inputs(&dev.join("hwmon")))
                    .collect()
            }
            _ => Vec::new(),
        };
        candidates
            .into_iter()
            .find(|p| read_millideg(p).is_some())
            .map(|path| TempSource { path })
    }

    /// The temperature now, in °C.
    pub fn read(&self) -> Option<f64> {
        read_millideg(&self.path)
    }
}

/// `dir/hwmon*/temp1_input` files.
fn hwmon_inputs(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("hwmon"))
        .map(|e| e.path().join("temp1_input"))
        .filter(|p| p.exists())
        .collect();
    out.sort();
    out
}

fn read_millideg(p: &Path) -> Option<f64> {
    let text = std::fs::read_to_string(p).ok()?;
    let v: f64 = text.trim().parse().ok()?;
    Some(v / 1000.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_target_reads_the_hwmon_file_beside_it() {
        let d = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(d.path().join("hwmon")).expect("mkdir");
        std::fs::write(d.path().join("hwmon/temp1_input"), "57250\n").expect("write");
        let t = TargetInfo {
            path: d.path().join("disk.img"),
            kind: TargetKind::File,
            size: 1 << 20,
            logical_block_size: 512,
            pin: None,
            created: false,
        };
        let s = TempSource::for_target(&t).expect("source");
        assert_eq!(s.read(), Some(57.25));
        let other = TargetInfo {
            path: std::env::temp_dir().join("nothing-here/x.bin"),
            ..t
        };
        assert_eq!(TempSource::for_target(&other), None);
    }
}
