//! Helpers for diskscope's integration tests: the real CLI binary, temporary targets, loop
//! devices and loop-mounted filesystems (when root), and capability probes that skip loudly.

pub mod browser;
pub mod history;
pub mod server;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// What a machine can lack that a test needs: the name a skip is filed under, and what the
/// strict mode's allow-list names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Missing {
    /// Not running as root (loop devices, mounts, FUSE, device nodes).
    Root,
    IoUring,
    /// A loop device (`losetup`) or a filesystem mounted on one.
    LoopDevice,
    /// The device-mapper `error` target (dm-error), for real EIO from a block device.
    DmError,
    /// `/dev/fuse` and the right to mount (the emulated drives).
    Fuse,
    /// A command-line tool: fio, promtool, prometheus, openssl, curl, mkfs.ext4, blktrace.
    Tool,
    /// Headless Chromium, playwright-core or the built dashboard.
    Browser,
    /// A kernel facility the machine does not offer (tmpfs at /dev/shm, a cgroup limit,
    /// a block tracer).
    Kernel,
}

impl Missing {
    /// The name in skip lines and in `DISKSCOPE_SKIP_ALLOW`.
    pub fn name(self) -> &'static str {
        match self {
            Missing::Root => "root",
            Missing::IoUring => "io_uring",
            Missing::LoopDevice => "loop-device",
            Missing::DmError => "dm-error",
            Missing::Fuse => "fuse",
            Missing::Tool => "tool",
            Missing::Browser => "browser",
            Missing::Kernel => "kernel",
        }
    }
}

/// Capabilities a strict run may lack when `DISKSCOPE_SKIP_ALLOW` is unset: on this project's
/// machines, the device-mapper error target only (no `dm_mod` in their kernels).
pub const DEFAULT_SKIP_ALLOW: &str = "dm-error";

/// Files a skip: prints `SKIP <test> [<capability>]: <reason>`, appends the same line to
/// `DISKSCOPE_SKIP_LOG` when set (the test script counts them), and in strict mode
/// (`DISKSCOPE_STRICT=1`, which `.ci/run` sets) fails the test unless the capability is on
/// the allow-list (`DISKSCOPE_SKIP_ALLOW`, comma-separated names; default
/// [`DEFAULT_SKIP_ALLOW`]). Called by [`skip!`].
pub fn skipped(missing: Missing, module: &str, reason: &str) {
    let thread = std::thread::current();
    let test = thread.name().unwrap_or(module);
    let reason = reason.trim().replace('\n', " / ");
    let line = format!("SKIP {test} [{}]: {reason}", missing.name());
    eprintln!("{line}");
    if let Some(log) = std::env::var_os("DISKSCOPE_SKIP_LOG") {
        use std::io::Write;
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
        {
            let _ = writeln!(f, "{line}");
        }
    }
    if std::env::var("DISKSCOPE_STRICT").is_ok_and(|v| v == "1") {
        let allow =
            std::env::var("DISKSCOPE_SKIP_ALLOW").unwrap_or_else(|_| DEFAULT_SKIP_ALLOW.into());
        let allowed = allow.split(',').map(str::trim).any(|a| a == missing.name());
        assert!(
            allowed,
            "strict mode: {test} would skip for want of {} ({reason}), which is not on the \
             allow-list '{allow}' (DISKSCOPE_SKIP_ALLOW)",
            missing.name()
        );
    }
}

/// Skips the current test for want of a capability ([`Missing`]), with a reason, never
/// silently; see [`skipped`] for the strict mode.
#[macro_export]
macro_rules! skip {
    ($missing:expr, $($arg:tt)*) => {{
        $crate::skipped($missing, module_path!(), &format!($($arg)*));
        return;
    }};
}

