//! The Linux AIO backend (`io_setup` / `io_submit` / `io_getevents`), what fio's `libaio`
//! engine uses: a job file that names libaio runs on the same kernel path as fio's. On
//! O_DIRECT I/O it queues like io_uring; on buffered I/O the kernel completes each I/O
//! inside `io_submit`, so a buffered libaio job has its I/Os done one by one at submit,
//! with AIO's own cost per I/O (measured here: fio's libaio wrote 6.4-7.1 GB/s into the
//! page cache where its psync wrote 8.4-8.7 GB/s on the same job). The system calls are
//! made directly: the `libc` crate has their numbers but not AIO's structures, which are
//! declared here as the kernel's UAPI (`linux/aio_abi.h`) lays them out.

use super::buf::BufferPool;
use super::{Dir, IoBackend};
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

/// `struct iocb` (little-endian layout: `aio_key` before `aio_rw_flags`).
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Iocb {
    data: u64,
    key: u32,
    rw_flags: i32,
    opcode: u16,
    reqprio: i16,
    fildes: u32,
    buf: u64,
    nbytes: u64,
    offset: i64,
    reserved2: u64,
    flags: u32,
    resfd: u32,
}

/// `struct io_event`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct IoEvent {
    data: u64,
    obj: u64,
    res: i64,
    res2: i64,
}

const _: () = assert!(std::mem::size_of::<Iocb>() == 64);
const _: () = assert!(std::mem::size_of::<IoEvent>() == 32);
#[cfg(not(target_endian = "little"))]
compile_error!("the AIO backend declares struct iocb in its little-endian layout");

const IOCB_CMD_PREAD: u16 = 0;
const IOCB_CMD_PWRITE: u16 = 1;
const IOCB_CMD_FSYNC: u16 = 2;
const IOCB_CMD_FDSYNC: u16 = 3;

pub struct AioBackend {
    file: File,
    bufs: BufferPool,
    /// The kernel's AIO context (`aio_context_t`).
    ctx: libc::c_ulong,
    /// One control block per slot, allocated once: the kernel copies it at submit.
    iocbs: Vec<Iocb>,
    /// Slots prepared and not yet submitted, in order.
    queued: Vec<u32>,
    /// Their control blocks' addresses, for `io_submit`.
    ptrs: Vec<*mut Iocb>,
    events: Vec<IoEvent>,
    /// Completions collected and not yet reaped (slot, result), from `head`.
    done: Vec<(u32, i32)>,
    head: usize,
    /// Prepared and not yet reaped.
    inflight: u32,
    /// Per-I/O flags of the reads and of the writes (`RWF_DONTCACHE`, `RWF_ATOMIC`).
    rw_flags: (i32, i32),
}

fn last_error() -> io::Error {
    io::Error::last_os_error()
}

impl AioBackend {
    /// A context for `depth` I/Os in flight on `file`.
    pub fn new(file: File, bufs: BufferPool, depth: u32) -> io::Result<Self> {
        let depth = depth.max(1);
        let mut ctx: libc::c_ulong = 0;
        // SAFETY: io_setup writes the new context into `ctx`, which outlives the call.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_io_setup,
                depth as libc::c_long,
                &mut ctx as *mut libc::c_ulong,
            )
        };
        if rc < 0 {
            return Err(last_error());
        }
        let n = depth as usize;
        Ok(AioBackend {
            file,
            bufs,
            ctx,
            iocbs: vec![Iocb::default(); n],
            queued: Vec::with_capacity(n),
            ptrs: Vec::with_capacity(n),
            events: vec![IoEvent::default(); n],
            done: Vec::with_capacity(n),
            head: 0,
            inflight: 0,
            rw_flags: (0, 0),
        })
    }

    /// Sets the per-I/O flags of the reads and of the writes from now on.
    pub fn set_rw_flags(&mut self, flags: (i32, i32)) {
        self.rw_flags = flags;
    }

    fn queue(&mut self, slot: u32, cb: Iocb) -> io::Result<()> {
        let Some(at) = self.iocbs.get_mut(slot as usize) else {
            return Err(io::Error::other(format!("aio backend: no slot {slot}")));
        };
        *at = Iocb {
            data: u64::from(slot),
            fildes: self.file.as_raw_fd() as u32,
            ..cb
        };
        self.queued.push(slot);
        self.inflight += 1;
        Ok(())
    }

    /// Collects up to what is outstanding, waiting for at least `min` for at most
    /// `timeout_ns`.
    fn collect(&mut self, min: usize, timeout_ns: u64) -> io::Result<()> {
        let outstanding = (self.inflight as usize)
            .saturating_sub(self.done.len() - self.head)
            .saturating_sub(self.queued.len());
        if outstanding == 0 {
            return Ok(());
        }
        let ts = libc::timespec {
            tv_sec: (timeout_ns / 1_000_000_000).min(i64::MAX as u64) as libc::time_t,
            tv_nsec: (timeout_ns % 1_000_000_000) as libc::c_long,
        };
        let max = outstanding.min(self.events.len());
        // SAFETY: `events` holds `max` or more entries for the kernel to fill; `ts` outlives
        // the call.
        let n = unsafe {
            libc::syscall(
                libc::SYS_io_getevents,
                self.ctx,
                min.min(max) as libc::c_long,
                max as libc::c_long,
                self.events.as_mut_ptr(),
                &ts as *const libc::timespec,
            )
        };
        if n < 0 {
            let e = last_error();
            return match e.raw_os_error() {
                Some(libc::EINTR) => Ok(()),
                _ => Err(e),
            };
        }
        for e in &self.events[..n as usize] {
            // A result is bytes or -errno, which fit an i32 (I/Os are at most 64 MiB).
            self.done.push((e.data as u32, e.res as i32));
        }
        Ok(())
    }
}

