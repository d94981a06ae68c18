//! The New-test form as plain data: every field of the workload spec as the text the user
//! typed, turned into a [`WorkloadSpec`] by the same parsers as the CLI and checked by the
//! agent's own validator (`shared`), so each error lands next to its field before anything is
//! sent.

use shared::units::{parse_duration_ms, parse_latency_us, parse_size, size_short};
use shared::{Backend, DataPattern, Rate, RwMode, WorkloadSpec};
use std::collections::BTreeMap;

/// The form's inputs, one per spec field, as text (selects and checkboxes too, so that one
/// update function serves every input).
#[derive(Clone, Debug, PartialEq)]
pub struct SpecForm {
    pub fields: BTreeMap<&'static str, String>,
}

/// How a field is edited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Free text with a placeholder/hint.
    Text(&'static str),
    Select(&'static [&'static str]),
    Check,
    /// A trace the agent offers (`GET /api/v1/traces`), or none.
    Trace,
}

/// A form field: spec key, label, how it is edited, and help.
pub struct Field {
    pub key: &'static str,
    pub label: &'static str,
    pub kind: Kind,
    pub help: &'static str,
}

const RW: &[&str] = &["read", "write", "randread", "randwrite", "randrw", "rw"];
const BACKENDS: &[&str] = &["uring", "sync", "null"];

