//! `/api/v1/runs`: start, list, read, samples, stop, delete, export.

use super::error::ApiError;
use super::extract::{blocking, ApiJson, ApiPath, ApiQuery};
use super::AppState;
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use shared::api::{CheckFioJob, CreateRun, Created, FioJobSteps, RunInfo, RunList, SampleList};
use shared::{RunReport, RunStatus, PROTOCOL_VERSION};

/// Most samples one `samples` call returns.
const MAX_SAMPLES_PER_CALL: u32 = 100_000;

pub async fn create(
    State(st): State<AppState>,
    ApiJson(req): ApiJson<CreateRun>,
) -> Result<(StatusCode, Json<Created>), ApiError> {
    let manager = st.manager.clone();
    let id = blocking(move || manager.start(&req).map_err(ApiError::from)).await?;
    Ok((StatusCode::CREATED, Json(Created { id })))
}

/// A group run: the members' runs started, the merged run here.
pub async fn create_group(
    State(st): State<AppState>,
    ApiJson(req): ApiJson<CreateRun>,
) -> Result<(StatusCode, Json<Created>), ApiError> {
    let manager = st.manager.clone();
    let id = blocking(move || manager.start_group(&req).map_err(ApiError::from)).await?;
    Ok((StatusCode::CREATED, Json(Created { id })))
}

/// A fio job file's steps as they would run (the dashboard shows them before *Start*).
pub async fn check_fio_job(
    ApiJson(req): ApiJson<CheckFioJob>,
) -> Result<Json<FioJobSteps>, ApiError> {
    let steps =
        blocking(move || crate::service::manager::check_fio_job(&req).map_err(ApiError::from))
            .await?;
    Ok(Json(steps))
}

pub async fn check_spec(
    ApiJson(spec): ApiJson<shared::WorkloadSpec>,
) -> Json<shared::api::SpecCheck> {
    Json(crate::service::manager::check_spec(&spec))
}

pub async fn read_spec(
    ApiJson(f): ApiJson<shared::api::SpecFields>,
) -> Json<shared::api::SpecRead> {
    Json(crate::service::manager::read_spec(&f))
}