/// The `diskscope` binary the tests drive: `DISKSCOPE_BIN`, or the one Cargo built beside
/// this test binary (`target/<profile>/diskscope`; `scripts/test.sh` builds it first). No
/// test runs cargo.
pub fn diskscope_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        if let Some(bin) = std::env::var_os("DISKSCOPE_BIN") {
            return PathBuf::from(bin);
        }
        // target/<profile>/deps/suite-HASH -> target/<profile>/diskscope
        let exe = std::env::current_exe().expect("the test binary's path");
        let profile_dir = exe
            .parent()
            .and_then(Path::parent)
            .expect("the test binary sits in target/<profile>/deps");
        let bin = profile_dir.join("diskscope");
        assert!(
            bin.is_file(),
            "{} is missing: build it first (cargo build -p agent --bin diskscope, as \
             scripts/test.sh does) or point DISKSCOPE_BIN at one",
            bin.display()
        );
        bin
    })
}

/// Runs the CLI with `args` and returns its output.
pub fn diskscope(args: &[&str]) -> Output {
    Command::new(diskscope_bin())
        .args(args)
        .output()
        .expect("run diskscope")
}

/// Runs the CLI with a whitespace-separated command line (test paths hold no spaces).
pub fn ds(cmdline: &str) -> Output {
    diskscope(&cmdline.split_whitespace().collect::<Vec<_>>())
}

/// Skips the test unless this kernel lets us set up an io_uring.
#[macro_export]
macro_rules! require_io_uring {
    () => {
        if !$crate::io_uring_available() {
            $crate::skip!(
                $crate::Missing::IoUring,
                "io_uring cannot be set up on this kernel"
            );
        }
    };
}

/// Parses a `--json` report file.
pub fn read_report(path: &Path) -> shared::RunReport {
    let text = std::fs::read_to_string(path).expect("read report");
    serde_json::from_str(&text).expect("parse report")
}

