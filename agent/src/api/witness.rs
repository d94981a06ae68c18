//! `/api/v1/witness`: this agent as the witness of another's flush check (`diskscope
//! flushcheck`): a writer opens a session, then after each flush that returned sends the
//! blocks it made durable; each batch is on this agent's disk before it is answered.

use super::error::ApiError;
use super::extract::{blocking, ApiJson, ApiPath, ApiQuery};
use super::AppState;
use crate::store::witness::WitnessError;
use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use shared::flushcheck::{
    Durable, NewSession, Records, RecordsQuery, Session, SessionQuery, Verdict, VerifyRequest,
    MAX_RECORDS_PER_CALL, MAX_RECORDS_PER_PAGE,
};

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
    if let Some(why) = s.problem() {
        return Err(ApiError::bad_request(why));
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
    ApiQuery(q): ApiQuery<RecordsQuery>,
) -> Result<Json<Records>, ApiError> {
    let limit = q.limit.unwrap_or(MAX_RECORDS_PER_PAGE);
    if !(1..=MAX_RECORDS_PER_PAGE).contains(&limit) {
        return Err(ApiError::bad_request(format!(
            "limit {limit}: 1..{MAX_RECORDS_PER_PAGE} records a page"
        )));
    }
    let store = st.manager.store().clone();
    let r = blocking(move || {
        store
            .witness_records(id, q.after, limit)
            .map_err(ApiError::from)
    })
    .await?;
    Ok(Json(r))
}

pub async fn sessions(
    State(st): State<AppState>,
    ApiQuery(q): ApiQuery<SessionQuery>,
) -> Result<Json<Vec<Session>>, ApiError> {
    let store = st.manager.store().clone();
    let r = blocking(move || {
        store
            .witness_sessions(&q.host, &q.target)
            .map_err(ApiError::from)
    })
    .await?;
    Ok(Json(r))
}

/// A flush check's read-back on one of this agent's targets (the dashboard's *Verify after
/// power cut*): the target checked as any run's, the records fetched from the witness.
pub async fn verify(
    State(st): State<AppState>,
    ApiJson(req): ApiJson<VerifyRequest>,
) -> Result<Json<Verdict>, ApiError> {
    use crate::flushcheck::VerifyError;
    use crate::measure::MeasureError;
    use crate::service::manager::ServiceError;
    let manager = st.manager.clone();
    blocking(move || {
        let loc = manager
            .access()
            .open_target(&req.target, None)
            .map_err(|e| ApiError::from(ServiceError::Access(e)))?;
        let target = |e| ApiError::from(ServiceError::Measure(MeasureError::Target(e)));
        let info = loc.probe(None, false).map_err(target)?;
        let remote = crate::client::Remote::new(&req.witness, req.token.clone());
        crate::flushcheck::verify_on(&info, &remote, req.session).map_err(|e| match e {
            VerifyError::Target(t) => target(t),
            VerifyError::NoSession { .. } => ApiError::not_found(e.to_string()),
            VerifyError::Witness(_) => ApiError::new(
                StatusCode::BAD_GATEWAY,
                "witness_unreachable",
                e.to_string(),
            ),
            VerifyError::Buffer(_) => ApiError::internal(&e),
        })
    })
    .await
    .map(Json)
}