impl IoBackend for AioBackend {
    fn name(&self) -> &'static str {
        "aio"
    }

    fn max_depth(&self) -> u32 {
        self.iocbs.len() as u32
    }

    fn buffers(&mut self) -> &mut BufferPool {
        &mut self.bufs
    }

    fn prep(&mut self, slot: u32, buf: u32, dir: Dir, offset: u64, len: u32) -> io::Result<()> {
        let (opcode, rw_flags) = match dir {
            Dir::Read => (IOCB_CMD_PREAD, self.rw_flags.0),
            Dir::Write => (IOCB_CMD_PWRITE, self.rw_flags.1),
            Dir::Trim => return Err(super::trim_not_queued()),
        };
        let data = self.bufs.get_mut(buf as usize);
        if (len as usize) > data.len() {
            return Err(io::Error::other(format!(
                "aio backend: {len} bytes on a buffer of {}",
                data.len()
            )));
        }
        let cb = Iocb {
            opcode,
            buf: data.as_mut_ptr() as u64,
            nbytes: u64::from(len),
            offset: offset as i64,
            rw_flags,
            ..Iocb::default()
        };
        self.queue(slot, cb)
    }

    fn prep_flush(&mut self, slot: u32, data_only: bool) -> io::Result<()> {
        let opcode = if data_only {
            IOCB_CMD_FDSYNC
        } else {
            IOCB_CMD_FSYNC
        };
        self.queue(
            slot,
            Iocb {
                opcode,
                ..Iocb::default()
            },
        )
    }

    const SUBMIT_TAKES_TIME: bool = true;

    /// Submits what is queued. A control block the kernel refuses at submit (it names the
    /// first it could not take) completes with that error, and the rest go on.
    fn submit(&mut self) -> io::Result<()> {
        while !self.queued.is_empty() {
            self.ptrs.clear();
            for &slot in &self.queued {
                self.ptrs.push(&mut self.iocbs[slot as usize] as *mut Iocb);
            }
            // SAFETY: every pointer is to a control block of `iocbs`, which is not resized;
            // the buffers they name stay untouched by the job loop until their completion
            // is reaped, and the kernel copies each block during the call.
            let n = unsafe {
                libc::syscall(
                    libc::SYS_io_submit,
                    self.ctx,
                    self.ptrs.len() as libc::c_long,
                    self.ptrs.as_mut_ptr(),
                )
            };
            if n < 0 {
                let e = last_error();
                match e.raw_os_error() {
                    Some(libc::EAGAIN) | Some(libc::EINTR) => return Ok(()),
                    errno => {
                        let slot = self.queued.remove(0);
                        self.done.push((slot, -errno.unwrap_or(libc::EIO)));
                    }
                }
            } else {
                self.queued.drain(..n as usize);
            }
        }
        Ok(())
    }

    fn submit_and_wait(&mut self, want: u32, timeout_ns: u64) -> io::Result<()> {
        self.submit()?;
        let have = self.done.len() - self.head;
        let min = (want as usize).saturating_sub(have);
        self.collect(min, if min == 0 { 0 } else { timeout_ns })
    }

    fn reap<F: FnMut(u32, i32)>(&mut self, max: u32, mut f: F) {
        let n = if max == 0 { usize::MAX } else { max as usize };
        let end = self.done.len().min(self.head.saturating_add(n));
        for &(slot, res) in &self.done[self.head..end] {
            self.inflight -= 1;
            f(slot, res);
        }
        self.head = end;
        if self.head == self.done.len() {
            self.done.clear();
            self.head = 0;
        }
    }

    fn file(&self) -> Option<&File> {
        Some(&self.file)
    }
}

impl Drop for AioBackend {
    fn drop(&mut self) {
        // io_destroy waits for every I/O still in flight: the buffers, dropped after, are
        // then no longer the kernel's.
        // SAFETY: the context is ours and not used again.
        unsafe { libc::syscall(libc::SYS_io_destroy, self.ctx) };
    }
}
