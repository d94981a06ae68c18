//! Writes made durable while the run goes (fio's `fsync=N`, `fdatasync=N` and `sync=`):
//! flushes counted as fio counts them on the same job file, their latency in the native
//! report equal to the fio JSON export, synchronous writes seen by the kernel in the open
//! file's flags, and what cannot be made durable refused naming the value.

use serde_json::json;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use tests::server::{Server, OP};
use tests::*;

/// A job file writing 4 MiB in 4 KiB blocks at QD1 onto `file`, with `extra` options.
fn job(dir: &Path, name: &str, file: &str, extra: &str) -> String {
    let path = dir.join(format!("{name}.fio"));
    std::fs::write(
        &path,
        format!(
            "[{name}]\nfilename={file}\nsize=4m\nrw=randwrite\nbs=4k\niodepth=1\ndirect=1\n{extra}\n"
        ),
    )
    .expect("job file");
    path.to_str().expect("utf8").to_string()
}

#[test]
fn flushes_are_counted_as_fio_counts_them() {
    require_io_uring!();
    if !have("fio") {
        skip!(Missing::Tool, "fio is not installed");
    }
    let dir = disk_tempdir();
    let f = laid_out_file(dir.path(), "d.bin");
    // fio 3.33 issues a flush after every N-th write but not after the last one (the job
    // has ended): 1024 writes, fsync=8 -> 127 flushes; fdatasync=16 -> 63. (fio's
    // `total_ios` counts fsyncs only, 0 for fdatasyncs; its latency's N counts both.)
    for (extra, calls, want) in [
        ("ioengine=io_uring\nfsync=8", "fsync", 127),
        ("ioengine=psync\nfdatasync=16", "fdatasync", 63),
    ] {
        let jf = job(dir.path(), calls, &f, extra);
        let fio = fio_json(Command::new("fio").arg(&jf));
        let native = dir.path().join(format!("{calls}.json"));
        let export = dir.path().join(format!("{calls}.fio.json"));
        let out = diskscope(&[
            "run",
            "-q",
            "--json",
            native.to_str().expect("utf8"),
            "--output-format",
            "fio-json",
            "--output",
            export.to_str().expect("utf8"),
            &jf,
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        let ours: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&export).expect("export")).expect("json");
        let (fj, oj) = (&fio["jobs"][0], &ours["jobs"][0]);
        println!(
            "{calls}: fio {} flushes over {} writes, diskscope {} over {}",
            fj["sync"]["total_ios"],
            fj["write"]["total_ios"],
            oj["sync"]["total_ios"],
            oj["write"]["total_ios"]
        );
        assert_eq!(fj["sync"]["lat_ns"]["N"], json!(want), "fio's own count");
        assert_eq!(oj["sync"]["lat_ns"]["N"], json!(want), "{calls}");
        assert_eq!(oj["sync"]["total_ios"], json!(want), "{calls}");
        assert_eq!(
            oj["write"]["total_ios"], fj["write"]["total_ios"],
            "{calls}"
        );
        // fio's key set for the flushes, percentiles included.
        let keys = |v: &serde_json::Value| -> Vec<String> {
            let mut k: Vec<String> = v
                .as_object()
                .map(|o| o.keys().cloned().collect())
                .unwrap_or_default();
            k.sort();
            k
        };
        assert_eq!(keys(&oj["sync"]), keys(&fj["sync"]));
        assert_eq!(keys(&oj["sync"]["lat_ns"]), keys(&fj["sync"]["lat_ns"]));
        assert_eq!(
            keys(&oj["sync"]["lat_ns"]["percentile"]),
            keys(&fj["sync"]["lat_ns"]["percentile"])
        );
        assert_eq!(
            oj["job options"][calls],
            json!(if calls == "fsync" { "8" } else { "16" })
        );
        // The export's figures are the stored report's.
        let r = read_report(&native);
        let flush = r.summary.flush.expect("the report counts the flushes");
        assert_eq!(json!(flush.ios), oj["sync"]["total_ios"]);
        assert_eq!(json!(flush.lat.min_ns), oj["sync"]["lat_ns"]["min"]);
        assert_eq!(json!(flush.lat.max_ns), oj["sync"]["lat_ns"]["max"]);
        let buckets: u64 = r.histogram.flush.iter().map(|b| b.count).sum();
        assert_eq!(buckets, flush.ios, "every flush is in the histogram");
        assert!(flush.lat.min_ns > 0 && flush.lat.p50_ns >= flush.lat.min_ns);
        assert_eq!(r.summary.write.ios, 1024);
        // The table prints the same count per second.
        let table = diskscope(&[
            "run",
            "--target",
            &f,
            "--size",
            "4M",
            "--rw",
            "randwrite",
            "--fsync",
            "8",
        ]);
        let text = String::from_utf8_lossy(&table.stdout).to_string();
        assert!(
            text.contains("fsync every 8 writes") && text.lines().any(|l| l.starts_with("flush ")),
            "{text}"
        );
    }
}

