//! The per-I/O flags a spec asks for (`RWF_DONTCACHE` for `uncached`, `RWF_ATOMIC` for
//! `atomic`) and polled completion (`hipri`), and whether the target's kernel, filesystem
//! or device takes them: checked before a run starts, so a refusal names the target and
//! its limits instead of failing the first I/O.

use shared::{SpecError, WorkloadSpec};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// `STATX_WRITE_ATOMIC` (linux/stat.h): the atomic write unit limits, kernel 6.11+.
const STATX_WRITE_ATOMIC: libc::c_uint = 0x0001_0000;

/// The flags of the reads and of the writes.
pub fn of(spec: &WorkloadSpec) -> (i32, i32) {
    let cache = if spec.uncached {
        libc::RWF_DONTCACHE
    } else {
        0
    };
    let atomic = if spec.atomic { libc::RWF_ATOMIC } else { 0 };
    (cache, cache | atomic)
}

/// What stops `spec`'s flags on `target` (nothing when it asks for none).
pub fn check(spec: &WorkloadSpec, target: &super::TargetInfo) -> Vec<SpecError> {
    // Named by its path; probed through the descriptor the access check pinned (a link
    // swapped in for the path since is not what the probes see).
    let path = target.path.as_path();
    let at = target.at();
    let mut errs = Vec::new();
    if spec.hipri {
        if let Err(why) = poll_queues(target) {
            errs.push(SpecError::new("hipri", true, why));
        }
    }
    if spec.uncached {
        if let Err(e) = probe_dontcache(&at) {
            errs.push(SpecError::new(
                "uncached",
                true,
                format!(
                    "{} does not take uncached buffered I/O (RWF_DONTCACHE: {e}; it needs kernel 6.14+ and a filesystem or device that supports it)",
                    path.display()
                ),
            ));
        }
    }
    if spec.atomic {
        match atomic_limits(&at) {
            Ok((min, max)) if max > 0 => {
                for size in write_sizes(spec) {
                    if size < u64::from(min) || size > u64::from(max) || !size.is_power_of_two() {
                        errs.push(SpecError::new(
                            "atomic",
                            true,
                            format!(
                                "a write of {size} B is outside the atomic write unit of {} ({min}..{max} B, a power of two)",
                                path.display()
                            ),
                        ));
                    }
                }
            }
            Ok((min, max)) => errs.push(SpecError::new(
                "atomic",
                true,
                format!(
                    "{} has no atomic writes (atomic write unit min {min} B, max {max} B)",
                    path.display()
                ),
            )),
            Err(e) => errs.push(SpecError::new(
                "atomic",
                true,
                format!(
                    "the atomic write limits of {} are unknown ({e}): statx STATX_WRITE_ATOMIC needs kernel 6.11+",
                    path.display()
                ),
            )),
        }
    }
    errs
}

/// Whether the device under `target` has poll queues (its `queue/io_poll` is 1), else why
/// polled completion cannot run there, naming the file that says so.
fn poll_queues(target: &super::TargetInfo) -> Result<(), String> {
    let path = target.path.display();
    let Some(dir) = crate::iopath::sysfs_dir(target) else {
        return Err(format!(
            "{path} is on no block device (tmpfs, FUSE): polled completion needs one with poll queues"
        ));
    };
    // A partition's queue is its disk's.
    let queue = [dir.join("queue"), dir.join("../queue")]
        .into_iter()
        .find(|q| q.is_dir())
        .ok_or_else(|| format!("{path}: no queue directory under {}", dir.display()))?;
    let file = queue.join("io_poll");
    match std::fs::read_to_string(&file) {
        Ok(v) if v.trim() == "1" => Ok(()),
        Ok(v) => Err(format!(
            "the device under {path} has no poll queues ({} is {}): polled completion needs a driver with poll queues (NVMe's poll_queues=N)",
            file.display(),
            v.trim()
        )),
        Err(e) => Err(format!("{path}: {} unreadable: {e}", file.display())),
    }
}

/// Every write length the workload issues.
fn write_sizes(spec: &WorkloadSpec) -> Vec<u64> {
    let mut sizes: Vec<u64> = vec![spec.bs];
    sizes.extend(spec.bs_max);
    if let Some(s) = &spec.bssplit {
        sizes.extend(s.0.iter().map(|&(b, _)| b));
    }
    if let Some(s) = &spec.write_bssplit {
        sizes.extend(s.0.iter().map(|&(b, _)| b));
    }
    sizes.sort_unstable();
    sizes.dedup();
    sizes
}

fn c_path(path: &Path) -> std::io::Result<std::ffi::CString> {
    std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))
}

/// A one-byte buffered read with `RWF_DONTCACHE`: the kernel checks the flag first. Opened
/// without blocking and read only when still a file or a block device (a FIFO swapped in
/// would otherwise hold the open).
fn probe_dontcache(path: &Path) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let kind = file.metadata()?.file_type();
    if !(kind.is_file() || kind.is_block_device()) {
        return Err(std::io::Error::other("not a file or a block device"));
    }
    let mut byte = [0u8; 1];
    let iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    // SAFETY: one iovec over `byte`, valid for the call.
    let rc = unsafe { libc::preadv2(file.as_raw_fd(), &iov, 1, 0, libc::RWF_DONTCACHE) };
    if rc < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// The target's atomic write unit, min and max bytes (0, 0 when it has none).
fn atomic_limits(path: &Path) -> std::io::Result<(u32, u32)> {
    let c = c_path(path)?;
    // SAFETY: statx fills the zeroed struct; `c` is a valid C string for the call.
    let mut st: libc::statx = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::statx(libc::AT_FDCWD, c.as_ptr(), 0, STATX_WRITE_ATOMIC, &mut st) };
    if rc < 0 {
        return Err(std::io::Error::last_os_error());
    }
    if st.stx_mask & STATX_WRITE_ATOMIC == 0 {
        return Ok((0, 0));
    }
    Ok((st.stx_atomic_write_unit_min, st.stx_atomic_write_unit_max))
}
