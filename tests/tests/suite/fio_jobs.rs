//! fio's own example job files (`tests/fio-examples/`, fio is GPL-2.0) through
//! `diskscope run JOB.fio`: each file diskscope runs is rewritten to a short run on a local
//! file (size 16 MiB, runtime 1 s, the file the test gives) and run by fio and by diskscope;
//! diskscope's `--output-format fio-json` has fio's keys (fio's own output on the same job is
//! the reference) and its figures are diskscope's native report of the same run. Each file
//! diskscope does not run is refused with exit 2 naming the option or the jobs.
//! (Throughput against fio's is printed, not asserted: this machine is too noisy for that.)

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use tests::*;

/// The files diskscope runs, with the fio jobs each reports: a job per stonewall group, or
/// per job section when the file is one group of several (they run at once).
const RUN: &[(&str, usize)] = &[
    ("aio-read.fio", 4),
    ("fio-seq-read.fio", 1),
    ("fio-seq-write.fio", 1),
    ("fio-rand-read.fio", 1),
    ("fio-rand-write.fio", 1),
    ("fio-rand-RW.fio", 1),
    ("fio-seq-RW.fio", 1),
    ("ssd-test.fio", 4),
    ("tiobench-example.fio", 4),
    ("basic-verify.fio", 1),
    ("rand-zones.fio", 1),
    ("steadystate.fio", 2),
    ("jesd219.fio", 1),
    ("latency-profile.fio", 1),
];

/// fio's examples of its metadata engines (`files::fios_metadata_examples_…` runs them).
pub const METADATA_EXAMPLES: &[&str] = &[
    "filecreate-ioengine.fio",
    "filestat-ioengine.fio",
    "filedelete-ioengine.fio",
];

/// The files diskscope refuses, with what the refusal must name.
const REFUSED: &[(&str, &str)] = &[
    ("null.fio", "null.fio:3: option 'gtod_reduce=1'"),
    (
        "backwards-read.fio",
        "backwards-read.fio:6: option 'rw=read:-8k'",
    ),
    (
        "surface-scan.fio",
        "surface-scan.fio:8: option 'verify=meta'",
    ),
];

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fio-examples")
}

/// `text` as a short run on `target`: sizes 16 MiB, run times 1 s, the file given first.
fn short(text: &str, target: &Path) -> String {
    let mut out = format!("[global]\nfilename={}\nsize=16m\n", target.display());
    for line in text.lines() {
        let key = line.split('=').next().unwrap_or("").trim();
        let line = match key {
            "filename" | "directory" => continue,
            "size" => "size=16m".to_string(),
            "runtime" | "timeout" => format!("{key}=1"),
            _ => line.to_string(),
        };
        out.push_str(&line);
        out.push('\n');
    }
    out
}

fn keys(v: &serde_json::Value) -> BTreeSet<String> {
    v.as_object()
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default()
}

