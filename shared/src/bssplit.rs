//! A mix of I/O sizes (fio's `bssplit`): each I/O's length is drawn from the mix, so one
//! job issues 4 KiB and 64 KiB requests in the shares a real workload has (JESD219's
//! endurance workload, Iometer access specifications). Offsets stay aligned to the
//! smallest size, as fio's default `blockalign` is.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// The length of an I/O of a size range `min..=max` from a draw `r` in `0..max`, as fio's
/// `bsrange` makes it: `min + r` rounded down to a multiple of `min`, at most `max`. Over
/// uniform draws the sizes are the multiples of `min` up to `max`, each as likely (and
/// `max` itself, less often, when it is not a multiple).
#[inline]
pub fn range_size(min: u64, max: u64, r: u64) -> u64 {
    let x = min + r;
    (x - x % min).min(max)
}

/// `MIN-MAX` (or fio's `MIN:MAX`), sizes read by `size`: a range of I/O sizes.
pub fn parse_range(
    s: &str,
    size: impl Fn(&str) -> Result<u64, String>,
) -> Result<(u64, u64), String> {
    let (lo, hi) = s
        .split_once('-')
        .or_else(|| s.split_once(':'))
        .ok_or_else(|| format!("invalid size range '{s}': expected MIN-MAX, e.g. 4K-64K"))?;
    let (lo, hi) = (size(lo.trim())?, size(hi.trim())?);
    if hi < lo {
        return Err(format!(
            "invalid size range '{s}': the largest size is below the smallest"
        ));
    }
    Ok((lo, hi))
}

/// The mean length of a size range's I/Os ([`range_size`] over every draw).
pub fn range_mean(min: u64, max: u64) -> f64 {
    if min == 0 || max <= min {
        return min as f64;
    }
    let (m, rem) = ((max / min) as f64, (max % min) as f64);
    let (min, max) = (min as f64, max as f64);
    (min * min * m * (m + 1.0) / 2.0 + rem * max) / max
}

/// I/O sizes and the percentage of I/Os of each; percentages add up to 100.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BsSplit(pub Vec<(u64, u8)>);

/// fio's limit on the sizes of a split.
pub const MAX_SIZES: usize = 64;

impl BsSplit {
    /// The smallest size (the offset alignment), bytes.
    pub fn min(&self) -> u64 {
        self.0.iter().map(|&(b, _)| b).min().unwrap_or(0)
    }

    /// The largest size (a buffer's), bytes.
    pub fn max(&self) -> u64 {
        self.0.iter().map(|&(b, _)| b).max().unwrap_or(0)
    }

    /// The mean I/O size, bytes.
    pub fn mean(&self) -> f64 {
        self.0
            .iter()
            .map(|&(b, p)| b as f64 * f64::from(p) / 100.0)
            .sum()
    }

    /// Why the split cannot run, if it cannot: 1 to 64 sizes within `min..=max` bytes
    /// (multiples of 512 with O_DIRECT), every share above 0, the shares adding up to 100.
    pub fn check(&self, min: u64, max: u64, direct: bool) -> Result<(), String> {
        let n = self.0.len();
        if n == 0 || n > MAX_SIZES {
            return Err(format!("{n} sizes: 1 to {MAX_SIZES} are allowed"));
        }
        for &(b, p) in &self.0 {
            if !(min..=max).contains(&b) {
                return Err(format!("size {b}: block sizes must be {min} B..{max} B"));
            }
            if direct && b % 512 != 0 {
                return Err(format!(
                    "size {b}: with O_DIRECT every size must be a multiple of 512"
                ));
            }
            if p == 0 {
                return Err(format!("size {b} has a share of 0 %"));
            }
        }
        let total: u32 = self.0.iter().map(|&(_, p)| u32::from(p)).sum();
        if total != 100 {
            return Err(format!("the shares add up to {total} %, not 100"));
        }
        Ok(())
    }

