//! `/api/v1/witness`: this agent as the witness of another's flush check (`diskscope
//! flushcheck`): a writer opens a session, then after each flush that returned sends the
//! blocks it made durable; each batch is on this agent's disk before it is answered.

use super::error::ApiError;
use super::extract::{blocking, ApiJson, ApiPath};
use super::AppState;
use crate::store::witness::WitnessError;
use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use shared::flushcheck::{Durable, NewSession, Records, Session, MAX_RECORDS_PER_CALL};

impl From<WitnessError> for ApiError {
    fn from(e: WitnessError) -> Self {
        match e {
            WitnessError::NoSession(_) => ApiError::not_found(e.to_string()),
            WitnessError::OutOfOrder { .. } => {
                ApiError::new(StatusCode::CONFLICT, "out_of_order", e.to_string())
            }
            WitnessError::OutOfSpan { .. } => ApiError::bad_request(e.to_string()),
            WitnessError::Store(s) => ApiError::from(s),
        }
    }
}

pub async fn open(
    State(st): State<AppState>,
    ApiJson(s): ApiJson<NewSession>,
) -> Result<(StatusCode, Json<Session>), ApiError> {
    if s.bs == 0 || s.blocks == 0 {
        return Err(ApiError::bad_request(format!(
            "a session needs a block size and blocks (bs {}, blocks {})",
            s.bs, s.blocks
        )));
    }
    let store = st.manager.store().clone();
    let session = blocking(move || {
        store
            .witness_open(&s, crate::env::unix_ms())
            .map_err(ApiError::from)
    })
    .await?;
    Ok((StatusCode::CREATED, Json(session)))
}

pub async fn durable(
    State(st): State<AppState>,
    ApiPath(id): ApiPath<i64>,
    ApiJson(d): ApiJson<Durable>,
) -> Result<Json<Session>, ApiError> {
    if d.records.len() > MAX_RECORDS_PER_CALL {
        return Err(ApiError::bad_request(format!(
            "{} records in one call: at most {MAX_RECORDS_PER_CALL}",
            d.records.len()
        )));
    }
    let store = st.manager.store().clone();
    let session =
        blocking(move || store.witness_append(id, &d.records).map_err(ApiError::from)).await?;
    Ok(Json(session))
}

pub async fn records(
    State(st): State<AppState>,
    ApiPath(id): ApiPath<i64>,
) -> Result<Json<Records>, ApiError> {
    let store = st.manager.store().clone();
    let r = blocking(move || store.witness_records(id).map_err(ApiError::from)).await?;
    Ok(Json(r))
}
