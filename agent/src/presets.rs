//! Named workloads: single tests (`quick`, `seq1m-q8-read`, ...) and the sequences the
//! reviews run by hand (CrystalDiskMark grid, ATTO sweep, ORION matrix, HD Tune full span,
//! Iometer mix, SNIA steady state, fill, sustained rate, compressibility, cache recovery).
//! A preset becomes [`Step`]s for a given target size; the CLI (`--preset`), the API
//! (`"preset"`, `"options"`) and the dashboard's picker all go through [`build`].

use shared::api::Preset;
use shared::preset::PresetKind;
use shared::units::size_short;
use shared::{DataPattern, PresetOptions, Rate, RwMode, Step, WorkloadSpec};

const GIB: u64 = 1 << 30;
const MIB: u64 = 1 << 20;

/// What the analyses of a preset run need to know besides the samples.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AnalysisOptions {
    /// The rate a producer needs (bytes per second): `sustain`, or a write step with a rate.
    pub required_rate: Option<f64>,
    pub buffer_ms: u64,
    /// Window of the first/last comparison.
    pub first_last_window_s: f64,
    /// The run is write, idle, write: judge how much cache the idle gave back.
    pub cache_recovery: bool,
    /// `fakecap`: the span written with unique blocks, whose read-back gives the capacity.
    pub fakecap_span: Option<u64>,
    /// `latency-target`: the p99 limit its rounds are judged against (µs).
    pub p99_target_us: Option<u64>,
}

impl AnalysisOptions {
    /// For a custom workload: a write with a byte-rate cap is a required rate.
    pub fn for_spec(spec: &WorkloadSpec) -> Self {
        AnalysisOptions {
            required_rate: match spec.rate {
                Some(Rate::BytesPerSec(b)) if spec.rw.read_pct(spec.read_pct) < 100 => {
                    Some(b as f64)
                }
                _ => None,
            },
            buffer_ms: 1000,
            first_last_window_s: 60.0,
            cache_recovery: false,
            fakecap_span: None,
            p99_target_us: None,
        }
    }
}

/// A preset made concrete for one target.
#[derive(Clone, Debug, PartialEq)]
pub struct Built {
    pub steps: Vec<Step>,
    pub analysis: AnalysisOptions,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum PresetError {
    #[error("unknown preset '{0}': expected one of {list}", list = names().join(", "))]
    Unknown(String),
    #[error("preset {preset}: {message}")]
    Option {
        preset: &'static str,
        message: String,
    },
}

/// One preset: what the API and the picker list, the options it takes besides `interval`
/// (any other is refused by name), and how its steps are made for a target — a table like
/// fio's engine ops, so a name is defined in exactly one place.
struct Def {
    kind: PresetKind,
    description: &'static str,
    takes: &'static [&'static str],
    build: fn(&Ctx) -> Result<Vec<Step>, PresetError>,
    /// What the analyses need beyond the defaults (`None`: nothing).
    tune: Option<fn(&Ctx, &mut AnalysisOptions)>,
}

/// What a preset's steps are made from.
struct Ctx<'a> {
    def: &'static Def,
    o: &'a PresetOptions,
    target_size: u64,
    /// The target's O_DIRECT alignment (at least 512 bytes).
    lbs: u64,
}

impl Ctx<'_> {
    /// `size` within the target, whole MiB (or the alignment, when larger).
    fn fit(&self, size: u64) -> u64 {
        align_down(size.min(self.target_size), MIB.max(self.lbs))
    }

    fn size_or(&self, default: u64) -> u64 {
        self.fit(self.o.size.unwrap_or(default))
    }

    fn runtime_or(&self, default_ms: u64) -> u64 {
        self.o.runtime_ms.unwrap_or(default_ms)
    }

    fn idle_or(&self, default_ms: u64) -> u64 {
        self.o.idle_ms.unwrap_or(default_ms)
    }

    fn bad(&self, message: String) -> PresetError {
        PresetError::Option {
            preset: self.def.kind.name(),
            message,
        }
    }

    /// One timed workload named by its test (the single tests): the description without its
    /// default duration ("SEQ1M Q8T1 read, 10 s" -> "SEQ1M Q8T1 read"), which `--runtime`
    /// changes; the step's spec holds the time it ran.
    fn single(&self, rw: RwMode, bs: u64, qd: u32) -> Result<Vec<Step>, PresetError> {
        let test = self.def.description.split(", ").next().unwrap_or_default();
        Ok(vec![step(
            test,
            timed(spec(rw, bs, qd), self.runtime_or(10_000)),
        )])
    }
}

const GRID: &[&str] = &["size", "count", "runtime", "idle"];
const SIZED: &[&str] = &["size", "runtime"];
const RUNTIME: &[&str] = &["runtime"];
const APPS: &[&str] = &["size", "count", "idle"];

