//! Batched submission and completion (fio's `iodepth_batch_submit`,
//! `iodepth_batch_complete_min` and `_max`; `--iodepth-batch` and its two siblings): what
//! the kernel saw is read from the block device's own request counter. I/Os handed to the
//! kernel in one call are plugged and merged by the block layer, so 4 KiB sequential reads
//! reach a loop device as fewer, larger requests; handed over one at a time, they do not.
//! fio 3.33 runs the same job files on the same device, its requests counted the same way.

use tests::*;

const IOS: u64 = 8192;

/// Reads completed by `dev` so far (the first field of `/sys/block/DEV/stat`).
fn device_reads(dev: &str) -> u64 {
    let name = dev.rsplit('/').next().unwrap_or_default();
    let stat = std::fs::read_to_string(format!("/sys/block/{name}/stat")).expect("stat");
    stat.split_whitespace()
        .next()
        .and_then(|v| v.parse().ok())
        .expect("reads field")
}

fn job_text(dev: &str, extra: &str) -> String {
    format!(
        "[b]\nfilename={dev}\nrw=read\nbs=4k\niodepth=16\nio_size=32m\ndirect=1\n\
         ioengine=io_uring\n{extra}"
    )
}

/// Device requests per I/O of diskscope's run of `args`, and its backend's features.
fn ours(args: &[&str]) -> (f64, Vec<String>) {
    let (out, r) = run_with_report(args);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(r.summary.read.ios, IOS, "{args:?}");
    let path = r.environment.io_path.expect("the I/O path was measured");
    let per_io = path
        .read_requests_per_io
        .expect("the device's requests were counted");
    (per_io, r.environment.ring_features)
}

#[test]
fn a_batch_reaches_the_device_as_fios_does() {
    require_io_uring!();
    let dev = match LoopDevice::in_memory(64 << 20) {
        Ok(d) => d,
        Err(e) => skip!(Missing::LoopDevice, "no loop device: {e}"),
    };
    let d = dev.path_str();
    let cli = |extra: &[&str]| {
        let mut args = vec![
            "--target",
            d,
            "--rw",
            "read",
            "--bs",
            "4K",
            "--iodepth",
            "16",
            "--io-size",
            "32M",
        ];
        args.extend(extra);
        ours(&args)
    };
    // One I/O per call: one request per I/O. A batch of 16 (every ready completion
    // reaped, the refills submitted at once): merged.
    let (alone, f) = cli(&[]);
    assert!(alone > 0.9, "one at a time: {alone} requests per I/O");
    assert!(!f.iter().any(|f| f.starts_with("batch")), "{f:?}");
    let (batched, f) = cli(&["--iodepth-batch", "16"]);
    assert!(batched < 0.5, "batches of 16: {batched} requests per I/O");
    assert!(f.contains(&"batch_submit=16".to_string()), "{f:?}");

    // Job files, run by both tools. fio reaps iodepth_batch_complete_max completions per
    // round (by default its minimum, 1): a full queue is refilled, and submitted, one I/O at
    // a time whatever iodepth_batch_submit says; with a minimum of 8 or 16 it waits for
    // that many, refills that many, and submits them together.
    let dir = disk_tempdir();
    for (extra, low, high) in [
        ("iodepth_batch_submit=16\n", 0.9, 1.01),
        (
            "iodepth_batch_submit=16\niodepth_batch_complete_min=8\n",
            0.1,
            0.15,
        ),
        (
            "iodepth_batch_submit=16\niodepth_batch_complete_min=16\n",
            0.05,
            0.08,
        ),
    ] {
        let job = dir.path().join("batch.fio");
        std::fs::write(&job, job_text(d, extra)).expect("job file");
        let (mine, f) = ours(&[job.to_str().expect("utf8")]);
        assert!(
            (low..high).contains(&mine),
            "diskscope, {extra:?}: {mine} requests per I/O ({f:?})"
        );
        if fio_or_skip(module_path!()) {
            let before = device_reads(d);
            let v = fio_json(std::process::Command::new("fio").arg(&job));
            let ios = v["jobs"][0]["read"]["total_ios"].as_u64().expect("ios");
            let theirs = (device_reads(d) - before) as f64 / ios as f64;
            println!("{extra:?}: requests per I/O diskscope {mine:.4}, fio {theirs:.4}");
            assert!(
                (mine - theirs).abs() < 0.05,
                "{extra:?}: diskscope {mine} requests per I/O, fio {theirs}"
            );
        }
    }

    // Batches larger than the queue: refused, naming the value.
    for (args, why) in [
        (
            vec!["--iodepth", "4", "--iodepth-batch", "8"],
            "iodepth_batch = 8: must be 1..iodepth (4)",
        ),
        (
            vec!["--iodepth", "4", "--iodepth-batch-complete-min", "5"],
            "iodepth_batch_complete_min = 5: must be 0..iodepth (4)",
        ),
        (
            vec![
                "--iodepth",
                "8",
                "--iodepth-batch-complete-min",
                "4",
                "--iodepth-batch-complete-max",
                "2",
            ],
            "iodepth_batch_complete_max = 2",
        ),
    ] {
        let mut all = vec!["run", "-q", "--target", d, "--io-size", "1M"];
        all.extend(args);
        let out = diskscope(&all);
        assert_eq!(out.status.code(), Some(1), "bad input: {}", stderr(&out));
        assert!(stderr(&out).contains(why), "{}", stderr(&out));
    }
}
