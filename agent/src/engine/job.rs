//! One job: a thread with its own backend (ring), keeping `iodepth` I/Os in flight.
//!
//! The loop, one for every job: refill every free slot from the job's source, handing each
//! I/O to the kernel on its own as fio does (a batch, when asked for, is queued and handed
//! over in one call), wait for one completion (or the batch's minimum), take one timestamp,
//! reap every ready completion (or the batch's maximum). The sources: the generator
//! (offsets, sizes, directions, rate cap and think time, flushes; budget permitting), the
//! verifier's read-back (it takes the free slots while it checks), and a trace
//! ([`super::replay`], with its due times and barriers); a latency search
//! (`qd_search.rs`) caps the depth it fills to. Timestamps are per round: the reap
//! time of one round is the submit time of the next, so a round costs one clock read
//! however many I/Os it moves. Per-interval statistics are handed to the runner over a
//! channel as owned values; the loop never blocks on the runner. It stops issuing on
//! cancellation, deadline, budget, a search's end or error, and always drains what is in
//! flight.

use super::aio::AioBackend;
use super::buf::BufferPool;
use super::null::NullBackend;
use super::qd_search::{Next, QdSearch};
use super::replay::ReplaySource;
use super::sync::SyncBackend;
use super::uring::{build_ring, Registrations, UringBackend};
use super::verify::Verifier;
use super::{Dir, IoBackend};
use crate::stats::interval::Completed;
use crate::stats::IntervalStats;
use crate::workload::offsets::{OffsetGen, Order};
use crate::workload::pattern::Filler;
use crate::workload::plan::Trims;
use crate::workload::rate::{Gate, RateCap, Think};
use crate::workload::rng::Rng;
use crate::workload::sizes::Sizes;
use crate::workload::{JobPlan, Plan};
use shared::analysis::scan::ScanMap;
use shared::analysis::verify::Verify;
use shared::{Backend, RunError};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// The random stream of job j's I/O sizes is this + j (offsets, mix and data take 3j..3j+2,
/// a rate cap's arrivals 2^32 + j).
const SIZE_STREAM: u64 = 1 << 33;

/// What a job tells the runner. (Intervals dominate the traffic, one per job per interval,
/// so the enum is as large as one; boxing would add an allocation per message.)
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum JobMsg {
    /// Set-up finished (or failed); the job now waits at the start barrier.
    Ready {
        job: usize,
        result: Result<JobSetup, String>,
    },
    Interval {
        job: usize,
        stats: IntervalStats,
    },
    /// The job has ended; `end_ns` is measured time (ramp excluded).
    Done {
        job: usize,
        end_ns: u64,
        error: Option<RunError>,
        fsync_ns: Option<u64>,
    },
    /// Before `Done`, from a job that scans: its map of I/Os by position.
    Mapped {
        job: usize,
        map: ScanMap,
    },
    /// Before `Done`, from a job that searched its depth (`latency_target`): the depth it
    /// ended at, and its final window's completions when it reached it.
    Searched {
        job: usize,
        depth: u32,
        tally: Option<IntervalStats>,
    },
    /// From a probe: one request, as it completed (shown live; counted in the interval
    /// unless a warm-up's).
    Request(shared::probe::Request),
    /// Before `Done`, from a files job: its operations and bytes when the first job ended.
    FirstDone {
        job: usize,
        ops: u64,
        bytes: u64,
    },
    /// Before `Done`, from a replay: the trace's figures with what the replay measured.
    Replayed {
        job: usize,
        replay: Box<shared::analysis::replay::Replay>,
    },
    /// Before `Done`, from a flush check's writer: its witness session and what it recorded.
    Witnessed(Box<shared::flushcheck::Written>),
    /// After `Done`, from a job that verifies: what its read-back found, and the error that
    /// ended the read-back early.
    Verified {
        job: usize,
        verify: Verify,
        error: Option<RunError>,
    },
}

/// How a job's backend was set up.
#[derive(Debug, Clone)]
pub struct JobSetup {
    pub backend: &'static str,
    /// Why the backend differs from the one asked for.
    pub note: Option<String>,
    pub features: Vec<String>,
    /// The job's buffer pool: bytes mapped, and bytes of it in huge pages.
    pub buffers: (u64, u64),
}

/// State shared by the runner and all jobs of one run.
#[derive(Debug)]
pub struct RunShared {
    /// Jobs wait here after set-up, so I/O starts together.
    pub gate: StartGate,
    /// Stop requested by the user (Ctrl-C, stop button).
    pub cancel: std::sync::Arc<AtomicBool>,
    /// Stop requested by the runner (another job failed, set-up failed).
    pub abort: AtomicBool,
    pub ramp_ns: u64,
    pub interval_ns: u64,
    pub runtime_ns: Option<u64>,
    /// When the first job ended (ns of its own clock; `u64::MAX` until one has): the files
    /// workload's jobs count what they had done by then (elbencho's first-done).
    pub first_done_ns: std::sync::atomic::AtomicU64,
    /// A probe's requests sent and not yet taken by the runner: the probe waits while
    /// [`MAX_BACKLOG`] are, so requests made faster than they are shown queue boundedly.
    pub backlog: std::sync::atomic::AtomicUsize,
}

/// Most requests a probe leaves waiting for the runner.
pub const MAX_BACKLOG: usize = 1024;

/// Opened once by the runner: with time zero of the run (ramp included), or with `None`
/// to send the jobs home without I/O.
#[derive(Debug, Default)]
pub struct StartGate {
    state: Mutex<Option<Option<Instant>>>,
    opened: Condvar,
}

impl StartGate {
    pub fn open(&self, epoch: Option<Instant>) {
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        *st = Some(epoch);
        self.opened.notify_all();
    }

    pub fn wait(&self) -> Option<Instant> {
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if let Some(epoch) = *st {
                return epoch;
            }
            st = self.opened.wait(st).unwrap_or_else(|p| p.into_inner());
        }
    }
}

impl RunShared {
    pub(super) fn stop_requested(&self) -> bool {
        self.cancel.load(Ordering::Relaxed) || self.abort.load(Ordering::Relaxed)
    }
}

