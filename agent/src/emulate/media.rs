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
//! A volatile write cache (`write_cache` bytes) is the ground truth for flush checks:
//! writes are acknowledged into it and reach the medium (through the faults above) on a
//! flush, oldest first when it is full, after `destage_ms` in the cache when set, or at once
//! when written with O_DSYNC (FUA). A power
//! cut ([`Media::power_cut`]) loses what it holds and says exactly what: the writes lost,
//! and those torn (`tear_bytes`: only their first bytes reached the medium). `flush` says
//! how the drive keeps its promise: `honest` (all of the cache before the flush returns),
//! `ignored` (the flush returns at once, the cache stays: a drive that lies), `reordered`
//! (the flush returns after a random part of the cache, destaged in random order; a block
//! rewritten while cached keeps only its newest write, which inherits a flush's promise of
//! the block).
//!
//! Without any fault and without `keep_data`, nothing is stored (reads return zeros), as
//! before: the timing tests need no memory.

use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::time::{Duration, Instant};

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
    /// A volatile write cache of this many bytes (0: none).
    pub write_cache: u64,
    pub flush: FlushPolicy,
    /// At a power cut, each cached write's first `tear_bytes` reach the medium (0: none do).
    pub tear_bytes: u64,
    /// A cached write reaches the medium on its own once it has been cached this long
    /// (0: only a flush, a full cache or FUA put it there), as a drive's idle destage does.
    pub destage_ms: u64,
    /// Seeds the `reordered` drive's choices.
    pub seed: u64,
}

/// How a drive with a write cache treats a flush.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum FlushPolicy {
    #[default]
    Honest,
    Ignored,
    Reordered,
}

