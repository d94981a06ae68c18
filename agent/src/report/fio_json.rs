//! fio's JSON document (`--output-format fio-json`), key for key as fio 3.33 writes it, from a
//! stored run: one job per step (a job file's stonewall groups are its steps, each with its
//! `numjobs` merged as `group_reporting` merges them). Figures are the stored report's:
//! bytes, I/Os and times from the step's summary; percentiles, stddev and fio's latency
//! buckets from the step's own histogram (the same log-linear layout as fio's); bandwidth
//! min/max/mean/dev from the step's samples.
//!
//! What diskscope does not measure is written as fio writes it for an engine that does not
//! measure it either: submission latency (`slat_ns`) with `N: 0`. Keys of what diskscope
//! does not measure or run (trim, sync, the queue-depth histograms) are present with zeros.
//!
//! fio's `json+` adds each direction's completion-latency histogram as `clat_ns.bins`
//! (`{"<ns>": count}`, a bucket's representative value as key). The samples are read once,
//! as an iterator (the API streams them from the store a page at a time): the document holds
//! running sums, never the samples.

use crate::fiojob::JobFile;
use serde_json::{json, Map, Value};
use shared::analysis::verify::Verify;
use shared::sample::HistBucket;
use shared::steady::SteadyWatch;
use shared::{DirSample, RunReport, Sample};
use std::borrow::Borrow;
use std::collections::BTreeMap;

/// fio's two JSON forms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// `--output-format=json`.
    Json,
    /// `--output-format=json+`: with the latency bins.
    JsonPlus,
}

/// Running min, max, mean and sample standard deviation (Welford's).
#[derive(Default, Clone, Copy)]
struct Spread {
    n: u64,
    mean: f64,
    m2: f64,
    min: f64,
    max: f64,
}

impl Spread {
    fn add(&mut self, x: f64) {
        self.n += 1;
        if self.n == 1 {
            (self.min, self.max) = (x, x);
        } else {
            self.min = self.min.min(x);
            self.max = self.max.max(x);
        }
        let d = x - self.mean;
        self.mean += d / self.n as f64;
        self.m2 += d * (x - self.mean);
    }

    /// fio's `(min, max, mean, dev)`, zeros for none.
    fn get(&self) -> (f64, f64, f64, f64) {
        if self.n == 0 {
            return (0.0, 0.0, 0.0, 0.0);
        }
        let var = if self.n > 1 {
            self.m2 / (self.n - 1) as f64
        } else {
            0.0
        };
        (self.min, self.max, self.mean, var.sqrt())
    }
}

/// What one step's samples contribute: per-interval bandwidth (KiB/s) and IOPS per
/// direction over the intervals that did I/O that way, and the engine CPU.
#[derive(Default, Clone, Copy)]
struct StepSamples {
    bw: [Spread; 3],
    iops: [Spread; 3],
    cpu: Spread,
}

impl StepSamples {
    fn add(&mut self, s: &Sample) {
        if s.end_ns > s.start_ns {
            let w = (s.end_ns - s.start_ns) as f64 / 1e9;
            for (i, d) in [&s.read, &s.write, &s.trim].into_iter().enumerate() {
                if d.ios > 0 {
                    self.bw[i].add(d.bytes as f64 / w / 1024.0);
                    self.iops[i].add(d.ios as f64 / w);
                }
            }
        }
        if let Some(c) = s.job_cpu_pct {
            self.cpu.add(c);
        }
    }

    /// Part `part`'s share of sample `s` (a job of a file whose jobs ran together). A part
    /// keeps MB/s per direction and IOPS in all: the reads' and writes' IOPS split by bytes
    /// (exact when both directions use one block size, as fio's jobs here do unless `bs=`
    /// sets two); the trims' are their own.
    fn add_part(&mut self, s: &Sample, part: u32) {
        let Some(p) = s.parts.iter().find(|p| p.target == part) else {
            return;
        };
        let w = s.end_ns.saturating_sub(s.start_ns) as f64 / 1e9;
        let trim_iops = if w > 0.0 { p.trim.ios as f64 / w } else { 0.0 };
        let mb = p.read_mb_s + p.write_mb_s;
        for (i, d) in [p.read_mb_s, p.write_mb_s].into_iter().enumerate() {
            if d > 0.0 {
                self.bw[i].add(d * 1e6 / 1024.0);
                self.iops[i].add((p.iops - trim_iops) * d / mb);
            }
        }
        if p.trim.ios > 0 && w > 0.0 {
            self.bw[2].add(p.trim.bytes as f64 / w / 1024.0);
            self.iops[2].add(trim_iops);
        }
    }
}

