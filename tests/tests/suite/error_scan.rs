//! The error scan against ground truth: an emulated drive with an EIO region at 8 MiB
//! (1 MiB) and a slow region at 32 MiB (512 KiB, +300 ms per I/O). Through the real CLI
//! (`--preset error-scan`, with and without `--verify`) and the real API (`"scan": true`)
//! the scan goes on past the errors and maps both regions at their offsets, nothing else.

use serde_json::json;
use shared::analysis::scan::{Region, RegionKind, ScanMap};
use tests::server::Server;
use tests::*;

const MIB: u64 = 1 << 20;
const BAD: (u64, u64) = (8 * MIB, MIB);
const SLOW: (u64, u64) = (32 * MIB, MIB / 2);

static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn damaged() -> Option<Emulator> {
    let model = format!(
        r#"{{"capacity": {}, "cache_bytes": 0, "native_mbps": 2000, "read_mbps": 3000,
            "faults": {{"keep_data": true, "bad_regions": [[{}, {}]], "slow_regions": [[{}, {}, 300]]}}}}"#,
        64 * MIB,
        BAD.0,
        BAD.1,
        SLOW.0,
        SLOW.1
    );
    Emulator::start_or_skip(&model, "error scan (emulated damage)")
}

/// With 64 KiB I/Os: 1024 cells of 64 KiB; 16 failed I/Os over the bad MiB, 8 slow ones
/// over the slow half MiB, every other cell read once.
fn assert_mapped(m: &ScanMap, dir: &str) {
    assert_eq!(m.dir, dir);
    assert_eq!((m.layout.cells, m.layout.cell_bytes), (1024, 64 << 10));
    assert_eq!(
        m.regions(),
        vec![
            Region {
                kind: RegionKind::Unreadable,
                start: BAD.0,
                len: BAD.1,
                ios: 16
            },
            Region {
                kind: RegionKind::Slow,
                start: SLOW.0,
                len: SLOW.1,
                ios: 8
            },
        ],
        "{}",
        m.summary_line()
    );
    assert_eq!(m.errors.len(), 16);
    assert!(m.errors.iter().all(|e| e.errno == Some(libc::EIO)));
    assert_eq!(m.errors[0].offset, BAD.0);
    let ios: u64 = m.cells.iter().map(|c| u64::from(c.ios)).sum();
    assert_eq!(ios, 1024 - 16, "the scan went on past the errors");
}

#[test]
fn the_cli_scan_goes_on_past_errors_and_maps_bad_and_slow_regions() {
    let _one = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    require_io_uring!();
    let Some(emu) = damaged() else { return };
    let disk = emu.disk();
    let disk = disk.to_str().expect("utf8");
    let (out, r) = run_with_report(&["--target", disk, "--preset", "error-scan", "--bs", "64k"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "failed I/Os exit 1: {}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("the error scan found 16 failed I/O(s)"),
        "{}",
        stderr(&out)
    );
    assert_eq!(r.status, shared::RunStatus::Completed, "{:?}", r.error);
    assert_eq!(r.analysis.scan.len(), 1);
    assert_mapped(&r.analysis.scan[0], "read");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("16 failed I/O(s), unreadable at 8388608..9437184; 8 I/O(s) of 200 ms or more, slow at 33554432..34078720"),
        "{stdout}"
    );

    // Write + verify, then read: both passes map the regions; the read-back counts the
    // bad MiB as unreadable blocks instead of failing.
    let (out, r) = run_with_report(&[
        "--target",
        disk,
        "--preset",
        "error-scan",
        "--bs",
        "64k",
        "--verify",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(r.analysis.scan.len(), 2, "a map per pass");
    assert_mapped(&r.analysis.scan[0], "write");
    assert_mapped(&r.analysis.scan[1], "read");
    let v = r.analysis.verify.expect("read-back");
    assert_eq!((v.bad.unreadable, v.bad.total()), (16, 16), "{v:?}");
    assert!(v.incomplete.is_none(), "{v:?}");
    assert_eq!(v.first_bad[0].offset, BAD.0);

    // Without --scan the first error ends the run, at its offset.
    let (out, r) = run_with_report(&["--target", disk, "--rw", "read", "--bs", "64k"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(r.error.and_then(|e| e.offset), Some(BAD.0));
    assert!(r.analysis.scan.is_empty());
}

#[test]
fn the_api_scan_maps_the_same_regions() {
    let _one = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    require_io_uring!();
    let Some(emu) = damaged() else { return };
    let data = disk_tempdir();
    let server = Server::start(data.path(), &[emu.dir()]);
    let disk = emu.disk().display().to_string();
    let body = json!({"target": disk, "name": "scan",
        "spec": {"rw": "read", "bs": 65536, "iodepth": 4, "scan": true, "scan_slow_ms": 250}});
    let id = server.start_run(&body);
    let run = server.wait_status_within(id, "completed", std::time::Duration::from_secs(60));
    let maps: Vec<ScanMap> =
        serde_json::from_value(run["analysis"]["scan"].clone()).expect("scan maps");
    assert_eq!(maps.len(), 1, "{run}");
    assert_eq!(maps[0].slow_ms, 250);
    assert_mapped(&maps[0], "read");
    // Refused naming the value: a mixed scan, and a threshold without a scan.
    for (spec, field) in [
        (json!({"rw": "randrw", "scan": true}), "scan = randrw"),
        (json!({"rw": "read", "scan_slow_ms": 5}), "scan_slow_ms = 5"),
    ] {
        let (status, v): (u16, serde_json::Value) = server.post(
            "/api/v1/runs",
            tests::server::OP,
            &json!({"target": disk, "spec": spec}),
        );
        assert_eq!(status, 400, "{v}");
        assert!(v["message"].as_str().unwrap_or("").contains(field), "{v}");
    }
}