/// Body of a job thread: sets up the backend the plan asks for, reports, waits for the start,
/// runs, reports the end.
pub fn job_thread(plan: &Plan, job: usize, shared: &RunShared, tx: &Sender<JobMsg>) {
    let jp = &plan.jobs()[job];
    let spec = plan.spec();
    let fail = |msg: String| send_setup_error(tx, job, msg);
    // Pinned before its buffers exist, so that they are first touched where it runs.
    if let Some(cpus) = &jp.cpus {
        if let Err(e) = crate::cpus::pin(cpus) {
            return fail(format!("job {job}: could not pin it to CPUs {cpus:?}: {e}"));
        }
    }
    let sets = if jp.split_buffers { 2 } else { 1 };
    let huge = spec.iomem == shared::spec::BufferMemory::Huge;
    let pool = match BufferPool::new(
        spec.buffer_bs() as usize,
        (jp.iodepth * sets) as usize,
        huge,
    ) {
        Ok(p) => p,
        Err(e) => return fail(format!("job {job}: {e}")),
    };
    let buffers = (pool.mapped_bytes(), pool.huge_bytes());
    if spec.backend == Backend::Null {
        let mut b = NullBackend::new(pool, jp.iodepth);
        return drive(&mut b, buffers, None, Vec::new(), plan, job, shared, tx);
    }
    if spec.backend == Backend::Nop {
        return on_ring(
            None,
            pool,
            buffers,
            ((0, 0), Vec::new()),
            plan,
            job,
            shared,
            tx,
        );
    }
    let file = match plan
        .target()
        .open_with(plan.writes(), spec.direct, spec.write_sync)
    {
        Ok(f) => f,
        Err(e) => return fail(e.to_string()),
    };
    // Buffered I/O starts cold, as fio's default invalidate=1 has it: what an earlier run or
    // the layout left in the page cache would otherwise be measured as the drive (a buffered
    // random read on a file just read by another tool ran 40x faster than fio's).
    // Dirty pages cannot be dropped, so they are written back first.
    if !spec.direct && spec.invalidate && job == 0 {
        if let Err(e) = file
            .sync_data()
            .and_then(|()| super::drop_cached_pages(&file))
        {
            return fail(format!(
                "could not drop the page cache of {} before a buffered run: {e}",
                plan.target().path.display()
            ));
        }
    }
    // The access hint fio gives every file it opens (fadvise_hint=1 by default): a buffered
    // random read without it is helped by read-ahead fio's is not (1.9x fio's rate on a
    // cold file). A file system or device that takes no advice is no reason to stop.
    let _ = super::advise_access(&file, spec.fadvise_hint, spec.rw.is_random());
    // Per-I/O flags (checked against the target when the run was planned), named in the
    // backend line.
    let rw_flags = crate::io_target::rw_flags::of(spec);
    let flag_names: Vec<&'static str> = [(spec.uncached, "uncached"), (spec.atomic, "atomic")]
        .into_iter()
        .filter_map(|(on, name)| on.then_some(name))
        .collect();
    if spec.backend == Backend::Aio {
        return match AioBackend::new(file, pool, jp.iodepth) {
            Ok(mut b) => {
                b.set_rw_flags(rw_flags);
                drive(&mut b, buffers, None, flag_names, plan, job, shared, tx)
            }
            Err(e) => fail(format!("job {job}: Linux AIO could not be set up: {e}")),
        };
    }
    if spec.backend == Backend::Sync {
        return drive(
            &mut SyncBackend::new(file, pool),
            buffers,
            None,
            Vec::new(),
            plan,
            job,
            shared,
            tx,
        );
    }
    on_ring(
        Some(file),
        pool,
        buffers,
        (rw_flags, flag_names),
        plan,
        job,
        shared,
        tx,
    )
}

/// Mixed into the seed of a job's writes' own offsets (their own zones).
const WRITE_ZONES: u64 = 0x5752_4954_455a_4f4e;

