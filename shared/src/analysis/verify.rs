//! Data verification: what the read-back of a run's written blocks found.
//!
//! Every block a `verify` run writes starts with a header (magic, offset, run nonce,
//! sequence, generation, block size) and a CRC32C over the whole block; the read-back
//! classifies each block it reads. The kinds, in the order they are tested:
//! - `unwritten`: no header at all (zeros, a hole, or data that was there before the run):
//!   the write never reached the medium;
//! - `corrupt`: a header, but the checksum fails (bit flips, torn writes);
//! - `misplaced`: a valid block written for another offset (the drive put it elsewhere, or
//!   aliases offsets: fake capacity);
//! - `stale`: a valid block for this offset, but from an older pass or another run (a lost
//!   write: the drive acknowledged a write it did not keep);
//! - `unreadable`: the read failed (EIO); only an error scan (`scan`) goes on past it, any
//!   other run ends on the error.

use serde::{Deserialize, Serialize};

/// How many bad blocks a report lists by offset (the counts cover all of them).
pub const MAX_LISTED: usize = 32;

/// What a bad block was found to be.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum BadKind {
    Corrupt,
    Misplaced,
    Stale,
    Unwritten,
    Unreadable,
}

impl BadKind {
    pub const ALL: [BadKind; 5] = [
        BadKind::Corrupt,
        BadKind::Misplaced,
        BadKind::Stale,
        BadKind::Unwritten,
        BadKind::Unreadable,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            BadKind::Corrupt => "corrupt",
            BadKind::Misplaced => "misplaced",
            BadKind::Stale => "stale",
            BadKind::Unwritten => "unwritten",
            BadKind::Unreadable => "unreadable",
        }
    }
}

/// One bad block: where it was read, what it was, and what its header said.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BadBlock {
    pub offset: u64,
    pub kind: BadKind,
    /// `misplaced`: the offset the block was written for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub written_for: Option<u64>,
    /// `stale`: the pass the block came from (0: another run) and the pass expected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub found_generation: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_generation: Option<u32>,
    /// The preset step whose read-back found it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<u32>,
}

/// Counts of bad blocks by kind.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BadCounts {
    pub corrupt: u64,
    pub misplaced: u64,
    pub stale: u64,
    pub unwritten: u64,
    #[serde(default)]
    pub unreadable: u64,
}

impl BadCounts {
    pub fn get(&self, k: BadKind) -> u64 {
        match k {
            BadKind::Corrupt => self.corrupt,
            BadKind::Misplaced => self.misplaced,
            BadKind::Stale => self.stale,
            BadKind::Unwritten => self.unwritten,
            BadKind::Unreadable => self.unreadable,
        }
    }

    pub fn bump(&mut self, k: BadKind) {
        match k {
            BadKind::Corrupt => self.corrupt += 1,
            BadKind::Misplaced => self.misplaced += 1,
            BadKind::Stale => self.stale += 1,
            BadKind::Unwritten => self.unwritten += 1,
            BadKind::Unreadable => self.unreadable += 1,
        }
    }

    pub fn total(&self) -> u64 {
        self.corrupt + self.misplaced + self.stale + self.unwritten + self.unreadable
    }

    fn add(&mut self, o: &BadCounts) {
        self.corrupt += o.corrupt;
        self.misplaced += o.misplaced;
        self.stale += o.stale;
        self.unwritten += o.unwritten;
        self.unreadable += o.unreadable;
    }
}

/// The read-back of a run (or of every verified step of a preset).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Verify {
    /// Blocks read back and checked, and their bytes.
    pub blocks_checked: u64,
    pub bytes_checked: u64,
    pub good_blocks: u64,
    pub bad: BadCounts,
    /// The first bad blocks by offset order of discovery, at most [`MAX_LISTED`].
    pub first_bad: Vec<BadBlock>,
    /// Time spent reading back: the final pass and the interleaved ones (`verify_every`).
    pub seconds: f64,
    /// Blocks checked during the writes (`verify_every`), included in `blocks_checked`.
    pub interleaved_blocks: u64,
    /// Why some written blocks were not read back (the run failed or was stopped first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incomplete: Option<String>,
    /// Where the good and bad blocks lie: what a fake-capacity check reads its verdict from.
    #[serde(default)]
    pub extent: Extent,
}

