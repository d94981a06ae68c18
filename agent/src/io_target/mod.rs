//! Targets: what is measured. Probing (kind, size, logical block size), creating missing
//! files, opening with or without O_DIRECT, and laying out real data before reads.
//!
//! A target the service checked is [`Pinned`]: the access check opened it once without
//! following links, and every later open goes through that descriptor, so the file measured
//! is the file checked whatever happens to the path in between. The CLI's targets are paths
//! as given (its user owns the machine).

mod layout;
mod pin;
pub mod rw_flags;
pub mod safety;

pub use layout::{ensure_written, refuse_holes};
pub use pin::{openat2, Pinned};

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Extended attribute that marks a file diskscope created: only such files (and the
/// scratch file) get their holes laid out with data before a read test.
const CREATED_XATTR: &str = "user.diskscope.created";

/// Where a target is: a path as given (the CLI, whose user owns the machine), or also a
/// descriptor the service's access check opened, through which every open then goes.
#[derive(Clone, Debug)]
pub struct Locator {
    pub path: PathBuf,
    pub pin: Option<Pinned>,
    /// diskscope created the file for this run (its holes may be laid out).
    pub created: bool,
}

impl Locator {
    pub fn path(path: &Path) -> Self {
        Locator {
            path: path.to_path_buf(),
            pin: None,
            created: false,
        }
    }

    /// Probes a directory for the files workload: its free bytes as its size, its
    /// filesystem's block size; anything but a directory is refused naming its kind.
    pub fn probe_dir(&self) -> Result<TargetInfo, TargetError> {
        let at = match &self.pin {
            Some(p) => p.proc_path(),
            None => self.path.clone(),
        };
        let meta = std::fs::metadata(&at).map_err(|e| TargetError::io("stat", &self.path, e))?;
        if !meta.is_dir() {
            return Err(TargetError::NotADirectory {
                path: self.path.clone(),
            });
        }
        let free_bytes = free_space(&at).map_err(|e| TargetError::io("statvfs", &self.path, e))?;
        Ok(TargetInfo {
            path: self.path.clone(),
            kind: TargetKind::Dir,
            size: free_bytes,
            logical_block_size: 512,
            pin: self.pin.clone(),
            created: false,
        })
    }

    /// Probes the target (see [`TargetInfo::probe`]).
    pub fn probe(&self, create_size: Option<u64>, writes: bool) -> Result<TargetInfo, TargetError> {
        match &self.pin {
            None => {
                let mut t = TargetInfo::probe(&self.path, create_size, writes)?;
                t.created |= self.created;
                Ok(t)
            }
            Some(pin) => {
                TargetInfo::probe_pinned(&self.path, pin.clone(), create_size, writes, self.created)
            }
        }
    }
}

/// What kind of thing a target is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TargetKind {
    File,
    Block,
    /// Nothing is opened (null backend): the path is a label.
    None,
    /// A directory the files workload makes its tree in (`--preset files`).
    Dir,
}

impl TargetKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TargetKind::File => "file",
            TargetKind::Block => "block",
            TargetKind::None => "none",
            TargetKind::Dir => "directory",
        }
    }
}

/// A probed target.
#[derive(Clone, Debug)]
pub struct TargetInfo {
    pub path: PathBuf,
    pub kind: TargetKind,
    /// Bytes addressable on the target.
    pub size: u64,
    /// Alignment O_DIRECT needs for offsets and lengths.
    pub logical_block_size: u32,
    /// The inode the access check opened; every open goes through it when set.
    pub pin: Option<Pinned>,
    /// diskscope created this file (now or in an earlier run): a read test may lay out its
    /// holes. An existing file of somebody else's is never modified by a read test.
    pub created: bool,
}

