//! Spec → plan: the only way to obtain something the engine will run.
//!
//! [`Plan::new`] runs the spec's own validation, then the checks that need the target
//! (alignment to its logical block size, span inside it), and splits the work over jobs:
//! sequential and cover-once jobs get disjoint slices of the span (fio's `offset_increment`),
//! uniform random jobs share it. Size-based runs get an I/O budget per job.

use super::offsets::{Order, Span};
use super::rate::RateCap;
use super::rng::Rng;
use crate::io_target::{TargetInfo, TargetKind};
use shared::{DataPattern, Rate, SpecError, WorkloadSpec};

/// Virtual size of a label-only target (null backend) when the spec gives none.
const NULL_TARGET_SIZE: u64 = 1 << 30;
/// The random stream of job j's rate cap is this + j (the engine's own streams are 3j..3j+2).
const RATE_STREAM: u64 = 1 << 32;

/// One job's share of a run.
// A private field rather than `#[non_exhaustive]`: the engine lives in this crate, and only
// this module may build a JobPlan.
#[allow(clippy::manual_non_exhaustive)]
#[derive(Clone, Debug)]
pub struct JobPlan {
    pub index: u32,
    pub span: Span,
    pub order: Order,
    /// The writes' own order in a mix whose writes have their own zones.
    pub write_order: Option<Order>,
    /// Bytes to issue after the ramp (size-based runs; the last I/O may pass it, as fio's
    /// do); `None` runs until time is up.
    pub bytes: Option<u64>,
    /// Each I/O's length under a size mix; `None`: every I/O is `span.bs`.
    pub sizes: Option<super::sizes::Sizes>,
    /// The writes' own sizes (`write_bssplit`) and the alignment of each direction's
    /// offsets (its smallest size): (writes' sizes, writes' alignment, reads' alignment).
    pub write_sizes: Option<(super::sizes::Sizes, u64, u64)>,
    /// Share of reads, percent.
    pub read_pct: u8,
    /// The CPUs the job's thread is pinned to (fio's `cpus_allowed`, its policy applied).
    pub cpus: Option<Vec<u16>>,
    /// The job's own rate cap (its share of the run's), with its own Poisson draws.
    pub rate: Option<RateCap>,
    /// A pause after every few I/Os.
    pub think: Option<shared::pacing::ThinkTime>,
    pub seed: u64,
    pub pattern: DataPattern,
    pub iodepth: u32,
    /// I/Os queued before one submit call, completions a round waits for and the most it
    /// reaps (fio's `iodepth_batch_submit`, `iodepth_batch_complete_min` and `_max`; 1, 1
    /// and every ready one by default).
    pub batch: (u32, u32, u32),
    /// fio's `latency_target`: the job searches its depth (up to `iodepth`) by this rule.
    pub latency: Option<shared::qd_search::LatencyRule>,
    /// Separate read and write buffer sets (mixed workloads).
    pub split_buffers: bool,
    /// fsync at the end (write workloads).
    pub end_fsync: bool,
    /// A flush after every N writes the job issues.
    pub flush: Option<shared::durability::Flush>,
    /// Buffered I/O on a target: the page cache is dropped at the start of every pass over
    /// the span after the first, as fio does when it opens the file again for the next
    /// pass (invalidate=1: one `POSIX_FADV_DONTNEED` per pass, sequential or random, as
    /// strace shows of fio 3.33); a small span is then not measured as the cache after one
    /// pass, and writes pay the writeback the drop starts.
    pub cold_passes: bool,
    /// Stamp every write with a verification header and read the job's blocks back at the
    /// end; `verify_every`: also every N writes (at most the job's span in blocks).
    pub verify: bool,
    pub verify_every: Option<u64>,
    /// Error scan: the cells of the plan's whole span (the same for every job, so their
    /// maps add up cell by cell) and the slow threshold in ns; failed I/Os are mapped, not
    /// fatal.
    pub scan: Option<(shared::analysis::scan::Layout, u64)>,
    /// Random modes: the share of I/Os (percent) that continue after the previous block.
    pub seq_pct: u8,
    /// A trim workload: trims only, or each block trimmed then written.
    pub trims: Option<Trims>,
    /// Keeps the type constructible only here.
    _validated: (),
}