/// The positions the read-back found good and bad, over all parts.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Extent {
    /// The lowest and highest offsets of a good block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_good: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_good: Option<u64>,
    /// The lowest offset of a bad block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lowest_bad: Option<u64>,
    /// The smallest distance between a misplaced block's offset and the offset it was
    /// written for: a drive that aliases addresses modulo its real capacity shows that
    /// capacity here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alias: Option<u64>,
}

fn min_opt(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, y) => x.or(y),
    }
}

impl Extent {
    /// Counts one block read back at `offset` (`bad`: what it was found to be).
    #[inline]
    pub fn saw(&mut self, offset: u64, bad: Option<&BadBlock>) {
        match bad {
            None => {
                self.first_good = min_opt(self.first_good, Some(offset));
                self.last_good = self.last_good.max(Some(offset));
            }
            Some(b) => {
                self.lowest_bad = min_opt(self.lowest_bad, Some(offset));
                if let Some(w) = b.written_for.filter(|w| *w != offset) {
                    self.alias = min_opt(self.alias, Some(w.abs_diff(offset)));
                }
            }
        }
    }

    fn add(&mut self, o: &Extent) {
        self.first_good = min_opt(self.first_good, o.first_good);
        self.last_good = self.last_good.max(o.last_good);
        self.lowest_bad = min_opt(self.lowest_bad, o.lowest_bad);
        self.alias = min_opt(self.alias, o.alias);
    }
}

impl Verify {
    /// No bad block among those checked.
    pub fn passed(&self) -> bool {
        self.bad.total() == 0
    }

    /// Read-back speed in MB/s (10^6 bytes per second).
    pub fn mbps(&self) -> f64 {
        if self.seconds > 0.0 {
            self.bytes_checked as f64 / 1e6 / self.seconds
        } else {
            0.0
        }
    }

    /// Adds another part's result (another job, target or step); the list stays sorted by
    /// nothing but discovery and is cut at [`MAX_LISTED`].
    pub fn add(&mut self, o: &Verify) {
        self.blocks_checked += o.blocks_checked;
        self.bytes_checked += o.bytes_checked;
        self.good_blocks += o.good_blocks;
        self.bad.add(&o.bad);
        // Parts run side by side (jobs) or one after another (steps): time is the longest
        // part for the former; callers that add steps add their seconds themselves.
        self.seconds = self.seconds.max(o.seconds);
        self.interleaved_blocks += o.interleaved_blocks;
        for b in &o.first_bad {
            if self.first_bad.len() >= MAX_LISTED {
                break;
            }
            self.first_bad.push(b.clone());
        }
        if self.incomplete.is_none() {
            self.incomplete.clone_from(&o.incomplete);
        }
        self.extent.add(&o.extent);
    }

    /// One line for the CLI summary and the dashboard.
    pub fn summary_line(&self) -> String {
        use crate::units::format_bytes;
        let mut line = if self.passed() {
            format!(
                "verify: PASS, {} blocks ({}) read back, all good ({:.0} MB/s, {:.1} s)",
                self.blocks_checked,
                format_bytes(self.bytes_checked),
                self.mbps(),
                self.seconds
            )
        } else {
            let kinds: Vec<String> = BadKind::ALL
                .iter()
                .filter(|k| self.bad.get(**k) > 0)
                .map(|k| format!("{} {}", self.bad.get(*k), k.as_str()))
                .collect();
            let first: Vec<String> = self
                .first_bad
                .iter()
                .take(4)
                .map(|b| format!("{} {}", b.kind.as_str(), b.offset))
                .collect();
            format!(
                "verify: FAIL, {} of {} blocks bad ({}); first at offsets: {}",
                self.bad.total(),
                self.blocks_checked,
                kinds.join(", "),
                first.join(", ")
            )
        };
        if let Some(why) = &self.incomplete {
            line.push_str(&format!(" (incomplete: {why})"));
        }
        line
    }
}

