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