/// Every field of [`WorkloadSpec`], in form order.
pub const FIELDS: &[Field] = &[
    Field {
        key: "rw",
        label: "I/O pattern",
        kind: Kind::Select(RW),
        help: "sequential or random; read, write or a mix",
    },
    Field {
        key: "read_pct",
        label: "Reads in the mix (%)",
        kind: Kind::Text("50"),
        help: "randrw and rw only",
    },
    Field {
        key: "bs",
        label: "Block size",
        kind: Kind::Text("4K"),
        help: "512 B..64 MiB; a range 4K-64K; a mix 4K/60:64K/40 (% of I/Os). K = 1024, KB = 1000",
    },
    Field {
        key: "iodepth",
        label: "Queue depth",
        kind: Kind::Text("1"),
        help: "I/Os in flight per job, 1..1024",
    },
    Field {
        key: "jobs",
        label: "Jobs (threads)",
        kind: Kind::Text("1"),
        help: "1..64; sequential jobs split the span",
    },
    Field {
        key: "offset",
        label: "Start offset",
        kind: Kind::Text("0"),
        help: "where the span begins",
    },
    Field {
        key: "size",
        label: "Span",
        kind: Kind::Text("whole target"),
        help: "empty: to the end of the target",
    },
    Field {
        key: "io_size",
        label: "Bytes to transfer",
        kind: Kind::Text("span × passes"),
        help: "empty: span × passes, unless time-based",
    },
    Field {
        key: "loops",
        label: "Passes",
        kind: Kind::Text("1"),
        help: "passes over the span",
    },
    Field {
        key: "runtime",
        label: "Run time",
        kind: Kind::Text("until done"),
        help: "e.g. 30s, 5m; makes the run time-based",
    },
    Field {
        key: "ramp",
        label: "Ramp (not measured)",
        kind: Kind::Text("0s"),
        help: "warm-up excluded from results",
    },
    Field {
        key: "rate",
        label: "Rate cap",
        kind: Kind::Text("none"),
        help: "e.g. 3200MB (per second) or 5000iops",
    },
    Field {
        key: "rate_process",
        label: "Rate spacing",
        kind: Kind::Select(&["linear", "poisson"]),
        help: "with a rate cap: evenly, or as Poisson arrivals",
    },
    Field {
        key: "thinktime",
        label: "Think time",
        kind: Kind::Text("none"),
        help: "pause after every N I/Os, e.g. 1ms (fio's thinktime)",
    },
    Field {
        key: "thinktime_blocks",
        label: "Think every N I/Os",
        kind: Kind::Text("1"),
        help: "with a think time: I/Os between pauses",
    },
    Field {
        key: "thinktime_spin",
        label: "Think: spinning part",
        kind: Kind::Text("0"),
        help: "with a think time: CPU spun before sleeping the rest",
    },
    Field {
        key: "thinktime_blocks_type",
        label: "Think: count I/Os at",
        kind: Kind::Select(&["complete", "issue"]),
        help: "with a think time: completion (fio's default) or issue",
    },
    Field {
        key: "pattern",
        label: "Data pattern",
        kind: Kind::Text("random"),
        help: "random, zeros or compress:N (N % compressible)",
    },
    Field {
        key: "cover_once",
        label: "Visit every block once",
        kind: Kind::Check,
        help: "random modes: a permutation of the span",
    },
    Field {
        key: "direct",
        label: "O_DIRECT (bypass the page cache)",
        kind: Kind::Check,
        help: "off measures the cache, not the disk",
    },
    Field {
        key: "end_fsync",
        label: "fsync at the end",
        kind: Kind::Check,
        help: "the flush counts in the result",
    },
    Field {
        key: "verify",
        label: "Verify what was written",
        kind: Kind::Check,
        help: "writes: header + CRC32C per block, all read back after",
    },
    Field {
        key: "verify_every",
        label: "Also verify every N blocks",
        kind: Kind::Text("only at the end"),
        help: "with verify: read back during the run too",
    },
    Field {
        key: "random_distribution",
        label: "Random distribution",
        kind: Kind::Text("uniform"),
        help: "random modes: zipf:1.2, pareto:0.8 (80/20), normal:5, zoned:50/5:30/15:20/",
    },
    Field {
        key: "seq_pct",
        label: "Sequential share (%)",
        kind: Kind::Text("0"),
        help: "random modes: I/Os that continue after the previous one",
    },
    Field {
        key: "replay",
        label: "Replay a trace",
        kind: Kind::Trace,
        help: "recorded application I/O instead of the pattern above (diskscope record)",
    },
    Field {
        key: "replay_timing",
        label: "Replay timing",
        kind: Kind::Select(&["", "recorded", "afap"]),
        help: "recorded (idle over 10 ms compressed) or as fast as possible at the queue depth",
    },
    Field {
        key: "replay_speed",
        label: "Replay speed",
        kind: Kind::Text("1"),
        help: "recorded timing sped up, e.g. 2",
    },
    Field {
        key: "scan",
        label: "Error scan (go on past failed I/Os, map by position)",
        kind: Kind::Check,
        help: "HD Tune: unreadable and slow regions on a grid",
    },
    Field {
        key: "scan_slow",
        label: "Slow I/O from",
        kind: Kind::Text("200ms"),
        help: "with error scan: I/Os this slow mark their cell",
    },
    Field {
        key: "flush",
        label: "Flush every N writes",
        kind: Kind::Text("never"),
        help: "fsync after every N writes (e.g. 8), or fdatasync/8 (fio's fsync=, fdatasync=)",
    },
    Field {
        key: "write_sync",
        label: "Synchronous writes",
        kind: Kind::Select(&["none", "sync", "dsync"]),
        help: "open O_SYNC or O_DSYNC: each write durable when it returns (fio's sync=)",
    },
    Field {
        key: "interval",
        label: "Sample interval",
        kind: Kind::Text("1s"),
        help: "100ms..60s",
    },
    Field {
        key: "backend",
        label: "Engine",
        kind: Kind::Select(BACKENDS),
        help: "uring (default), sync (pread/pwrite), null (no device)",
    },
    Field {
        key: "seed",
        label: "Random seed",
        kind: Kind::Text("seed"),
        help: "same seed, same offsets",
    },
];

/// A duration as the user would type it: `10s`, `5m`, `250ms`.
pub fn duration_text(ms: u64) -> String {
    if ms != 0 && ms.is_multiple_of(60_000) {
        format!("{}m", ms / 60_000)
    } else if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else {
        format!("{ms}ms")
    }
}

fn flag(b: bool) -> String {
    if b { "true" } else { "false" }.to_string()
}

