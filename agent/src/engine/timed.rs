//! A job that makes one operation at a time and times each itself (the files workload, the
//! probe) rather than through a backend's queue: its clock, its interval of the engine's
//! protocol (`JobMsg::Interval`), sent when the next one begins, and what it had done when
//! the first job of the run ended (elbencho's first-done).

use super::job::{JobMsg, RunShared};
use super::Dir;
use crate::stats::interval::Completed;
use crate::stats::IntervalStats;
use std::io;
use std::sync::atomic::Ordering;
use std::sync::mpsc::Sender;
use std::time::Instant;

/// A job's clock and its interval: each operation's latency and bytes, the interval sent
/// when the next one begins.
pub struct Timer<'a> {
    job: usize,
    shared: &'a RunShared,
    tx: &'a Sender<JobMsg>,
    epoch: Instant,
    interval_ns: u64,
    cur: IntervalStats,
    /// Operations and bytes so far, and as they were when the first job ended.
    pub ops: u64,
    pub bytes: u64,
    pub at_first_done: Option<(u64, u64)>,
}

impl<'a> Timer<'a> {
    pub fn new(job: usize, shared: &'a RunShared, tx: &'a Sender<JobMsg>) -> Self {
        let interval_ns = shared.interval_ns.max(1);
        Timer {
            job,
            shared,
            tx,
            epoch: Instant::now(),
            interval_ns,
            cur: IntervalStats::new(0, 0, interval_ns),
            ops: 0,
            bytes: 0,
            at_first_done: None,
        }
    }

    pub fn elapsed(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }

    pub fn stopped(&self) -> bool {
        self.shared.cancel.load(Ordering::Relaxed) || self.shared.abort.load(Ordering::Relaxed)
    }

    /// Times `op` and counts it: the bytes it moved, in direction `dir`.
    pub fn op(&mut self, dir: Dir, op: impl FnOnce() -> io::Result<u64>) -> io::Result<()> {
        if self.at_first_done.is_none()
            && self.shared.first_done_ns.load(Ordering::Relaxed) != u64::MAX
        {
            self.at_first_done = Some((self.ops, self.bytes));
        }
        let (bytes, lat_ns, at_ns) = self.time(op)?;
        self.count(dir, bytes, lat_ns, at_ns, 0);
        Ok(())
    }

    /// Times `op` without counting it: what it returned, its latency and when it ended.
    pub fn time<T>(&mut self, op: impl FnOnce() -> io::Result<T>) -> io::Result<(T, u64, u64)> {
        let t0 = self.elapsed();
        let v = op()?;
        let at_ns = self.elapsed();
        Ok((v, at_ns - t0, at_ns))
    }

    /// Counts an operation that ended at `at_ns` after `lat_ns`, moving `bytes` at
    /// `offset`: in the interval it ended in (the intervals before it sent).
    pub fn count(&mut self, dir: Dir, bytes: u64, lat_ns: u64, at_ns: u64, offset: u64) {
        self.ops += 1;
        self.bytes += bytes;
        self.roll(at_ns);
        self.cur.completed(Completed {
            dir,
            bytes,
            lat_ns,
            offset,
            rel_ns: at_ns - self.cur.start_ns,
            at_ns,
        });
    }

    /// Counts a flush (fsync/fdatasync) that ended at `at_ns` after `lat_ns`: apart from
    /// reads and writes, as the engine's flushes.
    pub fn flushed(&mut self, lat_ns: u64, at_ns: u64) {
        self.roll(at_ns);
        self.cur.flush.ios += 1;
        self.cur.flush.hist.record(lat_ns);
    }

    /// Sends the intervals that ended before `at_ns`.
    fn roll(&mut self, at_ns: u64) {
        while at_ns >= self.cur.end_ns {
            let next = IntervalStats::new(
                self.cur.index + 1,
                self.cur.end_ns,
                self.cur.end_ns + self.interval_ns,
            );
            let full = std::mem::replace(&mut self.cur, next);
            let _ = self.tx.send(JobMsg::Interval {
                job: self.job,
                stats: full,
            });
        }
    }

    /// Sends the last interval, ending at `end_ns`.
    pub fn flush(&mut self, end_ns: u64) {
        let mut last = std::mem::replace(&mut self.cur, IntervalStats::new(0, 0, 0));
        last.end_ns = end_ns.max(last.start_ns);
        let _ = self.tx.send(JobMsg::Interval {
            job: self.job,
            stats: last,
        });
    }
}
