//! A client of another agent's API (`diskscope run --agent`, `runs`, `stop`, `export`, and
//! a group run's coordinator, `crate::group`): its base URL and token, requests whose
//! refusals become the agent's own message, and the clock exchange of `GET /api/v1/clock`.

use anyhow::{anyhow, bail, Context};
use std::time::Duration;

/// The agent's API: its base URL, the token, an HTTP client that reads error bodies.
pub struct Remote {
    pub base: String,
    token: String,
    http: ureq::Agent,
}

impl Remote {
    pub fn new(agent: &str, token: String) -> Remote {
        Remote {
            base: agent.trim_end_matches('/').to_string(),
            token,
            http: ureq::Agent::config_builder()
                .http_status_as_error(false)
                .timeout_global(Some(Duration::from_secs(60)))
                // An address that drops packets is unreachable in seconds, not after the
                // kernel's two minutes of retries (a group's member that vanished).
                .timeout_connect(Some(Duration::from_secs(5)))
                .build()
                .new_agent(),
        }
    }

    pub fn auth(&self) -> String {
        format!("Bearer {}", self.token)
    }

    /// Status and body of a request; a refusal becomes the agent's own message.
    fn answer(
        &self,
        r: Result<ureq::http::Response<ureq::Body>, ureq::Error>,
        what: &str,
    ) -> anyhow::Result<String> {
        let mut r =
            r.with_context(|| format!("{what}: cannot reach the agent at {}", self.base))?;
        let status = r.status().as_u16();
        let text = r.body_mut().read_to_string().unwrap_or_default();
        if status >= 400 {
            let msg = serde_json::from_str::<shared::api::ApiErrorBody>(&text)
                .map(|e| e.message)
                .unwrap_or(text);
            bail!("{what}: the agent answered {status}: {msg}");
        }
        Ok(text)
    }

    pub fn post<T: serde::Serialize>(
        &self,
        path: &str,
        body: &T,
        what: &str,
    ) -> anyhow::Result<String> {
        let r = self
            .http
            .post(&format!("{}{path}", self.base))
            .header("Authorization", &self.auth())
            .send_json(body);
        self.answer(r, what)
    }

    pub fn get(&self, path: &str, what: &str) -> anyhow::Result<String> {
        let r = self
            .http
            .get(&format!("{}{path}", self.base))
            .header("Authorization", &self.auth())
            .call();
        self.answer(r, what)
    }
}

/// Nanoseconds since the Unix epoch on this host's wall clock.
pub fn wall_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

impl Remote {
    /// One clock exchange (`GET /api/v1/clock`): NTP's offset of the agent's clock from this
    /// host's, and the round trip it was measured over, in ns.
    pub fn clock(&self) -> anyhow::Result<(i64, u64)> {
        let t1 = wall_ns();
        let text = self.get("/api/v1/clock", "reading its clock")?;
        let t4 = wall_ns();
        let c: shared::group::Clock =
            serde_json::from_str(&text).context("the agent's answer to GET /api/v1/clock")?;
        Ok(shared::group::offset_and_delay(
            t1,
            c.received_ns,
            c.sent_ns,
            t4,
        ))
    }

    /// The best of `rounds` clock exchanges (the one with the shortest round trip, as NTP
    /// keeps): offset and delay in ns.
    pub fn clock_offset(&self, rounds: usize) -> anyhow::Result<(i64, u64)> {
        let mut best: Option<(i64, u64)> = None;
        for _ in 0..rounds.max(1) {
            let (offset, delay) = self.clock()?;
            if best.is_none_or(|(_, d)| delay < d) {
                best = Some((offset, delay));
            }
        }
        best.ok_or_else(|| anyhow!("no clock exchange"))
    }

    /// Starts a run (`POST /api/v1/runs`): its id.
    pub fn start_run(&self, body: &shared::api::CreateRun) -> anyhow::Result<i64> {
        let created = self.post("/api/v1/runs", body, "starting the run")?;
        Ok(serde_json::from_str::<shared::api::Created>(&created)
            .context("the agent's answer to POST /api/v1/runs")?
            .id)
    }

    /// Asks a run to stop.
    pub fn stop_run(&self, id: i64) -> anyhow::Result<()> {
        let path = format!("/api/v1/runs/{id}/stop");
        self.post(&path, &serde_json::json!({}), "stopping the run")
            .map(drop)
    }

    /// The run as the API shows it.
    pub fn run_info(&self, id: i64) -> anyhow::Result<shared::api::RunInfo> {
        let text = self.get(&format!("/api/v1/runs/{id}"), "reading the run")?;
        serde_json::from_str(&text).context("the agent's run")
    }

    /// The run's report as `/export` gives it (its text and the parsed report).
    pub fn report(&self, id: i64) -> anyhow::Result<(String, shared::RunReport)> {
        let text = self.get(
            &format!("/api/v1/runs/{id}/export?format=json"),
            "fetching the report",
        )?;
        let report = serde_json::from_str(&text).context("the agent's report")?;
        Ok((text, report))
    }

    /// The live stream's address (`ws://` or `wss://`).
    pub fn ws_url(&self) -> String {
        self.base.replacen("http", "ws", 1) + "/api/v1/ws"
    }
}

/// How long a stream may stay silent (no sample, no message) before the agent is asked over
/// HTTP whether its run still goes on.
const SILENCE: Duration = Duration::from_secs(5);
/// How often a blocked read wakes to see a stop.
const POLL: Duration = Duration::from_millis(200);
/// The longest a stream may take to connect (and to answer the handshake).
const CONNECT: Duration = Duration::from_secs(5);
/// Reconnections to an agent whose stream broke while its run went on.
const RECONNECTS: u32 = 5;
/// The furthest a sample's `seq` may jump past the last one (a stream delivers every
/// interval in order; a client that fell behind is caught up from the agent's database).
const MAX_SEQ_JUMP: u64 = 1_000_000;

