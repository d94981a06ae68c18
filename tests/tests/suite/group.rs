//! Group runs: one workload on several real agents (loopback ports) at a shared start,
//! merged on the hub that coordinated it (`POST /api/v1/groups`) or by the CLI
//! (`diskscope run --agent A --agent B`). The merge is checked against the agents' own
//! exported results: totals, the exact merge of their histograms, the shared clock, and an
//! agent killed mid-run.

use serde_json::{json, Value};
use std::time::{Duration, Instant};
use tests::server::{Server, OP, VIEW};
use tests::*;

/// `diskscope run --agent A --agent B … --token OP --target TARGET ARGS`: a group from the
/// command line.
fn group_cli(urls: &[&str], target: &str, args: &[&str]) -> std::process::Output {
    let mut all = vec!["run"];
    for u in urls {
        all.extend(["--agent", u]);
    }
    all.extend(["--token", OP, "--target", target]);
    all.extend_from_slice(args);
    diskscope(&all)
}

/// `n` agents, each with its own data directory, all allowed to use `shared`.
fn agents(n: usize, shared: &std::path::Path) -> (Vec<tempfile::TempDir>, Vec<Server>) {
    let dirs: Vec<tempfile::TempDir> = (0..n).map(|_| disk_tempdir()).collect();
    let servers = dirs
        .iter()
        .map(|d| Server::start(d.path(), &[shared]))
        .collect();
    (dirs, servers)
}

fn url(s: &Server) -> String {
    format!("http://{}", s.addr)
}

/// An address where nothing listens.
fn unreachable() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = l.local_addr().expect("addr").port();
    drop(l);
    format!("http://127.0.0.1:{port}")
}

/// The group request: `run` with the agents it runs on (and `extra` members).
fn group_request(run: &Value, urls: &[String], extra: Value) -> Value {
    let mut body = run.clone();
    body["agents"] = members(urls);
    if let (Some(b), Some(e)) = (body.as_object_mut(), extra.as_object()) {
        b.extend(e.clone());
    }
    body
}

fn members(urls: &[String]) -> Value {
    Value::Array(
        urls.iter()
            .map(|u| json!({"address": u, "token": OP}))
            .collect(),
    )
}

/// The export of run `id` on `s` as a report.
fn export(s: &Server, id: i64) -> shared::RunReport {
    let (status, text) = s.get_text(&format!("/api/v1/runs/{id}/export?format=json"), VIEW);
    assert_eq!(status, 200, "{text}");
    serde_json::from_str(&text).expect("report")
}

/// The p99 of the read histograms of `reports` merged bucket by bucket, computed as the
/// agent computes a percentile (the bucket's value at the rank, within the merged bounds).
fn merged_p99(reports: &[shared::RunReport]) -> u64 {
    let mut counts = std::collections::BTreeMap::<u32, (u64, u64)>::new();
    for r in reports {
        for b in &r.histogram.read {
            let e = counts.entry(b.index).or_insert((b.ns, 0));
            e.1 += b.count;
        }
    }
    let total: u64 = counts.values().map(|(_, n)| n).sum();
    let min = reports.iter().map(|r| r.summary.read.lat.min_ns).min();
    let max = reports.iter().map(|r| r.summary.read.lat.max_ns).max();
    let rank = ((0.99 * total as f64).ceil() as u64).max(1);
    let mut seen = 0;
    for (ns, n) in counts.values() {
        seen += n;
        if seen >= rank {
            return (*ns).clamp(min.unwrap_or(0), max.unwrap_or(u64::MAX));
        }
    }
    max.unwrap_or(0)
}

fn within(a: f64, b: f64, pct: f64) -> bool {
    (a - b).abs() <= b.abs() * pct / 100.0
}

