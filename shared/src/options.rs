//! The one table of workload options: each option of a [`WorkloadSpec`] once, with its CLI
//! flag, its field in the API's spec, its fio names, the New-test form's label and help, and
//! how its text is read ([`WorkloadOption::set`]) and written back ([`WorkloadOption::get`]).
//! The CLI's flags, the form's fields, the fio job-file parser's plain options, fio's "job
//! options" in its JSON and `GET /api/v1/options` all come from [`OPTIONS`]; a flag, field or
//! fio name outside it does not exist.
//!
//! An option's text is the CLI's syntax (sizes `4K` = 4096, `4KB` = 4000; times `10s`,
//! `250ms`; latencies `500us`); the fio parser turns fio's syntax into it by [`Kind`] first.
//! Options are applied in table order, so an option that refines another (`ss_dur` after
//! `steadystate`, `thinktime_spin` after `thinktime`) finds it set; given alone it is an
//! error naming what it needs. Combinations are the validator's
//! ([`WorkloadSpec::validate`]), which names the API field ([`WorkloadOption::api`]).

use crate::units::{parse_duration_ms, parse_latency_us, parse_size, size_short};
use crate::{RwMode, WorkloadSpec};

/// How an option's text is typed, and so how the form edits it and how fio's spelling of
/// it is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Free text (the hint shows in an empty field).
    Text(&'static str),
    /// Bytes (`4K`, `1G`, `512`).
    Size(&'static str),
    /// A whole number.
    Count(&'static str),
    /// A duration (`10s`, `250ms`).
    Time(&'static str),
    /// A short time in µs (`500us`, `2ms`).
    Micros(&'static str),
    /// One of a list.
    Select(&'static [&'static str]),
    /// On or off: the CLI flag takes no value and sets the option to `"true"`, or to
    /// `"false"` when its [`WorkloadOption::cli`] starts with `no-` or is `buffered`.
    Check,
    /// A trace the agent offers (`GET /api/v1/traces`), or none.
    Trace,
}

/// One workload option.
pub struct WorkloadOption {
    /// Its name: the form field's id (`f-KEY`) and the name errors are filed under.
    pub key: &'static str,
    /// The spec's field it lives in (the validator's `SpecError::field`).
    pub api: &'static str,
    /// The CLI's flag without `--`, then its aliases.
    pub cli: &'static [&'static str],
    /// fio's names for it (the first is what fio's JSON shows); empty: fio has none.
    pub fio: &'static [&'static str],
    pub label: &'static str,
    pub help: &'static str,
    pub kind: Kind,
    /// Reads `text` (trimmed; empty leaves the option unset) into the spec.
    pub set: fn(&mut WorkloadSpec, &str) -> Result<(), String>,
    /// The spec's value as `set` reads it (empty: unset).
    pub get: fn(&WorkloadSpec) -> String,
}

impl WorkloadOption {
    /// The CLI flag's value a bare flag of [`Kind::Check`] stands for.
    pub fn flag_value(&self) -> &'static str {
        if self.cli[0] == "buffered" {
            "false"
        } else {
            "true"
        }
    }

    /// Whether `spec` holds something else than the default for this option.
    pub fn is_set(&self, spec: &WorkloadSpec) -> bool {
        (self.get)(spec) != (self.get)(&WorkloadSpec::default())
    }
}

/// The options the New-test form shows first: what a workload is (CrystalDiskMark's and
/// fio's everyday knobs). The rest go in its Advanced section.
pub const BASIC: &[&str] = &[
    "rw",
    "read_pct",
    "bs",
    "iodepth",
    "jobs",
    "offset",
    "size",
    "runtime",
    "ramp",
    "rate",
    "pattern",
    "direct",
    "verify",
    "replay",
    "replay_timing",
];

/// The option named `key`.
pub fn by_key(key: &str) -> Option<&'static WorkloadOption> {
    OPTIONS.iter().find(|o| o.key == key)
}

/// The option fio calls `name`.
pub fn by_fio(name: &str) -> Option<&'static WorkloadOption> {
    OPTIONS.iter().find(|o| o.fio.contains(&name))
}

