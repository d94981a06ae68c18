//! The agent against a careless or hostile user, with a real `diskscope serve`,
//! real files and real races: no write escapes the allow-list, the agent's own state is
//! never a target, and a read test never modifies somebody's file.

use serde_json::json;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tests::server::{Server, OP, VIEW};
use tests::{disk_tempdir, ds, require_io_uring, stderr};

fn write_body(target: &Path) -> serde_json::Value {
    json!({"target": target, "spec": {"rw": "write", "bs": 4096, "iodepth": 1,
           "size": 65536, "io_size": 65536}})
}

/// Waits until no run is going (the agent reports none running).
fn wait_idle(server: &Server) {
    for _ in 0..600 {
        let (_, runs) = server.get("/api/v1/runs?status=running", OP);
        if runs["total"] == 0 {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("runs still going after 60 s");
}

#[test]
fn a_symlink_swapped_in_during_the_check_never_leads_a_write_outside() {
    require_io_uring!();
    let root = disk_tempdir();
    let allowed = root.path().join("allowed");
    std::fs::create_dir(&allowed).expect("mkdir");
    let outside = root.path().join("outside.bin");
    let original = vec![0xABu8; 1 << 20];
    std::fs::write(&outside, &original).expect("write the outside file");
    let data = root.path().join("data");
    let server = Server::start(&data, &[&allowed]);

    let target = allowed.join("t.bin");
    std::fs::write(&target, vec![0x11u8; 65536]).expect("write target");
    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicU64::new(0));
    // The swapper: the target's name alternates between a regular file and a link to the
    // outside file, each put in place with an atomic rename.
    let swapper = {
        let (stop, swaps) = (Arc::clone(&stop), Arc::clone(&swaps));
        let (dir, target, outside) = (allowed.clone(), target.clone(), outside.clone());
        std::thread::spawn(move || {
            let (link, file) = (dir.join("l.tmp"), dir.join("f.tmp"));
            while !stop.load(Ordering::Relaxed) {
                let _ = std::fs::remove_file(&link);
                std::os::unix::fs::symlink(&outside, &link).expect("symlink");
                std::fs::rename(&link, &target).expect("swap in the link");
                std::fs::write(&file, [0x22u8; 4096]).expect("file");
                std::fs::rename(&file, &target).expect("swap in the file");
                swaps.fetch_add(1, Ordering::Relaxed);
            }
        })
    };
    let attempts = 10_000;
    let (mut created, mut refused, mut busy) = (0, 0, 0);
    for i in 0..attempts {
        let (status, body) = server.post("/api/v1/runs", OP, &write_body(&target));
        match status {
            201 => created += 1,
            403 => refused += 1,
            409 => busy += 1,
            // The file may be replaced between open and probe: a clean error either way.
            400 => refused += 1,
            other => panic!("attempt {i}: unexpected {other}: {body}"),
        }
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().expect("swapper");
    wait_idle(&server);
    eprintln!(
        "{attempts} POSTs during {} swaps: {created} started, {refused} refused, {busy} busy",
        swaps.load(Ordering::Relaxed)
    );
    assert!(
        created > 0 && refused > 0,
        "the race was exercised both ways"
    );
    let after = std::fs::read(&outside).expect("read outside");
    let changed = after.iter().zip(&original).filter(|(a, b)| a != b).count();
    assert!(
        after == original,
        "the file outside the allowed directory was written ({changed} bytes differ)"
    );
}

#[test]
fn the_agents_own_state_is_never_a_target() {
    let root = disk_tempdir();
    let data = root.path().join("data");
    std::fs::create_dir(&data).expect("mkdir");
    // The operator allows a directory that holds the data directory: the database, its
    // side files and the tokens must still be refused.
    std::fs::write(data.join("tokens.json"), r#"{"operator":"x","viewer":"y"}"#).expect("tokens");
    let mut server = Server::start(&data, &[root.path()]);
    let _ = server.get("/api/v1/runs", OP); // the database is in use
    let elsewhere = root.path().join("db-link.bin");
    std::fs::hard_link(data.join("diskscope.db"), &elsewhere).expect("hard link");
    for name in [
        "diskscope.db",
        "diskscope.db-wal",
        "diskscope.db-shm",
        "tokens.json",
        "new-file.bin",
    ] {
        let (status, body) = server.post("/api/v1/runs", OP, &write_body(&data.join(name)));
        assert_eq!(status, 403, "{name}: {body}");
        assert!(
            body["message"]
                .as_str()
                .unwrap_or("")
                .contains("data directory"),
            "{name}: {body}"
        );
    }
    // A hard link to the database elsewhere in the allowed directory: not for reading nor
    // writing.
    let read = json!({"target": &elsewhere, "spec": {"rw": "read", "bs": 4096,
                      "io_size": 4096}});
    for body in [write_body(&elsewhere), read] {
        let (status, v) = server.post("/api/v1/runs", OP, &body);
        assert_eq!(status, 403, "{v}");
    }
    server.terminate();
    let head = std::fs::read(data.join("diskscope.db")).expect("read db");
    assert_eq!(&head[..16], b"SQLite format 3\0", "database header intact");
    // The agent starts again on its data directory.
    let server = Server::start(&data, &[root.path()]);
    let (status, _) = server.get("/api/v1/runs", OP);
    assert_eq!(status, 200);
}

#[test]
fn a_hard_link_to_a_file_outside_is_not_written_through() {
    require_io_uring!();
    let root = disk_tempdir();
    let allowed = root.path().join("allowed");
    std::fs::create_dir(&allowed).expect("mkdir");
    let outside = root.path().join("outside.bin");
    std::fs::write(&outside, vec![0xCDu8; 65536]).expect("write");
    let link = allowed.join("inside.bin");
    std::fs::hard_link(&outside, &link).expect("hard link");
    let server = Server::start(&root.path().join("data"), &[&allowed]);
    let (status, body) = server.post("/api/v1/runs", OP, &write_body(&link));
    assert_eq!(status, 403, "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap_or("")
            .contains("2 hard links"),
        "{body}"
    );
    assert_eq!(std::fs::read(&outside).expect("read"), vec![0xCDu8; 65536]);
    drop(server);
    // Explicitly allowed, it is written like any file.
    let server = Server::start_args(
        &root.path().join("data"),
        &[&allowed],
        &["--allow-hard-links"],
    );
    let id = server.start_run(&write_body(&link));
    server.wait_status(id, "completed");
    assert_ne!(std::fs::read(&outside).expect("read"), vec![0xCDu8; 65536]);
}

#[test]
fn read_tests_never_modify_a_users_file() {
    require_io_uring!();
    let root = disk_tempdir();
    let short = root.path().join("short.bin");
    std::fs::write(&short, vec![0x5Au8; 1 << 20]).expect("write");
    let sparse = root.path().join("sparse.bin");
    std::fs::write(&sparse, vec![0x5Au8; 1 << 20]).expect("write");
    std::fs::OpenOptions::new()
        .write(true)
        .open(&sparse)
        .and_then(|f| f.set_len(8 << 20))
        .expect("make sparse");
    let before = |p: &Path| std::fs::read(p).expect("read");
    let (short_data, sparse_data) = (before(&short), before(&sparse));

    // CLI.
    let o = ds(&format!(
        "run --target {} --rw read --size 8M --runtime 1s -q",
        short.display()
    ));
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("does not extend an existing file"),
        "{}",
        stderr(&o)
    );
    let o = ds(&format!(
        "run --target {} --rw randread --bs 4K --runtime 1s -q",
        sparse.display()
    ));
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("7340032 bytes of holes"),
        "{}",
        stderr(&o)
    );
    let o = ds(&format!(
        "run --target {} --preset cdm --count 1 --runtime 1s -q",
        sparse.display()
    ));
    assert!(!o.status.success(), "a preset that reads is refused too");

    // API.
    let server = Server::start(&root.path().join("data"), &[root.path()]);
    let (status, body) = server.post(
        "/api/v1/runs",
        OP,
        &json!({"target": &short, "spec": {"rw": "read", "size": 8 << 20}}),
    );
    assert_eq!(status, 400, "{body}");
    let (status, body) = server.post(
        "/api/v1/runs",
        OP,
        &json!({"target": &sparse, "spec": {"rw": "read"}}),
    );
    assert_eq!(status, 400, "{body}");
    assert!(
        body["message"].as_str().unwrap_or("").contains("holes"),
        "{body}"
    );
    assert_eq!(before(&short), short_data, "short file unchanged");
    assert_eq!(before(&sparse), sparse_data, "sparse file unchanged");

    // A file diskscope creates is its own: laid out and read.
    let mine = root.path().join("mine.bin");
    let o = ds(&format!(
        "run --target {} --rw read --size 4M --runtime 1s -q",
        mine.display()
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    let o = ds(&format!(
        "run --target {} --rw read --runtime 1s -q",
        mine.display()
    ));
    assert!(
        o.status.success(),
        "a later read of a file diskscope created: {}",
        stderr(&o)
    );
}

#[test]
fn no_request_the_validator_accepts_gets_the_agent_killed() {
    require_io_uring!();
    let root = disk_tempdir();
    let target = root.path().join("t.bin");
    let server = Server::start(&root.path().join("data"), &[root.path()]);
    // The largest buffers the validator alone would pass: 64 jobs × 64 × 32 MiB = 128 GiB.
    let huge = json!({"target": &target, "spec": {"rw": "write", "jobs": 64, "iodepth": 64,
                      "bs": 32u64 << 20, "size": 4u64 << 30, "runtime_ms": 1000}});
    let (status, body) = server.post("/api/v1/runs", OP, &huge);
    assert_eq!(status, 400, "{body}");
    let msg = body["message"].as_str().unwrap_or("");
    assert!(msg.contains("jobs") && msg.contains("budget"), "{body}");
    // The same spread over many targets at once.
    let also: Vec<_> = (0..50)
        .map(|i| root.path().join(format!("a{i}.bin")))
        .collect();
    let wide = json!({"target": &target, "also": also, "spec": {"rw": "write", "jobs": 64,
                      "iodepth": 64, "bs": 512 << 10, "size": 64u64 << 20, "runtime_ms": 1000}});
    let (status, body) = server.post("/api/v1/runs", OP, &wide);
    assert_eq!(status, 400, "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap_or("")
            .contains("on 51 targets"),
        "{body}"
    );
    let (status, _) = server.get("/api/v1/health", OP);
    assert_eq!(status, 200, "the agent is alive");

    // The CLI refuses it the same way, before allocating anything.
    let o = ds(&format!(
        "run --target {} --rw write --jobs 64 --iodepth 64 --bs 32M --size 4G --runtime 1s -q",
        target.display()
    ));
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("over the agent's budget"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn runs_at_once_share_the_memory_budget() {
    require_io_uring!();
    let root = disk_tempdir();
    let server = Server::start_args(
        &root.path().join("data"),
        &[root.path()],
        &["--max-memory", "8M"],
    );
    let spec = |name: &str, iodepth: u32| {
        json!({"target": root.path().join(name), "spec": {"rw": "write", "iodepth": iodepth,
               "bs": 65536, "size": 1u64 << 20, "runtime_ms": 3000}})
    };
    // 3 MiB (one huge page of buffers and the job's state).
    let first = server.start_run(&spec("a.bin", 4));
    // 7 MiB more would exceed 8 MiB while the first runs.
    let (status, body) = server.post("/api/v1/runs", OP, &spec("b.bin", 96));
    assert_eq!(status, 409, "{body}");
    assert_eq!(body["code"], "memory_busy", "{body}");
    server.wait_status(first, "completed");
    let second = server.start_run(&spec("b.bin", 96));
    server.wait_status(second, "completed");
}

#[test]
fn huge_numbers_are_refused_or_match_nothing() {
    require_io_uring!();
    let root = disk_tempdir();
    let target = root.path().join("t.bin");
    let server = Server::start(&root.path().join("data"), &[root.path()]);
    let id = server.start_run(&json!({"target": &target, "spec": {"rw": "write",
                               "size": 1 << 20, "io_size": 1 << 20}}));
    server.wait_status(id, "completed");
    for (field, value) in [
        ("ramp_ms", u64::MAX),
        ("runtime_ms", u64::MAX),
        ("size", u64::MAX),
        ("offset", 1u64 << 62),
        ("io_size", u64::MAX),
    ] {
        let mut spec = json!({"rw": "read", "bs": 4096});
        spec[field] = json!(value);
        let (status, body) = server.post(
            "/api/v1/runs",
            OP,
            &json!({"target": &target, "spec": spec}),
        );
        assert_eq!(status, 400, "{field}: {body}");
        let msg = body["message"].as_str().unwrap_or("");
        assert!(
            msg.contains(field) && msg.contains(&value.to_string()),
            "{field}: {body}"
        );
    }
    let (status, body) = server.post(
        "/api/v1/runs",
        OP,
        &json!({"target": &target, "preset": "cdm", "options": {"idle_ms": u64::MAX}}),
    );
    assert_eq!(status, 400, "{body}");
    // Query bounds past every row match nothing, never everything.
    let max = u64::MAX;
    let (status, body) = server.get(&format!("/api/v1/runs/{id}/samples?after_seq={max}"), OP);
    assert_eq!(status, 200);
    assert_eq!(body["samples"].as_array().map(Vec::len), Some(0), "{body}");
    let (status, body) = server.get(&format!("/api/v1/runs?since={max}"), OP);
    assert_eq!((status, &body["total"]), (200, &json!(0)), "{body}");
    // More targets at once than a run takes: refused before any is opened or created.
    let many: Vec<_> = (0..64)
        .map(|i| root.path().join(format!("m{i}.bin")))
        .collect();
    let (status, body) = server.post(
        "/api/v1/runs",
        OP,
        &json!({"target": &target, "also": many, "spec": {"rw": "write", "size": 1 << 20}}),
    );
    assert_eq!(status, 400, "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap_or("")
            .contains("65 targets"),
        "{body}"
    );
    assert!(!root.path().join("m0.bin").exists(), "nothing created");
    // The same target twice in one run.
    let (status, body) = server.post(
        "/api/v1/runs",
        OP,
        &json!({"target": &target, "also": [&target], "spec": {"rw": "read"}}),
    );
    assert_eq!(status, 400, "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap_or("")
            .contains("named twice"),
        "{body}"
    );
}

#[test]
fn every_error_has_the_same_shape() {
    let root = disk_tempdir();
    let server = Server::start(&root.path().join("data"), &[root.path()]);
    let http = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .new_agent();
    let url = |p: &str| format!("http://{}{p}", server.addr);
    let auth = format!("Bearer {OP}");
    let cases: Vec<(u16, ureq::http::Response<ureq::Body>)> = vec![
        (
            405,
            http.put(&url("/api/v1/runs"))
                .header("Authorization", &auth)
                .send("x")
                .expect("put"),
        ),
        (
            405,
            http.delete(&url("/api/v1/health"))
                .header("Authorization", &auth)
                .call()
                .expect("delete"),
        ),
        (
            404,
            http.get(&url("/api/v1/nothing"))
                .header("Authorization", &auth)
                .call()
                .expect("get"),
        ),
        (
            415,
            http.post(&url("/api/v1/runs"))
                .header("Authorization", &auth)
                .send("{}")
                .expect("post"),
        ),
        (413, {
            // The agent answers 413 once the body passes its limit and closes the connection
            // with the rest unread: a client still writing can get a broken pipe or a reset
            // instead of the answer. That race is the transport's; try a few times and check
            // the answer when it arrives.
            let mut last = None;
            let mut got = None;
            for _ in 0..5 {
                match http
                    .post(&url("/api/v1/runs"))
                    .header("Authorization", &auth)
                    .header("Content-Type", "application/json")
                    .send(&vec![b' '; 200_000][..])
                {
                    Ok(r) => {
                        got = Some(r);
                        break;
                    }
                    Err(e) => last = Some(e),
                }
            }
            got.unwrap_or_else(|| panic!("post: no answer in 5 tries: {last:?}"))
        }),
    ];
    for (want, mut resp) in cases {
        let status = resp.status().as_u16();
        let text = resp.body_mut().read_to_string().unwrap_or_default();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
        assert_eq!(status, want, "{text}");
        assert!(
            v["code"].is_string() && v["message"].is_string(),
            "{want}: {text:?}"
        );
    }
}

#[test]
fn a_database_that_cannot_be_written_fails_the_run_and_says_where() {
    require_io_uring!();
    let mount = match tests::LoopMount::new(64 << 20) {
        Ok(m) => m,
        Err(e) => tests::skip!(
            tests::Missing::LoopDevice,
            "no loop-mounted filesystem for the data directory: {e}"
        ),
    };
    let root = disk_tempdir();
    let data = mount.path().join("data");
    let log = root.path().join("agent.log");
    let server = Server::start_logged(&data, &[root.path()], &log);
    let id = server.start_run(&json!({"target": root.path().join("t.bin"), "spec": {
        "rw": "write", "bs": 65536, "size": 8 << 20, "runtime_ms": 20_000, "interval_ms": 100}}));
    server.wait_samples(id, 3);
    mount
        .abort()
        .expect("abort the data directory's filesystem");
    let run = server.wait_status_within(id, "failed", Duration::from_secs(15));
    let msg = run["error"]["message"].as_str().unwrap_or("");
    let db = data.join("diskscope.db");
    assert!(msg.contains(&db.display().to_string()), "{run}");
    assert!(msg.contains("cannot store sample"), "{run}");
    // The agent keeps serving what it has, and every 500 has its detail in the log.
    let (status, body) = server.get("/api/v1/runs", OP);
    assert_eq!(status, 200, "{body}");
    let (status, body) = server.post("/api/v1/runs", OP, &write_body(&root.path().join("u.bin")));
    assert_eq!(status, 500, "{body}");
    // The log is written by another process: wait for the 500's line, with a deadline.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let text = loop {
        let text = std::fs::read_to_string(&log).expect("read the log");
        if text.contains("internal error") || std::time::Instant::now() > deadline {
            break text;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(text.contains("cannot store sample"), "{text}");
    assert!(
        text.contains("internal error"),
        "the 500's detail is logged: {text}"
    );
}

/// `serve` with these environment tokens (or none) on `data`: its exit status and stderr,
/// when it refuses to start.
fn serve_refused(data: &Path, tokens: Option<(&str, &str)>) -> (bool, String) {
    let mut cmd = std::process::Command::new(tests::diskscope_bin());
    cmd.args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(data);
    cmd.env_remove("DISKSCOPE_OPERATOR_TOKEN")
        .env_remove("DISKSCOPE_VIEWER_TOKEN");
    if let Some((op, view)) = tokens {
        cmd.env("DISKSCOPE_OPERATOR_TOKEN", op)
            .env("DISKSCOPE_VIEWER_TOKEN", view);
    }
    let mut child = cmd
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn serve");
    for _ in 0..100 {
        if let Ok(Some(status)) = child.try_wait() {
            let mut err = String::new();
            use std::io::Read;
            let _ = child
                .stderr
                .take()
                .expect("stderr")
                .read_to_string(&mut err);
            return (!status.success(), err);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    (false, "still running after 5 s".into())
}

#[test]
fn weak_tokens_and_a_corrupt_tokens_file_are_refused_at_start() {
    let root = disk_tempdir();
    let data = root.path().join("data");
    let (refused, err) = serve_refused(&data, Some(("short", "also-short-but-ok-long")));
    assert!(refused && err.contains("5 characters"), "{err}");
    let same = "the-same-token-for-both";
    let (refused, err) = serve_refused(&data, Some((same, same)));
    assert!(refused && err.contains("are the same"), "{err}");
    std::fs::create_dir_all(&data).expect("mkdir");
    let file = data.join("tokens.json");
    std::fs::write(&file, "{\"operator\": ").expect("write");
    let (refused, err) = serve_refused(&data, None);
    assert!(refused, "{err}");
    assert!(
        err.contains(&file.display().to_string()) && err.contains("not a valid tokens file"),
        "{err}"
    );
}

#[test]
fn pages_carry_security_headers_and_the_agents_files_are_private() {
    use std::io::{Read, Write};
    use std::os::unix::fs::PermissionsExt;
    let root = disk_tempdir();
    let data = root.path().join("data");
    let server = Server::start(&data, &[]);
    let resp = ureq::get(&format!("http://{}/", server.addr))
        .call()
        .expect("GET /");
    let h = resp.headers();
    let csp = h
        .get("content-security-policy")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    assert!(
        csp.contains("frame-ancestors 'none'") && csp.contains("script-src 'self'"),
        "{csp}"
    );
    assert_eq!(
        h.get("x-content-type-options").map(|v| v.as_bytes()),
        Some(&b"nosniff"[..])
    );
    assert_eq!(
        h.get("referrer-policy").map(|v| v.as_bytes()),
        Some(&b"no-referrer"[..])
    );
    let mode = |p: &Path| std::fs::metadata(p).expect("stat").permissions().mode() & 0o777;
    assert_eq!(mode(&data), 0o700, "data directory");
    assert_eq!(mode(&data.join("diskscope.db")), 0o600, "database");

    // A WebSocket upgrade from a page of another site is refused; from the agent's own
    // origin it goes ahead.
    let upgrade = |addr: &str, origin: &str| {
        let mut s = std::net::TcpStream::connect(addr).expect("connect");
        write!(
            s,
            "GET /api/v1/ws HTTP/1.1\r\nHost: {}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\
             Origin: {origin}\r\nAuthorization: Bearer {OP}\r\n\r\n",
            addr
        )
        .expect("write");
        let mut buf = [0u8; 12];
        s.read_exact(&mut buf).expect("status line");
        String::from_utf8_lossy(&buf[9..12]).to_string()
    };
    assert_eq!(upgrade(&server.addr, "http://evil.example"), "403");
    assert_eq!(
        upgrade(&server.addr, &format!("http://{}", server.addr)),
        "101"
    );
    drop(server);
    // An origin the operator names is let in too.
    let server = Server::start_args(&data, &[], &["--cors-origin", "http://lab.example:8080"]);
    assert_eq!(upgrade(&server.addr, "http://lab.example:8080"), "101");
    assert_eq!(upgrade(&server.addr, "http://evil.example"), "403");
}

#[test]
fn guessing_tokens_is_held_back_and_slow_headers_are_cut_off() {
    use std::io::{Read, Write};
    let root = disk_tempdir();
    let server = Server::start(&root.path().join("data"), &[]);
    // 200 unknown tokens from this address: the first 20 are 401, the rest held back (429).
    let mut held = 0;
    for i in 0..200 {
        let (status, _) = server.get("/api/v1/runs", &format!("guess-number-{i:04}-xxxxxxxx"));
        match (i < 20, status) {
            (true, 401) => {}
            (false, 429) => held += 1,
            _ => panic!("unknown token {i} answered {status}"),
        }
    }
    assert_eq!(held, 180);
    let raw = |token: &str| {
        ureq::Agent::config_builder()
            .http_status_as_error(false)
            .build()
            .new_agent()
            .get(&format!("http://{}/api/v1/runs", server.addr))
            .header("Authorization", &format!("Bearer {token}"))
            .call()
            .expect("GET")
    };
    // A guess now waits for the window, and says for how long.
    let resp = raw("guess-number-9999-xxxxxxxx");
    assert_eq!(resp.status().as_u16(), 429);
    let retry: u64 = resp
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .expect("Retry-After");
    assert!((1..=60).contains(&retry), "{retry}");
    // The operator's and the viewer's own tokens still work from that address, and so does
    // an operator action.
    assert_eq!(
        raw(OP).status().as_u16(),
        200,
        "the operator is not locked out"
    );
    assert_eq!(
        raw(VIEW).status().as_u16(),
        200,
        "nor is a kiosk's viewer token"
    );
    let (status, _, body) = server.call("DELETE", "/api/v1/runs/999999", OP, None, &[]);
    assert_eq!(
        status, 404,
        "an operator action from the held-back address reaches its handler: {body}"
    );
    let (status, _) = server.get("/api/v1/health", OP);
    assert_eq!(status, 200, "health needs no token and stays up");

    // A client that trickles its request head, and one that sends nothing: both are cut
    // off after the head timeout (10 s), not kept open.
    let slow = |trickle: bool| {
        let addr = server.addr.clone();
        std::thread::spawn(move || {
            let start = std::time::Instant::now();
            let mut s = std::net::TcpStream::connect(&addr).expect("connect");
            s.set_read_timeout(Some(Duration::from_millis(500)))
                .expect("timeout");
            if trickle {
                s.write_all(b"GET /api/v1/health HTTP/1.1\r\nHost: x\r\n")
                    .expect("write");
            }
            let mut buf = [0u8; 256];
            while start.elapsed() < Duration::from_secs(30) {
                if trickle && s.write_all(b"X-Slow: 1\r\n").is_err() {
                    break;
                }
                match s.read(&mut buf) {
                    Ok(0) => break,
                    Ok(_) => {} // a 408 or similar before the close
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                    Err(_) => break,
                }
            }
            start.elapsed()
        })
    };
    let (a, b) = (slow(true), slow(false));
    for t in [a.join().expect("trickle"), b.join().expect("silent")] {
        eprintln!("slow client cut off after {t:?}");
        assert!(
            t < Duration::from_secs(15),
            "connection kept open for {t:?}"
        );
    }
}
