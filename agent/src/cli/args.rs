//! Flags, as clap sees them.

use clap::{Args, Parser, Subcommand};
use shared::units::{parse_duration_ms, parse_size};
use shared::{Backend, DataPattern, Rate, RwMode, WorkloadSpec};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "diskscope",
    version,
    about = "Storage benchmark: io_uring workloads with per-interval samples"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run one workload against a file or block device.
    Run(Box<RunArgs>),
    /// The default benchmark (sequential 1 MiB and random 4 KiB, read and write) on a
    /// scratch file in the data directory.
    Quick(QuickArgs),
    /// Serve the API, the live stream and the dashboard.
    Serve(ServeArgs),
    /// Mount an emulated SSD (FUSE; root) whose DIR/disk.img follows a known model: SLC
    /// cache, native speed, thermal throttle, GC. For tests and demos; runs until stopped.
    Emulate(EmulateArgs),
    /// List the block devices: model, serial, firmware, size, transport, PCIe link,
    /// partitions, mounts, holders, whether writes would be refused, health and temperature.
    Devices(DevicesArgs),
    /// Compare two runs' JSON reports (--json): B over A per metric; with --repeat runs, the
    /// ratio of means with a 95 % confidence interval.
    Compare(CompareArgs),
    /// Record the I/O a block device receives (the kernel's block tracer: blktrace, or its
    /// tracefs text where blktrace cannot run) into a trace --replay reads; FILE.iolog[.gz]
    /// is written as a fio iolog v3. With a command after `--`, records while it runs.
    Record(RecordArgs),
    /// A remote agent's runs (newest first): id, status, target, preset, MB/s.
    Runs(RunsArgs),
    /// Stop a run on a remote agent.
    Stop(RunIdArgs),
    /// A remote agent's report of a run (JSON, or CSV samples) to a file or stdout.
    Export(ExportArgs),
}

/// Which agent, with which token.
#[derive(Debug, Args)]
pub struct AgentArgs {
    /// The agent's URL, e.g. http://capture-box:7878.
    #[arg(long, value_name = "URL")]
    pub agent: String,
    /// Its token (viewer for runs and export, operator for stop); also DISKSCOPE_TOKEN.
    #[arg(long)]
    pub token: Option<String>,
}

#[derive(Debug, Args)]
pub struct RunsArgs {
    #[command(flatten)]
    pub agent: AgentArgs,
    /// Only runs in this status (running, completed, stopped, failed, interrupted).
    #[arg(long)]
    pub status: Option<String>,
    /// Page of 50 (from 1).
    #[arg(long, default_value_t = 1)]
    pub page: u32,
}

#[derive(Debug, Args)]
pub struct RunIdArgs {
    #[command(flatten)]
    pub agent: AgentArgs,
    /// The run's id (`diskscope runs` lists them).
    pub id: i64,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    #[command(flatten)]
    pub agent: AgentArgs,
    pub id: i64,
    /// json (the run report) or csv (one row per sample).
    #[arg(long, default_value = "json")]
    pub format: String,
    /// Where to write it (default: stdout).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct RecordArgs {
    /// The block device to trace.
    #[arg(long)]
    pub device: PathBuf,
    /// How long to record (e.g. 60s); without it, until the command ends or Ctrl-C.
    #[arg(long, value_parser = duration_ms)]
    pub duration: Option<u64>,
    /// Where the trace goes.
    #[arg(long)]
    pub out: PathBuf,
    /// A command to run while recording.
    #[arg(last = true)]
    pub command: Vec<String>,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The baseline run's report.
    pub a: PathBuf,
    /// The run compared with it.
    pub b: PathBuf,
}

