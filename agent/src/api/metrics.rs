//! `GET /metrics`: Prometheus text format, so fleets of agents can be scraped. Gauges for the
//! run going on (its latest interval) and counters of runs by status.

use super::auth::Viewer;
use super::error::ApiError;
use super::extract::blocking;
use super::AppState;
use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use shared::{DirSample, RunStatus};
use std::fmt::Write;

fn gauge(out: &mut String, name: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} gauge");
}

fn dir_lines(
    out: &mut String,
    metric: &str,
    run: i64,
    samples: &[(&str, &DirSample)],
    f: impl Fn(&DirSample) -> f64,
) {
    for (dir, d) in samples {
        let _ = writeln!(
            out,
            "{metric}{{run=\"{run}\",direction=\"{dir}\"}} {}",
            f(d)
        );
    }
}

pub async fn metrics(State(st): State<AppState>, _: Viewer) -> Result<impl IntoResponse, ApiError> {
    let manager = st.manager.clone();
    let text = blocking(move || -> Result<String, ApiError> {
        let mut out = String::new();
        let current = manager.current_run();
        gauge(&mut out, "diskscope_run_active", "1 while a run is going on");
        let _ = writeln!(out, "diskscope_run_active {}", u8::from(current.is_some()));
        if let Some(run) = current {
            if let Some(s) = manager.store().last_sample(run)? {
                let dirs = [("read", &s.read), ("write", &s.write)];
                gauge(&mut out, "diskscope_throughput_mb_per_second", "MB/s (10^6 bytes) in the latest interval");
                dir_lines(&mut out, "diskscope_throughput_mb_per_second", run, &dirs, |d| d.mb_s);
                gauge(&mut out, "diskscope_iops", "I/O operations per second in the latest interval");
                dir_lines(&mut out, "diskscope_iops", run, &dirs, |d| d.iops);
                gauge(&mut out, "diskscope_latency_seconds", "completion latency percentiles in the latest interval");
                for (q, pick) in [("0.5", 0usize), ("0.99", 1), ("0.999", 2)] {
                    for (dir, d) in dirs {
                        let ns = [d.lat.p50_ns, d.lat.p99_ns, d.lat.p99_9_ns][pick];
                        let _ = writeln!(out, "diskscope_latency_seconds{{run=\"{run}\",direction=\"{dir}\",quantile=\"{q}\"}} {}", ns as f64 / 1e9);
                    }
                }
                gauge(&mut out, "diskscope_run_bytes", "bytes transferred since the run started");
                dir_lines(&mut out, "diskscope_run_bytes", run, &dirs, |d| d.cum_bytes as f64);
            }
        }
        if let Some((run, v)) = manager.store().latest_verify()? {
            gauge(&mut out, "diskscope_verify_bad_blocks", "bad blocks the newest verified run read back, by kind");
            for kind in shared::analysis::verify::BadKind::ALL {
                let _ = writeln!(out, "diskscope_verify_bad_blocks{{run=\"{run}\",kind=\"{}\"}} {}", kind.as_str(), v.bad.get(kind));
            }
            gauge(&mut out, "diskscope_verify_blocks_checked", "blocks the newest verified run read back");
            let _ = writeln!(out, "diskscope_verify_blocks_checked{{run=\"{run}\"}} {}", v.blocks_checked);
        }
        let counts = manager.store().count_by_state()?;
        gauge(&mut out, "diskscope_runs", "runs in the history, by status");
        for status in RunStatus::ALL {
            let n = counts.iter().find(|(s, _)| s == status.as_str()).map_or(0, |(_, n)| *n);
            let _ = writeln!(out, "diskscope_runs{{status=\"{}\"}} {n}", status.as_str());
        }
        Ok(out)
    })
    .await?;
    Ok(([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], text))
}
