//! The HTTP API (`/api/v1`, JSON), the live WebSocket stream, Prometheus metrics and the
//! embedded dashboard. Handlers are thin: they authenticate, call the run manager or the
//! store off the async threads, and map errors once (`error.rs`).

pub mod assets;
pub mod auth;
pub mod error;
pub mod extract;
pub mod metrics;
pub mod runs;
pub mod targets;
pub mod ws;

#[cfg(test)]
mod tests;

use crate::service::manager::Manager;
use crate::service::tokens::Tokens;
use axum::extract::DefaultBodyLimit;
use axum::routing::{any, get, post};
use axum::Router;
use error::ApiError;
use std::sync::Arc;

/// Largest request body accepted (a workload spec is well under 2 KiB).
pub const BODY_LIMIT: usize = 64 * 1024;

#[derive(Clone, Debug)]
pub struct AppState {
    pub manager: Arc<Manager>,
    pub tokens: Arc<Tokens>,
    /// Failed authentications per client address.
    pub failures: Arc<auth::Failures>,
    /// Origins besides the agent's own whose pages may open the WebSocket (`--cors-origin`).
    pub origins: Arc<Vec<String>>,
}

async fn api_not_found(uri: axum::http::Uri) -> ApiError {
    ApiError::not_found(format!("no API endpoint {}", uri.path()))
}

async fn method_not_allowed(method: axum::http::Method, uri: axum::http::Uri) -> ApiError {
    ApiError::new(
        axum::http::StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        format!("{method} is not allowed on {}", uri.path()),
    )
}

/// The page's content security policy: only the agent's own scripts (and its WebAssembly),
/// no framing by other sites, connections (HTTP and WebSocket) to the agent only.
const CSP: &str = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; \
                   style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; \
                   connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; \
                   form-action 'self'";

/// Browser hygiene on every response: CSP, no framing, no MIME sniffing, no referrer
/// (a kiosk URL may carry its token).
async fn security_headers(mut resp: axum::response::Response) -> axum::response::Response {
    use axum::http::header::{self, HeaderValue};
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    resp
}

pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/api/v1/health", get(targets::health))
        .route("/api/v1/targets", get(targets::list))
        .route("/api/v1/devices", get(targets::devices))
        .route("/api/v1/presets", get(targets::presets))
        .route("/api/v1/traces", get(targets::traces))
        .route("/api/v1/runs", get(runs::list).post(runs::create))
        .route("/api/v1/runs/{id}", get(runs::get).delete(runs::delete))
        .route("/api/v1/runs/{id}/samples", get(runs::samples))
        .route("/api/v1/runs/{id}/stop", post(runs::stop))
        .route("/api/v1/runs/{id}/export", get(runs::export))
        .route("/api/v1/runs/{id}/timeline", get(runs::timeline))
        .route("/api/v1/ws", get(ws::handler))
        .route("/metrics", get(metrics::metrics))
        .route("/api/{*rest}", any(api_not_found))
        .fallback(assets::serve)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
        .layer(axum::middleware::map_response(security_headers))
        .with_state(state)
}
