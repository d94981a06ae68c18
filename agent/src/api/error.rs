//! The one mapping from errors to HTTP responses: `{ "code": ..., "message": ... }` with the
//! status that fits. User errors quote the bad value; internal details are logged, not sent.

use crate::measure::MeasureError;
use crate::service::access::AccessError;
use crate::service::manager::ServiceError;
use crate::store::StoreError;
use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use shared::api::ApiErrorBody;

#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
    /// Seconds for `Retry-After` (429).
    pub retry_after_s: Option<u64>,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            message: message.into(),
            retry_after_s: None,
        }
    }

    /// Too many failed authentications from this address: try again in `secs`.
    pub fn too_many(secs: u64) -> Self {
        let mut e = ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            "too_many_failures",
            format!("too many unknown tokens from this address: try again in {secs} s"),
        );
        e.retry_after_s = Some(secs);
        e
    }

    pub fn unauthorized(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::UNAUTHORIZED, "unauthorized", message)
    }

    pub fn forbidden(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::FORBIDDEN, "forbidden", message)
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::BAD_REQUEST, "bad_request", message)
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::NOT_FOUND, "not_found", message)
    }

    /// A failure that is not the caller's: logged in full, reported without details.
    pub fn internal(e: &dyn std::fmt::Display) -> Self {
        tracing::error!("internal error: {e}");
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "internal error (details are in the agent's log)",
        )
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = ApiErrorBody {
            code: self.code.to_string(),
            message: self.message,
        };
        let mut resp = (self.status, Json(body)).into_response();
        if let Some(s) = self.retry_after_s {
            resp.headers_mut()
                .insert(axum::http::header::RETRY_AFTER, s.into());
        }
        resp
    }
}

impl From<JsonRejection> for ApiError {
    fn from(r: JsonRejection) -> Self {
        // One status for every body the agent cannot use (axum says 422 for well-formed JSON
        // of the wrong shape); too large and wrong content type keep theirs.
        let (status, code) = match r.status() {
            StatusCode::PAYLOAD_TOO_LARGE => (StatusCode::PAYLOAD_TOO_LARGE, "too_large"),
            StatusCode::UNSUPPORTED_MEDIA_TYPE => {
                (StatusCode::UNSUPPORTED_MEDIA_TYPE, "bad_content_type")
            }
            _ => (StatusCode::BAD_REQUEST, "bad_json"),
        };
        ApiError::new(status, code, r.body_text())
    }
}

impl From<PathRejection> for ApiError {
    fn from(r: PathRejection) -> Self {
        ApiError::new(StatusCode::BAD_REQUEST, "bad_path", r.body_text())
    }
}

impl From<QueryRejection> for ApiError {
    fn from(r: QueryRejection) -> Self {
        ApiError::new(StatusCode::BAD_REQUEST, "bad_query", r.body_text())
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        ApiError::internal(&e)
    }
}

impl From<ServiceError> for ApiError {
    fn from(e: ServiceError) -> Self {
        use StatusCode as S;
        let msg = e.to_string();
        match e {
            ServiceError::Measure(MeasureError::Spec(_)) => {
                ApiError::new(S::BAD_REQUEST, "invalid_spec", msg)
            }
            ServiceError::Measure(MeasureError::Target(_)) => {
                ApiError::new(S::BAD_REQUEST, "target_error", msg)
            }
            ServiceError::Measure(MeasureError::Start(_)) => {
                ApiError::new(S::INTERNAL_SERVER_ERROR, "start_failed", msg)
            }
            ServiceError::Access(AccessError::InUse { .. } | AccessError::Signature { .. }) => {
                ApiError::new(S::FORBIDDEN, "target_in_use", msg)
            }
            ServiceError::Access(AccessError::Missing(_)) => {
                ApiError::new(S::BAD_REQUEST, "target_error", msg)
            }
            ServiceError::Access(_) => ApiError::new(S::FORBIDDEN, "target_not_allowed", msg),
            ServiceError::Busy { .. } => ApiError::new(S::CONFLICT, "target_busy", msg),
            ServiceError::Memory { .. } => ApiError::new(S::CONFLICT, "memory_busy", msg),
            ServiceError::StillRunning(_) | ServiceError::NotRunning(_) => {
                ApiError::new(S::CONFLICT, "run_state", msg)
            }
            ServiceError::ConfirmDevice(_) => {
                ApiError::new(S::PRECONDITION_REQUIRED, "confirm_required", msg)
            }
            ServiceError::SpecOrPreset(_)
            | ServiceError::FioJob(_)
            | ServiceError::JobWithAlso
            | ServiceError::PresetWithAlso(_)
            | ServiceError::NoSteps(_)
            | ServiceError::BadRepeat(_)
            | ServiceError::Witness(_)
            | ServiceError::Measure(MeasureError::NoTargets)
            | ServiceError::Preset(_)
            | ServiceError::Repeated(_)
            | ServiceError::TooManyTargets(_)
            | ServiceError::StartAt(..)
            | ServiceError::GroupHere => ApiError::new(S::BAD_REQUEST, "invalid_request", msg),
            ServiceError::NotFound(_) => ApiError::new(S::NOT_FOUND, "not_found", msg),
            ServiceError::ShuttingDown => {
                ApiError::new(S::SERVICE_UNAVAILABLE, "shutting_down", msg)
            }
            ServiceError::Group(g) => {
                use crate::group::GroupError as G;
                match g {
                    G::Unreachable { .. } => {
                        ApiError::new(S::BAD_GATEWAY, "member_unreachable", msg)
                    }
                    G::Offset { .. } => ApiError::new(S::CONFLICT, "clock_offset", msg),
                    G::Refused { .. } => ApiError::new(S::CONFLICT, "member_refused", msg),
                    _ => ApiError::new(S::BAD_REQUEST, "invalid_request", msg),
                }
            }
            ServiceError::Store(e) => ApiError::internal(&e),
            ServiceError::Thread(e) => ApiError::internal(&e),
        }
    }
}
