//! The emulated drive's volatile write cache, ground truth for a check of whether a drive
//! keeps what it acknowledged (issue 36): writes acknowledged into the cache, flushed by
//! fsync as the drive's policy keeps its promise, forced through by O_DSYNC, and a power
//! cut (`power`: `cut`, `on`) that says exactly which writes it lost, which a flush had
//! promised, and which it tore. Driven through the real FUSE mount with real system calls.

use serde_json::Value;
use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;
use tests::*;

const P: u64 = 4096;

fn drive(flush: &str, tear_bytes: u64) -> Option<Emulator> {
    let model = format!(
        r#"{{"capacity": {cap}, "cache_bytes": 0, "native_mbps": 2000, "read_mbps": 3000,
            "faults": {{"write_cache": {wc}, "flush": "{flush}", "tear_bytes": {tear_bytes}, "seed": 11}}}}"#,
        cap = 16 << 20,
        wc = 64 * P,
    );
    Emulator::start_or_skip(&model, "flush check (emulated write cache)")
}

fn page(v: u8) -> Vec<u8> {
    vec![v; P as usize]
}

/// Writes `pages` (page index, value) through `flags` (O_DIRECT, maybe O_DSYNC).
fn write_pages(disk: &Path, flags: i32, pages: &[(u64, u8)]) {
    let f = OpenOptions::new()
        .write(true)
        .custom_flags(flags)
        .open(disk)
        .expect("open the emulated disk");
    for &(p, v) in pages {
        f.write_all_at(&page(v), p * P).expect("write");
    }
}

fn fsync(disk: &Path) {
    let f = OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_DIRECT)
        .open(disk)
        .expect("open");
    f.sync_all().expect("fsync");
}

/// Writes `command` to the drive's power switch and reads back its state.
fn power(e: &Emulator, command: &str) -> Value {
    let switch = e.dir().join("power");
    if !command.is_empty() {
        let mut f = OpenOptions::new().write(true).open(&switch).expect("power");
        f.write_all(command.as_bytes()).expect(command);
    }
    serde_json::from_str(&std::fs::read_to_string(&switch).expect("read power")).expect("json")
}

fn read_page(disk: &Path, p: u64) -> std::io::Result<Vec<u8>> {
    let f = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(disk)?;
    let mut buf = page(0);
    f.read_exact_at(&mut buf, p * P)?;
    Ok(buf)
}

fn ranges(v: &Value) -> Vec<(u64, u64)> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|r| {
            (
                r[0].as_u64().expect("offset") / P,
                r[1].as_u64().expect("len"),
            )
        })
        .collect()
}

#[test]
fn an_honest_drive_loses_only_what_no_flush_covered() {
    let Some(e) = drive("honest", 0) else { return };
    let disk = e.disk();
    write_pages(
        &disk,
        libc::O_DIRECT,
        &(0..8).map(|p| (p, p as u8 + 1)).collect::<Vec<_>>(),
    );
    fsync(&disk);
    write_pages(&disk, libc::O_DIRECT, &[(8, 9), (9, 10)]);
    // Written with O_DSYNC: forced to the medium (FUA), kept.
    write_pages(&disk, libc::O_DIRECT | libc::O_DSYNC, &[(10, 11)]);
    assert_eq!(
        read_page(&disk, 9).expect("read"),
        page(10),
        "read back from the cache"
    );
    let s = power(&e, "cut");
    assert_eq!(s["off"], true, "{s}");
    assert_eq!(ranges(&s["cut"]["lost"]), vec![(8, P), (9, P)], "{s}");
    assert!(ranges(&s["cut"]["promised"]).is_empty(), "{s}");
    // Off: every I/O fails, as a drive without power.
    let err = read_page(&disk, 0).expect_err("a read while off");
    assert_eq!(err.raw_os_error(), Some(libc::EIO), "{err}");
    assert_eq!(power(&e, "on")["off"], false);
    for p in 0..8 {
        assert_eq!(
            read_page(&disk, p).expect("read"),
            page(p as u8 + 1),
            "page {p}"
        );
    }
    assert_eq!(read_page(&disk, 8).expect("read"), page(0), "lost");
    assert_eq!(read_page(&disk, 10).expect("read"), page(11), "FUA kept");
}

#[test]
fn a_drive_that_ignores_flush_loses_what_it_promised() {
    let Some(e) = drive("ignored", 0) else { return };
    let disk = e.disk();
    write_pages(&disk, libc::O_DIRECT, &[(3, 1), (5, 2), (7, 3)]);
    fsync(&disk);
    write_pages(&disk, libc::O_DIRECT, &[(9, 4)]);
    let s = power(&e, "cut");
    assert_eq!(
        ranges(&s["cut"]["lost"]),
        vec![(3, P), (5, P), (7, P), (9, P)],
        "{s}"
    );
    assert_eq!(
        ranges(&s["cut"]["promised"]),
        vec![(3, P), (5, P), (7, P)],
        "{s}"
    );
    power(&e, "on");
    for p in [3, 5, 7, 9] {
        assert_eq!(read_page(&disk, p).expect("read"), page(0), "page {p}");
    }
    // A bad command is refused.
    let mut f = OpenOptions::new()
        .write(true)
        .open(e.dir().join("power"))
        .expect("power");
    let err = f.write_all(b"reboot").expect_err("not a command");
    assert_eq!(err.raw_os_error(), Some(libc::EINVAL), "{err}");
}

#[test]
fn a_tearing_drive_leaves_the_first_sectors_of_a_rewrite() {
    let Some(e) = drive("honest", 512) else {
        return;
    };
    let disk = e.disk();
    write_pages(&disk, libc::O_DIRECT, &[(4, 1)]);
    fsync(&disk);
    write_pages(&disk, libc::O_DIRECT, &[(4, 2)]);
    let s = power(&e, "cut");
    assert_eq!(ranges(&s["cut"]["torn"]), vec![(4, P)], "{s}");
    power(&e, "on");
    let back = read_page(&disk, 4).expect("read");
    assert!(back[..512].iter().all(|&b| b == 2), "the new first sector");
    assert!(back[512..].iter().all(|&b| b == 1), "the old rest");
}
