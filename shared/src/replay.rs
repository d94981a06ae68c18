//! What a trace replay asks for (`--replay`, API `"replay"`): which trace, and how its
//! I/Os are timed. The trace itself is read by the agent; the spec's `rw` and `bs` then
//! follow from it (the directions it holds, its largest I/O).

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Most I/Os in flight in a replay.
pub const MAX_REPLAY_DEPTH: u32 = 256;
/// Depth a recorded-timing replay keeps at most in flight unless the spec asks for more:
/// I/Os due while every slot is busy wait (and count as late).
pub const RECORDED_DEPTH: u32 = 64;
/// Idle gaps longer than this are shortened to it in recorded timing unless asked
/// otherwise.
pub const DEFAULT_IDLE_MAX_MS: u64 = 10;
/// Most milliseconds an idle gap can be kept.
pub const MAX_IDLE_MAX_MS: u64 = 3_600_000;
/// Replay speeds accepted (`--replay-speed`).
pub const SPEED_RANGE: (f64, f64) = (0.01, 1000.0);
/// Longest trace name or path.
pub const MAX_TRACE_NAME: usize = 4096;

/// How a replay times its I/Os.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Timing {
    /// Each I/O issued at its recorded time (divided by `speed`), idle gaps compressed.
    Recorded,
    /// As fast as possible, in order, at the spec's `iodepth`.
    Afap,
}

impl fmt::Display for Timing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Timing::Recorded => "recorded",
            Timing::Afap => "afap",
        })
    }
}

impl FromStr for Timing {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "recorded" => Ok(Timing::Recorded),
            "afap" => Ok(Timing::Afap),
            _ => Err(format!(
                "unknown replay timing '{s}' (expected recorded or afap)"
            )),
        }
    }
}

/// A replay request.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ReplaySpec {
    /// A built-in trace (`app-build`, ...), a trace in the agent's trace directory, or (CLI
    /// only) a file path.
    pub trace: String,
    /// `None`: recorded when the trace has timestamps, else as fast as possible.
    #[serde(default)]
    pub timing: Option<Timing>,
    /// Recorded timing sped up (2 = twice as fast); implies recorded timing.
    #[serde(default)]
    pub speed: Option<f64>,
    /// Recorded timing: idle gaps over this many ms are shortened to it (0 keeps every gap
    /// as recorded). Default [`DEFAULT_IDLE_MAX_MS`].
    #[serde(default, deserialize_with = "crate::lenient::opt_ms")]
    #[cfg_attr(
        feature = "schema",
        schemars(schema_with = "crate::lenient::schema::opt_ms")
    )]
    pub idle_max_ms: Option<u64>,
}

impl ReplaySpec {
    pub fn new(trace: &str) -> ReplaySpec {
        ReplaySpec {
            trace: trace.into(),
            timing: None,
            speed: None,
            idle_max_ms: None,
        }
    }

    /// The timing for a trace that has (or lacks) timestamps.
    pub fn timing_for(&self, timed: bool) -> Timing {
        match (self.timing, self.speed) {
            (Some(t), _) => t,
            (None, Some(_)) => Timing::Recorded,
            (None, None) if timed => Timing::Recorded,
            (None, None) => Timing::Afap,
        }
    }

    /// The problems with the request, as (field, value, why).
    pub fn problems(&self) -> Vec<(&'static str, String, String)> {
        let mut out = Vec::new();
        if self.trace.is_empty() || self.trace.len() > MAX_TRACE_NAME || self.trace.contains('\0') {
            out.push((
                "replay",
                self.trace.chars().take(64).collect(),
                format!("a trace name or path of 1..{MAX_TRACE_NAME} bytes"),
            ));
        }
        if let Some(s) = self.speed {
            if !(SPEED_RANGE.0..=SPEED_RANGE.1).contains(&s) || !s.is_finite() {
                out.push((
                    "replay_speed",
                    s.to_string(),
                    format!("must be {}..{}", SPEED_RANGE.0, SPEED_RANGE.1),
                ));
            }
            if self.timing == Some(Timing::Afap) {
                out.push((
                    "replay_speed",
                    s.to_string(),
                    "scales recorded timing; afap has none".into(),
                ));
            }
        }
        if let Some(ms) = self.idle_max_ms {
            if ms > MAX_IDLE_MAX_MS {
                out.push((
                    "replay_idle_max_ms",
                    ms.to_string(),
                    format!("must be 0..{MAX_IDLE_MAX_MS}"),
                ));
            }
        }
        out
    }
}