impl Remote {
    /// Follows run `id`'s live stream to the run's end, giving `on_sample` each sample once,
    /// in order, from the one after `*last_seq`; a stop (`cancel`) is passed to the agent once.
    /// A stream that breaks is reopened from where it left while the agent says the run goes
    /// on. `Err` says why the agent could no longer be followed (it failed, dropped off, or
    /// sent what no stream sends); what was given before stays given.
    pub fn follow(
        &self,
        id: i64,
        cancel: &std::sync::atomic::AtomicBool,
        last_seq: &mut Option<u64>,
        on_sample: &mut dyn FnMut(shared::Sample),
    ) -> Result<(), String> {
        let mut stopped = false;
        for _ in 0..=RECONNECTS {
            let why = match self.stream(id, cancel, &mut stopped, last_seq, on_sample) {
                Ok(()) => return Ok(()),
                Err(why) => why,
            };
            match self.run_info(id) {
                Ok(info) if info.status != shared::RunStatus::Running => return Ok(()),
                Ok(_) => {}
                Err(e) => return Err(format!("{why}; then {e:#}")),
            }
        }
        Err(format!(
            "its stream kept breaking ({RECONNECTS} reconnections)"
        ))
    }

    /// One connection of [`Remote::follow`]: `Ok` when the run ended, else why it broke.
    fn stream(
        &self,
        id: i64,
        cancel: &std::sync::atomic::AtomicBool,
        stopped: &mut bool,
        last_seq: &mut Option<u64>,
        on_sample: &mut dyn FnMut(shared::Sample),
    ) -> Result<(), String> {
        use shared::api::{ClientMsg, RunEvent, ServerMsg};
        use std::sync::atomic::Ordering;
        use tokio_tungstenite::tungstenite::{self, Message};
        let mut socket = self
            .connect()
            .map_err(|e| format!("cannot open its stream: {e:#}"))?;
        let sub = ClientMsg::Subscribe {
            run_id: id,
            after_seq: *last_seq,
            max_points: None,
        };
        let text = serde_json::to_string(&sub).map_err(|e| e.to_string())?;
        socket
            .send(Message::text(text))
            .map_err(|e| format!("its stream refused the subscription: {e}"))?;
        let mut heard = std::time::Instant::now();
        loop {
            if cancel.load(Ordering::Relaxed) && !*stopped {
                *stopped = true;
                if let Err(e) = self.stop_run(id) {
                    tracing::warn!("stopping run {id} on {}: {e:#}", self.base);
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
                        return Err(format!("its stream was silent for {} s", SILENCE.as_secs()));
                    }
                    continue;
                }
                Err(e) => return Err(format!("its stream ended: {e}")),
            };
            heard = std::time::Instant::now();
            let text = match msg {
                Message::Text(t) => t,
                Message::Close(_) => return Err("its stream was closed".into()),
                _ => continue,
            };
            let samples = match serde_json::from_str::<ServerMsg>(&text) {
                Ok(ServerMsg::Sample { run_id, sample }) if run_id == id => vec![sample],
                Ok(ServerMsg::History {
                    run_id, samples, ..
                }) if run_id == id => samples,
                Ok(ServerMsg::Run { run_id, event, .. })
                    if run_id == id && event != RunEvent::Started =>
                {
                    return Ok(())
                }
                // (A client that fell behind is caught up by the agent from its database.)
                Ok(ServerMsg::Error { message, .. }) => {
                    return Err(format!("its stream said: {message}"))
                }
                _ => continue,
            };
            for s in samples {
                let next = last_seq.map_or(0, |l| l + 1);
                if s.seq < next {
                    continue;
                }
                if s.seq - next > MAX_SEQ_JUMP {
                    return Err(format!(
                        "it sent interval {} after {next}: no stream skips so far",
                        s.seq
                    ));
                }
                *last_seq = Some(s.seq);
                on_sample(s);
            }
        }
    }

    /// The live stream, its reads waking every [`POLL`]. A plain `ws://` stream is connected
    /// with a deadline (an agent that vanished is not waited on for the kernel's minutes of
    /// retries); `wss://` goes through tungstenite's own connect.
    fn connect(
        &self,
    ) -> anyhow::Result<
        tokio_tungstenite::tungstenite::WebSocket<
            tokio_tungstenite::tungstenite::stream::MaybeTlsStream<std::net::TcpStream>,
        >,
    > {
        use tokio_tungstenite::tungstenite::{
            self, client::IntoClientRequest, stream::MaybeTlsStream,
        };
        let url = self.ws_url();
        let mut req = url.as_str().into_client_request()?;
        req.headers_mut()
            .insert("Authorization", self.auth().parse()?);
        let socket = match url.strip_prefix("ws://") {
            Some(rest) => {
                let host = rest.split('/').next().unwrap_or(rest);
                let addr = std::net::ToSocketAddrs::to_socket_addrs(host)?
                    .next()
                    .ok_or_else(|| anyhow!("{host} resolves to no address"))?;
                let tcp = std::net::TcpStream::connect_timeout(&addr, CONNECT)?;
                tcp.set_read_timeout(Some(CONNECT))?;
                let (socket, _) = tungstenite::client(req, MaybeTlsStream::Plain(tcp))
                    .map_err(|e| anyhow!("{e}"))?;
                socket
            }
            None => tungstenite::connect(req)?.0,
        };
        if let MaybeTlsStream::Plain(s) = socket.get_ref() {
            s.set_read_timeout(Some(POLL))?;
        }
        Ok(socket)
    }
}
