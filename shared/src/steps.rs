//! Runs made of steps: presets (CrystalDiskMark grid, ATTO sweep, steady state, ...) are
//! sequences of workloads run one after the other on the same target, recorded as one run.

use crate::sample::RunSummary;
use crate::spec::{Rate, WorkloadSpec};
use serde::{Deserialize, Serialize};

/// One workload of a sequence.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// What the step measures, e.g. `SEQ1M Q8T1 read #2`.
    pub name: String,
    pub spec: WorkloadSpec,
    /// Idle time before the step (CrystalDiskMark's pause, cache recovery), sampled as zeros.
    #[serde(default)]
    pub pause_before_ms: u64,
    /// Repeat the step as rounds until the PTS steady-state rule holds, at most this many.
    #[serde(default)]
    pub until_steady: Option<u32>,
    /// The pass (from 1) of a repeated run (`repeat`) this step belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass: Option<u32>,
    /// Search rounds (`latency-target`): after each round the next queue depth and rate
    /// follow from the p99 so far ([`crate::analysis::latency::next_round`]), each round a
    /// step of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_target_us: Option<u64>,
    /// Runs at the same time as the step before it (a job of the same fio stonewall group
    /// as the one before): such steps make one step of the run, a part each. (Not read by
    /// the dashboard.)
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[cfg_attr(target_arch = "wasm32", serde(skip))]
    pub with_previous: bool,
    /// Offered load (`load-latency`): the step runs at this share (%) of the IOPS the last
    /// step without one measured, its rate set when it starts. (Not read by the dashboard.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg(not(target_arch = "wasm32"))]
    pub rate_pct: Option<u32>,
}

/// The names of a run's steps as it runs them: steps that run `with_previous` join the
/// step before them (`reader + writer`).
pub fn run_step_names(steps: &[Step]) -> Vec<String> {
    run_step_ranges(steps, |s| s.with_previous)
        .into_iter()
        .map(|r| joined_name(steps[r].iter().map(|s| step_label(&s.name, s.pass))))
        .collect()
}

/// Where each step of a run lies in a list of its parts: a part and those after it that run
/// `with_previous` (the one grouping the plans, the progress, the memory check and the
/// names all use).
pub fn run_step_ranges<T>(
    items: &[T],
    with_previous: impl Fn(&T) -> bool,
) -> Vec<std::ops::Range<usize>> {
    let mut out: Vec<std::ops::Range<usize>> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        match out.last_mut() {
            Some(r) if with_previous(item) => r.end = i + 1,
            _ => out.push(i..i + 1),
        }
    }
    out
}

/// The name of a step whose jobs ran at once: theirs, joined (`reader + writer`).
pub fn joined_name<S: AsRef<str>>(names: impl Iterator<Item = S>) -> String {
    names
        .map(|n| n.as_ref().to_string())
        .collect::<Vec<_>>()
        .join(" + ")
}

/// A step's name with its pass, as the CLI and the dashboard list it.
pub fn step_label(name: &str, pass: Option<u32>) -> String {
    match pass {
        Some(p) => format!("{name} (pass {p})"),
        None => name.to_string(),
    }
}

/// Most passes a repeated run can have.
pub const MAX_REPEAT: u32 = 1000;
/// Most steps a repeated run can have (passes × the preset's steps): every step is kept in
/// the report and the database.
pub const MAX_REPEATED_STEPS: usize = 10_000;

/// Why `n` passes of `steps` steps are refused, if they are.
pub fn check_repeat(n: u32, steps: usize) -> Result<(), String> {
    if !(1..=MAX_REPEAT).contains(&n) {
        return Err(format!("repeat = {n}: must be 1..{MAX_REPEAT}"));
    }
    if n > 1 && (n as usize).saturating_mul(steps) > MAX_REPEATED_STEPS {
        return Err(format!(
            "repeat = {n}: {n} passes of {steps} steps exceed {MAX_REPEATED_STEPS} steps"
        ));
    }
    Ok(())
}