#[derive(Debug, Args)]
pub struct DevicesArgs {
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct EmulateArgs {
    /// Where to mount it; the device is DIR/disk.img, its temperature DIR/hwmon/temp1_input.
    #[arg(long)]
    pub mount: PathBuf,
    /// The model as JSON (fields of SsdModel: capacity, cache_bytes, cache_mbps,
    /// native_mbps, read_mbps, drain_mbps, random_floor, random_scale_bytes, gc_period_ms,
    /// gc_pause_ms, gc_all_writes, ambient_c, heat_c_per_gb, tau_s, trip_c, hysteresis_c,
    /// throttle_mbps, per_io_us, noise, seed);
    /// missing fields take the defaults (4 GiB, 1 GiB cache at 400 MB/s, then 80 MB/s).
    #[arg(long)]
    pub model: Option<String>,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on (port 0 picks a free one).
    #[arg(long, default_value = "127.0.0.1:7878")]
    pub listen: std::net::SocketAddr,
    /// Where the database, tokens and scratch file live (default: $XDG_DATA_HOME/diskscope or
    /// ~/.local/share/diskscope; also DISKSCOPE_DATA_DIR).
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
    /// A directory, file or block device runs may use (repeatable); the scratch file in the
    /// data directory is always allowed.
    #[arg(long)]
    pub allow: Vec<PathBuf>,
    /// A block device that may be overwritten although it carries a partition table or
    /// filesystem signature (repeatable). Mounted, swap or held devices stay refused.
    #[arg(long)]
    pub allow_destructive: Vec<PathBuf>,
    /// Allow write runs on regular files that have more than one hard link (another name,
    /// maybe outside the allowed paths, shares their data). Refused by default.
    #[arg(long)]
    pub allow_hard_links: bool,
    /// An origin (scheme://host:port) besides the agent's own whose pages may call the API
    /// and open the live WebSocket (repeatable): the dashboard of another agent showing this
    /// one in its fleet view or kiosk wall. Cross-origin access is off without it.
    #[arg(long, value_parser = shared::origin::parse)]
    pub cors_origin: Vec<String>,
    /// Memory all runs going at once may pin (buffers, rings, job state), e.g. 4G; a run
    /// that would go over is refused before it starts (default: half of the RAM).
    #[arg(long, value_parser = size)]
    pub max_memory: Option<u64>,
    /// Serve HTTPS/WSS with this PEM certificate (chain) ...
    #[arg(long, requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// ... and this PEM private key.
    #[arg(long, requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// Also mount an emulated SSD (FUSE, needs root) in the data directory and offer it as
    /// a target: a cache cliff within a minute without risking a real disk.
    #[arg(long)]
    pub demo: bool,
}

fn size(s: &str) -> Result<u64, String> {
    parse_size(s).map_err(|e| e.to_string())
}

/// `--steadystate`'s rule (its window and ramp come from --ss-dur and --ss-ramp).
fn steady_rule(s: &str) -> Result<shared::steady::SteadyRule, String> {
    shared::steady::SteadyRule::parse(s, 1_000, 0)
}

/// `MIN-MAX` (fio's `bsrange`, also `MIN:MAX`).
fn bsrange(s: &str) -> Result<(u64, u64), String> {
    shared::bssplit::parse_range(s, size)
}

fn duration_ms(s: &str) -> Result<u64, String> {
    parse_duration_ms(s).map_err(|e| e.to_string())
}

#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// File or block device to measure (a label only with --backend null). A missing file is
    /// created when --size is given. Repeat it to run the workload on several targets at
    /// once (each with its own jobs; samples and summary are their sum, with a part each).
    #[arg(long, required_unless_present = "job_files")]
    pub target: Vec<PathBuf>,
    /// fio job files to run instead of flags (fio's syntax: [global] and job sections,
    /// include, ${VAR}; jobs separated by stonewall, and each further file, run as the steps
    /// of one run). The target is the file the jobs name, or --target. An option diskscope
    /// does not run is refused naming its file and line (exit 2).
    #[arg(value_name = "JOB.fio")]
    pub job_files: Vec<PathBuf>,
    /// The report printed at the end: normal (diskscope's tables), fio-json (fio's JSON
    /// document, for tools that read fio's output; `json` as fio names it) or fio-json+
    /// (`json+`: with the latency bins fio's json+ carries).
    #[arg(long, value_enum, default_value_t = OutputFormat::Normal)]
    pub output_format: OutputFormat,
    /// Write the --output-format report to FILE instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// read (default), write, randread, randwrite, randrw or rw.
    #[arg(long)]
    pub rw: Option<RwMode>,
    /// Share of reads for randrw and rw, percent (default 50).
    #[arg(long, visible_alias = "rwmixread")]
    pub read_pct: Option<u8>,
    /// Block size (512 B..64 MiB), e.g. 4K, 1M.
    #[arg(long, value_parser = size)]
    pub bs: Option<u64>,
    /// I/Os in flight per job (1..1024; default 1).
    #[arg(long)]
    pub iodepth: Option<u32>,
    /// I/Os handed to the kernel in one call (fio's iodepth_batch_submit; default 1: each
    /// on its own as its slot frees).
    #[arg(long, value_name = "N")]
    pub iodepth_batch: Option<u32>,
    /// Completions to wait for before refilling (fio's iodepth_batch_complete_min; default
    /// 1; 0 polls without sleeping).
    #[arg(long, value_name = "N")]
    pub iodepth_batch_complete_min: Option<u32>,
    /// The most completions a round reaps before refilling (fio's
    /// iodepth_batch_complete_max; default every ready one).
    #[arg(long, value_name = "N")]
    pub iodepth_batch_complete_max: Option<u32>,
    /// Parallel jobs, each with its own thread and ring (1..64; default 1).
    #[arg(long, visible_alias = "numjobs")]
    pub jobs: Option<u32>,
    /// Span length (default: from --offset to the end of the target).
    #[arg(long, value_parser = size)]
    pub size: Option<u64>,
    /// Span start (default 0).
    #[arg(long, value_parser = size)]
    pub offset: Option<u64>,
    /// Each job its own region: job N starts at --offset + N × this and covers --size
    /// (fio's offset_increment; every job then does --size × --loops).
    #[arg(long, value_parser = size, value_name = "BYTES")]
    pub offset_increment: Option<u64>,
    /// Total bytes to transfer (default: the span × --loops, unless --runtime is given).
    #[arg(long, value_parser = size)]
    pub io_size: Option<u64>,
    /// Passes over the span (size-based runs; default 1).
    #[arg(long)]
    pub loops: Option<u32>,
    /// Run time after the ramp, e.g. 30s, 5m; repeats over the span until the time is up.
    #[arg(long, value_parser = duration_ms)]
    pub runtime: Option<u64>,
    /// Time run before statistics start (default 0).
    #[arg(long, value_parser = duration_ms)]
    pub ramp: Option<u64>,
    /// Rate cap for the whole run: bytes per second (200MB) or IOPS (5000iops).
    #[arg(long)]
    pub rate: Option<Rate>,
    /// A floor: the run fails at the first sample interval in which reads or writes ran
    /// below this (200MB per second or 5000iops; fio's rate_min / rate_iops_min).
    #[arg(long, value_name = "RATE")]
    pub rate_min: Option<Rate>,
    /// End the run once steady (fio's steadystate): iops:2%, iops_slope:0.3%, bw:10% or
    /// bw_slope:1M, judged over a rolling --ss-dur window after --ss-ramp.
    #[arg(long, value_name = "RULE", requires = "ss_dur", value_parser = steady_rule)]
    pub steadystate: Option<shared::steady::SteadyRule>,
    /// The steady-state window (e.g. 30s).
    #[arg(long, value_parser = duration_ms, value_name = "TIME")]
    pub ss_dur: Option<u64>,
    /// Time before steady-state values are collected (default 0).
    #[arg(long, value_parser = duration_ms, value_name = "TIME")]
    pub ss_ramp: Option<u64>,
    /// Search each job's queue depth (up to --iodepth) for the deepest whose I/Os stay
    /// within this latency (e.g. 500us, 2ms; fio's latency_target), judged per
    /// --latency-window; the job ends after its final window at the depth found.
    #[arg(long, value_parser = shared::units::parse_latency_us, value_name = "TIME", requires = "latency_window")]
    pub latency_target: Option<u64>,
    /// The window each depth is judged over (e.g. 2s; fio's latency_window).
    #[arg(long, value_parser = duration_ms, value_name = "TIME", requires = "latency_target")]
    pub latency_window: Option<u64>,
    /// The share of a window's I/Os that must meet the target (default 100; fio's
    /// latency_percentile).
    #[arg(long, value_name = "PCT", requires = "latency_target")]
    pub latency_percentile: Option<f64>,
    /// Written data: random (incompressible; default), zeros, or compress:N (N %
    /// compressible).
    #[arg(long)]
    pub pattern: Option<DataPattern>,
    /// Random offsets visit every block once before repeating.
    #[arg(long)]
    pub cover_once: bool,
    /// Go through the page cache instead of O_DIRECT.
    #[arg(long)]
    pub buffered: bool,
    /// fsync the target at the end (the time counts in the run).
    #[arg(long)]
    pub end_fsync: bool,
    /// Flush after every N writes with fsync (fio's fsync=N); each flush is queued as an
    /// I/O of its own and its latency reported apart.
    #[arg(long, value_name = "N", conflicts_with = "fdatasync")]
    pub fsync: Option<u32>,
    /// Flush after every N writes with fdatasync (fio's fdatasync=N).
    #[arg(long, value_name = "N")]
    pub fdatasync: Option<u32>,
    /// Synchronous writes: sync opens the target O_SYNC, dsync O_DSYNC (fio's sync=).
    #[arg(long, value_name = "sync|dsync")]
    pub sync: Option<shared::durability::WriteSync>,
    /// Run the jobs only on these CPUs, e.g. 0-3,6 (fio's cpus_allowed).
    #[arg(long, value_name = "LIST")]
    pub cpus_allowed: Option<crate::cpus::CpuList>,
    /// With --cpus-allowed: every job on all of them (shared, default) or each job on one
    /// in turn (split), as fio's cpus_allowed_policy.
    #[arg(long, value_name = "shared|split")]
    pub cpus_allowed_policy: Option<shared::spec::CpuPolicy>,
    /// Sample interval in milliseconds (100..60000; default 1000). Presets honour it too.
    #[arg(long)]
    pub interval_ms: Option<u64>,
    /// uring (default), null (engine overhead, nothing opened) or sync (pread/pwrite).
    #[arg(long)]
    pub backend: Option<Backend>,
    /// Seed for random offsets and data.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Check what was written: every block carries a header and a CRC32C, and every written
    /// block is read back at the end and classified (corrupt, misplaced, stale, unwritten);
    /// exit code 1 on any bad block. With a preset, each of its write steps is checked.
    #[arg(long)]
    pub verify: bool,
    /// Also read back every N written blocks during the run (with --verify).
    #[arg(long, value_name = "N")]
    pub verify_every: Option<u64>,
    /// How random offsets are drawn: uniform (default), zipf:THETA (e.g. zipf:1.2),
    /// pareto:H (pareto:0.8: 80 % of the I/Os on the first 20 % of the span), normal:SIGMA
    /// (percent of the span around its middle), zoned:ACCESS/SIZE:… (percentages of the
    /// accesses and of the span, zone by zone from its start, e.g. zoned:50/5:30/15:20/),
    /// zoned_abs:ACCESS/SIZE:… (sizes in bytes, e.g. zoned_abs:60/1G:40/4G).
    #[arg(long, value_name = "DIST")]
    pub random_distribution: Option<shared::access::Distribution>,
    /// Random modes: this percentage of I/Os continue after the previous block (0..100).
    #[arg(long, value_name = "PCT")]
    pub seq_pct: Option<u8>,
    /// A mix of I/O sizes with the share of I/Os of each, e.g. 4K/60:64K/30:1M/10 (fio's
    /// bssplit; a share left empty takes an equal part of the rest). --bs is then its
    /// smallest size.
    #[arg(long, value_name = "SIZE/PCT:…")]
    pub bssplit: Option<shared::bssplit::BsSplit>,
    /// The writes' own size or mix in a random mix (fio's bs=READ,WRITE), e.g. 64K or
    /// 64K/50:128K/50; --bs/--bssplit/--bsrange are then the reads'.
    #[arg(long, value_name = "SIZE|SIZE/PCT:…")]
    pub write_bs: Option<shared::bssplit::BsSplit>,
    /// A range of I/O sizes, e.g. 4K-64K: each I/O's size drawn uniformly from the
    /// multiples of the smallest up to the largest, as fio's bsrange does. --bs is then
    /// its smallest size.
    #[arg(long, value_parser = bsrange, value_name = "MIN-MAX", conflicts_with_all = ["bs", "bssplit"])]
    pub bsrange: Option<(u64, u64)>,
    /// Random modes: offsets aligned to this many bytes instead of the block size, e.g.
    /// --bs 64K --blockalign 4K (fio's blockalign).
    #[arg(long, value_parser = size, value_name = "BYTES")]
    pub blockalign: Option<u64>,
    /// How --rate spaces the I/Os: linear (evenly, default) or poisson (Poisson arrivals
    /// with the rate as their mean, as fio's rate_process=poisson).
    #[arg(long, value_name = "PROCESS")]
    pub rate_process: Option<shared::pacing::RateProcess>,
    /// Think time: after every --thinktime-blocks I/Os, let the I/Os in flight complete
    /// and pause this long (e.g. 500us, 2ms; fio's thinktime).
    #[arg(long, value_parser = shared::units::parse_latency_us, value_name = "TIME")]
    pub thinktime: Option<u64>,
    /// The part of --thinktime spent spinning the CPU rather than sleeping.
    #[arg(long, value_parser = shared::units::parse_latency_us, value_name = "TIME")]
    pub thinktime_spin: Option<u64>,
    /// I/Os between think times (default 1).
    #[arg(long, value_name = "N")]
    pub thinktime_blocks: Option<u32>,
    /// Count --thinktime-blocks at completion (default) or at issue.
    #[arg(long, value_name = "complete|issue", value_parser = ["complete", "issue"])]
    pub thinktime_blocks_type: Option<String>,
    /// Replay a recorded trace instead of generating I/O: a fio iolog (v2, v3), blkparse
    /// text or blktrace binary file (optionally .gz), or a built-in one (app-build,
    /// app-database, app-files). Offsets beyond the target wrap into it.
    #[arg(long, value_name = "TRACE")]
    pub replay: Option<String>,
    /// Replay timing: recorded (default for traces with timestamps) or afap (as fast as
    /// possible at --iodepth).
    #[arg(long, value_name = "MODE")]
    pub replay_timing: Option<shared::replay::Timing>,
    /// Recorded timing sped up (2 = twice as fast).
    #[arg(long, value_name = "X")]
    pub replay_speed: Option<f64>,
    /// Recorded timing: idle gaps longer than this are shortened to it (default 10ms; 0
    /// keeps every gap).
    #[arg(long, value_parser = duration_ms, value_name = "TIME")]
    pub replay_idle_max: Option<u64>,
    /// Error scan: go on past failed I/Os (EIO, short) and map every I/O by position
    /// (at most 1024 cells: time per I/O, errors, slow I/Os), as HD Tune's error scan.
    #[arg(long)]
    pub scan: bool,
    /// With --scan: an I/O at least this slow counts as slow (default 200ms).
    #[arg(long, value_parser = duration_ms)]
    pub scan_slow: Option<u64>,
    /// Run a named sequence instead of one workload: cdm, cdm-peak, atto, orion-matrix,
    /// full-span, iometer-mix, snia-steady, fill, sustain, compress-probe, cache-recovery,
    /// fakecap, error-scan
    /// (and the single tests quick, seq1m-q8-read, ...). --size, --runtime, --rate, --bs,
    /// --count, --streams, --idle and --buffer-ms tune it; `sustain` exits 1 when the target
    /// cannot hold the rate.
    #[arg(long)]
    pub preset: Option<String>,
    /// Passes per test (cdm: 5) or maximum rounds (snia-steady: 25).
    #[arg(long)]
    pub count: Option<u32>,
    /// Parallel streams for sustain (the rate is shared among them).
    #[arg(long)]
    pub streams: Option<u32>,
    /// Idle time between steps (cdm: 1s; cache-recovery: 30s), and between the passes of
    /// --repeat.
    #[arg(long, value_parser = duration_ms)]
    pub idle: Option<u64>,
    /// latency-target: the p99 latency to stay under, e.g. 500us or 1ms.
    #[arg(long, value_parser = shared::units::parse_latency_us, value_name = "LATENCY")]
    pub p99: Option<u64>,
    /// Run the workload or preset N times as one run, with mean, standard deviation, CV and
    /// a 95 % confidence interval per metric (1..1000).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub repeat: Option<u32>,
    /// The RAM buffer a sustain run may rely on, as time at the rate (default 1000).
    #[arg(long)]
    pub buffer_ms: Option<u64>,
    /// Write the run report (spec, environment, summary, samples, histogram) as JSON.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Write one CSV row per sample.
    #[arg(long)]
    pub csv: Option<PathBuf>,
    /// Write every 10 ms bucket of the run (bytes completed) as CSV `t_ms,bytes`; the JSON
    /// report's timeline merges buckets on runs longer than 10.9 minutes.
    #[arg(long, value_name = "FILE")]
    pub timeline: Option<PathBuf>,
    /// No per-interval lines or progress bar.
    #[arg(long, short)]
    pub quiet: bool,
    /// Run on a remote agent (e.g. http://capture-box:7878) through its API instead of
    /// here: the same flags, live lines from its stream, its report for --json and the
    /// exit code.
    #[arg(long, value_name = "URL")]
    pub agent: Option<String>,
    /// The agent's operator token (with --agent; also DISKSCOPE_TOKEN).
    #[arg(long)]
    pub token: Option<String>,
    /// With --agent: the block device path repeated, to confirm a write that destroys its
    /// data (comma-separated for several).
    #[arg(long, value_name = "DEVICE")]
    pub confirm: Option<String>,
    /// Memory a run may pin (buffers, rings, job state), e.g. 4G; a bigger plan is refused
    /// before it starts (default: half of the RAM).
    #[arg(long, value_parser = size)]
    pub max_memory: Option<u64>,
}