/// Why a target cannot be used. Messages name the path and what to do.
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    #[error("target {path} does not exist: give --size to create it as a file")]
    Missing { path: PathBuf },
    #[error("target {path} is a {kind}: only regular files and block devices can be measured (a directory takes --preset files)")]
    UnsupportedKind { path: PathBuf, kind: &'static str },
    #[error("target {path} is not a directory: the files workload makes its tree in a directory")]
    NotADirectory { path: PathBuf },
    #[error("refusing to write to {path}: {}", .reasons.join("; "))]
    InUse { path: PathBuf, reasons: Vec<String> },
    #[error("the filesystem holding {path} refuses O_DIRECT: run with --buffered (results will include the page cache)")]
    DirectUnsupported { path: PathBuf },
    #[error("cannot {op} {path}: {source}")]
    Io {
        op: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{path} ends at {len} bytes but the span reaches {want}: a read test does not extend an existing file (write it first, or choose a smaller --size)")]
    ShortForRead { path: PathBuf, len: u64, want: u64 },
    #[error("{path} has {holes} bytes of holes in the span: a read test does not write into a file diskscope did not create (write it first, or measure a file without holes)")]
    HolesForRead { path: PathBuf, holes: u64 },
    #[error("laying out {path} needs {needed} bytes but its filesystem has {free} bytes free: choose a smaller --size")]
    NoSpace {
        path: PathBuf,
        needed: u64,
        free: u64,
    },
}

impl TargetError {
    pub fn io(op: &'static str, path: &Path, source: io::Error) -> Self {
        TargetError::Io {
            op,
            path: path.to_path_buf(),
            source,
        }
    }
}

impl TargetInfo {
    /// A label-only target for the null backend, with a virtual size.
    pub fn none(label: &Path, size: u64) -> Self {
        TargetInfo {
            path: label.to_path_buf(),
            kind: TargetKind::None,
            size,
            logical_block_size: 512,
            pin: None,
            created: false,
        }
    }

    /// The path every open uses: the pinned descriptor when there is one.
    pub fn at(&self) -> PathBuf {
        match &self.pin {
            Some(p) => p.proc_path(),
            None => self.path.clone(),
        }
    }

    /// Probes `path`. A missing path becomes a regular file of `create_size` bytes when given;
    /// a regular file shorter than `create_size` is extended (like fio) when `writes`, and
    /// refused for a read test; a block device is never resized.
    pub fn probe(path: &Path, create_size: Option<u64>, writes: bool) -> Result<Self, TargetError> {
        let mut created = false;
        if let Err(e) = std::fs::symlink_metadata(path) {
            if e.kind() != io::ErrorKind::NotFound {
                return Err(TargetError::io("stat", path, e));
            }
            let Some(size) = create_size else {
                return Err(TargetError::Missing {
                    path: path.to_path_buf(),
                });
            };
            let f = OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(path)
                .map_err(|e| TargetError::io("create", path, e))?;
            created_file(&f, path, size)?;
            created = true;
        }
        Self::probe_at(path, path, None, create_size, writes, created)
    }

    /// Probes a target the access check pinned (and created when `created`).
    pub fn probe_pinned(
        path: &Path,
        pin: Pinned,
        create_size: Option<u64>,
        writes: bool,
        created: bool,
    ) -> Result<Self, TargetError> {
        let at = pin.proc_path();
        Self::probe_at(path, &at, Some(pin), create_size, writes, created)
    }

    fn probe_at(
        path: &Path,
        at: &Path,
        pin: Option<Pinned>,
        create_size: Option<u64>,
        writes: bool,
        created: bool,
    ) -> Result<Self, TargetError> {
        let meta = std::fs::metadata(at).map_err(|e| TargetError::io("stat", path, e))?;
        let ft = meta.file_type();
        if ft.is_file() {
            let created = created || is_marked_created(at);
            if let Some(want) = create_size {
                if meta.len() < want {
                    if !writes && !created {
                        return Err(TargetError::ShortForRead {
                            path: path.to_path_buf(),
                            len: meta.len(),
                            want,
                        });
                    }
                    let f = OpenOptions::new()
                        .write(true)
                        .open(at)
                        .map_err(|e| TargetError::io("open for writing", path, e))?;
                    f.set_len(want)
                        .map_err(|e| TargetError::io("extend", path, e))?;
                }
            }
            let size = std::fs::metadata(at)
                .map_err(|e| TargetError::io("stat", path, e))?
                .len();
            Ok(TargetInfo {
                path: path.to_path_buf(),
                kind: TargetKind::File,
                size,
                logical_block_size: dev_logical_block_size(meta.dev()).unwrap_or(512),
                pin,
                created,
            })
        } else if ft.is_block_device() {
            let f = File::open(at).map_err(|e| TargetError::io("open", path, e))?;
            Ok(TargetInfo {
                path: path.to_path_buf(),
                kind: TargetKind::Block,
                size: block_device_size(&f).map_err(|e| TargetError::io("size", path, e))?,
                logical_block_size: block_logical_size(&f)
                    .map_err(|e| TargetError::io("query block size of", path, e))?,
                pin,
                created: false,
            })
        } else {
            let kind = if ft.is_dir() {
                "directory"
            } else if ft.is_char_device() {
                "character device"
            } else {
                "special file"
            };
            Err(TargetError::UnsupportedKind {
                path: path.to_path_buf(),
                kind,
            })
        }
    }

    /// Filesystem or partition-table signatures at the start of a block device (empty for
    /// files and for blank devices).
    pub fn signatures(&self) -> Result<Vec<&'static str>, TargetError> {
        if self.kind != TargetKind::Block {
            return Ok(Vec::new());
        }
        use std::os::unix::fs::FileExt;
        let f = File::open(self.at()).map_err(|e| TargetError::io("open", &self.path, e))?;
        let mut head = vec![0u8; safety::SIGNATURE_SPAN.min(self.size as usize)];
        f.read_exact_at(&mut head, 0)
            .map_err(|e| TargetError::io("read the start of", &self.path, e))?;
        Ok(safety::signatures(&head))
    }

    /// Why writes to this target would be refused because something uses it.
    pub fn in_use(&self) -> Vec<String> {
        match (self.kind, std::fs::metadata(self.at())) {
            (TargetKind::Block, Ok(meta)) => safety::in_use_reasons(meta.rdev()),
            _ => Vec::new(),
        }
    }

    /// Claims a block device exclusively (`O_EXCL`) for the length of a writing run: fails
    /// with a clear error while the kernel (a mount, a holder) or another program holds it,
    /// and keeps them out until the returned handle is dropped. `None` for files.
    pub fn claim(&self) -> Result<Option<File>, TargetError> {
        if self.kind != TargetKind::Block {
            return Ok(None);
        }
        OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_EXCL)
            .open(self.at())
            .map(Some)
            .map_err(|e| {
                if e.raw_os_error() == Some(libc::EBUSY) {
                    TargetError::InUse {
                        path: self.path.clone(),
                        reasons: vec![
                            "another program or the kernel holds it open exclusively (EBUSY)"
                                .into(),
                        ],
                    }
                } else {
                    TargetError::io("claim", &self.path, e)
                }
            })
    }

    /// Opens the target for a job. Writes to a block device that is mounted, swap or held
    /// by another device are refused.
    pub fn open(&self, write: bool, direct: bool) -> Result<File, TargetError> {
        self.open_with(write, direct, shared::durability::WriteSync::None)
    }

    /// [`open`](Self::open), with writes synchronous as `sync` asks (O_SYNC, O_DSYNC).
    pub fn open_with(
        &self,
        write: bool,
        direct: bool,
        sync: shared::durability::WriteSync,
    ) -> Result<File, TargetError> {
        if write && self.kind == TargetKind::Block {
            let meta =
                std::fs::metadata(self.at()).map_err(|e| TargetError::io("stat", &self.path, e))?;
            let reasons = safety::in_use_reasons(meta.rdev());
            if !reasons.is_empty() {
                return Err(TargetError::InUse {
                    path: self.path.clone(),
                    reasons,
                });
            }
        }
        let mut opts = OpenOptions::new();
        opts.read(true).write(write);
        let sync_flag = match sync {
            shared::durability::WriteSync::None => 0,
            shared::durability::WriteSync::Sync => libc::O_SYNC,
            shared::durability::WriteSync::Dsync => libc::O_DSYNC,
        };
        opts.custom_flags(if direct { libc::O_DIRECT } else { 0 } | sync_flag);
        opts.open(self.at()).map_err(|e| {
            if direct && e.raw_os_error() == Some(libc::EINVAL) {
                TargetError::DirectUnsupported {
                    path: self.path.clone(),
                }
            } else if write {
                TargetError::io("open for writing", &self.path, e)
            } else {
                TargetError::io("open", &self.path, e)
            }
        })
    }
}

