//! A real `diskscope serve` process, a real SQLite file and real WebSocket clients.

use serde_json::{json, Value};
use shared::api::{ClientMsg, RunEvent, ServerMsg};
use tests::server::{Server, WsClient, OP, VIEW};
use tests::*;

fn contiguous(seqs: &[u64]) -> bool {
    seqs.iter().enumerate().all(|(i, &s)| s == i as u64)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stream_delivers_samples_in_order_and_resumes_without_gap_or_duplicate() {
    require_io_uring!();
    let data = disk_tempdir();
    let targets = disk_tempdir();
    let server = Server::start(data.path(), &[targets.path()]);
    let target = targets.path().join("t.bin").display().to_string();
    let id = server.start_run(&json!({"target": target, "name": "resume", "spec": {
        "rw": "randwrite", "size": 16 << 20, "iodepth": 4, "runtime_ms": 3000, "interval_ms": 100}}));
    let (status, busy) = server.post(
        "/api/v1/runs",
        OP,
        &json!({"target": target, "preset": "quick"}),
    );
    assert_eq!(status, 409, "a second run on a busy target: {busy}");

    // First connection (header auth): take a few samples, then drop the connection.
    let mut a = WsClient::connect(&server, VIEW, true).await;
    a.send(&ClientMsg::Subscribe {
        run_id: id,
        after_seq: None,
        max_points: None,
    })
    .await;
    let mut seqs = Vec::new();
    while seqs.len() < 5 {
        if let Some(ServerMsg::Sample { sample, .. }) = a.next().await {
            seqs.push(sample.seq);
        }
    }
    drop(a);
    // Samples go on while no client listens: wait until a few more are stored.
    let last = seqs.last().copied().unwrap_or(0) as usize;
    tokio::task::block_in_place(|| server.wait_samples(id, last + 4));

    // Reconnect (auth message) with the last seq seen: the rest, no gap, no duplicate.
    let mut b = WsClient::connect(&server, VIEW, false).await;
    b.send(&ClientMsg::Subscribe {
        run_id: id,
        after_seq: seqs.last().copied(),
        max_points: None,
    })
    .await;
    let (rest, end) = b.collect_until_end(id).await;
    assert_eq!(end, RunEvent::Completed);
    seqs.extend(rest);
    assert!(
        contiguous(&seqs),
        "seqs with a gap or a duplicate: {seqs:?}"
    );
    let (_, stored) = server.get(&format!("/api/v1/runs/{id}/samples"), VIEW);
    assert_eq!(
        seqs.len(),
        stored["samples"].as_array().unwrap().len(),
        "every stored sample was streamed"
    );
    assert!(
        seqs.len() >= 25,
        "3 s at 100 ms gave {} samples",
        seqs.len()
    );
    b.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_clients_get_every_sample_while_one_never_reads() {
    let data = disk_tempdir();
    let server = Server::start(data.path(), &[data.path()]);
    let mut clients = Vec::new();
    for i in 0..20 {
        let mut c = WsClient::connect(&server, VIEW, i % 2 == 0).await;
        c.send(&ClientMsg::SubscribeActive { max_points: None })
            .await;
        assert!(matches!(c.next().await, Some(ServerMsg::Subscribed { .. })));
        clients.push(c);
    }
    let mut stalled = WsClient::connect(&server, VIEW, true).await;
    stalled
        .send(&ClientMsg::SubscribeActive { max_points: None })
        .await;
    let id = server.start_run(
        &json!({"target": data.path().join("label").display().to_string(), "spec": {
        "backend": "null", "rw": "randrw", "iodepth": 16, "runtime_ms": 3000, "interval_ms": 100}}),
    );
    let tasks: Vec<_> = clients
        .into_iter()
        .map(|mut c| tokio::spawn(async move { c.collect_until_end(id).await }))
        .collect();
    let mut counts = Vec::new();
    for t in tasks {
        let (seqs, end) = t.await.expect("client task");
        assert_eq!(end, RunEvent::Completed);
        assert!(contiguous(&seqs), "{seqs:?}");
        counts.push(seqs.len());
    }
    let (_, run) = server.get(&format!("/api/v1/runs/{id}"), VIEW);
    let stored = run["summary"]["samples"].as_u64().unwrap() as usize;
    assert!(
        counts.iter().all(|&n| n == stored),
        "every client got all {stored} samples: {counts:?}"
    );
    assert!(stored >= 28, "{stored} samples for 3 s at 100 ms");
    drop(stalled);
}

#[test]
fn kill_9_mid_run_leaves_an_interrupted_run_with_its_samples() {
    let data = disk_tempdir();
    let mut server = Server::start(data.path(), &[data.path()]);
    let id = server.start_run(
        &json!({"target": data.path().join("label").display().to_string(), "spec": {
        "backend": "null", "runtime_ms": 60000, "interval_ms": 100}}),
    );
    server.wait_samples(id, 5);
    server.kill9();
    let server = Server::start(data.path(), &[data.path()]);
    let run = server.wait_status(id, "interrupted");
    assert!(run["ended_ms"].as_u64().is_some());
    let (_, s) = server.get(&format!("/api/v1/runs/{id}/samples"), VIEW);
    let seqs: Vec<u64> = s["samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["seq"].as_u64().unwrap())
        .collect();
    assert!(seqs.len() >= 5 && contiguous(&seqs), "{seqs:?}");
}

#[test]
fn sigterm_stops_the_run_within_an_interval_and_records_it() {
    let data = disk_tempdir();
    let mut server = Server::start(data.path(), &[data.path()]);
    let id = server.start_run(
        &json!({"target": data.path().join("label").display().to_string(), "spec": {
        "backend": "null", "runtime_ms": 60000, "interval_ms": 200}}),
    );
    server.wait_samples(id, 3);
    let t = std::time::Instant::now();
    let status = server.terminate();
    assert!(status.success(), "{status:?}");
    assert!(
        t.elapsed().as_millis() < 2000,
        "shut down in {} ms",
        t.elapsed().as_millis()
    );
    let store = agent::store::Store::open(&data.path().join("diskscope.db")).expect("db");
    let run = store.get_run(id).expect("query").expect("run");
    assert_eq!(run.status, shared::RunStatus::Stopped);
    assert!(run.summary.expect("summary").read.ios > 0);
}

#[test]
fn targets_outside_the_allow_list_or_escaping_it_are_refused() {
    let data = disk_tempdir();
    let allowed = disk_tempdir();
    let outside = disk_tempdir();
    std::os::unix::fs::symlink(outside.path(), allowed.path().join("escape")).unwrap();
    let server = Server::start(data.path(), &[allowed.path()]);
    let spec = json!({"rw": "write", "size": 1 << 20, "runtime_ms": 200});
    let outside_file = outside.path().join("x.bin").display().to_string();
    let (status, body) = server.post(
        "/api/v1/runs",
        OP,
        &json!({"target": outside_file, "spec": spec}),
    );
    assert_eq!(
        (status, body["code"].as_str()),
        (403, Some("target_not_allowed")),
        "{body}"
    );
    assert!(
        body["message"].as_str().unwrap().contains(&outside_file),
        "{body}"
    );
    let link = allowed.path().join("escape/y.bin").display().to_string();
    let (status, body) = server.post("/api/v1/runs", OP, &json!({"target": link, "spec": spec}));
    assert_eq!(status, 403, "{body}");
    assert!(
        body["message"].as_str().unwrap().contains("resolves to"),
        "{body}"
    );
    assert!(
        !outside.path().join("y.bin").exists(),
        "nothing was created outside"
    );
    let (_, targets) = server.get("/api/v1/targets", VIEW);
    let listed: Vec<&str> = targets
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        listed.len(),
        2,
        "scratch file and the allowed folder: {listed:?}"
    );
}

#[test]
fn writes_to_a_mounted_loop_device_are_refused_by_the_service() {
    let fs = match LoopMount::new(16 << 20) {
        Ok(m) => m,
        Err(e) => skip!(Missing::LoopDevice, "no loop-mounted filesystem: {e}"),
    };
    let data = disk_tempdir();
    let server = Server::start(data.path(), &[fs.device()]);
    let dev = fs.device().display().to_string();
    let (status, body) = server.post(
        "/api/v1/runs",
        OP,
        &json!({"target": dev, "spec": {"rw": "write", "bs": 1 << 20}}),
    );
    assert_eq!(
        (status, body["code"].as_str()),
        (403, Some("target_in_use")),
        "{body}"
    );
    assert!(
        body["message"].as_str().unwrap().contains("is mounted at"),
        "{body}"
    );
    let (_, targets) = server.get("/api/v1/targets", VIEW);
    let t = targets
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["path"] == dev)
        .expect("listed");
    assert_eq!(t["kind"], "block");
    assert!(!t["in_use"].as_array().unwrap().is_empty());
}

#[test]
fn a_device_with_a_filesystem_is_written_only_when_armed() {
    let dev = match LoopDevice::new(16 << 20, 512) {
        Ok(d) => d,
        Err(e) => skip!(Missing::LoopDevice, "no loop device: {e}"),
    };
    let mkfs = std::process::Command::new("mkfs.ext4")
        .args(["-q", "-F", dev.path_str()])
        .status();
    if !mkfs.map(|s| s.success()).unwrap_or(false) {
        skip!(Missing::Tool, "mkfs.ext4 is not available");
    }
    let data = disk_tempdir();
    let body =
        json!({"target": dev.path_str(), "spec": {"rw": "write", "bs": 1 << 20, "size": 4 << 20}});
    {
        let server = Server::start(data.path(), &[dev.path.as_path()]);
        let (status, v) = server.post("/api/v1/runs", OP, &body);
        assert_eq!(
            (status, v["code"].as_str()),
            (403, Some("target_in_use")),
            "{v}"
        );
        let msg = v["message"].as_str().unwrap();
        assert!(
            msg.contains("an ext2/3/4 filesystem") && msg.contains("--allow-destructive"),
            "{v}"
        );
        let (status, _) = server.post(
            "/api/v1/runs",
            OP,
            &json!({"target": dev.path_str(), "spec": {"rw": "read", "runtime_ms": 200}}),
        );
        assert_eq!(status, 201, "reads are always allowed");
    }
    let server = Server::start_with(data.path(), &[dev.path.as_path()], &[dev.path.as_path()]);
    let (status, v) = server.post("/api/v1/runs", OP, &body);
    assert_eq!(
        (status, v["code"].as_str()),
        (428, Some("confirm_required")),
        "a device write needs the path repeated: {v}"
    );
    assert!(
        v["message"].as_str().unwrap().contains(dev.path_str()),
        "{v}"
    );
    let mut body = body;
    body["confirm"] = json!(dev.path_str());
    let id = server.start_run(&body);
    server.wait_status(id, "completed");
}

#[test]
fn tls_serves_https_with_the_given_certificate() {
    let dir = disk_tempdir();
    let (cert, key) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    let made = std::process::Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=localhost",
            "-keyout",
        ])
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output();
    if !made.map(|o| o.status.success()).unwrap_or(false) {
        skip!(Missing::Tool, "openssl cannot make a test certificate here");
    }
    if std::process::Command::new("curl")
        .arg("--version")
        .output()
        .is_err()
    {
        skip!(Missing::Tool, "curl is not installed");
    }
    let mut child = std::process::Command::new(diskscope_bin())
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(dir.path())
        .arg("--tls-cert")
        .arg(&cert)
        .arg("--tls-key")
        .arg(&key)
        .env("DISKSCOPE_OPERATOR_TOKEN", OP)
        .env("DISKSCOPE_VIEWER_TOKEN", VIEW)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap()
        .to_string();
    assert!(url.starts_with("https://"), "{url}");
    let curl = |path: &str, token: Option<&str>| {
        let mut c = std::process::Command::new("curl");
        c.args(["-sk", &format!("{url}{path}")]);
        if let Some(t) = token {
            c.args(["-H", &format!("Authorization: Bearer {t}")]);
        }
        String::from_utf8(c.output().unwrap().stdout).unwrap()
    };
    assert!(curl("/api/v1/health", None).contains("\"status\":\"ok\""));
    assert!(curl("/api/v1/presets", Some(VIEW)).contains("quick"));
    assert!(curl("/api/v1/presets", None).contains("unauthorized"));
    let _ = child.kill();
    let _ = child.wait();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_falls_behind_is_resynced_from_the_database() {
    let data = disk_tempdir();
    // A fan-out channel of 2 messages: any client that stops reading falls behind at once.
    let env = [
        ("DISKSCOPE_EVENT_CAPACITY", "2"),
        ("DISKSCOPE_CLIENT_SNDBUF", "4096"),
    ];
    let server = Server::start_env(data.path(), &[data.path()], &[], &env);
    let mut slow = WsClient::connect_small_buffer(&server, VIEW).await;
    let id = server.start_run(
        &json!({"target": data.path().join("label").display().to_string(), "spec": {
        "backend": "null", "rw": "randread", "runtime_ms": 6000, "interval_ms": 100}}),
    );
    slow.send(&ClientMsg::Subscribe {
        run_id: id,
        after_seq: None,
        max_points: None,
    })
    .await;
    // Do not read while ~40 samples are stored (more than the small socket buffers hold):
    // the agent's sends block and its receiver lags behind the channel.
    tokio::task::block_in_place(|| server.wait_samples(id, 40));
    let mut seqs = Vec::new();
    let mut resyncs = 0;
    loop {
        match slow.next().await {
            Some(ServerMsg::Sample { sample, .. }) => seqs.push(sample.seq),
            Some(ServerMsg::Resync { .. }) => resyncs += 1,
            Some(ServerMsg::Run { event, .. }) if event != RunEvent::Started => break,
            Some(_) => {}
            None => panic!("closed"),
        }
    }
    assert!(resyncs > 0, "the slow client was never told to resync");
    assert!(contiguous(&seqs), "after the resync: {seqs:?}");
    let (_, run) = server.get(&format!("/api/v1/runs/{id}"), VIEW);
    assert_eq!(
        seqs.len() as u64,
        run["summary"]["samples"].as_u64().unwrap()
    );
}

