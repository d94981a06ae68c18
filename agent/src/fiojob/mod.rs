//! fio job files in: `diskscope run JOB.fio [JOB2.fio …]`. A job file becomes the steps of
//! one run on one target: jobs separated by `stonewall` (and each further file) run one after
//! another as steps; `numjobs` clones run together as the step's jobs. Every option is either
//! run as fio runs it, taken with its difference written in `notes`, or refused naming the
//! option, its file and line (`options.rs`); nothing is ignored silently.
//!
//! Defaults are fio's, not diskscope's: buffered I/O (`direct=0`), random offsets that visit
//! each block once per pass (fio's random map, unless `norandommap`), `rate` per job.

mod options;
pub mod parse;

use shared::bssplit::BsSplit;
use shared::spec::{RwMode, WorkloadSpec};
use shared::Step;
use std::fmt;
use std::path::{Path, PathBuf};

pub use options::{size as fio_size, time_ms as fio_time_ms};

/// Where an option or section was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct At {
    pub file: String,
    pub line: u32,
}

impl fmt::Display for At {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum JobFileError {
    #[error("{at}: {message}")]
    Syntax { at: At, message: String },
    #[error("{at}: option '{option}': {message}")]
    Option {
        at: At,
        option: String,
        message: String,
    },
    #[error("{file}: {message}")]
    File { file: String, message: String },
}

/// The logs a job asks for: each a file name prefix (fio's `write_bw_log=PREFIX`; the job's
/// name when none is given), written per sample interval (`report/fio_log.rs`).
#[derive(Debug, Clone, Default)]
pub struct Logs {
    pub bw: Option<String>,
    pub iops: Option<String>,
    pub lat: Option<String>,
    /// `log_avg_msec`: the window each line averages (diskscope's sample interval).
    pub avg_ms: Option<u64>,
    /// `per_job_logs` (fio's default 1): numbered files per clone; diskscope has the clones'
    /// sum only.
    pub per_job: Option<bool>,
}

impl Logs {
    /// Whether any log is asked for.
    pub fn any(&self) -> bool {
        self.bw.is_some() || self.iops.is_some() || self.lat.is_some()
    }
}

/// One job section with `[global]`'s options before its own.
#[derive(Debug, Clone)]
pub struct Job {
    pub name: String,
    pub description: Option<String>,
    pub at: At,
    pub filename: Option<String>,
    pub directory: Option<String>,
    pub spec: WorkloadSpec,
    pub runtime_ms: Option<u64>,
    pub time_based: bool,
    pub startdelay_ms: u64,
    pub stonewall: bool,
    pub group_reporting: bool,
    pub norandommap: bool,
    pub do_verify: bool,
    /// fio's per-interval logs the job asks for (`write_bw_log` and the like).
    pub logs: Logs,
    /// The job's own options as written (fio's "job options").
    pub options: Vec<(String, String)>,
    /// Differences from fio this job runs with.
    pub notes: Vec<String>,
    /// The `ioengine` the job names, and where.
    pub engine: Option<(String, At)>,
    /// fio's `steadystate`, `ss_dur` and `ss_ramp`, made a rule once the section is read.
    pub steady: (Option<String>, Option<u64>, u64),
    /// The writes' own sizes where they differ from the reads': from `bs=R,W` and from
    /// `bssplit=READS,WRITES` (which wins, as fio's bssplit does over bs).
    pub write_sizes: (Option<BsSplit>, Option<BsSplit>),
    /// The trims' own size (`bs=R,W,T`), where given.
    pub trim_bs: Option<u64>,
    /// fio's `latency_target` (µs), `latency_window` (ms) and `latency_percentile`.
    pub latency: (Option<u64>, Option<u64>, f64),
    /// fio's io_uring `fixedbufs` and `registerfiles`, as the job sets them (fio's default:
    /// neither registered).
    pub registrations: (Option<bool>, Option<bool>),
    /// fio's metadata engines (`filecreate`, `filestat`, `filedelete`): the files
    /// workload's phase the job measures.
    pub meta: Option<shared::files::Phase>,
    /// Their `nrfiles` and `filesize`.
    pub meta_shape: (Option<u32>, Option<u64>),
    /// The metadata engine `rw` names (newer fio's examples set `rw=filestat` beside
    /// `ioengine=filestat`).
    pub meta_rw: Option<shared::files::Phase>,
    /// fio's `unlink`, when given.
    pub unlink: Option<bool>,
}

impl Job {
    fn new(name: &str, at: At) -> Self {
        Job {
            name: name.to_string(),
            description: None,
            at,
            filename: None,
            directory: None,
            // fio's defaults where they differ from diskscope's.
            spec: WorkloadSpec {
                direct: false,
                iomem: shared::spec::BufferMemory::Pages,
                ..WorkloadSpec::default()
            },
            runtime_ms: None,
            time_based: false,
            startdelay_ms: 0,
            stonewall: false,
            group_reporting: false,
            norandommap: false,
            do_verify: true,
            registrations: (None, None),
            logs: Logs::default(),
            options: Vec::new(),
            steady: (None, None, 0),
            write_sizes: (None, None),
            trim_bs: None,
            latency: (None, None, 100.0),
            notes: Vec::new(),
            engine: None,
            meta: None,
            meta_shape: (None, None),
            meta_rw: None,
            unlink: None,
        }
    }

    /// The file the job names (`directory` joined), if any; a metadata engine's job, the
    /// directory it names.
    pub fn path(&self) -> Option<PathBuf> {
        if self.meta.is_some() {
            return self.directory.as_ref().map(PathBuf::from);
        }
        let f = self.filename.as_ref()?;
        Some(match &self.directory {
            Some(d) if !f.starts_with('/') => Path::new(d).join(f),
            _ => PathBuf::from(f),
        })
    }