/// What a trim workload does with each block it visits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trims {
    /// Trims it (`trim`, `randtrim`).
    Only,
    /// Trims it, then writes it (`trimwrite`, `randtrimwrite`).
    ThenWrite,
}

/// How a job's random or sequential offsets are drawn, and, where the writes have their own
/// zones (`write_random_distribution`) and the job both reads and writes, how its writes'
/// are. A job that only writes draws from the writes' zones.
fn order_of(spec: &WorkloadSpec, cover_once: bool) -> (Order, Option<Order>) {
    let of = |d: &shared::access::Distribution| match (spec.rw.is_random(), cover_once, d) {
        (false, _, _) => Order::Sequential,
        (true, true, _) => Order::CoverOnce,
        (true, false, shared::access::Distribution::Uniform) => Order::Uniform,
        (true, false, d) => Order::Skewed(d.clone()),
    };
    let reads = of(&spec.random_distribution);
    match (
        &spec.write_random_distribution,
        spec.rw.read_pct(spec.read_pct),
    ) {
        (Some(w), 0) => (of(w), None),
        (Some(w), 1..=99) => (reads, Some(of(w))),
        _ => (reads, None),
    }
}

/// Each job's share of the rate cap, in I/Os per second.
fn per_job_ios(spec: &WorkloadSpec) -> Option<f64> {
    spec.rate.map(|r| {
        let ios = match r {
            Rate::BytesPerSec(b) => b as f64 / spec.mean_bs(),
            Rate::Iops(i) => i as f64,
        };
        ios / f64::from(spec.jobs)
    })
}

impl Trims {
    /// What `rw` does with trims, if it trims.
    fn of(rw: shared::RwMode) -> Option<Trims> {
        match (rw.trims(), rw.then_writes()) {
            (false, _) => None,
            (true, false) => Some(Trims::Only),
            (true, true) => Some(Trims::ThenWrite),
        }
    }
}

/// A validated run: the spec, the probed target and the jobs.
#[derive(Clone, Debug)]
pub struct Plan {
    spec: WorkloadSpec,
    target: TargetInfo,
    jobs: Vec<JobPlan>,
    /// A trace replay: the one job issues these I/Os instead of generating its own.
    replay: Option<std::sync::Arc<super::replay::ReplayPlan>>,
}