/// Three agents and an unreachable fourth: the group is refused naming the fourth, with
/// nothing started anywhere; the three alone run a rate-capped random read as one group
/// whose merged result is the sum of theirs: total within 1 %, p99 from the exact merge
/// of their histograms, every agent started within one interval of the shared start.
#[test]
fn a_group_of_three_agents_merges_to_the_sum_of_their_own_results() {
    require_io_uring!();
    let shared_dir = disk_tempdir();
    let target = laid_out_file(shared_dir.path(), "shared.bin");
    let (_dirs, servers) = agents(3, shared_dir.path());
    let hub = &servers[0];
    let mut urls: Vec<String> = servers.iter().map(url).collect();
    let run = json!({"target": target, "name": "group read", "spec": {
        "rw": "randread", "bs": 4096, "size": 64 << 20, "iodepth": 2,
        "runtime_ms": 3000, "interval_ms": 100, "rate": "400iops"}});

    let gone = unreachable();
    urls.push(gone.clone());
    let (status, refused) = hub.post("/api/v1/groups", OP, &group_request(&run, &urls, json!({})));
    assert_eq!(status, 502, "{refused}");
    assert!(
        refused["message"].as_str().unwrap_or("").contains(&gone),
        "the refusal names the agent it cannot reach: {refused}"
    );
    for s in &servers {
        let (_, runs) = s.get("/api/v1/runs", VIEW);
        assert_eq!(runs["total"], 0, "nothing started on {}: {runs}", s.addr);
    }
    urls.pop();

    let (status, created) = hub.post("/api/v1/groups", OP, &group_request(&run, &urls, json!({})));
    assert_eq!(status, 201, "{created}");
    let id = created["id"].as_i64().expect("id");
    hub.wait_status_within(id, "completed", Duration::from_secs(30));
    let merged = export(hub, id);
    let group = merged.analysis.group.clone().expect("the group's hosts");
    assert_eq!(group.hosts.len(), 3);
    let own: Vec<shared::RunReport> = group
        .hosts
        .iter()
        .zip(&servers)
        .map(|(h, s)| export(s, h.run_id.expect("its run")))
        .collect();
    for (h, r) in group.hosts.iter().zip(&own) {
        println!(
            "{}: clock offset {:+.3} ms over a {:.3} ms round trip, started {:+.1} ms, {:.1} IOPS",
            h.address,
            h.offset_ms,
            h.delay_ms,
            h.started_ms.unwrap_or(f64::NAN),
            r.summary.read.iops
        );
        assert_eq!(r.status, shared::RunStatus::Completed);
        assert!(h.offset_ms.abs() < 50.0, "one machine's clock: {h:?}");
        let started = h.started_ms.expect("its start on the shared clock");
        assert!(
            started.abs() < f64::from(merged.spec.interval_ms as u32),
            "{} started {started:.1} ms off the shared start",
            h.address
        );
    }
    let ios: u64 = own.iter().map(|r| r.summary.read.ios).sum();
    let bytes: u64 = own.iter().map(|r| r.summary.read.bytes).sum();
    let iops: f64 = own.iter().map(|r| r.summary.read.iops).sum();
    println!(
        "merged {} I/Os, {:.1} IOPS, p99 {} ns; the agents' sum {ios} I/Os, {iops:.1} IOPS, p99 of their merged histograms {} ns",
        merged.summary.read.ios,
        merged.summary.read.iops,
        merged.summary.read.lat.p99_ns,
        merged_p99(&own)
    );
    assert_eq!(merged.summary.read.ios, ios);
    assert_eq!(merged.summary.read.bytes, bytes);
    // The group's rate is its I/Os over its own time, from the shared start to the last
    // host's end (elbencho's last-done): the sum of the hosts' rates only when every host
    // ran as long (one CI run under load had hosts of 2.99 s and 3.13 s: 1,145 against a sum
    // of 1,164).
    let secs = merged.summary.duration_ns as f64 / 1e9;
    assert!(
        within(
            merged.summary.read.iops,
            merged.summary.read.ios as f64 / secs,
            0.1
        ),
        "{} IOPS over {secs} s",
        merged.summary.read.iops
    );
    assert!(
        within(merged.summary.read.iops, iops, 5.0),
        "merged {} IOPS, the hosts' rates add up to {iops}",
        merged.summary.read.iops
    );
    assert!(
        within(iops, 3.0 * 400.0, 10.0),
        "three capped agents: {iops}"
    );
    assert_eq!(merged.summary.read.lat.p99_ns, merged_p99(&own));
    // Per interval: the sum of the hosts' parts, one part per host.
    assert!(merged.samples.len() >= 25, "{}", merged.samples.len());
    for s in &merged.samples {
        let parts: u64 = s.parts.iter().map(|p| p.bytes).sum();
        assert_eq!(s.read.bytes, parts, "interval {}", s.seq);
    }
    let full = merged.samples.iter().filter(|s| s.parts.len() == 3).count();
    assert!(
        full + 2 >= merged.samples.len(),
        "aligned intervals: {full}"
    );
    assert_eq!(merged.targets.len(), 3);
    for (t, h) in merged.targets.iter().zip(&group.hosts) {
        assert!(
            t.path.starts_with(&h.address),
            "{} for {}",
            t.path,
            h.address
        );
    }
    // Last-done is the group's own rate: its I/Os over the shared start to the last end.
    assert!(
        within(group.last_done.iops, merged.summary.read.iops, 1.0),
        "{:?}, merged {} IOPS",
        group.last_done,
        merged.summary.read.iops
    );
    assert!(group.stonewall.seconds > 2.5, "{:?}", group.stonewall);
    // Each agent counts its own I/O in /metrics; the hub does not count the group again.
    let (_, metrics) = hub.get_text("/metrics", VIEW);
    assert!(
        !metrics.contains("group of"),
        "the group's I/O is not the hub's: {metrics}"
    );
    // The merged run is a run of the hub like any: its history line, its fio client JSON.
    let (_, runs) = hub.get("/api/v1/runs", VIEW);
    assert!(
        runs["runs"][0]["target"]
            .as_str()
            .unwrap_or("")
            .starts_with("group of 3"),
        "{runs}"
    );
    let (status, fio) = hub.get_text(&format!("/api/v1/runs/{id}/export?format=fio-json"), VIEW);
    assert_eq!(status, 200, "{fio}");
    let fio: Value = serde_json::from_str(&fio).expect("fio json");
    let clients = fio["client_stats"].as_array().expect("client_stats");
    assert_eq!(clients.len(), 4, "three hosts and All clients: {fio}");
    assert_eq!(clients[3]["jobname"], "All clients");
    assert_eq!(clients[3]["read"]["total_ios"], json!(ios));

    // A fio job file as the group's workload: every member runs the job on its target.
    let job = json!({"target": target,
        "fio_job": "[reader]\nrw=randread\nbs=4k\nsize=16m\nruntime=1\ntime_based\nrate_iops=300\n"});
    let (status, created) = hub.post("/api/v1/groups", OP, &group_request(&job, &urls, json!({})));
    assert_eq!(status, 201, "{created}");
    let id = created["id"].as_i64().expect("id");
    hub.wait_status_within(id, "completed", Duration::from_secs(30));
    let merged = export(hub, id);
    let group = merged.analysis.group.clone().expect("group");
    let own: u64 = group
        .hosts
        .iter()
        .zip(&servers)
        .map(|(h, s)| export(s, h.run_id.expect("run")).summary.read.ios)
        .sum();
    assert_eq!(merged.targets.len(), 3);
    assert_eq!(merged.summary.read.ios, own, "a job file's group");
    assert!(
        within(merged.summary.read.iops, 900.0, 10.0),
        "{}",
        merged.summary.read.iops
    );
}