/// Runs the job on an io_uring ring: on `file` with its per-I/O flags (named in the backend
/// line), or with none a ring of no-ops. The registrations are the spec's; a ring the kernel
/// refuses falls back to pread/pwrite unless SQPOLL, polled completion or no-ops were asked
/// for by name.
#[allow(clippy::too_many_arguments)]
fn on_ring(
    file: Option<std::fs::File>,
    pool: BufferPool,
    buffers: (u64, u64),
    (rw_flags, flag_names): ((i32, i32), Vec<&'static str>),
    plan: &Plan,
    job: usize,
    shared: &RunShared,
    tx: &Sender<JobMsg>,
) {
    let (spec, depth) = (plan.spec(), plan.jobs()[job].iodepth);
    let fail = |msg: String| send_setup_error(tx, job, msg);
    let registrations = Registrations {
        file: spec.registered_file,
        buffers: spec.fixed_buffers,
        ring: spec.registered_ring,
    };
    let sqpoll = spec.sqpoll.then_some(spec.sqpoll_cpu);
    match build_ring(depth, sqpoll, spec.hipri) {
        Ok((mut ring, mut features)) => {
            match UringBackend::new(&mut ring, file, pool, depth, registrations, &mut features) {
                Ok(mut b) => {
                    b.set_rw_flags(rw_flags);
                    b.set_force_async(spec.force_async);
                    features.extend(flag_names);
                    drive(&mut b, buffers, None, features, plan, job, shared, tx)
                }
                Err(e) => fail(format!("job {job}: io_uring registration failed: {e}")),
            }
        }
        Err(e) => match file {
            Some(file) if sqpoll.is_none() && !spec.hipri => {
                let note = format!(
                    "io_uring unavailable ({e}): ran pread/pwrite, one I/O at a time per job"
                );
                drive(
                    &mut SyncBackend::new(file, pool),
                    buffers,
                    Some(note),
                    Vec::new(),
                    plan,
                    job,
                    shared,
                    tx,
                )
            }
            // Asked for by name: not replaced by another way of issuing I/O.
            _ => fail(format!("job {job}: {e}")),
        },
    }
}

#[allow(clippy::too_many_arguments)]
fn drive<B: IoBackend>(
    b: &mut B,
    buffers: (u64, u64),
    note: Option<String>,
    features: Vec<&'static str>,
    plan: &Plan,
    job: usize,
    shared: &RunShared,
    tx: &Sender<JobMsg>,
) {
    let jp = &plan.jobs()[job];
    let mut features: Vec<String> = features.into_iter().map(String::from).collect();
    if b.name() == "uring" {
        // The batch sizes are how I/O reaches the ring: the backend line says them.
        if jp.batch.0 > 1 {
            features.push(format!("batch_submit={}", jp.batch.0));
        }
        if jp.batch.1 != 1 {
            features.push(format!("batch_complete_min={}", jp.batch.1));
        }
        if jp.batch.2 != 0 {
            features.push(format!("batch_complete_max={}", jp.batch.2));
        }
        if plan.spec().force_async > 0 {
            features.push(format!("force_async={}", plan.spec().force_async));
        }
    }
    let setup = JobSetup {
        backend: b.name(),
        note,
        features,
        buffers,
    };
    let _ = tx.send(JobMsg::Ready {
        job,
        result: Ok(setup),
    });
    match shared.gate.wait() {
        // The job's clock starts when its thread resumes, not when the gate opened: a thread
        // the scheduler wakes late (a busy machine) would otherwise lose that time from its
        // run time and count it as measured time with no I/O (a 300 ms run woken 400 ms late
        // measured nothing). fio, too, starts each job's clock when the job starts.
        Some(_) if !shared.stop_requested() => {
            let epoch = Instant::now();
            let mut lp = JobLoop::new(b, jp, job, shared, tx, epoch);
            lp.replay = plan.replay().map(ReplaySource::new);
            lp.run()
        }
        // Sent home before any I/O.
        _ => send_done(tx, job, 0, None, None),
    }
}

/// Tells the run the job could not be set up (its backend, buffers or target), and why.
fn send_setup_error(tx: &Sender<JobMsg>, job: usize, msg: String) {
    let _ = tx.send(JobMsg::Ready {
        job,
        result: Err(msg),
    });
}

pub(super) fn send_done(
    tx: &Sender<JobMsg>,
    job: usize,
    end_ns: u64,
    error: Option<RunError>,
    fsync_ns: Option<u64>,
) {
    let _ = tx.send(JobMsg::Done {
        job,
        end_ns,
        error,
        fsync_ns,
    });
}

#[derive(Clone, Copy, Debug, Default)]
struct Slot {
    submit_ns: u64,
    offset: u64,
    /// Bytes (the block size, or the size mix's draw).
    len: u32,
    is_write: bool,
    /// A flush (fsync/fdatasync), not a read or write.
    flush: bool,
    /// Position in the job's offset order (the write index; for a read-back, the position
    /// it replays).
    index: u64,
}

/// The interval a job is filling, when it ends, and the thread's CPU time at its start:
/// every source rolls its intervals the same way.
#[derive(Debug)]
pub(super) struct IntervalClock {
    pub cur: IntervalStats,
    /// Absolute time (ns since epoch) at which the current interval ends.
    pub boundary: u64,
    cpu_mark: Option<u64>,
}

impl IntervalClock {
    pub fn new(shared: &RunShared) -> Self {
        IntervalClock {
            cur: IntervalStats::new(0, 0, shared.interval_ns),
            boundary: shared.ramp_ns + shared.interval_ns,
            cpu_mark: None,
        }
    }

    /// CPU time counts from now.
    pub fn mark_cpu(&mut self) {
        self.cpu_mark = thread_cpu_ns();
    }

    /// The thread's busy time (on CPU or waiting for one) since the last mark, read once
    /// per interval; `None` when it cannot be read.
    fn cpu_since_mark(&mut self) -> Option<u64> {
        let now = thread_cpu_ns()?;
        let used = now.saturating_sub(self.cpu_mark.unwrap_or(now));
        self.cpu_mark = Some(now);
        Some(used)
    }

    /// Sends every interval that ended before `now`, empty ones included.
    pub fn roll(&mut self, now: u64, shared: &RunShared, tx: &Sender<JobMsg>, job: usize) {
        let (ramp, interval) = (shared.ramp_ns, shared.interval_ns);
        while now >= self.boundary {
            let start = self.boundary - ramp;
            let next = IntervalStats::new(self.cur.index + 1, start, start + interval);
            let mut done = std::mem::replace(&mut self.cur, next);
            done.cpu_ns = self.cpu_since_mark();
            let _ = tx.send(JobMsg::Interval { job, stats: done });
            self.boundary += interval;
        }
    }

    /// Sends the last interval, ending when the job ended (`end_ns`, measured time).
    pub fn close(&mut self, end_ns: u64, tx: &Sender<JobMsg>, job: usize) {
        let mut last = std::mem::replace(&mut self.cur, IntervalStats::new(0, 0, 0));
        last.end_ns = end_ns.max(last.start_ns);
        last.cpu_ns = self.cpu_since_mark();
        let _ = tx.send(JobMsg::Interval { job, stats: last });
    }
}

/// A job's data filler and where its write buffers start in the pool (after the read ones,
/// when split), each write buffer given its first content.
pub(super) fn write_buffers<B: IoBackend>(
    b: &mut B,
    jp: &JobPlan,
    depth: u32,
    rng: Rng,
) -> (Filler, u32) {
    let write_base = if jp.split_buffers { jp.iodepth } else { 0 };
    let mut filler = Filler::new(jp.pattern, rng);
    if jp.read_pct < 100 {
        for s in 0..depth {
            filler.init(b.buffers().get_mut((write_base + s) as usize));
        }
    }
    (filler, write_base)
}

/// The running job. One pass of [`JobLoop::run`] is a round: update the state, [`fill`]
/// the free slots, then [`reap_round`]; [`finish`] drains nothing (the rounds did) and
/// reports.
///
/// [`fill`]: JobLoop::fill
/// [`reap_round`]: JobLoop::reap_round
/// [`finish`]: JobLoop::finish
pub(super) struct JobLoop<'a, B: IoBackend> {
    pub(super) b: &'a mut B,
    jp: &'a JobPlan,
    job: usize,
    shared: &'a RunShared,
    tx: &'a Sender<JobMsg>,
    epoch: Instant,
    bs: u64,
    /// Where the write buffers start in the pool (after the read ones, when split).
    write_base: u32,
    read_pct: u64,
    /// Absolute time (ns since epoch) at which issuing stops (`u64::MAX`: never).
    deadline: u64,
    filler: Filler,
    gen: OffsetGen,
    /// A sequential mix's writes: their own position, as fio keeps one per direction (the
    /// reads then run on contiguously, and the page cache reads ahead of them).
    write_gen: Option<OffsetGen>,
    mix: Rng,
    /// What each slot in flight holds; `free` the slots that hold nothing.
    slots: Vec<Slot>,
    pub(super) free: Vec<u32>,
    pub(super) inflight: u32,
    /// Entries queued since the last submit call, and how many make a batch (1: each I/O
    /// goes to the kernel on its own).
    queued: u32,
    /// A submit call went out since `now` was read: the next I/O takes a fresh stamp, so its
    /// latency starts when it reaches the kernel, not when the round began.
    restamp: bool,
    batch: u32,
    /// Completions a round waits for (at most what is in flight; 0: never sleeps), and
    /// the most it reaps (0: every ready one).
    complete_min: u32,
    reap_max: u32,
    issued: u64,
    /// `jp.flush`'s N (0: no flushes), the writes issued when there is one, and whether a
    /// flush is due: the write just issued made the count a multiple of N (fio's rule). A
    /// due flush takes the next free slot, before any other I/O.
    flush_every: u64,
    writes_issued: u64,
    flush_due: bool,
    /// The interval being filled.
    iv: IntervalClock,
    /// Past the ramp: completions count.
    recording: bool,
    /// Bytes still to issue, for a plan with a budget (`jp.bytes`), from the end of the ramp.
    remaining: Option<u64>,
    /// Draws each I/O's length under a size mix.
    size_rng: Rng,
    /// Time of the latest counted completion (for the fine timeline's gap histogram).
    last_done: Option<u64>,
    /// No more I/O is issued; what is in flight drains.
    pub(super) stopping: bool,
    /// The first error; the job stops on it.
    pub(super) error: Option<RunError>,
    /// The round's one timestamp (ns since epoch).
    pub(super) now: u64,
    /// Stamps writes and reads them back (`verify`).
    verifier: Option<Verifier>,
    /// Read-back completions of the round, checked once the backend is free again.
    read_back: Vec<(u32, i32)>,
    /// Error scan: every I/O by position; failed ones are mapped, not the job's error.
    map: Option<ScanMap>,
    /// The map's slow threshold (ns).
    slow_ns: u64,
    /// The job's rate cap (its Poisson draws advance as it issues).
    rate: Option<RateCap>,
    /// The job's think time.
    think: Option<Think>,
    /// The I/Os come from a trace instead of the generator.
    pub(super) replay: Option<ReplaySource<'a>>,
    /// fio's `latency_target` search, and the depth it lets the job fill to now
    /// (`u32::MAX` without one).
    search: Option<QdSearch>,
    cap: u32,
    /// The job's span (first byte, length), when each pass over it starts with its pages
    /// dropped from the page cache (`JobPlan::cold_passes`), and the issued bytes at which
    /// the next pass begins.
    cold_span: Option<(u64, u64)>,
    next_pass: u64,
    issued_bytes: u64,
    /// A pass was issued whole: the next I/O starts a new one (`cold_pass`).
    pass_ended: bool,
    /// A trim-then-write workload's block just trimmed, whose write comes next.
    trimmed: Option<(u64, u64)>,
    /// The round made its I/O synchronously (a trim): nothing in flight, yet no reason to
    /// sleep before the next round.
    sync_done: bool,
}

