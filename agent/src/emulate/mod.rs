//! An emulated SSD for ground truth, tests and demos: a FUSE filesystem whose `disk.img`
//! is timed by [`model::SsdModel`] (SLC cache, native speed, idle drain, random-write
//! settling and GC stalls, a thermal throttle). `diskscope emulate --mount DIR` serves one
//! until stopped; `diskscope serve --demo` mounts one in the data directory and offers it
//! as a target.

pub mod fs;
pub mod media;
pub mod model;

use model::{Device, SsdModel};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// A mounted emulator; unmounted when dropped.
pub struct Mounted {
    pub dir: PathBuf,
    _session: fuser::BackgroundSession,
}

impl Mounted {
    /// The emulated device's path.
    pub fn disk(&self) -> PathBuf {
        self.dir.join("disk.img")
    }
}

#[derive(Debug, thiserror::Error)]
pub enum EmulateError {
    #[error("cannot create the mount point {path}: {source}")]
    MountPoint {
        path: String,
        source: std::io::Error,
    },
    #[error("cannot mount the emulated SSD at {path} (FUSE needs /dev/fuse and root): {source}")]
    Mount {
        path: String,
        source: std::io::Error,
    },
}

/// Detaches whatever is mounted at `dir`: it disappears for new users at once and goes away
/// when the last open file on it closes (an io_uring worker may still hold one for a moment
/// after a run). Failure (nothing mounted) is the common case and is ignored.
pub fn detach(dir: &Path) {
    if let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()) {
        // SAFETY: `c` is a valid NUL-terminated path; umount2 only reads it.
        unsafe {
            libc::umount2(c.as_ptr(), libc::MNT_DETACH);
        }
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        // fuser's own unmount (when the session drops) fails with EBUSY while a file is
        // still open; detaching never does.
        detach(&self.dir);
    }
}

/// Mounts an emulated SSD following `model` at `dir` (created if missing; a stale mount
/// left by a killed agent is detached first).
pub fn mount(dir: &Path, model: SsdModel) -> Result<Mounted, EmulateError> {
    detach(dir);
    std::fs::create_dir_all(dir).map_err(|source| EmulateError::MountPoint {
        path: dir.display().to_string(),
        source,
    })?;
    let mut config = fuser::Config::default();
    config.mount_options = vec![
        fuser::MountOption::FSName("diskscope-emulated-ssd".into()),
        fuser::MountOption::DefaultPermissions,
    ];
    // Several requests in flight in the daemon hide its per-request cost; the device clock
    // still serializes them.
    config.n_threads = Some(4);
    let fs = fs::EmulatedSsd::new(Device::new(model, Instant::now()));
    let session = fuser::spawn_mount(fs, dir, &config).map_err(|source| EmulateError::Mount {
        path: dir.display().to_string(),
        source,
    })?;
    Ok(Mounted {
        dir: dir.to_path_buf(),
        _session: session,
    })
}
