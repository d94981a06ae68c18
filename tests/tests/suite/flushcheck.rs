//! The emulated drive's volatile write cache, ground truth for a check of whether a drive
//! keeps what it acknowledged (issue 36): writes acknowledged into the cache, flushed by
//! fsync as the drive's policy keeps its promise, forced through by O_DSYNC, and a power
//! cut (`power`: `cut`, `on`) that says exactly which writes it lost, which a flush had
//! promised, and which it tore. Driven through the real FUSE mount with real system calls.

use serde_json::Value;
use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;
use tests::*;

const P: u64 = 4096;

fn drive(flush: &str, tear_bytes: u64) -> Option<Emulator> {
    let model = format!(
        r#"{{"capacity": {cap}, "cache_bytes": 0, "native_mbps": 2000, "read_mbps": 3000,
            "faults": {{"write_cache": {wc}, "flush": "{flush}", "tear_bytes": {tear_bytes}, "seed": 11}}}}"#,
        cap = 16 << 20,
        wc = 64 * P,
    );
    Emulator::start_or_skip(&model, "flush check (emulated write cache)")
}

fn page(v: u8) -> Vec<u8> {
    vec![v; P as usize]
}

/// Writes `pages` (page index, value) through `flags` (O_DIRECT, maybe O_DSYNC).
fn write_pages(disk: &Path, flags: i32, pages: &[(u64, u8)]) {
    let f = OpenOptions::new()
        .write(true)
        .custom_flags(flags)
        .open(disk)
        .expect("open the emulated disk");
    for &(p, v) in pages {
        f.write_all_at(&page(v), p * P).expect("write");
    }
}

fn fsync(disk: &Path) {
    let f = OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_DIRECT)
        .open(disk)
        .expect("open");
    f.sync_all().expect("fsync");
}

/// Writes `command` to the drive's power switch and reads back its state.
fn power(e: &Emulator, command: &str) -> Value {
    let switch = e.dir().join("power");
    if !command.is_empty() {
        let mut f = OpenOptions::new().write(true).open(&switch).expect("power");
        f.write_all(command.as_bytes()).expect(command);
    }
    serde_json::from_str(&std::fs::read_to_string(&switch).expect("read power")).expect("json")
}

fn read_page(disk: &Path, p: u64) -> std::io::Result<Vec<u8>> {
    let f = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(disk)?;
    let mut buf = page(0);
    f.read_exact_at(&mut buf, p * P)?;
    Ok(buf)
}

fn ranges(v: &Value) -> Vec<(u64, u64)> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|r| {
            (
                r[0].as_u64().expect("offset") / P,
                r[1].as_u64().expect("len"),
            )
        })
        .collect()
}

#[test]
fn an_honest_drive_loses_only_what_no_flush_covered() {
    let Some(e) = drive("honest", 0) else { return };
    let disk = e.disk();
    write_pages(
        &disk,
        libc::O_DIRECT,
        &(0..8).map(|p| (p, p as u8 + 1)).collect::<Vec<_>>(),
    );
    fsync(&disk);
    write_pages(&disk, libc::O_DIRECT, &[(8, 9), (9, 10)]);
    // Written with O_DSYNC: forced to the medium (FUA), kept.
    write_pages(&disk, libc::O_DIRECT | libc::O_DSYNC, &[(10, 11)]);
    assert_eq!(
        read_page(&disk, 9).expect("read"),
        page(10),
        "read back from the cache"
    );
    let s = power(&e, "cut");
    assert_eq!(s["off"], true, "{s}");
    assert_eq!(ranges(&s["cut"]["lost"]), vec![(8, P), (9, P)], "{s}");
    assert!(ranges(&s["cut"]["promised"]).is_empty(), "{s}");
    // Off: every I/O fails, as a drive without power.
    let err = read_page(&disk, 0).expect_err("a read while off");
    assert_eq!(err.raw_os_error(), Some(libc::EIO), "{err}");
    assert_eq!(power(&e, "on")["off"], false);
    for p in 0..8 {
        assert_eq!(
            read_page(&disk, p).expect("read"),
            page(p as u8 + 1),
            "page {p}"
        );
    }
    assert_eq!(read_page(&disk, 8).expect("read"), page(0), "lost");
    assert_eq!(read_page(&disk, 10).expect("read"), page(11), "FUA kept");
}