/// fio's percentile list (its default `percentile_list`).
const PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

/// The fio version string written (fio's key; the tool is named in it).
pub fn version() -> String {
    format!("diskscope-{} (fio-3.33 JSON)", crate::env::VERSION)
}

/// fio's JSON document for `report` with its `samples` (the report's own, or streamed from
/// the store); `jobs` gives the job names, groups and "job options" of a run started from a
/// job file.
pub fn document<S: Borrow<Sample>>(
    report: &RunReport,
    samples: impl IntoIterator<Item = S>,
    jobs: Option<&JobFile>,
    form: Form,
) -> Value {
    let started_ms = report.environment.started_at_ms;
    let mut by_step: BTreeMap<u32, StepSamples> = BTreeMap::new();
    // Each part's own (a job of a file whose jobs ran together).
    let mut by_part: BTreeMap<u32, StepSamples> = BTreeMap::new();
    let mut watches = steady_watches(report);
    let finals = final_windows(report);
    // A latency search's final window's own samples, by step.
    let mut by_final: BTreeMap<u32, StepSamples> = BTreeMap::new();
    for s in samples {
        let s = s.borrow();
        if let Some(w) = watches.get_mut(&s.step) {
            w.push(s);
        }
        if finals
            .get(&s.step)
            .is_some_and(|(from, _)| s.start_ns >= *from)
        {
            by_final.entry(s.step).or_default().add(s);
        }
        by_step.entry(s.step).or_default().add(s);
        for p in &s.parts {
            by_part.entry(p.target).or_default().add_part(s, p.target);
        }
    }
    let step_samples = |i: u32| by_step.get(&i).copied().unwrap_or_default();
    let mut out = Vec::new();
    if let Some(g) = &report.analysis.group {
        out = client_jobs(report, g, jobs, &by_part, step_samples(0), form);
    } else if report.steps.is_empty() && report.targets.iter().any(|t| t.job.is_some()) {
        // A job file's jobs that ran together: a fio job each, from its part.
        for (i, part) in report.targets.iter().enumerate() {
            out.push(part_job(jobs, part, 0, by_part.get(&(i as u32)), form));
        }
    } else if report.steps.is_empty() {
        let spec_opts = spec_options(&report.spec);
        let (summary, hist, samples) = match finals.get(&0) {
            Some(&(_, (s, h))) => (s, h, by_final.get(&0).copied().unwrap_or_default()),
            None => (&report.summary, &report.histogram, step_samples(0)),
        };
        let mut j = job("diskscope", 0, spec_opts, summary, hist, samples, form);
        with_read_back(&mut j, report.analysis.verify.as_ref());
        out.push(j);
    } else {
        for s in &report.steps {
            // A step whose jobs ran at once: a fio job each, in the step's group.
            let parts = report.targets.iter().enumerate();
            let mut at_once = parts.filter(|(_, t)| t.step == Some(s.index)).peekable();
            if at_once.peek().is_some() {
                for (i, part) in at_once {
                    out.push(part_job(
                        jobs,
                        part,
                        s.index,
                        by_part.get(&(i as u32)),
                        form,
                    ));
                }
                continue;
            }
            let from_file = jobs.and_then(|f| f.jobs.iter().find(|j| j.name == s.name));
            let options = match from_file {
                Some(j) => j
                    .options
                    .iter()
                    .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                    .collect(),
                None => spec_options(&s.spec),
            };
            let hist = s.histogram.clone().unwrap_or_default();
            let (summary, hist, samples) = match finals.get(&s.index) {
                Some(&(_, (fs, fh))) => {
                    (fs, fh, by_final.get(&s.index).copied().unwrap_or_default())
                }
                None => (&s.summary, &hist, step_samples(s.index)),
            };
            let mut j = job(&s.name, s.index, options, summary, hist, samples, form);
            with_read_back(&mut j, s.verify.as_ref());
            out.push(j);
        }
    }
    // A failed run: its last job carries the error number, as fio's failed job does (EIO, 5,
    // when the failure was not an I/O's: fio's own for a rate floor not met).
    if let (Some(e), Some(last)) = (&report.error, out.last_mut()) {
        last["error"] = json!(e.errno.unwrap_or(5));
    }
    attach_steadystate(report, &watches, &mut out);
    attach_latency_search(report, &mut out);
    let mut doc = json!({
        "fio version": version(),
        "timestamp": started_ms / 1000,
        "timestamp_ms": started_ms,
        "time": report.environment.started_at_ms.to_string(),
        "jobs": out,
        "disk_util": [],
    });
    if report.analysis.group.is_some() {
        // fio's client output names its list of jobs so.
        if let Some(list) = doc.as_object_mut().and_then(|d| d.remove("jobs")) {
            doc["client_stats"] = list;
        }
    }
    if let Some(f) = jobs {
        let globals: Map<String, Value> = f
            .globals
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect();
        if !globals.is_empty() {
            doc["global options"] = Value::Object(globals);
        }
    }
    doc
}

