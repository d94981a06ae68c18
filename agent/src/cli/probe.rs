//! `diskscope probe TARGET`: one request every interval, as ioping makes them, a line per
//! request in ioping's shape (or ioping's JSON with `-J`), then its statistics: the
//! counted requests' min/avg/max/mdev and the run's percentiles, all from the stored report.

use super::args::{duration_ms, size};
use super::EXIT_STOPPED;
use crate::measure;
use crate::runner::Observer;
use anyhow::Context;
use clap::Args;
use serde_json::json;
use shared::probe::{ProbeSpec, ProbeSummary, Request};
use shared::spec::{Backend, RwMode};
use shared::{RunReport, RunStatus, Sample, WorkloadSpec};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

#[derive(Debug, Args, Clone)]
pub struct ProbeArgs {
    /// File or block device (a missing file is created at --work-size).
    pub target: PathBuf,
    /// Time from one request's start to the next's (ioping -i), e.g. 1s, 100ms; 0: one
    /// after another.
    #[arg(short = 'i', long, value_parser = duration_us, default_value = "1s")]
    pub interval: u64,
    /// Stop after this many requests, the warm-up's included (ioping -c).
    #[arg(short = 'c', long)]
    pub count: Option<u64>,
    /// Stop after this long (ioping -w), e.g. 10m, 48h.
    #[arg(short = 'w', long, value_parser = duration_ms)]
    pub duration: Option<u64>,
    /// Write instead of read (ioping -W): the target's data in the working set is
    /// overwritten; a mounted, swap or held device is refused.
    #[arg(short = 'W', long)]
    pub write: bool,
    /// Request size (ioping -s).
    #[arg(short = 's', long, value_parser = size, default_value = "4k")]
    pub size: u64,
    /// Working set: the requests fall in this many bytes (ioping -S).
    #[arg(short = 'S', long, value_parser = size, default_value = "1m")]
    pub work_size: u64,
    /// Where the working set starts (ioping -o).
    #[arg(short = 'o', long, value_parser = size, default_value = "0")]
    pub work_offset: u64,
    /// Through the page cache, nothing dropped (ioping -C); by default O_DIRECT (ioping -D;
    /// ioping's own default drops the file's cache before each request instead).
    #[arg(short = 'C', long)]
    pub cached: bool,
    /// O_DIRECT (the default; ioping -D).
    #[arg(short = 'D', long, conflicts_with = "cached")]
    pub direct: bool,
    /// One request after another through the working set (ioping -L); random by default.
    #[arg(short = 'L', long)]
    pub linear: bool,
    /// Requests made first and shown apart, not counted (ioping -a).
    #[arg(short = 'a', long, default_value_t = 1)]
    pub warmup: u32,
    /// Requests made back to back at each tick (ioping -b).
    #[arg(short = 'b', long, default_value_t = 0)]
    pub burst: u32,
    /// The idle-wake curve instead: the first request's latency after quiet times of 1 ms
    /// to --idle-max in steps of 1-2-5, each --repeat times, against the awake latency;
    /// where it steps up, a power state begins (its idle time and wake latency are named).
    #[arg(long)]
    pub idle_sweep: bool,
    /// The sweep's longest quiet time (30 s at most).
    #[arg(long, value_parser = duration_us, default_value = "30s", requires = "idle_sweep")]
    pub idle_max: u64,
    /// Times the sweep measures each quiet time.
    #[arg(long, default_value_t = 3, requires = "idle_sweep")]
    pub repeat: u32,
    /// ioping's JSON on standard output (ioping -J): a record per request, then the
    /// statistics.
    #[arg(short = 'J', long = "ioping-json")]
    pub ioping_json: bool,
    /// The run's report (diskscope's JSON, as `run --json`) to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// No line per request, only the statistics (ioping -q).
    #[arg(short = 'q', long)]
    pub quiet: bool,
}

fn duration_us(s: &str) -> Result<u64, String> {
    // ioping takes plain seconds too (-i 0.1).
    if let Ok(secs) = s.parse::<f64>() {
        if secs.is_finite() && secs >= 0.0 {
            return Ok((secs * 1e6).round() as u64);
        }
    }
    shared::units::parse_duration_ms(s)
        .map(|ms| ms * 1000)
        .map_err(|e| e.to_string())
}

