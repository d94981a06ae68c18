//! The trace replayer, one of the job loop's sources ([`super::job`]): it hands the loop a
//! trace's I/Os in their order, each with its own length, when they are due (recorded
//! timing) or as soon as a slot is free (as fast as possible). The loop issues, reaps and
//! measures them like any job's (slots, intervals, histograms, the 10 ms timeline). Trims
//! and flushes are barriers: issued once what is in flight has completed, synchronously,
//! and their time counts as busy. Busy time (at least one I/O in flight) is what the
//! storage bandwidth divides by.

use super::job::JobLoop;
use super::{Dir, IoBackend};
use crate::trace::OpKind;
use crate::workload::replay::ReplayPlan;
use shared::analysis::replay::{bandwidth_mbps, Replay};
use shared::replay::Timing;
use shared::RunError;

/// An I/O issued later than this after it was due is late.
const LATE_NS: u64 = 1_000_000;

/// Where a replay is in its trace, and what it measured beyond the loop's counters.
pub(super) struct ReplaySource<'a> {
    rp: &'a ReplayPlan,
    /// The next I/O of the trace to issue.
    next: usize,
    /// When the first I/O was issued (due times count from it) and the latest completion.
    first_ns: Option<u64>,
    last_done: Option<u64>,
    /// When the loop last went from idle to busy.
    busy_since: u64,
    out: Replay,
}

impl<'a> ReplaySource<'a> {
    pub(super) fn new(rp: &'a ReplayPlan) -> Self {
        ReplaySource {
            rp,
            next: 0,
            first_ns: None,
            last_done: None,
            busy_since: 0,
            out: rp.report.clone(),
        }
    }

    /// Every I/O of the trace was issued.
    pub(super) fn done(&self) -> bool {
        self.next >= self.rp.ops.len()
    }

    /// After a round reaped: `ios` completions that counted, of `read`/`written` bytes;
    /// `idle` when nothing is in flight any more.
    pub(super) fn reaped(&mut self, now: u64, ios: u64, read: u64, written: u64, idle: bool) {
        self.out.issued += ios;
        self.out.bytes_read += read;
        self.out.bytes_written += written;
        if idle {
            self.out.busy_ns += now - self.busy_since;
        }
        if ios > 0 {
            self.last_done = Some(now);
        }
    }

    /// The replay's figures once the loop has ended (`error`: it ended on one).
    pub(super) fn finish(self, failed: bool) -> Replay {
        let complete = self.done() && !failed;
        let mut out = self.out;
        out.complete = complete;
        out.elapsed_ns = match (self.first_ns, self.last_done) {
            (Some(a), Some(b)) => b.saturating_sub(a),
            _ => 0,
        };
        out.idle_ns = out.elapsed_ns.saturating_sub(out.busy_ns);
        out.bandwidth_mbps = bandwidth_mbps(out.bytes_read + out.bytes_written, out.busy_ns);
        out
    }
}

impl<B: IoBackend> JobLoop<'_, B> {
    /// The replay's fill: issues every I/O that is due while slots are free; returns when
    /// the loop must wake at the latest (`wake`, or when the next is due).
    pub(super) fn fill_replay(&mut self, r: &mut ReplaySource, wake: u64) -> u64 {
        while let Some(&op) = r.rp.ops.get(r.next) {
            // Due times count from the first I/O as issued, so a late start (set-up, the
            // first interval) shifts the whole recording instead of squeezing its first gap.
            let due = r.first_ns.unwrap_or(self.now) + op.at_ns;
            if r.rp.timing == Timing::Recorded && due > self.now {
                return wake.min(due);
            }
            let ok = match op.kind {
                OpKind::Read | OpKind::Write => {
                    let Some(&slot) = self.free.last() else {
                        return wake;
                    };
                    if r.rp.timing == Timing::Recorded && self.now - due > LATE_NS {
                        r.out.late += 1;
                        r.out.max_lag_ns = r.out.max_lag_ns.max(self.now - due);
                    }
                    if self.inflight == 0 {
                        r.busy_since = self.now;
                    }
                    r.first_ns.get_or_insert(self.now);
                    let (dir, buf) = if op.kind == OpKind::Write {
                        (Dir::Write, self.refreshed_write_buffer(slot, op.len))
                    } else {
                        (Dir::Read, slot)
                    };
                    let index = r.next as u64;
                    self.issue(slot, dir, buf, op.offset, index, u64::from(op.len))
                }
                OpKind::Trim | OpKind::Flush => {
                    if self.inflight > 0 {
                        return wake;
                    }
                    self.barrier(r, op.kind, op.offset, op.len)
                }
            };
            if !ok {
                self.stopping = true;
                return wake;
            }
            r.next += 1;
        }
        wake
    }

    /// A trim or a flush, with nothing else in flight.
    fn barrier(&mut self, r: &mut ReplaySource, kind: OpKind, offset: u64, len: u32) -> bool {
        let t0 = self.clock();
        r.first_ns.get_or_insert(t0);
        let (op, res) = if kind == OpKind::Trim {
            let res = self.b.trim(offset, u64::from(len));
            match res {
                Ok(true) => r.out.trims_issued += 1,
                Ok(false) => r.out.trims_skipped += 1,
                Err(_) => {}
            }
            ("trim", res.map(|_| ()))
        } else {
            r.out.flushes += 1;
            ("flush", self.b.fsync())
        };
        self.now = self.clock();
        r.out.busy_ns += self.now - t0;
        r.last_done = Some(self.now);
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
}