/// fio `--client`'s jobs for a group run: one per client (host) with its `hostname` and
/// `port`, then "All clients", the merged result.
fn client_jobs(
    report: &RunReport,
    g: &shared::group::Group,
    jobs: Option<&JobFile>,
    by_part: &BTreeMap<u32, StepSamples>,
    all: StepSamples,
    form: Form,
) -> Vec<Value> {
    let mut out = Vec::new();
    for (i, (part, host)) in report.targets.iter().zip(&g.hosts).enumerate() {
        let mut j = part_job(jobs, part, 0, by_part.get(&(i as u32)), form);
        let (name, port) = host_port(&host.address);
        j["hostname"] = json!(name);
        j["port"] = json!(port);
        out.push(j);
    }
    let spec_opts = spec_options(&report.spec);
    out.push(job(
        "All clients",
        0,
        spec_opts,
        &report.summary,
        &report.histogram,
        all,
        form,
    ));
    out
}

/// The host and port of an agent's URL, as fio's client JSON names a client.
fn host_port(address: &str) -> (&str, u16) {
    let rest = address.split_once("://").map_or(address, |(_, r)| r);
    let rest = rest.split('/').next().unwrap_or(rest);
    let default = if address.starts_with("https") {
        443
    } else {
        80
    };
    match rest.rsplit_once(':') {
        Some((h, p)) if !h.is_empty() => (h, p.parse().unwrap_or(default)),
        _ => (rest, default),
    }
}

/// The fio job of a part (a job that ran at the same time as others), in group `groupid`,
/// with its options from the job file and its own samples' spread.
fn part_job(
    jobs: Option<&JobFile>,
    part: &shared::TargetPart,
    groupid: u32,
    samples: Option<&StepSamples>,
    form: Form,
) -> Value {
    let name = part.job.as_deref().unwrap_or(&part.path);
    let options = jobs
        .and_then(|f| f.jobs.iter().find(|j| j.name == name))
        .map(|j| {
            j.options
                .iter()
                .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                .collect()
        })
        .unwrap_or_default();
    let mut j = job(
        name,
        groupid,
        options,
        &part.summary,
        &part.histogram.clone().unwrap_or_default(),
        samples.copied().unwrap_or_default(),
        form,
    );
    with_read_back(&mut j, part.verify.as_ref());
    j
}

/// Each latency search's final window, by step: where it starts in the run's time (the
/// step's start plus its own) and its figures, which stand for the job's in fio's JSON
/// (fio restarts its statistics at the final window).
fn final_windows(
    report: &RunReport,
) -> BTreeMap<u32, (u64, (&shared::RunSummary, &shared::HistogramDump))> {
    report
        .analysis
        .qd_search
        .iter()
        .filter_map(|q| {
            let w = q.final_window.as_ref()?;
            let step_start = report.steps.get(q.step as usize).map_or(0, |s| s.start_ns);
            Some((q.step, (step_start + w.from_ns, (&w.summary, &w.histogram))))
        })
        .collect()
}

