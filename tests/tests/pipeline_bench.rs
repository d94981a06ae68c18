//! The live pipeline's cost (issue 7, case 3), as a benchmark, not a test: ignored by default.
//! The same 4K random-read QD32 run on a loop device with no subscriber and with 20
//! WebSocket clients, at 100 ms and 1 s intervals, alternating, 3 pairs each; prints the
//! median IOPS ratio, whether every client got every sample, and the agent's resident memory.
//!
//! `cargo build --release -p agent && DISKSCOPE_BIN=$PWD/target/release/diskscope \
//!  cargo test --release -p tests --test pipeline_bench -- --ignored --nocapture`

use serde_json::json;
use shared::api::ClientMsg;
use tests::server::{Server, WsClient, OP};
use tests::*;

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

fn iops(run: &serde_json::Value) -> f64 {
    run["summary"]["read"]["iops"].as_f64().unwrap_or(0.0)
}

#[test]
#[ignore = "a benchmark: run it on purpose (see the file's header)"]
fn streaming_and_persistence_cost() {
    let dev = match LoopDevice::new(512 << 20, 512) {
        Ok(d) => d,
        Err(e) => skip!("no loop device: {e}"),
    };
    require_io_uring!();
    let data = disk_tempdir();
    let server = Server::start(data.path(), &[dev.path.as_path()]);
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let spec = |interval: u64| {
        json!({"target": dev.path_str(), "spec": {"rw": "randread", "bs": 4096, "iodepth": 32,
            "runtime_ms": 5000, "interval_ms": interval}})
    };
    for interval in [100u64, 1000] {
        let mut ratios = Vec::new();
        let mut complete = true;
        for _ in 0..3 {
            let id = server.start_run(&spec(interval));
            let alone = iops(&server.wait_status(id, "completed"));
            let (with, all_got_all) = rt.block_on(async {
                let mut clients = Vec::new();
                for _ in 0..20 {
                    let mut c = WsClient::connect(&server, OP, true).await;
                    c.send(&ClientMsg::SubscribeActive).await;
                    clients.push(c);
                }
                // Let every subscription land before the run starts.
                tokio::time::sleep(std::time::Duration::from_millis(300)).await;
                let id = server.start_run(&spec(interval));
                let mut tasks = Vec::new();
                for mut c in clients {
                    tasks.push(tokio::spawn(async move { c.collect_until_end(id).await.0 }));
                }
                let mut got = Vec::new();
                for t in tasks {
                    got.push(t.await.expect("client"));
                }
                let run = server.wait_status(id, "completed");
                let n = run["summary"]["samples"].as_u64().unwrap_or(0) as usize;
                let ok = got.iter().all(|seqs| {
                    let mut s: Vec<u64> =
                        seqs.iter().copied().filter(|q| (*q as usize) < n).collect();
                    s.sort_unstable();
                    s.dedup();
                    s.len() == n
                });
                (iops(&run), ok)
            });
            complete &= all_got_all;
            ratios.push(with / alone);
        }
        ratios.sort_by(f64::total_cmp);
        println!(
            "interval {interval} ms: IOPS with 20 clients / without = {:.3} (pairs {:?}); every client got every sample: {complete}",
            ratios[1],
            ratios.iter().map(|r| format!("{r:.3}")).collect::<Vec<_>>()
        );
        assert!(complete, "a client missed samples at {interval} ms");
    }
    println!(
        "agent resident memory after the runs: {} MiB",
        rss_kib(server.pid()) / 1024
    );
}
