//! Block headers for verification, and the check of a block read back.
//!
//! A verified block starts with a 48-byte header, little-endian:
//!
//! | bytes | field |
//! |---|---|
//! | 0..8 | magic `dsVERIFY` |
//! | 8..16 | byte offset the block was written for |
//! | 16..24 | run nonce (random per job and run) |
//! | 24..32 | sequence: the job's write index |
//! | 32..36 | generation: the pass over the job's span (1 = first) |
//! | 36..40 | block size |
//! | 40..44 | reserved (0) |
//! | 44..48 | CRC32C of bytes 0..44 and 48..bs |
//!
//! The rest of the block keeps the run's data pattern (random stays incompressible). The
//! expected state of every block follows from the job's write count alone (see
//! [`Expect::for_index`]), so no per-block map is kept: the read-back replays the offsets of
//! the job's last pass with the same generator.

use crate::workload::offsets::OffsetGen;
use shared::analysis::verify::{BadBlock, BadKind, Verify, MAX_LISTED};

pub const MAGIC: [u8; 8] = *b"dsVERIFY";
pub const HEADER: usize = shared::spec::VERIFY_HEADER_BYTES as usize;
const CRC_AT: usize = 44;
/// A magic this close (in differing bits) still counts as a header (a flipped bit in it is
/// corruption, not an unwritten block); random data lands this close with p < 2^-40.
const MAGIC_SLACK_BITS: u32 = 8;

fn put(buf: &mut [u8], at: usize, v: &[u8]) {
    buf[at..at + v.len()].copy_from_slice(v);
}

fn u64_at(buf: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&buf[at..at + 8]);
    u64::from_le_bytes(b)
}

fn u32_at(buf: &[u8], at: usize) -> u32 {
    let mut b = [0u8; 4];
    b.copy_from_slice(&buf[at..at + 4]);
    u32::from_le_bytes(b)
}

fn crc(buf: &[u8]) -> u32 {
    crc32c::crc32c_append(crc32c::crc32c(&buf[..CRC_AT]), &buf[HEADER..])
}

/// Writes the header and checksum into `buf` (the block about to be written).
#[inline]
pub fn stamp(buf: &mut [u8], offset: u64, nonce: u64, seq: u64, generation: u32) {
    put(buf, 0, &MAGIC);
    put(buf, 8, &offset.to_le_bytes());
    put(buf, 16, &nonce.to_le_bytes());
    put(buf, 24, &seq.to_le_bytes());
    put(buf, 32, &generation.to_le_bytes());
    put(buf, 36, &(buf.len() as u32).to_le_bytes());
    put(buf, 40, &[0; 4]);
    let c = crc(buf);
    put(buf, CRC_AT, &c.to_le_bytes());
}

/// What a block read back should hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Expect {
    /// The pass that last wrote it (1-based).
    pub generation: u32,
    /// Its write index, when known (blocks of the current pass).
    pub seq: Option<u64>,
}

impl Expect {
    /// The state of the block at position `index` of the job's offset order, after `written`
    /// writes over a span of `blocks` blocks: positions already reached in the current pass
    /// hold that pass's write; the others the previous pass's (`None`: never written).
    pub fn for_index(index: u64, written: u64, blocks: u64) -> Option<Expect> {
        let pass = index / blocks;
        if index < written {
            Some(Expect {
                generation: (pass + 1) as u32,
                seq: Some(index),
            })
        } else if pass > 0 {
            Some(Expect {
                generation: pass as u32,
                seq: None,
            })
        } else {
            None
        }
    }
}

/// Classifies one block read at `offset`; `None` when it is what was written.
pub fn check(buf: &[u8], offset: u64, nonce: u64, expect: Expect) -> Option<BadBlock> {
    let bad = |kind| BadBlock {
        offset,
        kind,
        written_for: None,
        found_generation: None,
        expected_generation: None,
        step: None,
    };
    let magic_bits: u32 = buf[..8]
        .iter()
        .zip(MAGIC)
        .map(|(a, b)| (a ^ b).count_ones())
        .sum();
    if magic_bits > MAGIC_SLACK_BITS {
        return Some(bad(BadKind::Unwritten));
    }
    if u32_at(buf, CRC_AT) != crc(buf) || u32_at(buf, 36) as usize != buf.len() {
        return Some(bad(BadKind::Corrupt));
    }
    let written_for = u64_at(buf, 8);
    if written_for != offset {
        return Some(BadBlock {
            written_for: Some(written_for),
            ..bad(BadKind::Misplaced)
        });
    }
    let generation = u32_at(buf, 32);
    let ours = u64_at(buf, 16) == nonce;
    let seq_ok = expect.seq.is_none_or(|s| s == u64_at(buf, 24));
    if !ours || generation != expect.generation || !seq_ok {
        return Some(BadBlock {
            found_generation: Some(if ours { generation } else { 0 }),
            expected_generation: Some(expect.generation),
            ..bad(BadKind::Stale)
        });
    }
    None
}