pub async fn spec_fields(
    ApiJson(spec): ApiJson<shared::WorkloadSpec>,
) -> Json<shared::api::SpecFields> {
    Json(shared::api::SpecFields {
        fields: shared::options::OPTIONS
            .iter()
            .map(|o| (o.key.to_string(), (o.get)(&spec)))
            .collect(),
    })
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListQuery {
    /// Only runs on this target (its path).
    target: Option<String>,
    /// Only runs of this preset.
    preset: Option<String>,
    /// running, completed, stopped, failed or interrupted.
    status: Option<String>,
    /// Only runs created at or after this time (Unix ms).
    since: Option<u64>,
    /// Only runs created before this time (Unix ms).
    until: Option<u64>,
    /// Page number, from 1.
    page: Option<u32>,
    /// Runs per page (default 50, at most 500).
    per_page: Option<u32>,
}

pub async fn list(
    State(st): State<AppState>,
    ApiQuery(q): ApiQuery<ListQuery>,
) -> Result<Json<RunList>, ApiError> {
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
    ApiPath(id): ApiPath<i64>,
) -> Result<Json<RunInfo>, ApiError> {
    load(&st, id).await.map(Json)
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SamplesQuery {
    /// Samples after this seq (a page).
    after_seq: Option<u64>,
    /// At most this many samples in a page.
    limit: Option<u32>,
    /// At most this many samples over `[from_seq, to_seq]`: the min/max envelope of a long
    /// run (`Store::samples_envelope`), for a chart as wide as this.
    max_points: Option<u32>,
    /// First seq of the envelope's range.
    from_seq: Option<u64>,
    /// Last seq of the envelope's range.
    to_seq: Option<u64>,
}

pub async fn samples(
    State(st): State<AppState>,
    ApiPath(id): ApiPath<i64>,
    ApiQuery(q): ApiQuery<SamplesQuery>,
) -> Result<Json<SampleList>, ApiError> {
    load(&st, id).await?;
    let store = st.manager.store().clone();
    let samples = match q.max_points {
        Some(n) => {
            let max = shared::api::MAX_ENVELOPE_POINTS;
            if !(2..=max).contains(&n) {
                return Err(ApiError::bad_request(format!(
                    "max_points = {n}: expected 2..={max}"
                )));
            }
            if let Some(a) = q.after_seq.or(q.limit.map(u64::from)) {
                return Err(ApiError::bad_request(format!(
                    "after_seq/limit = {a} with max_points: give from_seq and to_seq instead"
                )));
            }
            if let (Some(f), Some(t)) = (q.from_seq, q.to_seq) {
                if f > t {
                    return Err(ApiError::bad_request(format!(
                        "from_seq = {f} is after to_seq = {t}"
                    )));
                }
            }
            let from = q.from_seq.unwrap_or(0);
            blocking(move || {
                store
                    .samples_envelope(id, from, q.to_seq, n)
                    .map_err(ApiError::from)
            })
            .await?
        }
        None => {
            if let Some(f) = q.from_seq.or(q.to_seq) {
                return Err(ApiError::bad_request(format!(
                    "from_seq/to_seq = {f} without max_points: page with after_seq instead"
                )));
            }
            let limit = q
                .limit
                .unwrap_or(MAX_SAMPLES_PER_CALL)
                .min(MAX_SAMPLES_PER_CALL);
            blocking(move || {
                store
                    .samples_after(id, q.after_seq, limit)
                    .map_err(ApiError::from)
            })
            .await?
        }
    };
    Ok(Json(SampleList {
        run_id: id,
        samples,
    }))
}

pub async fn stop(
    State(st): State<AppState>,
    ApiPath(id): ApiPath<i64>,
) -> Result<StatusCode, ApiError> {
    let manager = st.manager.clone();
    blocking(move || manager.stop(id).map_err(ApiError::from)).await?;
    Ok(StatusCode::ACCEPTED)
}

pub async fn delete(
    State(st): State<AppState>,
    ApiPath(id): ApiPath<i64>,
) -> Result<StatusCode, ApiError> {
    let manager = st.manager.clone();
    blocking(move || manager.delete(id).map_err(ApiError::from)).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExportQuery {
    /// json or csv; for a run's export also fio-json and fio-json+ (fio's JSON document).
    format: Option<String>,
}

impl ExportQuery {
    /// A run's export: `json` (default), `csv`, `fio-json` or `fio-json+`.
    fn run_format(self) -> Result<&'static str, ApiError> {
        match self.format.as_deref() {
            Some("fio-json") => Ok("fio-json"),
            Some("fio-json+") => Ok("fio-json+"),
            Some("json" | "csv") | None => self.format("json"),
            Some(other) => Err(ApiError::bad_request(format!(
                "format = '{other}': expected json, csv, fio-json or fio-json+"
            ))),
        }
    }

    /// `json` or `csv` (`default` when not given); anything else is named.
    fn format(self, default: &'static str) -> Result<&'static str, ApiError> {
        match self.format.as_deref().unwrap_or(default) {
            "json" => Ok("json"),
            "csv" => Ok("csv"),
            other => Err(ApiError::bad_request(format!(
                "format = '{other}': expected json or csv"
            ))),
        }
    }
}

/// The run as one document: the same JSON as the CLI's `--json`, one CSV row per sample,
/// or fio's JSON document (`--output-format fio-json[+]`).
pub async fn export(
    State(st): State<AppState>,
    ApiPath(id): ApiPath<i64>,
    ApiQuery(q): ApiQuery<ExportQuery>,
) -> Result<Response, ApiError> {
    let format = q.run_format()?;
    let run = load(&st, id).await?;
    let store = st.manager.store().clone();
    let name = match format {
        "fio-json" => format!("diskscope-run-{id}-fio.json"),
        "fio-json+" => format!("diskscope-run-{id}-fio-plus.json"),
        _ => format!("diskscope-run-{id}.{format}"),
    };
    stream_document(name, move |out| {
        let samples = paged_samples(&store, id);
        if format == "csv" {
            return write_csv(out, samples);
        }
        let histogram = store.histogram(id).map_err(std::io::Error::other)?;
        let timeline = store.timeline(id).map_err(std::io::Error::other)?;
        let report = RunReport {
            protocol_version: PROTOCOL_VERSION,
            status: run.status,
            error: run.error,
            spec: run.spec,
            environment: run.environment.unwrap_or_default(),
            summary: run.summary.unwrap_or_default(),
            samples: Vec::new(),
            histogram: histogram.unwrap_or_default(),
            steps: run.steps,
            analysis: run.analysis.unwrap_or_default(),
            timeline,
            targets: run.targets,
        };
        if format.starts_with("fio-json") {
            // A run started from a job file names its jobs, groups and options from it (it
            // parsed when the run was created; a file that no longer does is left out).
            let text = store.job_file(id).map_err(std::io::Error::other)?;
            let jobs = text.and_then(|t| crate::fiojob::JobFile::from_request(&t).ok());
            return write_fio_json(out, &report, samples, jobs.as_ref(), format == "fio-json+");
        }
        crate::report::write_json_with(out, &report, samples)
    })
}

/// fio's JSON document of a stored run, its samples read once from the store.
fn write_fio_json(
    out: &mut ChunkWriter,
    report: &RunReport,
    samples: impl Iterator<Item = std::io::Result<shared::Sample>>,
    jobs: Option<&crate::fiojob::JobFile>,
    plus: bool,
) -> std::io::Result<()> {
    use crate::report::fio_json::{document, Form};
    let mut failed = None;
    let ok = samples.map_while(|r| r.map_err(|e| failed = Some(e)).ok());
    let form = if plus { Form::JsonPlus } else { Form::Json };
    let doc = document(report, ok, jobs, form);
    if let Some(e) = failed {
        return Err(e);
    }
    serde_json::to_writer_pretty(&mut *out, &doc).map_err(std::io::Error::other)?;
    std::io::Write::write_all(out, b"\n")
}

/// Exports streamed at once; more wait for one to end (`503`, `Retry-After`).
const MAX_EXPORTS: usize = 4;
/// A client that takes no part of an export for this long loses it (its slot is freed).
const EXPORT_STALL: std::time::Duration = std::time::Duration::from_secs(30);

fn exports() -> &'static std::sync::Arc<tokio::sync::Semaphore> {
    static EXPORTS: std::sync::OnceLock<std::sync::Arc<tokio::sync::Semaphore>> =
        std::sync::OnceLock::new();
    EXPORTS.get_or_init(|| std::sync::Arc::new(tokio::sync::Semaphore::new(MAX_EXPORTS)))
}

/// Streams a document that `write` produces on a blocking thread (reading the store a page
/// at a time) as the response body, named `name` (`.csv` or `.json`). At most
/// [`MAX_EXPORTS`] at once, and a client that stops reading for [`EXPORT_STALL`] is cut
/// off: slow or idle clients cannot hold the agent's threads.
fn stream_document(
    name: String,
    write: impl FnOnce(&mut ChunkWriter) -> std::io::Result<()> + Send + 'static,
) -> Result<Response, ApiError> {
    let permit = exports().clone().try_acquire_owned().map_err(|_| {
        let mut e = ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "exports_busy",
            format!("{MAX_EXPORTS} exports are being streamed: try again when one has ended"),
        );
        e.retry_after_s = Some(5);
        e
    })?;
    let content_type = if name.ends_with(".csv") {
        "text/csv"
    } else {
        "application/json"
    };
    let disposition = format!("attachment; filename=\"{name}\"");
    let (tx, rx) = tokio::sync::mpsc::channel::<std::io::Result<Vec<u8>>>(4);
    tokio::task::spawn_blocking(move || {
        let _permit = permit;
        let mut out = ChunkWriter {
            tx,
            buf: Vec::with_capacity(CHUNK),
        };
        let r = write(&mut out).and_then(|_| std::io::Write::flush(&mut out));
        if let Err(e) = r {
            // The client sees a body cut short; a closed connection needs no word.
            tracing::warn!("export {name} ended early: {e}");
            let _ = out.tx.try_send(Err(e));
        }
    });
    let stream = futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|chunk| (chunk, rx))
    });
    Ok((
        [
            (header::CONTENT_TYPE, content_type.to_string()),
            (header::CONTENT_DISPOSITION, disposition),
        ],
        axum::body::Body::from_stream(stream),
    )
        .into_response())
}