#[rustfmt::skip]
const DEFS: &[Def] = &[
    Def { kind: PresetKind::Quick, description: "sequential 1 MiB writes, QD8, 10 s: cache and sustained write rate at a glance",
          takes: RUNTIME, build: |c| c.single(RwMode::Write, MIB, 8), tune: None },
    Def { kind: PresetKind::Cdm, description: "CrystalDiskMark grid: SEQ1M Q8T1, SEQ1M Q1T1, RND4K Q32T1, RND4K Q1T1, read and write; 1 GiB, 5 passes of 5 s",
          takes: GRID, build: |c| cdm(c, CDM), tune: None },
    Def { kind: PresetKind::CdmPeak, description: "CrystalDiskMark peak profile: SEQ1M Q8T1, SEQ128K Q32T1, RND4K Q32T16, RND4K Q1T1",
          takes: GRID, build: |c| cdm(c, CDM_PEAK), tune: None },
    Def { kind: PresetKind::Atto, description: "ATTO-style sequential read/write sweep, 512 B..64 MiB at QD4 over 256 MiB, 3 s each",
          takes: SIZED, build: atto, tune: None },
    Def { kind: PresetKind::OrionMatrix, description: "ORION-style matrix: block size 4K/8K/16K/64K/1M × QD 1/4/16/32, random read and write, 5 s each",
          takes: SIZED, build: orion_matrix, tune: None },
    Def { kind: PresetKind::FullSpan, description: "HD Tune-style: sequential write then read over the whole target (or size), 1 MiB blocks, speed by position",
          takes: &["bs", "size"], build: full_span, tune: None },
    Def { kind: PresetKind::IometerMix, description: "Iometer-style 4K random 50/50 read/write, QD32, 1 GiB span, 10 min: first vs last minute",
          takes: SIZED, build: iometer_mix,
          // First vs last tenth of the run, at most a minute each.
          tune: Some(|c, a| a.first_last_window_s = (c.runtime_or(IOMETER_MS) as f64 / 1e3 / 10.0).min(60.0)) },
    Def { kind: PresetKind::SniaSteady, description: "SNIA PTS-style: precondition with 128K sequential writes over 2× the span, then 1-minute rounds of 4K random write QD32 until steady state (max 25)",
          takes: &["size", "runtime", "count"], build: snia_steady, tune: None },
    Def { kind: PresetKind::Fill, description: "write 95 % of the target (or size) with 4 MiB writes: rate, temperature and completion gaps over the fill",
          takes: &["bs", "size"], build: fill, tune: None },
    Def { kind: PresetKind::Sustain, description: "constant-rate producer at --rate (e.g. 3200MB) over the whole span or --runtime: does the target keep up?",
          takes: &["rate", "streams", "runtime", "buffer_ms", "bs", "size"], build: sustain, tune: None },
    Def { kind: PresetKind::CompressProbe, description: "the same sequential write with random, zero and 50 % compressible data, 10 s each over 1 GiB",
          takes: &["size", "runtime", "idle"], build: compress_probe, tune: None },
    Def { kind: PresetKind::CacheRecovery, description: "write past the cache, idle, write again: does the cache come back? (size: bytes of each write)",
          takes: &["size", "idle"], build: cache_recovery, tune: Some(|_, a| a.cache_recovery = true) },
    Def { kind: PresetKind::LatencyTarget, description: "the highest 4K random read IOPS whose p99 stays under p99 (default 1 ms): queue depth doubles from 1, then the rate steps down at the first depth that breaks the limit; 5 s per round",
          takes: &["p99_us", "runtime", "size", "bs"], build: latency_target, tune: Some(|c, a| a.p99_target_us = Some(p99_limit(c))) },
    Def { kind: PresetKind::FillLevel, description: "the same 4K random read and write QD32 at 0, 25, 50, 75 and 90 % of the target (or size) filled with 4 MiB writes between them: speed against fill level (reads of the filled part, writes to the free part)",
          takes: &["size", "runtime"], build: fill_level, tune: None },
    Def { kind: PresetKind::Fakecap, description: "f3-style fake-capacity check: unique blocks written over the whole device (or a file over the free space, or size) and read back: the real usable capacity, first and last good offsets",
          takes: &["bs", "size"], build: fakecap, tune: Some(|c, a| a.fakecap_span = Some(fakecap_span(c))) },
    Def { kind: PresetKind::ErrorScan, description: "HD Tune-style error scan: sequential reads over the whole target (or size) that go on past I/O errors and slow I/Os, mapped by position; verify: write and verify first (destroys the data)",
          takes: &["bs", "size"], build: error_scan, tune: None },
    Def { kind: PresetKind::Apps, description: "PCMark-style application traces replayed as recorded (idle over 10 ms compressed): app-build, app-database, app-files; storage bandwidth per application and overall (geometric mean); count: passes",
          takes: APPS, build: |c| apps(c, &["app-build", "app-database", "app-files"]), tune: None },
    Def { kind: PresetKind::AppBuild, description: "a recorded cargo build of the agent (1.4 GiB written, 84 MiB read, 88 s recorded, 7 s replayed), replayed as recorded: storage bandwidth",
          takes: APPS, build: |c| apps(c, &["app-build"]), tune: None },
    Def { kind: PresetKind::AppDatabase, description: "a recorded SQLite workload (WAL inserts, cold range queries, updates; 650 flushes), replayed as recorded: storage bandwidth",
          takes: APPS, build: |c| apps(c, &["app-database"]), tune: None },
    Def { kind: PresetKind::AppFiles, description: "a recorded untar, cold read-back and delete of a 150 MB source tree with fstrim, replayed as recorded: storage bandwidth",
          takes: APPS, build: |c| apps(c, &["app-files"]), tune: None },
    Def { kind: PresetKind::Seq1mQ8Read, description: "SEQ1M Q8T1 read, 10 s",
          takes: RUNTIME, build: |c| c.single(RwMode::Read, MIB, 8), tune: None },
    Def { kind: PresetKind::Seq1mQ8Write, description: "SEQ1M Q8T1 write, 10 s",
          takes: RUNTIME, build: |c| c.single(RwMode::Write, MIB, 8), tune: None },
    Def { kind: PresetKind::Rnd4kQ32Read, description: "RND4K Q32T1 read, 10 s",
          takes: RUNTIME, build: |c| c.single(RwMode::RandRead, 4096, 32), tune: None },
    Def { kind: PresetKind::Rnd4kQ32Write, description: "RND4K Q32T1 write, 10 s",
          takes: RUNTIME, build: |c| c.single(RwMode::RandWrite, 4096, 32), tune: None },
    Def { kind: PresetKind::Rnd4kQ1Read, description: "RND4K Q1T1 read, 10 s",
          takes: RUNTIME, build: |c| c.single(RwMode::RandRead, 4096, 1), tune: None },
    Def { kind: PresetKind::Rnd4kQ1Write, description: "RND4K Q1T1 write, 10 s",
          takes: RUNTIME, build: |c| c.single(RwMode::RandWrite, 4096, 1), tune: None },
    Def { kind: PresetKind::Files, description: "small files and metadata, as elbencho and mdtest measure them: in a work directory of its own, mkdir, create (write), stat, read, delete and rmdir per second, each a step with its latency; streams: jobs, dirs per job, depth and fanout for a tree, count: files per directory of its last level (1000), bs: file size (4 KiB), fsync-each, phases, backend sync (plain system calls, the default) or uring (io_uring's MKDIRAT, STATX, UNLINKAT, OPENAT, READ/WRITE, CLOSE)",
          takes: &["count", "streams", "bs", "dirs", "fsync", "phases", "depth", "fanout", "backend"], build: files, tune: None },
    Def { kind: PresetKind::Probe, description: "latency when nobody loads the drive, as ioping measures it: one 4 KiB (bs) O_DIRECT random read every second (idle: the time between requests) in a 1 MiB working set (size), the first shown apart and not counted; count requests, or for runtime, or until stopped; a sample every 20 requests (its p50, p99 and max the band on the latency chart)",
          takes: &["size", "count", "runtime", "idle", "bs"], build: probe, tune: None },
    Def { kind: PresetKind::LoadLatency, description: "latency against offered load, the hockey stick: 4 KiB (bs) random reads in 1 GiB (size), the maximum at QD 1 and at QD 32 (count: the deeper one), then 1 % to 100 % of each maximum with Poisson arrivals, p50 and p99 against IOPS; 2 s (runtime) per step",
          takes: &["size", "count", "runtime", "bs"], build: load_latency, tune: None },
    Def { kind: PresetKind::Flushcheck, description: "does the drive keep what it acknowledged (diskchecker.pl's check): verified 4 KiB (bs) blocks one at a time at random offsets over the target (size), fdatasync (fsync: fsync) every 16 writes (flush_every) or each write O_DSYNC (dsync), each flushed write recorded on a witness agent (witness: its URL; its token as the request's witness_token) before the next; count writes, or for runtime, or until the power goes. Then cut the power, restart, and verify (Targets: Verify after power cut)",
          takes: &["size", "count", "runtime", "bs", "witness", "flush_every", "fsync", "dsync"], build: flushcheck, tune: None },
];

