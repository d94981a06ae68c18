//! The workload a user asks for, and its target-independent validation.
//!
//! [`WorkloadSpec::validate`] is the one validator for every field that can be checked without
//! knowing the target; the browser runs it next to the form and the agent runs it before
//! turning the spec into a plan (where the target-dependent checks follow: block-size
//! alignment, span inside the target).

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Smallest and largest block size accepted.
pub const MIN_BS: u64 = 512;
pub const MAX_BS: u64 = 64 << 20;
pub const MAX_IODEPTH: u32 = 1024;
pub const MAX_JOBS: u32 = 64;
pub const MIN_INTERVAL_MS: u64 = 100;
pub const MAX_INTERVAL_MS: u64 = 60_000;
/// Upper bound on the I/O buffers one job may pin (iodepth × bs × buffer sets).
pub const MAX_JOB_BUFFER_BYTES: u64 = 2 << 30;
/// Longest run time, ramp or idle accepted: 30 days (a soak is a day or a week).
pub const MAX_DURATION_MS: u64 = 30 * 86_400 * 1000;
/// Largest offset, span or transfer accepted: 1 EiB (far beyond any device, far from
/// overflowing the nanosecond and byte arithmetic downstream).
pub const MAX_BYTES: u64 = 1 << 60;
/// Most passes over the span.
pub const MAX_LOOPS: u32 = 1_000_000;
/// Most blocks between interleaved verification passes (`verify_every`).
pub const MAX_VERIFY_EVERY: u64 = 1 << 24;
/// Bytes at the start of a verified block taken by its header and checksum.
pub const VERIFY_HEADER_BYTES: u64 = 48;

/// Direction and order of the I/O.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum RwMode {
    /// Sequential reads.
    #[default]
    Read,
    /// Sequential writes.
    Write,
    RandRead,
    RandWrite,
    /// Random mix of reads and writes (`read_pct` % reads).
    RandRw,
    /// Sequential mix of reads and writes (`read_pct` % reads).
    Rw,
    /// Sequential trims (discards): `BLKDISCARD` on a block device, a punched hole in a
    /// file. Destructive, as writes are.
    Trim,
    RandTrim,
    /// Each block trimmed, then written (fio's `trimwrite`), sequentially.
    TrimWrite,
    /// Each block trimmed, then written, at random offsets (fio's `randtrimwrite`).
    RandTrimWrite,
}

impl RwMode {
    pub const ALL: [RwMode; 10] = [
        RwMode::Read,
        RwMode::Write,
        RwMode::RandRead,
        RwMode::RandWrite,
        RwMode::RandRw,
        RwMode::Rw,
        RwMode::Trim,
        RwMode::RandTrim,
        RwMode::TrimWrite,
        RwMode::RandTrimWrite,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            RwMode::Read => "read",
            RwMode::Write => "write",
            RwMode::RandRead => "randread",
            RwMode::RandWrite => "randwrite",
            RwMode::RandRw => "randrw",
            RwMode::Rw => "rw",
            RwMode::Trim => "trim",
            RwMode::RandTrim => "randtrim",
            RwMode::TrimWrite => "trimwrite",
            RwMode::RandTrimWrite => "randtrimwrite",
        }
    }

    pub fn is_random(self) -> bool {
        matches!(
            self,
            RwMode::RandRead
                | RwMode::RandWrite
                | RwMode::RandRw
                | RwMode::RandTrim
                | RwMode::RandTrimWrite
        )
    }

    /// Whether the workload trims; with [`RwMode::then_writes`] each trim is followed by a
    /// write of the same block.
    pub fn trims(self) -> bool {
        matches!(
            self,
            RwMode::Trim | RwMode::RandTrim | RwMode::TrimWrite | RwMode::RandTrimWrite
        )
    }

    /// A trim-then-write workload (`trimwrite`, `randtrimwrite`).
    pub fn then_writes(self) -> bool {
        matches!(self, RwMode::TrimWrite | RwMode::RandTrimWrite)
    }

    pub fn is_mixed(self) -> bool {
        matches!(self, RwMode::RandRw | RwMode::Rw)
    }

    /// Share of reads in percent, given the spec's mix setting (0 for trims: they change
    /// the target as writes do, and take the same care).
    pub fn read_pct(self, mix_read_pct: u8) -> u8 {
        match self {
            RwMode::Read | RwMode::RandRead => 100,
            RwMode::Write | RwMode::RandWrite => 0,
            RwMode::Trim | RwMode::RandTrim | RwMode::TrimWrite | RwMode::RandTrimWrite => 0,
            RwMode::RandRw | RwMode::Rw => mix_read_pct,
        }
    }
}

impl fmt::Display for RwMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for RwMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        RwMode::ALL
            .into_iter()
            .find(|m| m.as_str() == s)
            .ok_or_else(|| {
                format!(
                    "invalid rw '{s}': expected read, write, randread, randwrite, randrw, rw, \
                     trim, randtrim, trimwrite or randtrimwrite"
                )
            })
    }
}

/// What the written blocks contain. Results always state it: compressing controllers score
/// up to 1.5× higher on zeros than on random data.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum DataPattern {
    /// Fresh, incompressible data for every write.
    #[default]
    Random,
    /// All zero bytes.
    Zeros,
    /// N % of each block compressible (zeros), the rest random.
    Compress(u8),
}

impl fmt::Display for DataPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DataPattern::Random => f.write_str("random"),
            DataPattern::Zeros => f.write_str("zeros"),
            DataPattern::Compress(n) => write!(f, "compress:{n}"),
        }
    }
}

impl FromStr for DataPattern {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let err =
            || format!("invalid pattern '{s}': expected random, zeros or compress:N (N 0..100)");
        match s {
            "random" => Ok(DataPattern::Random),
            "zeros" | "zero" => Ok(DataPattern::Zeros),
            _ => {
                let n = s.strip_prefix("compress:").ok_or_else(err)?;
                let n: u8 = n.parse().map_err(|_| err())?;
                if n > 100 {
                    return Err(err());
                }
                Ok(DataPattern::Compress(n))
            }
        }
    }
}

/// A rate cap over the whole run (all jobs together).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Rate {
    BytesPerSec(u64),
    Iops(u64),
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rate::BytesPerSec(b) => write!(f, "{b} B/s"),
            Rate::Iops(n) => write!(f, "{n} IOPS"),
        }
    }
}

impl FromStr for Rate {
    type Err = String;
    /// `200MB` (bytes per second) or `5000iops`.
    fn from_str(s: &str) -> Result<Self, String> {
        let t = s.trim();
        if let Some(n) = t.strip_suffix("iops").or_else(|| t.strip_suffix("IOPS")) {
            return n
                .trim()
                .parse()
                .map(Rate::Iops)
                .map_err(|_| format!("invalid rate '{s}': expected e.g. 5000iops or 200MB"));
        }
        let t = t.strip_suffix("/s").unwrap_or(t);
        crate::units::parse_size(t)
            .map(Rate::BytesPerSec)
            .map_err(|_| {
                format!("invalid rate '{s}': expected e.g. 200MB (per second) or 5000iops")
            })
    }
}

/// Which I/O backend runs the workload.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// io_uring with fixed buffers and registered files (falls back to `sync` when io_uring
    /// cannot be set up; the report says so).
    #[default]
    Uring,
    /// Completes every I/O at once without touching a device: measures engine overhead.
    Null,
    /// pread/pwrite, one I/O at a time per job.
    Sync,
    /// Linux AIO (io_submit/io_getevents), fio's libaio: buffered I/O completes inside the
    /// submit.
    Aio,
    /// An io_uring ring of no-op requests (`IORING_OP_NOP`) and no device: the engine's own
    /// cost through the kernel's ring, where `null` skips the ring.
    Nop,
}

impl Backend {
    pub fn as_str(self) -> &'static str {
        match self {
            Backend::Uring => "uring",
            Backend::Null => "null",
            Backend::Sync => "sync",
            Backend::Aio => "aio",
            Backend::Nop => "nop",
        }
    }

    /// Whether the backend leaves the target alone (its path is only a label).
    pub fn opens_nothing(self) -> bool {
        matches!(self, Backend::Null | Backend::Nop)
    }

    /// Whether I/O goes through an io_uring ring.
    pub fn is_ring(self) -> bool {
        matches!(self, Backend::Uring | Backend::Nop)
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Backend {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "uring" | "io_uring" => Ok(Backend::Uring),
            "null" => Ok(Backend::Null),
            "sync" | "psync" => Ok(Backend::Sync),
            "aio" | "libaio" => Ok(Backend::Aio),
            "nop" => Ok(Backend::Nop),
            _ => Err(format!(
                "invalid backend '{s}': expected uring, sync, aio, null or nop"
            )),
        }
    }
}