/// `diskscope run -q --json FILE ARGS...`: its output and the report it wrote (which must
/// exist, also when the run failed).
pub fn run_with_report(args: &[&str]) -> (Output, shared::RunReport) {
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("r.json");
    let mut all: Vec<&str> = vec!["run", "-q", "--json", json.to_str().expect("utf8")];
    all.extend_from_slice(args);
    let out = diskscope(&all);
    assert!(json.exists(), "no report: {}", stderr(&out));
    (out, read_report(&json))
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Whether `cmd` is on the PATH (a tool a test needs, such as fio or promtool).
pub fn have(cmd: &str) -> bool {
    std::process::Command::new("sh")
        .args(["-c", &format!("command -v {cmd}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Whether fio is here for a test's comparison with it; when it is not, files a skip
/// (a failure in strict mode) under `module` instead of leaving the comparison out silently.
pub fn fio_or_skip(module: &str) -> bool {
    if have("fio") {
        return true;
    }
    skipped(
        Missing::Tool,
        module,
        "fio is not installed (apt-get install fio): the comparison with it did not run",
    );
    false
}

/// `diskscope run JOB --output-format fio-json`: its output, its native report and the
/// fio JSON it wrote (read as JSON).
pub fn run_job_with_fio_json(job: &Path) -> (Output, shared::RunReport, serde_json::Value) {
    let dir = tempfile::tempdir().expect("tempdir");
    let fio_out = dir.path().join("fio.json");
    let (out, report) = run_with_report(&[
        job.to_str().expect("utf8"),
        "--output-format",
        "fio-json",
        "--output",
        fio_out.to_str().expect("utf8"),
    ]);
    let doc = std::fs::read(&fio_out)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or(serde_json::Value::Null);
    (out, report, doc)
}

/// The `.log` files in `dir` (fio's per-interval logs a run wrote there).
pub fn log_files(dir: &Path) -> std::collections::BTreeSet<String> {
    std::fs::read_dir(dir)
        .expect("dir")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".log"))
        .collect()
}

/// The rows of a fio log (`msec, value, direction, 0, 0`), as numbers.
pub fn log_rows(path: &Path) -> Vec<Vec<u64>> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| {
            l.split(',')
                .map(|f| {
                    f.trim()
                        .parse()
                        .unwrap_or_else(|_| panic!("{}: '{l}'", path.display()))
                })
                .collect()
        })
        .collect()
}

pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Whether this kernel lets us set up an io_uring.
pub fn io_uring_available() -> bool {
    agent::engine::uring::build_ring(2, None, false).is_ok()
}

/// fio's JSON document of the run `fio` describes (a `Command::new("fio")` with its job and
/// any directory or environment): `--output-format=json` is added, the run must succeed
/// within two minutes.
pub fn fio_json(fio: &mut Command) -> serde_json::Value {
    let limit = std::time::Duration::from_secs(120);
    fio_json_within(fio, limit)
        .unwrap_or_else(|| panic!("fio ran past {limit:?} and was killed: {fio:?}"))
}

/// As `fio_json`, `None` when fio has not ended within `limit` (it and its job processes are
/// killed then). fio 3.33 can hang: a `thinktime` job under load slept on, 2 s at a time,
/// minutes past its 1 s runtime.
pub fn fio_json_within(fio: &mut Command, limit: std::time::Duration) -> Option<serde_json::Value> {
    use std::io::{Read, Seek};
    use std::os::unix::process::CommandExt;
    let (mut out, mut err) = (
        tempfile::tempfile().expect("fio's stdout file"),
        tempfile::tempfile().expect("fio's stderr file"),
    );
    let mut child = fio
        .arg("--output-format=json")
        .stdout(out.try_clone().expect("dup"))
        .stderr(err.try_clone().expect("dup"))
        .process_group(0)
        .spawn()
        .expect("run fio");
    let deadline = std::time::Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for fio") {
            break status;
        }
        if std::time::Instant::now() >= deadline {
            // fio forks a process per job: the whole group goes.
            let pgid = i32::try_from(child.id()).expect("pid");
            // SAFETY: kill(2) on the process group fio leads; no memory is touched.
            unsafe { libc::kill(-pgid, libc::SIGKILL) };
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let (mut stdout, mut stderr) = (Vec::new(), String::new());
    out.rewind()
        .and_then(|_| out.read_to_end(&mut stdout))
        .expect("fio's stdout");
    err.rewind()
        .and_then(|_| err.read_to_string(&mut stderr))
        .expect("fio's stderr");
    assert!(status.success(), "fio: {stderr}");
    Some(serde_json::from_slice(&stdout).expect("fio's JSON"))
}

/// A 64 MiB file `name` in `dir` laid out with data by a sequential write (a read test needs
/// data, not holes); its path.
pub fn laid_out_file(dir: &Path, name: &str) -> String {
    let path = dir.join(name);
    let f = path.to_str().expect("utf8").to_string();
    let out = diskscope(&[
        "run", "-q", "--target", &f, "--size", "64M", "--rw", "write", "--bs", "1M",
    ]);
    assert!(out.status.success(), "laying out {f}: {}", stderr(&out));
    f
}

/// Scratch directory on a real block-backed filesystem (not tmpfs), so O_DIRECT and io_uring
/// behave as on a disk.
pub fn disk_tempdir() -> tempfile::TempDir {
    let base = std::env::var_os("DISKSCOPE_TEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/tmp"));
    tempfile::Builder::new()
        .prefix("diskscope-test-")
        .tempdir_in(base)
        .expect("tempdir")
}

/// Scratch directory in RAM (tmpfs, which takes O_DIRECT since Linux 6.6) for the tests whose
/// subject is what a screen shows of the stored results, not the disk: another test's writes
/// stall this machine's disk for 100-400 ms, which would leave their 300 ms runs with
/// nothing measured. Where tmpfs refuses O_DIRECT, [`disk_tempdir`].
pub fn ram_tempdir() -> tempfile::TempDir {
    use std::os::unix::fs::OpenOptionsExt;
    let Ok(dir) = tempfile::Builder::new()
        .prefix("diskscope-test-")
        .tempdir_in("/dev/shm")
    else {
        return disk_tempdir();
    };
    let direct = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .custom_flags(libc::O_DIRECT)
        .open(dir.path().join("probe"));
    let _ = std::fs::remove_file(dir.path().join("probe"));
    match direct {
        Ok(_) => dir,
        Err(e) => {
            eprintln!("tmpfs refuses O_DIRECT here ({e}): the screen tests' runs go to disk");
            disk_tempdir()
        }
    }
}