fn find(name: &str) -> Option<&'static Def> {
    let kind = PresetKind::from_name(name)?;
    DEFS.iter().find(|d| d.kind == kind)
}

pub fn names() -> Vec<&'static str> {
    DEFS.iter().map(|d| d.kind.name()).collect()
}

/// The keys of the options preset `name` takes, then `verify` when it has a write step and
/// `interval` last (an unknown name takes only `interval`).
pub fn options_of(name: &str) -> Vec<String> {
    let def = find(name);
    let writes = def.is_some_and(|d| {
        // Asked to verify, as a preset whose write step only exists then would be.
        let o = PresetOptions {
            verify: Some(true),
            ..PresetOptions::default()
        };
        let c = Ctx {
            def: d,
            o: &o,
            target_size: GIB,
            lbs: 512,
        };
        (d.build)(&c).is_ok_and(|steps| {
            steps
                .iter()
                .any(|s| s.spec.rw.read_pct(s.spec.read_pct) == 0)
        })
    });
    def.map_or(&[][..], |d| d.takes)
        .iter()
        .copied()
        .chain(writes.then_some("verify"))
        .chain(std::iter::once("interval"))
        .map(str::to_string)
        .collect()
}

fn spec(rw: RwMode, bs: u64, iodepth: u32) -> WorkloadSpec {
    WorkloadSpec {
        rw,
        bs,
        iodepth,
        ..WorkloadSpec::default()
    }
}

fn step(name: impl Into<String>, spec: WorkloadSpec) -> Step {
    Step {
        name: name.into(),
        spec,
        pause_before_ms: 0,
        until_steady: None,
        pass: None,
        p99_target_us: None,
        rate_pct: None,
        with_previous: false,
    }
}

fn timed(mut s: WorkloadSpec, ms: u64) -> WorkloadSpec {
    s.runtime_ms = Some(ms);
    s
}

fn spanned(mut s: WorkloadSpec, size: u64) -> WorkloadSpec {
    s.size = Some(size);
    s
}

/// Rounds `v` down to a multiple of `to` (at least one `to`).
fn align_down(v: u64, to: u64) -> u64 {
    (v / to).max(1) * to
}