impl<'a, B: IoBackend> JobLoop<'a, B> {
    fn new(
        b: &'a mut B,
        jp: &'a JobPlan,
        job: usize,
        shared: &'a RunShared,
        tx: &'a Sender<JobMsg>,
        epoch: Instant,
    ) -> Self {
        let depth = jp.iodepth.min(b.max_depth());
        let seed = 3 * job as u64;
        let (filler, write_base) = write_buffers(b, jp, depth, Rng::new(jp.seed, seed + 2));
        let ramp = shared.ramp_ns;
        JobLoop {
            b,
            jp,
            job,
            shared,
            tx,
            epoch,
            bs: jp.span.bs,
            write_base,
            read_pct: u64::from(jp.read_pct),
            deadline: shared.runtime_ns.map_or(u64::MAX, |r| ramp + r),
            filler,
            gen: OffsetGen::new(jp.span, jp.order.clone(), Rng::new(jp.seed, seed))
                .with_seq_pct(jp.seq_pct),
            // A sequential mix keeps a position per direction (as fio); a random mix whose
            // writes have their own zones draws them from a generator of their own.
            write_gen: match &jp.write_order {
                Some(w) => Some(
                    // Streams seed..seed+2 are the job's reads, mix and data: its own seed.
                    OffsetGen::new(jp.span, w.clone(), Rng::new(jp.seed ^ WRITE_ZONES, seed))
                        .with_seq_pct(jp.seq_pct),
                ),
                None => (jp.order == Order::Sequential && (1..100).contains(&jp.read_pct))
                    .then(|| OffsetGen::new(jp.span, Order::Sequential, Rng::new(jp.seed, seed))),
            },
            mix: Rng::new(jp.seed, seed + 1),
            slots: vec![Slot::default(); depth as usize],
            free: (0..depth).rev().collect(),
            inflight: 0,
            queued: 0,
            restamp: false,
            batch: jp.batch.0.max(1),
            complete_min: jp.batch.1,
            reap_max: jp.batch.2,
            issued: 0,
            flush_every: jp.flush.map_or(0, |f| u64::from(f.every)),
            writes_issued: 0,
            flush_due: false,
            iv: IntervalClock::new(shared),
            recording: false,
            remaining: None,
            size_rng: Rng::new(jp.seed, SIZE_STREAM + job as u64),
            last_done: None,
            stopping: false,
            error: None,
            now: epoch.elapsed().as_nanos() as u64,
            verifier: jp
                .verify
                .then(|| Verifier::new(jp.span.blocks, jp.verify_every)),
            read_back: Vec::with_capacity(depth as usize),
            map: jp.scan.map(|(layout, ns)| {
                let dir = if jp.read_pct == 100 { "read" } else { "write" };
                ScanMap::new(dir, layout, jp.span.bs, ns / 1_000_000)
            }),
            slow_ns: jp.scan.map_or(u64::MAX, |(_, ns)| ns),
            rate: jp.rate.clone(),
            think: jp.think.map(Think::new),
            replay: None,
            search: jp.latency.map(|r| QdSearch::new(&r, depth)),
            cap: if jp.latency.is_some() { 0 } else { u32::MAX },
            cold_span: jp
                .cold_passes
                .then(|| (jp.span.start, jp.span.blocks * jp.span.bs)),
            next_pass: jp.span.blocks * jp.span.bs,
            issued_bytes: 0,
            pass_ended: false,
            trimmed: None,
            sync_done: false,
        }
    }

    #[inline]
    pub(super) fn clock(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }

    /// Rolls the intervals that ended by `now` while the job records and issues. Once
    /// stopping, the I/Os still in flight complete into the current interval, which ends
    /// when the job ends; an interval that ends exactly at the deadline is the last one,
    /// closed then with the drained I/Os: no sliver of an interval with a made-up rate.
    #[inline(always)]
    fn roll_live(&mut self) {
        if self.recording && !self.stopping {
            let now = self.now.min(self.deadline.saturating_sub(1));
            self.iv.roll(now, self.shared, self.tx, self.job);
        }
    }

