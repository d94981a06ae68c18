//! Bearer tokens and roles, enforced from the route table: [`guard`] is the layer the router
//! puts on every route for the route's [`Access`] level, so no handler authenticates on its own.
//! `Authorization: Bearer TOKEN` on every API call except health and the OpenAPI document; the
//! WebSocket takes the same header or an `auth` first message. A missing or unknown token is
//! 401; a viewer token on an operator action is 403. An address that presented
//! [`MAX_FAILURES`] unknown tokens within [`WINDOW`] gets 429 (with `Retry-After`) for every
//! further unknown token until the window ends, so tokens (long random secrets) cannot be
//! guessed at network speed; a valid token is never held back, so one careless script on a
//! shared machine (or everyone behind one proxy) cannot lock the operator out.

use super::error::ApiError;
use super::routes::Access;
use super::AppState;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::request::Parts;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
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

/// The role `token` grants to a client at `addr`. An unknown token counts a failure, and is
/// 429 instead of 401 while the address is held back; a valid token always gets through.
pub fn authenticate(state: &AppState, addr: Option<IpAddr>, token: &str) -> Result<Role, ApiError> {
    if let Some(role) = state.tokens.role_of(token) {
        return Ok(role);
    }
    if let Some(a) = addr {
        if let Some(secs) = state.failures.held_back(a) {
            return Err(ApiError::too_many(secs));
        }
        state.failures.failed(a);
    }
    Err(ApiError::unauthorized("unknown token"))
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

/// The authenticated caller's role, which [`guard`] puts in the request's extensions (absent
/// on public routes and on a WebSocket upgrade that will authenticate by message).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caller(pub Role);

/// The access layer: what [`Access`] the route table gives a route is what every request to
/// it must show, before its handler or any of the handler's extractors run.
pub async fn guard(
    State((st, access)): State<(AppState, Access)>,
    mut req: Request,
    next: Next,
) -> Response {
    let (mut parts, body) = req.into_parts();
    let role = match (access, bearer(&parts)) {
        (Access::Public, _) => None,
        (Access::Stream, None) => None,
        (_, None) => {
            return ApiError::unauthorized("missing 'Authorization: Bearer TOKEN' header")
                .into_response()
        }
        (_, Some(token)) => match authenticate(&st, client_addr(&parts), token) {
            Ok(role) => Some(role),
            Err(e) => return e.into_response(),
        },
    };
    if access == Access::Operator && role != Some(Role::Operator) {
        return ApiError::forbidden(
            "this needs the operator token; a viewer token can only read and stream",
        )
        .into_response();
    }
    if let Some(role) = role {
        parts.extensions.insert(Caller(role));
    }
    req = Request::from_parts(parts, body);
    next.run(req).await
}
