//! The sync backend: pread/pwrite, one I/O at a time. Used on request (`--backend sync`) or
//! when io_uring cannot be set up (the result records why).

use super::buf::BufferPool;
use super::{Dir, IoBackend};
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

/// The one I/O waiting for `submit_and_wait`.
enum Queued {
    Io(u32, u32, Dir, u64, u32),
    Flush(u32, bool),
}

pub struct SyncBackend {
    file: File,
    bufs: BufferPool,
    queued: Option<Queued>,
    ready: Option<(u32, i32)>,
}

impl SyncBackend {
    pub fn new(file: File, bufs: BufferPool) -> Self {
        SyncBackend {
            file,
            bufs,
            queued: None,
            ready: None,
        }
    }
}

impl IoBackend for SyncBackend {
    fn name(&self) -> &'static str {
        "sync"
    }

    fn max_depth(&self) -> u32 {
        1
    }

    fn buffers(&mut self) -> &mut BufferPool {
        &mut self.bufs
    }

    fn prep(&mut self, slot: u32, buf: u32, dir: Dir, offset: u64, len: u32) -> io::Result<()> {
        if self.queued.is_some() {
            return Err(io::Error::other("sync backend: more than one I/O queued"));
        }
        self.queued = Some(Queued::Io(slot, buf, dir, offset, len));
        Ok(())
    }

    fn prep_flush(&mut self, slot: u32, data_only: bool) -> io::Result<()> {
        if self.queued.is_some() {
            return Err(io::Error::other("sync backend: more than one I/O queued"));
        }
        self.queued = Some(Queued::Flush(slot, data_only));
        Ok(())
    }

    fn submit_and_wait(&mut self, _want: u32, _timeout_ns: u64) -> io::Result<()> {
        let (slot, r) = match self.queued.take() {
            None => return Ok(()),
            Some(Queued::Flush(slot, data_only)) => {
                let r = if data_only {
                    self.file.sync_data()
                } else {
                    self.file.sync_all()
                };
                (slot, r.map(|()| 0))
            }
            Some(Queued::Io(slot, buf, dir, offset, len)) => {
                let data = &mut self.bufs.get_mut(buf as usize)[..len as usize];
                let r = match dir {
                    Dir::Read => self.file.read_at(data, offset),
                    Dir::Write => self.file.write_at(data, offset),
                    Dir::Trim => Err(super::trim_not_queued()),
                };
                (slot, r)
            }
        };
        let res = match r {
            Ok(n) => n as i32,
            Err(e) => -e.raw_os_error().unwrap_or(libc::EIO),
        };
        self.ready = Some((slot, res));
        Ok(())
    }

    fn reap<F: FnMut(u32, i32)>(&mut self, _max: u32, mut f: F) {
        if let Some((slot, res)) = self.ready.take() {
            f(slot, res);
        }
    }

    fn file(&self) -> Option<&File> {
        Some(&self.file)
    }
}
