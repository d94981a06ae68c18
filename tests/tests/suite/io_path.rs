//! The measured I/O path: buffers backed the same way at every block size and
//! depth, and block-layer splits measured from the device's own counters and reported as a
//! warning in the JSON and on the terminal.

use tests::*;

#[test]
fn a_split_is_measured_and_reported_and_an_unsplit_run_is_not_warned() {
    require_io_uring!();
    let dev = match LoopDevice::in_memory(64 << 20) {
        Ok(d) => d,
        Err(e) => skip!(Missing::LoopDevice, "no loop device: {e}"),
    };
    let name = dev.path.file_name().unwrap().to_string_lossy().into_owned();
    // Limit the device's requests to 64 KiB: every 1 MiB I/O must become 16 requests. The
    // loop driver keeps the limit after the device is detached, so it is put back on drop.
    let limit = format!("/sys/block/{name}/queue/max_sectors_kb");
    let Ok(old) = std::fs::read_to_string(&limit) else {
        skip!(Missing::Kernel, "cannot read {limit}");
    };
    struct Restore(String, String);
    impl Drop for Restore {
        fn drop(&mut self) {
            let _ = std::fs::write(&self.0, self.1.trim());
        }
    }
    let _restore = Restore(limit.clone(), old);
    if std::fs::write(&limit, "64").is_err() {
        skip!(Missing::Kernel, "cannot set {limit}");
    }
    let d = dev.path_str();
    let dir = disk_tempdir();
    let json = dir.path().join("r.json");
    let j = json.display();
    let o = ds(&format!(
        "run --target {d} --rw read --bs 1M --iodepth 2 --runtime 1s --json {j}"
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    let r = read_report(&json);
    let p = r
        .environment
        .io_path
        .clone()
        .expect("io_path in the report");
    assert_eq!(p.device.as_deref(), Some(name.as_str()));
    let rpi = p.read_requests_per_io.expect("requests per read");
    assert!((14.0..=18.0).contains(&rpi), "1 MiB over 64 KiB: {rpi}");
    assert!(
        r.environment
            .warnings
            .iter()
            .any(|w| w.contains("split reads")),
        "{:?}",
        r.environment.warnings
    );
    assert!(
        out.contains("warning: the block layer split reads"),
        "{out}"
    );
    assert!(out.contains("requests per read"), "{out}");

    // Within the limit nothing is split, and nothing is said.
    let o = ds(&format!(
        "run --target {d} --rw read --bs 64K --iodepth 2 --runtime 1s --json {j} -q"
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    let r = read_report(&json);
    let p = r.environment.io_path.clone().expect("io_path");
    let rpi = p.read_requests_per_io.expect("requests per read");
    assert!((0.9..=1.1).contains(&rpi), "64 KiB reads: {rpi}");
    assert!(
        !r.environment.warnings.iter().any(|w| w.contains("split")),
        "{:?}",
        r.environment.warnings
    );
}

#[test]
fn every_step_of_a_sweep_has_the_same_buffer_backing() {
    require_io_uring!();
    let dir = disk_tempdir();
    let t = dir.path().join("t.bin");
    let json = dir.path().join("r.json");
    // 4 KiB .. 8 MiB at QD4: pools from 16 KiB to 32 MiB, the old seam at 512 KiB between.
    let o = ds(&format!(
        "run --target {} --size 8M --preset atto --runtime 200ms --json {} -q",
        t.display(),
        json.display()
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    let r = read_report(&json);
    let backings: Vec<(String, String)> = r
        .steps
        .iter()
        .map(|s| {
            let p = s.io_path.as_ref().expect("io_path per step");
            (s.name.clone(), p.backing())
        })
        .collect();
    assert!(backings.len() >= 10, "{backings:?}");
    let first = &backings[0].1;
    assert!(
        backings.iter().all(|(_, b)| b == first),
        "one backing for every step: {backings:?}"
    );
    if agent::engine::buf::thp_available() {
        assert_eq!(first, "2 MiB huge pages", "{backings:?}");
    } else {
        assert_eq!(first, "4 KiB pages", "{backings:?}");
    }
    let run = r.environment.io_path.expect("the run's io_path");
    assert_eq!(run.backing(), *first);
}
