//! A job's part of a files phase: its tree walked level by level, each operation on a name
//! timed and counted as one I/O of the run (writes: mkdir, create, delete, rmdir; reads:
//! stat, read), its interval sent to the runner as the engine's jobs send theirs.
//!
//! The tree (`shared::files::FilesSpec`): `jJ/` holds `dirs` directories `dD`, each of
//! those `fanout` more, for `depth` levels; the last level's directories hold the files
//! `fF`. Directories are made before what they hold and removed after it.

use super::ops::{cstr, dir_at, Ops};
use crate::engine::timed::Timer;
use crate::engine::Dir;
use shared::files::{FilesSpec, Phase};
use std::ffi::CString;
use std::io;
use std::os::fd::OwnedFd;

/// What failed, and where in the tree.
pub type OpError = (String, io::Error);

/// One job's walk of its tree in one phase.
pub struct Walk<'a, 't> {
    pub f: &'a FilesSpec,
    pub ops: &'a mut dyn Ops,
    pub t: &'a mut Timer<'t>,
    /// What create writes, and what a verified read compares with.
    pub data: &'a [u8],
    /// The read phase's buffer (a pattern's length).
    pub buf: Vec<u8>,
}

fn named(name: &str) -> Result<CString, OpError> {
    cstr(name.as_bytes()).map_err(|e| (name.to_string(), e))
}

fn at(path: &str) -> impl FnOnce(io::Error) -> OpError + '_ {
    move |e| (path.to_string(), e)
}

impl Walk<'_, '_> {
    /// The phase over job `job`'s tree in the work directory.
    pub fn run(&mut self, work: &OwnedFd, job: usize) -> Result<(), OpError> {
        let path = format!("j{job}");
        let name = named(&path)?;
        if self.f.phase == Phase::Mkdir {
            let ops = &mut *self.ops;
            self.t
                .op(Dir::Write, || ops.mkdir(work, &name).map(|()| 0))
                .map_err(at(&path))?;
        }
        let dir = dir_at(work, &name).map_err(at(&path))?;
        self.level(&dir, &path, 1)?;
        if self.f.phase == Phase::Rmdir && !self.t.stopped() {
            drop(dir);
            let ops = &mut *self.ops;
            self.t
                .op(Dir::Write, || ops.rmdir(work, &name).map(|()| 0))
                .map_err(at(&path))?;
        }
        Ok(())
    }

    /// The directories of level `level` (1 is the top) in `parent`, and what is below them.
    fn level(&mut self, parent: &OwnedFd, path: &str, level: u32) -> Result<(), OpError> {
        let count = if level == 1 {
            self.f.dirs
        } else {
            self.f.fanout
        };
        let last = level >= self.f.depth;
        for d in 0..count {
            if self.t.stopped() {
                return Ok(());
            }
            let here = format!("{path}/d{d}");
            let name = named(&format!("d{d}"))?;
            let ops = &mut *self.ops;
            match self.f.phase {
                Phase::Mkdir => {
                    self.t
                        .op(Dir::Write, || ops.mkdir(parent, &name).map(|()| 0))
                        .map_err(at(&here))?;
                    if !last {
                        let dir = dir_at(parent, &name).map_err(at(&here))?;
                        self.level(&dir, &here, level + 1)?;
                    }
                }
                Phase::Rmdir => {
                    if !last {
                        let dir = dir_at(parent, &name).map_err(at(&here))?;
                        self.level(&dir, &here, level + 1)?;
                        if self.t.stopped() {
                            return Ok(());
                        }
                    }
                    let ops = &mut *self.ops;
                    self.t
                        .op(Dir::Write, || ops.rmdir(parent, &name).map(|()| 0))
                        .map_err(at(&here))?;
                }
                _ => {
                    let dir = dir_at(parent, &name).map_err(at(&here))?;
                    if last {
                        self.files(&dir, &here)?;
                    } else {
                        self.level(&dir, &here, level + 1)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// The phase's operation on each file of a last-level directory.
    fn files(&mut self, dir: &OwnedFd, path: &str) -> Result<(), OpError> {
        let f = self.f;
        let want = f.verify.then_some(self.data);
        for i in 0..f.files {
            if self.t.stopped() {
                return Ok(());
            }
            let here = format!("{path}/f{i}");
            let name = named(&format!("f{i}"))?;
            let (ops, data, buf) = (&mut *self.ops, self.data, &mut self.buf);
            let r = match f.phase {
                Phase::Create => self.t.op(Dir::Write, || {
                    ops.create(dir, &name, data, f.file_size, f.fsync)
                }),
                Phase::Stat => self.t.op(Dir::Read, || ops.stat(dir, &name).map(|()| 0)),
                Phase::Read => self
                    .t
                    .op(Dir::Read, || ops.read(dir, &name, buf, want, f.file_size)),
                Phase::Delete => self.t.op(Dir::Write, || ops.unlink(dir, &name).map(|()| 0)),
                Phase::Mkdir | Phase::Rmdir => Ok(()),
            };
            r.map_err(at(&here))?;
        }
        Ok(())
    }
}
