//! Sustained-rate qualification: a producer writes `required` bytes per second from the
//! first moment; the target completes what the timeline says. The shortfall at time t is
//! demand(t) − completed(t); its maximum is the RAM buffer that would have hidden every
//! stall. The run passes when that buffer is at most `buffer_ms` of data at the rate.
//! Windows of 10 ms, 100 ms and 1 s whose completed bytes fall below the rate are counted
//! (10 ms windows allow one bucket of jitter: they count only below half the rate), and the
//! bytes written are cut in tenths, each passing when its own rate reaches 99 % of the
//! requirement.

use super::{Band, Sustain, Timeline, Verdict};

pub fn sustain(timeline: &Timeline, required_bytes_per_s: f64, buffer_ms: u64) -> Sustain {
    let b = &timeline.bytes;
    sustain_in(
        || b.iter().copied(),
        b.len(),
        timeline.bucket_ms,
        required_bytes_per_s,
        buffer_ms,
    )
}

/// [`sustain`] over `len` buckets of `bucket_ms` read in two streaming passes (`buckets`
/// starts a pass): a run's exact timeline on disk, at any run length.
pub fn sustain_in<I: Iterator<Item = u64>>(
    buckets: impl Fn() -> I,
    len: usize,
    bucket_ms: u32,
    required_bytes_per_s: f64,
    buffer_ms: u64,
) -> Sustain {
    let mut out = Sustain {
        required_mbps: required_bytes_per_s / 1e6,
        buffer_ms,
        ..Sustain::default()
    };
    if len < 10 || bucket_ms == 0 || required_bytes_per_s <= 0.0 {
        out.verdict = Verdict::NotEnoughData;
        return out;
    }
    let bucket_s = f64::from(bucket_ms) / 1e3;
    let per_bucket = required_bytes_per_s * bucket_s;
    let per = |ms: u64| ((ms / u64::from(bucket_ms)) as usize).max(1);
    // Windows of 10 ms, 100 ms and 1 s: (buckets each, share of the rate, sum so far,
    // buckets so far, windows below).
    let mut windows = [
        (per(10), 0.5, 0u64, 0usize, 0u64),
        (per(100), 0.99, 0, 0, 0),
        (per(1000), 0.99, 0, 0, 0),
    ];
    // Buffer: demand grows by per_bucket each bucket. Longest run of buckets with nothing
    // completed.
    let (mut done, mut worst) = (0f64, 0f64);
    let (mut run, mut longest) = (0u64, 0u64);
    let mut total = 0u64;
    let mut n = 0usize;
    for (i, x) in buckets().take(len).enumerate() {
        n = i + 1;
        total += x;
        done += x as f64;
        let demand = per_bucket * (i + 1) as f64;
        worst = worst.max(demand - done);
        if x == 0 {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
        for w in &mut windows {
            w.2 += x;
            w.3 += 1;
            if w.3 == w.0 {
                if (w.2 as f64) < per_bucket * w.0 as f64 * w.1 {
                    w.4 += 1;
                }
                w.2 = 0;
                w.3 = 0;
            }
        }
    }
    out.buffer_bytes_needed = worst.max(0.0) as u64;
    out.longest_stall_ms = longest * u64::from(bucket_ms);
    out.windows_below_10ms = windows[0].4;
    out.windows_below_100ms = windows[1].4;
    out.windows_below_1s = windows[2].4;
    out.achieved_mbps = total as f64 / (n as f64 * bucket_s) / 1e6;
    // Tenths of the bytes written: the time each tenth took.
    let mut bands = Vec::new();
    let (mut cum, mut band_start) = (0u64, 0usize);
    for (i, x) in buckets().take(n).enumerate() {
        cum += x;
        let edge = total * (bands.len() as u64 + 1) / 10;
        if cum >= edge && bands.len() < 10 {
            let secs = (i + 1 - band_start) as f64 * bucket_s;
            let bytes = total / 10;
            let mbps = bytes as f64 / secs / 1e6;
            bands.push(Band {
                band: bands.len() as u32,
                mbps,
                pass: mbps >= out.required_mbps * 0.99,
            });
            band_start = i + 1;
        }
    }
    out.bands = bands;
    out.pass = out.buffer_bytes_needed as f64 <= required_bytes_per_s * buffer_ms as f64 / 1e3;
    out.verdict = Verdict::Found;
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timeline(bytes: Vec<u64>) -> Timeline {
        Timeline {
            bucket_ms: 10,
            bytes,
            ..Timeline::default()
        }
    }

    #[test]
    fn a_target_faster_than_the_producer_passes() {
        // 100 MB/s required = 1 MB per 10 ms; the target does exactly that with jitter.
        let b: Vec<u64> = (0..1000)
            .map(|i| if i % 2 == 0 { 900_000 } else { 1_100_000 })
            .collect();
        let s = sustain(&timeline(b), 100e6, 1000);
        assert!(s.pass, "{s:?}");
        assert!(s.buffer_bytes_needed <= 100_000);
        assert_eq!(
            (
                s.windows_below_100ms,
                s.windows_below_1s,
                s.longest_stall_ms
            ),
            (0, 0, 0)
        );
        assert_eq!(s.bands.len(), 10);
        assert!(s.bands.iter().all(|b| b.pass));
    }

    #[test]
    fn a_stall_needs_a_buffer_and_a_slow_tail_fails() {
        // 2 s fine, a 300 ms stall, then fine: buffer = 300 ms of data.
        let mut b = vec![1_000_000u64; 200];
        b.extend(vec![0; 30]);
        b.extend(vec![1_000_000; 300]);
        let s = sustain(&timeline(b), 100e6, 1000);
        assert_eq!(s.longest_stall_ms, 300);
        assert_eq!(s.buffer_bytes_needed, 30_000_000);
        assert!(s.pass, "a 300 ms stall fits a 1 s buffer");
        assert!(s.windows_below_100ms >= 3);
        // The target falls to half the rate for good: the shortfall grows without bound.
        let mut slow = vec![1_000_000u64; 100];
        slow.extend(vec![500_000; 900]);
        let f = sustain(&timeline(slow), 100e6, 1000);
        assert!(!f.pass);
        assert!(f.buffer_bytes_needed >= 440_000_000);
        assert!(!f.bands.last().unwrap().pass && f.bands[0].pass);
    }
}
