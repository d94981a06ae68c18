//! Min/max downsampling for charts: a series of any length becomes at most two points per
//! pixel column (the smallest and the largest value in it, in time order), so a 24-hour run
//! at 1 s intervals draws as fast as a short one and no spike or dip disappears.

/// Reduces `points` (x ascending) to at most `2 * buckets` points.
pub fn min_max(points: &[(f64, f64)], buckets: usize) -> Vec<(f64, f64)> {
    if buckets == 0 || points.len() <= 2 * buckets {
        return points.to_vec();
    }
    let (x0, x1) = (points[0].0, points[points.len() - 1].0);
    let width = (x1 - x0).max(f64::MIN_POSITIVE);
    let mut out = Vec::with_capacity(2 * buckets);
    let mut i = 0;
    for b in 0..buckets {
        let end_x = x0 + width * (b + 1) as f64 / buckets as f64;
        let start = i;
        while i < points.len() && (points[i].0 <= end_x || b + 1 == buckets) {
            i += 1;
        }
        let chunk = &points[start..i];
        let (Some(lo), Some(hi)) = (
            chunk.iter().min_by(|a, b| a.1.total_cmp(&b.1)),
            chunk.iter().max_by(|a, b| a.1.total_cmp(&b.1)),
        ) else {
            continue;
        };
        if lo.0 <= hi.0 {
            out.extend([*lo, *hi]);
        } else {
            out.extend([*hi, *lo]);
        }
    }
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_extremes_and_bounds_the_size() {
        let mut pts: Vec<(f64, f64)> = (0..86_400).map(|i| (i as f64, 100.0)).collect();
        pts[40_000].1 = 0.0; // a one-second stall
        pts[70_000].1 = 900.0; // a spike
        let d = min_max(&pts, 800);
        assert!(d.len() <= 1600, "{}", d.len());
        assert!(d.iter().any(|p| p.1 == 0.0), "the stall survives");
        assert!(d.iter().any(|p| p.1 == 900.0), "the spike survives");
        assert!(d.windows(2).all(|w| w[0].0 <= w[1].0), "time order kept");
        assert_eq!(d.first().map(|p| p.0), Some(0.0));
    }

    #[test]
    fn short_series_pass_through() {
        let pts = vec![(0.0, 1.0), (1.0, 2.0)];
        assert_eq!(min_max(&pts, 100), pts);
    }
}
