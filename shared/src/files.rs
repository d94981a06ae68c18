//! Small files and metadata (`--preset files`): a tree of directories and files in a work
//! directory of its own, made, read and removed phase by phase, as elbencho and mdtest
//! measure a filesystem. Each phase is a step whose I/Os are the phase's operations.

use serde::{Deserialize, Serialize};

/// Most directories one job makes (all levels of its tree).
pub const MAX_DIRS: u32 = 100_000;
/// Most levels of directories in a job's tree.
pub const MAX_DEPTH: u32 = 16;
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

/// A files phase of a run: the tree's shape, the phase, and the run's work directory.
///
/// Each job's tree (`jJ/` in the work directory): `dirs` directories at its top, each
/// holding `fanout` directories when `depth` is more than 1, and so on for `depth` levels
/// (mdtest's `-z`/`-b`); each directory of the last level holds `files` files of
/// `file_size` bytes. `depth` 1 is elbencho's flat tree.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct FilesSpec {
    pub phase: Phase,
    pub dirs: u32,
    /// Levels of directories (1: the `dirs` directories hold the files).
    #[serde(default = "one")]
    pub depth: u32,
    /// Directories in each directory above the last level.
    #[serde(default)]
    pub fanout: u32,
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

fn one() -> u32 {
    1
}

impl FilesSpec {
    /// Directories at each level of one job's tree, top first (saturating: a shape too
    /// large is refused by [`FilesSpec::check`]).
    pub fn levels(&self) -> impl Iterator<Item = u64> + '_ {
        let depth = self.depth.clamp(1, MAX_DEPTH);
        (0..depth).scan(0u64, |n, level| {
            *n = if level == 0 {
                u64::from(self.dirs)
            } else {
                n.saturating_mul(u64::from(self.fanout))
            };
            Some(*n)
        })
    }

    /// Directories one job makes (all levels), and those of the last level (the files').
    pub fn dirs_per_job(&self) -> (u64, u64) {
        self.levels()
            .fold((0u64, 0u64), |(all, _), n| (all.saturating_add(n), n))
    }

    /// Files all `jobs` make.
    pub fn total_files(&self, jobs: u32) -> u64 {
        u64::from(jobs)
            .saturating_mul(self.dirs_per_job().1)
            .saturating_mul(u64::from(self.files))
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
        if !(1..=MAX_DEPTH).contains(&self.depth) {
            out.push((
                "files.depth",
                self.depth.to_string(),
                format!("1..{MAX_DEPTH}"),
            ));
        }
        if self.depth > 1 && !(1..=MAX_DIRS).contains(&self.fanout) {
            out.push((
                "files.fanout",
                self.fanout.to_string(),
                format!("1..{MAX_DIRS} with depth {}", self.depth),
            ));
        }
        let all_dirs = self.dirs_per_job().0;
        if all_dirs > u64::from(MAX_DIRS) {
            out.push((
                "files.dirs",
                all_dirs.to_string(),
                format!("{MAX_DIRS} directories at most per job (all levels of its tree)"),
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

    fn shape(dirs: u32, depth: u32, fanout: u32) -> FilesSpec {
        FilesSpec {
            phase: Phase::Mkdir,
            dirs,
            depth,
            fanout,
            files: 10,
            file_size: 0,
            fsync: false,
            verify: false,
            work: format!("{WORK_PREFIX}1-2"),
            first: true,
            last: true,
        }
    }

    #[test]
    fn a_tree_counts_its_levels_and_leaves() {
        let flat = shape(7, 1, 0);
        assert_eq!(flat.dirs_per_job(), (7, 7));
        assert_eq!(flat.total_files(2), 140);
        assert!(flat.check(2).is_empty());
        let tree = shape(3, 3, 4);
        assert_eq!(tree.levels().collect::<Vec<_>>(), [3, 12, 48]);
        assert_eq!(tree.dirs_per_job(), (63, 48));
        assert_eq!(tree.total_files(1), 480);
        // The largest shapes saturate and are refused, naming the field.
        let huge = shape(MAX_DIRS, MAX_DEPTH, MAX_DIRS);
        assert!(huge.check(1).iter().any(|(f, _, _)| *f == "files.dirs"));
        assert!(shape(2, 2, 0)
            .check(1)
            .iter()
            .any(|(f, _, _)| *f == "files.fanout"));
        assert!(shape(2, 17, 2)
            .check(1)
            .iter()
            .any(|(f, _, _)| *f == "files.depth"));
    }
}