/// A member killed mid-run is marked gone at the time it left; the others run to their end
/// with their data intact, and what the killed one sent before is kept; with
/// `on_fault: stop` they are stopped instead. A stop on the hub stops every member.
#[test]
fn an_agent_killed_mid_run_is_marked_gone_and_a_stop_on_the_hub_stops_all() {
    require_io_uring!();
    let shared_dir = disk_tempdir();
    let target = laid_out_file(shared_dir.path(), "shared.bin");
    let (_dirs, mut servers) = agents(4, shared_dir.path());
    let all: Vec<String> = servers.iter().map(url).collect();
    let urls = &all[..3];
    let run = json!({"target": target, "spec": {
        "rw": "randread", "bs": 4096, "size": 64 << 20, "iodepth": 2,
        "runtime_ms": 4000, "interval_ms": 100, "rate": "300iops"}});
    let (status, created) =
        servers[0].post("/api/v1/groups", OP, &group_request(&run, urls, json!({})));
    assert_eq!(status, 201, "{created}");
    let id = created["id"].as_i64().expect("id");
    servers[0].wait_samples(id, 15);
    let now_ms = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("clock")
            .as_millis() as u64
    };
    // The kill lands between these two readings (kill9 also reaps, which can take a while).
    let before_kill = now_ms();
    servers[2].kill9();
    let killed_ms = now_ms();
    let info = servers[0].wait_status_within(id, "failed", Duration::from_secs(30));
    let merged = export(&servers[0], id);
    let group = merged.analysis.group.clone().expect("group");
    let left = group.hosts[2].left_ms.expect("the killed agent left");
    let (from, to) = (before_kill - group.start_ms, killed_ms - group.start_ms);
    println!(
        "killed between {from} and {to} ms, marked gone at {left} ms: {}",
        info["status"]
    );
    assert!(
        left >= from && left <= to + 1500,
        "gone at {left} ms, killed between {from} and {to} ms"
    );
    assert!(group.hosts[..2].iter().all(|h| h.left_ms.is_none()));
    assert!(merged
        .error
        .as_ref()
        .is_some_and(|e| e.message.contains(&urls[2])));
    for (i, s) in servers[..2].iter().enumerate() {
        let own = export(s, group.hosts[i].run_id.expect("run"));
        assert_eq!(own.status, shared::RunStatus::Completed);
        assert_eq!(
            merged.targets[i].summary.read.bytes, own.summary.read.bytes,
            "host {i}'s data intact"
        );
    }
    let kept = merged.targets[2].summary.read.bytes;
    assert!(
        kept > 0,
        "what the killed agent sent before it left is kept"
    );
    assert!(merged.summary.read.bytes >= kept + merged.targets[0].summary.read.bytes);

    // With on_fault = stop, the others are stopped when one leaves.
    let urls = [all[0].clone(), all[1].clone(), all[3].clone()];
    let (status, created) = servers[0].post(
        "/api/v1/groups",
        OP,
        &group_request(&run, &urls, json!({"on_fault": "stop"})),
    );
    assert_eq!(status, 201, "{created}");
    let id = created["id"].as_i64().expect("id");
    servers[0].wait_samples(id, 10);
    servers[3].kill9();
    servers[0].wait_status_within(id, "failed", Duration::from_secs(30));
    let merged = export(&servers[0], id);
    let group = merged.analysis.group.clone().expect("group");
    assert!(group.hosts[2].left_ms.is_some());
    for (i, s) in servers[..2].iter().enumerate() {
        let own = export(s, group.hosts[i].run_id.expect("run"));
        assert_eq!(own.status, shared::RunStatus::Stopped, "host {i} stopped");
        assert!(
            own.summary.duration_ns < 3_500_000_000,
            "{}",
            own.summary.duration_ns
        );
    }

    // A stop on the hub stops every member.
    let urls = &all[..2];
    let run = json!({"target": target, "spec": {
        "rw": "randread", "bs": 4096, "size": 64 << 20, "runtime_ms": 60000, "rate": "100iops"}});
    let (status, created) =
        servers[0].post("/api/v1/groups", OP, &group_request(&run, urls, json!({})));
    assert_eq!(status, 201, "{created}");
    let id = created["id"].as_i64().expect("id");
    servers[0].wait_samples(id, 3);
    let t = Instant::now();
    let (status, _) = servers[0].post(&format!("/api/v1/runs/{id}/stop"), OP, &json!({}));
    assert_eq!(status, 202);
    servers[0].wait_status_within(id, "stopped", Duration::from_secs(15));
    let group = export(&servers[0], id).analysis.group.expect("group");
    for (h, s) in group.hosts.iter().zip(&servers) {
        let r = export(s, h.run_id.expect("run"));
        assert_eq!(r.status, shared::RunStatus::Stopped, "{}", h.address);
    }
    println!("the group stopped in {:?}", t.elapsed());
}

