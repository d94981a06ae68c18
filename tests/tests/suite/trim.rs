//! Trims (`--rw trim|randtrim|trimwrite|randtrimwrite`, fio's modes of the same names): made
//! one at a time, synchronously, as fio's engines make them, counted as a third direction
//! in the samples, the summary, the histogram, fio's JSON (`trim`) and logs (direction 2).
//! What the kernel saw is read from the block device's own discard counter and, on a file,
//! from the blocks the file still holds (a trim there is a punched hole). fio 3.33 runs the
//! same job files on the same loop device.

use tests::*;

/// Discards completed by `dev` so far (the twelfth field of `/sys/block/DEV/stat`).
fn device_discards(dev: &str) -> u64 {
    let name = dev.rsplit('/').next().unwrap_or_default();
    let stat = std::fs::read_to_string(format!("/sys/block/{name}/stat")).expect("stat");
    stat.split_whitespace()
        .nth(11)
        .and_then(|v| v.parse().ok())
        .expect("discards field")
}

/// (I/Os, bytes) of `dir` in a fio JSON document's first job.
fn counts(doc: &serde_json::Value, dir: &str) -> (u64, u64) {
    let d = &doc["jobs"][0][dir];
    (
        d["total_ios"].as_u64().expect("total_ios"),
        d["io_bytes"].as_u64().expect("io_bytes"),
    )
}

fn keys(v: &serde_json::Value) -> std::collections::BTreeSet<String> {
    v.as_object()
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default()
}

#[test]
fn trims_reach_the_device_and_count_as_fios_do() {
    require_io_uring!();
    let dev = match LoopDevice::in_memory(64 << 20) {
        Ok(d) => d,
        Err(e) => skip!(Missing::LoopDevice, "no loop device: {e}"),
    };
    let d = dev.path_str();
    let dir = disk_tempdir();
    let fio = fio_or_skip(module_path!());
    for (rw, trims, writes) in [
        ("randtrim", 128, 0),
        ("trim", 128, 0),
        ("trimwrite", 128, 128),
        ("randtrimwrite", 128, 128),
    ] {
        let job = dir.path().join(format!("{rw}.fio"));
        std::fs::write(
            &job,
            format!(
                "[t]\nfilename={d}\nrw={rw}\nbs=64k\nsize=8m\niodepth=4\ndirect=1\n\
                 ioengine=io_uring\nwrite_iops_log={}/{rw}\nlog_avg_msec=100\n",
                dir.path().display()
            ),
        )
        .expect("job");
        let before = device_discards(d);
        let (out, report, ours) = run_job_with_fio_json(&job);
        assert!(out.status.success(), "{rw}: {}", stderr(&out));
        let seen = device_discards(d) - before;
        // The kernel saw every trim as a discard (a large one may be split, never merged
        // away: each is its own ioctl).
        assert!(seen >= trims, "{rw}: {seen} discards for {trims} trims");
        let s = &report.summary;
        assert_eq!((s.trim.ios, s.trim.bytes), (trims, trims * 65536), "{rw}");
        assert_eq!(
            (s.write.ios, s.write.bytes),
            (writes, writes * 65536),
            "{rw}"
        );
        assert_eq!(s.read.ios, 0, "{rw}");
        assert_eq!(
            report.histogram.trim.iter().map(|b| b.count).sum::<u64>(),
            trims
        );
        let sampled: u64 = report.samples.iter().map(|x| x.trim.ios).sum();
        assert_eq!(sampled, trims, "{rw}: the samples hold every trim");
        // fio's JSON from diskscope holds the native report's figures.
        assert_eq!(counts(&ours, "trim"), (s.trim.ios, s.trim.bytes), "{rw}");
        assert_eq!(counts(&ours, "write"), (s.write.ios, s.write.bytes), "{rw}");
        assert!(
            ours["jobs"][0]["trim"]["clat_ns"]["percentile"].is_object(),
            "{rw}"
        );
        // The IOPS log: one row per window for each direction the job does, trims as 2.
        let rows = log_rows(&dir.path().join(format!("{rw}_iops.1.log")));
        let dirs: std::collections::BTreeSet<u64> = rows.iter().map(|r| r[2]).collect();
        let expected: std::collections::BTreeSet<u64> = if writes > 0 {
            [1, 2].into()
        } else {
            [2].into()
        };
        assert_eq!(dirs, expected, "{rw}: log directions");

        if fio {
            let before = device_discards(d);
            let theirs = fio_json(
                std::process::Command::new("fio")
                    .arg(&job)
                    .current_dir(dir.path()),
            );
            let fio_seen = device_discards(d) - before;
            println!("{rw}: discards diskscope {seen}, fio {fio_seen}");
            assert_eq!(
                seen, fio_seen,
                "{rw}: the device saw what fio's run made it see"
            );
            for which in ["read", "write", "trim"] {
                assert_eq!(
                    counts(&ours, which),
                    counts(&theirs, which),
                    "{rw}: {which} as fio counts it"
                );
                assert_eq!(
                    keys(&ours["jobs"][0][which]),
                    keys(&theirs["jobs"][0][which]),
                    "{rw}: {which}'s keys"
                );
            }
        }
    }
}

/// Blocks (of 512 bytes) the file holds on disk.
fn allocated(path: &std::path::Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).expect("stat").blocks()
}

#[test]
fn a_trim_on_a_file_punches_a_hole() {
    require_io_uring!();
    let dir = disk_tempdir();
    let file = dir.path().join("f");
    std::fs::write(&file, vec![0x5au8; 16 << 20]).expect("file");
    let f = file.to_str().expect("utf8");
    let out = ds(&format!(
        "run -q --target {f} --rw randtrim --cover-once --bs 1M --size 8M"
    ));
    assert!(out.status.success(), "{}", stderr(&out));
    // Half the file trimmed: its first 8 MiB hold no blocks now, the rest are intact.
    let left = allocated(&file) * 512;
    assert!(
        (8 << 20..=(8 << 20) + (1 << 20)).contains(&left),
        "{left} bytes still allocated after trimming 8 of 16 MiB"
    );
    let data = std::fs::read(&file).expect("read");
    assert!(
        data[..8 << 20].iter().all(|&b| b == 0),
        "a hole reads as zeros"
    );
    assert!(
        data[8 << 20..].iter().all(|&b| b == 0x5a),
        "past the span: intact"
    );
}

#[test]
fn what_cannot_apply_to_trims_is_refused_by_name() {
    let dir = disk_tempdir();
    let file = dir.path().join("f");
    let f = file.to_str().expect("utf8");
    for (args, names) in [
        ("--rw randtrim --verify", "verify"),
        ("--rw trim --fsync 4", "flush"),
        (
            "--rw randtrim --latency-target 1ms --latency-window 1s",
            "latency_target",
        ),
    ] {
        let out = ds(&format!("run -q --target {f} --size 8M --bs 4K {args}"));
        assert!(!out.status.success(), "{args}: accepted");
        assert!(stderr(&out).contains(names), "{args}: {}", stderr(&out));
    }
    // A job file whose trims and writes differ in size, in a mode that writes each block
    // it trimmed: refused naming bs, the file and the job.
    let job = dir.path().join("tw.fio");
    std::fs::write(
        &job,
        format!("[tw]\nfilename={f}\nsize=8m\nrw=trimwrite\nbs=4k,4k,8k\n"),
    )
    .expect("job");
    let out = diskscope(&["run", "-q", job.to_str().expect("utf8")]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let e = stderr(&out);
    assert!(
        e.contains("tw.fio") && e.contains("'tw'") && e.contains("bs"),
        "{e}"
    );
}