/// A workload as the user describes it (CLI flags, API body, dashboard form).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields, default)]
pub struct WorkloadSpec {
    pub rw: RwMode,
    /// Share of reads in mixed modes (`randrw`, `rw`), in percent.
    pub read_pct: u8,
    /// Block size in bytes.
    #[serde(deserialize_with = "crate::lenient::bytes")]
    #[cfg_attr(
        feature = "schema",
        schemars(schema_with = "crate::lenient::schema::bytes")
    )]
    pub bs: u64,
    pub iodepth: u32,
    /// I/Os handed to the kernel in one call (fio's `iodepth_batch_submit`): 1 sends each
    /// on its own as soon as its slot is free; N queues up to N before one `io_uring_enter`.
    pub iodepth_batch: u32,
    /// Completions a round waits for before it refills (fio's `iodepth_batch_complete_min`,
    /// at most what is in flight); 0 never sleeps: it polls the completion queue.
    pub iodepth_batch_complete_min: u32,
    /// The most completions a round reaps before it refills (fio's
    /// `iodepth_batch_complete_max`); 0: every ready one.
    pub iodepth_batch_complete_max: u32,
    /// Parallel jobs, each its own thread and ring. Sequential jobs split the span
    /// (fio's `offset_increment`); random jobs share it.
    pub jobs: u32,
    /// Start of the span on the target, in bytes.
    #[serde(deserialize_with = "crate::lenient::bytes")]
    #[cfg_attr(
        feature = "schema",
        schemars(schema_with = "crate::lenient::schema::bytes")
    )]
    pub offset: u64,
    /// Each job's own region (fio's `offset_increment`): job N's span starts at
    /// `offset + N × offset_increment` and is `size` long (0: every job covers the whole
    /// span, as fio's jobs do by default); every job then does `size × loops`
    /// (or its share of `io_size`). `None`: jobs split or share one span.
    #[serde(deserialize_with = "crate::lenient::opt_bytes")]
    #[cfg_attr(
        feature = "schema",
        schemars(schema_with = "crate::lenient::schema::opt_bytes")
    )]
    pub offset_increment: Option<u64>,
    /// Length of the span; `None` means from `offset` to the end of the target.
    #[serde(deserialize_with = "crate::lenient::opt_bytes")]
    #[cfg_attr(
        feature = "schema",
        schemars(schema_with = "crate::lenient::schema::opt_bytes")
    )]
    pub size: Option<u64>,
    /// Total bytes to transfer (all jobs); `None` means `size × loops` unless time-based.
    #[serde(deserialize_with = "crate::lenient::opt_bytes")]
    #[cfg_attr(
        feature = "schema",
        schemars(schema_with = "crate::lenient::schema::opt_bytes")
    )]
    pub io_size: Option<u64>,
    /// Passes over the span for size-based runs.
    pub loops: u32,
    /// Run time after the ramp. When set without `io_size`, the run is time-based and
    /// repeats over the span until the time is up.
    #[serde(deserialize_with = "crate::lenient::opt_ms")]
    #[cfg_attr(
        feature = "schema",
        schemars(schema_with = "crate::lenient::schema::opt_ms")
    )]
    pub runtime_ms: Option<u64>,
    /// Time run before statistics start (excluded from samples and summary).
    #[serde(deserialize_with = "crate::lenient::ms")]
    #[cfg_attr(
        feature = "schema",
        schemars(schema_with = "crate::lenient::schema::ms")
    )]
    pub ramp_ms: u64,
    #[serde(deserialize_with = "crate::lenient::opt_rate")]
    #[cfg_attr(
        feature = "schema",
        schemars(schema_with = "crate::lenient::schema::opt_rate")
    )]
    pub rate: Option<Rate>,
    /// A floor: the run fails when a direction it does I/O in runs below this over a sample
    /// interval (fio's `rate_min` / `rate_iops_min`; the jobs together, as `rate`).
    #[serde(deserialize_with = "crate::lenient::opt_rate")]
    #[cfg_attr(
        feature = "schema",
        schemars(schema_with = "crate::lenient::schema::opt_rate")
    )]
    pub rate_min: Option<Rate>,
    /// Ends the run as done once its IOPS or bandwidth is steady over a rolling window
    /// (fio's `steadystate`, `ss_dur`, `ss_ramp`).
    pub steady: Option<crate::steady::SteadyRule>,
    /// Each job searches for the deepest queue (up to `iodepth`) whose I/Os meet a latency
    /// target (fio's `latency_target`, `latency_window`, `latency_percentile`); the job
    /// ends after its final window.
    pub latency_target: Option<crate::qd_search::LatencyRule>,
    pub pattern: DataPattern,
    /// Random offsets visit every block of the span exactly once before repeating
    /// (like fio's random map); otherwise uniform with repetition.
    pub cover_once: bool,
    /// O_DIRECT (bypass the page cache). On by default.
    pub direct: bool,
    /// fsync the target at the end of each job (the time counts in the run).
    pub end_fsync: bool,
    /// Sample interval.
    #[serde(deserialize_with = "crate::lenient::ms")]
    #[cfg_attr(
        feature = "schema",
        schemars(schema_with = "crate::lenient::schema::ms")
    )]
    pub interval_ms: u64,
    pub backend: Backend,
    /// Seed for random offsets and data; the same seed gives the same offset sequence.
    pub seed: u64,
    /// Every written block carries a header (offset, run, generation, sequence) and a
    /// CRC32C; after the writes every written block is read back and classified (corrupt,
    /// misplaced, stale, unwritten). Random offsets then cover each block once per pass.
    pub verify: bool,
    /// Also read back and check every N written blocks of a job during the run
    /// (`--verify-every N`; the reads count as reads in the samples).
    pub verify_every: Option<u64>,
    /// Error scan: a failed I/O (EIO, short) is counted and mapped instead of ending the
    /// run, and every I/O lands in a map of cells by position (`analysis.scan`).
    pub scan: bool,
    /// An I/O at least this slow is a slow one in the scan's map (default 200 ms).
    #[serde(deserialize_with = "crate::lenient::opt_ms")]
    #[cfg_attr(
        feature = "schema",
        schemars(schema_with = "crate::lenient::schema::opt_ms")
    )]
    pub scan_slow_ms: Option<u64>,
    /// How random offsets are drawn: uniform (default), zipf:THETA, pareto:H, normal:SIGMA.
    pub random_distribution: crate::access::Distribution,
    /// The writes' own zones in a random workload (fio's `zoned:READS,WRITES`); `None`: the
    /// writes' offsets are drawn as the reads' (`random_distribution`).
    pub write_random_distribution: Option<crate::access::Distribution>,
    /// Random modes: this percentage of I/Os continue where the previous one ended (a
    /// sequential run inside a random workload); the rest are drawn.
    pub seq_pct: u8,
    /// Replay a recorded trace instead of generating I/O: its offsets, lengths, directions
    /// and (recorded timing) times; `rw` and `bs` follow from the trace.
    pub replay: Option<crate::replay::ReplaySpec>,
    /// Small files instead of I/O on one target (`--preset files`): the target is a
    /// directory, each I/O one operation of the phase. (Not in the wasm build.)
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg(not(target_arch = "wasm32"))]
    pub files: Option<crate::files::FilesSpec>,
    /// One request every interval instead of a queue kept full (`diskscope probe`, the
    /// `probe` preset), as ioping makes them. (Not in the wasm build.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg(not(target_arch = "wasm32"))]
    pub probe: Option<crate::probe::ProbeSpec>,
    /// A flush check's writer (`--preset flushcheck`): verified blocks one at a time, each
    /// flushed write recorded on a witness agent before the next. (Not in the wasm build.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg(not(target_arch = "wasm32"))]
    pub flushcheck: Option<crate::flushcheck::WriterSpec>,
    /// How `rate` spaces the I/Os: evenly (default) or as Poisson arrivals.
    pub rate_process: crate::pacing::RateProcess,
    /// A pause after every few I/Os (fio's thinktime).
    pub think: Option<crate::pacing::ThinkTime>,
    /// A mix of I/O sizes (fio's bssplit); `bs` is then its smallest size, the offsets'
    /// alignment.
    pub bssplit: Option<crate::bssplit::BsSplit>,
    /// The writes' own sizes in a random mix (fio's `bs=READ,WRITE` or
    /// `bssplit=READS,WRITES`): one size is a split of one (`64K/100`). `bs`, `bssplit`
    /// and `bs_max` are then the reads'; each direction's offsets are aligned to its own
    /// smallest size.
    pub write_bssplit: Option<crate::bssplit::BsSplit>,
    /// A range of I/O sizes (fio's `bsrange=bs-bs_max`): each I/O's length is drawn as fio
    /// draws it, uniformly over the multiples of `bs` up to `bs_max` (`bs_max` itself when
    /// it is not one); offsets stay aligned to `bs`.
    #[serde(deserialize_with = "crate::lenient::opt_bytes")]
    #[cfg_attr(
        feature = "schema",
        schemars(schema_with = "crate::lenient::schema::opt_bytes")
    )]
    pub bs_max: Option<u64>,
    /// Random offsets aligned to this many bytes instead of `bs` (fio's `blockalign`):
    /// a 64K I/O may then start at any 4K boundary.
    #[serde(deserialize_with = "crate::lenient::opt_bytes")]
    #[cfg_attr(
        feature = "schema",
        schemars(schema_with = "crate::lenient::schema::opt_bytes")
    )]
    pub block_align: Option<u64>,
    /// A flush after every N writes (fio's fsync=N / fdatasync=N).
    pub flush: Option<crate::durability::Flush>,
    /// Writes durable on their own: the target opened O_SYNC or O_DSYNC (fio's sync=).
    pub write_sync: crate::durability::WriteSync,
    /// The CPUs the jobs may run on, as fio writes them (`cpus_allowed=0-3,6`); the agent
    /// reads and checks the list against its host. `None`: wherever the agent may.
    pub cpus_allowed: Option<String>,
    /// All jobs on all of them, or each job on one in turn (fio's `cpus_allowed_policy`).
    pub cpus_allowed_policy: CpuPolicy,
    /// What the I/O buffers are made of (fio's `iomem`): huge pages by default, 4 KiB pages
    /// as fio's own default. A large I/O from 4 KiB pages is many segments, which a device
    /// may have to split: the memory changes the result, so a comparison uses the same.
    pub iomem: BufferMemory,
    /// Buffered I/O: drop the target's cached pages at the start and each job's span at
    /// every new pass (fio's `invalidate=1`, the default); `false` measures what the page
    /// cache holds.
    pub invalidate: bool,
    /// The access hint given to the kernel for each job's open file (fio's `fadvise_hint`):
    /// by the workload's pattern by default, as fio does; it sets the page cache's
    /// read-ahead of buffered I/O (none for random, doubled for sequential).
    pub fadvise_hint: FadviseHint,
    /// io_uring's submission queue polled by a kernel thread (fio's `sqthread_poll`): I/O
    /// reaches the kernel without a system call while that thread is awake.
    pub sqpoll: bool,
    /// The CPU the polling thread is bound to (fio's `sqthread_poll_cpu`); needs `sqpoll`.
    pub sqpoll_cpu: Option<u32>,
    /// Buffered I/O that leaves nothing in the page cache (`RWF_DONTCACHE`, fio's
    /// `uncached`): each I/O's pages are dropped once done. Kernel 6.14+, where the
    /// filesystem or device supports it.
    pub uncached: bool,
    /// Writes that reach the media whole or not at all (`RWF_ATOMIC`, fio's `atomic`):
    /// O_DIRECT, each write within the target's atomic write unit limits.
    pub atomic: bool,
    /// io_uring: every Nth I/O marked `IOSQE_ASYNC` (fio's `force_async`; 0: none), handed
    /// to the kernel's workers without the inline attempt that a device which cannot take
    /// I/O without blocking (zram, loop) always fails first.
    pub force_async: u32,
    /// Polled completions (io_uring's `IORING_SETUP_IOPOLL`, fio's `hipri`): the job polls
    /// the device's poll queues instead of waiting for an interrupt. O_DIRECT on a device
    /// with poll queues.
    pub hipri: bool,
    /// io_uring: the I/O buffers registered with the ring (fio's `fixedbufs`), so the kernel
    /// does not map them for every I/O. On by default.
    pub fixed_buffers: bool,
    /// io_uring: the target registered with the ring (fio's `registerfiles`), so the kernel
    /// does not look the descriptor up for every I/O. On by default.
    pub registered_file: bool,
    /// io_uring: the ring's own descriptor registered, so no system call looks it up. On by
    /// default.
    pub registered_ring: bool,
}