/// The steps of preset `name` on a target of `target_size` bytes whose O_DIRECT alignment
/// is `lbs`.
pub fn build(
    name: &str,
    o: &PresetOptions,
    target_size: u64,
    lbs: u32,
) -> Result<Built, PresetError> {
    let def = find(name).ok_or_else(|| PresetError::Unknown(name.to_string()))?;
    let c = Ctx {
        def,
        o,
        target_size,
        lbs: u64::from(lbs.max(512)),
    };
    if let Err(errs) = o.validate() {
        let list: Vec<String> = errs.iter().map(ToString::to_string).collect();
        return Err(c.bad(list.join("; ")));
    }
    let unused: Vec<String> = o
        .given()
        .into_iter()
        .filter(|(k, _)| !matches!(*k, "interval" | "verify") && !def.takes.contains(k))
        .map(|(k, v)| format!("{k} = {v}"))
        .collect();
    if !unused.is_empty() {
        return Err(c.bad(format!(
            "does not use {} (it takes: {})",
            unused.join(", "),
            options_of(def.kind.name()).join(", ")
        )));
    }
    let mut steps = (def.build)(&c)?;
    let mut analysis = AnalysisOptions {
        required_rate: None,
        buffer_ms: o.buffer_ms.unwrap_or(1000),
        first_last_window_s: 60.0,
        cache_recovery: false,
        fakecap_span: None,
        p99_target_us: None,
    };
    if let Some(tune) = def.tune {
        tune(&c, &mut analysis);
    }
    // A producer's rate (sustain, or any first step with a byte rate) is the one to hold.
    if let Some(Rate::BytesPerSec(b)) = steps.first().and_then(|s| s.spec.rate) {
        analysis.required_rate = Some(b as f64);
    }
    // The files workload checks what it wrote in its own read phase (`FilesSpec::verify`).
    let files = steps.iter().any(|s| s.spec.files.is_some());
    if o.verify == Some(true) && !files {
        let mut any = false;
        for s in steps
            .iter_mut()
            .filter(|s| s.spec.rw.read_pct(s.spec.read_pct) == 0)
        {
            s.spec.verify = true;
            any = true;
        }
        if !any {
            return Err(c.bad(
                "verify = true: it has no write step to verify (its steps read or mix reads and writes)"
                    .into(),
            ));
        }
    }
    if let Some(ms) = o.interval_ms {
        for s in &mut steps {
            s.spec.interval_ms = ms;
        }
    }
    Ok(Built { steps, analysis })
}