    /// Says which backend runs the job's engine: libaio on Linux AIO as fio's (on buffered
    /// I/O the kernel completes each I/O inside io_submit, at AIO's own cost per I/O), the
    /// sync engines on pread/pwrite at depth 1 as fio caps them, posixaio on io_uring. A job
    /// that names no engine runs fio's default, psync (io_uring would hand buffered writes
    /// to a kernel worker: 1.7 GB/s where fio's psync wrote 6.9 GB/s into the page cache).
    fn engine_note(&mut self) {
        let (engine, at) = match &self.engine {
            Some((engine, at)) => (engine.as_str(), at.to_string()),
            None => ("psync", format!("{}: job '{}'", self.at, self.name)),
        };
        let s = &mut self.spec;
        let depth = match s.iodepth {
            1 => String::new(),
            d => format!(" (iodepth={d} capped at 1, as fio caps it)"),
        };
        let note = match engine {
            "libaio" => "ioengine=libaio runs on diskscope's aio backend (Linux AIO, as fio's libaio: buffered I/O completes inside io_submit)".to_string(),
            "posixaio" => {
                format!("ioengine={engine} runs on diskscope's io_uring backend")
            }
            "psync" | "sync" | "pvsync" | "pvsync2" => {
                s.backend = shared::spec::Backend::Sync;
                s.iodepth = 1;
                let named = if self.engine.is_some() {
                    format!("ioengine={engine}")
                } else {
                    "no ioengine: fio's default, psync,".to_string()
                };
                format!("{named} runs on diskscope's sync backend (pread/pwrite){depth}")
            }
            _ => return,
        };
        self.notes.push(format!("{at}: {note}"));
    }

    /// The writes' own sizes as the job's mode uses them: a write-only job's sizes are
    /// the writes', a read-only job ignores them, a random mix keeps both (a sequential
    /// mix is refused by the validator: its directions each keep their own position).
    fn sizes_by_direction(&mut self) -> Result<(), String> {
        let (from_bs, from_split) = std::mem::take(&mut self.write_sizes);
        let trims = self.trim_bs.filter(|_| self.spec.rw.trims());
        let from_bs = match trims {
            // Trims alone: their own size is the job's.
            Some(t) if !self.spec.rw.then_writes() => Some(BsSplit(vec![(t, 100)])),
            _ => from_bs,
        };
        let w = from_split.or(from_bs);
        if let (Some(t), true) = (trims, self.spec.rw.then_writes()) {
            let writes = w.as_ref().map_or(self.spec.bs, BsSplit::min);
            if t != writes || w.as_ref().is_some_and(|w| w.0.len() > 1) {
                return Err(format!(
                    "bs: trims of {t} B beside writes of other sizes: in {} each block is \
                     trimmed and written whole, one size for both",
                    self.spec.rw
                ));
            }
        }
        let Some(w) = w else {
            return Ok(());
        };
        let s = &mut self.spec;
        match s.rw.read_pct(s.read_pct) {
            100 => {}
            0 => {
                s.bs = w.min();
                s.bs_max = None;
                s.bssplit = (w.0.len() > 1).then_some(w);
            }
            _ => s.write_bssplit = Some(w),
        }
        Ok(())
    }

    /// fio's batch sizes against the job's depth: a submit batch of 0 or above the depth is
    /// the depth (fio's own fix-up); a completion minimum above it is the depth too, said in
    /// a note (fio would wait for completions that cannot come). A job that sets any of
    /// them reaps as fio then does: at most `iodepth_batch_complete_max`, which fio raises
    /// to the minimum (one completion per round by default, so that a full queue is
    /// refilled, and submitted, one I/O at a time); without them diskscope reaps every
    /// ready completion, the same one I/O per submit call at full depth.
    fn batch_to_depth(&mut self) {
        let s = &mut self.spec;
        let batching = s.iodepth_batch != 1
            || s.iodepth_batch_complete_min != 1
            || s.iodepth_batch_complete_max != 0;
        if s.iodepth_batch == 0 || s.iodepth_batch > s.iodepth {
            s.iodepth_batch = s.iodepth;
        }
        if batching {
            s.iodepth_batch_complete_max = s
                .iodepth_batch_complete_max
                .max(s.iodepth_batch_complete_min)
                .clamp(1, s.iodepth);
        }
        if s.iodepth_batch_complete_min > s.iodepth {
            self.notes.push(format!(
                "{}: job '{}': iodepth_batch_complete_min={} is more than iodepth={}: it waits for {} completions",
                self.at, self.name, s.iodepth_batch_complete_min, s.iodepth, s.iodepth
            ));
            s.iodepth_batch_complete_min = s.iodepth;
        }
    }

    /// fio's offsets and sizes as diskscope runs them: the random map (cover-once) unless
    /// `norandommap` and while one block size on one grid allows it, a split's sizes over
    /// `bs`, `blockalign` for random jobs only (each difference said in a note).
    fn offsets_and_sizes(&mut self) {
        let s = &mut self.spec;
        s.cover_once = s.rw.is_random() && !self.norandommap;
        if let Some(split) = &s.bssplit {
            // fio takes the sizes from bssplit (bs and bsrange no longer apply) and aligns
            // to the smallest.
            s.bs = split.min();
            s.bs_max = None;
        }
        // fio's random map tracks blocks of several sizes, which diskscope's permutation
        // cannot: offsets are drawn as with norandommap, said in a note.
        // fio aligns only random offsets to blockalign; a sequential job's follow each other.
        if s.block_align.is_some() && !s.rw.is_random() {
            s.block_align = None;
            self.notes.push(format!(
                "{}: job '{}': blockalign applies to random I/O only (as in fio); {} ignores it",
                self.at, self.name, s.rw
            ));
        }
        if (s.sizes_vary() || s.block_align.is_some()) && s.cover_once {
            s.cover_once = false;
            let what = match (&s.bssplit, s.bs_max, &s.write_bssplit) {
                (Some(_), _, _) => "bssplit",
                (None, Some(_), _) => "bsrange",
                (None, None, Some(_)) => "different sizes per direction",
                (None, None, None) => "blockalign",
            };
            self.notes.push(format!(
                "{}: job '{}': with {what} diskscope draws random offsets as norandommap does (its random map needs one block size on one grid)",
                self.at, self.name
            ));
        }
    }

