//! Opening without following links, and holding what was opened.
//!
//! `openat2(2)` with `RESOLVE_NO_SYMLINKS` (and `RESOLVE_BENEATH` below a directory) makes
//! resolving and opening one step: a link swapped into the path between a check and the
//! open is refused by the kernel (`ELOOP` / `EXDEV`) instead of followed. The descriptor is
//! then the target: [`Pinned::proc_path`] reopens that very inode with other flags
//! (O_DIRECT, read-write) through `/proc/self/fd`, whatever the path names by then.

use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// An open descriptor of a checked target, shared by every plan of a run.
#[derive(Clone, Debug)]
pub struct Pinned {
    fd: Arc<OwnedFd>,
}

impl Pinned {
    pub fn new(fd: OwnedFd) -> Self {
        Pinned { fd: Arc::new(fd) }
    }

    /// `/proc/self/fd/N`: opening it opens the pinned inode itself (a "magic link").
    pub fn proc_path(&self) -> PathBuf {
        PathBuf::from(format!("/proc/self/fd/{}", self.fd.as_raw_fd()))
    }

    /// `fstat` of the pinned inode.
    pub fn metadata(&self) -> io::Result<std::fs::Metadata> {
        std::fs::metadata(self.proc_path())
    }

    /// A file opened from the descriptor (read-only, no O_DIRECT).
    pub fn reopen(&self) -> io::Result<File> {
        File::open(self.proc_path())
    }
}

/// `openat2(dir, path, flags, mode, resolve)`; `dir` None is the working directory (an
/// absolute `path` ignores it). `O_CLOEXEC` is always added.
pub fn openat2(
    dir: Option<RawFd>,
    path: &Path,
    flags: i32,
    mode: u32,
    resolve: u64,
) -> io::Result<OwnedFd> {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path contains NUL"))?;
    // SAFETY: open_how is plain data; all-zero is its documented default.
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    how.flags = (flags | libc::O_CLOEXEC) as u64;
    how.mode = if flags & libc::O_CREAT != 0 {
        u64::from(mode)
    } else {
        0
    };
    how.resolve = resolve;
    loop {
        // SAFETY: a NUL-terminated path, a valid open_how and its size.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_openat2,
                dir.unwrap_or(libc::AT_FDCWD),
                c.as_ptr(),
                &how as *const libc::open_how,
                std::mem::size_of::<libc::open_how>(),
            )
        };
        if fd >= 0 {
            // SAFETY: the kernel returned a new descriptor that nothing else owns.
            return Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) });
        }
        let e = io::Error::last_os_error();
        // EAGAIN: a rename raced the lookup (RESOLVE_BENEATH); the kernel asks to retry.
        if !matches!(e.raw_os_error(), Some(libc::EAGAIN | libc::EINTR)) {
            return Err(e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_are_refused_and_the_pin_outlives_the_path() {
        let d = tempfile::tempdir().expect("tempdir");
        let real = d.path().join("real.bin");
        std::fs::write(&real, b"abc").expect("write");
        let link = d.path().join("link.bin");
        std::os::unix::fs::symlink(&real, &link).expect("symlink");
        let nofollow = libc::RESOLVE_NO_SYMLINKS | libc::RESOLVE_NO_MAGICLINKS;
        let e = openat2(None, &link, libc::O_PATH, 0, nofollow).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ELOOP), "{e}");
        let pin = Pinned::new(openat2(None, &real, libc::O_PATH, 0, nofollow).expect("open"));
        std::fs::rename(&link, &real).expect("swap the file for a link");
        assert_eq!(
            std::fs::read(pin.proc_path()).expect("reopen"),
            b"abc",
            "the pinned inode, not what the path names now"
        );
    }
}
