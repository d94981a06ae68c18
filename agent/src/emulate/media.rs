//! The emulated drive's medium: the data it keeps and the seeded ways it fails. Ground truth
//! for verification, fake-capacity and error scans: every fault names the offsets it hits,
//! so a test knows exactly what a correct tool must find.
//!
//! Write faults act on the `unit` (default 4 KiB, a drive's mapping unit) holding the
//! offset they name, whatever sizes the host's writes arrive in (FUSE may split them);
//! addresses are the host's (logical) byte offsets:
//! - `bit_flips`: byte offsets whose lowest bit reads flipped (bit rot);
//! - `lost_writes`: units that keep their first write and silently drop every later one
//!   (acknowledged, not stored: they read as the older version);
//! - `dropped_writes`: units whose writes all vanish (they read as zeros);
//! - `misplaced_writes`: `[from, to]`: writes to the unit of `from` land on the unit of `to`;
//! - `wrap_bytes`: a counterfeit capacity: addresses at or past it alias `address % wrap`;
//! - `bad_regions`: `[start, len]` byte ranges whose reads and writes fail with EIO;
//! - `slow_regions`: `[start, len, extra_ms]`: each I/O touching them takes that much longer.
//!
//! Without any fault and without `keep_data`, nothing is stored (reads return zeros), as
//! before: the timing tests need no memory.

use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::time::Duration;

/// The granularity of faults and of the data store's bookkeeping.
pub const PAGE: u64 = 4096;
const CHUNK: u64 = 1 << 20;

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Faults {
    /// Keep written data even without faults.
    pub keep_data: bool,
    /// Bytes each write fault covers (a multiple of 4 KiB; 0: 4 KiB).
    pub unit: u64,
    pub bit_flips: Vec<u64>,
    pub lost_writes: Vec<u64>,
    pub dropped_writes: Vec<u64>,
    pub misplaced_writes: Vec<[u64; 2]>,
    pub wrap_bytes: Option<u64>,
    pub bad_regions: Vec<[u64; 2]>,
    pub slow_regions: Vec<[u64; 3]>,
}

impl Faults {
    /// Whether data must be kept.
    pub fn stores(&self) -> bool {
        self.keep_data
            || !self.bit_flips.is_empty()
            || !self.lost_writes.is_empty()
            || !self.dropped_writes.is_empty()
            || !self.misplaced_writes.is_empty()
            || self.wrap_bytes.is_some()
    }
}

/// Why an I/O failed on the medium.
#[derive(Debug, PartialEq, Eq)]
pub struct MediaError;

fn page_of(offset: u64) -> u64 {
    offset / PAGE * PAGE
}

fn overlaps(start: u64, len: u64, region_start: u64, region_len: u64) -> bool {
    start < region_start.saturating_add(region_len) && region_start < start.saturating_add(len)
}

/// The data and the faults' state.
#[derive(Debug, Default)]
pub struct Media {
    faults: Faults,
    stores: bool,
    /// 1 MiB chunks of the physical address space, allocated on first write.
    chunks: Vec<Option<Box<[u8]>>>,
    /// `lost_writes` pages already written once.
    written_once: HashSet<u64>,
}

impl Media {
    pub fn new(faults: Faults, capacity: u64) -> Self {
        let stores = faults.stores();
        let physical = faults.wrap_bytes.unwrap_or(capacity).min(capacity);
        let chunks = if stores {
            (0..physical.div_ceil(CHUNK)).map(|_| None).collect()
        } else {
            Vec::new()
        };
        Media {
            faults,
            stores,
            chunks,
            written_once: HashSet::new(),
        }
    }

    /// Time an I/O over `start..start+len` spends in slow regions, on top of the model's.
    pub fn extra_latency(&self, start: u64, len: u64) -> Duration {
        let ms: u64 = self
            .faults
            .slow_regions
            .iter()
            .filter(|r| overlaps(start, len, r[0], r[1]))
            .map(|r| r[2])
            .sum();
        Duration::from_millis(ms)
    }

    fn check_bad(&self, start: u64, len: u64) -> Result<(), MediaError> {
        if self
            .faults
            .bad_regions
            .iter()
            .any(|r| overlaps(start, len, r[0], r[1]))
        {
            Err(MediaError)
        } else {
            Ok(())
        }
    }

    /// The physical address a logical one lands on (the wrap of a fake drive).
    fn physical(&self, offset: u64) -> u64 {
        match self.faults.wrap_bytes {
            Some(w) if w > 0 => offset % w,
            _ => offset,
        }
    }

    fn copy_in(&mut self, phys: u64, data: &[u8]) {
        let mut at = 0usize;
        while at < data.len() {
            let p = phys + at as u64;
            let (c, within) = ((p / CHUNK) as usize, (p % CHUNK) as usize);
            let n = (CHUNK as usize - within).min(data.len() - at);
            if let Some(slot) = self.chunks.get_mut(c) {
                let chunk = slot.get_or_insert_with(|| vec![0u8; CHUNK as usize].into());
                chunk[within..within + n].copy_from_slice(&data[at..at + n]);
            }
            at += n;
        }
    }

