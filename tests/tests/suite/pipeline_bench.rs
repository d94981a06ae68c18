//! The live pipeline's cost (case 3 of `bench/run.sh`), as a benchmark, not a test: ignored by default,
//! run by `bench/run.sh`.
//!
//! The same 4K random-read QD32 run on a loop device backed by /dev/shm three ways, in
//! alternating triples: the CLI alone (no service, no database), `diskscope serve` with no
//! client (persisting to SQLite), and `diskscope serve` streaming to 20 WebSocket clients
//! (persisting too); at 100 ms and 1 s intervals. Every client must get every sample and the
//! database must hold every sample. Then one long run (10 minutes unless told otherwise) at
//! 100 ms with 20 clients, the agent's resident memory sampled throughout.
//!
//! `cargo build --release -p agent && DISKSCOPE_BIN=$PWD/target/release/diskscope \
//!  cargo test --release -p tests --test suite pipeline_bench -- --ignored --nocapture`
//! Knobs (environment): DISKSCOPE_BENCH_PAIRS (3), DISKSCOPE_BENCH_RUN_SECS (5),
//! DISKSCOPE_BENCH_RSS_SECS (600; 0 skips the long run), DISKSCOPE_BENCH_OUT (a JSON file
//! for bench/report.py).

use serde_json::{json, Value};
use shared::api::ClientMsg;
use std::time::{Duration, Instant};
use tests::server::{Server, WsClient, OP, VIEW};
use tests::*;

const CLIENTS: usize = 20;

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// CPU seconds (user + sys) the process has used, its exited threads included.
fn process_cpu(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command name (which may hold spaces): utime and stime are 14 and 15.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<u64> = rest
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|v| v.parse().ok())
        .collect();
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    f.iter().sum::<u64>() as f64 / hz
}

/// CPU seconds used by waited-for children so far.
fn children_cpu() -> f64 {
    // SAFETY: rusage is a plain C struct (all-zero is valid) that getrusage fills in.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru);
        ru
    };
    let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    t(ru.ru_utime) + t(ru.ru_stime)
}

fn ios(run: &Value) -> f64 {
    run["summary"]["read"]["ios"].as_f64().unwrap_or(0.0)
}

fn iops(run: &Value) -> f64 {
    run["summary"]["read"]["iops"].as_f64().unwrap_or(0.0)
}

fn median(xs: &[f64]) -> f64 {
    let mut s = xs.to_vec();
    s.sort_by(f64::total_cmp);
    s[s.len() / 2]
}

/// The run on the CLI alone (no service, no database, no clients): IOPS and CPU µs per I/O
/// of the whole process.
fn cli_run(dev: &str, secs: u64, interval_ms: u64) -> (f64, f64) {
    let cpu0 = children_cpu();
    let out = disk_tempdir();
    let json = out.path().join("run.json");
    let o = ds(&format!(
        "run --target {dev} --rw randread --bs 4k --iodepth 32 --runtime {secs}s \
         --interval-ms {interval_ms} -q --json {}",
        json.display()
    ));
    assert!(o.status.success(), "CLI run failed: {}", stderr(&o));
    let cpu = children_cpu() - cpu0;
    let r = read_report(&json).summary.read;
    (r.iops, cpu / r.ios.max(1) as f64 * 1e6)
}

/// What one served run measured.
struct Served {
    iops: f64,
    /// CPU µs per I/O of the whole agent (job, runner, store, WebSocket threads).
    cpu_us_per_io: f64,
    /// Every client got every sample and the database holds them all.
    complete: bool,
    samples: usize,
}

/// Starts the run with `clients` subscribers and measures it.
fn served(rt: &tokio::runtime::Runtime, server: &Server, spec: &Value, clients: usize) -> Served {
    rt.block_on(async {
        let mut subs = Vec::new();
        for _ in 0..clients {
            let mut c = WsClient::connect(server, OP, true).await;
            c.send(&ClientMsg::SubscribeActive { max_points: None })
                .await;
            subs.push(c);
        }
        // Let every subscription land before the run starts.
        tokio::time::sleep(Duration::from_millis(300)).await;
        let cpu0 = process_cpu(server.pid());
        let id = server.start_run(spec);
        let tasks: Vec<_> = subs
            .into_iter()
            .map(|mut c| tokio::spawn(async move { c.collect_until_end(id).await.0 }))
            .collect();
        let mut got = Vec::new();
        for t in tasks {
            got.push(t.await.expect("client"));
        }
        let secs = spec["spec"]["runtime_ms"].as_u64().unwrap_or(0) / 1000;
        let run = server.wait_status_within(id, "completed", Duration::from_secs(secs + 60));
        let cpu = process_cpu(server.pid()) - cpu0;
        let n = run["summary"]["samples"].as_u64().unwrap_or(0) as usize;
        let (_, stored) = server.get(&format!("/api/v1/runs/{id}/samples"), VIEW);
        let stored = stored["samples"].as_array().map_or(0, Vec::len);
        let every = got.iter().all(|seqs| {
            let mut s: Vec<u64> = seqs.iter().copied().filter(|q| (*q as usize) < n).collect();
            s.sort_unstable();
            s.dedup();
            s.len() == n
        });
        Served {
            iops: iops(&run),
            cpu_us_per_io: cpu / ios(&run).max(1.0) * 1e6,
            complete: every && stored == n,
            samples: n,
        }
    })
}