/// `steps` repeated `n` times as passes 1..=n (one pass: unchanged), `idle_ms` of idle
/// before every pass after the first.
pub fn repeat_steps(steps: Vec<Step>, n: u32, idle_ms: u64) -> Vec<Step> {
    if n <= 1 {
        return steps;
    }
    let mut out = Vec::with_capacity(steps.len() * n as usize);
    for pass in 1..=n {
        for (i, s) in steps.iter().enumerate() {
            let mut s = s.clone();
            s.pass = Some(pass);
            if i == 0 && pass > 1 {
                s.pause_before_ms = s.pause_before_ms.max(idle_ms);
            }
            out.push(s);
        }
    }
    out
}

/// Knobs a preset takes (CLI flags, `"options"` in the API); each preset documents which.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields, default)]
pub struct PresetOptions {
    /// Test size / span (cdm: 1 GiB; iometer-mix: 1 GiB; snia-steady: the target).
    #[serde(deserialize_with = "crate::lenient::opt_bytes")]
    #[cfg_attr(
        feature = "schema",
        schemars(schema_with = "crate::lenient::schema::opt_bytes")
    )]
    pub size: Option<u64>,
    /// Passes per test (cdm: 5).
    pub count: Option<u32>,
    /// Time per step (cdm: 5 s; iometer-mix: 10 min; atto: 3 s; orion: 5 s; rounds: 60 s).
    #[serde(deserialize_with = "crate::lenient::opt_ms")]
    #[cfg_attr(
        feature = "schema",
        schemars(schema_with = "crate::lenient::schema::opt_ms")
    )]
    pub runtime_ms: Option<u64>,
    /// The rate a `sustain` run must hold (e.g. 3200 MB/s).
    #[serde(deserialize_with = "crate::lenient::opt_rate")]
    #[cfg_attr(
        feature = "schema",
        schemars(schema_with = "crate::lenient::schema::opt_rate")
    )]
    pub rate: Option<Rate>,
    /// Parallel streams for `sustain` (each at rate / streams).
    pub streams: Option<u32>,
    /// Idle between steps (cdm: 1 s; cache-recovery: 30 s).
    #[serde(deserialize_with = "crate::lenient::opt_ms")]
    #[cfg_attr(
        feature = "schema",
        schemars(schema_with = "crate::lenient::schema::opt_ms")
    )]
    pub idle_ms: Option<u64>,
    /// The RAM buffer a `sustain` pass may rely on (default 1000 ms of data).
    #[serde(deserialize_with = "crate::lenient::opt_ms")]
    #[cfg_attr(
        feature = "schema",
        schemars(schema_with = "crate::lenient::schema::opt_ms")
    )]
    pub buffer_ms: Option<u64>,
    /// Block size for full-span, fill, sustain (default 1 MiB; fill 4 MiB).
    #[serde(deserialize_with = "crate::lenient::opt_bytes")]
    #[cfg_attr(
        feature = "schema",
        schemars(schema_with = "crate::lenient::schema::opt_bytes")
    )]
    pub bs: Option<u64>,
    /// Sample interval of every step (ms, 100..60000; default 1000). Every preset takes it.
    #[serde(deserialize_with = "crate::lenient::opt_ms")]
    #[cfg_attr(
        feature = "schema",
        schemars(schema_with = "crate::lenient::schema::opt_ms")
    )]
    pub interval_ms: Option<u64>,
    /// Verify each pure-write step (`--verify`): every preset with a write step takes it.
    pub verify: Option<bool>,
    /// The p99 latency limit of `latency-target`, in µs.
    #[serde(deserialize_with = "crate::lenient::opt_us")]
    #[cfg_attr(
        feature = "schema",
        schemars(schema_with = "crate::lenient::schema::opt_us")
    )]
    pub p99_us: Option<u64>,
    /// `files`: directories per job (default 1).
    pub dirs: Option<u32>,
    /// `files`: fsync each file after writing it.
    pub fsync: Option<bool>,
    /// `files`: the phases to run, e.g. `create,stat,delete` (default all six).
    pub phases: Option<String>,
    /// `files`: levels of directories in each job's tree (default 1: `dirs` hold the files).
    pub depth: Option<u32>,
    /// `files`: directories in each directory above the tree's last level (default 2).
    pub fanout: Option<u32>,
    /// `files`: its operations as plain system calls (`sync`, the default) or through
    /// io_uring (`uring`). (Not in the wasm build: the form does not offer it.)
    #[cfg(not(target_arch = "wasm32"))]
    pub backend: Option<crate::spec::Backend>,
    /// `flushcheck`: the witness agent's URL (its token goes in the run request's
    /// `witness_token`, never here). (Not in the wasm build, nor the next two.)
    #[cfg(not(target_arch = "wasm32"))]
    pub witness: Option<String>,
    /// `flushcheck`: writes per fdatasync (default 16).
    #[cfg(not(target_arch = "wasm32"))]
    pub flush_every: Option<u32>,
    /// `flushcheck`: each write O_DSYNC (FUA) instead of fdatasync every flush_every.
    #[cfg(not(target_arch = "wasm32"))]
    pub dsync: Option<bool>,
}

