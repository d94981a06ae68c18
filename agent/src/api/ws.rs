//! `GET /api/v1/ws`: the live stream.
//!
//! Authentication: an `Authorization: Bearer` header on the upgrade request, or (browsers
//! cannot set headers on WebSockets) an `{"type":"auth","token":...}` first message within
//! 10 s. The agent then says `hello` with the protocol version and the client's role.
//!
//! A client subscribes to one run (`subscribe`, optionally `after_seq`) or to whatever runs
//! (`subscribe_active`). It first gets the run's stored samples after `after_seq`, then the
//! live ones; each sample's `seq` is checked against the last one sent, so a reconnecting
//! client sees no gap and no duplicate. A client that falls behind the fan-out channel is
//! sent `resync` and caught up from the database; it never slows the engine or other clients.

use super::extract::blocking;
use super::AppState;
use crate::service::manager::Event;
use crate::store::RunId;
use axum::extract::ws::{Message, Utf8Bytes, WebSocket, WebSocketUpgrade};
use axum::extract::State;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{SinkExt, StreamExt};
use shared::api::{ClientMsg, Role, RunEvent, ServerMsg};
use std::time::Duration;
use tokio::sync::broadcast::error::RecvError;

const AUTH_TIMEOUT: Duration = Duration::from_secs(10);
const PING_EVERY: Duration = Duration::from_secs(15);
/// A client that does not take a message for this long is dropped.
const SEND_TIMEOUT: Duration = Duration::from_secs(10);
use shared::api::MAX_ENVELOPE_POINTS as MAX_HISTORY_POINTS;
const CATCH_UP_BATCH: u32 = 1000;

/// A browser's upgrade from a page of another site is refused (cross-site WebSocket
/// hijacking): its `Origin` must name the host it connects to. Clients that send no
/// `Origin` (scripts, the CLI) are not browsers and are let through to authenticate;
/// `--cors-origin` names further origins that may.
fn foreign_origin(parts: &Parts, allowed: &[String]) -> Option<String> {
    let origin = parts
        .headers
        .get(axum::http::header::ORIGIN)?
        .to_str()
        .ok()?;
    if allowed.iter().any(|a| a == origin) {
        return None;
    }
    let host = parts
        .headers
        .get(axum::http::header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("");
    let authority = origin.split_once("://").map_or(origin, |(_, a)| a);
    (authority != host).then(|| origin.to_string())
}

pub async fn handler(State(st): State<AppState>, ws: WebSocketUpgrade, parts: Parts) -> Response {
    if let Some(origin) = foreign_origin(&parts, &st.origins) {
        return super::error::ApiError::forbidden(format!(
            "WebSocket from origin {origin} refused: the dashboard connects from the agent's own origin"
        ))
        .into_response();
    }
    let addr = super::auth::client_addr(&parts);
    // A header token was checked by the access layer; without one, the first message must
    // authenticate.
    let role = parts.extensions.get::<super::auth::Caller>().map(|c| c.0);
    ws.on_upgrade(move |socket| async move {
        let (tx, rx) = socket.split();
        let mut c = Client {
            tx,
            rx,
            st,
            follow: Follow::None,
        };
        if let Err(e) = c.serve(role, addr).await {
            tracing::debug!("websocket client gone: {e}");
        }
    })
}

/// What the client follows.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Follow {
    None,
    /// One run; `last` is the last seq sent.
    Run {
        id: RunId,
        last: Option<u64>,
    },
    /// Whatever runs on this agent: the current run, then the next.
    Active {
        current: Option<(RunId, Option<u64>)>,
    },
}

struct Client {
    tx: SplitSink<WebSocket, Message>,
    rx: SplitStream<WebSocket>,
    st: AppState,
    follow: Follow,
}

type WsResult = Result<(), String>;

impl Client {
    async fn send(&mut self, msg: &ServerMsg) -> WsResult {
        let text = serde_json::to_string(msg).map_err(|e| e.to_string())?;
        self.send_frame(Message::Text(Utf8Bytes::from(text))).await
    }

    /// Every frame this side sends goes through here, with the one deadline: a client that
    /// stops reading is dropped after [`SEND_TIMEOUT`] instead of holding its task.
    async fn send_frame(&mut self, frame: Message) -> WsResult {
        match tokio::time::timeout(SEND_TIMEOUT, self.tx.send(frame)).await {
            Ok(r) => r.map_err(|e| e.to_string()),
            Err(_) => Err(format!(
                "client did not read for {} s",
                SEND_TIMEOUT.as_secs()
            )),
        }
    }

    async fn error(&mut self, code: &str, message: String) -> WsResult {
        self.send(&ServerMsg::Error {
            code: code.into(),
            message,
        })
        .await
    }

