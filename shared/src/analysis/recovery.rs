//! Does an SLC cache come back while the drive idles? (The `cache-recovery` preset: write
//! past the cache, idle, write again.)
//!
//! Method: the cache cliff of the first write on the 10 ms timeline gives the cache and the
//! fast and slow levels. In the second write, the bytes written before the rate falls below
//! the midpoint of those levels are what the idle time gave back (the second write's own
//! cliff when it has one, else the bytes up to the first window below the midpoint, or all
//! of them if it never falls). Recovered share = those bytes over the first cache.

use super::{cache_cliff_fine, completion_unit, CacheCliff, CacheRecovery, Verdict};

/// One write phase's slice of the timeline.
pub struct Phase<'a> {
    pub buckets: &'a [u64],
    pub t0_ns: u64,
    pub end_ns: u64,
    pub io_bytes: u64,
}

pub fn cache_recovery(first: &Phase, second: &Phase, bucket_ns: u64) -> CacheRecovery {
    let c1 = cache_cliff_fine(first.buckets, bucket_ns, first.io_bytes, first.t0_ns);
    let c2 = cache_cliff_fine(second.buckets, bucket_ns, second.io_bytes, second.t0_ns);
    let idle_s = second.t0_ns.saturating_sub(first.end_ns) as f64 / 1e9;
    let mut out = CacheRecovery {
        verdict: Verdict::NotFound,
        idle_s,
        second_written_bytes: second.buckets.iter().sum(),
        first: c1.clone(),
        second: c2.clone(),
        recovered_bytes: None,
        recovered_share: None,
    };
    if c1.verdict == Verdict::NotEnoughData {
        out.verdict = Verdict::NotEnoughData;
        return out;
    }
    let (Some(cache), Some(pre), Some(post)) = (c1.cache_bytes, c1.pre_mbps, c1.post_mbps) else {
        return out;
    };
    if !c1.detected {
        return out;
    }
    let recovered = match c2 {
        CacheCliff {
            detected: true,
            cache_bytes: Some(b),
            ..
        } => b,
        _ => fast_bytes(second, bucket_ns, pre, post),
    };
    out.verdict = Verdict::Found;
    out.recovered_bytes = Some(recovered);
    out.recovered_share = Some(recovered as f64 / cache.max(1) as f64);
    out
}

/// Bytes of `p` written before the first window (of a few completions at the slow level)
/// whose rate is below `mid_mbps`; all of them when none is.
fn fast_bytes(p: &Phase, bucket_ns: u64, pre: f64, post: f64) -> u64 {
    let mid_mbps = (pre + post) / 2.0;
    let unit = completion_unit(p.buckets, p.io_bytes);
    let slow_bytes_per_bucket = post * bucket_ns as f64 / 1e3;
    let per = ((super::units_per_window(pre, post) * unit / slow_bytes_per_bucket.max(1.0)).ceil()
        as usize)
        .clamp(1, 1000);
    let mut done = 0u64;
    for w in p.buckets.chunks(per).filter(|w| w.len() == per) {
        let bytes: u64 = w.iter().sum();
        let mbps = bytes as f64 / (per as f64 * bucket_ns as f64) * 1e3;
        if mbps < mid_mbps {
            return done;
        }
        done += bytes;
    }
    p.buckets.iter().sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    const B: u64 = 10_000_000;

    /// 10 ms buckets of whole 1 MiB I/Os: `fast_bytes` at `fast` MB/s, then `slow` MB/s
    /// until `total` bytes.
    fn phase(fast: f64, fast_bytes: f64, slow: f64, total: f64) -> Vec<u64> {
        let io = 1u64 << 20;
        let (mut out, mut done, mut carry) = (Vec::new(), 0.0, 0.0);
        while done < total {
            let rate = if done < fast_bytes { fast } else { slow };
            carry += rate * 1e6 / 100.0;
            let whole = (carry / io as f64).floor();
            carry -= whole * io as f64;
            done += whole * io as f64;
            out.push(whole as u64 * io);
        }
        out
    }

    fn run(second_fast: f64) -> CacheRecovery {
        let a = phase(400.0, 300e6, 80.0, 600e6);
        let b = phase(400.0, second_fast, 80.0, 600e6);
        let end = a.len() as u64 * B;
        let t1 = end + 8_000_000_000;
        cache_recovery(
            &Phase {
                buckets: &a,
                t0_ns: 0,
                end_ns: end,
                io_bytes: 1 << 20,
            },
            &Phase {
                buckets: &b,
                t0_ns: t1,
                end_ns: t1 + b.len() as u64 * B,
                io_bytes: 1 << 20,
            },
            B,
        )
    }

    #[test]
    fn full_partial_and_no_recovery() {
        let full = run(300e6);
        assert_eq!(full.verdict, Verdict::Found, "{full:?}");
        assert!((full.idle_s - 8.0).abs() < 1e-9);
        let share = full.recovered_share.unwrap();
        assert!((share - 1.0).abs() < 0.1, "{share}");
        let half = run(150e6);
        let share = half.recovered_share.unwrap();
        assert!((share - 0.5).abs() < 0.1, "{share}");
        let none = run(0.0);
        let share = none.recovered_share.unwrap();
        assert!(share < 0.1, "{none:?}");
        assert!(!none.second.detected);
    }
}
