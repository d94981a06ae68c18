//! The files workload's operations through io_uring: `IORING_OP_MKDIRAT`, `UNLINKAT`,
//! `STATX`, and a file's whole life in one submission: `OPENAT` into a direct descriptor
//! (the ring's file slot 0, never a descriptor of the process), its `WRITE`s or `READ`s,
//! `FSYNC` when asked, and `CLOSE`, hard-linked so each runs after the one before it
//! whatever that one's result (a failed open leaves the slot empty and what follows fails
//! with EBADF, never touching another file). A file read in one submission is read with
//! one byte more asked for after its expected end; a file of another length goes the long
//! way, a submission per read.

use super::ops::{check_length, compare, Ops};
use io_uring::{opcode, squeue, types, IoUring, Probe};
use std::ffi::CStr;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

/// Entries of the ring: a chain longer than this is submitted in parts, each waited for.
const ENTRIES: u32 = 64;
/// The ring's one file slot.
const SLOT: u32 = 0;

pub struct Ring {
    ring: IoUring,
    entries: Vec<squeue::Entry>,
    results: Vec<i32>,
    statx: Box<libc::statx>,
    probe: Box<[u8; 1]>,
    /// Requests submitted and not yet seen complete (only after a failed wait): the ring
    /// waits for them before it goes, as they may still write into memory of this job.
    pending: usize,
}

/// The opcodes the workload needs, by name.
const NEEDED: [(u8, &str); 8] = [
    (opcode::OpenAt::CODE, "OPENAT"),
    (opcode::Close::CODE, "CLOSE"),
    (opcode::Statx::CODE, "STATX"),
    (opcode::UnlinkAt::CODE, "UNLINKAT"),
    (opcode::MkDirAt::CODE, "MKDIRAT"),
    (opcode::Read::CODE, "READ"),
    (opcode::Write::CODE, "WRITE"),
    (opcode::Fsync::CODE, "FSYNC"),
];

impl Ring {
    /// A ring with one file slot, when the kernel has every operation the workload uses;
    /// else why not (naming what it lacks).
    pub fn new() -> Result<Ring, String> {
        let ring = IoUring::new(ENTRIES).map_err(|e| format!("io_uring_setup: {e}"))?;
        let mut probe = Probe::new();
        ring.submitter()
            .register_probe(&mut probe)
            .map_err(|e| format!("probing io_uring's operations: {e}"))?;
        let missing: Vec<&str> = NEEDED
            .iter()
            .filter(|(code, _)| !probe.is_supported(*code))
            .map(|(_, name)| *name)
            .collect();
        if !missing.is_empty() {
            return Err(format!(
                "the kernel's io_uring lacks {}",
                missing.join(", ")
            ));
        }
        ring.submitter()
            .register_files_sparse(1)
            .map_err(|e| format!("registering a file slot: {e}"))?;
        Ok(Ring {
            ring,
            entries: Vec::new(),
            results: Vec::new(),
            // SAFETY: statx is plain data; zero is a valid value of every field.
            statx: Box::new(unsafe { std::mem::zeroed() }),
            probe: Box::new([0]),
            pending: 0,
        })
    }

    /// Runs `self.entries` in order, each hard-linked to the next, and waits for all of
    /// them: their results in `self.results`, in the same order.
    fn chain(&mut self) -> io::Result<()> {
        let n = self.entries.len();
        self.results.clear();
        self.results.resize(n, 0);
        let mut start = 0;
        while start < n {
            let end = (start + ENTRIES as usize).min(n);
            for (i, e) in self.entries[start..end].iter().enumerate() {
                let at = start + i;
                let flags = if at + 1 < end {
                    squeue::Flags::IO_HARDLINK
                } else {
                    squeue::Flags::empty()
                };
                let e = e.clone().user_data(at as u64).flags(flags);
                // SAFETY: every buffer and name the entries point to outlives the wait
                // below (or, if it fails, `pending` keeps the ring until they complete).
                unsafe { self.ring.submission().push(&e) }
                    .map_err(|_| io::Error::other("io_uring submission queue full"))?;
            }
            self.pending = end - start;
            while self.pending > 0 {
                match self.ring.submit_and_wait(self.pending) {
                    Ok(_) => {}
                    Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
                    Err(e) => return Err(e),
                }
                for cqe in self.ring.completion() {
                    if let Some(r) = self.results.get_mut(cqe.user_data() as usize) {
                        *r = cqe.result();
                        self.pending -= 1;
                    }
                }
            }
            start = end;
        }
        Ok(())
    }

    /// One operation; its result.
    fn one(&mut self, e: squeue::Entry) -> io::Result<i32> {
        self.entries.clear();
        self.entries.push(e);
        self.chain()?;
        ok(self.results[0])
    }

    fn open(&self, dir: &OwnedFd, name: &CStr, flags: i32, mode: u32) -> squeue::Entry {
        opcode::OpenAt::new(types::Fd(dir.as_raw_fd()), name.as_ptr())
            .flags(flags | libc::O_NOFOLLOW)
            .mode(mode)
            .file_index(types::DestinationSlot::try_from_slot_target(SLOT).ok())
            .build()
    }

