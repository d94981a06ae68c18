//! Long runs at flat memory (case 6 of `bench/run.sh`), as a benchmark, not a
//! test: ignored by default.
//!
//! 1. A run of DISKSCOPE_BENCH_LONG_SECS (1800) at 100 ms on `diskscope serve` with 20
//!    WebSocket clients taking every sample, the agent's resident memory sampled every 5 s;
//!    at the same time the CLI runs as long with `--json`, `--csv` and `--timeline`, and
//!    then for 10 s: their peak resident memory (1 MB writes at 200 MB/s on the null
//!    backend: the pipeline is measured, not a drive; the rate makes it a sustain run too).
//! 2. Two synthetic 24-hour runs (864,000 samples at 100 ms each, one with its 8.64 million
//!    10 ms buckets) written into a database: the dashboard's first chart in headless
//!    Chromium (`bench/dashboard.mjs`, when node and chromium are there), what the results
//!    and compare views fetch, the JSON and timeline exports and the agent's memory
//!    around them.
//!
//! `cargo build --release -p agent && DISKSCOPE_BIN=$PWD/target/release/diskscope \
//!  cargo test --release -p tests --test suite long_run_bench -- --ignored --nocapture`
//! Knobs: DISKSCOPE_BENCH_LONG_SECS (1800), DISKSCOPE_BENCH_HISTORY_SAMPLES (864000),
//! DISKSCOPE_BENCH_OUT (a JSON file for bench/report.py).

use serde_json::{json, Value};
use shared::api::ClientMsg;
use std::io::Read;
use std::time::{Duration, Instant};
use tests::history::synthetic_run;
use tests::server::{Server, WsClient, OP, VIEW};
use tests::*;

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1u64 << 20) as f64
}

/// Peak resident memory (bytes) of a CLI run of `secs` with every output, as GNU time
/// reports it (`%M`). Not this process's `wait4`: a child forked from this large test process
/// keeps the parent's high-water mark through `exec`.
fn cli_peak_rss(dir: &std::path::Path, secs: u64) -> u64 {
    let target = dir.join(format!("cli-{secs}.bin"));
    let rss_file = dir.join(format!("cli-{secs}.maxrss"));
    let status = std::process::Command::new("/usr/bin/time")
        .args(["-f", "%M", "-o", &rss_file.display().to_string()])
        .arg(diskscope_bin())
        .args([
            "run",
            "--target",
            &target.display().to_string(),
            "--backend",
            "null",
            "--rw",
            "write",
            "--bs",
            "1M",
            "--rate",
            "200MB",
            "--runtime",
            &format!("{secs}s"),
            "--interval-ms",
            "100",
            "-q",
            "--json",
            &dir.join(format!("cli-{secs}.json")).display().to_string(),
            "--csv",
            &dir.join(format!("cli-{secs}.csv")).display().to_string(),
            "--timeline",
            &dir.join(format!("cli-{secs}-timeline.csv"))
                .display()
                .to_string(),
        ])
        .stdout(std::process::Stdio::null())
        .status()
        .expect("/usr/bin/time (Debian package `time`) runs the CLI");
    assert!(status.success(), "the CLI run of {secs} s failed");
    let report = read_report(&dir.join(format!("cli-{secs}.json")));
    assert_eq!(report.samples.len() as u64, report.summary.samples);
    assert_eq!(report.summary.samples, secs * 10, "one sample per 100 ms");
    let kib: u64 = std::fs::read_to_string(&rss_file)
        .expect("time's output")
        .trim()
        .lines()
        .last()
        .and_then(|l| l.trim().parse().ok())
        .expect("a number of KiB");
    kib * 1024
}

