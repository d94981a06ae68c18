//! The emulated SSD as a FUSE filesystem: `disk.img` (the device, timed by the model) and
//! `hwmon/temp1_input` (the model's temperature in millidegrees, where the agent's
//! temperature source looks for a file target) and `power`, the power switch of a drive
//! with a write cache: write `cut` to cut the power (the cache is lost and every I/O fails),
//! `cut-after N` to cut it as the Nth write from now arrives, `on` to switch it back on; read it for the state and what the last cut lost (JSON
//! `{"off": bool, "cut": media::Cut}`: ground truth for a flush check).

use super::media::Media;
use super::model::Device;
use fuser::{
    Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags, Generation, INodeNo,
    KernelConfig, LockOwner, OpenFlags, ReplyAttr, ReplyData, ReplyDirectory, ReplyEmpty,
    ReplyEntry, ReplyOpen, ReplyStatfs, ReplyWrite, Request, WriteFlags,
};
use std::ffi::OsStr;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

const ROOT: INodeNo = INodeNo::ROOT;
const DISK: INodeNo = INodeNo(2);
const HWMON: INodeNo = INodeNo(3);
const TEMP: INodeNo = INodeNo(4);
/// `link_mb_s`: the model's link cap, present when it has one.
const LINK: INodeNo = INodeNo(5);
/// `power`: the power switch.
const POWER: INodeNo = INodeNo(6);
/// The longest command `power` takes.
const MAX_POWER_COMMAND: usize = 16;
const TTL: Duration = Duration::from_secs(1);
/// Below this, a request returns at once and the device clock carries the debt (sleeping
/// costs more than it is worth); the average rate stays exact.
const MIN_SLEEP: Duration = Duration::from_micros(200);

pub struct EmulatedSsd {
    device: Mutex<Device>,
    media: Mutex<Media>,
    created: SystemTime,
}

impl EmulatedSsd {
    pub fn new(device: Device) -> Self {
        let media = Media::new(device.model.faults.clone(), device.model.capacity);
        EmulatedSsd {
            device: Mutex::new(device),
            media: Mutex::new(media),
            created: SystemTime::now(),
        }
    }

    fn media(&self) -> std::sync::MutexGuard<'_, Media> {
        self.media.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn device(&self) -> std::sync::MutexGuard<'_, Device> {
        self.device.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn attr(&self, ino: INodeNo) -> Option<FileAttr> {
        let (kind, size, perm) = match ino {
            ROOT | HWMON => (FileType::Directory, 0, 0o755),
            DISK => (FileType::RegularFile, self.device().model.capacity, 0o644),
            TEMP => (FileType::RegularFile, 4096, 0o444),
            LINK if self.device().model.link_mbps > 0.0 => (FileType::RegularFile, 4096, 0o444),
            POWER => (FileType::RegularFile, 4096, 0o644),
            _ => return None,
        };
        Some(FileAttr {
            ino,
            size,
            blocks: size / 512,
            atime: self.created,
            mtime: self.created,
            ctime: self.created,
            crtime: self.created,
            kind,
            perm,
            nlink: if kind == FileType::Directory { 2 } else { 1 },
            uid: 0,
            gid: 0,
            rdev: 0,
            blksize: 4096,
            flags: 0,
        })
    }

    fn power_text(&self) -> String {
        let m = self.media();
        format!(
            "{}\n",
            serde_json::json!({ "off": m.is_off(), "cut": m.last_cut() })
        )
    }

    /// `cut`, `cut-after N` (the power goes as the Nth write from now arrives) or `on`
    /// written to `power`.
    fn power(&self, command: &[u8]) -> Result<(), Errno> {
        let text = std::str::from_utf8(command)
            .map_err(|_| Errno::EINVAL)?
            .trim();
        match text.split_once(' ') {
            _ if text == "cut" => {
                let cut = self.media().power_cut();
                tracing::info!(
                    lost = cut.lost.len(),
                    torn = cut.torn.len(),
                    promised = cut.promised.len(),
                    "emulated drive: power cut"
                );
            }
            _ if text == "on" => self.media().power_on(),
            Some(("cut-after", n)) => {
                let n: u64 = n.trim().parse().map_err(|_| Errno::EINVAL)?;
                self.media().cut_after(n);
            }
            _ => return Err(Errno::EINVAL),
        }
        Ok(())
    }

    fn temp_text(&self) -> String {
        let t = self.device().temperature(Instant::now());
        format!("{}\n", (t * 1000.0).round() as i64)
    }
}

fn wait_until(t: Instant) {
    let now = Instant::now();
    if t > now + MIN_SLEEP {
        std::thread::sleep(t - now);
    }
}

