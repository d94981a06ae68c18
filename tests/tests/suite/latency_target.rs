//! The `latency-target` preset against ground truth: an emulated drive that reads 4 KiB at
//! 0.5 MB/s (about 122 IOPS, served one after another) queues, so p99 grows with the depth
//! by about 8 ms per I/O in the queue (QD4 about 33 ms, QD8 about 66 ms: 15 ms either side of
//! the 48 ms limit); the search must double the depth while p99 holds, stop at the first
//! depth that breaks it, and report the best round under the limit. Through the real CLI
//! and API. A search during which the emulator fell behind its own model (it keeps time in
//! user space; a fresh-clone run's stolen CPU once served QD2 at 80 IOPS with a 217 ms p99)
//! is checked for its logic and run again, never judged against the model.

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

/// The model's rate in 4 KiB reads a second: one after another at 0.5 MB/s.
const MODEL_IOPS: f64 = 0.5e6 / 4096.0;

/// The model's p99 at depth `d`, µs: every I/O waits for the `d` in the queue, one
/// service time (4 KiB at 0.5 MB/s) each.
fn model_p99_us(d: u32) -> f64 {
    f64::from(d) * 1e6 / MODEL_IOPS
}

/// Why the emulated drive was not the model during a round, if it was not: a round at full
/// rate that served fewer than 85 % of the model's IOPS (a serial server is busy at every
/// depth, QD1 included, so its rate is the model's whatever the depth), or whose p99 passed
/// the model's by more than 12 ms (the depths either side of the limit are 15 ms from it:
/// more jitter than that can move a depth across). The emulator keeps time in user space;
/// on a loaded or stolen CPU its thread sleeps past its deadlines and the queue it models is
/// not the one the agent measured (a fresh-clone run: QD1 at p99 30 ms, QD2 at 54 ms and
/// 87 % of the rate). Such a round says nothing about the search, so the run is repeated
/// (the search's own logic is still checked).
fn disturbance(t: &LatencyTarget) -> Option<String> {
    t.rounds
        .iter()
        .filter(|r| r.rate_iops.is_none())
        .find_map(|r| {
            let model = model_p99_us(r.iodepth);
            if r.iops < 0.85 * MODEL_IOPS {
                Some(format!(
                    "QD{} served {:.0} IOPS of the model's {MODEL_IOPS:.0}",
                    r.iodepth, r.iops
                ))
            } else if r.p99_us > model + 12_000.0 {
                Some(format!(
                    "QD{} had p99 {:.1} ms, the model's {:.1} ms",
                    r.iodepth,
                    r.p99_us / 1000.0,
                    model / 1000.0
                ))
            } else {
                None
            }
        })
}

/// The search's logic on whatever it measured: depths double from 1 while p99 holds, stop
/// at the first that breaks it, only rate-capped rounds after it, the best round is the
/// fastest under the limit, and every round is its step's own figures.
fn assert_search_logic(t: &LatencyTarget, steps: &[shared::StepReport]) {
    assert_eq!(t.limit_us, 48000.0);
    assert_eq!(t.rounds.len(), steps.len(), "a step per round");
    let first_bad = t
        .rounds
        .iter()
        .position(|r| !r.ok)
        .expect("some depth breaks 48 ms");
    for (i, r) in t.rounds[..first_bad].iter().enumerate() {
        assert_eq!((r.iodepth, r.rate_iops), (1 << i, None), "{t:?}");
        assert!(r.p99_us <= 48000.0, "{t:?}");
    }
    let bad = t.rounds[first_bad];
    assert!(bad.p99_us > 48000.0 && bad.rate_iops.is_none(), "{t:?}");
    assert!(t.rounds[first_bad + 1..]
        .iter()
        .all(|r| r.iodepth == bad.iodepth && r.rate_iops.is_some()));
    if let Some(best) = t.best {
        assert!(best.ok && best.p99_us <= 48000.0, "{best:?}");
        assert!(t
            .rounds
            .iter()
            .filter(|r| r.ok)
            .all(|r| r.iops <= best.iops));
    }
    for (r, s) in t.rounds.iter().zip(steps) {
        assert_eq!(r.iodepth, s.spec.iodepth);
        assert_eq!(r.iops, s.summary.read.iops);
    }
}

/// The search against the model: its logic always; the depth that breaks the limit and a
/// best round under it when the drive kept to the model. Runs `search` again (at most
/// three times in all) while the drive was disturbed.
fn search_against_the_model(search: impl Fn() -> (LatencyTarget, Vec<shared::StepReport>)) {
    for attempt in 1..=3 {
        let (t, steps) = search();
        eprintln!("{}", t.summary_line());
        assert_search_logic(&t, &steps);
        if let Some(why) = disturbance(&t) {
            eprintln!(
                "latency target, attempt {attempt}: the drive fell behind its model ({why}): {t:?}"
            );
            continue;
        }
        let bad = t.rounds.iter().find(|r| !r.ok).expect("a depth breaks it");
        // QD4 waits about 33 ms (p99 under 48 ms), QD8 about 66 ms.
        assert!(bad.iodepth >= 4 && bad.iodepth <= 8, "{t:?}");
        // A serial server gives every depth the same IOPS: any round under the limit may
        // be the best.
        assert!(t.best.is_some(), "{t:?}");
        return;
    }
    panic!("the emulated drive fell behind its model in three searches running");
}

#[test]
fn the_cli_search_finds_the_depth_that_breaks_the_limit() {
    let _one = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    require_io_uring!();
    let Some(emu) = queueing_drive() else { return };
    let disk = emu.disk();
    search_against_the_model(|| {
        let (out, r) = run_with_report(&[
            "--target",
            disk.to_str().expect("utf8"),
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
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.contains("latency target: "), "{stdout}");
        let t = r.analysis.latency_target.clone().expect("latency target");
        (t, r.steps)
    });
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
    search_against_the_model(|| {
        let id = server.start_run(&json!({"target": emu.disk().display().to_string(),
            "preset": "latency-target", "options": {"p99_us": 48000, "runtime_ms": 2000, "size": 33554432}}));
        let run = server.wait_status_within(id, "completed", std::time::Duration::from_secs(120));
        let t: LatencyTarget = serde_json::from_value(run["analysis"]["latency_target"].clone())
            .expect("latency target");
        let steps: Vec<shared::StepReport> =
            serde_json::from_value(run["steps"].clone()).expect("steps");
        (t, steps)
    });
}