/// The `posix_fadvise` access hint of a job's file (fio's `fadvise_hint`).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum FadviseHint {
    /// RANDOM for a random pattern, SEQUENTIAL otherwise (fio's default, `1` or `type`).
    #[default]
    Type,
    /// No hint (fio's `0`): the kernel's own read-ahead.
    None,
    Random,
    Sequential,
}

impl fmt::Display for FadviseHint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FadviseHint::Type => "type",
            FadviseHint::None => "none",
            FadviseHint::Random => "random",
            FadviseHint::Sequential => "sequential",
        })
    }
}

impl FromStr for FadviseHint {
    type Err = String;
    /// fio's words: `type` or `1`, `none` or `0`, `random`, `sequential`, `normal`.
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim() {
            "type" | "1" => Ok(FadviseHint::Type),
            "none" | "0" => Ok(FadviseHint::None),
            "random" => Ok(FadviseHint::Random),
            "sequential" => Ok(FadviseHint::Sequential),
            _ => Err(format!(
                "invalid fadvise hint '{s}': expected type, none, random or sequential (or fio's 1, 0)"
            )),
        }
    }
}

/// What the I/O buffers are made of (fio's `iomem`).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum BufferMemory {
    /// 2 MiB transparent huge pages where the kernel gives them (fio's `iomem=mmaphuge`).
    #[default]
    Huge,
    /// 4 KiB pages (fio's default, `iomem=malloc`).
    Pages,
}

impl fmt::Display for BufferMemory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BufferMemory::Huge => "huge",
            BufferMemory::Pages => "pages",
        })
    }
}

impl FromStr for BufferMemory {
    type Err = String;
    /// `huge` or `pages`, or fio's names: `mmaphuge`/`shmhuge` (with or without `:FILE`)
    /// are huge pages; `malloc`, `mmap`, `shm`, `mmapshared` are 4 KiB pages.
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().split(':').next().unwrap_or("") {
            "huge" | "mmaphuge" | "shmhuge" => Ok(BufferMemory::Huge),
            "pages" | "malloc" | "mmap" | "shm" | "mmapshared" => Ok(BufferMemory::Pages),
            _ => Err(format!(
                "invalid buffer memory '{s}': expected huge or pages (fio's mmaphuge, shmhuge, malloc, mmap, shm)"
            )),
        }
    }
}

/// Most milliseconds an error scan's slow threshold can be.
pub const MAX_SCAN_SLOW_MS: u64 = 600_000;

