//! The files workload (`--preset files`): a tree of directories and small files made,
//! read and removed phase by phase in a work directory of its own, each operation an I/O of
//! the run (its latency in the job's histogram, its bytes in the sample), so samples,
//! steps, histograms, the store and the live view are the engine's own.
//!
//! Safety: every operation is relative to a directory descriptor (`*at` system calls with
//! no link followed): the target directory as the access check pinned it, then the work
//! directory, which carries a mark naming its owner (`shared::files::MARK`). Only marked
//! trees are removed: at the end of the last phase, after a stop or a failure, and, left by
//! a killed agent, at the next files run's start (said in the run's notes).

use crate::engine::job::{JobMsg, JobSetup, RunShared};
use crate::engine::Dir;
use crate::stats::interval::Completed;
use crate::stats::IntervalStats;
use crate::workload::Plan;
use shared::files::{FilesSpec, Phase, MARK, WORK_PREFIX};
use shared::RunError;
use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::mpsc::Sender;
use std::time::Instant;

/// The free bytes and free inodes of the filesystem holding directory `dir` (asked of the
/// descriptor held, not of a path looked up again).
fn free_space(dir: &OwnedFd) -> std::io::Result<(u64, u64)> {
    // SAFETY: fstatvfs fills the zeroed struct from a descriptor we hold.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    check(unsafe { libc::fstatvfs(dir.as_raw_fd(), &mut st) })?;
    Ok((st.f_bavail * st.f_frsize, st.f_favail))
}

fn cstr(bytes: &[u8]) -> std::io::Result<CString> {
    CString::new(bytes).map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))
}