/// fio's `latency_depth`, `latency_target` (ns), `latency_percentile` and `latency_window`
/// (µs) for each job whose step searched its depth.
fn attach_latency_search(report: &RunReport, out: &mut [Value]) {
    for q in &report.analysis.qd_search {
        let i = if report.steps.is_empty() {
            0
        } else {
            q.step as usize
        };
        if let Some(job) = out.get_mut(i) {
            job["latency_depth"] = json!(q.depths.first().copied().unwrap_or(1));
            job["latency_target"] = json!(q.rule.target_us * 1_000);
            job["latency_percentile"] = json!(q.rule.percentile);
            job["latency_window"] = json!(q.rule.window_ms * 1_000);
        }
    }
}

/// A steady-state watch for each step (or the run) with a rule, keyed by step index.
fn steady_watches(report: &RunReport) -> BTreeMap<u32, SteadyWatch> {
    if report.steps.is_empty() {
        let spec = &report.spec;
        spec.steady
            .map(|r| (0, SteadyWatch::new(r, spec.interval_ms)))
            .into_iter()
            .collect()
    } else {
        let with_rule = report.steps.iter().filter_map(|s| {
            s.spec
                .steady
                .map(|r| (s.index, SteadyWatch::new(r, s.spec.interval_ms)))
        });
        with_rule.collect()
    }
}

/// fio's "steadystate" block for each job with a rule: the watch that stopped it, fed its
/// stored samples.
fn attach_steadystate(report: &RunReport, watches: &BTreeMap<u32, SteadyWatch>, out: &mut [Value]) {
    for (step, w) in watches {
        let job = if report.steps.is_empty() {
            out.first_mut()
        } else {
            let at = report.steps.iter().position(|s| s.index == *step);
            at.and_then(|i| out.get_mut(i))
        };
        if let Some(job) = job {
            job["steadystate"] = steadystate(w);
        }
    }
}

/// fio's "steadystate" block: the rule, whether and how it was met over the last window
/// judged (the values of the measure it watches, per second).
fn steadystate(w: &SteadyWatch) -> Value {
    let (rule, ss) = (w.rule(), w.result());
    let key = match rule.measure {
        shared::steady::SteadyMeasure::Iops => "iops",
        shared::steady::SteadyMeasure::Bw => "bw",
    };
    let criterion = ss.criterion.unwrap_or(0.0);
    json!({
        "ss": rule.to_string(),
        "duration": rule.window_ms / 1000,
        "attained": u8::from(ss.attained),
        "criterion": if rule.pct { format!("{criterion:.6}%") } else { format!("{criterion:.6}") },
        "max_deviation": ss.max_deviation.unwrap_or(0.0),
        "slope": ss.slope.unwrap_or(0.0),
        "data": {
            format!("{key}_mean"): ss.mean.unwrap_or(0.0).round() as u64,
            key: ss.rounds.iter().map(|v| v.round() as u64).collect::<Vec<_>>(),
        },
    })
}

/// A workload's options in fio's names, for runs not started from a job file: each option
/// of the one table (`shared::options`) that fio has and the spec sets, plus what fio always
/// shows of a job (rw, bs, iodepth, numjobs, direct, ioengine, iomem; rwmixread of a mix).
fn spec_options(spec: &shared::WorkloadSpec) -> Map<String, Value> {
    let mut m = Map::new();
    for o in shared::options::OPTIONS
        .iter()
        .filter(|o| !o.fio.is_empty())
    {
        let always = ["rw", "bs", "iodepth", "jobs", "direct", "backend", "iomem"].contains(&o.key)
            || (o.key == "read_pct" && spec.rw.is_mixed());
        if always || o.is_set(spec) {
            for (k, v) in fio_values(o, spec) {
                m.insert(k.to_string(), Value::String(v));
            }
        }
    }
    m
}

