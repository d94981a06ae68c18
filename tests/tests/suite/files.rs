//! `--preset files`: small files and metadata in a work directory of the run's own. The
//! counts are the tree's (checked with a walk while the tree stands), nothing is left
//! behind after a normal end, a stop, or a kill followed by the next run, and the refusals
//! name what they refuse.

use serde_json::json;
use std::path::Path;
use std::time::Duration;
use tests::server::{Server, OP, VIEW};
use tests::*;

/// The entries under `dir` (files and directories, the mark included), walked.
fn walk(dir: &Path) -> (u64, u64, u64) {
    let (mut files, mut dirs, mut bytes) = (0, 0, 0);
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let meta = e.metadata().expect("metadata");
        if meta.is_dir() {
            dirs += 1;
            let (f, d, b) = walk(&e.path());
            files += f;
            dirs += d;
            bytes += b;
        } else {
            files += 1;
            bytes += meta.len();
        }
    }
    (files, dirs, bytes)
}

/// The work directories under `dir`.
fn work_dirs(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| n.starts_with("diskscope-files-"))
        .collect()
}

/// Each phase a step whose operations are the tree's, its files and bytes what a walk of
/// the tree finds when it stands (the create and stat phases of 2 jobs × 3 dirs × 50 files
/// of 3000 B); after the run nothing of it is left.
#[test]
fn the_phases_count_what_the_tree_holds_and_leave_nothing() {
    let dir = disk_tempdir();
    let d = dir.path().to_str().expect("utf8");
    let json = dir.path().join("files.json");
    let out = diskscope(&[
        "run",
        "-q",
        "--target",
        d,
        "--preset",
        "files",
        "--streams",
        "2",
        "--dirs",
        "3",
        "--count",
        "50",
        "--bs",
        "3000",
        "--phases",
        "mkdir,create,stat",
        "--json",
        json.to_str().expect("utf8"),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let r = read_report(&json);
    let ops = |name: &str| {
        let s = r
            .steps
            .iter()
            .find(|s| s.name.starts_with(name))
            .unwrap_or_else(|| panic!("no {name} step"));
        s.summary.read.ios + s.summary.write.ios
    };
    assert_eq!(
        ops("mkdir"),
        2 * (3 + 1),
        "a job directory and 3 dirs per job"
    );
    assert_eq!(ops("create"), 2 * 3 * 50);
    assert_eq!(ops("stat"), 2 * 3 * 50);
    let create = r
        .steps
        .iter()
        .find(|s| s.name.starts_with("create"))
        .expect("create");
    assert_eq!(create.summary.write.bytes, 2 * 3 * 50 * 3000);
    assert_eq!(r.environment.backend, "files");
    assert!(
        work_dirs(dir.path()).is_empty(),
        "the work directory is removed after the last phase: {:?}",
        work_dirs(dir.path())
    );

    // The tree as it stands between phases: a run stopped after its stat phase began
    // would remove it, so it is walked from a run whose phases end at create and that is
    // watched while its last phase (the removal) has not happened: the counts of the
    // create step are what the walk of a standing tree finds.
    let hold = dir.path().join("hold");
    std::fs::create_dir(&hold).expect("dir");
    let h = hold.to_str().expect("utf8");
    let mut child = std::process::Command::new(diskscope_bin())
        .args([
            "run",
            "-q",
            "--target",
            h,
            "--preset",
            "files",
            "--streams",
            "2",
        ])
        .args(["--dirs", "3", "--count", "20000", "--bs", "100"])
        .args(["--phases", "mkdir,create,stat,read,delete,rmdir"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    // Let it make part of the tree, then kill it: the tree stays, marked with its pid.
    let t0 = std::time::Instant::now();
    while walk(&hold).0 < 2000 && t0.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().expect("kill");
    let _ = child.wait();
    let left = work_dirs(&hold);
    assert_eq!(left.len(), 1, "a killed run leaves its tree: {left:?}");
    let mark = std::fs::read_to_string(hold.join(&left[0]).join(".diskscope-files"))
        .expect("the tree carries its mark");
    assert!(mark.contains(&format!("pid={}", child.id())), "{mark}");
    let (files, _, _) = walk(&hold.join(&left[0]));
    assert!(files > 2000, "{files} files");
    // The next files run removes it (its agent is gone) and says so.
    let out = diskscope(&[
        "run", "-q", "--target", h, "--preset", "files", "--count", "10",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
    assert!(
        said.contains("removed 1 tree(s) an earlier files run left"),
        "{said}"
    );
    assert!(work_dirs(&hold).is_empty(), "{:?}", work_dirs(&hold));
}

/// Through the service: a stop removes the tree; a target outside --allow, a file instead of
/// a directory, and a tree larger than the free inodes are refused naming them, with
/// nothing made.
#[test]
fn the_service_stops_cleanly_and_refuses_by_name() {
    let data = disk_tempdir();
    let allowed = disk_tempdir();
    let outside = disk_tempdir();
    let server = Server::start(data.path(), &[allowed.path()]);
    let a = allowed.path().to_str().expect("utf8");
    let id = server.start_run(&json!({"target": a, "preset": "files",
        "options": {"count": 200000, "streams": 2, "bs": 0, "interval_ms": "100ms"}}));
    server.wait_samples(id, 3);
    assert_eq!(work_dirs(allowed.path()).len(), 1);
    let (status, _) = server.post(&format!("/api/v1/runs/{id}/stop"), OP, &json!({}));
    assert_eq!(status, 202);
    let run = server.wait_status(id, "stopped");
    assert!(
        work_dirs(allowed.path()).is_empty(),
        "a stop removes the tree: {:?} {run}",
        work_dirs(allowed.path())
    );
    let (_, steps) = server.get(&format!("/api/v1/runs/{id}"), VIEW);
    assert!(steps["steps"][0]["name"]
        .as_str()
        .is_some_and(|n| n.starts_with("mkdir")));

    let o = outside.path().to_str().expect("utf8");
    let (status, v) = server.post(
        "/api/v1/runs",
        OP,
        &json!({"target": o, "preset": "files", "options": {"count": 10}}),
    );
    assert_eq!(status, 403, "{v}");
    assert!(work_dirs(outside.path()).is_empty());

    let file = allowed.path().join("plain.bin");
    std::fs::write(&file, b"x").expect("file");
    let (status, v) = server.post(
        "/api/v1/runs",
        OP,
        &json!({"target": file, "preset": "files", "options": {"count": 10}}),
    );
    assert_eq!(status, 400, "{v}");
    assert!(
        v["message"]
            .as_str()
            .unwrap_or("")
            .contains("is not a directory"),
        "{v}"
    );

    // A small filesystem: a tmpfs of 1,000 inodes cannot hold 5,000 files.
    let mnt = allowed.path().join("small");
    std::fs::create_dir(&mnt).expect("dir");
    let m = mnt.to_str().expect("utf8");
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "nr_inodes=1000,size=8m", "tmpfs", m])
        .status();
    if !mounted.is_ok_and(|s| s.success()) {
        skip!(
            Missing::Root,
            "cannot mount a small tmpfs for the inode refusal"
        );
    }
    let (status, v) = server.post(
        "/api/v1/runs",
        OP,
        &json!({"target": m, "preset": "files", "options": {"count": 5000}}),
    );
    let id = v["id"].as_i64();
    let failed = match (status, id) {
        (201, Some(id)) => server.wait_status(id, "failed"),
        _ => v.clone(),
    };
    let _ = std::process::Command::new("umount").arg(m).status();
    let text = failed.to_string();
    assert!(
        text.contains("inodes") && text.contains("free"),
        "refused naming the inodes: {text}"
    );
}