impl Default for WorkloadSpec {
    fn default() -> Self {
        WorkloadSpec {
            rw: RwMode::Read,
            read_pct: 50,
            bs: 4096,
            iodepth: 1,
            iodepth_batch: 1,
            iodepth_batch_complete_min: 1,
            iodepth_batch_complete_max: 0,
            jobs: 1,
            offset: 0,
            offset_increment: None,
            size: None,
            io_size: None,
            loops: 1,
            runtime_ms: None,
            ramp_ms: 0,
            rate: None,
            rate_min: None,
            steady: None,
            latency_target: None,
            pattern: DataPattern::Random,
            cover_once: false,
            direct: true,
            end_fsync: false,
            interval_ms: 1000,
            backend: Backend::Uring,
            seed: 0x0005_eedd_15c5_c09e,
            verify: false,
            verify_every: None,
            scan: false,
            scan_slow_ms: None,
            random_distribution: crate::access::Distribution::Uniform,
            write_random_distribution: None,
            seq_pct: 0,
            replay: None,
            #[cfg(not(target_arch = "wasm32"))]
            files: None,
            #[cfg(not(target_arch = "wasm32"))]
            probe: None,
            #[cfg(not(target_arch = "wasm32"))]
            flushcheck: None,
            rate_process: crate::pacing::RateProcess::Linear,
            think: None,
            bssplit: None,
            write_bssplit: None,
            bs_max: None,
            block_align: None,
            flush: None,
            write_sync: crate::durability::WriteSync::None,
            cpus_allowed: None,
            cpus_allowed_policy: CpuPolicy::Shared,
            iomem: BufferMemory::Huge,
            fadvise_hint: FadviseHint::Type,
            sqpoll: false,
            sqpoll_cpu: None,
            force_async: 0,
            uncached: false,
            atomic: false,
            hipri: false,
            invalidate: true,
            fixed_buffers: true,
            registered_file: true,
            registered_ring: true,
        }
    }
}

/// How the jobs share the CPUs (fio's `cpus_allowed_policy`).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum CpuPolicy {
    /// Every job may run on any of them.
    #[default]
    Shared,
    /// Each job on one of them, in turn.
    Split,
}

impl fmt::Display for CpuPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CpuPolicy::Shared => "shared",
            CpuPolicy::Split => "split",
        })
    }
}

impl std::str::FromStr for CpuPolicy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "shared" => Ok(CpuPolicy::Shared),
            "split" => Ok(CpuPolicy::Split),
            _ => Err(format!("'{s}': expected shared or split")),
        }
    }
}

/// One problem with a spec: which field, the offending value, and why.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[error("{field} = {value}: {message}")]
pub struct SpecError {
    pub field: String,
    pub value: String,
    pub message: String,
}

impl SpecError {
    pub fn new(field: &str, value: impl fmt::Display, message: impl Into<String>) -> Self {
        SpecError {
            field: field.to_string(),
            value: value.to_string(),
            message: message.into(),
        }
    }
}

impl WorkloadSpec {
    /// The workload in one line, as the dashboard shows it:
    /// `randread 4 KiB QD4×1 · random · O_DIRECT` (`O_DIRECT+O_DSYNC` with synchronous
    /// writes, ` · fsync/8` with flushes, ` · cap 500MB/s` with a rate cap).
    pub fn label(&self) -> String {
        format!(
            "{} · {} · {}{}{}{}",
            self.shape(),
            self.pattern,
            if self.direct { "O_DIRECT" } else { "buffered" },
            match self.write_sync {
                crate::durability::WriteSync::None => String::new(),
                s => format!("+{}", s.flag_name()),
            },
            self.flush.map(|f| format!(" · {f}")).unwrap_or_default(),
            self.rate.map(|r| format!(" · cap {r}")).unwrap_or_default()
        )
    }

    /// Direction, block size, depth and jobs: `randread 4 KiB QD4×1`.
    pub fn shape(&self) -> String {
        let bs = crate::units::format_bytes(self.bs);
        let bs = match self.bs_max {
            Some(max) => format!("{bs}-{}", crate::units::format_bytes(max)),
            None => bs,
        };
        format!("{} {bs} QD{}×{}", self.rw, self.iodepth, self.jobs)
    }

    /// Whether the run ends by time rather than by volume.
    pub fn is_time_based(&self) -> bool {
        self.runtime_ms.is_some() && self.io_size.is_none()
    }

    /// Buffer sets per job: mixed workloads (and writes checked as they go, `verify_every`)
    /// keep separate read and write buffers so that data read back never ends up in a write.
    pub fn buffer_sets(&self) -> u64 {
        if self.rw.is_mixed() || self.verify_every.is_some() {
            2
        } else {
            1
        }
    }

    /// Checks every field that can be checked without the target. Returns all problems.
    pub fn validate(&self) -> Result<(), Vec<SpecError>> {
        let mut errs = Vec::new();
        let mut bad = |field: &str, value: &dyn fmt::Display, msg: String| {
            errs.push(SpecError::new(field, value, msg))
        };
        self.check_shape(&mut bad);
        self.check_fast_paths(&mut bad);
        self.check_span(&mut bad);
        self.check_timing(&mut bad);
        self.check_verify(&mut bad);
        self.check_scan(&mut bad);
        self.check_access(&mut bad);
        self.check_replay(&mut bad);
        self.check_durability(&mut bad);
        self.check_trims(&mut bad);
        #[cfg(not(target_arch = "wasm32"))]
        if let Some(f) = &self.files {
            for (field, value, msg) in f.check(self.jobs) {
                bad(field, &value, msg);
            }
            if !matches!(self.backend, Backend::Sync | Backend::Uring) {
                bad(
                    "backend",
                    &self.backend,
                    "the files workload runs its operations through io_uring (uring) or as plain system calls (sync)"
                        .into(),
                );
            }
        }
        #[cfg(not(target_arch = "wasm32"))]
        if let Some(p) = &self.probe {
            for (field, value, msg) in p.check() {
                bad(field, &value, msg);
            }
            if self.files.is_some() || self.replay.is_some() || self.jobs != 1 {
                bad(
                    "probe",
                    &"set",
                    "a probe is one job making one request at a time: no files, replay or jobs"
                        .into(),
                );
            }
        }
        #[cfg(not(target_arch = "wasm32"))]
        if let Some(w) = &self.flushcheck {
            self.check_flushcheck(w, &mut bad);
        }
        if let Some(rule) = &self.latency_target {
            self.check_latency_target(rule, &mut bad);
        }
        if self.cpus_allowed.is_none() && self.cpus_allowed_policy != CpuPolicy::Shared {
            bad(
                "cpus_allowed_policy",
                &self.cpus_allowed_policy,
                "needs cpus_allowed".into(),
            );
        }
        if errs.is_empty() {
            Ok(())
        } else {
            Err(errs)
        }
    }

    /// io_uring's and the kernel's fast paths: SQPOLL, polled completion, the per-I/O
    /// flags; each needs the backend and the I/O kind it applies to.
    fn check_fast_paths(&self, bad: &mut dyn FnMut(&str, &dyn fmt::Display, String)) {
        for (off, name) in [
            (!self.fixed_buffers, "fixed_buffers"),
            (!self.registered_file, "registered_file"),
            (!self.registered_ring, "registered_ring"),
        ] {
            if off && !self.backend.is_ring() {
                bad(
                    name,
                    &false,
                    format!(
                        "a registration with io_uring, which the {} backend does not use",
                        self.backend
                    ),
                );
            }
        }
        if self.force_async > 0 && !self.backend.is_ring() {
            bad(
                "force_async",
                &self.force_async,
                format!(
                    "IOSQE_ASYNC marks io_uring's requests, not the {} backend's",
                    self.backend
                ),
            );
        }
        if self.sqpoll && !self.backend.is_ring() {
            bad(
                "sqpoll",
                &true,
                format!(
                    "a polled submission queue is io_uring's, not the {} backend's",
                    self.backend
                ),
            );
        }
        let queued = matches!(self.backend, Backend::Uring | Backend::Aio);
        if self.uncached && self.direct {
            bad(
                "uncached",
                &true,
                "RWF_DONTCACHE is buffered I/O's (O_DIRECT leaves the page cache alone already): add --buffered".into(),
            );
        } else if self.uncached && !queued {
            bad(
                "uncached",
                &true,
                format!("RWF_DONTCACHE is passed with each I/O by the uring and aio backends, not the {} backend", self.backend),
            );
        }
        if self.atomic {
            if !self.direct {
                bad("atomic", &true, "RWF_ATOMIC needs O_DIRECT".into());
            } else if !queued {
                bad(
                    "atomic",
                    &true,
                    format!("RWF_ATOMIC is passed with each write by the uring and aio backends, not the {} backend", self.backend),
                );
            } else if self.rw.read_pct(self.read_pct) == 100 {
                bad(
                    "atomic",
                    &true,
                    "atomic writes need a workload that writes".into(),
                );
            }
        }
        if self.hipri && !self.direct {
            bad("hipri", &true, "polled completion needs O_DIRECT".into());
        } else if self.hipri && self.backend != Backend::Uring {
            bad(
                "hipri",
                &true,
                format!(
                    "polled completion is io_uring's, not the {} backend's",
                    self.backend
                ),
            );
        }
        if let (Some(cpu), false) = (self.sqpoll_cpu, self.sqpoll) {
            bad("sqpoll_cpu", &cpu, "needs sqpoll".into());
        }
    }

