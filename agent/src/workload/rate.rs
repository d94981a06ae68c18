//! Rate cap for one job: at most `ios_per_sec` I/Os issued per second, measured from the
//! job's start, so short bursts after a stall catch up to the average (like fio's `rate`).

#[derive(Debug, Clone)]
pub struct RateCap {
    ns_per_io: f64,
}

impl RateCap {
    pub fn new(ios_per_sec: f64) -> Self {
        RateCap {
            ns_per_io: 1e9 / ios_per_sec.max(1e-9),
        }
    }

    /// Time (ns since the job started) at which I/O number `issued` (0-based) may be issued.
    #[inline]
    pub fn due_ns(&self, issued: u64) -> u64 {
        (issued as f64 * self.ns_per_io) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spacing_matches_rate() {
        let cap = RateCap::new(1000.0);
        assert_eq!(cap.due_ns(0), 0);
        assert_eq!(cap.due_ns(1), 1_000_000);
        assert_eq!(cap.due_ns(1000), 1_000_000_000);
    }
}
