//! HTTP calls to the agent. Errors come back as the agent's message, verbatim.

use gloo_net::http::{Request, Response};
use serde::de::DeserializeOwned;
use shared::api::{ApiErrorBody, CreateRun, Created, Preset, RunList};

/// The body of a successful answer, or the agent's error message. Not generic: the request
/// and its future exist once in the bundle, and only the decoding of each answer's type is
/// per type ([`parse`]).
async fn body_of(r: Response) -> Result<String, String> {
    let ok = r.ok();
    let status = r.status();
    let text = r.text().await.map_err(|e| e.to_string());
    if ok {
        return text;
    }
    match text.and_then(|t| crate::json::parse::<ApiErrorBody>(&t)) {
        Ok(e) => Err(format!("{status} {}: {}", e.code, e.message)),
        Err(_) => Err(format!("HTTP {status}")),
    }
}

/// An answer's body as a `T`.
fn parse<T: DeserializeOwned>(body: Result<String, String>) -> Result<T, String> {
    crate::json::parse(&body?)
}

fn auth(token: &str) -> String {
    format!("Bearer {token}")
}

async fn get<T: DeserializeOwned>(token: &str, path: &str) -> Result<T, String> {
    get_at("", token, path).await
}

/// A GET at agent `base`, its body (or the agent's error).
async fn get_text(base: &str, token: &str, path: &str) -> Result<String, String> {
    let mut req = Request::get(&format!("{base}{path}"));
    if !token.is_empty() {
        req = req.header("Authorization", &auth(token));
    }
    let r = req.send().await.map_err(|e| e.to_string())?;
    body_of(r).await
}

/// A GET at agent `base` (`""`: the page's own agent, else `http://host:port`).
async fn get_at<T: DeserializeOwned>(base: &str, token: &str, path: &str) -> Result<T, String> {
    parse(get_text(base, token, path).await)
}

/// Agent `base`'s health (no token): whether it is up, and its version.
pub async fn health_at(base: &str) -> Result<shared::api::Health, String> {
    get_at(base, "", "/api/v1/health").await
}

/// Agent `base`'s targets, with device and temperature.
pub async fn targets_at(base: &str, token: &str) -> Result<Vec<shared::api::TargetView>, String> {
    get_at(base, token, "/api/v1/targets").await
}

/// Agent `base`'s runs going on now.
pub async fn running_at(base: &str, token: &str) -> Result<RunList, String> {
    get_at(base, token, "/api/v1/runs?status=running&per_page=10").await
}

/// Agent `base`'s newest run of any status (the kiosk's last result between runs).
pub async fn latest_at(base: &str, token: &str) -> Result<RunList, String> {
    get_at(base, token, "/api/v1/runs?per_page=1").await
}

/// One run at agent `base`.
pub async fn run_at(base: &str, token: &str, id: i64) -> Result<shared::api::RunInfo, String> {
    get_at(base, token, &format!("/api/v1/runs/{id}")).await
}

/// POSTs `json` to `url`: the answer's body (or the agent's error).
async fn post_text(url: &str, token: &str, json: String) -> Result<String, String> {
    let r = Request::post(url)
        .header("Authorization", &auth(token))
        .header("Content-Type", "application/json")
        .body(json)
        .map_err(|e| e.to_string())?
        .send()
        .await
        .map_err(|e| e.to_string())?;
    body_of(r).await
}

/// POSTs `body` as JSON to `url` and reads the answer (or the agent's error).
async fn post_json<B: serde::Serialize, T: DeserializeOwned>(
    url: &str,
    token: &str,
    body: &B,
) -> Result<T, String> {
    let json = crate::json::encode(body)?;
    parse(post_text(url, token, json).await)
}

/// Starts a run (or a group: `/api/v1/groups`) by its full URL.
pub async fn start_at(url: &str, token: &str, body: &CreateRun) -> Result<Created, String> {
    post_json(url, token, body).await
}

/// A fio job file's steps as they would run on its target, or the agent's refusal.
pub async fn check_fio_job(
    token: &str,
    body: &shared::api::CheckFioJob,
) -> Result<shared::api::FioJobSteps, String> {
    post_json("/api/v1/fio-jobs/check", token, body).await
}

/// What the dashboard shows of a flush check's verdict (the agent's sentences).
#[derive(serde::Deserialize, Clone, Debug, PartialEq)]
pub struct FlushVerdict {
    pub verdict: String,
    pub line: String,
    pub lines: Vec<String>,
}

/// A flush check's read-back after a power cut, on one of the agent's targets.
pub async fn flush_verify(
    token: &str,
    body: &shared::flushcheck::VerifyRequest,
) -> Result<FlushVerdict, String> {
    post_json("/api/v1/flushcheck/verify", token, body).await
}

/// The workload options the New-test form shows (the agent's one table of them).
pub async fn options(token: &str) -> Result<Vec<shared::api::OptionView>, String> {
    get(token, "/api/v1/options").await
}

