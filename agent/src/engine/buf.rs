//! Owned, 4096-aligned I/O buffers, one per (buffer set, queue slot), in one allocation so
//! they can be registered with io_uring as fixed buffers.

use std::alloc::{self, Layout};
use std::io;
use std::ptr::NonNull;

pub const ALIGN: usize = 4096;

pub struct BufferPool {
    ptr: NonNull<u8>,
    layout: Layout,
    /// Bytes per buffer, rounded up to the alignment (stride between buffers).
    stride: usize,
    len: usize,
    count: usize,
}

// SAFETY: the pool owns its allocation exclusively; it is moved between threads only as a
// whole, and the kernel accesses a buffer only while its I/O is in flight (see engine::job).
unsafe impl Send for BufferPool {}

impl std::fmt::Debug for BufferPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "BufferPool({} × {} B)", self.count, self.len)
    }
}

impl BufferPool {
    /// `count` zeroed buffers of `len` bytes each.
    pub fn new(len: usize, count: usize) -> io::Result<Self> {
        let stride = len.div_ceil(ALIGN) * ALIGN;
        let total = stride
            .checked_mul(count.max(1))
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "buffer pool too large"))?;
        let layout = Layout::from_size_align(total, ALIGN)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        // SAFETY: the layout has a non-zero size (stride ≥ ALIGN, count ≥ 1).
        let raw = unsafe { alloc::alloc_zeroed(layout) };
        let ptr = NonNull::new(raw).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::OutOfMemory,
                format!("cannot allocate {total} bytes of I/O buffers"),
            )
        })?;
        Ok(BufferPool {
            ptr,
            layout,
            stride,
            len,
            count,
        })
    }

    pub fn count(&self) -> usize {
        self.count
    }

    pub fn buf_len(&self) -> usize {
        self.len
    }

    /// Raw pointer to buffer `i`, for handing to the kernel.
    #[inline]
    pub fn ptr(&self, i: usize) -> *mut u8 {
        assert!(i < self.count);
        // SAFETY: i < count, so the offset stays inside the allocation.
        unsafe { self.ptr.as_ptr().add(i * self.stride) }
    }

    #[inline]
    pub fn get_mut(&mut self, i: usize) -> &mut [u8] {
        // SAFETY: ptr(i) is valid for len bytes and &mut self guarantees no other Rust
        // reference; callers never touch a buffer whose I/O is in flight.
        unsafe { std::slice::from_raw_parts_mut(self.ptr(i), self.len) }
    }

    /// One iovec per buffer, for `register_buffers`.
    pub fn iovecs(&self) -> Vec<libc::iovec> {
        (0..self.count)
            .map(|i| libc::iovec {
                iov_base: self.ptr(i).cast(),
                iov_len: self.len,
            })
            .collect()
    }
}

impl Drop for BufferPool {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout and not freed before.
        unsafe { alloc::dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_aligned_and_disjoint() {
        let mut p = BufferPool::new(5000, 3).expect("pool");
        for i in 0..3 {
            assert_eq!(p.ptr(i) as usize % ALIGN, 0);
            p.get_mut(i).fill(i as u8 + 1);
        }
        for i in 0..3 {
            assert!(p.get_mut(i).iter().all(|&b| b == i as u8 + 1));
        }
    }
}