    /// Block size, depth, jobs, mix, data pattern, backend and buffer memory.
    fn check_shape(&self, bad: &mut dyn FnMut(&str, &dyn fmt::Display, String)) {
        if !(MIN_BS..=MAX_BS).contains(&self.bs) {
            bad(
                "bs",
                &self.bs,
                format!("block size must be {MIN_BS} B..64 MiB"),
            );
        } else if self.direct && !self.bs.is_multiple_of(MIN_BS) {
            bad("bs", &self.bs, "with O_DIRECT the block size must be a multiple of 512 (use --buffered for odd sizes)".into());
        }
        if !(1..=MAX_IODEPTH).contains(&self.iodepth) {
            bad(
                "iodepth",
                &self.iodepth,
                format!("must be 1..{MAX_IODEPTH}"),
            );
        }
        // The batch sizes are judged against a valid depth only.
        let depth_ok = (1..=MAX_IODEPTH).contains(&self.iodepth);
        if depth_ok && !(1..=self.iodepth).contains(&self.iodepth_batch) {
            bad(
                "iodepth_batch",
                &self.iodepth_batch,
                format!("must be 1..iodepth ({})", self.iodepth),
            );
        }
        if depth_ok && self.iodepth_batch_complete_min > self.iodepth {
            bad(
                "iodepth_batch_complete_min",
                &self.iodepth_batch_complete_min,
                format!("must be 0..iodepth ({})", self.iodepth),
            );
        }
        let max = self.iodepth_batch_complete_max;
        if depth_ok && (max > self.iodepth || (max > 0 && max < self.iodepth_batch_complete_min)) {
            bad(
                "iodepth_batch_complete_max",
                &max,
                format!(
                    "must be 0 (every ready one) or iodepth_batch_complete_min ({})..iodepth ({})",
                    self.iodepth_batch_complete_min, self.iodepth
                ),
            );
        }
        if !(1..=MAX_JOBS).contains(&self.jobs) {
            bad("jobs", &self.jobs, format!("must be 1..{MAX_JOBS}"));
        }
        if self.read_pct > 100 {
            bad("read_pct", &self.read_pct, "must be 0..100".into());
        }
        if let DataPattern::Compress(n) = self.pattern {
            if n > 100 {
                bad(
                    "pattern",
                    &self.pattern,
                    "compress:N needs N in 0..100".into(),
                );
            }
        }
        if self.backend == Backend::Sync && self.iodepth > 1 {
            bad(
                "iodepth",
                &self.iodepth,
                "the sync backend issues one I/O at a time per job: use iodepth 1 or more jobs"
                    .into(),
            );
        }
        let buffers = u64::from(self.iodepth)
            .saturating_mul(self.buffer_bs())
            .saturating_mul(self.buffer_sets());
        if buffers > MAX_JOB_BUFFER_BYTES {
            bad(
                "iodepth",
                &self.iodepth,
                format!(
                    "iodepth {} × bs {} needs {} MiB of buffers per job (limit 2048 MiB)",
                    self.iodepth,
                    self.buffer_bs(),
                    buffers >> 20
                ),
            );
        }
        self.check_bssplit(bad);
    }

    /// A size mix or range: sizes within the block size limits, `bs` the smallest, and
    /// none of what needs one block size (verification headers, the random map, the scan's
    /// cells, a replay's own sizes).
    fn check_bssplit(&self, bad: &mut dyn FnMut(&str, &dyn fmt::Display, String)) {
        if let Some(split) = &self.bssplit {
            if let Err(why) = split.check(MIN_BS, MAX_BS, self.direct) {
                bad("bssplit", split, why);
            }
            if self.bs != split.min() {
                bad(
                    "bs",
                    &self.bs,
                    format!(
                        "with bssplit, bs is its smallest size ({} B), the offsets' alignment",
                        split.min()
                    ),
                );
            }
        }
        if let Some(max) = self.bs_max {
            if self.bssplit.is_some() {
                bad(
                    "bs_max",
                    &max,
                    "a range of sizes or a split (bssplit), not both".into(),
                );
            }
            if max <= self.bs || max > MAX_BS {
                bad(
                    "bs_max",
                    &max,
                    format!(
                        "the range's largest size must be above bs ({} B) and at most 64 MiB",
                        self.bs
                    ),
                );
            } else if self.direct && !max.is_multiple_of(MIN_BS) {
                bad(
                    "bs_max",
                    &max,
                    "with O_DIRECT every size must be a multiple of 512".into(),
                );
            }
        }
        if let Some(a) = self.block_align {
            if !self.rw.is_random() || a == 0 || a > MAX_BS || (self.direct && a % MIN_BS != 0) {
                bad(
                    "block_align",
                    &a,
                    "random modes only; 1 B..64 MiB, with O_DIRECT a multiple of 512".into(),
                );
            }
        }
        self.check_write_sizes(bad);
        let mixed = match (&self.bssplit, self.bs_max, self.block_align) {
            (Some(_), _, _) => "bssplit",
            (None, Some(_), _) => "a range of sizes (bs_max)",
            (None, None, Some(_)) => "block_align",
            (None, None, None) if self.write_bssplit.is_some() => "write_bssplit",
            (None, None, None) => return,
        };
        for (field, on) in [
            ("verify", self.verify),
            ("cover_once", self.cover_once),
            ("scan", self.scan),
            ("replay", self.replay.is_some()),
        ] {
            if on {
                bad(
                    field,
                    &"true",
                    format!("needs one block size: not with {mixed}"),
                );
            }
        }
    }

    /// A latency target: a valid rule, on a workload that can change its depth and runs
    /// until the search ends (not a replay, a verified or scanning run, the sync backend).
    fn check_latency_target(
        &self,
        rule: &crate::qd_search::LatencyRule,
        bad: &mut dyn FnMut(&str, &dyn fmt::Display, String),
    ) {
        let shown = format!("{}us", rule.target_us);
        if let Err(why) = rule.check() {
            bad("latency_target", &shown, why);
        }
        for (with, on) in [
            ("replay", self.replay.is_some()),
            ("verify", self.verify),
            ("scan", self.scan),
            ("backend sync", self.backend == Backend::Sync),
        ] {
            if on {
                bad(
                    "latency_target",
                    &shown,
                    format!("not with {with}: the search changes the queue depth and ends the job"),
                );
            }
        }
    }

    /// The writes' own sizes: within the block size limits, and only in a random mix (not
    /// in a sequential one, whose directions each keep their own position), never with
    /// `block_align` (each direction is aligned to its own smallest size).
    fn check_write_sizes(&self, bad: &mut dyn FnMut(&str, &dyn fmt::Display, String)) {
        let Some(w) = &self.write_bssplit else {
            return;
        };
        if let Err(why) = w.check(MIN_BS, MAX_BS, self.direct) {
            bad("write_bssplit", w, why);
        }
        let pct = self.rw.read_pct(self.read_pct);
        if !self.rw.is_random() || pct == 0 || pct == 100 {
            bad(
                "write_bssplit",
                w,
                "the writes' own sizes need a random mix of reads and writes (randrw, read_pct 1..99); give a write workload's sizes as bs or bssplit".into(),
            );
        }
        if let Some(a) = self.block_align {
            bad(
                "block_align",
                &a,
                "not with write_bssplit: each direction is aligned to its own smallest size".into(),
            );
        }
    }

    /// Bytes of one I/O buffer: the block size, or the largest of a size mix or range
    /// (of either direction).
    pub fn buffer_bs(&self) -> u64 {
        let reads = match (&self.bssplit, self.bs_max) {
            (Some(s), _) => s.max().max(self.bs),
            (None, Some(max)) => max.max(self.bs),
            (None, None) => self.bs,
        };
        reads.max(self.write_bssplit.as_ref().map_or(0, |w| w.max()))
    }