impl SpecForm {
    /// The form showing `spec`.
    pub fn from_spec(spec: &WorkloadSpec) -> Self {
        let mut f = BTreeMap::new();
        f.insert("rw", spec.rw.as_str().to_string());
        f.insert("read_pct", spec.read_pct.to_string());
        f.insert("bs", spec.sizes_label());
        f.insert("iodepth", spec.iodepth.to_string());
        f.insert("jobs", spec.jobs.to_string());
        f.insert("offset", size_short(spec.offset));
        f.insert("size", spec.size.map(size_short).unwrap_or_default());
        f.insert("io_size", spec.io_size.map(size_short).unwrap_or_default());
        f.insert("loops", spec.loops.to_string());
        f.insert(
            "runtime",
            spec.runtime_ms.map(duration_text).unwrap_or_default(),
        );
        f.insert("ramp", duration_text(spec.ramp_ms));
        let rate = match spec.rate {
            None => String::new(),
            Some(Rate::Iops(n)) => format!("{n}iops"),
            Some(Rate::BytesPerSec(b)) if b.is_multiple_of(1_000_000) => {
                format!("{}MB", b / 1_000_000)
            }
            Some(Rate::BytesPerSec(b)) => b.to_string(),
        };
        f.insert("rate", rate);
        f.insert("rate_process", spec.rate_process.to_string());
        let think = spec.think.as_ref();
        let us_text = |us: u64| match us {
            0 => String::new(),
            us if us % 1000 == 0 => format!("{}ms", us / 1000),
            us => format!("{us}us"),
        };
        f.insert("thinktime", us_text(think.map_or(0, |t| t.us)));
        f.insert("thinktime_spin", us_text(think.map_or(0, |t| t.spin_us)));
        f.insert(
            "thinktime_blocks",
            think.map(|t| t.blocks.to_string()).unwrap_or_default(),
        );
        let issue = think.is_some_and(|t| t.count_issued);
        f.insert(
            "thinktime_blocks_type",
            if issue { "issue" } else { "complete" }.into(),
        );
        f.insert("pattern", spec.pattern.to_string());
        f.insert("cover_once", flag(spec.cover_once));
        f.insert("direct", flag(spec.direct));
        f.insert("end_fsync", flag(spec.end_fsync));
        f.insert(
            "flush",
            spec.flush.map(|x| x.to_string()).unwrap_or_default(),
        );
        f.insert("write_sync", spec.write_sync.to_string());
        f.insert("verify", flag(spec.verify));
        f.insert(
            "verify_every",
            spec.verify_every.map(|n| n.to_string()).unwrap_or_default(),
        );
        f.insert("random_distribution", spec.random_distribution.to_string());
        f.insert("seq_pct", spec.seq_pct.to_string());
        f.insert("scan", flag(spec.scan));
        let r = spec.replay.as_ref();
        f.insert("replay", r.map(|r| r.trace.clone()).unwrap_or_default());
        f.insert(
            "replay_timing",
            r.and_then(|r| r.timing)
                .map(|t| t.to_string())
                .unwrap_or_default(),
        );
        f.insert(
            "replay_speed",
            r.and_then(|r| r.speed)
                .map(|s| s.to_string())
                .unwrap_or_default(),
        );
        f.insert(
            "scan_slow",
            spec.scan_slow_ms.map(duration_text).unwrap_or_default(),
        );
        f.insert("interval", duration_text(spec.interval_ms));
        f.insert("backend", spec.backend.as_str().to_string());
        f.insert("seed", spec.seed.to_string());
        SpecForm { fields: f }
    }

    /// The rate spacing and think-time fields.
    /// Flushes every N writes and synchronous writes.
    /// The block size field: one size, a range (`4K-64K`) or a mix (`4K/60:64K/40`).
    fn sizes_into(&self, spec: &mut WorkloadSpec, errs: &mut BTreeMap<&'static str, String>) {
        let bs = self.get("bs").trim();
        let size = |t: &str| parse_size(t).map_err(|e| e.to_string());
        let got = if bs.contains('/') {
            bs.parse::<shared::bssplit::BsSplit>().map(|split| {
                spec.bs = split.min();
                spec.bssplit = Some(split);
            })
        } else if bs.contains('-') {
            shared::bssplit::parse_range(bs, size).map(|(lo, hi)| {
                spec.bs = lo;
                spec.bs_max = Some(hi);
            })
        } else {
            size(bs).map(|v| spec.bs = v)
        };
        if let Err(e) = got {
            errs.insert("bs", e);
        }
    }

    fn durability_into(&self, spec: &mut WorkloadSpec, errs: &mut BTreeMap<&'static str, String>) {
        let flush = self.get("flush").trim();
        if !flush.is_empty() {
            match flush.parse() {
                Ok(f) => spec.flush = Some(f),
                Err(e) => {
                    errs.insert("flush", e);
                }
            }
        }
        match self.get("write_sync").trim().parse() {
            Ok(w) => spec.write_sync = w,
            Err(e) => {
                errs.insert("write_sync", e);
            }
        }
    }

