//! The live stream: a reducer over the agent's WebSocket messages (plain Rust, tested
//! natively) and, in the browser, the connection loop that feeds it and reconnects with
//! backoff after agent restarts or network drops.

use shared::api::{Role, RunEvent, ServerMsg};
use shared::Sample;

/// What the page knows of the run it follows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LiveState {
    pub connected: bool,
    pub role: Option<Role>,
    pub run_id: Option<i64>,
    /// `running`, `completed`, `stopped`, `failed`, or empty before any run.
    pub status: String,
    /// The run's samples: every one on a short run; past [`LIVE_CAP`], neighbours merge
    /// (a day-long run stays a few thousand points in the page).
    pub samples: Vec<Sample>,
    /// The seq the next live sample must have (after a `History`, the one after it).
    pub next_seq: u64,
    pub error: Option<String>,
}

/// Samples the page keeps for the live charts before merging neighbours.
pub const LIVE_CAP: usize = 8192;

impl LiveState {
    /// Merges neighbouring samples pairwise (`Sample::absorb`): half the points, the same
    /// bytes and time.
    fn compact(&mut self) {
        self.samples = Sample::merge_neighbours(std::mem::take(&mut self.samples));
    }

    fn follow(&mut self, run_id: i64) {
        if self.run_id != Some(run_id) {
            self.run_id = Some(run_id);
            self.samples.clear();
            self.next_seq = 0;
            self.status = "running".into();
        }
    }

    /// Applies one message. Samples are kept in `seq` order without duplicates, whatever
    /// the server resends after a reconnect.
    pub fn apply(&mut self, msg: ServerMsg) {
        match msg {
            ServerMsg::Hello { role, .. } => {
                self.role = Some(role);
                self.connected = true;
                self.error = None;
            }
            ServerMsg::Subscribed { run_id: Some(id) } => self.follow(id),
            ServerMsg::Subscribed { run_id: None } => {}
            ServerMsg::Sample { run_id, sample } => {
                self.follow(run_id);
                if sample.seq == self.next_seq {
                    self.next_seq += 1;
                    self.samples.push(sample);
                    if self.samples.len() > LIVE_CAP {
                        self.compact();
                    }
                }
            }
            ServerMsg::History {
                run_id,
                samples,
                through_seq,
            } => {
                self.follow(run_id);
                self.samples = samples;
                self.next_seq = through_seq.map_or(0, |s| s + 1);
            }
            ServerMsg::Run {
                run_id,
                event,
                error,
            } => {
                if event == RunEvent::Started {
                    self.run_id = None;
                    self.follow(run_id);
                } else if self.run_id == Some(run_id) {
                    self.status = match event {
                        RunEvent::Completed => "completed",
                        RunEvent::Stopped => "stopped",
                        RunEvent::Failed => "failed",
                        RunEvent::Started => "running",
                    }
                    .into();
                    self.error = error.map(|e| e.message);
                }
            }
            ServerMsg::Resync { .. } => {}
            ServerMsg::Error { code, message } => self.error = Some(format!("{code}: {message}")),
        }
    }
}

/// The first wait before reconnecting, and the longest.
pub const FIRST_BACKOFF_MS: u32 = 500;
pub const MAX_BACKOFF_MS: u32 = 8000;

/// The wait before the next reconnect: from the first step again after a good session
/// (the agent said hello), else doubled up to the longest.
pub fn next_backoff(current_ms: u32, good_session: bool) -> u32 {
    if good_session {
        FIRST_BACKOFF_MS
    } else {
        (current_ms * 2).min(MAX_BACKOFF_MS)
    }
}

#[cfg(target_arch = "wasm32")]
pub use browser::{connect, connect_to};

#[cfg(target_arch = "wasm32")]
mod browser {
    use super::LiveState;
    use futures_util::{SinkExt, StreamExt};
    use gloo_net::websocket::{futures::WebSocket, Message};
    use leptos::prelude::*;
    use shared::api::{ClientMsg, ServerMsg};
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    /// Keeps a stream open for as long as the page lives, following the agent's active run.
    pub fn connect(token: String, state: RwSignal<LiveState>) {
        connect_to(crate::session::ws_url(), token, state);
    }

    /// The same for the agent whose stream is at `url` (a kiosk wall's tile). The stream
    /// ends with the view that opened it (Disconnect, a tile removed): the owner's cleanup
    /// stops it, so no socket outlives its view or reconnects for nobody.
    pub fn connect_to(url: String, token: String, state: RwSignal<LiveState>) {
        let stopped = Arc::new(AtomicBool::new(false));
        let stop = Arc::clone(&stopped);
        on_cleanup(move || stop.store(true, Ordering::Relaxed));
        leptos::task::spawn_local(async move {
            let mut backoff_ms = super::FIRST_BACKOFF_MS;
            while !stopped.load(Ordering::Relaxed) {
                let good = match session(&url, &token, state, &stopped).await {
                    Ok(good) => good,
                    Err((good, e)) => {
                        if !stopped.load(Ordering::Relaxed) {
                            state.try_update(|s| {
                                s.connected = false;
                                s.error =
                                    Some(format!("connection to the agent lost ({e}); retrying"));
                            });
                        }
                        good
                    }
                };
                backoff_ms = super::next_backoff(backoff_ms, good);
                if stopped.load(Ordering::Relaxed) {
                    break;
                }
                gloo_timers::future::TimeoutFuture::new(backoff_ms).await;
            }
        });
    }