/// The spec the `given` options (key, text) make from the default, applied in table order;
/// the first option whose text does not read, with why.
pub fn spec_from<'a>(
    given: impl IntoIterator<Item = (&'a str, &'a str)> + Clone,
) -> (WorkloadSpec, Vec<(&'static str, String)>) {
    let mut spec = WorkloadSpec::default();
    let mut errs = Vec::new();
    for o in OPTIONS {
        for (k, text) in given.clone() {
            if k == o.key {
                if let Err(e) = (o.set)(&mut spec, text.trim()) {
                    errs.push((o.key, e));
                }
            }
        }
    }
    (spec, errs)
}

const RW: &[&str] = &[
    "read",
    "write",
    "randread",
    "randwrite",
    "randrw",
    "rw",
    "trim",
    "randtrim",
    "trimwrite",
    "randtrimwrite",
];

fn size(t: &str) -> Result<u64, String> {
    parse_size(t).map_err(|e| e.to_string())
}

fn ms(t: &str) -> Result<u64, String> {
    parse_duration_ms(t).map_err(|e| e.to_string())
}

fn us(t: &str) -> Result<u64, String> {
    parse_latency_us(t).map_err(|e| e.replace("latency", "time"))
}

fn count<T: std::str::FromStr>(t: &str) -> Result<T, String> {
    t.parse()
        .map_err(|_| format!("invalid number '{t}': expected a whole number"))
}

fn parsed<T: std::str::FromStr>(t: &str) -> Result<T, String>
where
    T::Err: std::fmt::Display,
{
    t.parse::<T>().map_err(|e| e.to_string())
}

/// `None` for empty text, else `f(text)`.
fn opt<T>(t: &str, f: fn(&str) -> Result<T, String>) -> Result<Option<T>, String> {
    if t.is_empty() {
        Ok(None)
    } else {
        f(t).map(Some)
    }
}

/// Reads non-empty `t` into `slot` (empty text keeps the default).
fn keep<T>(slot: &mut T, t: &str, f: fn(&str) -> Result<T, String>) -> Result<(), String> {
    if !t.is_empty() {
        *slot = f(t)?;
    }
    Ok(())
}

/// Reads `t` into an optional `slot` (empty text: unset).
fn put<T>(slot: &mut Option<T>, t: &str, f: fn(&str) -> Result<T, String>) -> Result<(), String> {
    *slot = opt(t, f)?;
    Ok(())
}

fn check(t: &str) -> Result<bool, String> {
    match t {
        "" | "false" | "0" => Ok(false),
        "true" | "1" => Ok(true),
        _ => Err(format!("invalid switch '{t}': expected true or false")),
    }
}

fn flag(b: bool) -> String {
    if b { "true" } else { "false" }.to_string()
}

/// A duration as one would type it: `10s`, `5m`, `250ms`.
fn duration_text(ms: u64) -> String {
    if ms != 0 && ms.is_multiple_of(60_000) {
        format!("{}m", ms / 60_000)
    } else if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else {
        format!("{ms}ms")
    }
}

fn us_text(us: u64) -> String {
    match us {
        0 => String::new(),
        us if us.is_multiple_of(1000) => format!("{}ms", us / 1000),
        us => format!("{us}us"),
    }
}

/// A rate as one would type it: `200MB` (per second) or `5000iops`.
fn rate_text(r: Option<crate::Rate>) -> String {
    match r {
        None => String::new(),
        Some(crate::Rate::Iops(n)) => format!("{n}iops"),
        Some(crate::Rate::BytesPerSec(b)) if b.is_multiple_of(1_000_000) => {
            format!("{}MB", b / 1_000_000)
        }
        Some(crate::Rate::BytesPerSec(b)) => b.to_string(),
    }
}

fn some<T: ToString>(v: &Option<T>) -> String {
    v.as_ref().map(T::to_string).unwrap_or_default()
}

/// An option that refines `parent`: its value goes into what `parent` set, or it is an error
/// naming `parent` (empty text sets nothing).
fn within<T>(
    parent: &str,
    slot: Option<&mut T>,
    t: &str,
    f: &dyn Fn(&mut T, &str) -> Result<(), String>,
) -> Result<(), String> {
    match slot {
        _ if t.is_empty() => Ok(()),
        Some(v) => f(v, t),
        None => Err(format!("needs {parent}")),
    }
}

fn think(s: &mut WorkloadSpec) -> Option<&mut crate::pacing::ThinkTime> {
    s.think.as_mut()
}

fn replay(s: &mut WorkloadSpec) -> Option<&mut crate::replay::ReplaySpec> {
    s.replay.as_mut()
}

/// One `fsync`/`fdatasync` option.
fn flush_set(s: &mut WorkloadSpec, t: &str, data_only: bool) -> Result<(), String> {
    if t.is_empty() {
        return Ok(());
    }
    if s.flush.is_some() {
        return Err(format!("'{t}': give fsync or fdatasync, not both"));
    }
    s.flush = Some(crate::durability::Flush {
        every: count(t)?,
        data_only,
    });
    Ok(())
}

fn flush_get(s: &WorkloadSpec, data_only: bool) -> String {
    s.flush
        .filter(|f| f.data_only == data_only)
        .map(|f| f.every.to_string())
        .unwrap_or_default()
}

/// A size mix (`4K/60:64K/40`); bs becomes its smallest size.
fn set_bssplit(s: &mut WorkloadSpec, t: &str) -> Result<(), String> {
    if let Some(split) = opt(t, parsed::<crate::bssplit::BsSplit>)? {
        s.bs = split.min();
        s.bssplit = Some(split);
    }
    Ok(())
}

/// A size range (`4K-64K`), unless a mix is given too.
fn set_bsrange(s: &mut WorkloadSpec, t: &str) -> Result<(), String> {
    if let Some((lo, hi)) = opt(t, |t| crate::bssplit::parse_range(t, size))? {
        if s.bssplit.is_some() {
            return Err(format!("'{t}': give one of bs, bsrange and bssplit"));
        }
        s.bs = lo;
        s.bs_max = Some(hi);
    }
    Ok(())
}

/// Every workload option, in the order they apply (and the form shows them).
pub static OPTIONS: &[WorkloadOption] = &[
    WorkloadOption {
        key: "rw",
        api: "rw",
                cli: &["rw"],
                fio: &["rw", "readwrite"],
        label: "I/O pattern",
        help: "sequential or random; read, write, a mix, or trims",
        kind: Kind::Select(RW),
        set: |s, t| {
            if !t.is_empty() {
                s.rw = parsed::<RwMode>(t)?;
            }
            Ok(())
        },
        get: |s| s.rw.as_str().to_string(),
    },
    WorkloadOption {
        key: "read_pct",
        api: "read_pct",
                cli: &["read-pct", "rwmixread"],
                fio: &["rwmixread"],
        label: "Reads in the mix (%)",
        help: "randrw and rw only",
        kind: Kind::Count("50"),
        set: |s, t| keep(&mut s.read_pct, t, count),
        get: |s| s.read_pct.to_string(),
    },
    WorkloadOption {
        key: "bssplit",
        api: "bssplit",
                cli: &["bssplit"],
                fio: &["bssplit"],
        label: "Size mix",
        help: "sizes with the share of I/Os of each, e.g. 4K/60:64K/30:1M/10 (fio's bssplit); bs is its smallest",
        kind: Kind::Text("none"),
        set: set_bssplit,
        get: |s| some(&s.bssplit),
    },
    WorkloadOption {
        key: "bsrange",
        api: "bs_max",
                cli: &["bsrange"],
                fio: &["bsrange", "blocksize_range"],
        label: "Size range",
        help: "MIN-MAX, e.g. 4K-64K: sizes drawn over the multiples of MIN (fio's bsrange)",
        kind: Kind::Text("none"),
        set: set_bsrange,
        get: |s| {
            s.bs_max
                .map(|hi| format!("{}-{}", size_short(s.bs), size_short(hi)))
                .unwrap_or_default()
        },
    },
    WorkloadOption {
        key: "bs",
        api: "bs",
                cli: &["bs"],
                fio: &["bs", "blocksize"],
        label: "Block size",
        help: "512 B..64 MiB; a range 4K-64K; a mix 4K/60:64K/40 (% of I/Os). K = 1024, KB = 1000",
        kind: Kind::Text("4K"),
        set: |s, t| {
            if t.contains('/') {
                set_bssplit(s, t)
            } else if t.contains('-') {
                set_bsrange(s, t)
            } else if t.is_empty() {
                Ok(())
            } else {
                let bs = size(t)?;
                if bs != s.bs && (s.bssplit.is_some() || s.bs_max.is_some()) {
                    return Err(format!("'{t}': give one of bs, bsrange and bssplit"));
                }
                s.bs = bs;
                Ok(())
            }
        },
        get: |s| size_short(s.bs),
    },
    WorkloadOption {
        key: "write_bs",
        api: "write_bssplit",
                cli: &["write-bs"],
                fio: &[],
        label: "Write sizes (random mix)",
        help: "the writes' own size or mix in randrw, e.g. 64K or 64K/50:128K/50 (fio's bs=READ,WRITE)",
        kind: Kind::Text("as reads"),
        set: |s, t| put(&mut s.write_bssplit, t, parsed::<crate::bssplit::BsSplit>),
        get: |s| some(&s.write_bssplit),
    },
    WorkloadOption {
        key: "blockalign",
        api: "block_align",
                cli: &["blockalign"],
                fio: &["blockalign", "ba"],
        label: "Offset alignment",
        help: "random modes: offsets on this grid instead of the block size, e.g. 4K (fio's blockalign)",
        kind: Kind::Size("block size"),
        set: |s, t| put(&mut s.block_align, t, size),
        get: |s| s.block_align.map(size_short).unwrap_or_default(),
    },
    WorkloadOption {
        key: "iodepth",
        api: "iodepth",
                cli: &["iodepth"],
                fio: &["iodepth"],
        label: "Queue depth",
        help: "I/Os in flight per job, 1..1024",
        kind: Kind::Count("1"),
        set: |s, t| keep(&mut s.iodepth, t, count),
        get: |s| s.iodepth.to_string(),
    },
    WorkloadOption {
        key: "iodepth_batch",
        api: "iodepth_batch",
                cli: &["iodepth-batch"],
                fio: &["iodepth_batch_submit", "iodepth_batch"],
        label: "Submit batch",
        help: "I/Os handed to the kernel in one call (1: each as its slot frees)",
        kind: Kind::Count("1"),
        set: |s, t| keep(&mut s.iodepth_batch, t, count),
        get: |s| s.iodepth_batch.to_string(),
    },
    WorkloadOption {
        key: "iodepth_batch_complete_min",
        api: "iodepth_batch_complete_min",
                cli: &["iodepth-batch-complete-min"],
                fio: &["iodepth_batch_complete_min", "iodepth_batch_complete"],
        label: "Completions to wait for",
        help: "before refilling (1; 0 polls without sleeping)",
        kind: Kind::Count("1"),
        set: |s, t| keep(&mut s.iodepth_batch_complete_min, t, count),
        get: |s| s.iodepth_batch_complete_min.to_string(),
    },
    WorkloadOption {
        key: "iodepth_batch_complete_max",
        api: "iodepth_batch_complete_max",
                cli: &["iodepth-batch-complete-max"],
                fio: &["iodepth_batch_complete_max"],
        label: "Most completions per round",
        help: "0: every ready one",
        kind: Kind::Count("0"),
        set: |s, t| keep(&mut s.iodepth_batch_complete_max, t, count),
        get: |s| s.iodepth_batch_complete_max.to_string(),
    },
    WorkloadOption {
        key: "sqpoll",
        api: "sqpoll",
        cli: &["sqpoll"],
        fio: &["sqthread_poll"],
        label: "Polled submission (SQPOLL)",
        help: "io_uring: a kernel thread polls the submission queue, so I/O is issued without a system call",
        kind: Kind::Check,
        set: |s, t| keep(&mut s.sqpoll, t, check),
        get: |s| flag(s.sqpoll),
    },
    WorkloadOption {
        key: "sqpoll_cpu",
        api: "sqpoll_cpu",
        cli: &["sqpoll-cpu"],
        fio: &["sqthread_poll_cpu"],
        label: "SQPOLL thread's CPU",
        help: "with SQPOLL: bind the polling thread to this CPU",
        kind: Kind::Count("any"),
        set: |s, t| put(&mut s.sqpoll_cpu, t, count),
        get: |s| s.sqpoll_cpu.map(|c| c.to_string()).unwrap_or_default(),
    },
    WorkloadOption {
        key: "fixed_buffers",
        api: "fixed_buffers",
        cli: &["fixed-buffers"],
        fio: &[],
        label: "Registered buffers",
        help: "io_uring: buffers registered once (fio's fixedbufs); false maps them for every I/O",
        kind: Kind::Select(&["true", "false"]),
        set: |s, t| keep(&mut s.fixed_buffers, t, check),
        get: |s| flag(s.fixed_buffers),
    },
    WorkloadOption {
        key: "registered_file",
        api: "registered_file",
        cli: &["registered-file"],
        fio: &[],
        label: "Registered file",
        help: "io_uring: the target registered once (fio's registerfiles); false looks it up for every I/O",
        kind: Kind::Select(&["true", "false"]),
        set: |s, t| keep(&mut s.registered_file, t, check),
        get: |s| flag(s.registered_file),
    },
    WorkloadOption {
        key: "registered_ring",
        api: "registered_ring",
        cli: &["registered-ring"],
        fio: &[],
        label: "Registered ring",
        help: "io_uring: the ring's descriptor registered; false looks it up in every system call",
        kind: Kind::Select(&["true", "false"]),
        set: |s, t| keep(&mut s.registered_ring, t, check),
        get: |s| flag(s.registered_ring),
    },
    WorkloadOption {
        key: "force_async",
        api: "force_async",
        cli: &["force-async"],
        fio: &["force_async"],
        label: "Force async (every Nth)",
        help: "io_uring: every Nth I/O straight to the kernel's workers (IOSQE_ASYNC), skipping the inline try a device that cannot take I/O without blocking fails (0: none)",
        kind: Kind::Count("0"),
        set: |s, t| keep(&mut s.force_async, t, count),
        get: |s| s.force_async.to_string(),
    },
    WorkloadOption {
        key: "hipri",
        api: "hipri",
        cli: &["hipri"],
        fio: &["hipri"],
        label: "Polled completion (hipri)",
        help: "io_uring with IOPOLL: completions polled from the device's poll queues (O_DIRECT, a device with io_poll)",
        kind: Kind::Check,
        set: |s, t| keep(&mut s.hipri, t, check),
        get: |s| flag(s.hipri),
    },
    WorkloadOption {
        key: "uncached",
        api: "uncached",
        cli: &["uncached"],
        fio: &["uncached"],
        label: "Uncached buffered I/O",
        help: "buffered I/O whose pages leave the page cache once done (RWF_DONTCACHE, kernel 6.14+)",
        kind: Kind::Check,
        set: |s, t| keep(&mut s.uncached, t, check),
        get: |s| flag(s.uncached),
    },
    WorkloadOption {
        key: "atomic",
        api: "atomic",
        cli: &["atomic"],
        fio: &["atomic"],
        label: "Atomic writes",
        help: "O_DIRECT writes made whole or not at all (RWF_ATOMIC), within the target's atomic write unit",
        kind: Kind::Check,
        set: |s, t| keep(&mut s.atomic, t, check),
        get: |s| flag(s.atomic),
    },
    WorkloadOption {
        key: "jobs",
        api: "jobs",
                cli: &["jobs", "numjobs"],
                fio: &["numjobs"],
        label: "Jobs (threads)",
        help: "1..64; sequential jobs split the span",
        kind: Kind::Count("1"),
        set: |s, t| keep(&mut s.jobs, t, count),
        get: |s| s.jobs.to_string(),
    },
    WorkloadOption {
        key: "offset",
        api: "offset",
                cli: &["offset"],
                fio: &["offset"],
        label: "Start offset",
        help: "where the span begins",
        kind: Kind::Size("0"),
        set: |s, t| keep(&mut s.offset, t, size),
        get: |s| size_short(s.offset),
    },
    WorkloadOption {
        key: "size",
        api: "size",
                cli: &["size"],
                fio: &["size"],
        label: "Span",
        help: "empty: to the end of the target",
        kind: Kind::Size("whole target"),
        set: |s, t| put(&mut s.size, t, size),
        get: |s| s.size.map(size_short).unwrap_or_default(),
    },
    WorkloadOption {
        key: "offset_increment",
        api: "offset_increment",
                cli: &["offset-increment"],
                fio: &["offset_increment"],
        label: "Region per job",
        help: "job N starts at offset + N × this and covers the span (fio's offset_increment)",
        kind: Kind::Size("shared span"),
        set: |s, t| put(&mut s.offset_increment, t, size),
        get: |s| s.offset_increment.map(size_short).unwrap_or_default(),
    },
    WorkloadOption {
        key: "io_size",
        api: "io_size",
                cli: &["io-size"],
                fio: &["io_size", "io_limit"],
        label: "Bytes to transfer",
        help: "empty: span × passes, unless time-based",
        kind: Kind::Size("span × passes"),
        set: |s, t| put(&mut s.io_size, t, size),
        get: |s| s.io_size.map(size_short).unwrap_or_default(),
    },
    WorkloadOption {
        key: "loops",
        api: "loops",
                cli: &["loops"],
                fio: &["loops"],
        label: "Passes",
        help: "passes over the span",
        kind: Kind::Count("1"),
        set: |s, t| keep(&mut s.loops, t, count),
        get: |s| s.loops.to_string(),
    },
    WorkloadOption {
        key: "runtime",
        api: "runtime_ms",
                cli: &["runtime"],
                fio: &["runtime", "timeout"],
        label: "Run time",
        help: "e.g. 30s, 5m; makes the run time-based",
        kind: Kind::Time("until done"),
        set: |s, t| put(&mut s.runtime_ms, t, ms),
        get: |s| s.runtime_ms.map(duration_text).unwrap_or_default(),
    },
    WorkloadOption {
        key: "ramp",
        api: "ramp_ms",
                cli: &["ramp"],
                fio: &["ramp_time"],
        label: "Ramp (not measured)",
        help: "warm-up excluded from results",
        kind: Kind::Time("0s"),
        set: |s, t| keep(&mut s.ramp_ms, t, ms),
        get: |s| duration_text(s.ramp_ms),
    },
    WorkloadOption {
        key: "rate",
        api: "rate",
                cli: &["rate"],
                fio: &["rate", "rate_iops"],
        label: "Rate cap",
        help: "e.g. 3200MB (per second) or 5000iops",
        kind: Kind::Text("none"),
        set: |s, t| put(&mut s.rate, t, parsed),
        get: |s| rate_text(s.rate),
    },
    WorkloadOption {
        key: "rate_min",
        api: "rate_min",
                cli: &["rate-min"],
                fio: &["rate_min", "rate_iops_min"],
        label: "Rate floor",
        help: "the run fails at the first interval below it (after 2 s), e.g. 200MB or 5000iops",
        kind: Kind::Text("none"),
        set: |s, t| put(&mut s.rate_min, t, parsed),
        get: |s| rate_text(s.rate_min),
    },
    WorkloadOption {
        key: "rate_process",
        api: "rate_process",
                cli: &["rate-process"],
                fio: &["rate_process"],
        label: "Rate spacing",
        help: "with a rate cap: evenly, or as Poisson arrivals",
        kind: Kind::Select(&["linear", "poisson"]),
        set: |s, t| keep(&mut s.rate_process, t, parsed),
        get: |s| s.rate_process.to_string(),
    },
    WorkloadOption {
        key: "thinktime",
        api: "think",
                cli: &["thinktime"],
                fio: &["thinktime"],
        label: "Think time",
        help: "pause after every N I/Os once they completed, e.g. 1ms (fio's thinktime)",
        kind: Kind::Micros("none"),
        set: |s, t| {
            if let Some(us) = opt(t, us)? {
                s.think = Some(crate::pacing::ThinkTime {
                    us,
                    ..Default::default()
                });
            }
            Ok(())
        },
        get: |s| s.think.map(|t| us_text(t.us)).unwrap_or_default(),
    },
    WorkloadOption {
        key: "thinktime_blocks",
        api: "think",
                cli: &["thinktime-blocks"],
                fio: &["thinktime_blocks"],
        label: "Think every N I/Os",
        help: "with a think time: I/Os between pauses",
        kind: Kind::Count("1"),
        set: |s, t| within("thinktime", think(s), t, &|th, t| { th.blocks = count(t)?; Ok(()) }),
        get: |s| s.think.map(|t| t.blocks.to_string()).unwrap_or_default(),
    },
    WorkloadOption {
        key: "thinktime_spin",
        api: "think",
                cli: &["thinktime-spin"],
                fio: &["thinktime_spin"],
        label: "Think: spinning part",
        help: "with a think time: CPU spun before sleeping the rest",
        kind: Kind::Micros("0"),
        set: |s, t| within("thinktime", think(s), t, &|th, t| { th.spin_us = us(t)?; Ok(()) }),
        get: |s| s.think.map(|t| us_text(t.spin_us)).unwrap_or_default(),
    },
    WorkloadOption {
        key: "thinktime_blocks_type",
        api: "think",
                cli: &["thinktime-blocks-type"],
                fio: &["thinktime_blocks_type"],
        label: "Think: count I/Os at",
        help: "complete (default) or issue",
        kind: Kind::Select(&["complete", "issue"]),
        set: |s, t| {
            let issue = match t {
                "" | "complete" => false,
                "issue" => true,
                _ => return Err(format!("'{t}': expected complete or issue")),
            };
            match think(s) {
                Some(th) => th.count_issued = issue,
                None if issue => return Err("needs thinktime".into()),
                None => {}
            }
            Ok(())
        },
        get: |s| if s.think.is_some_and(|t| t.count_issued) { "issue" } else { "complete" }.into(),
    },
    WorkloadOption {
        key: "steadystate",
        api: "steady",
                cli: &["steadystate"],
                fio: &["steadystate", "ss"],
        label: "Stop once steady",
        help: "iops:2%, iops_slope:0.3%, bw:10% or bw_slope:1M over the ss_dur window (fio's steadystate)",
        kind: Kind::Text("never"),
        set: |s, t| {
            if !t.is_empty() {
                // Checked with a placeholder window; ss_dur (required) sets the real one.
                let mut r = crate::steady::SteadyRule::parse(t, 1_000, 0)?;
                r.window_ms = 0;
                s.steady = Some(r);
            }
            Ok(())
        },
        get: |s| some(&s.steady),
    },
    WorkloadOption {
        key: "ss_dur",
        api: "steady",
                cli: &["ss-dur"],
                fio: &["ss_dur"],
        label: "Steady window",
        help: "with stop once steady: the rolling window judged, e.g. 30s",
        kind: Kind::Time("none"),
        set: |s, t| within("steadystate", s.steady.as_mut(), t, &|r, t| { r.window_ms = ms(t)?; Ok(()) }),
        get: |s| s.steady.map(|r| duration_text(r.window_ms)).unwrap_or_default(),
    },
    WorkloadOption {
        key: "ss_ramp",
        api: "steady",
                cli: &["ss-ramp"],
                fio: &["ss_ramp"],
        label: "Steady: ramp",
        help: "with stop once steady: time before values are collected",
        kind: Kind::Time("0s"),
        set: |s, t| within("steadystate", s.steady.as_mut(), t, &|r, t| { r.ramp_ms = ms(t)?; Ok(()) }),
        get: |s| s.steady.map(|r| duration_text(r.ramp_ms)).unwrap_or_default(),
    },
    WorkloadOption {
        key: "latency_target",
        api: "latency_target",
                cli: &["latency-target"],
                fio: &["latency_target"],
        label: "Latency target",
        help: "search the deepest queue whose I/Os stay within it, e.g. 500us (fio's latency_target)",
        kind: Kind::Micros("none"),
        set: |s, t| {
            if let Some(target_us) = opt(t, us)? {
                s.latency_target = Some(crate::qd_search::LatencyRule {
                    target_us,
                    window_ms: 0,
                    percentile: 100.0,
                });
            }
            Ok(())
        },
        get: |s| s.latency_target.map(|l| us_text(l.target_us)).unwrap_or_default(),
    },
    WorkloadOption {
        key: "latency_window",
        api: "latency_target",
                cli: &["latency-window"],
                fio: &["latency_window"],
        label: "Latency window",
        help: "with a latency target: the time each depth is judged over, e.g. 2s",
        kind: Kind::Time("none"),
        set: |s, t| {
            within("latency_target", s.latency_target.as_mut(), t, &|l, t| {
                { l.window_ms = ms(t)?; Ok(()) }
            })
        },
        get: |s| s.latency_target.map(|l| duration_text(l.window_ms)).unwrap_or_default(),
    },
    WorkloadOption {
        key: "latency_percentile",
        api: "latency_target",
                cli: &["latency-percentile"],
                fio: &["latency_percentile"],
        label: "Latency share (%)",
        help: "with a latency target: the share of a window's I/Os that must meet it",
        kind: Kind::Text("100"),
        set: |s, t| {
            within("latency_target", s.latency_target.as_mut(), t, &|l, t| {
                l.percentile = t
                    .parse()
                    .map_err(|_| format!("invalid percentage '{t}': expected a number"))?;
                Ok(())
            })
        },
        get: |s| s.latency_target.map(|l| l.percentile.to_string()).unwrap_or_default(),
    },
    WorkloadOption {
        key: "pattern",
        api: "pattern",
                cli: &["pattern"],
                fio: &["buffer_compress_percentage", "zero_buffers"],
        label: "Data pattern",
        help: "random, zeros or compress:N (N % compressible)",
        kind: Kind::Text("random"),
        set: |s, t| keep(&mut s.pattern, t, parsed),
        get: |s| s.pattern.to_string(),
    },
    WorkloadOption {
        key: "cover_once",
        api: "cover_once",
                cli: &["cover-once"],
                fio: &[],
        label: "Visit every block once",
        help: "random modes: a permutation of the span",
        kind: Kind::Check,
        set: |s, t| { s.cover_once = check(t)?; Ok(()) },
        get: |s| flag(s.cover_once),
    },
    WorkloadOption {
        key: "direct",
        api: "direct",
                cli: &["buffered"],
                fio: &["direct"],
        label: "O_DIRECT (bypass the page cache)",
        help: "off (--buffered) measures the cache, not the disk",
        kind: Kind::Check,
        set: |s, t| keep(&mut s.direct, t, check),
        get: |s| flag(s.direct),
    },
    WorkloadOption {
        key: "end_fsync",
        api: "end_fsync",
                cli: &["end-fsync"],
                fio: &["end_fsync"],
        label: "fsync at the end",
        help: "the flush counts in the result",
        kind: Kind::Check,
        set: |s, t| { s.end_fsync = check(t)?; Ok(()) },
        get: |s| flag(s.end_fsync),
    },
    WorkloadOption {
        key: "fsync",
        api: "flush",
                cli: &["fsync"],
                fio: &["fsync"],
        label: "fsync every N writes",
        help: "a flush queued after every N writes, its latency reported apart (fio's fsync=N)",
        kind: Kind::Count("never"),
        set: |s, t| flush_set(s, t, false),
        get: |s| flush_get(s, false),
    },
    WorkloadOption {
        key: "fdatasync",
        api: "flush",
                cli: &["fdatasync"],
                fio: &["fdatasync"],
        label: "fdatasync every N writes",
        help: "as fsync, with fdatasync (fio's fdatasync=N)",
        kind: Kind::Count("never"),
        set: |s, t| flush_set(s, t, true),
        get: |s| flush_get(s, true),
    },
    WorkloadOption {
        key: "sync",
        api: "write_sync",
                cli: &["sync"],
                fio: &["sync"],
        label: "Synchronous writes",
        help: "open O_SYNC or O_DSYNC: each write durable when it returns (fio's sync=)",
        kind: Kind::Select(&["none", "sync", "dsync"]),
        set: |s, t| keep(&mut s.write_sync, t, parsed),
        get: |s| s.write_sync.to_string(),
    },
    WorkloadOption {
        key: "verify",
        api: "verify",
                cli: &["verify"],
                fio: &["verify"],
        label: "Verify what was written",
        help: "writes: header + CRC32C per block, all read back after; exit 1 on a bad block",
        kind: Kind::Check,
        set: |s, t| { s.verify = check(t)?; Ok(()) },
        get: |s| flag(s.verify),
    },
    WorkloadOption {
        key: "verify_every",
        api: "verify_every",
                cli: &["verify-every"],
                fio: &[],
        label: "Also verify every N blocks",
        help: "with verify: read back during the run too",
        kind: Kind::Count("only at the end"),
        set: |s, t| put(&mut s.verify_every, t, count),
        get: |s| some(&s.verify_every),
    },
    WorkloadOption {
        key: "random_distribution",
        api: "random_distribution",
                cli: &["random-distribution"],
                fio: &["random_distribution"],
        label: "Random distribution",
        help: "random modes: zipf:1.2, pareto:0.8 (80/20), normal:5, zoned:50/5:30/15:20/, zoned_abs:60/1G:40/4G; zoned:READS,WRITES gives the writes their own zones",
        kind: Kind::Text("uniform"),
        set: |s, t| {
            if t.trim().is_empty() {
                return Ok(());
            }
            let (reads, writes) = crate::access::Distribution::parse_per_direction(t.trim(), |v| {
                crate::units::parse_size(v).map_err(|e| e.to_string())
            })?;
            s.random_distribution = reads;
            s.write_random_distribution = writes;
            Ok(())
        },
        get: |s| s.distribution_text(),
    },
    WorkloadOption {
        key: "seq_pct",
        api: "seq_pct",
                cli: &["seq-pct"],
                fio: &[],
        label: "Sequential share (%)",
        help: "random modes: I/Os that continue after the previous one (fio's 100 − percentage_random)",
        kind: Kind::Count("0"),
        set: |s, t| keep(&mut s.seq_pct, t, count),
        get: |s| s.seq_pct.to_string(),
    },
    WorkloadOption {
        key: "replay",
        api: "replay",
                cli: &["replay"],
                fio: &[],
        label: "Replay a trace",
        help: "recorded I/O instead of the pattern above: a fio iolog, blkparse or blktrace file, or a built-in trace",
        kind: Kind::Trace,
        set: |s, t| {
            s.replay = opt(t, |t| Ok(crate::replay::ReplaySpec::new(t)))?;
            Ok(())
        },
        get: |s| s.replay.as_ref().map(|r| r.trace.clone()).unwrap_or_default(),
    },
    WorkloadOption {
        key: "replay_timing",
        api: "replay",
                cli: &["replay-timing"],
                fio: &[],
        label: "Replay timing",
        help: "recorded (idle over 10 ms compressed) or as fast as possible at the queue depth",
        kind: Kind::Select(&["", "recorded", "afap"]),
        set: |s, t| within("replay", replay(s), t, &|r, t| { r.timing = Some(parsed(t)?); Ok(()) }),
        get: |s| s.replay.as_ref().map(|r| some(&r.timing)).unwrap_or_default(),
    },
    WorkloadOption {
        key: "replay_speed",
        api: "replay",
                cli: &["replay-speed"],
                fio: &[],
        label: "Replay speed",
        help: "recorded timing sped up, e.g. 2",
        kind: Kind::Text("1"),
        set: |s, t| {
            within("replay", replay(s), t, &|r, t| {
                let v = t
                    .parse()
                    .map_err(|_| format!("invalid speed '{t}': expected a number such as 2"))?;
                { r.speed = Some(v); Ok(()) }
            })
        },
        get: |s| s.replay.as_ref().map(|r| some(&r.speed)).unwrap_or_default(),
    },
    WorkloadOption {
        key: "replay_idle_max",
        api: "replay",
                cli: &["replay-idle-max"],
                fio: &[],
        label: "Replay: longest idle",
        help: "recorded timing: idle gaps longer than this are shortened to it (10ms; 0 keeps them)",
        kind: Kind::Time("10ms"),
        set: |s, t| within("replay", replay(s), t, &|r, t| { r.idle_max_ms = Some(ms(t)?); Ok(()) }),
        get: |s| {
            s.replay
                .as_ref()
                .and_then(|r| r.idle_max_ms)
                .map(duration_text)
                .unwrap_or_default()
        },
    },
    WorkloadOption {
        key: "scan",
        api: "scan",
                cli: &["scan"],
                fio: &[],
        label: "Error scan (go on past failed I/Os, map by position)",
        help: "HD Tune: unreadable and slow regions on a grid",
        kind: Kind::Check,
        set: |s, t| { s.scan = check(t)?; Ok(()) },
        get: |s| flag(s.scan),
    },
    WorkloadOption {
        key: "scan_slow",
        api: "scan_slow_ms",
                cli: &["scan-slow"],
                fio: &[],
        label: "Slow I/O from",
        help: "with error scan: I/Os this slow mark their cell",
        kind: Kind::Time("200ms"),
        set: |s, t| put(&mut s.scan_slow_ms, t, ms),
        get: |s| s.scan_slow_ms.map(duration_text).unwrap_or_default(),
    },
    WorkloadOption {
        key: "cpus_allowed",
        api: "cpus_allowed",
                cli: &["cpus-allowed"],
                fio: &["cpus_allowed"],
        label: "CPUs",
        help: "run the jobs only on these CPUs, e.g. 0-3,6 (fio's cpus_allowed)",
        kind: Kind::Text("any"),
        set: |s, t| {
            s.cpus_allowed = opt(t, |t| Ok(t.to_string()))?;
            Ok(())
        },
        get: |s| s.cpus_allowed.clone().unwrap_or_default(),
    },
    WorkloadOption {
        key: "cpus_allowed_policy",
        api: "cpus_allowed_policy",
                cli: &["cpus-allowed-policy"],
                fio: &["cpus_allowed_policy"],
        label: "CPU sharing",
        help: "with CPUs: every job on all of them (shared) or each on one in turn (split)",
        kind: Kind::Select(&["shared", "split"]),
        set: |s, t| keep(&mut s.cpus_allowed_policy, t, parsed),
        get: |s| s.cpus_allowed_policy.to_string(),
    },
    WorkloadOption {
        key: "invalidate",
        api: "invalidate",
        cli: &["invalidate"],
        fio: &["invalidate"],
        label: "Start each pass cold (buffered)",
        help: "buffered I/O: drop the cached pages at the start and at each new pass, as fio's invalidate=1; false measures the page cache",
        kind: Kind::Select(&["true", "false"]),
        set: |s, t| keep(&mut s.invalidate, t, check),
        get: |s| flag(s.invalidate),
    },
    WorkloadOption {
        key: "fadvise_hint",
        api: "fadvise_hint",
        cli: &["fadvise-hint"],
        fio: &["fadvise_hint"],
        label: "Access hint",
        help: "posix_fadvise on each job's file: by the pattern (type: random or sequential, as fio's default), none, random, sequential; sets buffered read-ahead",
        kind: Kind::Select(&["type", "none", "random", "sequential"]),
        set: |s, t| keep(&mut s.fadvise_hint, t, parsed),
        get: |s| s.fadvise_hint.to_string(),
    },
    WorkloadOption {
        key: "iomem",
        api: "iomem",
        cli: &["iomem"],
        fio: &["iomem", "mem"],
        label: "Buffer memory",
        help: "huge: 2 MiB huge pages where the kernel gives them (default); pages: 4 KiB pages, as fio's default iomem=malloc",
        kind: Kind::Select(&["huge", "pages"]),
        set: |s, t| keep(&mut s.iomem, t, parsed),
        get: |s| s.iomem.to_string(),
    },
    WorkloadOption {
        key: "interval",
        api: "interval_ms",
                cli: &["interval-ms"],
                fio: &[],
        label: "Sample interval",
        help: "100ms..60s (a bare number is milliseconds)",
        kind: Kind::Time("1s"),
        set: |s, t| {
            if !t.is_empty() {
                s.interval_ms = match t.parse::<u64>() {
                    Ok(n) => n,
                    Err(_) => ms(t)?,
                };
            }
            Ok(())
        },
        get: |s| duration_text(s.interval_ms),
    },
    WorkloadOption {
        key: "backend",
        api: "backend",
                cli: &["backend"],
                fio: &["ioengine"],
        label: "Engine",
        help: "uring (default), sync (pread/pwrite), aio (Linux AIO, fio's libaio), null (no device)",
        kind: Kind::Select(&["uring", "sync", "aio", "null"]),
        set: |s, t| keep(&mut s.backend, t, parsed),
        get: |s| s.backend.as_str().to_string(),
    },
    WorkloadOption {
        key: "seed",
        api: "seed",
                cli: &["seed"],
                fio: &["randseed"],
        label: "Random seed",
        help: "same seed, same offsets",
        kind: Kind::Count("seed"),
        set: |s, t| keep(&mut s.seed, t, count),
        get: |s| s.seed.to_string(),
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_every_option_round_trips() {
        let (mut keys, mut flags) = (
            std::collections::HashSet::new(),
            std::collections::HashSet::new(),
        );
        for o in OPTIONS {
            assert!(keys.insert(o.key), "key {} twice", o.key);
            for c in o.cli {
                assert!(flags.insert(c), "cli {c} twice");
            }
        }
        let mut fio = std::collections::HashSet::new();
        for n in OPTIONS.iter().flat_map(|o| o.fio) {
            assert!(fio.insert(n), "fio name {n} twice");
        }
        // A spec that sets every option reads back to itself through the texts.
        let given = [
            ("rw", "randrw"),
            ("read_pct", "70"),
            ("bsrange", "4K-64K"),
            ("bs", "4K"),
            ("write_bs", "64K/50:128K/50"),
            ("blockalign", "4K"),
            ("iodepth", "32"),
            ("iodepth_batch", "8"),
            ("iodepth_batch_complete_min", "4"),
            ("iodepth_batch_complete_max", "16"),
            ("jobs", "2"),
            ("offset", "1M"),
            ("size", "1G"),
            ("offset_increment", "1G"),
            ("io_size", "4G"),
            ("loops", "3"),
            ("runtime", "30s"),
            ("ramp", "2s"),
            ("rate", "200MB"),
            ("rate_min", "100MB"),
            ("rate_process", "poisson"),
            ("thinktime", "1ms"),
            ("thinktime_blocks", "4"),
            ("thinktime_spin", "250us"),
            ("thinktime_blocks_type", "issue"),
            ("steadystate", "iops:2%"),
            ("ss_dur", "30s"),
            ("ss_ramp", "5s"),
            ("latency_target", "500us"),
            ("latency_window", "2s"),
            ("latency_percentile", "99.5"),
            ("pattern", "compress:50"),
            ("cover_once", "true"),
            ("direct", "false"),
            ("end_fsync", "true"),
            ("fdatasync", "8"),
            ("sync", "dsync"),
            ("verify", "true"),
            ("verify_every", "16"),
            ("random_distribution", "zipf:1.2"),
            ("seq_pct", "10"),
            ("replay", "app-build"),
            ("replay_timing", "afap"),
            ("replay_speed", "2"),
            ("replay_idle_max", "5ms"),
            ("scan", "true"),
            ("scan_slow", "300ms"),
            ("cpus_allowed", "0-1"),
            ("cpus_allowed_policy", "split"),
            ("iomem", "pages"),
            ("invalidate", "false"),
            ("fadvise_hint", "random"),
            ("sqpoll", "true"),
            ("force_async", "2"),
            ("uncached", "true"),
            ("hipri", "true"),
            ("atomic", "true"),
            ("fixed_buffers", "false"),
            ("registered_file", "false"),
            ("registered_ring", "false"),
            ("sqpoll_cpu", "1"),
            ("interval", "500ms"),
            ("backend", "sync"),
            ("seed", "7"),
        ];
        let keys: Vec<&str> = given.iter().map(|(k, _)| *k).collect();
        for o in OPTIONS {
            assert!(
                keys.contains(&o.key) || ["bssplit", "fsync"].contains(&o.key),
                "{} not covered",
                o.key
            );
        }
        let (spec, errs) = spec_from(given);
        assert!(errs.is_empty(), "{errs:?}");
        let texts: Vec<(&str, String)> = OPTIONS.iter().map(|o| (o.key, (o.get)(&spec))).collect();
        let (again, errs) = spec_from(texts.iter().map(|(k, t)| (*k, t.as_str())));
        assert!(errs.is_empty(), "{errs:?}");
        assert_eq!(again, spec);
        // Each text reads back as given (the steady rule in fio's spelling, iops:2.000000%).
        for (k, t) in given.into_iter().filter(|(k, _)| *k != "steadystate") {
            assert_eq!((by_key(k).expect("key").get)(&spec), t, "{k}");
        }
    }

    #[test]
    fn a_refinement_without_its_option_and_a_bad_value_are_named() {
        let (_, errs) = spec_from([("ss_dur", "30s"), ("bs", "4Q")]);
        assert_eq!(errs.len(), 2, "{errs:?}");
        assert_eq!(errs[0].0, "bs");
        assert!(errs[0].1.contains("'4Q'"), "{errs:?}");
        assert_eq!(errs[1], ("ss_dur", "needs steadystate".to_string()));
        let (_, errs) = spec_from([("fsync", "8"), ("fdatasync", "4")]);
        assert!(errs[0].1.contains("not both"), "{errs:?}");
    }
}
