//! Bearer tokens and roles. `Authorization: Bearer TOKEN` on every API call except health;
//! the WebSocket takes the same header or an `auth` first message. A missing or unknown token
//! is 401; a viewer token on an operator action is 403.

use super::error::ApiError;
use super::AppState;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use shared::api::Role;

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
    state
        .tokens
        .role_of(token)
        .ok_or_else(|| ApiError::unauthorized("unknown token"))
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
