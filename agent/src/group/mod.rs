//! A group run: one workload on several agents at once, started at a shared time and
//! merged into one result, as fio's `--client` and elbencho's `--hosts` do, through the
//! agents' own API. The coordinator (the hub's `POST /api/v1/groups`, or the CLI's
//! `diskscope run --agent A --agent B`) measures each member's clock over the API (NTP's
//! four timestamps), refuses a member too far off, starts the run on each with
//! `start_at_ms` in that member's clock, follows each member's live stream on its own
//! thread and merges them with the very code that merges a local run's targets
//! (`measure::merge_parts`): per-interval sums, the exact merge of the histograms, a part
//! per host. A member that fails or drops off ends its part where it left; the others go
//! on (or are stopped, `on_fault = stop`).

mod follow;
mod merge;

use crate::client::Remote;
use crate::measure::MeasureError;
use crate::runner::Observer;
use shared::api::CreateRun;
use shared::group::{Host, OnFault, DEFAULT_LEAD_MS, DEFAULT_MAX_OFFSET_MS};
use shared::group::{MAX_MEMBERS, MAX_START_WAIT_MS};
use shared::{RunReport, WorkloadSpec};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Clock exchanges per member; the one with the shortest round trip counts.
const CLOCK_ROUNDS: usize = 8;
/// The shortest lead a group may ask for.
const MIN_LEAD_MS: u64 = 200;

/// Why a group did not start (nothing runs on any member after one of these).
#[derive(Debug, thiserror::Error)]
pub enum GroupError {
    #[error("a group runs on 1 to {MAX_MEMBERS} agents, not {0}")]
    Members(usize),
    #[error("agent {0} is listed twice")]
    Repeated(String),
    #[error("agent {0:?}: give its URL as http://HOST:PORT or https://HOST:PORT")]
    Address(String),
    #[error("lead_ms = {0}: {MIN_LEAD_MS} to {MAX_START_WAIT_MS}")]
    Lead(u64),
    #[error("max_offset_ms = {0}: at most {MAX_START_WAIT_MS}")]
    MaxOffset(u64),
    #[error("start_at_ms is the group's to set (its shared start): leave it out")]
    StartAt,
    #[error("a flush check runs on one agent: witness_token is not sent to a group's members")]
    Witness,
    #[error("agent {address}: {message}")]
    Unreachable { address: String, message: String },
    #[error("agent {address}: its clock is {offset_ms:.1} ms off the coordinator's (measured over a {delay_ms:.1} ms round trip), more than max_offset_ms = {limit}: set its clock (NTP) or raise the limit")]
    Offset {
        address: String,
        offset_ms: f64,
        delay_ms: f64,
        limit: u64,
    },
    #[error(
        "agent {address} refused the run: {message} (the members already started were stopped)"
    )]
    Refused { address: String, message: String },
}

/// A member that runs its part: its API, its run, what is known of it.
pub struct Joined {
    remote: Remote,
    run_id: i64,
    host: Host,
    /// Its offset in ns (its clock minus the coordinator's).
    offset_ns: i64,
}

/// A group whose members have been told when to start.
pub struct Started {
    members: Vec<Joined>,
    /// The shared start on the coordinator's clock (ms since the Unix epoch).
    start_ms: u64,
    on_fault: OnFault,
    /// The workload as the first member planned it (its first step's).
    pub spec: WorkloadSpec,
}

impl Started {
    /// Each member's address and its run there.
    pub fn runs(&self) -> impl Iterator<Item = (&str, i64)> {
        self.members
            .iter()
            .map(|m| (m.host.address.as_str(), m.run_id))
    }

    /// The shared start (ms since the Unix epoch, coordinator's clock).
    pub fn start_ms(&self) -> u64 {
        self.start_ms
    }
}

