//! The real CLI against loop devices and loop-mounted filesystems (root only).

use shared::RunStatus;
use tests::*;

#[test]
fn loop_device_size_block_size_and_span_checks() {
    require_io_uring!();
    let dev = match LoopDevice::new(64 << 20, 4096) {
        Ok(d) => d,
        Err(e) => skip!(Missing::LoopDevice, "no loop device: {e}"),
    };
    let d = dev.path_str();
    let dir = disk_tempdir();
    let json = dir.path().join("r.json");
    let j = json.display();
    let o = ds(&format!(
        "run --target {d} --rw write --bs 1M --iodepth 4 --jobs 4 --json {j} -q"
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    let r = read_report(&json);
    assert_eq!(r.environment.target_kind, "block");
    assert_eq!(r.environment.target_size, 64 << 20);
    assert_eq!(r.environment.logical_block_size, 4096);
    assert_eq!(
        r.summary.write.bytes,
        64 << 20,
        "the whole device, split over 4 jobs"
    );

    let o = ds(&format!("run --target {d} --bs 512 -q"));
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(e.contains("bs = 512") && e.contains("(4096 B)"), "{e}");

    let e = stderr(&ds(&format!("run --target {d} --size 1G -q")));
    assert!(
        e.contains("size = 1073741824") && e.contains("beyond the end of the device"),
        "{e}"
    );

    let o = ds(&format!(
        "run --target {d} --rw randread --iodepth 16 --runtime 1s --json {j} -q"
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    let r = read_report(&json);
    assert_eq!(
        r.environment.laid_out_bytes, 0,
        "block devices are never laid out"
    );
    assert!(r.summary.read.ios > 100);
}

#[test]
fn enospc_stops_with_a_clear_error_and_keeps_partial_results() {
    require_io_uring!();
    let fs = match LoopMount::new(32 << 20) {
        Ok(m) => m,
        Err(e) => skip!(Missing::LoopDevice, "no loop-mounted filesystem: {e}"),
    };
    let dir = disk_tempdir();
    let (json, csv) = (dir.path().join("r.json"), dir.path().join("r.csv"));
    let o = ds(&format!(
        "run --target {} --size 64M --rw write --bs 1M --iodepth 4 --interval-ms 100 \
         --json {} --csv {} -q",
        fs.path().join("big.bin").display(),
        json.display(),
        csv.display()
    ));
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(
        e.contains("No space left on device") && e.contains("at offset"),
        "{e}"
    );
    let r = read_report(&json);
    assert_eq!(r.status, RunStatus::Failed);
    let err = r.error.expect("error recorded");
    assert_eq!(
        (err.errno, err.op.as_deref()),
        (Some(libc::ENOSPC), Some("write"))
    );
    let off = err.offset.expect("failing offset");
    assert!(off > 8 << 20 && off < 64 << 20, "failing offset {off}");
    assert!(
        r.summary.write.bytes > 8 << 20,
        "what was written before the error is kept"
    );
    let in_samples: u64 = r.samples.iter().map(|s| s.write.bytes).sum();
    assert_eq!(in_samples, r.summary.write.bytes);
    assert!(std::fs::read_to_string(&csv).unwrap().lines().count() > 1);
}

#[test]
fn writes_to_a_mounted_device_are_refused_reads_are_not() {
    require_io_uring!();
    let fs = match LoopMount::new(32 << 20) {
        Ok(m) => m,
        Err(e) => skip!(Missing::LoopDevice, "no loop-mounted filesystem: {e}"),
    };
    let dev = fs.device().display().to_string();
    let o = ds(&format!("run --target {dev} --rw write --bs 1M -q"));
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    let named = e.contains(&format!("refusing to write to {dev}"));
    assert!(named && e.contains("is mounted at"), "{e}");
    let o = ds(&format!(
        "run --target {dev} --rw randread --runtime 300ms -q"
    ));
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn a_read_only_target_gets_an_error_naming_path_and_cause() {
    let fs = match LoopMount::new(16 << 20) {
        Ok(m) => m,
        Err(e) => skip!(Missing::LoopDevice, "no loop-mounted filesystem: {e}"),
    };
    let target = fs.path().join("t.bin");
    std::fs::write(&target, vec![1u8; 1 << 20]).unwrap();
    fs.remount_ro().unwrap();
    let o = ds(&format!("run --target {} --rw write -q", target.display()));
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    let named = e.contains(&format!("cannot open for writing {}", target.display()));
    assert!(named && e.contains("Read-only file system"), "{e}");
}

#[test]
fn eio_mid_run_reports_the_failing_offset_and_keeps_what_was_measured() {
    require_io_uring!();
    let dev = match FailingDevice::new(16 << 20, 16 << 20) {
        Ok(d) => d,
        Err(e) => skip!(Missing::DmError, "no device-mapper error target: {e}"),
    };
    let dir = disk_tempdir();
    let json = dir.path().join("r.json");
    let o = ds(&format!(
        "run --target {} --rw read --bs 1M --iodepth 1 --interval-ms 100 --json {} -q",
        dev.path.display(),
        json.display()
    ));
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(
        e.contains("read at offset 16777216 failed: Input/output error"),
        "{e}"
    );
    let r = read_report(&json);
    assert_eq!(r.status, RunStatus::Failed);
    let err = r.error.expect("error recorded");
    assert_eq!((err.errno, err.offset), (Some(libc::EIO), Some(16 << 20)));
    assert_eq!(
        r.summary.read.bytes,
        16 << 20,
        "every good block was read and counted"
    );
}