    async fn authenticate(
        &mut self,
        header_role: Option<Role>,
        addr: Option<std::net::IpAddr>,
    ) -> Result<Role, String> {
        if let Some(r) = header_role {
            return Ok(r);
        }
        let first = tokio::time::timeout(AUTH_TIMEOUT, self.rx.next()).await;
        let token = match first {
            Ok(Some(Ok(Message::Text(t)))) => match serde_json::from_str::<ClientMsg>(&t) {
                Ok(ClientMsg::Auth { token }) => token,
                _ => String::new(),
            },
            _ => String::new(),
        };
        match super::auth::authenticate(&self.st, addr, &token) {
            Ok(r) => Ok(r),
            Err(e) if e.retry_after_s.is_some() => {
                let _ = self.error(e.code, e.message).await;
                Err("held back".into())
            }
            Err(_) => {
                let _ = self
                    .error("unauthorized", "send {\"type\":\"auth\",\"token\":...} first, or an Authorization: Bearer header".into())
                    .await;
                Err("unauthorized".into())
            }
        }
    }

    async fn serve(
        &mut self,
        header_role: Option<Role>,
        addr: Option<std::net::IpAddr>,
    ) -> WsResult {
        let role = self.authenticate(header_role, addr).await?;
        let mut events = self.st.manager.subscribe();
        self.send(&ServerMsg::Hello {
            protocol_version: shared::PROTOCOL_VERSION,
            version: crate::env::VERSION.into(),
            role,
        })
        .await?;
        let mut ping = tokio::time::interval(PING_EVERY);
        ping.tick().await;
        loop {
            tokio::select! {
                msg = self.rx.next() => match msg {
                    Some(Ok(Message::Text(t))) => self.on_client(&t).await?,
                    Some(Ok(Message::Close(_))) | None => return Ok(()),
                    Some(Ok(_)) => {}
                    Some(Err(e)) => return Err(e.to_string()),
                },
                ev = events.recv() => match ev {
                    Ok(ev) => self.on_event(ev).await?,
                    Err(RecvError::Lagged(_)) => self.resync().await?,
                    Err(RecvError::Closed) => return Ok(()),
                },
                _ = ping.tick() => self.send_frame(Message::Ping(Default::default())).await?,
            }
        }
    }

    async fn on_client(&mut self, text: &str) -> WsResult {
        let msg = match serde_json::from_str::<ClientMsg>(text) {
            Ok(m) => m,
            Err(e) => {
                return self
                    .error("bad_message", format!("cannot read message {text:?}: {e}"))
                    .await
            }
        };
        match msg {
            ClientMsg::Auth { .. } => Ok(()),
            ClientMsg::Unsubscribe => {
                self.follow = Follow::None;
                self.send(&ServerMsg::Subscribed { run_id: None }).await
            }
            ClientMsg::Subscribe {
                run_id,
                after_seq,
                max_points,
            } => {
                let store = self.st.manager.store().clone();
                let exists = blocking(move || Ok(store.get_run(run_id)?))
                    .await
                    .map_err(|e| e.message)?;
                if exists.is_none() {
                    return self
                        .error("not_found", format!("run {run_id} not found"))
                        .await;
                }
                self.follow = Follow::Run {
                    id: run_id,
                    last: after_seq,
                };
                self.send(&ServerMsg::Subscribed {
                    run_id: Some(run_id),
                })
                .await?;
                if let Some(n) = max_points {
                    self.history(n).await?;
                }
                self.catch_up().await
            }
            ClientMsg::SubscribeActive { max_points } => {
                // The run going on, else the latest one (a kiosk shows the last result
                // between runs); the next run to start takes over either way.
                let (id, finished) = match self.st.manager.current_run() {
                    Some(id) => (Some(id), None),
                    None => self.latest_run().await?,
                };
                self.follow = Follow::Active {
                    current: id.map(|id| (id, None)),
                };
                self.send(&ServerMsg::Subscribed { run_id: id }).await?;
                if let Some(n) = max_points {
                    self.history(n).await?;
                }
                self.catch_up().await?;
                if let (Some(run_id), Some((event, error))) = (id, finished) {
                    self.send(&ServerMsg::Run {
                        run_id,
                        event,
                        error,
                    })
                    .await?;
                }
                Ok(())
            }
        }
    }

    /// The most recent run in the history and, as it has ended, how.
    async fn latest_run(
        &self,
    ) -> Result<(Option<RunId>, Option<(RunEvent, Option<shared::RunError>)>), String> {
        let store = self.st.manager.store().clone();
        let q = crate::store::RunQuery {
            page: 1,
            per_page: 1,
            ..Default::default()
        };
        let (runs, _) = blocking(move || Ok(store.list_runs(&q)?))
            .await
            .map_err(|e| e.message)?;
        Ok(match runs.into_iter().next() {
            None => (None, None),
            Some(r) => {
                let event = end_event(r.status).unwrap_or(RunEvent::Stopped);
                (Some(r.id), Some((event, r.error)))
            }
        })
    }

    /// The run followed now and the last seq sent for it.
    fn followed(&self) -> Option<(RunId, Option<u64>)> {
        match self.follow {
            Follow::Run { id, last } => Some((id, last)),
            Follow::Active { current } => current,
            Follow::None => None,
        }
    }

    fn set_last(&mut self, seq: u64) {
        match &mut self.follow {
            Follow::Run { last, .. }
            | Follow::Active {
                current: Some((_, last)),
            } => *last = Some(seq),
            _ => {}
        }
    }

