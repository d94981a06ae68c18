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

/// The files diskscope runs, with the steps (stonewall groups) each has.
const RUN: &[(&str, usize)] = &[
    ("fio-seq-read.fio", 1),
    ("fio-seq-write.fio", 1),
    ("fio-rand-read.fio", 1),
    ("fio-rand-write.fio", 1),
    ("fio-rand-RW.fio", 1),
    ("fio-seq-RW.fio", 1),
    ("ssd-test.fio", 4),
    ("tiobench-example.fio", 4),
    ("basic-verify.fio", 1),
];

/// The files diskscope refuses, with what the refusal must name.
const REFUSED: &[(&str, &str)] = &[
    ("null.fio", "null.fio:3: option 'gtod_reduce=1'"),
    (
        "aio-read.fio",
        "jobs 'file1' and 'file2' would run at the same time",
    ),
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
            let step = &report["steps"][i];
            assert_eq!(j["jobname"], step["name"], "{name}: job {i}");
            for d in ["read", "write"] {
                assert_eq!(
                    j[d]["io_bytes"], step["summary"][d]["bytes"],
                    "{name} {i} {d} bytes"
                );
                assert_eq!(
                    j[d]["total_ios"], step["summary"][d]["ios"],
                    "{name} {i} {d} ios"
                );
                let n: u64 = step["histogram"][d]
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