/// One option's fio name(s) and value(s) (fio's units: sizes in bytes).
fn fio_values(
    o: &shared::options::WorkloadOption,
    spec: &shared::WorkloadSpec,
) -> Vec<(&'static str, String)> {
    use shared::options::Kind;
    use shared::{DataPattern, Rate};
    let text = (o.get)(spec);
    // fio's floor is per job; the spec's is the jobs'.
    let per_job = u64::from(spec.jobs.max(1));
    match (o.key, o.kind) {
        ("bs", _) => vec![fio_sizes(spec)],
        // Said by bs's (fio's bs, bssplit or bsrange, with the writes' own).
        ("bssplit" | "bsrange", _) => vec![],
        ("rate", _) => match spec.rate {
            Some(Rate::Iops(n)) => vec![("rate_iops", n.to_string())],
            Some(Rate::BytesPerSec(b)) => vec![("rate", b.to_string())],
            None => vec![],
        },
        ("rate_min", _) => match spec.rate_min {
            Some(Rate::Iops(n)) => vec![("rate_iops_min", (n / per_job).to_string())],
            Some(Rate::BytesPerSec(b)) => vec![("rate_min", (b / per_job).to_string())],
            None => vec![],
        },
        // A files phase: fio's metadata engine for it (fio 3.33 has create, stat and
        // delete of files; newer fio the directories' too), its files and their size.
        ("backend", _) if spec.files.is_some() => spec.files.as_ref().map_or(vec![], |f| {
            use shared::files::Phase;
            let engine = match f.phase {
                Phase::Mkdir => "dircreate",
                Phase::Create => "filecreate",
                Phase::Stat => "filestat",
                Phase::Read => "psync",
                Phase::Delete => "filedelete",
                Phase::Rmdir => "dirdelete",
            };
            vec![
                ("ioengine", engine.into()),
                (
                    "nrfiles",
                    f.dirs_per_job()
                        .1
                        .saturating_mul(u64::from(f.files))
                        .to_string(),
                ),
                ("filesize", f.file_size.to_string()),
            ]
        }),
        ("backend", _) => vec![(
            "ioengine",
            match spec.backend {
                shared::spec::Backend::Uring => "io_uring",
                shared::spec::Backend::Aio => "libaio",
                shared::spec::Backend::Sync => "psync",
                // fio has no ring of no-ops: its null engine is the device-less one.
                shared::spec::Backend::Null | shared::spec::Backend::Nop => "null",
            }
            .into(),
        )],
        ("pattern", _) => match spec.pattern {
            DataPattern::Compress(n) => vec![("buffer_compress_percentage", n.to_string())],
            DataPattern::Zeros => vec![("zero_buffers", "1".into())],
            DataPattern::Random => vec![],
        },
        ("verify", _) => vec![("verify", "crc32c".into())],
        ("fadvise_hint", _) => vec![(
            "fadvise_hint",
            match spec.fadvise_hint {
                shared::spec::FadviseHint::Type => "1".into(),
                shared::spec::FadviseHint::None => "0".into(),
                h => h.to_string(),
            },
        )],
        ("iomem", _) => vec![(
            "iomem",
            match spec.iomem {
                shared::spec::BufferMemory::Huge => "mmaphuge",
                shared::spec::BufferMemory::Pages => "malloc",
            }
            .into(),
        )],
        (_, Kind::Check) => vec![(o.fio[0], if text == "true" { "1" } else { "0" }.into())],
        (_, Kind::Size(_)) => vec![(
            o.fio[0],
            shared::units::parse_size(&text).map_or(text, |b| b.to_string()),
        )],
        _ => vec![(o.fio[0], text)],
    }
}

