//! `GET /metrics`: Prometheus text format (0.0.4), following Prometheus' naming and type
//! conventions so that fleets of agents are scraped and alerted on by Prometheus itself.
//! Series are per target, never per run: counters of bytes and I/Os (`rate()` is the
//! throughput), a latency histogram, whether a run is going on, and the device under each
//! target between runs too (temperature, health, throttling).

use super::error::ApiError;
use super::extract::blocking;
use super::AppState;
use crate::service::counters::{DirTotals, LATENCY_BUCKETS_S};
use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use shared::api::TargetView;
use shared::RunStatus;
use std::fmt::Write;

/// A label value escaped as the text format wants (`\`, `"`, newline).
fn esc(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// The text of one exposition, built metric family by metric family.
#[derive(Default)]
struct Exposition {
    out: String,
}

impl Exposition {
    fn family(&mut self, name: &str, kind: &str, help: &str) {
        let _ = writeln!(self.out, "# HELP {name} {help}\n# TYPE {name} {kind}");
    }

    fn line(&mut self, name: &str, labels: &[(&str, &str)], value: f64) {
        let labels: Vec<String> = labels
            .iter()
            .map(|(k, v)| format!("{k}=\"{}\"", esc(v)))
            .collect();
        let _ = writeln!(self.out, "{name}{{{}}} {value}", labels.join(","));
    }

    /// A family with one line per item that has a value.
    fn each<T>(
        &mut self,
        (name, kind, help): (&str, &str, &str),
        items: &[T],
        labels: impl Fn(&T) -> Vec<(&'static str, String)>,
        value: impl Fn(&T) -> Option<f64>,
    ) {
        let lines: Vec<_> = items
            .iter()
            .filter_map(|i| value(i).map(|v| (labels(i), v)))
            .collect();
        if lines.is_empty() {
            return;
        }
        self.family(name, kind, help);
        for (l, v) in lines {
            let l: Vec<(&str, &str)> = l.iter().map(|(k, v)| (*k, v.as_str())).collect();
            self.line(name, &l, v);
        }
    }
}

/// Counters and the latency histogram of every target a run has used.
fn traffic(
    x: &mut Exposition,
    totals: &std::collections::BTreeMap<String, crate::service::counters::TargetTotals>,
) {
    let t: Vec<_> = totals.iter().collect();
    x.each(
        (
            "diskscope_read_bytes_total",
            "counter",
            "Bytes read by runs on the target since the agent started.",
        ),
        &t,
        |(p, _)| vec![("target", p.to_string())],
        |(_, v)| Some(v.read.bytes as f64),
    );
    x.each(
        (
            "diskscope_written_bytes_total",
            "counter",
            "Bytes written by runs on the target since the agent started.",
        ),
        &t,
        |(p, _)| vec![("target", p.to_string())],
        |(_, v)| Some(v.write.bytes as f64),
    );
    let dirs: Vec<(&String, &str, &DirTotals)> = totals
        .iter()
        .flat_map(|(p, v)| {
            let trims = (v.trim.ios > 0).then_some((p, "trim", &v.trim));
            [(p, "read", &v.read), (p, "write", &v.write)]
                .into_iter()
                .chain(trims)
        })
        .collect();
    x.each(
        (
            "diskscope_ios_total",
            "counter",
            "I/Os completed by runs on the target since the agent started.",
        ),
        &dirs,
        |(p, d, _)| vec![("target", p.to_string()), ("direction", d.to_string())],
        |(_, _, v)| Some(v.ios as f64),
    );
    x.each(
        (
            "diskscope_sustain_pass",
            "gauge",
            "1 when the newest sustain run on the target kept its rate, 0 when it failed.",
        ),
        &t,
        |(p, _)| vec![("target", p.to_string())],
        |(_, v)| v.sustain_pass.map(|b| f64::from(u8::from(b))),
    );
    x.each(
        (
            "diskscope_sustain_failures_total",
            "counter",
            "Sustain runs on the target that could not keep their rate.",
        ),
        &t,
        |(p, _)| vec![("target", p.to_string())],
        |(_, v)| v.sustain_pass.map(|_| v.sustain_failures as f64),
    );
    if dirs.is_empty() {
        return;
    }
    let name = "diskscope_io_latency_seconds";
    x.family(
        name,
        "histogram",
        "Completion latency of the I/Os of ended runs on the target (from the engine's histogram).",
    );
    for (p, d, v) in &dirs {
        for (bound, n) in LATENCY_BUCKETS_S.iter().zip(v.le) {
            x.line(
                &format!("{name}_bucket"),
                &[("target", p), ("direction", d), ("le", &bound.to_string())],
                n as f64,
            );
        }
        x.line(
            &format!("{name}_bucket"),
            &[("target", p), ("direction", d), ("le", "+Inf")],
            v.count as f64,
        );
        x.line(
            &format!("{name}_sum"),
            &[("target", p), ("direction", d)],
            v.sum_s,
        );
        x.line(
            &format!("{name}_count"),
            &[("target", p), ("direction", d)],
            v.count as f64,
        );
    }
}

/// The device under each target, between runs too.
fn devices(x: &mut Exposition, views: &[TargetView]) {
    let l = |v: &TargetView| {
        vec![
            ("target", v.path.clone()),
            ("model", v.model.clone().unwrap_or_default()),
        ]
    };
    let h = |v: &TargetView, f: &dyn Fn(&shared::devices::DeviceHealth) -> Option<f64>| {
        v.health.as_ref().and_then(f)
    };
    x.each(
        (
            "diskscope_device_temperature_celsius",
            "gauge",
            "Temperature of the device under the target.",
        ),
        views,
        l,
        |v| v.temperature_c,
    );
    x.each(
        (
            "diskscope_device_critical_warning",
            "gauge",
            "NVMe critical warning bits (0: none).",
        ),
        views,
        l,
        |v| h(v, &|h| h.critical_warning.map(f64::from)),
    );
    x.each(
        (
            "diskscope_device_percentage_used",
            "gauge",
            "Drive life used, percent (NVMe percentage used; over 100 past the rated endurance).",
        ),
        views,
        l,
        |v| h(v, &|h| h.percentage_used.map(f64::from)),
    );
    x.each(
        (
            "diskscope_device_media_errors_total",
            "counter",
            "Unrecovered media and data integrity errors the drive counted.",
        ),
        views,
        l,
        |v| h(v, &|h| h.media_errors.map(|n| n as f64)),
    );
    x.each(
        (
            "diskscope_device_written_bytes_total",
            "counter",
            "Bytes written to the drive over its life (NVMe data units written).",
        ),
        views,
        l,
        |v| h(v, &|h| h.bytes_written.map(|n| n as f64)),
    );
    x.each(
        (
            "diskscope_device_warning_temperature_seconds_total",
            "counter",
            "Time the drive spent over its warning temperature.",
        ),
        views,
        l,
        |v| h(v, &|h| h.warning_temp_minutes.map(|m| f64::from(m) * 60.0)),
    );
    x.each(
        (
            "diskscope_device_thermal_throttle_transitions_total",
            "counter",
            "Times the drive entered light (T1) thermal throttling.",
        ),
        views,
        l,
        |v| h(v, &|h| h.thermal_t1_transitions.map(f64::from)),
    );
    x.each(
        (
            "diskscope_device_thermal_throttle_seconds_total",
            "counter",
            "Time the drive spent in light (T1) thermal throttling.",
        ),
        views,
        l,
        |v| h(v, &|h| h.thermal_t1_seconds.map(f64::from)),
    );
}

pub async fn metrics(State(st): State<AppState>) -> Result<impl IntoResponse, ApiError> {
    let manager = st.manager.clone();
    let text = blocking(move || -> Result<String, ApiError> {
        let mut x = Exposition::default();
        traffic(&mut x, &manager.counters().snapshot());
        let access = manager.access();
        let targets: Vec<(std::path::PathBuf, bool)> =
            std::iter::once((access.scratch().to_path_buf(), true))
                .chain(access.allowed().iter().map(|p| (p.clone(), false)))
                .collect();
        let active = manager.active_runs();
        let runs: Vec<(String, String, bool)> = targets
            .iter()
            .map(|(p, _)| {
                let a = active.iter().find(|(t, _)| t == p);
                (
                    p.display().to_string(),
                    a.and_then(|(_, pr)| pr.clone()).unwrap_or_default(),
                    a.is_some(),
                )
            })
            .chain(
                active
                    .iter()
                    .filter(|(t, _)| !targets.iter().any(|(p, _)| p == t))
                    .map(|(t, pr)| {
                        (
                            t.display().to_string(),
                            pr.clone().unwrap_or_default(),
                            true,
                        )
                    }),
            )
            .collect();
        x.each(
            (
                "diskscope_run_active",
                "gauge",
                "1 while a run is going on on the target.",
            ),
            &runs,
            |(t, p, _)| vec![("target", t.clone()), ("preset", p.clone())],
            |(_, _, on)| Some(f64::from(u8::from(*on))),
        );
        let views: Vec<TargetView> = targets
            .iter()
            .map(|(p, scratch)| super::targets::view(p, *scratch, manager.busy_with(p).is_some()))
            .collect();
        devices(&mut x, &views);
        if let Some((run, v)) = manager.store().latest_verify()? {
            let target = manager
                .store()
                .get_run(run)?
                .map(|r| r.target)
                .unwrap_or_default();
            let kinds = shared::analysis::verify::BadKind::ALL;
            x.each(
                (
                    "diskscope_verify_bad_blocks",
                    "gauge",
                    "Bad blocks the newest verified run on the target read back, by kind.",
                ),
                &kinds,
                |k| vec![("target", target.clone()), ("kind", k.as_str().to_string())],
                |k| Some(v.bad.get(*k) as f64),
            );
        }
        let counts = manager.store().count_by_state()?;
        x.each(
            ("diskscope_runs", "gauge", "Runs in the history, by status."),
            &RunStatus::ALL,
            |s| vec![("status", s.as_str().to_string())],
            |s| {
                Some(
                    counts
                        .iter()
                        .find(|(n, _)| n == s.as_str())
                        .map_or(0, |(_, n)| *n) as f64,
                )
            },
        );
        Ok(x.out)
    })
    .await?;
    Ok(([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], text))
}
