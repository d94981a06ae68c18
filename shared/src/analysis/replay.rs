//! A trace replay's own figures (PCMark 8's way of reporting recorded application I/O):
//! what the trace holds by type and size, how it was replayed, and the storage bandwidth,
//! bytes moved over the time the drive was busy (at least one I/O in flight); idle time
//! does not count. Application presets add a score per application and overall.

use serde::{Deserialize, Serialize};

/// I/Os of one kind in a trace (or replayed).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct OpCount {
    /// `read`, `write`, `trim` or `flush`.
    pub kind: String,
    pub count: u64,
    pub bytes: u64,
}

/// I/Os of lengths in `(previous class, bytes]`: classes are powers of two.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SizeClass {
    pub up_to_bytes: u64,
    pub reads: u64,
    pub writes: u64,
}

/// How a trace was replayed and what it took.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Replay {
    /// The trace as named by the user (a built-in name or a file name).
    pub trace: String,
    /// `fio iolog v2`, `fio iolog v3`, `blkparse text`, `blktrace binary`.
    pub format: String,
    /// `recorded`, `recorded ×2` (scaled), `afap QD8`.
    pub timing: String,
    /// By kind, as the trace holds them (after remapping).
    pub ops: Vec<OpCount>,
    pub sizes: Vec<SizeClass>,
    /// I/Os whose offset lay beyond the target's span and were remapped into it (modulo).
    pub remapped: u64,
    /// I/Os moved to the target's logical block size (offset down, length up).
    pub aligned: u64,
    /// Lines or records of the trace that were not I/O (file actions, notes, other events).
    pub ignored_records: u64,
    /// Read and write I/Os issued and completed.
    pub issued: u64,
    pub trims_issued: u64,
    /// Trims the target does not support (counted, not issued).
    pub trims_skipped: u64,
    pub flushes: u64,
    /// Whether every I/O of the trace was issued (false: stopped, failed or out of time).
    pub complete: bool,
    /// Time from the first I/O to the end of the last one.
    pub elapsed_ns: u64,
    /// Time with at least one I/O in flight ("waiting on the drive").
    pub busy_ns: u64,
    /// Time with nothing in flight (elapsed − busy).
    pub idle_ns: u64,
    /// Recorded timing: idle gaps over [`Replay::idle_max_ns`] were shortened to it; the time
    /// taken out.
    pub compressed_ns: u64,
    pub idle_max_ns: Option<u64>,
    /// The trace's own length (first to last I/O as recorded, before compression).
    pub recorded_ns: u64,
    /// Recorded timing: I/Os issued more than 1 ms after they were due (every slot was
    /// busy: the drive is slower than the recording), and the largest delay.
    pub late: u64,
    pub max_lag_ns: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// Bytes read and written over busy time, MB/s (10^6 B/s).
    pub bandwidth_mbps: f64,
}

/// Bytes over busy time in MB/s; 0 with no busy time.
pub fn bandwidth_mbps(bytes: u64, busy_ns: u64) -> f64 {
    if busy_ns == 0 {
        0.0
    } else {
        bytes as f64 * 1000.0 / busy_ns as f64
    }
}

impl Replay {
    /// The summary lines of one replay (CLI table and dashboard).
    pub fn lines(&self) -> Vec<String> {
        use crate::units::format_bytes;
        let s = |ns: u64| ns as f64 / 1e9;
        let ops: Vec<String> = self
            .ops
            .iter()
            .filter(|o| o.count > 0)
            .map(|o| format!("{} {} ({})", o.count, o.kind, format_bytes(o.bytes)))
            .collect();
        let mut lines = vec![format!(
            "replay {} ({}, {}): {:.1} MB/s storage bandwidth; {}{}",
            self.trace,
            self.format,
            self.timing,
            self.bandwidth_mbps,
            ops.join(", "),
            if self.complete { "" } else { "; INCOMPLETE" }
        )];
        lines.push(format!(
            "  {:.2} s: {:.2} s waiting on the drive, {:.2} s idle{}",
            s(self.elapsed_ns),
            s(self.busy_ns),
            s(self.idle_ns),
            match self.idle_max_ns {
                Some(m) if self.compressed_ns > 0 => format!(
                    "; {:.2} s of idle compressed out (gaps over {} ms) of {:.2} s recorded",
                    s(self.compressed_ns),
                    m / 1_000_000,
                    s(self.recorded_ns)
                ),
                _ => String::new(),
            }
        ));
        let mut notes = Vec::new();
        if self.remapped > 0 {
            notes.push(format!(
                "{} I/Os beyond the target remapped into it",
                self.remapped
            ));
        }
        if self.aligned > 0 {
            notes.push(format!(
                "{} aligned to the logical block size",
                self.aligned
            ));
        }
        if self.trims_skipped > 0 {
            notes.push(format!(
                "{} trims skipped (not supported by the target)",
                self.trims_skipped
            ));
        }
        if self.late > 0 {
            notes.push(format!(
                "{} I/Os late (up to {:.1} ms): the drive is slower than the recording",
                self.late,
                self.max_lag_ns as f64 / 1e6
            ));
        }
        if !notes.is_empty() {
            lines.push(format!("  {}", notes.join("; ")));
        }
        lines
    }
}