#[test]
fn fios_examples_run_or_are_refused_by_name() {
    require_io_uring!();
    let have_fio = Command::new("fio").arg("--version").output().is_ok();
    if !have_fio {
        skip!(Missing::Tool, "fio is not installed (apt-get install fio)");
    }
    let dir = disk_tempdir();
    let mut listed: BTreeSet<String> = std::fs::read_dir(examples())
        .expect("tests/fio-examples")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".fio"))
        .collect();

    // fio's metadata engines' examples: run by the files tests.
    for name in METADATA_EXAMPLES {
        listed.remove(*name);
    }
    for (name, want) in REFUSED {
        listed.remove(*name);
        let out = Command::new(diskscope_bin())
            .args(["run", "--quiet"])
            .arg(examples().join(name))
            .arg("--target")
            .arg(dir.path().join("refused.bin"))
            .output()
            .expect("run diskscope");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert!(
            err.contains(want),
            "{name}: the refusal does not name '{want}': {err}"
        );
        println!("refused {name}: {}", err.trim());
    }

    for (name, steps) in RUN {
        listed.remove(*name);
        let text = std::fs::read_to_string(examples().join(name)).expect("example");
        let target = dir.path().join(format!("{name}.bin"));
        let job = dir.path().join(name);
        std::fs::write(&job, short(&text, &target)).expect("write the short job");
        // The file both tools use, whole before either runs: a job that writes it for a
        // time (tiobench's, runtime 1 s) leaves holes on a slow machine, which diskscope's
        // read steps then refuse (it reads no file it did not lay out with holes in it).
        let out = diskscope(&[
            "run",
            "-q",
            "--target",
            target.to_str().expect("utf8"),
            "--size",
            "16M",
            "--rw",
            "write",
            "--bs",
            "1M",
        ]);
        assert!(out.status.success(), "{}", stderr(&out));

        let fio_out = dir.path().join(format!("{name}.fio.json"));
        let fio = Command::new("fio")
            .current_dir(dir.path()) // its verify state files land there
            .arg(&job)
            .arg("--output-format=json")
            .arg(format!("--output={}", fio_out.display()))
            .output()
            .expect("run fio");
        assert!(
            fio.status.success(),
            "fio {name}: {}",
            String::from_utf8_lossy(&fio.stderr)
        );
        let fio_doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&fio_out).expect("fio output"))
                .expect("fio json");

        let ours = dir.path().join(format!("{name}.ds.json"));
        let native = dir.path().join(format!("{name}.native.json"));
        let out = Command::new(diskscope_bin())
            .args(["run", "--quiet", "--output-format", "fio-json", "--output"])
            .arg(&ours)
            .arg("--json")
            .arg(&native)
            .arg(&job)
            .output()
            .expect("run diskscope");
        assert!(
            out.status.success(),
            "diskscope {name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&ours).expect("our output"))
                .expect("our json");
        let report: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&native).expect("native"))
                .expect("native json");

        // fio's keys, at the top, per job and per direction.
        for k in keys(&fio_doc) {
            assert!(doc.get(&k).is_some(), "{name}: no top-level '{k}'");
        }
        let jobs = doc["jobs"].as_array().expect("jobs");
        assert_eq!(jobs.len(), *steps, "{name}: one job per stonewall group");
        // Jobs that ran at once are the run's parts, else its steps.
        let together = report["steps"].as_array().is_none_or(|s| s.is_empty());
        let parts = if together {
            &report["targets"]
        } else {
            &report["steps"]
        };
        let theirs = &fio_doc["jobs"][0];
        for k in keys(theirs) {
            assert!(jobs[0].get(&k).is_some(), "{name}: job has no '{k}'");
        }
        for d in ["read", "write", "trim"] {
            assert_eq!(keys(&theirs[d]), keys(&jobs[0][d]), "{name}: keys of {d}");
            assert_eq!(
                keys(&theirs[d]["lat_ns"]),
                keys(&jobs[0][d]["lat_ns"]),
                "{name}: {d}.lat_ns"
            );
        }
        // The figures are the native report's.
        for (i, j) in jobs.iter().enumerate() {
            let step = &parts[i];
            let step_name = if together {
                &step["job"]
            } else {
                &step["name"]
            };
            assert_eq!(&j["jobname"], step_name, "{name}: job {i}");
            // A latency search's job is its final window, as fio's statistics restart there.
            let search = report["analysis"]["qd_search"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|q| q["step"] == serde_json::json!(i) && q.get("final_window").is_some());
            let figures = search.map_or(step, |q| &q["final_window"]);
            if let Some(q) = search {
                assert_eq!(j["latency_depth"], q["depths"][0], "{name}: latency_depth");
            }
            // A verifying job's final read-back is among its reads, as fio's verify phase.
            let back = [&step["verify"], &report["analysis"]["verify"]]
                .into_iter()
                .find(|v| v.is_object())
                .map_or((0, 0), |v| {
                    let n = |k: &str| v[k].as_u64().unwrap_or(0);
                    assert_eq!(n("interleaved_blocks"), 0, "{name}: no verify_every here");
                    (n("bytes_checked"), n("blocks_checked"))
                });
            for d in ["read", "write"] {
                let (bytes, ios) = if d == "read" { back } else { (0, 0) };
                let n = |k: &str| figures["summary"][d][k].as_u64().unwrap_or(0);
                assert_eq!(
                    j[d]["io_bytes"].as_u64(),
                    Some(n("bytes") + bytes),
                    "{name} {i} {d} bytes"
                );
                assert_eq!(
                    j[d]["total_ios"].as_u64(),
                    Some(n("ios") + ios),
                    "{name} {i} {d} ios"
                );
                let n: u64 = figures["histogram"][d]
                    .as_array()
                    .map(|b| b.iter().map(|x| x["count"].as_u64().unwrap_or(0)).sum())
                    .unwrap_or(0);
                assert_eq!(j[d]["clat_ns"]["N"].as_u64(), Some(n), "{name} {i} {d} N");
                if n > 0 {
                    let p = &j[d]["clat_ns"]["percentile"];
                    assert_eq!(
                        keys(p),
                        keys(&theirs_percentiles(&fio_doc)),
                        "{name} percentiles"
                    );
                }
            }
        }
        // Throughput beside fio's (informational: group by job name, fio lists clones).
        for j in jobs {
            let jn = j["jobname"].as_str().unwrap_or("");
            let fio_bw: u64 = fio_doc["jobs"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|f| f["jobname"] == jn)
                .map(|f| {
                    f["read"]["bw"].as_u64().unwrap_or(0) + f["write"]["bw"].as_u64().unwrap_or(0)
                })
                .sum();
            let ours_bw =
                j["read"]["bw"].as_u64().unwrap_or(0) + j["write"]["bw"].as_u64().unwrap_or(0);
            println!("{name} [{jn}]: diskscope {ours_bw} KiB/s, fio {fio_bw} KiB/s");
        }
    }
    assert!(
        listed.is_empty(),
        "example files with no expectation: {listed:?}"
    );
}

/// fio's percentile keys from the first direction of its output that has them.
fn theirs_percentiles(doc: &serde_json::Value) -> serde_json::Value {
    for j in doc["jobs"].as_array().into_iter().flatten() {
        for d in ["read", "write"] {
            let p = &j[d]["clat_ns"]["percentile"];
            if p.is_object() {
                return p.clone();
            }
        }
    }
    serde_json::Value::Null
}

