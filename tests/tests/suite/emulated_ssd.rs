//! The analyses against ground truth: presets run with the real CLI on the emulated SSD
//! (`diskscope emulate`, FUSE), whose model parameters are known, and the analyses must
//! find them: cache size within ±10 %, post-cache speed within ±15 %, a thermal sawtooth
//! classified `thermal` and a cache step `cache`, steady state after the model's transient,
//! and `sustain` failing above the native speed and passing below.

use shared::analysis::Slowdown;
use tests::*;

/// One emulator at a time: they are timing models, and two at once on a small machine
/// would measure each other.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn emulator(model: &str) -> Option<Emulator> {
    Emulator::start_or_skip(model, "emulated_ssd")
}

#[test]
fn the_cache_size_and_post_cache_speed_are_found() {
    let _one = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    require_io_uring!();
    let cache: u64 = 512 << 20;
    let Some(emu) = emulator(&format!(
        r#"{{"capacity": 2147483648, "cache_bytes": {cache}, "cache_mbps": 200, "native_mbps": 50, "heat_c_per_gb": 1}}"#
    )) else {
        return;
    };
    let disk = emu.disk();
    let (out, r) = run_with_report(&[
        "--target",
        disk.to_str().unwrap(),
        "--rw",
        "write",
        "--bs",
        "1M",
        "--iodepth",
        "8",
        "--size",
        "700M",
        "--interval-ms",
        "250",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let c = r.analysis.cache_cliff.expect("cache analysis");
    let rates: Vec<f64> = r.samples.iter().map(|s| s.write.mb_s.round()).collect();
    assert!(c.detected, "{c:?}; write MB/s per sample: {rates:?}");
    let found = c.cache_bytes.unwrap() as f64;
    assert!(
        (found / cache as f64 - 1.0).abs() <= 0.10,
        "cache {found} vs model {cache}"
    );
    let post = c.post_mbps.unwrap();
    eprintln!("cache found {found:.0} B (model {cache}), post-cache {post:.1} MB/s (model 50); per sample {rates:?}");
    assert!(
        (post / 50.0 - 1.0).abs() <= 0.15,
        "post-cache {post} MB/s vs 50"
    );
    let t = r.analysis.thermal.expect("thermal analysis");
    assert_eq!(t.classification, Slowdown::Cache, "{t:?}");
    assert!(
        r.samples.iter().all(|s| s.temp_c.is_some()),
        "the model's temperature is in every sample"
    );
}

#[test]
fn cache_recovery_reports_the_cache_the_idle_time_gave_back() {
    let _one = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    require_io_uring!();
    // 256 MiB of cache at 200 MB/s, then 60 MB/s; idle drains it at 100 MB/s, so 2 s of idle
    // gives back about 200 MB of it. (At 300 MB/s a loaded CI machine's FUSE could not keep
    // the cache's rate: the first write ran at 200 with dips and its cliff went unnamed.)
    let cache: u64 = 256 << 20;
    let Some(emu) = emulator(&format!(
        r#"{{"capacity": 2147483648, "cache_bytes": {cache}, "cache_mbps": 200, "native_mbps": 60, "drain_mbps": 100, "heat_c_per_gb": 0.2}}"#
    )) else {
        return;
    };
    let disk = emu.disk();
    let (out, r) = run_with_report(&[
        "--target",
        disk.to_str().unwrap(),
        "--preset",
        "cache-recovery",
        "--size",
        "400M",
        "--idle",
        "2s",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let rec = r
        .analysis
        .cache_recovery
        .clone()
        .expect("cache_recovery analysis");
    eprintln!("cache recovery: {rec:?}");
    assert_eq!(rec.verdict, shared::analysis::Verdict::Found, "{rec:?}");
    let first = rec.first.cache_bytes.expect("first cache") as f64;
    assert!(
        (first / cache as f64 - 1.0).abs() <= 0.10,
        "first cache {first}"
    );
    assert!((rec.idle_s - 2.0).abs() < 0.5, "idle {}", rec.idle_s);
    let expected = 100e6 * rec.idle_s;
    let got = rec.recovered_bytes.expect("recovered") as f64;
    assert!(
        (got / expected - 1.0).abs() <= 0.15,
        "recovered {got} vs {expected} (100 MB/s × {:.2} s idle)",
        rec.idle_s
    );
    let share = rec.recovered_share.expect("share");
    assert!((share - got / first).abs() < 1e-9);
    let lines = r.analysis.summary_lines().join("\n");
    assert!(
        lines.contains("cache recovery:") && lines.contains("written fast again"),
        "{lines}"
    );
    assert_eq!(
        r.analysis.cache_cliff.as_ref().and_then(|c| c.cache_bytes),
        rec.first.cache_bytes,
        "the run's cache is the first write's"
    );
}

#[test]
fn the_block_size_sweep_names_the_saturation_size_the_model_has() {
    let _one = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    require_io_uring!();
    // Every request costs 263 µs of command overhead plus its transfer at 100 MB/s: MB/s
    // grows with the block size as b / (c + b / r). FUSE hands writes over in requests of
    // at most 1 MiB, each paying the overhead, so the best is from 1 MiB up; the smallest
    // power of two within 90 % of it is the truth (256 KiB here, 4 % clear of either side).
    let (c_us, r_mbps) = (263.0, 100.0);
    let Some(emu) = emulator(&format!(
        r#"{{"capacity": 1073741824, "cache_bytes": 1000000000000000, "cache_mbps": {r_mbps}, "read_mbps": {r_mbps}, "per_io_us": {c_us}, "heat_c_per_gb": 0.2}}"#
    )) else {
        return;
    };
    let model = |b: f64| {
        let requests = (b / 1048576.0).ceil();
        b / (requests * c_us * 1e-6 + b / (r_mbps * 1e6)) / 1e6
    };
    let sizes: Vec<u64> = (9..=23).map(|k| 1u64 << k).collect();
    let best = sizes.iter().map(|b| model(*b as f64)).fold(0.0, f64::max);
    let truth = *sizes
        .iter()
        .find(|b| model(**b as f64) >= 0.9 * best)
        .expect("a saturation size");
    let disk = emu.disk();
    // The drive, as measured: the model's saturation size or, when the measured curve
    // flattens a little early or late, a neighbour. The emulator keeps time in user space
    // and a busy or stolen CPU slows its small requests most: a sweep that lands further
    // off (a loaded fresh-clone run measured 256 KiB at 78.8 MB/s, 87 % of the model) is
    // printed and run again, at most three sweeps in all; the detector's logic is checked
    // exactly on every sweep.
    for attempt in 1..=3 {
        let (out, r) = run_with_report(&[
            "--target",
            disk.to_str().unwrap(),
            "--preset",
            "atto",
            "--size",
            "8M",
            "--runtime",
            "400ms",
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        let b = r.analysis.block_size.clone().expect("block-size analysis");
        let table: Vec<String> = b
            .points
            .iter()
            .map(|p| format!("{} {:.1} (model {:.1})", p.bs, p.mbps, model(p.bs as f64)))
            .collect();
        eprintln!("sweep {attempt}: {}", table.join(", "));
        // The detector, exactly: the smallest size within 90 % of the best it was given.
        let found = b.saturation_bs.expect("a saturation size");
        let best_measured = b.points.iter().map(|p| p.mbps).fold(0.0, f64::max);
        let mut points = b.points.clone();
        points.sort_by_key(|p| p.bs);
        let want = points
            .iter()
            .find(|p| p.mbps >= 0.9 * best_measured)
            .map(|p| p.bs);
        assert_eq!(Some(found), want, "sweep: {table:?}");
        if found == truth || found == truth * 2 || found * 2 == truth {
            return;
        }
        eprintln!("sweep {attempt}: found {found}, the model's {truth}: the drive was off its model; again");
    }
    panic!("three sweeps missed the model's saturation size {truth} and its neighbours");
}

#[test]
fn a_thermal_sawtooth_is_classified_thermal_not_a_cache() {
    let _one = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    require_io_uring!();
    let Some(emu) = emulator(
        r#"{"capacity": 8589934592, "cache_bytes": 100000000000, "cache_mbps": 200, "native_mbps": 200,
            "heat_c_per_gb": 75, "tau_s": 2, "trip_c": 55, "hysteresis_c": 3, "throttle_mbps": 40}"#,
    ) else {
        return;
    };
    let disk = emu.disk();
    let (out, r) = run_with_report(&[
        "--target",
        disk.to_str().unwrap(),
        "--rw",
        "write",
        "--bs",
        "1M",
        "--iodepth",
        "8",
        "--runtime",
        "12s",
        "--interval-ms",
        "250",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let t = r.analysis.thermal.expect("thermal analysis");
    assert_eq!(t.classification, Slowdown::Thermal, "{t:?}");
    eprintln!("thermal: {} ({:?}–{:?} °C)", t.reason, t.min_c, t.max_c);
    // The model swings between trip - hysteresis and trip (52-55 °C); a 250 ms sample's
    // reading lands anywhere on that swing.
    assert!(t.max_c.unwrap() >= 52.0, "{t:?}");
    let c = r.analysis.cache_cliff.expect("cache analysis");
    assert!(!c.detected, "a sawtooth is not a cache: {c:?}");
}

#[test]
fn steady_state_is_attained_after_the_transient() {
    let _one = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    require_io_uring!();
    // Random writes settle from 100 MB/s to 10 % of it over some 32 MiB × ln(…) written.
    let Some(emu) = emulator(
        r#"{"capacity": 1073741824, "cache_bytes": 0, "native_mbps": 100, "random_floor": 0.1,
            "random_scale_bytes": 33554432, "heat_c_per_gb": 0}"#,
    ) else {
        return;
    };
    let disk = emu.disk();
    let (out, r) = run_with_report(&[
        "--target",
        disk.to_str().unwrap(),
        "--preset",
        "snia-steady",
        "--size",
        "256M",
        "--runtime",
        "1s",
        "--count",
        "25",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let s = r.analysis.steady_state.expect("steady-state analysis");
    assert!(s.attained, "{s:?}");
    let round = s.round.unwrap();
    assert!(
        round >= 5,
        "attained at round {round}, before the transient was over: {s:?}"
    );
    let floor_iops = 0.1 * 100e6 / 4096.0;
    let mean = s.mean.unwrap();
    eprintln!("steady state at round {round}: {mean:.0} IOPS (model floor {floor_iops:.0})");
    assert!(
        (mean / floor_iops - 1.0).abs() <= 0.15,
        "steady {mean} IOPS vs model {floor_iops}"
    );
    assert_eq!(r.steps[0].name, "precondition: 128K sequential write ×2");
    assert!(r.steps.iter().skip(1).all(|s| s.name.starts_with("round ")));
}

#[test]
fn sustain_fails_above_the_native_speed_and_passes_below() {
    let _one = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    require_io_uring!();
    let Some(emu) = emulator(
        r#"{"capacity": 4294967296, "cache_bytes": 0, "native_mbps": 100, "heat_c_per_gb": 0}"#,
    ) else {
        return;
    };
    let disk = emu.disk();
    let target = disk.to_str().unwrap();
    let (ok, r) = run_with_report(&[
        "--target",
        target,
        "--preset",
        "sustain",
        "--rate",
        "60MB",
        "--runtime",
        "4s",
    ]);
    let s = r.analysis.sustain.expect("sustain analysis");
    assert!(
        s.pass && ok.status.success(),
        "60 MB/s on a 100 MB/s device: {s:?} {}",
        stderr(&ok)
    );
    assert_eq!(s.required_mbps, 60.0);
    let (bad, r) = run_with_report(&[
        "--target",
        target,
        "--preset",
        "sustain",
        "--rate",
        "150MB",
        "--runtime",
        "4s",
    ]);
    let s = r.analysis.sustain.expect("sustain analysis");
    assert!(!s.pass, "150 MB/s on a 100 MB/s device: {s:?}");
    eprintln!(
        "sustain 150 MB/s: achieved {:.1} MB/s, buffer needed {} B, 1 s windows below {}",
        s.achieved_mbps, s.buffer_bytes_needed, s.windows_below_1s
    );
    assert_eq!(
        bad.status.code(),
        Some(1),
        "a failed sustain exits 1 for scripts"
    );
    assert!(s.buffer_bytes_needed > 100_000_000, "{s:?}");
    assert!(stderr(&bad).contains("did not sustain"), "{}", stderr(&bad));
}

#[test]
fn serve_demo_offers_the_emulated_ssd_and_the_quick_preset_finds_its_cache() {
    let _one = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    require_io_uring!();
    if !is_root() || !std::path::Path::new("/dev/fuse").exists() {
        skip!(Missing::Fuse, "serve --demo needs root and /dev/fuse");
    }
    let data = disk_tempdir();
    let server = tests::server::Server::start_demo(data.path());
    let disk = data.path().join("demo-ssd/disk.img");
    let (_, targets) = server.get("/api/v1/targets", tests::server::VIEW);
    let listed = targets
        .as_array()
        .expect("list")
        .iter()
        .any(|t| t["path"] == disk.to_str().unwrap());
    assert!(listed, "the demo SSD is a target: {targets}");
    let id = server.start_run(&serde_json::json!({"target": disk, "preset": "quick"}));
    let run = server.wait_status(id, "completed");
    let cliff = &run["analysis"]["cache_cliff"];
    assert_eq!(cliff["detected"], true, "{run}");
    let cache = cliff["cache_bytes"].as_f64().unwrap();
    assert!((cache / (1u64 << 30) as f64 - 1.0).abs() <= 0.10, "{cliff}");
    eprintln!(
        "demo: cache cliff after {cache:.0} B, {} → {} MB/s",
        cliff["pre_mbps"], cliff["post_mbps"]
    );
    // A graceful stop unmounts the demo SSD.
    let mut server = server;
    assert!(server.terminate().success());
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let dir = data.path().join("demo-ssd");
    assert!(
        !mounts.contains(dir.to_str().unwrap()),
        "the demo SSD is still mounted"
    );
    agent::emulate::detach(&dir);
}

/// An I/O still in flight when the run time ends completes into the run (fio counts it
/// too): on a drive that takes 500 ms for every read, a 200 ms run at QD1 reports the one
/// read it issued, not "nothing measured".
#[test]
fn an_io_in_flight_at_the_deadline_is_counted() {
    let _one = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    require_io_uring!();
    let model = format!(
        r#"{{"capacity": {cap}, "cache_bytes": 0, "native_mbps": 2000, "read_mbps": 3000,
            "faults": {{"keep_data": true, "slow_regions": [[0, {cap}, 500]]}}}}"#,
        cap = 16u64 << 20
    );
    let Some(emu) = emulator(&model) else { return };
    let disk = emu.disk();
    let disk = disk.to_str().expect("utf8");
    let (out, r) = run_with_report(&[
        "--target",
        disk,
        "--rw",
        "read",
        "--bs",
        "64k",
        "--iodepth",
        "1",
        "--runtime",
        "200ms",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(r.status, shared::RunStatus::Completed, "{:?}", r.error);
    assert_eq!(r.summary.read.ios, 1, "{:?}", r.summary.read);
    let sampled: u64 = r.samples.iter().map(|s| s.read.ios).sum();
    assert_eq!(sampled, 1, "the samples hold the drained read too");
}