    /// The spec as diskscope runs it, with fio's run-length rules: `time_based` runs for
    /// `runtime`; otherwise `size × loops` is done, `runtime` capping it.
    fn finish(&mut self) -> Result<(), JobFileError> {
        if self.meta.is_some() || self.meta_rw.is_some() || self.unlink == Some(true) {
            return self.finish_meta();
        }
        self.engine_note();
        self.batch_to_depth();
        let sized = self.sizes_by_direction();
        self.offsets_and_sizes();
        let bad = |message: String| JobFileError::Syntax {
            at: self.at.clone(),
            message: format!("job '{}': {message}", self.name),
        };
        sized.map_err(bad)?;
        let s = &mut self.spec;
        // fio's io_uring registers neither its buffers nor its file unless asked
        // (`fixedbufs`, `registerfiles`): the same job here registers what fio's does.
        if s.backend.is_ring() {
            s.fixed_buffers = self.registrations.0.unwrap_or(false);
            s.registered_file = self.registrations.1.unwrap_or(false);
        }
        s.verify = s.verify && self.do_verify;
        s.latency_target = match self.latency {
            (None, _, _) => None,
            (Some(_), None, _) => return Err(bad("latency_target needs latency_window".into())),
            (Some(target_us), Some(window_ms), percentile) => {
                Some(shared::qd_search::LatencyRule {
                    target_us,
                    window_ms,
                    percentile,
                })
            }
        };
        s.steady = match &self.steady {
            (None, _, _) => None,
            (Some(_), None, _) => return Err(bad("steadystate needs ss_dur (its window)".into())),
            (Some(t), Some(dur), ramp) => Some(
                shared::steady::SteadyRule::parse(t, *dur, *ramp)
                    .map_err(|e| bad(format!("steadystate={t}: {e}")))?,
            ),
        };
        // fio's rate and rate floor are per job; diskscope's are the run's.
        let all = |r: shared::spec::Rate| match r {
            shared::spec::Rate::BytesPerSec(b) => {
                shared::spec::Rate::BytesPerSec(b * u64::from(s.jobs))
            }
            shared::spec::Rate::Iops(n) => shared::spec::Rate::Iops(n * u64::from(s.jobs)),
        };
        s.rate = s.rate.map(all);
        s.rate_min = s.rate_min.map(all);
        if s.rate_min.is_some() && s.jobs > 1 {
            self.notes.push(format!(
                "{}: job '{}': rate_min holds the {} jobs together to {} (fio holds each job to its share)",
                self.at,
                self.name,
                s.jobs,
                s.rate_min.map(|r| r.to_string()).unwrap_or_default()
            ));
        }
        match (self.time_based, self.runtime_ms) {
            (true, None) => return Err(bad("time_based without runtime would never end".into())),
            (true, Some(ms)) => {
                s.runtime_ms = Some(ms);
                s.io_size = None;
            }
            (false, Some(ms)) => {
                s.runtime_ms = Some(ms);
                // Not time based: the transfer is size × loops, which runtime caps.
                if s.io_size.is_none() {
                    match s.size {
                        Some(size) => s.io_size = Some(size * u64::from(s.loops)),
                        None => {
                            return Err(bad(
                                "runtime without time_based needs a size (the transfer it caps)"
                                    .into(),
                            ))
                        }
                    }
                }
            }
            (false, None) => {}
        }
        // fio's size (and io_size) is each clone's transfer: numjobs clones move numjobs
        // times it; diskscope's io_size is the run's.
        if !self.time_based && s.jobs > 1 {
            let each = s.io_size.or(s.size.map(|z| z * u64::from(s.loops)));
            s.io_size = each.map(|b| b * u64::from(s.jobs));
        }
        if let Some(ms) = self.logs.avg_ms {
            s.interval_ms = ms;
        } else if self.logs.any() {
            self.notes.push(format!(
                "{}: without log_avg_msec fio logs every I/O; diskscope writes each sample interval's average ({} ms; set log_avg_msec for another window)",
                self.at, s.interval_ms
            ));
        }
        if self.logs.any() && s.jobs > 1 && self.logs.per_job != Some(false) {
            self.notes.push(format!(
                "{}: numjobs={}: the logs hold the clones' sum, in the first clone's file",
                self.at, s.jobs
            ));
        }
        // fio's clones each cover the whole span (offset_increment=0), sequential or with
        // a random map; diskscope's jobs would split it.
        if s.jobs > 1 && s.offset_increment.is_none() && s.size.is_some() && !s.verify {
            s.offset_increment = Some(0);
        } else if s.jobs > 1 && !s.rw.is_random() && s.offset_increment.is_none() {
            self.notes.push(format!(
                "{}: numjobs={} sequential: diskscope's jobs split the span (fio's each cover all of it; give size, or no verify, for fio's way)",
                self.at, s.jobs
            ));
        }
        Ok(())
    }
}

impl Job {
    /// `finish` for a job that names a metadata engine or mode (or `unlink=1`, which only
    /// a metadata engine's tree takes).
    fn finish_meta(&mut self) -> Result<(), JobFileError> {
        let bad = |message: String| JobFileError::Syntax {
            at: self.at.clone(),
            message: format!("job '{}': {message}", self.name),
        };
        match (self.meta, self.meta_rw) {
            (Some(phase), None) => self.meta_job(phase),
            (Some(phase), Some(rw)) if rw == phase => self.meta_job(phase),
            (_, Some(rw)) => Err(bad(format!(
                "rw={}: the metadata modes need their engine (ioengine=file{})",
                rw_name(rw),
                rw.name()
            ))),
            (None, None) => Err(bad(
                "unlink=1: diskscope keeps the file a job ran on (remove it afterwards)".into(),
            )),
        }
    }
}

/// A metadata mode's name in fio (`filecreate`, …).
fn rw_name(p: shared::files::Phase) -> String {
    format!("file{}", p.name())
}

impl Job {
    /// A metadata engine's job as the files workload: `nrfiles` files of `filesize` (fio's
    /// default: `size` shared among them; filecreate writes nothing, as fio's does) in one
    /// directory per clone, in a work directory of the run's own in `directory`.
    fn meta_job(&mut self, phase: shared::files::Phase) -> Result<(), JobFileError> {
        use shared::files::{FilesSpec, Phase};
        let bad = |message: String| JobFileError::Syntax {
            at: self.at.clone(),
            message: format!("job '{}': {message}", self.name),
        };
        let engine = self
            .engine
            .as_ref()
            .map_or("", |(e, _)| e.as_str())
            .to_string();
        if self.time_based {
            return Err(bad(format!(
                "ioengine={engine} with time_based: diskscope's files workload does each file once"
            )));
        }
        let files = self.meta_shape.0.unwrap_or(1);
        let file_size = match phase {
            Phase::Create => 0,
            _ => self
                .meta_shape
                .1
                .or(self.spec.size.map(|z| z / u64::from(files)))
                .unwrap_or(0),
        };
        let s = &mut self.spec;
        s.files = Some(FilesSpec {
            phase,
            dirs: 1,
            depth: 1,
            fanout: 0,
            files,
            file_size,
            fsync: false,
            verify: false,
            work: String::new(),
            first: true,
            last: true,
        });
        s.rw = if phase.writes() {
            RwMode::Write
        } else {
            RwMode::Read
        };
        s.backend = shared::spec::Backend::Sync;
        s.direct = false;
        s.bs = 4096;
        s.iodepth = 1;
        (s.size, s.io_size, s.runtime_ms, s.verify) = (None, None, None, false);
        let layout = match phase {
            Phase::Create => "mkdir",
            _ => "mkdir and create",
        };
        let at = self.engine.as_ref().map_or(&self.at, |(_, at)| at);
        self.notes.push(format!(
            "{at}: ioengine={engine} runs as diskscope's files workload (phase {}, {files} files of {file_size} B per job, in the target directory): the files are laid out first ({layout}) in steps of their own named '… (layout: …)', which fio does without reporting them; diskscope's tree is removed at the end",
            phase.name(),
        ));
        Ok(())
    }

