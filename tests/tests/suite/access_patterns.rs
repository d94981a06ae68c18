//! Skewed random offsets through the real engine: a random read on a real file with
//! `--random-distribution` and `--scan` (whose map counts every I/O by position: an offset
//! histogram of what the engine issued) must follow the distribution's known shape; bad
//! values are refused by name through the CLI and the API.

use serde_json::json;
use shared::analysis::scan::ScanMap;
use tests::server::{Server, OP};
use tests::*;

const SPAN: u64 = 64 << 20;

/// The share of I/Os per cell of a random read of `dist` over SPAN: 61,440 of them.
fn histogram(file: &str, dist: &str) -> Vec<f64> {
    let (out, r) = run_with_report(&[
        "--target",
        file,
        "--size",
        "64M",
        "--rw",
        "randread",
        "--bs",
        "4k",
        "--iodepth",
        "16",
        "--io-size",
        "240M",
        "--random-distribution",
        dist,
        "--scan",
    ]);
    assert!(out.status.success(), "{dist}: {}", stderr(&out));
    let m: &ScanMap = r.analysis.scan.first().expect("scan map");
    assert_eq!(m.layout.cells, 1024);
    let total: f64 = m.cells.iter().map(|c| f64::from(c.ios)).sum();
    // A count, not a time: a loaded machine issues fewer I/Os in a given time, never fewer
    // than these.
    assert_eq!(total, 61440.0, "{dist}: 240 MiB in 4 KiB I/Os");
    assert_eq!(r.spec.random_distribution.to_string(), dist);
    m.cells.iter().map(|c| f64::from(c.ios) / total).collect()
}

#[test]
fn issued_offsets_follow_the_distribution() {
    require_io_uring!();
    let dir = disk_tempdir();
    let f = dir.path().join("a.bin");
    let f = f.to_str().expect("utf8");
    // Lay the file out once (a read test needs data, not holes).
    let out = diskscope(&[
        "run", "-q", "--target", f, "--size", "64M", "--rw", "write", "--bs", "1M",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));

    // pareto:0.8: 80 % of the I/Os on the first 20 % of the span.
    let h = histogram(f, "pareto:0.8");
    let hot: f64 = h[..1024 / 5].iter().sum();
    assert!((hot - 0.8).abs() < 0.02, "pareto: {hot}");

    // normal:5: 68 % within one standard deviation (5 % of the span) of the middle.
    let h = histogram(f, "normal:5");
    let within: f64 = h[512 - 51..512 + 51].iter().sum();
    assert!((within - 0.6827).abs() < 0.03, "normal: {within}");

    // zipf:1.2: the first cell (blocks 1..16 of 16384) holds its exact share.
    let h = histogram(f, "zipf:1.2");
    let blocks = SPAN / 4096;
    let norm: f64 = (1..=blocks).map(|k| (k as f64).powf(-1.2)).sum();
    let first: f64 = (1..=16u64).map(|k| (k as f64).powf(-1.2)).sum::<f64>() / norm;
    assert!(
        (h[0] - first).abs() < 0.03 * first,
        "zipf first cell {} vs {first}",
        h[0]
    );
    assert!(h[0] > h[1] && h[1] > h[100], "zipf falls off");

    // uniform: every cell near 1/1024.
    let h = histogram(f, "uniform");
    let max = h.iter().copied().fold(0.0, f64::max);
    assert!(max < 2.0 / 1024.0, "uniform: max cell {max}");

    // Refused by name: a skew on sequential I/O, a bad parameter.
    let out = diskscope(&[
        "run",
        "--target",
        f,
        "--rw",
        "read",
        "--random-distribution",
        "zipf:1.2",
    ]);
    assert!(
        stderr(&out).contains("random_distribution = zipf:1.2: only applies to random modes"),
        "{}",
        stderr(&out)
    );
    let out = diskscope(&[
        "run",
        "--target",
        f,
        "--rw",
        "randread",
        "--random-distribution",
        "pareto:2",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("pareto's h must be in (0, 1)"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn the_api_takes_a_distribution_and_names_a_bad_one() {
    require_io_uring!();
    let data = disk_tempdir();
    let server = Server::start(data.path(), &[]);
    let scratch = server.scratch_target();
    let spec = json!({"rw": "randread", "bs": 4096, "iodepth": 4, "runtime_ms": 300, "size": 16777216,
                      "random_distribution": {"zipf": 1.1}, "seq_pct": 25});
    let id = server.start_run(&json!({"target": scratch, "spec": spec}));
    let run = server.wait_status_within(id, "completed", std::time::Duration::from_secs(60));
    assert_eq!(run["spec"]["random_distribution"], json!({"zipf": 1.1}));
    assert_eq!(run["spec"]["seq_pct"], 25);
    let (status, v): (u16, serde_json::Value) = server.post(
        "/api/v1/runs",
        OP,
        &json!({"target": scratch, "spec": {"rw": "randread", "random_distribution": {"normal": 0.0}}}),
    );
    assert_eq!(status, 400, "{v}");
    assert!(
        v["message"]
            .as_str()
            .unwrap_or("")
            .contains("random_distribution = normal:0"),
        "{v}"
    );
}
