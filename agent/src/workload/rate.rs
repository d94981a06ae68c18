//! When a job may issue its next I/O: the rate cap (at most `ios_per_sec`, measured from
//! the job's start so that short bursts after a stall catch up to the average, like fio's
//! `rate`; evenly spaced or as Poisson arrivals) and the think time (after every few I/Os,
//! let those in flight complete, spin, sleep). All state is a few integers per job: nothing
//! is allocated or locked per I/O.

use super::rng::Rng;
use shared::pacing::{RateProcess, ThinkTime};

#[derive(Debug, Clone)]
pub struct RateCap {
    ns_per_io: f64,
    process: RateProcess,
    /// Poisson: the draws, the I/O whose due time is `due`, and that time.
    rng: Rng,
    for_io: u64,
    due: f64,
}

impl RateCap {
    pub fn new(ios_per_sec: f64, process: RateProcess, rng: Rng) -> Self {
        let mut cap = RateCap {
            ns_per_io: 1e9 / ios_per_sec.max(1e-9),
            process,
            rng,
            for_io: 0,
            due: 0.0,
        };
        if process == RateProcess::Poisson {
            cap.due = cap.gap();
        }
        cap
    }

    /// An exponential gap with the cap's mean, ns.
    fn gap(&mut self) -> f64 {
        let u = (self.rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
        -(1.0 - u).ln() * self.ns_per_io
    }

    /// Time (ns since the job started) at which I/O number `issued` (0-based) may be
    /// issued. Linear: `issued` gaps of 1/rate. Poisson: the sum of `issued + 1`
    /// exponential gaps of mean 1/rate, drawn as `issued` grows (it is asked in order).
    #[inline]
    pub fn due_ns(&mut self, issued: u64) -> u64 {
        match self.process {
            RateProcess::Linear => (issued as f64 * self.ns_per_io) as u64,
            RateProcess::Poisson => {
                while self.for_io < issued {
                    self.due += self.gap();
                    self.for_io += 1;
                }
                self.due as u64
            }
        }
    }
}

/// Whether a job may issue now, by its think time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gate {
    Open,
    /// Wait for the I/Os in flight to complete.
    Drain,
    /// Issue nothing before this time (ns since the job started).
    Until(u64),
}

/// A job's think time, as fio's `handle_thinktime` keeps it: a running count of I/Os
/// (completed, or issued), and once it has grown by `blocks` since the last think, the
/// count is noted, the job drains what it has in flight, spins, sleeps, and the next think
/// is due `blocks` after the noted count (completions during the drain count towards it).
/// Each cycle issues at least one I/O: fio checks after queueing one.
#[derive(Debug, Clone)]
pub struct Think {
    t: ThinkTime,
    count: u64,
    /// The count noted at the last think.
    last: u64,
    /// The count noted when the current think was called for, while the job drains.
    noted: Option<u64>,
    /// I/Os issued since the last think ended.
    issued_since: u64,
    /// The think under way: spinning until `spin_end`, then sleeping until `until`.
    spin_end: u64,
    until: Option<u64>,
}

impl Think {
    pub fn new(t: ThinkTime) -> Self {
        Think {
            t,
            count: 0,
            last: 0,
            noted: None,
            issued_since: 0,
            spin_end: 0,
            until: None,
        }
    }

    #[inline]
    pub fn issued(&mut self) {
        self.issued_since += 1;
        if self.t.count_issued {
            self.count += 1;
        }
    }

    #[inline]
    pub fn completed(&mut self, n: u64) {
        if !self.t.count_issued {
            self.count += n;
        }
    }

