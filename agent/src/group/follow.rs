//! One member's part of a group run, on its own thread: its live stream's samples to the
//! merge as they come, then its report; or, when it fails or drops off, what it sent before
//! it left as its part, marked with the time it left.

use super::Joined;
use crate::measure::{MeasureError, PartMsg};
use shared::api::{ClientMsg, RunEvent, ServerMsg};
use shared::group::OnFault;
use shared::{DirSample, RunError, RunReport, RunStatus, RunSummary, Sample};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tokio_tungstenite::tungstenite::{self, client::IntoClientRequest, Message};

/// How long a stream may stay silent (no sample, no message) before the member is asked
/// over HTTP whether its run still goes on.
const SILENCE: Duration = Duration::from_secs(5);
/// How often a blocked read wakes to see a stop.
const POLL: Duration = Duration::from_millis(200);
/// The longest a member's stream may take to connect (and to answer the handshake).
const CONNECT: Duration = Duration::from_secs(5);
/// Reconnections to a member whose stream broke while its run went on.
const RECONNECTS: u32 = 5;

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

/// What came over the stream so far: the last sample's `seq`, and the samples added up.
#[derive(Default)]
struct Seen {
    last_seq: Option<u64>,
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
        self.last_seq = Some(s.seq);
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

/// How following the stream ended.
enum StreamEnd {
    /// The run ended on the member.
    RunEnded,
    /// The stream broke (closed, failed, silent): why.
    Broke(String),
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
    let mut stopped = false;
    let mut fault = None;
    let mut reconnects = 0;
    loop {
        match stream(m, i, cancel, &mut stopped, &mut seen, tx) {
            StreamEnd::RunEnded => break,
            StreamEnd::Broke(why) => match m.remote.run_info(m.run_id) {
                Ok(info) if info.status != RunStatus::Running => break,
                Ok(_) if reconnects < RECONNECTS => reconnects += 1,
                Ok(_) => {
                    fault = Some(format!("its stream kept breaking ({why})"));
                    break;
                }
                Err(e) => {
                    fault = Some(format!("{why}; then {e:#}"));
                    break;
                }
            },
        }
    }
    let report = match fault {
        None => match m.remote.report(m.run_id) {
            Ok((_, r)) => {
                // What the stream did not bring (a run that ended before the subscription
                // took) is in the report.
                for s in r
                    .samples
                    .iter()
                    .filter(|s| seen.last_seq.is_none_or(|l| s.seq > l))
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

/// Reads member `i`'s stream from the sample after `seen.last_seq`, passing samples on,
/// until its run ends or the stream breaks; a stop (`cancel`) is passed to the member once.
fn stream(
    m: &Joined,
    i: usize,
    cancel: &AtomicBool,
    stopped: &mut bool,
    seen: &mut Seen,
    tx: &Sender<PartMsg>,
) -> StreamEnd {
    let mut socket = match connect(m) {
        Ok(s) => s,
        Err(e) => return StreamEnd::Broke(format!("cannot open its stream: {e:#}")),
    };
    let sub = ClientMsg::Subscribe {
        run_id: m.run_id,
        after_seq: seen.last_seq,
        max_points: None,
    };
    let text = serde_json::to_string(&sub).unwrap_or_default();
    if let Err(e) = socket.send(Message::text(text)) {
        return StreamEnd::Broke(format!("its stream refused the subscription: {e}"));
    }
    let mut heard = Instant::now();
    loop {
        if cancel.load(Ordering::Relaxed) && !*stopped {
            *stopped = true;
            if let Err(e) = m.remote.stop_run(m.run_id) {
                tracing::warn!("stopping run {} on {}: {e:#}", m.run_id, m.remote.base);
            }
        }
        let msg = match socket.read() {
            Ok(msg) => msg,
            Err(tungstenite::Error::Io(e))
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                if heard.elapsed() > SILENCE {
                    return StreamEnd::Broke(format!(
                        "its stream was silent for {} s",
                        SILENCE.as_secs()
                    ));
                }
                continue;
            }
            Err(e) => return StreamEnd::Broke(format!("its stream ended: {e}")),
        };
        heard = Instant::now();
        let text = match msg {
            Message::Text(t) => t,
            Message::Close(_) => return StreamEnd::Broke("its stream was closed".into()),
            _ => continue,
        };
        let mut pass = |s: Sample| {
            if seen.last_seq.is_none_or(|l| s.seq > l) {
                seen.add(&s);
                let _ = tx.send(PartMsg::Sample(i, s));
            }
        };
        match serde_json::from_str::<ServerMsg>(&text) {
            Ok(ServerMsg::Sample { run_id, sample }) if run_id == m.run_id => pass(sample),
            Ok(ServerMsg::History {
                run_id, samples, ..
            }) if run_id == m.run_id => samples.into_iter().for_each(pass),
            Ok(ServerMsg::Run { run_id, event, .. })
                if run_id == m.run_id && event != RunEvent::Started =>
            {
                return StreamEnd::RunEnded
            }
            // The member catches a client that fell behind up from its database.
            Ok(ServerMsg::Error { message, .. }) => {
                return StreamEnd::Broke(format!("its stream said: {message}"))
            }
            _ => {}
        }
    }
}

type Socket = tungstenite::WebSocket<tungstenite::stream::MaybeTlsStream<std::net::TcpStream>>;

/// The member's live stream, its reads waking every [`POLL`]. A plain `ws://` stream is
/// connected with a deadline (a member that vanished is not waited on for the kernel's
/// minutes of retries); `wss://` goes through tungstenite's own connect.
fn connect(m: &Joined) -> anyhow::Result<Socket> {
    use tungstenite::stream::MaybeTlsStream;
    let url = m.remote.ws_url();
    let mut req = url.as_str().into_client_request()?;
    req.headers_mut()
        .insert("Authorization", m.remote.auth().parse()?);
    let socket = match url.strip_prefix("ws://") {
        Some(rest) => {
            let host = rest.split('/').next().unwrap_or(rest);
            let addr = std::net::ToSocketAddrs::to_socket_addrs(host)?
                .next()
                .ok_or_else(|| anyhow::anyhow!("{host} resolves to no address"))?;
            let tcp = std::net::TcpStream::connect_timeout(&addr, CONNECT)?;
            tcp.set_read_timeout(Some(CONNECT))?;
            let (socket, _) = tungstenite::client(req, MaybeTlsStream::Plain(tcp))
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            socket
        }
        None => tungstenite::connect(req)?.0,
    };
    if let MaybeTlsStream::Plain(s) = socket.get_ref() {
        s.set_read_timeout(Some(POLL))?;
    }
    Ok(socket)
}
