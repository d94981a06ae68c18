//! `/metrics` against a real Prometheus (Debian's `prometheus` and `promtool`): the
//! exposition passes `promtool check metrics`, Prometheus scrapes the agent with the viewer
//! token, and the rate Prometheus computes from `diskscope_read_bytes_total` during a run
//! matches the run's own MB/s.

use serde_json::{json, Value};
use std::io::Write;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tests::server::{Server, VIEW};
use tests::*;

/// `promtool check metrics` on `text`: its verdict and what it said.
fn promtool(text: &str) -> (bool, String) {
    let mut child = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(text.as_bytes())
        .expect("write");
    let out = child.wait_with_output().expect("promtool");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), said)
}

/// A Prometheus process, killed on drop.
struct Prometheus {
    child: Child,
    base: String,
    _dir: tempfile::TempDir,
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Prometheus {
    fn start(agent: &str) -> Prometheus {
        let dir = tempfile::tempdir().expect("tempdir");
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("free port")
            .port();
        let config = dir.path().join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: diskscope\n    \
                 authorization:\n      type: Bearer\n      credentials: {VIEW}\n    \
                 static_configs:\n      - targets: ['{agent}']\n"
            ),
        )
        .expect("config");
        let child = Command::new("prometheus")
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("prometheus");
        let p = Prometheus {
            child,
            base: format!("http://127.0.0.1:{port}"),
            _dir: dir,
        };
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            if ureq::get(&format!("{}/-/ready", p.base)).call().is_ok() {
                return p;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        panic!("prometheus did not get ready on {}", p.base);
    }

    /// The query's status: `success`, or the error Prometheus gives.
    fn check(&self, q: &str) -> String {
        let url = format!("{}/api/v1/query", self.base);
        match ureq::get(&url).query("query", q).call() {
            Ok(mut r) => r
                .body_mut()
                .read_json::<Value>()
                .map_or("unreadable".into(), |v| {
                    v["status"].as_str().unwrap_or("?").to_string()
                }),
            Err(e) => e.to_string(),
        }
    }

    /// The value of an instant query's first series at `time` (Unix seconds).
    fn query(&self, q: &str, time: f64) -> Option<f64> {
        let url = format!("{}/api/v1/query", self.base);
        let v: Value = ureq::get(&url)
            .query("query", q)
            .query("time", time.to_string())
            .call()
            .ok()?
            .body_mut()
            .read_json()
            .ok()?;
        v["data"]["result"][0]["value"][1].as_str()?.parse().ok()
    }
}

#[test]
fn a_real_prometheus_scrapes_the_agent_and_its_rate_matches_the_run() {
    require_io_uring!();
    if !have("prometheus") || !have("promtool") {
        skip!(
            Missing::Tool,
            "no prometheus/promtool (apt-get install prometheus)"
        );
    }
    let data = disk_tempdir();
    let server = Server::start(data.path(), &[]);
    let (status, fresh) = server.get_text("/metrics", VIEW);
    assert_eq!(status, 200);
    let (ok, said) = promtool(&fresh);
    assert!(ok, "promtool on a fresh agent: {said}\n{fresh}");

    let prom = Prometheus::start(&server.addr);
    let target = server.scratch_target();
    // A rate-capped read: the same throughput in every interval.
    let id = server.start_run(&json!({"target": target, "spec": {
        "rw": "randread", "bs": 65536, "iodepth": 4, "size": 256 << 20,
        "rate": {"bytes_per_sec": 40_000_000}, "runtime_ms": 25_000, "interval_ms": 250}}));
    let run = server.wait_status_within(id, "completed", Duration::from_secs(90));
    let mb_s = run["summary"]["read"]["mb_s"].as_f64().expect("MB/s");
    let ended = run["ended_ms"].as_f64().expect("ended") / 1000.0;
    // Wait until Prometheus has scraped past the end (its last scrape's time), with a deadline.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("clock")
            .as_secs_f64();
        let last = prom.query("timestamp(up{job=\"diskscope\"})", now);
        if last.is_some_and(|t| t > ended + 0.5) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no scrape after the run's end within 20 s"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(
        prom.query("up{job=\"diskscope\"}", ended),
        Some(1.0),
        "Prometheus could not scrape the agent with the viewer token"
    );
    let q = format!("rate(diskscope_read_bytes_total{{target=\"{target}\"}}[15s])");
    let at = ended - 3.0;
    let rate = prom.query(&q, at).expect("a rate from Prometheus");
    // The cap is kept from the job's start, so a stall on a busy machine is caught up later:
    // the run's own rate over the same 15 s (its stored samples' cumulative bytes, placed on
    // the wall clock by its end) is what Prometheus must agree with, not the run's average.
    let (_, samples) = server.get(&format!("/api/v1/runs/{id}/samples"), VIEW);
    let stored = stored_rate(
        samples["samples"].as_array().expect("samples"),
        ended,
        at - 15.0,
        at,
    );
    let ratio = rate / stored;
    eprintln!(
        "Prometheus rate {:.2} MB/s, the run's samples {:.2} MB/s over the same 15 s ({ratio:.3}), \
         the run's average {mb_s:.2} MB/s",
        rate / 1e6,
        stored / 1e6
    );
    assert!(
        (0.95..=1.05).contains(&ratio),
        "rate {rate} B/s vs the run's {stored} B/s over the same window"
    );
    let ios = prom
        .query(
            &format!("diskscope_ios_total{{target=\"{target}\",direction=\"read\"}}"),
            ended + 2.0,
        )
        .expect("ios");
    assert_eq!(ios, run["summary"]["read"]["ios"].as_f64().expect("ios"));
    let p99 = prom
        .query(
            "histogram_quantile(0.99, diskscope_io_latency_seconds_bucket{direction=\"read\"})",
            ended + 2.0,
        )
        .expect("p99 from the histogram");
    assert!(p99 > 0.0 && p99 < 10.0, "p99 {p99} s");

    // Every query of the repository's Grafana dashboard is valid PromQL over these series.
    let dash: Value = serde_json::from_str(
        &std::fs::read_to_string(deploy().join("grafana/diskscope-fleet.json")).expect("dashboard"),
    )
    .expect("dashboard JSON");
    let exprs: Vec<String> = dash["panels"]
        .as_array()
        .expect("panels")
        .iter()
        .flat_map(|p| p["targets"].as_array().cloned().unwrap_or_default())
        .filter_map(|t| t["expr"].as_str().map(String::from))
        .collect();
    assert!(exprs.len() >= 7, "{exprs:?}");
    for e in &exprs {
        let q = e
            .replace("$__rate_interval", "15s")
            .replace("$instance", ".*");
        assert_eq!(prom.check(&q), "success", "{q}");
    }

    let (_, after) = server.get_text("/metrics", VIEW);
    let (ok, said) = promtool(&after);
    assert!(ok, "promtool after a run: {said}\n{after}");
    assert!(
        after.contains(&format!(
            "diskscope_run_active{{target=\"{target}\",preset=\"\"}} 0"
        )),
        "{after}"
    );
    assert!(!after.contains("run=\""), "no series per run id:\n{after}");
}