/// A run's fine timeline, streamed: every 10 ms bucket when the run stored them
/// (`timeline_chunks`), else the bounded timeline kept with it. CSV (`t_ms,bytes`) or JSON
/// (`{"bucket_ms", "exact", "bytes": [...]}`).
pub async fn timeline(
    State(st): State<AppState>,
    ApiPath(id): ApiPath<i64>,
    ApiQuery(q): ApiQuery<ExportQuery>,
) -> Result<Response, ApiError> {
    let format = q.format("csv")?;
    load(&st, id).await?;
    let store = st.manager.store().clone();
    let exact = {
        let store = store.clone();
        blocking(move || {
            store
                .exact_timeline_chunks(id, 0, 1)
                .map(|c| !c.is_empty())
                .map_err(ApiError::from)
        })
        .await?
    };
    let csv = format == "csv";
    stream_document(
        format!("diskscope-run-{id}-timeline.{format}"),
        move |out| {
            use std::io::Write;
            let (bucket_ms, buckets): (u64, Box<dyn Iterator<Item = std::io::Result<u64>>>) =
                if exact {
                    (
                        crate::stats::fine::BUCKET_NS / 1_000_000,
                        Box::new(paged_buckets(store, id)),
                    )
                } else {
                    let t = store
                        .timeline(id)
                        .map_err(std::io::Error::other)?
                        .unwrap_or_default();
                    (
                        u64::from(t.bucket_ms),
                        Box::new(t.bytes.into_iter().map(Ok)),
                    )
                };
            if csv {
                out.write_all(b"t_ms,bytes\n")?;
                for (i, b) in buckets.enumerate() {
                    writeln!(out, "{},{}", i as u64 * bucket_ms, b?)?;
                }
            } else {
                write!(
                    out,
                    "{{\"bucket_ms\":{bucket_ms},\"exact\":{exact},\"bytes\":["
                )?;
                for (i, b) in buckets.enumerate() {
                    if i > 0 {
                        out.write_all(b",")?;
                    }
                    write!(out, "{}", b?)?;
                }
                out.write_all(b"]}\n")?;
            }
            Ok(())
        },
    )
}

