//! Numbers that flag themselves, against ground truth: an emulated drive behind a 300 MB/s
//! link (`link_mbps`, published as `link_mb_s` beside its disk) read through the page cache
//! must be flagged faster than the link, and read with O_DIRECT must not; the null backend
//! (the load generator alone) must be flagged as limited by the job thread's CPU, and an
//! I/O-bound run must not. Through the real CLI and the real API.

use serde_json::json;
use shared::analysis::plausible::FlagKind;
use tests::server::Server;
use tests::*;

static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn behind_a_slow_link() -> Option<Emulator> {
    Emulator::start_or_skip(
        r#"{"capacity": 67108864, "cache_bytes": 0, "native_mbps": 2000, "read_mbps": 3000, "link_mbps": 300}"#,
        "plausibility (emulated link)",
    )
}

fn kinds(r: &shared::RunReport) -> Vec<FlagKind> {
    let p = r.analysis.plausibility.as_ref().expect("plausibility");
    p.flags.iter().map(|f| f.kind).collect()
}

#[test]
fn reads_from_the_page_cache_are_flagged_faster_than_the_link() {
    let _one = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    require_io_uring!();
    let Some(emu) = behind_a_slow_link() else {
        return;
    };
    let disk = emu.disk();
    let disk = disk.to_str().expect("utf8");
    // Ten passes over 32 MiB: the first from the drive at the link's 300 MB/s, the other
    // nine from the host's page cache.
    let (out, r) = run_with_report(&[
        "--target",
        disk,
        "--rw",
        "read",
        "--bs",
        "1M",
        "--size",
        "32M",
        "--loops",
        "10",
        "--buffered",
        // Each pass would otherwise start cold, as fio's invalidate=1.
        "--invalidate",
        "false",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let link = r.environment.link.clone().expect("the emulated link");
    assert_eq!((link.kind.as_str(), link.mb_s), ("emulated", 300.0));
    assert!(
        r.summary.read.mb_s > 600.0,
        "cached: {}",
        r.summary.read.mb_s
    );
    assert!(
        kinds(&r).contains(&FlagKind::FasterThanLink),
        "{:?}",
        r.analysis.plausibility
    );
    assert!(kinds(&r).contains(&FlagKind::PageCache));
    assert!(
        r.environment
            .warnings
            .iter()
            .any(|w| w.contains("is faster than the link (emulated link, at most 300 MB/s): cache, compression or holes")),
        "{:?}",
        r.environment.warnings
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("faster than the link"),
        "the CLI says so: {stdout}"
    );

    // O_DIRECT reaches the drive: at most the link, nothing flagged.
    let (out, r) = run_with_report(&[
        "--target", disk, "--rw", "read", "--bs", "1M", "--size", "32M",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        r.summary.read.mb_s <= 300.0 * 1.02,
        "{}",
        r.summary.read.mb_s
    );
    assert!(kinds(&r).is_empty(), "{:?}", r.analysis.plausibility);
    // Waiting on the drive, the job thread is mostly off CPU: headroom.
    let p = r.analysis.plausibility.expect("plausibility");
    assert!(p.headroom_pct.is_some_and(|h| h > 50.0), "{p:?}");
}

#[test]
fn the_load_generator_alone_is_flagged_with_its_headroom() {
    let _one = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let dir = disk_tempdir();
    let t = dir.path().join("null");
    let (out, r) = run_with_report(&[
        "--target",
        t.to_str().expect("utf8"),
        "--backend",
        "null",
        "--rw",
        "randread",
        "--bs",
        "4k",
        "--size",
        "1G",
        "--runtime",
        "2s",
        "--interval-ms",
        "200",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        kinds(&r).contains(&FlagKind::LoadGenerator),
        "{:?}",
        r.analysis.plausibility
    );
    let p = r.analysis.plausibility.expect("plausibility");
    assert!(p.job_cpu_pct.is_some_and(|c| c >= 90.0), "{p:?}");
    assert!(p.headroom_pct.is_some_and(|h| h <= 10.0), "{p:?}");
    assert!(
        r.samples.iter().all(|s| s.job_cpu_pct.is_some()),
        "CPU in every sample"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("limited by the load generator"), "{stdout}");
}

#[test]
fn the_api_reports_the_same_flags() {
    let _one = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    require_io_uring!();
    let Some(emu) = behind_a_slow_link() else {
        return;
    };
    let data = disk_tempdir();
    let server = Server::start(data.path(), &[emu.dir()]);
    let body = json!({"target": emu.disk().display().to_string(), "name": "cached",
        "spec": {"rw": "read", "bs": 1048576, "size": 33554432, "loops": 10, "direct": false, "invalidate": false}});
    let id = server.start_run(&body);
    let run = server.wait_status_within(id, "completed", std::time::Duration::from_secs(60));
    let flags = run["analysis"]["plausibility"]["flags"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        flags.iter().any(|f| f["kind"] == "faster_than_link"),
        "{}",
        run["analysis"]["plausibility"]
    );
    let warned = run["environment"]["warnings"].as_array().is_some_and(|w| {
        w.iter().any(|w| {
            w.as_str()
                .is_some_and(|w| w.contains("faster than the link"))
        })
    });
    assert!(warned, "{}", run["environment"]["warnings"]);
    assert_eq!(run["environment"]["link"]["mb_s"], 300.0);
}
