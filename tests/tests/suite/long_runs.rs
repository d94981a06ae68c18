//! Long runs against a real `diskscope serve`: a 100,000-sample history (2.8 hours at
//! 100 ms) opens as an envelope of the points a chart needs, zooms into a range, and exports
//! as JSON and CSV streamed from the database at flat memory.

use std::io::{BufRead, BufReader};
use tests::history::synthetic_run;
use tests::server::{Server, VIEW};
use tests::*;

#[test]
fn a_long_history_opens_as_an_envelope_zooms_and_exports_at_flat_memory() {
    let data = disk_tempdir();
    let n = 100_000u64;
    let (id, slow, fast) = synthetic_run(&data.path().join("diskscope.db"), n, 100, 2000.0, 7);
    let server = Server::start(data.path(), &[data.path()]);

    // The chart's view: at most 1,000 points, in order, the extremes kept.
    let (status, v) = server.get(&format!("/api/v1/runs/{id}/samples?max_points=1000"), VIEW);
    assert_eq!(status, 200, "{v}");
    let seqs: Vec<u64> = v["samples"]
        .as_array()
        .expect("samples")
        .iter()
        .map(|s| s["seq"].as_u64().expect("seq"))
        .collect();
    assert!(
        seqs.len() <= 1000 && seqs.len() >= 900,
        "{} points",
        seqs.len()
    );
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "in seq order");
    assert!(
        seqs.contains(&slow) && seqs.contains(&fast),
        "slowest {slow} and fastest {fast} kept"
    );
    assert_eq!(seqs.first(), Some(&0));
    assert!(
        seqs.last().is_some_and(|&l| l >= n - 200),
        "reaches the end: {:?}",
        seqs.last()
    );
    // Every stall (one empty interval per 1,000) is in the envelope.
    for stall in (999..n).step_by(1000) {
        assert!(seqs.contains(&stall), "stall at {stall} lost");
    }

    // Zoomed in: a range that fits is returned whole.
    let (status, v) = server.get(
        &format!("/api/v1/runs/{id}/samples?max_points=1000&from_seq=5000&to_seq=5999"),
        VIEW,
    );
    assert_eq!(status, 200, "{v}");
    let zoom: Vec<u64> = v["samples"]
        .as_array()
        .expect("samples")
        .iter()
        .map(|s| s["seq"].as_u64().expect("seq"))
        .collect();
    assert_eq!(zoom, (5000..6000).collect::<Vec<u64>>());

    // Bad requests name the value.
    for (q, want) in [
        ("max_points=1", "max_points = 1"),
        ("max_points=16385", "max_points = 16385: expected 2..=16384"),
        ("max_points=10&from_seq=9&to_seq=3", "from_seq = 9"),
        ("from_seq=3", "from_seq/to_seq = 3"),
        ("max_points=10&after_seq=4", "after_seq/limit = 4"),
    ] {
        let (status, v) = server.get(&format!("/api/v1/runs/{id}/samples?{q}"), VIEW);
        assert_eq!(status, 400, "{q}: {v}");
        assert!(
            v["message"].as_str().unwrap_or("").contains(want),
            "{q}: {v}"
        );
    }

    // Exports: every sample, streamed. The agent's peak memory grows by far less than the
    // document (about 70 MB of JSON).
    let before = server.peak_rss();
    let (status, body) = server.get_stream(&format!("/api/v1/runs/{id}/export?format=json"), VIEW);
    assert_eq!(status, 200);
    let mut counted = 0u64;
    let mut bytes = 0u64;
    let report: serde_json::Value = {
        let mut r = BufReader::with_capacity(1 << 16, body);
        let mut text = Vec::new();
        loop {
            let buf = r.fill_buf().expect("read export");
            if buf.is_empty() {
                break;
            }
            text.extend_from_slice(buf);
            let k = buf.len();
            bytes += k as u64;
            r.consume(k);
        }
        serde_json::from_slice(&text).expect("the export is one JSON document")
    };
    let samples = report["samples"].as_array().expect("samples");
    for (i, s) in samples.iter().enumerate() {
        assert_eq!(s["seq"].as_u64(), Some(i as u64));
        counted += 1;
    }
    assert_eq!(counted, n);
    assert_eq!(report["summary"]["samples"].as_u64(), Some(n));
    let grown = server.peak_rss().saturating_sub(before);
    println!(
        "JSON export: {} MB streamed; agent peak RSS {} → {} MiB (+{} MiB)",
        bytes / 1_000_000,
        before >> 20,
        server.peak_rss() >> 20,
        grown >> 20
    );
    assert!(bytes > 50_000_000, "{bytes} bytes");
    assert!(
        grown < 8 << 20,
        "peak RSS grew by {} MiB during the export",
        grown >> 20
    );

    let (status, body) = server.get_stream(&format!("/api/v1/runs/{id}/export?format=csv"), VIEW);
    assert_eq!(status, 200);
    let mut lines = 0u64;
    for l in BufReader::new(body).lines() {
        l.expect("line");
        lines += 1;
    }
    assert_eq!(lines, n + 1, "a header and one row per sample");
}

