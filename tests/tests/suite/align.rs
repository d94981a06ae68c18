//! Random offsets on a grid finer than the block size (fio's `blockalign`): with 64 KiB
//! writes aligned to 4 KiB, diskscope's CLI and job file and fio 3.33 on the same job file
//! all start writes off the 64 KiB grid; without it every write starts on it.

use tests::*;

const MIB: usize = 1 << 20;
const FILE: usize = 64 * MIB;
const PAGE: usize = 4096;
/// 64 KiB: the block size, in 4 KiB pages.
const PAGES: usize = 16;

/// A zeroed (fully allocated) file.
fn zeroed(path: &std::path::Path) {
    std::fs::write(path, vec![0u8; FILE]).expect("zeroed file");
}

/// Where each run of written (non-zero) 4 KiB pages of `path` starts, and how long it is,
/// in pages. Every write is 16 pages; overlapping ones merge into a longer run.
fn runs(path: &std::path::Path) -> Vec<(usize, usize)> {
    let data = std::fs::read(path).expect("read back");
    let written: Vec<bool> = data
        .chunks(PAGE)
        .map(|c| c.iter().any(|&b| b != 0))
        .collect();
    let mut runs = Vec::new();
    let mut start = None;
    for (i, &w) in written.iter().chain([false].iter()).enumerate() {
        match (w, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                runs.push((s, i - s));
                start = None;
            }
            _ => {}
        }
    }
    runs
}

/// Runs that start off the 64 KiB grid; panics when a run is shorter than one write.
fn off_grid(who: &str, path: &std::path::Path) -> usize {
    let runs = runs(path);
    assert!(!runs.is_empty(), "{who}: nothing written");
    assert!(
        runs.iter().all(|&(_, len)| len >= PAGES),
        "{who}: a run shorter than a 64 KiB write: {runs:?}"
    );
    runs.iter().filter(|&&(s, _)| s % PAGES != 0).count()
}

fn job_text(file: &std::path::Path, align: &str) -> String {
    format!(
        "[a]\nfilename={}\nsize=64m\nio_size=2m\nrw=randwrite\nbs=64k\n{align}\
         norandommap\niodepth=4\nioengine=io_uring\ndirect=1\n",
        file.display()
    )
}

#[test]
fn writes_start_on_the_finer_grid_as_fios_do() {
    require_io_uring!();
    let dir = disk_tempdir();
    let run_job = |name: &str, align: &str| {
        let file = dir.path().join(format!("{name}.bin"));
        zeroed(&file);
        let job = dir.path().join(format!("{name}.fio"));
        std::fs::write(&job, job_text(&file, align)).expect("job");
        let (out, r) = run_with_report(&[job.to_str().expect("utf8")]);
        assert!(out.status.success(), "{}", stderr(&out));
        (file, r)
    };
    // 32 writes of 64 KiB on a 4 KiB grid: each lands on the 64 KiB grid with chance 1/16.
    let (file, r) = run_job("job", "blockalign=4k\n");
    assert_eq!(r.spec.block_align, Some(4096));
    assert_eq!(r.summary.write.bytes, 2 << 20);
    let ours = off_grid("diskscope (job file)", &file);
    assert!(ours > 0, "no write started off the 64 KiB grid");
    let (file, r) = run_job("plain", "");
    assert_eq!(r.spec.block_align, None);
    assert_eq!(off_grid("diskscope without blockalign", &file), 0);

    // The CLI flag does the same.
    let cli = dir.path().join("cli.bin");
    zeroed(&cli);
    let t = cli.to_str().expect("utf8");
    let out = diskscope(&[
        "run",
        "-q",
        "--target",
        t,
        "--rw",
        "randwrite",
        "--bs",
        "64K",
        "--blockalign",
        "4K",
        "--io-size",
        "2M",
        "--iodepth",
        "4",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(off_grid("diskscope (CLI)", &cli) > 0);

    if fio_or_skip(module_path!()) {
        let theirs = dir.path().join("theirs.bin");
        zeroed(&theirs);
        let fjob = dir.path().join("theirs.fio");
        std::fs::write(&fjob, job_text(&theirs, "blockalign=4k\n")).expect("job");
        fio_json(std::process::Command::new("fio").arg(&fjob));
        let fio = off_grid("fio", &theirs);
        assert!(fio > 0, "fio started no write off the 64 KiB grid");
        println!("writes off the 64 KiB grid: diskscope {ours}, fio {fio} (of 32)");
    }

    // Sequential modes have no grid to change; a size past the O_DIRECT rule: refused.
    for (args, why) in [
        (
            vec!["--rw", "write", "--blockalign", "4K"],
            "block_align = 4096: random modes only",
        ),
        (
            vec!["--rw", "randread", "--blockalign", "1000"],
            "block_align = 1000: random modes only; 1 B..64 MiB, with O_DIRECT a multiple of 512",
        ),
    ] {
        let mut all = vec!["run", "-q", "--target", t, "--io-size", "1M"];
        all.extend(args);
        let out = diskscope(&all);
        assert_eq!(out.status.code(), Some(1), "bad input: {}", stderr(&out));
        assert!(stderr(&out).contains(why), "{}", stderr(&out));
    }
}