/// Share of `deflate`-compressed size to raw size (≈1 for random data, ≈0 for zeros).
pub fn compress_ratio(data: &[u8]) -> f64 {
    use flate2::write::DeflateEncoder;
    use flate2::Compression;
    use std::io::Write;
    let mut enc = DeflateEncoder::new(Vec::new(), Compression::fast());
    enc.write_all(data).expect("compress");
    enc.finish().expect("compress").len() as f64 / data.len() as f64
}

/// Pages of `path` resident in the page cache, and the total number of pages.
pub fn cached_pages(path: &Path) -> (usize, usize) {
    use std::os::fd::AsRawFd;
    let f = std::fs::File::open(path).expect("open");
    let len = f.metadata().expect("stat").len() as usize;
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
    let pages = len.div_ceil(page);
    // SAFETY: mapping a regular file read-only; checked for MAP_FAILED below and unmapped.
    let addr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ,
            libc::MAP_SHARED,
            f.as_raw_fd(),
            0,
        )
    };
    assert_ne!(addr, libc::MAP_FAILED, "mmap");
    let mut vec = vec![0u8; pages];
    // SAFETY: addr/len is the mapping above; vec holds one byte per page.
    let rc = unsafe { libc::mincore(addr, len, vec.as_mut_ptr()) };
    // SAFETY: unmapping what was mapped above.
    unsafe { libc::munmap(addr, len) };
    assert_eq!(rc, 0, "mincore");
    (vec.iter().filter(|&&b| b & 1 == 1).count(), pages)
}

/// Drops the page cache of one file (so that reads go to the device).
pub fn drop_cache(path: &Path) {
    use std::os::fd::AsRawFd;
    let f = std::fs::File::open(path).expect("open");
    // SAFETY: advisory call on a valid descriptor.
    unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
}

fn sh(cmd: &str, args: &[&str]) -> Result<String, String> {
    let o = Command::new(cmd)
        .args(args)
        .output()
        .map_err(|e| format!("{cmd}: {e}"))?;
    if o.status.success() {
        Ok(String::from_utf8_lossy(&o.stdout).trim().to_string())
    } else {
        Err(format!(
            "{cmd} {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&o.stderr).trim()
        ))
    }
}

/// A loop device over a backing file, detached on drop.
pub struct LoopDevice {
    pub path: PathBuf,
    _backing: tempfile::TempDir,
}

impl LoopDevice {
    /// A loop device of `size` bytes with the given logical sector size. `Err` says why
    /// loop devices cannot be used here (the caller skips).
    pub fn new(size: u64, sector_size: u32) -> Result<Self, String> {
        Self::backed_by(disk_tempdir(), size, sector_size, true)
    }

    /// A loop device over a file in /dev/shm (memory): the fastest block device there is
    /// without hardware, for measuring the engine rather than a disk.
    pub fn in_memory(size: u64) -> Result<Self, String> {
        let dir = tempfile::Builder::new()
            .prefix("diskscope-test-")
            .tempdir_in("/dev/shm")
            .map_err(|e| format!("no /dev/shm: {e}"))?;
        Self::backed_by(dir, size, 512, false)
    }

