//! How random offsets are drawn (`random_distribution`, fio's option of the same name):
//! uniform over the span, or skewed so that some blocks are hot, as real workloads are.
//! The hot blocks of zipf and pareto lie at the start of the span (a file system's metadata
//! and journal); zoned distributions say where, as fio's `zoned` and `zoned_abs` do: a share
//! of the accesses to each zone in turn from the start of the span, uniform within it.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// The distribution of random block numbers over the span.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Distribution {
    /// Every block equally likely.
    #[default]
    Uniform,
    /// Zipf with exponent theta (> 0): block k (from 0) is drawn in proportion to
    /// 1 / (k + 1)^theta.
    Zipf(f64),
    /// Pareto with h in (0, 1): the first (1 − h) of the span gets h of the I/Os (0.8: the
    /// 80/20 rule), as fio's `pareto:h`.
    Pareto(f64),
    /// Normal around the middle of the span with a standard deviation of sigma percent of
    /// the span (draws outside it are drawn again).
    Normal(f64),
    /// Zones from the start of the span, each `[access %, size %]`: that share of the
    /// accesses falls uniformly within the next that share of the span (fio's
    /// `zoned:60/10:30/20:8/30:2/40`). Accesses sum to 100; sizes to at most 100 (what is
    /// left at the end of the span is not accessed).
    Zoned(Vec<(u8, u8)>),
    /// As `Zoned` with each zone's size in bytes (fio's `zoned_abs:60/20G:30/100G`); the
    /// sizes must fit in the span.
    ZonedAbs(Vec<(u8, u64)>),
}

/// A zone of a zoned distribution laid over a span: `access_pct` of the accesses fall
/// uniformly on `len` units from `start` (bytes, or blocks once laid over blocks).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Zone {
    pub access_pct: u8,
    pub start: u64,
    pub len: u64,
}

/// fio's limit on the zones of a zoned distribution.
pub const MAX_ZONES: usize = 256;

impl Distribution {
    /// Why the parameter is out of range, if it is.
    pub fn check(&self) -> Result<(), String> {
        match *self {
            Distribution::Uniform => Ok(()),
            Distribution::Zipf(t) if t > 0.0 && t <= 100.0 => Ok(()),
            Distribution::Zipf(_) => Err("zipf's theta must be in (0, 100]".into()),
            Distribution::Pareto(h) if h > 0.0 && h < 1.0 => Ok(()),
            Distribution::Pareto(_) => Err("pareto's h must be in (0, 1), e.g. 0.8".into()),
            Distribution::Normal(s) if s > 0.0 && s <= 100.0 => Ok(()),
            Distribution::Normal(_) => {
                Err("normal's sigma is a percentage of the span, in (0, 100]".into())
            }
            Distribution::Zoned(ref z) => {
                check_zones(z.iter().map(|&(a, _)| a))?;
                if z.iter().any(|&(_, s)| s == 0) {
                    return Err("every zone needs a size above 0 %".into());
                }
                let total: u32 = z.iter().map(|&(_, s)| u32::from(s)).sum();
                if total > 100 {
                    return Err(format!(
                        "the zones' sizes add up to {total} %, more than the span"
                    ));
                }
                Ok(())
            }
            Distribution::ZonedAbs(ref z) => {
                check_zones(z.iter().map(|&(a, _)| a))?;
                if z.iter().any(|&(_, s)| s == 0) {
                    return Err("every zone needs a size above 0 bytes".into());
                }
                Ok(())
            }
        }
    }

    /// The zones in bytes over a span of `span` bytes, for the zoned distributions (None for
    /// the others); `Err` says how far they reach past the span.
    pub fn zones(&self, span: u64) -> Option<Result<Vec<Zone>, String>> {
        let sizes: Vec<(u8, u64)> = match self {
            Distribution::Zoned(z) => z
                .iter()
                .map(|&(a, pct)| (a, (u128::from(span) * u128::from(pct) / 100) as u64))
                .collect(),
            Distribution::ZonedAbs(z) => z.clone(),
            _ => return None,
        };
        let mut start = 0u64;
        let mut out = Vec::with_capacity(sizes.len());
        for (a, len) in sizes {
            let end = start.saturating_add(len);
            if end > span {
                return Some(Err(format!(
                    "the zones need {} bytes or more, the span holds {span}",
                    end
                )));
            }
            out.push(Zone {
                access_pct: a,
                start,
                len,
            });
            start = end;
        }
        Some(Ok(out))
    }
}