    fn run(mut self) {
        loop {
            if !self.recording && self.now >= self.shared.ramp_ns {
                self.recording = true;
                self.iv.mark_cpu();
                self.remaining = self.jp.bytes;
                if let Some(s) = &mut self.search {
                    s.begin(self.now);
                }
            }
            if let Some(s) = &mut self.search {
                if s.drained(self.inflight) {
                    s.begin(self.now);
                }
                // Before the measured start the job runs at QD1, as fio's search starts.
                self.cap = if self.recording { s.cap() } else { 1 };
            }
            self.stopping = self.stopping
                || self.error.is_some()
                || self.now >= self.deadline
                || self.remaining == Some(0)
                || self.replay.as_ref().is_some_and(ReplaySource::done)
                || self.shared.stop_requested();
            self.roll_live();
            let mut wake = if self.stopping {
                // Draining: nothing is due, just wait for completions.
                self.now + self.shared.interval_ns
            } else if self.recording {
                self.iv.boundary.min(self.deadline)
            } else {
                self.shared.ramp_ns.min(self.deadline)
            };
            if !self.stopping {
                wake = self.fill(wake);
            }
            if self.inflight == 0 {
                if self.stopping || self.remaining == Some(0) {
                    break;
                }
                if std::mem::take(&mut self.sync_done) {
                    continue;
                }
                let nap = wake.saturating_sub(self.now).max(1_000);
                std::thread::sleep(Duration::from_nanos(nap));
                self.now = self.clock();
                continue;
            }
            if !self.reap_round(wake) {
                break;
            }
            if let Some(v) = &mut self.verifier {
                if v.check_issued() && self.inflight == 0 {
                    v.end_check();
                }
            }
        }
        self.finish();
    }

    /// Issues an I/O into every free slot the rate cap and the count allow, each handed to
    /// the kernel on its own as soon as its slot is free (a batch would be plugged, and
    /// adjacent I/Os merged, by the block layer and reach the device in bursts: the tool, not
    /// the drive, would set the request sizes and their pacing). Returns when the loop must
    /// wake at the latest (`wake`, or the rate cap's next due time). An error stops the job.
    #[inline(always)]
    fn fill(&mut self, wake: u64) -> u64 {
        if let Some(mut r) = self.replay.take() {
            let wake = self.fill_replay(&mut r, wake);
            self.replay = Some(r);
            return wake;
        }
        while let Some(&slot) = self.free.last() {
            if self.inflight >= self.cap {
                break;
            }
            if let Some(v) = &mut self.verifier {
                // A read-back under way takes the free slots; a due one waits for the
                // writes in flight to complete.
                if v.checking().is_some() {
                    match v.next_read() {
                        Some((offset, index)) => {
                            if !self.issue(slot, Dir::Read, slot, offset, index, self.bs) {
                                break;
                            }
                            continue;
                        }
                        None => break,
                    }
                }
                if v.batch_due(self.issued) {
                    if self.inflight > 0 {
                        break;
                    }
                    v.start_batch(self.issued);
                    continue;
                }
            }
            if self.remaining == Some(0) {
                break;
            }
            // The flag first: the hot path tests one bool, not the plan's option.
            if self.flush_due {
                if let Some(f) = self.jp.flush {
                    if !self.issue_flush(slot, f) {
                        break;
                    }
                    continue;
                }
            }
            if let Some(think) = &mut self.think {
                let epoch = self.epoch;
                match think.gate(self.now, self.inflight, wake, || {
                    epoch.elapsed().as_nanos() as u64
                }) {
                    Gate::Open => {}
                    Gate::Drain => return wake,
                    Gate::Until(t) => return wake.min(t),
                }
            }
            if let Some(cap) = &mut self.rate {
                let due = cap.due_ns(self.issued);
                if due > self.now {
                    return wake.min(due);
                }
            }
            if let Some(t) = self.jp.trims {
                if !self.trim_step(slot, t) {
                    break;
                }
                if self.sync_done {
                    // One trim a round: the round's checks (time, stop, interval) run
                    // between trims as they run between completions.
                    return wake;
                }
                continue;
            }
            let is_write =
                self.read_pct == 0 || (self.read_pct < 100 && self.mix.below(100) >= self.read_pct);
            let index = self.issued;
            if let Some(v) = &mut self.verifier {
                v.before_write(index, &self.gen);
            }
            let (offset, len) = self.next_offset_len(is_write);
            let (dir, buf) = if is_write {
                let i = self.refreshed_write_buffer(slot, len as u32);
                if let Some(v) = &self.verifier {
                    v.stamp(self.b.buffers().get_mut(i as usize), offset, index);
                }
                (Dir::Write, i)
            } else {
                (Dir::Read, slot)
            };
            if !self.issue(slot, dir, buf, offset, index, len) {
                break;
            }
            self.issued_one(dir, len);
        }
        wake
    }

    /// The bookkeeping after an I/O was issued: think time, the count, flushes due, the
    /// budget and the end of a pass (whose cache drop waits for the next pass's first I/O).
    #[inline(always)]
    fn issued_one(&mut self, dir: Dir, len: u64) {
        if let Some(think) = &mut self.think {
            think.issued();
        }
        self.issued += 1;
        if dir == Dir::Write && self.flush_every != 0 {
            self.writes_issued += 1;
            self.flush_due = self.writes_issued.is_multiple_of(self.flush_every);
        }
        if let Some(r) = &mut self.remaining {
            *r = r.saturating_sub(len);
        }
        if let Some((_, pass)) = self.cold_span {
            self.issued_bytes += len;
            if self.issued_bytes >= self.next_pass {
                self.next_pass += pass;
                self.pass_ended = true;
            }
        }
    }

    /// Before the first I/O of a new pass: the job's span leaves the page cache, as fio's
    /// invalidate does at each pass. Only then: a run that ends with its pass keeps what it
    /// wrote cached (a drop after the last write left half of a 32 MiB buffered write
    /// cached, as much as writeback had cleaned). False (the job stopping) when it failed.
    #[inline(always)]
    fn cold_pass(&mut self, dir: Dir, offset: u64) -> bool {
        if !self.pass_ended {
            return true;
        }
        self.pass_ended = false;
        let Some((start, pass)) = self.cold_span else {
            return true;
        };
        if let Err(e) = self.b.drop_cache_range(start, pass) {
            self.error = Some(io_error(
                dir,
                offset,
                &format!("dropping the page cache for a new pass: {e}"),
                e.raw_os_error(),
            ));
            self.stopping = true;
            return false;
        }
        true
    }