/// The same job text through `POST /api/v1/runs` (`"fio_job"`) and through the CLI: the same
/// steps with the same workloads, the stored run named for its jobs; and what the agent must
/// not do for whoever may start a run: follow an `include` (it would read any file for them),
/// take a `${VAR}` from its own environment, run on a `filename` other than the request's
/// target, or take a job file larger than the CLI takes.
#[test]
fn a_job_file_sent_to_the_api_runs_as_the_cli_runs_it() {
    use serde_json::json;
    use tests::server::{OP, VIEW};
    require_io_uring!();
    let dir = disk_tempdir();
    let data = disk_tempdir();
    let server = tests::server::Server::start(data.path(), &[dir.path()]);
    let target = dir.path().join("api.bin");
    let text = "; two groups, as ssd-test.fio has them\n[global]\nbs=4k\nsize=8m\ndirect=1\n\
                ioengine=io_uring\nruntime=1\n\n[seq-write]\nrw=write\nstonewall\n\n\
                [rand-read]\nrw=randread\niodepth=4\nstonewall\n";
    let body = json!({"target": target.display().to_string(), "fio_job": text});
    let id = server.start_run(&body);
    let run = server.wait_status_within(id, "completed", std::time::Duration::from_secs(30));
    assert_eq!(run["name"], "seq-write + rand-read", "{run}");
    assert_eq!(run["preset"], serde_json::Value::Null);
    let steps = run["steps"].as_array().expect("steps");
    assert_eq!(steps.len(), 2, "a step per stonewall group: {run}");
    // Checked before it runs (what the dashboard shows): the same name and steps.
    let (status, checked) = server.post(
        "/api/v1/fio-jobs/check",
        OP,
        &json!({"target": target.display().to_string(), "fio_job": text}),
    );
    assert_eq!(status, 200, "{checked}");
    assert_eq!(checked["name"], run["name"]);
    for (i, step) in steps.iter().enumerate() {
        assert_eq!(
            checked["steps"][i]["spec"], step["spec"],
            "checked step {i}"
        );
    }
    let (status, v) = server.post(
        "/api/v1/fio-jobs/check",
        VIEW,
        &json!({"target": target.display().to_string(), "fio_job": text}),
    );
    assert_eq!(status, 403, "a viewer checks a job file: {v}");

    let job = dir.path().join("same.fio");
    std::fs::write(&job, text).expect("job file");
    let native = dir.path().join("cli.json");
    let out = std::process::Command::new(diskscope_bin())
        .args(["run", "--quiet", "--json"])
        .arg(&native)
        .arg(&job)
        .arg("--target")
        .arg(dir.path().join("cli.bin"))
        .output()
        .expect("run diskscope");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cli: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&native).expect("report")).expect("json");
    for (i, step) in steps.iter().enumerate() {
        assert_eq!(step["name"], cli["steps"][i]["name"], "step {i}");
        assert_eq!(
            step["spec"], cli["steps"][i]["spec"],
            "step {i}: the same workload"
        );
        let bytes = step["summary"]["read"]["bytes"].as_u64().unwrap_or(0)
            + step["summary"]["write"]["bytes"].as_u64().unwrap_or(0);
        assert!(bytes > 0, "step {i} moved no data: {step}");
    }

    // A file that is one group of jobs runs them at once: a reader beside a writer, each
    // its own part, its own fio job in the export, the run's totals their sum.
    let at_once = "[global]\nbs=4k\nsize=8m\ndirect=1\nruntime=1\ntime_based\n\n\
                   [reader]\nrw=randread\niodepth=4\n\n[writer]\nrw=write\n";
    let body = json!({"target": target.display().to_string(), "fio_job": at_once});
    let (status, checked) = server.post("/api/v1/fio-jobs/check", OP, &body);
    assert_eq!(status, 200, "{checked}");
    assert_eq!(checked["together"], true, "{checked}");
    assert_eq!(checked["name"], "reader + writer", "{checked}");
    let id = server.start_run(&body);
    let run = server.wait_status_within(id, "completed", std::time::Duration::from_secs(30));
    assert_eq!(run["name"], "reader + writer", "{run}");
    let parts = run["targets"].as_array().expect("parts");
    let bytes = |v: &serde_json::Value, d: &str| v["summary"][d]["bytes"].as_u64().unwrap_or(0);
    assert_eq!(parts.len(), 2, "{run}");
    assert_eq!(
        (parts[0]["job"].as_str(), parts[1]["job"].as_str()),
        (Some("reader"), Some("writer"))
    );
    assert!(
        bytes(&parts[0], "read") > 0 && bytes(&parts[0], "write") == 0,
        "{run}"
    );
    assert!(
        bytes(&parts[1], "write") > 0 && bytes(&parts[1], "read") == 0,
        "{run}"
    );
    for d in ["read", "write"] {
        assert_eq!(
            bytes(&run, d),
            bytes(&parts[0], d) + bytes(&parts[1], d),
            "{d}: {run}"
        );
    }
    let (status, doc) = server.get(&format!("/api/v1/runs/{id}/export?format=fio-json"), OP);
    assert_eq!(status, 200, "{doc}");
    let jobs = doc["jobs"].as_array().expect("jobs");
    assert_eq!(jobs.len(), 2, "{doc}");
    for (j, part) in jobs.iter().zip(parts) {
        assert_eq!(j["jobname"], part["job"]);
        for d in ["read", "write"] {
            assert_eq!(
                j[d]["io_bytes"].as_u64(),
                Some(bytes(part, d)),
                "{d}: {doc}"
            );
        }
    }
    println!(
        "at once: reader {} B read, writer {} B written",
        bytes(&parts[0], "read"),
        bytes(&parts[1], "write")
    );

    // Refusals: 400, naming what is wrong, nothing started.
    let secret = dir.path().join("secret.txt");
    std::fs::write(&secret, "TOP-SECRET-LINE\n").expect("secret");
    let refused = |job: String, want: &str| {
        let (status, v) = server.post(
            "/api/v1/runs",
            OP,
            &json!({"target": target.display().to_string(), "fio_job": job}),
        );
        let msg = v["message"].as_str().unwrap_or_default().to_string();
        assert_eq!(status, 400, "{want}: {v}");
        assert!(
            msg.contains(want),
            "the refusal does not name '{want}': {msg}"
        );
        assert!(
            !msg.contains("TOP-SECRET"),
            "a refusal shows a file's text: {msg}"
        );
        msg
    };
    refused(
        format!("[a]\nrw=read\ninclude {}\n", secret.display()),
        "request.fio:3: include",
    );
    refused("[a]\nrw=read\nsize=${HOME}\n".into(), "${HOME}");
    refused(
        format!("[a]\nrw=read\nfilename={}\n", secret.display()),
        "job 'a' names filename=",
    );
    refused(
        "[a]\nrw=read\ngtod_reduce=1\n".into(),
        "request.fio:3: option 'gtod_reduce=1'",
    );
    // A group of two jobs before another group: one step of parts, as the CLI runs it.
    let id = server.start_run(&json!({
        "target": target.display().to_string(),
        "fio_job": "[global]\nsize=1m\n[a]\nrw=read\n[b]\nrw=write\n[c]\nrw=read\nstonewall\n",
    }));
    let run = server.wait_status(id, "completed");
    let steps: Vec<&str> = run["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .filter_map(|s| s["name"].as_str())
        .collect();
    assert_eq!(steps, ["a + b", "c"], "{run}");
    let jobs: Vec<(&str, u64)> = run["targets"]
        .as_array()
        .expect("targets")
        .iter()
        .map(|t| {
            (
                t["job"].as_str().unwrap_or(""),
                t["step"].as_u64().unwrap_or(9),
            )
        })
        .collect();
    assert_eq!(jobs, [("a", 0), ("b", 0)], "{run}");
    refused(
        "[a]\nrw=read\nioengine=io_uring\niodepth=100000\n".into(),
        "iodepth",
    );
    // A body near the API's limit (64 KiB; each newline is two bytes in JSON) is parsed to
    // its last line; a larger one is refused before it is read.
    let padded = format!(
        "[a]\nrw=read\n{}bogus_option=1\n",
        "; padding\n".repeat(5_400)
    );
    refused(padded, "request.fio:5403: option 'bogus_option=1'");
    let huge = format!("[a]\nrw=read\n{}", "; padding\n".repeat(7_000));
    let (status, v) = server.post(
        "/api/v1/runs",
        OP,
        &json!({"target": target.display().to_string(), "fio_job": huge}),
    );
    assert_eq!(
        (status, v["code"].as_str()),
        (413, Some("too_large")),
        "{v}"
    );
    let (status, v) = server.post(
        "/api/v1/runs",
        OP,
        &json!({"target": target.display().to_string(), "fio_job": "[a]\nrw=read\n",
                "preset": "quick"}),
    );
    assert_eq!(status, 400, "{v}");
    assert!(
        v["message"]
            .as_str()
            .unwrap_or_default()
            .contains("not several"),
        "{v}"
    );
    let (_, list) = server.get("/api/v1/runs", VIEW);
    assert_eq!(
        list["runs"].as_array().map(Vec::len),
        Some(3),
        "a refused job started a run (the three are the steps, the jobs at once and the group among groups): {list}"
    );
}

