//! Dates for the history (UTC, as the agent stores them) and the date filter.

/// Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// Unix milliseconds as `2026-11-30 07:05 UTC`.
pub fn fmt_time_ms(ms: u64) -> String {
    let secs = (ms / 1000) as i64;
    let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
    let rem = secs.rem_euclid(86_400);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02} UTC",
        rem / 3600,
        rem / 60 % 60
    )
}

/// `YYYY-MM-DD` (an `<input type=date>` value) as Unix ms at 00:00 UTC.
pub fn parse_date_ms(s: &str) -> Result<u64, String> {
    let err = || format!("invalid date '{s}': expected YYYY-MM-DD");
    let mut it = s.trim().split('-');
    let mut next = || {
        it.next()
            .and_then(|p| p.parse::<i64>().ok())
            .ok_or_else(err)
    };
    let (y, m, d) = (next()?, next()?, next()?);
    if !(1970..=9999).contains(&y) || !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return Err(err());
    }
    Ok(days_from_civil(y, m, d) as u64 * 86_400_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_round_trip() {
        assert_eq!(fmt_time_ms(0), "1970-01-01 00:00 UTC");
        assert_eq!(fmt_time_ms(1_796_022_300_000), "2026-11-30 07:05 UTC");
        let ms = parse_date_ms("2026-11-30").expect("date");
        assert_eq!(fmt_time_ms(ms), "2026-11-30 00:00 UTC");
        assert!(parse_date_ms("2026-13-01")
            .unwrap_err()
            .contains("2026-13-01"));
        assert!(parse_date_ms("yesterday").is_err());
    }
}