    /// A trim workload's next step: the write of the block just trimmed (trim-then-write),
    /// or a trim of the next block, made synchronously as fio's engines make trims, its
    /// latency the call's (`sync_done` set: the round ends). False when the job stops.
    fn trim_step(&mut self, slot: u32, t: Trims) -> bool {
        if let Some((offset, len)) = self.trimmed.take() {
            let buf = self.refreshed_write_buffer(slot, len as u32);
            let index = self.issued;
            if !self.issue(slot, Dir::Write, buf, offset, index, len) {
                return false;
            }
            self.issued_one(Dir::Write, len);
            return true;
        }
        let (offset, len) = self.next_offset_len(true);
        let t0 = self.clock();
        let res = self.b.trim(offset, len);
        self.now = self.clock();
        let failed = match res {
            Ok(true) => None,
            Ok(false) => Some(io_error(
                Dir::Trim,
                offset,
                "the target does not support trims (no discard on this device, no hole \
                 punching on this filesystem)",
                Some(libc::EOPNOTSUPP),
            )),
            Err(e) => Some(io_error(
                Dir::Trim,
                offset,
                &e.to_string(),
                e.raw_os_error(),
            )),
        };
        if let Some(e) = failed {
            self.error = Some(e);
            self.stopping = true;
            return false;
        }
        self.roll_live();
        if self.recording {
            let at_ns = self.now.saturating_sub(self.shared.ramp_ns);
            self.iv.cur.completed(Completed {
                dir: Dir::Trim,
                bytes: len,
                lat_ns: self.now - t0,
                offset,
                rel_ns: at_ns.saturating_sub(self.iv.cur.start_ns),
                at_ns,
            });
        }
        // What a reaped completion is followed by: the think time's count, the gap.
        self.after_reap(1, u64::from(self.recording), None);
        match t {
            Trims::ThenWrite => {
                self.trimmed = Some((offset, len));
                true
            }
            Trims::Only => {
                self.sync_done = true;
                self.issued_one(Dir::Trim, len);
                true
            }
        }
    }

    /// `slot`'s write buffer with new content (only the `len` bytes written: a size mix's
    /// or a trace's buffers are its largest size); returns its index in the pool.
    #[inline(always)]
    pub(super) fn refreshed_write_buffer(&mut self, slot: u32, len: u32) -> u32 {
        let i = self.write_base + slot;
        let data = self.b.buffers().get_mut(i as usize);
        let n = (len as usize).min(data.len());
        self.filler.refresh(&mut data[..n]);
        i
    }

    /// The next I/O's offset and length: one block, a draw of the size mix, or each
    /// direction's own sizes on its own grid.
    #[inline(always)]
    fn next_offset_len(&mut self, is_write: bool) -> (u64, u64) {
        let gen = match &mut self.write_gen {
            Some(w) if is_write => w,
            _ => &mut self.gen,
        };
        match (&self.jp.sizes, &self.jp.write_sizes) {
            (None, None) => (gen.next_offset(), self.bs),
            (Some(sizes), None) => {
                let len = sizes.pick(&mut self.size_rng);
                (gen.next_offset_len(len), len)
            }
            // Each direction its own sizes, its offsets on its own smallest size's grid.
            (reads, Some((writes, write_align, read_align))) => {
                let (sizes, align) = match (is_write, reads) {
                    (true, _) => (writes, *write_align),
                    (false, Some(r)) => (r, *read_align),
                    (false, None) => (&Sizes::Fixed(self.bs), self.bs),
                };
                let len = sizes.pick(&mut self.size_rng);
                let start = self.jp.span.start;
                let offset = gen.next_offset_len(len) - start;
                (start + offset / align * align, len)
            }
        }
    }

    /// Hands one I/O to the kernel in `slot`; false (and the job stopping) when that failed.
    #[inline(always)]
    pub(super) fn issue(
        &mut self,
        slot: u32,
        dir: Dir,
        buf: u32,
        offset: u64,
        index: u64,
        len: u64,
    ) -> bool {
        if !self.cold_pass(dir, offset) {
            return false;
        }
        let prepped = self.b.prep(slot, buf, dir, offset, len as u32);
        self.fresh_stamp();
        let s = Slot {
            submit_ns: self.now,
            offset,
            len: len as u32,
            is_write: dir == Dir::Write,
            flush: false,
            index,
        };
        self.launch(
            slot,
            s,
            prepped.map_err(|e| io_error(dir, offset, &e.to_string(), e.raw_os_error())),
        )
    }

    /// Hands a flush to the kernel in `slot` (it runs beside the writes in flight and
    /// flushes what has completed, as fio's does); false when that failed.
    fn issue_flush(&mut self, slot: u32, f: shared::durability::Flush) -> bool {
        let prepped = self.b.prep_flush(slot, f.data_only);
        self.flush_due = false;
        self.fresh_stamp();
        let s = Slot {
            submit_ns: self.now,
            flush: true,
            ..Slot::default()
        };
        let n = self.writes_issued;
        self.launch(slot, s, prepped.map_err(|e| flush_error(f.call(), n, &e)))
    }

    /// Marks `slot` in flight with `s` once its entry was queued, and submits it (with a
    /// batch, once the batch is full; the round's wait submits a partial one).
    #[inline(always)]
    fn launch(&mut self, slot: u32, s: Slot, prepped: Result<(), RunError>) -> bool {
        if let Err(e) = prepped {
            self.error = Some(e);
            self.stopping = true;
            return false;
        }
        self.free.pop();
        self.slots[slot as usize] = s;
        self.inflight += 1;
        self.queued += 1;
        if self.queued < self.batch {
            // The round's wait submits what a partial batch left queued.
            return true;
        }
        self.queued = 0;
        if let Err(e) = self.b.submit() {
            self.error = Some(submit_error(&e));
            self.stopping = true;
            return false;
        }
        self.restamp = B::SUBMIT_TAKES_TIME;
        true
    }

    /// Reads the clock again when a submit call went out since it was last read: a round
    /// that refills many slots one system call at a time (a device whose completions come in
    /// bursts) would otherwise date its last I/Os from the round's start, and their
    /// latencies would include the submissions queued before them (zram at QD32: p99 1.14×
    /// fio's, whose every I/O is stamped as it is queued).
    #[inline(always)]
    fn fresh_stamp(&mut self) {
        if self.restamp {
            self.restamp = false;
            self.now = self.clock();
        }
    }