/// fio's logs from a job file: the same files fio writes for the same job (names, five
/// integer columns, both directions, one line per direction per `log_avg_msec` window), each
/// figure the stored sample's (KiB/s, IOPS, mean ns). fio's own logs are the reference for
/// the format; the values are printed beside fio's, not compared (this machine is noisy).
#[test]
fn fios_logs_are_written_in_fios_format_from_the_samples() {
    require_io_uring!();
    if Command::new("fio").arg("--version").output().is_err() {
        skip!(Missing::Tool, "fio is not installed (apt-get install fio)");
    }
    let dir = disk_tempdir();
    let job = |target: &Path| {
        format!(
            "[global]\nfilename={}\nsize=8m\nbs=4k\ndirect=1\nioengine=io_uring\nruntime=1\n\
             time_based\nlog_avg_msec=250\n\n[mix]\nrw=randrw\nrwmixread=70\n\
             write_bw_log=mix\nwrite_iops_log=mix\nwrite_lat_log=mix\n",
            target.display()
        )
    };
    let theirs = dir.path().join("fio");
    let ours = dir.path().join("ds");
    for d in [&theirs, &ours] {
        std::fs::create_dir(d).expect("dir");
        std::fs::write(d.join("job.fio"), job(&d.join("t.bin"))).expect("job");
    }
    let fio = Command::new("fio")
        .current_dir(&theirs)
        .args(["job.fio", "--output=/dev/null"])
        .output()
        .expect("fio");
    assert!(
        fio.status.success(),
        "{}",
        String::from_utf8_lossy(&fio.stderr)
    );
    let out = Command::new(diskscope_bin())
        .current_dir(&ours)
        .args(["run", "job.fio", "--json", "report.json"])
        .output()
        .expect("diskscope");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("fio logs: ./mix_bw.1.log"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(log_files(&ours), log_files(&theirs), "the files fio writes");
    assert!(log_files(&ours).contains("mix_bw.1.log"));
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(ours.join("report.json")).expect("report"))
            .expect("json");
    let samples = report["samples"].as_array().expect("samples");
    for name in ["bw", "iops", "lat", "clat"] {
        let file = format!("mix_{name}.1.log");
        let (ours_rows, their_rows) = (log_rows(&ours.join(&file)), log_rows(&theirs.join(&file)));
        assert!(
            ours_rows
                .iter()
                .all(|r| r.len() == 5 && r[3] == 0 && r[4] == 0),
            "{file}"
        );
        let dirs = |r: &[Vec<u64>]| r.iter().map(|r| r[2]).collect::<BTreeSet<_>>();
        assert_eq!(dirs(&ours_rows), dirs(&their_rows), "{file}: directions");
        assert_eq!(
            ours_rows.len(),
            2 * samples.len(),
            "{file}: a line per direction per sample"
        );
        for (i, s) in samples.iter().enumerate() {
            let window =
                (s["end_ns"].as_u64().unwrap() - s["start_ns"].as_u64().unwrap()) as f64 / 1e9;
            for (k, d) in ["read", "write"].iter().enumerate() {
                let row = &ours_rows[2 * i + k];
                let want = match name {
                    "bw" => (s[d]["bytes"].as_f64().unwrap() / 1024.0 / window).round() as u64,
                    "iops" => (s[d]["ios"].as_f64().unwrap() / window).round() as u64,
                    _ => s[d]["lat"]["mean_ns"].as_u64().unwrap(),
                };
                assert_eq!(
                    row[1],
                    want,
                    "{file} line {}: sample {i} {d}",
                    2 * i + k + 1
                );
                assert_eq!(row[2], k as u64);
            }
        }
        println!(
            "{file}: ours {:?}; fio's {:?}",
            &ours_rows[..2],
            &their_rows[..2.min(their_rows.len())]
        );
    }
    assert_eq!(
        std::fs::read_to_string(ours.join("mix_slat.1.log")).expect("slat"),
        ""
    );
}