impl Plan {
    /// Validates `spec` against `target` and splits it into jobs.
    pub fn new(spec: &WorkloadSpec, target: TargetInfo) -> Result<Plan, Vec<SpecError>> {
        spec.validate()?;
        let (start, len) = check_span(spec, &target)?;
        let flag_errs = crate::io_target::rw_flags::check(spec, &target);
        if !flag_errs.is_empty() {
            return Err(flag_errs);
        }
        let cpus = check_cpus(spec)?;
        check_sqpoll_cpu(spec)?;
        let blocks = len / spec.bs;
        check_layout(spec, blocks)?;
        // Verification needs every block's last writer known: random writes then visit
        // each block once per pass (fio's random map does the same by default).
        let cover_once = spec.cover_once || (spec.verify && spec.rw.is_random());
        // Each job its own region (offset_increment), or one span split or shared.
        let regions = spec.offset_increment;
        let split = (!spec.rw.is_random() || cover_once) && regions.is_none();
        if split && blocks < u64::from(spec.jobs) {
            return Err(vec![SpecError::new(
                "jobs",
                spec.jobs,
                format!(
                    "the span holds {blocks} blocks of {} B: too few to split over {} jobs",
                    spec.bs, spec.jobs
                ),
            )]);
        }
        let (order, write_order) = order_of(spec, cover_once);
        let n = u64::from(spec.jobs);
        // The budget in whole blocks of `bs` (a size mix: in bytes), split over the jobs.
        let unit = if spec.sizes_vary() { 1 } else { spec.bs };
        let total_units = match (spec.io_size, spec.is_time_based()) {
            (Some(io), _) => Some(io / unit),
            (None, true) => None,
            (None, false) => Some(
                blocks * spec.bs / unit
                    * u64::from(spec.loops)
                    * if regions.is_some() { n } else { 1 },
            ),
        };
        let sizes = super::sizes::Sizes::of(spec);
        let write_sizes = spec.write_bssplit.as_ref().map(|w| {
            let reads = spec.bssplit.as_ref().map_or(spec.bs, |s| s.min());
            (
                super::sizes::Sizes::Mix(super::sizes::SizeMix::of(w)),
                w.min(),
                reads,
            )
        });
        let per_job_rate = per_job_ios(spec);
        let scan = spec.scan.then(|| {
            let slow = spec
                .scan_slow_ms
                .unwrap_or(shared::analysis::scan::DEFAULT_SLOW_MS);
            (
                shared::analysis::scan::Layout::new(start, blocks * spec.bs, spec.bs),
                slow * 1_000_000,
            )
        });
        let jobs = (0..spec.jobs)
            .map(|j| {
                let j64 = u64::from(j);
                let span = job_span(spec, start, blocks, j64, split);
                JobPlan {
                    index: j,
                    span,
                    order: order.clone(),
                    write_order: write_order.clone(),
                    bytes: total_units.map(|t| (t * (j64 + 1) / n - t * j64 / n) * unit),
                    sizes: sizes.clone(),
                    write_sizes: write_sizes.clone(),
                    read_pct: spec.rw.read_pct(spec.read_pct),
                    cpus: cpus
                        .as_ref()
                        .map(|l| l.for_job(j as usize, spec.cpus_allowed_policy).to_vec()),
                    // Each job's Poisson arrivals are its own stream.
                    rate: per_job_rate.map(|ios| {
                        RateCap::new(
                            ios,
                            spec.rate_process,
                            Rng::new(spec.seed, RATE_STREAM + j64),
                        )
                    }),
                    think: spec.think,
                    seed: spec.seed,
                    pattern: spec.pattern,
                    iodepth: spec.iodepth,
                    batch: (
                        spec.iodepth_batch,
                        spec.iodepth_batch_complete_min,
                        spec.iodepth_batch_complete_max,
                    ),
                    latency: spec.latency_target,
                    split_buffers: spec.buffer_sets() == 2,
                    end_fsync: spec.end_fsync,
                    flush: spec.flush,
                    cold_passes: !spec.direct && spec.invalidate && !spec.backend.opens_nothing(),
                    verify: spec.verify,
                    verify_every: spec.verify_every,
                    scan,
                    seq_pct: spec.seq_pct,
                    trims: Trims::of(spec.rw),
                    _validated: (),
                }
            })
            .collect();
        Ok(Plan {
            spec: spec.clone(),
            target,
            jobs,
            replay: None,
        })
    }

    pub fn spec(&self) -> &WorkloadSpec {
        &self.spec
    }

    pub fn target(&self) -> &TargetInfo {
        &self.target
    }

    pub fn jobs(&self) -> &[JobPlan] {
        &self.jobs
    }

    pub fn replay(&self) -> Option<&super::replay::ReplayPlan> {
        self.replay.as_deref()
    }

    /// The plan replays `trace` (read with the spec's `replay`) over its span.
    pub fn with_replay(
        mut self,
        name: &str,
        trace: &crate::trace::Trace,
    ) -> Result<Plan, Vec<SpecError>> {
        let Some(r) = &self.spec.replay else {
            return Ok(self);
        };
        let (start, end) = self.span_bytes();
        let lbs = u64::from(self.target.logical_block_size);
        let rp = super::replay::plan(name, r, trace, (start, end - start), lbs, self.spec.direct)
            .map_err(|e| vec![e])?;
        self.replay = Some(std::sync::Arc::new(rp));
        Ok(self)
    }