impl ProbeArgs {
    /// The workload: one job of `size`-byte requests in the working set.
    pub fn spec(&self) -> WorkloadSpec {
        let rw = match (self.write, self.linear) {
            (false, false) => RwMode::RandRead,
            (false, true) => RwMode::Read,
            (true, false) => RwMode::RandWrite,
            (true, true) => RwMode::Write,
        };
        WorkloadSpec {
            rw,
            bs: self.size,
            iodepth: 1,
            jobs: 1,
            size: Some(self.work_size),
            offset: self.work_offset,
            direct: !self.cached,
            backend: Backend::Sync,
            runtime_ms: self.duration,
            // A sample per request at ioping's usual intervals (within the bounds of a sample).
            interval_ms: (self.interval / 1000).clamp(100, 60_000),
            probe: Some(ProbeSpec {
                interval_us: self.interval,
                count: self.count,
                warmup: self.warmup,
                burst: self.burst,
                idle_sweep: self
                    .idle_sweep
                    .then(|| shared::probe::IdleSweep::up_to(self.idle_max, self.repeat)),
            }),
            ..WorkloadSpec::default()
        }
    }
}

pub fn run(args: &ProbeArgs, cancel: Arc<AtomicBool>) -> anyhow::Result<ExitCode> {
    let plan = measure::plan(&args.spec(), &args.target)?;
    let label = Label::of(plan.target());
    let mut lines = Lines {
        label,
        args,
        out: std::io::stdout().lock(),
        records: 0,
    };
    if args.ioping_json {
        let _ = writeln!(lines.out, "[");
    }
    let report = measure::run(plan, cancel, &mut lines)?;
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&report)?;
        std::fs::write(path, text)
            .with_context(|| format!("cannot write --json {}", path.display()))?;
    }
    let summary = report.analysis.probe.clone().unwrap_or_default();
    if args.ioping_json {
        lines.ioping_end(&report, &summary);
    } else {
        lines.statistics(&report, &summary);
        if let Some(c) = &summary.idle_curve {
            lines.curve(c, summary.power.as_ref());
        }
    }
    if let Some(e) = &report.error {
        eprintln!("diskscope: error: {}", e.message);
    }
    Ok(match report.status {
        RunStatus::Completed => ExitCode::SUCCESS,
        RunStatus::Stopped => ExitCode::from(EXIT_STOPPED),
        _ => ExitCode::FAILURE,
    })
}

/// What ioping says of a target: its path, filesystem and device with the device's size.
struct Label {
    path: String,
    fs_type: String,
    device: String,
    device_size: u64,
}

impl Label {
    fn of(t: &crate::io_target::TargetInfo) -> Label {
        let fs = crate::devices::filesystem(t);
        let dev = crate::devices::identify(t);
        // ioping gives a file's filesystem size as its device's.
        let device_size = match &fs {
            Some(_) => fs_size(&t.path).unwrap_or(0),
            None => dev.as_ref().map_or(t.size, |d| d.size),
        };
        Label {
            path: t.path.display().to_string(),
            fs_type: fs.map_or_else(|| "device".to_string(), |f| f.fs_type),
            device: dev.map_or_else(String::new, |d| d.path),
            device_size,
        }
    }

    /// `/path (ext4 /dev/vda 252.0 GiB)`, as ioping writes it.
    fn text(&self) -> String {
        let dev = if self.device.is_empty() {
            String::new()
        } else {
            format!(" {}", self.device)
        };
        format!(
            "{} ({}{dev} {})",
            self.path,
            self.fs_type,
            shared::units::format_bytes(self.device_size)
        )
    }

    fn json(&self) -> serde_json::Value {
        json!({"path": self.path, "fstype": self.fs_type, "device": self.device,
               "device_size": self.device_size})
    }
}

/// The live output: a line (or an ioping JSON record) per request.
struct Lines<'a> {
    label: Label,
    args: &'a ProbeArgs,
    out: std::io::StdoutLock<'static>,
    records: u64,
}

impl Observer for Lines<'_> {
    fn sample(&mut self, _s: &Sample) {}

    fn request(&mut self, r: &Request) {
        if self.args.ioping_json {
            let rec = json!({
                "timestamp": now_secs(),
                "localtime": localtime(now_secs()),
                "target": self.label.json(),
                "io": {"request": r.n, "operation": if r.write { "write" } else { "read" },
                       "size": r.bytes, "time": r.lat_ns, "ignored": r.warmup},
            });
            self.record(&rec);
        } else if !self.args.quiet {
            let _ = writeln!(
                self.out,
                "{} {} {}: request={} time={}{}",
                ioping_size(r.bytes),
                if r.write { ">>>" } else { "<<<" },
                self.label.text(),
                r.n,
                ioping_time(r.lat_ns),
                if r.warmup { " (warmup)" } else { "" }
            );
            let _ = self.out.flush();
        }
    }
}