    fn copy_out(&self, phys: u64, out: &mut [u8]) {
        let mut at = 0usize;
        while at < out.len() {
            let p = phys + at as u64;
            let (c, within) = ((p / CHUNK) as usize, (p % CHUNK) as usize);
            let n = (CHUNK as usize - within).min(out.len() - at);
            match self.chunks.get(c).and_then(|x| x.as_ref()) {
                Some(chunk) => out[at..at + n].copy_from_slice(&chunk[within..within + n]),
                None => out[at..at + n].fill(0),
            }
            at += n;
        }
    }

    /// Stores a write of `data` at `offset`, page by page through the faults (acknowledged
    /// either way).
    pub fn write(&mut self, offset: u64, data: &[u8]) -> Result<(), MediaError> {
        self.check_bad(offset, data.len() as u64)?;
        if !self.stores {
            return Ok(());
        }
        let unit = self.faults.unit.max(PAGE);
        let unit_of = |o: u64| o / unit * unit;
        let mut at = 0usize;
        while at < data.len() {
            let logical = offset + at as u64;
            let page = page_of(logical);
            let n = ((page + PAGE - logical) as usize).min(data.len() - at);
            let piece = &data[at..at + n];
            at += n;
            let u = unit_of(logical);
            if self.faults.dropped_writes.iter().any(|&d| unit_of(d) == u) {
                continue;
            }
            if self.faults.lost_writes.iter().any(|&l| unit_of(l) == u)
                && !self.written_once.insert(page)
            {
                continue;
            }
            let dest = self
                .faults
                .misplaced_writes
                .iter()
                .find(|m| unit_of(m[0]) == u)
                .map_or(logical, |m| unit_of(m[1]) + (logical - u));
            // Page by page: a wrapped address is contiguous only within a page.
            let phys = self.physical(dest);
            self.copy_in(phys, piece);
        }
        Ok(())
    }

    /// Reads `len` bytes at `offset`.
    pub fn read(&self, offset: u64, len: usize) -> Result<Vec<u8>, MediaError> {
        self.check_bad(offset, len as u64)?;
        let mut out = vec![0u8; len];
        if !self.stores {
            return Ok(out);
        }
        let mut at = 0usize;
        while at < len {
            let logical = offset + at as u64;
            // Page by page: a wrapped address is contiguous only within a page.
            let n = ((page_of(logical) + PAGE - logical) as usize).min(len - at);
            let phys = self.physical(logical);
            self.copy_out(phys, &mut out[at..at + n]);
            at += n;
        }
        for &b in &self.faults.bit_flips {
            if (offset..offset + len as u64).contains(&b) {
                out[(b - offset) as usize] ^= 1;
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn media(f: Faults) -> Media {
        Media::new(f, 64 * PAGE)
    }

    #[test]
    fn every_fault_does_what_it_says() {
        let page = |v: u8| vec![v; PAGE as usize];
        let mut m = media(Faults {
            bit_flips: vec![3 * PAGE + 10],
            lost_writes: vec![4 * PAGE],
            dropped_writes: vec![5 * PAGE],
            misplaced_writes: vec![[6 * PAGE, 7 * PAGE]],
            bad_regions: vec![[8 * PAGE, PAGE]],
            slow_regions: vec![[9 * PAGE, PAGE, 50]],
            ..Faults::default()
        });
        for p in [2u64, 3, 4, 5, 6] {
            m.write(p * PAGE, &page(1)).expect("write");
        }
        m.write(4 * PAGE, &page(2))
            .expect("a lost write is acknowledged");
        assert_eq!(m.read(2 * PAGE, 4096).expect("read"), page(1));
        let flipped = m.read(3 * PAGE, 4096).expect("read");
        assert_eq!((flipped[10], flipped[11]), (0, 1));
        assert_eq!(
            m.read(4 * PAGE, 4096).expect("read"),
            page(1),
            "first write kept"
        );
        assert_eq!(m.read(5 * PAGE, 4096).expect("read"), page(0), "dropped");
        assert_eq!(m.read(6 * PAGE, 4096).expect("read"), page(0), "moved away");
        assert_eq!(m.read(7 * PAGE, 4096).expect("read"), page(1), "moved here");
        assert_eq!(m.read(8 * PAGE, 512), Err(MediaError));
        assert_eq!(m.write(8 * PAGE + 512, &page(1)), Err(MediaError));
        assert_eq!(m.extra_latency(9 * PAGE, 4096), Duration::from_millis(50));
        assert_eq!(m.extra_latency(10 * PAGE, 4096), Duration::ZERO);
    }

    #[test]
    fn a_fake_drive_wraps() {
        let mut m = Media::new(
            Faults {
                wrap_bytes: Some(16 * PAGE),
                ..Faults::default()
            },
            64 * PAGE,
        );
        m.write(PAGE, &[7u8; 4096]).expect("write");
        m.write(17 * PAGE, &[9u8; 4096]).expect("write");
        assert_eq!(m.read(PAGE, 4096).expect("read"), vec![9u8; 4096]);
        assert_eq!(m.read(33 * PAGE, 4096).expect("read"), vec![9u8; 4096]);
    }
}