    /// Byte range covered by all jobs.
    pub fn span_bytes(&self) -> (u64, u64) {
        let start = self.jobs.iter().map(|j| j.span.start).min().unwrap_or(0);
        let end = self
            .jobs
            .iter()
            .map(|j| j.span.start + j.span.blocks * j.span.bs)
            .max()
            .unwrap_or(0);
        (start, end)
    }

    /// Whether any I/O writes.
    pub fn writes(&self) -> bool {
        self.spec.rw.read_pct(self.spec.read_pct) < 100
    }

    /// Whether any I/O reads.
    pub fn reads(&self) -> bool {
        self.spec.rw.read_pct(self.spec.read_pct) > 0
    }

    /// Bytes the run will transfer after the ramp, when size-based. A probe's are its
    /// counted requests' (the warm-up apart, as its samples), none when it runs until
    /// stopped or sweeps idle times.
    pub fn planned_bytes(&self) -> Option<u64> {
        if let Some(p) = &self.spec.probe {
            let n = p.count.filter(|_| p.idle_sweep.is_none())?;
            return Some(
                n.saturating_sub(u64::from(p.warmup))
                    .saturating_mul(self.spec.bs),
            );
        }
        if let Some(r) = &self.replay {
            return Some(r.report.ops.iter().take(2).map(|o| o.bytes).sum());
        }
        self.jobs.iter().map(|j| j.bytes).sum()
    }
}

/// Job `j`'s span: its own region (`offset_increment`), its share of a split span, or the
/// whole span; random offsets then on a grid of `block_align` bytes instead of `bs` (fio's
/// blockalign: the grid's cells are the span's blocks, each I/O `bs` long).
fn job_span(spec: &WorkloadSpec, start: u64, blocks: u64, j: u64, split: bool) -> Span {
    let n = u64::from(spec.jobs);
    let whole = if let Some(inc) = spec.offset_increment {
        Span {
            start: start + j * inc,
            blocks,
            bs: spec.bs,
        }
    } else if split {
        let first = blocks * j / n;
        let last = blocks * (j + 1) / n;
        Span {
            start: start + first * spec.bs,
            blocks: last - first,
            bs: spec.bs,
        }
    } else {
        Span {
            start,
            blocks,
            bs: spec.bs,
        }
    };
    match spec.offset_grid() {
        Some(a) => Span {
            start: whole.start,
            blocks: whole.blocks * whole.bs / a,
            bs: a,
        },
        None => whole,
    }
}

/// The size to create or extend a file target to, when the spec gives a span.
pub fn wanted_target_size(spec: &WorkloadSpec) -> Option<u64> {
    spec.size.map(|s| spec.extent_end(s))
}

/// The label-only target of the null backend.
pub fn null_target(spec: &WorkloadSpec, label: &std::path::Path) -> TargetInfo {
    let size = wanted_target_size(spec).unwrap_or(spec.offset.saturating_add(NULL_TARGET_SIZE));
    TargetInfo::none(label, size)
}

/// What must fit the span's `blocks` blocks: a size mix's largest size, a zoned
/// distribution's zones.
fn check_layout(spec: &WorkloadSpec, blocks: u64) -> Result<(), Vec<SpecError>> {
    let largest = match (&spec.bssplit, spec.bs_max) {
        (Some(split), _) => Some(("bssplit", split.to_string(), split.max())),
        (None, Some(max)) => Some(("bs_max", max.to_string(), max)),
        (None, None) => None,
    };
    // A grid of offsets needs one cell in the span at least (a size mix on it too).
    if let Some(a) = spec.block_align.filter(|&a| blocks * spec.bs < a) {
        return Err(vec![SpecError::new(
            "block_align",
            a,
            format!(
                "the span ({} B) holds no cell of this grid",
                blocks * spec.bs
            ),
        )]);
    }
    if let Some((field, value, max)) = largest {
        if blocks * spec.bs < max {
            return Err(vec![SpecError::new(
                field,
                value,
                format!(
                    "the span ({} B) is smaller than its largest size",
                    blocks * spec.bs
                ),
            )]);
        }
    }
    for d in std::iter::once(&spec.random_distribution).chain(&spec.write_random_distribution) {
        if let Some(Err(why)) = super::offsets::zone_blocks(d, blocks, spec.bs) {
            return Err(vec![SpecError::new("random_distribution", d, why)]);
        }
    }
    Ok(())
}

