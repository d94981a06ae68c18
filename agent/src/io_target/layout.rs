//! Lays out real data in the holes of a file's span before a read workload.
//!
//! A never-written (sparse or fallocated) range reads ~10× faster than a written one because
//! the filesystem answers with zeros without touching the device. Holes are found with
//! `SEEK_HOLE`/`SEEK_DATA` (ext4 and XFS report unwritten extents as holes too) and filled with
//! incompressible data, so a re-run over an already written file costs nothing.

use super::{TargetError, TargetInfo, TargetKind};
use crate::engine::buf::BufferPool;
use crate::workload::rng::Rng;
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;

const CHUNK: u64 = 1 << 20;
const LAYOUT_SEED: u64 = 0x1a70_0d47a;

/// Fills every hole in `[start, end)` of a file target with random data; returns the bytes
/// written. `on_start` hears how many bytes are about to be laid out (only when some are).
/// Block devices and label targets are left alone. A file diskscope did not create is
/// only laid out when the run writes it anyway (`writes`): a pure read test refuses holes
/// rather than modify somebody's file.
pub fn ensure_written(
    target: &TargetInfo,
    start: u64,
    end: u64,
    direct: bool,
    writes: bool,
    on_start: &mut dyn FnMut(u64),
) -> Result<u64, TargetError> {
    if target.kind != TargetKind::File {
        return Ok(0);
    }
    let holes = span_holes(target, start, end)?;
    let needed: u64 = holes.iter().map(|(a, b)| b - a).sum();
    if needed == 0 {
        return Ok(0);
    }
    if !writes && !target.created {
        return Err(TargetError::HolesForRead {
            path: target.path.clone(),
            holes: needed,
        });
    }
    let file = target.open(true, direct)?;
    on_start(needed);
    let free = free_bytes(&file).unwrap_or(u64::MAX);
    if needed > free {
        return Err(TargetError::NoSpace {
            path: target.path.clone(),
            needed,
            free,
        });
    }
    let mut pool = BufferPool::new(CHUNK as usize, 1, true)
        .map_err(|e| TargetError::io("allocate a buffer for", &target.path, e))?;
    let mut rng = Rng::new(LAYOUT_SEED, 0);
    let align = u64::from(target.logical_block_size.max(512));
    for (a, b) in holes {
        // Holes are filesystem-block aligned; widen to the device's block for O_DIRECT.
        let mut pos = a - a % align;
        let end = b.div_ceil(align) * align;
        while pos < end {
            let len = (end - pos).min(CHUNK) as usize;
            let buf = &mut pool.get_mut(0)[..len];
            rng.fill(buf);
            file.write_all_at(buf, pos)
                .map_err(|e| TargetError::io("lay out data in", &target.path, e))?;
            pos += len as u64;
        }
    }
    file.sync_all()
        .map_err(|e| TargetError::io("sync", &target.path, e))?;
    Ok(needed)
}

/// Refuses, before anything runs, a read-only test on holes of a file diskscope did not
/// create (the run would have to write data into somebody's file to measure it).
pub fn refuse_holes(target: &TargetInfo, start: u64, end: u64) -> Result<(), TargetError> {
    if target.kind != TargetKind::File || target.created {
        return Ok(());
    }
    let n: u64 = span_holes(target, start, end)?
        .iter()
        .map(|(a, b)| b - a)
        .sum();
    if n > 0 {
        return Err(TargetError::HolesForRead {
            path: target.path.clone(),
            holes: n,
        });
    }
    Ok(())
}

/// Hole ranges of a file target inside `[start, end)` (opened read-only to look).
fn span_holes(target: &TargetInfo, start: u64, end: u64) -> Result<Vec<(u64, u64)>, TargetError> {
    let file = target.open(false, false)?;
    holes(&file, start, end).map_err(|e| TargetError::io("map holes of", &target.path, e))
}