    /// Mean bytes per I/O: the block size, or a size mix's or range's mean (with the
    /// writes' own sizes, weighted by the mix).
    pub fn mean_bs(&self) -> f64 {
        let reads = match (&self.bssplit, self.bs_max) {
            (Some(s), _) => s.mean(),
            (None, Some(max)) => crate::bssplit::range_mean(self.bs, max),
            (None, None) => self.bs as f64,
        };
        match &self.write_bssplit {
            Some(w) => {
                let r = f64::from(self.rw.read_pct(self.read_pct)) / 100.0;
                r * reads + (1.0 - r) * w.mean()
            }
            None => reads,
        }
    }

    /// The I/O sizes as a person writes them: `4K`, a range `4K-64K` or a split
    /// `4K/60:64K/40`.
    pub fn sizes_label(&self) -> String {
        use crate::units::size_short;
        match (&self.bssplit, self.bs_max) {
            (Some(split), _) => split.to_string(),
            (None, Some(max)) => format!("{}-{}", size_short(self.bs), size_short(max)),
            (None, None) => size_short(self.bs),
        }
    }

    /// Whether I/O sizes vary (a split or a range).
    pub fn sizes_vary(&self) -> bool {
        self.bssplit.is_some() || self.bs_max.is_some() || self.write_bssplit.is_some()
    }

    /// The grid random offsets are drawn on when it is not `bs`: `block_align`'s, or the
    /// smallest size of either direction when the writes have their own.
    pub fn offset_grid(&self) -> Option<u64> {
        self.block_align.or_else(|| {
            let w = self.write_bssplit.as_ref()?.min();
            Some(w.min(self.bs)).filter(|&g| g != self.bs)
        })
    }

    /// Where the I/O goes: offset, span, amount, loops, cover-once.
    fn check_span(&self, bad: &mut dyn FnMut(&str, &dyn fmt::Display, String)) {
        if self.direct && !self.offset.is_multiple_of(MIN_BS) {
            bad(
                "offset",
                &self.offset,
                "with O_DIRECT the offset must be a multiple of 512".into(),
            );
        }
        if let Some(size) = self.size {
            if size < self.bs {
                bad(
                    "size",
                    &size,
                    format!("the span must hold at least one block of {} B", self.bs),
                );
            }
        }
        if let Some(io) = self.io_size {
            if io < self.bs {
                bad(
                    "io_size",
                    &io,
                    format!("must be at least one block of {} B", self.bs),
                );
            }
        }
        if !(1..=MAX_LOOPS).contains(&self.loops) {
            bad("loops", &self.loops, format!("must be 1..{MAX_LOOPS}"));
        }
        for (field, v) in [
            ("offset", self.offset),
            ("size", self.size.unwrap_or(0)),
            ("io_size", self.io_size.unwrap_or(0)),
        ] {
            if v > MAX_BYTES {
                bad(field, &v, "must be at most 1 EiB".into());
            }
        }
        if self.cover_once && !self.rw.is_random() {
            bad(
                "cover_once",
                &self.cover_once,
                format!("only applies to random modes, not {}", self.rw),
            );
        }
        self.check_regions(bad);
    }

    /// Each job's own region (`offset_increment`): a size per job, aligned, inside the
    /// byte limit, and regions apart where the last writer of a block must be known.
    fn check_regions(&self, bad: &mut dyn FnMut(&str, &dyn fmt::Display, String)) {
        let Some(inc) = self.offset_increment else {
            return;
        };
        let Some(size) = self.size else {
            bad(
                "offset_increment",
                &inc,
                "needs size (the length of each job's region)".into(),
            );
            return;
        };
        if self.direct && !inc.is_multiple_of(MIN_BS) {
            bad(
                "offset_increment",
                &inc,
                "with O_DIRECT must be a multiple of 512 (0: every job covers the whole span)"
                    .into(),
            );
        }
        if self.extent_end(size) > MAX_BYTES {
            bad(
                "offset_increment",
                &inc,
                format!("{} jobs' regions would end past 1 EiB", self.jobs),
            );
        }
        if self.verify && inc < size {
            bad(
                "verify",
                &"true",
                format!("needs regions apart: offset_increment ({inc}) is below size ({size}), so jobs' regions overlap"),
            );
        }
        if self.replay.is_some() || self.scan {
            bad(
                "offset_increment",
                &inc,
                "not with a replay or an error scan (they have their own offsets)".into(),
            );
        }
    }

    /// The end of the last byte the jobs can reach from `offset`, given a span of `len`
    /// bytes: `offset + len`, or with `offset_increment` the end of the last job's region.
    pub fn extent_end(&self, len: u64) -> u64 {
        let inc = self.offset_increment.unwrap_or(0);
        self.offset
            .saturating_add(inc.saturating_mul(u64::from(self.jobs.saturating_sub(1))))
            .saturating_add(len)
    }

    /// `random_distribution` as written, with the writes' own zones after a comma.
    pub fn distribution_text(&self) -> String {
        crate::access::Distribution::per_direction_text(
            &self.random_distribution,
            self.write_random_distribution.as_ref(),
        )
    }

    /// A skewed distribution or a sequential share applies to random offsets drawn freely
    /// (not to a cover-once permutation, which a verified random write also uses).
    fn check_access(&self, bad: &mut dyn FnMut(&str, &dyn fmt::Display, String)) {
        use crate::access::Distribution;
        // The writes' own zones are the same option (`zoned:READS,WRITES`): the same checks.
        let skewed = self.random_distribution != Distribution::Uniform
            || self.write_random_distribution.is_some();
        for d in std::iter::once(&self.random_distribution).chain(&self.write_random_distribution) {
            if let Err(why) = d.check() {
                bad("random_distribution", d, why);
            }
        }
        // fio's syntax has one kind for both sets (`zoned:R,W`, `zoned_abs:R,W`).
        if let Some(w) = &self.write_random_distribution {
            let kinds = (&self.random_distribution, w);
            if !matches!(
                kinds,
                (Distribution::Zoned(_), Distribution::Zoned(_))
                    | (Distribution::ZonedAbs(_), Distribution::ZonedAbs(_))
            ) {
                bad(
                    "write_random_distribution",
                    w,
                    format!(
                        "the writes' own zones go with the reads' zones of the same kind (zoned:READS,WRITES or zoned_abs:READS,WRITES), not with {}",
                        self.random_distribution
                    ),
                );
            }
        }
        if self.seq_pct > 100 {
            bad("seq_pct", &self.seq_pct, "must be 0..100".into());
        }
        for (field, value, on) in [
            ("random_distribution", self.distribution_text(), skewed),
            ("seq_pct", self.seq_pct.to_string(), self.seq_pct > 0),
        ] {
            if !on {
                continue;
            }
            if !self.rw.is_random() {
                bad(
                    field,
                    &value,
                    format!("only applies to random modes, not {}", self.rw),
                );
            } else if self.cover_once || self.verify {
                bad(
                    field,
                    &value,
                    "cover-once (and verify) visit every block once per pass: there is nothing to skew".into(),
                );
            }
        }
    }

    /// A replay issues the trace's I/Os, one job, once: what generates I/O does not apply.
    fn check_replay(&self, bad: &mut dyn FnMut(&str, &dyn fmt::Display, String)) {
        let Some(r) = &self.replay else {
            return;
        };
        for (field, value, why) in r.problems() {
            bad(field, &value, why);
        }
        if self.iodepth > crate::replay::MAX_REPLAY_DEPTH {
            bad(
                "iodepth",
                &self.iodepth,
                format!(
                    "a replay keeps at most {} I/Os in flight",
                    crate::replay::MAX_REPLAY_DEPTH
                ),
            );
        }
        let not = "does not apply to a replay (the trace sets the I/O)";
        let conflicts: [(&str, String, bool); 11] = [
            ("jobs", self.jobs.to_string(), self.jobs != 1),
            ("ramp_ms", self.ramp_ms.to_string(), self.ramp_ms != 0),
            ("verify", "true".into(), self.verify),
            ("scan", "true".into(), self.scan),
            (
                "rate",
                self.rate.map(|r| r.to_string()).unwrap_or_default(),
                self.rate.is_some(),
            ),
            ("cover_once", "true".into(), self.cover_once),
            (
                "io_size",
                self.io_size.map(|b| b.to_string()).unwrap_or_default(),
                self.io_size.is_some(),
            ),
            ("loops", self.loops.to_string(), self.loops != 1),
            ("seq_pct", self.seq_pct.to_string(), self.seq_pct > 0),
            (
                "random_distribution",
                self.distribution_text(),
                self.random_distribution != crate::access::Distribution::Uniform
                    || self.write_random_distribution.is_some(),
            ),
            (
                "think",
                self.think.map(|t| t.to_string()).unwrap_or_default(),
                self.think.is_some(),
            ),
        ];
        for (field, value, on) in conflicts {
            if on {
                bad(field, &value, not.into());
            }
        }
    }

