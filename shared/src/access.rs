//! How random offsets are drawn (`random_distribution`, fio's option of the same name):
//! uniform over the span, or skewed so that some blocks are hot, as real workloads are.
//! The hot blocks lie at the start of the span (a file system's metadata and journal).

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// The distribution of random block numbers over the span.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Default)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
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
}

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
        }
    }
}

impl fmt::Display for Distribution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Distribution::Uniform => f.write_str("uniform"),
            Distribution::Zipf(t) => write!(f, "zipf:{t}"),
            Distribution::Pareto(h) => write!(f, "pareto:{h}"),
            Distribution::Normal(s) => write!(f, "normal:{s}"),
        }
    }
}

impl FromStr for Distribution {
    type Err = String;
    /// `uniform`, `zipf:THETA`, `pareto:H`, `normal:SIGMA`.
    fn from_str(s: &str) -> Result<Self, String> {
        let err = || {
            format!(
                "invalid distribution '{s}': expected uniform, zipf:THETA, pareto:H or normal:SIGMA"
            )
        };
        if s == "uniform" || s == "random" {
            return Ok(Distribution::Uniform);
        }
        let (name, v) = s.split_once(':').ok_or_else(err)?;
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
}