/// What a power cut did to the writes the cache held: ground truth for a flush check.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Cut {
    /// `[offset, len]` of each write lost whole, in the order they were acknowledged.
    pub lost: Vec<[u64; 2]>,
    /// `[offset, len]` of each write torn: its first `tear_bytes` on the medium, the rest not.
    pub torn: Vec<[u64; 2]>,
    /// Of those lost or torn, the writes a flush had returned for (a drive that lies about
    /// flush: `ignored`, `reordered`), in order.
    pub promised: Vec<[u64; 2]>,
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
            || self.write_cache > 0
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
    /// The volatile cache: acknowledged writes not yet on the medium, oldest first, each
    /// with whether a flush has returned since it came (it was promised durable) and when
    /// it came (for `destage_ms`).
    cache: std::collections::VecDeque<(u64, Vec<u8>, bool, Instant)>,
    cached_bytes: u64,
    /// Off after a cut until switched on: every I/O fails.
    off: bool,
    /// The power goes as this many more writes arrive (the last one not acknowledged).
    cut_after: Option<u64>,
    last_cut: Option<Cut>,
    rng: u64,
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
        let rng = faults.seed | 1;
        Media {
            faults,
            stores,
            chunks,
            written_once: HashSet::new(),
            cache: Default::default(),
            cached_bytes: 0,
            off: false,
            cut_after: None,
            last_cut: None,
            rng,
        }
    }

    /// Whether the drive is off (after a cut).
    pub fn is_off(&self) -> bool {
        self.off
    }

    /// What the last power cut lost.
    pub fn last_cut(&self) -> Option<&Cut> {
        self.last_cut.as_ref()
    }

    /// Arms a cut: the power goes as the `n`th write from now arrives (it fails, the ones
    /// before are acknowledged): a cut at a known point of a writer's run.
    pub fn cut_after(&mut self, n: u64) {
        self.cut_after = Some(n.max(1));
    }

    /// Acknowledges a write: into the cache when there is one (unless `fua`), destaging the
    /// oldest writes while it is over its size; else straight to the medium.
    pub fn write_acked(&mut self, offset: u64, data: &[u8], fua: bool) -> Result<(), MediaError> {
        if self.off {
            return Err(MediaError);
        }
        if let Some(left) = self.cut_after {
            if left <= 1 {
                self.power_cut();
                return Err(MediaError);
            }
            self.cut_after = Some(left - 1);
        }
        self.destage_aged();
        if self.faults.write_cache == 0 || fua {
            return self.write(offset, data);
        }
        self.check_bad(offset, data.len() as u64)?;
        // A reordering drive destages blocks in any order but keeps each block's newest
        // write: a rewrite replaces the cached one (and a flush's promise of that block).
        let mut promised = false;
        if self.faults.flush == FlushPolicy::Reordered {
            if let Some(i) = self
                .cache
                .iter()
                .position(|(o, d, _, _)| *o == offset && d.len() == data.len())
            {
                if let Some((_, d, p, _)) = self.cache.remove(i) {
                    self.cached_bytes -= d.len() as u64;
                    promised = p;
                }
            }
        }
        self.cache
            .push_back((offset, data.to_vec(), promised, Instant::now()));
        self.cached_bytes += data.len() as u64;
        while self.cached_bytes > self.faults.write_cache {
            self.destage_oldest();
        }
        Ok(())
    }

    fn destage_oldest(&mut self) {
        if let Some((o, d, _, _)) = self.cache.pop_front() {
            self.cached_bytes -= d.len() as u64;
            // The range was checked when the write was acknowledged.
            let _ = self.write(o, &d);
        }
    }

    /// Writes cached for `destage_ms` or longer reach the medium (a drive's idle destage;
    /// seen at each write, flush and cut, which is when it can matter).
    fn destage_aged(&mut self) {
        if self.faults.destage_ms == 0 {
            return;
        }
        let delay = Duration::from_millis(self.faults.destage_ms);
        let mut i = 0;
        while i < self.cache.len() {
            if self.cache[i].3.elapsed() < delay {
                i += 1;
            } else if let Some((o, d, _, _)) = self.cache.remove(i) {
                self.cached_bytes -= d.len() as u64;
                // The range was checked when the write was acknowledged.
                let _ = self.write(o, &d);
            }
        }
    }

    fn next_random(&mut self) -> u64 {
        // xorshift64: reproducible from the model's seed.
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        self.rng
    }

    /// A flush (fsync, fdatasync, FLUSH CACHE): what reaches the medium before it returns
    /// depends on the drive's `flush` policy.
    pub fn flush(&mut self) -> Result<(), MediaError> {
        if self.off {
            return Err(MediaError);
        }
        self.destage_aged();
        match self.faults.flush {
            FlushPolicy::Honest => {
                while !self.cache.is_empty() {
                    self.destage_oldest();
                }
            }
            FlushPolicy::Ignored => {}
            FlushPolicy::Reordered => {
                // A random half of the cache, in random order.
                let mut keep = std::collections::VecDeque::new();
                while let Some((o, d, _, at)) = self.cache.pop_front() {
                    if self.next_random() & 1 == 0 {
                        self.cached_bytes -= d.len() as u64;
                        let _ = self.write(o, &d);
                    } else if self.next_random() & 1 == 0 {
                        keep.push_front((o, d, true, at));
                    } else {
                        keep.push_back((o, d, true, at));
                    }
                }
                self.cache = keep;
            }
        }
        for e in &mut self.cache {
            e.2 = true;
        }
        Ok(())
    }

    /// The power goes: the cache is lost (each write's first `tear_bytes` reach the medium
    /// first when the drive tears), and every I/O fails until [`Media::power_on`].
    pub fn power_cut(&mut self) -> Cut {
        let mut cut = Cut::default();
        self.destage_aged();
        while let Some((o, d, promised, _)) = self.cache.pop_front() {
            let tear = (self.faults.tear_bytes as usize).min(d.len());
            let hit = [o, d.len() as u64];
            if tear == d.len() {
                let _ = self.write(o, &d);
                continue;
            }
            if tear > 0 {
                let _ = self.write(o, &d[..tear]);
                cut.torn.push(hit);
            } else {
                cut.lost.push(hit);
            }
            if promised {
                cut.promised.push(hit);
            }
        }
        self.cached_bytes = 0;
        self.off = true;
        self.cut_after = None;
        self.last_cut = Some(cut.clone());
        cut
    }

    /// The power comes back: the medium as the cut left it.
    pub fn power_on(&mut self) {
        self.off = false;
    }

    /// Reads through the cache: the medium, then the cached writes over it in order.
    pub fn read_acked(&self, offset: u64, len: usize) -> Result<Vec<u8>, MediaError> {
        if self.off {
            return Err(MediaError);
        }
        let mut out = self.read(offset, len)?;
        let end = offset + len as u64;
        for (o, d, _, _) in &self.cache {
            let (lo, hi) = (offset.max(*o), end.min(o + d.len() as u64));
            if lo < hi {
                out[(lo - offset) as usize..(hi - offset) as usize]
                    .copy_from_slice(&d[(lo - o) as usize..(hi - o) as usize]);
            }
        }
        Ok(out)
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

    fn cached(flush: FlushPolicy, tear_bytes: u64) -> Media {
        media(Faults {
            write_cache: 4 * PAGE,
            flush,
            tear_bytes,
            seed: 7,
            ..Faults::default()
        })
    }

    #[test]
    fn a_write_cached_past_the_destage_delay_is_on_the_medium_at_a_cut() {
        // A drive that ignores flush but destages what has sat 50 ms in its cache.
        let mut m = media(Faults {
            write_cache: 16 * PAGE,
            flush: FlushPolicy::Ignored,
            destage_ms: 50,
            ..Faults::default()
        });
        m.write_acked(0, &[1u8; 4096], false).expect("write");
        m.flush().expect("flush");
        std::thread::sleep(Duration::from_millis(80));
        m.write_acked(PAGE, &[2u8; 4096], false).expect("write");
        m.flush().expect("flush");
        let cut = m.power_cut();
        assert_eq!(
            cut.lost,
            vec![[PAGE, PAGE]],
            "only the write younger than the delay"
        );
        assert_eq!(cut.promised, vec![[PAGE, PAGE]]);
        m.power_on();
        assert_eq!(m.read_acked(0, 4096).expect("read"), vec![1u8; 4096]);
        assert_eq!(m.read_acked(PAGE, 4096).expect("read"), vec![0u8; 4096]);
    }

    #[test]
    fn an_honest_cache_loses_only_what_was_not_flushed() {
        let mut m = cached(FlushPolicy::Honest, 0);
        m.write_acked(0, &[1u8; 4096], false).expect("write");
        m.write_acked(PAGE, &[2u8; 4096], false).expect("write");
        assert_eq!(
            m.read_acked(PAGE, 4096).expect("read"),
            vec![2u8; 4096],
            "read back from the cache"
        );
        m.flush().expect("flush");
        m.write_acked(2 * PAGE, &[3u8; 4096], false).expect("write");
        m.write_acked(3 * PAGE, &[4u8; 4096], true)
            .expect("a FUA write");
        let cut = m.power_cut();
        assert_eq!(cut.lost, vec![[2 * PAGE, PAGE]]);
        assert!(cut.torn.is_empty());
        assert_eq!(m.read_acked(0, 4096), Err(MediaError), "off after the cut");
        m.power_on();
        assert_eq!(m.read_acked(0, 4096).expect("read"), vec![1u8; 4096]);
        assert_eq!(m.read_acked(PAGE, 4096).expect("read"), vec![2u8; 4096]);
        assert_eq!(m.read_acked(2 * PAGE, 4096).expect("read"), vec![0u8; 4096]);
        assert_eq!(m.read_acked(3 * PAGE, 4096).expect("read"), vec![4u8; 4096]);
    }

    #[test]
    fn an_armed_cut_fails_the_write_it_comes_at() {
        let mut m = cached(FlushPolicy::Honest, 0);
        m.cut_after(3);
        m.write_acked(0, &[1u8; 4096], false).expect("write 1");
        m.write_acked(PAGE, &[2u8; 4096], false).expect("write 2");
        assert_eq!(
            m.write_acked(2 * PAGE, &[3u8; 4096], false),
            Err(MediaError)
        );
        assert!(m.is_off());
        assert_eq!(m.last_cut().map(|c| c.lost.len()), Some(2));
    }

    #[test]
    fn a_full_cache_destages_its_oldest_writes() {
        let mut m = cached(FlushPolicy::Ignored, 0);
        for p in 0..6u64 {
            m.write_acked(p * PAGE, &[p as u8 + 1; 4096], false)
                .expect("write");
        }
        let cut = m.power_cut();
        // Four pages of cache: the last four were still in it.
        assert_eq!(
            cut.lost.iter().map(|l| l[0] / PAGE).collect::<Vec<_>>(),
            vec![2, 3, 4, 5]
        );
        m.power_on();
        assert_eq!(m.read_acked(PAGE, 4096).expect("read"), vec![2u8; 4096]);
    }

    #[test]
    fn a_lying_flush_loses_what_it_promised() {
        let mut m = cached(FlushPolicy::Ignored, 0);
        m.write_acked(0, &[1u8; 4096], false).expect("write");
        m.flush().expect("the flush returns");
        m.write_acked(PAGE, &[1u8; 4096], false).expect("write");
        let cut = m.power_cut();
        assert_eq!(cut.lost, vec![[0, PAGE], [PAGE, PAGE]]);
        assert_eq!(
            cut.promised,
            vec![[0, PAGE]],
            "the flush had returned for the first"
        );
        m.power_on();
        assert_eq!(m.read_acked(0, 4096).expect("read"), vec![0u8; 4096]);
        // Reordered: part of the cache reaches the medium at a flush, part is lost.
        let mut r = cached(FlushPolicy::Reordered, 0);
        for p in 0..4u64 {
            r.write_acked(p * PAGE, &[9u8; 4096], false).expect("write");
        }
        r.flush().expect("flush");
        let cut = r.power_cut();
        r.power_on();
        let kept = (0..4u64)
            .filter(|p| r.read_acked(p * PAGE, 4096).expect("read") == vec![9u8; 4096])
            .count();
        assert_eq!(kept + cut.lost.len(), 4);
        assert_eq!(cut.promised, cut.lost);
    }

    #[test]
    fn a_tearing_drive_keeps_the_first_sectors_of_a_write() {
        let mut m = cached(FlushPolicy::Honest, 512);
        m.write_acked(0, &[1u8; 4096], false).expect("write");
        m.flush().expect("flush");
        m.write_acked(0, &[2u8; 4096], false).expect("a rewrite");
        let cut = m.power_cut();
        assert_eq!(cut.torn, vec![[0, PAGE]]);
        m.power_on();
        let back = m.read_acked(0, 4096).expect("read");
        assert!(back[..512].iter().all(|&b| b == 2) && back[512..].iter().all(|&b| b == 1));
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