/// fio's size option for the spec: bs, bssplit or bsrange, with the writes' own sizes as
/// fio's second value.
fn fio_sizes(spec: &shared::WorkloadSpec) -> (&'static str, String) {
    let w = spec.write_bssplit.as_ref();
    let one = w.filter(|w| w.0.len() == 1).map(|w| w.min());
    match (&spec.bssplit, spec.bs_max) {
        (None, None) if w.is_some() && one.is_none() => (
            "bssplit",
            format!(
                "{}/100,{}",
                spec.bs,
                w.map(|w| w.to_string()).unwrap_or_default()
            ),
        ),
        (Some(split), _) => (
            "bssplit",
            match w {
                Some(w) => format!("{split},{w}"),
                None => split.to_string(),
            },
        ),
        (None, Some(max)) => ("bsrange", format!("{}-{max}", spec.bs)),
        (None, None) => (
            "bs",
            match one {
                Some(w) => format!("{},{w}", spec.bs),
                None => spec.bs.to_string(),
            },
        ),
    }
}

fn job(
    name: &str,
    index: u32,
    options: Map<String, Value>,
    summary: &shared::RunSummary,
    hist: &shared::HistogramDump,
    samples: StepSamples,
    form: Form,
) -> Value {
    let runtime_ms = summary.duration_ns / 1_000_000;
    let read = dir(
        &summary.read,
        &hist.read,
        summary.duration_ns,
        &samples,
        0,
        form,
    );
    let write = dir(
        &summary.write,
        &hist.write,
        summary.duration_ns,
        &samples,
        1,
        form,
    );
    let trim = dir(
        &summary.trim,
        &hist.trim,
        summary.duration_ns,
        &samples,
        2,
        form,
    );
    let all: Vec<HistBucket> = hist
        .read
        .iter()
        .chain(&hist.write)
        .chain(&hist.trim)
        .copied()
        .collect();
    let cpu_pct = samples.cpu.get().2;
    json!({
        "jobname": name,
        "groupid": index,
        "error": 0,
        "eta": 0,
        "elapsed": summary.duration_ns.div_ceil(1_000_000_000),
        "job options": options,
        "read": read,
        "write": write,
        "trim": trim,
        "sync": sync(summary.flush.as_ref(), &hist.flush, form),
        "job_runtime": runtime_ms,
        // The engine threads' CPU (user and system together, as /proc gives it per thread
        // to diskscope's sampler): written as fio's usr_cpu, sys_cpu 0.
        "usr_cpu": cpu_pct,
        "sys_cpu": 0.0,
        "ctx": 0,
        "majf": 0,
        "minf": 0,
        // diskscope does not record the queue depth at each submission: fio's depth
        // histograms are written with zero counts.
        "iodepth_level": depth_levels(),
        "iodepth_submit": depth_levels(),
        "iodepth_complete": depth_levels(),
        "latency_ns": buckets(&all, 1, &[2, 4, 10, 20, 50, 100, 250, 500, 750, 1000]),
        "latency_us": buckets(&all, 1_000, &[2, 4, 10, 20, 50, 100, 250, 500, 750, 1000]),
        "latency_ms": buckets(&all, 1_000_000, &[2, 4, 10, 20, 50, 100, 250, 500, 750, 1000, 2000]),
        "latency_depth": 1,
        "latency_target": 0,
        "latency_percentile": 100.0,
        "latency_window": 0,
    })
}

/// A verifying job's final read-back in its `read` object, as fio counts its verify phase's
/// reads: the blocks read back after the writes (those checked during them, `verify_every`,
/// are already among the reads), over the read-back's own time, which the job's run time
/// also includes. Their latencies are not recorded: the percentiles stay the reads' own.
fn with_read_back(job: &mut Value, verify: Option<&Verify>) {
    let Some(v) = verify else { return };
    let blocks = v.blocks_checked.saturating_sub(v.interleaved_blocks);
    if blocks == 0 || v.blocks_checked == 0 || v.seconds <= 0.0 {
        return;
    }
    let share = blocks as f64 / v.blocks_checked as f64;
    let bytes = (v.bytes_checked as f64 * share).round() as u64;
    let ms = (v.seconds * share * 1000.0).round() as u64;
    let read = &mut job["read"];
    let io_bytes = read["io_bytes"].as_u64().unwrap_or(0) + bytes;
    let ios = read["total_ios"].as_u64().unwrap_or(0) + blocks;
    let runtime = read["runtime"].as_u64().unwrap_or(0) + ms;
    let secs = runtime.max(1) as f64 / 1000.0;
    let bw_bytes = (io_bytes as f64 / secs).round() as u64;
    read["io_bytes"] = json!(io_bytes);
    read["io_kbytes"] = json!(io_bytes / 1024);
    read["total_ios"] = json!(ios);
    read["runtime"] = json!(runtime);
    read["bw_bytes"] = json!(bw_bytes);
    read["bw"] = json!(bw_bytes / 1024);
    read["iops"] = json!(ios as f64 / secs);
    let job_ms = job["job_runtime"].as_u64().unwrap_or(0) + ms;
    job["job_runtime"] = json!(job_ms);
    job["elapsed"] = json!(job_ms.div_ceil(1000));
}