    /// A metadata engine's job as steps: its layout, then the phase it measures, in a work
    /// directory of its own (`k`: the job's place in the file).
    fn meta_steps(&self, k: usize) -> Vec<Step> {
        use shared::files::Phase;
        let Some(f) = self.spec.files.as_ref() else {
            return Vec::new();
        };
        let phases: &[Phase] = match f.phase {
            Phase::Create => &[Phase::Mkdir, Phase::Create],
            Phase::Stat => &[Phase::Mkdir, Phase::Create, Phase::Stat],
            _ => &[Phase::Mkdir, Phase::Create, Phase::Delete],
        };
        let work = format!(
            "{}{}-{}-{k}",
            shared::files::WORK_PREFIX,
            std::process::id(),
            crate::env::unix_ms()
        );
        let n = phases.len();
        phases
            .iter()
            .enumerate()
            .map(|(i, &phase)| {
                let mut spec = self.spec.clone();
                spec.rw = if phase.writes() {
                    RwMode::Write
                } else {
                    RwMode::Read
                };
                spec.files = Some(shared::files::FilesSpec {
                    phase,
                    work: work.clone(),
                    first: i == 0,
                    last: i + 1 == n,
                    ..f.clone()
                });
                Step {
                    name: if i + 1 == n {
                        self.name.clone()
                    } else {
                        format!("{} (layout: {})", self.name, phase.name())
                    },
                    spec,
                    pause_before_ms: if i == 0 { self.startdelay_ms } else { 0 },
                    until_steady: None,
                    pass: None,
                    p99_target_us: None,
                    rate_pct: None,
                    with_previous: false,
                }
            })
            .collect()
    }
}

/// The name a job file sent through the API goes by in messages.
pub const REQUEST_FILE: &str = "request.fio";

/// The jobs of one or more job files, in order.
#[derive(Debug, Clone)]
pub struct JobFile {
    pub jobs: Vec<Job>,
    /// Each file's name and its `[global]` options as written (fio's "global options").
    pub globals: Vec<(String, String)>,
}

impl JobFile {
    /// Reads and parses the job files at `paths`; `${VAR}` come from the environment.
    pub fn load(paths: &[PathBuf]) -> Result<Self, JobFileError> {
        let mut texts = Vec::new();
        for p in paths {
            let text = parse::Files.read_checked(p)?;
            texts.push((p.clone(), text));
        }
        Self::parse(&texts, &parse::Files, &|n| std::env::var(n).ok())
    }