/// Application presets: storage bandwidth per application and overall.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AppScores {
    pub apps: Vec<AppScore>,
    /// Geometric mean of the applications' bandwidths (PCMark's way of not letting one
    /// trace dominate), MB/s.
    pub overall_mbps: f64,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AppScore {
    pub app: String,
    pub bandwidth_mbps: f64,
    /// Passes averaged (the steps replaying this application's trace).
    pub passes: u32,
}

impl AppScores {
    /// Scores from the replays of a preset's steps, by trace name; `None` when no replay
    /// completed.
    pub fn from_replays(replays: &[Replay]) -> Option<AppScores> {
        let mut apps: Vec<AppScore> = Vec::new();
        let mut sums: Vec<(u64, u64)> = Vec::new();
        for r in replays.iter().filter(|r| r.complete) {
            let i = match apps.iter().position(|a| a.app == r.trace) {
                Some(i) => i,
                None => {
                    apps.push(AppScore {
                        app: r.trace.clone(),
                        ..AppScore::default()
                    });
                    sums.push((0, 0));
                    apps.len() - 1
                }
            };
            apps[i].passes += 1;
            sums[i].0 += r.bytes_read + r.bytes_written;
            sums[i].1 += r.busy_ns;
        }
        for (a, (bytes, busy)) in apps.iter_mut().zip(&sums) {
            a.bandwidth_mbps = bandwidth_mbps(*bytes, *busy);
        }
        if apps.is_empty() || apps.iter().any(|a| a.bandwidth_mbps <= 0.0) {
            return None;
        }
        let log_mean = apps.iter().map(|a| a.bandwidth_mbps.ln()).sum::<f64>() / apps.len() as f64;
        Some(AppScores {
            overall_mbps: log_mean.exp(),
            apps,
        })
    }

    pub fn summary_line(&self) -> String {
        let apps: Vec<String> = self
            .apps
            .iter()
            .map(|a| format!("{} {:.1} MB/s", a.app, a.bandwidth_mbps))
            .collect();
        format!(
            "application score: {:.1} MB/s overall ({})",
            self.overall_mbps,
            apps.join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn replay(trace: &str, bytes: u64, busy_ns: u64) -> Replay {
        Replay {
            trace: trace.into(),
            bytes_read: bytes,
            busy_ns,
            complete: true,
            ..Replay::default()
        }
    }

    #[test]
    fn bandwidth_is_bytes_over_busy_time() {
        assert_eq!(bandwidth_mbps(100_000_000, 1_000_000_000), 100.0);
        assert_eq!(bandwidth_mbps(5, 0), 0.0);
    }

    #[test]
    fn scores_pool_passes_and_take_the_geometric_mean() {
        let s = AppScores::from_replays(&[
            replay("a", 100_000_000, 1_000_000_000),
            replay("a", 300_000_000, 1_000_000_000),
            replay("b", 400_000_000, 1_000_000_000),
        ])
        .expect("scores");
        assert_eq!(s.apps.len(), 2);
        assert_eq!(s.apps[0].passes, 2);
        assert!((s.apps[0].bandwidth_mbps - 200.0).abs() < 1e-9);
        assert!((s.overall_mbps - (200.0f64 * 400.0).sqrt()).abs() < 1e-9);
        let mut bad = replay("c", 1, 1);
        bad.complete = false;
        assert!(AppScores::from_replays(&[bad]).is_none());
    }
}