    /// May the job issue at `now` with `inflight` I/Os out? A think starts once `blocks`
    /// have been counted and nothing is in flight: the spin is spent here, on this thread
    /// (fio spins then sleeps the same way), at most until `limit` (the loop's next duty:
    /// an interval to close, a stop to see) and resumed on the next call; the rest is a
    /// time to wait until.
    #[inline]
    pub fn gate(&mut self, now: u64, inflight: u32, limit: u64, clock: impl Fn() -> u64) -> Gate {
        if let Some(until) = self.until {
            let mut t = now;
            if t < self.spin_end {
                let stop = self.spin_end.min(limit.max(now));
                while t < stop {
                    std::hint::spin_loop();
                    t = clock();
                }
                if t < self.spin_end {
                    return Gate::Until(t);
                }
            }
            if t < until {
                return Gate::Until(until);
            }
            self.until = None;
            return Gate::Open;
        }
        if self.noted.is_none() {
            if self.issued_since == 0 || self.count < self.last + u64::from(self.t.blocks) {
                return Gate::Open;
            }
            self.noted = Some(self.count);
        }
        if inflight > 0 {
            return Gate::Drain;
        }
        self.last = self.noted.take().unwrap_or(self.count);
        self.issued_since = 0;
        self.spin_end = now + self.t.spin_us * 1000;
        self.until = Some(now + self.t.us * 1000);
        self.gate(now, 0, limit, clock)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_spacing_matches_rate() {
        let mut cap = RateCap::new(1000.0, RateProcess::Linear, Rng::new(1, 0));
        assert_eq!(cap.due_ns(0), 0);
        assert_eq!(cap.due_ns(1), 1_000_000);
        assert_eq!(cap.due_ns(1000), 1_000_000_000);
    }

    #[test]
    fn poisson_gaps_are_exponential_with_the_rate_as_mean() {
        let mut cap = RateCap::new(1000.0, RateProcess::Poisson, Rng::new(7, 0));
        let n = 200_000u64;
        let dues: Vec<u64> = (0..n).map(|i| cap.due_ns(i)).collect();
        // Asked again, the same I/O has the same due time.
        assert_eq!(cap.due_ns(n - 1), dues[(n - 1) as usize]);
        let gaps: Vec<f64> = dues.windows(2).map(|w| (w[1] - w[0]) as f64).collect();
        let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
        let sd = (gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / gaps.len() as f64).sqrt();
        // Mean 1 ms, and an exponential's standard deviation equals its mean.
        assert!((mean / 1e6 - 1.0).abs() < 0.01, "mean {mean}");
        assert!((sd / mean - 1.0).abs() < 0.02, "cv {}", sd / mean);
        // P(gap > mean) = 1/e.
        let over = gaps.iter().filter(|g| **g > 1e6).count() as f64 / gaps.len() as f64;
        assert!((over - (-1.0f64).exp()).abs() < 0.01, "{over}");
        // Per-second counts are Poisson: variance about the mean.
        let mut per_s = vec![0f64; 200];
        for d in &dues {
            if let Some(c) = per_s.get_mut((d / 1_000_000_000) as usize) {
                *c += 1.0;
            }
        }
        let per_s = &per_s[..190];
        let m = per_s.iter().sum::<f64>() / per_s.len() as f64;
        let v = per_s.iter().map(|c| (c - m).powi(2)).sum::<f64>() / per_s.len() as f64;
        assert!((0.7..1.4).contains(&(v / m)), "dispersion {}", v / m);
    }

    #[test]
    fn a_think_waits_for_the_drain_then_pauses() {
        let mut t = Think::new(ThinkTime {
            us: 1000,
            blocks: 2,
            ..ThinkTime::default()
        });
        assert_eq!(t.gate(0, 0, u64::MAX, || 0), Gate::Open);
        t.issued();
        t.issued();
        t.issued();
        t.completed(1);
        assert_eq!(t.gate(10, 2, u64::MAX, || 10), Gate::Open);
        t.completed(1);
        // Two counted with one still out: drain first.
        assert_eq!(t.gate(20, 1, u64::MAX, || 20), Gate::Drain);
        t.completed(1);
        assert_eq!(t.gate(30, 0, u64::MAX, || 30), Gate::Until(1_000_030));
        assert_eq!(
            t.gate(500_000, 0, u64::MAX, || 500_000),
            Gate::Until(1_000_030)
        );
        assert_eq!(t.gate(1_000_030, 0, u64::MAX, || 1_000_030), Gate::Open);
        // The completion during the drain counts towards the next think (due at 4): one
        // more I/O and it is due.
        t.issued();
        assert_eq!(t.gate(1_000_040, 1, u64::MAX, || 1_000_040), Gate::Open);
        t.completed(1);
        assert_eq!(
            t.gate(1_000_050, 0, u64::MAX, || 1_000_050),
            Gate::Until(2_000_050)
        );
        // Counted at issue, a completion does not count.
        let mut t = Think::new(ThinkTime {
            us: 5,
            blocks: 1,
            count_issued: true,
            ..ThinkTime::default()
        });
        t.completed(3);
        assert_eq!(t.gate(0, 0, u64::MAX, || 0), Gate::Open);
        t.issued();
        assert_eq!(t.gate(0, 1, u64::MAX, || 0), Gate::Drain);
        // Every cycle issues at least one I/O.
        assert_eq!(t.gate(0, 0, u64::MAX, || 0), Gate::Until(5_000));
        assert_eq!(t.gate(5_000, 0, u64::MAX, || 5_000), Gate::Open);
        assert_eq!(t.gate(5_000, 0, u64::MAX, || 5_000), Gate::Open);
    }

    #[test]
    fn the_spin_is_spent_on_the_clock() {
        let mut t = Think::new(ThinkTime {
            us: 100,
            spin_us: 100,
            blocks: 1,
            count_issued: false,
        });
        t.issued();
        t.completed(1);
        let clock = std::cell::Cell::new(0u64);
        let gate = t.gate(0, 0, u64::MAX, || {
            clock.set(clock.get() + 10_000);
            clock.get()
        });
        // 100 µs of spinning on a clock that moves 10 µs a look: the think is over.
        assert_eq!(gate, Gate::Open);
        assert_eq!(clock.get(), 100_000);
    }

    #[test]
    fn a_long_spin_hands_the_loop_back_at_its_limit() {
        let mut t = Think::new(ThinkTime {
            us: 100,
            spin_us: 100,
            blocks: 1,
            count_issued: false,
        });
        t.issued();
        t.completed(1);
        let clock = std::cell::Cell::new(0u64);
        let tick = || {
            clock.set(clock.get() + 10_000);
            clock.get()
        };
        // The loop must be back by 30 µs (an interval ends): the spin pauses there...
        assert_eq!(t.gate(0, 0, 30_000, tick), Gate::Until(30_000));
        // ...and goes on where it stopped until its 100 µs are spent.
        assert_eq!(t.gate(30_000, 0, u64::MAX, tick), Gate::Open);
        assert_eq!(clock.get(), 100_000);
    }
}
