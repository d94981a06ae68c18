//! The io_uring backend: one ring per job thread, the target registered as fixed file 0, the
//! job's buffers registered as fixed buffers, the ring fd registered, and ring flags
//! (single issuer + deferred task running) where the kernel has them. Every optional feature
//! falls back when the kernel refuses it, each registration can be switched off (the
//! overhead table measures them one by one), and the features in use are recorded. Without
//! a file the ring carries no-op requests (`IORING_OP_NOP`): the engine's own cost.

use super::buf::BufferPool;
use super::{Dir, IoBackend};
use io_uring::types::{Fd, Fixed, SubmitArgs, Timespec};
use io_uring::{cqueue, opcode, squeue, CompletionQueue, IoUring, SubmissionQueue, Submitter};
use std::fs::File;
use std::io;
use std::mem::ManuallyDrop;
use std::os::fd::{AsRawFd, RawFd};

/// How long the SQPOLL thread spins without work before it sleeps, ms.
const SQPOLL_IDLE_MS: u32 = 1000;

/// Builds a ring for `depth` I/Os in flight, trying the fastest flags first (with `sqpoll`,
/// a polled submission queue, its thread on the CPU given: refused rather than left out).
/// Returns the ring and the names of the setup flags that took.
pub fn build_ring(
    depth: u32,
    sqpoll: Option<Option<u32>>,
    iopoll: bool,
) -> io::Result<(IoUring, Vec<&'static str>)> {
    let entries = depth.next_power_of_two().max(2);
    let cq = entries * 2;
    let polled = |b: &mut io_uring::Builder| {
        if iopoll {
            b.setup_iopoll();
        }
    };
    if let Some(cpu) = sqpoll {
        // Deferred task running needs the submitting task to run completions, which a
        // polling thread is not: single issuer where it takes, else plain.
        let mut last = None;
        for single in [true, false] {
            let mut b = IoUring::builder();
            b.setup_cqsize(cq).setup_sqpoll(SQPOLL_IDLE_MS);
            polled(&mut b);
            if let Some(cpu) = cpu {
                b.setup_sqpoll_cpu(cpu);
            }
            if single {
                b.setup_single_issuer();
            }
            match b.build(entries) {
                Ok(ring) => {
                    let mut names = vec!["sqpoll"];
                    if single {
                        names.push("single_issuer");
                    }
                    if iopoll {
                        names.insert(0, "iopoll");
                    }
                    return Ok((ring, names));
                }
                Err(e) => last = Some(e),
            }
        }
        let e = last.unwrap_or_else(|| io::Error::other("no ring"));
        return Err(io::Error::new(
            e.kind(),
            match cpu {
                Some(c) => format!("SQPOLL with its thread on CPU {c} refused by the kernel: {e}"),
                None => format!("SQPOLL refused by the kernel: {e}"),
            },
        ));
    }
    type Flags = fn(&mut io_uring::Builder);
    let attempts: [(&[&'static str], Flags); 3] = [
        (&["single_issuer", "defer_taskrun", "taskrun_flag"], |b| {
            b.setup_single_issuer()
                .setup_defer_taskrun()
                .setup_taskrun_flag();
        }),
        (&["coop_taskrun", "taskrun_flag"], |b| {
            b.setup_coop_taskrun().setup_taskrun_flag();
        }),
        (&[], |_| {}),
    ];
    let mut last = None;
    for (names, apply) in attempts {
        let mut b = IoUring::builder();
        b.setup_cqsize(cq);
        polled(&mut b);
        apply(&mut b);
        match b.build(entries) {
            Ok(ring) => {
                let mut names = names.to_vec();
                if iopoll {
                    names.insert(0, "iopoll");
                }
                return Ok((ring, names));
            }
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other("io_uring setup failed")))
}

pub struct UringBackend<'r> {
    submitter: Submitter<'r>,
    sq: SubmissionQueue<'r>,
    cq: CompletionQueue<'r>,
    /// Dropped only when no I/O is in flight (else leaked: the kernel may still write it).
    bufs: ManuallyDrop<BufferPool>,
    inflight: u32,
    /// None: a ring of no-op requests.
    file: Option<File>,
    /// A no-op ring's request lengths by slot: a NOP completes with 0, which the job loop
    /// reads as the length asked for.
    nop_len: Vec<u32>,
    fixed_file: bool,
    fixed_bufs: bool,
    ext_arg: bool,
    depth: u32,
    /// Per-I/O flags of the reads and of the writes (`RWF_DONTCACHE`, `RWF_ATOMIC`).
    rw_flags: (i32, i32),
    /// Every Nth read or write marked `IOSQE_ASYNC` (0: none), and the count towards it.
    force_async: u32,
    until_async: u32,
}

/// Which registrations to attempt (each on unless the spec switches it off).
#[derive(Clone, Copy, Debug)]
pub struct Registrations {
    pub file: bool,
    pub buffers: bool,
    pub ring: bool,
}

impl<'r> UringBackend<'r> {
    /// Registers the file (none: no-op requests), the buffers and the ring fd on `ring`, as
    /// far as `want` asks; records in `features` what could be registered.
    pub fn new(
        ring: &'r mut IoUring,
        file: Option<File>,
        bufs: BufferPool,
        depth: u32,
        want: Registrations,
        features: &mut Vec<&'static str>,
    ) -> io::Result<Self> {
        let ext_arg = ring.params().is_feature_ext_arg();
        let (mut submitter, sq, cq) = ring.split();
        let fixed_file = want.file
            && file
                .as_ref()
                .is_some_and(|f| submitter.register_files(&[f.as_raw_fd()]).is_ok());
        // SAFETY: the iovecs point into `bufs`, which the backend owns and keeps alive (and
        // unregisters in Drop) for as long as the ring can use them.
        let fixed_bufs = want.buffers
            && bufs.count() <= usize::from(u16::MAX)
            && unsafe { submitter.register_buffers(&bufs.iovecs()) }.is_ok();
        let ring_fd = want.ring && submitter.register_ring_fd().is_ok();
        // Registration pinned (and so faulted in) the buffers: what backs them is known now.
        let huge = fixed_bufs && bufs.huge_bytes() > 0;
        for (on, name) in [
            (file.is_none(), "nop"),
            (fixed_file, "registered_file"),
            (fixed_bufs, "fixed_buffers"),
            (huge, "huge_page_buffers"),
            (ring_fd, "registered_ring_fd"),
            (ext_arg, "wait_timeout"),
        ] {
            if on {
                features.push(name);
            }
        }
        Ok(UringBackend {
            submitter,
            sq,
            cq,
            bufs: ManuallyDrop::new(bufs),
            inflight: 0,
            file,
            nop_len: Vec::new(),
            fixed_file,
            fixed_bufs,
            ext_arg,
            depth,
            rw_flags: (0, 0),
            force_async: 0,
            until_async: 0,
        })
    }

    /// Marks every `n`th read or write `IOSQE_ASYNC` from now on (0: none).
    pub fn set_force_async(&mut self, n: u32) {
        self.force_async = n;
        self.until_async = n;
    }

    /// Sets the per-I/O flags of the reads and of the writes from now on.
    pub fn set_rw_flags(&mut self, flags: (i32, i32)) {
        self.rw_flags = flags;
    }

    /// Queues one entry. The ring has room for every I/O in flight, but our view of the
    /// queue's head is refreshed only at a submit: with SQPOLL the kernel's thread consumes
    /// entries on its own, so a full-looking queue is synced, and if the thread has really
    /// not caught up, waited on (`IORING_ENTER_SQ_WAIT`).
    ///
    /// # Safety
    /// Whatever `entry` points to stays valid until its completion is reaped.
    unsafe fn push(&mut self, entry: &squeue::Entry) -> io::Result<()> {
        for attempt in 0..3 {
            // SAFETY: as the caller promised.
            if unsafe { self.sq.push(entry) }.is_ok() {
                self.inflight += 1;
                return Ok(());
            }
            if attempt > 0 {
                self.submitter.squeue_wait()?;
            }
            self.sq.sync();
        }
        Err(io::Error::other("io_uring submission queue full"))
    }

    /// The target's descriptor (-1 on a no-op ring, which never names one).
    fn raw_fd(&self) -> RawFd {
        self.file.as_ref().map_or(-1, AsRawFd::as_raw_fd)
    }
}

/// Builds one read or write SQE for either a registered or a plain file descriptor.
macro_rules! rw_entry {
    ($target:expr, $fixed_bufs:expr, $fixed_op:ident, $op:ident, $ptr:expr, $len:expr, $buf:expr, $off:expr, $flags:expr) => {
        if $fixed_bufs {
            opcode::$fixed_op::new($target, $ptr, $len, $buf as u16)
                .offset($off)
                .rw_flags($flags)
                .build()
        } else {
            opcode::$op::new($target, $ptr, $len)
                .offset($off)
                .rw_flags($flags)
                .build()
        }
    };
}

impl IoBackend for UringBackend<'_> {
    fn name(&self) -> &'static str {
        "uring"
    }

    fn max_depth(&self) -> u32 {
        self.depth
    }

    fn buffers(&mut self) -> &mut BufferPool {
        &mut self.bufs
    }

    #[inline]
    fn prep(&mut self, slot: u32, buf: u32, dir: Dir, offset: u64, len: u32) -> io::Result<()> {
        let ptr = self.bufs.ptr(buf as usize);
        let fb = self.fixed_bufs;
        let flags = match dir {
            Dir::Write => self.rw_flags.1,
            _ => self.rw_flags.0,
        };
        let entry: squeue::Entry = match (dir, self.fixed_file) {
            (Dir::Trim, _) => return Err(super::trim_not_queued()),
            _ if self.file.is_none() => {
                let i = slot as usize;
                if i >= self.nop_len.len() {
                    self.nop_len.resize(i + 1, 0);
                }
                self.nop_len[i] = len;
                opcode::Nop::new().build()
            }
            (Dir::Read, true) => {
                rw_entry!(Fixed(0), fb, ReadFixed, Read, ptr, len, buf, offset, flags)
            }
            (Dir::Read, false) => {
                rw_entry!(
                    Fd(self.raw_fd()),
                    fb,
                    ReadFixed,
                    Read,
                    ptr,
                    len,
                    buf,
                    offset,
                    flags
                )
            }
            (Dir::Write, true) => {
                rw_entry!(
                    Fixed(0),
                    fb,
                    WriteFixed,
                    Write,
                    ptr.cast_const(),
                    len,
                    buf,
                    offset,
                    flags
                )
            }
            (Dir::Write, false) => rw_entry!(
                Fd(self.raw_fd()),
                fb,
                WriteFixed,
                Write,
                ptr.cast_const(),
                len,
                buf,
                offset,
                flags
            ),
        };
        let entry = if self.force_async == 0 {
            entry
        } else {
            self.until_async -= 1;
            if self.until_async == 0 {
                self.until_async = self.force_async;
                entry.flags(squeue::Flags::ASYNC)
            } else {
                entry
            }
        };
        // SAFETY: the buffer stays owned by the backend and untouched by the job loop until
        // this slot's completion is reaped.
        unsafe { self.push(&entry.user_data(u64::from(slot))) }
    }

    fn prep_flush(&mut self, slot: u32, data_only: bool) -> io::Result<()> {
        let flags = if data_only {
            io_uring::types::FsyncFlags::DATASYNC
        } else {
            io_uring::types::FsyncFlags::empty()
        };
        let entry = if self.file.is_none() {
            opcode::Nop::new().build()
        } else if self.fixed_file {
            opcode::Fsync::new(Fixed(0)).flags(flags).build()
        } else {
            opcode::Fsync::new(Fd(self.raw_fd())).flags(flags).build()
        };
        // SAFETY: a flush references no memory of ours.
        unsafe { self.push(&entry.user_data(u64::from(slot))) }
    }

    #[inline]
    fn submit_and_wait(&mut self, want: u32, timeout_ns: u64) -> io::Result<()> {
        self.sq.sync();
        self.cq.sync();
        // Never sleep while the completions asked for are ready: when the kernel has them
        // waiting (in the CQ, or, for one, as deferred task work it flags), submit and
        // collect them without waiting. `want` 0 never waits (fio's
        // iodepth_batch_complete_min=0); above 1 the kernel waits for that many in the CQ.
        let ready = self.cq.len() >= want as usize || (want == 1 && self.sq.taskrun());
        let r = if ready {
            // Completions already in the CQ need no system call unless there is something to
            // submit or deferred work to run.
            if self.sq.is_empty() && !self.sq.taskrun() {
                Ok(0)
            } else {
                self.submitter.submit()
            }
        } else if self.ext_arg && want > 0 {
            let ts = Timespec::new()
                .sec(timeout_ns / 1_000_000_000)
                .nsec((timeout_ns % 1_000_000_000) as u32);
            let args = SubmitArgs::new().timespec(&ts);
            self.submitter.submit_with_args(want as usize, &args)
        } else {
            self.submitter.submit_and_wait(want as usize)
        };
        // The kernel consumed the entries: refresh our view of the queue head.
        self.sq.sync();
        tolerate(r)
    }

    const SUBMIT_TAKES_TIME: bool = true;

    #[inline]
    fn submit(&mut self) -> io::Result<()> {
        self.sq.sync();
        let r = self.submitter.submit();
        self.sq.sync();
        tolerate(r)
    }

    #[inline]
    fn reap<F: FnMut(u32, i32)>(&mut self, max: u32, mut f: F) {
        self.cq.sync();
        let n = if max == 0 { usize::MAX } else { max as usize };
        for cqe in (&mut self.cq).take(n) {
            let cqe: cqueue::Entry = cqe;
            self.inflight -= 1;
            let slot = cqe.user_data() as u32;
            let res = match self.nop_len.get(slot as usize) {
                Some(&len) if cqe.result() == 0 => len as i32,
                _ => cqe.result(),
            };
            f(slot, res);
        }
        self.cq.sync();
    }

    fn file(&self) -> Option<&File> {
        self.file.as_ref()
    }
}

/// A submit that was interrupted, timed out or found the completion queue busy is not an
/// error: the job loop reaps and comes round again.
fn tolerate(r: io::Result<usize>) -> io::Result<()> {
    match r {
        Ok(_) => Ok(()),
        Err(e)
            if matches!(
                e.raw_os_error(),
                Some(libc::ETIME | libc::EINTR | libc::EBUSY)
            ) =>
        {
            Ok(())
        }
        Err(e) => Err(e),
    }
}

impl Drop for UringBackend<'_> {
    fn drop(&mut self) {
        // The job loop drains every I/O before it returns; after a failed submit some may
        // still be in flight: give them a moment, and leak the buffers if they do not finish.
        for _ in 0..100 {
            if self.inflight == 0 {
                break;
            }
            let _ = self.submit_and_wait(1, 10_000_000);
            self.reap(0, |_, _| {});
        }
        if self.fixed_bufs {
            let _ = self.submitter.unregister_buffers();
        }
        if self.inflight == 0 {
            // SAFETY: no I/O references the buffers any more, and they are not used again.
            unsafe { ManuallyDrop::drop(&mut self.bufs) }
        }
    }
}
