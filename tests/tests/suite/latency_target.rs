//! The `latency-target` preset against ground truth: an emulated drive that reads 4 KiB at
//! 0.5 MB/s (about 125 IOPS, served one after another) queues, so p99 grows with the depth
//! by about 8 ms per I/O in the queue (QD4 about 33 ms, QD8 about 66 ms: 15 ms either side of
//! the 48 ms limit; at 1 MB/s and 24 ms a loaded fresh-clone run's FUSE stalls put QD1's p99
//! at 31 ms, and a 40 ms stall still leaves QD1 under this limit); the search must double the depth while p99 holds, stop
//! at the first depth that breaks it, and report the best round under the limit. Through
//! the real CLI and API.

use serde_json::json;
use shared::analysis::latency::LatencyTarget;
use tests::server::Server;
use tests::*;

static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn queueing_drive() -> Option<Emulator> {
    Emulator::start_or_skip(
        r#"{"capacity": 67108864, "cache_bytes": 0, "native_mbps": 2000, "read_mbps": 0.5}"#,
        "latency-target (emulated drive)",
    )
}

fn assert_search(t: &LatencyTarget, steps: &[shared::StepReport]) {
    assert_eq!(t.limit_us, 48000.0);
    assert_eq!(t.rounds.len(), steps.len(), "a step per round");
    // Depths double from 1 while p99 holds.
    let first_bad = t
        .rounds
        .iter()
        .position(|r| !r.ok)
        .expect("some depth breaks 48 ms");
    for (i, r) in t.rounds[..first_bad].iter().enumerate() {
        assert_eq!((r.iodepth, r.rate_iops), (1 << i, None), "{t:?}");
    }
    let bad = t.rounds[first_bad];
    assert!(bad.p99_us > 48000.0 && bad.iodepth >= 4, "{t:?}");
    // After it, only rate-capped rounds at that depth.
    assert!(t.rounds[first_bad + 1..]
        .iter()
        .all(|r| r.iodepth == bad.iodepth && r.rate_iops.is_some()));
    let best = t.best.expect("a round under the limit");
    assert!(best.ok && best.p99_us <= 48000.0, "{best:?}");
    assert!(t
        .rounds
        .iter()
        .filter(|r| r.ok)
        .all(|r| r.iops <= best.iops));
    // The rounds are the steps' own figures.
    for (r, s) in t.rounds.iter().zip(steps) {
        assert_eq!(r.iodepth, s.spec.iodepth);
        assert_eq!(r.iops, s.summary.read.iops);
    }
}

#[test]
fn the_cli_search_finds_the_depth_that_breaks_the_limit() {
    let _one = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    require_io_uring!();
    let Some(emu) = queueing_drive() else { return };
    let (out, r) = run_with_report(&[
        "--target",
        emu.disk().to_str().expect("utf8"),
        "--preset",
        "latency-target",
        "--p99",
        "48ms",
        "--runtime",
        "2s",
        "--size",
        "32M",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let t = r.analysis.latency_target.clone().expect("latency target");
    eprintln!("{}", t.summary_line());
    assert_search(&t, &r.steps);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("latency target: "), "{stdout}");
    // A limit out of range is refused, naming it.
    let out = diskscope(&[
        "run",
        "--target",
        "x",
        "--preset",
        "latency-target",
        "--p99",
        "2min",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[test]
fn the_api_search_reports_the_same() {
    let _one = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    require_io_uring!();
    let Some(emu) = queueing_drive() else { return };
    let data = disk_tempdir();
    let server = Server::start(data.path(), &[emu.dir()]);
    let id = server.start_run(&json!({"target": emu.disk().display().to_string(),
        "preset": "latency-target", "options": {"p99_us": 48000, "runtime_ms": 2000, "size": 33554432}}));
    let run = server.wait_status_within(id, "completed", std::time::Duration::from_secs(120));
    let t: LatencyTarget =
        serde_json::from_value(run["analysis"]["latency_target"].clone()).expect("latency target");
    let steps: Vec<shared::StepReport> =
        serde_json::from_value(run["steps"].clone()).expect("steps");
    assert_search(&t, &steps);
}