    fn backed_by(
        dir: tempfile::TempDir,
        size: u64,
        sector_size: u32,
        direct: bool,
    ) -> Result<Self, String> {
        if !is_root() {
            return Err("needs root for losetup".into());
        }
        let backing = dir.path().join("backing.img");
        let f = std::fs::File::create(&backing).map_err(|e| e.to_string())?;
        f.set_len(size).map_err(|e| e.to_string())?;
        let ss = sector_size.to_string();
        let b = backing.to_str().ok_or("non-UTF-8 path")?;
        let dev = sh(
            "losetup",
            &[
                "--find",
                "--show",
                if direct {
                    "--direct-io=on"
                } else {
                    "--direct-io=off"
                },
                "--sector-size",
                &ss,
                b,
            ],
        )?;
        Ok(LoopDevice {
            path: PathBuf::from(dev),
            _backing: dir,
        })
    }

    pub fn path_str(&self) -> &str {
        self.path.to_str().unwrap_or_default()
    }
}

impl Drop for LoopDevice {
    fn drop(&mut self) {
        let _ = sh("losetup", &["-d", self.path_str()]);
    }
}

/// A small ext4 filesystem on a loop device, mounted; unmounted and detached on drop.
pub struct LoopMount {
    pub mountpoint: tempfile::TempDir,
    dev: LoopDevice,
}

impl LoopMount {
    pub fn new(size: u64) -> Result<Self, String> {
        let dev = LoopDevice::new(size, 512)?;
        sh("mkfs.ext4", &["-q", "-F", dev.path_str()])?;
        let mountpoint = tempfile::tempdir().map_err(|e| e.to_string())?;
        let mp = mountpoint
            .path()
            .to_str()
            .ok_or("non-UTF-8 path")?
            .to_string();
        sh("mount", &[dev.path_str(), &mp])?;
        Ok(LoopMount { mountpoint, dev })
    }

    pub fn path(&self) -> &Path {
        self.mountpoint.path()
    }

    /// Remounts the filesystem with `options` (e.g. `remount,ro`).
    fn remount(&self, options: &str) -> Result<(), String> {
        let mp = self.mountpoint.path().to_str().ok_or("non-UTF-8 path")?;
        sh("mount", &["-o", options, mp]).map(drop)
    }

    /// Remounts the filesystem read-only.
    pub fn remount_ro(&self) -> Result<(), String> {
        self.remount("remount,ro")
    }

    /// Aborts the filesystem as ext4 does on a fatal error: from now on every write to it
    /// fails (the agent's own storage dying under it).
    pub fn abort(&self) -> Result<(), String> {
        self.remount("remount,abort")
    }

    /// The loop device the filesystem lives on.
    pub fn device(&self) -> &Path {
        &self.dev.path
    }
}

impl Drop for LoopMount {
    fn drop(&mut self) {
        let mp = self.mountpoint.path().to_string_lossy().to_string();
        if sh("umount", &[&mp]).is_err() {
            agent::emulate::detach(self.mountpoint.path());
        }
        let _ = &self.dev;
    }
}

/// A device-mapper device whose first `good` bytes map to a loop device and whose remaining
/// `bad` bytes fail every I/O with EIO (the `error` target). Removed on drop.
pub struct FailingDevice {
    pub path: PathBuf,
    name: String,
    _lower: LoopDevice,
}

