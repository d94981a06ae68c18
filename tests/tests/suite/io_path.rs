//! The measured I/O path: buffers backed the same way at every block size and
//! depth, and block-layer splits measured from the device's own counters and reported as a
//! warning in the JSON and on the terminal.

use tests::*;

#[test]
fn a_split_is_measured_and_reported_and_an_unsplit_run_is_not_warned() {
    require_io_uring!();
    let dev = match LoopDevice::in_memory(64 << 20) {
        Ok(d) => d,
        Err(e) => skip!(Missing::LoopDevice, "no loop device: {e}"),
    };
    let name = dev.path.file_name().unwrap().to_string_lossy().into_owned();
    // Limit the device's requests to 64 KiB: every 1 MiB I/O must become 16 requests. The
    // loop driver keeps the limit after the device is detached, so it is put back on drop.
    let limit = format!("/sys/block/{name}/queue/max_sectors_kb");
    let Ok(old) = std::fs::read_to_string(&limit) else {
        skip!(Missing::Kernel, "cannot read {limit}");
    };
    struct Restore(String, String);
    impl Drop for Restore {
        fn drop(&mut self) {
            let _ = std::fs::write(&self.0, self.1.trim());
        }
    }
    let _restore = Restore(limit.clone(), old);
    if std::fs::write(&limit, "64").is_err() {
        skip!(Missing::Kernel, "cannot set {limit}");
    }
    let d = dev.path_str();
    let dir = disk_tempdir();
    let json = dir.path().join("r.json");
    let j = json.display();
    let o = ds(&format!(
        "run --target {d} --rw read --bs 1M --iodepth 2 --runtime 1s --json {j}"
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    let r = read_report(&json);
    let p = r
        .environment
        .io_path
        .clone()
        .expect("io_path in the report");
    assert_eq!(p.device.as_deref(), Some(name.as_str()));
    let rpi = p.read_requests_per_io.expect("requests per read");
    assert!((14.0..=18.0).contains(&rpi), "1 MiB over 64 KiB: {rpi}");
    assert!(
        r.environment
            .warnings
            .iter()
            .any(|w| w.contains("split reads")),
        "{:?}",
        r.environment.warnings
    );
    assert!(
        out.contains("warning: the block layer split reads"),
        "{out}"
    );
    assert!(out.contains("requests per read"), "{out}");

    // Within the limit nothing is split, and nothing is said.
    let o = ds(&format!(
        "run --target {d} --rw read --bs 64K --iodepth 2 --runtime 1s --json {j} -q"
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    let r = read_report(&json);
    let p = r.environment.io_path.clone().expect("io_path");
    let rpi = p.read_requests_per_io.expect("requests per read");
    assert!((0.9..=1.1).contains(&rpi), "64 KiB reads: {rpi}");
    assert!(
        !r.environment.warnings.iter().any(|w| w.contains("split")),
        "{:?}",
        r.environment.warnings
    );
}

#[test]
fn every_step_of_a_sweep_has_the_same_buffer_backing() {
    require_io_uring!();
    let dir = disk_tempdir();
    let t = dir.path().join("t.bin");
    let json = dir.path().join("r.json");
    // 4 KiB .. 8 MiB at QD4: pools from 16 KiB to 32 MiB, the old seam at 512 KiB between.
    let o = ds(&format!(
        "run --target {} --size 8M --preset atto --runtime 200ms --json {} -q",
        t.display(),
        json.display()
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    let r = read_report(&json);
    let backings: Vec<(String, String)> = r
        .steps
        .iter()
        .map(|s| {
            let p = s.io_path.as_ref().expect("io_path per step");
            (s.name.clone(), p.backing())
        })
        .collect();
    assert!(backings.len() >= 10, "{backings:?}");
    let first = &backings[0].1;
    assert!(
        backings.iter().all(|(_, b)| b == first),
        "one backing for every step: {backings:?}"
    );
    if agent::engine::buf::thp_available() {
        assert_eq!(first, "2 MiB huge pages", "{backings:?}");
    } else {
        assert_eq!(first, "4 KiB pages", "{backings:?}");
    }
    let run = r.environment.io_path.expect("the run's io_path");
    assert_eq!(run.backing(), *first);
}

/// Bytes of `path` in the page cache, by util-linux's fincore.
fn resident(path: &std::path::Path) -> u64 {
    let out = std::process::Command::new("fincore")
        .args(["-b", "-n", "-o", "RES"])
        .arg(path)
        .output()
        .expect("fincore");
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("fincore said {out:?}"))
}

/// fio's `fadvise_hint`: a random buffered read tells the kernel so, and the page cache then
/// holds exactly what was read (no read-ahead); without the hint it reads ahead.
#[test]
fn the_access_hint_reaches_the_page_cache() {
    require_io_uring!();
    if !have("fincore") {
        skip!(Missing::Tool, "no fincore (util-linux)");
    }
    let dir = disk_tempdir();
    let target = dir.path().join("hint.bin");
    let t = target.to_str().expect("utf8");
    let out = ds(&format!(
        "run -q --target {t} --size 32M --rw write --bs 1M"
    ));
    assert!(out.status.success(), "{}", stderr(&out));
    let mut cached = Vec::new();
    for hint in ["type", "none"] {
        // Half the file, each block once, 4 KiB at a time, from a cold cache.
        let out = ds(&format!(
            "run -q --target {t} --size 32M --rw randread --bs 4k --buffered --io-size 16M \
             --cover-once --fadvise-hint {hint}"
        ));
        assert!(out.status.success(), "{hint}: {}", stderr(&out));
        cached.push(resident(&target));
    }
    eprintln!(
        "cached after 16 MiB of random 4 KiB reads: {} KiB hinted random, {} KiB unhinted",
        cached[0] >> 10,
        cached[1] >> 10
    );
    // Nothing beyond what was read; of that, the page cache may have let a few pages go
    // under the rest of the suite's memory use (a CI run kept 16,344 of 16,384 KiB).
    assert!(
        cached[0] <= 16 << 20 && cached[0] >= 15 << 20,
        "the random hint reads nothing ahead: {cached:?}"
    );
    assert!(
        cached[1] > cached[0] + (1 << 20),
        "without a hint the kernel reads ahead: {cached:?}"
    );
    let bad = ds(&format!(
        "run -q --target {t} --size 32M --rw randread --fadvise-hint sideways"
    ));
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
    assert!(stderr(&bad).contains("sideways"), "{}", stderr(&bad));
}

/// The aio backend (fio's libaio): the process maps the kernel's AIO ring while it runs
/// (`/[aio]` in /proc/PID/maps, made by io_setup), what it writes reads back intact, and the
/// run says `backend aio`.
#[test]
fn the_aio_backend_runs_on_linux_aio() {
    require_io_uring!();
    let dir = disk_tempdir();
    let target = dir.path().join("aio.bin");
    let t = target.to_str().expect("utf8").to_string();
    let mut child = std::process::Command::new(diskscope_bin())
        .args([
            "run",
            "--target",
            &t,
            "--size",
            "16M",
            "--rw",
            "randwrite",
            "--bs",
            "4k",
            "--iodepth",
            "32",
            "--backend",
            "aio",
            "--verify",
            "--loops",
            "4",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    let maps = format!("/proc/{}/maps", child.id());
    let mut ring_seen = false;
    while child.try_wait().expect("wait").is_none() {
        ring_seen |= std::fs::read_to_string(&maps).is_ok_and(|m| m.contains("/[aio]"));
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    let out = child.wait_with_output().expect("output");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    assert!(text.contains("backend aio"), "{text}");
    assert!(text.contains("verify: PASS"), "{text}");
    assert!(ring_seen, "no AIO ring in {maps} while the run ran");
}

/// `--sqpoll` (fio's sqthread_poll): the kernel's submission-queue polling thread
/// (`iou-sqp-PID`) runs among the process's threads while the run does, bound to the CPU
/// `--sqpoll-cpu` names; the backend line says `sqpoll`. Refused by name off io_uring.
#[test]
fn sqpoll_runs_a_kernel_polling_thread() {
    require_io_uring!();
    let dir = disk_tempdir();
    let target = dir.path().join("sqpoll.bin");
    let t = target.to_str().expect("utf8").to_string();
    let out = ds(&format!(
        "run -q --target {t} --size 16M --rw write --bs 1M"
    ));
    assert!(out.status.success(), "{}", stderr(&out));
    let mut child = std::process::Command::new(diskscope_bin())
        .args([
            "run",
            "--target",
            &t,
            "--size",
            "16M",
            "--rw",
            "randread",
            "--bs",
            "4k",
            "--iodepth",
            "8",
            "--runtime",
            "1s",
            "--sqpoll",
            "--sqpoll-cpu",
            "0",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    let tasks = format!("/proc/{}/task", child.id());
    let mut poller: Option<String> = None;
    while child.try_wait().expect("wait").is_none() {
        for task in std::fs::read_dir(&tasks).into_iter().flatten().flatten() {
            let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
            if comm.starts_with("iou-sqp-") {
                let status =
                    std::fs::read_to_string(task.path().join("status")).unwrap_or_default();
                poller = status
                    .lines()
                    .find(|l| l.starts_with("Cpus_allowed_list:"))
                    .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string());
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = child.wait_with_output().expect("output");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("sqpoll"),
        "the backend line names sqpoll: {text}"
    );
    assert_eq!(
        poller.as_deref(),
        Some("0"),
        "an iou-sqp thread bound to CPU 0 while the run ran: {text}"
    );
    // The largest CPU number the option takes is refused before the run, not by the kernel.
    let far = ds(&format!(
        "run -q --target {t} --size 16M --rw read --sqpoll --sqpoll-cpu {}",
        u32::MAX
    ));
    assert_eq!(far.status.code(), Some(1), "{}", stderr(&far));
    assert!(
        stderr(&far).contains(&format!(
            "sqpoll_cpu = {}: CPU {} not available to the agent",
            u32::MAX,
            u32::MAX
        )),
        "{}",
        stderr(&far)
    );
    let refused = ds(&format!(
        "run -q --target {t} --size 16M --rw read --backend sync --sqpoll"
    ));
    assert_eq!(refused.status.code(), Some(1), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains(
            "sqpoll = true: a polled submission queue is io_uring's, not the sync backend's"
        ),
        "{}",
        stderr(&refused)
    );
}

/// `--uncached` (RWF_DONTCACHE, fio's uncached): a buffered read of a whole file leaves none
/// of it in the page cache, where the same read without it leaves all of it; tmpfs, which
/// does not take the flag, is refused by name before the run. `--atomic` (RWF_ATOMIC) is
/// refused naming the atomic write unit limits on a file and on a block device that have
/// none.
#[test]
fn uncached_leaves_no_pages_and_atomic_names_the_limits() {
    require_io_uring!();
    if !have("fincore") {
        skip!(Missing::Tool, "no fincore (util-linux)");
    }
    let dir = disk_tempdir();
    let target = dir.path().join("uncached.bin");
    let t = target.to_str().expect("utf8").to_string();
    let out = ds(&format!(
        "run -q --target {t} --size 32M --rw write --bs 1M"
    ));
    assert!(out.status.success(), "{}", stderr(&out));
    let read = |extra: &str| {
        let out = ds(&format!(
            "run --target {t} --size 32M --rw read --bs 128k --iodepth 4 --buffered {extra}"
        ));
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
        if text.contains("RWF_DONTCACHE") {
            return Err(text);
        }
        assert!(out.status.success(), "{text}");
        Ok((text, resident(&target)))
    };
    match read("--uncached") {
        Ok((text, cached)) => {
            assert!(
                text.contains("uncached]"),
                "the backend line says so: {text}"
            );
            // RWF_DONTCACHE drops each folio as its I/O ends, best effort: one still busy
            // then can stay (1 run in 5 kept one 128 KiB block of the 32 MiB read).
            assert!(
                cached <= 512 << 10,
                "an uncached read leaves next to nothing cached: {cached} bytes"
            );
        }
        Err(why) => skip!(
            Missing::Kernel,
            "this kernel or filesystem has no RWF_DONTCACHE: {why}"
        ),
    }
    // From a cold start (fio's invalidate=1): a folio the uncached read left behind still
    // carries its drop-behind mark and would go when read again.
    let (_, cached) = read("").expect("a plain buffered read");
    assert_eq!(
        cached,
        32 << 20,
        "a plain buffered read leaves the file cached"
    );

    if let Ok(shm) = tempfile::tempdir_in("/dev/shm") {
        let f = shm.path().join("t.bin");
        let out = ds(&format!(
            "run -q --target {} --size 8M --rw read --bs 4k --buffered --uncached",
            f.display()
        ));
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert!(
            stderr(&out).contains(&format!(
                "uncached = true: {} does not take uncached buffered I/O (RWF_DONTCACHE",
                f.display()
            )),
            "{}",
            stderr(&out)
        );
    }

    let atomic = ds(&format!(
        "run -q --target {t} --size 32M --rw randwrite --bs 4k --atomic"
    ));
    assert_eq!(atomic.status.code(), Some(1), "{}", stderr(&atomic));
    assert!(
        stderr(&atomic).contains(&format!(
            "atomic = true: {t} has no atomic writes (atomic write unit min 0 B, max 0 B)"
        )),
        "{}",
        stderr(&atomic)
    );
    // Through the service, whose target is a pinned descriptor: the same probes see the
    // file the access check opened, and name it by its path.
    let data = disk_tempdir();
    let server = tests::server::Server::start(data.path(), &[dir.path()]);
    let (status, v) = server.post(
        "/api/v1/runs",
        tests::server::OP,
        &serde_json::json!({"target": t, "spec": {"rw": "randwrite", "bs": 4096, "size": 32 << 20, "atomic": true}}),
    );
    assert_eq!(status, 400, "{v}");
    assert!(
        v["message"]
            .as_str()
            .is_some_and(|m| m.contains(&format!("{t} has no atomic writes"))),
        "{v}"
    );
    let id = server.start_run(&serde_json::json!({"target": t, "spec": {
        "rw": "read", "bs": 4096, "size": 8 << 20, "direct": false, "uncached": true}}));
    let run = server.wait_status(id, "completed");
    assert!(
        run["environment"]["ring_features"]
            .as_array()
            .is_some_and(|f| f.iter().any(|x| x == "uncached")),
        "{run}"
    );
    drop(server);

    let dev = match LoopDevice::in_memory(16 << 20) {
        Ok(d) => d,
        Err(e) => skip!(
            Missing::LoopDevice,
            "no loop device for the atomic refusal on a device: {e}"
        ),
    };
    let d = dev.path.display().to_string();
    let out = ds(&format!(
        "run -q --target {d} --size 8M --rw randwrite --bs 4k --atomic"
    ));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!(
            "{d} has no atomic writes (atomic write unit min 0 B, max 0 B)"
        )),
        "{}",
        stderr(&out)
    );
    let out = ds(&format!(
        "run -q --target {d} --rw randwrite --bs 4k --atomic --buffered"
    ));
    assert!(
        stderr(&out).contains("atomic = true: RWF_ATOMIC needs O_DIRECT"),
        "{}",
        stderr(&out)
    );
}

/// `--hipri` (fio's hipri, io_uring's IOPOLL) is refused before the run, naming the sysfs
/// file that says the device has no poll queues, on a file's disk and on a loop device
/// (none here has them: no NVMe with poll_queues, no null_blk); and without O_DIRECT.
#[test]
fn hipri_is_refused_naming_the_devices_poll_queues() {
    require_io_uring!();
    let dir = disk_tempdir();
    let target = dir.path().join("hipri.bin");
    let t = target.to_str().expect("utf8").to_string();
    let out = ds(&format!("run -q --target {t} --size 8M --rw write --bs 1M"));
    assert!(out.status.success(), "{}", stderr(&out));
    let check = |tgt: &str| {
        let out = ds(&format!(
            "run -q --target {tgt} --size 8M --rw randread --bs 4k --hipri"
        ));
        let err = stderr(&out);
        if err.contains("io_poll is 1") || out.status.success() {
            return; // a device with poll queues: nothing to refuse
        }
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(
            err.contains(&format!(
                "hipri = true: the device under {tgt} has no poll queues (/sys/"
            )) && err.contains("/queue/io_poll is 0)"),
            "{err}"
        );
    };
    check(&t);
    let buffered = ds(&format!(
        "run -q --target {t} --size 8M --rw randread --hipri --buffered"
    ));
    assert!(
        stderr(&buffered).contains("hipri = true: polled completion needs O_DIRECT"),
        "{}",
        stderr(&buffered)
    );
    let dev = match LoopDevice::in_memory(16 << 20) {
        Ok(d) => d,
        Err(e) => skip!(
            Missing::LoopDevice,
            "no loop device for the hipri refusal on a device: {e}"
        ),
    };
    check(&dev.path.display().to_string());
}

/// `diskscope ARGS` run to its end while its io_uring ring is read from the kernel's side:
/// the output, the ring's `/proc/PID/fdinfo` as last seen mid-run (a reading whose `SqHead`
/// a later reading passed, so it was taken before the backend tore its registrations down;
/// empty when no ring was seen moving), and the descriptors the process had open then.
fn run_watching_the_ring(args: &[&str]) -> (String, String, Vec<String>) {
    let mut child = std::process::Command::new(diskscope_bin())
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    let pid = child.id();
    let (mut ring, mut open) = (String::new(), Vec::new());
    // The latest reading and its descriptors, committed once a later reading shows more I/O.
    let mut pending: Option<(u64, String, Vec<String>)> = None;
    while child.try_wait().expect("wait").is_none() {
        let fds = std::fs::read_dir(format!("/proc/{pid}/fd"))
            .into_iter()
            .flatten()
            .flatten();
        let mut links = Vec::new();
        let mut seen = None;
        for fd in fds {
            let link = std::fs::read_link(fd.path()).unwrap_or_default();
            let link = link.to_string_lossy().to_string();
            if link.contains("io_uring") {
                let name = fd.file_name().to_string_lossy().to_string();
                let info = std::fs::read_to_string(format!("/proc/{pid}/fdinfo/{name}"))
                    .unwrap_or_default();
                if let Some(head) = fdinfo_value(&info, "SqHead").filter(|&h| h > 0) {
                    seen = Some((head, info));
                }
            }
            links.push(link);
        }
        if let Some((head, info)) = seen {
            if let Some((before, info_then, links_then)) = pending.take() {
                if head > before {
                    (ring, open) = (info_then, links_then);
                }
            }
            pending = Some((head, info, links));
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = child.wait_with_output().expect("output");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "diskscope {args:?}: {text}");
    (text, ring, open)
}

/// A value of a ring's fdinfo (`UserFiles`, `UserBufs`).
fn fdinfo_value(info: &str, key: &str) -> Option<u64> {
    info.lines().find_map(|l| {
        l.strip_prefix(key)?
            .strip_prefix(":\t")?
            .trim()
            .parse()
            .ok()
    })
}

/// io_uring's registrations can each be switched off (the overhead table measures them one
/// by one), and the kernel's own view of the ring says so: by default the target is its
/// one registered file and the buffers are registered; with `--registered-file false
/// --fixed-buffers false` it holds none of either, and the backend line leaves them out. A
/// ring of no-ops (`--backend nop`) moves I/O through the kernel's ring with no target
/// open. A registration on a backend without a ring is refused by name.
#[test]
fn ring_registrations_switch_off_and_a_nop_ring_runs() {
    require_io_uring!();
    let dir = disk_tempdir();
    let target = dir.path().join("ring.bin");
    let t = target.to_str().expect("utf8").to_string();
    let out = ds(&format!(
        "run -q --target {t} --size 16M --rw write --bs 1M"
    ));
    assert!(out.status.success(), "{}", stderr(&out));
    let run = |extra: &[&str]| {
        let mut args = vec![
            "run",
            "--target",
            &t,
            "--size",
            "16M",
            "--rw",
            "randread",
            "--bs",
            "4k",
            "--iodepth",
            "4",
            "--runtime",
            "1s",
        ];
        args.extend_from_slice(extra);
        run_watching_the_ring(&args)
    };
    let (text, ring, _) = run(&[]);
    assert_eq!(fdinfo_value(&ring, "UserFiles"), Some(1), "{ring}\n{text}");
    assert!(
        fdinfo_value(&ring, "UserBufs").is_some_and(|n| n >= 4),
        "{ring}\n{text}"
    );
    assert!(
        text.contains("registered_file") && text.contains("fixed_buffers"),
        "{text}"
    );
    let (text, ring, _) = run(&["--registered-file", "false", "--fixed-buffers", "false"]);
    assert_eq!(fdinfo_value(&ring, "UserFiles"), Some(0), "{ring}\n{text}");
    assert_eq!(fdinfo_value(&ring, "UserBufs"), Some(0), "{ring}\n{text}");
    let line = text
        .lines()
        .find(|l| l.starts_with("backend "))
        .unwrap_or_default();
    assert!(
        line.starts_with("backend uring [")
            && !line.contains("registered_file")
            && !line.contains("fixed_buffers")
            && line.contains("registered_ring_fd"),
        "{text}"
    );
    let (text, ring, _) = run(&["--registered-ring", "false"]);
    assert!(!ring.is_empty(), "{text}");
    let line = text
        .lines()
        .find(|l| l.starts_with("backend "))
        .unwrap_or_default();
    assert!(
        !line.contains("registered_ring_fd") && line.contains("fixed_buffers"),
        "{text}"
    );

    // A job file registers what fio's io_uring does: nothing unless fixedbufs and
    // registerfiles ask for it.
    for (extra, files, bufs) in [("", 0, false), ("fixedbufs\nregisterfiles\n", 1, true)] {
        let job = dir.path().join("ring.fio");
        std::fs::write(
            &job,
            format!("[j]\nioengine=io_uring\nfilename={t}\nrw=randread\nbs=4k\nsize=16m\ndirect=1\niodepth=4\nruntime=1\ntime_based\n{extra}"),
        )
        .expect("job file");
        let (text, ring, _) = run_watching_the_ring(&["run", job.to_str().expect("utf8")]);
        assert_eq!(
            fdinfo_value(&ring, "UserFiles"),
            Some(files),
            "{extra:?}: {ring}\n{text}"
        );
        let n = fdinfo_value(&ring, "UserBufs").unwrap_or(0);
        assert_eq!(
            n > 0,
            bufs,
            "{extra:?}: {n} registered buffers\n{ring}\n{text}"
        );
    }

    // The registered ring is the kernel's to see in each system call's flags.
    for (registered, want) in [("true", true), ("false", false)] {
        let trace = dir.path().join(format!("enter-{registered}.txt"));
        let args = [
            "run",
            "-q",
            "--target",
            &t,
            "--size",
            "16M",
            "--rw",
            "randread",
            "--runtime",
            "300ms",
            "--registered-ring",
            registered,
        ];
        let Some(traced) = strace_diskscope("io_uring_enter", &trace, &args) else {
            skip!(
                Missing::Tool,
                "strace is not installed (apt-get install strace)"
            );
        };
        assert!(traced.status.success(), "{}", stderr(&traced));
        let calls = std::fs::read_to_string(&trace).expect("strace output");
        let n = calls
            .lines()
            .filter(|l| l.contains("io_uring_enter("))
            .count();
        let flagged = calls
            .lines()
            .filter(|l| l.contains("IORING_ENTER_REGISTERED_RING"))
            .count();
        assert!(n > 10, "{n} io_uring_enter calls: {calls}");
        assert_eq!(
            flagged > 0,
            want,
            "registered_ring {registered}: {flagged} of {n} calls flagged"
        );
    }

    // No-ops: the ring turns over with nothing open but the process's own files.
    let nop = |extra: &[&str]| {
        let mut args = vec![
            "run",
            "--target",
            "null",
            "--backend",
            "nop",
            "--rw",
            "randread",
            "--bs",
            "4k",
            "--iodepth",
            "32",
            "--runtime",
            "1s",
        ];
        args.extend_from_slice(extra);
        run_watching_the_ring(&args)
    };
    let (text, ring, open) = nop(&[]);
    let head = fdinfo_value(&ring, "SqHead").unwrap_or(0);
    assert!(
        head > 1000,
        "the no-op ring turned over {head} times: {ring}\n{text}"
    );
    assert!(
        text.contains("backend uring [") && text.contains("nop"),
        "{text}"
    );
    assert!(
        !open
            .iter()
            .any(|l| l.ends_with("/null") && !l.starts_with("/dev/")),
        "a no-op ring opens no target: {open:?}"
    );
    // With SQPOLL the kernel's thread takes entries on its own: a queue that looks full to a
    // stale view of its head is synced and waited on, not a failed run (at 3 million no-ops a
    // second it was one, every time).
    let (text, _, _) = nop(&["--sqpoll"]);
    assert!(text.contains("sqpoll") && !text.contains("error"), "{text}");
    let refused = ds(&format!(
        "run -q --target {t} --size 16M --rw read --backend sync --fixed-buffers false"
    ));
    assert_eq!(refused.status.code(), Some(1), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains(
            "fixed_buffers = false: a registration with io_uring, which the sync backend does not use"
        ),
        "{}",
        stderr(&refused)
    );
}

/// `--force-async N` (fio's force_async): every Nth I/O goes to io_uring's kernel workers
/// (`IOSQE_ASYNC`) without an inline try; the kernel's `iou-wrk` threads are then seen
/// among the process's while the run goes, and the backend line says `force_async=N`; the
/// same from a job file's `force_async`. Refused by name off io_uring.
#[test]
fn force_async_hands_the_io_to_the_kernels_workers() {
    require_io_uring!();
    let dir = disk_tempdir();
    let target = dir.path().join("async.bin");
    let json = dir.path().join("r.json");
    let run = |extra: &str| {
        let o = ds(&format!(
            "run --target {} --size 16M --rw randread --bs 4k --iodepth 16 --runtime 1s \
             --interval-ms 200 --json {} -q {extra}",
            target.display(),
            json.display()
        ));
        assert!(o.status.success(), "{extra}: {}", stderr(&o));
        read_report(&json)
    };
    let plain = run("");
    let forced = run("--force-async 1");
    println!(
        "iou-wrk threads seen: {} without, {} with --force-async 1; IOPS {:.0} / {:.0}",
        plain.environment.io_workers_seen,
        forced.environment.io_workers_seen,
        plain.summary.read.iops,
        forced.summary.read.iops
    );
    assert!(
        forced.environment.io_workers_seen > 0,
        "no iou-wrk thread with every I/O marked async"
    );
    assert!(
        forced
            .environment
            .ring_features
            .iter()
            .any(|f| f == "force_async=1"),
        "{:?}",
        forced.environment.ring_features
    );
    assert!(!plain
        .environment
        .ring_features
        .iter()
        .any(|f| f.starts_with("force_async")));
    // fio's name in a job file.
    let job = dir.path().join("async.fio");
    std::fs::write(
        &job,
        format!(
            "[a]\nfilename={}\nsize=16m\nrw=randread\nbs=4k\niodepth=8\nioengine=io_uring\ndirect=1\nruntime=1\ntime_based\nforce_async=2\n",
            target.display()
        ),
    )
    .expect("job file");
    let o = ds(&format!(
        "run {} --json {} -q",
        job.display(),
        json.display()
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    let r = read_report(&json);
    assert!(
        r.environment
            .ring_features
            .iter()
            .any(|f| f == "force_async=2"),
        "{:?}",
        r.environment.ring_features
    );
    let o = ds(&format!(
        "run --target {} --size 16M --rw randread --backend sync --force-async 1 -q",
        target.display()
    ));
    assert!(!o.status.success());
    assert!(stderr(&o).contains("force_async"), "{}", stderr(&o));
}
