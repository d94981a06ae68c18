//! SLC-cache cliff: the write rate steps down once and stays down.
//!
//! Method: over the write MB/s of the samples that wrote, find the single split that best
//! explains the series as two levels (largest drop of squared error). It is a cliff when the
//! later level is at most 80 % of the earlier one, at least 80 % of the samples before the
//! split are above the midpoint between the levels and at least 80 % after it are below (a
//! single dip or a noisy flat run fails this), the low level lasts at least 3 samples, and
//! it does not come back above the midpoint twice (a throttling sawtooth does).
//! The cache size is the bytes written before the split, refined inside the transition
//! sample by how far its rate lies between the two levels.

use super::{mean, CacheCliff, Prefix, Verdict};
use crate::Sample;

pub fn cache_cliff(samples: &[Sample]) -> CacheCliff {
    let w: Vec<&Sample> = samples.iter().filter(|s| s.write.ios > 0).collect();
    if w.len() < 6 {
        return CacheCliff {
            verdict: Verdict::NotEnoughData,
            ..CacheCliff::default()
        };
    }
    let x: Vec<f64> = w.iter().map(|s| s.write.mb_s).collect();
    // Prefix sums make every split's squared error O(1): the search is linear, so it can
    // run live in the browser on a day of samples.
    let p = Prefix::new(&x);
    let total_sse = p.sse(0, x.len());
    let mut best: Option<(usize, f64)> = None;
    for k in 2..=x.len() - 3 {
        let gain = total_sse - p.sse(0, k) - p.sse(k, x.len());
        if best.is_none_or(|(_, g)| gain > g) {
            best = Some((k, gain));
        }
    }
    let not_found = CacheCliff::default();
    let Some((k, _)) = best else { return not_found };
    // The transition sample (partly fast, partly slow) belongs to neither level.
    let (pre_s, post_s) = (&x[..k], &x[k..]);
    let pre0 = mean(pre_s);
    let post0 = mean(&post_s[1.min(post_s.len() - 1)..]);
    let transition = post_s[0] > post0 + 0.25 * (pre0 - post0);
    let post_level = if transition { &post_s[1..] } else { post_s };
    // The levels are bytes over time, so a short last interval (the drain at the end) or
    // bursty completions weigh by their length.
    let level = |from: usize, to: usize| {
        let (bytes, ns) = w[from..to].iter().fold((0u64, 0u64), |(b, t), s| {
            (b + s.write.bytes, t + (s.end_ns - s.start_ns))
        });
        if ns == 0 {
            0.0
        } else {
            bytes as f64 / 1e6 / (ns as f64 / 1e9)
        }
    };
    let post_from = if transition { k + 1 } else { k };
    let (pre, post) = (level(0, k), level(post_from, w.len()));
    if pre <= 0.0 || post_level.len() < 3 || post > 0.8 * pre {
        return CacheCliff {
            pre_mbps: Some(pre),
            post_mbps: Some(post),
            ratio: Some(post / pre.max(f64::MIN_POSITIVE)),
            ..not_found
        };
    }
    let mid = (pre + post) / 2.0;
    let above = pre_s.iter().filter(|v| **v > mid).count() as f64 / pre_s.len() as f64;
    let below = post_level.iter().filter(|v| **v < mid).count() as f64 / post_level.len() as f64;
    let confidence = above.min(below);
    // A cache does not come back while writes go on: samples back above the midpoint twice
    // or more mean a sawtooth (thermal throttling) or dips, not a cliff.
    let recovers = post_level.iter().filter(|v| **v > mid).count() >= 2;
    if above < 0.8 || below < 0.8 || recovers {
        return CacheCliff {
            confidence,
            pre_mbps: Some(pre),
            post_mbps: Some(post),
            ratio: Some(post / pre),
            ..not_found
        };
    }
    let before = w[k - 1].write.cum_bytes;
    let t = w[k];
    let cache_bytes = if transition {
        let secs = (t.end_ns - t.start_ns) as f64 / 1e9;
        let f = ((t.write.mb_s - post) / (pre - post)).clamp(0.0, 1.0);
        before + (f * pre * 1e6 * secs) as u64
    } else {
        before
    };
    let at_s = if transition {
        let f = ((t.write.mb_s - post) / (pre - post)).clamp(0.0, 1.0);
        (t.start_ns as f64 + f * (t.end_ns - t.start_ns) as f64) / 1e9
    } else {
        t.start_ns as f64 / 1e9
    };
    CacheCliff {
        verdict: Verdict::Found,
        detected: true,
        cache_bytes: Some(cache_bytes),
        at_s: Some(at_s),
        pre_mbps: Some(pre),
        post_mbps: Some(post),
        ratio: Some(post / pre),
        confidence,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Write samples of 1 s at the given MB/s, with cumulative bytes.
    pub fn writes(rates: &[f64]) -> Vec<Sample> {
        let mut cum = 0u64;
        rates
            .iter()
            .enumerate()
            .map(|(i, &r)| {
                let mut s = Sample {
                    seq: i as u64,
                    start_ns: i as u64 * 1_000_000_000,
                    end_ns: (i as u64 + 1) * 1_000_000_000,
                    ..Sample::default()
                };
                let bytes = (r * 1e6) as u64;
                cum += bytes;
                s.write.bytes = bytes;
                s.write.ios = bytes / 4096 + 1;
                s.write.mb_s = r;
                s.write.cum_bytes = cum;
                s
            })
            .collect()
    }

    #[test]
    fn finds_the_cache_and_the_post_cache_speed() {
        // 400 MB/s for 7.5 s (3 GB cache), then 80 MB/s: the BX200 of the reviews.
        let mut rates = vec![400.0; 7];
        rates.push(0.5 * 400.0 + 0.5 * 80.0);
        rates.extend([80.0, 82.0, 79.0, 81.0, 80.0, 78.0, 80.0]);
        let c = cache_cliff(&writes(&rates));
        assert!(c.detected, "{c:?}");
        let cache = c.cache_bytes.unwrap() as f64;
        assert!((cache - 3.0e9).abs() < 0.05e9, "cache {cache}");
        assert!((c.post_mbps.unwrap() - 80.0).abs() < 2.0);
        assert!((c.at_s.unwrap() - 7.5).abs() < 0.1);
        assert!(c.confidence > 0.9);
    }

    #[test]
    fn no_cliff_in_a_flat_run_or_a_single_dip() {
        let flat: Vec<f64> = (0..20).map(|i| 500.0 + (i % 3) as f64 * 10.0).collect();
        assert!(!cache_cliff(&writes(&flat)).detected);
        let mut dip = vec![500.0; 20];
        dip[10] = 50.0;
        assert!(!cache_cliff(&writes(&dip)).detected);
        let mut two_dips = vec![500.0; 20];
        two_dips[15] = 60.0;
        two_dips[16] = 60.0;
        assert!(
            !cache_cliff(&writes(&two_dips)).detected,
            "too short to be a level"
        );
        assert_eq!(
            cache_cliff(&writes(&[1.0, 2.0])).verdict,
            Verdict::NotEnoughData
        );
    }
}
