//! A mix of I/O sizes (`--bssplit`, fio's `bssplit`) through the CLI, a fio job file (run
//! by fio and by diskscope) and the API, on a real file: the run's bytes per I/O are the
//! mix's mean within five standard errors (a count, not a time: the runs are size-based).

use serde_json::json;
use shared::bssplit::BsSplit;
use tests::server::{Server, OP};
use tests::*;

const MIX: &str = "4k/60:64k/30:256k/10";

/// Whether `bytes` over `ios` I/Os is the mix's mean, within five standard errors.
fn mean_is_the_mix(who: &str, bytes: f64, ios: f64) {
    let split: BsSplit = MIX.parse().expect("mix");
    let shares: Vec<(u64, f64)> = split
        .0
        .iter()
        .map(|&(b, p)| (b, f64::from(p) / 100.0))
        .collect();
    mean_is(who, &shares, bytes, ios);
}

/// Whether `bytes` over `ios` I/Os is the mean of sizes drawn with these probabilities,
/// within five standard errors.
fn mean_is(who: &str, shares: &[(u64, f64)], bytes: f64, ios: f64) {
    let mean: f64 = shares.iter().map(|&(b, p)| p * b as f64).sum();
    let var = shares
        .iter()
        .map(|&(b, p)| p * (b as f64 - mean).powi(2))
        .sum::<f64>();
    let got = bytes / ios;
    let tol = 5.0 * (var / ios).sqrt();
    println!("{who}: {got:.0} B per I/O over {ios} I/Os, the mix's mean {mean:.0} ± {tol:.0}");
    assert!((got - mean).abs() < tol, "{who}: {got} vs {mean} ± {tol}");
}