    fn pacing_into(&self, spec: &mut WorkloadSpec, errs: &mut BTreeMap<&'static str, String>) {
        let opt = |k: &str| Some(self.get(k).trim().to_string()).filter(|t| !t.is_empty());
        if let Some(t) = opt("rate_process") {
            match t.parse() {
                Ok(p) => spec.rate_process = p,
                Err(e) => {
                    errs.insert("rate_process", e);
                }
            }
        }
        let blocks = match opt("thinktime_blocks").map(|t| t.parse::<u32>()) {
            None => 1,
            Some(Ok(n)) => n,
            Some(Err(_)) => {
                errs.insert(
                    "thinktime_blocks",
                    "invalid count: expected a whole number of I/Os".into(),
                );
                1
            }
        };
        let mut time = |key: &'static str| match opt(key).map(|t| parse_latency_us(&t)) {
            None => 0,
            Some(Ok(us)) => us,
            Some(Err(e)) => {
                errs.insert(key, e.replace("latency", "time"));
                0
            }
        };
        let (us, spin_us) = (time("thinktime"), time("thinktime_spin"));
        if us > 0 {
            spec.think = Some(shared::pacing::ThinkTime {
                us,
                spin_us,
                blocks,
                count_issued: opt("thinktime_blocks_type").as_deref() == Some("issue"),
            });
        }
    }

    /// The random-offset and error-scan fields.
    fn access_into(&self, spec: &mut WorkloadSpec, errs: &mut BTreeMap<&'static str, String>) {
        let opt = |k: &str| Some(self.get(k).trim().to_string()).filter(|t| !t.is_empty());
        if let Some(t) = opt("random_distribution") {
            match t.parse() {
                Ok(d) => spec.random_distribution = d,
                Err(e) => {
                    errs.insert("random_distribution", e);
                }
            }
        }
        if let Some(t) = opt("seq_pct") {
            match t.parse::<u8>() {
                Ok(v) => spec.seq_pct = v,
                Err(_) => {
                    errs.insert(
                        "seq_pct",
                        format!("invalid percentage '{t}': expected a whole number"),
                    );
                }
            }
        }
        if let Some(trace) = opt("replay") {
            let mut r = shared::replay::ReplaySpec::new(&trace);
            if let Some(t) = opt("replay_timing") {
                match t.parse() {
                    Ok(v) => r.timing = Some(v),
                    Err(e) => {
                        errs.insert("replay_timing", e);
                    }
                }
            }
            if let Some(t) = opt("replay_speed") {
                match t.parse::<f64>() {
                    Ok(v) => r.speed = Some(v),
                    Err(_) => {
                        errs.insert(
                            "replay_speed",
                            format!("invalid speed '{t}': expected a number such as 2"),
                        );
                    }
                }
            }
            spec.replay = Some(r);
        }
        if let Some(t) = opt("scan_slow") {
            match parse_duration_ms(&t) {
                Ok(v) => spec.scan_slow_ms = Some(v),
                Err(e) => {
                    errs.insert("scan_slow", e.to_string());
                }
            }
        }
    }

    /// The check boxes' fields.
    fn checks_into(&self, spec: &mut WorkloadSpec) {
        spec.cover_once = self.get("cover_once") == "true";
        spec.direct = self.get("direct") == "true";
        spec.end_fsync = self.get("end_fsync") == "true";
        spec.verify = self.get("verify") == "true";
        spec.scan = self.get("scan") == "true";
    }

    pub fn get(&self, key: &str) -> &str {
        self.fields.get(key).map_or("", String::as_str)
    }

    pub fn set(&mut self, key: &'static str, value: String) {
        self.fields.insert(key, value);
    }

    /// The spec as typed (a field that does not parse keeps its default) and the fields
    /// that do not parse, each message naming the bad value. The agent's validator then
    /// judges the spec ([`judged`]). Out of line: the form's check and its verdict both
    /// call it, one copy of the code.
    #[inline(never)]
    pub fn parse(&self) -> (WorkloadSpec, BTreeMap<&'static str, String>) {
        let mut errs = BTreeMap::new();
        let mut spec = WorkloadSpec::default();
        let text = |k: &str| self.get(k).trim().to_string();
        macro_rules! parse {
            ($key:literal, $e:expr) => {
                match $e {
                    Ok(v) => Some(v),
                    Err(e) => {
                        errs.insert($key, e.to_string());
                        None
                    }
                }
            };
        }
        let number = |k: &str| {
            let t = text(k);
            move |what: &str| format!("invalid {what} '{t}': expected a whole number")
        };
        let opt = |k: &str| Some(text(k)).filter(|t| !t.is_empty());
        if let Some(v) = parse!("rw", text("rw").parse::<RwMode>()) {
            spec.rw = v;
        }
        if let Some(v) = parse!(
            "read_pct",
            text("read_pct")
                .parse::<u8>()
                .map_err(|_| number("read_pct")("percentage"))
        ) {
            spec.read_pct = v;
        }
        self.sizes_into(&mut spec, &mut errs);
        if let Some(v) = parse!(
            "iodepth",
            text("iodepth")
                .parse::<u32>()
                .map_err(|_| number("iodepth")("queue depth"))
        ) {
            spec.iodepth = v;
        }
        if let Some(v) = parse!(
            "jobs",
            text("jobs")
                .parse::<u32>()
                .map_err(|_| number("jobs")("job count"))
        ) {
            spec.jobs = v;
        }
        if let Some(v) = parse!("offset", parse_size(&text("offset"))) {
            spec.offset = v;
        }
        if let Some(t) = opt("size") {
            spec.size = parse!("size", parse_size(&t));
        }
        if let Some(t) = opt("io_size") {
            spec.io_size = parse!("io_size", parse_size(&t));
        }
        if let Some(v) = parse!(
            "loops",
            text("loops")
                .parse::<u32>()
                .map_err(|_| number("loops")("pass count"))
        ) {
            spec.loops = v;
        }
        if let Some(t) = opt("runtime") {
            spec.runtime_ms = parse!("runtime", parse_duration_ms(&t));
        }
        if let Some(t) = opt("ramp") {
            if let Some(v) = parse!("ramp", parse_duration_ms(&t)) {
                spec.ramp_ms = v;
            }
        }
        if let Some(t) = opt("rate") {
            spec.rate = parse!("rate", t.parse::<Rate>());
        }
        if let Some(v) = parse!("pattern", text("pattern").parse::<DataPattern>()) {
            spec.pattern = v;
        }
        self.checks_into(&mut spec);
        self.durability_into(&mut spec, &mut errs);
        if let Some(t) = opt("verify_every") {
            spec.verify_every = parse!(
                "verify_every",
                t.parse::<u64>()
                    .map_err(|_| number("verify_every")("block count"))
            );
        }
        self.access_into(&mut spec, &mut errs);
        self.pacing_into(&mut spec, &mut errs);
        if let Some(v) = parse!("interval", parse_duration_ms(&text("interval"))) {
            spec.interval_ms = v;
        }
        if let Some(v) = parse!("backend", text("backend").parse::<Backend>()) {
            spec.backend = v;
        }
        if let Some(v) = parse!(
            "seed",
            text("seed")
                .parse::<u64>()
                .map_err(|_| number("seed")("seed"))
        ) {
            spec.seed = v;
        }
        (spec, errs)
    }

    /// The spec, or every problem keyed by form field, as the dashboard shows them: the
    /// form's own parse errors and the validator's (here run in place of the agent's).
    #[cfg(test)]
    pub fn to_spec(&self) -> Result<WorkloadSpec, BTreeMap<&'static str, String>> {
        let (spec, errs) = self.parse();
        let problems = spec.validate().err().unwrap_or_default();
        judged(spec, errs, Some(&problems))
    }
}

