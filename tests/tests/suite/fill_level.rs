//! The `fill-level` preset through the real CLI and API: fills at 25, 50, 75 and 90 % with
//! 4 MiB writes, contiguous and in order; reads of the filled part and writes to the free
//! part at each level; speed against fill level in `analysis.fill_level`.

use serde_json::json;
use tests::server::Server;
use tests::*;

const MIB: u64 = 1 << 20;

#[test]
fn fills_between_the_levels_and_measures_at_each() {
    require_io_uring!();
    let dir = disk_tempdir();
    let f = dir.path().join("fill.bin");
    let (out, r) = run_with_report(&[
        "--target",
        f.to_str().expect("utf8"),
        "--preset",
        "fill-level",
        "--size",
        "100M",
        "--runtime",
        "300ms",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let span = 100 * MIB;
    let fills: Vec<_> = r
        .steps
        .iter()
        .filter(|s| s.name.starts_with("fill to"))
        .collect();
    assert_eq!(
        fills.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
        [
            "fill to 25 %",
            "fill to 50 %",
            "fill to 75 %",
            "fill to 90 %"
        ]
    );
    // Contiguous 4 MiB writes, each level's share of the span rounded down to 4 MiB.
    let mut at = 0;
    for (s, pct) in fills.iter().zip([25u64, 50, 75, 90]) {
        let to = span / 100 * pct / (4 * MIB) * (4 * MIB);
        assert_eq!(
            (s.spec.offset, s.spec.size),
            (at, Some(to - at)),
            "{}",
            s.name
        );
        assert_eq!(s.spec.bs, 4 * MIB);
        assert_eq!(
            s.summary.write.bytes,
            to - at,
            "{} wrote its part once",
            s.name
        );
        at = to;
    }
    let fl = r.analysis.fill_level.expect("fill level result");
    assert_eq!(
        fl.levels.iter().map(|l| l.pct).collect::<Vec<_>>(),
        [0, 25, 50, 75, 90]
    );
    assert!(
        fl.levels[0].read_mb_s.is_none(),
        "nothing to read when empty"
    );
    assert!(fl.levels[1..]
        .iter()
        .all(|l| l.read_mb_s.is_some_and(|v| v > 0.0)));
    assert!(fl
        .levels
        .iter()
        .all(|l| l.write_mb_s.is_some_and(|v| v > 0.0)));
    assert!(fl.read_drop_pct.is_some() && fl.write_drop_pct.is_some());
    // Reads stay in the filled part, writes in the free part.
    let read90 = r
        .steps
        .iter()
        .find(|s| s.name == "90 % full: 4K random read QD32")
        .expect("read");
    assert_eq!((read90.spec.offset, read90.spec.size), (0, Some(at)));
    let write90 = r
        .steps
        .iter()
        .find(|s| s.name == "90 % full: 4K random write QD32")
        .expect("write");
    assert_eq!(
        (write90.spec.offset, write90.spec.size),
        (at, Some(span - at))
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("fill level: 4K random read "), "{stdout}");
    // Too small a span is refused, naming it.
    let out = diskscope(&[
        "run",
        "--target",
        f.to_str().expect("utf8"),
        "--preset",
        "fill-level",
        "--size",
        "32M",
    ]);
    assert!(stderr(&out).contains("size = 33554432"), "{}", stderr(&out));
}

#[test]
fn the_api_runs_it_too() {
    require_io_uring!();
    let data = disk_tempdir();
    let server = Server::start(data.path(), &[]);
    let scratch = server.scratch_target();
    let id = server.start_run(&json!({"target": scratch, "preset": "fill-level",
        "options": {"size": 100 * MIB, "runtime_ms": 200}}));
    let run = server.wait_status_within(id, "completed", std::time::Duration::from_secs(120));
    let levels = run["analysis"]["fill_level"]["levels"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(levels.len(), 5, "{}", run["analysis"]);
}