/// The verdict of a fake-capacity check (`fakecap`): unique blocks written over a span
/// and read back.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FakeCap {
    /// `found`: the span does not hold what it claims; `not_found`: every block read back
    /// as written; `not_enough_data`: the read-back did not cover the span.
    pub verdict: super::Verdict,
    /// The bytes written (the claimed capacity, or the part of it tested).
    pub span_bytes: u64,
    /// Bytes that hold data: the alias distance of a drive that wraps, else the offset of the
    /// first bad block (or of the failed write), else the whole span.
    pub usable_bytes: u64,
    /// Bytes of blocks that read back as written (a wrapping drive's high blocks read back
    /// good, though they share the low blocks' cells).
    pub good_bytes: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_good: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_good: Option<u64>,
    /// Addresses repeat every this many bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alias_bytes: Option<u64>,
    /// Where a write failed (ENOSPC, EIO): nothing past it could be written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_failed_at: Option<u64>,
}

/// Judges a fake-capacity check over `span` bytes written in `bs` blocks from its
/// read-back (`None`: none ran) and the offset of a failed write.
pub fn fake_capacity(
    v: Option<&Verify>,
    span: u64,
    bs: u64,
    write_failed_at: Option<u64>,
) -> FakeCap {
    let Some(v) = v else {
        return FakeCap {
            verdict: super::Verdict::NotEnoughData,
            span_bytes: span,
            usable_bytes: write_failed_at.unwrap_or(0).min(span),
            write_failed_at,
            ..FakeCap::default()
        };
    };
    let e = v.extent;
    // Bad blocks end the capacity only when no good block lies past them (scattered ones
    // are damage, which the read-back's own result reports).
    let trailing_bad = e.lowest_bad.filter(|b| e.last_good.is_none_or(|g| g < *b));
    let usable = e
        .alias
        .or(trailing_bad)
        .into_iter()
        .chain(write_failed_at)
        .fold(span, u64::min);
    let verdict = if usable < span {
        super::Verdict::Found
    } else if v.incomplete.is_some() || v.bytes_checked < span {
        super::Verdict::NotEnoughData
    } else {
        super::Verdict::NotFound
    };
    FakeCap {
        verdict,
        span_bytes: span,
        usable_bytes: usable,
        good_bytes: v.good_blocks.saturating_mul(bs),
        first_good: e.first_good,
        last_good: e.last_good,
        alias_bytes: e.alias,
        write_failed_at,
    }
}

