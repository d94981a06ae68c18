//! Detectors on the run's finest data: the 10 ms timeline (bytes completed per bucket) and
//! the temperature read every runner tick, instead of the per-interval samples. A cache
//! that fills within one sample interval, or a stall shorter than one, is invisible in
//! 1 s (let alone 10 s) samples; here the sample interval no longer matters.
//!
//! - [`cache_cliff_fine`]: the split that best explains the bucket series as two levels
//!   (largest drop of squared error, found at 10 ms resolution), checked over windows long
//!   enough to hold 2–10 completions at the lower level (I/Os, or bursts of them on a device
//!   that completes a whole queue at once; more the closer the levels), so that
//!   quantization does not read as levels: ≥ 80 % of the windows before above the midpoint, ≥ 80 % after below it, the
//!   low level lasting ≥ 3 windows, and not coming back (a sawtooth does).
//! - [`windows`]: the timeline as pseudo-samples of a chosen length, for the analyses that
//!   read samples (thermal classification, first/last).

use super::{CacheCliff, Gap, Prefix, TempPoint, Verdict};
use crate::Sample;

/// Completions (I/Os, or bursts of them) a validation window holds at the lower level.
pub const UNITS_PER_WINDOW: f64 = 10.0;

/// The cache cliff in one write phase's buckets (`bucket_ns` each, starting `t0_ns` into
/// the run); `io_bytes` is the phase's block size.
pub fn cache_cliff_fine(buckets: &[u64], bucket_ns: u64, io_bytes: u64, t0_ns: u64) -> CacheCliff {
    // The last bucket is cut short by the end of the phase (drain): leave it out, and
    // trailing empty buckets with it.
    let mut n = buckets.len().saturating_sub(1);
    while n > 0 && buckets[n - 1] == 0 {
        n -= 1;
    }
    let x: Vec<f64> = buckets[..n].iter().map(|b| *b as f64).collect();
    if x.len() < 12 || bucket_ns == 0 {
        return CacheCliff {
            verdict: Verdict::NotEnoughData,
            ..CacheCliff::default()
        };
    }
    let mbps = |bytes_per_bucket: f64| bytes_per_bucket / bucket_ns as f64 * 1e3;
    let p = Prefix::new(&x);
    let total = p.sse(0, x.len());
    let mut best = (0usize, f64::MIN);
    for k in 2..x.len() - 3 {
        let gain = total - p.sse(0, k) - p.sse(k + 1, x.len());
        if gain > best.1 {
            best = (k, gain);
        }
    }
    let k = best.0;
    // Bucket k holds the transition (partly fast, partly slow): neither level.
    let (pre, post) = (p.mean(0, k), p.mean(k + 1, x.len()));
    let found = |confidence| CacheCliff {
        pre_mbps: Some(mbps(pre)),
        post_mbps: Some(mbps(post)),
        ratio: Some(post / pre.max(f64::MIN_POSITIVE)),
        confidence,
        ..CacheCliff::default()
    };
    if pre <= 0.0 || post <= 0.0 || post > 0.8 * pre {
        return found(0.0);
    }
    // Windows long enough for ~10 completions at the lower level. A device (or a FUSE
    // path) that completes in bursts — every I/O of the queue at once — counts bursts.
    let unit = completion_unit(&buckets[k + 1..n], io_bytes);
    // A stall is not a speed: runs of empty buckets far longer than the gap between two
    // completions at the lower level (a GC pause near the end of a phase) are left out of
    // that level. A level that is the upper one once they are is no cliff.
    let stall_run = (4.0 * unit / post).ceil().max(8.0) as usize;
    let (level, writing) = level_without_stalls(&x[k + 1..], stall_run);
    let per_window = (units_per_window(pre, post) * unit / post).ceil() as usize;
    let w = per_window.clamp(1, 1000);
    // ... and the lower level must be written at for three windows, stalls aside.
    if level > 0.8 * pre || writing < 3 * w {
        return found(0.0);
    }
    let mean_of = |a: usize, b: usize| p.mean(a, b);
    let pre_w: Vec<f64> = (0..k / w)
        .map(|i| mean_of(k - (i + 1) * w, k - i * w))
        .collect();
    let post_w: Vec<f64> = (0..(x.len() - k - 1) / w)
        .map(|i| mean_of(k + 1 + i * w, k + 1 + (i + 1) * w))
        .collect();
    let mid = (pre + post) / 2.0;
    // A fill shorter than one window is judged on what there is (the split itself was
    // found at 10 ms resolution).
    let above = if pre_w.is_empty() {
        if mean_of(0, k) > mid {
            1.0
        } else {
            0.0
        }
    } else {
        pre_w.iter().filter(|v| **v > mid).count() as f64 / pre_w.len() as f64
    };
    if post_w.len() < 3 {
        return found(0.0);
    }
    let back = post_w.iter().filter(|v| **v > mid).count();
    let below = 1.0 - back as f64 / post_w.len() as f64;
    let confidence = above.min(below);
    // A cache does not come back while writes go on: windows back above the midpoint
    // (more than a stray one or two) mean a sawtooth or dips, not a cliff.
    let recovers = back > 2.max(post_w.len() / 20);
    if above < 0.8 || below < 0.8 || recovers {
        return found(confidence);
    }
    // Inside the transition bucket: the share of it still written at the fast level.
    let a = ((x[k] - post) / (pre - post)).clamp(0.0, 1.0);
    let cache_bytes = p.sum(0, k) + a * pre;
    CacheCliff {
        verdict: Verdict::Found,
        detected: true,
        cache_bytes: Some(cache_bytes as u64),
        at_s: Some((t0_ns as f64 + (k as f64 + a) * bucket_ns as f64) / 1e9),
        ..found(confidence)
    }
}

