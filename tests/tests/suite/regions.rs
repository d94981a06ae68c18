//! Each job its own region (fio's `offset_increment`): the same job file run by fio and by
//! diskscope on zeroed files writes exactly the same blocks (job N covers `size` bytes from
//! `offset + N × offset_increment`), the same number of bytes, and a region past the end of
//! a device is refused naming the job.

use tests::*;

const MIB: usize = 1 << 20;
const FILE: usize = 128 * MIB;
const BLOCK: usize = 64 << 10;

/// A zeroed (fully allocated) file of 128 MiB.
fn zeroed(path: &std::path::Path) {
    std::fs::write(path, vec![0u8; FILE]).expect("zeroed file");
}

/// Which 64 KiB blocks of `path` hold anything but zeros.
fn written(path: &std::path::Path) -> Vec<bool> {
    let data = std::fs::read(path).expect("read back");
    data.chunks(BLOCK)
        .map(|c| c.iter().any(|&b| b != 0))
        .collect()
}

fn job_text(file: &std::path::Path) -> String {
    format!(
        "[w]\nfilename={}\nsize=8m\noffset=4m\noffset_increment=40m\nnumjobs=3\n\
         rw=randwrite\nbs=64k\niodepth=4\nioengine=io_uring\ndirect=1\n",
        file.display()
    )
}

#[test]
fn each_job_writes_its_own_region_as_fios_do() {
    require_io_uring!();
    let dir = disk_tempdir();
    let ours = dir.path().join("ours.bin");
    zeroed(&ours);
    let job = dir.path().join("regions.fio");
    std::fs::write(&job, job_text(&ours)).expect("job");
    let (out, r) = run_with_report(&[job.to_str().expect("utf8")]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(r.spec.offset_increment, Some(40 << 20));
    assert_eq!(r.summary.write.bytes, 24 << 20, "each job does its size");
    // Blocks 4..12 MiB, 44..52 MiB and 84..92 MiB, each once (fio's random map), nothing else.
    let want: Vec<bool> = (0..FILE / BLOCK)
        .map(|b| {
            let at = b * BLOCK;
            [4, 44, 84]
                .iter()
                .any(|&s| at >= s * MIB && at < (s + 8) * MIB)
        })
        .collect();
    let got = written(&ours);
    let wrong: Vec<usize> = (0..want.len()).filter(|&b| got[b] != want[b]).collect();
    assert!(
        wrong.is_empty(),
        "diskscope: {} blocks differ from the regions, first at {} KiB",
        wrong.len(),
        wrong[0] * BLOCK / 1024
    );

    if fio_or_skip(module_path!()) {
        let theirs = dir.path().join("theirs.bin");
        zeroed(&theirs);
        let fjob = dir.path().join("theirs.fio");
        std::fs::write(&fjob, job_text(&theirs)).expect("job");
        let doc = fio_json(std::process::Command::new("fio").arg(&fjob));
        let bytes: u64 = doc["jobs"]
            .as_array()
            .expect("jobs")
            .iter()
            .map(|j| j["write"]["io_bytes"].as_u64().expect("io_bytes"))
            .sum();
        assert_eq!(bytes, r.summary.write.bytes, "fio's bytes");
        assert_eq!(written(&theirs), got, "fio wrote other blocks");
        println!("fio and diskscope wrote the same 384 blocks of 64 KiB in three regions");
    }

    // A file grows to hold the last job's region, as fio's does (a device refuses it:
    // the plan's unit tests).
    let t = ours.to_str().expect("utf8");
    let out = diskscope(&[
        "run",
        "-q",
        "--target",
        t,
        "--rw",
        "write",
        "--size",
        "8M",
        "--offset-increment",
        "64M",
        "--jobs",
        "3",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(std::fs::metadata(&ours).expect("meta").len(), 136 << 20);
    // No size, and overlapping regions under verify: refused.
    for (args, why) in [
        (
            vec!["--offset-increment", "64M", "--jobs", "2"],
            "offset_increment = 67108864: needs size",
        ),
        (
            vec![
                "--size",
                "8M",
                "--offset-increment",
                "4M",
                "--jobs",
                "2",
                "--verify",
            ],
            "verify = true: needs regions apart: offset_increment (4194304) is below size (8388608)",
        ),
    ] {
        let mut all = vec!["run", "--target", t, "--rw", "write"];
        all.extend(args);
        let out = diskscope(&all);
        assert!(!out.status.success());
        assert!(stderr(&out).contains(why), "{why}: {}", stderr(&out));
    }
}