/// What the form's fields make: the spec and its problems by field.
pub async fn read_spec(
    token: &str,
    fields: &shared::api::SpecFields,
) -> Result<shared::api::SpecRead, String> {
    post_json("/api/v1/specs/read", token, fields).await
}

/// A spec as the form's fields.
pub async fn spec_fields(
    token: &str,
    spec: &shared::WorkloadSpec,
) -> Result<shared::api::SpecFields, String> {
    post_json("/api/v1/specs/fields", token, spec).await
}

pub async fn presets(token: &str) -> Result<Vec<Preset>, String> {
    get(token, "/api/v1/presets").await
}

/// The traces a replay can name.
pub async fn traces(token: &str) -> Result<Vec<shared::api::TraceInfo>, String> {
    get(token, "/api/v1/traces").await
}

/// The history: `query` is the API's filter string (`target=...&status=...&page=...`).
pub async fn runs(token: &str, query: &str) -> Result<RunList, String> {
    get(token, &format!("/api/v1/runs?{query}")).await
}

pub async fn run(token: &str, id: i64) -> Result<shared::api::RunInfo, String> {
    get(token, &format!("/api/v1/runs/{id}")).await
}

/// Sends a request whose success has no body; a failure comes back as the agent's message.
async fn send_empty(req: gloo_net::http::RequestBuilder, token: &str) -> Result<(), String> {
    let r = req
        .header("Authorization", &auth(token))
        .send()
        .await
        .map_err(|e| e.to_string())?;
    if r.ok() {
        Ok(())
    } else {
        body_of(r).await.map(drop)
    }
}

pub async fn delete(token: &str, id: i64) -> Result<(), String> {
    send_empty(Request::delete(&format!("/api/v1/runs/{id}")), token).await
}

/// A run's samples for its charts: every one up to [`chart_points`], else the min/max
/// envelope of that many (the agent picks the slowest and fastest of each stretch), so a
/// day-long run opens as fast as a minute-long one.
pub async fn samples(token: &str, id: i64) -> Result<Vec<shared::Sample>, String> {
    let path = format!("/api/v1/runs/{id}/samples?max_points={}", chart_points());
    let list: shared::api::SampleList = get(token, &path).await?;
    Ok(list.samples)
}

/// The samples with `seq` in `[from, to]` for a zoomed chart (the envelope when they do
/// not fit in [`chart_points`]).
pub async fn samples_range(
    token: &str,
    id: i64,
    from: u64,
    to: u64,
) -> Result<Vec<shared::Sample>, String> {
    let path = format!(
        "/api/v1/runs/{id}/samples?max_points={}&from_seq={from}&to_seq={to}",
        chart_points()
    );
    let list: shared::api::SampleList = get(token, &path).await?;
    Ok(list.samples)
}

/// Points a chart asks for: two per pixel column of this screen (its width in device
/// pixels), at least 512 and at most 8,192.
pub fn chart_points() -> u32 {
    let w = web_sys::window()
        .and_then(|w| {
            let px = w.inner_width().ok()?.as_f64()?;
            Some(px * w.device_pixel_ratio())
        })
        .unwrap_or(2048.0);
    ((2.0 * w) as u32).clamp(512, 8192)
}

pub async fn start(token: &str, body: &CreateRun) -> Result<Created, String> {
    start_at("/api/v1/runs", token, body).await
}

pub async fn stop(token: &str, id: i64) -> Result<(), String> {
    send_empty(Request::post(&format!("/api/v1/runs/{id}/stop")), token).await
}

pub async fn targets(token: &str) -> Result<Vec<shared::api::TargetView>, String> {
    get(token, "/api/v1/targets").await
}

/// The scratch target's path, from the target list.
pub async fn scratch_target(token: &str) -> Result<String, String> {
    let targets = self::targets(token).await?;
    targets
        .into_iter()
        .find(|t| t.scratch)
        .map(|t| t.path)
        .ok_or_else(|| "the agent lists no scratch target".into())
}

/// The run's export (`json` or `csv`) as text, for saving.
/// A document the agent streams (`path`), as a browser `Blob`: its bytes stay in the
/// browser's blob store and never pass through the wasm heap, so a day-long run's export
/// (hundreds of MB) downloads like a short one's.
pub async fn fetch_blob(token: &str, path: &str) -> Result<web_sys::Blob, String> {
    use wasm_bindgen::JsCast;
    let r = Request::get(path)
        .header("Authorization", &auth(token))
        .send()
        .await
        .map_err(|e| e.to_string())?;
    if !r.ok() {
        return Err(body_of(r).await.unwrap_or_else(|e| e));
    }
    let raw: web_sys::Response = r.into();
    let promise = raw.blob().map_err(crate::js_error)?;
    let blob = wasm_bindgen_futures::JsFuture::from(promise)
        .await
        .map_err(crate::js_error)?;
    Ok(blob.unchecked_into())
}
