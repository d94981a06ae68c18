//! `diskscope probe` (and the `probe` preset): one request every interval, as ioping makes
//! them. Side by side with ioping itself on the same file and loop device; its lines and
//! statistics are the stored report's; memory stays flat over many requests.

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use tests::*;

/// ioping's JSON records (`-J`): the per-request ones and the closing `stat`.
fn records(stdout: &[u8]) -> (Vec<Value>, Value) {
    let v: Value = serde_json::from_slice(stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(stdout)));
    let all = v.as_array().expect("an array").clone();
    let ios: Vec<Value> = all
        .iter()
        .filter(|r| r.get("io").is_some())
        .cloned()
        .collect();
    let stat = all
        .iter()
        .find(|r| r.get("stat").is_some())
        .cloned()
        .expect("stat");
    (ios, stat)
}

/// The counted requests' median latency, ns, and how many requests there were.
fn median_and_count(ios: &[Value]) -> (f64, usize) {
    let mut t: Vec<f64> = ios
        .iter()
        .filter(|r| r["io"]["ignored"] == false)
        .map(|r| r["io"]["time"].as_f64().expect("time"))
        .collect();
    t.sort_by(f64::total_cmp);
    (t[t.len() / 2], ios.len())
}

fn ioping(target: &Path) -> Vec<u8> {
    let out = Command::new("ioping")
        .args(["-D", "-c", "30", "-i", "0.1", "-J"])
        .arg(target)
        .output()
        .expect("run ioping");
    assert!(
        out.status.success(),
        "ioping: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn probe(target: &Path) -> Vec<u8> {
    let out = Command::new(diskscope_bin())
        .args([
            "probe",
            "--direct",
            "--count",
            "30",
            "--interval",
            "100ms",
            "--ioping-json",
        ])
        .arg(target)
        .output()
        .expect("run diskscope probe");
    assert!(out.status.success(), "probe: {}", stderr(&out));
    out.stdout
}

/// `ioping -D -c 30 -i 0.1 -J` against `diskscope probe --direct --count 30 --interval
/// 100ms --ioping-json` on a file on disk and on a loop device over memory, alternated,
/// three pairs each: the same requests (30, the first a warm-up in both), the same JSON
/// records, and the same kind of latency: the median of the pairs' ratios within 0.25-4x,
/// which a probe served from the page cache (10x faster) would miss. How close the two
/// are is measured in bench case 10 on an idle machine (0.92x file, 1.00x loop), not
/// asserted here: beside the suite's other groups and a build, CI saw ioping's own
/// medians on one loop device range 78 us-3.1 ms, and the probe at 3.06x on a file.
#[test]
fn probe_meets_ioping_on_a_file_and_a_loop_device() {
    if !have("ioping") {
        skip!(
            Missing::Tool,
            "ioping is not installed (apt-get install ioping)"
        );
    }
    let dir = disk_tempdir();
    let file = dir.path().join("probe.bin");
    std::fs::write(&file, vec![7u8; 8 << 20]).expect("file");
    let dev = LoopDevice::in_memory(64 << 20);
    let mut targets = vec![("file", file.clone())];
    match &dev {
        Ok(d) => targets.push(("loop", d.path.clone())),
        Err(e) => println!("no loop device ({e}): the file only"),
    }
    for (what, target) in &targets {
        let mut ratios = Vec::new();
        for pair in 0..3 {
            let (theirs, ours) = if pair % 2 == 0 {
                let t = ioping(target);
                (t, probe(target))
            } else {
                let o = probe(target);
                (ioping(target), o)
            };
            let ((t_ios, t_stat), (o_ios, o_stat)) = (records(&theirs), records(&ours));
            let keys = |v: &Value| {
                let mut k: Vec<String> = v.as_object().expect("object").keys().cloned().collect();
                k.sort();
                k
            };
            assert_eq!(
                keys(&t_ios[0]),
                keys(&o_ios[0]),
                "{what}: a request's record"
            );
            assert_eq!(
                keys(&t_ios[0]["io"]),
                keys(&o_ios[0]["io"]),
                "{what}: its io"
            );
            assert_eq!(keys(&t_stat["stat"]), keys(&o_stat["stat"]), "{what}: stat");
            let ((tm, tn), (om, on)) = (median_and_count(&t_ios), median_and_count(&o_ios));
            assert_eq!((tn, on), (30, 30), "{what}: requests");
            assert_eq!(o_ios[0]["io"]["ignored"], true, "{what}: the warm-up");
            assert_eq!(
                o_stat["stat"]["count"], t_stat["stat"]["count"],
                "{what}: counted"
            );
            ratios.push(om / tm);
            println!("{what} pair {pair}: median diskscope {om:.0} ns, ioping {tm:.0} ns");
        }
        ratios.sort_by(f64::total_cmp);
        let m = ratios[1];
        println!("{what}: median latency diskscope/ioping {m:.2} (pairs {ratios:?})");
        assert!(
            (0.25..=4.0).contains(&m),
            "{what}: {m:.2} of ioping's median"
        );
    }
}

/// The live lines are ioping's (a line per request, the first marked warm-up), and the
/// statistics printed are the stored report's: min/avg/max/mdev from `analysis.probe`, the
/// counted requests the summary's I/Os.
#[test]
fn the_lines_and_statistics_are_the_stored_report() {
    let dir = ram_tempdir();
    let file = dir.path().join("p.bin");
    std::fs::write(&file, vec![1u8; 1 << 20]).expect("file");
    let json = dir.path().join("p.json");
    let out = diskscope(&[
        "probe",
        "--count",
        "6",
        "--interval",
        "50ms",
        "--json",
        json.to_str().expect("utf8"),
        file.to_str().expect("utf8"),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let lines: Vec<&str> = text.lines().filter(|l| l.contains("request=")).collect();
    assert_eq!(lines.len(), 6, "{text}");
    assert!(
        lines[0].starts_with("4 KiB <<< ") && lines[0].ends_with("(warmup)"),
        "{text}"
    );
    assert!(lines[5].contains("request=6 time="), "{text}");
    let r = read_report(&json);
    let p = r.analysis.probe.clone().expect("analysis.probe");
    assert_eq!((p.count, p.requests, p.warmup_ns.len()), (5, 6, 1));
    assert_eq!(r.summary.read.ios, 5);
    assert_eq!(r.summary.read.lat.min_ns, p.min_ns);
    assert_eq!(r.summary.read.lat.max_ns, p.max_ns);
    let fmt = |ns: u64| {
        let x = ns as f64;
        if ns < 1000 {
            format!("{ns} ns")
        } else if x < 1e6 {
            format!("{:.1} us", x / 1e3)
        } else {
            format!("{:.2} ms", x / 1e6)
        }
    };
    let want = format!(
        "min/avg/max/mdev = {} / {} / {} / {}",
        fmt(p.min_ns),
        fmt(p.avg_ns),
        fmt(p.max_ns),
        fmt(p.mdev_ns)
    );
    assert!(text.contains(&want), "{want} not in {text}");
    assert!(text.contains("5 requests completed in"), "{text}");
    assert!(text.contains("generated 6 requests in"), "{text}");
}

/// A long probe keeps flat memory: 100,000 requests one after another, the agent's
/// resident memory at 10,000 and at 100,000 within 2 MiB (a 2-hour probe at 100 ms is
/// 72,000 requests).
#[test]
fn a_long_probe_keeps_flat_memory() {
    let dir = ram_tempdir();
    let file = dir.path().join("p.bin");
    std::fs::write(&file, vec![1u8; 1 << 20]).expect("file");
    let mut child = Command::new(diskscope_bin())
        .args(["probe", "--cached", "--interval", "0", "--count", "100000"])
        .arg(&file)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let pid = child.id();
    let out = BufReader::new(child.stdout.take().expect("stdout"));
    let (mut at_10k, mut at_end, mut n) = (0, 0, 0u64);
    for line in out.lines() {
        let line = line.expect("line");
        if !line.contains("request=") {
            continue;
        }
        n += 1;
        if n == 10_000 {
            at_10k = proc_status_kib(pid, "VmRSS:");
        }
        if n == 99_000 {
            at_end = proc_status_kib(pid, "VmRSS:");
        }
    }
    assert!(child.wait().expect("wait").success());
    assert_eq!(n, 100_000);
    println!("resident memory: {at_10k} KiB at 10,000 requests, {at_end} KiB at 99,000");
    assert!(at_10k > 0 && at_end > 0);
    assert!(
        at_end <= at_10k + 2048,
        "memory grew from {at_10k} KiB to {at_end} KiB"
    );
}

/// `--preset probe` through the API: a run like any other, stored with its requests summed
/// up (`analysis.probe`), the counted ones its I/Os; `idle` is the time between requests.
#[test]
fn the_probe_preset_runs_through_the_api() {
    use serde_json::json;
    use tests::server::Server;
    let data = disk_tempdir();
    let dir = ram_tempdir();
    let file = dir.path().join("p.bin");
    std::fs::write(&file, vec![1u8; 4 << 20]).expect("file");
    let server = Server::start(data.path(), &[dir.path()]);
    let t0 = std::time::Instant::now();
    let id = server.start_run(&json!({"target": file, "preset": "probe",
        "options": {"count": 5, "idle_ms": "200ms"}}));
    let run = server.wait_status(id, "completed");
    let took = t0.elapsed();
    assert_eq!(run["analysis"]["probe"]["count"], 4, "{run}");
    assert_eq!(run["analysis"]["probe"]["requests"], 5, "{run}");
    assert_eq!(run["summary"]["read"]["ios"], 4, "{run}");
    assert_eq!(run["spec"]["probe"]["interval_us"], 200_000, "{run}");
    // Five requests 200 ms apart: 0.8 s from the first to the last.
    assert!(took >= std::time::Duration::from_millis(800), "{took:?}");
}

/// The idle sweep on emulated drives with power states drawn at random (one or two states:
/// entered after 3..80 ms and 4×..400 ms of idle, waking in 1.5..6 ms and 1.6×..20 ms;
/// the seed is printed, `DISKSCOPE_TEST_SEED` repeats it): every state is found, at the
/// first quiet time past its own or the next, with its wake within ±20 %.
#[test]
fn the_idle_sweep_finds_the_emulated_power_states() {
    let seed: u64 = std::env::var("DISKSCOPE_TEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
        });
    println!("seed {seed}");
    let mut x = seed | 1;
    let mut u = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut log = move |lo: f64, hi: f64| (lo.ln() + u() * (hi.ln() - lo.ln())).exp();
    let sweep = shared::probe::IdleSweep::up_to(1_000_000, 3);
    let reports = ram_tempdir();
    for model in 0..3 {
        let (t1, w1) = (log(3.0, 80.0), log(1500.0, 6000.0));
        let mut states = vec![(t1, w1)];
        if model != 1 {
            states.push((log(4.0 * t1, 400.0), log(1.6 * w1, 20_000.0)));
        }
        let json = serde_json::json!({"capacity": 268435456u64, "read_mbps": 2000.0,
            "power_states": states.iter().map(|(t, w)| serde_json::json!({"after_ms": t, "wake_us": w})).collect::<Vec<_>>()});
        let Some(emu) = Emulator::start_or_skip(&json.to_string(), "probe::the_idle_sweep") else {
            return;
        };
        let out_json = reports.path().join(format!("sweep{model}.json"));
        let out = Command::new(diskscope_bin())
            .args([
                "probe",
                "--idle-sweep",
                "--idle-max",
                "1s",
                "--repeat",
                "3",
                "-q",
                "--json",
            ])
            .arg(&out_json)
            .arg(emu.disk())
            .output()
            .expect("probe");
        assert!(out.status.success(), "{}", stderr(&out));
        println!(
            "model {model}: states {states:.1?}\n{}",
            String::from_utf8_lossy(&out.stdout)
        );
        let r = read_report(&out_json);
        let c = r
            .analysis
            .probe
            .and_then(|p| p.idle_curve)
            .expect("the curve");
        assert_eq!(
            c.knees.len(),
            states.len(),
            "model {model}: {states:?}: {:?}",
            c.knees
        );
        for (k, (t_ms, w_us)) in c.knees.iter().zip(&states) {
            let first_past = sweep.idle_us.iter().position(|&i| i as f64 / 1e3 >= *t_ms);
            let found = sweep.idle_us.iter().position(|&i| i == k.idle_us);
            let near = matches!((first_past, found), (Some(a), Some(b)) if a.abs_diff(b) <= 1);
            assert!(
                near,
                "model {model}: a state at {t_ms:.1} ms found at {} µs",
                k.idle_us
            );
            let ratio = k.wake_ns as f64 / 1e3 / w_us;
            assert!(
                (0.8..=1.2).contains(&ratio),
                "model {model}: wake {w_us:.0} µs, found {k:?}"
            );
        }
    }
}

/// A probe left running counts its requests in `/metrics` as they come (its run may last
/// days: an alert on the last minutes' p99 must see them), warm-up excluded, and not
/// again when it ends.
#[test]
fn a_running_probe_shows_in_the_metrics_histogram() {
    use serde_json::json;
    use tests::server::{Server, OP, VIEW};
    let data = disk_tempdir();
    let dir = ram_tempdir();
    let file = dir.path().join("p.bin");
    std::fs::write(&file, vec![1u8; 4 << 20]).expect("file");
    let server = Server::start(data.path(), &[dir.path()]);
    let id = server.start_run(&json!({"target": file, "preset": "probe",
        "options": {"idle_ms": "100ms"}}));
    let count = || {
        let (_, body) = server.get_text("/metrics", VIEW);
        body.lines()
            .find(|l| {
                l.starts_with("diskscope_io_latency_seconds_count")
                    && l.contains("direction=\"read\"")
            })
            .and_then(|l| l.rsplit(' ').next())
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0) as u64
    };
    let t0 = std::time::Instant::now();
    while count() < 5 {
        assert!(
            t0.elapsed() < std::time::Duration::from_secs(15),
            "no requests in /metrics"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let (status, _) = server.post(&format!("/api/v1/runs/{id}/stop"), OP, &json!({}));
    assert_eq!(status, 202);
    let run = server.wait_status(id, "stopped");
    let counted = run["analysis"]["probe"]["count"].as_u64().expect("count");
    assert_eq!(count(), counted, "each counted request once: {run}");
}

/// `--preset load-latency`: the maximum at QD 1 and at the deeper depth, then each offered
/// load a share of the maximum just measured (the rate set when the step starts, stored as
/// run), with Poisson arrivals; no step runs ahead of its offered load (four standard
/// deviations of a Poisson count over the step), and the lightest load is at least half
/// met (how closely is bench material, not a test's).
#[test]
fn offered_loads_are_shares_of_the_measured_maximum() {
    let dir = ram_tempdir();
    let file = dir.path().join("l.bin");
    std::fs::write(&file, vec![3u8; 32 << 20]).expect("file");
    let json = dir.path().join("l.json");
    let out = diskscope(&[
        "run",
        "-q",
        "--target",
        file.to_str().expect("utf8"),
        "--preset",
        "load-latency",
        "--size",
        "32M",
        "--runtime",
        "300ms",
        "--count",
        "4",
        "--json",
        json.to_str().expect("utf8"),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let r = read_report(&json);
    assert_eq!(r.steps.len(), 18);
    for group in r.steps.chunks(9) {
        let max = &group[0];
        assert!(
            max.name.ends_with("maximum") && max.spec.rate.is_none(),
            "{}",
            max.name
        );
        let top = max.summary.read.iops;
        for (s, pct) in group[1..].iter().zip([1u32, 5, 10, 25, 50, 75, 90, 100]) {
            let want = (top * f64::from(pct) / 100.0).round().max(1.0) as u64;
            assert_eq!(s.spec.rate, Some(shared::Rate::Iops(want)), "{}", s.name);
            assert_eq!(s.spec.iodepth, max.spec.iodepth);
            assert_eq!(s.spec.rate_process, shared::pacing::RateProcess::Poisson);
            let got = s.summary.read.iops;
            println!(
                "{}: offered {want}/s, achieved {got:.0}/s, p50 {} ns, p99 {} ns",
                s.name, s.summary.read.lat.p50_ns, s.summary.read.lat.p99_ns
            );
            // The pacer never runs ahead of its offered load. A busy machine (CI) may not
            // keep up with half of a maximum it measured moments before: the machine.
            let expected = want as f64 * s.summary.duration_ns as f64 / 1e9;
            let n = s.summary.read.ios as f64;
            let sigma4 = 4.0 * expected.sqrt() + 2.0;
            assert!(
                n <= expected + sigma4,
                "{}: {n} I/Os, more than the {expected:.0} offered",
                s.name
            );
            // A busy machine (CI, the tests beside this one) stalls a reader for tens of
            // ms, and what the stall misses is not made up (CI kept 4,713 of 13,434/s at
            // 10 %): only the lightest load is held to at least half.
            if pct == 1 {
                assert!(
                    n >= 0.5 * expected - sigma4,
                    "{}: {n} I/Os, {expected:.0} offered",
                    s.name
                );
            }
        }
    }
}
