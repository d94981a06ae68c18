//! The rules a run's intervals are judged by as they come. A rate floor (fio's `rate_min` /
//! `rate_iops_min`): a job that cannot keep it fails at the first interval below it after
//! fio's 2-second settle period, as fio 3.33's does on the same job file ("rate_min=… not
//! met", error 5), keeping what it measured; one that keeps it completes. A steady-state
//! rule (fio's `steadystate`, `ss_dur`, `ss_ramp`): the run ends as done once steady, as
//! fio's does, and says so in its analysis and in fio's JSON.

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
    let fio_doc = dir.path().join("slow-fio.json");
    let j = job.to_str().expect("utf8");
    let (out, r) = run_with_report(&[j]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
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

    if fio_or_skip(module_path!()) {
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
        let (out, r) = run_with_report(&[job.to_str().expect("utf8")]);
        assert!(out.status.success(), "{floor}: {}", stderr(&out));
        assert_eq!(r.status, shared::RunStatus::Completed);
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

fn fio_doc(out: &std::process::Output) -> serde_json::Value {
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(&text[text.find('{').expect("json")..]).expect("fio json")
}

/// diskscope's rule over fio's own window (its `data.iops`, one value a second): the same
/// max deviation, slope and criterion as fio's block says. (fio leaves a window it never
/// filled at zeros, and its figures at 0: such a block is refused, not compared.)
fn judged_as_fio(block: &serde_json::Value, rule: &str) {
    let values: Vec<f64> = block["data"]["iops"]
        .as_array()
        .expect("fio's window")
        .iter()
        .map(|v| v.as_f64().expect("a value"))
        .collect();
    assert!(
        values.iter().all(|&v| v > 0.0),
        "fio never filled its window: {block}"
    );
    let r = shared::steady::SteadyRule::parse(rule, 3_000, 0).expect("rule");
    let j = r.judge(values.iter().enumerate().map(|(i, &v)| (i as f64, v)));
    let criterion: f64 = block["criterion"]
        .as_str()
        .expect("criterion")
        .trim_end_matches('%')
        .parse()
        .expect("a number");
    let near = |ours: f64, theirs: f64| (ours - theirs).abs() <= 1e-3 * theirs.abs().max(1.0);
    let (dev, slope) = (
        block["max_deviation"].as_f64().expect("max_deviation"),
        block["slope"].as_f64().expect("slope"),
    );
    assert!(
        near(j.criterion, criterion),
        "{rule} over {values:?}: {j:?} vs fio {block}"
    );
    // fio computes only what its rule needs: the slope, or the deviation.
    let (ours, theirs) = if r.slope {
        (j.slope, slope)
    } else {
        (j.max_deviation, dev)
    };
    assert!(
        near(ours, theirs),
        "{rule} over {values:?}: {j:?} vs fio {block}"
    );
    println!(
        "{rule} over fio's {values:?}: criterion {:.6} (fio {criterion})",
        j.criterion
    );
}

#[test]
fn a_steady_run_ends_once_steady_as_fios_does() {
    let dir = disk_tempdir();
    let file = laid_out_file(dir.path(), "steady.bin");
    let job = |rule: &str, runtime: u32| {
        format!(
            "[ss]\nfilename={file}\nrw=randread\nbs=4k\nioengine=psync\ntime_based\n\
             runtime={runtime}\nsteadystate={rule}\nss_dur=3\nss_ramp=1\n"
        )
    };
    // A loose rule on a workload held steady by a rate cap (a loaded machine's IOPS are
    // not): met on the first 3 s window after the 1 s ramp.
    let path = dir.path().join("loose.fio");
    std::fs::write(&path, job("iops:50%", 20) + "rate_iops=200\n").expect("job");
    let (j, fj) = (
        path.to_str().expect("utf8"),
        dir.path().join("loose-fio.json"),
    );
    let (out, r) = run_with_report(&[j]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        r.status,
        shared::RunStatus::Completed,
        "a steady run is done"
    );
    let ss = r.analysis.steady_state.clone().expect("steady state");
    assert!(ss.attained, "{ss:?}");
    let (from, to) = (
        ss.window_start_s.expect("from"),
        ss.window_end_s.expect("to"),
    );
    assert!(
        from >= 1.0 && (to - from - 3.0).abs() < 0.5,
        "window {from}..{to}"
    );
    assert!(ss.criterion.is_some_and(|c| c <= 50.0), "{ss:?}");
    let ours_ms = r.summary.duration_ns / 1_000_000;
    assert!(ours_ms < 10_000, "ran {ours_ms} ms of 20 s");
    let out = diskscope(&[
        "run",
        "-q",
        "--output-format",
        "fio-json",
        "--output",
        fj.to_str().expect("utf8"),
        j,
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&fj).expect("fio json")).expect("json");
    let block = &doc["jobs"][0]["steadystate"];
    assert_eq!(block["ss"], "iops:50.000000%");
    assert_eq!(block["attained"], 1);
    assert_eq!(block["duration"], 3);
    assert_eq!(block["data"]["iops"].as_array().map(Vec::len), Some(3));

    // A rule nothing meets (no deviation at all): the run goes to its end, not attained.
    let path = dir.path().join("strict.fio");
    std::fs::write(&path, job("iops:0%", 6)).expect("job");
    let (out, r) = run_with_report(&[path.to_str().expect("utf8")]);
    assert!(out.status.success(), "{}", stderr(&out));
    let ss = r.analysis.steady_state.expect("steady state");
    assert!(
        !ss.attained && r.summary.duration_ns >= 5_900_000_000,
        "{ss:?}"
    );

    if fio_or_skip(module_path!()) {
        let o = std::process::Command::new("fio")
            .args(["--output-format=json", j])
            .output()
            .expect("fio");
        assert!(o.status.success());
        let d = fio_doc(&o);
        assert_eq!(d["jobs"][0]["steadystate"]["attained"], 1);
        let fio_ms = d["jobs"][0]["read"]["runtime"].as_u64().expect("runtime");
        assert!(fio_ms < 10_000, "fio ran {fio_ms} ms");
        let o = std::process::Command::new("fio")
            .args(["--output-format=json", path.to_str().expect("utf8")])
            .output()
            .expect("fio");
        let strict = fio_doc(&o)["jobs"][0]["steadystate"].clone();
        assert_eq!(strict["attained"], 0);
        println!("both stop once steady: diskscope after {ours_ms} ms, fio after {fio_ms} ms");
        // fio's own windows (whatever this run measured) judged by diskscope's rule give
        // the deviation, slope and criterion fio printed: the loose and strict deviation
        // rules above, and a slope rule.
        judged_as_fio(&d["jobs"][0]["steadystate"], "iops:50%");
        judged_as_fio(&strict, "iops:0%");
        std::fs::write(&path, job("iops_slope:0%", 6)).expect("job");
        let o = std::process::Command::new("fio")
            .args(["--output-format=json", path.to_str().expect("utf8")])
            .output()
            .expect("fio");
        judged_as_fio(&fio_doc(&o)["jobs"][0]["steadystate"], "iops_slope:0%");
    }

    // The rule's text is checked; a window is needed.
    let out = diskscope(&[
        "run",
        "-q",
        "--target",
        &file,
        "--rw",
        "randread",
        "--steadystate",
        "lat:2%",
        "--ss-dur",
        "3s",
    ]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("'lat:2%': expected iops, iops_slope, bw or bw_slope"),
        "{}",
        stderr(&out)
    );
    std::fs::write(&path, job("iops:2%", 4).replace("ss_dur=3\n", "")).expect("job");
    let out = diskscope(&["run", "-q", path.to_str().expect("utf8")]);
    assert!(
        stderr(&out).contains("steadystate needs ss_dur"),
        "{}",
        stderr(&out)
    );
}