#[test]
fn the_cli_and_a_job_file_issue_the_mix() {
    require_io_uring!();
    let dir = disk_tempdir();
    let f = laid_out_file(dir.path(), "b.bin");
    let (out, r) = run_with_report(&[
        "--target",
        &f,
        "--size",
        "64M",
        "--rw",
        "randread",
        "--iodepth",
        "8",
        "--io-size",
        "512M",
        "--bssplit",
        MIX,
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(r.spec.bs, 4096, "bs is the mix's smallest size");
    let s = &r.summary.read;
    // The budget is bytes: the last I/O may pass it by less than the largest size.
    assert!(
        s.bytes >= 512 << 20 && s.bytes < (512 << 20) + (256 << 10),
        "{}",
        s.bytes
    );
    mean_is_the_mix("diskscope --bssplit", s.bytes as f64, s.ios as f64);

    // The same mix in a fio job file (norandommap: fio's random map skews the sizes once
    // the map fills, diskscope has none with a mix), run by fio and by diskscope.
    let job = dir.path().join("mix.fio");
    std::fs::write(
        &job,
        format!(
            "[mix]\nfilename={f}\nsize=64m\nio_size=512m\nrw=randread\nbssplit={MIX}\n\
             norandommap\niodepth=8\nioengine=io_uring\ndirect=1\n"
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
    assert_eq!(r.spec.bssplit, MIX.parse().ok());
    mean_is_the_mix(
        "diskscope mix.fio",
        r.summary.read.bytes as f64,
        r.summary.read.ios as f64,
    );
    if fio_or_skip(module_path!()) {
        let doc = fio_json(std::process::Command::new("fio").arg(&job));
        let read = &doc["jobs"][0]["read"];
        let (bytes, ios) = (read["io_bytes"].as_f64(), read["total_ios"].as_f64());
        mean_is_the_mix(
            "fio mix.fio",
            bytes.expect("io_bytes"),
            ios.expect("total_ios"),
        );
    }
    // Without norandommap the job still runs, saying how its offsets are drawn.
    let text = std::fs::read_to_string(&job)
        .expect("job")
        .replace("norandommap\n", "");
    std::fs::write(&job, text).expect("job");
    let out = diskscope(&[
        "run",
        "-q",
        "--json",
        json.to_str().expect("utf8"),
        job.to_str().expect("utf8"),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("with bssplit diskscope draws random offsets as norandommap does"),
        "{}",
        stderr(&out)
    );
    // What needs one block size is refused with a mix, naming it; so is a bad mix.
    for (args, why) in [
        (
            vec!["--rw", "randwrite", "--verify"],
            "verify = true: needs one block size: not with bssplit",
        ),
        (
            vec!["--rw", "randread", "--bs", "64k"],
            "invalid value '64k' for '--bs': '64k': give one of bs, bsrange and bssplit",
        ),
    ] {
        let mut all = vec!["run", "--target", &f, "--size", "64M", "--bssplit", MIX];
        all.extend(args);
        let out = diskscope(&all);
        assert!(stderr(&out).contains(why), "{}", stderr(&out));
    }
    let out = diskscope(&[
        "run",
        "--target",
        &f,
        "--rw",
        "read",
        "--bssplit",
        "4k/50:8k/40",
    ]);
    assert!(
        stderr(&out).contains("the shares add up to 90 %, not 100"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn the_api_takes_a_mix_and_names_a_bad_one() {
    require_io_uring!();
    let data = disk_tempdir();
    let server = Server::start(data.path(), &[]);
    let scratch = server.scratch_target();
    let mix = json!([[4096, 50], [131072, 50]]);
    let spec = json!({"rw": "randwrite", "bs": 4096, "size": 16777216, "io_size": 33554432,
                      "iodepth": 4, "bssplit": mix});
    let id = server.start_run(&json!({"target": scratch, "spec": spec}));
    let run = server.wait_status_within(id, "completed", std::time::Duration::from_secs(60));
    assert_eq!(run["spec"]["bssplit"], mix);
    let (bytes, ios) = (
        run["summary"]["write"]["bytes"].as_f64().expect("bytes"),
        run["summary"]["write"]["ios"].as_f64().expect("ios"),
    );
    // 32 MiB in I/Os of 4 KiB and 128 KiB half and half: about 496 I/Os.
    assert!(
        bytes >= 33554432.0 && (300.0..700.0).contains(&ios),
        "{bytes} B in {ios}"
    );
    let (status, v): (u16, serde_json::Value) = server.post(
        "/api/v1/runs",
        OP,
        &json!({"target": scratch, "spec": {"rw": "randread", "bs": 4096, "bssplit": [[4096, 50], [8192, 40]]}}),
    );
    assert_eq!(status, 400, "{v}");
    assert!(
        v["message"]
            .as_str()
            .unwrap_or("")
            .contains("bssplit = 4K/50:8K/40: the shares add up to 90 %, not 100"),
        "{v}"
    );
}

/// fio's `bsrange=4k-64k`: each size a multiple of 4 KiB up to 64 KiB, all as likely.
fn range_shares() -> Vec<(u64, f64)> {
    (1..=16u64).map(|k| (k * 4096, 1.0 / 16.0)).collect()
}

#[test]
fn a_size_range_draws_what_fios_bsrange_draws() {
    require_io_uring!();
    let dir = disk_tempdir();
    let f = laid_out_file(dir.path(), "r.bin");
    let (out, r) = run_with_report(&[
        "--target",
        &f,
        "--size",
        "64M",
        "--rw",
        "randread",
        "--iodepth",
        "8",
        "--io-size",
        "256M",
        "--bsrange",
        "4k-64k",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!((r.spec.bs, r.spec.bs_max), (4096, Some(65536)));
    let s = &r.summary.read;
    mean_is(
        "diskscope --bsrange",
        &range_shares(),
        s.bytes as f64,
        s.ios as f64,
    );

    let job = dir.path().join("range.fio");
    std::fs::write(
        &job,
        format!(
            "[range]\nfilename={f}\nsize=64m\nio_size=256m\nrw=randread\nbsrange=4k-64k\n\
             norandommap\niodepth=8\nioengine=io_uring\ndirect=1\n"
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
    assert_eq!(r.spec.bs_max, Some(65536));
    mean_is(
        "diskscope range.fio",
        &range_shares(),
        r.summary.read.bytes as f64,
        r.summary.read.ios as f64,
    );
    if fio_or_skip(module_path!()) {
        let doc = fio_json(std::process::Command::new("fio").arg(&job));
        let read = &doc["jobs"][0]["read"];
        mean_is(
            "fio range.fio",
            &range_shares(),
            read["io_bytes"].as_f64().expect("io_bytes"),
            read["total_ios"].as_f64().expect("total_ios"),
        );
    }
    // What needs one block size is refused with a range, naming it; so is a range that
    // goes down, and --bs beside --bsrange.
    for (args, why) in [
        (
            vec!["--bsrange", "4k-64k", "--rw", "randwrite", "--verify"],
            "verify = true: needs one block size: not with a range of sizes (bs_max)",
        ),
        (
            vec!["--bsrange", "64k-4k", "--rw", "read"],
            "invalid size range '64k-4k': the largest size is below the smallest",
        ),
        (
            vec!["--bsrange", "4k-64k", "--bs", "8k"],
            "give one of bs, bsrange and bssplit",
        ),
        (
            vec!["--bsrange", "4k-6000", "--rw", "read"],
            "bs_max = 6000: with O_DIRECT every size must be a multiple of 512",
        ),
    ] {
        let mut all = vec!["run", "--target", &f, "--size", "64M"];
        all.extend(args);
        let out = diskscope(&all);
        assert!(!out.status.success());
        assert!(stderr(&out).contains(why), "{why}: {}", stderr(&out));
    }
}

/// Where each run of written (non-zero) 4 KiB pages of `path` starts and how long it is,
/// in bytes.
fn written_runs(path: &std::path::Path) -> Vec<(usize, usize)> {
    let data = std::fs::read(path).expect("read back");
    let mut runs = Vec::new();
    let mut start = None;
    let pages = data.chunks(4096).map(|c| c.iter().any(|&b| b != 0));
    for (i, w) in pages.chain([false]).enumerate() {
        match (w, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                runs.push((s * 4096, (i - s) * 4096));
                start = None;
            }
            _ => {}
        }
    }
    runs
}

/// Reads and writes each with their own sizes (fio's `bs=4k,64k` and
/// `bssplit=READS,WRITES`; `--write-bs`): in a random mix every read is 4 KiB and every
/// write 64 KiB, each on its own size's grid (the writes change only whole 64 KiB cells of
/// a zeroed file), in diskscope's job file, its CLI and fio 3.33 alike; per-direction
/// mixes draw each direction's mean. A mode that cannot mix them is refused naming it.
#[test]
fn each_direction_has_its_own_sizes_as_fios_do() {
    require_io_uring!();
    let dir = disk_tempdir();
    let zeroed = |name: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, vec![0u8; 64 << 20]).expect("zeroed file");
        p
    };
    let job = |name: &str, file: &std::path::Path, sizes: &str| {
        let p = dir.path().join(format!("{name}.fio"));
        std::fs::write(
            &p,
            format!(
                "[d]\nfilename={}\nsize=64m\nio_size=8m\nrw=randrw\nrwmixread=50\n{sizes}\n\
                 norandommap\niodepth=4\nioengine=io_uring\ndirect=1\n",
                file.display()
            ),
        )
        .expect("job");
        p
    };
    let on_grid = |who: &str, file: &std::path::Path| {
        let runs = written_runs(file);
        assert!(!runs.is_empty(), "{who}: nothing written");
        for (start, len) in runs {
            assert!(
                start % (64 << 10) == 0 && len % (64 << 10) == 0,
                "{who}: written bytes {start}..+{len} are not whole 64 KiB cells"
            );
        }
    };
    // bs=4k,64k.
    let file = zeroed("ours.bin");
    let (out, r) = run_with_report(&[job("ours", &file, "bs=4k,64k").to_str().expect("utf8")]);
    assert!(out.status.success(), "{}", stderr(&out));
    let (rd, wr) = (&r.summary.read, &r.summary.write);
    assert!(
        rd.ios > 20 && wr.ios > 20,
        "{} reads, {} writes",
        rd.ios,
        wr.ios
    );
    assert_eq!((rd.bytes / rd.ios, wr.bytes / wr.ios), (4096, 65536));
    on_grid("diskscope (job file)", &file);
    // The same with the CLI's flag.
    let cli = zeroed("cli.bin");
    let t = cli.to_str().expect("utf8");
    let (out, r) = run_with_report(&[
        "--target",
        t,
        "--rw",
        "randrw",
        "--bs",
        "4K",
        "--write-bs",
        "64K",
        "--io-size",
        "8M",
        "--iodepth",
        "4",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let (rd, wr) = (&r.summary.read, &r.summary.write);
    assert_eq!((rd.bytes / rd.ios, wr.bytes / wr.ios), (4096, 65536));
    on_grid("diskscope (CLI)", &cli);
    if fio_or_skip(module_path!()) {
        let theirs = zeroed("fio.bin");
        let v = fio_json(std::process::Command::new("fio").arg(job("fio", &theirs, "bs=4k,64k")));
        let j = &v["jobs"][0];
        let per_io = |d: &str| {
            j[d]["io_bytes"].as_u64().expect("bytes") / j[d]["total_ios"].as_u64().expect("ios")
        };
        assert_eq!((per_io("read"), per_io("write")), (4096, 65536));
        on_grid("fio", &theirs);
    }

    // Per-direction mixes: each direction's bytes per I/O is its own mix's mean.
    let reads = [(4096u64, 0.5), (8192, 0.5)];
    let writes = [(65536u64, 0.5), (131072, 0.5)];
    let split = "bssplit=4k/50:8k/50,64k/50:128k/50";
    let file = zeroed("mix.bin");
    let (out, r) = run_with_report(&[job("mix", &file, split).to_str().expect("utf8")]);
    assert!(out.status.success(), "{}", stderr(&out));
    let (rd, wr) = (&r.summary.read, &r.summary.write);
    mean_is("diskscope reads", &reads, rd.bytes as f64, rd.ios as f64);
    mean_is("diskscope writes", &writes, wr.bytes as f64, wr.ios as f64);
    if fio_or_skip(module_path!()) {
        let theirs = zeroed("fio-mix.bin");
        let v = fio_json(std::process::Command::new("fio").arg(job("fio-mix", &theirs, split)));
        let j = &v["jobs"][0];
        let of = |d: &str, k: &str| j[d][k].as_f64().expect("figure");
        mean_is(
            "fio reads",
            &reads,
            of("read", "io_bytes"),
            of("read", "total_ios"),
        );
        mean_is(
            "fio writes",
            &writes,
            of("write", "io_bytes"),
            of("write", "total_ios"),
        );
    }

    // A write-only job's sizes are the writes'; a mode that does not mix at random is
    // refused naming the field.
    let (out, r) = run_with_report(&[
        "--target",
        t,
        "--rw",
        "randwrite",
        "--bs",
        "64K",
        "--io-size",
        "1M",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(r.summary.write.bytes / r.summary.write.ios, 65536);
    for mode in ["randwrite", "rw"] {
        let out = diskscope(&[
            "run",
            "-q",
            "--target",
            t,
            "--rw",
            mode,
            "--write-bs",
            "64K",
            "--io-size",
            "1M",
        ]);
        assert_eq!(out.status.code(), Some(1), "{mode}: {}", stderr(&out));
        assert!(
            stderr(&out)
                .contains("write_bssplit = 64K/100: the writes' own sizes need a random mix"),
            "{}",
            stderr(&out)
        );
    }
    let p = dir.path().join("wo.fio");
    std::fs::write(
        &p,
        format!("[w]\nfilename={t}\nsize=64m\nio_size=1m\nrw=randwrite\nbs=4k,64k\ndirect=1\n"),
    )
    .expect("job");
    let (out, r) = run_with_report(&[p.to_str().expect("utf8")]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(r.spec.bs, 65536, "a write job runs the writes' size");
}