/// A CrystalDiskMark test: label, random, block size, queue depth, threads.
type CdmTest = (&'static str, bool, u64, u32, u32);

const CDM: &[CdmTest] = &[
    ("SEQ1M Q8T1", false, MIB, 8, 1),
    ("SEQ1M Q1T1", false, MIB, 1, 1),
    ("RND4K Q32T1", true, 4096, 32, 1),
    ("RND4K Q1T1", true, 4096, 1, 1),
];

const CDM_PEAK: &[CdmTest] = &[
    ("SEQ1M Q8T1", false, MIB, 8, 1),
    ("SEQ128K Q32T1", false, 128 << 10, 32, 1),
    ("RND4K Q32T16", true, 4096, 32, 16),
    ("RND4K Q1T1", true, 4096, 1, 1),
];

/// Each test read then written, `count` passes each, paused between (as CrystalDiskMark).
fn cdm(c: &Ctx, tests: &[CdmTest]) -> Result<Vec<Step>, PresetError> {
    let size = c.size_or(GIB);
    let count = c.o.count.unwrap_or(5);
    if count == 0 || count > 100 {
        return Err(c.bad(format!("count = {count}: must be 1..100")));
    }
    let runtime = c.runtime_or(5_000);
    let mut steps = Vec::new();
    for &(label, random, bs, qd, jobs) in tests {
        let (read, write) = if random {
            (RwMode::RandRead, RwMode::RandWrite)
        } else {
            (RwMode::Read, RwMode::Write)
        };
        for (dir, rw) in [("read", read), ("write", write)] {
            for pass in 1..=count {
                let mut s = timed(spanned(spec(rw, bs, qd), size), runtime);
                s.jobs = jobs;
                let mut st = step(format!("{label} {dir} #{pass}"), s);
                st.pause_before_ms = if steps.is_empty() { 0 } else { c.idle_or(1000) };
                steps.push(st);
            }
        }
    }
    Ok(steps)
}

/// Sequential writes then reads, 512 B..64 MiB doubling (sizes below the alignment or
/// above the span left out).
fn atto(c: &Ctx) -> Result<Vec<Step>, PresetError> {
    let size = c.size_or(256 * MIB);
    let runtime = c.runtime_or(3_000);
    let mut steps = Vec::new();
    for (dir, rw) in [("write", RwMode::Write), ("read", RwMode::Read)] {
        let sizes =
            std::iter::successors(Some(512u64), |bs| Some(bs * 2)).take_while(|bs| *bs <= 64 * MIB);
        for bs in sizes.filter(|bs| *bs >= c.lbs && *bs <= size) {
            steps.push(step(
                format!("{} {dir}", size_short(bs)),
                timed(spanned(spec(rw, bs, 4), size), runtime),
            ));
        }
    }
    Ok(steps)
}

fn orion_matrix(c: &Ctx) -> Result<Vec<Step>, PresetError> {
    let runtime = c.runtime_or(5_000);
    let size = c.size_or(GIB);
    let mut steps = Vec::new();
    for (dir, rw) in [("read", RwMode::RandRead), ("write", RwMode::RandWrite)] {
        for bs in [4096, 8192, 16384, 65536, MIB]
            .into_iter()
            .filter(|bs| *bs >= c.lbs)
        {
            for qd in [1, 4, 16, 32] {
                steps.push(step(
                    format!("{} QD{qd} rand{dir}", size_short(bs)),
                    timed(spanned(spec(rw, bs, qd), size), runtime),
                ));
            }
        }
    }
    Ok(steps)
}

fn full_span(c: &Ctx) -> Result<Vec<Step>, PresetError> {
    let bs = c.o.bs.unwrap_or(MIB);
    let span = |s: WorkloadSpec| match c.o.size {
        Some(size) => spanned(s, c.fit(size)),
        None => s,
    };
    Ok(vec![
        step(
            "sequential write, whole span",
            span(spec(RwMode::Write, bs, 8)),
        ),
        step(
            "sequential read, whole span",
            span(spec(RwMode::Read, bs, 8)),
        ),
    ])
}

/// The p99 limit of `latency-target` (µs).
fn p99_limit(c: &Ctx) -> u64 {
    c.o.p99_us.unwrap_or(1000)
}

/// One search step: its rounds follow from the p99 each one measured (`measure::steps`).
fn latency_target(c: &Ctx) -> Result<Vec<Step>, PresetError> {
    let bs = c.o.bs.unwrap_or(4096);
    let s = timed(
        spanned(spec(RwMode::RandRead, bs, 1), c.size_or(GIB)),
        c.runtime_or(5_000),
    );
    let mut st = step(shared::analysis::latency::Round::name(1, None), s);
    st.p99_target_us = Some(p99_limit(c));
    Ok(vec![st])
}

/// The fill levels of `fill-level`, percent of the span.
const FILL_LEVELS: [u64; 5] = [0, 25, 50, 75, 90];

/// Fill, test, fill further: before each level the span up to it is written with 4 MiB
/// blocks; then 4K random reads over the filled part (none at 0 %: there is nothing to
/// read, and reading a new file's holes would lay the whole of it out first) and 4K random
/// writes over the free part.
fn fill_level(c: &Ctx) -> Result<Vec<Step>, PresetError> {
    let unit = 4 * MIB;
    let span = c.size_or(c.target_size);
    if span < 20 * unit {
        return Err(c.bad(format!(
            "size = {span}: fill levels need at least 80 MiB (20 fill writes of 4 MiB)"
        )));
    }
    let runtime = c.runtime_or(5_000);
    let mut steps = Vec::new();
    let mut filled = 0;
    for pct in FILL_LEVELS {
        let to = span / 100 * pct / unit * unit;
        if to > filled {
            let mut f = spanned(spec(RwMode::Write, unit, 4), to - filled);
            f.offset = filled;
            steps.push(step(format!("fill to {pct} %"), f));
            filled = to;
        }
        let name = |dir| shared::analysis::fill::step_name(pct as u32, dir);
        if filled > 0 {
            let r = timed(spanned(spec(RwMode::RandRead, 4096, 32), filled), runtime);
            steps.push(step(name("read"), r));
        }
        let mut w = timed(
            spanned(spec(RwMode::RandWrite, 4096, 32), span - filled),
            runtime,
        );
        w.offset = filled;
        steps.push(step(name("write"), w));
    }
    Ok(steps)
}

/// The span `fakecap` writes: the target (a missing file is created over the free space,
/// [`create_size`]), or `size`.
fn fakecap_span(c: &Ctx) -> u64 {
    c.fit(c.o.size.unwrap_or(c.target_size))
}

/// One sequential pass of verified writes: every block carries its own offset, so a drive
/// that aliases addresses or drops what lies past its real capacity shows where.
fn fakecap(c: &Ctx) -> Result<Vec<Step>, PresetError> {
    if c.o.verify == Some(false) {
        return Err(c.bad("verify = false: the check is the read-back".into()));
    }
    let bs = c.o.bs.unwrap_or(MIB);
    let mut s = spanned(spec(RwMode::Write, bs, 4), fakecap_span(c));
    s.verify = true;
    Ok(vec![step("unique blocks written over the span", s)])
}

/// A read pass over the span that maps every I/O and goes on past failures; with `verify`
/// a verified write pass first (the universal option then checks it).
fn error_scan(c: &Ctx) -> Result<Vec<Step>, PresetError> {
    let bs = c.o.bs.unwrap_or(MIB);
    let span = c.fit(c.o.size.unwrap_or(c.target_size));
    let scan = |rw| {
        let mut s = spanned(spec(rw, bs, 4), span);
        s.scan = true;
        s
    };
    let mut steps = Vec::new();
    if c.o.verify == Some(true) {
        steps.push(step("write scan over the span", scan(RwMode::Write)));
    }
    steps.push(step("read scan over the span", scan(RwMode::Read)));
    Ok(steps)
}

/// The span application traces are replayed over when no size is given: their recordings
/// cover a 4 GiB filesystem (offsets beyond a smaller span wrap into it).
const APP_SPAN: u64 = 4 << 30;

/// Application traces replayed as recorded, `count` passes of each, `idle` between steps.
fn apps(c: &Ctx, traces: &[&str]) -> Result<Vec<Step>, PresetError> {
    let span = c.fit(c.o.size.unwrap_or(c.target_size.min(APP_SPAN)));
    let passes = c.o.count.unwrap_or(1);
    let mut steps = Vec::new();
    for pass in 1..=passes {
        for t in traces {
            let mut s = spanned(WorkloadSpec::default(), span);
            s.replay = Some(shared::replay::ReplaySpec::new(t));
            let name = if passes > 1 {
                format!("{t} #{pass}")
            } else {
                t.to_string()
            };
            let mut st = step(name, s);
            if !steps.is_empty() {
                st.pause_before_ms = c.o.idle_ms.unwrap_or(0);
            }
            steps.push(st);
        }
    }
    Ok(steps)
}

/// Bytes of the free space a `fakecap` file leaves to others: 1 % of it, at least 64 MiB.
const FREE_SPACE_RESERVE: u64 = 64 * MIB;

/// The size a missing file target of preset `name` is created at: `size`, or for
/// `fakecap` the free space of the file's filesystem less a reserve (a full filesystem
/// would fail other writers, the agent's own database among them).
/// Whether preset `name` works in a directory (the files workload) instead of on a file
/// or device.
pub fn in_directory(name: &str) -> bool {
    name == PresetKind::Files.name()
}

pub fn create_size(name: &str, o: &PresetOptions, path: &std::path::Path) -> Option<u64> {
    if o.size.is_some() || name != "fakecap" || path.exists() {
        return o.size;
    }
    let free = crate::io_target::free_space(path).ok()?;
    let keep = (free / 100).max(FREE_SPACE_RESERVE);
    Some(align_down(free.saturating_sub(keep), MIB)).filter(|s| *s < free)
}

/// `files`: a step per phase, all in one work directory named for this run.
fn files(c: &Ctx) -> Result<Vec<Step>, PresetError> {
    use shared::files::{FilesSpec, Phase, WORK_PREFIX};
    let phases = match &c.o.phases {
        Some(t) => Phase::parse_list(t).map_err(|e| c.bad(format!("phases = {t}: {e}")))?,
        None => Phase::ALL.to_vec(),
    };
    // The tree is made in the run: its directories first, its files before they are used.
    let needs = |p: Phase| phases.contains(&p);
    let uses_files = needs(Phase::Stat) || needs(Phase::Read) || needs(Phase::Delete);
    let verify = c.o.verify == Some(true);
    if verify && !(needs(Phase::Create) && needs(Phase::Read)) {
        return Err(c.bad(
            "verify = true: the read phase checks what create wrote: run both (phases)".into(),
        ));
    }
    if needs(Phase::Rmdir) && needs(Phase::Create) && !needs(Phase::Delete) {
        return Err(c.bad(format!(
            "phases = {}: rmdir removes empty directories: delete the files first (add delete)",
            c.o.phases.clone().unwrap_or_default()
        )));
    }
    if !needs(Phase::Mkdir) || (uses_files && !needs(Phase::Create)) {
        return Err(c.bad(format!(
            "phases = {}: the tree is made in the run, so mkdir comes first and create before stat, read or delete",
            c.o.phases.clone().unwrap_or_default()
        )));
    }
    let shape = FilesSpec {
        phase: Phase::Mkdir,
        dirs: c.o.dirs.unwrap_or(1),
        depth: c.o.depth.unwrap_or(1),
        fanout: c.o.fanout.unwrap_or(2),
        files: c.o.count.unwrap_or(1000),
        file_size: c.o.bs.unwrap_or(4096),
        fsync: c.o.fsync.unwrap_or(false),
        verify,
        work: format!(
            "{WORK_PREFIX}{}-{}",
            std::process::id(),
            crate::env::unix_ms()
        ),
        first: false,
        last: false,
    };
    // Plain system calls unless io_uring is asked for: the kernel runs io_uring's directory
    // operations in its worker threads, a hand-off each (stat 25 µs through the ring where
    // fstatat takes 1.6 µs here), which would be the tool's cost in the figures.
    let backend = c.o.backend.unwrap_or(shared::spec::Backend::Sync);
    let (all_dirs, leaves) = shape.dirs_per_job();
    let n = phases.len();
    Ok(phases
        .iter()
        .enumerate()
        .map(|(i, &phase)| {
            let rw = if phase.writes() {
                RwMode::Write
            } else {
                RwMode::Read
            };
            let mut s = spec(rw, 4096, 1);
            s.backend = backend;
            s.direct = false;
            s.jobs = c.o.streams.unwrap_or(1).max(1);
            s.files = Some(FilesSpec {
                phase,
                first: i == 0,
                last: i + 1 == n,
                ..shape.clone()
            });
            // The job's own directory and its tree's.
            let what = if phase.on_dirs() {
                format!("{} dirs per job", all_dirs + 1)
            } else {
                format!(
                    "{} files of {} per job",
                    leaves.saturating_mul(u64::from(shape.files)),
                    size_short(shape.file_size)
                )
            };
            step(format!("{} ({what})", phase.name()), s)
        })
        .collect())
}

/// The offered loads of `load-latency`, % of the maximum.
const LOADS: [u32; 8] = [1, 5, 10, 25, 50, 75, 90, 100];

/// `load-latency`: at QD 1 and QD `count` (32), the maximum, then each share of it.
fn load_latency(c: &Ctx) -> Result<Vec<Step>, PresetError> {
    let deep = c.o.count.unwrap_or(32);
    if !(2..=256).contains(&deep) {
        return Err(c.bad(format!("count = {deep}: the deeper queue depth, 2..256")));
    }
    let bs = c.o.bs.unwrap_or(4096);
    let mut steps = Vec::new();
    for qd in [1, deep] {
        let mut s = timed(spec(RwMode::RandRead, bs, qd), c.runtime_or(2000));
        s.size = Some(c.size_or(GIB));
        steps.push(step(format!("QD{qd} maximum"), s.clone()));
        s.rate_process = shared::pacing::RateProcess::Poisson;
        // Set when the step starts, from the maximum just measured (this one validates it).
        s.rate = Some(shared::Rate::Iops(1));
        for pct in LOADS {
            let mut st = step(format!("QD{qd} {pct} % load"), s.clone());
            st.rate_pct = Some(pct);
            steps.push(st);
        }
    }
    Ok(steps)
}

/// `probe`: one request every `idle` (1 s) in the working set, as `diskscope probe` makes them.
fn probe(c: &Ctx) -> Result<Vec<Step>, PresetError> {
    let interval_ms = c.idle_or(1000);
    let mut s = spec(RwMode::RandRead, c.o.bs.unwrap_or(4096), 1);
    s.size = Some(c.size_or(MIB));
    s.backend = shared::spec::Backend::Sync;
    s.runtime_ms = c.o.runtime_ms;
    // Twenty requests to a sample: each interval's p50, p99 and max are a band on the
    // latency chart (one request a sample would draw three equal lines).
    s.interval_ms = interval_ms.saturating_mul(20).clamp(1000, 60_000);
    s.probe = Some(shared::probe::ProbeSpec {
        interval_us: interval_ms.saturating_mul(1000),
        count: c.o.count.map(u64::from),
        ..Default::default()
    });
    Ok(vec![step("probe", s)])
}

/// The flush check's writer (the `flushcheck` preset, `diskscope flushcheck write`): one
/// job writing `bs`-byte verified blocks over `span` bytes (the target when none), made
/// durable by `flush` (an fdatasync or fsync every N writes) or, without one, by O_DSYNC
/// writes.
pub fn flushcheck_spec(
    bs: u64,
    span: Option<u64>,
    flush: Option<shared::durability::Flush>,
    writer: shared::flushcheck::WriterSpec,
) -> WorkloadSpec {
    let mut s = spec(RwMode::RandWrite, bs, 1);
    s.size = span;
    s.backend = shared::spec::Backend::Sync;
    match flush {
        Some(f) => s.flush = Some(f),
        None => s.write_sync = shared::durability::WriteSync::Dsync,
    }
    s.flushcheck = Some(writer);
    s
}

/// A flush every `every` writes: fdatasync, or fsync when `fsync`; none with `dsync`.
pub fn flushcheck_flush(every: u32, fsync: bool, dsync: bool) -> Option<shared::durability::Flush> {
    (!dsync).then_some(shared::durability::Flush {
        every,
        data_only: !fsync,
    })
}

/// Gives the flush check's steps the witness's token, which the request or the command
/// line carries beside the preset (never in its options or spec, which are stored).
pub fn give_witness_token(steps: &mut [Step], token: &str) {
    for w in steps.iter_mut().filter_map(|s| s.spec.flushcheck.as_mut()) {
        w.token = token.to_string();
    }
}

fn flushcheck(c: &Ctx) -> Result<Vec<Step>, PresetError> {
    let witness = c.o.witness.clone().ok_or_else(|| {
        c.bad("needs witness: the URL of the agent that records each flushed write (http://HOST:PORT), and its token as the request's witness_token: give them on the command line (diskscope run --preset flushcheck --witness URL --witness-token TOKEN) or through the API; the dashboard's form does not start a flush check".into())
    })?;
    let mut s = flushcheck_spec(
        c.o.bs.unwrap_or(4096),
        c.o.size.map(|v| c.fit(v)),
        flushcheck_flush(
            c.o.flush_every.unwrap_or(16),
            c.o.fsync.unwrap_or(false),
            c.o.dsync.unwrap_or(false),
        ),
        shared::flushcheck::WriterSpec {
            witness,
            count: c.o.count.map(u64::from),
            token: String::new(),
        },
    );
    s.runtime_ms = c.o.runtime_ms;
    Ok(vec![step("flush check", s)])
}

const IOMETER_MS: u64 = 600_000;

fn iometer_mix(c: &Ctx) -> Result<Vec<Step>, PresetError> {
    let mut s = timed(
        spanned(spec(RwMode::RandRw, 4096, 32), c.size_or(GIB)),
        c.runtime_or(IOMETER_MS),
    );
    s.read_pct = 50;
    Ok(vec![step("4K random 50/50 QD32", s)])
}

fn snia_steady(c: &Ctx) -> Result<Vec<Step>, PresetError> {
    let size = c.size_or(c.target_size);
    let mut pre = spanned(spec(RwMode::Write, 128 << 10, 32), size);
    pre.loops = 2;
    let round = timed(
        spanned(spec(RwMode::RandWrite, 4096, 32), size),
        c.runtime_or(60_000),
    );
    let mut rounds = step("round", round);
    rounds.until_steady = Some(c.o.count.unwrap_or(25).clamp(5, 100));
    Ok(vec![
        step("precondition: 128K sequential write ×2", pre),
        rounds,
    ])
}

fn fill(c: &Ctx) -> Result<Vec<Step>, PresetError> {
    let bs = c.o.bs.unwrap_or(4 * MIB);
    let size = align_down(
        c.o.size.unwrap_or(c.target_size).min(c.target_size) / 100 * 95,
        bs,
    );
    Ok(vec![step(
        format!("fill 95 % with {} writes", size_short(bs)),
        spanned(spec(RwMode::Write, bs, 4), size),
    )])
}

fn sustain(c: &Ctx) -> Result<Vec<Step>, PresetError> {
    let Some(rate) = c.o.rate else {
        return Err(c.bad("needs the rate to hold, e.g. --rate 3200MB (per second)".into()));
    };
    let Rate::BytesPerSec(bps) = rate else {
        return Err(c.bad(format!(
            "rate = {rate}: give a byte rate such as 3200MB, not IOPS"
        )));
    };
    let streams = c.o.streams.unwrap_or(1).max(1);
    let mut s = spec(RwMode::Write, c.o.bs.unwrap_or(MIB), 4 * streams.min(8));
    s.jobs = streams;
    s.rate = Some(rate);
    s.size = c.o.size.map(|size| c.fit(size));
    s.runtime_ms = c.o.runtime_ms;
    Ok(vec![step(
        format!("{streams} stream(s), {} MB/s in all", bps / 1_000_000),
        s,
    )])
}

fn compress_probe(c: &Ctx) -> Result<Vec<Step>, PresetError> {
    let size = c.size_or(GIB);
    let runtime = c.runtime_or(10_000);
    let patterns = [
        DataPattern::Random,
        DataPattern::Zeros,
        DataPattern::Compress(50),
    ];
    Ok(patterns
        .into_iter()
        .enumerate()
        .map(|(i, p)| {
            let mut s = timed(spanned(spec(RwMode::Write, MIB, 8), size), runtime);
            s.pattern = p;
            let mut st = step(format!("sequential write, {p} data"), s);
            st.pause_before_ms = if i == 0 { 0 } else { c.idle_or(1000) };
            st
        })
        .collect())
}

fn cache_recovery(c: &Ctx) -> Result<Vec<Step>, PresetError> {
    let bytes = c.size_or(8 * GIB);
    let mut first = spanned(spec(RwMode::Write, MIB, 8), bytes);
    first.io_size = Some(bytes);
    let mut again = step("write again after idle", first.clone());
    again.pause_before_ms = c.idle_or(30_000);
    Ok(vec![step("write past the cache", first), again])
}

/// Every preset as the API shows it: steps with default options on a 1 GiB target.
pub fn all() -> Vec<Preset> {
    DEFS.iter()
        .map(|d| {
            let name = d.kind.name();
            let o = PresetOptions {
                rate: (d.kind == PresetKind::Sustain).then_some(Rate::BytesPerSec(500_000_000)),
                // A flush check's steps need a witness: a placeholder shows their shape.
                witness: (d.kind == PresetKind::Flushcheck).then(|| "http://WITNESS:7878".into()),
                ..PresetOptions::default()
            };
            let steps = build(name, &o, GIB, 512)
                .map(|b| b.steps)
                .unwrap_or_default();
            Preset {
                name: name.to_string(),
                options: options_of(name),
                // The options are listed from what the preset takes, so they cannot drift.
                description: format!(
                    "{} [options: {}]",
                    d.description,
                    options_of(name).join(", ")
                ),
                spec: steps.first().map(|s| s.spec.clone()).unwrap_or_default(),
                steps,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_builds_valid_steps() {
        let all = all();
        assert_eq!(all[0].name, "quick");
        for p in &all {
            assert!(!p.steps.is_empty(), "{} has no steps", p.name);
            for s in &p.steps {
                assert!(
                    s.spec.validate().is_ok(),
                    "{} / {}: {:?}",
                    p.name,
                    s.name,
                    s.spec.validate()
                );
            }
            assert_eq!(all.iter().filter(|q| q.name == p.name).count(), 1);
        }
        // The shared type and the table name the same presets, each once.
        for k in PresetKind::ALL {
            assert_eq!(DEFS.iter().filter(|d| d.kind == *k).count(), 1, "{k}");
        }
        assert_eq!(DEFS.len(), PresetKind::ALL.len());
    }

    #[test]
    fn a_single_test_is_named_by_its_test_whatever_its_runtime() {
        let o = PresetOptions {
            runtime_ms: Some(300),
            ..Default::default()
        };
        let b = build("seq1m-q8-write", &o, GIB, 512).expect("single");
        assert_eq!(b.steps.len(), 1);
        assert_eq!(b.steps[0].name, "SEQ1M Q8T1 write");
        assert_eq!(b.steps[0].spec.runtime_ms, Some(300));
        let b = build("rnd4k-q1-read", &PresetOptions::default(), GIB, 512).expect("single");
        assert_eq!(
            (b.steps[0].name.as_str(), b.steps[0].spec.runtime_ms),
            ("RND4K Q1T1 read", Some(10_000))
        );
    }

    #[test]
    fn cdm_is_the_grid_with_passes_and_pauses() {
        let b = build(
            "cdm",
            &PresetOptions {
                count: Some(2),
                ..Default::default()
            },
            8 * GIB,
            512,
        )
        .expect("cdm");
        assert_eq!(b.steps.len(), 4 * 2 * 2);
        assert_eq!(b.steps[0].name, "SEQ1M Q8T1 read #1");
        assert_eq!(b.steps[0].pause_before_ms, 0);
        assert_eq!(b.steps[1].pause_before_ms, 1000);
        assert_eq!(b.steps[0].spec.size, Some(GIB));
        let small = build("cdm", &PresetOptions::default(), 300 * MIB, 512).expect("cdm");
        assert_eq!(
            small.steps[0].spec.size,
            Some(300 * MIB),
            "test size fits the target"
        );
    }

    #[test]
    fn sustain_needs_a_byte_rate_and_fill_stops_at_95_percent() {
        let e = build("sustain", &PresetOptions::default(), GIB, 512).unwrap_err();
        assert!(e.to_string().contains("--rate"), "{e}");
        let o = PresetOptions {
            rate: Some(Rate::BytesPerSec(3_200_000_000)),
            streams: Some(4),
            ..Default::default()
        };
        let b = build("sustain", &o, 100 * GIB, 512).expect("sustain");
        assert_eq!(b.analysis.required_rate, Some(3.2e9));
        assert_eq!(b.steps[0].spec.jobs, 4);
        let f = build("fill", &PresetOptions::default(), 100 * GIB, 512).expect("fill");
        assert_eq!(f.steps[0].spec.size, Some(95 * GIB));
        assert_eq!(f.steps[0].name, "fill 95 % with 4M writes");
        let o = PresetOptions {
            bs: Some(MIB),
            ..Default::default()
        };
        let f = build("fill", &o, 100 * GIB, 512).expect("fill");
        assert_eq!(
            f.steps[0].name, "fill 95 % with 1M writes",
            "named for its bs"
        );
        assert!(matches!(
            build("warp", &PresetOptions::default(), GIB, 512),
            Err(PresetError::Unknown(_))
        ));
    }

    #[test]
    fn options_a_preset_does_not_take_are_refused_by_name_and_interval_is_honoured() {
        let o = PresetOptions {
            count: Some(3),
            bs: Some(4096),
            ..Default::default()
        };
        let e = build("atto", &o, GIB, 512).unwrap_err().to_string();
        assert!(
            e.contains("does not use count = 3, bs = 4096")
                && e.contains("takes: size, runtime, verify, interval"),
            "{e}"
        );
        let o = PresetOptions {
            interval_ms: Some(100),
            ..Default::default()
        };
        let b = build("full-span", &o, GIB, 512).expect("full-span");
        assert!(b.steps.iter().all(|s| s.spec.interval_ms == 100));
        for p in all() {
            assert_eq!(
                p.options.last().map(String::as_str),
                Some("interval"),
                "{}",
                p.name
            );
        }
    }

    #[test]
    fn atto_skips_sizes_below_the_device_alignment() {
        let b = build("atto", &PresetOptions::default(), 8 * GIB, 4096).expect("atto");
        assert!(b.steps.iter().all(|s| s.spec.bs >= 4096));
        assert_eq!(
            b.steps
                .iter()
                .filter(|s| s.spec.rw == RwMode::Write)
                .count(),
            15,
            "4K..64M"
        );
    }
}
