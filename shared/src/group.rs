//! A group run: one workload started on several agents at a shared start time, its samples
//! added up on the shared clock (what fio's `--client` "All clients" and elbencho's
//! `--hosts` give). A group's members (`CreateRun::agents`), the clock exchange each member
//! answers (`GET /api/v1/clock`), and what the merged result says about its hosts.

use serde::{Deserialize, Serialize};

/// Most agents one group starts.
pub const MAX_MEMBERS: usize = 64;
/// Most time a run may be asked to wait for its start (`CreateRun::start_at_ms`).
pub const MAX_START_WAIT_MS: u64 = 60_000;
/// Default lead from the group's start request to its shared start.
pub const DEFAULT_LEAD_MS: u64 = 2_000;
/// Default limit on a member's clock offset from the coordinator's.
pub const DEFAULT_MAX_OFFSET_MS: u64 = 500;

/// One agent of a group: its address and its operator token.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Member {
    /// The agent's URL, e.g. `http://capture-box:7878`.
    pub address: String,
    pub token: String,
    /// Its own target, when not the run's (each host's local disk, or shared storage
    /// mounted at another path).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
}

/// What a group does when a member fails or drops off mid-run.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum OnFault {
    /// The others go on; the member is marked gone at the time it left.
    #[default]
    Continue,
    /// Every other member is stopped too.
    Stop,
}

impl OnFault {
    pub fn is_default(&self) -> bool {
        *self == OnFault::Continue
    }
}

/// `GET /api/v1/clock`: the agent's wall clock when the request arrived and when the answer
/// left, in ns since the Unix epoch (NTP's t2 and t3).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Clock {
    pub received_ns: u64,
    pub sent_ns: u64,
}

/// NTP's offset and round-trip delay from the four timestamps (ns): t1 the request left the
/// coordinator, t2 it reached the member, t3 the answer left the member, t4 it came back.
/// The offset is the member's clock minus the coordinator's; its error is at most half
/// the delay.
pub fn offset_and_delay(t1: u64, t2: u64, t3: u64, t4: u64) -> (i64, u64) {
    let (t1, t2, t3, t4) = (t1 as i128, t2 as i128, t3 as i128, t4 as i128);
    let offset = ((t2 - t1) + (t3 - t4)) / 2;
    let delay = ((t4 - t1) - (t3 - t2)).max(0);
    (offset as i64, delay as u64)
}

/// A merged figure over part of a group run: elbencho's first-done (until the first host
/// ended) and last-done (until the last did), and the stonewall (the intervals every host
/// was running in).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Figure {
    /// (Only `iops` is in the wasm build: the dashboard reads the files phases' pair.)
    #[cfg(not(target_arch = "wasm32"))]
    pub seconds: f64,
    #[cfg(not(target_arch = "wasm32"))]
    pub bytes: u64,
    #[cfg(not(target_arch = "wasm32"))]
    pub mb_s: f64,
    pub iops: f64,
}

#[cfg(not(target_arch = "wasm32"))]
impl Figure {
    /// `ops` operations moving `bytes` over `ns` nanoseconds.
    pub fn over(ns: u64, ops: u64, bytes: u64) -> Figure {
        let seconds = ns as f64 / 1e9;
        let per = |x: u64| {
            if seconds > 0.0 {
                x as f64 / seconds
            } else {
                0.0
            }
        };
        Figure {
            seconds,
            bytes,
            mb_s: per(bytes) / 1e6,
            iops: per(ops),
        }
    }
}

/// One member as the merged result tells of it.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Host {
    pub address: String,
    /// Its own run on its agent.
    pub run_id: Option<i64>,
    /// Its clock minus the coordinator's, and the round trip it was measured over (ms).
    pub offset_ms: f64,
    pub delay_ms: f64,
    /// When its run's clock started, on the shared clock, ms after the shared start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_ms: Option<f64>,
    /// It failed or dropped off: the time it left (ms after the shared start) and why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub left_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<String>,
}

/// What a group run adds to a run's result.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Group {
    /// The shared start, ms since the Unix epoch on the coordinator's clock.
    pub start_ms: u64,
    pub hosts: Vec<Host>,
    pub first_done: Figure,
    pub last_done: Figure,
    pub stonewall: Figure,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// NTP's arithmetic: a member 5 ms ahead over a 2 ms round trip (1 ms each way) with
    /// 0.5 ms spent answering.
    #[test]
    fn offset_and_delay_follow_ntp() {
        let ms = 1_000_000u64;
        let t1 = 1_000 * ms;
        let t2 = t1 + ms + 5 * ms;
        let t3 = t2 + ms / 2;
        let t4 = t1 + 2 * ms + ms / 2;
        assert_eq!(offset_and_delay(t1, t2, t3, t4), (5 * ms as i64, 2 * ms));
        // Behind: a negative offset.
        let (o, d) = offset_and_delay(t1, t1 + ms - 3 * ms, t1 + ms - 3 * ms, t1 + 2 * ms);
        assert_eq!((o, d), (-3 * ms as i64, 2 * ms));
    }
}