impl PresetOptions {
    /// Bounds every option can be checked against without knowing the preset or target.
    pub fn validate(&self) -> Result<(), Vec<crate::SpecError>> {
        use crate::spec::{MAX_BYTES, MAX_DURATION_MS, MAX_JOBS};
        let mut errs = Vec::new();
        for (field, v) in [
            ("runtime_ms", self.runtime_ms),
            ("idle_ms", self.idle_ms),
            ("buffer_ms", self.buffer_ms),
        ] {
            if let Some(v) = v.filter(|&v| v > MAX_DURATION_MS) {
                errs.push(crate::SpecError::new(
                    field,
                    v,
                    "must be at most 30 days (2592000000 ms)",
                ));
            }
        }
        if let Some(v) = self.p99_us.filter(|&v| v == 0 || v > 60_000_000) {
            errs.push(crate::SpecError::new("p99_us", v, "must be 1 µs..60 s"));
        }
        if let Some(v) = self.size.filter(|&v| v > MAX_BYTES) {
            errs.push(crate::SpecError::new("size", v, "must be at most 1 EiB"));
        }
        if let Some(v) = self.streams.filter(|&v| v == 0 || v > MAX_JOBS) {
            errs.push(crate::SpecError::new(
                "streams",
                v,
                format!("must be 1..{MAX_JOBS}"),
            ));
        }
        if errs.is_empty() {
            Ok(())
        } else {
            Err(errs)
        }
    }

    /// The options that are set, by the key the API and `Preset::options` use
    /// (`size`, `count`, `runtime`, `rate`, `streams`, `idle`, `buffer_ms`, `bs`, `interval`),
    /// with the value as given, for error messages.
    pub fn given(&self) -> Vec<(&'static str, String)> {
        let mut v = Vec::new();
        let mut add = |k: &'static str, x: Option<String>| {
            if let Some(x) = x {
                v.push((k, x));
            }
        };
        add("size", self.size.map(|x| x.to_string()));
        add("count", self.count.map(|x| x.to_string()));
        add("runtime", self.runtime_ms.map(|x| format!("{x} ms")));
        add("rate", self.rate.map(|x| x.to_string()));
        add("streams", self.streams.map(|x| x.to_string()));
        add("idle", self.idle_ms.map(|x| format!("{x} ms")));
        add("buffer_ms", self.buffer_ms.map(|x| x.to_string()));
        add("bs", self.bs.map(|x| x.to_string()));
        add("interval", self.interval_ms.map(|x| format!("{x} ms")));
        add("verify", self.verify.map(|x| x.to_string()));
        add("p99_us", self.p99_us.map(|x| x.to_string()));
        add("dirs", self.dirs.map(|x| x.to_string()));
        add("fsync", self.fsync.map(|x| x.to_string()));
        add("phases", self.phases.clone());
        add("depth", self.depth.map(|x| x.to_string()));
        add("fanout", self.fanout.map(|x| x.to_string()));
        #[cfg(not(target_arch = "wasm32"))]
        {
            add("backend", self.backend.map(|x| x.as_str().to_string()));
            add("witness", self.witness.clone());
            add("flush_every", self.flush_every.map(|x| x.to_string()));
            add("dsync", self.dsync.map(|x| x.to_string()));
        }
        v
    }
}

