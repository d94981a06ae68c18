//! Owned, 4096-aligned I/O buffers, one per (buffer set, queue slot), in one anonymous
//! mapping so they can be registered with io_uring as fixed buffers.
//!
//! **One strategy for every pool**, whatever the block size, depth or job count: the pool is
//! rounded up to whole 2 MiB huge pages, aligned to 2 MiB, asks for transparent huge pages
//! (`MADV_HUGEPAGE`) and is faulted in at once (`MADV_POPULATE_WRITE`), so what backs it is
//! known before the first I/O. Where the kernel has THP switched off every pool is in 4 KiB
//! pages alike. A sweep's steps then differ only in what the sweep varies: before, only
//! pools of 2 MiB or more were huge-page backed, and a 256 KiB QD4 step ran from 4 KiB pages
//! (split into more segments than the device takes, ~2× slower on virtio) while the 512 KiB
//! step did not, which drew the tool's seam into the curve.
//!
//! Why huge pages at all: a 1 MiB buffer in 4 KiB pages is 256 segments, more than many
//! block devices take in one request (a loop device takes 128, virtio 254), so the kernel
//! must split the bio, and a split bio cannot be issued without blocking: io_uring hands
//! every such I/O to a kernel worker thread. Physically contiguous buffers fit in a few
//! segments and are issued inline. Whether that held is measured per run (`iopath`).

use std::io;
use std::ptr::NonNull;
use std::sync::OnceLock;

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
    /// Bytes mapped for the buffers (rounded up to whole huge pages when THP is on).
    bytes: usize,
    /// Bytes of the pool the kernel backs with huge pages, measured after faulting it in.
    huge_bytes: u64,
}

// SAFETY: the pool owns its mapping exclusively; it is moved between threads only as a
// whole, and the kernel accesses a buffer only while its I/O is in flight (see engine::job).
unsafe impl Send for BufferPool {}

impl std::fmt::Debug for BufferPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "BufferPool({} × {} B)", self.count, self.len)
    }
}

/// Whether the kernel may give transparent huge pages to a mapping that asks (`always` or
/// `madvise` in sysfs). Read once: every pool of the process follows the same answer.
pub fn thp_available() -> bool {
    static THP: OnceLock<bool> = OnceLock::new();
    *THP.get_or_init(|| {
        std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
            .map(|s| thp_mode_allows(&s))
            .unwrap_or(false)
    })
}

/// `[always] madvise never` → true unless the selected mode is `never`.
fn thp_mode_allows(sysfs: &str) -> bool {
    sysfs
        .split_whitespace()
        .find(|w| w.starts_with('['))
        .is_some_and(|w| w != "[never]")
}

/// Bytes a pool of `count` buffers of `len` bytes faults in: each buffer on its own 4 KiB
/// pages, the whole rounded up to huge pages when they are used. `None` when it overflows.
fn resident(len: usize, count: usize, huge: bool) -> Option<usize> {
    let total = len
        .div_ceil(ALIGN)
        .checked_mul(ALIGN)?
        .checked_mul(count.max(1))?;
    if huge {
        total.checked_next_multiple_of(HUGE)
    } else {
        Some(total)
    }
}

impl BufferPool {
    /// Bytes [`BufferPool::new`] would fault in for these buffers (the memory budget's
    /// measure), saturating.
    pub fn footprint(len: u64, count: u64, huge: bool) -> u64 {
        let (Ok(len), Ok(count)) = (usize::try_from(len), usize::try_from(count)) else {
            return u64::MAX;
        };
        resident(len, count, huge && thp_available()).map_or(u64::MAX, |b| b as u64)
    }

