//! Jobs pinned to CPUs (fio's `cpus_allowed`, `cpus_allowed_policy`): while a run goes on,
//! the kernel's own view of each job thread (`/proc/PID/task/TID/status`,
//! `Cpus_allowed_list`) shows the CPUs asked for, as it shows fio's job process's; a CPU the
//! agent may not use is refused naming it.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tests::*;

/// `Cpus_allowed_list` of each thread of `pid` whose name starts with `prefix`, by name.
fn threads(pid: u32, prefix: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
        for t in tasks.flatten() {
            let status = std::fs::read_to_string(t.path().join("status")).unwrap_or_default();
            let field = |k: &str| {
                status
                    .lines()
                    .find_map(|l| l.strip_prefix(k))
                    .map(|v| v.trim().to_string())
                    .unwrap_or_default()
            };
            let name = field("Name:");
            if name.starts_with(prefix) {
                found.push((name, field("Cpus_allowed_list:")));
            }
        }
    }
    found.sort();
    found
}

/// [`threads`] once they are `want` (a job thread pins itself as it starts: they are read
/// until then), or as they are after 10 s.
fn pinned(pid: u32, prefix: &str, want: &[(String, String)]) -> Vec<(String, String)> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let found = threads(pid, prefix);
        if found == want || Instant::now() > deadline {
            return found;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn start(args: &[&str]) -> Child {
    Command::new(diskscope_bin())
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start diskscope")
}

fn stop(mut c: Child) {
    let _ = c.kill();
    let _ = c.wait();
}

#[test]
fn job_threads_run_on_the_cpus_asked_for() {
    let dir = disk_tempdir();
    let file = laid_out_file(dir.path(), "cpus.bin");
    let mine = std::fs::read_to_string("/proc/self/status").expect("status");
    let mine = mine
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .expect("Cpus_allowed_list")
        .trim()
        .to_string();
    let first: u16 = mine
        .split([',', '-'])
        .next()
        .and_then(|c| c.parse().ok())
        .expect("a CPU");
    let last: u16 = mine
        .rsplit([',', '-'])
        .next()
        .and_then(|c| c.parse().ok())
        .expect("a CPU");
    let run = |extra: &[&str]| {
        let mut args = vec![
            "run",
            "-q",
            "--target",
            &file,
            "--rw",
            "randread",
            "--bs",
            "4K",
            "--runtime",
            "30s",
            "--jobs",
            "2",
            "--backend",
            "sync",
        ];
        args.extend(extra);
        start(&args)
    };

    // Shared: both jobs on the one CPU.
    let one = last.to_string();
    let on = |cpus: &[&str]| -> Vec<(String, String)> {
        cpus.iter()
            .enumerate()
            .map(|(j, c)| (format!("ds-job-{j}"), c.to_string()))
            .collect()
    };
    let c = run(&["--cpus-allowed", &one]);
    let want = on(&[&one, &one]);
    let got = pinned(c.id(), "ds-job-", &want);
    stop(c);
    assert_eq!(got, want);

    // Split: each job on one CPU of the list, in turn (only with two CPUs to give).
    if first != last {
        let list = format!("{first},{last}");
        let c = run(&["--cpus-allowed", &list, "--cpus-allowed-policy", "split"]);
        let want = on(&[&first.to_string(), &last.to_string()]);
        let got = pinned(c.id(), "ds-job-", &want);
        stop(c);
        assert_eq!(got, want);
    }

    // The same from a job file; and fio's own job process on the same file shows the same.
    let job = dir.path().join("pin.fio");
    std::fs::write(
        &job,
        format!(
            "[p]\nfilename={file}\nrw=randread\nbs=4k\nioengine=psync\ntime_based\n\
             runtime=30\ncpus_allowed={one}\n"
        ),
    )
    .expect("job");
    let c = start(&["run", "-q", job.to_str().expect("utf8")]);
    let want = on(&[&one]);
    let got = pinned(c.id(), "ds-job-", &want);
    stop(c);
    assert_eq!(got, want);
    if fio_or_skip(module_path!()) {
        let mut fio = Command::new("fio")
            .arg(&job)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("fio");
        // fio's job is a child process of its own, pinned once it starts its job: its
        // list is read until it is pinned (or 10 s passed).
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut lists = Vec::new();
        while !lists.contains(&one) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
            lists.clear();
            let children =
                std::fs::read_to_string(format!("/proc/{}/task/{}/children", fio.id(), fio.id()))
                    .unwrap_or_default();
            for pid in children.split_whitespace() {
                let got = threads(pid.parse().expect("pid"), "fio");
                lists.extend(got.into_iter().map(|(_, l)| l));
            }
        }
        let _ = fio.kill();
        let _ = fio.wait();
        assert!(!lists.is_empty(), "fio's job process was not found");
        assert!(lists.contains(&one), "fio's job on {lists:?}");
        println!("diskscope's job threads and fio's job process both on CPU {one}");
    }

    // A CPU the agent may not run on, and a list that is not one: refused, naming them.
    for (list, why) in [
        (
            "1000",
            "cpus_allowed = 1000: CPU 1000 not available to the agent (it may run on",
        ),
        ("3-1", "'3-1' in '3-1': a range runs upwards"),
    ] {
        let out = diskscope(&[
            "run",
            "-q",
            "--target",
            &file,
            "--rw",
            "read",
            "--cpus-allowed",
            list,
        ]);
        assert!(!out.status.success());
        assert!(stderr(&out).contains(why), "{list}: {}", stderr(&out));
    }
}
