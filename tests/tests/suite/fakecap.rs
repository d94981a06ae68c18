//! The `fakecap` preset (f3's job) against ground truth: an emulated counterfeit drive that
//! claims 64 MiB and wraps at 24 MiB (`faults.wrap_bytes`) through the real CLI and API; a
//! genuine loop device; and a file over the free space of a small real filesystem.

use serde_json::json;
use shared::analysis::verify::FakeCap;
use shared::analysis::Verdict;
use tests::server::Server;
use tests::*;

const MIB: u64 = 1 << 20;
const CLAIMED: u64 = 64 * MIB;
const REAL: u64 = 24 * MIB;

fn counterfeit() -> Option<Emulator> {
    let model = format!(
        r#"{{"capacity": {CLAIMED}, "cache_bytes": 0, "native_mbps": 2000, "read_mbps": 3000,
            "faults": {{"wrap_bytes": {REAL}}}}}"#
    );
    Emulator::start_or_skip(&model, "fakecap (emulated counterfeit)")
}

/// A drive that wraps at REAL: the low CLAIMED - REAL bytes hold blocks written for higher
/// offsets (the last writer of each cell wins), everything from there up reads back good.
fn assert_counterfeit(f: &FakeCap) {
    assert_eq!(f.verdict, Verdict::Found, "{f:?}");
    assert_eq!(f.span_bytes, CLAIMED);
    assert_eq!(f.usable_bytes, REAL, "the real capacity: {f:?}");
    assert_eq!(f.alias_bytes, Some(REAL));
    assert_eq!(f.first_good, Some(CLAIMED - REAL), "{f:?}");
    assert_eq!(f.last_good, Some(CLAIMED - MIB), "{f:?}");
    assert_eq!(f.good_bytes, REAL);
}

#[test]
fn the_cli_finds_the_real_capacity_of_a_counterfeit_drive() {
    require_io_uring!();
    let Some(emu) = counterfeit() else { return };
    let disk = emu.disk();
    let (out, r) = run_with_report(&[
        "--target",
        disk.to_str().expect("utf8"),
        "--preset",
        "fakecap",
    ]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "a fake exits 1: {}",
        stderr(&out)
    );
    let f = r.analysis.fakecap.expect("fakecap verdict");
    eprintln!("{}", f.summary_line());
    assert_counterfeit(&f);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(
            "fakecap: FAKE, 24 MiB usable of 64 MiB claimed (addresses repeat every 24 MiB)"
        ),
        "{stdout}"
    );
    let v = r.analysis.verify.expect("the read-back");
    assert_eq!(v.bad.misplaced, (CLAIMED - REAL) / MIB, "{v:?}");
}

#[test]
fn the_api_finds_the_same_capacity() {
    require_io_uring!();
    let Some(emu) = counterfeit() else { return };
    let data = disk_tempdir();
    let server = Server::start(data.path(), &[emu.dir()]);
    let body = json!({"target": emu.disk().display().to_string(), "preset": "fakecap"});
    let id = server.start_run(&body);
    let run = server.wait_status_within(id, "completed", std::time::Duration::from_secs(60));
    let f: FakeCap = serde_json::from_value(run["analysis"]["fakecap"].clone()).expect("fakecap");
    assert_counterfeit(&f);
}

#[test]
fn a_genuine_block_device_and_a_file_over_the_free_space_pass() {
    require_io_uring!();
    if !is_root() {
        skip!(Missing::Root, "loop devices need root");
    }
    let dev = match LoopDevice::new(48 * MIB, 512) {
        Ok(d) => d,
        Err(why) => skip!(Missing::LoopDevice, "no loop device: {why}"),
    };
    let (out, r) = run_with_report(&["--target", dev.path_str(), "--preset", "fakecap"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let f = r.analysis.fakecap.expect("fakecap");
    assert_eq!(
        (f.verdict, f.usable_bytes),
        (Verdict::NotFound, 48 * MIB),
        "{f:?}"
    );
    assert_eq!(f.good_bytes, 48 * MIB);

    let fs = match LoopMount::new(256 * MIB) {
        Ok(m) => m,
        Err(why) => skip!(Missing::LoopDevice, "no loop mount: {why}"),
    };
    let file = fs.path().join("fakecap.bin");
    let free = agent::io_target::free_space(&file).expect("statvfs");
    let (out, r) = run_with_report(&[
        "--target",
        file.to_str().expect("utf8"),
        "--preset",
        "fakecap",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let f = r.analysis.fakecap.expect("fakecap");
    let size = std::fs::metadata(&file).expect("created").len();
    // Created over the free space less the reserve (64 MiB here: 1 % is less).
    assert_eq!(size, (free - 64 * MIB) / MIB * MIB, "free {free}");
    assert_eq!(
        (f.verdict, f.span_bytes, f.usable_bytes),
        (Verdict::NotFound, size, size)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("fakecap: GENUINE, all "),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}
