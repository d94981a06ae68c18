//! When the engine issues: a rate cap as Poisson arrivals (`--rate-process poisson`, fio's
//! `rate_process`) and think time (`--thinktime`, fio's `thinktime*`), through the CLI, a
//! fio job file (read as fio reads it, then run by fio and by diskscope) and the API, on a
//! real file. What is asserted is what the options guarantee, not a speed: a think of T
//! after every B I/Os allows at most B I/Os per T, a Poisson process's counts scatter
//! about their mean as a Poisson count does while a linear cap's do not.

use serde_json::json;
use shared::pacing::{RateProcess, ThinkTime};
use tests::server::{Server, OP};
use tests::*;

/// The I/Os of each 100 ms sample of a 3 s random read at 1000 IOPS spaced by `process`.
fn counts(file: &str, process: &str) -> Vec<f64> {
    let (out, r) = run_with_report(&[
        "--target",
        file,
        "--size",
        "64M",
        "--rw",
        "randread",
        "--runtime",
        "3s",
        "--interval-ms",
        "100",
        "--rate",
        "1000iops",
        "--rate-process",
        process,
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(r.spec.rate_process.to_string(), process);
    let total = r.summary.read.ios as f64;
    // At most the cap (3000) and a Poisson count's scatter above it.
    assert!(total < 3000.0 + 5.0 * 3000f64.sqrt(), "{process}: {total}");
    r.samples.iter().map(|s| s.read.ios as f64).collect()
}

/// Variance over mean: 1 for Poisson counts, about 0 for evenly spaced ones.
fn dispersion(c: &[f64]) -> f64 {
    let m = c.iter().sum::<f64>() / c.len() as f64;
    c.iter().map(|x| (x - m).powi(2)).sum::<f64>() / c.len() as f64 / m
}

#[test]
fn poisson_arrivals_scatter_as_poisson_counts() {
    require_io_uring!();
    let dir = disk_tempdir();
    let f = laid_out_file(dir.path(), "p.bin");
    let poisson = counts(&f, "poisson");
    let d = dispersion(&poisson);
    eprintln!("poisson per 100 ms: {poisson:?}, dispersion {d:.2}");
    // 30 counts of mean 100: a Poisson dispersion falls in 0.4..2 but for 1 in 10^4
    // (a stall only spreads the counts further, so a loaded machine cannot pass a linear
    // cap off as Poisson: the lower bound is the claim).
    assert!(d > 0.4, "dispersion {d}");
    let linear = counts(&f, "linear");
    eprintln!(
        "linear per 100 ms: {linear:?}, dispersion {:.2}",
        dispersion(&linear)
    );
    // Without a rate the process means nothing: refused, naming it.
    let out = diskscope(&[
        "run",
        "--target",
        &f,
        "--rw",
        "randread",
        "--rate-process",
        "poisson",
    ]);
    assert!(
        stderr(&out).contains("rate_process = poisson: spaces a rate cap's I/Os: set a rate"),
        "{}",
        stderr(&out)
    );
}

/// `thinktime=20ms` after every 4 I/Os at QD1 for 1 s: at most 4 × (1 s / 20 ms + 1) I/Os;
/// the same job file as fio runs it, read the same (units, defaults), and its IOPS beside
/// fio's (printed).
#[test]
fn think_time_holds_the_job_to_its_blocks_per_think() {
    require_io_uring!();
    let dir = disk_tempdir();
    let f = laid_out_file(dir.path(), "p.bin");
    let job = dir.path().join("think.fio");
    std::fs::write(
        &job,
        format!(
            "[think]\nfilename={f}\nsize=64m\nrw=randread\nbs=4k\ndirect=1\nioengine=io_uring\n\
             runtime=1\ntime_based\nthinktime=20ms\nthinktime_blocks=4\nthinktime_spin=500\n"
        ),
    )
    .expect("job");
    let json = dir.path().join("r.json");
    let out = diskscope(&[
        "run",
        "-q",
        "--json",
        json.to_str().expect("utf8"),
        job.to_str().expect("utf8"),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let r = read_report(&json);
    assert_eq!(
        r.spec.think,
        Some(ThinkTime {
            us: 20_000,
            spin_us: 500,
            blocks: 4,
            count_issued: false
        })
    );
    let ios = r.summary.read.ios;
    assert!(ios <= 4 * (1000 / 20 + 1), "{ios} I/Os in 1 s");
    // Not stalled either: each 4 I/Os and their think well within 3 × 20 ms.
    assert!(ios >= 4 * 1000 / 60, "{ios} I/Os in 1 s");
    if fio_or_skip(module_path!()) {
        let limit = std::time::Duration::from_secs(20);
        match fio_json_within(std::process::Command::new("fio").arg(&job), limit) {
            Some(doc) => {
                let theirs = doc["jobs"][0]["read"]["total_ios"].as_u64().unwrap_or(0);
                println!("think.fio: diskscope {ios} I/Os, fio {theirs} I/Os in 1 s");
            }
            None => println!("think.fio: diskscope {ios} I/Os; fio hung past {limit:?} (killed)"),
        }
    }
    // A think option without the think time is refused, naming it.
    let out = diskscope(&[
        "run",
        "--target",
        &f,
        "--rw",
        "randread",
        "--thinktime-blocks",
        "3",
    ]);
    assert!(
        stderr(&out).contains("invalid value '3' for '--thinktime-blocks': needs thinktime"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn the_api_takes_think_time_and_a_rate_process() {
    require_io_uring!();
    let data = disk_tempdir();
    let server = Server::start(data.path(), &[]);
    let scratch = server.scratch_target();
    let think = json!({"us": 5000, "blocks": 2});
    let spec = json!({"rw": "randread", "size": 16777216, "runtime_ms": 500, "think": think,
                      "rate": {"iops": 2000}, "rate_process": "poisson"});
    let id = server.start_run(&json!({"target": scratch, "spec": spec}));
    let run = server.wait_status_within(id, "completed", std::time::Duration::from_secs(60));
    assert_eq!(
        run["spec"]["think"],
        json!({"us": 5000, "spin_us": 0, "blocks": 2, "count_issued": false})
    );
    let spec: shared::WorkloadSpec = serde_json::from_value(run["spec"].clone()).expect("spec");
    assert_eq!(spec.rate_process, RateProcess::Poisson);
    // 2 I/Os per 5 ms at most: 200 in 0.5 s, however fast the rate.
    let ios = run["summary"]["read"]["ios"].as_u64().expect("ios");
    assert!(ios <= 2 * (500 / 5 + 1), "{ios}");
    let (status, v): (u16, serde_json::Value) = server.post(
        "/api/v1/runs",
        OP,
        &json!({"target": scratch, "spec": {"rw": "randread", "think": {"us": 10, "spin_us": 20}}}),
    );
    assert_eq!(status, 400, "{v}");
    assert!(
        v["message"]
            .as_str()
            .unwrap_or("")
            .contains("the spin (20 µs) is part of the think time (10 µs)"),
        "{v}"
    );
}