fn deploy() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy")
}

#[test]
fn the_fleet_setup_in_the_repository_checks() {
    if !have("promtool") {
        skip!(Missing::Tool, "no promtool (apt-get install prometheus)");
    }
    let run = |args: &[&str]| {
        let out = Command::new("promtool")
            .args(args)
            .output()
            .expect("promtool");
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "promtool {args:?}: {said}");
        said
    };
    let d = deploy().join("prometheus");
    let rules = d.join("alerts.yml");
    let said = run(&["check", "rules", rules.to_str().expect("utf8")]);
    assert!(said.contains("SUCCESS: 8 rules found"), "{said}");
    // The alerts fire as meant: a hot drive, a failed sustain run (and not the passing one).
    run(&[
        "test",
        "rules",
        d.join("alerts_test.yml").to_str().expect("utf8"),
    ]);
    // The scrape config, with its token file where this machine has one.
    let tmp = tempfile::tempdir().expect("tempdir");
    let token = tmp.path().join("token");
    std::fs::write(&token, VIEW).expect("token");
    let config = std::fs::read_to_string(d.join("prometheus.yml"))
        .expect("config")
        .replace(
            "/etc/prometheus/diskscope-viewer-token",
            token.to_str().expect("utf8"),
        );
    std::fs::write(tmp.path().join("prometheus.yml"), config).expect("config");
    std::fs::copy(&rules, tmp.path().join("alerts.yml")).expect("rules");
    run(&[
        "check",
        "config",
        tmp.path().join("prometheus.yml").to_str().expect("utf8"),
    ]);
}

#[test]
fn the_device_under_a_target_is_exposed_between_runs() {
    let Some(emu) = Emulator::start_or_skip(
        r#"{"capacity": 67108864, "ambient_c": 47}"#,
        "device metrics (emulated SSD)",
    ) else {
        return;
    };
    let data = disk_tempdir();
    let disk = emu.disk();
    let server = Server::start(data.path(), &[disk.as_path()]);
    let (status, text) = server.get_text("/metrics", VIEW);
    assert_eq!(status, 200);
    let line = text
        .lines()
        .find(|l| {
            l.starts_with("diskscope_device_temperature_celsius{")
                && l.contains(&format!("target=\"{}\"", disk.display()))
        })
        .unwrap_or_else(|| panic!("no temperature for {}:\n{text}", disk.display()));
    let c: f64 = line
        .rsplit(' ')
        .next()
        .and_then(|v| v.parse().ok())
        .expect("value");
    assert!((20.0..=120.0).contains(&c), "{line}");
    if have("promtool") {
        let (ok, said) = promtool(&text);
        assert!(ok, "{said}");
    }
}

/// Bytes per second read between wall-clock times `from` and `to` (Unix seconds), from the
/// stored samples' cumulative bytes, the last sample's end placed at the run's end.
fn stored_rate(samples: &[Value], ended: f64, from: f64, to: f64) -> f64 {
    let points: Vec<(f64, f64)> = samples
        .iter()
        .filter_map(|s| {
            Some((
                s["end_ns"].as_f64()? / 1e9,
                s["read"]["cum_bytes"].as_f64()?,
            ))
        })
        .collect();
    let last = points.last().expect("a sample").0;
    let cum_at = |wall: f64| {
        let t = last - (ended - wall);
        let i = points.partition_point(|p| p.0 < t);
        match (i.checked_sub(1).and_then(|j| points.get(j)), points.get(i)) {
            (Some(a), Some(b)) => a.1 + (b.1 - a.1) * (t - a.0) / (b.0 - a.0),
            (None, Some(b)) => b.1,
            (Some(a), None) => a.1,
            (None, None) => 0.0,
        }
    };
    (cum_at(to) - cum_at(from)) / (to - from)
}