/// The CPUs a spec pins its jobs to: a list, of CPUs the agent may run on.
/// The SQPOLL thread's CPU is one the agent may run on (else the kernel's EINVAL would fail
/// the run's first job instead of refusing it).
fn check_sqpoll_cpu(spec: &WorkloadSpec) -> Result<(), Vec<SpecError>> {
    let Some(cpu) = spec.sqpoll_cpu else {
        return Ok(());
    };
    let bad = |why: String| vec![SpecError::new("sqpoll_cpu", cpu, why)];
    let mine = crate::cpus::allowed()
        .map_err(|e| bad(format!("the agent's own CPUs are unknown: {e}")))?;
    if u16::try_from(cpu).is_ok_and(|c| mine.contains(&c)) {
        return Ok(());
    }
    let mine = crate::cpus::CpuList::of(mine).map_or_else(|| "none".into(), |l| l.to_string());
    Err(bad(format!(
        "CPU {cpu} not available to the agent (it may run on {mine})"
    )))
}

fn check_cpus(spec: &WorkloadSpec) -> Result<Option<crate::cpus::CpuList>, Vec<SpecError>> {
    let Some(text) = &spec.cpus_allowed else {
        return Ok(None);
    };
    let bad = |why: String| vec![SpecError::new("cpus_allowed", text, why)];
    let list: crate::cpus::CpuList = text.parse().map_err(bad)?;
    let mine = crate::cpus::allowed()
        .map_err(|e| bad(format!("the agent's own CPUs are unknown: {e}")))?;
    let missing: Vec<String> = list
        .cpus()
        .iter()
        .filter(|c| !mine.contains(c))
        .map(u16::to_string)
        .collect();
    if missing.is_empty() {
        return Ok(Some(list));
    }
    let mine = crate::cpus::CpuList::of(mine).map_or_else(|| "none".into(), |l| l.to_string());
    Err(bad(format!(
        "CPU {} not available to the agent (it may run on {mine})",
        missing.join(",")
    )))
}

