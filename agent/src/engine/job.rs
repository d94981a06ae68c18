//! One job: a thread with its own backend (ring), keeping `iodepth` I/Os in flight.
//!
//! The loop: refill every free slot (rate cap and budget permitting), handing each I/O to
//! the kernel on its own as fio does (a batch would be plugged and merged by the block layer:
//! the tool would set the request sizes), wait for one completion, take one timestamp, reap
//! every ready completion. Timestamps are per round: the reap time of one round is the
//! submit time of the next, so a round costs one clock read however many I/Os it moves. Per-interval statistics are handed to the runner
//! over a channel as owned values; the loop never blocks on the runner. It stops issuing on
//! cancellation, deadline, budget or error, and always drains what is in flight.

use super::buf::BufferPool;
use super::null::NullBackend;
use super::sync::SyncBackend;
use super::uring::{build_ring, UringBackend};
use super::{Dir, IoBackend};
use crate::stats::fine::SLOW_IO_NS;
use crate::stats::IntervalStats;
use crate::workload::offsets::OffsetGen;
use crate::workload::pattern::Filler;
use crate::workload::rng::Rng;
use crate::workload::{JobPlan, Plan};
use shared::analysis::SlowIo;
use shared::{Backend, RunError};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

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
}

/// How a job's backend was set up.
#[derive(Debug, Clone)]
pub struct JobSetup {
    pub backend: &'static str,
    /// Why the backend differs from the one asked for.
    pub note: Option<String>,
    pub features: Vec<&'static str>,
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
}

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
    fn stop_requested(&self) -> bool {
        self.cancel.load(Ordering::Relaxed) || self.abort.load(Ordering::Relaxed)
    }
}

