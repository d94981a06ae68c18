//! One member's part of a group run, on its own thread: its live stream's samples to the
//! merge as they come, then its report; or, when it fails or drops off, what it sent before
//! it left as its part, marked with the time it left.

use super::Joined;
use crate::measure::{MeasureError, PartMsg};
use shared::group::OnFault;
use shared::{DirSample, RunError, RunReport, RunStatus, RunSummary, Sample};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::Mutex;

/// How a member's part ended, for the merged result (`merge::finish`).
#[derive(Debug, Clone, Default)]
pub struct Ended {
    /// When its run's I/O began, ms since the Unix epoch on its own clock.
    pub started_at_ms: Option<u64>,
    /// What its own sustain analysis required (MB/s) and allowed as buffer (ms).
    pub sustain: Option<(f64, u64)>,
    /// It left: when (ms after the shared start, coordinator's clock) and why.
    pub left_ms: Option<u64>,
    pub fault: Option<String>,
    /// I/Os it made before it left, which no histogram of it carries.
    pub unmeasured_ios: [u64; 3],
    /// Its run's steps (a preset's, a job file's), merged step by step with the others'.
    pub steps: Vec<shared::steps::StepReport>,
}

/// What came over the stream so far: the samples added up.
#[derive(Default)]
struct Seen {
    sum: RunSummary,
    end_ns: u64,
}

impl Seen {
    fn add(&mut self, s: &Sample) {
        for (acc, d) in [
            (&mut self.sum.read, &s.read),
            (&mut self.sum.write, &s.write),
            (&mut self.sum.trim, &s.trim),
        ] {
            let ios = acc.ios + d.ios;
            if ios > 0 {
                acc.lat.mean_ns = ((u128::from(acc.lat.mean_ns) * u128::from(acc.ios)
                    + u128::from(d.lat.mean_ns) * u128::from(d.ios))
                    / u128::from(ios)) as u64;
            }
            acc.lat.max_ns = acc.lat.max_ns.max(d.lat.max_ns);
            acc.ios = ios;
            acc.bytes += d.bytes;
            acc.cum_bytes = acc.bytes;
        }
        self.sum.samples += 1;
        self.end_ns = self.end_ns.max(s.end_ns);
    }

    /// The part of a member that left: its samples' sums, failed with why.
    fn report(&self, spec: &shared::WorkloadSpec, why: &str) -> RunReport {
        let d = self.end_ns;
        let rated = |x: &DirSample| x.with_rates(d);
        RunReport {
            protocol_version: shared::PROTOCOL_VERSION,
            status: RunStatus::Failed,
            error: Some(RunError {
                message: why.to_string(),
                op: None,
                offset: None,
                errno: None,
            }),
            spec: spec.clone(),
            environment: shared::Environment::default(),
            summary: RunSummary {
                duration_ns: d,
                read: rated(&self.sum.read),
                write: rated(&self.sum.write),
                trim: rated(&self.sum.trim),
                ..self.sum.clone()
            },
            samples: Vec::new(),
            histogram: shared::sample::HistogramDump::default(),
            steps: Vec::new(),
            analysis: Default::default(),
            timeline: None,
            targets: Vec::new(),
        }
    }
}

/// What every member's thread shares.
pub struct Group {
    pub members: Vec<Joined>,
    pub on_fault: OnFault,
    pub spec: shared::WorkloadSpec,
    pub start_ms: u64,
    /// How each member's part ended, filled in by its thread.
    pub ends: Mutex<Vec<Ended>>,
}

/// Follows member `i` to its end and sends its part to the merge.
pub fn member(g: &Group, i: usize, cancel: &AtomicBool, tx: &Sender<PartMsg>) {
    let m = &g.members[i];
    let mut seen = Seen::default();
    let mut last_seq = None;
    let fault = m
        .remote
        .follow(m.run_id, cancel, &mut last_seq, &mut |s| {
            seen.add(&s);
            let _ = tx.send(PartMsg::Sample(i, s));
        })
        .err();
    let report = match fault {
        None => match m.remote.report(m.run_id) {
            Ok((_, r)) => {
                // What the stream did not bring (a run that ended before the subscription
                // took) is in the report.
                for s in r
                    .samples
                    .iter()
                    .filter(|s| last_seq.is_none_or(|l| s.seq > l))
                {
                    let _ = tx.send(PartMsg::Sample(i, s.clone()));
                }
                Ok(r)
            }
            Err(e) => Err(format!("its report could not be fetched: {e:#}")),
        },
        Some(f) => Err(f),
    };
    let left_ms = crate::env::unix_ms().saturating_sub(g.start_ms);
    let (report, ended) = match report {
        Ok(r) => {
            let ended = Ended {
                started_at_ms: Some(r.environment.started_at_ms),
                sustain: r
                    .analysis
                    .sustain
                    .as_ref()
                    .map(|s| (s.required_mbps, s.buffer_ms)),
                steps: r.steps.clone(),
                ..Ended::default()
            };
            (r, ended)
        }
        Err(why) => {
            let why = format!(
                "{} (run {}) left the group {:.1} s after its start: {why}",
                m.host.address,
                m.run_id,
                left_ms as f64 / 1000.0
            );
            tracing::warn!("{why}");
            if g.on_fault == OnFault::Stop {
                cancel.store(true, Ordering::SeqCst);
            }
            let ended = Ended {
                left_ms: Some(left_ms),
                fault: Some(why.clone()),
                unmeasured_ios: [seen.sum.read.ios, seen.sum.write.ios, seen.sum.trim.ios],
                ..Ended::default()
            };
            (seen.report(&g.spec, &why), ended)
        }
    };
    if let Some(slot) = g.ends.lock().unwrap_or_else(|p| p.into_inner()).get_mut(i) {
        *slot = ended;
    }
    let label = format!(
        "{} run {}: {}",
        m.host.address,
        m.run_id,
        if report.environment.target.is_empty() {
            "(gone)"
        } else {
            &report.environment.target
        }
    );
    let r: Result<(RunReport, String), MeasureError> = Ok((report, label));
    let _ = tx.send(PartMsg::Done(i, Box::new(r)));
}