/// A client that falls behind across a run's end (its `completed` dropped from the fan-out
/// by the events of a run that starts elsewhere) still learns the end when it is resynced.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_misses_a_runs_end_is_told_it_when_resynced() {
    let data = disk_tempdir();
    let env = [
        ("DISKSCOPE_EVENT_CAPACITY", "2"),
        ("DISKSCOPE_CLIENT_SNDBUF", "4096"),
    ];
    let server = Server::start_env(data.path(), &[data.path()], &[], &env);
    let mut slow = WsClient::connect_small_buffer(&server, VIEW).await;
    let spec = |name: &str, ms: u64| {
        json!({"target": data.path().join(name).display().to_string(), "spec": {
            "backend": "null", "rw": "randread", "runtime_ms": ms, "interval_ms": 100}})
    };
    let a = server.start_run(&spec("a", 2000));
    slow.send(&ClientMsg::Subscribe {
        run_id: a,
        after_seq: None,
        max_points: None,
    })
    .await;
    // Not reading: run A ends, then run B's start and samples push A's end out of the
    // 2-message channel while the agent's sends to this client are blocked.
    server.wait_status_within(a, "completed", std::time::Duration::from_secs(30));
    let b = server.start_run(&spec("b", 3000));
    tokio::task::block_in_place(|| server.wait_samples(b, 5));
    let mut seqs = Vec::new();
    let mut resyncs = 0;
    let end = tokio::time::timeout(std::time::Duration::from_secs(15), async {
        loop {
            match slow.next().await {
                Some(ServerMsg::Sample { run_id, sample }) if run_id == a => seqs.push(sample.seq),
                Some(ServerMsg::Resync { .. }) => resyncs += 1,
                Some(ServerMsg::Run { run_id, event, .. })
                    if run_id == a && event != RunEvent::Started =>
                {
                    return event;
                }
                Some(_) => {}
                None => panic!("closed"),
            }
        }
    })
    .await
    .expect("the end of run A never reached the client that fell behind");
    assert_eq!(end, RunEvent::Completed);
    assert!(
        resyncs > 0,
        "the client never fell behind: the test did not test"
    );
    assert!(contiguous(&seqs), "{seqs:?}");
    let (_, run) = server.get(&format!("/api/v1/runs/{a}"), VIEW);
    assert_eq!(
        seqs.len() as u64,
        run["summary"]["samples"].as_u64().unwrap()
    );
    server.wait_status_within(b, "completed", std::time::Duration::from_secs(30));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn between_runs_subscribe_active_shows_the_last_result() {
    let data = disk_tempdir();
    let server = Server::start(data.path(), &[data.path()]);
    let id = server.start_run(
        &json!({"target": data.path().join("label").display().to_string(), "spec": {
        "backend": "null", "runtime_ms": 500, "interval_ms": 100}}),
    );
    server.wait_status(id, "completed");
    let mut kiosk = WsClient::connect(&server, VIEW, false).await;
    kiosk
        .send(&ClientMsg::SubscribeActive { max_points: None })
        .await;
    assert!(
        matches!(kiosk.next().await, Some(ServerMsg::Subscribed { run_id: Some(r) }) if r == id)
    );
    let (seqs, end) = kiosk.collect_until_end(id).await;
    assert_eq!(end, RunEvent::Completed);
    assert!(seqs.len() >= 4 && contiguous(&seqs), "{seqs:?}");
}

