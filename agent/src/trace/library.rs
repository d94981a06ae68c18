//! Where `replay` finds its trace: the built-in application traces (compressed in the
//! binary), then the agent's trace directory (`serve`: `<data-dir>/traces`, plain file
//! names only, opened without following links), then, for the command line only, a path.
//!
//! The process decides once what it accepts ([`set_dir`], [`allow_paths`]): the service
//! never sets `allow_paths`, so an API request cannot name a file outside its directory.

use super::{Trace, TraceError};
use shared::api::TraceInfo;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

/// A trace compiled into the agent.
#[derive(Debug)]
pub struct Builtin {
    pub name: &'static str,
    pub description: &'static str,
    bytes: &'static [u8],
}

/// The recorded application traces (see `agent/traces/README.md` for how each was made).
pub const BUILTIN: &[Builtin] = &[
    Builtin {
        name: "app-build",
        description: "a cargo build of a Rust workspace (compiler reads, object and rlib writes)",
        bytes: include_bytes!("../../traces/app-build.iolog.gz"),
    },
    Builtin {
        name: "app-database",
        description:
            "SQLite: a 200,000-row insert in transactions, indexed queries, updates (WAL, fsyncs)",
        bytes: include_bytes!("../../traces/app-database.iolog.gz"),
    },
    Builtin {
        name: "app-files",
        description: "untarring a source tree, reading every file back, deleting it (fstrim after)",
        bytes: include_bytes!("../../traces/app-files.iolog.gz"),
    },
];

static DIR: OnceLock<PathBuf> = OnceLock::new();
static PATHS: AtomicBool = AtomicBool::new(false);

/// The directory whose plain file names `replay` may name (set once, by `serve`).
pub fn set_dir(dir: &Path) {
    let _ = DIR.set(dir.to_path_buf());
}

pub fn dir() -> Option<&'static Path> {
    DIR.get().map(PathBuf::as_path)
}

/// Lets `replay` name any file (the command line: the user's own files).
pub fn allow_paths() {
    PATHS.store(true, Ordering::Relaxed);
}

/// The built-in traces, then the trace directory's regular files.
pub fn list() -> Vec<TraceInfo> {
    let mut out: Vec<TraceInfo> = BUILTIN
        .iter()
        .map(|b| TraceInfo {
            name: b.name.into(),
            description: b.description.into(),
            builtin: true,
            bytes: b.bytes.len() as u64,
        })
        .collect();
    if let Some(Ok(entries)) = dir().map(std::fs::read_dir) {
        let mut files: Vec<TraceInfo> = entries
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                plain_name(&name).then(|| TraceInfo {
                    description: "recorded trace".into(),
                    bytes: e.metadata().map_or(0, |m| m.len()),
                    builtin: false,
                    name,
                })
            })
            .collect();
        files.sort_by(|a, b| a.name.cmp(&b.name));
        out.extend(files);
    }
    out
}

/// A file name of the trace directory: no separators, not hidden, not `.`/`..`.
fn plain_name(name: &str) -> bool {
    !name.is_empty() && !name.starts_with('.') && !name.contains('/') && name.len() <= 255
}

/// Loads the trace `name` refers to.
pub fn load(name: &str) -> Result<Trace, TraceError> {
    if let Some(b) = BUILTIN.iter().find(|b| b.name == name) {
        return super::parse(b.bytes);
    }
    if let Some(d) = dir().filter(|_| plain_name(name)) {
        let path = d.join(name);
        match open_nofollow(&path) {
            Ok(bytes) => return super::parse(&bytes),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => {
                return Err(TraceError::Io {
                    path: name.into(),
                    source,
                })
            }
        }
    }
    if PATHS.load(Ordering::Relaxed) {
        return super::read_file(Path::new(name));
    }
    Err(TraceError::NotFound(name.chars().take(64).collect()))
}

/// A regular file's bytes, refusing a symbolic link at the last component.
fn open_nofollow(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)?;
    if !f.metadata()?.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    let mut bytes = Vec::new();
    f.take(super::MAX_TRACE_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > super::MAX_TRACE_BYTES {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "over 1 GiB",
        ));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_trace_parses_with_timestamps() {
        for b in BUILTIN {
            let t = load(b.name).unwrap_or_else(|e| panic!("{}: {e}", b.name));
            assert!(t.timed, "{}", b.name);
            assert!(t.ops.len() > 1000, "{}: {} I/Os", b.name, t.ops.len());
            assert!(b.bytes.len() < 2 << 20, "{} is over 2 MiB", b.name);
        }
    }

    #[test]
    fn names_outside_the_library_are_refused() {
        for n in ["/etc/passwd", "../x", ".hidden", ""] {
            assert!(!plain_name(n) || n.is_empty(), "{n}");
        }
        assert!(matches!(load("/etc/passwd"), Err(TraceError::NotFound(_))));
    }
}