impl FakeCap {
    /// One line for the CLI summary and the dashboard.
    pub fn summary_line(&self) -> String {
        use crate::units::format_bytes;
        let good = match (self.first_good, self.last_good) {
            (Some(a), Some(b)) => format!("good blocks from offset {a} to {b}"),
            _ => "no good block".into(),
        };
        match self.verdict {
            super::Verdict::NotFound if self.good_bytes >= self.span_bytes => format!(
                "fakecap: GENUINE, all {} written read back as written",
                format_bytes(self.span_bytes)
            ),
            super::Verdict::NotFound => format!(
                "fakecap: GENUINE capacity of {}, but only {} read back as written (bad blocks within: see verify)",
                format_bytes(self.span_bytes),
                format_bytes(self.good_bytes)
            ),
            super::Verdict::NotEnoughData => format!(
                "fakecap: UNKNOWN, the read-back did not cover the span of {} ({})",
                format_bytes(self.span_bytes),
                good
            ),
            super::Verdict::Found => {
                let why = match (self.alias_bytes, self.write_failed_at) {
                    (Some(a), _) => format!("addresses repeat every {}", format_bytes(a)),
                    (None, Some(at)) => format!("writes fail from offset {at}"),
                    (None, None) => "data is lost past it".into(),
                };
                format!(
                    "fakecap: FAKE, {} usable of {} claimed ({why}); {} read back good, {good}",
                    format_bytes(self.usable_bytes),
                    format_bytes(self.span_bytes),
                    format_bytes(self.good_bytes)
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_back(blocks: &[(u64, Option<BadBlock>)]) -> Verify {
        let mut v = Verify::default();
        for (off, b) in blocks {
            v.extent.saw(*off, b.as_ref());
            v.blocks_checked += 1;
            v.bytes_checked += 10;
            match b {
                None => v.good_blocks += 1,
                Some(b) => v.bad.bump(b.kind),
            }
        }
        v
    }

    fn bad(kind: BadKind, written_for: Option<u64>) -> Option<BadBlock> {
        Some(BadBlock {
            offset: 0,
            kind,
            written_for,
            found_generation: None,
            expected_generation: None,
            step: None,
        })
    }

    #[test]
    fn fake_capacity_from_aliases_vanishing_data_and_failed_writes() {
        // 10 blocks of 10 bytes on a drive that wraps at 60: blocks 0..40 hold 60..100.
        let wrap: Vec<_> = (0..10u64)
            .map(|i| {
                let off = i * 10;
                (
                    off,
                    (off < 40)
                        .then(|| bad(BadKind::Misplaced, Some(off + 60)))
                        .flatten(),
                )
            })
            .collect();
        let f = fake_capacity(Some(&read_back(&wrap)), 100, 10, None);
        assert_eq!(f.verdict, crate::analysis::Verdict::Found);
        assert_eq!((f.usable_bytes, f.alias_bytes), (60, Some(60)));
        assert_eq!(
            (f.first_good, f.last_good, f.good_bytes),
            (Some(40), Some(90), 60)
        );
        assert!(
            f.summary_line().contains("addresses repeat every 60 B"),
            "{}",
            f.summary_line()
        );
        // Data past 70 reads back as zeros.
        let vanish: Vec<_> = (0..10u64)
            .map(|i| {
                (
                    i * 10,
                    (i >= 7).then(|| bad(BadKind::Unwritten, None)).flatten(),
                )
            })
            .collect();
        let f = fake_capacity(Some(&read_back(&vanish)), 100, 10, None);
        assert_eq!((f.usable_bytes, f.last_good), (70, Some(60)));
        // Genuine, and a write that failed at 50.
        let all: Vec<_> = (0..10u64).map(|i| (i * 10, None)).collect();
        let f = fake_capacity(Some(&read_back(&all)), 100, 10, None);
        assert_eq!(
            (f.verdict, f.usable_bytes),
            (crate::analysis::Verdict::NotFound, 100)
        );
        assert!(f.summary_line().starts_with("fakecap: GENUINE"));
        // A scattered bad block is damage, not a smaller capacity.
        let mut one = all.clone();
        one[3].1 = bad(BadKind::Corrupt, None);
        let f = fake_capacity(Some(&read_back(&one)), 100, 10, None);
        assert_eq!(
            (f.verdict, f.usable_bytes),
            (crate::analysis::Verdict::NotFound, 100)
        );
        assert!(
            f.summary_line().contains("only 90 B read back"),
            "{}",
            f.summary_line()
        );
        let f = fake_capacity(None, 100, 10, Some(50));
        assert_eq!(
            (f.verdict, f.usable_bytes),
            (crate::analysis::Verdict::NotEnoughData, 50)
        );
    }

    #[test]
    fn parts_add_up_and_the_list_is_capped() {
        let mut a = Verify {
            blocks_checked: 10,
            bytes_checked: 40960,
            good_blocks: 9,
            seconds: 1.0,
            ..Verify::default()
        };
        a.bad.bump(BadKind::Stale);
        a.first_bad = vec![
            BadBlock {
                offset: 4096,
                kind: BadKind::Stale,
                written_for: None,
                found_generation: Some(1),
                expected_generation: Some(2),
                step: None,
            };
            MAX_LISTED
        ];
        let mut b = a.clone();
        b.seconds = 2.0;
        b.bad.bump(BadKind::Corrupt);
        a.add(&b);
        assert_eq!(a.blocks_checked, 20);
        assert_eq!(a.bad.stale, 2);
        assert_eq!(a.bad.corrupt, 1);
        assert_eq!(a.bad.total(), 3);
        assert_eq!(a.first_bad.len(), MAX_LISTED);
        assert_eq!(a.seconds, 2.0);
        assert!(!a.passed());
        let line = a.summary_line();
        assert!(
            line.starts_with("verify: FAIL, 3 of 20 blocks bad (1 corrupt, 2 stale)"),
            "{line}"
        );
    }
}