/// A client that subscribes with `max_points` gets the history as one envelope, then every
/// live sample after it, without a gap or a repeat — on a run going on and on a finished one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_stream_sends_a_long_history_as_an_envelope_then_live_samples() {
    use shared::api::{ClientMsg, RunEvent, ServerMsg};
    use tests::server::{WsClient, OP};
    let data = disk_tempdir();
    let (old, _, fast) = synthetic_run(&data.path().join("diskscope.db"), 20_000, 100, 900.0, 3);
    let server = Server::start(data.path(), &[data.path()]);

    let mut c = WsClient::connect(&server, VIEW, true).await;
    c.send(&ClientMsg::Subscribe {
        run_id: old,
        after_seq: None,
        max_points: Some(200),
    })
    .await;
    let history = loop {
        match c.next().await.expect("open") {
            ServerMsg::History {
                run_id,
                samples,
                through_seq,
            } => {
                assert_eq!(run_id, old);
                assert_eq!(through_seq, Some(19_999));
                break samples;
            }
            ServerMsg::Sample { sample, .. } => panic!("sample {} before the history", sample.seq),
            _ => {}
        }
    };
    assert!(
        history.len() <= 200 && history.len() >= 150,
        "{}",
        history.len()
    );
    assert!(history.iter().any(|s| s.seq == fast));
    c.close().await;

    // A live run: history so far, then the rest one by one.
    let target = data.path().join("live.bin");
    let id = server.start_run(&serde_json::json!({
        "target": target.display().to_string(),
        "spec": {"backend": "null", "runtime_ms": 4000, "interval_ms": 100}
    }));
    server.wait_samples(id, 10);
    let mut c = WsClient::connect(&server, OP, true).await;
    c.send(&ClientMsg::Subscribe {
        run_id: id,
        after_seq: None,
        max_points: Some(4),
    })
    .await;
    let through = loop {
        if let ServerMsg::History {
            samples,
            through_seq,
            ..
        } = c.next().await.expect("open")
        {
            assert!(samples.len() <= 4, "{}", samples.len());
            break through_seq.expect("samples were stored");
        }
    };
    assert!(through >= 9, "history through {through}");
    let (seqs, end) = c.collect_until_end(id).await;
    assert_eq!(end, RunEvent::Completed);
    let want: Vec<u64> = (through + 1..through + 1 + seqs.len() as u64).collect();
    assert_eq!(seqs, want, "live samples continue right after the history");
    assert!(seqs.len() >= 20, "{} live samples", seqs.len());
}