/// One job's read-back, as it goes.
#[derive(Debug, Default)]
pub struct Tally {
    pub v: Verify,
}

impl Tally {
    #[inline]
    pub fn record(&mut self, offset: u64, bs: u64, verdict: Option<BadBlock>) {
        self.v.extent.saw(offset, verdict.as_ref());
        self.v.blocks_checked += 1;
        self.v.bytes_checked += bs;
        match verdict {
            None => self.v.good_blocks += 1,
            Some(b) => {
                self.v.bad.bump(b.kind);
                if self.v.first_bad.len() < MAX_LISTED {
                    self.v.first_bad.push(b);
                }
            }
        }
    }
}

/// A read-back under way: the offsets of positions `next..end` of the job's order, replayed
/// by a copy of the generator taken at position `next`.
#[derive(Debug)]
struct Check {
    gen: OffsetGen,
    next: u64,
    end: u64,
    /// Interleaved (`verify_every`): its reads count in the samples.
    recorded: bool,
}

/// One job's verification state: stamps writes, keeps the generator copies the read-backs
/// replay, and tallies what they find. The expected content of a block follows from its
/// position in the order and the job's write count ([`Expect::for_index`]).
#[derive(Debug)]
pub struct Verifier {
    nonce: u64,
    /// Blocks in the job's span (one pass).
    blocks: u64,
    /// Interleaved read-back every this many writes (at most `blocks`).
    every: Option<u64>,
    /// The generator at the start of the current pass, and of the current batch.
    pass_start: Option<OffsetGen>,
    batch_start: Option<OffsetGen>,
    /// Writes up to here were read back by an interleaved check.
    checked_upto: u64,
    check: Option<Check>,
    started: Option<std::time::Instant>,
    pub tally: Tally,
}

impl Verifier {
    pub fn new(blocks: u64, every: Option<u64>) -> Self {
        let mut n = [0u8; 8];
        // A nonce that cannot be had is a constant: blocks of earlier runs then pass as ours
        // only if they also match offset, generation and sequence.
        let _ = getrandom::fill(&mut n);
        Verifier {
            nonce: u64::from_le_bytes(n),
            blocks: blocks.max(1),
            every: every.map(|e| e.clamp(1, blocks.max(1))),
            pass_start: None,
            batch_start: None,
            checked_upto: 0,
            check: None,
            started: None,
            tally: Tally::default(),
        }
    }

    /// Before write number `index` takes its offset from `gen`: keeps the copies the
    /// read-backs will replay.
    #[inline]
    pub fn before_write(&mut self, index: u64, gen: &OffsetGen) {
        if index.is_multiple_of(self.blocks) {
            self.pass_start = Some(gen.clone());
        }
        if self.every.is_some() && index == self.checked_upto {
            self.batch_start = Some(gen.clone());
        }
    }

    /// Stamps write number `index` at `offset` into its buffer.
    #[inline]
    pub fn stamp(&self, buf: &mut [u8], offset: u64, index: u64) {
        stamp(
            buf,
            offset,
            self.nonce,
            index,
            (index / self.blocks + 1) as u32,
        );
    }

    /// Whether `written` writes call for an interleaved read-back before the next write: N
    /// since the last one, or the end of a pass (a batch never spans two passes, whose
    /// orders differ: the second could overwrite blocks of the first before they are read).
    #[inline]
    pub fn batch_due(&self, written: u64) -> bool {
        self.every.is_some_and(|e| {
            self.check.is_none()
                && written > self.checked_upto
                && (written >= self.checked_upto + e || written.is_multiple_of(self.blocks))
        })
    }

    /// Starts the interleaved read-back of the writes since the last one (`written` writes
    /// so far, all completed).
    pub fn start_batch(&mut self, written: u64) {
        if let Some(gen) = self.batch_start.take() {
            self.check = Some(Check {
                gen,
                next: self.checked_upto,
                end: written,
                recorded: true,
            });
            self.started = Some(std::time::Instant::now());
        }
        self.checked_upto = written;
    }

    /// Starts the final read-back after `written` writes: the job's last pass, all of it
    /// once the span was covered.
    pub fn start_final(&mut self, written: u64) {
        if written == 0 {
            return;
        }
        let start = (written - 1) / self.blocks * self.blocks;
        let end = if written >= self.blocks {
            start + self.blocks
        } else {
            written
        };
        if let Some(gen) = self.pass_start.take() {
            self.check = Some(Check {
                gen,
                next: start,
                end,
                recorded: false,
            });
            self.started = Some(std::time::Instant::now());
        }
    }