/// What one step measured. Its samples are the run's samples with this `step` index.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct StepReport {
    pub index: u32,
    pub name: String,
    pub spec: WorkloadSpec,
    pub summary: RunSummary,
    /// Where the step lies in the run's time (ns since the run started).
    pub start_ns: u64,
    pub end_ns: u64,
    pub first_seq: u64,
    pub samples: u64,
    /// The step's measured I/O path (buffers, splits, worker threads).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_path: Option<crate::IoPath>,
    /// The round (from 1) of a step repeated until steady state (`Step::until_steady`);
    /// its name is then the step's with the round appended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round: Option<u32>,
    /// The step's read-back (write steps of a `verify` run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<crate::analysis::verify::Verify>,
    /// The pass of a repeated run (`Step::pass`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass: Option<u32>,
    /// The step's own latency histogram (the run's is all steps together): fio's per-job
    /// percentiles and latency buckets come from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histogram: Option<crate::HistogramDump>,
    /// A files phase's first-done and last-done rates (the headline gives both where they
    /// differ by more than 10 %).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files_done: Option<crate::files::Done>,
}

/// CrystalDiskMark's name for a test: `SEQ1M Q8T1`, `RND4K Q32T1`.
pub fn test_label(spec: &WorkloadSpec) -> String {
    let kind = if spec.rw.is_random() { "RND" } else { "SEQ" };
    format!(
        "{kind}{} Q{}T{}",
        crate::units::size_short(spec.bs),
        spec.iodepth,
        spec.jobs
    )
}

/// A measured test: its workload and summary (a run, or a step of one).
pub type Measured<'a> = (&'a WorkloadSpec, &'a RunSummary);

/// One test of a CrystalDiskMark-style grid: best and mean MB/s over its passes, best IOPS.
#[derive(Clone, Debug, PartialEq)]
pub struct GridRow {
    pub label: String,
    pub read_best: Option<f64>,
    pub read_mean: Option<f64>,
    pub write_best: Option<f64>,
    pub write_mean: Option<f64>,
    pub read_iops: Option<f64>,
    pub write_iops: Option<f64>,
    pub passes: usize,
}

/// The grid of several tests (a `cdm` run's steps, or runs picked in the history): one row
/// per test label, in CrystalDiskMark's order (sequential first, larger blocks and deeper
/// queues first). `None` unless two or more tests. Tests that did not run (no time) are left
/// out; a pass that ran and completed nothing counts as 0 MB/s.
pub fn grid(items: &[Measured<'_>]) -> Option<Vec<GridRow>> {
    struct Acc<'a> {
        spec: &'a WorkloadSpec,
        label: String,
        read: Vec<(f64, f64)>,
        write: Vec<(f64, f64)>,
    }
    let mut acc: Vec<Acc<'_>> = Vec::new();
    // A replay is no synthetic test: its block size is only its largest I/O; a paced one
    // (an offered load) measures latency at a rate, not the test's speed.
    for (spec, sum) in items
        .iter()
        .filter(|(p, s)| s.duration_ns > 0 && p.replay.is_none() && p.rate.is_none())
    {
        let label = test_label(spec);
        let i = match acc.iter().position(|a| a.label == label) {
            Some(i) => i,
            None => {
                acc.push(Acc {
                    spec,
                    label,
                    read: Vec::new(),
                    write: Vec::new(),
                });
                acc.len() - 1
            }
        };
        // A direction counts where the test does it, also when nothing of it completed: a
        // write pass that stalled for its whole time measured 0 MB/s, and the mean says so
        // (CI showed a 400 ms SEQ1M write pass with no completion, and a mean of the other
        // pass alone, twice the stored figure).
        let read_pct = spec.rw.read_pct(spec.read_pct);
        if read_pct > 0 || sum.read.ios > 0 {
            acc[i].read.push((sum.read.mb_s, sum.read.iops));
        }
        if read_pct < 100 || sum.write.ios > 0 {
            acc[i].write.push((sum.write.mb_s, sum.write.iops));
        }
    }
    if acc.len() < 2 {
        return None;
    }
    acc.sort_by_key(|a| {
        let s = a.spec;
        (
            s.rw.is_random(),
            std::cmp::Reverse(s.bs),
            std::cmp::Reverse(s.iodepth),
            std::cmp::Reverse(s.jobs),
        )
    });
    let best = |v: &[(f64, f64)], f: fn(&(f64, f64)) -> f64| v.iter().map(f).reduce(f64::max);
    let mean = |v: &[(f64, f64)]| {
        (!v.is_empty()).then(|| v.iter().map(|x| x.0).sum::<f64>() / v.len() as f64)
    };
    Some(
        acc.into_iter()
            .map(|a| GridRow {
                read_best: best(&a.read, |x| x.0),
                read_mean: mean(&a.read),
                write_best: best(&a.write, |x| x.0),
                write_mean: mean(&a.write),
                read_iops: best(&a.read, |x| x.1),
                write_iops: best(&a.write, |x| x.1),
                passes: a.read.len().max(a.write.len()),
                label: a.label,
            })
            .collect(),
    )
}

