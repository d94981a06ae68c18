//! The real CLI against real files on a disk-backed filesystem.

use shared::{RunStatus, Sample};
use std::os::unix::fs::FileExt;
use tests::*;

fn sum_bytes(samples: &[Sample], write: bool) -> u64 {
    samples
        .iter()
        .map(|s| if write { s.write.bytes } else { s.read.bytes })
        .sum()
}

fn read_file(path: &std::path::Path, len: usize) -> Vec<u8> {
    drop_cache(path);
    let f = std::fs::File::open(path).expect("open");
    let mut buf = vec![0u8; len];
    f.read_exact_at(&mut buf, 0).expect("read back");
    buf
}

#[test]
fn sequential_write_transfers_the_requested_bytes_and_samples_add_up() {
    if !io_uring_available() {
        skip!("io_uring cannot be set up on this kernel");
    }
    let dir = disk_tempdir();
    let target = dir.path().join("t.bin");
    let json = dir.path().join("r.json");
    let csv = dir.path().join("r.csv");
    let o = diskscope(&[
        "run",
        "--target",
        target.to_str().unwrap(),
        "--size",
        "48M",
        "--rw",
        "write",
        "--bs",
        "1M",
        "--iodepth",
        "8",
        "--jobs",
        "2",
        "--interval-ms",
        "100",
        "--json",
        json.to_str().unwrap(),
        "--csv",
        csv.to_str().unwrap(),
        "-q",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r = read_report(&json);
    assert_eq!(r.status, RunStatus::Completed);
    assert_eq!(r.summary.write.bytes, 48 << 20);
    assert_eq!(r.summary.write.ios, 48);
    assert_eq!(r.summary.read.ios, 0);
    assert_eq!(
        sum_bytes(&r.samples, true),
        r.summary.write.bytes,
        "samples add up to the summary"
    );
    assert_eq!(r.samples.last().map(|s| s.write.cum_bytes), Some(48 << 20));
    assert_eq!(
        r.samples.iter().map(|s| s.seq).collect::<Vec<_>>(),
        (0..r.samples.len() as u64).collect::<Vec<_>>()
    );
    assert!(r.environment.direct);
    assert_eq!(r.environment.backend, "uring");
    assert!(r
        .environment
        .ring_features
        .iter()
        .any(|f| f == "fixed_buffers"));
    let hist: u64 = r.histogram.write.iter().map(|b| b.count).sum();
    assert_eq!(hist, 48, "the histogram holds every I/O");
    assert_eq!(
        std::fs::read_to_string(&csv).unwrap().lines().count(),
        r.samples.len() + 1
    );
    // Written data is incompressible.
    let data = read_file(&target, 48 << 20);
    assert!(
        compress_ratio(&data) > 0.98,
        "random data compresses to {}",
        compress_ratio(&data)
    );
}

#[test]
fn data_patterns_reach_the_disk() {
    if !io_uring_available() {
        skip!("io_uring cannot be set up on this kernel");
    }
    let dir = disk_tempdir();
    for (pattern, lo, hi) in [
        ("zeros", 0.0, 0.01),
        ("compress:50", 0.45, 0.6),
        ("random", 0.98, 1.1),
    ] {
        let target = dir.path().join(format!("{pattern}.bin"));
        let o = diskscope(&[
            "run",
            "--target",
            target.to_str().unwrap(),
            "--size",
            "8M",
            "--rw",
            "write",
            "--bs",
            "64K",
            "--iodepth",
            "4",
            "--pattern",
            pattern,
            "-q",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let ratio = compress_ratio(&read_file(&target, 8 << 20));
        assert!(
            (lo..hi).contains(&ratio),
            "{pattern}: compress ratio {ratio}"
        );
    }
}

#[test]
fn o_direct_bypasses_the_page_cache_and_buffered_does_not() {
    if !io_uring_available() {
        skip!("io_uring cannot be set up on this kernel");
    }
    let dir = disk_tempdir();
    let direct = dir.path().join("direct.bin");
    let buffered = dir.path().join("buffered.bin");
    for (path, extra) in [(&direct, None), (&buffered, Some("--buffered"))] {
        let mut args = vec![
            "run",
            "--target",
            path.to_str().unwrap(),
            "--size",
            "32M",
            "--rw",
            "write",
            "--bs",
            "256K",
            "-q",
        ];
        args.extend(extra);
        let o = diskscope(&args);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let (d, total) = cached_pages(&direct);
    let (b, _) = cached_pages(&buffered);
    assert!(d * 100 < total, "O_DIRECT left {d} of {total} pages cached");
    assert!(
        b * 2 > total,
        "buffered writes left only {b} of {total} pages cached"
    );
}

#[test]
fn reads_of_a_new_file_lay_out_real_data_first_and_only_once() {
    if !io_uring_available() {
        skip!("io_uring cannot be set up on this kernel");
    }
    let dir = disk_tempdir();
    let target = dir.path().join("t.bin");
    let json = dir.path().join("r.json");
    let args = [
        "run",
        "--target",
        target.to_str().unwrap(),
        "--size",
        "16M",
        "--rw",
        "randread",
        "--iodepth",
        "16",
        "--runtime",
        "1s",
        "--json",
        json.to_str().unwrap(),
        "-q",
    ];
    assert!(diskscope(&args).status.success());
    let first = read_report(&json);
    assert_eq!(first.environment.laid_out_bytes, 16 << 20);
    assert!(first.summary.read.ios > 0);
    assert!(
        compress_ratio(&read_file(&target, 16 << 20)) > 0.98,
        "laid-out data is real, random data"
    );
    assert!(diskscope(&args).status.success());
    assert_eq!(
        read_report(&json).environment.laid_out_bytes,
        0,
        "nothing to lay out the second time"
    );
}

#[test]
fn cover_once_writes_every_block_exactly_once() {
    if !io_uring_available() {
        skip!("io_uring cannot be set up on this kernel");
    }
    let dir = disk_tempdir();
    let target = dir.path().join("t.bin");
    let json = dir.path().join("r.json");
    let o = diskscope(&[
        "run",
        "--target",
        target.to_str().unwrap(),
        "--size",
        "4M",
        "--rw",
        "randwrite",
        "--cover-once",
        "--iodepth",
        "8",
        "--jobs",
        "2",
        "--json",
        json.to_str().unwrap(),
        "-q",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(read_report(&json).summary.write.ios, 1024);
    let data = read_file(&target, 4 << 20);
    let untouched = data
        .chunks(4096)
        .filter(|b| b.iter().all(|&x| x == 0))
        .count();
    assert_eq!(untouched, 0, "every 4 KiB block of the span was written");
}

#[test]
fn time_based_runs_report_true_per_interval_samples() {
    if !io_uring_available() {
        skip!("io_uring cannot be set up on this kernel");
    }
    let dir = disk_tempdir();
    let target = dir.path().join("t.bin");
    let json = dir.path().join("r.json");
    let o = diskscope(&[
        "run",
        "--target",
        target.to_str().unwrap(),
        "--size",
        "16M",
        "--rw",
        "randwrite",
        "--iodepth",
        "4",
        "--runtime",
        "1500ms",
        "--ramp",
        "300ms",
        "--interval-ms",
        "250",
        "--rate",
        "2000iops",
        "--json",
        json.to_str().unwrap(),
        "-q",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r = read_report(&json);
    assert!(
        (5..=7).contains(&r.samples.len()),
        "{} samples for 1.5 s at 250 ms",
        r.samples.len()
    );
    for s in &r.samples[..r.samples.len() - 1] {
        assert_eq!(
            s.end_ns - s.start_ns,
            250_000_000,
            "full intervals are 250 ms"
        );
        // rate cap 2000 IOPS → 500 I/Os per 250 ms window, each window on its own
        assert!(
            (400..=600).contains(&s.write.ios),
            "window {} has {} I/Os",
            s.seq,
            s.write.ios
        );
        assert!((s.write.iops - 2000.0).abs() < 400.0, "{}", s.write.iops);
    }
    let d = r.summary.duration_ns as f64 / 1e9;
    assert!(
        (1.45..1.7).contains(&d),
        "measured time {d} s excludes the ramp"
    );
}

#[test]
fn bad_input_gets_a_one_line_error_naming_the_value() {
    let dir = disk_tempdir();
    let missing = dir.path().join("nope.bin");
    let o = diskscope(&["run", "--target", missing.to_str().unwrap(), "-q"]);
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(
        e.contains(missing.to_str().unwrap()) && e.contains("give --size"),
        "{e}"
    );
    assert_eq!(e.trim().lines().count(), 1, "{e}");

    let o = diskscope(&[
        "run",
        "--target",
        missing.to_str().unwrap(),
        "--size",
        "1M",
        "--bs",
        "1000",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("bs = 1000"), "{}", stderr(&o));
    assert!(
        !missing.exists(),
        "a spec error is caught before the target is created"
    );

    let o = diskscope(&[
        "run",
        "--target",
        missing.to_str().unwrap(),
        "--size",
        "1M",
        "--iodepth",
        "0",
    ]);
    assert!(
        stderr(&o).contains("iodepth = 0: must be 1..1024"),
        "{}",
        stderr(&o)
    );

    let o = diskscope(&["run", "--target", "x", "--bs", "12Q"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("'12Q'"), "{}", stderr(&o));

    if !is_root() {
        let ro = dir.path().join("ro.bin");
        std::fs::write(&ro, vec![0u8; 1 << 20]).unwrap();
        let mut perm = std::fs::metadata(&ro).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o444);
        std::fs::set_permissions(&ro, perm).unwrap();
        let o = diskscope(&["run", "--target", ro.to_str().unwrap(), "--rw", "write"]);
        assert!(
            stderr(&o).contains("cannot open for writing"),
            "{}",
            stderr(&o)
        );
    }
}

#[test]
fn ctrl_c_stops_within_an_interval_and_keeps_partial_results() {
    if !io_uring_available() {
        skip!("io_uring cannot be set up on this kernel");
    }
    let dir = disk_tempdir();
    let target = dir.path().join("t.bin");
    let json = dir.path().join("r.json");
    let csv = dir.path().join("r.csv");
    let mut child = std::process::Command::new(diskscope_bin())
        .args([
            "run",
            "--target",
            target.to_str().unwrap(),
            "--size",
            "16M",
            "--rw",
            "randwrite",
            "--runtime",
            "60s",
            "--interval-ms",
            "200",
            "--json",
            json.to_str().unwrap(),
            "--csv",
            csv.to_str().unwrap(),
            "-q",
        ])
        .spawn()
        .expect("spawn");
    std::thread::sleep(std::time::Duration::from_millis(1500));
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let t = std::time::Instant::now();
    let status = child.wait().expect("wait");
    assert!(
        t.elapsed().as_millis() < 1500,
        "stopped {} ms after SIGINT",
        t.elapsed().as_millis()
    );
    assert_eq!(status.code(), Some(130));
    let r = read_report(&json);
    assert_eq!(r.status, RunStatus::Stopped);
    assert!(r.samples.len() >= 3, "{} samples", r.samples.len());
    assert!(r.summary.write.ios > 0);
    assert_eq!(sum_bytes(&r.samples, true), r.summary.write.bytes);
}

#[test]
fn tmpfs_punts_to_kernel_workers_and_the_report_says_so() {
    if !io_uring_available() {
        skip!("io_uring cannot be set up on this kernel");
    }
    let shm = std::path::Path::new("/dev/shm");
    if !shm.is_dir() {
        skip!("no /dev/shm tmpfs");
    }
    let dir = tempfile::tempdir_in(shm).unwrap();
    let target = dir.path().join("t.bin");
    let json = dir.path().join("r.json");
    let o = diskscope(&[
        "run",
        "--target",
        target.to_str().unwrap(),
        "--size",
        "16M",
        "--rw",
        "randwrite",
        "--buffered",
        "--iodepth",
        "8",
        "--runtime",
        "1s",
        "--interval-ms",
        "200",
        "--json",
        json.to_str().unwrap(),
        "-q",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r = read_report(&json);
    assert!(
        r.environment.io_workers_seen > 0,
        "expected iou-wrk threads on tmpfs"
    );
    assert!(
        r.environment
            .warnings
            .iter()
            .any(|w| w.contains("not comparable")),
        "{:?}",
        r.environment.warnings
    );
}

#[test]
fn null_backend_opens_nothing() {
    let dir = disk_tempdir();
    let label = dir.path().join("not-created");
    let json = dir.path().join("r.json");
    let o = diskscope(&[
        "run",
        "--target",
        label.to_str().unwrap(),
        "--backend",
        "null",
        "--rw",
        "randrw",
        "--iodepth",
        "32",
        "--runtime",
        "500ms",
        "--interval-ms",
        "100",
        "--json",
        json.to_str().unwrap(),
        "-q",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!label.exists());
    let r = read_report(&json);
    assert_eq!(r.environment.target_kind, "none");
    assert!(r.summary.read.ios > 10_000 && r.summary.write.ios > 10_000);
    let share = r.summary.read.ios as f64 / (r.summary.read.ios + r.summary.write.ios) as f64;
    assert!((0.49..0.51).contains(&share), "50/50 mix gave {share}");
}
