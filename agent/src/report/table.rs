//! The summary table printed at the end of a run, and the one-line interval reports.

use shared::units::{format_bytes, format_ns};
use shared::{DirSample, RunReport, RunStatus, Sample};
use std::fmt::Write;

fn dir_line(name: &str, d: &DirSample) -> String {
    format!(
        "{name:<6} {:>10.1} {:>10.1} {:>10.0} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}\n",
        d.mb_s,
        d.mib_s,
        d.iops,
        format_ns(d.lat.mean_ns),
        format_ns(d.lat.p50_ns),
        format_ns(d.lat.p99_ns),
        format_ns(d.lat.p99_9_ns),
        format_ns(d.lat.max_ns),
        format_bytes(d.bytes),
    )
}

/// The end-of-run summary.
pub fn summary(r: &RunReport) -> String {
    let s = &r.summary;
    let e = &r.environment;
    let spec = &r.spec;
    let mut out = String::new();
    let status = match r.status {
        RunStatus::Completed => "completed".to_string(),
        other => other.as_str().to_uppercase(),
    };
    let jobs: Vec<&str> = r.targets.iter().filter_map(|t| t.job.as_deref()).collect();
    if jobs.is_empty() {
        let _ = writeln!(
            out,
            "{status} on {} ({}, {}): {} bs={} iodepth={} jobs={} pattern={} {}{}{}",
            e.target,
            e.target_kind,
            format_bytes(e.target_size),
            spec.rw,
            format_bytes(spec.bs),
            spec.iodepth,
            spec.jobs,
            spec.pattern,
            match (e.target_kind.as_str(), e.direct) {
                ("none", _) => "no device",
                (_, true) => "O_DIRECT",
                (_, false) => "buffered",
            },
            match spec.write_sync {
                shared::durability::WriteSync::None => String::new(),
                w => format!("+{}", w.flag_name()),
            },
            spec.flush
                .map(|f| format!(" {} every {} writes", f.call(), f.every))
                .unwrap_or_default(),
        );
    } else {
        // A job file's jobs at once: each its own workload (listed under "jobs:").
        let _ = writeln!(
            out,
            "{status} on {} ({}, {}): {} fio jobs at once ({})",
            e.target,
            e.target_kind,
            format_bytes(e.target_size),
            jobs.len(),
            jobs.join(", "),
        );
    }
    let _ = writeln!(
        out,
        "backend {}{}, {} samples over {:.2} s{}",
        e.backend,
        if e.ring_features.is_empty() {
            String::new()
        } else {
            format!(" [{}]", e.ring_features.join(", "))
        },
        s.samples,
        s.duration_ns as f64 / 1e9,
        s.fsync_ns
            .map(|f| format!(" (end fsync {})", format_ns(f)))
            .unwrap_or_default(),
    );
    let _ = writeln!(
        out,
        "{:<6} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}",
        "", "MB/s", "MiB/s", "IOPS", "lat mean", "p50", "p99", "p99.9", "max", "bytes"
    );
    // A run of parts shows the directions they ran; one workload those its spec names.
    let (reads, writes, trims) = if r.targets.is_empty() {
        let pct = spec.rw.read_pct(spec.read_pct);
        let trims = spec.rw.trims();
        (
            pct > 0,
            pct < 100 && (!trims || spec.rw.then_writes()),
            trims,
        )
    } else {
        (false, false, false)
    };
    if s.read.ios > 0 || reads {
        out.push_str(&dir_line("read", &s.read));
    }
    if s.write.ios > 0 || writes {
        out.push_str(&dir_line("write", &s.write));
    }
    if s.trim.ios > 0 || trims {
        out.push_str(&dir_line("trim", &s.trim));
    }
    // The flushes: IOPS is flushes per second, the bytes column 0.
    if let Some(f) = &s.flush {
        out.push_str(&dir_line("flush", f));
    }
    if let Some(line) = e.io_path.as_ref().and_then(shared::IoPath::summary_line) {
        let _ = writeln!(out, "{line}");
    }
    for w in &e.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    if let Some(err) = &r.error {
        let _ = writeln!(out, "error: {}", err.message);
    }
    out
}

/// One line per interval: time, and per active direction MB/s, IOPS and p99.
pub fn interval_line(s: &Sample) -> String {
    let mut line = format!("{:>8.1}s", s.end_ns as f64 / 1e9);
    for (name, d) in [("read", &s.read), ("write", &s.write), ("trim", &s.trim)] {
        if d.ios > 0 {
            let _ = write!(
                line,
                "  {name} {:>9.1} MB/s {:>9.0} IOPS p99 {:>9}",
                d.mb_s,
                d.iops,
                format_ns(d.lat.p99_ns)
            );
        }
    }
    if s.total_ios() == 0 {
        line.push_str("  no I/O completed");
    }
    line
}