    /// One connection until it closes or the stream is stopped; `true` with it when the
    /// agent said hello (a good session: the back-off starts again from its first step).
    async fn session(
        url: &str,
        token: &str,
        state: RwSignal<LiveState>,
        stopped: &AtomicBool,
    ) -> Result<bool, (bool, String)> {
        let mut good = false;
        let fail = |good: bool| move |e: String| (good, e);
        let ws = WebSocket::open(url).map_err(|e| (false, e.to_string()))?;
        let (mut tx, mut rx) = ws.split();
        for msg in [
            ClientMsg::Auth {
                token: token.into(),
            },
            ClientMsg::SubscribeActive {
                max_points: Some(crate::api::chart_points()),
            },
        ] {
            let text = crate::json::encode(&msg).map_err(|e| (false, e))?;
            tx.send(Message::Text(text))
                .await
                .map_err(|e| (false, e.to_string()))?;
        }
        loop {
            // Wake at least every 250 ms, so that a stopped stream closes its socket at once
            // even when the agent is idle and sends nothing.
            let next = rx.next();
            let tick = gloo_timers::future::TimeoutFuture::new(250);
            futures_util::pin_mut!(next);
            let m = match futures_util::future::select(next, tick).await {
                futures_util::future::Either::Left((m, _)) => m,
                futures_util::future::Either::Right(_) => {
                    if stopped.load(Ordering::Relaxed) {
                        let _ = tx.close().await;
                        return Ok(good);
                    }
                    continue;
                }
            };
            let Some(m) = m else { break };
            if stopped.load(Ordering::Relaxed) {
                let _ = tx.close().await;
                return Ok(good);
            }
            match m.map_err(|e| e.to_string()).map_err(fail(good))? {
                Message::Text(t) => {
                    if let Ok(msg) = crate::json::parse::<ServerMsg>(&t) {
                        good |= matches!(msg, ServerMsg::Hello { .. });
                        // The view may be gone: its signal with it.
                        if state.try_update(|s| s.apply(msg)).is_none() {
                            let _ = tx.close().await;
                            return Ok(good);
                        }
                    }
                }
                Message::Bytes(_) => {}
            }
        }
        Err((good, "closed".into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(seq: u64) -> ServerMsg {
        ServerMsg::Sample {
            run_id: 7,
            sample: Sample {
                seq,
                ..Sample::default()
            },
        }
    }

    #[test]
    fn the_backoff_doubles_to_its_cap_and_resets_after_a_good_session() {
        let mut b = FIRST_BACKOFF_MS;
        for _ in 0..10 {
            b = next_backoff(b, false);
        }
        assert_eq!(b, MAX_BACKOFF_MS);
        assert_eq!(next_backoff(b, true), FIRST_BACKOFF_MS);
    }

    #[test]
    fn resent_samples_are_not_duplicated_and_a_new_run_starts_clean() {
        let mut s = LiveState::default();
        for seq in [0, 1, 2, 0, 1, 2, 3] {
            s.apply(sample(seq));
        }
        assert_eq!(
            s.samples.iter().map(|x| x.seq).collect::<Vec<_>>(),
            vec![0, 1, 2, 3]
        );
        s.apply(ServerMsg::Run {
            run_id: 7,
            event: RunEvent::Completed,
            error: None,
        });
        assert_eq!(s.status, "completed");
        s.apply(ServerMsg::Run {
            run_id: 8,
            event: RunEvent::Started,
            error: None,
        });
        assert_eq!(
            (s.run_id, s.samples.len(), s.status.as_str()),
            (Some(8), 0, "running")
        );
    }

    #[test]
    fn a_history_then_live_samples_continue_after_it_and_stay_bounded() {
        let mut s = LiveState::default();
        let hist: Vec<Sample> = [0u64, 7, 9, 15]
            .iter()
            .map(|&q| Sample {
                seq: q,
                ..Sample::default()
            })
            .collect();
        s.apply(ServerMsg::History {
            run_id: 7,
            samples: hist,
            through_seq: Some(19),
        });
        assert_eq!(s.next_seq, 20);
        for seq in [19, 20, 22, 21] {
            s.apply(sample(seq));
        }
        assert_eq!(
            s.samples.iter().map(|x| x.seq).collect::<Vec<_>>(),
            vec![0, 7, 9, 15, 20, 21]
        );
        for seq in 22..22 + 3 * LIVE_CAP as u64 {
            s.apply(sample(seq));
        }
        assert!(s.samples.len() <= LIVE_CAP, "{} kept", s.samples.len());
        assert_eq!(s.next_seq, 22 + 3 * LIVE_CAP as u64);
    }
}