/// The CLI coordinates a group itself: `--agent A --agent B` (or `--agents FILE`) prints
/// the merged result and each host, and exits as a local run would: a sustain miss of the
/// total exits 1.
#[test]
fn the_cli_runs_a_group_and_exits_like_a_local_run() {
    require_io_uring!();
    let shared_dir = disk_tempdir();
    let target = shared_dir.path().join("sustain.bin");
    let target = target.to_str().expect("utf8");
    let (_dirs, servers) = agents(2, shared_dir.path());
    let (a, b) = (url(&servers[0]), url(&servers[1]));
    let out = group_cli(
        &[&a, &b],
        target,
        &[
            "--preset",
            "sustain",
            "--rate",
            "100GB",
            "--runtime",
            "2s",
            "--size",
            "32M",
        ],
    );
    let (stdout, err) = (String::from_utf8_lossy(&out.stdout), stderr(&out));
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{err}");
    assert!(err.contains("did not sustain the required rate"), "{err}");
    assert!(
        stdout.contains("group of 2 host(s)") && stdout.contains("stonewall"),
        "{stdout}"
    );
    assert!(err.contains(&format!("run 1 on {a}")), "{err}");

    // From a file of agents and token files: a plain read passes.
    let list = shared_dir.path().join("agents.txt");
    std::fs::write(shared_dir.path().join("op.token"), format!("{OP}\n")).expect("token");
    std::fs::write(&list, format!("# the lab\n{a} op.token\n{b} op.token\n")).expect("list");
    let json = shared_dir.path().join("group.json");
    let out = diskscope(&[
        "run",
        "--agents",
        list.to_str().expect("utf8"),
        "--target",
        target,
        "--rw",
        "read",
        "--runtime",
        "1s",
        "--json",
        json.to_str().expect("utf8"),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let r = read_report(&json);
    assert_eq!(r.targets.len(), 2);
    assert_eq!(
        r.summary.read.bytes,
        r.targets.iter().map(|t| t.summary.read.bytes).sum::<u64>()
    );

    // A preset of several steps: each merged step is the sum of the hosts' same step.
    let out = group_cli(
        &[&a, &b],
        target,
        &[
            "--preset",
            "cdm",
            "--count",
            "1",
            "--runtime",
            "300ms",
            "--idle",
            "100ms",
            "--size",
            "32M",
            "--json",
            json.to_str().expect("utf8"),
        ],
    );
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    let merged = read_report(&json);
    let ids: Vec<(&Server, i64)> = servers
        .iter()
        .map(|s| {
            let tail = format!(" on http://{}", s.addr);
            let line = err
                .lines()
                .rfind(|l| l.ends_with(&tail))
                .unwrap_or_else(|| panic!("no run on {}: {err}", s.addr));
            let id = line
                .trim_start_matches("diskscope: run ")
                .trim_end_matches(&tail);
            (s, id.parse().expect("run id"))
        })
        .collect();
    let own: Vec<shared::RunReport> = ids.iter().map(|(s, id)| export(s, *id)).collect();
    assert!(merged.steps.len() >= 8, "{} steps", merged.steps.len());
    for (k, step) in merged.steps.iter().enumerate() {
        let ios = |r: &shared::RunReport| {
            let s = &r.steps[k].summary;
            s.read.ios + s.write.ios
        };
        assert_eq!(
            step.summary.read.ios + step.summary.write.ios,
            own.iter().map(ios).sum::<u64>(),
            "step {k} ({})",
            step.name
        );
    }
    println!(
        "{} merged steps; CrystalDiskMark's grid from them:\n{}",
        merged.steps.len(),
        String::from_utf8_lossy(&out.stdout)
    );
}

/// libfaketime, which shifts the wall clock of the process it is preloaded into.
const FAKETIME: &str = "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1";

/// A member whose clock is 10 s ahead (a real agent under libfaketime): the group is refused
/// naming its offset and the limit, with nothing started; with the limit raised, the member
/// is told the shared start in its own clock and starts with the others, within one
/// interval, as measured on the coordinator's clock.
#[test]
fn a_member_whose_clock_is_off_is_refused_by_name_or_started_on_the_shared_clock() {
    require_io_uring!();
    if !std::path::Path::new(FAKETIME).exists() {
        skip!(Missing::Tool, "no libfaketime (apt-get install faketime)");
    }
    let shared_dir = disk_tempdir();
    let target = laid_out_file(shared_dir.path(), "shared.bin");
    let dirs: Vec<tempfile::TempDir> = (0..2).map(|_| disk_tempdir()).collect();
    let hub = Server::start(dirs[0].path(), &[shared_dir.path()]);
    let ahead = Server::start_env(
        dirs[1].path(),
        &[shared_dir.path()],
        &[],
        &[
            ("LD_PRELOAD", FAKETIME),
            ("FAKETIME", "+10s"),
            ("DONT_FAKE_MONOTONIC", "1"),
        ],
    );
    let urls = [url(&hub), url(&ahead)];
    let run = json!({"target": target, "spec": {
        "rw": "randread", "bs": 4096, "size": 64 << 20, "runtime_ms": 2000,
        "interval_ms": 100, "rate": "200iops"}});
    let (status, refused) = hub.post("/api/v1/groups", OP, &group_request(&run, &urls, json!({})));
    let message = refused["message"].as_str().unwrap_or("").to_string();
    println!("{status}: {message}");
    assert_eq!(status, 409, "{refused}");
    assert_eq!(refused["code"], "clock_offset");
    assert!(
        message.contains(&urls[1]) && message.contains("max_offset_ms = 500"),
        "{message}"
    );
    for s in [&hub, &ahead] {
        let (_, runs) = s.get("/api/v1/runs", VIEW);
        assert_eq!(runs["total"], 0, "nothing started on {}: {runs}", s.addr);
    }

    let body = group_request(&run, &urls, json!({"max_offset_ms": 15000}));
    let (status, created) = hub.post("/api/v1/groups", OP, &body);
    assert_eq!(status, 201, "{created}");
    let id = created["id"].as_i64().expect("id");
    hub.wait_status_within(id, "completed", Duration::from_secs(30));
    let merged = export(&hub, id);
    let group = merged.analysis.group.expect("group");
    let off = &group.hosts[1];
    println!(
        "{}: clock {:+.1} ms over a {:.2} ms round trip, started {:+.1} ms on the shared clock",
        off.address,
        off.offset_ms,
        off.delay_ms,
        off.started_ms.unwrap_or(f64::NAN)
    );
    assert!(
        (off.offset_ms - 10_000.0).abs() < 100.0,
        "the offset measured: {off:?}"
    );
    for h in &group.hosts {
        let started = h.started_ms.expect("started");
        assert!(
            started.abs() < 100.0,
            "{} started {started} ms off",
            h.address
        );
    }
    let full = merged.samples.iter().filter(|s| s.parts.len() == 2).count();
    let shape: Vec<(u64, Vec<u32>)> = merged
        .samples
        .iter()
        .map(|s| (s.seq, s.parts.iter().map(|p| p.target).collect()))
        .collect();
    // (In one CI run under load 2 of 20 intervals held one host's part: not reproduced
    // under four CPU hogs here; the start itself is checked to the millisecond above.)
    assert!(
        full + 2 >= merged.samples.len(),
        "{full} of {}: {shape:?}",
        merged.samples.len()
    );
}