    /// `s` as fio writes a split (`4k/10:64k/50:32k/`), sizes read by `size`: a share left
    /// empty takes an equal part of what the others leave of 100 %.
    pub fn parse_with(s: &str, size: impl Fn(&str) -> Result<u64, String>) -> Result<Self, String> {
        let bad = |why: String| format!("invalid bssplit '{s}': {why}");
        if s.contains(',') {
            return Err(bad(
                "one split per value (the writes' own go in write_bssplit, --write-bs)".into(),
            ));
        }
        let mut sizes = Vec::new();
        let mut open = Vec::new();
        for part in s.split(':') {
            let (b, p) = part.split_once('/').unwrap_or((part, ""));
            let b = size(b.trim()).map_err(|e| bad(format!("size '{b}': {e}")))?;
            let p = p.trim();
            if p.is_empty() {
                open.push(sizes.len());
                sizes.push((b, 0u8));
            } else {
                let p: u8 = p
                    .parse()
                    .ok()
                    .filter(|p| *p <= 100)
                    .ok_or_else(|| bad(format!("share '{p}' is not a whole percentage")))?;
                sizes.push((b, p));
            }
        }
        if !open.is_empty() {
            let given: u32 = sizes.iter().map(|&(_, p)| u32::from(p)).sum();
            let left = 100u32.saturating_sub(given);
            let each = left / open.len() as u32;
            for (k, &i) in open.iter().enumerate() {
                // The first ones take what an uneven division leaves.
                let extra = u32::from((k as u32) < left % open.len() as u32);
                sizes[i].1 = (each + extra) as u8;
            }
        }
        Ok(BsSplit(sizes))
    }
}

impl fmt::Display for BsSplit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (b, p)) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(":")?;
            }
            write!(f, "{}/{p}", crate::units::size_short(*b))?;
        }
        Ok(())
    }
}

impl FromStr for BsSplit {
    type Err = String;
    /// `4K/10:64K/50:32K/40` (sizes as `--bs` takes them).
    fn from_str(s: &str) -> Result<Self, String> {
        BsSplit::parse_with(s, |v| {
            crate::units::parse_size(v).map_err(|e| e.to_string())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_draws_fios_sizes_and_its_mean_is_theirs() {
        for (min, max) in [
            (4096u64, 16384u64),
            (4096, 10240),
            (512, 65536),
            (3000, 7000),
        ] {
            let mut counts = std::collections::BTreeMap::new();
            let mut sum = 0u64;
            for r in 0..max {
                let len = range_size(min, max, r);
                assert!(len >= min && len <= max, "{min}-{max}: {len}");
                assert!(len.is_multiple_of(min) || len == max);
                *counts.entry(len).or_insert(0u64) += 1;
                sum += len;
            }
            let mean = sum as f64 / max as f64;
            assert!((range_mean(min, max) - mean).abs() < 1e-6, "{min}-{max}");
            if max.is_multiple_of(min) {
                assert_eq!(counts.len() as u64, max / min);
                assert!(counts.values().all(|&c| c == min), "uniform over multiples");
            }
        }
        // 4k-10k: 4k and 8k 40 % each, 10k (12k capped) 20 %.
        assert!((range_mean(4096, 10240) - 6963.2).abs() < 1e-6);
    }

    #[test]
    fn splits_parse_as_fio_writes_them() {
        let s: BsSplit = "4k/10:64k/50:32k/40".parse().expect("HOWTO");
        assert_eq!(s.0, vec![(4096, 10), (65536, 50), (32768, 40)]);
        assert_eq!(s.to_string(), "4K/10:64K/50:32K/40");
        assert_eq!(s.to_string().parse::<BsSplit>(), Ok(s.clone()));
        assert_eq!((s.min(), s.max()), (4096, 65536));
        assert!((s.mean() - (409.6 + 32768.0 + 13107.2)).abs() < 1e-9);
        // Empty shares split what is left: fio's "4k/50:1k/:32k/".
        let s: BsSplit = "4k/50:1k/:32k/".parse().expect("empty shares");
        assert_eq!(s.0, vec![(4096, 50), (1024, 25), (32768, 25)]);
        let s: BsSplit = "4k/:8k/:16k/".parse().expect("uneven");
        assert_eq!(s.0, vec![(4096, 34), (8192, 33), (16384, 33)]);
        assert_eq!(s.check(512, 1 << 26, true), Ok(()));
        for (text, why) in [
            ("4k/50:8k/40", "add up to 90 %"),
            ("4k/50:8k/50:16k/0", "share of 0 %"),
            ("4k/150", "'150' is not a whole percentage"),
            ("4k/50,8k/50", "one split per value"),
            ("lots/100", "size 'lots'"),
            ("1000/100", "multiple of 512"),
        ] {
            let e = text
                .parse::<BsSplit>()
                .and_then(|s| s.check(512, 1 << 26, true));
            assert!(e.is_err_and(|e| e.contains(why)), "{text}");
        }
        let json = serde_json::to_string(&BsSplit(vec![(4096, 60), (65536, 40)]));
        assert_eq!(json.expect("json"), "[[4096,60],[65536,40]]");
    }
}