/// The median of `x` over its buckets outside runs of at least `stall_run` empty ones (the
/// median, so that the partly filled buckets at a stall's edges do not pull it down), and how
/// many buckets that is.
fn level_without_stalls(x: &[f64], stall_run: usize) -> (f64, usize) {
    let mut kept = Vec::with_capacity(x.len());
    let mut empty = 0usize;
    for &v in x {
        if v == 0.0 {
            empty += 1;
            continue;
        }
        if empty < stall_run {
            kept.extend(std::iter::repeat_n(0.0, empty));
        }
        empty = 0;
        kept.push(v);
    }
    if empty < stall_run {
        kept.extend(std::iter::repeat_n(0.0, empty));
    }
    if kept.is_empty() {
        return (0.0, 0);
    }
    let mid = kept.len() / 2;
    let (_, m, _) = kept.select_nth_unstable_by(mid, f64::total_cmp);
    (*m, kept.len())
}

/// Completions a window needs so that one more or less (quantization) cannot carry a
/// window of the lower level past the midpoint: the margin is (pre/post − 1) / 2, and an
/// error of one in N must stay well inside it. 10 for levels 1.5× apart, 2 for 4× and more;
/// fewer completions per window keep a short post-cache phase or a sawtooth visible.
pub fn units_per_window(pre: f64, post: f64) -> f64 {
    let margin = (pre / post.max(f64::MIN_POSITIVE) - 1.0) / 2.0;
    (2.5 / margin.max(f64::MIN_POSITIVE))
        .ceil()
        .clamp(2.0, UNITS_PER_WINDOW)
}

/// Bytes of one completion event: the block size, or more when the device completes I/Os
/// in bursts (a whole queue at once, as on the FUSE path): the largest multiple of the block
/// size that nine in ten non-empty buckets hold a whole number of, at most their 10th
/// percentile. (The percentile alone is a bucket's worth when many I/Os complete per bucket:
/// windows then grew to ~10 buckets and a GC pause of 90 ms, split across two of them, no
/// longer showed as a dip in either.)
pub fn completion_unit(buckets: &[u64], io_bytes: u64) -> f64 {
    let io = io_bytes.max(1);
    let mut busy: Vec<u64> = buckets.iter().copied().filter(|v| *v > 0).collect();
    if busy.is_empty() {
        return io as f64;
    }
    // A bounded, evenly spread set of buckets keeps this linear on a day-long timeline.
    let step = busy.len().div_ceil(4096);
    let seen: Vec<u64> = busy.iter().step_by(step).copied().collect();
    let k = busy.len() / 10;
    let (_, p10, _) = busy.select_nth_unstable(k);
    let most = ((*p10).max(io) / io).min(256);
    let whole = |m: u64| {
        let unit = m * io;
        seen.iter().filter(|b| *b % unit == 0).count() * 10 >= seen.len() * 9
    };
    let m = (1..=most).rev().find(|&m| whole(m)).unwrap_or(1);
    (m * io) as f64
}