/// The typed spec with the form's parse errors and the agent validator's `problems` (`None`
/// while its answer is not in): the spec when there are none, else the errors by form field
/// (a field's parse error first; none at all while the answer is awaited).
pub fn judged(
    spec: WorkloadSpec,
    mut errs: BTreeMap<&'static str, String>,
    problems: Option<&[shared::SpecError]>,
) -> Result<WorkloadSpec, BTreeMap<&'static str, String>> {
    let Some(problems) = problems else {
        return Err(errs);
    };
    for p in problems {
        errs.entry(form_key(&p.field))
            .or_insert_with(|| p.to_string());
    }
    if errs.is_empty() {
        Ok(spec)
    } else {
        Err(errs)
    }
}

/// The New-test form's "Repeat" field: empty is one pass; else 1..=1000 passes.
pub fn parse_repeat(text: &str) -> Result<Option<u32>, String> {
    let t = text.trim();
    if t.is_empty() {
        return Ok(None);
    }
    match t.parse::<u32>() {
        Ok(n) if (1..=shared::steps::MAX_REPEAT).contains(&n) => Ok(Some(n)),
        _ => Err(format!(
            "repeat = {t}: give a number of passes, 1..{}",
            shared::steps::MAX_REPEAT
        )),
    }
}

/// The form field that shows a validator error on spec field `field`.
fn form_key(field: &str) -> &'static str {
    match field {
        "runtime_ms" => "runtime",
        "scan_slow_ms" => "scan_slow",
        "ramp_ms" => "ramp",
        "interval_ms" => "interval",
        other => FIELDS
            .iter()
            .find(|f| f.key == other)
            .map_or("rw", |f| f.key),
    }
}