impl Lines<'_> {
    fn record(&mut self, v: &serde_json::Value) {
        let sep = if self.records == 0 { "" } else { "," };
        let _ = write!(
            self.out,
            "{sep}{}",
            serde_json::to_string_pretty(v).unwrap_or_default()
        );
        let _ = self.out.flush();
        self.records += 1;
    }

    /// ioping's statistics, from the stored report, with the percentiles of its histogram.
    fn statistics(&mut self, report: &RunReport, s: &ProbeSummary) {
        let op = if self.args.write { "written" } else { "read" };
        let run_ns = report.summary.duration_ns.max(1);
        let rate = |n: u64, ns: u64| n as f64 * 1e9 / ns.max(1) as f64;
        let lat = if self.args.write {
            &report.summary.write.lat
        } else {
            &report.summary.read.lat
        };
        let o = &mut self.out;
        let _ = writeln!(o, "\n--- {} ioping statistics ---", self.label.text());
        let _ = writeln!(
            o,
            "{} requests completed in {}, {} {op}, {:.0} iops, {}/s",
            s.count,
            ioping_time(s.busy_ns),
            ioping_size(s.bytes),
            rate(s.count, s.busy_ns),
            ioping_size(rate(s.bytes, s.busy_ns) as u64)
        );
        let _ = writeln!(
            o,
            "generated {} requests in {}, {}, {:.0} iops, {}/s",
            s.requests,
            ioping_time(run_ns),
            ioping_size(s.requests_bytes),
            rate(s.requests, run_ns),
            ioping_size(rate(s.requests_bytes, run_ns) as u64)
        );
        let _ = writeln!(
            o,
            "min/avg/max/mdev = {} / {} / {} / {}",
            ioping_time(s.min_ns),
            ioping_time(s.avg_ns),
            ioping_time(s.max_ns),
            ioping_time(s.mdev_ns)
        );
        let _ = writeln!(
            o,
            "p50/p90/p99/p99.9 = {} / {} / {} / {}",
            ioping_time(lat.p50_ns),
            ioping_time(lat.p90_ns),
            ioping_time(lat.p99_ns),
            ioping_time(lat.p99_9_ns)
        );
        if !s.warmup_ns.is_empty() {
            let w: Vec<String> = s.warmup_ns.iter().map(|&n| ioping_time(n)).collect();
            let _ = writeln!(o, "warm-up (not counted) = {}", w.join(" / "));
        }
    }

    /// The idle-wake curve: a row per quiet time, then the knees found.
    fn curve(
        &mut self,
        c: &shared::probe::IdleCurve,
        power: Option<&shared::probe::PowerSettings>,
    ) {
        let o = &mut self.out;
        let _ = writeln!(
            o,
            "\n--- idle-wake curve (awake {}, a step up counts past {}) ---",
            ioping_time(c.awake_ns),
            ioping_time(c.threshold_ns)
        );
        let _ = writeln!(
            o,
            "{:>10}  {:>10}  {:>10}  {:>10}  {:>10}",
            "idle", "median", "min", "max", "extra"
        );
        for s in &c.steps {
            let _ = writeln!(
                o,
                "{:>10}  {:>10}  {:>10}  {:>10}  {:>10}",
                ioping_time(s.idle_us * 1000),
                ioping_time(s.median_ns),
                ioping_time(s.min_ns),
                ioping_time(s.max_ns),
                ioping_time(s.extra_ns)
            );
        }
        if c.knees.is_empty() {
            let _ = writeln!(
                o,
                "no knee: the first request after any quiet time costs what an awake one does"
            );
        }
        for k in &c.knees {
            let named = power
                .and_then(|p| p.state_at(k))
                .map_or_else(String::new, |s| format!(" (APST's PS{s})"));
            let _ = writeln!(
                o,
                "knee: a power state{named} begins after {} to {} of idle; waking from it costs {}",
                ioping_time(k.after_us * 1000),
                ioping_time(k.idle_us * 1000),
                ioping_time(k.wake_ns)
            );
        }
        if let Some(p) = power {
            power_lines(o, p);
        }
    }

    /// ioping's closing record (`stat` of the counted requests, `load` of them all) and
    /// the end of the array.
    fn ioping_end(&mut self, report: &RunReport, s: &ProbeSummary) {
        let run_ns = report.summary.duration_ns.max(1);
        let per = |n: u64, ns: u64| n as f64 * 1e9 / ns.max(1) as f64;
        let rec = json!({
            "timestamp": now_secs(),
            "localtime": localtime(now_secs()),
            "target": self.label.json(),
            "stat": {"count": s.count, "size": s.bytes, "time": s.busy_ns,
                     "iops": per(s.count, s.busy_ns), "bps": per(s.bytes, s.busy_ns) as u64,
                     "min": s.min_ns, "avg": s.avg_ns, "max": s.max_ns, "mdev": s.mdev_ns},
            "load": {"count": s.requests, "size": s.requests_bytes, "time": run_ns,
                     "iops": per(s.requests, run_ns), "bps": per(s.requests_bytes, run_ns) as u64},
        });
        self.record(&rec);
        let _ = writeln!(self.out, "]");
    }
}