/// Body of a job thread: sets up the backend the plan asks for, reports, waits for the start,
/// runs, reports the end.
pub fn job_thread(plan: &Plan, job: usize, shared: &RunShared, tx: &Sender<JobMsg>) {
    let jp = &plan.jobs()[job];
    let spec = plan.spec();
    let fail = |msg: String| {
        let _ = tx.send(JobMsg::Ready {
            job,
            result: Err(msg),
        });
    };
    let sets = if jp.split_buffers { 2 } else { 1 };
    let pool = match BufferPool::new(spec.bs as usize, (jp.iodepth * sets) as usize) {
        Ok(p) => p,
        Err(e) => return fail(format!("job {job}: {e}")),
    };
    let buffers = (pool.mapped_bytes(), pool.huge_bytes());
    if spec.backend == Backend::Null {
        let mut b = NullBackend::new(pool, jp.iodepth);
        return drive(&mut b, buffers, None, Vec::new(), jp, job, shared, tx);
    }
    let file = match plan.target().open(plan.writes(), spec.direct) {
        Ok(f) => f,
        Err(e) => return fail(e.to_string()),
    };
    if spec.backend == Backend::Sync {
        return drive(
            &mut SyncBackend::new(file, pool),
            buffers,
            None,
            Vec::new(),
            jp,
            job,
            shared,
            tx,
        );
    }
    match build_ring(jp.iodepth) {
        Ok((mut ring, mut features)) => {
            match UringBackend::new(&mut ring, file, pool, jp.iodepth, &mut features) {
                Ok(mut b) => drive(&mut b, buffers, None, features, jp, job, shared, tx),
                Err(e) => fail(format!("job {job}: io_uring registration failed: {e}")),
            }
        }
        Err(e) => {
            let note =
                format!("io_uring unavailable ({e}): ran pread/pwrite, one I/O at a time per job");
            drive(
                &mut SyncBackend::new(file, pool),
                buffers,
                Some(note),
                Vec::new(),
                jp,
                job,
                shared,
                tx,
            )
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn drive<B: IoBackend>(
    b: &mut B,
    buffers: (u64, u64),
    note: Option<String>,
    features: Vec<&'static str>,
    jp: &JobPlan,
    job: usize,
    shared: &RunShared,
    tx: &Sender<JobMsg>,
) {
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
    let Some(epoch) = shared.gate.wait() else {
        let _ = tx.send(JobMsg::Done {
            job,
            end_ns: 0,
            error: None,
            fsync_ns: None,
        });
        return;
    };
    if shared.stop_requested() {
        let _ = tx.send(JobMsg::Done {
            job,
            end_ns: 0,
            error: None,
            fsync_ns: None,
        });
        return;
    }
    let mut l = JobLoop::new(b, jp, job, shared, tx, epoch);
    l.run();
}

#[derive(Clone, Copy, Debug, Default)]
struct Slot {
    submit_ns: u64,
    offset: u64,
    is_write: bool,
}

struct JobLoop<'a, B: IoBackend> {
    b: &'a mut B,
    jp: &'a JobPlan,
    job: usize,
    shared: &'a RunShared,
    tx: &'a Sender<JobMsg>,
    epoch: Instant,
    cur: IntervalStats,
    /// Absolute time (ns since epoch) at which the current interval ends.
    boundary: u64,
    recording: bool,
    remaining: Option<u64>,
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
        JobLoop {
            b,
            jp,
            job,
            shared,
            tx,
            epoch,
            cur: IntervalStats::new(0, 0, shared.interval_ns),
            boundary: shared.ramp_ns + shared.interval_ns,
            recording: false,
            remaining: None,
        }
    }

    #[inline]
    fn now(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }

    /// Sends every interval that ended before `now`, empty ones included.
    fn roll(&mut self, now: u64) {
        let (ramp, interval) = (self.shared.ramp_ns, self.shared.interval_ns);
        while now >= self.boundary {
            let start = self.boundary - ramp;
            let next = IntervalStats::new(self.cur.index + 1, start, start + interval);
            let done = std::mem::replace(&mut self.cur, next);
            let _ = self.tx.send(JobMsg::Interval {
                job: self.job,
                stats: done,
            });
            self.boundary += interval;
        }
    }

    fn run(&mut self) {
        let jp = self.jp;
        let ramp = self.shared.ramp_ns;
        let depth = jp.iodepth.min(self.b.max_depth());
        let bs = jp.span.bs;
        let write_base = if jp.split_buffers { jp.iodepth } else { 0 };
        let job = self.job as u64;
        let mut filler = Filler::new(jp.pattern, Rng::new(jp.seed, 3 * job + 2));
        if jp.read_pct < 100 {
            for s in 0..depth {
                filler.init(self.b.buffers().get_mut((write_base + s) as usize));
            }
        }
        let mut gen = OffsetGen::new(jp.span, jp.order, Rng::new(jp.seed, 3 * job));
        let mut mix = Rng::new(jp.seed, 3 * job + 1);
        let read_pct = u64::from(jp.read_pct);
        let deadline = self.shared.runtime_ns.map_or(u64::MAX, |r| ramp + r);

        let mut slots = vec![Slot::default(); depth as usize];
        let mut free: Vec<u32> = (0..depth).rev().collect();
        let mut inflight = 0u32;
        let mut issued = 0u64;
        // Time of the latest completion (for the gap histogram of the fine timeline).
        let mut last_done: Option<u64> = None;
        let mut stopping = false;
        let mut error: Option<RunError> = None;
        let mut now = self.now();
        loop {
            if !self.recording && now >= ramp {
                self.recording = true;
                self.remaining = jp.ios;
            }
            if !stopping
                && (error.is_some()
                    || now >= deadline
                    || self.remaining == Some(0)
                    || self.shared.stop_requested())
            {
                stopping = true;
            }
            // Once stopping, the I/Os still in flight complete into the current interval,
            // which then ends when the job ends: no sliver of an interval with a made-up rate.
            if self.recording && !stopping {
                // An interval that ends exactly at the deadline is the last one: it is closed
                // when the job ends, with the drained I/Os, not rolled into a sliver.
                self.roll(now.min(deadline.saturating_sub(1)));
            }
            let mut wake = if stopping {
                // Draining: nothing is due, just wait for completions.
                now + self.shared.interval_ns
            } else if self.recording {
                self.boundary.min(deadline)
            } else {
                ramp.min(deadline)
            };
            if !stopping {
                while let Some(&slot) = free.last() {
                    if self.remaining == Some(0) {
                        break;
                    }
                    if let Some(cap) = &jp.rate {
                        let due = cap.due_ns(issued);
                        if due > now {
                            wake = wake.min(due);
                            break;
                        }
                    }
                    free.pop();
                    let is_write = read_pct == 0 || (read_pct < 100 && mix.below(100) >= read_pct);
                    let offset = gen.next_offset();
                    let (dir, buf) = if is_write {
                        let i = write_base + slot;
                        filler.refresh(self.b.buffers().get_mut(i as usize));
                        (Dir::Write, i)
                    } else {
                        (Dir::Read, slot)
                    };
                    if let Err(e) = self.b.prep(slot, buf, dir, offset, bs as u32) {
                        error = Some(io_error(dir, offset, &e.to_string(), e.raw_os_error()));
                        free.push(slot);
                        stopping = true;
                        break;
                    }
                    slots[slot as usize] = Slot {
                        submit_ns: now,
                        offset,
                        is_write,
                    };
                    inflight += 1;
                    issued += 1;
                    if let Some(r) = &mut self.remaining {
                        *r -= 1;
                    }
                    // Each I/O goes to the kernel on its own, as soon as its slot is free:
                    // a batch would be plugged (and adjacent I/Os merged) by the block layer
                    // and reach the device in bursts, so the tool, not the drive, would set
                    // the request sizes and their pacing.
                    if let Err(e) = self.b.submit() {
                        error = Some(RunError {
                            message: format!("submitting I/O failed: {e}"),
                            op: None,
                            offset: None,
                            errno: e.raw_os_error(),
                        });
                        stopping = true;
                        break;
                    }
                }
            }
            if inflight == 0 {
                if stopping || self.remaining == Some(0) {
                    break;
                }
                std::thread::sleep(Duration::from_nanos(wake.saturating_sub(now).max(1_000)));
                now = self.now();
                continue;
            }
            let timeout = wake.saturating_sub(now).max(10_000);
            // Wake for the first completion, like fio: its slot is refilled at once.
            if let Err(e) = self.b.submit_and_wait(1, timeout) {
                error = Some(RunError {
                    message: format!("submitting I/O failed: {e}"),
                    op: None,
                    offset: None,
                    errno: e.raw_os_error(),
                });
                break;
            }
            now = self.now();
            if self.recording && !stopping {
                // An interval that ends exactly at the deadline is the last one: it is closed
                // when the job ends, with the drained I/Os, not rolled into a sliver.
                self.roll(now.min(deadline.saturating_sub(1)));
            }
            let recording = self.recording;
            let cur = &mut self.cur;
            let rel = now.saturating_sub(ramp).saturating_sub(cur.start_ns);
            let mut reaped = 0u64;
            self.b.reap(|slot, res| {
                let s = slots[slot as usize];
                inflight -= 1;
                free.push(slot);
                let dir = if s.is_write { Dir::Write } else { Dir::Read };
                if res < 0 || res as u64 != bs {
                    if error.is_none() {
                        error = Some(completion_error(dir, s.offset, res, bs));
                    }
                    return;
                }
                if recording {
                    let lat = now - s.submit_ns;
                    cur.record(dir, bs, lat, s.offset);
                    cur.fine.completed(rel, bs);
                    reaped += 1;
                    if lat > SLOW_IO_NS {
                        cur.fine.slow(SlowIo {
                            at_ns: now.saturating_sub(ramp),
                            offset: s.offset,
                            latency_ns: lat,
                            write: s.is_write,
                        });
                    }
                }
            });
            if reaped > 0 {
                if let Some(prev) = last_done {
                    self.cur.fine.gap(now - prev, reaped - 1);
                }
                last_done = Some(now);
            }
        }
        let mut fsync_ns = None;
        if self.jp.end_fsync && self.jp.read_pct < 100 && error.is_none() {
            let t = self.now();
            if let Err(e) = self.b.fsync() {
                error = Some(RunError {
                    message: format!("end fsync failed: {e}"),
                    op: Some("fsync".into()),
                    offset: None,
                    errno: e.raw_os_error(),
                });
            }
            now = self.now();
            fsync_ns = Some(now - t);
        }
        let end_ns = now.saturating_sub(ramp);
        if self.recording {
            let mut last = std::mem::replace(&mut self.cur, IntervalStats::new(0, 0, 0));
            last.end_ns = end_ns.max(last.start_ns);
            let _ = self.tx.send(JobMsg::Interval {
                job: self.job,
                stats: last,
            });
        }
        let _ = self.tx.send(JobMsg::Done {
            job: self.job,
            end_ns,
            error,
            fsync_ns,
        });
    }
}

fn io_error(dir: Dir, offset: u64, what: &str, errno: Option<i32>) -> RunError {
    RunError {
        message: format!("{} at offset {offset} failed: {what}", dir.as_str()),
        op: Some(dir.as_str().into()),
        offset: Some(offset),
        errno,
    }
}

fn completion_error(dir: Dir, offset: u64, res: i32, bs: u64) -> RunError {
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