/// Seed 002's workload (`tests/jobs/seed-002-4k-randwrite.fio`: 2 × 128 KiB sequential
/// precondition, then 2 × 4 KiB random writes at QD32 over the whole drive, the volume per
/// second logged) on a 64 MiB loop device, run by fio and by diskscope: the same two steps
/// with the same bytes (every block twice: 128 MiB each), diskscope's per-second samples
/// adding up to each step, and the same bw log files fio writes.
#[test]
fn seed_002s_workload_runs_on_a_loop_device_as_fio_runs_it() {
    require_io_uring!();
    let dev = match LoopDevice::new(64 << 20, 4096) {
        Ok(d) => d,
        Err(e) => skip!(Missing::LoopDevice, "no loop device: {e}"),
    };
    if !have("fio") {
        skip!(Missing::Tool, "fio is not installed (apt-get install fio)");
    }
    let job = Path::new(env!("CARGO_MANIFEST_DIR")).join("jobs/seed-002-4k-randwrite.fio");
    let dir = disk_tempdir();
    let (fio_dir, ds_dir) = (dir.path().join("fio"), dir.path().join("ds"));
    std::fs::create_dir_all(&fio_dir).expect("dir");
    std::fs::create_dir_all(&ds_dir).expect("dir");
    // The loop device's backing file is sparse: fill it first, or the first tool to write
    // pays for its allocation (measured: 2× the IOPS for whichever runs second).
    let out = diskscope(&[
        "run",
        "-q",
        "--target",
        dev.path_str(),
        "--rw",
        "write",
        "--bs",
        "1M",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));

    let doc = fio_json(
        Command::new("fio")
            .current_dir(&fio_dir)
            .env("DEV", dev.path_str())
            .arg(&job),
    );
    let theirs: Vec<u64> = doc["jobs"]
        .as_array()
        .expect("jobs")
        .iter()
        .map(|j| j["write"]["io_bytes"].as_u64().unwrap_or(0))
        .collect();
    assert_eq!(
        theirs,
        vec![128 << 20, 128 << 20],
        "fio: every block twice per job"
    );

    let json = ds_dir.join("r.json");
    let out = Command::new(diskscope_bin())
        .current_dir(&ds_dir)
        .env("DEV", dev.path_str())
        .args(["run", "--quiet", "--json"])
        .arg(&json)
        .arg(&job)
        .output()
        .expect("diskscope");
    assert!(out.status.success(), "{}", stderr(&out));
    let r = read_report(&json);
    let names: Vec<&str> = r.steps.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["precondition", "randwrite"]);
    for (i, s) in r.steps.iter().enumerate() {
        assert_eq!(s.summary.write.bytes, 128 << 20, "{}", s.name);
        // The volume per second: 1 s samples (log_avg_msec) that add up to the step.
        assert_eq!(s.spec.interval_ms, 1000);
        let per_second: u64 = r
            .samples
            .iter()
            .filter(|x| x.step == i as u32)
            .map(|x| x.write.bytes)
            .sum();
        assert_eq!(per_second, s.summary.write.bytes, "{}", s.name);
    }
    assert_eq!(r.steps[1].summary.write.ios, 2 * (64 << 20) / 4096);
    println!(
        "seed 002 on {}: precondition {:.0} MB/s, 4K QD32 randwrite {:.0} IOPS (fio {:.0} IOPS)",
        dev.path_str(),
        r.steps[0].summary.write.mb_s,
        r.steps[1].summary.write.iops,
        doc["jobs"][1]["write"]["iops"].as_f64().unwrap_or(0.0)
    );
    // The bw logs fio writes, by the same names.
    for d in [&fio_dir, &ds_dir] {
        let mut logs: Vec<String> = std::fs::read_dir(d)
            .expect("dir")
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".log"))
            .collect();
        logs.sort();
        assert_eq!(
            logs,
            ["seed002_bw.1.log", "seed002_bw.2.log"],
            "{}",
            d.display()
        );
    }
}

