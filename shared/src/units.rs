//! Parsing and formatting of sizes, rates and durations as users type them.
//!
//! Sizes: a bare number is bytes; `K`/`M`/`G`/`T` and `KiB`/`MiB`/`GiB`/`TiB` are binary
//! (1024-based, as in fio); `KB`/`MB`/`GB`/`TB` are decimal (1000-based, as in
//! CrystalDiskMark's MB/s). Durations: `500ms`, `10s`, `5m`, `1h`; a bare number is seconds.

use std::fmt;

/// Why a size or duration string could not be parsed; the message quotes the input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    pub input: String,
    pub expected: &'static str,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid value '{}': expected {}",
            self.input, self.expected
        )
    }
}

impl std::error::Error for ParseError {}

const SIZE_EXPECTED: &str = "a size such as 4096, 4K, 1MiB, 1GB (K/KiB = 1024, KB = 1000)";
const DURATION_EXPECTED: &str = "a duration such as 500ms, 10s, 5m or 1h";

fn split_number(s: &str) -> (&str, &str) {
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    (&s[..end], s[end..].trim())
}

/// Parses a byte count such as `4K`, `1MiB`, `3200MB` or `512`.
pub fn parse_size(input: &str) -> Result<u64, ParseError> {
    let err = || ParseError {
        input: input.to_string(),
        expected: SIZE_EXPECTED,
    };
    let s = input.trim();
    let (num, unit) = split_number(s);
    if num.is_empty() {
        return Err(err());
    }
    let mult: u64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kib" => 1 << 10,
        "m" | "mib" => 1 << 20,
        "g" | "gib" => 1 << 30,
        "t" | "tib" => 1 << 40,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        "tb" => 1_000_000_000_000,
        _ => return Err(err()),
    };
    if num.contains('.') {
        let v: f64 = num.parse().map_err(|_| err())?;
        let bytes = v * mult as f64;
        if !bytes.is_finite() || bytes < 0.0 || bytes > u64::MAX as f64 || bytes.fract() != 0.0 {
            return Err(err());
        }
        Ok(bytes as u64)
    } else {
        let v: u64 = num.parse().map_err(|_| err())?;
        v.checked_mul(mult).ok_or_else(err)
    }
}

/// Parses a duration such as `500ms`, `10s`, `5m` or `1h` into milliseconds.
pub fn parse_duration_ms(input: &str) -> Result<u64, ParseError> {
    let err = || ParseError {
        input: input.to_string(),
        expected: DURATION_EXPECTED,
    };
    let s = input.trim();
    let (num, unit) = split_number(s);
    if num.is_empty() {
        return Err(err());
    }
    let v: f64 = num.parse().map_err(|_| err())?;
    let ms_per_unit = match unit {
        "ms" => 1.0,
        "" | "s" => 1_000.0,
        "m" | "min" => 60_000.0,
        "h" => 3_600_000.0,
        _ => return Err(err()),
    };
    let ms = v * ms_per_unit;
    if !ms.is_finite() || ms < 0.0 || ms > u64::MAX as f64 {
        return Err(err());
    }
    Ok(ms.round() as u64)
}

/// A size as one would type it: `4K`, `1M`, `3G`, `512B` (binary multiples, parseable by
/// [`parse_size`]).
/// A latency as people write it: `500us` (or `µs`), `1ms`, `1.5ms`, `2s`; microseconds.
pub fn parse_latency_us(input: &str) -> Result<u64, String> {
    let t = input.trim();
    let err = || format!("invalid latency '{input}': expected e.g. 500us, 1ms, 1.5ms or 2s");
    let (num, scale) = if let Some(n) = t.strip_suffix("us").or_else(|| t.strip_suffix("µs")) {
        (n, 1.0)
    } else if let Some(n) = t.strip_suffix("ms") {
        (n, 1e3)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1e6)
    } else {
        return Err(err());
    };
    let v: f64 = num.trim().parse().map_err(|_| err())?;
    let us = v * scale;
    if !(1.0..=60e6).contains(&us) {
        return Err(format!("invalid latency '{input}': must be 1 µs..60 s"));
    }
    Ok(us.round() as u64)
}

pub fn size_short(bytes: u64) -> String {
    for (shift, unit) in [(40, "T"), (30, "G"), (20, "M"), (10, "K")] {
        if bytes != 0 && bytes.is_multiple_of(1 << shift) {
            return format!("{}{unit}", bytes >> shift);
        }
    }
    format!("{bytes}B")
}

/// Formats a byte count with a binary unit, e.g. `4 KiB`, `1.5 GiB`.
pub fn format_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 || v.fract() == 0.0 {
        format!("{v:.0} {}", UNITS[unit])
    } else {
        format!("{v:.2} {}", UNITS[unit])
    }
}

/// Seconds as `12 s`, `3.5 min` or `2.1 h`.
pub fn fmt_seconds(s: f64) -> String {
    if s >= 7200.0 {
        format!("{:.1} h", s / 3600.0)
    } else if s >= 300.0 {
        format!("{:.1} min", s / 60.0)
    } else if s < 20.0 && s.fract().abs() > 1e-9 {
        format!("{s:.1} s")
    } else {
        format!("{s:.0} s")
    }
}

/// Formats a duration in nanoseconds with a readable unit (`850 ns`, `12.3 µs`, `4.56 ms`).
pub fn format_ns(ns: u64) -> String {
    match ns {
        0..=999 => format!("{ns} ns"),
        1_000..=999_999 => format!("{:.1} µs", ns as f64 / 1e3),
        1_000_000..=999_999_999 => format!("{:.2} ms", ns as f64 / 1e6),
        _ => format!("{:.2} s", ns as f64 / 1e9),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        let check = |s: &str, want: u64| assert_eq!(parse_size(s), Ok(want), "{s}");
        check("4096", 4096);
        check("4K", 4096);
        check("4k", 4096);
        check("4KiB", 4096);
        check("1M", 1 << 20);
        check("1GiB", 1 << 30);
        check("2T", 2 << 40);
        check("3200MB", 3_200_000_000);
        check("1.5G", 3 << 29);
        check("512B", 512);
        for bad in ["", "K", "4X", "-1", "1.3B", "99999999999T"] {
            let e = parse_size(bad).expect_err(bad);
            assert!(e.to_string().contains(&format!("'{bad}'")), "{e}");
        }
    }

    #[test]
    fn durations() {
        let check = |s: &str, want: u64| assert_eq!(parse_duration_ms(s), Ok(want), "{s}");
        check("500ms", 500);
        check("10s", 10_000);
        check("10", 10_000);
        check("5m", 300_000);
        check("1h", 3_600_000);
        check("0.5s", 500);
        assert!(parse_duration_ms("5 parsecs").is_err());
        assert!(parse_duration_ms("").is_err());
    }

    #[test]
    fn formatting() {
        assert_eq!(format_bytes(4096), "4 KiB");
        assert_eq!(format_bytes(1536 << 20), "1.50 GiB");
        assert_eq!(format_ns(850), "850 ns");
        assert_eq!(format_ns(12_345), "12.3 µs");
    }
}
