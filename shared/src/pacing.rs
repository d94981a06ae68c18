//! When a job issues its I/Os besides "as fast as the depth allows": how a rate cap spaces
//! them (fio's `rate_process`) and the think time an application spends between bursts
//! (fio's `thinktime`, `thinktime_spin`, `thinktime_blocks`, `thinktime_blocks_type`).

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// How a rate cap spaces the I/Os.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum RateProcess {
    /// Evenly: I/O n is due at n / rate from the job's start.
    #[default]
    Linear,
    /// Arrivals of a Poisson process with the rate as its mean: exponential gaps, as a
    /// population of independent clients makes (fio's `rate_process=poisson`).
    Poisson,
}

impl fmt::Display for RateProcess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RateProcess::Linear => "linear",
            RateProcess::Poisson => "poisson",
        })
    }
}

impl FromStr for RateProcess {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "linear" => Ok(RateProcess::Linear),
            "poisson" => Ok(RateProcess::Poisson),
            _ => Err(format!(
                "invalid rate process '{s}': expected linear or poisson"
            )),
        }
    }
}

/// Most microseconds a think can last (a minute).
pub const MAX_THINK_US: u64 = 60_000_000;

/// A pause after every `blocks` I/Os: the job lets what it has in flight complete, spins
/// the CPU for `spin_us`, then sleeps for the rest of `us` (fio's thinktime).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields, default)]
pub struct ThinkTime {
    /// The whole pause, µs (1..60 s).
    pub us: u64,
    /// The part of it spent spinning, µs (at most `us`).
    pub spin_us: u64,
    /// I/Os between pauses (1 by default).
    pub blocks: u32,
    /// Count the I/Os as they are issued rather than as they complete (fio's
    /// `thinktime_blocks_type=issue`; `complete` is its default).
    pub count_issued: bool,
}

impl Default for ThinkTime {
    fn default() -> Self {
        ThinkTime {
            us: 0,
            spin_us: 0,
            blocks: 1,
            count_issued: false,
        }
    }
}

impl ThinkTime {
    /// Why it cannot be kept, if it cannot.
    pub fn check(&self) -> Result<(), String> {
        if !(1..=MAX_THINK_US).contains(&self.us) {
            return Err(format!(
                "a think time must be 1 µs..{} s",
                MAX_THINK_US / 1_000_000
            ));
        }
        if self.spin_us > self.us {
            return Err(format!(
                "the spin ({} µs) is part of the think time ({} µs) and cannot exceed it",
                self.spin_us, self.us
            ));
        }
        if self.blocks == 0 {
            return Err("think after at least 1 block".into());
        }
        Ok(())
    }
}

impl fmt::Display for ThinkTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} µs every {} blocks", self.us, self.blocks)?;
        if self.spin_us > 0 {
            write!(f, " ({} µs spinning)", self.spin_us)?;
        }
        if self.count_issued {
            f.write_str(" counted at issue")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn processes_parse_and_think_times_check() {
        assert_eq!("poisson".parse(), Ok(RateProcess::Poisson));
        assert!("bursty"
            .parse::<RateProcess>()
            .is_err_and(|e| e.contains("'bursty'")));
        let t = ThinkTime {
            us: 1000,
            blocks: 4,
            ..ThinkTime::default()
        };
        assert_eq!(t.check(), Ok(()));
        assert_eq!(t.to_string(), "1000 µs every 4 blocks");
        for (bad, why) in [
            (ThinkTime { us: 0, ..t }, "1 µs..60 s"),
            (ThinkTime { spin_us: 2000, ..t }, "cannot exceed"),
            (ThinkTime { blocks: 0, ..t }, "at least 1 block"),
        ] {
            assert!(bad.check().is_err_and(|e| e.contains(why)), "{bad:?}");
        }
        let json = serde_json::to_string(&t).expect("json");
        assert_eq!(
            json,
            r#"{"us":1000,"spin_us":0,"blocks":4,"count_issued":false}"#
        );
    }
}