/// Runs of empty buckets at least `min_ns` long inside one workload's buckets (its first
/// and last bucket left out: start-up and drain), as gaps starting `t0_ns` into the run.
pub fn gaps(buckets: &[u64], bucket_ns: u64, t0_ns: u64, min_ns: u64) -> Vec<Gap> {
    gaps_in(
        buckets.iter().copied(),
        buckets.len(),
        bucket_ns,
        t0_ns,
        min_ns,
    )
}

/// [`gaps`] over `len` buckets read in one streaming pass (a run's exact timeline on disk).
pub fn gaps_in(
    buckets: impl Iterator<Item = u64>,
    len: usize,
    bucket_ns: u64,
    t0_ns: u64,
    min_ns: u64,
) -> Vec<Gap> {
    // The first and last buckets are partial (the start and end of the workload).
    let inner = buckets.skip(1).take(len.saturating_sub(2));
    let mut out = Vec::new();
    let mut close = |from: usize, to: usize| {
        let ns = (to - from) as u64 * bucket_ns;
        if ns >= min_ns {
            out.push(Gap {
                start_s: (t0_ns + (from as u64 + 1) * bucket_ns) as f64 / 1e9,
                ms: ns as f64 / 1e6,
            });
        }
    };
    let mut run_start = None;
    let mut n = 0;
    for (i, b) in inner.enumerate() {
        n = i + 1;
        match (b == 0, run_start) {
            (true, None) => run_start = Some(i),
            (false, Some(a)) => {
                close(a, i);
                run_start = None;
            }
            _ => {}
        }
    }
    if let Some(a) = run_start {
        close(a, n);
    }
    out
}