#[test]
fn devices_lists_loop_devices_with_their_use() {
    let fs = match LoopMount::new(16 << 20) {
        Ok(m) => m,
        Err(e) => skip!(Missing::LoopDevice, "no loop-mounted filesystem: {e}"),
    };
    let free = match LoopDevice::new(8 << 20, 512) {
        Ok(d) => d,
        Err(e) => skip!(Missing::LoopDevice, "no loop device: {e}"),
    };
    let data = disk_tempdir();
    let server = Server::start(data.path(), &[]);
    let (status, list) = server.get("/api/v1/devices", VIEW);
    assert_eq!(status, 200, "{list}");
    let find = |p: &str| {
        list.as_array()
            .unwrap()
            .iter()
            .find(|d| d["path"] == p)
            .unwrap_or_else(|| panic!("{p} not listed: {list}"))
            .clone()
    };
    let mounted = find(&fs.device().display().to_string());
    assert_eq!(mounted["transport"], "loop");
    let reasons = mounted["in_use"].to_string();
    assert!(reasons.contains("is mounted at"), "{mounted}");
    let f = find(free.path_str());
    assert_eq!(
        (f["size"].as_u64(), f["in_use"].as_array().map(Vec::len)),
        (Some(8 << 20), Some(0)),
        "{f}"
    );
    let out = ds("devices --json");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains(free.path_str()));
}