    /// `count` zeroed buffers of `len` bytes each, faulted in; in huge pages when `huge`
    /// and the kernel has them (else 4 KiB pages, as fio's default `iomem=malloc`).
    pub fn new(len: usize, count: usize, huge: bool) -> io::Result<Self> {
        let stride = len.div_ceil(ALIGN) * ALIGN;
        let too_large = || io::Error::new(io::ErrorKind::InvalidInput, "buffer pool too large");
        let huge = huge && thp_available();
        let bytes = resident(len, count, huge).ok_or_else(too_large)?;
        // Over-map by one huge page so the buffers can start on a huge-page boundary.
        let map_len = if huge {
            bytes.checked_add(HUGE).ok_or_else(too_large)?
        } else {
            bytes
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
                format!("cannot map {bytes} bytes of I/O buffers: {e}"),
            ));
        }
        let map =
            NonNull::new(raw.cast::<u8>()).ok_or_else(|| io::Error::other("mmap gave null"))?;
        let skip = if huge {
            (raw as usize).next_multiple_of(HUGE) - raw as usize
        } else {
            0
        };
        // SAFETY: skip < HUGE and the mapping is bytes + HUGE bytes long.
        let ptr = unsafe { NonNull::new_unchecked(map.as_ptr().add(skip)) };
        if huge {
            // Only a hint: the kernel may still hand out 4 KiB pages (fragmented memory);
            // what it did is measured below and reported.
            // SAFETY: the range lies inside the mapping made above.
            unsafe { libc::madvise(ptr.as_ptr().cast(), bytes, libc::MADV_HUGEPAGE) };
        }
        let mut pool = BufferPool {
            map,
            map_len,
            ptr,
            stride,
            len,
            count,
            bytes,
            huge_bytes: 0,
        };
        pool.populate();
        pool.huge_bytes = if huge {
            let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap_or_default();
            anon_huge_bytes(&smaps, pool.ptr.as_ptr() as usize)
        } else {
            0
        };
        Ok(pool)
    }

    /// Faults every page of the pool in now, so that its backing is decided (and measurable)
    /// before the run, not by the first I/Os.
    fn populate(&mut self) {
        // SAFETY: the range lies inside the mapping.
        let rc = unsafe {
            libc::madvise(
                self.ptr.as_ptr().cast(),
                self.bytes,
                libc::MADV_POPULATE_WRITE,
            )
        };
        if rc != 0 {
            // Kernels before 5.14: touch one byte per page.
            for off in (0..self.bytes).step_by(ALIGN) {
                // SAFETY: off < bytes, inside the mapping; a volatile write of the zero the
                // page already holds.
                unsafe { self.ptr.as_ptr().add(off).write_volatile(0) };
            }
        }
    }

    /// Bytes mapped for the buffers (whole huge pages when THP is available).
    pub fn mapped_bytes(&self) -> u64 {
        self.bytes as u64
    }

    /// Bytes of the pool the kernel backs with transparent huge pages (from
    /// /proc/self/smaps right after faulting it in; 0 when it cannot be read).
    pub fn huge_bytes(&self) -> u64 {
        self.huge_bytes
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
        let mut p = BufferPool::new(5000, 3, true).expect("pool");
        for i in 0..3 {
            assert_eq!(p.ptr(i) as usize % ALIGN, 0);
            p.get_mut(i).fill(i as u8 + 1);
        }
        for i in 0..3 {
            assert!(p.get_mut(i).iter().all(|&b| b == i as u8 + 1));
        }
        if thp_available() {
            assert_eq!(
                p.mapped_bytes(),
                HUGE as u64,
                "a 12 KiB pool is one huge page too"
            );
            assert_eq!(p.ptr(0) as usize % HUGE, 0);
        }
    }

    #[test]
    fn thp_mode_is_read_from_the_selected_word() {
        assert!(thp_mode_allows("always [madvise] never\n"));
        assert!(thp_mode_allows("[always] madvise never"));
        assert!(!thp_mode_allows("always madvise [never]"));
        assert!(!thp_mode_allows(""));
    }

    #[test]
    fn small_and_large_pools_are_backed_alike() {
        // A seam a sweep would draw: a 4 KiB QD1 pool and a 1 MiB QD8 pool must get the same
        // backing (both huge where THP gives them).
        let small = BufferPool::new(4096, 1, true).expect("pool");
        let large = BufferPool::new(1 << 20, 8, true).expect("pool");
        assert_eq!(small.huge_bytes() > 0, large.huge_bytes() > 0);
        if thp_available() && large.huge_bytes() > 0 {
            assert_eq!(small.huge_bytes(), small.mapped_bytes());
        }
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
        let mut p = BufferPool::new(1 << 20, 8, true).expect("pool");
        assert_eq!(p.ptr(0) as usize % HUGE, 0);
        assert_eq!(p.ptr(7) as usize - p.ptr(0) as usize, 7 << 20);
        assert!(p.get_mut(7).iter().all(|&b| b == 0));
        p.get_mut(7).fill(0xA5);
        assert!(p.get_mut(7).iter().all(|&b| b == 0xA5));
    }
}