/// Sizes a file diskscope just created and marks it as diskscope's (best effort: a
/// filesystem without user xattrs only loses the mark for later runs).
pub fn created_file(f: &File, path: &Path, size: u64) -> Result<(), TargetError> {
    use std::os::fd::AsRawFd;
    f.set_len(size)
        .map_err(|e| TargetError::io("size", path, e))?;
    let name = std::ffi::CString::new(CREATED_XATTR).unwrap_or_default();
    // SAFETY: a live descriptor, a NUL-terminated name and a 1-byte value with its length.
    unsafe { libc::fsetxattr(f.as_raw_fd(), name.as_ptr(), b"1".as_ptr().cast(), 1, 0) };
    Ok(())
}

/// The file carries diskscope's "created" mark.
/// Bytes an unprivileged writer can still allocate in the filesystem that holds `path` (a
/// missing file: its directory).
pub fn free_space(path: &Path) -> io::Result<u64> {
    use std::os::unix::ffi::OsStrExt;
    let dir = match path.parent() {
        Some(p) if !path.exists() => {
            if p.as_os_str().is_empty() {
                Path::new(".")
            } else {
                p
            }
        }
        _ => path,
    };
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes())
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    // SAFETY: `c` is a NUL-terminated path and `st` a zeroed statvfs the call fills.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(st.f_bavail as u64 * st.f_frsize as u64)
}