/// `stats` with fio's percentile map (and, for json+, its bins) when there is any I/O.
fn with_percentiles(mut stats: Value, hist: &[HistBucket], form: Form) -> Value {
    if hist.iter().all(|b| b.count == 0) {
        return stats;
    }
    stats["percentile"] = Value::Object(
        PERCENTILES
            .iter()
            .map(|p| (format!("{p:.6}"), json!(percentile(hist, *p))))
            .collect(),
    );
    if form == Form::JsonPlus {
        stats["bins"] = Value::Object(
            hist.iter()
                .filter(|b| b.count > 0)
                .map(|b| (b.ns.to_string(), json!(b.count)))
                .collect(),
        );
    }
    stats
}

/// fio's `sync` object: the flushes (fsync/fdatasync every N writes) and their latency.
fn sync(flush: Option<&DirSample>, hist: &[HistBucket], form: Form) -> Value {
    let f = flush.copied().unwrap_or_default();
    let lat = stats(hist, f.lat.min_ns, f.lat.max_ns);
    json!({ "total_ios": f.ios, "lat_ns": with_percentiles(lat, hist, form) })
}

/// One direction (`which`: 0 read, 1 write, 2 trim): fio's `read`/`write`/`trim` object.
fn dir(
    d: &DirSample,
    hist: &[HistBucket],
    duration_ns: u64,
    samples: &StepSamples,
    which: usize,
    form: Form,
) -> Value {
    let secs = duration_ns as f64 / 1e9;
    let bw_bytes = if secs > 0.0 {
        (d.bytes as f64 / secs).round() as u64
    } else {
        0
    };
    let (bw, iops) = (samples.bw[which], samples.iops[which]);
    let (bw_min, bw_max, bw_mean, bw_dev) = bw.get();
    let (iops_min, iops_max, iops_mean, iops_dev) = iops.get();
    let lat = stats(hist, d.lat.min_ns, d.lat.max_ns);
    let clat = with_percentiles(lat.clone(), hist, form);
    json!({
        "io_bytes": d.bytes,
        "io_kbytes": d.bytes / 1024,
        "bw_bytes": bw_bytes,
        "bw": bw_bytes / 1024,
        "iops": if secs > 0.0 { d.ios as f64 / secs } else { 0.0 },
        "runtime": if d.ios > 0 { duration_ns / 1_000_000 } else { 0 },
        "total_ios": d.ios,
        "short_ios": 0,
        "drop_ios": 0,
        "slat_ns": stats(&[], 0, 0),
        "clat_ns": clat,
        "lat_ns": lat,
        "bw_min": bw_min.round() as u64,
        "bw_max": bw_max.round() as u64,
        "bw_agg": if d.ios > 0 { 100.0 } else { 0.0 },
        "bw_mean": bw_mean,
        "bw_dev": bw_dev,
        "bw_samples": bw.n,
        "iops_min": iops_min.round() as u64,
        "iops_max": iops_max.round() as u64,
        "iops_mean": iops_mean,
        "iops_stddev": iops_dev,
        "iops_samples": iops.n,
    })
}

fn depth_levels() -> Value {
    json!({ "0": 0.0, "1": 0.0, "2": 0.0, "4": 0.0, "8": 0.0, "16": 0.0, "32": 0.0, ">=64": 0.0 })
}