    /// Flushes and synchronous writes need writes to make durable, and a generated
    /// workload (a replay issues the trace's own flushes).
    fn check_durability(&self, bad: &mut dyn FnMut(&str, &dyn fmt::Display, String)) {
        if let Some(f) = self.flush {
            if let Err(why) = f.check() {
                bad("flush", &f, why);
            }
            if self.replay.is_some() {
                bad(
                    "flush",
                    &f,
                    "does not apply to a replay (the trace holds its own flushes)".into(),
                );
            }
        }
        if self.replay.is_some() || self.rw.read_pct(self.read_pct) < 100 {
            return;
        }
        let why = || format!("makes writes durable, and {} writes nothing", self.rw);
        if let Some(f) = self.flush {
            bad("flush", &f, why());
        }
        if self.write_sync != crate::durability::WriteSync::None {
            bad("write_sync", &self.write_sync, why());
        }
    }

    /// Trims are made one at a time, synchronously, as fio's engines make them: what checks
    /// or paces data, or searches a depth, has nothing to act on.
    /// A flush check writes verified blocks one at a time, each made durable by a flush
    /// every N writes or by a synchronous write: nothing else shapes its I/O.
    #[cfg(not(target_arch = "wasm32"))]
    fn check_flushcheck(
        &self,
        w: &crate::flushcheck::WriterSpec,
        bad: &mut dyn FnMut(&str, &dyn fmt::Display, String),
    ) {
        for (field, value, msg) in w.check() {
            bad(field, &value, msg);
        }
        if !matches!(self.rw, RwMode::RandWrite) {
            bad(
                "rw",
                &self.rw,
                "a flush check writes at random offsets (randwrite)".into(),
            );
        }
        if self.flush.is_none() && self.write_sync == crate::durability::WriteSync::None {
            bad(
                "flush",
                &"none",
                "a flush check needs its writes made durable: a flush every N writes, or synchronous writes (write_sync dsync)".into(),
            );
        }
        let alone = self.files.is_none()
            && self.probe.is_none()
            && self.replay.is_none()
            && self.jobs == 1
            && self.iodepth == 1
            && !self.verify
            && self.bssplit.is_none()
            && self.rate.is_none()
            && self.think.is_none();
        if !alone {
            bad(
                "flushcheck",
                &"set",
                "a flush check is one job writing one block at a time: no files, probe, replay, jobs, depth, verify, size mix, rate or think time".into(),
            );
        }
        if self.bs == 0 || !self.bs.is_multiple_of(512) {
            bad(
                "bs",
                &self.bs,
                "a flush check's blocks are whole sectors: a multiple of 512".into(),
            );
        }
    }

    fn check_trims(&self, bad: &mut dyn FnMut(&str, &dyn fmt::Display, String)) {
        if !self.rw.trims() {
            return;
        }
        let why = format!("does not apply to {} (trims carry no data)", self.rw);
        if self.verify {
            bad("verify", &true, why.clone());
        }
        if self.scan {
            bad("scan", &true, why.clone());
        }
        if self.replay.is_some() {
            bad(
                "replay",
                &"a trace",
                "a replay takes its trims from the trace".into(),
            );
        }
        if self.latency_target.is_some() {
            bad(
                "latency_target",
                &self.rw,
                "trims are made one at a time: there is no depth to search".into(),
            );
        }
        if !self.rw.then_writes() {
            if let Some(f) = self.flush {
                bad("flush", &f, why.clone());
            }
            if self.write_sync != crate::durability::WriteSync::None {
                bad("write_sync", &self.write_sync, why);
            }
        }
    }

    /// An error scan reads or writes (a mixed map would blur which failed);
    /// `scan_slow_ms` needs `scan`.
    fn check_scan(&self, bad: &mut dyn FnMut(&str, &dyn fmt::Display, String)) {
        if let Some(ms) = self.scan_slow_ms {
            if !self.scan {
                bad("scan_slow_ms", &ms, "needs scan (--scan)".into());
            } else if !(1..=MAX_SCAN_SLOW_MS).contains(&ms) {
                bad(
                    "scan_slow_ms",
                    &ms,
                    format!("must be 1..{MAX_SCAN_SLOW_MS} ms"),
                );
            }
        }
        if self.scan && self.rw.is_mixed() {
            bad(
                "scan",
                &self.rw,
                "an error scan reads or writes, not both: use read, randread, write or randwrite"
                    .into(),
            );
        }
    }

    /// `verify` needs a pure write workload on a real backend; `verify_every` needs `verify`.
    fn check_verify(&self, bad: &mut dyn FnMut(&str, &dyn fmt::Display, String)) {
        if let Some(n) = self.verify_every {
            if !self.verify {
                bad("verify_every", &n, "needs verify (--verify)".into());
            } else if !(1..=MAX_VERIFY_EVERY).contains(&n) {
                bad(
                    "verify_every",
                    &n,
                    format!("must be 1..{MAX_VERIFY_EVERY} blocks"),
                );
            }
        }
        if !self.verify {
            return;
        }
        if self.rw.read_pct(self.read_pct) > 0 {
            bad(
                "verify",
                &self.rw,
                "verification needs a write workload (write or randwrite): what it reads back is what the run wrote".into(),
            );
        }
        if self.backend.opens_nothing() {
            bad(
                "verify",
                &self.backend,
                format!("the {} backend stores nothing to read back", self.backend),
            );
        }
        // (MIN_BS holds the header: every accepted block size can carry it.)
    }