/// The size of the filesystem holding `path` (statvfs's blocks × fragment size).
fn fs_size(path: &std::path::Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: statvfs fills the zeroed struct from a valid C string.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    (unsafe { libc::statvfs(c.as_ptr(), &mut st) } == 0).then(|| st.f_blocks * st.f_frsize)
}

/// The device's power settings, a line each, and what could not be read.
fn power_lines(o: &mut impl Write, p: &shared::probe::PowerSettings) {
    let dev = p.device.as_deref().unwrap_or("the target");
    let _ = writeln!(o, "\n--- power settings of {dev} ---");
    for s in &p.nvme_states {
        let _ = writeln!(
            o,
            "PS{}: {:.2} W{}, entry {} us, exit {} us",
            s.state,
            s.max_power_w,
            if s.non_operational {
                ", non-operational"
            } else {
                ""
            },
            s.entry_latency_us,
            s.exit_latency_us
        );
    }
    let flag = |b: Option<bool>| b.map_or("unknown", |b| if b { "yes" } else { "no" });
    if p.apst_supported.is_some() || p.apst_enabled.is_some() {
        let chain: Vec<String> = p
            .apst_chain()
            .iter()
            .map(|(s, ms)| format!("PS{s} after {ms} ms"))
            .collect();
        let _ = writeln!(
            o,
            "APST: supported {}, enabled {}{}",
            flag(p.apst_supported),
            flag(p.apst_enabled),
            if chain.is_empty() {
                String::new()
            } else {
                format!(": {}", chain.join(", "))
            }
        );
    }
    for (name, v) in [
        (
            "pm_qos_latency_tolerance_us",
            &p.pm_qos_latency_tolerance_us,
        ),
        (
            "nvme_core default_ps_max_latency_us",
            &p.nvme_default_ps_max_latency_us,
        ),
        (
            "link_power_management_policy",
            &p.link_power_management_policy,
        ),
        ("runtime PM (power/control)", &p.runtime_pm),
    ] {
        if let Some(v) = v {
            let _ = writeln!(o, "{name}: {v}");
        }
    }
    for m in &p.missing {
        let _ = writeln!(o, "not read: {m}");
    }
}

fn now_secs() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// `2026-12-07T06:20:44+0000` (UTC), as ioping's `localtime` on a UTC machine.
fn localtime(secs: f64) -> String {
    let t = secs as i64;
    let (days, rest) = (t.div_euclid(86_400), t.rem_euclid(86_400));
    // Days since 1970-01-01 to a civil date (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}+0000",
        rest / 3600,
        rest / 60 % 60,
        rest % 60
    )
}

/// ioping's time: `601.6 us`, `1.64 ms`, `2.5 s`.
fn ioping_time(ns: u64) -> String {
    let x = ns as f64;
    if ns < 1000 {
        format!("{ns} ns")
    } else if x < 1e6 {
        format!("{:.1} us", x / 1e3)
    } else if x < 1e9 {
        format!("{:.2} ms", x / 1e6)
    } else {
        format!("{:.2} s", x / 1e9)
    }
}

/// ioping's size: `4 KiB`, `1.5 MiB`.
fn ioping_size(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut x = bytes as f64;
    let mut u = 0;
    while x >= 1024.0 && u + 1 < UNITS.len() {
        x /= 1024.0;
        u += 1;
    }
    if x.fract() == 0.0 {
        format!("{x:.0} {}", UNITS[u])
    } else {
        format!("{x:.1} {}", UNITS[u])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_sizes_and_dates_read_as_iopings() {
        assert_eq!(ioping_time(601_600), "601.6 us");
        assert_eq!(ioping_time(1_640_000), "1.64 ms");
        assert_eq!(ioping_size(4096), "4 KiB");
        assert_eq!(ioping_size(12 * 1024), "12 KiB");
        assert_eq!(localtime(1_796_624_444.6), "2026-12-07T06:20:44+0000");
        assert_eq!(localtime(951_782_400.0), "2000-02-29T00:00:00+0000");
        assert_eq!(duration_us("0.1"), Ok(100_000));
        assert_eq!(duration_us("100ms"), Ok(100_000));
    }
}