/// The open flags of `pid`'s descriptors on `target` (octal, from /proc/PID/fdinfo).
fn open_flags(pid: u32, target: &Path) -> Vec<u32> {
    let mut out = Vec::new();
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return out;
    };
    for fd in fds.flatten() {
        if std::fs::read_link(fd.path()).ok().as_deref() != Some(target) {
            continue;
        }
        let info = format!("/proc/{pid}/fdinfo/{}", fd.file_name().to_string_lossy());
        let text = std::fs::read_to_string(info).unwrap_or_default();
        if let Some(v) = text.lines().find_map(|l| l.strip_prefix("flags:")) {
            if let Ok(flags) = u32::from_str_radix(v.trim(), 8) {
                out.push(flags);
            }
        }
    }
    out
}

#[test]
fn synchronous_writes_open_the_target_as_asked() {
    require_io_uring!();
    let dir = disk_tempdir();
    let f = laid_out_file(dir.path(), "s.bin");
    let target = std::fs::canonicalize(&f).expect("path");
    let (o_direct, o_dsync, o_sync) = (
        libc::O_DIRECT as u32,
        libc::O_DSYNC as u32,
        libc::O_SYNC as u32,
    );
    for (flag, want) in [(None, 0), (Some("dsync"), o_dsync), (Some("sync"), o_sync)] {
        let mut args = vec![
            "run",
            "-q",
            "--target",
            &f,
            "--size",
            "16M",
            "--rw",
            "randwrite",
            "--runtime",
            "3s",
            "--rate",
            "400iops",
        ];
        if let Some(m) = flag {
            args.extend(["--sync", m]);
        }
        let child = Command::new(diskscope_bin())
            .args(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("diskscope");
        // The engine's descriptor is the one opened O_DIRECT for the run.
        let deadline = Instant::now() + Duration::from_secs(3);
        let mut seen = None;
        while seen.is_none() && Instant::now() < deadline {
            seen = open_flags(child.id(), &target)
                .into_iter()
                .find(|fl| fl & o_direct != 0);
            std::thread::sleep(Duration::from_millis(20));
        }
        let out = child.wait_with_output().expect("wait");
        assert!(out.status.success(), "{}", stderr(&out));
        let flags = seen.unwrap_or_else(|| panic!("no descriptor on {f} seen during the run"));
        println!("--sync {flag:?}: the engine's descriptor has flags 0{flags:o}");
        let sync_bits = flags & o_sync;
        assert_eq!(sync_bits, want, "flags 0{flags:o} for --sync {flag:?}");
    }
}

#[test]
fn what_cannot_be_made_durable_is_refused_naming_it() {
    let dir = disk_tempdir();
    let f = dir.path().join("r.bin").to_str().expect("utf8").to_string();
    for (args, why) in [
        (
            vec!["--rw", "read", "--fsync", "8"],
            "flush = fsync/8: makes writes durable, and read writes nothing",
        ),
        (
            vec!["--rw", "randread", "--sync", "dsync"],
            "write_sync = dsync: makes writes durable, and randread writes nothing",
        ),
        (
            vec!["--rw", "write", "--fdatasync", "0"],
            "fdatasync every N writes: N must be 1..",
        ),
    ] {
        let mut all = vec!["run", "--target", &f, "--size", "4M"];
        all.extend(args);
        let out = diskscope(&all);
        assert!(!out.status.success());
        assert!(stderr(&out).contains(why), "{}", stderr(&out));
    }
    let jf = job(dir.path(), "bad", &f, "sync=fua");
    let out = diskscope(&["run", &jf]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("sync=fua") && stderr(&out).contains("bad.fio"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn the_api_takes_flushes_and_reports_them() {
    require_io_uring!();
    let data = disk_tempdir();
    let server = Server::start(data.path(), &[]);
    let scratch = server.scratch_target();
    let spec = json!({"rw": "write", "bs": 65536, "size": 8388608, "iodepth": 2,
                      "flush": {"every": 4, "data_only": true}, "write_sync": "dsync"});
    let id = server.start_run(&json!({"target": scratch, "spec": spec}));
    let run = server.wait_status_within(id, "completed", Duration::from_secs(60));
    assert_eq!(run["spec"]["flush"], json!({"every": 4, "data_only": true}));
    assert_eq!(run["spec"]["write_sync"], json!("dsync"));
    // 128 writes of 64 KiB: a flush after the 4th, 8th, … 124th.
    assert_eq!(run["summary"]["write"]["ios"], json!(128));
    assert_eq!(
        run["summary"]["flush"]["ios"],
        json!(31),
        "{}",
        run["summary"]
    );
    let (status, export) =
        server.get_text(&format!("/api/v1/runs/{id}/export?format=fio-json"), OP);
    assert_eq!(status, 200, "{export}");
    let doc: serde_json::Value = serde_json::from_str(&export).expect("fio json");
    assert_eq!(doc["jobs"][0]["sync"]["total_ios"], json!(31));
    assert_eq!(doc["jobs"][0]["job options"]["fdatasync"], json!("4"));
    assert_eq!(doc["jobs"][0]["job options"]["sync"], json!("dsync"));
}