/// Start and length of the span on the target, or the errors that forbid it.
fn check_span(spec: &WorkloadSpec, target: &TargetInfo) -> Result<(u64, u64), Vec<SpecError>> {
    let mut errs = Vec::new();
    let lbs = u64::from(target.logical_block_size);
    let path = target.path.display();
    if spec.direct && !spec.backend.opens_nothing() {
        // Every I/O length and offset grid: `bs` (a mix's or range's smallest), a range's
        // largest (its sizes are multiples of `bs` and it), the random offsets' grid.
        for (field, v) in [
            ("bs", Some(spec.bs)),
            ("bs_max", spec.bs_max),
            ("block_align", spec.block_align),
        ] {
            if let Some(v) = v.filter(|v| !v.is_multiple_of(lbs)) {
                errs.push(SpecError::new(field, v, format!("not a multiple of the logical block size of {path} ({lbs} B), which O_DIRECT requires")));
            }
        }
        // Every size of a mix is an I/O length too.
        if let Some(odd) = spec
            .bssplit
            .as_ref()
            .and_then(|s| s.0.iter().find(|&&(b, _)| !b.is_multiple_of(lbs)))
        {
            errs.push(SpecError::new(
                "bssplit",
                spec.bssplit.as_ref().map(|s| s.to_string()).unwrap_or_default(),
                format!("size {} is not a multiple of the logical block size of {path} ({lbs} B), which O_DIRECT requires", odd.0),
            ));
        }
        if !spec.offset.is_multiple_of(lbs) {
            errs.push(SpecError::new(
                "offset",
                spec.offset,
                format!("not a multiple of the logical block size of {path} ({lbs} B)"),
            ));
        }
    }
    if spec.offset >= target.size {
        errs.push(SpecError::new(
            "offset",
            spec.offset,
            format!("at or beyond the end of {path} ({} bytes)", target.size),
        ));
        return Err(errs);
    }
    let len = match spec.size {
        Some(s) => s,
        None => target.size - spec.offset,
    };
    let what = if target.kind == TargetKind::Block {
        "device"
    } else {
        "target"
    };
    if spec.offset.saturating_add(len) > target.size {
        errs.push(SpecError::new(
            "size",
            len,
            format!(
                "span {}..{} goes beyond the end of the {what} {path} ({} bytes)",
                spec.offset,
                spec.offset.saturating_add(len),
                target.size
            ),
        ));
    } else if let Some(inc) = spec.offset_increment {
        if spec.extent_end(len) > target.size {
            errs.push(SpecError::new(
                "offset_increment",
                inc,
                format!(
                    "job {}'s region {}..{} goes beyond the end of the {what} {path} ({} bytes)",
                    spec.jobs - 1,
                    spec.extent_end(len) - len,
                    spec.extent_end(len),
                    target.size
                ),
            ));
        }
        if spec.direct && !spec.backend.opens_nothing() && !inc.is_multiple_of(lbs) {
            errs.push(SpecError::new(
                "offset_increment",
                inc,
                format!("not a multiple of the logical block size of {path} ({lbs} B)"),
            ));
        }
    }
    if len < spec.bs {
        errs.push(SpecError::new(
            "size",
            len,
            format!("the span must hold at least one block of {} B", spec.bs),
        ));
    }
    if errs.is_empty() {
        Ok((spec.offset, len))
    } else {
        Err(errs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shared::RwMode;
    use std::path::PathBuf;

    fn block_target(size: u64, lbs: u32) -> TargetInfo {
        TargetInfo {
            path: PathBuf::from("/dev/test0"),
            kind: TargetKind::Block,
            size,
            logical_block_size: lbs,
            pin: None,
            created: false,
        }
    }

    fn plan(edit: impl FnOnce(&mut WorkloadSpec)) -> Result<Plan, Vec<SpecError>> {
        let mut spec = WorkloadSpec::default();
        edit(&mut spec);
        Plan::new(&spec, block_target(1 << 30, 4096))
    }

    fn err_text(r: Result<Plan, Vec<SpecError>>) -> String {
        r.expect_err("plan must fail")
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("; ")
    }

    #[test]
    fn each_job_gets_its_own_region_with_offset_increment() {
        let p = plan(|s| {
            s.rw = RwMode::RandWrite;
            s.offset = 4096;
            s.size = Some(1 << 20);
            s.offset_increment = Some(2 << 20);
            s.jobs = 3;
        })
        .expect("plan");
        let got: Vec<(u64, u64, Option<u64>)> = p
            .jobs()
            .iter()
            .map(|j| (j.span.start, j.span.blocks, j.bytes))
            .collect();
        let region = |n: u64| (4096 + n * (2 << 20), 256, Some(1 << 20));
        assert_eq!(got, vec![region(0), region(1), region(2)]);
    }

    #[test]
    fn block_align_puts_random_offsets_on_its_grid() {
        let p = plan(|s| {
            s.rw = RwMode::RandRead;
            s.bs = 65536;
            s.size = Some(1 << 20);
            s.block_align = Some(4096);
        })
        .expect("plan");
        let j = &p.jobs()[0];
        assert_eq!((j.span.bs, j.span.blocks), (4096, 256));
        assert!(matches!(
            j.sizes,
            Some(super::super::sizes::Sizes::Fixed(65536))
        ));
        let mut gen =
            super::super::offsets::OffsetGen::new(j.span, j.order.clone(), Rng::new(1, 0));
        let offs: Vec<u64> = (0..64).map(|_| gen.next_offset_len(65536)).collect();
        assert!(
            offs.iter().all(|o| o % 4096 == 0 && o + 65536 <= 1 << 20),
            "{offs:?}"
        );
        assert!(offs.iter().any(|o| o % 65536 != 0), "{offs:?}");
        // A grid coarser than the span has no cell to draw, with or without a size mix.
        for mix in [None, "4K/50:8K/50".parse().ok()] {
            let e = err_text(plan(|s| {
                s.rw = RwMode::RandRead;
                s.bs = 4096;
                s.bssplit = mix;
                s.size = Some(1 << 20);
                s.block_align = Some(32 << 20);
            }));
            assert!(
                e.contains(
                    "block_align = 33554432: the span (1048576 B) holds no cell of this grid"
                ),
                "{e}"
            );
        }
    }

    #[test]
    fn target_checks_name_the_value() {
        let e = err_text(plan(|s| s.bs = 512));
        assert!(
            e.contains("bs = 512: not a multiple of the logical block size of /dev/test0 (4096 B)"),
            "{e}"
        );
        let e = err_text(plan(|s| s.size = Some(2 << 30)));
        assert!(e.contains("size = 2147483648: span 0..2147483648 goes beyond the end of the device /dev/test0 (1073741824 bytes)"), "{e}");
        let e = err_text(plan(|s| s.offset = 1 << 30));
        assert!(
            e.contains("offset = 1073741824: at or beyond the end"),
            "{e}"
        );
        let e = err_text(plan(|s| {
            s.size = Some(8192);
            s.jobs = 4
        }));
        assert!(e.contains("jobs = 4: the span holds 2 blocks"), "{e}");
        let e = err_text(plan(|s| {
            s.size = Some(8 << 20);
            s.offset_increment = Some(512 << 20);
            s.jobs = 3
        }));
        assert!(
            e.contains("offset_increment = 536870912: job 2's region 1073741824..1082130432 goes beyond the end of the device /dev/test0"),
            "{e}"
        );
        // a spec-level error comes through unchanged
        let e = err_text(plan(|s| s.iodepth = 0));
        assert!(e.contains("iodepth = 0"), "{e}");
        assert!(plan(|s| {
            s.bs = 512;
            s.direct = false
        })
        .is_ok());
    }

    #[test]
    fn sequential_jobs_split_the_span_random_jobs_share_it() {
        let p = plan(|s| {
            s.jobs = 3;
            s.size = Some(3 << 20);
            s.bs = 1 << 20;
            s.rw = RwMode::Write
        })
        .expect("plan");
        let spans: Vec<(u64, u64)> = p
            .jobs()
            .iter()
            .map(|j| (j.span.start, j.span.blocks))
            .collect();
        assert_eq!(spans, vec![(0, 1), (1 << 20, 1), (2 << 20, 1)]);
        assert_eq!(p.planned_bytes(), Some(3 << 20));

        let p = plan(|s| {
            s.jobs = 2;
            s.rw = RwMode::RandRead;
            s.io_size = Some(1 << 20)
        })
        .expect("plan");
        assert!(p
            .jobs()
            .iter()
            .all(|j| j.span.start == 0 && j.span.blocks == (1 << 30) / 4096));
        assert_eq!(
            p.jobs().iter().map(|j| j.bytes.unwrap_or(0)).sum::<u64>(),
            256 * 4096
        );
    }

    #[test]
    fn every_size_of_a_mix_meets_the_devices_block() {
        let e = err_text(plan(|s| {
            s.rw = RwMode::RandRead;
            s.bssplit = "4k/50:6k/50".parse().ok();
        }));
        assert!(
            e.contains("bssplit = 4K/50:6K/50: size 6144 is not a multiple of the logical block size of /dev/test0 (4096 B)"),
            "{e}"
        );
    }

    #[test]
    fn time_based_has_no_budget_and_rate_is_split() {
        let p = plan(|s| {
            s.runtime_ms = Some(1000);
            s.jobs = 4;
            s.rate = Some(Rate::BytesPerSec(4096 * 4000));
        })
        .expect("plan");
        assert!(p.jobs().iter().all(|j| j.bytes.is_none()));
        let mut cap = p.jobs()[0].rate.clone().expect("rate");
        assert_eq!(cap.due_ns(1000), 1_000_000_000);
    }
}