#[test]
#[ignore = "a benchmark: run it on purpose (see the file's header)"]
fn streaming_and_persistence_cost() {
    let dev = match LoopDevice::in_memory(1 << 30) {
        Ok(d) => d,
        Err(e) => skip!(Missing::LoopDevice, "no loop device: {e}"),
    };
    require_io_uring!();
    let pairs = knob("DISKSCOPE_BENCH_PAIRS", 3).max(1);
    let secs = knob("DISKSCOPE_BENCH_RUN_SECS", 5).max(1);
    let rss_secs = knob("DISKSCOPE_BENCH_RSS_SECS", 600);
    // Real data on the device first: a never-written tmpfs page reads faster than a written one.
    let o = ds(&format!(
        "run --target {} --rw write --bs 1M --iodepth 8 -q",
        dev.path_str()
    ));
    assert!(o.status.success(), "fill: {}", stderr(&o));
    let data = disk_tempdir();
    let server = Server::start(data.path(), &[dev.path.as_path()]);
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let spec = |interval: u64, secs: u64| {
        json!({"target": dev.path_str(), "spec": {"rw": "randread", "bs": 4096, "iodepth": 32,
            "runtime_ms": secs * 1000, "interval_ms": interval}})
    };
    let mut intervals = Vec::new();
    for interval in [100u64, 1000] {
        let (mut cli, mut alone, mut streamed) = (Vec::new(), Vec::new(), Vec::new());
        let (mut cli_cpu, mut alone_cpu, mut streamed_cpu) = (Vec::new(), Vec::new(), Vec::new());
        let mut complete = true;
        let mut samples = 0;
        for _ in 0..pairs {
            let (i, c) = cli_run(dev.path_str(), secs, interval);
            cli.push(i);
            cli_cpu.push(c);
            let a = served(&rt, &server, &spec(interval, secs), 0);
            alone.push(a.iops);
            alone_cpu.push(a.cpu_us_per_io);
            let s = served(&rt, &server, &spec(interval, secs), CLIENTS);
            streamed.push(s.iops);
            streamed_cpu.push(s.cpu_us_per_io);
            complete &= s.complete && a.complete;
            samples = s.samples;
        }
        let expected = (secs * 1000 / interval) as usize;
        let ratio =
            |a: &[f64], b: &[f64]| median(&a.iter().zip(b).map(|(x, y)| x / y).collect::<Vec<_>>());
        let row = json!({
            "interval_ms": interval,
            "cli_iops": cli, "serve_alone_iops": alone, "serve_20_clients_iops": streamed,
            "cli_cpu_us_per_io": cli_cpu, "serve_alone_cpu_us_per_io": alone_cpu,
            "serve_20_clients_cpu_us_per_io": streamed_cpu,
            "ratio_streamed_vs_cli": ratio(&streamed, &cli),
            "ratio_streamed_vs_alone": ratio(&streamed, &alone),
            "ratio_alone_vs_cli": ratio(&alone, &cli),
            "cpu_ratio_streamed_vs_cli": ratio(&streamed_cpu, &cli_cpu),
            "every_client_every_sample": complete,
            "samples": samples, "expected_samples": expected,
        });
        println!("{row}");
        assert!(
            complete,
            "a client or the database missed samples at {interval} ms"
        );
        assert_eq!(
            samples, expected,
            "samples of a {secs} s run at {interval} ms"
        );
        intervals.push(row);
    }
    let mut long = Value::Null;
    if rss_secs > 0 {
        let pid = server.pid();
        let start = rss_kib(pid);
        let mut trace = Vec::new();
        let r = std::thread::scope(|s| {
            let watch = s.spawn(|| {
                let t0 = Instant::now();
                let mut points = Vec::new();
                while t0.elapsed() < Duration::from_secs(rss_secs + 2) {
                    points.push((t0.elapsed().as_secs(), rss_kib(pid)));
                    std::thread::sleep(Duration::from_secs(5));
                }
                points
            });
            let r = served(&rt, &server, &spec(100, rss_secs), CLIENTS);
            trace = watch.join().expect("watcher");
            r
        });
        let end = rss_kib(pid);
        let peak = trace.iter().map(|p| p.1).max().unwrap_or(end).max(end);
        let (n, every) = (r.samples, r.complete);
        long = json!({"seconds": rss_secs, "interval_ms": 100, "clients": CLIENTS,
            "iops": r.iops, "samples": n, "every_client_every_sample": every,
            "rss_kib_before": start, "rss_kib_end": end, "rss_kib_peak": peak,
            "rss_trace": trace});
        println!(
            "{rss_secs} s run at 100 ms with {CLIENTS} clients: RSS {} -> {} KiB (peak {peak}), {n} samples, every client got every one: {every}",
            start, end
        );
        assert!(
            every,
            "a client or the database missed samples in the long run"
        );
    }
    if let Ok(out) = std::env::var("DISKSCOPE_BENCH_OUT") {
        let doc = json!({"pairs": pairs, "run_secs": secs, "clients": CLIENTS,
            "device": "loop device backed by a file in /dev/shm", "intervals": intervals,
            "long_run": long, "rss_kib_after": rss_kib(server.pid())});
        std::fs::write(&out, serde_json::to_string_pretty(&doc).expect("json"))
            .unwrap_or_else(|e| panic!("{out}: {e}"));
    }
}