/// fio-plot (PyPI; `.ci/run` installs it) draws its IOPS/latency bar chart over queue depths
/// from diskscope's fio JSON of randread at QD 1, 4 and 16, and its log graph from
/// diskscope's bw log, as it does from fio's: it parses them and writes its PNGs.
#[test]
fn fio_plot_draws_diskscopes_json_and_bw_log() {
    require_io_uring!();
    if !have("fio-plot") {
        skip!(
            Missing::Tool,
            "fio-plot is not installed (pip install fio-plot)"
        );
    }
    let dir = disk_tempdir();
    let file = dir.path().join("t.bin");
    let f = file.to_str().expect("utf8");
    let json_dir = dir.path().join("json");
    std::fs::create_dir_all(&json_dir).expect("dir");
    for qd in ["1", "4", "16"] {
        let out_file = json_dir.join(format!("randread-{qd}-1.json"));
        let out = diskscope(&[
            "run",
            "-q",
            "--target",
            f,
            "--size",
            "16M",
            "--rw",
            "randread",
            "--iodepth",
            qd,
            "--runtime",
            "300ms",
            "--output-format",
            "fio-json",
            "--output",
            out_file.to_str().expect("utf8"),
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let log_dir = dir.path().join("logs");
    std::fs::create_dir_all(&log_dir).expect("dir");
    std::fs::write(
        log_dir.join("j.fio"),
        format!(
            "[randread-iodepth-4-numjobs-1]\nfilename={f}\nsize=16m\nrw=randread\nbs=4k\n\
             iodepth=4\nruntime=1\ntime_based\nwrite_bw_log=randread-iodepth-4-numjobs-1\n\
             log_avg_msec=250\n"
        ),
    )
    .expect("job");
    let out = Command::new(diskscope_bin())
        .current_dir(&log_dir)
        .args(["run", "-q", "j.fio"])
        .output()
        .expect("diskscope");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(log_dir
        .join("randread-iodepth-4-numjobs-1_bw.1.log")
        .exists());

    for (input, kind, depths, png) in [
        (&json_dir, vec!["-l"], vec!["1", "4", "16"], "qd.png"),
        (&log_dir, vec!["-g", "-t", "bw"], vec!["4"], "log.png"),
    ] {
        let png = dir.path().join(png);
        let out = Command::new("fio-plot")
            .arg("-i")
            .arg(input)
            .args(["-T", "diskscope", "-r", "randread", "-n", "1", "-d"])
            .args(&depths)
            .args(&kind)
            .arg("-o")
            .arg(&png)
            .output()
            .expect("fio-plot");
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "fio-plot {kind:?}: {said}");
        let size = std::fs::metadata(&png).map(|m| m.len()).unwrap_or(0);
        assert!(size > 20_000, "fio-plot {kind:?} drew {size} bytes: {said}");
        println!("fio-plot {kind:?}: {} ({size} B)", png.display());
    }
}

/// A stored run as fio's JSON through `GET /api/v1/runs/{id}/export?format=fio-json[+]`
/// (what the dashboard's *Export fio JSON* downloads): fio's keys (fio's own output on the
/// same job is the reference), one job per step with the stored bytes and I/Os, and for
/// `fio-json+` latency bins that add up to the stored count and that fio's own
/// `fio_jsonplus_clat2csv` turns into its CSV and validates.
#[test]
fn the_api_exports_a_stored_run_as_fios_json() {
    use serde_json::json;
    use tests::server::VIEW;
    require_io_uring!();
    if !have("fio") {
        skip!(Missing::Tool, "fio is not installed (apt-get install fio)");
    }
    let dir = disk_tempdir();
    let data = disk_tempdir();
    let server = tests::server::Server::start(data.path(), &[dir.path()]);
    let target = dir.path().join("x.bin");
    let text = format!(
        "[global]\nfilename={}\nbs=4k\nsize=8m\ndirect=1\nioengine=io_uring\nruntime=1\n\n\
         [seq-write]\nrw=write\nstonewall\n\n[rand-read]\nrw=randread\niodepth=4\nstonewall\n",
        target.display()
    );
    let id = server.start_run(&json!({"target": target.display().to_string(), "fio_job": text}));
    let run = server.wait_status_within(id, "completed", std::time::Duration::from_secs(30));

    let job = dir.path().join("ref.fio");
    std::fs::write(&job, &text).expect("job");
    let theirs = fio_json(Command::new("fio").arg(&job));

    let (status, doc) = server.get(&format!("/api/v1/runs/{id}/export?format=fio-json"), VIEW);
    assert_eq!(status, 200, "{doc}");
    assert_eq!(keys(&doc), keys(&theirs), "top-level keys");
    let jobs = doc["jobs"].as_array().expect("jobs");
    assert_eq!(jobs.len(), 2, "a job per step");
    for (i, j) in jobs.iter().enumerate() {
        assert_eq!(keys(j), keys(&theirs["jobs"][i]), "job {i} keys");
        let step = &run["steps"][i];
        assert_eq!(j["jobname"], step["name"]);
        for d in ["read", "write"] {
            assert_eq!(keys(&j[d]), keys(&theirs["jobs"][i][d]), "job {i} {d} keys");
            assert_eq!(j[d]["io_bytes"], step["summary"][d]["bytes"], "job {i} {d}");
            assert_eq!(j[d]["total_ios"], step["summary"][d]["ios"], "job {i} {d}");
        }
    }

    let (status, plus) = server.get_text(
        &format!("/api/v1/runs/{id}/export?format=fio-json%2B"),
        VIEW,
    );
    assert_eq!(status, 200, "{plus}");
    let parsed: serde_json::Value = serde_json::from_str(&plus).expect("json+");
    for (i, d) in [(0, "write"), (1, "read")] {
        let clat = &parsed["jobs"][i][d]["clat_ns"];
        let sum: u64 = clat["bins"]
            .as_object()
            .expect("bins")
            .values()
            .map(|v| v.as_u64().unwrap_or(0))
            .sum();
        assert_eq!(
            Some(sum),
            clat["N"].as_u64(),
            "job {i} {d}: bins add up to N"
        );
        assert_eq!(clat["N"], run["steps"][i]["summary"][d]["ios"]);
    }
    let src = dir.path().join("plus.json");
    std::fs::write(&src, &plus).expect("json+");
    let csv = dir.path().join("clat.csv");
    // fio's tool writes a CSV per job, then (--validate) checks them against the bins.
    for validate in [false, true] {
        let mut cmd = Command::new("fio_jsonplus_clat2csv");
        cmd.arg(&src).arg(&csv);
        if validate {
            cmd.arg("--validate");
        }
        let out = cmd
            .output()
            .expect("fio_jsonplus_clat2csv (Debian's fio package)");
        assert!(
            out.status.success(),
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let rows = std::fs::read_to_string(dir.path().join("clat_job0.csv")).expect("job 0's CSV");
    assert!(rows.lines().count() > 2, "{rows}");
    // The CLI writes the same form under fio's own name for it (`json+`).
    let out = Command::new(diskscope_bin())
        .args(["run", "--quiet", "--output-format", "json+"])
        .arg(&job)
        .output()
        .expect("diskscope");
    assert!(out.status.success(), "{}", stderr(&out));
    let cli: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json+");
    let clat = &cli["jobs"][1]["read"]["clat_ns"];
    let sum: u64 = clat["bins"]
        .as_object()
        .expect("the CLI's bins")
        .values()
        .map(|v| v.as_u64().unwrap_or(0))
        .sum();
    assert_eq!(Some(sum), clat["N"].as_u64());

    let (status, v) = server.get(&format!("/api/v1/runs/{id}/export?format=fio"), VIEW);
    assert_eq!(status, 400);
    assert!(
        v["message"]
            .as_str()
            .unwrap_or("")
            .contains("format = 'fio': expected json, csv, fio-json or fio-json+"),
        "{v}"
    );
}

/// A job file whose second stonewall group is two jobs with their own workloads (a reader
/// beside a rate-capped writer, after a sequential fill): diskscope runs the group as one
/// step of the run with a part per job, as fio runs it; fio's JSON has a job per section in
/// fio's groups, each with its part's own figures; the writer holds its rate in both tools.
/// The jobs of a group hold their memory together, and a start delay beside others is
/// refused naming the job.
#[test]
fn jobs_at_once_inside_stonewall_groups_run_as_fios_do() {
    require_io_uring!();
    let dir = disk_tempdir();
    let file = dir.path().join("phases.bin");
    let text = |extra: &str| {
        format!(
            "[global]\nfilename={}\nsize=32m\ndirect=1\nioengine=io_uring\n\n\
             [pre]\nrw=write\nbs=1m\n\n\
             [reader]\nstonewall\nrw=randread\nbs=4k\niodepth=8\nruntime=2\ntime_based\n{extra}\n\
             [writer]\nrw=randwrite\nbs=64k\niodepth=2\nrate=20m\nruntime=2\ntime_based\n",
            file.display()
        )
    };
    let job = dir.path().join("phases.fio");
    std::fs::write(&job, text("")).expect("job file");
    let (out, r, v) = run_job_with_fio_json(&job);
    assert!(out.status.success(), "{}", stderr(&out));
    let names: Vec<&str> = r.steps.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["pre", "reader + writer"]);
    let parts: Vec<(Option<&str>, Option<u32>)> = r
        .targets
        .iter()
        .map(|t| (t.job.as_deref(), t.step))
        .collect();
    assert_eq!(
        parts,
        [(Some("reader"), Some(1)), (Some("writer"), Some(1))]
    );
    let (reader, writer) = (&r.targets[0].summary, &r.targets[1].summary);
    assert!(reader.read.ios > 0 && reader.write.ios == 0, "{reader:?}");
    assert!(writer.write.ios > 0 && writer.read.ios == 0, "{writer:?}");
    // The step is its parts together; its samples carry both parts.
    let step = &r.steps[1].summary;
    assert_eq!(step.read.bytes, reader.read.bytes);
    assert_eq!(step.write.bytes, writer.write.bytes);
    assert!(r.samples.iter().filter(|s| s.step == 1).all(|s| s
        .parts
        .iter()
        .map(|p| p.target)
        .collect::<Vec<_>>()
        == [0, 1]));
    let ours_mib_s = writer.write.mib_s;
    assert!(
        (ours_mib_s - 20.0).abs() < 3.0,
        "the writer's rate cap of 20 MiB/s: {ours_mib_s}"
    );
    // fio's JSON: a job per section, in fio's groups, each with its part's figures.
    let jobs: Vec<(String, u64)> = v["jobs"]
        .as_array()
        .expect("jobs")
        .iter()
        .map(|j| {
            (
                j["jobname"].as_str().unwrap_or("").to_string(),
                j["groupid"].as_u64().unwrap_or(9),
            )
        })
        .collect();
    let want = [("pre", 0), ("reader", 1), ("writer", 1)].map(|(n, g)| (n.to_string(), g));
    assert_eq!(jobs, want);
    assert_eq!(
        v["jobs"][1]["read"]["io_bytes"],
        serde_json::json!(reader.read.bytes)
    );
    assert_eq!(
        v["jobs"][2]["write"]["io_bytes"],
        serde_json::json!(writer.write.bytes)
    );
    if fio_or_skip(module_path!()) {
        let f = fio_json(std::process::Command::new("fio").arg(&job));
        let theirs: Vec<(String, u64)> = f["jobs"]
            .as_array()
            .expect("jobs")
            .iter()
            .map(|j| {
                (
                    j["jobname"].as_str().unwrap_or("").to_string(),
                    j["groupid"].as_u64().unwrap_or(9),
                )
            })
            .collect();
        assert_eq!(theirs, want, "fio's jobs and groups");
        let fio_mib_s = f["jobs"][2]["write"]["bw_bytes"].as_f64().unwrap_or(0.0) / 1048576.0;
        println!("writer at rate=20m: diskscope {ours_mib_s:.2} MiB/s, fio {fio_mib_s:.2}");
        // The rate is a cap: never above it, and held at least as well as fio held it in
        // the same minute (a busy machine, CI, can keep fio itself well below 20 MiB/s).
        assert!(
            ours_mib_s <= 20.0 * 1.02 && ours_mib_s >= 0.85 * fio_mib_s.min(20.0),
            "{ours_mib_s} vs {fio_mib_s}"
        );
    }

    // Together the group's buffers must fit the memory budget (each alone fits).
    let big = dir.path().join("big.fio");
    std::fs::write(
        &big,
        text("iodepth=32\nbs=2m\n").replace("iodepth=2\nrate=20m", "iodepth=32\nbs=2m"),
    )
    .expect("job");
    let out = diskscope(&[
        "run",
        "-q",
        "--max-memory",
        "100M",
        big.to_str().expect("utf8"),
    ]);
    assert_ne!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("reader + writer") && stderr(&out).contains("memory budget"),
        "{}",
        stderr(&out)
    );
    // A start delay beside other jobs is refused naming the job.
    let delayed = dir.path().join("delayed.fio");
    std::fs::write(&delayed, text("startdelay=1\n")).expect("job");
    let out = diskscope(&["run", "-q", delayed.to_str().expect("utf8")]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("job 'reader': startdelay beside other jobs"),
        "{}",
        stderr(&out)
    );
}

/// The logs of jobs that run at the same time (a reader and a writer in the group after a
/// fill): each job's own file, named as fio names it (its number in the file), holding only
/// its directions, one line per sample interval whose values are that job's stored figures.
#[test]
fn jobs_at_once_write_their_own_logs_as_fio_does() {
    require_io_uring!();
    if !have("fio") {
        skip!(Missing::Tool, "fio is not installed (apt-get install fio)");
    }
    let dir = disk_tempdir();
    let job = |target: &Path| {
        format!(
            "[global]\nfilename={}\nsize=8m\ndirect=1\nioengine=io_uring\nlog_avg_msec=250\n\n\
             [pre]\nrw=write\nbs=1m\n\n\
             [r]\nstonewall\nrw=randread\nbs=4k\nruntime=1\ntime_based\n\
             write_bw_log=r\nwrite_iops_log=r\nwrite_lat_log=r\n\n\
             [w]\nrw=randwrite\nbs=64k\nruntime=1\ntime_based\nwrite_bw_log=w\n",
            target.display()
        )
    };
    let (theirs, ours) = (dir.path().join("fio"), dir.path().join("ds"));
    for d in [&theirs, &ours] {
        std::fs::create_dir(d).expect("dir");
        std::fs::write(d.join("job.fio"), job(&d.join("t.bin"))).expect("job");
    }
    let fio = Command::new("fio")
        .current_dir(&theirs)
        .args(["job.fio", "--output=/dev/null"])
        .output()
        .expect("fio");
    assert!(
        fio.status.success(),
        "{}",
        String::from_utf8_lossy(&fio.stderr)
    );
    let out = Command::new(diskscope_bin())
        .current_dir(&ours)
        .args(["run", "-q", "job.fio", "--json", "report.json"])
        .output()
        .expect("diskscope");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(log_files(&ours), log_files(&theirs), "the files fio writes");
    let dirs = |r: &[Vec<u64>]| r.iter().map(|l| l[2]).collect::<BTreeSet<u64>>();
    for (file, want) in [
        ("r_bw.2.log", 0),
        ("r_iops.2.log", 0),
        ("r_lat.2.log", 0),
        ("w_bw.3.log", 1),
    ] {
        let (o, t) = (log_rows(&ours.join(file)), log_rows(&theirs.join(file)));
        assert!(!o.is_empty(), "{file}: empty");
        assert_eq!(
            dirs(&o),
            BTreeSet::from([want]),
            "{file}: diskscope's directions"
        );
        assert_eq!(dirs(&t), BTreeSet::from([want]), "{file}: fio's directions");
    }
    // The values are each job's stored figures, sample by sample.
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(ours.join("report.json")).expect("report"))
            .expect("json");
    let step1: Vec<&serde_json::Value> = report["samples"]
        .as_array()
        .expect("samples")
        .iter()
        .filter(|s| s["step"] == serde_json::json!(1) && s.get("pause").is_none())
        .collect();
    let iops = log_rows(&ours.join("r_iops.2.log"));
    let w_bw = log_rows(&ours.join("w_bw.3.log"));
    assert_eq!(iops.len(), step1.len(), "a line per sample interval");
    for ((s, i), b) in step1.iter().zip(&iops).zip(&w_bw) {
        let secs =
            (s["end_ns"].as_u64().unwrap_or(0) - s["start_ns"].as_u64().unwrap_or(0)) as f64 / 1e9;
        let part = |n: u64| {
            s["parts"]
                .as_array()
                .and_then(|p| p.iter().find(|p| p["target"] == serde_json::json!(n)))
                .expect("the part")
        };
        let r_ios = part(0)["dirs"][0]["ios"].as_f64().unwrap_or(0.0);
        let w_bytes = part(1)["dirs"][1]["bytes"].as_f64().unwrap_or(0.0);
        assert_eq!(i[1], (r_ios / secs).round() as u64, "r iops {s}");
        assert_eq!(b[1], (w_bytes / 1024.0 / secs).round() as u64, "w bw {s}");
    }
}
