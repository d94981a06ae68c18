//! Data verification against ground truth: the emulated drive (`diskscope emulate`) keeps
//! its data and fails in seeded ways at known offsets (a flipped bit, a lost write, a
//! dropped write, a misplaced write, an EIO region); `--verify` through the real CLI and
//! `"verify"` through the real API must find each kind at its offset and nowhere else. On a
//! real file (and a loop device) a verified run passes.

use serde_json::{json, Value};
use shared::analysis::verify::{BadKind, Verify};
use tests::server::{Server, OP};
use tests::*;

const P: u64 = 4096;
/// The emulated drive's faults, by 4 KiB page: what a correct read-back reports.
const FLIP: u64 = 100;
const LOST: u64 = 200;
const DROPPED: u64 = 300;
/// A write starting at page MOVED_FROM lands on MOVED_TO (both 64 KiB-aligned; in sequential
/// order MOVED_TO is written first, then overwritten by MOVED_FROM's block).
const MOVED_TO: u64 = 400;
const MOVED_FROM: u64 = 496;

static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The drive with one fault of each kind; write faults cover `unit` bytes.
fn faulty_drive(unit: u64) -> Option<Emulator> {
    let model = format!(
        r#"{{"capacity": {cap}, "cache_bytes": 0, "native_mbps": 2000, "read_mbps": 3000,
            "faults": {{"unit": {unit}, "bit_flips": [{flip}], "lost_writes": [{lost}], "dropped_writes": [{dropped}],
                        "misplaced_writes": [[{from}, {to}]]}}}}"#,
        cap = 32 << 20,
        flip = FLIP * P + 77,
        lost = LOST * P,
        dropped = DROPPED * P,
        from = MOVED_FROM * P,
        to = MOVED_TO * P,
    );
    Emulator::start_or_skip(&model, "verify (emulated faults)")
}

/// What the read-back must say of blocks of `bs` bytes: (kind, block offset) for each fault.
/// In random order MOVED_TO holds the misplaced block only if its own write came first in
/// the last pass; `moved` says whether it did.
fn expected(bs: u64, moved: bool) -> Vec<(BadKind, u64)> {
    let block = |page: u64| page * P / bs * bs;
    let mut e = vec![
        (BadKind::Corrupt, block(FLIP)),
        (BadKind::Stale, block(LOST)),
        (BadKind::Unwritten, block(DROPPED)),
        (BadKind::Unwritten, block(MOVED_FROM)),
    ];
    if moved {
        e.push((BadKind::Misplaced, block(MOVED_TO)));
    }
    e.sort_by_key(|&(_, o)| o);
    e
}

fn found(v: &Verify) -> Vec<(BadKind, u64)> {
    let mut f: Vec<(BadKind, u64)> = v.first_bad.iter().map(|b| (b.kind, b.offset)).collect();
    f.sort_by_key(|&(_, o)| o);
    f
}

#[test]
fn the_cli_finds_every_fault_at_its_offset() {
    let _one = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    require_io_uring!();
    // Two passes, so the lost write shows as the first pass's block (stale); sequential 4K
    // and random 64K (a block then spans 16 pages: the fault's block is found).
    for (rw, bs, depth) in [("write", 4096u64, "4"), ("randwrite", 65536, "8")] {
        let Some(emu) = faulty_drive(bs) else { return };
        let disk = emu.disk();
        let bs_s = bs.to_string();
        let (out, r) = run_with_report(&[
            "--target",
            disk.to_str().expect("utf8"),
            "--rw",
            rw,
            "--bs",
            &bs_s,
            "--iodepth",
            depth,
            "--loops",
            "2",
            "--verify",
        ]);
        assert_eq!(
            out.status.code(),
            Some(1),
            "bad blocks exit 1: {}",
            stderr(&out)
        );
        assert!(
            stderr(&out).contains("verification found"),
            "{}",
            stderr(&out)
        );
        let v = r.analysis.verify.expect("verify result");
        eprintln!("{rw} {bs}: {}", v.summary_line());
        let moved = v.bad.misplaced == 1;
        assert!(
            moved || rw == "randwrite",
            "sequential order misplaces: {v:?}"
        );
        assert_eq!(found(&v), expected(bs, moved), "{rw} bs {bs}: {v:?}");
        assert_eq!((v.bad.corrupt, v.bad.stale, v.bad.unwritten), (1, 1, 2));
        assert_eq!(v.blocks_checked, (32 << 20) / bs, "every block read back");
        assert_eq!(v.good_blocks + v.bad.total(), v.blocks_checked);
        if let Some(m) = v.first_bad.iter().find(|b| b.kind == BadKind::Misplaced) {
            assert_eq!(m.written_for, Some(MOVED_FROM * P));
        }
        let stale = v
            .first_bad
            .iter()
            .find(|b| b.kind == BadKind::Stale)
            .expect("stale");
        assert_eq!(
            (stale.found_generation, stale.expected_generation),
            (Some(1), Some(2))
        );
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("verify: FAIL, "),
            "the CLI prints the result"
        );
    }
}

