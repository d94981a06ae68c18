//! `diskscope record`: captures the I/O a block device receives with the kernel's block
//! tracer, into a file `--replay` reads. First through `blktrace` (its binary records);
//! where blktrace cannot run (not installed, or its relay files in debugfs refused, as under
//! kernel lockdown) through the same kernel tracer's text in tracefs (`blk` tracer,
//! `blk_classic` format). Both are the kernel's blktrace events: the requests issued to the
//! driver are the trace.
//!
//! Output: a file ending in `.iolog` or `.iolog.gz` is written as a fio iolog v3 (fio
//! replays it too); anything else keeps the raw events (`.gz`: compressed).

use super::{OpKind, Trace};
use std::io::{Read, Write};
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("{0} is not a block device (record traces a device: --device /dev/...)")]
    NotBlock(String),
    #[error("cannot record {device}: {why}")]
    Tracer { device: String, why: String },
    #[error("cannot write {path}: {source}")]
    Write {
        path: String,
        source: std::io::Error,
    },
    #[error("the command failed to start: {0}")]
    Command(std::io::Error),
    #[error("nothing was recorded: {0}")]
    Trace(super::TraceError),
}

/// What to record.
#[derive(Debug, Clone)]
pub struct RecordOptions {
    pub device: PathBuf,
    /// Longest recording; `None` with a command: until it exits.
    pub duration: Option<Duration>,
    pub out: PathBuf,
    /// Run this and record while it runs.
    pub command: Vec<String>,
}

/// What was recorded.
#[derive(Debug)]
pub struct Recorded {
    /// `blktrace` or `kernel blk tracer (tracefs)`.
    pub method: &'static str,
    /// Why blktrace itself was not used.
    pub fallback: Option<String>,
    pub trace: Trace,
    pub seconds: f64,
    /// Events the kernel's buffer lost (tracefs overruns).
    pub lost_events: u64,
    pub command_status: Option<std::process::ExitStatus>,
}

