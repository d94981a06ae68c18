//! Repeated runs and whether a difference is real: `--repeat N` through the real CLI (a
//! workload and a preset), `"repeat"` through the real API, and `diskscope compare` on two
//! emulated drives whose read rates are known to differ (300 vs 200 MB/s links) and on a
//! run against itself.

use serde_json::json;
use shared::analysis::repeat::Repeat;
use tests::server::{Server, OP};
use tests::*;

static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn metric<'a>(
    r: &'a Repeat,
    step: Option<&str>,
    name: &str,
) -> &'a shared::analysis::repeat::Metric {
    r.metrics
        .iter()
        .find(|m| m.step.as_deref() == step && m.name == name)
        .unwrap_or_else(|| panic!("{step:?} {name} missing: {r:?}"))
}

#[test]
fn a_repeated_workload_and_preset_report_statistics_per_metric() {
    let _one = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    require_io_uring!();
    let dir = disk_tempdir();
    let t = dir.path().join("r.bin");
    let t = t.to_str().expect("utf8");
    let (out, r) = run_with_report(&[
        "--target",
        t,
        "--size",
        "32M",
        "--rw",
        "randread",
        "--bs",
        "4k",
        "--iodepth",
        "4",
        "--runtime",
        "400ms",
        "--repeat",
        "5",
        "--idle",
        "100ms",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(r.steps.len(), 5);
    assert_eq!(
        r.steps.iter().map(|s| s.pass).collect::<Vec<_>>(),
        (1..=5).map(Some).collect::<Vec<_>>()
    );
    let rep = r.analysis.repeat.expect("repeat statistics");
    assert_eq!(rep.passes, 5);
    for name in ["read MB/s", "read IOPS", "read p50 µs", "read p99 µs"] {
        let s = &metric(&rep, None, name).stat;
        assert_eq!((s.n, s.values.len()), (5, 5), "{name}");
        assert!(s.min <= s.mean && s.mean <= s.max && s.ci_lo <= s.mean && s.mean <= s.ci_hi);
    }
    // The passes' own figures, exactly.
    let mbs: Vec<f64> = r.steps.iter().map(|s| s.summary.read.mb_s).collect();
    assert_eq!(metric(&rep, None, "read MB/s").stat.values, mbs);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("repeat: 5 passes"), "{stdout}");
    // The idle between passes is in the run (sampled as zeros), not in the passes.
    assert!(
        r.steps[1].start_ns >= r.steps[0].end_ns + 90_000_000,
        "{:?}",
        r.steps[1]
    );

    // A preset: every step of every pass, statistics per step.
    let (out, r) = run_with_report(&[
        "--target",
        t,
        "--preset",
        "cdm",
        "--size",
        "16M",
        "--count",
        "1",
        "--runtime",
        "200ms",
        "--idle",
        "0s",
        "--repeat",
        "2",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(r.steps.len(), 16, "8 tests × 2 passes");
    let rep = r.analysis.repeat.expect("repeat");
    let seq = metric(&rep, Some("SEQ1M Q8T1 read #1"), "read MB/s");
    assert_eq!(seq.stat.n, 2);

    // Refused by name: --repeat 0, and --idle without --repeat on a single workload.
    let out = diskscope(&["run", "--target", t, "--rw", "read", "--repeat", "0"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let out = diskscope(&["run", "--target", t, "--rw", "read", "--idle", "1s"]);
    assert!(stderr(&out).contains("--idle 1000ms"), "{}", stderr(&out));
}

#[test]
fn compare_says_when_a_difference_is_real() {
    let _one = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    require_io_uring!();
    let drive = |mbps: u32| {
        Emulator::start_or_skip(
            &format!(
                r#"{{"capacity": 33554432, "cache_bytes": 0, "native_mbps": 2000, "read_mbps": 3000, "link_mbps": {mbps}}}"#
            ),
            "compare (emulated drives)",
        )
    };
    let (Some(fast), Some(slow)) = (drive(300), drive(200)) else {
        return;
    };
    let dir = disk_tempdir();
    let report = |emu: &Emulator, name: &str| {
        let json = dir.path().join(name);
        let out = diskscope(&[
            "run",
            "-q",
            "--target",
            emu.disk().to_str().expect("utf8"),
            "--rw",
            "read",
            "--bs",
            "1M",
            "--iodepth",
            "2",
            "--runtime",
            "400ms",
            "--repeat",
            "4",
            "--json",
            json.to_str().expect("utf8"),
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        json
    };
    let (a, b) = (report(&fast, "a.json"), report(&slow, "b.json"));
    let out = diskscope(&[
        "compare",
        a.to_str().expect("utf8"),
        b.to_str().expect("utf8"),
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", stderr(&out));
    let line = text
        .lines()
        .find(|l| l.starts_with("read MB/s"))
        .unwrap_or_else(|| panic!("{text}"));
    eprintln!("{line}");
    // 200 / 300: the interval holds the links' ratio, 0.67, and excludes 1 (the point
    // estimate itself moves with the machine's load: 0.70 beside a build).
    let ci = line
        .split("95 % CI ")
        .nth(1)
        .and_then(|r| r.split(')').next())
        .and_then(|r| r.split_once('-'))
        .and_then(|(lo, hi)| Some((lo.parse::<f64>().ok()?, hi.parse::<f64>().ok()?)))
        .unwrap_or_else(|| panic!("no interval in {line}"));
    assert!(
        // (the interval is printed to 0.01: "0.67-0.67" holds 0.667)
        line.contains("B is 0.")
            && ci.0 <= 2.0 / 3.0 + 0.005
            && 2.0 / 3.0 - 0.005 <= ci.1
            && ci.1 < 1.0,
        "{line}"
    );
    assert!(!line.contains("no significant"), "{line}");
    // A run against itself: no difference.
    let out = diskscope(&[
        "compare",
        a.to_str().expect("utf8"),
        a.to_str().expect("utf8"),
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.lines()
            .any(|l| l.starts_with("read MB/s")
                && l.contains("no significant difference (B is 1.00x A")),
        "{text}"
    );
    // Not a report: said so, naming the file.
    let out = diskscope(&["compare", "/etc/hostname", a.to_str().expect("utf8")]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("/etc/hostname is not a diskscope report"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn the_api_repeats_and_refuses_a_bad_count() {
    let _one = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    require_io_uring!();
    let data = disk_tempdir();
    let server = Server::start(data.path(), &[]);
    let scratch = server.scratch_target();
    let spec =
        json!({"rw": "randread", "bs": 4096, "iodepth": 4, "runtime_ms": 300, "size": 16777216});
    let id = server
        .start_run(&json!({"target": scratch, "spec": spec, "repeat": 3, "repeat_idle_ms": 50}));
    let run = server.wait_status_within(id, "completed", std::time::Duration::from_secs(60));
    let rep: Repeat = serde_json::from_value(run["analysis"]["repeat"].clone()).expect("repeat");
    assert_eq!(rep.passes, 3);
    assert_eq!(metric(&rep, None, "read IOPS").stat.n, 3);
    assert_eq!(
        run["steps"].as_array().map(Vec::len),
        Some(3),
        "the passes are its steps"
    );
    let (status, v): (u16, serde_json::Value) = server.post(
        "/api/v1/runs",
        OP,
        &json!({"target": scratch, "spec": spec, "repeat": 0}),
    );
    assert_eq!(status, 400, "{v}");
    assert!(
        v["message"].as_str().unwrap_or("").contains("repeat = 0"),
        "{v}"
    );
}