/// `openat(dir, name, flags)` with no link followed.
fn open_at(dir: Option<&OwnedFd>, name: &[u8], flags: i32, mode: u32) -> std::io::Result<OwnedFd> {
    let c = cstr(name)?;
    let base = dir.map_or(libc::AT_FDCWD, |d| d.as_raw_fd());
    // SAFETY: a plain openat on a valid C string; the descriptor is owned from here.
    let fd = unsafe {
        libc::openat(
            base,
            c.as_ptr(),
            flags | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            mode,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `fd` was just opened and is not owned elsewhere.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn dir_at(dir: &OwnedFd, name: &str) -> std::io::Result<OwnedFd> {
    open_at(
        Some(dir),
        name.as_bytes(),
        libc::O_DIRECTORY | libc::O_RDONLY,
        0,
    )
}

fn check(rc: libc::c_int) -> std::io::Result<()> {
    if rc < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// The target directory, as the access check pinned it (its `/proc/self/fd` link, which
/// resolves to that very directory), or by the path the command line gave.
fn target_dir(plan: &Plan) -> std::io::Result<OwnedFd> {
    let c = cstr(plan.target().at().as_os_str().as_encoded_bytes())?;
    // SAFETY: a plain open on a valid C string; the descriptor is owned from here.
    let fd = unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_DIRECTORY | libc::O_RDONLY | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: just opened.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn files_spec(plan: &Plan) -> Result<&FilesSpec, String> {
    plan.spec()
        .files
        .as_ref()
        .ok_or_else(|| "not a files workload".to_string())
}

/// Before a phase's jobs start. The first phase removes the trees earlier runs left behind
/// (marked, their agent gone), checks the filesystem has room for the tree (bytes and
/// inodes, naming both), and makes the marked work directory; every phase then finds it
/// (no link followed). Returns what it noted.
pub fn prepare(plan: &Plan) -> Result<Option<String>, String> {
    let f = files_spec(plan)?;
    let path = plan.target().path.display().to_string();
    let target = target_dir(plan).map_err(|e| format!("opening the directory {path}: {e}"))?;
    if !f.first {
        return dir_at(&target, &f.work)
            .map(drop)
            .map(|()| None)
            .map_err(|e| format!("the work directory {path}/{}: {e}", f.work));
    }
    let cleared = clear_leftovers(&target, &path);
    let jobs = plan.spec().jobs;
    let files = f.total_files(jobs);
    let inodes = files + u64::from(jobs) * (u64::from(f.dirs) + 1) + 2;
    let block = 4096u64;
    let bytes = files * f.file_size.div_ceil(block) * block;
    let (free_bytes, free_inodes) =
        free_space(&target).map_err(|e| format!("statvfs {path}: {e}"))?;
    if inodes > free_inodes || bytes > free_bytes {
        return Err(format!(
            "the tree needs {inodes} inodes and {bytes} bytes; {path} has {free_inodes} inodes and {free_bytes} bytes free"
        ));
    }
    let work = cstr(f.work.as_bytes()).map_err(|e| e.to_string())?;
    // SAFETY: mkdirat on a valid C string below a directory we hold.
    check(unsafe { libc::mkdirat(target.as_raw_fd(), work.as_ptr(), 0o755) }).map_err(|e| {
        format!(
            "making the work directory {path}/{}: {e} (a directory of that name that is not this run's is never used)",
            f.work
        )
    })?;
    let dir = dir_at(&target, &f.work).map_err(|e| e.to_string())?;
    let mark = open_at(
        Some(&dir),
        MARK.as_bytes(),
        libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL,
        0o644,
    )
    .map_err(|e| format!("marking {path}/{}: {e}", f.work))?;
    let text = format!(
        "pid={}\nstarted_ms={}\n",
        std::process::id(),
        crate::env::unix_ms()
    );
    std::fs::File::from(mark)
        .write_all_text(&text)
        .map_err(|e| format!("marking {path}/{}: {e}", f.work))?;
    Ok(cleared)
}

/// Writes the whole text (a small helper so `prepare` reads as its steps).
trait WriteAllText {
    fn write_all_text(self, text: &str) -> std::io::Result<()>;
}

impl WriteAllText for std::fs::File {
    fn write_all_text(mut self, text: &str) -> std::io::Result<()> {
        use std::io::Write;
        self.write_all(text.as_bytes())
    }
}

/// Removes the marked trees of runs whose agent is gone (a stop, kill or crash before their
/// end); says which.
fn clear_leftovers(target: &OwnedFd, path: &str) -> Option<String> {
    let at = format!("/proc/self/fd/{}", target.as_raw_fd());
    let mut removed = Vec::new();
    for entry in std::fs::read_dir(&at).ok()?.flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        if !name.starts_with(WORK_PREFIX) {
            continue;
        }
        let Ok(dir) = dir_at(target, &name) else {
            continue;
        };
        let Some(owner) = owner_of(&dir) else {
            continue;
        };
        if owner != std::process::id() && Path::new(&format!("/proc/{owner}")).exists() {
            continue;
        }
        if remove_tree(target, &name).is_ok() {
            removed.push(name);
        }
    }
    (!removed.is_empty()).then(|| {
        format!(
            "removed {} tree(s) an earlier files run left in {path} (stopped, killed or crashed before its end): {}",
            removed.len(),
            removed.join(", ")
        )
    })
}

/// The pid a work directory's mark names, if it carries one.
fn owner_of(dir: &OwnedFd) -> Option<u32> {
    let mark = open_at(Some(dir), MARK.as_bytes(), libc::O_RDONLY, 0).ok()?;
    let text = std::io::read_to_string(std::fs::File::from(mark)).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("pid="))
        .and_then(|p| p.trim().parse().ok())
}

/// Removes work directory `name` below `target` and everything in it, following no link
/// (std's `remove_dir_all` opens each level with `O_NOFOLLOW` and unlinks relative to it).
fn remove_tree(target: &OwnedFd, name: &str) -> std::io::Result<()> {
    let at = Path::new(&format!("/proc/self/fd/{}", target.as_raw_fd())).join(name);
    std::fs::remove_dir_all(at)
}

/// After a phase's jobs ended: the work directory goes when this was the run's last phase,
/// or the run stops here (stopped or failed). Returns what it could not remove.
pub fn finish(plan: &Plan, ended_early: bool) -> Option<String> {
    let f = files_spec(plan).ok()?;
    if !(f.last || ended_early) {
        return None;
    }
    let path = plan.target().path.display().to_string();
    let target = target_dir(plan).ok()?;
    let dir = dir_at(&target, &f.work).ok()?;
    if owner_of(&dir) != Some(std::process::id()) {
        return Some(format!(
            "{path}/{} is not marked as this run's: left in place",
            f.work
        ));
    }
    remove_tree(&target, &f.work)
        .err()
        .map(|e| format!("could not remove {path}/{}: {e}", f.work))
}

/// One job of a files phase: its part of the tree (`jJ/dD/fF`), each operation timed and
/// counted as an I/O (writes: mkdir, create, delete, rmdir; reads: stat, read).
pub fn job_thread(plan: &Plan, job: usize, shared: &RunShared, tx: &Sender<JobMsg>) {
    let setup = || -> Result<(FilesSpec, OwnedFd), String> {
        let f = files_spec(plan)?.clone();
        let target = target_dir(plan).map_err(|e| e.to_string())?;
        let work = dir_at(&target, &f.work).map_err(|e| format!("{}: {e}", f.work))?;
        Ok((f, work))
    };
    let (f, work) = match setup() {
        Ok(s) => s,
        Err(e) => {
            let _ = tx.send(JobMsg::Ready {
                job,
                result: Err(format!("job {job}: {e}")),
            });
            return;
        }
    };
    let _ = tx.send(JobMsg::Ready {
        job,
        result: Ok(JobSetup {
            backend: "files",
            note: None,
            features: vec!["plain system calls".into()],
            buffers: (0, 0),
        }),
    });
    if shared.gate.wait().is_none() {
        return done(tx, job, 0, None);
    }
    let mut t = Timer::new(job, shared, tx);
    // What create writes, and what a verified read compares with.
    let data = match f.phase {
        Phase::Create => pattern(plan, job, f.file_size),
        Phase::Read if f.verify => pattern(plan, job, f.file_size),
        _ => Vec::new(),
    };
    let r = run_phase(&f, &work, job, &data, &mut t);
    let end_ns = t.elapsed();
    t.flush(end_ns);
    // elbencho's first-done: what this job had done when the first job ended (itself, if
    // it was the first).
    shared.first_done_ns.fetch_min(end_ns, Ordering::SeqCst);
    let (ops, bytes) = t.at_first_done.unwrap_or((t.ops, t.bytes));
    let _ = tx.send(JobMsg::FirstDone { job, ops, bytes });
    let error = r.err().map(|(what, e)| RunError {
        message: format!("{} {what}: {e}", f.phase.name()),
        op: Some(f.phase.name().to_string()),
        offset: None,
        errno: e.raw_os_error(),
    });
    done(tx, job, end_ns, error);
}

fn done(tx: &Sender<JobMsg>, job: usize, end_ns: u64, error: Option<RunError>) {
    let _ = tx.send(JobMsg::Done {
        job,
        end_ns,
        error,
        fsync_ns: None,
    });
}

/// The bytes each file is written with: the run's data pattern (zeros, or bytes drawn
/// from the job's seed), at most 1 MiB written over and over.
fn pattern(plan: &Plan, job: usize, size: u64) -> Vec<u8> {
    let n = size.min(1 << 20) as usize;
    if plan.spec().pattern == shared::DataPattern::Zeros {
        return vec![0; n];
    }
    let mut x = plan.spec().seed ^ (job as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// A job's clock and its interval: each operation's latency and bytes, the interval sent
/// when the next one begins.
struct Timer<'a> {
    job: usize,
    shared: &'a RunShared,
    tx: &'a Sender<JobMsg>,
    epoch: Instant,
    interval_ns: u64,
    cur: IntervalStats,
    /// Operations and bytes so far, and as they were when the first job ended.
    ops: u64,
    bytes: u64,
    at_first_done: Option<(u64, u64)>,
}

impl<'a> Timer<'a> {
    fn new(job: usize, shared: &'a RunShared, tx: &'a Sender<JobMsg>) -> Self {
        let interval_ns = shared.interval_ns.max(1);
        Timer {
            job,
            shared,
            tx,
            epoch: Instant::now(),
            interval_ns,
            cur: IntervalStats::new(0, 0, interval_ns),
            ops: 0,
            bytes: 0,
            at_first_done: None,
        }
    }

    fn elapsed(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }

    fn stopped(&self) -> bool {
        self.shared.cancel.load(Ordering::Relaxed) || self.shared.abort.load(Ordering::Relaxed)
    }

    /// Times `op` and counts it: `bytes` it moved, in direction `dir`.
    fn op<T>(
        &mut self,
        dir: Dir,
        op: impl FnOnce() -> std::io::Result<(T, u64)>,
    ) -> std::io::Result<T> {
        if self.at_first_done.is_none()
            && self.shared.first_done_ns.load(Ordering::Relaxed) != u64::MAX
        {
            self.at_first_done = Some((self.ops, self.bytes));
        }
        let t0 = self.elapsed();
        let (v, bytes) = op()?;
        self.ops += 1;
        self.bytes += bytes;
        let at_ns = self.elapsed();
        while at_ns >= self.cur.end_ns {
            let next = IntervalStats::new(
                self.cur.index + 1,
                self.cur.end_ns,
                self.cur.end_ns + self.interval_ns,
            );
            let full = std::mem::replace(&mut self.cur, next);
            let _ = self.tx.send(JobMsg::Interval {
                job: self.job,
                stats: full,
            });
        }
        self.cur.completed(Completed {
            dir,
            bytes,
            lat_ns: at_ns - t0,
            offset: 0,
            rel_ns: at_ns - self.cur.start_ns,
            at_ns,
        });
        Ok(v)
    }

    /// Sends the last interval, ending at `end_ns`.
    fn flush(&mut self, end_ns: u64) {
        let mut last = std::mem::replace(&mut self.cur, IntervalStats::new(0, 0, 0));
        last.end_ns = end_ns.max(last.start_ns);
        let _ = self.tx.send(JobMsg::Interval {
            job: self.job,
            stats: last,
        });
    }
}

type OpError = (String, std::io::Error);

/// The phase's operations on this job's part of the tree.
fn run_phase(
    f: &FilesSpec,
    work: &OwnedFd,
    job: usize,
    data: &[u8],
    t: &mut Timer<'_>,
) -> Result<(), OpError> {
    let jname = format!("j{job}");
    let at = |what: String| move |e: std::io::Error| (what, e);
    if f.phase == Phase::Mkdir {
        t.op(Dir::Write, || mkdir(work, &jname).map(|()| ((), 0)))
            .map_err(at(jname.clone()))?;
    }
    let jdir = dir_at(work, &jname).map_err(at(jname.clone()))?;
    // The read phase's buffer, once per job; with `verify`, what each file must hold.
    let read_len = f.file_size.clamp(1, 1 << 20) as usize;
    let mut buf = vec![0u8; if f.phase == Phase::Read { read_len } else { 0 }];
    let check = f.verify.then_some((data, f.file_size));
    for d in 0..f.dirs {
        if t.stopped() {
            return Ok(());
        }
        let dname = format!("d{d}");
        let path = format!("{jname}/{dname}");
        match f.phase {
            Phase::Mkdir => {
                t.op(Dir::Write, || mkdir(&jdir, &dname).map(|()| ((), 0)))
                    .map_err(at(path))?;
                continue;
            }
            Phase::Rmdir => {
                t.op(Dir::Write, || rmdir(&jdir, &dname).map(|()| ((), 0)))
                    .map_err(at(path))?;
                continue;
            }
            _ => {}
        }
        let dir = dir_at(&jdir, &dname).map_err(at(path.clone()))?;
        for i in 0..f.files {
            if t.stopped() {
                return Ok(());
            }
            let name = format!("f{i}");
            let r = match f.phase {
                Phase::Create => t.op(Dir::Write, || create(&dir, &name, data, f)),
                Phase::Stat => t.op(Dir::Read, || stat(&dir, &name).map(|()| ((), 0))),
                Phase::Read => t.op(Dir::Read, || read(&dir, &name, &mut buf, check)),
                Phase::Delete => t.op(Dir::Write, || unlink(&dir, &name).map(|()| ((), 0))),
                Phase::Mkdir | Phase::Rmdir => Ok(()),
            };
            r.map_err(at(format!("{path}/{name}")))?;
        }
    }
    if f.phase == Phase::Rmdir {
        drop(jdir);
        t.op(Dir::Write, || rmdir(work, &jname).map(|()| ((), 0)))
            .map_err(at(jname))?;
    }
    Ok(())
}

fn mkdir(dir: &OwnedFd, name: &str) -> std::io::Result<()> {
    let c = cstr(name.as_bytes())?;
    // SAFETY: mkdirat below a directory we hold, on a valid C string.
    check(unsafe { libc::mkdirat(dir.as_raw_fd(), c.as_ptr(), 0o755) })
}

fn rmdir(dir: &OwnedFd, name: &str) -> std::io::Result<()> {
    let c = cstr(name.as_bytes())?;
    // SAFETY: as `mkdir`.
    check(unsafe { libc::unlinkat(dir.as_raw_fd(), c.as_ptr(), libc::AT_REMOVEDIR) })
}

fn unlink(dir: &OwnedFd, name: &str) -> std::io::Result<()> {
    let c = cstr(name.as_bytes())?;
    // SAFETY: as `mkdir`.
    check(unsafe { libc::unlinkat(dir.as_raw_fd(), c.as_ptr(), 0) })
}

fn stat(dir: &OwnedFd, name: &str) -> std::io::Result<()> {
    let c = cstr(name.as_bytes())?;
    // SAFETY: fstatat fills the zeroed struct; no link followed.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    check(unsafe {
        libc::fstatat(
            dir.as_raw_fd(),
            c.as_ptr(),
            &mut st,
            libc::AT_SYMLINK_NOFOLLOW,
        )
    })
}

/// A new file (never an existing one) of `f.file_size` bytes, fsynced when asked, closed.
fn create(dir: &OwnedFd, name: &str, data: &[u8], f: &FilesSpec) -> std::io::Result<((), u64)> {
    use std::io::Write;
    let fd = open_at(
        Some(dir),
        name.as_bytes(),
        libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL,
        0o644,
    )?;
    let mut file = std::fs::File::from(fd);
    let mut left = f.file_size;
    while left > 0 {
        let n = left.min(data.len() as u64) as usize;
        file.write_all(&data[..n])?;
        left -= n as u64;
    }
    if f.fsync {
        file.sync_all()?;
    }
    Ok(((), f.file_size))
}

/// Reads the whole file, a pattern's length at a time, into `buf`; the bytes it held. With
/// `check` (the pattern create wrote over and over, and the size it wrote), a byte that
/// differs or a length that does fails the read naming it.
fn read(
    dir: &OwnedFd,
    name: &str,
    buf: &mut [u8],
    check: Option<(&[u8], u64)>,
) -> std::io::Result<((), u64)> {
    use std::io::Read;
    let fd = open_at(Some(dir), name.as_bytes(), libc::O_RDONLY, 0)?;
    let mut file = std::fs::File::from(fd);
    let mut total = 0u64;
    loop {
        // Whole chunks of the pattern's length (the last one short), so chunk k of the file
        // is compared with the pattern from its start.
        let mut n = 0;
        while n < buf.len() {
            match file.read(&mut buf[n..])? {
                0 => break,
                got => n += got,
            }
        }
        if n == 0 {
            return match check {
                Some((_, size)) if total != size => Err(std::io::Error::other(format!(
                    "holds {total} bytes, create wrote {size}"
                ))),
                _ => Ok(((), total)),
            };
        }
        if let Some((want, _)) = check {
            if let Some(at) = (0..n).find(|&i| want.get(i) != Some(&buf[i])) {
                return Err(std::io::Error::other(format!(
                    "holds other data than create wrote, from byte {}",
                    total + at as u64
                )));
            }
        }
        total += n as u64;
    }
}
