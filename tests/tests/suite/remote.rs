//! `diskscope run --agent URL --token T`: the real CLI driving a real agent over HTTP and
//! the WebSocket, with the same flags, live lines, the agent's report for `--json`, and the
//! exit codes of a local run (a sustain miss exits 1).

use tests::server::{Server, OP, VIEW};
use tests::*;

fn remote(server: &Server, token: &str, args: &[&str]) -> std::process::Output {
    let url = format!("http://{}", server.addr);
    let mut all = vec!["run", "--agent", &url, "--token", token];
    all.extend_from_slice(args);
    diskscope(&all)
}

#[test]
fn a_remote_run_prints_live_lines_and_writes_the_agents_report() {
    require_io_uring!();
    let data = disk_tempdir();
    let server = Server::start(data.path(), &[]);
    let target = server.scratch_target();
    let json = data.path().join("remote.json");
    let out = remote(
        &server,
        OP,
        &[
            "--target",
            &target,
            "--rw",
            "randread",
            "--bs",
            "4k",
            "--iodepth",
            "4",
            "--size",
            "64M",
            "--runtime",
            "2s",
            "--interval-ms",
            "500",
            "--json",
            json.to_str().expect("utf8"),
        ],
    );
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("run 1 on http://"), "{err}");
    let lines = err
        .lines()
        .filter(|l| l.contains("read") && l.contains("IOPS"))
        .count();
    assert!(lines >= 3, "live lines from the stream:\n{err}");
    let r = read_report(&json);
    assert_eq!(r.status, shared::RunStatus::Completed);
    assert!(r.summary.read.ios > 0);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("read"),
        "the summary table"
    );
    let (_, runs) = server.get("/api/v1/runs", VIEW);
    assert_eq!(runs["total"], 1, "{runs}");

    // The agent's history, export and stop from the command line.
    let url = format!("http://{}", server.addr);
    let out = diskscope(&["runs", "--agent", &url, "--token", VIEW]);
    let listed = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        listed.contains("completed") && listed.contains(&target),
        "{listed}"
    );
    // The same one line as the dashboard's history: the stored MB/s as it rounds there.
    let mb_s = r.summary.read.mb_s;
    let shown = if mb_s >= 100.0 {
        format!("read {mb_s:.0} MB/s")
    } else {
        format!("read {mb_s:.1} MB/s")
    };
    assert!(listed.contains(&shown), "{shown} not in {listed}");
    let exported = data.path().join("exported.json");
    let out = diskscope(&[
        "export",
        "--agent",
        &url,
        "--token",
        VIEW,
        "1",
        "--out",
        exported.to_str().expect("utf8"),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(read_report(&exported).summary.read.ios, r.summary.read.ios);
    let id = server.start_run(&serde_json::json!({"target": target,
        "spec": {"rw": "randread", "size": "64M", "runtime_ms": "60s"}}));
    let out = diskscope(&["stop", "--agent", &url, "--token", VIEW, &id.to_string()]);
    assert!(
        stderr(&out).contains("403"),
        "a viewer cannot stop: {}",
        stderr(&out)
    );
    let out = diskscope(&["stop", "--agent", &url, "--token", OP, &id.to_string()]);
    assert!(out.status.success(), "{}", stderr(&out));
    server.wait_status(id, "stopped");
}

#[test]
fn a_remote_sustain_miss_exits_1_and_refusals_name_the_problem() {
    require_io_uring!();
    let data = disk_tempdir();
    let server = Server::start(data.path(), &[]);
    let target = server.scratch_target();
    // 100 GB/s: no drive here keeps that.
    let out = remote(
        &server,
        OP,
        &[
            "--target",
            &target,
            "--preset",
            "sustain",
            "--rate",
            "100GB",
            "--runtime",
            "2s",
            "--size",
            "64M",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("did not sustain the required rate"),
        "{}",
        stderr(&out)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("sustain"),
        "the analysis lines"
    );

    let out = remote(
        &server,
        "not-the-token-0123456789",
        &["--target", &target, "--runtime", "1s"],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("401"), "{}", stderr(&out));
    let out = remote(&server, VIEW, &["--target", &target, "--runtime", "1s"]);
    assert!(
        stderr(&out).contains("403"),
        "a viewer cannot start runs: {}",
        stderr(&out)
    );
    let out = remote(&server, OP, &["--target", &target, "--iodepth", "0"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("iodepth = 0"), "{}", stderr(&out));
    let out = remote(&server, OP, &["--target", &target, "--csv", "x.csv"]);
    assert!(
        stderr(&out).contains("--csv is not available with --agent"),
        "{}",
        stderr(&out)
    );
    let out = diskscope(&["run", "--target", &target, "--token", OP]);
    assert!(stderr(&out).contains("go with --agent"), "{}", stderr(&out));
}