/// The knobs of a preset (empty = the preset's default), as the user typed them.
pub const PRESET_OPTIONS: &[Field] = &[
    Field {
        key: "size",
        label: "Test size / span",
        kind: Kind::Text("preset default"),
        help: "e.g. 1G; cdm up to the free space",
    },
    Field {
        key: "count",
        label: "Passes / max rounds",
        kind: Kind::Text("preset default"),
        help: "cdm passes (5), snia-steady rounds (25)",
    },
    Field {
        key: "runtime",
        label: "Time per step",
        kind: Kind::Text("preset default"),
        help: "e.g. 5s; steady-state round length",
    },
    Field {
        key: "rate",
        label: "Required rate",
        kind: Kind::Text("sustain only"),
        help: "e.g. 3200MB (per second)",
    },
    Field {
        key: "streams",
        label: "Streams",
        kind: Kind::Text("1"),
        help: "sustain: parallel writers sharing the rate",
    },
    Field {
        key: "buffer_ms",
        label: "Buffer (ms of data)",
        kind: Kind::Text("1s"),
        help: "sustain: the RAM buffer a pass may rely on, e.g. 500ms",
    },
    Field {
        key: "idle",
        label: "Idle between steps",
        kind: Kind::Text("preset default"),
        help: "e.g. 1s; cache-recovery 30s",
    },
    Field {
        key: "bs",
        label: "Block size",
        kind: Kind::Text("preset default"),
        help: "full-span, fill, sustain",
    },
    Field {
        key: "p99_us",
        label: "p99 limit",
        kind: Kind::Text("1ms"),
        help: "latency-target: e.g. 500us, 1ms",
    },
    Field {
        key: "verify",
        label: "Verify the writes",
        kind: Kind::Check,
        help: "each write step read back and checked",
    },
    Field {
        key: "interval",
        label: "Sample interval",
        kind: Kind::Text("1s"),
        help: "e.g. 100ms; every preset",
    },
];

/// The preset options from their text fields; errors keyed by field, naming the value.
pub fn preset_options(
    fields: &BTreeMap<&'static str, String>,
) -> Result<shared::PresetOptions, BTreeMap<&'static str, String>> {
    let mut errs = BTreeMap::new();
    let mut o = shared::PresetOptions::default();
    let text = |k: &str| {
        fields
            .get(k)
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    macro_rules! opt {
        ($key:literal, $parse:expr) => {
            match text($key).map($parse) {
                None => None,
                Some(Ok(v)) => Some(v),
                Some(Err(e)) => {
                    errs.insert($key, e.to_string());
                    None
                }
            }
        };
    }
    let whole = |what: &'static str| {
        move |t: String| {
            t.parse::<u32>()
                .map_err(|_| format!("invalid {what} '{t}': expected a whole number"))
        }
    };
    o.size = opt!("size", |t: String| parse_size(&t));
    o.count = opt!("count", whole("count"));
    o.runtime_ms = opt!("runtime", |t: String| parse_duration_ms(&t));
    o.rate = opt!("rate", |t: String| t.parse::<Rate>());
    o.streams = opt!("streams", whole("stream count"));
    o.idle_ms = opt!("idle", |t: String| parse_duration_ms(&t));
    o.buffer_ms = opt!("buffer_ms", |t: String| parse_duration_ms(&t));
    o.bs = opt!("bs", |t: String| parse_size(&t));
    o.interval_ms = opt!("interval", |t: String| parse_duration_ms(&t));
    o.verify = (fields.get("verify").map(String::as_str) == Some("true")).then_some(true);
    o.p99_us = opt!("p99_us", |t: String| shared::units::parse_latency_us(&t));
    if errs.is_empty() {
        Ok(o)
    } else {
        Err(errs)
    }
}