    /// A read-back is under way, and whether its reads count in the samples.
    #[inline]
    pub fn checking(&self) -> Option<bool> {
        self.check.as_ref().map(|c| c.recorded)
    }

    /// The next block to read back: its offset and position; `None` when all are issued.
    #[inline]
    pub fn next_read(&mut self) -> Option<(u64, u64)> {
        let c = self.check.as_mut()?;
        if c.next >= c.end {
            return None;
        }
        let index = c.next;
        c.next += 1;
        Some((c.gen.next_offset(), index))
    }

    /// Checks a block read back (position `index` of the order, `written` writes so far).
    #[inline]
    pub fn checked(&mut self, buf: &[u8], offset: u64, index: u64, written: u64) {
        let verdict = Expect::for_index(index, written, self.blocks)
            .and_then(|e| check(buf, offset, self.nonce, e));
        self.tally.record(offset, buf.len() as u64, verdict);
        if self.check.as_ref().is_some_and(|c| c.recorded) {
            self.tally.v.interleaved_blocks += 1;
        }
    }

    /// A block whose read-back failed (an error scan goes on past it).
    pub fn unreadable(&mut self, offset: u64, bs: u64) {
        let b = BadBlock {
            offset,
            kind: BadKind::Unreadable,
            written_for: None,
            found_generation: None,
            expected_generation: None,
            step: None,
        };
        self.tally.record(offset, bs, Some(b));
        if self.check.as_ref().is_some_and(|c| c.recorded) {
            self.tally.v.interleaved_blocks += 1;
        }
    }

    /// Ends the read-back once its last read completed (nothing of it in flight).
    pub fn end_check(&mut self) {
        if self.check.take().is_some() {
            if let Some(t) = self.started.take() {
                self.tally.v.seconds += t.elapsed().as_secs_f64();
            }
        }
    }

    /// Whether every read of the current read-back has been issued.
    #[inline]
    pub fn check_issued(&self) -> bool {
        self.check.as_ref().is_some_and(|c| c.next >= c.end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(offset: u64, seq: u64, generation: u32) -> Vec<u8> {
        let mut b: Vec<u8> = (0..4096u32).map(|i| (i * 7 + 3) as u8).collect();
        stamp(&mut b, offset, 42, seq, generation);
        b
    }

    const E: Expect = Expect {
        generation: 2,
        seq: Some(9),
    };

    #[test]
    fn every_kind_is_told_apart() {
        let good = block(8192, 9, 2);
        assert_eq!(check(&good, 8192, 42, E), None);
        let kind = |b: &[u8]| check(b, 8192, 42, E).map(|b| b.kind);
        // A bit flip anywhere: in the data, in the header, in the magic.
        for at in [4000, 100, 20, 3] {
            let mut b = good.clone();
            b[at] ^= 0x10;
            assert_eq!(kind(&b), Some(BadKind::Corrupt), "flip at {at}");
        }
        assert_eq!(kind(&vec![0u8; 4096]), Some(BadKind::Unwritten));
        assert_eq!(kind(&vec![0x5au8; 4096]), Some(BadKind::Unwritten));
        let m = check(&block(0, 9, 2), 8192, 42, E).expect("misplaced");
        assert_eq!((m.kind, m.written_for), (BadKind::Misplaced, Some(0)));
        let s = check(&block(8192, 1, 1), 8192, 42, E).expect("stale");
        assert_eq!(
            (s.kind, s.found_generation, s.expected_generation),
            (BadKind::Stale, Some(1), Some(2))
        );
        // Another run's block at the right offset is stale too (generation 0: foreign).
        let mut other = (0..4096u32).map(|i| i as u8).collect::<Vec<u8>>();
        stamp(&mut other, 8192, 7, 9, 2);
        let s = check(&other, 8192, 42, E).expect("foreign");
        assert_eq!((s.kind, s.found_generation), (BadKind::Stale, Some(0)));
        // A block of the previous pass, whose sequence is not known, passes on generation.
        let prev = block(8192, 3, 1);
        let e = Expect {
            generation: 1,
            seq: None,
        };
        assert_eq!(check(&prev, 8192, 42, e), None);
    }

    #[test]
    fn expectations_follow_the_write_count() {
        // 10 blocks, 13 writes: positions 10..13 of pass 2 written, 13..20 from pass 1.
        assert_eq!(
            Expect::for_index(12, 13, 10),
            Some(Expect {
                generation: 2,
                seq: Some(12)
            })
        );
        assert_eq!(
            Expect::for_index(15, 13, 10),
            Some(Expect {
                generation: 1,
                seq: None
            })
        );
        // One partial pass: the rest was never written.
        assert_eq!(Expect::for_index(5, 3, 10), None);
    }
}