/// Every 10 ms bucket on request: the CLI's `--timeline` and the API's `/timeline` agree
/// with the run's bytes; the JSON and CSV written as the samples came hold every sample.
#[test]
fn the_exact_timeline_is_exported_by_the_cli_and_the_api() {
    let data = disk_tempdir();
    let target = data.path().join("t.bin");
    let (json, csv, tl) = (
        data.path().join("r.json"),
        data.path().join("r.csv"),
        data.path().join("t.csv"),
    );
    let out = ds(&format!(
        "run --target {} --size 64M --rw write --bs 128k --iodepth 4 --runtime 3s \
         --interval-ms 100 --backend null -q --json {} --csv {} --timeline {}",
        target.display(),
        json.display(),
        csv.display(),
        tl.display()
    ));
    assert!(out.status.success(), "{}", stderr(&out));
    let r = read_report(&json);
    assert_eq!(r.samples.len() as u64, r.summary.samples);
    let rows = std::fs::read_to_string(&csv).expect("csv");
    assert_eq!(rows.lines().count() as u64, r.summary.samples + 1);
    let text = std::fs::read_to_string(&tl).expect("timeline");
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("t_ms,bytes"));
    let buckets: Vec<(u64, u64)> = lines
        .map(|l| {
            let (t, b) = l.split_once(',').expect("two columns");
            (t.parse().expect("t"), b.parse().expect("bytes"))
        })
        .collect();
    assert!(buckets.len() >= 290, "{} buckets for 3 s", buckets.len());
    assert!(buckets
        .iter()
        .enumerate()
        .all(|(i, (t, _))| *t == i as u64 * 10));
    assert_eq!(
        buckets.iter().map(|b| b.1).sum::<u64>(),
        r.summary.write.bytes,
        "the buckets add up to the bytes written"
    );
    // A bad path is refused before anything runs.
    let out = ds(&format!(
        "run --target {} --size 64M --rw write --runtime 1s --backend null -q --timeline /nonexistent/dir/t.csv",
        target.display()
    ));
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("--timeline /nonexistent/dir/t.csv"),
        "{}",
        stderr(&out)
    );

    // The service stores every bucket and streams them back.
    let server = Server::start(data.path(), &[data.path()]);
    let id = server.start_run(&serde_json::json!({
        "target": data.path().join("s.bin").display().to_string(),
        "spec": {"backend": "null", "runtime_ms": 2000, "interval_ms": 100, "rw": "write", "size": 67108864u64}
    }));
    let run = server.wait_status(id, "completed");
    let written = run["summary"]["write"]["bytes"].as_u64().expect("bytes");
    let (status, v) = server.get(&format!("/api/v1/runs/{id}/timeline?format=json"), VIEW);
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["bucket_ms"], 10);
    assert_eq!(v["exact"], true);
    let bytes: Vec<u64> = v["bytes"]
        .as_array()
        .expect("bytes")
        .iter()
        .map(|b| b.as_u64().expect("u64"))
        .collect();
    assert!(bytes.len() >= 190, "{} buckets", bytes.len());
    assert_eq!(bytes.iter().sum::<u64>(), written);
    let (status, v) = server.get(&format!("/api/v1/runs/{id}/timeline?format=xml"), VIEW);
    assert_eq!(status, 400);
    assert!(
        v["message"]
            .as_str()
            .unwrap_or("")
            .contains("format = 'xml'"),
        "{v}"
    );
}

/// Exports are streamed by a few threads at most: clients that open exports and never read
/// them hold at most `MAX_EXPORTS` (4) at once, a fifth is told to come back (503 with
/// `Retry-After`), and a slot is freed as soon as such a client goes away.
#[test]
fn clients_that_never_read_their_exports_cannot_hold_the_agent() {
    use std::io::{Read, Write};
    let data = disk_tempdir();
    let (id, _, _) = synthetic_run(&data.path().join("diskscope.db"), 60_000, 100, 1000.0, 11);
    let server = Server::start(data.path(), &[data.path()]);
    let idle = |_: usize| {
        let mut s = std::net::TcpStream::connect(&server.addr).expect("connect");
        write!(
            s,
            "GET /api/v1/runs/{id}/export?format=json HTTP/1.1\r\nHost: {}\r\n\
             Authorization: Bearer {VIEW}\r\n\r\n",
            server.addr
        )
        .expect("request");
        s
    };
    let mut held: Vec<std::net::TcpStream> = (0..4).map(idle).collect();
    // The four hold every export slot once the agent has answered each (its status line is in
    // their sockets; reading those few bytes does not drain the body): then a fifth is refused.
    for s in &mut held {
        use std::io::Read;
        s.set_read_timeout(Some(std::time::Duration::from_secs(15)))
            .expect("timeout");
        let mut head = [0u8; 12];
        s.read_exact(&mut head).expect("the export's status line");
        assert_eq!(
            &head, b"HTTP/1.1 200",
            "an idle client's export did not start"
        );
    }
    let (status, v) = server.get(&format!("/api/v1/runs/{id}/export?format=csv"), VIEW);
    assert_eq!(status, 503, "{v}");
    assert_eq!(v["code"], "exports_busy", "{v}");
    // One goes away: its slot comes back.
    drop(held.pop());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let (status, body) =
            server.get_stream(&format!("/api/v1/runs/{id}/timeline?format=csv"), VIEW);
        if status == 200 {
            let mut text = String::new();
            std::io::BufReader::new(body)
                .read_to_string(&mut text)
                .expect("read");
            assert!(text.starts_with("t_ms,bytes"));
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no export slot came back"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    drop(held);
}