/// The grid of a run's steps.
pub fn grid_from_steps(steps: &[StepReport]) -> Option<Vec<GridRow>> {
    grid(
        &steps
            .iter()
            .map(|s| (&s.spec, &s.summary))
            .collect::<Vec<_>>(),
    )
}

/// One block size of a sweep: the best MB/s per direction and the best IOPS at that size.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepPoint {
    pub bs: u64,
    pub read_mb_s: f64,
    pub write_mb_s: f64,
    pub iops: f64,
}

/// A block-size sweep among several tests (an ATTO or ORION run's steps, or picked runs):
/// the tests of one order (sequential or random), depth and job count with the most distinct
/// block sizes, at least two. Block sizes ascending.
pub fn sweep(items: &[Measured<'_>]) -> Option<Vec<SweepPoint>> {
    let done: Vec<&Measured<'_>> = items
        .iter()
        .filter(|(p, s)| s.duration_ns > 0 && p.replay.is_none())
        .collect();
    let key = |s: &WorkloadSpec| (s.rw.is_random(), s.iodepth, s.jobs);
    let mut best: Option<Vec<SweepPoint>> = None;
    for (spec, _) in &done {
        let mut pts: Vec<SweepPoint> = Vec::new();
        for (t, sum) in done.iter().filter(|(t, _)| key(t) == key(spec)) {
            let i = match pts.iter().position(|p| p.bs == t.bs) {
                Some(i) => i,
                None => {
                    pts.push(SweepPoint {
                        bs: t.bs,
                        read_mb_s: 0.0,
                        write_mb_s: 0.0,
                        iops: 0.0,
                    });
                    pts.len() - 1
                }
            };
            let p = &mut pts[i];
            p.read_mb_s = p.read_mb_s.max(sum.read.mb_s);
            p.write_mb_s = p.write_mb_s.max(sum.write.mb_s);
            p.iops = p.iops.max(sum.read.iops + sum.write.iops);
        }
        if pts.len() >= 2 && best.as_ref().is_none_or(|b| pts.len() > b.len()) {
            pts.sort_by_key(|p| p.bs);
            best = Some(pts);
        }
    }
    best
}

/// The sweep among a run's steps.
pub fn sweep_from_steps(steps: &[StepReport]) -> Option<Vec<SweepPoint>> {
    sweep(
        &steps
            .iter()
            .map(|s| (&s.spec, &s.summary))
            .collect::<Vec<_>>(),
    )
}

/// One step of a load sweep (`load-latency`): the load it achieved and the latency there.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadPoint {
    pub iops: f64,
    pub p50_ns: u64,
    pub p99_ns: u64,
}