/// `diskscope run --output-format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    Normal,
    /// fio's JSON (also as fio names it: json).
    #[value(name = "fio-json", alias = "json")]
    FioJson,
    /// fio's json+: with each direction's latency bins (also: json+).
    #[value(name = "fio-json+", alias = "json+")]
    FioJsonPlus,
}

impl RunArgs {
    /// The preset's knobs, from the flags given.
    pub fn preset_options(&self) -> shared::PresetOptions {
        shared::PresetOptions {
            size: self.size,
            count: self.count,
            runtime_ms: self.runtime,
            rate: self.rate,
            streams: self.streams,
            idle_ms: self.idle,
            buffer_ms: self.buffer_ms,
            bs: self.bs,
            interval_ms: self.interval_ms,
            verify: self.verify.then_some(true),
            p99_us: self.p99,
        }
    }

    /// Workload flags given on the command line that no preset takes (a preset's own knobs
    /// go through [`RunArgs::preset_options`] and are checked by the preset).
    pub fn flags_presets_ignore(&self) -> Vec<String> {
        let mut v = Vec::new();
        let mut flag = |name: &str, given: Option<String>| {
            if let Some(value) = given {
                v.push(format!("--{name} {value}"));
            }
        };
        flag("rw", self.rw.map(|x| x.to_string()));
        flag("read-pct", self.read_pct.map(|x| x.to_string()));
        flag("iodepth", self.iodepth.map(|x| x.to_string()));
        flag("iodepth-batch", self.iodepth_batch.map(|x| x.to_string()));
        flag(
            "iodepth-batch-complete-min",
            self.iodepth_batch_complete_min.map(|x| x.to_string()),
        );
        flag(
            "iodepth-batch-complete-max",
            self.iodepth_batch_complete_max.map(|x| x.to_string()),
        );
        flag("jobs", self.jobs.map(|x| x.to_string()));
        flag("offset", self.offset.map(|x| x.to_string()));
        flag(
            "offset-increment",
            self.offset_increment.map(|x| x.to_string()),
        );
        flag("io-size", self.io_size.map(|x| x.to_string()));
        flag("loops", self.loops.map(|x| x.to_string()));
        flag("ramp", self.ramp.map(|x| format!("{x}ms")));
        flag("pattern", self.pattern.map(|x| x.to_string()));
        flag("backend", self.backend.map(|x| x.to_string()));
        flag("seed", self.seed.map(|x| x.to_string()));
        flag("verify-every", self.verify_every.map(|x| x.to_string()));
        flag("scan-slow", self.scan_slow.map(|x| format!("{x}ms")));
        flag(
            "random-distribution",
            self.random_distribution.as_ref().map(|x| x.to_string()),
        );
        flag("seq-pct", self.seq_pct.map(|x| x.to_string()));
        flag("bssplit", self.bssplit.as_ref().map(|x| x.to_string()));
        flag("write-bs", self.write_bs.as_ref().map(|x| x.to_string()));
        flag("bsrange", self.bsrange.map(|(lo, hi)| format!("{lo}-{hi}")));
        flag("blockalign", self.blockalign.map(|x| x.to_string()));
        flag("rate-process", self.rate_process.map(|x| x.to_string()));
        flag("rate-min", self.rate_min.map(|x| x.to_string()));
        flag("steadystate", self.steadystate.map(|x| x.to_string()));
        flag("ss-dur", self.ss_dur.map(|x| format!("{x}ms")));
        flag("ss-ramp", self.ss_ramp.map(|x| format!("{x}ms")));
        flag(
            "latency-target",
            self.latency_target.map(|x| format!("{x}us")),
        );
        flag(
            "latency-window",
            self.latency_window.map(|x| format!("{x}ms")),
        );
        flag(
            "latency-percentile",
            self.latency_percentile.map(|x| x.to_string()),
        );
        flag("thinktime", self.thinktime.map(|x| format!("{x}us")));
        flag(
            "thinktime-spin",
            self.thinktime_spin.map(|x| format!("{x}us")),
        );
        flag(
            "thinktime-blocks",
            self.thinktime_blocks.map(|x| x.to_string()),
        );
        flag("thinktime-blocks-type", self.thinktime_blocks_type.clone());
        flag("replay", self.replay.clone());
        flag("fsync", self.fsync.map(|x| x.to_string()));
        flag("fdatasync", self.fdatasync.map(|x| x.to_string()));
        flag("sync", self.sync.map(|x| x.to_string()));
        flag(
            "cpus-allowed",
            self.cpus_allowed.as_ref().map(|x| x.to_string()),
        );
        flag(
            "cpus-allowed-policy",
            self.cpus_allowed_policy.map(|x| x.to_string()),
        );
        for (name, on) in [
            ("cover-once", self.cover_once),
            ("buffered", self.buffered),
            ("end-fsync", self.end_fsync),
            ("scan", self.scan),
        ] {
            flag(name, on.then(String::new));
        }
        v.iter().map(|f| f.trim_end().to_string()).collect()
    }

