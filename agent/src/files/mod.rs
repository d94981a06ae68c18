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

mod ops;
mod ring;
mod tree;

use crate::engine::job::{JobMsg, JobSetup, RunShared};
use crate::workload::Plan;
use ops::{check, cstr, open_at, Ops};
use shared::files::{FilesSpec, Phase, MARK, WORK_PREFIX};
use shared::spec::Backend;
use shared::RunError;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::mpsc::Sender;

/// The free bytes and free inodes of the filesystem holding directory `dir` (asked of the
/// descriptor held, not of a path looked up again).
fn free_space(dir: &OwnedFd) -> std::io::Result<(u64, u64)> {
    // SAFETY: fstatvfs fills the zeroed struct from a descriptor we hold.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    check(unsafe { libc::fstatvfs(dir.as_raw_fd(), &mut st) })?;
    Ok((st.f_bavail * st.f_frsize, st.f_favail))
}

/// The directory `name` below `dir`, no link followed.
fn dir_at(dir: &OwnedFd, name: &str) -> std::io::Result<OwnedFd> {
    ops::dir_at(dir, &cstr(name.as_bytes())?)
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
        let work = dir_at(&target, &f.work)
            .map_err(|e| format!("the work directory {path}/{}: {e}", f.work))?;
        // Buffered reads start cold, as the engine's do (fio's invalidate=1): the read
        // phase reads from the device, not the pages create just wrote.
        if f.phase == Phase::Read && plan.spec().invalidate {
            let n = drop_cached(&work)
                .map_err(|e| format!("dropping the cached pages of {path}/{}: {e}", f.work))?;
            return Ok(Some(format!(
                "the read phase starts cold: the cached pages of {n} files written back and dropped (invalidate)"
            )));
        }
        return Ok(None);
    }
    let cleared = clear_leftovers(&target, &path);
    let jobs = plan.spec().jobs;
    let files = f.total_files(jobs);
    let inodes = files + u64::from(jobs) * (f.dirs_per_job().0 + 1) + 2;
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
        &cstr(MARK.as_bytes()).map_err(|e| e.to_string())?,
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

/// Writes the tree's filesystem back and drops the cached pages of every file under `dir`
/// (no link followed); the files it went through.
fn drop_cached(dir: &OwnedFd) -> std::io::Result<u64> {
    // SAFETY: syncfs on a descriptor we hold.
    check(unsafe { libc::syncfs(dir.as_raw_fd()) })?;
    let mut n = 0;
    for entry in std::fs::read_dir(format!("/proc/self/fd/{}", dir.as_raw_fd()))? {
        let entry = entry?;
        let name = cstr(entry.file_name().as_encoded_bytes())?;
        let kind = entry.file_type()?;
        if kind.is_dir() {
            n += drop_cached(&ops::dir_at(dir, &name)?)?;
        } else if kind.is_file() && entry.file_name() != MARK {
            let file = open_at(Some(dir), &name, libc::O_RDONLY, 0)?;
            // SAFETY: an advice on a descriptor we hold.
            let rc =
                unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
            if rc != 0 {
                return Err(std::io::Error::from_raw_os_error(rc));
            }
            n += 1;
        }
    }
    Ok(n)
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
    let mark = open_at(Some(dir), &cstr(MARK.as_bytes()).ok()?, libc::O_RDONLY, 0).ok()?;
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

/// The operations as the spec's backend asks: io_uring (falling back to plain system
/// calls when the kernel's ring lacks an operation, saying so) or plain system calls. The
/// backend's name, its features and the note.
fn backend(plan: &Plan) -> (Box<dyn Ops>, &'static str, Vec<String>, Option<String>) {
    let plain = || -> Box<dyn Ops> { Box::new(ops::Plain) };
    let plain_features = vec![
        "plain system calls: mkdirat, openat, write, read, fsync, close, fstatat, unlinkat"
            .to_string(),
    ];
    if plan.spec().backend != Backend::Uring {
        return (plain(), "sync", plain_features, None);
    }
    match ring::Ring::new() {
        Ok(r) => (
            Box::new(r),
            "uring",
            vec!["io_uring: MKDIRAT, STATX, UNLINKAT; a file's OPENAT, WRITE/READ, FSYNC and CLOSE as one hard-linked submission on a direct descriptor".to_string()],
            None,
        ),
        Err(e) => (
            plain(),
            "sync",
            plain_features,
            Some(format!("{e}: the files workload runs as plain system calls")),
        ),
    }
}

/// One job of a files phase: its part of the tree (`jJ/dD/…/fF`), each operation timed and
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
    let (mut ops, name, features, note) = backend(plan);
    let _ = tx.send(JobMsg::Ready {
        job,
        result: Ok(JobSetup {
            backend: name,
            note,
            features,
            buffers: (0, 0),
        }),
    });
    if shared.gate.wait().is_none() {
        return done(tx, job, 0, None);
    }
    let mut t = crate::engine::timed::Timer::new(job, shared, tx);
    // What create writes, and what a verified read compares with; the read buffer.
    let data = match f.phase {
        Phase::Create => pattern(plan, job, f.file_size),
        Phase::Read if f.verify => pattern(plan, job, f.file_size),
        _ => Vec::new(),
    };
    let read_len = f.file_size.clamp(1, 1 << 20) as usize;
    let mut walk = tree::Walk {
        f: &f,
        ops: &mut *ops,
        t: &mut t,
        data: &data,
        buf: vec![0u8; if f.phase == Phase::Read { read_len } else { 0 }],
    };
    let r = walk.run(&work, job);
    let end_ns = t.elapsed();
    t.flush(end_ns);
    // elbencho's first-done: what this job had done when the first job ended (itself, if
    // it was the first).
    shared.first_done_ns.fetch_min(end_ns, Ordering::SeqCst);
    let (n, bytes) = t.at_first_done.unwrap_or((t.ops, t.bytes));
    let _ = tx.send(JobMsg::FirstDone { job, ops: n, bytes });
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