/// Access shares: 1 to 256 zones, each 0..100 %, adding up to 100 %.
fn check_zones(access: impl Iterator<Item = u8> + Clone) -> Result<(), String> {
    let n = access.clone().count();
    if n == 0 || n > MAX_ZONES {
        return Err(format!("{n} zones: 1 to {MAX_ZONES} are allowed"));
    }
    let total: u32 = access.map(u32::from).sum();
    if total != 100 {
        return Err(format!(
            "the zones' access shares add up to {total} %, not 100"
        ));
    }
    Ok(())
}

impl fmt::Display for Distribution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Distribution::Uniform => f.write_str("uniform"),
            Distribution::Zipf(t) => write!(f, "zipf:{t}"),
            Distribution::Pareto(h) => write!(f, "pareto:{h}"),
            Distribution::Normal(s) => write!(f, "normal:{s}"),
            Distribution::Zoned(z) => {
                f.write_str("zoned")?;
                for (a, s) in z {
                    write!(f, ":{a}/{s}")?;
                }
                Ok(())
            }
            Distribution::ZonedAbs(z) => {
                f.write_str("zoned_abs")?;
                for (a, s) in z {
                    write!(f, ":{a}/{}", crate::units::size_short(*s))?;
                }
                Ok(())
            }
        }
    }
}

impl FromStr for Distribution {
    type Err = String;
    /// `uniform`, `zipf:THETA`, `pareto:H`, `normal:SIGMA`, `zoned:A/S[:A/S…]` (access and
    /// size in whole percent; the last size may be left empty for the rest of the span),
    /// `zoned_abs:A/SIZE[:A/SIZE…]` (sizes such as `1G`).
    fn from_str(s: &str) -> Result<Self, String> {
        Distribution::parse_with(s, |v| {
            crate::units::parse_size(v).map_err(|e| e.to_string())
        })
    }
}

impl Distribution {
    /// As `from_str`, with `size` reading `zoned_abs`'s sizes (fio's job files have their
    /// own units).
    pub fn parse_with(s: &str, size: impl Fn(&str) -> Result<u64, String>) -> Result<Self, String> {
        let err = || {
            format!(
                "invalid distribution '{s}': expected uniform, zipf:THETA, pareto:H, normal:SIGMA, zoned:ACCESS%/SIZE%:… or zoned_abs:ACCESS%/SIZE:…"
            )
        };
        if s == "uniform" || s == "random" {
            return Ok(Distribution::Uniform);
        }
        let (name, v) = s.split_once(':').ok_or_else(err)?;
        if name == "zoned" || name == "zoned_abs" {
            if v.contains(',') {
                return Err(format!(
                    "invalid distribution '{s}': one set of zones here (the random_distribution option takes a set per direction)"
                ));
            }
            let d = zones(s, name == "zoned_abs", v, size)?;
            d.check()
                .map_err(|why| format!("invalid distribution '{s}': {why}"))?;
            return Ok(d);
        }
        let v: f64 = v.parse().map_err(|_| err())?;
        let d = match name {
            "zipf" => Distribution::Zipf(v),
            "pareto" => Distribution::Pareto(v),
            "normal" | "gauss" => Distribution::Normal(v),
            _ => return Err(err()),
        };
        d.check()
            .map_err(|why| format!("invalid distribution '{s}': {why}"))?;
        Ok(d)
    }
}

impl Distribution {
    /// As [`Distribution::parse_with`], and fio's per-direction zones: a zoned distribution
    /// with a comma (`zoned:READS,WRITES`, `zoned_abs:…,…`) gives the reads' zones and the
    /// writes' own; any other is one for both (`None`). A third set (trims') is refused.
    pub fn parse_per_direction(
        s: &str,
        size: impl Fn(&str) -> Result<u64, String>,
    ) -> Result<(Distribution, Option<Distribution>), String> {
        let Some((name, v)) = s
            .split_once(':')
            .filter(|(n, v)| matches!(*n, "zoned" | "zoned_abs") && v.contains(','))
        else {
            return Ok((Distribution::parse_with(s, size)?, None));
        };
        let sets: Vec<&str> = v.split(',').collect();
        if sets.len() > 2 {
            return Err(format!(
                "invalid distribution '{s}': zones for reads and writes only (trims take the reads')"
            ));
        }
        let reads = Distribution::parse_with(&format!("{name}:{}", sets[0]), &size)?;
        let writes = match sets[1].trim() {
            "" => None,
            w => Some(Distribution::parse_with(&format!("{name}:{w}"), &size)?),
        };
        Ok((reads, writes))
    }

