//! Bearer tokens and roles. `Authorization: Bearer TOKEN` on every API call except health;
//! the WebSocket takes the same header or an `auth` first message. A missing or unknown token
//! is 401; a viewer token on an operator action is 403. An address that presented
//! [`MAX_FAILURES`] unknown tokens within [`WINDOW`] gets 429 (with `Retry-After`) for every
//! authenticated call until the window ends: tokens cannot be guessed at network speed.

use super::error::ApiError;
use super::AppState;
use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::request::Parts;
use shared::api::Role;
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Unknown tokens an address may present per window.
pub const MAX_FAILURES: u32 = 20;
/// The window failures are counted over (and an address is held back for).
pub const WINDOW: Duration = Duration::from_secs(60);
/// Addresses tracked at most (the oldest windows are dropped first).
const MAX_TRACKED: usize = 10_000;

/// Failed authentications per client address.
#[derive(Debug, Default)]
pub struct Failures {
    by_addr: Mutex<HashMap<IpAddr, (u32, Instant)>>,
}

impl Failures {
    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<IpAddr, (u32, Instant)>> {
        self.by_addr.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Seconds until `addr` may try again, when it is held back.
    pub fn held_back(&self, addr: IpAddr) -> Option<u64> {
        let map = self.map();
        let (n, since) = map.get(&addr)?;
        let left = WINDOW.checked_sub(since.elapsed())?;
        (*n >= MAX_FAILURES).then(|| left.as_secs().max(1))
    }

    /// Counts an unknown token from `addr`.
    pub fn failed(&self, addr: IpAddr) {
        let mut map = self.map();
        if map.len() >= MAX_TRACKED {
            map.retain(|_, (_, since)| since.elapsed() < WINDOW);
            if map.len() >= MAX_TRACKED {
                if let Some(oldest) = map.iter().min_by_key(|(_, (_, t))| *t).map(|(a, _)| *a) {
                    map.remove(&oldest);
                }
            }
        }
        let e = map.entry(addr).or_insert((0, Instant::now()));
        if e.1.elapsed() >= WINDOW {
            *e = (0, Instant::now());
        }
        e.0 += 1;
    }
}

/// The client's address (absent in in-process tests, which are not limited).
pub fn client_addr(parts: &Parts) -> Option<IpAddr> {
    parts
        .extensions
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0.ip())
}

/// The role `token` grants to a client at `addr`, counting a failure; 429 when the address
/// is held back.
pub fn authenticate(state: &AppState, addr: Option<IpAddr>, token: &str) -> Result<Role, ApiError> {
    if let Some(secs) = addr.and_then(|a| state.failures.held_back(a)) {
        return Err(ApiError::too_many(secs));
    }
    state.tokens.role_of(token).ok_or_else(|| {
        if let Some(a) = addr {
            state.failures.failed(a);
        }
        ApiError::unauthorized("unknown token")
    })
}

/// The token presented in an `Authorization: Bearer` header, if any.
pub fn bearer(parts: &Parts) -> Option<&str> {
    parts
        .headers
        .get(axum::http::header::AUTHORIZATION)?
        .to_str()
        .ok()?
        .strip_prefix("Bearer ")
        .map(str::trim)
}

/// A caller with at least viewer rights.
#[derive(Debug, Clone, Copy)]
pub struct Viewer(pub Role);

/// A caller with operator rights.
#[derive(Debug, Clone, Copy)]
pub struct Operator;

fn role(parts: &Parts, state: &AppState) -> Result<Role, ApiError> {
    let token = bearer(parts)
        .ok_or_else(|| ApiError::unauthorized("missing 'Authorization: Bearer TOKEN' header"))?;
    authenticate(state, client_addr(parts), token)
}

impl FromRequestParts<AppState> for Viewer {
    type Rejection = ApiError;
    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        role(parts, state).map(Viewer)
    }
}

impl FromRequestParts<AppState> for Operator {
    type Rejection = ApiError;
    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        match role(parts, state)? {
            Role::Operator => Ok(Operator),
            Role::Viewer => Err(ApiError::forbidden(
                "this needs the operator token; a viewer token can only read and stream",
            )),
        }
    }
}
