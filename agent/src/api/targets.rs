//! `/api/v1/targets`, `/api/v1/presets`, `/api/v1/options`, `/api/v1/health`.

use super::error::ApiError;
use super::extract::blocking;
use super::AppState;
use crate::io_target::TargetInfo;
use axum::extract::State;
use axum::Json;
use shared::api::{Health, Preset, TargetView};
use std::path::Path;

pub async fn health() -> Json<Health> {
    Json(Health {
        status: "ok".into(),
        version: crate::env::VERSION.into(),
        protocol_version: shared::PROTOCOL_VERSION,
    })
}

pub async fn presets() -> Json<Vec<Preset>> {
    Json(crate::presets::all())
}

/// Every workload option: CLI flag, API field, fio names, form label and default.
pub async fn options() -> Json<Vec<shared::api::OptionView>> {
    use shared::options::Kind;
    let d = shared::WorkloadSpec::default();
    let strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    Json(
        shared::options::OPTIONS
            .iter()
            .map(|o| {
                let (kind, hint, values) = match o.kind {
                    Kind::Text(h) => ("text", h, &[][..]),
                    Kind::Size(h) => ("size", h, &[][..]),
                    Kind::Count(h) => ("count", h, &[][..]),
                    Kind::Time(h) => ("time", h, &[][..]),
                    Kind::Micros(h) => ("micros", h, &[][..]),
                    Kind::Select(v) => ("select", "", v),
                    Kind::Check => ("check", "", &[][..]),
                    Kind::Trace => ("trace", "", &[][..]),
                };
                shared::api::OptionView {
                    key: o.key.into(),
                    api: o.api.into(),
                    cli: o.cli.iter().map(|c| format!("--{c}")).collect(),
                    fio: strings(o.fio),
                    label: o.label.into(),
                    help: o.help.into(),
                    kind: kind.into(),
                    hint: hint.into(),
                    values: strings(values),
                    default: (o.get)(&d),
                    advanced: !shared::options::BASIC.contains(&o.key),
                }
            })
            .collect(),
    )
}

/// The traces a replay can name: built-in, then the trace directory's files.
pub async fn traces() -> Result<Json<Vec<shared::api::TraceInfo>>, ApiError> {
    Ok(Json(blocking(|| Ok(crate::trace::library::list())).await?))
}

pub(super) fn view(path: &Path, scratch: bool, busy: bool) -> TargetView {
    let probed = (!path.is_dir()).then(|| TargetInfo::probe(path, None, false));
    let (kind, size, in_use) = match &probed {
        None => ("directory".to_string(), None, Vec::new()),
        Some(Ok(t)) => (t.kind.as_str().to_string(), Some(t.size), t.in_use()),
        // The scratch file is made on first use, at its fixed size.
        Some(Err(_)) if !path.exists() && scratch => (
            "new".to_string(),
            Some(crate::service::SCRATCH_SIZE),
            Vec::new(),
        ),
        Some(Err(_)) if !path.exists() => ("missing".to_string(), None, Vec::new()),
        Some(Err(e)) => ("unusable".to_string(), None, vec![e.to_string()]),
    };
    let target = probed.and_then(Result::ok);
    let device = target.as_ref().and_then(crate::devices::under);
    // A file's temperature comes from beside it (the emulated SSD) when its device has none.
    let temperature_c = device
        .as_ref()
        .and_then(|d| d.health.as_ref())
        .and_then(|h| h.temperature_c)
        .or_else(|| {
            target
                .as_ref()
                .and_then(crate::temperature::TempSource::for_target)
                .and_then(|s| s.read())
        });
    TargetView {
        path: path.display().to_string(),
        kind,
        size,
        scratch,
        busy,
        in_use,
        model: device.as_ref().and_then(|d| d.model.clone()),
        transport: device.as_ref().map(|d| d.transport.clone()),
        temperature_c,
        health: device.and_then(|d| d.health),
    }
}

pub async fn list(State(st): State<AppState>) -> Result<Json<Vec<TargetView>>, ApiError> {
    let manager = st.manager.clone();
    let views = blocking(move || {
        let access = manager.access();
        let scratch = access.scratch().to_path_buf();
        Ok(std::iter::once((scratch, true))
            .chain(access.allowed().iter().map(|p| (p.clone(), false)))
            .map(|(p, is_scratch)| view(&p, is_scratch, manager.busy_with(&p).is_some()))
            .collect::<Vec<_>>())
    })
    .await?;
    Ok(Json(views))
}

/// `GET /api/v1/devices`: every block device on the host with what the agent knows of it.
pub async fn devices() -> Result<Json<Vec<shared::devices::DeviceInfo>>, ApiError> {
    blocking(|| Ok(crate::devices::list())).await.map(Json)
}

/// NTP's t2 and t3 on this agent's wall clock.
pub async fn clock() -> Json<shared::group::Clock> {
    let received_ns = crate::client::wall_ns();
    Json(shared::group::Clock {
        received_ns,
        sent_ns: crate::client::wall_ns(),
    })
}