/// Whether the run writes (and so, on a block device, destroys data).
pub fn writes(spec: &WorkloadSpec) -> bool {
    spec.rw.read_pct(spec.read_pct) < 100
}

/// A zoom range typed as seconds from the run's start (`from`, `to`) → the sample `seq`s it
/// covers at `interval_ms` per sample. Errors name the bad value.
pub fn zoom_range(from: &str, to: &str, interval_ms: u64) -> Result<(u64, u64), String> {
    let secs = |name: &str, v: &str| -> Result<f64, String> {
        let x: f64 = v
            .trim()
            .parse()
            .map_err(|_| format!("{name} = '{v}': expected seconds, e.g. 120"))?;
        if !x.is_finite() || x < 0.0 {
            return Err(format!("{name} = '{v}': expected 0 or more seconds"));
        }
        Ok(x)
    };
    let (a, b) = (secs("from", from)?, secs("to", to)?);
    if b <= a {
        return Err(format!("to = {b} s must be after from = {a} s"));
    }
    let per = interval_ms.max(1) as f64 / 1e3;
    let first = (a / per).floor() as u64;
    let last = ((b / per).ceil() as u64).saturating_sub(1).max(first);
    Ok((first, last))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeat_takes_a_number_of_passes() {
        assert_eq!(parse_repeat(" "), Ok(None));
        assert_eq!(parse_repeat("5"), Ok(Some(5)));
        assert!(parse_repeat("0").is_err_and(|e| e.starts_with("repeat = 0")));
        assert!(parse_repeat("five").is_err());
    }

    #[test]
    fn a_spec_survives_the_form_round_trip() {
        let spec = WorkloadSpec {
            rw: RwMode::RandRw,
            read_pct: 70,
            bs: 1 << 20,
            iodepth: 32,
            iodepth_batch: 1,
            iodepth_batch_complete_min: 1,
            iodepth_batch_complete_max: 0,
            jobs: 2,
            offset: 4096,
            offset_increment: None,
            block_align: None,
            rate_min: None,
            steady: None,
            latency_target: None,
            cpus_allowed: None,
            cpus_allowed_policy: Default::default(),
            size: Some(3 << 30),
            io_size: Some(10 << 30),
            loops: 2,
            runtime_ms: Some(90_000),
            ramp_ms: 2_500,
            rate: Some(Rate::BytesPerSec(3_200_000_000)),
            pattern: DataPattern::Compress(50),
            cover_once: true,
            direct: false,
            end_fsync: true,
            interval_ms: 250,
            backend: Backend::Sync,
            seed: 42,
            verify: false,
            verify_every: None,
            scan: false,
            scan_slow_ms: None,
            random_distribution: shared::access::Distribution::Uniform,
            seq_pct: 0,
            replay: None,
            rate_process: shared::pacing::RateProcess::Poisson,
            think: Some(shared::pacing::ThinkTime {
                us: 2500,
                spin_us: 1000,
                blocks: 3,
                count_issued: true,
            }),
            bssplit: None,
            write_bssplit: None,
            bs_max: None,
            flush: "fdatasync/16".parse().ok(),
            write_sync: shared::durability::WriteSync::Dsync,
        };
        let mut spec = spec;
        spec.iodepth = 1; // sync backend
        let form = SpecForm::from_spec(&spec);
        assert_eq!(form.get("bs"), "1M");
        assert_eq!(form.get("rate"), "3200MB");
        assert_eq!(form.get("runtime"), "90s");
        assert_eq!(form.get("thinktime"), "2500us");
        assert_eq!(form.get("thinktime_spin"), "1ms");
        assert_eq!(form.get("flush"), "fdatasync/16");
        assert_eq!(form.to_spec(), Ok(spec.clone()));
        // A size mix, its smallest size the block size.
        let mix = WorkloadSpec {
            bs: 4096,
            bssplit: "4K/60:64K/40".parse().ok(),
            cover_once: false,
            ..spec.clone()
        };
        let f = SpecForm::from_spec(&mix);
        assert_eq!(f.get("bs"), "4K/60:64K/40");
        assert_eq!(f.to_spec(), Ok(mix));
        // A range of sizes, written in the block size's field.
        let range = WorkloadSpec {
            bs: 4096,
            bs_max: Some(64 << 10),
            cover_once: false,
            ..spec.clone()
        };
        let f = SpecForm::from_spec(&range);
        assert_eq!(f.get("bs"), "4K-64K");
        assert_eq!(f.to_spec(), Ok(range));
        // An error scan with its slow threshold, and the threshold refused without it.
        let scan = WorkloadSpec {
            rw: RwMode::RandRead,
            scan: true,
            scan_slow_ms: Some(150),
            cover_once: false,
            flush: None,
            write_sync: shared::durability::WriteSync::None,
            random_distribution: shared::access::Distribution::Zipf(1.2),
            seq_pct: 20,
            ..spec.clone()
        };
        let mut f = SpecForm::from_spec(&scan);
        assert_eq!(f.get("scan_slow"), "150ms");
        assert_eq!(f.to_spec(), Ok(scan));
        f.set("scan", "false".into());
        assert!(f
            .to_spec()
            .is_err_and(|e| e["scan_slow"].contains("needs scan")));
        for f in FIELDS {
            assert!(form.fields.contains_key(f.key), "{} has no input", f.key);
        }
    }

    #[test]
    fn errors_land_on_their_field_and_name_the_value() {
        let mut form = SpecForm::from_spec(&WorkloadSpec::default());
        form.set("bs", "4Q".into());
        form.set("iodepth", "0".into());
        form.set("runtime", "".into());
        form.set("interval", "20ms".into());
        form.set("pattern", "compress:140".into());
        let errs = form.to_spec().expect_err("invalid");
        assert!(errs["bs"].contains("'4Q'"), "{errs:?}");
        assert_eq!(errs["iodepth"], "iodepth = 0: must be 1..1024");
        assert!(errs["interval"].contains("20"), "{errs:?}");
        assert!(errs["pattern"].contains("compress:140"), "{errs:?}");
        assert!(
            !errs.contains_key("runtime"),
            "empty run time means until done"
        );
    }

    #[test]
    fn preset_options_parse_or_name_the_bad_value() {
        let mut f = BTreeMap::new();
        f.insert("size", "2G".to_string());
        f.insert("rate", "3200MB".to_string());
        f.insert("count", "".to_string());
        let o = preset_options(&f).expect("valid");
        assert_eq!(o.size, Some(2 << 30));
        assert_eq!(o.rate, Some(Rate::BytesPerSec(3_200_000_000)));
        assert_eq!(o.count, None);
        f.insert("count", "five".to_string());
        let e = preset_options(&f).expect_err("invalid");
        assert!(e["count"].contains("'five'"), "{e:?}");
    }

    #[test]
    fn writes_follow_the_mode_and_mix() {
        let mut s = WorkloadSpec::default();
        assert!(!writes(&s));
        s.rw = RwMode::RandRw;
        s.read_pct = 100;
        assert!(!writes(&s));
        s.read_pct = 99;
        assert!(writes(&s));
        s.rw = RwMode::Write;
        assert!(writes(&s));
    }

    #[test]
    fn a_zoom_range_in_seconds_becomes_sample_seqs_or_names_the_bad_value() {
        assert_eq!(zoom_range("10", "20", 100), Ok((100, 199)));
        assert_eq!(zoom_range("0", "0.05", 100), Ok((0, 0)));
        assert_eq!(zoom_range(" 60 ", "120", 1000), Ok((60, 119)));
        assert!(zoom_range("ten", "20", 100)
            .unwrap_err()
            .contains("from = 'ten'"));
        assert!(zoom_range("5", "-1", 100)
            .unwrap_err()
            .contains("to = '-1'"));
        assert!(zoom_range("30", "20", 100)
            .unwrap_err()
            .contains("to = 20 s must be after"));
    }
}
