//! Flags, as clap sees them.

use clap::{Args, Parser, Subcommand};
use shared::units::{parse_duration_ms, parse_size};
use shared::WorkloadSpec;
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
    /// Latency when nobody loads the drive, as ioping measures it: one request every
    /// interval, a line per request, then min/avg/max/mdev and percentiles (-J: ioping's
    /// JSON).
    Probe(super::probe::ProbeArgs),
    /// Does the drive keep what it acknowledged? `write` records each flushed write on a
    /// witness agent; cut the power; `verify` reads back what the witness holds.
    Flushcheck(super::flushcheck::FlushcheckArgs),
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

pub(super) fn size(s: &str) -> Result<u64, String> {
    parse_size(s).map_err(|e| e.to_string())
}

pub(super) fn duration_ms(s: &str) -> Result<u64, String> {
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
    /// The workload's options (one flag per option of `shared::options::OPTIONS`).
    #[command(flatten)]
    pub workload: super::workload_flags::WorkloadFlags,
    /// Run a named sequence instead of one workload: cdm, cdm-peak, atto, orion-matrix,
    /// full-span, iometer-mix, snia-steady, fill, sustain, compress-probe, cache-recovery,
    /// fakecap, error-scan, files (a directory's small files and metadata)
    /// (and the single tests quick, seq1m-q8-read, ...). --size, --runtime, --rate, --bs,
    /// --count, --streams, --idle and --buffer-ms tune it; `sustain` exits 1 when the target
    /// cannot hold the rate.
    #[arg(long)]
    pub preset: Option<String>,
    /// Passes per test (cdm: 5) or maximum rounds (snia-steady: 25).
    #[arg(long)]
    pub count: Option<u32>,
    /// Parallel streams for sustain (the rate is shared among them); for files, its jobs.
    #[arg(long)]
    pub streams: Option<u32>,
    /// files: directories per job (default 1; --count files in each, --bs bytes each).
    #[arg(long)]
    pub dirs: Option<u32>,
    /// files: fsync each file after writing it; flushcheck: fsync instead of fdatasync.
    #[arg(long)]
    pub fsync_each: bool,
    /// files: the phases to run, in their order: mkdir,create,stat,read,delete,rmdir
    /// (default all).
    #[arg(long, value_name = "LIST")]
    pub phases: Option<String>,
    /// files: levels of directories in each job's tree (default 1; --dirs at the top,
    /// --fanout in each directory below, the files in the last level's).
    #[arg(long)]
    pub depth: Option<u32>,
    /// files: directories in each directory above the tree's last level (default 2).
    #[arg(long)]
    pub fanout: Option<u32>,
    /// flushcheck: the witness agent that records each flushed write (e.g.
    /// http://lab-pc:7878); its operator token with --witness-token.
    #[arg(long, value_name = "URL")]
    pub witness: Option<String>,
    /// flushcheck: the witness's operator token (also DISKSCOPE_WITNESS_TOKEN); kept in
    /// memory, never stored with the run.
    #[arg(long, value_name = "TOKEN")]
    pub witness_token: Option<String>,
    /// flushcheck: writes per fdatasync (default 16).
    #[arg(long, value_name = "N")]
    pub flush_every: Option<u32>,
    /// flushcheck: each write O_DSYNC (FUA) instead of an fdatasync every --flush-every.
    #[arg(long)]
    pub dsync: bool,
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
    /// exit code. Given more than once: one run on every agent at a shared start, merged
    /// into one result here (a group run).
    #[arg(long, value_name = "URL")]
    pub agent: Vec<String>,
    /// The agent's operator token (with --agent; also DISKSCOPE_TOKEN); with several
    /// agents, one per --agent in the same order, or one for all.
    #[arg(long)]
    pub token: Vec<String>,
    /// A group's agents from a file: a line per agent, its URL and, after a space, a file
    /// holding its operator token (the token alone, or the agent's tokens.json); without
    /// one, --token or DISKSCOPE_TOKEN. '#' starts a comment.
    #[arg(long, value_name = "FILE")]
    pub agents: Option<PathBuf>,
    /// A group run when one of its agents fails or drops off: the others go on
    /// (continue, the default) or are stopped (stop).
    #[arg(long, value_name = "continue|stop")]
    pub on_fault: Option<String>,
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
    /// The options a preset takes as its knobs when given as flags.
    const PRESET_KNOBS: [&'static str; 7] = [
        "size", "runtime", "rate", "bs", "interval", "verify", "backend",
    ];

    /// The preset's knobs, from the flags given.
    pub fn preset_options(&self) -> shared::PresetOptions {
        let w = &self.workload;
        let s = &w.spec;
        shared::PresetOptions {
            size: s.size,
            count: self.count,
            runtime_ms: s.runtime_ms,
            rate: s.rate,
            streams: self.streams,
            idle_ms: self.idle,
            buffer_ms: self.buffer_ms,
            bs: w.has("bs").then_some(s.bs),
            interval_ms: w.has("interval").then_some(s.interval_ms),
            verify: s.verify.then_some(true),
            p99_us: self.p99,
            dirs: self.dirs,
            fsync: self.fsync_each.then_some(true),
            phases: self.phases.clone(),
            depth: self.depth,
            fanout: self.fanout,
            backend: w.has("backend").then_some(s.backend),
            witness: self.witness.clone(),
            flush_every: self.flush_every,
            dsync: self.dsync.then_some(true),
        }
    }

    /// The witness's token for a flush check: --witness-token, else
    /// DISKSCOPE_WITNESS_TOKEN; none when no --witness was given.
    pub fn witness_token(&self) -> anyhow::Result<Option<String>> {
        let Some(w) = &self.witness else {
            return Ok(None);
        };
        self.witness_token
            .clone()
            .or_else(|| std::env::var("DISKSCOPE_WITNESS_TOKEN").ok())
            .map(Some)
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "--witness {w}: give its operator token (--witness-token or DISKSCOPE_WITNESS_TOKEN)"
                )
            })
    }

    /// Workload flags given on the command line that no preset takes (a preset's own knobs
    /// go through [`RunArgs::preset_options`] and are checked by the preset).
    pub fn flags_presets_ignore(&self) -> Vec<String> {
        self.workload.shown_except(&Self::PRESET_KNOBS)
    }

    /// The workload the flags make.
    pub fn spec(&self) -> WorkloadSpec {
        self.workload.spec.clone()
    }

    /// The sample interval, when given.
    pub fn interval_ms(&self) -> Option<u64> {
        self.workload
            .has("interval")
            .then_some(self.workload.spec.interval_ms)
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
    use shared::{DataPattern, Rate, RwMode};

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
