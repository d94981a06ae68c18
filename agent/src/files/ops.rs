//! The operations of the files workload, each on a name relative to a directory descriptor
//! and following no link: as plain system calls ([`Plain`]) or through io_uring
//! ([`super::ring::Ring`]). One operation is what a phase times as one I/O: a create is the
//! open, the writes, the fsync when asked and the close; a read the open, the reads and
//! the close.

use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// What a phase does to one name in a directory. `create` and `read` return the bytes they
/// moved.
pub trait Ops {
    fn mkdir(&mut self, dir: &OwnedFd, name: &CStr) -> io::Result<()>;
    fn rmdir(&mut self, dir: &OwnedFd, name: &CStr) -> io::Result<()>;
    fn unlink(&mut self, dir: &OwnedFd, name: &CStr) -> io::Result<()>;
    fn stat(&mut self, dir: &OwnedFd, name: &CStr) -> io::Result<()>;
    /// A new file (never an existing one) of `size` bytes written with `data` over and
    /// over, fsynced when asked, closed.
    fn create(
        &mut self,
        dir: &OwnedFd,
        name: &CStr,
        data: &[u8],
        size: u64,
        fsync: bool,
    ) -> io::Result<u64>;
    /// Reads the whole file (create made it `size` bytes), `buf.len()` at a time. With
    /// `want` (the pattern create wrote over and over), a byte or a length that differs
    /// fails the read naming it.
    fn read(
        &mut self,
        dir: &OwnedFd,
        name: &CStr,
        buf: &mut [u8],
        want: Option<&[u8]>,
        size: u64,
    ) -> io::Result<u64>;
}

pub fn cstr(bytes: &[u8]) -> io::Result<CString> {
    CString::new(bytes).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))
}

pub fn check(rc: libc::c_int) -> io::Result<()> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// `openat(dir, name, flags)` with no link followed (`AT_FDCWD` without a directory).
pub fn open_at(dir: Option<&OwnedFd>, name: &CStr, flags: i32, mode: u32) -> io::Result<OwnedFd> {
    let base = dir.map_or(libc::AT_FDCWD, |d| d.as_raw_fd());
    // SAFETY: a plain openat on a valid C string; the descriptor is owned from here.
    let fd = unsafe {
        libc::openat(
            base,
            name.as_ptr(),
            flags | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            mode,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just opened and is not owned elsewhere.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The directory `name` below `dir`, opened with no link followed.
pub fn dir_at(dir: &OwnedFd, name: &CStr) -> io::Result<OwnedFd> {
    open_at(Some(dir), name, libc::O_DIRECTORY | libc::O_RDONLY, 0)
}

/// Compares `got`, read from byte `at` of a file, with the pattern's start `want` (the
/// file is the pattern over and over, chunk by chunk).
pub fn compare(got: &[u8], want: &[u8], at: u64) -> io::Result<()> {
    match (0..got.len()).find(|&i| want.get(i) != Some(&got[i])) {
        Some(i) => Err(io::Error::other(format!(
            "holds other data than create wrote, from byte {}",
            at + i as u64
        ))),
        None => Ok(()),
    }
}

/// A read's total against the size create wrote.
pub fn check_length(total: u64, check: Option<(&[u8], u64)>) -> io::Result<u64> {
    match check {
        Some((_, size)) if total != size => Err(io::Error::other(format!(
            "holds {total} bytes, create wrote {size}"
        ))),
        _ => Ok(total),
    }
}

/// The operations as plain system calls (`mkdirat`, `unlinkat`, `fstatat`, `openat`,
/// `write`, `read`, `fsync`, `close`).
pub struct Plain;

impl Ops for Plain {
    fn mkdir(&mut self, dir: &OwnedFd, name: &CStr) -> io::Result<()> {
        // SAFETY: mkdirat below a directory we hold, on a valid C string.
        check(unsafe { libc::mkdirat(dir.as_raw_fd(), name.as_ptr(), 0o755) })
    }

    fn rmdir(&mut self, dir: &OwnedFd, name: &CStr) -> io::Result<()> {
        // SAFETY: as `mkdir`.
        check(unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), libc::AT_REMOVEDIR) })
    }

    fn unlink(&mut self, dir: &OwnedFd, name: &CStr) -> io::Result<()> {
        // SAFETY: as `mkdir`.
        check(unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), 0) })
    }

    fn stat(&mut self, dir: &OwnedFd, name: &CStr) -> io::Result<()> {
        // SAFETY: fstatat fills the zeroed struct; no link followed.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        check(unsafe {
            libc::fstatat(
                dir.as_raw_fd(),
                name.as_ptr(),
                &mut st,
                libc::AT_SYMLINK_NOFOLLOW,
            )
        })
    }

    fn create(
        &mut self,
        dir: &OwnedFd,
        name: &CStr,
        data: &[u8],
        size: u64,
        fsync: bool,
    ) -> io::Result<u64> {
        use std::io::Write;
        let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL;
        let mut file = std::fs::File::from(open_at(Some(dir), name, flags, 0o644)?);
        let mut left = size;
        while left > 0 {
            let n = left.min(data.len() as u64) as usize;
            file.write_all(&data[..n])?;
            left -= n as u64;
        }
        if fsync {
            file.sync_all()?;
        }
        Ok(size)
    }

    fn read(
        &mut self,
        dir: &OwnedFd,
        name: &CStr,
        buf: &mut [u8],
        want: Option<&[u8]>,
        size: u64,
    ) -> io::Result<u64> {
        use std::io::Read;
        let mut file = std::fs::File::from(open_at(Some(dir), name, libc::O_RDONLY, 0)?);
        let mut total = 0u64;
        loop {
            // Whole chunks of the pattern's length (the last one short), so chunk k of the
            // file is compared with the pattern from its start.
            let mut n = 0;
            while n < buf.len() {
                match file.read(&mut buf[n..])? {
                    0 => break,
                    got => n += got,
                }
            }
            if n == 0 {
                return check_length(total, want.map(|w| (w, size)));
            }
            if let Some(w) = want {
                compare(&buf[..n], w, total)?;
            }
            total += n as u64;
        }
    }
}