/// Checks the request, measures every member's clock and starts the run on each with the
/// shared start in its own clock. Blocking (a few round trips per member). A member that
/// cannot be reached, is too far off, or refuses the run stops the group before (or, for
/// a refusal, right after) anything ran: those already started are stopped.
pub fn start(req: &CreateRun) -> Result<Started, GroupError> {
    check(req)?;
    let limit = req.max_offset_ms.unwrap_or(DEFAULT_MAX_OFFSET_MS);
    let mut measured = Vec::with_capacity(req.agents.len());
    for m in &req.agents {
        let remote = Remote::new(&m.address, m.token.clone());
        let (offset_ns, delay_ns) =
            remote
                .clock_offset(CLOCK_ROUNDS)
                .map_err(|e| GroupError::Unreachable {
                    address: remote.base.clone(),
                    message: format!("{e:#}"),
                })?;
        let (offset_ms, delay_ms) = (offset_ns as f64 / 1e6, delay_ns as f64 / 1e6);
        if offset_ms.abs() + delay_ms / 2.0 > limit as f64 {
            return Err(GroupError::Offset {
                address: remote.base.clone(),
                offset_ms,
                delay_ms,
                limit,
            });
        }
        measured.push((remote, offset_ns, offset_ms, delay_ms));
    }
    let start_ms = crate::env::unix_ms() + req.lead_ms.unwrap_or(DEFAULT_LEAD_MS);
    let mut members: Vec<Joined> = Vec::with_capacity(measured.len());
    for ((remote, offset_ns, offset_ms, delay_ms), m) in measured.into_iter().zip(&req.agents) {
        // The member's own run: the request without the group's parts.
        let mut body = CreateRun {
            agents: Vec::new(),
            lead_ms: None,
            max_offset_ms: None,
            on_fault: OnFault::default(),
            ..req.clone()
        };
        if let Some(t) = &m.target {
            body.target = t.clone();
        }
        // The shared start in the member's clock.
        body.start_at_ms = Some((start_ms as i64 + offset_ns / 1_000_000).max(0) as u64);
        match remote.start_run(&body) {
            Ok(run_id) => members.push(Joined {
                host: Host {
                    address: remote.base.clone(),
                    run_id: Some(run_id),
                    offset_ms,
                    delay_ms,
                    ..Host::default()
                },
                remote,
                run_id,
                offset_ns,
            }),
            Err(e) => {
                stop_all(&members);
                return Err(GroupError::Refused {
                    address: remote.base.clone(),
                    message: format!("{e:#}"),
                });
            }
        }
    }
    let spec = members
        .first()
        .and_then(|m| m.remote.run_info(m.run_id).ok())
        .map(|i| i.spec)
        .or_else(|| req.spec.clone())
        .unwrap_or_default();
    Ok(Started {
        members,
        start_ms,
        on_fault: req.on_fault,
        spec,
    })
}

fn check(req: &CreateRun) -> Result<(), GroupError> {
    let n = req.agents.len();
    if n == 0 || n > MAX_MEMBERS {
        return Err(GroupError::Members(n));
    }
    let mut seen: Vec<String> = Vec::with_capacity(n);
    for m in &req.agents {
        let a = m.address.trim_end_matches('/').to_string();
        let scheme_ok = a.starts_with("http://") || a.starts_with("https://");
        if !scheme_ok || a.len() > 2048 || a.contains(char::is_whitespace) {
            return Err(GroupError::Address(m.address.clone()));
        }
        if seen.contains(&a) {
            return Err(GroupError::Repeated(a));
        }
        seen.push(a);
    }
    match req.lead_ms {
        Some(ms) if !(MIN_LEAD_MS..=MAX_START_WAIT_MS).contains(&ms) => {
            return Err(GroupError::Lead(ms))
        }
        _ => {}
    }
    match req.max_offset_ms {
        Some(ms) if ms > MAX_START_WAIT_MS => return Err(GroupError::MaxOffset(ms)),
        _ => {}
    }
    if req.start_at_ms.is_some() {
        return Err(GroupError::StartAt);
    }
    if req.witness_token.is_some() {
        return Err(GroupError::Witness);
    }
    Ok(())
}

/// Stops a started group that will not be followed (its hub could not record it).
pub fn abandon(started: &Started) {
    stop_all(&started.members);
}

/// Asks every member's run to stop (best effort: one that cannot be reached is gone).
fn stop_all(members: &[Joined]) {
    for m in members {
        if let Err(e) = m.remote.stop_run(m.run_id) {
            tracing::warn!("stopping run {} on {}: {e:#}", m.run_id, m.remote.base);
        }
    }
}

/// Follows every member's run to its end, giving `observer` the group's merged samples as
/// they complete, and returns the merged report. `cancel` (a stop on the hub, Ctrl-C)
/// stops every member's run; what they measured is still merged.
pub fn follow(
    started: Started,
    cancel: Arc<AtomicBool>,
    observer: &mut dyn Observer,
) -> Result<RunReport, MeasureError> {
    let n = started.members.len();
    let g = Arc::new(follow::Group {
        members: started.members,
        on_fault: started.on_fault,
        spec: started.spec,
        start_ms: started.start_ms,
        ends: std::sync::Mutex::new(vec![follow::Ended::default(); n]),
    });
    let (tx, rx) = std::sync::mpsc::channel();
    let mut handles = Vec::with_capacity(n);
    for i in 0..n {
        let (tx, g, cancel) = (tx.clone(), Arc::clone(&g), Arc::clone(&cancel));
        let h = std::thread::Builder::new()
            .name(format!("ds-member-{i}"))
            .spawn(move || follow::member(&g, i, &cancel, &tx))
            .map_err(|e| MeasureError::Start(crate::runner::StartError::Thread(e)))?;
        handles.push(h);
    }
    drop(tx);
    let joined = || handles.into_iter().for_each(|h| drop(h.join()));
    let (mut report, timeline) = crate::measure::merge_parts(rx, vec![None; n], joined, observer)?;
    report.timeline = timeline;
    merge::finish(&mut report, &g);
    Ok(report)
}
