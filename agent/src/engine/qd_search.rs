//! One job's `latency_target` search, as fio 3.33 runs it (`lat_target_check` and friends
//! in its `io_u.c`): the depth starts at 1; at the end of each window the share of its
//! I/Os within the target decides. A window that holds raises the depth (doubling until one
//! has failed, then halfway to the lowest failing depth); one that fails lowers it halfway
//! to the highest holding one and drains what is in flight first. A window that holds at
//! the depth it already had starts the final window (after a drain; its completions are
//! tallied apart, as fio restarts its statistics there), and the next one that holds there
//! ends the job. At a percentile of 100 a single I/O over the target lowers the depth at
//! once, and at QD1 fails the job (fio's ETIMEDOUT).

use crate::stats::IntervalStats;
use shared::qd_search::LatencyRule;

/// What the loop does after a round.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Next {
    Go,
    /// The final window held: the job ends.
    Done,
    /// An I/O over the target at QD1 with a percentile of 100.
    Fatal,
}

pub(super) struct QdSearch {
    /// The target (ns), the window (ns), the percentile.
    pub target_ns: u64,
    window_ns: u64,
    pct: f64,
    iodepth: u32,
    /// The depth in use, and the bounds of the bisection.
    qd: u32,
    low: u32,
    high: u32,
    /// The window: when it started, its completions and those over the target.
    start: u64,
    ios: u64,
    failed: u64,
    /// Draining before a new window (after lowering the depth, or before the final one).
    quiesce: bool,
    /// The final window is under way (or starts after the drain).
    end_run: bool,
    /// The final window's completions, from its start.
    pub tally: Option<IntervalStats>,
}

impl QdSearch {
    pub fn new(rule: &LatencyRule, iodepth: u32) -> Self {
        QdSearch {
            target_ns: rule.target_us * 1_000,
            window_ns: rule.window_ms * 1_000_000,
            pct: rule.percentile,
            iodepth,
            qd: 1,
            low: 1,
            high: iodepth,
            start: 0,
            ios: 0,
            failed: 0,
            quiesce: false,
            end_run: false,
            tally: None,
        }
    }

    /// The depth the job may fill to now (0 while draining).
    #[inline]
    pub fn cap(&self) -> u32 {
        if self.quiesce {
            0
        } else {
            self.qd
        }
    }

    /// The depth the search is at (fio's `latency_depth`).
    pub fn depth(&self) -> u32 {
        self.qd
    }

    /// The window starts now (measurement began, or a drain ended): the final window's
    /// tally too, when it is due.
    pub fn begin(&mut self, now: u64) {
        self.start = now;
        self.ios = 0;
        self.failed = 0;
        if self.quiesce {
            self.quiesce = false;
            if self.end_run && self.tally.is_none() {
                self.tally = Some(IntervalStats::new(0, now, now));
            }
        }
    }

    /// Whether the loop must start a window now: a drain it asked for is over.
    #[inline]
    pub fn drained(&self, inflight: u32) -> bool {
        self.quiesce && inflight == 0
    }

    /// After a round that counted `ios` completions, `failed` of them over the target.
    pub fn round(&mut self, now: u64, ios: u64, failed: u64) -> Next {
        if self.quiesce {
            // What drains belongs to no window.
            return Next::Go;
        }
        self.ios += ios;
        self.failed += failed;
        if self.pct >= 100.0 && failed > 0 {
            if self.qd == 1 {
                return Next::Fatal;
            }
            self.lower();
            return Next::Go;
        }
        if now.saturating_sub(self.start) < self.window_ns {
            return Next::Go;
        }
        // A window without completions fails, as fio's 0/0 does.
        let held =
            self.ios > 0 && (self.ios - self.failed) as f64 / self.ios as f64 * 100.0 >= self.pct;
        if held {
            return self.raise(now);
        }
        if self.qd > 1 {
            self.lower();
        }
        // At QD1 fio keeps the window going (its check repeats every round).
        Next::Go
    }

    /// A window held: up, or the final window, or done.
    fn raise(&mut self, now: u64) -> Next {
        let was = self.qd;
        self.low = self.qd;
        self.qd = if self.high != self.iodepth {
            (self.qd + self.high) / 2
        } else {
            self.qd * 2
        }
        .min(self.iodepth);
        if self.qd == was {
            if self.end_run {
                return Next::Done;
            }
            self.end_run = true;
            self.quiesce = true;
            return Next::Go;
        }
        self.begin(now);
        Next::Go
    }

    /// A window failed: down halfway to the last depth that held, after a drain.
    fn lower(&mut self) {
        self.high = self.qd;
        if self.qd == self.low {
            self.low -= 1;
        }
        self.qd = ((self.qd + self.low) / 2).max(1);
        self.quiesce = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn search(pct: f64, iodepth: u32) -> QdSearch {
        let rule = LatencyRule {
            target_us: 1_000,
            window_ms: 10,
            percentile: pct,
        };
        let mut s = QdSearch::new(&rule, iodepth);
        s.begin(0);
        s
    }

    /// Runs windows where depth `d` holds when `ok(d)`, until the job ends; returns the
    /// depths tried and the end.
    fn drive(s: &mut QdSearch, ok: impl Fn(u32) -> bool) -> (Vec<u32>, Next) {
        let mut t = 0;
        let mut tried = vec![s.depth()];
        for _ in 0..100 {
            t += 10_000_000;
            let failed = if ok(s.depth()) { 0 } else { 50 };
            let next = s.round(t, 100, failed);
            if next != Next::Go {
                return (tried, next);
            }
            if s.drained(0) {
                s.begin(t);
            }
            if tried.last() != Some(&s.depth()) {
                tried.push(s.depth());
            }
        }
        (tried, Next::Go)
    }

    #[test]
    fn doubles_then_bisects_to_the_deepest_holding_depth() {
        // Holds up to QD12 of 128: 1, 2, 4, 8, 16 fails, 12 holds, 14 fails, 13 fails, 12
        // again, then its final window.
        let mut s = search(99.0, 128);
        let (tried, end) = drive(&mut s, |d| d <= 12);
        assert_eq!(tried, vec![1, 2, 4, 8, 16, 12, 14, 13, 12]);
        assert_eq!(end, Next::Done);
        assert_eq!(s.depth(), 12);
        assert!(s.tally.is_some(), "the final window was tallied");
    }

    #[test]
    fn a_queue_that_always_holds_ends_at_iodepth() {
        let mut s = search(99.0, 32);
        let (tried, end) = drive(&mut s, |_| true);
        assert_eq!(tried, vec![1, 2, 4, 8, 16, 32]);
        assert_eq!((end, s.depth()), (Next::Done, 32));
    }

    #[test]
    fn at_100_percent_one_slow_io_at_qd1_is_fatal() {
        let mut s = search(100.0, 8);
        assert_eq!(s.round(1, 10, 1), Next::Fatal);
        let mut s = search(100.0, 8);
        assert_eq!(s.round(10_000_000, 10, 0), Next::Go);
        s.begin(10_000_000);
        assert_eq!(s.depth(), 2);
        // A slow I/O at QD2 lowers the depth at once, before the window ends.
        assert_eq!(s.round(10_000_001, 3, 1), Next::Go);
        assert_eq!((s.depth(), s.cap()), (1, 0), "down to QD1, draining");
    }
}
