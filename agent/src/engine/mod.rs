//! The I/O engine: a small backend contract (prep / submit-and-wait / reap) and the job loop
//! that keeps a queue full, timestamps per batch, and hands per-interval statistics to the
//! runner.
//!
//! Backends: [`uring`] (io_uring with fixed buffers, a registered file and ring fd), [`null`]
//! (completes everything at once: engine overhead, like fio's null engine), [`sync`]
//! (pread/pwrite, used when io_uring cannot be set up, or on request) and [`aio`] (Linux
//! AIO, fio's libaio).

pub mod aio;
pub mod buf;
pub mod job;
pub mod null;
mod qd_search;
pub mod replay;
pub mod sync;
pub mod timed;
pub mod uring;
pub mod verify;

use buf::BufferPool;
use std::io;

/// Direction of one I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    Read,
    Write,
    /// A trim (discard): made synchronously through [`IoBackend::trim`], never queued.
    Trim,
}

impl Dir {
    pub fn as_str(self) -> &'static str {
        match self {
            Dir::Read => "read",
            Dir::Write => "write",
            Dir::Trim => "trim",
        }
    }
}

/// The contract every backend implements. Slots are queue positions `0..depth`; the job loop
/// guarantees a slot's buffer is never touched while its I/O is in flight.
pub trait IoBackend {
    /// Short name recorded in results (`uring`, `null`, `sync`, `aio`).
    fn name(&self) -> &'static str;
    /// Most I/Os this backend can have in flight.
    fn max_depth(&self) -> u32;
    fn buffers(&mut self) -> &mut BufferPool;
    /// Queues one I/O of `len` bytes at `offset` on buffer `buf`, tagged with `slot`.
    fn prep(&mut self, slot: u32, buf: u32, dir: Dir, offset: u64, len: u32) -> io::Result<()>;
    /// Queues a flush of the target (fsync, or fdatasync with `data_only`) tagged with
    /// `slot`, as one more I/O in flight; it completes with 0 or `-errno`.
    fn prep_flush(&mut self, slot: u32, data_only: bool) -> io::Result<()>;
    /// Whether `submit` is a system call, whose time the job loop's clock must see (the
    /// next I/O's latency starts after it).
    const SUBMIT_TAKES_TIME: bool = false;
    /// Hands what is queued to the kernel now, without waiting (backends that do the I/O in
    /// `submit_and_wait` need not).
    fn submit(&mut self) -> io::Result<()> {
        Ok(())
    }
    /// Submits everything queued and waits until `want` completions are ready or `timeout_ns`
    /// has passed.
    fn submit_and_wait(&mut self, want: u32, timeout_ns: u64) -> io::Result<()>;
    /// Calls `f(slot, result)` for every ready completion, at most `max` of them (0: all);
    /// `result` is bytes or `-errno`.
    fn reap<F: FnMut(u32, i32)>(&mut self, max: u32, f: F);
    /// The target's open file, for the calls made on it directly (`None`: no device).
    fn file(&self) -> Option<&std::fs::File> {
        None
    }
    /// Flushes the target to stable storage.
    fn fsync(&mut self) -> io::Result<()> {
        self.file().map_or(Ok(()), std::fs::File::sync_all)
    }
    /// Drops the target's pages from the page cache (before a read-back, so that it reads
    /// the device; a no-op for O_DIRECT I/O, which bypasses the cache).
    fn drop_cache(&mut self) -> io::Result<()> {
        self.file().map_or(Ok(()), drop_cached_pages)
    }
    /// Drops the target's pages of `len` bytes at `offset` from the page cache (a job's own
    /// span at each new pass, as fio's reopen of the file does; writeback of its dirty
    /// pages starts).
    fn drop_cache_range(&mut self, offset: u64, len: u64) -> io::Result<()> {
        self.file()
            .map_or(Ok(()), |f| drop_cached_range(f, offset, len))
    }
    /// Trims (discards) `len` bytes at `offset`, synchronously; `Ok(false)` when the target
    /// does not support it.
    fn trim(&mut self, offset: u64, len: u64) -> io::Result<bool> {
        self.file().map_or(Ok(false), |f| trim_file(f, offset, len))
    }
}

/// A trim on a file descriptor: `BLKDISCARD` on a block device, a punched hole (the
/// filesystem's trim) in a file. `Ok(false)` when the device or filesystem has none.
pub(crate) fn trim_file(file: &std::fs::File, offset: u64, len: u64) -> io::Result<bool> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::FileTypeExt;
    /// `_IO(0x12, 119)`.
    const BLKDISCARD: libc::c_ulong = 0x1277;
    let fd = file.as_raw_fd();
    let rc = if file.metadata()?.file_type().is_block_device() {
        let range: [u64; 2] = [offset, len];
        // SAFETY: BLKDISCARD reads two u64 (start, length) from the pointer, valid for the call.
        unsafe { libc::ioctl(fd, BLKDISCARD, range.as_ptr()) }
    } else {
        let (off, n) = (offset as libc::off_t, len as libc::off_t);
        // SAFETY: a valid descriptor; the call takes plain integers.
        unsafe {
            libc::fallocate(
                fd,
                libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                off,
                n,
            )
        }
    };
    if rc == 0 {
        return Ok(true);
    }
    let e = io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::EOPNOTSUPP) | Some(libc::ENOTTY) | Some(libc::ENOSYS) => Ok(false),
        _ => Err(e),
    }
}

/// A trim handed to `prep`: the job loop makes trims through [`IoBackend::trim`].
fn trim_not_queued() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        "a trim is made with trim(), not queued",
    )
}

/// The access hint of a job's file (fio's `fadvise_hint`, given after each open as fio
/// does): RANDOM or SEQUENTIAL by the pattern, or as named; nothing for `none`.
pub(crate) fn advise_access(
    file: &std::fs::File,
    hint: shared::spec::FadviseHint,
    random: bool,
) -> io::Result<()> {
    use shared::spec::FadviseHint as H;
    let advice = match hint {
        H::None => return Ok(()),
        H::Type if random => libc::POSIX_FADV_RANDOM,
        H::Type | H::Sequential => libc::POSIX_FADV_SEQUENTIAL,
        H::Random => libc::POSIX_FADV_RANDOM,
    };
    fadvise(file, 0, 0, advice)
}

/// `posix_fadvise(DONTNEED)` over the whole file.
pub(crate) fn drop_cached_pages(file: &std::fs::File) -> io::Result<()> {
    drop_cached_range(file, 0, 0)
}

/// `posix_fadvise(DONTNEED)` over `len` bytes at `offset` (0: to the end).
pub(crate) fn drop_cached_range(file: &std::fs::File, offset: u64, len: u64) -> io::Result<()> {
    fadvise(file, offset, len, libc::POSIX_FADV_DONTNEED)
}

fn fadvise(file: &std::fs::File, offset: u64, len: u64, advice: libc::c_int) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let (Ok(offset), Ok(len)) = (libc::off_t::try_from(offset), libc::off_t::try_from(len)) else {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    };
    // SAFETY: a valid descriptor; the call only advises the kernel.
    let rc = unsafe { libc::posix_fadvise(file.as_raw_fd(), offset, len, advice) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::from_raw_os_error(rc))
    }
}