    /// Run time, ramp, sample interval and rate cap.
    fn check_timing(&self, bad: &mut dyn FnMut(&str, &dyn fmt::Display, String)) {
        if self.runtime_ms == Some(0) {
            bad("runtime_ms", &0, "must be more than 0".into());
        }
        for (field, v) in [
            ("runtime_ms", self.runtime_ms.unwrap_or(0)),
            ("ramp_ms", self.ramp_ms),
        ] {
            if v > MAX_DURATION_MS {
                bad(field, &v, "must be at most 30 days (2592000000 ms)".into());
            }
        }
        if !(MIN_INTERVAL_MS..=MAX_INTERVAL_MS).contains(&self.interval_ms) {
            bad(
                "interval_ms",
                &self.interval_ms,
                "sample interval must be 100 ms..60 s".into(),
            );
        }
        match self.rate {
            Some(Rate::BytesPerSec(0)) | Some(Rate::Iops(0)) => bad(
                "rate",
                &self.rate.map(|r| r.to_string()).unwrap_or_default(),
                "a rate cap must be more than 0".into(),
            ),
            Some(Rate::BytesPerSec(b)) if b < self.bs => bad(
                "rate",
                &b,
                format!(
                    "a byte rate below one block ({} B) per second cannot be kept",
                    self.bs
                ),
            ),
            _ => {}
        }
        if let Some(rule) = &self.steady {
            if let Err(why) = rule.check() {
                bad("steady", rule, why);
            } else if rule.window_ms < 2 * self.interval_ms {
                bad(
                    "steady",
                    rule,
                    format!(
                        "the window ({} ms) must hold two sample intervals ({} ms each) at least",
                        rule.window_ms, self.interval_ms
                    ),
                );
            }
            if self.verify || self.replay.is_some() {
                bad(
                    "steady",
                    rule,
                    "not with verify or a replay: they must run to their end".into(),
                );
            }
        }
        if let Some(min) = self.rate_min {
            let above_cap = match (min, self.rate) {
                (Rate::BytesPerSec(m), Some(Rate::BytesPerSec(c))) => m > c,
                (Rate::Iops(m), Some(Rate::Iops(c))) => m > c,
                _ => false,
            };
            if matches!(min, Rate::BytesPerSec(0) | Rate::Iops(0)) || above_cap {
                bad(
                    "rate_min",
                    &min,
                    "must be above 0 and at most the rate cap".into(),
                );
            }
        }
        if self.rate_process != crate::pacing::RateProcess::Linear && self.rate.is_none() {
            bad(
                "rate_process",
                &self.rate_process,
                "spaces a rate cap's I/Os: set a rate".into(),
            );
        }
        if let Some(t) = &self.think {
            if let Err(why) = t.check() {
                bad("think", t, why);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Applies `edit` to the default spec and checks the validation outcome: `None` means the
    /// spec must pass; `Some((field, fragment))` means an error on `field` whose message
    /// contains `fragment`.
    fn check(edit: impl FnOnce(&mut WorkloadSpec), expected: Option<(&str, &str)>) {
        let mut spec = WorkloadSpec::default();
        edit(&mut spec);
        match (spec.validate(), expected) {
            (Ok(()), None) => {}
            (Err(errs), Some((field, fragment))) => {
                assert!(
                    errs.iter()
                        .any(|e| e.field == field && e.to_string().contains(fragment)),
                    "expected {field}: {fragment}, got {errs:?}"
                );
            }
            (got, want) => panic!("spec {spec:?}: got {got:?}, want {want:?}"),
        }
    }

    #[test]
    fn a_steady_rule_needs_two_intervals_and_a_run_free_to_end() {
        let rule = crate::steady::SteadyRule {
            measure: crate::steady::SteadyMeasure::Iops,
            slope: false,
            limit: 2.0,
            pct: true,
            window_ms: 10_000,
            ramp_ms: 0,
        };
        check(|s| s.steady = Some(rule), None);
        check(
            |s| {
                s.steady = Some(rule);
                s.interval_ms = 6_000;
            },
            Some((
                "steady",
                "the window (10000 ms) must hold two sample intervals (6000 ms each)",
            )),
        );
        check(
            |s| {
                s.rw = RwMode::RandWrite;
                s.verify = true;
                s.steady = Some(rule);
            },
            Some(("steady", "not with verify or a replay")),
        );
    }

    #[test]
    fn validation_table() {
        check(|_| {}, None);
        let flush = |every, data_only| Some(crate::durability::Flush { every, data_only });
        check(
            |s| {
                s.rw = RwMode::RandWrite;
                s.flush = flush(8, true);
                s.write_sync = crate::durability::WriteSync::Dsync;
            },
            None,
        );
        check(
            |s| s.flush = flush(8, false),
            Some((
                "flush",
                "flush = fsync/8: makes writes durable, and read writes nothing",
            )),
        );
        check(
            |s| s.write_sync = crate::durability::WriteSync::Sync,
            Some(("write_sync", "write_sync = sync: makes writes durable")),
        );
        check(
            |s| {
                s.rw = RwMode::Write;
                s.flush = flush(0, true);
            },
            Some(("flush", "fdatasync every N writes: N must be 1..")),
        );
        check(|s| s.bs = 1 << 20, None);
        check(|s| s.bs = 64 << 20, None);
        check(
            |s| s.bs = 128 << 20,
            Some(("bs", "bs = 134217728: block size must be 512 B..64 MiB")),
        );
        check(|s| s.bs = 256, Some(("bs", "512 B..64 MiB")));
        check(
            |s| s.bs = 1000,
            Some((
                "bs",
                "bs = 1000: with O_DIRECT the block size must be a multiple of 512",
            )),
        );
        check(
            |s| {
                s.bs = 1000;
                s.direct = false
            },
            None,
        );
        check(
            |s| s.iodepth = 0,
            Some(("iodepth", "iodepth = 0: must be 1..1024")),
        );
        check(|s| s.iodepth = 1025, Some(("iodepth", "1025")));
        check(|s| s.jobs = 65, Some(("jobs", "jobs = 65: must be 1..64")));
        check(|s| s.read_pct = 101, Some(("read_pct", "101")));
        check(|s| s.offset = 100, Some(("offset", "offset = 100")));
        check(|s| s.size = Some(100), Some(("size", "at least one block")));
        check(|s| s.loops = 0, Some(("loops", "loops = 0")));
        use crate::access::Distribution;
        check(
            |s| s.random_distribution = Distribution::Zipf(1.2),
            Some((
                "random_distribution",
                "zipf:1.2: only applies to random modes",
            )),
        );
        check(
            |s| {
                s.rw = RwMode::RandRead;
                s.random_distribution = Distribution::Pareto(0.8);
                s.seq_pct = 30;
            },
            None,
        );
        check(
            |s| {
                s.rw = RwMode::RandRead;
                s.seq_pct = 101;
            },
            Some(("seq_pct", "seq_pct = 101: must be 0..100")),
        );
        check(
            |s| {
                s.rw = RwMode::RandWrite;
                s.verify = true;
                s.random_distribution = Distribution::Normal(5.0);
            },
            Some(("random_distribution", "nothing to skew")),
        );
        // The writes' own zones go through the same checks as the reads'.
        let zoned = |a: u8| Distribution::Zoned(vec![(a, 50)]);
        check(
            |s| {
                s.random_distribution = zoned(100);
                s.write_random_distribution = Some(zoned(100));
            },
            Some((
                "random_distribution",
                "zoned:100/50,100/50: only applies to random modes",
            )),
        );
        check(
            |s| {
                s.rw = RwMode::RandRw;
                s.random_distribution = zoned(100);
                s.write_random_distribution = Some(zoned(50));
            },
            Some(("random_distribution", "add up to 50 %")),
        );
        check(
            |s| {
                s.rw = RwMode::RandRw;
                s.write_random_distribution = Some(zoned(100));
            },
            Some(("write_random_distribution", "not with uniform")),
        );
        check(
            |s| {
                s.rw = RwMode::RandRw;
                s.random_distribution = zoned(100);
                s.write_random_distribution = Some(zoned(100));
            },
            None,
        );
        check(
            |s| s.interval_ms = 50,
            Some((
                "interval_ms",
                "interval_ms = 50: sample interval must be 100 ms..60 s",
            )),
        );
        check(|s| s.interval_ms = 60_001, Some(("interval_ms", "60001")));
        check(
            |s| s.rate = Some(Rate::Iops(0)),
            Some(("rate", "more than 0")),
        );
        check(
            |s| s.rate = Some(Rate::BytesPerSec(100)),
            Some(("rate", "below one block")),
        );
        check(|s| s.cover_once = true, Some(("cover_once", "not read")));
        check(
            |s| {
                s.cover_once = true;
                s.rw = RwMode::RandWrite
            },
            None,
        );
        check(
            |s| {
                s.backend = Backend::Sync;
                s.iodepth = 8
            },
            Some(("iodepth", "sync backend")),
        );
        check(
            |s| {
                s.bs = 64 << 20;
                s.iodepth = 64
            },
            Some(("iodepth", "4096 MiB of buffers")),
        );
        check(
            |s| s.runtime_ms = Some(0),
            Some(("runtime_ms", "more than 0")),
        );
    }

    #[test]
    fn parse_flags() {
        assert_eq!("randrw".parse::<RwMode>(), Ok(RwMode::RandRw));
        assert!("randomread"
            .parse::<RwMode>()
            .unwrap_err()
            .contains("'randomread'"));
        assert_eq!(
            "compress:50".parse::<DataPattern>(),
            Ok(DataPattern::Compress(50))
        );
        assert!("compress:150".parse::<DataPattern>().is_err());
        assert_eq!("200MB".parse::<Rate>(), Ok(Rate::BytesPerSec(200_000_000)));
        assert_eq!("5000iops".parse::<Rate>(), Ok(Rate::Iops(5000)));
        assert!("fast".parse::<Rate>().unwrap_err().contains("'fast'"));
    }

    #[test]
    fn serde_rejects_unknown_fields() {
        let spec: WorkloadSpec =
            serde_json::from_str(r#"{"rw":"randwrite","bs":8192,"pattern":{"compress":30}}"#)
                .expect("valid spec");
        assert_eq!(spec.rw, RwMode::RandWrite);
        assert_eq!(spec.pattern, DataPattern::Compress(30));
        assert_eq!(spec.iodepth, 1);
        let err = serde_json::from_str::<WorkloadSpec>(r#"{"blocksize":8192}"#).unwrap_err();
        assert!(err.to_string().contains("blocksize"), "{err}");
    }
}