impl Filesystem for EmulatedSsd {
    fn init(&mut self, _req: &Request, config: &mut KernelConfig) -> std::io::Result<()> {
        let _ = config.set_max_write(1 << 20);
        Ok(())
    }

    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        let ino = match (parent, name.to_str()) {
            (ROOT, Some("disk.img")) => DISK,
            (ROOT, Some("hwmon")) => HWMON,
            (HWMON, Some("temp1_input")) => TEMP,
            (ROOT, Some(crate::devices::EMULATED_LINK_FILE)) => LINK,
            (ROOT, Some("power")) => POWER,
            _ => return reply.error(Errno::ENOENT),
        };
        match self.attr(ino) {
            Some(a) => reply.entry(&TTL, &a, Generation(0)),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        match self.attr(ino) {
            Some(a) => reply.attr(&TTL, &a),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn open(&self, _req: &Request, ino: INodeNo, flags: OpenFlags, reply: ReplyOpen) {
        match ino {
            // A buffered open goes through the host's page cache, as on any filesystem: what
            // it reads again comes from RAM, faster than the drive's link (what plausibility
            // flags must catch).
            DISK if flags.0 & libc::O_DIRECT == 0 => {
                reply.opened(FileHandle(0), FopenFlags::FOPEN_KEEP_CACHE)
            }
            // Every I/O reaches the model (no page cache in between), and writes may be in
            // flight together (the kernel otherwise serializes direct writes per file, and
            // the daemon's overhead would add to every I/O's time).
            DISK => reply.opened(
                FileHandle(0),
                FopenFlags::FOPEN_DIRECT_IO | FopenFlags::FOPEN_PARALLEL_DIRECT_WRITES,
            ),
            TEMP | LINK | POWER => reply.opened(FileHandle(0), FopenFlags::FOPEN_DIRECT_IO),
            _ => reply.error(Errno::EISDIR),
        }
    }

    fn read(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock: Option<LockOwner>,
        reply: ReplyData,
    ) {
        match ino {
            DISK => {
                let cap = self.device().model.capacity;
                let len = u64::from(size).min(cap.saturating_sub(offset));
                let done = self.device().read(len, Instant::now());
                let (data, extra) = {
                    let m = self.media();
                    (
                        m.read_acked(offset, len as usize),
                        m.extra_latency(offset, len),
                    )
                };
                wait_until(done + extra);
                match data {
                    Ok(d) => reply.data(&d),
                    Err(_) => reply.error(Errno::EIO),
                }
            }
            TEMP | LINK | POWER => {
                let text = match ino {
                    TEMP => self.temp_text(),
                    POWER => self.power_text(),
                    _ => format!("{}\n", self.device().model.link_mbps),
                };
                let b = text.as_bytes();
                let start = (offset as usize).min(b.len());
                let end = (start + size as usize).min(b.len());
                reply.data(&b[start..end]);
            }
            _ => reply.error(Errno::EISDIR),
        }
    }

    fn write(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        flags: OpenFlags,
        _lock: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        if ino == POWER && data.len() <= MAX_POWER_COMMAND {
            return match self.power(data) {
                Ok(()) => reply.written(data.len() as u32),
                Err(e) => reply.error(e),
            };
        }
        if ino != DISK {
            return reply.error(Errno::EACCES);
        }
        // O_DSYNC (and O_SYNC, which includes it): each write forced to the medium (FUA).
        let fua = flags.0 & libc::O_DSYNC != 0;
        let cap = self.device().model.capacity;
        if offset.saturating_add(data.len() as u64) > cap {
            return reply.error(Errno::ENOSPC);
        }
        let done = self
            .device()
            .write(offset, data.len() as u64, Instant::now());
        let (stored, extra) = {
            let mut m = self.media();
            (
                m.write_acked(offset, data, fua),
                m.extra_latency(offset, data.len() as u64),
            )
        };
        wait_until(done + extra);
        match stored {
            Ok(()) => reply.written(data.len() as u32),
            Err(_) => reply.error(Errno::EIO),
        }
    }

    /// fsync and fdatasync: the cache's flush, as the drive's policy keeps it.
    fn fsync(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        if ino != DISK {
            return reply.ok();
        }
        match self.media().flush() {
            Ok(()) => reply.ok(),
            Err(_) => reply.error(Errno::EIO),
        }
    }

    fn readdir(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
        let entries: &[(INodeNo, FileType, &str)] = match ino {
            ROOT => &[
                (ROOT, FileType::Directory, "."),
                (ROOT, FileType::Directory, ".."),
                (DISK, FileType::RegularFile, "disk.img"),
                (HWMON, FileType::Directory, "hwmon"),
                (
                    LINK,
                    FileType::RegularFile,
                    crate::devices::EMULATED_LINK_FILE,
                ),
                (POWER, FileType::RegularFile, "power"),
            ],
            HWMON => &[
                (HWMON, FileType::Directory, "."),
                (ROOT, FileType::Directory, ".."),
                (TEMP, FileType::RegularFile, "temp1_input"),
            ],
            _ => return reply.error(Errno::ENOTDIR),
        };
        for (i, (ino, kind, name)) in entries.iter().enumerate().skip(offset as usize) {
            if reply.add(*ino, (i + 1) as u64, *kind, name) {
                break;
            }
        }
        reply.ok();
    }

    fn statfs(&self, _req: &Request, _ino: INodeNo, reply: ReplyStatfs) {
        let blocks = self.device().model.capacity / 4096;
        reply.statfs(blocks, 0, 0, 4, 0, 4096, 255, 4096);
    }
}
