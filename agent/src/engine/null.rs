//! The null backend: every I/O completes at once with its full length, nothing is opened.
//! Measures what the engine itself costs per I/O, like fio's `ioengine=null`.

use super::buf::BufferPool;
use super::{Dir, IoBackend};
use std::io;

pub struct NullBackend {
    bufs: BufferPool,
    queued: Vec<(u32, i32)>,
    ready: Vec<(u32, i32)>,
}

impl NullBackend {
    pub fn new(bufs: BufferPool, depth: u32) -> Self {
        NullBackend {
            bufs,
            queued: Vec::with_capacity(depth as usize),
            ready: Vec::with_capacity(depth as usize),
        }
    }
}

impl IoBackend for NullBackend {
    fn name(&self) -> &'static str {
        "null"
    }

    fn max_depth(&self) -> u32 {
        u32::MAX
    }

    fn buffers(&mut self) -> &mut BufferPool {
        &mut self.bufs
    }

    fn prep(&mut self, slot: u32, _buf: u32, _dir: Dir, _offset: u64, len: u32) -> io::Result<()> {
        self.queued.push((slot, len as i32));
        Ok(())
    }

    fn prep_flush(&mut self, slot: u32, _data_only: bool) -> io::Result<()> {
        self.queued.push((slot, 0));
        Ok(())
    }

    fn submit_and_wait(&mut self, _want: u32, _timeout_ns: u64) -> io::Result<()> {
        self.ready.append(&mut self.queued);
        Ok(())
    }

    fn reap<F: FnMut(u32, i32)>(&mut self, max: u32, mut f: F) {
        let n = match max {
            0 => self.ready.len(),
            m => self.ready.len().min(m as usize),
        };
        for (slot, res) in self.ready.drain(..n) {
            f(slot, res);
        }
    }

    fn fsync(&mut self) -> io::Result<()> {
        Ok(())
    }

    fn trim(&mut self, _offset: u64, _len: u64) -> io::Result<bool> {
        Ok(true)
    }
}
