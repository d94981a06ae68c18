//! Trace replay through the real CLI, engine and API: a hand-written fio iolog issues
//! exactly its I/Os; recorded timing keeps (or compresses) the gaps; a workload recorded
//! on one loop device with the kernel's block tracer, replayed on another while that one is
//! recorded, issues the same sequence of (direction, offset, length); the application
//! presets score; the API names traces only from its library.

use agent::trace::{OpKind, TraceOp};
use serde_json::json;
use std::path::Path;
use tests::server::Server;
use tests::*;

const MIB: u64 = 1 << 20;

const HAND: &str = "fio version 2 iolog
/data/f add
/data/f open
/data/f write 0 65536
/data/f write 1048576 4096
/data/f write 2097152 131072
/data/f read 0 8192
/data/f read 1048576 4096
/data/f read 4194304 16384
/data/f read 6291456 1048576
/data/f trim 3145728 1048576
/data/f sync 0 0
/data/f close
";

fn replay(r: &shared::RunReport) -> &shared::analysis::replay::Replay {
    r.analysis.replay.first().expect("analysis.replay")
}

#[test]
fn a_hand_written_iolog_issues_exactly_its_ios() {
    require_io_uring!();
    let dir = disk_tempdir();
    let log = dir.path().join("hand.iolog");
    std::fs::write(&log, HAND).expect("iolog");
    let target = dir.path().join("t.bin");
    let (out, r) = run_with_report(&[
        "--target",
        target.to_str().expect("utf8"),
        "--size",
        "8M",
        "--replay",
        log.to_str().expect("utf8"),
        "--iodepth",
        "4",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(r.summary.write.ios, 3);
    assert_eq!(r.summary.write.bytes, 65536 + 4096 + 131072);
    assert_eq!(r.summary.read.ios, 4);
    assert_eq!(r.summary.read.bytes, 8192 + 4096 + 16384 + MIB);
    let p = replay(&r);
    assert_eq!(p.format, "fio iolog v2");
    assert_eq!(p.timing, "afap", "no timestamps: as fast as possible");
    assert!(p.complete);
    assert_eq!(p.issued, 7);
    assert_eq!(p.trims_issued + p.trims_skipped, 1);
    assert_eq!(p.flushes, 1);
    assert_eq!((p.remapped, p.aligned, p.ignored_records), (0, 0, 3));
    assert!(p.busy_ns > 0 && p.busy_ns <= p.elapsed_ns, "{p:?}");
    let expect_bw = (p.bytes_read + p.bytes_written) as f64 * 1000.0 / p.busy_ns as f64;
    assert!((p.bandwidth_mbps - expect_bw).abs() < 1e-6);
    assert_eq!(r.spec.bs, MIB, "buffers hold the largest I/O");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("storage bandwidth"), "{stdout}");
    assert!(!stdout.contains("CrystalDiskMark grid"), "{stdout}");

    // The same trace on a 4 MiB span: the I/Os beyond it wrap into it.
    let (out, r) = run_with_report(&[
        "--target",
        target.to_str().expect("utf8"),
        "--size",
        "4M",
        "--replay",
        log.to_str().expect("utf8"),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(replay(&r).remapped, 2);
    assert_eq!(r.summary.read.ios + r.summary.write.ios, 7);
    assert!(String::from_utf8_lossy(&out.stdout).contains("2 I/Os beyond the target remapped"));
}

#[test]
fn recorded_timing_keeps_scales_or_compresses_the_gaps() {
    require_io_uring!();
    let dir = disk_tempdir();
    let log = dir.path().join("timed.iolog");
    // Three reads 200 ms apart (µs timestamps).
    std::fs::write(
        &log,
        "fio version 3 iolog\n0 /f add\n0 /f read 0 4096\n200000 /f read 4096 4096\n400000 /f read 8192 4096\n",
    )
    .expect("iolog");
    let target = dir.path().join("t.bin");
    let run = |extra: &[&str]| {
        let mut args = vec![
            "--target",
            target.to_str().expect("utf8"),
            "--size",
            "1M",
            "--replay",
            log.to_str().expect("utf8"),
        ];
        args.extend_from_slice(extra);
        let (out, r) = run_with_report(&args);
        assert!(out.status.success(), "{}", stderr(&out));
        replay(&r).clone()
    };
    let kept = run(&["--replay-idle-max", "0"]);
    assert_eq!(kept.timing, "recorded");
    assert!(kept.elapsed_ns >= 400_000_000, "{kept:?}");
    assert_eq!(kept.compressed_ns, 0);
    let fast = run(&["--replay-idle-max", "0", "--replay-speed", "2"]);
    assert_eq!(fast.timing, "recorded ×2");
    assert!(fast.elapsed_ns >= 200_000_000, "{fast:?}");
    assert!(fast.elapsed_ns < kept.elapsed_ns, "{fast:?} vs {kept:?}");
    // Default: gaps over 10 ms shortened to 10 ms, the rest reported as compressed.
    let squeezed = run(&[]);
    assert_eq!(squeezed.compressed_ns, 2 * 190_000_000);
    assert_eq!(squeezed.recorded_ns, 400_000_000);
    assert!(squeezed.elapsed_ns >= 20_000_000);
    let afap = run(&["--replay-timing", "afap"]);
    assert_eq!((afap.timing.as_str(), afap.compressed_ns), ("afap", 0));
    assert!(afap.elapsed_ns < kept.elapsed_ns);

    let bad = diskscope(&[
        "run",
        "--target",
        target.to_str().expect("utf8"),
        "--replay",
        log.to_str().expect("utf8"),
        "--replay-speed",
        "0",
    ]);
    assert!(!bad.status.success());
    assert!(
        stderr(&bad).contains("replay_speed = 0"),
        "{}",
        stderr(&bad)
    );
    let missing = diskscope(&[
        "run",
        "--target",
        target.to_str().expect("utf8"),
        "--replay",
        "/nonexistent.iolog",
    ]);
    assert!(!missing.status.success());
    assert!(
        stderr(&missing).contains("/nonexistent.iolog"),
        "{}",
        stderr(&missing)
    );
}

/// The reads and writes of a recorded trace, in order.
fn data_ops(path: &Path) -> Vec<(OpKind, u64, u32)> {
    let t = agent::trace::read_file(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    t.ops
        .iter()
        .filter(|o| matches!(o.kind, OpKind::Read | OpKind::Write))
        .map(|o: &TraceOp| (o.kind, o.offset, o.len))
        .collect()
}

#[test]
fn a_recorded_workload_replays_with_the_same_io_sequence() {
    require_io_uring!();
    if !is_root() {
        skip!(Missing::Root, "recording a block device needs root");
    }
    if !have("fio") {
        skip!(
            Missing::Tool,
            "fio (the recorded workload) is not installed"
        );
    }
    let (a, b) = match (
        LoopDevice::new(64 * MIB, 512),
        LoopDevice::new(64 * MIB, 512),
    ) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(why), _) | (_, Err(why)) => skip!(Missing::LoopDevice, "no loop device: {why}"),
    };
    let dir = disk_tempdir();
    // Raw kernel text (blkparse-like) for the recording of the workload...
    let rec_a = dir.path().join("a.txt");
    let fio = format!(
        "fio --name=w --filename={} --direct=1 --ioengine=psync --rw=randrw --rwmixread=40 \
         --bssplit=4k/30:16k/30:64k/30:512k/10 --size=48M --number_ios=400 --randseed=7 \
         --output=/dev/null",
        a.path_str()
    );
    let out = diskscope(&[
        "record",
        "--device",
        a.path_str(),
        "--out",
        rec_a.to_str().expect("utf8"),
        "--",
        "sh",
        "-c",
        &fio,
    ]);
    if stderr(&out).contains("cannot record") {
        skip!(Missing::Kernel, "no block tracer here: {}", stderr(&out));
    }
    assert!(out.status.success(), "{}", stderr(&out));
    let want = data_ops(&rec_a);
    assert!(want.len() >= 400, "{} I/Os recorded", want.len());
    assert!(want.iter().any(|o| o.0 == OpKind::Read) && want.iter().any(|o| o.0 == OpKind::Write));
    // ... and an iolog for the recording of its replay on the other device.
    let rec_b = dir.path().join("b.iolog");
    let out = diskscope(&[
        "record",
        "--device",
        b.path_str(),
        "--out",
        rec_b.to_str().expect("utf8"),
        "--",
        diskscope_bin().to_str().expect("utf8"),
        "run",
        "--quiet",
        "--target",
        b.path_str(),
        "--replay",
        rec_a.to_str().expect("utf8"),
        "--replay-timing",
        "afap",
        "--iodepth",
        "1",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let got = data_ops(&rec_b);
    // The agent's own probe of the device may read before the replay starts.
    let at = (0..=got.len().saturating_sub(want.len()))
        .find(|&i| got[i..i + want.len()] == want[..])
        .unwrap_or_else(|| {
            let first = want.iter().zip(&got).position(|(w, g)| w != g);
            panic!(
                "the replay's I/O differs: {} recorded, {} replayed, first difference at {first:?}: {:?} vs {:?}",
                want.len(),
                got.len(),
                first.map(|i| want[i]),
                first.and_then(|i| got.get(i))
            )
        });
    eprintln!(
        "{} I/Os recorded and replayed in the same order ({} other I/Os before, {} after)",
        want.len(),
        at,
        got.len() - at - want.len()
    );
}

#[test]
fn the_application_presets_score_through_the_api_and_names_stay_in_the_library() {
    require_io_uring!();
    let data = disk_tempdir();
    let server = Server::start(data.path(), &[]);
    let target = server.scratch_target();
    let (status, traces) = server.get("/api/v1/traces", tests::server::VIEW);
    assert_eq!(status, 200, "{traces}");
    let names: Vec<&str> = traces
        .as_array()
        .expect("list")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, ["app-build", "app-database", "app-files"]);

    let id = server.start_run(&json!({"target": target, "preset": "app-files",
        "options": {"size": 256 * MIB}}));
    let run = server.wait_status_within(id, "completed", std::time::Duration::from_secs(120));
    let apps = &run["analysis"]["apps"];
    assert_eq!(apps["apps"][0]["app"], "app-files", "{apps}");
    assert!(
        apps["overall_mbps"].as_f64().expect("score") > 0.0,
        "{apps}"
    );
    assert_eq!(run["analysis"]["replay"][0]["complete"], true);

    // A file dropped into the trace directory is listed and replayed by name.
    std::fs::write(data.path().join("traces/mine.iolog"), HAND).expect("trace");
    let (_, traces) = server.get("/api/v1/traces", tests::server::VIEW);
    assert!(traces.to_string().contains("\"mine.iolog\""), "{traces}");
    let id = server.start_run(&json!({"target": target,
        "spec": {"replay": {"trace": "mine.iolog"}, "size": 8 * MIB}}));
    let run = server.wait_status(id, "completed");
    assert_eq!(run["summary"]["read"]["ios"], 4, "{run}");

    // Paths, links out of the directory and unknown names are refused, naming the value.
    std::os::unix::fs::symlink("/etc/passwd", data.path().join("traces/link")).expect("link");
    for name in ["/etc/passwd", "../tokens.json", "link", "nope"] {
        let (status, v) = server.post(
            "/api/v1/runs",
            tests::server::OP,
            &json!({"target": target, "spec": {"replay": {"trace": name}}}),
        );
        assert_eq!(status, 400, "{name}: {v}");
        assert!(
            v["message"].as_str().unwrap_or_default().contains("replay"),
            "{name}: {v}"
        );
    }
}

#[test]
fn a_trace_with_writes_is_a_write_to_the_device() {
    require_io_uring!();
    let dev = match LoopDevice::new(64 * MIB, 512) {
        Ok(d) => d,
        Err(why) => skip!(Missing::LoopDevice, "no loop device: {why}"),
    };
    let data = disk_tempdir();
    let server = Server::start(data.path(), &[dev.path.as_path()]);
    // A spec that says "read" does not make a writing trace a read.
    let body = json!({"target": dev.path_str(),
        "spec": {"rw": "read", "replay": {"trace": "app-database", "timing": "afap"}}});
    let (status, v) = server.post("/api/v1/runs", tests::server::OP, &body);
    assert_eq!(
        (status, v["code"].as_str()),
        (428, Some("confirm_required")),
        "{v}"
    );
    // A trace of reads only needs no confirmation.
    std::fs::write(
        data.path().join("traces/reads.iolog"),
        "fio version 2 iolog\n/d read 0 4096\n/d read 1048576 65536\n",
    )
    .expect("trace");
    let id = server.start_run(&json!({"target": dev.path_str(),
        "spec": {"replay": {"trace": "reads.iolog"}}}));
    let run = server.wait_status(id, "completed");
    assert_eq!(run["spec"]["rw"], "randread", "{run}");
    let mut body = body;
    body["confirm"] = json!(dev.path_str());
    let id = server.start_run(&body);
    let run = server.wait_status_within(id, "completed", std::time::Duration::from_secs(120));
    assert_eq!(run["analysis"]["replay"][0]["complete"], true, "{run}");
}