/// Latency against achieved load, one curve per queue depth (the hockey stick): each
/// step's IOPS, p50 and p99 over both directions, the steps of one depth in order of load.
/// Depths ascending; steps that moved nothing are left out.
pub fn load_curves(steps: &[StepReport]) -> Vec<(u32, Vec<LoadPoint>)> {
    let mut curves: Vec<(u32, Vec<LoadPoint>)> = Vec::new();
    for s in steps {
        let (r, w) = (&s.summary.read, &s.summary.write);
        let iops = r.iops + w.iops;
        if iops <= 0.0 {
            continue;
        }
        let p = LoadPoint {
            iops,
            p50_ns: r.lat.p50_ns.max(w.lat.p50_ns),
            p99_ns: r.lat.p99_ns.max(w.lat.p99_ns),
        };
        match curves.iter_mut().find(|(d, _)| *d == s.spec.iodepth) {
            Some((_, c)) => c.push(p),
            None => curves.push((s.spec.iodepth, vec![p])),
        }
    }
    curves.sort_by_key(|(d, _)| *d);
    for (_, c) in &mut curves {
        c.sort_by(|a, b| a.iops.total_cmp(&b.iops));
    }
    curves
}

#[cfg(test)]
mod repeat_tests {
    use super::*;

    #[test]
    fn repeats_are_bounded_by_passes_and_by_steps() {
        assert!(check_repeat(1000, 1).is_ok());
        assert!(check_repeat(0, 1).is_err_and(|e| e.starts_with("repeat = 0")));
        // cdm has 40 steps: 250 passes fit, 251 do not.
        assert!(check_repeat(250, 40).is_ok());
        assert!(check_repeat(251, 40).is_err_and(|e| e.contains("exceed 10000 steps")));
    }
}

#[cfg(test)]
mod grid_tests {
    use super::*;
    use crate::sample::RunSummary;
    use crate::spec::RwMode;

    fn pass(rw: RwMode, mb_s: f64) -> (WorkloadSpec, RunSummary) {
        let spec = WorkloadSpec {
            rw,
            bs: 1 << 20,
            iodepth: 8,
            ..WorkloadSpec::default()
        };
        let mut sum = RunSummary {
            duration_ns: 400_000_000,
            ..RunSummary::default()
        };
        let dir = if rw == RwMode::Read {
            &mut sum.read
        } else {
            &mut sum.write
        };
        dir.mb_s = mb_s;
        dir.ios = (mb_s * 0.4) as u64;
        (spec, sum)
    }

    #[test]
    fn a_pass_that_completed_nothing_is_zero_in_the_mean() {
        let passes = [
            pass(RwMode::Read, 100.0),
            pass(RwMode::Write, 38.94),
            pass(RwMode::Read, 120.0),
            pass(RwMode::Write, 0.0),
            pass(RwMode::RandRead, 50.0),
        ];
        let items: Vec<Measured<'_>> = passes.iter().map(|(p, s)| (p, s)).collect();
        let rows = grid(&items).expect("a grid");
        let seq = &rows[0];
        assert_eq!(rows.len(), 2);
        assert_eq!(seq.write_best, Some(38.94));
        assert_eq!(seq.write_mean, Some(19.47));
        assert_eq!(seq.read_mean, Some(110.0));
        assert_eq!(seq.passes, 2);
    }
}

#[cfg(test)]
mod load_tests {
    use super::*;

    fn step(depth: u32, iops: f64, p50: u64, p99: u64) -> StepReport {
        let mut s = StepReport::default();
        s.spec.iodepth = depth;
        s.summary.read.iops = iops;
        s.summary.read.lat.p50_ns = p50;
        s.summary.read.lat.p99_ns = p99;
        s
    }

    #[test]
    fn a_curve_per_depth_in_order_of_load() {
        // load-latency's order: each depth's maximum first, then its loads.
        let steps = [
            step(1, 1000.0, 90, 200),
            step(1, 10.0, 50, 80),
            step(1, 500.0, 60, 120),
            step(32, 9000.0, 900, 4000),
            step(32, 90.0, 70, 150),
            step(32, 0.0, 0, 0),
        ];
        let c = load_curves(&steps);
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].0, 1);
        let iops: Vec<f64> = c[0].1.iter().map(|p| p.iops).collect();
        assert_eq!(iops, [10.0, 500.0, 1000.0]);
        assert_eq!((c[0].1[2].p50_ns, c[0].1[2].p99_ns), (90, 200));
        // A step that moved nothing has no load to stand at.
        assert_eq!(c[1].0, 32);
        assert_eq!(c[1].1.len(), 2);
        assert_eq!(c[1].1[1].p99_ns, 4000);
    }
}