#[test]
fn interleaved_checks_find_faults_during_the_run() {
    let _one = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    require_io_uring!();
    let Some(emu) = faulty_drive(P) else { return };
    let disk = emu.disk();
    let (out, r) = run_with_report(&[
        "--target",
        disk.to_str().expect("utf8"),
        "--rw",
        "write",
        "--bs",
        "4k",
        "--iodepth",
        "4",
        "--verify",
        "--verify-every",
        "1000",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let v = r.analysis.verify.expect("verify");
    // One pass: the lost write kept its first (only) version, so it is good; the flip, the
    // dropped and both ends of the misplaced write are found once during the run and once at
    // the end. Eight batches of 1000 ran during the run; the last 192 writes are read back
    // by the final pass only.
    assert_eq!(v.interleaved_blocks, 8000, "batches during the run");
    assert_eq!(v.blocks_checked, 8000 + 8192);
    assert_eq!(
        (v.bad.corrupt, v.bad.stale, v.bad.unwritten, v.bad.misplaced),
        (2, 0, 4, 2),
        "{v:?}"
    );
    assert!(
        r.summary.read.ios == 8000,
        "the interleaved reads count as reads: {}",
        r.summary.read.ios
    );
}

#[test]
fn an_io_error_fails_the_run_at_its_offset_and_the_read_back_says_why_it_did_not_run() {
    let _one = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    require_io_uring!();
    let model = format!(
        r#"{{"capacity": {}, "cache_bytes": 0, "native_mbps": 2000, "read_mbps": 3000, "faults": {{"keep_data": true, "bad_regions": [[{}, 4096]]}}}}"#,
        16 << 20,
        8 << 20
    );
    let Some(emu) = Emulator::start_or_skip(&model, "verify (bad region)") else {
        return;
    };
    let disk = emu.disk();
    let (out, r) = run_with_report(&[
        "--target",
        disk.to_str().expect("utf8"),
        "--rw",
        "write",
        "--bs",
        "1M",
        "--offset",
        "0",
        "--size",
        "8M",
        "--verify",
    ]);
    // The bad region lies past the span: the writes and the read-back pass.
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(r.analysis.verify.expect("verify").passed());
    let (out, r) = run_with_report(&[
        "--target",
        disk.to_str().expect("utf8"),
        "--rw",
        "write",
        "--bs",
        "1M",
        "--verify",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let e = r.error.expect("error");
    assert_eq!(e.offset, Some(8 << 20), "{e:?}");
    assert_eq!(e.errno, Some(libc::EIO));
    let v = r.analysis.verify.expect("verify");
    assert!(
        v.incomplete
            .as_deref()
            .is_some_and(|w| w.contains("the writes failed")),
        "{v:?}"
    );
}

#[test]
fn the_api_reports_the_same_faults_and_metrics_count_them() {
    let _one = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    require_io_uring!();
    let Some(emu) = faulty_drive(P) else { return };
    let data = disk_tempdir();
    let server = Server::start(data.path(), &[emu.dir()]);
    let disk = emu.disk().display().to_string();
    let body = json!({"target": disk, "name": "verify",
        "spec": {"rw": "write", "bs": 4096, "iodepth": 4, "loops": 2, "verify": true}});
    let id = server.start_run(&body);
    let run = server.wait_status_within(id, "completed", std::time::Duration::from_secs(60));
    let v: Verify =
        serde_json::from_value(run["analysis"]["verify"].clone()).expect("verify in the run");
    assert_eq!(found(&v), expected(4096, true), "{run}");
    let (status, metrics) = server.get_text("/metrics", OP);
    assert_eq!(status, 200);
    for (kind, n) in [
        ("corrupt", 1),
        ("stale", 1),
        ("unwritten", 2),
        ("misplaced", 1),
    ] {
        let line = format!("diskscope_verify_bad_blocks{{target=\"{disk}\",kind=\"{kind}\"}} {n}");
        assert!(metrics.contains(&line), "{line} missing in:\n{metrics}");
    }
    // A spec the read-back cannot check is refused, naming the field.
    let (status, v): (u16, Value) = server.post(
        "/api/v1/runs",
        OP,
        &json!({"target": disk, "spec": {"rw": "randrw", "verify": true}}),
    );
    assert_eq!(status, 400, "{v}");
    assert!(
        v["message"].as_str().unwrap_or("").contains("verify"),
        "{v}"
    );
}

#[test]
fn a_verified_run_on_a_real_file_passes() {
    require_io_uring!();
    let dir = disk_tempdir();
    let t = dir.path().join("v.bin");
    let t = t.to_str().expect("utf8");
    for args in [
        &[
            "--rw",
            "write",
            "--bs",
            "1M",
            "--iodepth",
            "8",
            "--size",
            "32M",
        ][..],
        &[
            "--rw",
            "randwrite",
            "--bs",
            "4k",
            "--iodepth",
            "16",
            "--jobs",
            "2",
            "--size",
            "16M",
            "--runtime",
            "1s",
            "--verify-every",
            "500",
        ],
        &[
            "--rw",
            "randwrite",
            "--bs",
            "8k",
            "--size",
            "16M",
            "--runtime",
            "1s",
            "--buffered",
        ],
    ] {
        let mut all = vec!["--target", t, "--verify"];
        all.extend_from_slice(args);
        let (out, r) = run_with_report(&all);
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        let v = r.analysis.verify.expect("verify");
        assert!(v.passed() && v.blocks_checked > 0, "{args:?}: {v:?}");
        assert!(v.incomplete.is_none(), "{v:?}");
    }
    // Refused before anything runs, naming the value.
    let out = diskscope(&["run", "--target", t, "--rw", "read", "--verify"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("verify = read"), "{}", stderr(&out));
}
