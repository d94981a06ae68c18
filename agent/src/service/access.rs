//! Which targets the service may touch: the default scratch file, and what the operator
//! allowed at start-up (`--allow`: directories, files, block devices). Paths are resolved
//! (symlinks, `..`) before they are compared, and then opened in one step that follows no
//! link ([`AccessPolicy::open_target`]): a link swapped in after the check is refused by the
//! kernel, and the opened descriptor, not the path, is what the run measures. The data
//! directory (database, its side files, tokens) is never a target, whatever `--allow`
//! says; only the scratch file (and the demo drive) in it are. Writes to a regular file
//! with more than one hard link are refused (a link may lead anywhere) unless the operator
//! allowed them (`--allow-hard-links`). Writes to a block device are refused when it is in
//! use or carries a partition table or filesystem signature, unless the operator armed that
//! device (`--allow-destructive`).

use super::SCRATCH_SIZE;
use crate::io_target::{openat2, Locator, Pinned, TargetInfo, TargetKind};
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum AccessError {
    #[error("target '{0}' must be an absolute path")]
    NotAbsolute(String),
    #[error("target '{requested}' is not allowed: it is not the scratch file and not under an --allow path ({allowed})")]
    NotAllowed { requested: String, allowed: String },
    #[error("target '{requested}' resolves to {resolved}, outside the allowed paths ({allowed})")]
    Escapes {
        requested: String,
        resolved: String,
        allowed: String,
    },
    #[error("target {0} does not exist: give a size to create it as a file")]
    Missing(String),
    #[error("target '{0}': its folder does not exist")]
    NoParent(String),
    #[error("target '{requested}' is in the agent's data directory {dir}: its database and tokens are never a target (only the scratch file is)")]
    OwnState { requested: String, dir: String },
    #[error("target '{requested}' changed while it was being opened (a link appeared in its path): refused")]
    Swapped { requested: String },
    #[error("cannot open target '{requested}': {source}")]
    Open {
        requested: String,
        #[source]
        source: std::io::Error,
    },
    #[error("refusing to write to {path}: it has {links} hard links, so the data may belong to another name; start the agent with --allow-hard-links to write such files")]
    HardLinked { path: String, links: u64 },
    #[error("refusing to write to {path}: {}", .reasons.join("; "))]
    InUse { path: String, reasons: Vec<String> },
    #[error("refusing to write to {path}: it carries {}; start the agent with --allow-destructive {path} to overwrite it", .what.join(" and "))]
    Signature {
        path: String,
        what: Vec<&'static str>,
    },
}

#[derive(Debug, Clone)]
pub struct AccessPolicy {
    scratch: PathBuf,
    /// The agent's own directory: nothing in it is a target but `scratch` and `exempt`.
    data_dir: PathBuf,
    /// Targets inside the data directory the agent made for runs (the demo drive).
    exempt: Vec<PathBuf>,
    allowed: Vec<PathBuf>,
    armed: Vec<PathBuf>,
    hard_links: bool,
}

/// Files of the agent's own state in the data directory.
const OWN_FILES: [&str; 4] = [
    "diskscope.db",
    "diskscope.db-wal",
    "diskscope.db-shm",
    "tokens.json",
];

const NO_LINKS: u64 = libc::RESOLVE_NO_SYMLINKS | libc::RESOLVE_NO_MAGICLINKS;

/// Resolves a path that may not exist yet: the parent must exist; the name is kept.
fn resolve(path: &Path) -> Option<PathBuf> {
    if let Ok(p) = path.canonicalize() {
        return Some(p);
    }
    let name = path.file_name()?;
    if path.components().any(|c| c == Component::ParentDir) {
        return None;
    }
    Some(path.parent()?.canonicalize().ok()?.join(name))
}

impl AccessPolicy {
    /// `scratch` is always allowed; `allowed` and `armed` are resolved now (entries that do
    /// not exist are kept as given so that a later mount or device can match).
    pub fn new(scratch: PathBuf, allowed: &[PathBuf], armed: &[PathBuf]) -> Self {
        let norm = |v: &[PathBuf]| {
            v.iter()
                .map(|p| resolve(p).unwrap_or_else(|| p.clone()))
                .collect()
        };
        let scratch = resolve(&scratch).unwrap_or(scratch);
        let data_dir = scratch.parent().map(Path::to_path_buf).unwrap_or_default();
        AccessPolicy {
            scratch,
            data_dir,
            exempt: Vec::new(),
            allowed: norm(allowed),
            armed: norm(armed),
            hard_links: false,
        }
    }

