//! Small files and metadata (`--preset files`): a tree of directories and files in a work
//! directory of its own, made, read and removed phase by phase, as elbencho and mdtest
//! measure a filesystem. Each phase is a step whose I/Os are the phase's operations.

use serde::{Deserialize, Serialize};

/// Most directories one job makes.
pub const MAX_DIRS: u32 = 100_000;
/// Most files one directory holds.
pub const MAX_FILES: u32 = 1_000_000;
/// Most files one run makes, all jobs together.
pub const MAX_TOTAL_FILES: u64 = 50_000_000;
/// Largest file.
pub const MAX_FILE_SIZE: u64 = 1 << 30;
/// The work directory's prefix: `diskscope-files-<pid>-<ms>` in the target directory.
pub const WORK_PREFIX: &str = "diskscope-files-";
/// The mark a work directory carries (its owner's pid and start), so that only diskscope's
/// own trees are ever removed.
pub const MARK: &str = ".diskscope-files";

/// One phase: what every job does to each of its directories or files.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    Mkdir,
    Create,
    Stat,
    Read,
    Delete,
    Rmdir,
}

impl Phase {
    pub const ALL: [Phase; 6] = [
        Phase::Mkdir,
        Phase::Create,
        Phase::Stat,
        Phase::Read,
        Phase::Delete,
        Phase::Rmdir,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Phase::Mkdir => "mkdir",
            Phase::Create => "create",
            Phase::Stat => "stat",
            Phase::Read => "read",
            Phase::Delete => "delete",
            Phase::Rmdir => "rmdir",
        }
    }

    /// Whether the phase changes the tree (a write, for the access checks).
    pub fn writes(self) -> bool {
        !matches!(self, Phase::Stat | Phase::Read)
    }

    /// Whether its operations are on directories (else on files).
    pub fn on_dirs(self) -> bool {
        matches!(self, Phase::Mkdir | Phase::Rmdir)
    }

    /// `mkdir,create,…` (any order given is run in the order of [`Phase::ALL`]).
    pub fn parse_list(text: &str) -> Result<Vec<Phase>, String> {
        let mut out = Vec::new();
        for word in text.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            let p = Phase::ALL
                .into_iter()
                .find(|p| p.name() == word)
                .ok_or_else(|| {
                    format!("phase '{word}': one of mkdir, create, stat, read, delete, rmdir")
                })?;
            if !out.contains(&p) {
                out.push(p);
            }
        }
        if out.is_empty() {
            return Err("no phase given".into());
        }
        out.sort_by_key(|p| Phase::ALL.iter().position(|q| q == p));
        Ok(out)
    }
}

/// A files phase of a run: the tree's shape (per job: `dirs` directories of `files` files
/// of `file_size` bytes), the phase, and the run's work directory.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct FilesSpec {
    pub phase: Phase,
    pub dirs: u32,
    pub files: u32,
    pub file_size: u64,
    /// fsync each file after writing it (create).
    pub fsync: bool,
    /// The read phase checks each file holds what create wrote (`--verify`).
    #[serde(default)]
    pub verify: bool,
    /// The work directory's name in the target directory, the same for every phase of a run.
    pub work: String,
    /// The run's first phase (makes the work directory) and last one (removes it after).
    pub first: bool,
    pub last: bool,
}

impl FilesSpec {
    /// Files all `jobs` make.
    pub fn total_files(&self, jobs: u32) -> u64 {
        u64::from(jobs) * u64::from(self.dirs) * u64::from(self.files)
    }

    /// Problems with the shape, each naming its field and value.
    pub fn check(&self, jobs: u32) -> Vec<(&'static str, String, String)> {
        let mut out = Vec::new();
        if !(1..=MAX_DIRS).contains(&self.dirs) {
            out.push((
                "files.dirs",
                self.dirs.to_string(),
                format!("1..{MAX_DIRS}"),
            ));
        }
        if !(1..=MAX_FILES).contains(&self.files) {
            out.push((
                "files.files",
                self.files.to_string(),
                format!("1..{MAX_FILES}"),
            ));
        }
        if self.file_size > MAX_FILE_SIZE {
            out.push((
                "files.file_size",
                self.file_size.to_string(),
                format!("at most {MAX_FILE_SIZE} B"),
            ));
        }
        if self.total_files(jobs) > MAX_TOTAL_FILES {
            out.push((
                "files.files",
                self.total_files(jobs).to_string(),
                format!("{MAX_TOTAL_FILES} files at most in a run (jobs × dirs × files)"),
            ));
        }
        let plain = !self.work.is_empty()
            && self.work.starts_with(WORK_PREFIX)
            && !self.work.contains('/')
            && self.work.len() < 200;
        if !plain {
            out.push((
                "files.work",
                self.work.clone(),
                format!("a plain name starting {WORK_PREFIX}"),
            ));
        }
        out
    }
}

/// A phase's rate over all jobs, as elbencho gives it: until the first job was done, and
/// until the last one was (`seconds` since the phase began).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Done {
    pub first: crate::group::Figure,
    pub last: crate::group::Figure,
}

impl Done {
    /// Whether the two differ enough to be worth saying (more than 10 %).
    pub fn differ(&self) -> bool {
        self.last.iops > 0.0 && (self.first.iops / self.last.iops - 1.0).abs() > 0.10
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_read_in_their_order_and_bad_ones_are_named() {
        assert_eq!(
            Phase::parse_list("read, create,mkdir,read").unwrap(),
            [Phase::Mkdir, Phase::Create, Phase::Read]
        );
        assert!(Phase::parse_list("create,chmod")
            .unwrap_err()
            .contains("phase 'chmod'"));
    }
}