    /// Waits for the first completion (like fio: its slot is refilled at once; with
    /// `iodepth_batch_complete_min` N, for N of them, or none with 0), takes the
    /// round's one timestamp, and reaps every ready completion into the current interval
    /// (latency, the 10 ms bucket, slow I/Os, the gap since the previous round). A
    /// completion that failed or came up short is the job's error. Returns false when
    /// waiting itself failed (nothing more can be reaped).
    #[inline(always)]
    fn reap_round(&mut self, wake: u64) -> bool {
        // At most a second: a stop is seen within one even while a slow device holds every
        // I/O.
        let timeout = wake.saturating_sub(self.now).clamp(10_000, 1_000_000_000);
        self.queued = 0;
        let want = self.complete_min.min(self.inflight);
        if let Err(e) = self.b.submit_and_wait(want, timeout) {
            self.error = Some(submit_error(&e));
            return false;
        }
        self.now = self.clock();
        self.roll_live();
        let (now, ramp, recording) = (self.now, self.shared.ramp_ns, self.recording);
        let rel = now
            .saturating_sub(ramp)
            .saturating_sub(self.iv.cur.start_ns);
        // A replay's own byte counts follow from the interval's, once per round.
        let bytes_before = self.replay.is_some().then(|| bytes_of(&self.iv.cur));
        let mut reaped = 0u64;
        // A latency search's target, what was over it, and its final window's tally.
        let (target, mut over) = (self.search.as_ref().map_or(u64::MAX, |s| s.target_ns), 0);
        let searching = self.search.is_some();
        let mut tally = self.search.as_mut().and_then(|s| s.tally.as_mut());
        let before = self.inflight;
        let verifying = self.verifier.is_some();
        let (slow_ns, map_writes) = (self.slow_ns, self.jp.read_pct < 100);
        let scanning = self.jp.scan.is_some();
        let (call, writes) = (
            self.jp.flush.map_or("fsync", |f| f.call()),
            self.writes_issued,
        );
        let (slots, free, inflight, error, cur, read_back, map) = (
            &self.slots,
            &mut self.free,
            &mut self.inflight,
            &mut self.error,
            &mut self.iv.cur,
            &mut self.read_back,
            &mut self.map,
        );
        self.b.reap(self.reap_max, |slot, res| {
            let s = slots[slot as usize];
            *inflight -= 1;
            free.push(slot);
            if s.flush {
                if res < 0 {
                    let e = std::io::Error::from_raw_os_error(-res);
                    error.get_or_insert_with(|| flush_error(call, writes, &e));
                } else if recording {
                    cur.flush.ios += 1;
                    cur.flush.hist.record(now - s.submit_ns);
                }
                return;
            }
            let dir = if s.is_write { Dir::Write } else { Dir::Read };
            let len = u64::from(s.len);
            let failed = res < 0 || res as u64 != len;
            if failed && !scanning {
                error.get_or_insert_with(|| completion_error(dir, s.offset, res, len));
                return;
            }
            // A scan goes on: a failed write or read is mapped, a failed read-back is an
            // unreadable block.
            if verifying && !s.is_write {
                read_back.push((slot, res));
            }
            if failed {
                if let Some(m) = map.as_mut().filter(|_| s.is_write == map_writes) {
                    m.error(s.offset, (res < 0).then_some(-res));
                }
                return;
            }
            if let Some(m) = map
                .as_mut()
                .filter(|_| recording && s.is_write == map_writes)
            {
                let i = m.layout.cell_of(s.offset);
                if let Some(c) = m.cells.get_mut(i) {
                    c.io(now - s.submit_ns, slow_ns);
                }
            }
            if recording {
                let lat_ns = now - s.submit_ns;
                cur.completed(Completed {
                    dir,
                    bytes: len,
                    lat_ns,
                    offset: s.offset,
                    rel_ns: rel,
                    at_ns: now.saturating_sub(ramp),
                });
                reaped += 1;
                if searching {
                    over += u64::from(lat_ns > target);
                    if let Some(t) = tally.as_mut() {
                        t.record(dir, len, lat_ns, s.offset);
                    }
                }
            }
        });
        if recording {
            self.search_round(reaped, over);
        }
        self.after_reap(before - self.inflight, reaped, bytes_before);
        true
    }

    /// What follows from a round's completions (`done` of them, `reaped` counted): the
    /// think time's count, a replay's bytes (from the interval's, counted before the round
    /// by `bytes_before`), the gap since the previous round, the read-backs' checks.
    #[inline(always)]
    fn after_reap(&mut self, done: u32, reaped: u64, bytes_before: Option<(u64, u64)>) {
        let now = self.now;
        if let Some(think) = &mut self.think {
            think.completed(u64::from(done));
        }
        if let (Some(r), Some(before)) = (&mut self.replay, bytes_before) {
            let (read, written) = bytes_of(&self.iv.cur);
            r.reaped(
                now,
                reaped,
                read - before.0,
                written - before.1,
                self.inflight == 0,
            );
        }
        if reaped > 0 {
            if let Some(prev) = self.last_done {
                self.iv.cur.fine.gap(now - prev, reaped - 1);
            }
            self.last_done = Some(now);
        }
        self.check_read_backs();
    }

    /// Checks the round's read-back completions, now that the backend is free again.
    fn check_read_backs(&mut self) {
        if let Some(v) = &mut self.verifier {
            for (slot, res) in self.read_back.drain(..) {
                let s = self.slots[slot as usize];
                if res < 0 || res as u64 != self.bs {
                    v.unreadable(s.offset, self.bs);
                    continue;
                }
                v.checked(
                    self.b.buffers().get_mut(slot as usize),
                    s.offset,
                    s.index,
                    self.issued,
                );
            }
        }
    }

    /// A latency search's verdict on the round: the job goes on, ends after its final
    /// window, or fails (a slow I/O at QD1 with a percentile of 100).
    fn search_round(&mut self, reaped: u64, over: u64) {
        let Some(s) = &mut self.search else {
            return;
        };
        match s.round(self.now, reaped, over) {
            Next::Go => {}
            Next::Done => self.stopping = true,
            Next::Fatal => {
                let us = s.target_ns / 1_000;
                self.error.get_or_insert_with(|| RunError {
                    message: format!(
                        "latency target {us} µs exceeded at QD1 (latency_percentile=100)"
                    ),
                    op: None,
                    offset: None,
                    errno: Some(libc::ETIMEDOUT),
                });
            }
        }
    }