#[test]
#[ignore = "a benchmark: run it on purpose (see the file's header)"]
fn long_runs_at_flat_memory() {
    let long = knob("DISKSCOPE_BENCH_LONG_SECS", 1800);
    let history_n = knob("DISKSCOPE_BENCH_HISTORY_SAMPLES", 864_000);
    let data = disk_tempdir();
    let cli_dir = disk_tempdir();
    let mut out = json!({ "long_secs": long, "history_samples": history_n });

    // 1. The served run with 20 clients, and the CLI beside it.
    let server = Server::start(data.path(), &[data.path()]);
    let cli = {
        let dir = cli_dir.path().to_path_buf();
        std::thread::spawn(move || cli_peak_rss(&dir, long))
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let (rss, samples, every) = rt.block_on(async {
        let mut subs = Vec::new();
        for _ in 0..20 {
            let mut c = WsClient::connect(&server, OP, true).await;
            c.send(&ClientMsg::SubscribeActive { max_points: None })
                .await;
            subs.push(c);
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        let id = server.start_run(&json!({
            "target": data.path().join("served.bin").display().to_string(),
            "spec": {"backend": "null", "rw": "write", "bs": 1u64 << 20,
                     "rate": {"bytes_per_sec": 200_000_000u64},
                     "runtime_ms": long * 1000, "interval_ms": 100}
        }));
        let tasks: Vec<_> = subs
            .into_iter()
            .map(|mut c| tokio::spawn(async move { c.collect_until_end(id).await.0.len() }))
            .collect();
        let start = Instant::now();
        let mut rss: Vec<(f64, u64)> = Vec::new();
        while tasks.iter().any(|t| !t.is_finished()) {
            rss.push((start.elapsed().as_secs_f64(), server.rss()));
            tokio::time::sleep(Duration::from_secs(5)).await;
        }
        let mut got = Vec::new();
        for t in tasks {
            got.push(t.await.expect("client"));
        }
        let run = server.wait_status_within(id, "completed", Duration::from_secs(120));
        let n = run["summary"]["samples"].as_u64().unwrap_or(0) as usize;
        (rss, n, got.iter().all(|g| *g >= n))
    });
    let after_1min = rss
        .iter()
        .find(|(t, _)| *t >= 60.0)
        .or(rss.last())
        .map_or(0, |x| x.1);
    let end = rss.last().map_or(0, |x| x.1);
    let max = rss.iter().map(|x| x.1).max().unwrap_or(0);
    let cli_long = cli.join().expect("CLI thread");
    let cli_short = cli_peak_rss(cli_dir.path(), 10);
    println!(
        "served {long} s at 100 ms, 20 clients: {samples} samples, every client got all: {every}; \
         agent RSS after 1 min {:.1} MiB, at the end {:.1} MiB (max {:.1})",
        mib(after_1min),
        mib(end),
        mib(max)
    );
    println!(
        "CLI peak RSS: 10 s {:.1} MiB, {long} s {:.1} MiB",
        mib(cli_short),
        mib(cli_long)
    );
    out["served"] = json!({
        "samples": samples, "clients": 20, "every_client_got_every_sample": every,
        "rss_after_1min_mib": mib(after_1min), "rss_end_mib": mib(end), "rss_max_mib": mib(max),
        "rss_series_mib": rss.iter().map(|(t, r)| json!([t, mib(*r)])).collect::<Vec<_>>(),
    });
    out["cli"] = json!({ "peak_rss_10s_mib": mib(cli_short), "peak_rss_long_mib": mib(cli_long) });
    drop(server);

    // 2. Day-long histories.
    let hist = disk_tempdir();
    let db = hist.path().join("diskscope.db");
    let t = Instant::now();
    let (a, _, _) = synthetic_run(&db, history_n, 100, 3000.0, 1);
    let (b, _, _) = synthetic_run(&db, history_n, 100, 2500.0, 2);
    let store = agent::store::Store::open(&db).expect("db");
    let buckets = history_n * 10;
    store
        .put_exact_timeline(
            a,
            (0..buckets).map(|i| Ok(if i % 100_000 == 7 { 0 } else { 3_000_000 })),
        )
        .expect("timeline");
    drop(store);
    let written_s = t.elapsed().as_secs_f64();
    let server = Server::start(hist.path(), &[hist.path()]);
    let median = |mut xs: Vec<f64>| {
        xs.sort_by(f64::total_cmp);
        xs[xs.len() / 2]
    };
    let timed = |f: &dyn Fn()| {
        let t = Instant::now();
        f();
        t.elapsed().as_secs_f64() * 1e3
    };
    // What the results view fetches: the run, then the envelope of its samples.
    let open = |id: i64| {
        let (s, _) = server.get(&format!("/api/v1/runs/{id}"), VIEW);
        assert_eq!(s, 200);
        let (s, v) = server.get(&format!("/api/v1/runs/{id}/samples?max_points=4096"), VIEW);
        assert_eq!(s, 200);
        assert!(v["samples"].as_array().map_or(0, Vec::len) as u64 > 2000.min(history_n / 2));
    };
    let results_ms = median((0..5).map(|_| timed(&|| open(a))).collect());
    let compare_ms = median(
        (0..5)
            .map(|_| {
                timed(&|| {
                    open(a);
                    open(b);
                })
            })
            .collect(),
    );
    let stream = |path: &str| {
        let before = server.peak_rss();
        let t = Instant::now();
        let (s, mut body) = server.get_stream(path, VIEW);
        assert_eq!(s, 200);
        let mut buf = vec![0u8; 1 << 16];
        let mut bytes = 0u64;
        loop {
            let n = body.read(&mut buf).expect("read");
            if n == 0 {
                break;
            }
            bytes += n as u64;
        }
        (
            bytes,
            t.elapsed().as_secs_f64(),
            mib(server.peak_rss().saturating_sub(before)),
        )
    };
    let rss_before = mib(server.peak_rss());
    let (json_bytes, json_s, json_grew) = stream(&format!("/api/v1/runs/{a}/export?format=json"));
    let (tl_bytes, tl_s, tl_grew) = stream(&format!("/api/v1/runs/{a}/timeline?format=csv"));
    // The dashboard opening on this history (its live view shows the latest run).
    let first_chart = std::process::Command::new("node")
        .args([
            "bench/dashboard.mjs",
            &format!("http://{}", server.addr),
            VIEW,
        ])
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| serde_json::from_slice::<Value>(&o.stdout).ok())
        .map(|v| v["first_chart_ms_median"].clone());
    println!(
        "24-hour histories ({history_n} samples each) written in {written_s:.0} s; results view \
         fetch {results_ms:.0} ms, compare {compare_ms:.0} ms; JSON export {:.0} MB in {json_s:.1} s \
         (peak RSS {rss_before:.1} MiB +{json_grew:.1}); timeline CSV {:.0} MB in {tl_s:.1} s \
         (+{tl_grew:.1} MiB); dashboard first chart {first_chart:?} ms",
        json_bytes as f64 / 1e6,
        tl_bytes as f64 / 1e6
    );
    out["history"] = json!({
        "samples_per_run": history_n, "written_s": written_s,
        "results_fetch_ms_median": results_ms, "compare_fetch_ms_median": compare_ms,
        "json_export_mb": json_bytes as f64 / 1e6, "json_export_s": json_s,
        "json_export_peak_rss_growth_mib": json_grew, "agent_peak_rss_before_mib": rss_before,
        "timeline_csv_mb": tl_bytes as f64 / 1e6, "timeline_csv_s": tl_s,
        "timeline_peak_rss_growth_mib": tl_grew,
        "dashboard_first_chart_ms_median": first_chart,
    });
    if let Ok(path) = std::env::var("DISKSCOPE_BENCH_OUT") {
        std::fs::write(&path, serde_json::to_string_pretty(&out).expect("json")).expect("write");
    }
}