fn is_marked_created(at: &Path) -> bool {
    let (Ok(p), Ok(name)) = (
        std::ffi::CString::new(at.as_os_str().as_encoded_bytes()),
        std::ffi::CString::new(CREATED_XATTR),
    ) else {
        return false;
    };
    let mut v = [0u8; 1];
    // SAFETY: NUL-terminated path and name, a 1-byte buffer with its length.
    let n = unsafe { libc::getxattr(p.as_ptr(), name.as_ptr(), v.as_mut_ptr().cast(), 1) };
    n == 1 && v[0] == b'1'
}

fn block_device_size(f: &File) -> io::Result<u64> {
    use std::io::Seek;
    let mut f = f;
    f.seek(io::SeekFrom::End(0))
}

fn block_logical_size(f: &File) -> io::Result<u32> {
    use std::os::fd::AsRawFd;
    let mut size: libc::c_int = 0;
    // SAFETY: BLKSSZGET writes one c_int to the pointer, which is valid for the call.
    let rc = unsafe { libc::ioctl(f.as_raw_fd(), libc::BLKSSZGET, &mut size) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(size as u32)
}

/// Logical block size of the block device holding a filesystem (partitions use their
/// parent's queue). `None` for filesystems without a block device (tmpfs, overlay on tmpfs).
fn dev_logical_block_size(dev: u64) -> Option<u32> {
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    let base = PathBuf::from(format!("/sys/dev/block/{major}:{minor}"));
    [base.join("queue"), base.join("../queue")]
        .iter()
        .find_map(|q| std::fs::read_to_string(q.join("logical_block_size")).ok())
        .and_then(|s| s.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_file_needs_a_size() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("t.bin");
        let e = TargetInfo::probe(&p, None, false).unwrap_err();
        assert!(e.to_string().contains("does not exist"), "{e}");
        let t = TargetInfo::probe(&p, Some(1 << 20), false).expect("created");
        assert_eq!((t.kind, t.size), (TargetKind::File, 1 << 20));
        let t = TargetInfo::probe(&p, Some(2 << 20), false).expect("extended");
        assert_eq!(t.size, 2 << 20);
    }

    #[test]
    fn directories_are_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let e = TargetInfo::probe(dir.path(), None, false).unwrap_err();
        assert!(e.to_string().contains("is a directory"), "{e}");
    }
}
