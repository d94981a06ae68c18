//! The replay job: issues a trace's I/Os in their order, each with its own length, when
//! they are due (recorded timing) or as soon as a slot is free (as fast as possible), and
//! measures them like any job (intervals, histograms, the 10 ms timeline). Trims and
//! flushes are barriers: issued once what is in flight has completed, synchronously, and
//! their time counts as busy. Busy time (at least one I/O in flight) is what the storage
//! bandwidth divides by.

use super::job::{
    completion_error, io_error, send_done, submit_error, write_buffers, IntervalClock, JobMsg,
    RunShared,
};
use super::{Dir, IoBackend};
use crate::stats::interval::Completed;
use crate::trace::OpKind;
use crate::workload::pattern::Filler;
use crate::workload::replay::ReplayPlan;
use crate::workload::rng::Rng;
use crate::workload::JobPlan;
use shared::analysis::replay::{bandwidth_mbps, Replay};
use shared::replay::Timing;
use shared::RunError;
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

/// An I/O issued later than this after it was due is late.
const LATE_NS: u64 = 1_000_000;

#[derive(Clone, Copy, Debug, Default)]
struct Slot {
    submit_ns: u64,
    offset: u64,
    len: u32,
    is_write: bool,
}

pub(super) struct ReplayLoop<'a, B: IoBackend> {
    b: &'a mut B,
    rp: &'a ReplayPlan,
    job: usize,
    shared: &'a RunShared,
    tx: &'a Sender<JobMsg>,
    epoch: Instant,
    filler: Filler,
    write_base: u32,
    slots: Vec<Slot>,
    free: Vec<u32>,
    inflight: u32,
    /// The next I/O of the trace to issue.
    next: usize,
    iv: IntervalClock,
    deadline: u64,
    now: u64,
    stopping: bool,
    error: Option<RunError>,
    busy_since: u64,
    out: Replay,
    first_ns: Option<u64>,
    last_done: Option<u64>,
}

impl<'a, B: IoBackend> ReplayLoop<'a, B> {
    pub(super) fn new(
        b: &'a mut B,
        rp: &'a ReplayPlan,
        jp: &JobPlan,
        job: usize,
        shared: &'a RunShared,
        tx: &'a Sender<JobMsg>,
        epoch: Instant,
    ) -> Self {
        let depth = jp.iodepth.min(b.max_depth());
        let (filler, write_base) = write_buffers(b, jp, depth, Rng::new(jp.seed, 2));
        let mut iv = IntervalClock::new(shared);
        iv.mark_cpu();
        let ramp = shared.ramp_ns;
        ReplayLoop {
            b,
            rp,
            job,
            shared,
            tx,
            epoch,
            filler,
            write_base,
            slots: vec![Slot::default(); depth as usize],
            free: (0..depth).rev().collect(),
            inflight: 0,
            next: 0,
            iv,
            deadline: shared.runtime_ns.map_or(u64::MAX, |r| ramp + r),
            now: epoch.elapsed().as_nanos() as u64,
            stopping: false,
            error: None,
            busy_since: 0,
            out: rp.report.clone(),
            first_ns: None,
            last_done: None,
        }
    }

    fn clock(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }

    /// Rolls the intervals that ended by `now` while the replay issues.
    fn roll(&mut self) {
        if !self.stopping {
            let now = self.now.min(self.deadline.saturating_sub(1));
            self.iv.roll(now, self.shared, self.tx, self.job);
        }
    }

    pub(super) fn run(mut self) {
        let ops = self.rp.ops.len();
        loop {
            self.stopping = self.stopping
                || self.error.is_some()
                || self.now >= self.deadline
                || self.shared.stop_requested();
            self.roll();
            let mut wake = self.iv.boundary.min(self.deadline);
            if !self.stopping {
                wake = wake.min(self.issue_due());
            }
            if self.inflight == 0 {
                if self.stopping || self.next >= ops {
                    break;
                }
                let nap = wake.saturating_sub(self.now).max(1_000);
                std::thread::sleep(Duration::from_nanos(nap));
                self.now = self.clock();
                continue;
            }
            if !self.reap_round(wake) {
                break;
            }
        }
        self.finish();
    }

    /// Issues every I/O that is due while slots are free; returns when the next is due.
    fn issue_due(&mut self) -> u64 {
        while let Some(&op) = self.rp.ops.get(self.next) {
            // Due times count from the first I/O as issued, so a late start (set-up, the
            // first interval) shifts the whole recording instead of squeezing its first gap.
            let due = self.first_ns.unwrap_or(self.now) + op.at_ns;
            if self.rp.timing == Timing::Recorded && due > self.now {
                return due;
            }
            let ok = match op.kind {
                OpKind::Read | OpKind::Write => {
                    let Some(&slot) = self.free.last() else {
                        return u64::MAX;
                    };
                    if self.rp.timing == Timing::Recorded && self.now - due > LATE_NS {
                        self.out.late += 1;
                        self.out.max_lag_ns = self.out.max_lag_ns.max(self.now - due);
                    }
                    self.issue(slot, op.kind == OpKind::Write, op.offset, op.len)
                }
                OpKind::Trim | OpKind::Flush => {
                    if self.inflight > 0 {
                        return u64::MAX;
                    }
                    self.barrier(op.kind, op.offset, op.len)
                }
            };
            if !ok {
                self.stopping = true;
                return u64::MAX;
            }
            self.next += 1;
        }
        u64::MAX
    }