/// The timeline's buckets `[from, to)` as samples of `per` buckets each (the last may be
/// shorter), counting as writes or reads; the temperature of each is the last reading
/// at or before its end. `io_bytes` gives an I/O count (bytes over block size) for the
/// analyses that skip empty samples.
pub fn windows(
    buckets: &[u64],
    bucket_ns: u64,
    per: usize,
    t0_ns: u64,
    write: bool,
    io_bytes: u64,
    temps: &[TempPoint],
) -> Vec<Sample> {
    let per = per.max(1);
    let mut cum = 0u64;
    // Readings are in time order, and so are the windows: one pass over both.
    let mut temp_at = 0usize;
    let mut temp_c = None;
    buckets
        .chunks(per)
        .enumerate()
        .map(|(i, c)| {
            let bytes: u64 = c.iter().sum();
            cum += bytes;
            let start_ns = t0_ns + (i * per) as u64 * bucket_ns;
            let end_ns = start_ns + c.len() as u64 * bucket_ns;
            let mut s = Sample {
                seq: i as u64,
                start_ns,
                end_ns,
                ..Sample::default()
            };
            let d = if write { &mut s.write } else { &mut s.read };
            d.bytes = bytes;
            d.cum_bytes = cum;
            d.ios = bytes.div_ceil(io_bytes.max(1));
            d.mb_s = bytes as f64 / (end_ns - start_ns) as f64 * 1e3;
            d.iops = d.ios as f64 / (end_ns - start_ns) as f64 * 1e9;
            let end_ms = end_ns / 1_000_000;
            while let Some(t) = temps.get(temp_at).filter(|t| t.at_ms <= end_ms) {
                temp_c = Some(t.c);
                temp_at += 1;
            }
            s.temp_c = temp_c;
            s
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const B: u64 = 10_000_000;

    /// 10 ms buckets: `fast_s` at `fast` MB/s, then `slow_s` at `slow`, 1 MiB I/Os
    /// completing whole (a bucket holds whole I/Os, the remainder carries over).
    fn buckets(fast: f64, fast_s: f64, slow: f64, slow_s: f64) -> Vec<u64> {
        let io = 1u64 << 20;
        let mut out = Vec::new();
        let mut carry = 0.0;
        let n_fast = (fast_s * 100.0).round() as usize;
        let n = n_fast + (slow_s * 100.0).round() as usize;
        for i in 0..n {
            let rate = if i < n_fast { fast } else { slow };
            carry += rate * 1e6 / 100.0;
            let whole = (carry / io as f64).floor();
            carry -= whole * io as f64;
            out.push(whole as u64 * io);
        }
        out
    }

    #[test]
    fn a_cache_filled_in_a_fifth_of_a_second_is_found() {
        // 1,600 MB/s for 0.2 s (320 MB), then 200 MB/s: invisible in 1 s samples.
        let b = buckets(1600.0, 0.2, 200.0, 3.0);
        let c = cache_cliff_fine(&b, B, 1 << 20, 0);
        assert!(c.detected, "{c:?}");
        let cache = c.cache_bytes.unwrap() as f64;
        assert!((cache / 320e6 - 1.0).abs() < 0.1, "{cache}");
        assert!((c.post_mbps.unwrap() / 200.0 - 1.0).abs() < 0.15, "{c:?}");
    }

    #[test]
    fn flat_noisy_and_stalled_runs_have_no_cliff() {
        let flat = buckets(300.0, 2.0, 300.0, 2.0);
        assert!(!cache_cliff_fine(&flat, B, 1 << 20, 0).detected);
        // GC stalls: 50 ms of nothing every 500 ms.
        let mut gc = buckets(300.0, 2.0, 300.0, 2.0);
        for i in (0..gc.len()).filter(|i| i % 50 < 5) {
            gc[i] = 0;
        }
        assert!(!cache_cliff_fine(&gc, B, 1 << 20, 0).detected);
        // A stall at the very end is not a level.
        let mut end = buckets(300.0, 4.0, 300.0, 0.0);
        let n = end.len();
        for b in &mut end[n - 6..] {
            *b = 0;
        }
        end.push(1 << 20);
        assert!(!cache_cliff_fine(&end, B, 1 << 20, 0).detected);
        // A sawtooth (throttle on and off) is not a cache.
        let mut saw = Vec::new();
        for _ in 0..6 {
            saw.extend(buckets(300.0, 0.4, 60.0, 0.4));
        }
        assert!(!cache_cliff_fine(&saw, B, 1 << 20, 0).detected);
        assert_eq!(
            cache_cliff_fine(&[1, 2, 3], B, 1, 0).verdict,
            Verdict::NotEnoughData
        );
    }

    #[test]
    fn gaps_are_runs_of_empty_buckets_inside_the_workload() {
        let mut b = vec![5u64; 100];
        for x in &mut b[20..35] {
            *x = 0; // 150 ms
        }
        for x in &mut b[50..55] {
            *x = 0; // 50 ms: below the threshold
        }
        b[0] = 0; // start-up
        b[98] = 0;
        b[99] = 0; // drain
        let g = gaps(&b, B, 1_000_000_000, 100_000_000);
        assert_eq!(g.len(), 1, "{g:?}");
        assert!((g[0].start_s - 1.2).abs() < 1e-9 && (g[0].ms - 150.0).abs() < 1e-9);
    }

    #[test]
    fn windows_add_up_and_carry_the_temperature() {
        let b = vec![10u64; 25];
        let temps = [
            TempPoint { at_ms: 0, c: 40.0 },
            TempPoint {
                at_ms: 100,
                c: 41.0,
            },
        ];
        let w = windows(&b, B, 10, 0, true, 5, &temps);
        assert_eq!(w.len(), 3);
        assert_eq!(w[2].end_ns - w[2].start_ns, 50_000_000);
        assert_eq!(w.iter().map(|s| s.write.bytes).sum::<u64>(), 250);
        assert_eq!(w[2].write.cum_bytes, 250);
        assert_eq!(w[0].write.ios, 20);
        assert_eq!((w[0].temp_c, w[1].temp_c), (Some(41.0), Some(41.0)));
    }
}