#[test]
fn a_drive_that_ignores_flush_loses_what_it_promised() {
    let Some(e) = drive("ignored", 0) else { return };
    let disk = e.disk();
    write_pages(&disk, libc::O_DIRECT, &[(3, 1), (5, 2), (7, 3)]);
    fsync(&disk);
    write_pages(&disk, libc::O_DIRECT, &[(9, 4)]);
    let s = power(&e, "cut");
    assert_eq!(
        ranges(&s["cut"]["lost"]),
        vec![(3, P), (5, P), (7, P), (9, P)],
        "{s}"
    );
    assert_eq!(
        ranges(&s["cut"]["promised"]),
        vec![(3, P), (5, P), (7, P)],
        "{s}"
    );
    power(&e, "on");
    for p in [3, 5, 7, 9] {
        assert_eq!(read_page(&disk, p).expect("read"), page(0), "page {p}");
    }
    // A bad command is refused.
    let mut f = OpenOptions::new()
        .write(true)
        .open(e.dir().join("power"))
        .expect("power");
    let err = f.write_all(b"reboot").expect_err("not a command");
    assert_eq!(err.raw_os_error(), Some(libc::EINVAL), "{err}");
}

#[test]
fn a_tearing_drive_leaves_the_first_sectors_of_a_rewrite() {
    let Some(e) = drive("honest", 512) else {
        return;
    };
    let disk = e.disk();
    write_pages(&disk, libc::O_DIRECT, &[(4, 1)]);
    fsync(&disk);
    write_pages(&disk, libc::O_DIRECT, &[(4, 2)]);
    let s = power(&e, "cut");
    assert_eq!(ranges(&s["cut"]["torn"]), vec![(4, P)], "{s}");
    power(&e, "on");
    let back = read_page(&disk, 4).expect("read");
    assert!(back[..512].iter().all(|&b| b == 2), "the new first sector");
    assert!(back[512..].iter().all(|&b| b == 1), "the old rest");
}

// The whole check: a witness agent (`diskscope serve`) on a loopback port, the writer
// (`diskscope flushcheck write`) on the emulated drive, the cut armed to come at a known
// write (`cut-after N`), then `diskscope flushcheck verify` against the witness's records.

const FLUSH_EVERY: u64 = 16;

fn witness(dir: &Path) -> tests::server::Server {
    tests::server::Server::start(dir, &[])
}

fn flushcheck(args: &[&str]) -> std::process::Output {
    std::process::Command::new(diskscope_bin())
        .arg("flushcheck")
        .args(args)
        .output()
        .expect("run diskscope flushcheck")
}

/// Writes until the armed cut, `span` bytes of 4 KiB blocks; the writer's output.
fn write_until_cut(e: &Emulator, w: &tests::server::Server, span: &str, cut_after: u64) -> String {
    power(e, &format!("cut-after {cut_after}"));
    let disk = e.disk();
    let url = format!("http://{}", w.addr);
    let every = FLUSH_EVERY.to_string();
    let out = flushcheck(&[
        "write",
        disk.to_str().expect("utf8"),
        "--witness",
        &url,
        "--token",
        tests::server::OP,
        "--size",
        span,
        "--flush-every",
        &every,
        "--duration",
        "60s",
    ]);
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "{text}{}", stderr(&out));
    assert!(
        text.contains(&format!("stopped: write {cut_after} at offset")),
        "the cut stops the writer at write {cut_after}: {text}"
    );
    text
}