/// Hole ranges inside `[start, end)`.
fn holes(file: &File, start: u64, end: u64) -> io::Result<Vec<(u64, u64)>> {
    let fd = file.as_raw_fd();
    let mut out = Vec::new();
    let mut pos = start;
    while pos < end {
        let hole = match seek(fd, pos, libc::SEEK_HOLE)? {
            Some(h) => h.min(end),
            None => end,
        };
        if hole >= end {
            break;
        }
        let data = match seek(fd, hole, libc::SEEK_DATA)? {
            Some(d) => d.min(end),
            None => end,
        };
        out.push((hole, data));
        pos = data;
    }
    Ok(out)
}

/// `lseek` with `SEEK_HOLE`/`SEEK_DATA`; `None` when past the last data (ENXIO).
fn seek(fd: i32, pos: u64, whence: i32) -> io::Result<Option<u64>> {
    // SAFETY: lseek on a valid descriptor; no memory is passed.
    let r = unsafe { libc::lseek(fd, pos as libc::off_t, whence) };
    if r < 0 {
        let e = io::Error::last_os_error();
        return if e.raw_os_error() == Some(libc::ENXIO) {
            Ok(None)
        } else {
            Err(e)
        };
    }
    Ok(Some(r as u64))
}

fn free_bytes(file: &File) -> io::Result<u64> {
    // SAFETY: statvfs is plain data; fstatvfs fills it on success.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: valid descriptor and a pointer to a live statvfs.
    if unsafe { libc::fstatvfs(file.as_raw_fd(), &mut st) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(st.f_bavail as u64 * st.f_frsize as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn file_target(path: &Path, size: u64) -> TargetInfo {
        TargetInfo::probe(path, Some(size), true).expect("probe")
    }

    #[test]
    fn fills_holes_once() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("sparse.bin");
        let t = file_target(&p, 8 << 20);
        assert_eq!(
            ensure_written(&t, 0, 8 << 20, false, false, &mut |_| {}).expect("layout"),
            8 << 20
        );
        assert_eq!(
            ensure_written(&t, 0, 8 << 20, false, false, &mut |_| {}).expect("second layout"),
            0
        );
        let f = File::open(&p).expect("open");
        assert!(holes(&f, 0, 8 << 20).expect("holes").is_empty());
        let mut head = [0u8; 4096];
        f.read_exact_at(&mut head, 4096).expect("read");
        assert!(
            head.iter().filter(|&&b| b == 0).count() < 64,
            "laid-out data is random"
        );
    }

    #[test]
    fn a_read_test_never_modifies_a_file_it_did_not_create() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("users.bin");
        // Somebody's file: 1 MiB of data, then a 7 MiB hole.
        std::fs::write(&p, vec![7u8; 1 << 20]).expect("write");
        let e = TargetInfo::probe(&p, Some(8 << 20), false).unwrap_err();
        assert!(
            matches!(e, TargetError::ShortForRead { len, want, .. } if len == 1 << 20 && want == 8 << 20),
            "{e}"
        );
        assert_eq!(
            std::fs::metadata(&p).expect("stat").len(),
            1 << 20,
            "not extended"
        );
        File::options()
            .write(true)
            .open(&p)
            .and_then(|f| f.set_len(8 << 20))
            .expect("the user makes it sparse");
        let t = TargetInfo::probe(&p, Some(8 << 20), false).expect("probe");
        assert!(!t.created);
        let e = ensure_written(&t, 0, 8 << 20, false, false, &mut |_| {}).unwrap_err();
        assert!(
            matches!(e, TargetError::HolesForRead { holes, .. } if holes == 7 << 20),
            "{e}"
        );
        let f = File::open(&p).expect("open");
        assert_eq!(
            holes(&f, 0, 8 << 20).expect("holes"),
            vec![(1 << 20, 8 << 20)]
        );
        // A run that writes the file anyway may lay it out.
        assert_eq!(
            ensure_written(&t, 0, 8 << 20, false, true, &mut |_| {}).expect("layout"),
            7 << 20
        );
    }
}
