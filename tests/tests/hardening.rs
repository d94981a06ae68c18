//! The agent against a careless or hostile user (issue 13), with a real `diskscope serve`,
//! real files and real races: no write escapes the allow-list, the agent's own state is
//! never a target, and a read test never modifies somebody's file.

use tests::server::{Server, OP};
use tests::{disk_tempdir, ds, require_io_uring, stderr};
use serde_json::json;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

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
    assert_eq!(
        std::fs::read(&outside).expect("read outside"),
        original,
        "the file outside the allowed directory was written"
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