/// The steps of a preset run (one line each) and what the analyses found, one line each.
pub fn analysis(r: &RunReport) -> String {
    let mut out = String::new();
    if !r.steps.is_empty() {
        out.push_str("\nsteps:\n");
        for s in &r.steps {
            let d = &s.summary;
            out.push_str(&format!(
                "  {:<36} {:>9.1} MB/s {:>10.0} IOPS  p99 {}\n",
                shared::steps::step_label(&s.name, s.pass),
                d.read.mb_s + d.write.mb_s,
                d.read.iops + d.write.iops,
                format_ns(d.read.lat.p99_ns.max(d.write.lat.p99_ns))
            ));
            // elbencho's pair, where the jobs ended far apart.
            if let Some(done) = s.files_done.filter(shared::files::Done::differ) {
                out.push_str(&format!(
                    "    first done {:.0}/s over {:.3} s, last done {:.0}/s over {:.3} s\n",
                    done.first.iops, done.first.seconds, done.last.iops, done.last.seconds
                ));
            }
        }
    }
    if !r.targets.is_empty() {
        let together = r.targets.iter().any(|t| t.job.is_some());
        out.push_str(if together {
            "\njobs:\n"
        } else {
            "\ntargets:\n"
        });
        for t in &r.targets {
            let d = &t.summary;
            let name = match &t.job {
                Some(job) => format!("{job} ({})", t.path),
                None => t.path.clone(),
            };
            out.push_str(&format!(
                "  {:<36} {:>9.1} MB/s {:>10.0} IOPS  p99 {}\n",
                name,
                d.read.mb_s + d.write.mb_s,
                d.read.iops + d.write.iops,
                format_ns(d.read.lat.p99_ns.max(d.write.lat.p99_ns))
            ));
        }
    }
    if let Some(g) = &r.analysis.group {
        out.push_str(&group(g));
    }
    if let Some(grid) = shared::steps::grid_from_steps(&r.steps) {
        let cell = |v: Option<f64>| v.map_or("–".to_string(), |x| format!("{x:.2}"));
        out.push_str("\nCrystalDiskMark grid, MB/s (best / mean of the passes):\n");
        out.push_str(&format!("  {:<16} {:>21} {:>21}\n", "", "read", "write"));
        for g in grid {
            out.push_str(&format!(
                "  {:<16} {:>10} / {:>8} {:>10} / {:>8}\n",
                g.label,
                cell(g.read_best),
                cell(g.read_mean),
                cell(g.write_best),
                cell(g.write_mean)
            ));
        }
    }
    // The capacity verdict and the read-back first (the dashboard gives them panels).
    let lines: Vec<String> = r
        .analysis
        .fakecap
        .iter()
        .map(|f| f.summary_line())
        .chain(r.analysis.verify.iter().map(|v| v.summary_line()))
        .chain(r.analysis.scan.iter().map(|m| m.summary_line()))
        .chain(r.analysis.plausibility.iter().map(|p| p.summary_line()))
        .chain(r.analysis.qd_search.iter().map(|q| q.summary_line()))
        .chain(r.analysis.summary_lines())
        .collect();
    if !lines.is_empty() {
        out.push_str("\nanalysis:\n");
    }
    for l in lines {
        out.push_str(&format!("  {l}\n"));
    }
    if let Some(rep) = &r.analysis.repeat {
        out.push('\n');
        for l in rep.lines() {
            out.push_str(&format!("{l}\n"));
        }
    }
    out
}

/// A group run's hosts (clock, start on the shared clock, the time one left) and its
/// elbencho figures.
fn group(g: &shared::group::Group) -> String {
    let mut out = format!("\ngroup of {} host(s):\n", g.hosts.len());
    for h in &g.hosts {
        let run = h.run_id.map_or(String::new(), |id| format!(" run {id}"));
        let started = h.started_ms.map_or("start unknown".to_string(), |ms| {
            format!("started {ms:+.1} ms")
        });
        out.push_str(&format!(
            "  {}{run}: clock {:+.2} ms (round trip {:.2} ms), {started}",
            h.address, h.offset_ms, h.delay_ms
        ));
        if let Some(ms) = h.left_ms {
            out.push_str(&format!(", LEFT at {:.1} s", ms as f64 / 1000.0));
        }
        out.push('\n');
    }
    for (name, f) in [
        ("first done", &g.first_done),
        ("last done", &g.last_done),
        ("stonewall", &g.stonewall),
    ] {
        out.push_str(&format!(
            "  {name:<11} {:>9.1} MB/s {:>10.0} IOPS over {:.2} s\n",
            f.mb_s, f.iops, f.seconds
        ));
    }
    out
}