    fn issue(&mut self, slot: u32, is_write: bool, offset: u64, len: u32) -> bool {
        let (dir, buf) = if is_write {
            let i = self.write_base + slot;
            let data = self.b.buffers().get_mut(i as usize);
            self.filler.refresh(&mut data[..len as usize]);
            (Dir::Write, i)
        } else {
            (Dir::Read, slot)
        };
        if let Err(e) = self.b.prep(slot, buf, dir, offset, len) {
            self.error = Some(io_error(dir, offset, &e.to_string(), e.raw_os_error()));
            return false;
        }
        self.free.pop();
        self.slots[slot as usize] = Slot {
            submit_ns: self.now,
            offset,
            len,
            is_write,
        };
        if self.inflight == 0 {
            self.busy_since = self.now;
        }
        self.first_ns.get_or_insert(self.now);
        self.inflight += 1;
        if let Err(e) = self.b.submit() {
            self.error = Some(submit_error(&e));
            return false;
        }
        true
    }

    /// A trim or a flush, with nothing else in flight.
    fn barrier(&mut self, kind: OpKind, offset: u64, len: u32) -> bool {
        let t0 = self.clock();
        self.first_ns.get_or_insert(t0);
        let (op, res) = if kind == OpKind::Trim {
            let r = self.b.trim(offset, u64::from(len));
            match r {
                Ok(true) => self.out.trims_issued += 1,
                Ok(false) => self.out.trims_skipped += 1,
                Err(_) => {}
            }
            ("trim", r.map(|_| ()))
        } else {
            self.out.flushes += 1;
            ("flush", self.b.fsync())
        };
        self.now = self.clock();
        self.out.busy_ns += self.now - t0;
        self.last_done = Some(self.now);
        if let Err(e) = res {
            self.error = Some(RunError {
                message: format!("{op} at offset {offset} failed: {e}"),
                op: Some(op.into()),
                offset: Some(offset),
                errno: e.raw_os_error(),
            });
            return false;
        }
        true
    }

    /// Waits for a completion (at most until `wake`), then reaps every ready one.
    fn reap_round(&mut self, wake: u64) -> bool {
        let timeout = wake.saturating_sub(self.now).clamp(10_000, 1_000_000_000);
        if let Err(e) = self.b.submit_and_wait(1, timeout) {
            self.error = Some(submit_error(&e));
            return false;
        }
        self.now = self.clock();
        self.roll();
        let now = self.now;
        let rel = now
            .saturating_sub(self.shared.ramp_ns)
            .saturating_sub(self.iv.cur.start_ns);
        let (slots, free, inflight, error, cur, out) = (
            &self.slots,
            &mut self.free,
            &mut self.inflight,
            &mut self.error,
            &mut self.iv.cur,
            &mut self.out,
        );
        let mut reaped = false;
        self.b.reap(0, |slot, res| {
            let s = slots[slot as usize];
            *inflight -= 1;
            free.push(slot);
            let dir = if s.is_write { Dir::Write } else { Dir::Read };
            let len = u64::from(s.len);
            if res < 0 || res as u64 != len {
                error.get_or_insert_with(|| completion_error(dir, s.offset, res, len));
                return;
            }
            reaped = true;
            cur.completed(Completed {
                dir,
                bytes: len,
                lat_ns: now - s.submit_ns,
                offset: s.offset,
                rel_ns: rel,
                at_ns: now,
            });
            out.issued += 1;
            if s.is_write {
                out.bytes_written += len;
            } else {
                out.bytes_read += len;
            }
        });
        if self.inflight == 0 {
            self.out.busy_ns += now - self.busy_since;
        }
        if reaped {
            self.last_done = Some(now);
        }
        true
    }

    fn finish(mut self) {
        let end_ns = self.now.saturating_sub(self.shared.ramp_ns);
        self.iv.close(end_ns, self.tx, self.job);
        let mut out = self.out;
        out.complete = self.next >= self.rp.ops.len() && self.error.is_none();
        out.elapsed_ns = match (self.first_ns, self.last_done) {
            (Some(a), Some(b)) => b.saturating_sub(a),
            _ => 0,
        };
        out.idle_ns = out.elapsed_ns.saturating_sub(out.busy_ns);
        out.bandwidth_mbps = bandwidth_mbps(out.bytes_read + out.bytes_written, out.busy_ns);
        let _ = self.tx.send(JobMsg::Replayed {
            job: self.job,
            replay: Box::new(out),
        });
        send_done(self.tx, self.job, end_ns, self.error.take(), None);
    }
}