    pub fn spec(&self) -> WorkloadSpec {
        let defaults = WorkloadSpec::default();
        WorkloadSpec {
            rw: self.rw.unwrap_or(defaults.rw),
            read_pct: self.read_pct.unwrap_or(defaults.read_pct),
            bs: self
                .bs
                .or(self.bssplit.as_ref().map(|s| s.min()))
                .or(self.bsrange.map(|(lo, _)| lo))
                .unwrap_or(defaults.bs),
            iodepth: self.iodepth.unwrap_or(defaults.iodepth),
            iodepth_batch: self.iodepth_batch.unwrap_or(defaults.iodepth_batch),
            iodepth_batch_complete_min: self
                .iodepth_batch_complete_min
                .unwrap_or(defaults.iodepth_batch_complete_min),
            iodepth_batch_complete_max: self
                .iodepth_batch_complete_max
                .unwrap_or(defaults.iodepth_batch_complete_max),
            jobs: self.jobs.unwrap_or(defaults.jobs),
            offset: self.offset.unwrap_or(defaults.offset),
            offset_increment: self.offset_increment,
            block_align: self.blockalign,
            size: self.size,
            io_size: self.io_size,
            loops: self.loops.unwrap_or(defaults.loops),
            runtime_ms: self.runtime,
            ramp_ms: self.ramp.unwrap_or(defaults.ramp_ms),
            rate: self.rate,
            rate_min: self.rate_min,
            latency_target: self
                .latency_target
                .map(|us| shared::qd_search::LatencyRule {
                    target_us: us,
                    window_ms: self.latency_window.unwrap_or_default(),
                    percentile: self.latency_percentile.unwrap_or(100.0),
                }),
            steady: self.steadystate.map(|r| shared::steady::SteadyRule {
                window_ms: self.ss_dur.unwrap_or(0),
                ramp_ms: self.ss_ramp.unwrap_or(0),
                ..r
            }),
            pattern: self.pattern.unwrap_or(defaults.pattern),
            cover_once: self.cover_once,
            direct: !self.buffered,
            end_fsync: self.end_fsync,
            interval_ms: self.interval_ms.unwrap_or(defaults.interval_ms),
            backend: self.backend.unwrap_or(defaults.backend),
            seed: self.seed.unwrap_or(defaults.seed),
            verify: self.verify,
            verify_every: self.verify_every,
            scan: self.scan,
            scan_slow_ms: self.scan_slow,
            random_distribution: self.random_distribution.clone().unwrap_or_default(),
            seq_pct: self.seq_pct.unwrap_or(0),
            replay: self.replay.as_ref().map(|t| shared::replay::ReplaySpec {
                trace: t.clone(),
                timing: self.replay_timing,
                speed: self.replay_speed,
                idle_max_ms: self.replay_idle_max,
            }),
            rate_process: self.rate_process.unwrap_or_default(),
            think: self.think(),
            bssplit: self.bssplit.clone(),
            write_bssplit: self.write_bs.clone(),
            bs_max: self.bsrange.map(|(_, hi)| hi),
            flush: self.flush(),
            write_sync: self.sync.unwrap_or_default(),
            cpus_allowed: self.cpus_allowed.as_ref().map(|l| l.to_string()),
            cpus_allowed_policy: self.cpus_allowed_policy.unwrap_or_default(),
        }
    }