    /// The text [`Distribution::parse_per_direction`] reads back: `zoned:R,W` (the writes'
    /// zones after the comma, without the name) when the writes have their own.
    pub fn per_direction_text(reads: &Distribution, writes: Option<&Distribution>) -> String {
        match writes {
            None => reads.to_string(),
            Some(w) => {
                let w = w.to_string();
                let list = w.split_once(':').map_or(w.as_str(), |(_, l)| l);
                format!("{reads},{list}")
            }
        }
    }
}

/// The `A/S:A/S…` list of a zoned distribution named in `whole` (for its messages).
fn zones(
    whole: &str,
    absolute: bool,
    list: &str,
    size: impl Fn(&str) -> Result<u64, String>,
) -> Result<Distribution, String> {
    let bad = |why: String| format!("invalid distribution '{whole}': {why}");
    let parts: Vec<&str> = list.split(':').collect();
    let mut pct = Vec::with_capacity(parts.len());
    let mut abs = Vec::with_capacity(parts.len());
    for (i, part) in parts.iter().enumerate() {
        let (a, sz) = part
            .split_once('/')
            .ok_or_else(|| bad(format!("zone '{part}' is not ACCESS/SIZE")))?;
        let a: u8 = a
            .trim()
            .parse()
            .ok()
            .filter(|a| *a <= 100)
            .ok_or_else(|| bad(format!("access share '{a}' is not a whole percentage")))?;
        let sz = sz.trim();
        if absolute {
            abs.push((
                a,
                size(sz).map_err(|e| bad(format!("zone size '{sz}': {e}")))?,
            ));
        } else if sz.is_empty() && i + 1 == parts.len() {
            let used: u32 = pct.iter().map(|&(_, s): &(u8, u8)| u32::from(s)).sum();
            pct.push((a, 100u32.saturating_sub(used) as u8));
        } else {
            let s: u8 = sz
                .parse()
                .ok()
                .filter(|s| *s <= 100)
                .ok_or_else(|| bad(format!("zone size '{sz}' is not a whole percentage")))?;
            pct.push((a, s));
        }
    }
    Ok(if absolute {
        Distribution::ZonedAbs(abs)
    } else {
        Distribution::Zoned(pct)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distributions_parse_print_and_check() {
        for s in ["uniform", "zipf:1.2", "pareto:0.8", "normal:5"] {
            let d: Distribution = s.parse().expect(s);
            assert_eq!(d.to_string(), s);
        }
        assert!("zipf:0"
            .parse::<Distribution>()
            .is_err_and(|e| e.contains("theta")));
        assert!("pareto:1"
            .parse::<Distribution>()
            .is_err_and(|e| e.contains("(0, 1)")));
        assert!("lognormal:2".parse::<Distribution>().is_err());
        let json = serde_json::to_string(&Distribution::Zipf(1.2)).expect("json");
        assert_eq!(json, r#"{"zipf":1.2}"#);
    }

    #[test]
    fn zoned_distributions_parse_as_fio_reads_them() {
        // fio's examples: rand-zones.fio leaves the last size empty for the rest.
        let d: Distribution = "zoned:50/5:30/15:20/".parse().expect("rand-zones.fio");
        assert_eq!(d, Distribution::Zoned(vec![(50, 5), (30, 15), (20, 80)]));
        assert_eq!(d.to_string(), "zoned:50/5:30/15:20/80");
        let d: Distribution = "zoned:60/10:30/20:8/30:2/40".parse().expect("HOWTO");
        assert_eq!(d.to_string(), "zoned:60/10:30/20:8/30:2/40");
        let d: Distribution = "zoned_abs:60/20G:30/100G:10/500g".parse().expect("HOWTO");
        assert_eq!(
            d,
            Distribution::ZonedAbs(vec![(60, 20 << 30), (30, 100 << 30), (10, 500 << 30)])
        );
        assert_eq!(d.to_string(), "zoned_abs:60/20G:30/100G:10/500G");
        assert_eq!(d.to_string().parse::<Distribution>(), Ok(d));
        let json = serde_json::to_string(&Distribution::Zoned(vec![(50, 5), (50, 95)]));
        assert_eq!(json.expect("json"), r#"{"zoned":[[50,5],[50,95]]}"#);
        // What fio refuses, refused naming the reason (fio 3.33: "access percentage don't
        // add up to 100", "zone_split percentages add to more than 100%").
        for (s, why) in [
            ("zoned:50/5:30/15", "add up to 80 %, not 100"),
            ("zoned:50/5:30/15:20/90", "sizes add up to 110 %"),
            ("zoned:50.5/5:49.5/95", "'50.5' is not a whole percentage"),
            ("zoned:100/0", "size above 0"),
            ("zoned:100", "'100' is not ACCESS/SIZE"),
            ("zoned:50/5:50/95,100/100", "a set per direction"),
            ("zoned_abs:100/lots", "zone size 'lots'"),
        ] {
            let e = s.parse::<Distribution>().expect_err(s);
            assert!(e.contains(why) && e.contains(s), "{s}: {e}");
        }
        // fio's per-direction zones (its rand-zones.fio example's second line): the reads'
        // set, then the writes' after a comma, the name once; a third set is refused.
        let size = |v: &str| crate::units::parse_size(v).map_err(|e| e.to_string());
        let (r, w) = Distribution::parse_per_direction("zoned:50/5:30/15:20/,50/10:50/90", size)
            .expect("per direction");
        assert_eq!(r, Distribution::Zoned(vec![(50, 5), (30, 15), (20, 80)]));
        assert_eq!(w, Some(Distribution::Zoned(vec![(50, 10), (50, 90)])));
        let text = Distribution::per_direction_text(&r, w.as_ref());
        assert_eq!(text, "zoned:50/5:30/15:20/80,50/10:50/90");
        assert_eq!(Distribution::parse_per_direction(&text, size), Ok((r, w)));
        let (r, w) = Distribution::parse_per_direction("zoned_abs:60/4M:40/8M,100/1M", size)
            .expect("absolute");
        assert_eq!(
            (r, w),
            (
                Distribution::ZonedAbs(vec![(60, 4 << 20), (40, 8 << 20)]),
                Some(Distribution::ZonedAbs(vec![(100, 1 << 20)]))
            )
        );
        assert_eq!(
            Distribution::parse_per_direction("zipf:1.2", size),
            Ok((Distribution::Zipf(1.2), None))
        );
        for (s, why) in [
            ("zoned:100/100,100/100,100/100", "trims take the reads'"),
            ("zoned:100/100,50/5", "add up to 50 %"),
        ] {
            let e = Distribution::parse_per_direction(s, size).expect_err(s);
            assert!(e.contains(why), "{s}: {e}");
        }
        let many = format!("zoned{}", ":0/0".repeat(300));
        assert!(many
            .parse::<Distribution>()
            .is_err_and(|e| e.contains("300 zones")));
    }

    #[test]
    fn zones_lie_from_the_start_of_the_span() {
        let z = |access_pct, start, len| Zone {
            access_pct,
            start,
            len,
        };
        let d = Distribution::Zoned(vec![(50, 5), (30, 15), (20, 70)]);
        assert_eq!(
            d.zones(1000).expect("zoned"),
            Ok(vec![z(50, 0, 50), z(30, 50, 150), z(20, 200, 700)])
        );
        let d = Distribution::ZonedAbs(vec![(60, 100), (40, 900)]);
        assert_eq!(
            d.zones(1000).expect("zoned"),
            Ok(vec![z(60, 0, 100), z(40, 100, 900)])
        );
        assert!(d
            .zones(999)
            .expect("zoned")
            .is_err_and(|e| e.contains("1000 bytes")));
        assert_eq!(Distribution::Zipf(1.0).zones(1000), None);
    }
}