    /// After the last completion: the end fsync (writes, when asked and nothing failed),
    /// the last interval closed at the job's end, then `Done`.
    fn finish(mut self) {
        let mut fsync_ns = None;
        if self.jp.end_fsync && self.jp.read_pct < 100 && self.error.is_none() {
            let t = self.clock();
            if let Err(e) = self.b.fsync() {
                self.error = Some(RunError {
                    message: format!("end fsync failed: {e}"),
                    op: Some("fsync".into()),
                    offset: None,
                    errno: e.raw_os_error(),
                });
            }
            self.now = self.clock();
            fsync_ns = Some(self.now - t);
        }
        let end_ns = self.now.saturating_sub(self.shared.ramp_ns);
        if self.recording {
            self.iv.close(end_ns, self.tx, self.job);
        }
        if let Some(map) = self.map.take() {
            let _ = self.tx.send(JobMsg::Mapped { job: self.job, map });
        }
        if let Some(mut s) = self.search.take() {
            if let Some(t) = s.tally.as_mut() {
                t.end_ns = self.now;
            }
            let _ = self.tx.send(JobMsg::Searched {
                job: self.job,
                depth: s.depth(),
                tally: s.tally,
            });
        }
        if let Some(r) = self.replay.take() {
            let replay = Box::new(r.finish(self.error.is_some()));
            let _ = self.tx.send(JobMsg::Replayed {
                job: self.job,
                replay,
            });
        }
        let error = self.error.take();
        let skip = if error.is_some() {
            Some("the writes failed before it")
        } else if self.shared.stop_requested() {
            Some("stopped before it")
        } else {
            None
        };
        send_done(self.tx, self.job, end_ns, error, fsync_ns);
        if self.verifier.is_some() {
            self.final_read_back(skip);
        }
    }

    /// Reads back the job's last pass (every block it holds once the span was covered),
    /// after flushing and dropping cached pages so the reads reach the device, and sends
    /// what it found. Nothing of it counts in the samples.
    fn final_read_back(mut self, skip: Option<&str>) {
        let mut incomplete = skip.map(|s| format!("the final read-back was not run: {s}"));
        if let Some(v) = &mut self.verifier {
            v.end_check();
            if incomplete.is_none() {
                v.start_final(self.issued);
            }
        }
        if incomplete.is_none() {
            let _ = self.b.fsync();
            let _ = self.b.drop_cache();
            self.recording = false;
            self.stopping = false;
            self.now = self.clock();
        }
        while self
            .verifier
            .as_ref()
            .is_some_and(|v| v.checking().is_some())
        {
            if !self.stopping && self.shared.stop_requested() {
                self.stopping = true;
                incomplete = Some("stopped during the read-back".into());
            }
            if !self.stopping {
                self.fill(u64::MAX);
            }
            if self.inflight == 0 {
                break;
            }
            let wake = self.now + self.shared.interval_ns;
            if !self.reap_round(wake) || self.error.is_some() {
                self.stopping = true;
            }
        }
        let Some(mut v) = self.verifier.take() else {
            return;
        };
        v.end_check();
        if let Some(e) = &self.error {
            incomplete = Some(format!("the read-back failed: {}", e.message));
        }
        let mut verify = v.tally.v;
        verify.incomplete = incomplete;
        let _ = self.tx.send(JobMsg::Verified {
            job: self.job,
            verify,
            error: self.error,
        });
    }
}

/// An interval's bytes read and written so far.
fn bytes_of(c: &IntervalStats) -> (u64, u64) {
    (c.read.bytes, c.write.bytes)
}

/// Time the calling thread ran or waited to run (ns): the first two fields of
/// `/proc/thread-self/schedstat` (CPU time, run-queue wait), so a job thread that never
/// blocks counts as busy also when other threads keep it off the CPU; its CPU time alone
/// where schedstat is missing.
pub(super) fn thread_cpu_ns() -> Option<u64> {
    if let Ok(s) = std::fs::read_to_string("/proc/thread-self/schedstat") {
        let mut f = s.split_whitespace().map(|v| v.parse::<u64>().ok());
        if let (Some(Some(run)), Some(Some(wait))) = (f.next(), f.next()) {
            return Some(run + wait);
        }
    }
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec for the call to fill.
    let r = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    (r == 0).then(|| ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
}

pub(super) fn submit_error(e: &std::io::Error) -> RunError {
    RunError {
        message: format!("submitting I/O failed: {e}"),
        op: None,
        offset: None,
        errno: e.raw_os_error(),
    }
}

/// A flush that failed: the call (`Flush::call`), after how many writes, why.
fn flush_error(call: &'static str, writes: u64, e: &std::io::Error) -> RunError {
    RunError {
        message: format!("{call} after {writes} writes failed: {e}"),
        op: Some(call.into()),
        offset: None,
        errno: e.raw_os_error(),
    }
}

pub(super) fn io_error(dir: Dir, offset: u64, what: &str, errno: Option<i32>) -> RunError {
    RunError {
        message: format!("{} at offset {offset} failed: {what}", dir.as_str()),
        op: Some(dir.as_str().into()),
        offset: Some(offset),
        errno,
    }
}

pub(super) fn completion_error(dir: Dir, offset: u64, res: i32, bs: u64) -> RunError {
    if res < 0 {
        let e = std::io::Error::from_raw_os_error(-res);
        io_error(dir, offset, &e.to_string(), Some(-res))
    } else {
        RunError {
            message: format!(
                "short {} at offset {offset}: {res} of {bs} bytes",
                dir.as_str()
            ),
            op: Some(dir.as_str().into()),
            offset: Some(offset),
            errno: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shared::spec::{Backend, WorkloadSpec};
    use std::sync::mpsc;

    /// A job the scheduler resumes long after the gate opened (here: a gate opened 1 s in the
    /// past) still runs its whole run time and counts only that: before, a 300 ms run woken
    /// 400 ms late on a busy machine measured nothing.
    #[test]
    fn a_job_woken_late_runs_its_whole_run_time() {
        let spec = WorkloadSpec {
            backend: Backend::Null,
            runtime_ms: Some(200),
            interval_ms: 100,
            ..WorkloadSpec::default()
        };
        let target = crate::workload::plan::null_target(&spec, std::path::Path::new("late"));
        let plan = Plan::new(&spec, target).expect("plan");
        let shared = RunShared {
            gate: StartGate::default(),
            cancel: Default::default(),
            abort: AtomicBool::new(false),
            ramp_ns: 0,
            interval_ns: 100_000_000,
            runtime_ns: Some(200_000_000),
            first_done_ns: std::sync::atomic::AtomicU64::new(u64::MAX),
            backlog: Default::default(),
        };
        let (tx, rx) = mpsc::channel();
        shared
            .gate
            .open(Some(Instant::now() - Duration::from_secs(1)));
        job_thread(&plan, 0, &shared, &tx);
        drop(tx);
        let (mut ios, mut end) = (0, None);
        for msg in rx {
            match msg {
                JobMsg::Interval { stats, .. } => ios += stats.read.ios + stats.write.ios,
                JobMsg::Done { end_ns, error, .. } => {
                    assert!(error.is_none(), "{error:?}");
                    end = Some(end_ns);
                }
                _ => {}
            }
        }
        let end = end.expect("the job said it was done");
        assert!(ios > 0, "nothing measured");
        assert!(
            (200_000_000..500_000_000).contains(&end),
            "measured time {end} ns for a 200 ms run"
        );
    }
}
