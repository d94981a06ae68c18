//! Why a run slowed down, from throughput and temperature together (the reviews' method:
//! per-second rate, drive temperature and write intervals on one plot).
//!
//! - `thermal`: at least two throughput drops (≥ 30 % below the level before them) that
//!   start while the temperature is within 3 °C of its maximum, with the temperature
//!   rising over at least 3 °C during the run: a sawtooth locked to a temperature plateau.
//! - `cache`: a cache cliff (one sustained step) with the temperature flat (range < 3 °C)
//!   or unknown.
//! - `gc`: three or more short dips (≥ 50 % below the median) at roughly regular intervals
//!   (spacing varies by less than half its mean), temperature flat or unknown.
//! - `none` otherwise.

use super::{mean, median, CacheCliff, Slowdown, Thermal, Verdict};
use crate::Sample;

pub fn thermal(samples: &[Sample], cliff: &CacheCliff) -> Thermal {
    let rate: Vec<f64> = samples.iter().map(Sample::total_mb_s).collect();
    let temps: Vec<f64> = samples.iter().filter_map(|s| s.temp_c).collect();
    let mut out = Thermal {
        samples_with_temperature: temps.len() as u64,
        ..Thermal::default()
    };
    if rate.len() < 6 {
        out.verdict = Verdict::NotEnoughData;
        out.reason = "fewer than 6 samples".into();
        return out;
    }
    let (tmin, tmax) = temps
        .iter()
        .fold((f64::MAX, f64::MIN), |(lo, hi), &t| (lo.min(t), hi.max(t)));
    if !temps.is_empty() {
        out.min_c = Some(tmin);
        out.max_c = Some(tmax);
        out.mean_c = Some(mean(&temps));
    }
    let flat = temps.is_empty() || tmax - tmin < 3.0;
    // Drops: a sample ≥ 30 % below the best of the 5 before it, counted once per episode.
    let mut drops_hot = 0u32;
    let mut drops = 0u32;
    let mut in_drop = false;
    for i in 1..rate.len() {
        let level = rate[i.saturating_sub(5)..i]
            .iter()
            .cloned()
            .fold(0.0, f64::max);
        let low = level > 0.0 && rate[i] < 0.7 * level;
        if low && !in_drop {
            drops += 1;
            if samples[i].temp_c.is_some_and(|t| t >= tmax - 3.0) {
                drops_hot += 1;
            }
        }
        in_drop = low;
    }
    out.drops = drops;
    if !flat && drops_hot >= 2 {
        out.classification = Slowdown::Thermal;
        out.reason =
            format!("{drops_hot} throughput drops while within 3 °C of the {tmax:.0} °C peak");
    } else if cliff.detected && flat {
        out.classification = Slowdown::Cache;
        out.reason = format!(
            "one sustained step after {} bytes with {}",
            cliff.cache_bytes.unwrap_or(0),
            if temps.is_empty() {
                "no temperature reported".to_string()
            } else {
                format!("temperature flat ({:.0}–{:.0} °C)", tmin, tmax)
            }
        );
    } else if flat {
        let med = median(&rate);
        let dips: Vec<usize> = (0..rate.len())
            .filter(|&i| rate[i] < 0.5 * med && (i == 0 || rate[i - 1] >= 0.5 * med))
            .collect();
        let gaps: Vec<f64> = dips.windows(2).map(|w| (w[1] - w[0]) as f64).collect();
        let regular = gaps.len() >= 2 && {
            let m = mean(&gaps);
            let sd =
                (gaps.iter().map(|g| (g - m) * (g - m)).sum::<f64>() / gaps.len() as f64).sqrt();
            m > 0.0 && sd < 0.5 * m
        };
        if dips.len() >= 3 && regular {
            out.classification = Slowdown::Gc;
            out.reason = format!(
                "{} dips below half the median rate at regular intervals",
                dips.len()
            );
        }
    }
    if out.classification == Slowdown::None {
        out.reason = if drops == 0 {
            "no slowdown".into()
        } else {
            format!("{drops} drops with no pattern")
        };
    }
    out.verdict = if out.classification == Slowdown::None {
        Verdict::NotFound
    } else {
        Verdict::Found
    };
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::cache_cliff;

    fn run(rates: &[f64], temps: Option<&[f64]>) -> Vec<Sample> {
        let mut s = crate::analysis::cliff::tests::writes(rates);
        if let Some(t) = temps {
            for (x, t) in s.iter_mut().zip(t) {
                x.temp_c = Some(*t);
            }
        }
        s
    }

    #[test]
    fn a_sawtooth_at_the_trip_point_is_thermal() {
        let mut rates = Vec::new();
        let mut temps = Vec::new();
        for cycle in 0..4 {
            for i in 0..6 {
                rates.push(1000.0);
                temps.push(
                    60.0 + if cycle == 0 {
                        i as f64 * 2.0
                    } else {
                        8.0 + i as f64 * 0.4
                    },
                );
            }
            for _ in 0..3 {
                rates.push(300.0);
                temps.push(70.0);
            }
        }
        let s = run(&rates, Some(&temps));
        let t = thermal(&s, &cache_cliff(&s));
        assert_eq!(t.classification, Slowdown::Thermal, "{t:?}");
    }

    #[test]
    fn a_step_with_flat_temperature_is_cache_and_regular_dips_are_gc() {
        let mut rates = vec![400.0; 8];
        rates.extend(vec![80.0; 10]);
        let temps = vec![40.0; 18];
        let s = run(&rates, Some(&temps));
        assert_eq!(
            thermal(&s, &cache_cliff(&s)).classification,
            Slowdown::Cache
        );
        let gc: Vec<f64> = (0..40)
            .map(|i| if i % 8 == 7 { 50.0 } else { 300.0 })
            .collect();
        let s = run(&gc, None);
        assert_eq!(thermal(&s, &cache_cliff(&s)).classification, Slowdown::Gc);
        let flat = run(&[300.0; 20], None);
        assert_eq!(
            thermal(&flat, &cache_cliff(&flat)).classification,
            Slowdown::None
        );
    }
}
