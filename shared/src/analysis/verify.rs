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
//!   write: the drive acknowledged a write it did not keep).

use serde::{Deserialize, Serialize};

/// How many bad blocks a report lists by offset (the counts cover all of them).
pub const MAX_LISTED: usize = 32;

/// What a bad block was found to be.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[serde(rename_all = "snake_case")]
pub enum BadKind {
    Corrupt,
    Misplaced,
    Stale,
    Unwritten,
}

impl BadKind {
    pub const ALL: [BadKind; 4] = [
        BadKind::Corrupt,
        BadKind::Misplaced,
        BadKind::Stale,
        BadKind::Unwritten,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            BadKind::Corrupt => "corrupt",
            BadKind::Misplaced => "misplaced",
            BadKind::Stale => "stale",
            BadKind::Unwritten => "unwritten",
        }
    }
}

/// One bad block: where it was read, what it was, and what its header said.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
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
pub struct BadCounts {
    pub corrupt: u64,
    pub misplaced: u64,
    pub stale: u64,
    pub unwritten: u64,
}

impl BadCounts {
    pub fn get(&self, k: BadKind) -> u64 {
        match k {
            BadKind::Corrupt => self.corrupt,
            BadKind::Misplaced => self.misplaced,
            BadKind::Stale => self.stale,
            BadKind::Unwritten => self.unwritten,
        }
    }

    pub fn bump(&mut self, k: BadKind) {
        match k {
            BadKind::Corrupt => self.corrupt += 1,
            BadKind::Misplaced => self.misplaced += 1,
            BadKind::Stale => self.stale += 1,
            BadKind::Unwritten => self.unwritten += 1,
        }
    }

    pub fn total(&self) -> u64 {
        self.corrupt + self.misplaced + self.stale + self.unwritten
    }

    fn add(&mut self, o: &BadCounts) {
        self.corrupt += o.corrupt;
        self.misplaced += o.misplaced;
        self.stale += o.stale;
        self.unwritten += o.unwritten;
    }
}

/// The read-back of a run (or of every verified step of a preset).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
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

#[cfg(test)]
mod tests {
    use super::*;

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