/// A run's exact timeline read from the store 16 chunks (65,536 buckets) at a time.
fn paged_buckets(
    store: std::sync::Arc<crate::store::Store>,
    id: i64,
) -> impl Iterator<Item = std::io::Result<u64>> {
    paged(0u64, move |next| {
        let chunks = store.exact_timeline_chunks(id, next, 16)?;
        let done = chunks.len() < 16;
        Ok((chunks.concat(), next + 16, done))
    })
}

/// Items read a page at a time: `fetch(cursor)` gives a page, the next cursor and whether
/// it was the last; an error ends the pass after it is yielded.
fn paged<C: Copy, T>(
    start: C,
    mut fetch: impl FnMut(C) -> Result<(Vec<T>, C, bool), crate::store::StoreError>,
) -> impl Iterator<Item = std::io::Result<T>> {
    let mut cursor = start;
    let mut page = Vec::new().into_iter();
    let mut done = false;
    std::iter::from_fn(move || loop {
        if let Some(x) = page.next() {
            return Some(Ok(x));
        }
        if done {
            return None;
        }
        match fetch(cursor) {
            Ok((items, next, last)) => {
                done = last;
                cursor = next;
                page = items.into_iter();
            }
            Err(e) => {
                done = true;
                return Some(Err(std::io::Error::other(e)));
            }
        }
    })
}

/// Samples read from the store at a time by an export (about 2 MB of them).
const EXPORT_PAGE: u32 = 2_000;

/// Bytes per chunk of a streamed export.
const CHUNK: usize = 64 * 1024;

/// Samples of a run read from the store a page at a time.
fn paged_samples(
    store: &crate::store::Store,
    id: i64,
) -> impl Iterator<Item = std::io::Result<shared::Sample>> + '_ {
    paged(None, move |after: Option<u64>| {
        let v = store.samples_after(id, after, EXPORT_PAGE)?;
        let next = v.last().map(|s| s.seq).or(after);
        let done = v.len() < EXPORT_PAGE as usize;
        Ok((v, next, done))
    })
}

fn write_csv(
    out: &mut ChunkWriter,
    samples: impl Iterator<Item = std::io::Result<shared::Sample>>,
) -> std::io::Result<()> {
    let mut sink = crate::report::csv::Sink::new(out).map_err(std::io::Error::other)?;
    for s in samples {
        sink.push(&s?).map_err(std::io::Error::other)?;
    }
    sink.finish().map_err(std::io::Error::other)
}

/// A `Write` that hands the response body out in chunks, waiting while the client is slow
/// (back-pressure, not buffering) for at most [`EXPORT_STALL`].
struct ChunkWriter {
    tx: tokio::sync::mpsc::Sender<std::io::Result<Vec<u8>>>,
    buf: Vec<u8>,
}

impl std::io::Write for ChunkWriter {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.buf.extend_from_slice(data);
        if self.buf.len() >= CHUNK {
            self.flush()?;
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let mut chunk = Ok(std::mem::replace(&mut self.buf, Vec::with_capacity(CHUNK)));
        let deadline = std::time::Instant::now() + EXPORT_STALL;
        loop {
            use tokio::sync::mpsc::error::TrySendError;
            match self.tx.try_send(chunk) {
                Ok(()) => return Ok(()),
                Err(TrySendError::Closed(_)) => {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::BrokenPipe,
                        "client went away",
                    ))
                }
                Err(TrySendError::Full(c)) if std::time::Instant::now() < deadline => {
                    chunk = c;
                    std::thread::sleep(std::time::Duration::from_millis(5));
                }
                Err(TrySendError::Full(_)) => {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        format!("the client read nothing for {} s", EXPORT_STALL.as_secs()),
                    ))
                }
            }
        }
    }
}
