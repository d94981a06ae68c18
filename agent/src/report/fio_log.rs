//! fio's per-interval logs (`write_bw_log`, `write_iops_log`, `write_lat_log` in a job file),
//! in fio 3.33's averaged format (`log_avg_msec`): one line per direction per window,
//! `msec, value, direction, 0, 0`, where msec is the window's end since the job started,
//! direction 0 is read, 1 write and 2 trim, bandwidth is KiB/s, IOPS per second and latency the
//! window's mean in ns. Files are fio's names: `PREFIX_bw.N.log`, `PREFIX_iops.N.log`,
//! `PREFIX_lat.N.log` and `PREFIX_clat.N.log` (the same figure: diskscope's latency runs from
//! submission to completion), and an empty `PREFIX_slat.N.log` as fio leaves it for an engine
//! that does not measure submission latency; N is the job's number in the file (its first
//! clone's with numjobs). The figures are the stored samples of the job's step, or, for a
//! job that ran at the same time as others, its own part of each sample (`PartSample::dirs`).

use crate::fiojob::JobFile;
use shared::{DirSample, RunReport, Sample};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// What a log line holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Bw,
    Iops,
    Lat,
}

impl Kind {
    fn value(self, d: &DirSample, window_ns: u64) -> u64 {
        let secs = window_ns as f64 / 1e9;
        match self {
            Kind::Bw if secs > 0.0 => (d.bytes as f64 / 1024.0 / secs).round() as u64,
            Kind::Iops if secs > 0.0 => (d.ios as f64 / secs).round() as u64,
            Kind::Bw | Kind::Iops => 0,
            Kind::Lat => d.lat.mean_ns,
        }
    }
}

/// The lines of one log over a step's `samples` (in order), for the directions the job does
/// (`on`: read, write, trim).
fn lines(samples: &[&Sample], kind: Kind, on: [bool; 3]) -> String {
    let mut out = String::new();
    let Some(first) = samples.first() else {
        return out;
    };
    for s in samples {
        let msec = s.end_ns.saturating_sub(first.start_ns) / 1_000_000;
        let window = s.end_ns.saturating_sub(s.start_ns);
        for (dir, d) in [&s.read, &s.write, &s.trim].into_iter().enumerate() {
            if on[dir] {
                let _ = writeln!(out, "{msec}, {}, {dir}, 0, 0", kind.value(d, window));
            }
        }
    }
    out
}

/// Writes the logs the jobs of `jobs` ask for, from `report` (a run of those jobs: step `i` is
/// job `i`), with prefixes taken relative to `dir` as fio takes them relative to its working
/// directory. Returns the files written.
pub fn write(report: &RunReport, jobs: &JobFile, dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    let mut number = 1u32;
    for (job, (step, part)) in jobs.jobs.iter().zip(placements(report, jobs)) {
        let n = number;
        number += job.spec.jobs.max(1);
        if !job.logs.any() {
            continue;
        }
        let own: Vec<Sample> = report
            .samples
            .iter()
            .filter(|s| s.step == step && !s.pause)
            .map(|s| match part {
                Some(i) => part_sample(s, i),
                None => s.clone(),
            })
            .collect();
        let samples: Vec<&Sample> = own.iter().collect();
        let (rw, pct) = (job.spec.rw, job.spec.rw.read_pct(job.spec.read_pct));
        let on = [
            pct > 0,
            pct < 100 && (!rw.trims() || rw.then_writes()),
            rw.trims(),
        ];
        let mut files: Vec<(String, Option<Kind>)> = Vec::new();
        if let Some(p) = &job.logs.bw {
            files.push((format!("{p}_bw.{n}.log"), Some(Kind::Bw)));
        }
        if let Some(p) = &job.logs.iops {
            files.push((format!("{p}_iops.{n}.log"), Some(Kind::Iops)));
        }
        if let Some(p) = &job.logs.lat {
            files.push((format!("{p}_lat.{n}.log"), Some(Kind::Lat)));
            files.push((format!("{p}_clat.{n}.log"), Some(Kind::Lat)));
            files.push((format!("{p}_slat.{n}.log"), None));
        }
        for (name, kind) in files {
            let path = dir.join(name);
            let text = kind.map_or_else(String::new, |k| lines(&samples, k, on));
            std::fs::write(&path, text)
                .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
            written.push(path);
        }
    }
    Ok(written)
}

/// Where each job of the file ran: the run's step (its stonewall group), and its part when
/// it ran at the same time as other jobs.
fn placements(report: &RunReport, jobs: &JobFile) -> Vec<(u32, Option<u32>)> {
    // A file that is one group ran its jobs as the run's parts, with no steps.
    let together = report.steps.is_empty();
    let mut out = Vec::new();
    for (step, group) in jobs.groups().iter().enumerate() {
        let step = step as u32;
        for job in group {
            let part = (group.len() > 1).then(|| {
                report.targets.iter().position(|t| {
                    t.job.as_deref() == Some(job.name.as_str())
                        && (t.step == Some(step) || (together && t.step.is_none()))
                })
            });
            out.push((step, part.flatten().map(|i| i as u32)));
        }
    }
    out
}

/// Part `part`'s own figures in sample `s`, as a sample of their own.
fn part_sample(s: &Sample, part: u32) -> Sample {
    let mut own = Sample {
        start_ns: s.start_ns,
        end_ns: s.end_ns,
        step: s.step,
        ..Sample::default()
    };
    if let Some(p) = s.parts.iter().find(|p| p.target == part) {
        for (d, pd) in [(&mut own.read, &p.dirs[0]), (&mut own.write, &p.dirs[1])] {
            d.bytes = pd.bytes;
            d.ios = pd.ios;
            d.lat.mean_ns = pd.lat_mean_ns;
        }
        own.trim.bytes = p.trim.bytes;
        own.trim.ios = p.trim.ios;
        own.trim.lat.mean_ns = p.trim.lat_mean_ns;
    }
    own
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(start_ms: u64, end_ms: u64, read_ios: u64, write_ios: u64) -> Sample {
        let mut s = Sample {
            start_ns: start_ms * 1_000_000,
            end_ns: end_ms * 1_000_000,
            ..Sample::default()
        };
        s.read.ios = read_ios;
        s.read.bytes = read_ios * 4096;
        s.read.lat.mean_ns = 150_000;
        s.write.ios = write_ios;
        s.write.bytes = write_ios * 4096;
        s.write.lat.mean_ns = 90_000;
        s
    }

    #[test]
    fn lines_are_fios_averaged_format() {
        let a = sample(100, 350, 750, 250);
        let b = sample(350, 600, 500, 0);
        let v = [&a, &b];
        // 750 I/Os of 4 KiB in 250 ms: 3000 IOPS, 12000 KiB/s.
        assert_eq!(
            lines(&v, Kind::Bw, [true, true, false]),
            "250, 12000, 0, 0, 0\n250, 4000, 1, 0, 0\n500, 8000, 0, 0, 0\n500, 0, 1, 0, 0\n"
        );
        assert_eq!(
            lines(&v, Kind::Iops, [true, false, false]),
            "250, 3000, 0, 0, 0\n500, 2000, 0, 0, 0\n"
        );
        assert_eq!(
            lines(&v[..1], Kind::Lat, [false, true, false]),
            "250, 90000, 1, 0, 0\n"
        );
        assert_eq!(lines(&[], Kind::Lat, [true, true, false]), "");
    }
}