/// Records `o.device` until the duration is over, the command exits, or `stop` is set.
pub fn record(o: &RecordOptions, stop: &AtomicBool) -> Result<Recorded, RecordError> {
    let dev = o.device.display().to_string();
    let meta = std::fs::metadata(&o.device).map_err(|e| RecordError::Tracer {
        device: dev.clone(),
        why: e.to_string(),
    })?;
    if !meta.file_type().is_block_device() {
        return Err(RecordError::NotBlock(dev));
    }
    let tracer_err = |why: String| RecordError::Tracer {
        device: dev.clone(),
        why,
    };
    let mut fallback = None;
    let capture = match Blktrace::start(&o.device) {
        Ok(b) => Capture::Blktrace(b),
        Err(why) => {
            fallback = Some(why);
            let name = sys_name(&meta).ok_or_else(|| tracer_err("no sysfs entry".into()))?;
            Capture::Tracefs(Tracefs::start(&name).map_err(tracer_err)?)
        }
    };
    let started = Instant::now();
    let mut child = match o.command.split_first() {
        Some((cmd, args)) => match Command::new(cmd).args(args).spawn() {
            Ok(c) => Some(c),
            Err(e) => {
                let _ = capture.stop();
                return Err(RecordError::Command(e));
            }
        },
        None => None,
    };
    let mut status = None;
    loop {
        if stop.load(Ordering::Relaxed) || o.duration.is_some_and(|d| started.elapsed() >= d) {
            break;
        }
        if let Some(c) = child.as_mut() {
            if let Ok(Some(s)) = c.try_wait() {
                status = Some(s);
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    if let (Some(c), None) = (child.as_mut(), status) {
        status = c.wait().ok();
    }
    let seconds = started.elapsed().as_secs_f64();
    let method = capture.method();
    let (raw, lost_events) = capture.stop().map_err(tracer_err)?;
    let trace = super::parse(&raw).map_err(RecordError::Trace)?;
    write_out(&o.out, &raw, &trace, &dev).map_err(|source| RecordError::Write {
        path: o.out.display().to_string(),
        source,
    })?;
    Ok(Recorded {
        method,
        fallback,
        trace,
        seconds,
        lost_events,
        command_status: status,
    })
}

/// The block device's name in sysfs (`loop0`, `nvme0n1`, `sda1`).
fn sys_name(meta: &std::fs::Metadata) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let rdev = meta.rdev();
    let link = format!("/sys/dev/block/{}:{}", libc::major(rdev), libc::minor(rdev));
    let target = std::fs::canonicalize(link).ok()?;
    Some(target.file_name()?.to_string_lossy().into_owned())
}

/// Writes the recording: as an iolog v3 or raw (each gzip-compressed for `.gz`).
fn write_out(path: &Path, raw: &[u8], trace: &Trace, dev: &str) -> std::io::Result<()> {
    let name = path.to_string_lossy();
    let gz = name.ends_with(".gz");
    let iolog = name.trim_end_matches(".gz").ends_with(".iolog");
    let body = if iolog {
        to_iolog(trace, dev).into_bytes()
    } else {
        raw.to_vec()
    };
    let mut f = std::fs::File::create(path)?;
    if gz {
        let mut enc = flate2::write::GzEncoder::new(f, flate2::Compression::best());
        enc.write_all(&body)?;
        enc.finish()?.sync_all()
    } else {
        f.write_all(&body)?;
        f.sync_all()
    }
}

/// A trace as a fio iolog v3 (times in µs; flushes as `sync`).
pub fn to_iolog(trace: &Trace, dev: &str) -> String {
    use std::fmt::Write as _;
    let mut s = format!("fio version 3 iolog\n0 {dev} add\n0 {dev} open\n");
    for o in &trace.ops {
        let action = match o.kind {
            OpKind::Flush => "sync",
            k => k.as_str(),
        };
        let _ = writeln!(
            s,
            "{} {dev} {action} {} {}",
            o.at_ns / 1000,
            o.offset,
            o.len
        );
    }
    let end = trace.ops.last().map_or(0, |o| o.at_ns / 1000);
    let _ = writeln!(s, "{end} {dev} close");
    s
}

enum Capture {
    Blktrace(Blktrace),
    Tracefs(Tracefs),
}

impl Capture {
    fn method(&self) -> &'static str {
        match self {
            Capture::Blktrace(_) => "blktrace",
            Capture::Tracefs(_) => "kernel blk tracer (tracefs)",
        }
    }

    fn stop(self) -> Result<(Vec<u8>, u64), String> {
        match self {
            Capture::Blktrace(b) => b.stop().map(|r| (r, 0)),
            Capture::Tracefs(t) => t.stop(),
        }
    }
}

/// `blktrace -d DEV -o -`, its records streamed into a temporary file.
struct Blktrace {
    child: Child,
    out: std::fs::File,
}

impl Blktrace {
    fn start(dev: &Path) -> Result<Blktrace, String> {
        let out = tempfile::tempfile().map_err(|e| e.to_string())?;
        let stdout = out.try_clone().map_err(|e| e.to_string())?;
        let mut err_file = tempfile::tempfile().map_err(|e| e.to_string())?;
        let stderr = err_file.try_clone().map_err(|e| e.to_string())?;
        let mut child = Command::new("blktrace")
            .arg("-d")
            .arg(dev)
            .args(["-o", "-"])
            .stdout(stdout)
            .stderr(stderr)
            .spawn()
            .map_err(|e| format!("blktrace: {e} (apt-get install blktrace)"))?;
        // blktrace reports within moments when it cannot open its relay files (and may
        // then linger, tracing nothing).
        std::thread::sleep(Duration::from_millis(400));
        let mut err = String::new();
        use std::io::Seek;
        let _ = err_file.seek(std::io::SeekFrom::Start(0));
        let _ = err_file.read_to_string(&mut err);
        let exited = child.try_wait().ok().flatten();
        if exited.is_some() || err.to_lowercase().contains("fail") {
            let _ = child.kill();
            let _ = child.wait();
            let first = err.lines().next().unwrap_or("").to_string();
            return Err(format!("blktrace: {first}"));
        }
        Ok(Blktrace { child, out })
    }

    fn stop(mut self) -> Result<Vec<u8>, String> {
        // SAFETY: signalling our own child by its pid.
        unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGINT) };
        self.child.wait().map_err(|e| e.to_string())?;
        use std::io::Seek;
        self.out
            .seek(std::io::SeekFrom::Start(0))
            .map_err(|e| e.to_string())?;
        let mut raw = Vec::new();
        self.out
            .take(super::MAX_TRACE_BYTES)
            .read_to_end(&mut raw)
            .map_err(|e| e.to_string())?;
        Ok(raw)
    }
}

/// The kernel's `blk` tracer through tracefs, its text read from `trace_pipe` as it comes.
struct Tracefs {
    root: PathBuf,
    /// `tracing_on` as it was, put back at the end.
    was_on: String,
    device: PathBuf,
    done: Arc<AtomicBool>,
    reader: std::thread::JoinHandle<Result<Vec<u8>, String>>,
}

fn tracefs_root() -> Result<PathBuf, String> {
    for p in ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"] {
        if Path::new(p).join("current_tracer").exists() {
            return Ok(PathBuf::from(p));
        }
    }
    let dir = c"/sys/kernel/tracing";
    // SAFETY: NUL-terminated strings; mounting tracefs changes nothing but that mount.
    let rc = unsafe {
        libc::mount(
            c"tracefs".as_ptr(),
            dir.as_ptr(),
            c"tracefs".as_ptr(),
            0,
            std::ptr::null(),
        )
    };
    if rc == 0 {
        Ok(PathBuf::from("/sys/kernel/tracing"))
    } else {
        Err(format!(
            "no tracefs, and mounting it failed: {}",
            std::io::Error::last_os_error()
        ))
    }
}

