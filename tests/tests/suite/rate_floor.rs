//! A rate floor (fio's `rate_min` / `rate_iops_min`): a job that cannot keep it fails at the
//! first interval below it after fio's 2-second settle period, as fio 3.33's does on the same
//! job file ("rate_min=… not met", error 5), keeping what it measured; one that keeps it
//! completes.

use tests::*;

fn job_text(file: &str, extra: &str) -> String {
    format!(
        "[floor]\nfilename={file}\nrw=randread\nbs=4k\nioengine=psync\n{extra}time_based\nruntime=6\n"
    )
}

#[test]
fn a_run_below_its_floor_fails_there_as_fios_does() {
    let dir = disk_tempdir();
    let file = laid_out_file(dir.path(), "floor.bin");
    // 4 KiB every 20 ms is about 0.2 MB/s: below a floor of 1 MiB/s.
    let job = dir.path().join("slow.fio");
    std::fs::write(&job, job_text(&file, "thinktime=20ms\nrate_min=1m\n")).expect("job");
    let json = dir.path().join("slow.json");
    let fio_doc = dir.path().join("slow-fio.json");
    let j = job.to_str().expect("utf8");
    let out = diskscope(&["run", "-q", "--json", json.to_str().expect("utf8"), j]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let r = read_report(&json);
    assert_eq!(r.status, shared::RunStatus::Failed);
    let e = r.error.expect("the floor's error");
    assert!(
        e.message
            .starts_with("rate_min = 1048576 B/s not met: reads ran 0."),
        "{}",
        e.message
    );
    assert!(!r.samples.is_empty(), "what was measured is kept");
    assert!(
        r.summary.duration_ns < 5_000_000_000,
        "stopped after the settle period, not after the 6 s: {} ns",
        r.summary.duration_ns
    );
    // fio's JSON of the same run says the job failed as fio's does.
    let out = diskscope(&[
        "run",
        "-q",
        "--output-format",
        "fio-json",
        "--output",
        fio_doc.to_str().expect("utf8"),
        j,
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let ours: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&fio_doc).expect("fio json")).expect("json");
    assert_eq!(ours["jobs"][0]["error"], 5);
    assert_eq!(ours["jobs"][0]["job options"]["rate_min"], "1m");

    if have("fio") {
        let o = std::process::Command::new("fio")
            .args(["--output-format=json", j])
            .output()
            .expect("fio");
        assert!(!o.status.success(), "fio kept a floor it cannot keep");
        let text = String::from_utf8_lossy(&o.stdout);
        let doc: serde_json::Value =
            serde_json::from_str(&text[text.find('{').expect("json")..]).expect("fio json");
        assert_eq!(doc["jobs"][0]["error"], 5);
        let fio_ms = doc["jobs"][0]["read"]["runtime"].as_u64().expect("runtime");
        assert!(fio_ms < 6_000, "fio ran {fio_ms} ms");
        println!(
            "both fail below the floor: diskscope after {} ms, fio after {fio_ms} ms",
            r.summary.duration_ns / 1_000_000
        );
    }

    // Without the think time the same floor (and an IOPS one) is kept: the run completes.
    for floor in ["rate_min=1m\n", "rate_iops_min=50\n"] {
        let job = dir.path().join("kept.fio");
        std::fs::write(
            &job,
            job_text(&file, floor).replace("runtime=6", "runtime=2"),
        )
        .expect("job");
        let json = dir.path().join("kept.json");
        let out = diskscope(&[
            "run",
            "-q",
            "--json",
            json.to_str().expect("utf8"),
            job.to_str().expect("utf8"),
        ]);
        assert!(out.status.success(), "{floor}: {}", stderr(&out));
        assert_eq!(read_report(&json).status, shared::RunStatus::Completed);
    }

    // A floor above the cap can never be kept: refused before anything runs.
    let out = diskscope(&[
        "run",
        "-q",
        "--target",
        &file,
        "--rw",
        "randread",
        "--rate",
        "1MB",
        "--rate-min",
        "2MB",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("rate_min = 2000000 B/s: must be above 0 and at most the rate cap"),
        "{}",
        stderr(&out)
    );
}