/// The session number and the writes recorded durable, from the writer's first line.
fn session_of(text: &str) -> (i64, u64) {
    let first = text.lines().next().expect("a line");
    let id = first
        .strip_prefix("session ")
        .and_then(|r| r.split(':').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no session in {first:?}"));
    let acked = first
        .split(", ")
        .find(|p| p.contains("recorded durable"))
        .and_then(|p| p.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count in {first:?}"));
    (id, acked)
}

/// Verifies the session: exit code and the verdict.
fn verify(e: &Emulator, w: &tests::server::Server, session: i64, dir: &Path) -> (bool, Value) {
    let json = dir.join(format!("verdict-{session}.json"));
    let url = format!("http://{}", w.addr);
    let out = flushcheck(&[
        "verify",
        e.disk().to_str().expect("utf8"),
        "--witness",
        &url,
        "--token",
        tests::server::OP,
        "--session",
        &session.to_string(),
        "--json",
        json.to_str().expect("utf8"),
    ]);
    println!("{}", String::from_utf8_lossy(&out.stdout));
    let v = serde_json::from_str(&std::fs::read_to_string(&json).expect("verdict")).expect("json");
    (out.status.success(), v)
}

fn offsets(v: &Value, state: &str) -> std::collections::BTreeSet<u64> {
    v["bad"]
        .as_array()
        .expect("bad")
        .iter()
        .filter(|f| f["state"] == state)
        .map(|f| f["offset"].as_u64().expect("offset") / P)
        .collect()
}

fn cut_offsets(s: &Value, key: &str) -> std::collections::BTreeSet<u64> {
    ranges(&s["cut"][key]).into_iter().map(|(o, _)| o).collect()
}

/// A check up to an armed cut on a drive of `flush` policy: the drive, its folder, the
/// witness, the session, the writes recorded durable, and the drive's state after power-on.
struct AfterCut {
    e: Emulator,
    dir: tempfile::TempDir,
    w: tests::server::Server,
    session: i64,
    acked: u64,
    state: Value,
}

fn after_cut(flush: &str, tear_bytes: u64, span: &str, cut_after: u64) -> Option<AfterCut> {
    let e = drive(flush, tear_bytes)?;
    let dir = ram_tempdir();
    let w = witness(&dir.path().join("witness"));
    let text = write_until_cut(&e, &w, span, cut_after);
    let (session, acked) = session_of(&text);
    let state = power(&e, "on");
    Some(AfterCut {
        e,
        dir,
        w,
        session,
        acked,
        state,
    })
}

impl AfterCut {
    fn verify(&self) -> (bool, Value) {
        verify(&self.e, &self.w, self.session, self.dir.path())
    }
}

#[test]
fn an_honest_drive_keeps_every_write_a_flush_covered() {
    let Some(c) = after_cut("honest", 0, "1M", 500) else {
        return;
    };
    // 31 flushes of 16 before write 500: 496 recorded; 497-499 in the cache, unflushed.
    assert_eq!(c.acked, 496);
    let s = &c.state;
    assert_eq!(ranges(&s["cut"]["lost"]).len(), 3, "{s}");
    assert!(ranges(&s["cut"]["promised"]).is_empty(), "{s}");
    let (pass, v) = c.verify();
    assert!(pass, "{v}");
    assert_eq!(v["lost"], 0);
    assert_eq!(v["intact"], v["checked"], "{v}");
    assert_eq!(v["acked_last_seq"], 496);
    assert_eq!(v["found_last_seq"], 496);
}

#[test]
fn a_drive_that_ignores_flush_is_found_with_every_block_it_dropped() {
    let Some(c) = after_cut("ignored", 0, "1M", 500) else {
        return;
    };
    assert_eq!(c.acked, 496);
    let s = &c.state;
    // The cache's 64 writes were lost; 61 of them a flush had promised.
    assert_eq!(ranges(&s["cut"]["lost"]).len(), 64, "{s}");
    assert_eq!(ranges(&s["cut"]["promised"]).len(), 61, "{s}");
    let (pass, v) = c.verify();
    assert!(!pass, "{v}");
    let lost = offsets(&v, "lost");
    assert_eq!(v["lost"].as_u64(), Some(lost.len() as u64), "{v}");
    assert_eq!(
        lost,
        cut_offsets(s, "promised"),
        "the lost blocks are what the drive dropped"
    );
    assert!(v["torn"] == 0 && v["corrupt"] == 0, "{v}");
}

#[test]
fn a_drive_that_reorders_its_destaging_is_found() {
    let Some(c) = after_cut("reordered", 0, "1M", 500) else {
        return;
    };
    let s = &c.state;
    let (pass, v) = c.verify();
    assert!(!pass && v["verdict"] == "LIES ABOUT FLUSH", "{v}");
    // Each flush left a random part of the cache behind: the blocks lost are exactly those
    // whose cached write a flush had promised.
    let lost = offsets(&v, "lost");
    assert!(!lost.is_empty(), "{v}");
    assert_eq!(lost, cut_offsets(s, "promised"), "{v} {s}");
}

#[test]
fn a_tearing_drive_is_found_at_each_torn_block() {
    // Eight blocks: by write 96 every one is recorded durable, and 97-99 rewrite three.
    let Some(c) = after_cut("honest", 512, "32K", 100) else {
        return;
    };
    let s = &c.state;
    let (pass, v) = c.verify();
    assert!(!pass, "{v}");
    assert_eq!(offsets(&v, "torn"), cut_offsets(s, "torn"), "{v} {s}");
    assert!(v["torn"].as_u64() >= Some(1) && v["lost"] == 0, "{v}");
}

#[test]
fn a_witness_killed_mid_run_stops_the_writer_and_keeps_every_record() {
    let Some(e) = drive("honest", 0) else { return };
    let dir = ram_tempdir();
    let mut w = witness(dir.path());
    let url = format!("http://{}", w.addr);
    let disk = e.disk();
    let every = FLUSH_EVERY.to_string();
    let writer = std::process::Command::new(diskscope_bin())
        .args(["flushcheck", "write"])
        .arg(&disk)
        .args([
            "--witness",
            &url,
            "--token",
            tests::server::OP,
            "--size",
            "4M",
        ])
        .args(["--flush-every", &every, "--duration", "60s"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start the writer");
    // Kill the witness once it holds a few hundred records.
    let t0 = std::time::Instant::now();
    loop {
        let (status, s) = w.get("/api/v1/witness/1", tests::server::OP);
        if status == 200 && s["session"]["acked"].as_u64() >= Some(320) {
            break;
        }
        assert!(
            t0.elapsed().as_secs() < 30,
            "the writer never got going: {status} {s}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    w.kill9();
    let out = writer.wait_with_output().expect("the writer");
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(
        !out.status.success(),
        "the writer went on without its witness: {err}"
    );
    // "... flushed after write N (A recorded durable before): stopped, nothing more is written"
    let tail = err
        .split("flushed after write ")
        .nth(1)
        .unwrap_or_else(|| panic!("no 'flushed after write' in {err}"));
    let digits = |t: &str| -> u64 {
        t.split(|c: char| !c.is_ascii_digit())
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no number at {t:?}"))
    };
    let written = digits(tail);
    let acked = digits(tail.split_once(" (").map_or("", |(_, r)| r));
    assert_eq!(
        written,
        acked + FLUSH_EVERY,
        "one batch past the last acknowledged: {err}"
    );
    // Restarted on the same database: every record it acknowledged is there.
    let w2 = witness(dir.path());
    let (status, r) = w2.get("/api/v1/witness/1", tests::server::OP);
    assert_eq!(status, 200, "{r}");
    let kept = r["session"]["acked"].as_u64().expect("acked");
    assert!(
        kept == acked || kept == written,
        "kept {kept}, acknowledged {acked}, written {written}"
    );
    let max_seq = r["records"]
        .as_array()
        .expect("records")
        .iter()
        .filter_map(|x| x["seq"].as_u64())
        .max();
    assert_eq!(max_seq, Some(kept), "{r}");
}

/// Two agents on loopback ports: the witness, and the agent on the machine under test
/// (its target the emulated drive). After a cut of the drive that ignores flush, the
/// dashboard's *Verify after power cut* (Targets tab) on the second agent shows the verdict
/// the CLI stored, its line and each bad block, at 1920x1080 (screenshot kept).
#[test]
fn the_dashboards_verify_after_power_cut_is_the_clis_verdict() {
    let browser = match tests::browser::Browser::probe() {
        Ok(b) => b,
        Err(why) => skip!(Missing::Browser, "{why}"),
    };
    let Some(c) = after_cut("ignored", 0, "1M", 300) else {
        return;
    };
    let (pass, v) = c.verify();
    assert!(!pass && v["verdict"] == "LIES ABOUT FLUSH", "{v}");
    let (e, dir, w, session) = (&c.e, &c.dir, &c.w, c.session);
    let disk = e.disk();
    let agent = tests::server::Server::start(&dir.path().join("agent"), &[disk.as_path()]);
    let shots = tests::browser::Browser::shots("diskscope-flushcheck-");
    let verdict = dir.path().join(format!("verdict-{session}.json"));
    let args = [
        format!("http://{}", agent.addr),
        tests::server::OP.to_string(),
        tests::server::VIEW.to_string(),
        shots.display().to_string(),
        disk.display().to_string(),
        format!("http://{}", w.addr),
        tests::server::OP.to_string(),
        session.to_string(),
        verdict.display().to_string(),
    ];
    let (passed, out) = browser.run("flushcheck.mjs", &args, &[]);
    assert!(passed, "screenshots in {}: {out}", shots.display());
    assert!(shots.join("flush-verify-1920x1080.png").exists());
}

/// A flush that covered more writes than one witness call carries (1,000) goes as several
/// calls, in order: 2,500 writes with a single flush at the end, all recorded.
#[test]
fn a_flush_of_thousands_of_writes_is_recorded_whole() {
    let Some(e) = drive("honest", 0) else { return };
    let dir = ram_tempdir();
    let w = witness(dir.path());
    let url = format!("http://{}", w.addr);
    let disk = e.disk();
    let out = flushcheck(&[
        "write",
        disk.to_str().expect("utf8"),
        "--witness",
        &url,
        "--token",
        tests::server::OP,
        "--size",
        "16M",
        "--flush-every",
        "100000",
        "--count",
        "2500",
    ]);
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "{text}{}", stderr(&out));
    let (session, acked) = session_of(&text);
    assert_eq!(acked, 2500, "{text}");
    let (pass, v) = verify(&e, &w, session, dir.path());
    assert!(pass && v["acked_last_seq"] == 2500, "{v}");
    // The records page by page (a drive-wide session holds millions): pages of 1,000 after
    // each page's last offset are the whole list, in order, each record once.
    let view = tests::server::VIEW;
    let (_, all) = w.get(&format!("/api/v1/witness/{session}"), view);
    let whole = all["records"].as_array().expect("records").clone();
    assert!(
        all.get("next_after").is_none(),
        "one default page holds them: {}",
        whole.len()
    );
    let (mut paged, mut after, mut pages) = (Vec::new(), None::<u64>, 0);
    loop {
        let q = after.map_or(String::new(), |a| format!("&after={a}"));
        let (status, p) = w.get(&format!("/api/v1/witness/{session}?limit=1000{q}"), view);
        assert_eq!(status, 200, "{p}");
        paged.extend(p["records"].as_array().expect("records").iter().cloned());
        pages += 1;
        match p["next_after"].as_u64() {
            Some(a) => after = Some(a),
            None => break,
        }
    }
    assert_eq!(paged, whole, "{pages} pages");
    assert_eq!(pages, whole.len().div_ceil(1000), "{} records", whole.len());
    assert_eq!(v["checked"].as_u64(), Some(whole.len() as u64));
    for bad in ["limit=0", "limit=65537", "after=x"] {
        let (status, p) = w.get(&format!("/api/v1/witness/{session}?{bad}"), view);
        assert_eq!(status, 400, "{bad}: {p}");
    }
}

/// The witness's own refusals: a batch over the call limit, a sequence not above the last
/// acknowledged, an offset off the session's grid or past its span (the largest offset), a
/// session that does not exist; a viewer cannot record. Nothing refused is taken.
#[test]
fn the_witness_refuses_what_it_cannot_record_in_order() {
    let dir = ram_tempdir();
    let w = witness(dir.path());
    let op = tests::server::OP;
    let (s, session) = w.post(
        "/api/v1/witness",
        op,
        &serde_json::json!({"target": "/dev/sdz", "host": "h", "bs": 4096, "start": 0,
            "blocks": 1u64 << 40, "nonce": u64::MAX}),
    );
    assert_eq!(s, 201, "{session}");
    // Sessions no writer makes: the block size sizes the read-back's buffer, offsets are
    // stored as signed 64-bit integers.
    for (bs, blocks, start, names) in [
        (0u64, 1u64, 0u64, "bs 0"),
        (513, 1, 0, "bs 513"),
        (128 << 20, 1, 0, "bs 134217728"),
        (4096, 0, 0, "blocks 0"),
        (4096, 1 << 62, 0, "past 2^63"),
        (4096, 1, u64::MAX - 100, "past 2^63"),
    ] {
        let (s, r) = w.post(
            "/api/v1/witness",
            op,
            &serde_json::json!({"target": "/dev/sdz", "host": "h", "bs": bs, "start": start,
                "blocks": blocks, "nonce": 1}),
        );
        assert!(
            s == 400 && r["message"].as_str().is_some_and(|m| m.contains(names)),
            "bs {bs} blocks {blocks} start {start}: {s} {r}"
        );
    }
    let id = session["id"].as_i64().expect("id");
    let path = format!("/api/v1/witness/{id}/durable");
    let batch = |from: u64, n: u64| {
        let records: Vec<Value> = (0..n)
            .map(|i| serde_json::json!({"offset": (i % 7) * 4096, "seq": from + i}))
            .collect();
        serde_json::json!({ "records": records })
    };
    let (s, r) = w.post(&path, op, &batch(1, 1001));
    assert_eq!(s, 400, "{r}");
    assert!(
        r["message"]
            .as_str()
            .is_some_and(|m| m.contains("1001 records")),
        "{r}"
    );
    let (s, r) = w.post(&path, op, &batch(1, 1000));
    assert_eq!(
        (s, r["acked"].as_u64(), r["last_seq"].as_u64()),
        (200, Some(1000), Some(1000)),
        "{r}"
    );
    let (s, r) = w.post(&path, op, &batch(1000, 1));
    assert_eq!((s, r["code"].as_str()), (409, Some("out_of_order")), "{r}");
    let (s, r) = w.post(
        &path,
        op,
        &serde_json::json!({"records": [{"offset": 4097, "seq": 1001}]}),
    );
    assert!(
        s == 400
            && r["message"]
                .as_str()
                .is_some_and(|m| m.contains("offset 4097")),
        "{r}"
    );
    let (s, r) = w.post(
        &path,
        op,
        &serde_json::json!({"records": [{"offset": u64::MAX - 4095, "seq": 1001}]}),
    );
    assert_eq!(s, 400, "past the span: {r}");
    let (s, r) = w.post("/api/v1/witness/999/durable", op, &batch(1, 1));
    assert_eq!(s, 404, "{r}");
    let (s, r) = w.post(&path, tests::server::VIEW, &batch(1001, 1));
    assert_eq!(s, 403, "{r}");
    let (_, r) = w.get(&format!("/api/v1/witness/{id}"), op);
    assert_eq!(
        (
            r["session"]["acked"].as_u64(),
            r["records"].as_array().map(Vec::len)
        ),
        (Some(1000), Some(7)),
        "{r}"
    );
}

/// Every file under `dir` (the agent's database and its journal) read whole: whether any
/// holds `needle`.
fn any_file_holds(dir: &Path, needle: &[u8]) -> Option<std::path::PathBuf> {
    for entry in std::fs::read_dir(dir)
        .expect("read the data directory")
        .flatten()
    {
        let p = entry.path();
        if p.is_dir() {
            if let Some(found) = any_file_holds(&p, needle) {
                return Some(found);
            }
        } else if let Ok(bytes) = std::fs::read(&p) {
            if bytes.windows(needle.len()).any(|w| w == needle) {
                return Some(p);
            }
        }
    }
    None
}

/// `--preset flushcheck` as a run of the agent under test (API): it opens a session on the
/// witness agent, its writes are the run's samples, the cut ends it with the write that
/// failed, the stored run names its session in its one-line result, and *Verify after
/// power cut* without a session number finds that session on the witness: HONEST, every
/// recorded write intact. The witness's token is nowhere in the writer's database, and a
/// flush check without one (or a token without a flush check) is refused by name.
#[test]
fn the_flushcheck_preset_is_a_run_and_its_session_is_found_after_the_cut() {
    let Some(e) = drive("honest", 0) else { return };
    let dir = ram_tempdir();
    let w = witness(&dir.path().join("witness"));
    let disk = e.disk();
    let agent_dir = dir.path().join("agent");
    let agent = tests::server::Server::start(&agent_dir, &[disk.as_path()]);
    let url = format!("http://{}", w.addr);
    // The token the witness is given: a distinctive one, looked for in the database after.
    let token = tests::server::OP;
    // Refused by name: no witness, no token, a token without a flush check.
    let t = disk.display().to_string();
    for (body, names) in [
        (
            serde_json::json!({"target": t, "preset": "flushcheck", "witness_token": token}),
            "needs witness",
        ),
        (
            serde_json::json!({"target": t, "preset": "flushcheck",
                               "options": {"witness": url, "size": "4M"}}),
            "witness_token",
        ),
        (
            serde_json::json!({"target": t, "preset": "quick", "witness_token": token}),
            "witness_token",
        ),
    ] {
        let (status, v) = agent.post("/api/v1/runs", tests::server::OP, &body);
        assert!(
            status == 400 && v["message"].as_str().is_some_and(|m| m.contains(names)),
            "{body}: {status} {v}"
        );
    }

    power(&e, "cut-after 600");
    let (status, v) = agent.post(
        "/api/v1/runs",
        tests::server::OP,
        &serde_json::json!({"target": t, "preset": "flushcheck", "witness_token": token,
            "options": {"witness": url, "flush_every": 8, "fsync": true, "size": "4M"}}),
    );
    assert_eq!(status, 201, "{v}");
    let id = v["id"].as_i64().expect("id");
    let r = agent.wait_status_within(id, "failed", std::time::Duration::from_secs(60));
    println!("run {id}: {}", r["line"]);
    let err = r["error"]["message"].as_str().unwrap_or_default();
    assert!(
        err.contains("write 600 at offset"),
        "the cut ends the run at write 600: {r}"
    );
    let (_, report) = agent.get(
        &format!("/api/v1/runs/{id}/export?format=json"),
        tests::server::VIEW,
    );
    let fc = &report["analysis"]["flushcheck"];
    let session = fc["session"].as_i64().expect("session");
    assert_eq!(fc["writes"], 599, "{fc}");
    // 599 writes, flushed every 8: 74 flushes covered 592, the 7 after the last one were
    // never promised.
    assert_eq!(
        (fc["flushes"].as_u64(), fc["acked"].as_u64()),
        (Some(74), Some(592)),
        "{fc}"
    );
    assert_eq!(
        report["summary"]["write"]["ios"], 599,
        "every write is a measured I/O"
    );
    let line = r["line"].as_str().unwrap_or_default();
    assert!(
        line.contains(&format!(
            "session {session}: 599 writes, 74 flushes, 592 writes recorded durable on {url}"
        )),
        "{line}"
    );
    let said = r["findings"].to_string();
    assert!(
        said.contains(&format!(
            "592 writes recorded durable on the witness {url} (session {session})"
        )) && said.contains("Verify after power cut"),
        "the result page says what to verify: {said}"
    );
    assert!(
        report["spec"]["flushcheck"]["witness"] == url.as_str(),
        "{}",
        report["spec"]
    );
    assert!(report["spec"]["flushcheck"].get("token").is_none());
    let env = report["environment"].to_string();
    assert!(
        env.contains("fsync every 8 writes"),
        "the flush asked for: {env}"
    );
    assert!(
        env.contains("a weaker check"),
        "a witness on this machine is said to be weaker: {env}"
    );
    let (_, s) = w.get(&format!("/api/v1/witness/{session}"), tests::server::VIEW);
    assert_eq!(s["session"]["acked"], 592, "{}", s["session"]);
    // The token never reached the writer's disk (database, journal, anything there).
    drop(agent);
    assert_eq!(any_file_holds(&agent_dir, token.as_bytes()), None);

    power(&e, "on");
    let agent = tests::server::Server::start(&agent_dir, &[disk.as_path()]);
    let (status, v) = agent.post(
        "/api/v1/flushcheck/verify",
        tests::server::OP,
        &serde_json::json!({"target": disk.display().to_string(), "witness": url, "token": token}),
    );
    assert_eq!(status, 200, "{v}");
    println!("{}", v["line"]);
    assert_eq!(
        v["session"].as_i64(),
        Some(session),
        "the newest session of this host and target"
    );
    assert_eq!(v["verdict"], "HONEST", "{v}");
    assert_eq!(
        (v["checked"].as_u64(), v["intact"].as_u64()),
        (
            s["records"].as_array().map(|a| a.len() as u64),
            v["checked"].as_u64()
        )
    );
}

/// A witness that answers the same page of records for ever (a broken or hostile one: its
/// `next_after` never moves) stops the read-back with an error naming the offset, instead
/// of keeping it going: a real HTTP server (python3) stands in for that witness.
#[test]
fn a_witness_whose_pages_do_not_go_forward_stops_the_read_back() {
    let dir = ram_tempdir();
    let target = dir.path().join("t.bin");
    std::fs::write(&target, vec![0u8; 64 << 10]).expect("target");
    let page = serde_json::json!({
        "session": {"id": 1, "created_ms": 0, "target": target.display().to_string(),
                    "host": "h", "bs": 4096, "start": 0, "blocks": 16, "nonce": 1,
                    "acked": 1, "last_seq": 1},
        "records": [{"offset": 0, "seq": 1}],
        "next_after": 0
    })
    .to_string();
    let server = r#"
import http.server, sys
body = sys.argv[1].encode()
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a): pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
"#;
    let mut child = match std::process::Command::new("python3")
        .args(["-c", server, &page])
        .stdout(std::process::Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => skip!(Missing::Tool, "python3: {e}"),
    };
    let mut port = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().expect("stdout")),
        &mut port,
    )
    .expect("the port");
    // KILL: the CLI takes TERM as a stop request, which a read-back does not check.
    let out = std::process::Command::new("timeout")
        .args(["-s", "KILL", "30"])
        .arg(diskscope_bin())
        .args(["flushcheck", "verify"])
        .arg(&target)
        .args(["--witness", &format!("http://127.0.0.1:{}", port.trim())])
        .args([
            "--token",
            "a-token-for-a-witness-that-loops",
            "--session",
            "1",
        ])
        .output()
        .expect("verify");
    let _ = child.kill();
    let _ = child.wait();
    let err = stderr(&out);
    assert!(
        out.status.code().is_some(),
        "the read-back kept going until killed: {err}"
    );
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("did not go forward past offset 0"), "{err}");
}