    /// Sends the followed run's stored history as one envelope of at most `max_points`
    /// samples (`Store::samples_envelope`); live samples go on after its last seq.
    async fn history(&mut self, max_points: u32) -> WsResult {
        let Some((id, _)) = self.followed() else {
            return Ok(());
        };
        if !(2..=MAX_HISTORY_POINTS).contains(&max_points) {
            return self
                .error(
                    "bad_message",
                    format!("max_points = {max_points}: expected 2..={MAX_HISTORY_POINTS}"),
                )
                .await;
        }
        let store = self.st.manager.store().clone();
        let (samples, through) = blocking(move || {
            let last = store.last_sample(id)?.map(|s| s.seq);
            let samples = match last {
                Some(l) => store.samples_envelope(id, 0, Some(l), max_points)?,
                None => Vec::new(),
            };
            Ok((samples, last))
        })
        .await
        .map_err(|e| e.message)?;
        self.send(&ServerMsg::History {
            run_id: id,
            samples,
            through_seq: through,
        })
        .await?;
        if let Some(l) = through {
            self.set_last(l);
        }
        Ok(())
    }

    /// Sends every stored sample after the last one sent.
    async fn catch_up(&mut self) -> WsResult {
        while let Some((id, last)) = self.followed() {
            let store = self.st.manager.store().clone();
            let batch = blocking(move || Ok(store.samples_after(id, last, CATCH_UP_BATCH)?))
                .await
                .map_err(|e| e.message)?;
            let n = batch.len();
            for sample in batch {
                let seq = sample.seq;
                self.send(&ServerMsg::Sample { run_id: id, sample }).await?;
                self.set_last(seq);
            }
            if n < CATCH_UP_BATCH as usize {
                break;
            }
        }
        Ok(())
    }

    /// After the client fell behind the fan-out: what it missed, from the database — the
    /// samples, and the run's end when it ended meanwhile (its lifecycle event may have been
    /// among the dropped ones). The end is read before the samples: a run's samples are all
    /// stored before its end is, so the end is sent only after every sample (the catch-up's
    /// sends block on a slow client for seconds, long enough for the run to end behind it).
    async fn resync(&mut self) -> WsResult {
        let Some((run_id, after_seq)) = self.followed() else {
            return Ok(());
        };
        self.send(&ServerMsg::Resync { run_id, after_seq }).await?;
        let mut ended = self.end_of(run_id).await?;
        self.catch_up().await?;
        if ended.is_none() {
            ended = self.end_of(run_id).await?;
            if ended.is_some() {
                self.catch_up().await?;
            }
        }
        if let Some((event, error)) = ended {
            self.send(&ServerMsg::Run {
                run_id,
                event,
                error,
            })
            .await?;
        }
        Ok(())
    }

    /// How the run ended, `None` while it runs.
    async fn end_of(
        &self,
        run_id: RunId,
    ) -> Result<Option<(RunEvent, Option<shared::RunError>)>, String> {
        let store = self.st.manager.store().clone();
        let run = blocking(move || Ok(store.get_run(run_id)?))
            .await
            .map_err(|e| e.message)?;
        let ended = run.and_then(|r| end_event(r.status).map(|event| (event, r.error)));
        // A run the database could not record the end of is still ended.
        Ok(ended.or_else(|| {
            self.st
                .manager
                .unrecorded_end(run_id)
                .and_then(|(status, e)| end_event(status).map(|event| (event, Some(e))))
        }))
    }

    async fn on_event(&mut self, ev: Event) -> WsResult {
        match ev {
            Event::Sample { run_id, sample } => {
                let Some((id, last)) = self.followed() else {
                    return Ok(());
                };
                if id != run_id || last.is_some_and(|l| sample.seq <= l) {
                    return Ok(());
                }
                let expected = last.map_or(0, |l| l + 1);
                if sample.seq != expected {
                    // A gap (e.g. subscribed between a store write and its broadcast): the
                    // store has everything up to this sample.
                    return self.catch_up().await;
                }
                self.send(&ServerMsg::Sample {
                    run_id,
                    sample: (*sample).clone(),
                })
                .await?;
                self.set_last(sample.seq);
                Ok(())
            }
            Event::Lifecycle {
                run_id,
                event,
                error,
            } => {
                if let (Follow::Active { current }, RunEvent::Started) = (&mut self.follow, event) {
                    *current = Some((run_id, None));
                }
                if self.followed().map(|f| f.0) == Some(run_id) {
                    self.send(&ServerMsg::Run {
                        run_id,
                        event,
                        error,
                    })
                    .await?;
                }
                Ok(())
            }
        }
    }
}

/// The lifecycle event that says how a run ended (`None` while it runs).
fn end_event(status: shared::RunStatus) -> Option<RunEvent> {
    match status {
        shared::RunStatus::Running => None,
        shared::RunStatus::Completed => Some(RunEvent::Completed),
        shared::RunStatus::Failed => Some(RunEvent::Failed),
        _ => Some(RunEvent::Stopped),
    }
}