    /// Parses job-file `texts` (each with the path it came from).
    pub fn parse(
        texts: &[(PathBuf, String)],
        source: &dyn parse::Source,
        vars: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, JobFileError> {
        let mut jobs = Vec::new();
        let mut globals = Vec::new();
        for (n, (path, text)) in texts.iter().enumerate() {
            // Each file starts afresh: its own globals, and after the jobs of the files
            // before it (a stonewall between files).
            let mut global: Vec<parse::RawOption> = Vec::new();
            let mut first_of_file = n > 0;
            for section in parse::sections(text, path, source, vars)? {
                if section.name == "global" {
                    for o in &section.options {
                        globals.push((o.key.clone(), o.value.clone().unwrap_or_default()));
                    }
                    global.extend(section.options);
                    continue;
                }
                let mut job = Job::new(&section.name, section.at.clone());
                for o in &global {
                    options::apply(&mut job, &o.key, o.value.as_deref(), &o.at)?;
                }
                // fio names a job by its section; only the section's own `name` renames it.
                job.name.clone_from(&section.name);
                for o in &section.options {
                    options::apply(&mut job, &o.key, o.value.as_deref(), &o.at)?;
                }
                job.options = section
                    .options
                    .iter()
                    .map(|o| (o.key.clone(), o.value.clone().unwrap_or_default()))
                    .collect();
                job.stonewall |= std::mem::take(&mut first_of_file);
                job.finish()?;
                jobs.push(job);
            }
        }
        if jobs.is_empty() {
            let file = texts
                .first()
                .map(|(p, _)| p.display().to_string())
                .unwrap_or_default();
            return Err(JobFileError::File {
                file,
                message: "no job section (only [global] or nothing)".into(),
            });
        }
        Ok(JobFile { jobs, globals })
    }

    /// A job file sent to the agent (the API's `fio_job`), named `request.fio` in messages:
    /// no `include` is followed and no `${VAR}` is taken from the agent's environment.
    pub fn from_request(text: &str) -> Result<Self, JobFileError> {
        if text.len() > parse::MAX_JOB_FILE_BYTES {
            return Err(JobFileError::File {
                file: REQUEST_FILE.into(),
                message: format!(
                    "{} bytes: larger than a job file ({} bytes at most)",
                    text.len(),
                    parse::MAX_JOB_FILE_BYTES
                ),
            });
        }
        let texts = [(PathBuf::from(REQUEST_FILE), text.to_string())];
        let jobs = Self::parse(&texts, &parse::NoIncludes, &|_| None)?;
        if let Some(j) = jobs.jobs.iter().find(|j| j.logs.any()) {
            return Err(JobFileError::Syntax {
                at: j.at.clone(),
                message: format!(
                    "job '{}': write_*_log: the agent writes no files for a request (the run's samples are in its export, GET /api/v1/runs/ID/export)",
                    j.name
                ),
            });
        }
        Ok(jobs)
    }

    /// Every note of every job.
    pub fn notes(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for n in self.jobs.iter().flat_map(|j| &j.notes) {
            if !out.contains(n) {
                out.push(n.clone());
            }
        }
        out
    }

    /// The target all jobs run on: `target` when given, else the one file the jobs name.
    pub fn target(&self, target: Option<&Path>) -> Result<PathBuf, JobFileError> {
        if let Some(t) = target {
            return Ok(t.to_path_buf());
        }
        let mut named = self.jobs.iter().filter_map(|j| j.path().map(|p| (j, p)));
        let Some((first_job, first)) = named.next() else {
            return Err(JobFileError::File {
                file: self.jobs[0].at.file.clone(),
                message: "no job names a filename: give --target FILE".into(),
            });
        };
        if let Some((j, other)) = named.find(|(_, p)| *p != first) {
            return Err(JobFileError::Syntax {
                at: j.at.clone(),
                message: format!(
                    "job '{}' runs on {} but job '{}' on {}: diskscope runs a job file on one target (give --target to run all on one)",
                    j.name,
                    other.display(),
                    first_job.name,
                    first.display()
                ),
            });
        }
        Ok(first)
    }

    /// The jobs in stonewall groups: fio starts a group's jobs together, and a group after
    /// the one before it has ended.
    pub fn groups(&self) -> Vec<Vec<&Job>> {
        let mut groups: Vec<Vec<&Job>> = Vec::new();
        for job in &self.jobs {
            match groups.last_mut() {
                Some(g) if !job.stonewall => g.push(job),
                _ => groups.push(vec![job]),
            }
        }
        groups
    }

    /// The jobs that run together, each with the target it runs on, when the file is one
    /// group of several job sections (fio starts them at once: a reader beside a writer,
    /// each with its own workload); `None` when the file runs as steps ([`JobFile::steps`]).
    /// `target` (the command line's) runs every job on it; else each job runs on the file
    /// it names.
    pub fn together(
        &self,
        target: Option<&Path>,
    ) -> Result<Option<Vec<(&Job, PathBuf)>>, JobFileError> {
        let groups = self.groups();
        let [group] = groups.as_slice() else {
            return Ok(None);
        };
        if group.len() < 2 || meta_group(group).is_some() {
            return Ok(None);
        }
        too_many_at_once(group)?;
        group
            .iter()
            .map(|&job| {
                beside_others(job)?;
                let path = target
                    .map(Path::to_path_buf)
                    .or_else(|| job.path())
                    .ok_or_else(|| JobFileError::Syntax {
                        at: job.at.clone(),
                        message: format!(
                            "job '{}' names no filename: give --target FILE",
                            job.name
                        ),
                    })?;
                Ok((job, path))
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }

    /// The run's steps: a step per job, in stonewall groups: the jobs of a group after its
    /// first run at the same time as it (`with_previous`), making one step of the run with
    /// a part each (a file that is one such group runs as [`JobFile::together`]).
    pub fn steps(&self) -> Result<Vec<Step>, JobFileError> {
        let mut steps = Vec::new();
        for g in self.groups() {
            if let Some(m) = meta_group(&g) {
                steps.extend(m.meta_steps(steps.len()));
                continue;
            }
            too_many_at_once(&g)?;
            for (k, &job) in g.iter().enumerate() {
                if g.len() > 1 {
                    beside_others(job)?;
                }
                if job.meta.is_some() {
                    steps.extend(job.meta_steps(steps.len()));
                    continue;
                }
                steps.push(Step {
                    name: job.name.clone(),
                    spec: job.spec.clone(),
                    pause_before_ms: job.startdelay_ms,
                    until_steady: None,
                    pass: None,
                    p99_target_us: None,
                    rate_pct: None,
                    with_previous: k > 0,
                });
            }
        }
        Ok(steps)
    }
}

/// A group of metadata jobs alike (fio's examples: sections of one engine and shape that
/// run at once) as one job whose clones are all of theirs: one files phase.
fn meta_group(group: &[&Job]) -> Option<Job> {
    let (first, last) = (group.first()?, group.last()?);
    let f = first.spec.files.as_ref()?;
    let alike = group.iter().all(|j| {
        j.directory == first.directory
            && j.spec
                .files
                .as_ref()
                .is_some_and(|g| (g.phase, g.files, g.file_size) == (f.phase, f.files, f.file_size))
    });
    if !alike {
        return None;
    }
    let mut merged = (*first).clone();
    merged.spec.jobs = group.iter().map(|j| j.spec.jobs).sum();
    if group.len() > 1 {
        merged.name = format!("{}..{}", first.name, last.name);
    }
    Some(merged)
}

/// A group of more jobs than a run holds at once is refused, naming the first past the limit
/// (each is its own threads and ring).
fn too_many_at_once(group: &[&Job]) -> Result<(), JobFileError> {
    let Some(job) = group.get(crate::measure::MAX_PARTS) else {
        return Ok(());
    };
    Err(JobFileError::Syntax {
        at: job.at.clone(),
        message: format!(
            "job '{}': more than {} jobs would run at once (each is its own threads and ring)",
            job.name,
            crate::measure::MAX_PARTS
        ),
    })
}

/// What a job that runs at the same time as others cannot have: a start delay (they start
/// together).
fn beside_others(job: &Job) -> Result<(), JobFileError> {
    if let (Some(_), Some((engine, _))) = (job.meta, &job.engine) {
        return Err(JobFileError::Syntax {
            at: job.at.clone(),
            message: format!(
                "job '{}': ioengine={engine} beside other jobs: diskscope runs a metadata engine's job alone (put it after a stonewall)",
                job.name
            ),
        });
    }
    if job.startdelay_ms == 0 {
        return Ok(());
    }
    Err(JobFileError::Syntax {
        at: job.at.clone(),
        message: format!(
            "job '{}': startdelay beside other jobs: diskscope starts jobs that run together at once (put the job after a stonewall)",
            job.name
        ),
    })
}

impl parse::Files {
    fn read_checked(&self, path: &Path) -> Result<String, JobFileError> {
        parse::Source::read(self, path).map_err(|e| JobFileError::File {
            file: path.display().to_string(),
            message: e.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shared::spec::{Backend, RwMode};

    fn load(text: &str) -> Result<JobFile, JobFileError> {
        JobFile::parse(
            &[(PathBuf::from("t.fio"), text.to_string())],
            &parse::Files,
            &|_| None,
        )
    }

    /// Every fio name of the one table of workload options is an option the parser takes
    /// (a bad value is named as such, never "not supported"), and the plain ones set what
    /// the table's reader sets from the same text.
    /// fio's io_uring registers its buffers and file only when asked; so does a job file's
    /// run here. Another engine's job keeps the spec's defaults (nothing to register).
    #[test]
    fn io_uring_registrations_follow_fixedbufs_and_registerfiles() {
        let regs = |text: &str| {
            let f = load(text).unwrap();
            let s = &f.jobs[0].spec;
            (s.fixed_buffers, s.registered_file)
        };
        assert_eq!(regs("[j]\nioengine=io_uring\nrw=read\n"), (false, false));
        assert_eq!(
            regs("[j]\nioengine=io_uring\nfixedbufs\nregisterfiles=1\nrw=read\n"),
            (true, true)
        );
        assert_eq!(
            regs("[j]\nioengine=io_uring\nfixedbufs=1\nregisterfiles=0\nrw=read\n"),
            (true, false)
        );
        let f = load("[j]\nioengine=psync\nrw=read\n").unwrap();
        assert!(f.jobs[0].spec.validate().is_ok());
    }

    #[test]
    fn every_fio_name_of_the_table_is_read() {
        for o in shared::options::OPTIONS {
            for name in o.fio {
                let e = load(&format!("[j]\n{name}=1\n"))
                    .err()
                    .map(|e| e.to_string());
                assert!(
                    !e.as_deref()
                        .unwrap_or("")
                        .contains("not supported by diskscope"),
                    "fio's {name} ({}): {e:?}",
                    o.key
                );
            }
        }
        let f = load("[j]\nioengine=io_uring\nrw=randread\niodepth=16\nnumjobs=2\nramp_time=2\nrandseed=7\nblockalign=8k\nrate_process=poisson\nrate=1m\n").unwrap();
        let s = &f.jobs[0].spec;
        let (want, errs) = shared::options::spec_from([
            ("rw", "randread"),
            ("iodepth", "16"),
            ("jobs", "2"),
            ("ramp", "2s"),
            ("seed", "7"),
            ("blockalign", "8K"),
            ("rate_process", "poisson"),
            // fio's defaults: buffered I/O, buffers in 4 KiB pages (iomem=malloc), and its
            // io_uring registering neither buffers nor file (fixedbufs, registerfiles).
            ("direct", "false"),
            ("iomem", "pages"),
            ("fixed_buffers", "false"),
            ("registered_file", "false"),
            // fio's rate is per job; the spec's is the jobs' together.
            ("rate", "2MiB"),
        ]);
        assert!(errs.is_empty(), "{errs:?}");
        for o in shared::options::OPTIONS {
            assert_eq!((o.get)(s), (o.get)(&want), "{}", o.key);
        }
    }

    #[test]
    fn ssd_test_shape_becomes_four_steps_with_fio_defaults() {
        let f = load(
            "[global]\nbs=4k\nioengine=libaio\niodepth=4\nsize=10g\ndirect=1\nruntime=60\ndirectory=/mnt\nfilename=ssd.test.file\n\n[seq-read]\nrw=read\nstonewall\n\n[rand-read]\nrw=randread\nstonewall\n",
        )
        .unwrap();
        let steps = f.steps().unwrap();
        assert_eq!(steps.len(), 2);
        assert_eq!(steps[1].name, "rand-read");
        let s = &steps[1].spec;
        assert_eq!(
            (s.rw, s.bs, s.iodepth, s.direct),
            (RwMode::RandRead, 4096, 4, true)
        );
        assert_eq!(s.backend, Backend::Aio);
        // runtime without time_based caps size × loops.
        assert_eq!((s.runtime_ms, s.io_size), (Some(60_000), Some(10 << 30)));
        assert!(s.cover_once, "fio's random map");
        assert_eq!(f.target(None).unwrap(), PathBuf::from("/mnt/ssd.test.file"));
        assert!(f.notes().iter().any(|n| n.contains("libaio")));
        assert_eq!(
            f.jobs[0].options,
            vec![
                ("rw".into(), "read".into()),
                ("stonewall".into(), String::new())
            ]
        );
    }

    #[test]
    fn libaio_runs_on_linux_aio_as_fios_does() {
        for direct in ["0", "1"] {
            let f = load(&format!(
                "[j]\nrw=randread\nioengine=libaio\niodepth=16\nsize=1m\ndirect={direct}\n"
            ))
            .unwrap();
            let s = &f.jobs[0].spec;
            assert_eq!((s.backend, s.iodepth), (Backend::Aio, 16));
            assert!(
                f.notes()[0].contains("t.fio:3: ioengine=libaio runs on diskscope's aio backend")
            );
        }
        let f = load("[j]\nrw=randread\nioengine=posixaio\niodepth=16\ndirect=1\n").unwrap();
        let s = &f.jobs[0].spec;
        assert_eq!((s.backend, s.iodepth), (Backend::Uring, 16));
        assert!(f.notes()[0].contains("runs on diskscope's io_uring backend"));
    }

    #[test]
    fn fio_defaults_buffered_and_rate_per_job() {
        let f =
            load("[j]\nrw=randwrite\nnumjobs=4\nrate=10m\nnorandommap\ntime_based\nruntime=2\n")
                .unwrap();
        let s = &f.jobs[0].spec;
        assert!(!s.direct);
        assert!(!s.cover_once);
        assert_eq!(s.rate, Some(shared::spec::Rate::BytesPerSec(40 << 20)));
        assert_eq!((s.runtime_ms, s.io_size), (Some(2000), None));
    }

    #[test]
    fn refusals_name_the_option_file_and_line() {
        for (text, want) in [
            (
                "[j]\ngtod_reduce=1\n",
                "t.fio:2: option 'gtod_reduce=1': not supported",
            ),
            ("[j]\nrw=read:-8k\n", "t.fio:2: option 'rw=read:-8k'"),
            (
                "[j]\nbsrange=4k-16k,8k-16k\n",
                "t.fio:2: option 'bsrange=4k-16k,8k-16k'",
            ),
            ("[j]\nioengine=rbd\n", "t.fio:2: option 'ioengine=rbd'"),
            ("[j]\ntime_based\n", "job 'j': time_based without runtime"),
            (
                "[a]\nrw=read\n[b]\nrw=write\nstartdelay=1\n[c]\nstonewall\n",
                "t.fio:3: job 'b': startdelay beside other jobs",
            ),
        ] {
            let e = load(text)
                .and_then(|f| f.steps().map(|_| ()))
                .unwrap_err()
                .to_string();
            assert!(e.contains(want), "{text:?}: {e}");
        }
    }

    #[test]
    fn a_job_without_an_engine_runs_fios_default_psync_at_depth_one() {
        let f = load("[j]\nrw=write\niodepth=8\n").unwrap();
        let s = &f.jobs[0].spec;
        assert_eq!((s.backend, s.iodepth), (shared::spec::Backend::Sync, 1));
        assert!(
            f.notes()[0].contains("no ioengine: fio's default, psync, runs on diskscope's sync backend (pread/pwrite) (iodepth=8 capped at 1"),
            "{:?}",
            f.notes()
        );
        let f = load("[j]\nioengine=pvsync\n").unwrap();
        assert_eq!(f.jobs[0].spec.backend, shared::spec::Backend::Sync);
        assert!(!f.notes()[0].contains("capped"), "{:?}", f.notes());
    }

    #[test]
    fn one_group_of_several_jobs_runs_together_on_their_files() {
        let f = load("[global]\nioengine=io_uring\nrw=randread\nbs=128k\n[a]\nfilename=/x/a\niodepth=4\n[b]\nfilename=/x/b\nrw=write\n").unwrap();
        let jobs = f.together(None).unwrap().expect("one group of two");
        let got: Vec<(&str, PathBuf, u32)> = jobs
            .iter()
            .map(|(j, p)| (j.name.as_str(), p.clone(), j.spec.iodepth))
            .collect();
        assert_eq!(
            got,
            vec![
                ("a", PathBuf::from("/x/a"), 4),
                ("b", PathBuf::from("/x/b"), 1)
            ]
        );
        assert_eq!(jobs[1].0.spec.rw, RwMode::Write);
        // --target puts every job on it; a stonewall makes steps instead.
        let on = f
            .together(Some(Path::new("/t")))
            .unwrap()
            .expect("together");
        assert!(on.iter().all(|(_, p)| p == Path::new("/t")));
        let many: String = (0..=crate::measure::MAX_PARTS)
            .map(|i| format!("[j{i}]\nfilename=/f\n"))
            .collect();
        let e = load(&many).unwrap().together(None).unwrap_err().to_string();
        assert!(
            e.contains("job 'j64': more than 64 jobs would run at once"),
            "{e}"
        );
        let steps = load("[a]\nrw=read\n[b]\nrw=write\nstonewall\n").unwrap();
        assert!(steps.together(None).unwrap().is_none());
        for (text, want) in [
            (
                "[a]\nrw=read\n[b]\nrw=write\n",
                "job 'a' names no filename: give --target FILE",
            ),
            (
                "[global]\nfilename=/f\n[a]\nrw=read\n[b]\nstartdelay=1\n",
                "t.fio:5: job 'b': startdelay beside other jobs",
            ),
        ] {
            let e = load(text)
                .and_then(|f| f.together(None).map(|_| ()))
                .unwrap_err()
                .to_string();
            assert!(e.contains(want), "{text:?}: {e}");
        }
    }

    #[test]
    fn a_group_of_jobs_among_groups_runs_with_the_previous_step() {
        let f = load("[a]\nrw=read\n[b]\nrw=write\n[c]\nstonewall\nrw=randread\n").expect("parses");
        assert!(f.together(None).expect("checks").is_none(), "two groups");
        let steps = f.steps().expect("steps");
        let shape: Vec<(&str, bool)> = steps
            .iter()
            .map(|s| (s.name.as_str(), s.with_previous))
            .collect();
        assert_eq!(shape, [("a", false), ("b", true), ("c", false)]);
        assert_eq!(
            shared::steps::run_step_names(&steps),
            ["a + b".to_string(), "c".to_string()]
        );
        // The largest group a run holds at once, also among other groups.
        let many: String = (0..=crate::measure::MAX_PARTS)
            .map(|i| format!("[j{i}]\nrw=read\n"))
            .collect();
        let e = load(&format!("{many}[last]\nstonewall\n"))
            .and_then(|f| f.steps().map(|_| ()))
            .expect_err("too many at once");
        assert!(
            e.to_string().contains("job 'j64': more than 64 jobs"),
            "{e}"
        );
    }

    #[test]
    fn a_second_file_starts_after_the_first() {
        let f = JobFile::parse(
            &[
                (
                    PathBuf::from("a.fio"),
                    "[global]\nbs=1m\n[a]\nrw=write\n".into(),
                ),
                (PathBuf::from("b.fio"), "[b]\nrw=read\n".into()),
            ],
            &parse::Files,
            &|_| None,
        )
        .unwrap();
        let steps = f.steps().unwrap();
        assert_eq!(steps.len(), 2);
        assert_eq!(steps[1].spec.bs, 4096, "globals stay in their file");
        let f = load("[global]\nname=g\n[a]\nrw=read\n[b]\nname=own\nstonewall\n").unwrap();
        let names: Vec<_> = f.jobs.iter().map(|j| j.name.as_str()).collect();
        assert_eq!(names, ["a", "own"], "as fio 3.33 names them");
    }

    /// fio's metadata engines: a group of sections alike is one files phase of all their
    /// jobs, after its layout; `rw=file…` must name the same engine; such a job beside
    /// another kind of job is refused, and so is unlink=1 on a job's file.
    #[test]
    fn metadata_engines_run_as_the_files_workload() {
        use shared::files::Phase;
        let f = load("[global]\nioengine=filestat\nrw=filestat\nnrfiles=7\nfilesize=2k\nnumjobs=2\n[a]\n[b]\n")
            .unwrap();
        assert!(f.together(None).unwrap().is_none());
        let steps = f.steps().unwrap();
        let phases: Vec<Phase> = steps
            .iter()
            .map(|s| s.spec.files.as_ref().unwrap().phase)
            .collect();
        assert_eq!(phases, [Phase::Mkdir, Phase::Create, Phase::Stat]);
        let last = &steps[2];
        assert_eq!((last.name.as_str(), last.spec.jobs), ("a..b", 4));
        let fs = last.spec.files.as_ref().unwrap();
        assert_eq!(
            (
                fs.files,
                fs.file_size,
                fs.last,
                steps[0].spec.files.as_ref().unwrap().first
            ),
            (7, 2048, true, true)
        );
        assert!(steps
            .iter()
            .all(|s| s.spec.files.as_ref().unwrap().work == fs.work));
        assert!(last.spec.validate().is_ok(), "{:?}", last.spec.validate());
        // filecreate writes nothing, as fio's.
        let c = load("[c]\nioengine=filecreate\nnrfiles=3\nfilesize=4k\n").unwrap();
        let s = c.steps().unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s[1].spec.files.as_ref().unwrap().file_size, 0);

        let e = load("[x]\nrw=filestat\nioengine=filedelete\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("rw=filestat: the metadata modes need their engine"),
            "{e}"
        );
        let e = load("[x]\nioengine=filestat\n[y]\nrw=read\nsize=1m\n")
            .and_then(|f| f.steps())
            .unwrap_err()
            .to_string();
        assert!(e.contains("ioengine=filestat beside other jobs"), "{e}");
        let e = load("[x]\nrw=read\nsize=1m\nunlink=1\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("unlink=1"), "{e}");
        let e = load("[x]\nrw=read\nsize=1m\nfallocate=posix\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("fallocate=posix"), "{e}");
    }
}
