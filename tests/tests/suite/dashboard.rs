//! The dashboard in headless Chromium against a real `diskscope serve`, in two tests that run
//! side by side, each with its own agent: `live` (operator login, the quick preset on the
//! scratch target, the live chart growing, the kiosk with the viewer token, no controls for
//! viewers, stopping, history, compare, zoom, a wrong token's message) and `presets` (the
//! preset picker, verification, fio job files, the emulated drives' views, repeats,
//! application traces). The browser steps are in `tests/e2e/dashboard.mjs` (playwright-core
//! with Debian's Chromium); a failure leaves a screenshot in the printed folder.

use std::path::Path;

/// 32 MiB with a flipped bit, a lost write, a dropped write and a misplaced write (4 KiB
/// pages 100, 200, 300 and 496 → 400): five bad blocks after two passes of 4 KiB writes.
const FAULTY_DRIVE: &str = r#"{"capacity": 33554432, "cache_bytes": 0, "native_mbps": 2000, "read_mbps": 3000,
    "faults": {"bit_flips": [409677], "lost_writes": [819200], "dropped_writes": [1228800],
               "misplaced_writes": [[2031616, 1638400]]}}"#;
/// Claims 64 MiB, holds 24 MiB: addresses wrap (the fakecap view); behind a 100 MB/s link
/// (reads through the page cache are then flagged faster than the link).
const COUNTERFEIT_DRIVE: &str = r#"{"capacity": 67108864, "cache_bytes": 0, "native_mbps": 2000, "read_mbps": 3000,
    "link_mbps": 100, "faults": {"wrap_bytes": 25165824}}"#;
/// 64 MiB with an EIO MiB at 8 MiB and a slow half MiB (+300 ms per I/O) at 32 MiB (the
/// error scan's map).
const DAMAGED_DRIVE: &str = r#"{"capacity": 67108864, "cache_bytes": 0, "native_mbps": 2000, "read_mbps": 3000,
    "faults": {"keep_data": true, "bad_regions": [[8388608, 1048576]], "slow_regions": [[33554432, 524288, 300]]}}"#;
use tests::server::{Server, OP, VIEW};
use tests::*;

#[test]
fn dashboard_end_to_end_in_headless_chromium() {
    let browser = match tests::browser::Browser::probe() {
        Ok(b) => b,
        Err(why) => skip!(Missing::Browser, "{why}"),
    };
    require_io_uring!();
    let (shots, _) = dashboard_part(&browser, "live", &[]);
    assert!(shots.join("live.png").exists() && shots.join("kiosk.png").exists());
}

#[test]
fn dashboard_presets_and_emulated_drives_in_headless_chromium() {
    let browser = match tests::browser::Browser::probe() {
        Ok(b) => b,
        Err(why) => skip!(Missing::Browser, "{why}"),
    };
    require_io_uring!();
    // Emulated drives that fail on purpose (root and FUSE): one fault of each kind for the
    // verification view, a counterfeit for the fakecap view, a damaged one for the error map.
    let (shots, drives) = dashboard_part(
        &browser,
        "presets",
        &[FAULTY_DRIVE, COUNTERFEIT_DRIVE, DAMAGED_DRIVE],
    );
    assert!(shots.join("cdm.png").exists());
    if drives == 3 {
        assert!(shots.join("fakecap.png").exists() && shots.join("error-scan.png").exists());
    }
}

/// Runs `part` of dashboard.mjs in `browser` against its own agent with the emulated `drives` mounted
/// (those this machine can mount); returns the screenshot folder and how many mounted.
fn dashboard_part(
    browser: &tests::browser::Browser,
    part: &str,
    drives: &[&str],
) -> (std::path::PathBuf, usize) {
    let data = ram_tempdir();
    let drives: Vec<Emulator> = drives
        .iter()
        .map_while(|m| {
            Emulator::start_or_skip(m, "dashboard verify-fail, fakecap and error-scan views")
        })
        .collect();
    let allow: Vec<&Path> = drives.iter().map(|e| e.dir()).collect();
    let server = Server::start(data.path(), &allow);
    let shots = tests::browser::Browser::shots(&format!("diskscope-e2e-{part}-"));
    let mut args = vec![
        format!("http://{}", server.addr),
        OP.to_string(),
        VIEW.to_string(),
        shots.display().to_string(),
        part.to_string(),
    ];
    args.extend(drives.iter().map(|e| e.disk().display().to_string()));
    let (passed, text) = browser.run("dashboard.mjs", &args, &[]);
    assert!(
        passed,
        "browser test ({part}) failed (screenshots in {}): {text}",
        shots.display()
    );
    (shots, drives.len())
}
