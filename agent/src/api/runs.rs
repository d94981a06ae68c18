//! `/api/v1/runs`: start, list, read, samples, stop, delete, export.

use super::auth::{Operator, Viewer};
use super::error::ApiError;
use super::AppState;
use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use shared::api::{CreateRun, Created, RunInfo, RunList, SampleList};
use shared::{RunReport, RunStatus, PROTOCOL_VERSION};

/// Most samples one `samples` call returns.
const MAX_SAMPLES_PER_CALL: u32 = 100_000;

/// Runs blocking work (store, target probing) off the async threads.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ApiError::internal(&e))?
}

pub async fn create(
    State(st): State<AppState>,
    _: Operator,
    body: Result<Json<CreateRun>, JsonRejection>,
) -> Result<(StatusCode, Json<Created>), ApiError> {
    let Json(req) = body?;
    let manager = st.manager.clone();
    let id = blocking(move || manager.start(&req).map_err(ApiError::from)).await?;
    Ok((StatusCode::CREATED, Json(Created { id })))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListQuery {
    target: Option<String>,
    preset: Option<String>,
    status: Option<String>,
    /// Unix ms.
    since: Option<u64>,
    until: Option<u64>,
    page: Option<u32>,
    per_page: Option<u32>,
}

pub async fn list(
    State(st): State<AppState>,
    _: Viewer,
    q: Result<Query<ListQuery>, QueryRejection>,
) -> Result<Json<RunList>, ApiError> {
    let Query(q) = q?;
    let status = match q.status.as_deref() {
        None => None,
        Some(s) => Some(RunStatus::parse(s).ok_or_else(|| {
            ApiError::bad_request(format!(
                "status = '{s}': expected running, completed, stopped, failed or interrupted"
            ))
        })?),
    };
    let query = crate::store::RunQuery {
        target: q.target,
        preset: q.preset,
        state: status,
        since_ms: q.since,
        until_ms: q.until,
        page: q.page.unwrap_or(1).max(1),
        per_page: q.per_page.unwrap_or(50).clamp(1, 500),
    };
    let store = st.manager.store().clone();
    let (page, per_page) = (query.page, query.per_page);
    let (mut runs, total) =
        blocking(move || store.list_runs(&query).map_err(ApiError::from)).await?;
    for run in &mut runs {
        if let Some((status, error)) = st.manager.unrecorded_end(run.id) {
            run.status = status;
            run.error = Some(error);
        }
    }
    Ok(Json(RunList {
        runs,
        total,
        page,
        per_page,
    }))
}

async fn load(st: &AppState, id: i64) -> Result<RunInfo, ApiError> {
    let store = st.manager.store().clone();
    let mut run = blocking(move || {
        store
            .get_run(id)?
            .ok_or_else(|| ApiError::not_found(format!("run {id} not found")))
    })
    .await?;
    if let Some((status, error)) = st.manager.unrecorded_end(id) {
        run.status = status;
        run.error = Some(error);
    }
    Ok(run)
}

pub async fn get(
    State(st): State<AppState>,
    _: Viewer,
    id: Result<Path<i64>, PathRejection>,
) -> Result<Json<RunInfo>, ApiError> {
    let Path(id) = id?;
    load(&st, id).await.map(Json)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SamplesQuery {
    after_seq: Option<u64>,
    limit: Option<u32>,
}

pub async fn samples(
    State(st): State<AppState>,
    _: Viewer,
    id: Result<Path<i64>, PathRejection>,
    q: Result<Query<SamplesQuery>, QueryRejection>,
) -> Result<Json<SampleList>, ApiError> {
    let Path(id) = id?;
    let Query(q) = q?;
    load(&st, id).await?;
    let store = st.manager.store().clone();
    let limit = q
        .limit
        .unwrap_or(MAX_SAMPLES_PER_CALL)
        .min(MAX_SAMPLES_PER_CALL);
    let samples = blocking(move || {
        store
            .samples_after(id, q.after_seq, limit)
            .map_err(ApiError::from)
    })
    .await?;
    Ok(Json(SampleList {
        run_id: id,
        samples,
    }))
}

pub async fn stop(
    State(st): State<AppState>,
    _: Operator,
    id: Result<Path<i64>, PathRejection>,
) -> Result<StatusCode, ApiError> {
    let Path(id) = id?;
    let manager = st.manager.clone();
    blocking(move || manager.stop(id).map_err(ApiError::from)).await?;
    Ok(StatusCode::ACCEPTED)
}

pub async fn delete(
    State(st): State<AppState>,
    _: Operator,
    id: Result<Path<i64>, PathRejection>,
) -> Result<StatusCode, ApiError> {
    let Path(id) = id?;
    let manager = st.manager.clone();
    blocking(move || manager.delete(id).map_err(ApiError::from)).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExportQuery {
    format: Option<String>,
}

/// The run as one document: the same JSON as the CLI's `--json`, or one CSV row per sample.
pub async fn export(
    State(st): State<AppState>,
    _: Viewer,
    id: Result<Path<i64>, PathRejection>,
    q: Result<Query<ExportQuery>, QueryRejection>,
) -> Result<Response, ApiError> {
    let Path(id) = id?;
    let Query(q) = q?;
    let format = q.format.unwrap_or_else(|| "json".into());
    if format != "json" && format != "csv" {
        return Err(ApiError::bad_request(format!(
            "format = '{format}': expected json or csv"
        )));
    }
    let run = load(&st, id).await?;
    let store = st.manager.store().clone();
    let (samples, histogram, timeline) = blocking(move || {
        Ok((
            store.samples_after(id, None, u32::MAX)?,
            store.histogram(id)?,
            store.timeline(id)?,
        ))
    })
    .await?;
    let name = format!("diskscope-run-{id}.{format}");
    let disposition = format!("attachment; filename=\"{name}\"");
    if format == "csv" {
        let mut out = Vec::new();
        crate::report::csv::write_to(&mut out, &samples).map_err(|e| ApiError::internal(&e))?;
        return Ok((
            [
                (header::CONTENT_TYPE, "text/csv".to_string()),
                (header::CONTENT_DISPOSITION, disposition),
            ],
            out,
        )
            .into_response());
    }
    let report = RunReport {
        protocol_version: PROTOCOL_VERSION,
        status: run.status,
        error: run.error,
        spec: run.spec,
        environment: run.environment.unwrap_or_default(),
        summary: run.summary.unwrap_or_default(),
        samples,
        histogram: histogram.unwrap_or_default(),
        steps: run.steps,
        analysis: run.analysis.unwrap_or_default(),
        timeline,
        targets: run.targets,
    };
    Ok(([(header::CONTENT_DISPOSITION, disposition)], Json(report)).into_response())
}
