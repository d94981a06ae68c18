//! Owned, 4096-aligned I/O buffers, one per (buffer set, queue slot), in one anonymous
//! mapping so they can be registered with io_uring as fixed buffers.
//!
//! A pool of 2 MiB or more is aligned to 2 MiB and asks for transparent huge pages
//! (`MADV_HUGEPAGE`): a 1 MiB buffer in 4 KiB pages is 256 segments, more than many block
//! devices take in one request (a loop device takes 128), so the kernel must split the bio,
//! and a split bio cannot be issued without blocking: io_uring hands every such I/O to a
//! kernel worker thread, which costs a context switch per I/O. Physically contiguous
//! buffers fit in a few segments and are issued inline.

use std::io;
use std::ptr::NonNull;

pub const ALIGN: usize = 4096;
/// Size (and alignment) of a transparent huge page on x86-64 and arm64 with 4 KiB pages.
const HUGE: usize = 2 << 20;

pub struct BufferPool {
    /// Start of the mapping (`map_len` bytes); the buffers start at `ptr`.
    map: NonNull<u8>,
    map_len: usize,
    ptr: NonNull<u8>,
    /// Bytes per buffer, rounded up to the alignment (stride between buffers).
    stride: usize,
    len: usize,
    count: usize,
    huge: bool,
}

// SAFETY: the pool owns its mapping exclusively; it is moved between threads only as a
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
        let too_large = || io::Error::new(io::ErrorKind::InvalidInput, "buffer pool too large");
        let total = stride.checked_mul(count.max(1)).ok_or_else(too_large)?;
        let huge = total >= HUGE;
        // Over-map by one huge page so the buffers can start on a huge-page boundary.
        let map_len = if huge {
            total.checked_add(HUGE).ok_or_else(too_large)?
        } else {
            total
        };
        // SAFETY: an anonymous private mapping of a non-zero length, no fixed address.
        let raw = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if raw == libc::MAP_FAILED {
            let e = io::Error::last_os_error();
            return Err(io::Error::new(
                e.kind(),
                format!("cannot map {total} bytes of I/O buffers: {e}"),
            ));
        }
        let map =
            NonNull::new(raw.cast::<u8>()).ok_or_else(|| io::Error::other("mmap gave null"))?;
        let skip = if huge {
            (raw as usize).next_multiple_of(HUGE) - raw as usize
        } else {
            0
        };
        // SAFETY: skip < HUGE and the mapping is total + HUGE bytes long.
        let ptr = unsafe { NonNull::new_unchecked(map.as_ptr().add(skip)) };
        // Only a hint: without THP the buffers are ordinary pages and everything still works.
        // SAFETY: the range lies inside the mapping made above.
        let huge =
            huge && unsafe { libc::madvise(ptr.as_ptr().cast(), total, libc::MADV_HUGEPAGE) } == 0;
        Ok(BufferPool {
            map,
            map_len,
            ptr,
            stride,
            len,
            count,
            huge,
        })
    }

    /// Whether the pool asked the kernel for huge pages.
    pub fn huge_pages(&self) -> bool {
        self.huge
    }

    /// Bytes of the pool the kernel actually backs with transparent huge pages (from
    /// /proc/self/smaps; 0 when it cannot be read). The hint is accepted even where THP is
    /// off, and the pages only exist once touched (registration pins them), so this is what
    /// a report may claim.
    pub fn huge_bytes(&self) -> u64 {
        if !self.huge {
            return 0;
        }
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap_or_default();
        anon_huge_bytes(&smaps, self.ptr.as_ptr() as usize)
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
        // SAFETY: mapped in `new` with this length and not unmapped before.
        unsafe { libc::munmap(self.map.as_ptr().cast(), self.map_len) };
    }
}

/// `AnonHugePages` of the mapping containing `addr`, from smaps text.
fn anon_huge_bytes(smaps: &str, addr: usize) -> u64 {
    let mut inside = false;
    for line in smaps.lines() {
        let first = line.split_whitespace().next().unwrap_or("");
        if let Some((lo, hi)) = first.split_once('-') {
            if let (Ok(lo), Ok(hi)) = (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16))
            {
                inside = (lo..hi).contains(&addr);
                continue;
            }
        }
        if inside {
            if let Some(kb) = line.strip_prefix("AnonHugePages:") {
                return kb
                    .trim()
                    .trim_end_matches("kB")
                    .trim()
                    .parse::<u64>()
                    .unwrap_or(0)
                    * 1024;
            }
        }
    }
    0
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
        assert!(!p.huge_pages(), "a 12 KiB pool stays in ordinary pages");
    }

    #[test]
    fn huge_page_bytes_come_from_the_mapping_holding_the_buffers() {
        let smaps = "7f0000000000-7f0000400000 rw-p 00000000 00:00 0\nSize: 4096 kB\nAnonHugePages:  2048 kB\n\
                     7f0000400000-7f0000600000 rw-p 00000000 00:00 0\nAnonHugePages:  0 kB\n";
        assert_eq!(anon_huge_bytes(smaps, 0x7f00_0020_0000), 2 << 20);
        assert_eq!(anon_huge_bytes(smaps, 0x7f00_0040_0000), 0);
        assert_eq!(anon_huge_bytes(smaps, 0x1000), 0);
    }

    #[test]
    fn large_pools_start_on_a_huge_page_and_are_zeroed() {
        let mut p = BufferPool::new(1 << 20, 8).expect("pool");
        assert_eq!(p.ptr(0) as usize % HUGE, 0);
        assert_eq!(p.ptr(7) as usize - p.ptr(0) as usize, 7 << 20);
        assert!(p.get_mut(7).iter().all(|&b| b == 0));
        p.get_mut(7).fill(0xA5);
        assert!(p.get_mut(7).iter().all(|&b| b == 0xA5));
    }
}
