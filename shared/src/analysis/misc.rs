//! The smaller analyses: first vs last window, block-size sweep, data patterns, stalls.

use super::{
    BlockSize, BlockSizePoint, Compressibility, FirstLast, PatternResult, SlowIo, StallInterval,
    Stalls, Verdict,
};
use crate::Sample;

/// Mean IOPS and MB/s of the first and the last `window_s` seconds (Iometer's first and
/// last minute). Needs two full windows.
pub fn first_last(samples: &[Sample], window_s: f64) -> FirstLast {
    let mut out = FirstLast {
        window_s,
        ..FirstLast::default()
    };
    let (Some(first), Some(last)) = (samples.first(), samples.last()) else {
        out.verdict = Verdict::NotEnoughData;
        return out;
    };
    let (t0, t1) = (first.start_ns, last.end_ns);
    let w = (window_s * 1e9) as u64;
    if t1 - t0 < 2 * w || w == 0 {
        out.verdict = Verdict::NotEnoughData;
        return out;
    }
    let agg = |lo: u64, hi: u64| {
        let (mut ios, mut bytes, mut ns) = (0u64, 0u64, 0u64);
        for s in samples
            .iter()
            .filter(|s| s.start_ns >= lo && s.end_ns <= hi)
        {
            ios += s.total_ios();
            bytes += s.total_bytes();
            ns += s.end_ns - s.start_ns;
        }
        let secs = (ns as f64 / 1e9).max(f64::MIN_POSITIVE);
        (ios as f64 / secs, bytes as f64 / 1e6 / secs)
    };
    (out.first_iops, out.first_mbps) = agg(t0, t0 + w);
    (out.last_iops, out.last_mbps) = agg(t1 - w, t1);
    out.iops_ratio = (out.first_iops > 0.0).then(|| out.last_iops / out.first_iops);
    out.mbps_ratio = (out.first_mbps > 0.0).then(|| out.last_mbps / out.first_mbps);
    out.verdict = Verdict::Found;
    out
}

/// Best block size by IOPS and by MB/s, and the smallest reaching 90 % of the best MB/s.
pub fn block_size(points: &[BlockSizePoint]) -> BlockSize {
    let mut pts = points.to_vec();
    pts.sort_by_key(|p| p.bs);
    let mut out = BlockSize {
        points: pts.clone(),
        ..BlockSize::default()
    };
    if pts.len() < 2 {
        out.verdict = Verdict::NotEnoughData;
        return out;
    }
    let best_iops = pts.iter().max_by(|a, b| a.iops.total_cmp(&b.iops));
    let best_mbps = pts.iter().max_by(|a, b| a.mbps.total_cmp(&b.mbps));
    out.best_iops_bs = best_iops.map(|p| p.bs);
    out.best_mbps_bs = best_mbps.map(|p| p.bs);
    let top = best_mbps.map_or(0.0, |p| p.mbps);
    out.saturation_bs = pts.iter().find(|p| p.mbps >= 0.9 * top).map(|p| p.bs);
    out.verdict = Verdict::Found;
    out
}

/// MB/s per data pattern and the zeros/random ratio.
pub fn compressibility(results: &[PatternResult]) -> Compressibility {
    let find = |name: &str| results.iter().find(|r| r.pattern == name).map(|r| r.mbps);
    let ratio = match (find("zeros"), find("random")) {
        (Some(z), Some(r)) if r > 0.0 => Some(z / r),
        _ => None,
    };
    Compressibility {
        verdict: if ratio.is_some() {
            Verdict::Found
        } else {
            Verdict::NotEnoughData
        },
        patterns: results.to_vec(),
        zeros_random_ratio: ratio,
    }
}

/// Intervals whose slowest I/O exceeded `threshold_ms`, and the slow I/Os themselves.
pub fn stalls(samples: &[Sample], slow: &[SlowIo], slow_total: u64, threshold_ms: f64) -> Stalls {
    let limit = (threshold_ms * 1e6) as u64;
    let intervals: Vec<StallInterval> = samples
        .iter()
        .filter(|s| s.read.lat.max_ns.max(s.write.lat.max_ns) > limit)
        .map(|s| StallInterval {
            seq: s.seq,
            start_s: s.start_ns as f64 / 1e9,
            max_latency_ms: s.read.lat.max_ns.max(s.write.lat.max_ns) as f64 / 1e6,
            mbps: s.total_mb_s(),
        })
        .collect();
    Stalls {
        verdict: if samples.is_empty() {
            Verdict::NotEnoughData
        } else if intervals.is_empty() && slow_total == 0 {
            Verdict::NotFound
        } else {
            Verdict::Found
        },
        threshold_ms,
        intervals,
        ios: slow.to_vec(),
        slow_ios_total: slow_total,
        gaps: Vec::new(),
        gaps_total: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_and_last_minute_like_iometer() {
        let samples: Vec<Sample> = (0..600u64)
            .map(|i| {
                let mut s = Sample {
                    seq: i,
                    start_ns: i * 1_000_000_000,
                    end_ns: (i + 1) * 1_000_000_000,
                    ..Sample::default()
                };
                s.write.ios = if i < 60 {
                    39_212
                } else if i >= 540 {
                    30_112
                } else {
                    33_000
                };
                s
            })
            .collect();
        let f = first_last(&samples, 60.0);
        assert_eq!((f.first_iops, f.last_iops), (39_212.0, 30_112.0));
        assert!((f.iops_ratio.unwrap() - 0.768).abs() < 0.001);
        assert_eq!(
            first_last(&samples[..100], 60.0).verdict,
            Verdict::NotEnoughData
        );
    }

    #[test]
    fn block_size_saturation_and_patterns() {
        let pts: Vec<BlockSizePoint> = [
            (4096, 50_000.0, 205.0),
            (65536, 20_000.0, 1310.0),
            (1 << 20, 3000.0, 3145.0),
            (4 << 20, 760.0, 3190.0),
        ]
        .into_iter()
        .map(|(bs, iops, mbps)| BlockSizePoint { bs, iops, mbps })
        .collect();
        let b = block_size(&pts);
        assert_eq!(
            (b.best_iops_bs, b.best_mbps_bs, b.saturation_bs),
            (Some(4096), Some(4 << 20), Some(1 << 20))
        );
        let c = compressibility(&[
            PatternResult {
                pattern: "random".into(),
                mbps: 400.0,
            },
            PatternResult {
                pattern: "zeros".into(),
                mbps: 560.0,
            },
        ]);
        assert!((c.zeros_random_ratio.unwrap() - 1.4).abs() < 1e-9);
    }

    #[test]
    fn stall_intervals_are_the_slow_ones() {
        let mut s = vec![Sample::default(); 3];
        s[1].seq = 1;
        s[1].write.lat.max_ns = 250_000_000;
        let st = stalls(&s, &[], 0, 100.0);
        assert_eq!(st.intervals.len(), 1);
        assert_eq!(st.intervals[0].max_latency_ms, 250.0);
        assert_eq!(st.verdict, Verdict::Found);
    }
}