    /// Allows writes to files with several hard links (`--allow-hard-links`).
    pub fn allow_hard_links(mut self, yes: bool) -> Self {
        self.hard_links = yes;
        self
    }

    /// Allows a target the agent made inside its data directory (the demo drive); it must
    /// also be allowed like any other target.
    pub fn exempt(mut self, path: &Path) -> Self {
        self.exempt
            .push(resolve(path).unwrap_or_else(|| path.to_path_buf()));
        self
    }

    pub fn scratch(&self) -> &Path {
        &self.scratch
    }

    pub fn allowed(&self) -> &[PathBuf] {
        &self.allowed
    }

    fn allowed_list(&self) -> String {
        std::iter::once(&self.scratch)
            .chain(&self.allowed)
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn permits(&self, resolved: &Path) -> bool {
        resolved == self.scratch
            || self
                .allowed
                .iter()
                .any(|a| resolved == a || (a.is_dir() && resolved.starts_with(a)))
    }

    /// Resolves `requested` and checks it against the lists.
    pub fn resolve_target(&self, requested: &str) -> Result<PathBuf, AccessError> {
        let path = Path::new(requested);
        if !path.is_absolute() {
            return Err(AccessError::NotAbsolute(requested.to_string()));
        }
        let resolved = resolve(path).ok_or_else(|| AccessError::NoParent(requested.to_string()))?;
        if self.permits(&resolved) {
            return Ok(resolved);
        }
        // Say "escapes" when the path as written looks allowed but resolves elsewhere.
        let lexical = self.permits(path);
        let allowed = self.allowed_list();
        if lexical {
            Err(AccessError::Escapes {
                requested: requested.to_string(),
                resolved: resolved.display().to_string(),
                allowed,
            })
        } else {
            Err(AccessError::NotAllowed {
                requested: requested.to_string(),
                allowed,
            })
        }
    }

    /// The resolved path is in the data directory and is not a target the agent made.
    fn is_own_state(&self, resolved: &Path) -> bool {
        resolved.starts_with(&self.data_dir)
            && resolved != self.scratch
            && !self.exempt.iter().any(|e| e == resolved)
    }

    /// The opened inode is one of the agent's own files (also through a hard link).
    fn is_own_inode(&self, meta: &std::fs::Metadata) -> bool {
        OWN_FILES.iter().any(|f| {
            std::fs::symlink_metadata(self.data_dir.join(f))
                .is_ok_and(|m| m.dev() == meta.dev() && m.ino() == meta.ino())
        })
    }

    /// Checks `requested` against the lists and opens it in the same step, following no
    /// link: the returned descriptor is the target from now on. A missing file is created
    /// (`create_size` bytes) when a size is given, also without following links; the scratch
    /// file is created at least [`SCRATCH_SIZE`] long.
    pub fn open_target(
        &self,
        requested: &str,
        create_size: Option<u64>,
    ) -> Result<Locator, AccessError> {
        let resolved = self.resolve_target(requested)?;
        let create_size = if resolved == self.scratch {
            Some(SCRATCH_SIZE.max(create_size.unwrap_or(0)))
        } else {
            create_size
        };
        let own = || AccessError::OwnState {
            requested: requested.to_string(),
            dir: self.data_dir.display().to_string(),
        };
        if self.is_own_state(&resolved) {
            return Err(own());
        }
        let open_err = |source: std::io::Error| match source.raw_os_error() {
            Some(libc::ELOOP | libc::EXDEV) => AccessError::Swapped {
                requested: requested.to_string(),
            },
            _ => AccessError::Open {
                requested: requested.to_string(),
                source,
            },
        };
        // Below an allowed directory: resolve beneath it. An allowed file or device, or the
        // scratch file: its own (canonical) path. Either way no link is followed.
        let base = self
            .allowed
            .iter()
            .chain(std::iter::once(&self.data_dir))
            .filter(|a| resolved != **a && resolved.starts_with(a))
            .max_by_key(|a| a.as_os_str().len());
        let dir = match base {
            Some(a) => Some((
                openat2(None, a, libc::O_PATH | libc::O_DIRECTORY, 0, NO_LINKS)
                    .map_err(open_err)?,
                resolved.strip_prefix(a).unwrap_or(&resolved).to_path_buf(),
            )),
            None => None,
        };
        let (dirfd, rel, how) = match &dir {
            Some((fd, rel)) => (
                Some(fd.as_raw_fd()),
                rel.as_path(),
                NO_LINKS | libc::RESOLVE_BENEATH,
            ),
            None => (None, resolved.as_path(), NO_LINKS),
        };
        let (fd, created) = match openat2(dirfd, rel, libc::O_PATH, 0, how) {
            Ok(fd) => (fd, false),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && create_size.is_some() => {
                let flags = libc::O_RDWR | libc::O_CREAT | libc::O_EXCL;
                let fd = openat2(dirfd, rel, flags, 0o644, how).map_err(open_err)?;
                let f = std::fs::File::from(fd);
                crate::io_target::created_file(&f, &resolved, create_size.unwrap_or(0)).map_err(
                    |e| AccessError::Open {
                        requested: requested.to_string(),
                        source: std::io::Error::other(e.to_string()),
                    },
                )?;
                (std::os::fd::OwnedFd::from(f), true)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(AccessError::Missing(requested.to_string()))
            }
            Err(e) => return Err(open_err(e)),
        };
        let pin = Pinned::new(fd);
        let meta = pin.metadata().map_err(open_err)?;
        if self.is_own_inode(&meta) {
            return Err(own());
        }
        // The scratch file and the demo drive are the agent's own: their holes may be laid out.
        let ours = resolved == self.scratch || self.exempt.contains(&resolved);
        Ok(Locator {
            path: resolved,
            pin: Some(pin),
            created: created || ours,
        })
    }

    /// Checks that writing to a probed target is safe.
    pub fn check_write(&self, target: &TargetInfo) -> Result<(), AccessError> {
        if target.kind == TargetKind::File && !self.hard_links {
            let links = std::fs::metadata(target.at()).map_or(1, |m| m.nlink());
            if links > 1 {
                return Err(AccessError::HardLinked {
                    path: target.path.display().to_string(),
                    links,
                });
            }
        }
        if target.kind != TargetKind::Block {
            return Ok(());
        }
        let path = target.path.display().to_string();
        let reasons = target.in_use();
        if !reasons.is_empty() {
            return Err(AccessError::InUse { path, reasons });
        }
        if self.armed.iter().any(|a| a == &target.path) {
            return Ok(());
        }
        let what = target.signatures().unwrap_or_default();
        if what.is_empty() {
            Ok(())
        } else {
            Err(AccessError::Signature { path, what })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allow_list_resolves_links_and_dots() {
        let root = tempfile::tempdir().expect("tempdir");
        let allowed = root.path().join("allowed");
        let outside = root.path().join("outside");
        std::fs::create_dir_all(&allowed).expect("mkdir");
        std::fs::create_dir_all(&outside).expect("mkdir");
        std::os::unix::fs::symlink(&outside, allowed.join("link")).expect("symlink");
        let scratch = root.path().join("scratch.bin");
        let p = AccessPolicy::new(scratch.clone(), std::slice::from_ref(&allowed), &[]);
        let s = |p: &Path| p.display().to_string();

        assert!(
            p.resolve_target(&s(&allowed.join("new.bin"))).is_ok(),
            "new file in an allowed dir"
        );
        assert!(
            p.resolve_target(&s(&scratch)).is_ok(),
            "the scratch file is always allowed"
        );
        let e = p.resolve_target(&s(&outside.join("x.bin"))).unwrap_err();
        assert!(e.to_string().contains("is not allowed"), "{e}");
        let e = p
            .resolve_target(&s(&allowed.join("link/x.bin")))
            .unwrap_err();
        assert!(
            e.to_string().contains("resolves to") && e.to_string().contains("outside"),
            "{e}"
        );
        let e = p
            .resolve_target(&s(&allowed.join("../outside/y.bin")))
            .unwrap_err();
        assert!(
            matches!(
                e,
                AccessError::NoParent(_)
                    | AccessError::NotAllowed { .. }
                    | AccessError::Escapes { .. }
            ),
            "{e}"
        );
        let e = p.resolve_target("relative.bin").unwrap_err();
        assert!(e.to_string().contains("absolute"), "{e}");
    }
}