    fn close() -> squeue::Entry {
        opcode::Close::new(types::Fixed(SLOT)).build()
    }

    /// Reads the file a submission per read until its end (a file not of the expected
    /// length), filling whole chunks of `buf` so each is compared with the pattern from
    /// its start.
    fn read_loop(
        &mut self,
        dir: &OwnedFd,
        name: &CStr,
        buf: &mut [u8],
        want: Option<&[u8]>,
        size: u64,
    ) -> io::Result<u64> {
        self.one(self.open(dir, name, libc::O_RDONLY, 0))?;
        let r = (|| {
            let mut total = 0u64;
            loop {
                let mut n = 0;
                while n < buf.len() {
                    let rest = &mut buf[n..];
                    let e =
                        opcode::Read::new(types::Fixed(SLOT), rest.as_mut_ptr(), rest.len() as u32)
                            .offset(total + n as u64)
                            .build();
                    match self.one(e)? {
                        0 => break,
                        got => n += got as usize,
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
        })();
        let closed = self.one(Self::close());
        let total = r?;
        closed.map(|_| total)
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        // Requests a failed wait left behind may still write into this job's memory.
        for _ in 0..100 {
            if self.pending == 0 || self.ring.submit_and_wait(self.pending).is_err() {
                break;
            }
            self.pending = self.pending.saturating_sub(self.ring.completion().count());
        }
    }
}

fn ok(r: i32) -> io::Result<i32> {
    if r < 0 {
        Err(io::Error::from_raw_os_error(-r))
    } else {
        Ok(r)
    }
}

impl Ops for Ring {
    fn mkdir(&mut self, dir: &OwnedFd, name: &CStr) -> io::Result<()> {
        let e = opcode::MkDirAt::new(types::Fd(dir.as_raw_fd()), name.as_ptr())
            .mode(0o755)
            .build();
        self.one(e).map(drop)
    }

    fn rmdir(&mut self, dir: &OwnedFd, name: &CStr) -> io::Result<()> {
        let e = opcode::UnlinkAt::new(types::Fd(dir.as_raw_fd()), name.as_ptr())
            .flags(libc::AT_REMOVEDIR)
            .build();
        self.one(e).map(drop)
    }

    fn unlink(&mut self, dir: &OwnedFd, name: &CStr) -> io::Result<()> {
        let e = opcode::UnlinkAt::new(types::Fd(dir.as_raw_fd()), name.as_ptr()).build();
        self.one(e).map(drop)
    }

    fn stat(&mut self, dir: &OwnedFd, name: &CStr) -> io::Result<()> {
        let buf: *mut libc::statx = &mut *self.statx;
        let e = opcode::Statx::new(types::Fd(dir.as_raw_fd()), name.as_ptr(), buf.cast())
            .flags(libc::AT_SYMLINK_NOFOLLOW)
            .mask(libc::STATX_BASIC_STATS)
            .build();
        self.one(e).map(drop)
    }

    fn create(
        &mut self,
        dir: &OwnedFd,
        name: &CStr,
        data: &[u8],
        size: u64,
        fsync: bool,
    ) -> io::Result<u64> {
        let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL;
        self.entries.clear();
        self.entries.push(self.open(dir, name, flags, 0o644));
        let mut lens = Vec::new();
        let mut off = 0u64;
        while off < size {
            let n = (size - off).min(data.len() as u64) as u32;
            let e = opcode::Write::new(types::Fixed(SLOT), data.as_ptr(), n)
                .offset(off)
                .build();
            self.entries.push(e);
            lens.push(n);
            off += u64::from(n);
        }
        if fsync {
            self.entries
                .push(opcode::Fsync::new(types::Fixed(SLOT)).build());
        }
        self.entries.push(Self::close());
        self.chain()?;
        let r = &self.results;
        ok(r[0])?;
        for (i, &want) in lens.iter().enumerate() {
            if ok(r[1 + i])? as u32 != want {
                return Err(io::Error::other(format!(
                    "short write: {} of {want} bytes at {}",
                    r[1 + i],
                    i as u64 * data.len() as u64
                )));
            }
        }
        for &rest in &r[1 + lens.len()..] {
            ok(rest)?;
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
        if size > buf.len() as u64 {
            return self.read_loop(dir, name, buf, want, size);
        }
        // The file as create made it: one chunk, then nothing after it.
        let len = size as usize;
        self.entries.clear();
        self.entries.push(self.open(dir, name, libc::O_RDONLY, 0));
        self.entries
            .push(opcode::Read::new(types::Fixed(SLOT), buf.as_mut_ptr(), len as u32).build());
        self.entries.push(
            opcode::Read::new(types::Fixed(SLOT), self.probe.as_mut_ptr(), 1)
                .offset(size)
                .build(),
        );
        self.entries.push(Self::close());
        self.chain()?;
        let r = &self.results;
        ok(r[0])?;
        let (got, after) = (ok(r[1])? as usize, ok(r[2])?);
        ok(r[3])?;
        if got != len || after != 0 {
            return self.read_loop(dir, name, buf, want, size);
        }
        if let Some(w) = want {
            compare(&buf[..got], w, 0)?;
        }
        Ok(got as u64)
    }
}