impl FailingDevice {
    pub fn new(good: u64, bad: u64) -> Result<Self, String> {
        if Command::new("dmsetup").arg("version").output().is_err() {
            return Err("dmsetup is not installed".into());
        }
        let lower = LoopDevice::new(good, 512)?;
        let name = format!("diskscope-test-{}", std::process::id());
        let table = format!(
            "0 {} linear {} 0\n{} {} error\n",
            good / 512,
            lower.path_str(),
            good / 512,
            bad / 512
        );
        let mut child = Command::new("dmsetup")
            .args(["create", &name])
            .stdin(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| e.to_string())?;
        {
            use std::io::Write;
            let mut stdin = child.stdin.take().ok_or("no stdin")?;
            stdin
                .write_all(table.as_bytes())
                .map_err(|e| e.to_string())?;
        }
        let out = child.wait_with_output().map_err(|e| e.to_string())?;
        if !out.status.success() {
            return Err(format!(
                "dmsetup create: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(FailingDevice {
            path: PathBuf::from(format!("/dev/mapper/{name}")),
            name,
            _lower: lower,
        })
    }
}

impl Drop for FailingDevice {
    fn drop(&mut self) {
        let _ = sh("dmsetup", &["remove", "--retry", &self.name]);
    }
}

/// An emulated SSD (`diskscope emulate`) mounted in a temp dir; unmounted when dropped.
pub struct Emulator {
    child: std::process::Child,
    dir: tempfile::TempDir,
}

impl Emulator {
    /// Mounts one following `model` (JSON fields of the agent's `SsdModel`). Errs with the
    /// reason when FUSE cannot be used here (not root, no /dev/fuse).
    pub fn start(model: &str) -> Result<Emulator, String> {
        if !is_root() {
            return Err("FUSE mounts need root".into());
        }
        if !Path::new("/dev/fuse").exists() {
            return Err("no /dev/fuse".into());
        }
        let dir = disk_tempdir();
        let mut child = Command::new(diskscope_bin())
            .args(["emulate", "--mount"])
            .arg(dir.path())
            .args(["--model", model])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start diskscope emulate: {e}"))?;
        let disk = dir.path().join("disk.img");
        for _ in 0..100 {
            if disk.exists() {
                return Ok(Emulator { child, dir });
            }
            if let Ok(Some(status)) = child.try_wait() {
                let mut err = String::new();
                if let Some(mut e) = child.stderr.take() {
                    use std::io::Read;
                    let _ = e.read_to_string(&mut err);
                }
                return Err(format!("diskscope emulate exited ({status}): {err}"));
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let _ = child.kill();
        Err("the emulated SSD did not appear within 5 s".into())
    }

    /// [`Emulator::start`], or `None` after saying on stderr that `what` is skipped and why.
    /// Mounts one, or files a skip when this machine cannot mount FUSE at all; a machine that
    /// can (root, `/dev/fuse`) but fails to mount is a failure, not a skip.
    pub fn start_or_skip(model: &str, what: &str) -> Option<Emulator> {
        match Emulator::start(model) {
            Ok(e) => Some(e),
            Err(why) if !is_root() || !Path::new("/dev/fuse").exists() => {
                skipped(Missing::Fuse, what, &why);
                None
            }
            Err(why) => panic!("{what}: the emulated drive did not mount: {why}"),
        }
    }

    pub fn disk(&self) -> PathBuf {
        self.dir.path().join("disk.img")
    }

    pub fn dir(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Emulator {
    fn drop(&mut self) {
        // SAFETY: plain kill(2) on our own child's pid.
        unsafe {
            libc::kill(self.child.id() as i32, libc::SIGTERM);
        }
        let _ = self.child.wait();
        // The emulator unmounts on SIGTERM; detach anyway so that a test that went wrong
        // never leaves a mount behind.
        agent::emulate::detach(self.dir.path());
    }
}

/// A field of `/proc/PID/status` in KiB (`VmHWM:`, `VmRSS:`); 0 when it cannot be read.
pub fn proc_status_kib(pid: u32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

/// A benchmark knob from the environment: a number, `default` when unset.
pub fn knob(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .map(|v| {
            v.parse()
                .unwrap_or_else(|_| panic!("{name}={v}: not a number"))
        })
        .unwrap_or(default)
}

/// Runs `diskscope ARGS` under `strace -f -e trace=CALLS`, the trace written to `out`: what
/// the kernel was asked, call by call. `None` when strace is not installed.
pub fn strace_diskscope(calls: &str, out: &Path, args: &[&str]) -> Option<Output> {
    Command::new("strace")
        .args(["-f", "-e", &format!("trace={calls}"), "-o"])
        .arg(out)
        .arg(diskscope_bin())
        .args(args)
        .output()
        .ok()
}
