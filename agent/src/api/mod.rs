//! The HTTP API (`/api/v1`, JSON), the live WebSocket stream, Prometheus metrics and the
//! embedded dashboard. Handlers are thin: they authenticate, call the run manager or the
//! store off the async threads, and map errors once (`error.rs`).

pub mod assets;
pub mod auth;
pub mod error;
pub mod extract;
pub mod metrics;
pub mod routes;
pub mod runs;
pub mod targets;
pub mod witness;
pub mod ws;

#[cfg(test)]
mod tests;

use crate::service::manager::Manager;
use crate::service::tokens::Tokens;
use axum::extract::DefaultBodyLimit;
use axum::routing::any;
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
/// no framing by other sites. Connections (HTTP and WebSocket) may go to other hosts: the
/// fleet view talks to the agents its user adds, each of which decides by `--cors-origin`
/// whether this page may (no script but the agent's own runs here to misuse that).
const CSP: &str = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; \
                   style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; \
                   connect-src 'self' http: https: ws: wss:; frame-ancestors 'none'; \
                   base-uri 'none'; form-action 'self'";

/// Cross-origin API calls: off unless the operator names origins (`--cors-origin`), and
/// then only for those, with the bearer token in `Authorization` (no cookies exist, so no
/// credentials mode). Preflights are answered for the API's methods and headers.
fn cors(origins: &[String]) -> tower_http::cors::CorsLayer {
    use axum::http::{header, HeaderValue, Method};
    let list: Vec<HeaderValue> = origins
        .iter()
        .filter_map(|o| HeaderValue::from_str(o).ok())
        .collect();
    tower_http::cors::CorsLayer::new()
        .allow_origin(tower_http::cors::AllowOrigin::list(list))
        .allow_methods([Method::GET, Method::POST, Method::DELETE])
        .allow_headers([header::AUTHORIZATION, header::CONTENT_TYPE])
        .max_age(std::time::Duration::from_secs(600))
}

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
    let cors = cors(&state.origins);
    // Every endpoint comes from the table its OpenAPI document is made from, behind the
    // access layer of the level the table gives it.
    let api = routes::table().into_iter().fold(Router::new(), |r, route| {
        let path = route.path;
        r.route(path, route.into_guarded(&state))
    });
    api.route("/api/{*rest}", any(api_not_found))
        .fallback(assets::serve)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
        .layer(axum::middleware::map_response(security_headers))
        .layer(cors)
        .with_state(state)
}
