//! What one job did in one sample interval. Filled on the hot path (a few adds and one
//! histogram increment per I/O) and handed to the runner as an owned value.

use super::fine::FineStats;
use super::histogram::Histogram;
use crate::engine::Dir;

/// One direction's counters.
#[derive(Clone, Debug, Default)]
pub struct DirCounters {
    pub ios: u64,
    pub bytes: u64,
    pub hist: Histogram,
}

impl DirCounters {
    pub fn merge(&mut self, other: &DirCounters) {
        self.ios += other.ios;
        self.bytes += other.bytes;
        self.hist.merge(&other.hist);
    }
}

/// One completed I/O, as [`IntervalStats::completed`] counts it.
#[derive(Clone, Copy, Debug)]
pub struct Completed {
    pub dir: Dir,
    pub bytes: u64,
    pub lat_ns: u64,
    pub offset: u64,
    /// Time into the interval.
    pub rel_ns: u64,
    /// Time since the measured start.
    pub at_ns: u64,
}

/// One job's interval.
#[derive(Clone, Debug)]
pub struct IntervalStats {
    /// Interval number since the measured start.
    pub index: u64,
    /// Window, in ns since the measured start (ramp excluded). The last interval of a job
    /// ends when the job ended.
    pub start_ns: u64,
    pub end_ns: u64,
    pub read: DirCounters,
    pub write: DirCounters,
    pub trim: DirCounters,
    /// Flushes (fsync/fdatasync every N writes): count and latency, no bytes.
    pub flush: DirCounters,
    /// Lowest offset touched, and one past the highest byte touched (`u64::MAX`/0 if none).
    pub offset_lo: u64,
    pub offset_hi: u64,
    /// Bytes per 10 ms, completion gaps, slow I/Os.
    pub fine: FineStats,
    /// CPU time the job thread used in the window (merged: the busiest job's).
    pub cpu_ns: Option<u64>,
}

impl IntervalStats {
    pub fn new(index: u64, start_ns: u64, end_ns: u64) -> Self {
        IntervalStats {
            index,
            start_ns,
            end_ns,
            read: DirCounters::default(),
            write: DirCounters::default(),
            trim: DirCounters::default(),
            flush: DirCounters::default(),
            offset_lo: u64::MAX,
            offset_hi: 0,
            cpu_ns: None,
            // Sized for the window now, so recording a completion never allocates (only
            // I/Os drained past the end of the job's last interval can grow it).
            fine: FineStats {
                buckets: Vec::with_capacity(
                    (end_ns.saturating_sub(start_ns) / super::fine::BUCKET_NS + 1) as usize,
                ),
                ..FineStats::default()
            },
        }
    }

    /// A completed I/O: its latency, its 10 ms bucket (`rel_ns` into the interval), and a
    /// slow one's place (`at_ns` since the measured start).
    #[inline]
    pub fn completed(&mut self, io: Completed) {
        self.record(io.dir, io.bytes, io.lat_ns, io.offset);
        self.fine.completed(io.rel_ns, io.bytes);
        if io.lat_ns > super::fine::SLOW_IO_NS {
            self.fine.slow(shared::analysis::SlowIo {
                at_ns: io.at_ns,
                offset: io.offset,
                latency_ns: io.lat_ns,
                write: io.dir == Dir::Write,
            });
        }
    }

    #[inline]
    pub fn record(&mut self, dir: Dir, bytes: u64, lat_ns: u64, offset: u64) {
        let d = match dir {
            Dir::Read => &mut self.read,
            Dir::Write => &mut self.write,
            Dir::Trim => &mut self.trim,
        };
        d.ios += 1;
        d.bytes += bytes;
        d.hist.record(lat_ns);
        self.offset_lo = self.offset_lo.min(offset);
        self.offset_hi = self.offset_hi.max(offset + bytes);
    }
}