    /// The flush --fsync or --fdatasync asks for.
    fn flush(&self) -> Option<shared::durability::Flush> {
        use shared::durability::Flush;
        let fsync = self.fsync.map(|every| Flush {
            every,
            data_only: false,
        });
        fsync.or(self.fdatasync.map(|every| Flush {
            every,
            data_only: true,
        }))
    }

    /// The think time the flags ask for; any think flag without --thinktime is a think of
    /// 0 µs, which validation refuses, naming it.
    fn think(&self) -> Option<shared::pacing::ThinkTime> {
        let given = self.thinktime.is_some()
            || self.thinktime_spin.is_some()
            || self.thinktime_blocks.is_some()
            || self.thinktime_blocks_type.is_some();
        given.then(|| shared::pacing::ThinkTime {
            us: self.thinktime.unwrap_or(0),
            spin_us: self.thinktime_spin.unwrap_or(0),
            blocks: self.thinktime_blocks.unwrap_or(1),
            count_issued: self.thinktime_blocks_type.as_deref() == Some("issue"),
        })
    }
}

#[derive(Debug, Args)]
pub struct QuickArgs {
    /// Where the scratch file and results live (default: $XDG_DATA_HOME/diskscope or
    /// ~/.local/share/diskscope; also DISKSCOPE_DATA_DIR).
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
    /// Scratch file size.
    #[arg(long, value_parser = size, default_value = "1GiB")]
    pub size: u64,
    /// Time per test.
    #[arg(long, value_parser = duration_ms, default_value = "5s")]
    pub runtime: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn flags_become_a_spec() {
        let cli = Cli::try_parse_from([
            "diskscope",
            "run",
            "--target",
            "/tmp/x",
            "--rw",
            "randrw",
            "--read-pct",
            "70",
            "--bs",
            "16K",
            "--iodepth",
            "32",
            "--runtime",
            "10s",
            "--rate",
            "100MB",
            "--pattern",
            "compress:50",
            "--buffered",
        ])
        .expect("parse");
        let Command::Run(a) = cli.command else {
            panic!("run")
        };
        let s = a.spec();
        assert_eq!(
            (s.rw, s.read_pct, s.bs, s.iodepth),
            (RwMode::RandRw, 70, 16384, 32)
        );
        assert_eq!(s.runtime_ms, Some(10_000));
        assert_eq!(s.rate, Some(Rate::BytesPerSec(100_000_000)));
        assert_eq!(s.pattern, DataPattern::Compress(50));
        assert!(!s.direct);
    }

    #[test]
    fn bad_values_are_named() {
        let e =
            Cli::try_parse_from(["diskscope", "run", "--target", "x", "--bs", "4Q"]).unwrap_err();
        assert!(e.to_string().contains("'4Q'"), "{e}");
        let e = Cli::try_parse_from(["diskscope", "run", "--target", "x", "--rw", "sideways"])
            .unwrap_err();
        assert!(e.to_string().contains("'sideways'"), "{e}");
    }
}