#[test]
fn a_run_over_two_loop_devices_sums_its_parts() {
    let (a, b) = match (
        LoopDevice::new(32 << 20, 512),
        LoopDevice::new(32 << 20, 512),
    ) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => skip!(Missing::LoopDevice, "no loop device: {e}"),
    };
    require_io_uring!();
    // The CLI: --target twice.
    let dir = disk_tempdir();
    let json = dir.path().join("m.json");
    let out = diskscope(&[
        "run",
        "-q",
        "--target",
        a.path_str(),
        "--target",
        b.path_str(),
        "--rw",
        "write",
        "--bs",
        "1M",
        "--iodepth",
        "4",
        "--size",
        "16M",
        "--interval-ms",
        "100",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let r = read_report(&json);
    assert_eq!(r.targets.len(), 2);
    let parts: u64 = r.targets.iter().map(|t| t.summary.write.bytes).sum();
    assert_eq!((r.summary.write.bytes, parts), (32 << 20, 32 << 20));
    let sampled: u64 = r.samples.iter().map(|s| s.write.bytes).sum();
    let in_parts: u64 = r
        .samples
        .iter()
        .flat_map(|s| &s.parts)
        .map(|p| p.bytes)
        .sum();
    assert_eq!(
        (sampled, in_parts),
        (32 << 20, 32 << 20),
        "each sample is the sum of its parts"
    );
    // The API: "also", with both devices confirmed.
    let data = disk_tempdir();
    let server = Server::start(data.path(), &[a.path.as_path(), b.path.as_path()]);
    let body = json!({"target": a.path_str(), "also": [b.path_str()],
        "spec": {"rw": "write", "bs": 1 << 20, "size": 8 << 20}});
    let (status, v) = server.post("/api/v1/runs", OP, &body);
    assert_eq!(
        (status, v["code"].as_str()),
        (428, Some("confirm_required")),
        "{v}"
    );
    let mut body = body;
    body["confirm"] = json!(format!("{},{}", a.path_str(), b.path_str()));
    let id = server.start_run(&body);
    let run = server.wait_status(id, "completed");
    let targets = run["targets"].as_array().expect("targets");
    assert_eq!(targets.len(), 2, "{run}");
    let sum: u64 = targets
        .iter()
        .map(|t| t["summary"]["write"]["bytes"].as_u64().unwrap())
        .sum();
    assert_eq!(sum, run["summary"]["write"]["bytes"].as_u64().unwrap());
    assert_eq!(sum, 16 << 20);
}

#[test]
fn the_validator_answers_the_form_over_http() {
    // The dashboard carries no copy of the validator: its form asks this endpoint, and
    // what it shows is what a run would be refused with.
    let data = tempfile::tempdir().expect("tempdir");
    let server = Server::start(data.path(), &[data.path()]);
    let check = |body: Value, token: &str| {
        server.call("POST", "/api/v1/specs/check", token, Some(&body), &[])
    };
    let (s, _, r) = check(json!({"rw": "randread", "iodepth": 0, "bs": "4k"}), OP);
    assert_eq!(s, 200, "{r}");
    assert_eq!(
        r["problems"],
        json!([{"field": "iodepth", "value": "0", "message": "must be 1..1024"}])
    );
    let (s, _, r) = check(json!({"rw": "randread", "bs": "64k", "iodepth": 32}), OP);
    assert_eq!((s, &r["problems"]), (200, &json!([])), "{r}");
    // Past the memory budget: named as a run would name it.
    let (s, _, r) = check(
        json!({"rw": "write", "bs": "64m", "iodepth": 1024, "jobs": 64}),
        OP,
    );
    assert_eq!(s, 200, "{r}");
    assert!(
        r["problems"].as_array().is_some_and(|p| !p.is_empty()),
        "{r}"
    );
    let (s, _, r) = check(json!({"rw": "randread", "starts": 1}), OP);
    assert_eq!(s, 400, "an unknown field is the request's fault: {r}");
    assert!(r.to_string().contains("starts"), "{r}");
    let (s, _, _) = check(json!({"rw": "randread"}), VIEW);
    assert_eq!(s, 403, "a viewer cannot start runs, nor ask about one");
}

/// The one table of workload options, through the agent: `GET /api/v1/options` lists each
/// option once with its CLI flag (which `diskscope run --help` shows), spec field, fio names,
/// label and default; `POST /api/v1/specs/read` reads the form's texts with the CLI's readers
/// and judges them with the validator, every problem filed under its option;
/// `POST /api/v1/specs/fields` writes a spec back as those texts.
#[test]
fn the_form_the_cli_and_the_api_share_one_table_of_options() {
    let data = tempfile::tempdir().expect("tempdir");
    let server = Server::start(data.path(), &[data.path()]);
    let (s, _, list) = server.call("GET", "/api/v1/options", VIEW, None, &[]);
    assert_eq!(s, 200, "{list}");
    let list = list.as_array().expect("a list").clone();
    assert!(list.len() >= 50, "{} options", list.len());
    let help = diskscope(&["run", "--help"]);
    let help = String::from_utf8_lossy(&help.stdout).to_string();
    let mut keys = std::collections::HashSet::new();
    for o in &list {
        let key = o["key"].as_str().expect("key");
        assert!(keys.insert(key.to_string()), "{key} twice");
        assert!(
            !o["label"].as_str().unwrap_or("").is_empty(),
            "{key} has no label"
        );
        let flag = o["cli"][0].as_str().expect("a flag");
        let shown = [" ", "\n"]
            .iter()
            .any(|end| help.contains(&format!("{flag}{end}")));
        assert!(shown, "{flag} ({key}) is not in run --help");
    }
    let fio: Vec<&str> = list
        .iter()
        .flat_map(|o| o["fio"].as_array().into_iter().flatten())
        .filter_map(|n| n.as_str())
        .collect();
    for name in [
        "iodepth",
        "numjobs",
        "rw",
        "bs",
        "rate_process",
        "thinktime",
        "latency_target",
        "steadystate",
        "fdatasync",
    ] {
        assert!(fio.contains(&name), "fio's {name} is no option's");
    }
    let read = |fields: Value| {
        let (s, _, r) = server.call(
            "POST",
            "/api/v1/specs/read",
            OP,
            Some(&json!({"fields": fields})),
            &[],
        );
        assert_eq!(s, 200, "{r}");
        r
    };
    // A text that does not read is named; the validator judges only what reads.
    let r = read(json!({"bs": "4Q", "iodepth": "0"}));
    assert_eq!(r["problems"].as_array().map(Vec::len), Some(1), "{r}");
    assert_eq!(r["problems"][0]["field"], "bs", "{r}");
    assert!(
        r["problems"][0]["value"]
            .as_str()
            .is_some_and(|v| v.contains("4Q")),
        "{r}"
    );
    let r = read(json!({"iodepth": "0"}));
    assert_eq!(
        r["problems"],
        json!([{"field": "iodepth", "value": "0", "message": "must be 1..1024"}])
    );
    // The validator's field (runtime_ms, think) is filed under the form's option.
    let r = read(json!({"runtime": "31d"}));
    assert_eq!(r["problems"][0]["field"], "runtime", "{r}");
    let r = read(json!({"ss_dur": "5s", "nope": "1"}));
    let fields: Vec<&str> = r["problems"]
        .as_array()
        .expect("problems")
        .iter()
        .filter_map(|p| p["field"].as_str())
        .collect();
    assert_eq!(fields, ["nope", "ss_dur"], "{r}");
    assert!(r.to_string().contains("needs steadystate"), "{r}");
    // Every option of a spec survives the round trip through the form's texts.
    let spec = json!({"rw": "randrw", "read_pct": 70, "bs": 4096, "iodepth": 16, "iodepth_batch": 4,
        "latency_target": {"target_us": 500, "window_ms": 2000, "percentile": 99.0},
        "think": {"us": 1000, "spin_us": 0, "blocks": 4, "count_issued": false},
        "flush": {"every": 8, "data_only": true}, "write_bssplit": [[65536, 100]], "runtime_ms": 30000});
    let (s, _, f) = server.call("POST", "/api/v1/specs/fields", OP, Some(&spec), &[]);
    assert_eq!(s, 200, "{f}");
    assert_eq!(f["fields"]["latency_target"], "500us", "{f}");
    assert_eq!(f["fields"]["fdatasync"], "8", "{f}");
    let r = read(f["fields"].clone());
    assert_eq!(r["problems"], json!([]), "{r}");
    for (k, v) in spec.as_object().expect("object") {
        assert_eq!(&r["spec"][k], v, "{k}");
    }
    let (s, _, _) = server.call(
        "POST",
        "/api/v1/specs/read",
        VIEW,
        Some(&json!({"fields": {}})),
        &[],
    );
    assert_eq!(s, 403, "a viewer cannot ask about a run");
}