fn put(path: &Path, value: &str) -> Result<(), String> {
    std::fs::write(path, value).map_err(|e| format!("{}: {e}", path.display()))
}

impl Tracefs {
    fn start(name: &str) -> Result<Tracefs, String> {
        let root = tracefs_root()?;
        let current = std::fs::read_to_string(root.join("current_tracer"))
            .map_err(|e| format!("tracefs: {e}"))?;
        let current = current.trim();
        if current != "nop" && current != "blk" {
            return Err(format!("the kernel tracer is in use ({current})"));
        }
        let device = PathBuf::from(format!("/sys/class/block/{name}/trace"));
        if !device.join("enable").exists() {
            return Err(format!(
                "{} missing: the kernel has no block tracing",
                device.display()
            ));
        }
        let was_on = std::fs::read_to_string(root.join("tracing_on"))
            .map_or_else(|_| "1".to_string(), |v| v.trim().to_string());
        put(&root.join("tracing_on"), "0")?;
        put(&root.join("current_tracer"), "blk")?;
        put(&root.join("options/blk_classic"), "1")?;
        let _ = put(&root.join("options/bin"), "0");
        let _ = put(&root.join("buffer_size_kb"), "65536");
        put(&root.join("trace"), "")?;
        put(&device.join("enable"), "1")?;
        put(&root.join("tracing_on"), "1")?;
        let done = Arc::new(AtomicBool::new(false));
        let pipe = root.join("trace_pipe");
        let flag = Arc::clone(&done);
        let reader = std::thread::Builder::new()
            .name("ds-trace-pipe".into())
            .spawn(move || read_pipe(&pipe, &flag))
            .map_err(|e| e.to_string())?;
        Ok(Tracefs {
            root,
            was_on,
            device,
            done,
            reader,
        })
    }

    fn stop(self) -> Result<(Vec<u8>, u64), String> {
        let _ = put(&self.device.join("enable"), "0");
        let _ = put(&self.root.join("tracing_on"), "0");
        self.done.store(true, Ordering::Relaxed);
        let raw = self
            .reader
            .join()
            .map_err(|_| "the trace reader panicked".to_string())??;
        let lost = overruns(&self.root);
        let _ = put(&self.root.join("options/blk_classic"), "0");
        let _ = put(&self.root.join("current_tracer"), "nop");
        let _ = put(&self.root.join("tracing_on"), &self.was_on);
        Ok((raw, lost))
    }
}

/// Reads `trace_pipe` without blocking until `done` and nothing is left.
fn read_pipe(pipe: &Path, done: &AtomicBool) -> Result<Vec<u8>, String> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(pipe)
        .map_err(|e| format!("{}: {e}", pipe.display()))?;
    let mut out = Vec::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        match f.read(&mut buf) {
            Ok(0) | Err(_) => {
                if done.load(Ordering::Relaxed) {
                    // One more pass after the stop: what the kernel still held.
                    while let Ok(n) = f.read(&mut buf) {
                        if n == 0 {
                            break;
                        }
                        out.extend_from_slice(&buf[..n]);
                    }
                    return Ok(out);
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            Ok(n) => {
                if out.len() as u64 + n as u64 > super::MAX_TRACE_BYTES {
                    return Err("the recording is over 1 GiB".into());
                }
                out.extend_from_slice(&buf[..n]);
            }
        }
    }
}

/// Events the trace buffers overwrote, summed over CPUs.
fn overruns(root: &Path) -> u64 {
    let Ok(cpus) = std::fs::read_dir(root.join("per_cpu")) else {
        return 0;
    };
    cpus.flatten()
        .filter_map(|c| std::fs::read_to_string(c.path().join("stats")).ok())
        .flat_map(|s| {
            s.lines()
                .filter_map(|l| l.strip_prefix("overrun:"))
                .filter_map(|v| v.trim().parse::<u64>().ok())
                .collect::<Vec<_>>()
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::TraceOp;

    #[test]
    fn iolog_output_reads_back_the_same() {
        let ops = vec![
            TraceOp {
                at_ns: 0,
                offset: 4096,
                len: 8192,
                kind: OpKind::Write,
            },
            TraceOp {
                at_ns: 1_500_000,
                offset: 0,
                len: 0,
                kind: OpKind::Flush,
            },
            TraceOp {
                at_ns: 2_000_000,
                offset: 1 << 20,
                len: 4096,
                kind: OpKind::Read,
            },
        ];
        let t = Trace {
            ops: ops.clone(),
            timed: true,
            format: "x",
            ignored: 0,
        };
        let text = to_iolog(&t, "/dev/loop0");
        let back = crate::trace::parse(text.as_bytes()).expect("iolog");
        assert_eq!(back.ops, ops);
        assert_eq!(back.format, "fio iolog v3");
    }
}