/// fio's `{min, max, mean, stddev, N}` of a latency histogram (min and max exact, from the
/// summary).
fn stats(hist: &[HistBucket], min_ns: u64, max_ns: u64) -> Value {
    let n: u64 = hist.iter().map(|b| b.count).sum();
    if n == 0 {
        return json!({ "min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0 });
    }
    let mean = hist
        .iter()
        .map(|b| b.ns as f64 * b.count as f64)
        .sum::<f64>()
        / n as f64;
    let var = hist
        .iter()
        .map(|b| (b.ns as f64 - mean).powi(2) * b.count as f64)
        .sum::<f64>()
        / (n.max(2) - 1) as f64;
    json!({ "min": min_ns, "max": max_ns, "mean": mean, "stddev": var.sqrt(), "N": n })
}

/// The value at percentile `p` (fio reads the bucket the rank falls in).
fn percentile(hist: &[HistBucket], p: f64) -> u64 {
    let n: u64 = hist.iter().map(|b| b.count).sum();
    let rank = ((p / 100.0) * n as f64).ceil().max(1.0) as u64;
    let mut seen = 0;
    for b in hist {
        seen += b.count;
        if seen >= rank {
            return b.ns;
        }
    }
    hist.last().map_or(0, |b| b.ns)
}

/// fio's latency buckets: the percentage of I/Os at most each edge (in `unit` ns) and above
/// the edge before it; the last edge of `latency_ms` is fio's ">=2000".
fn buckets(hist: &[HistBucket], unit: u64, edges: &[u64]) -> Value {
    let n: u64 = hist.iter().map(|b| b.count).sum();
    let mut m = Map::new();
    let mut lo = 0;
    for (i, e) in edges.iter().enumerate() {
        let last_ms = unit == 1_000_000 && i == edges.len() - 1;
        let hi = e * unit;
        let count: u64 = hist
            .iter()
            .filter(|b| b.ns > lo && (last_ms || b.ns <= hi))
            .filter(|b| unit != 1 || b.ns <= 1000)
            .map(|b| b.count)
            .sum();
        let key = if last_ms {
            ">=2000".to_string()
        } else {
            e.to_string()
        };
        let pct = if n == 0 {
            0.0
        } else {
            100.0 * count as f64 / n as f64
        };
        m.insert(key, json!(pct));
        lo = hi;
    }
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(ns: u64, count: u64) -> HistBucket {
        HistBucket {
            index: 0,
            lo_ns: ns,
            ns,
            count,
        }
    }

    #[test]
    fn percentiles_and_buckets_come_from_the_histogram() {
        let h = [b(50_000, 90), b(200_000, 9), b(3_000_000, 1)];
        assert_eq!(percentile(&h, 50.0), 50_000);
        assert_eq!(percentile(&h, 90.0), 50_000);
        assert_eq!(percentile(&h, 99.0), 200_000);
        assert_eq!(percentile(&h, 99.99), 3_000_000);
        let us = buckets(&h, 1_000, &[2, 4, 10, 20, 50, 100, 250, 500, 750, 1000]);
        assert_eq!(us["50"], json!(90.0));
        assert_eq!(us["250"], json!(9.0));
        let ms = buckets(
            &h,
            1_000_000,
            &[2, 4, 10, 20, 50, 100, 250, 500, 750, 1000, 2000],
        );
        assert_eq!(ms["4"], json!(1.0));
        let s = stats(&h, 40_000, 3_100_000);
        assert_eq!(s["N"], json!(100));
        assert_eq!(s["min"], json!(40_000));
    }

    #[test]
    fn the_running_spread_is_the_sample_spread() {
        let v = [3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0];
        let mut s = Spread::default();
        v.iter().for_each(|x| s.add(*x));
        let (min, max, mean, dev) = s.get();
        let m = v.iter().sum::<f64>() / 8.0;
        let var = v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / 7.0;
        assert_eq!((min, max), (1.0, 9.0));
        assert!((mean - m).abs() < 1e-12 && (dev - var.sqrt()).abs() < 1e-12);
        assert_eq!(Spread::default().get(), (0.0, 0.0, 0.0, 0.0));
    }
}
