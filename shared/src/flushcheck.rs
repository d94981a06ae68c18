//! Whether a drive keeps what it acknowledged (`diskscope flushcheck`), as diskchecker.pl
//! checks it: a writer stamps verified blocks and, after each flush returns, tells a
//! witness (another agent, on another machine or disk) which blocks are now durable; after
//! a power cut every block the witness recorded is read back and judged. The witness's
//! records are the only input of the verdict: nothing the writer kept (and may have lost)
//! counts.

use serde::{Deserialize, Serialize};

/// Most records one `durable` call carries: a thousand records of the largest offsets and
/// sequences are about 45 KB of JSON, inside the API's 64 KiB body limit. A flush that
/// covered more is sent as several calls, in order.
pub const MAX_RECORDS_PER_CALL: usize = 1_000;
/// Bad blocks listed in a verdict (all are counted).
pub const MAX_LISTED: usize = 64;

/// A writer's session, as it asks the witness to open one.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct NewSession {
    /// The target written, as the writer names it.
    pub target: String,
    /// The writer's host name.
    pub host: String,
    /// Block size, bytes.
    pub bs: u64,
    /// The span written: its first byte and its blocks.
    pub start: u64,
    pub blocks: u64,
    /// The run nonce stamped in every block.
    pub nonce: u64,
}

/// A session the witness keeps.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Session {
    pub id: i64,
    pub created_ms: u64,
    #[serde(flatten)]
    pub new: NewSession,
    /// Records acknowledged so far, and the highest sequence among them.
    pub acked: u64,
    pub last_seq: u64,
}

/// One write a flush made durable: the block's offset and the write's sequence.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Record {
    pub offset: u64,
    pub seq: u64,
}

/// The writes one flush made durable, in the order they were written.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Durable {
    pub records: Vec<Record>,
}

/// A session and, for each block, the newest write recorded durable.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Records {
    pub session: Session,
    pub records: Vec<Record>,
}

/// What a block read back after the cut holds, against the witness's record.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum BlockState {
    /// The recorded write, or a later one of the session.
    Intact,
    /// An older write of the session, another session's block, or zeros: the flush lied.
    Lost,
    /// Its sectors are of two writes: part of a write reached the medium.
    Torn,
    /// Neither: the block does not check.
    Corrupt,
    /// Reading it failed.
    Unreadable,
}

impl BlockState {
    pub fn as_str(self) -> &'static str {
        match self {
            BlockState::Intact => "intact",
            BlockState::Lost => "lost",
            BlockState::Torn => "torn",
            BlockState::Corrupt => "corrupt",
            BlockState::Unreadable => "unreadable",
        }
    }
}

/// One block judged.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Finding {
    pub offset: u64,
    /// The write the witness recorded durable.
    pub recorded_seq: u64,
    /// The write found there, when its header names one of the session's.
    pub found_seq: Option<u64>,
    pub state: BlockState,
}

/// The verdict of a read-back after a power cut.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Verdict {
    pub session: i64,
    /// Blocks the witness recorded, and each state's count.
    pub checked: u64,
    pub intact: u64,
    pub lost: u64,
    pub torn: u64,
    pub corrupt: u64,
    pub unreadable: u64,
    /// The highest sequence acknowledged durable, and the highest of those found intact.
    pub acked_last_seq: u64,
    pub found_last_seq: Option<u64>,
    /// The first bad blocks, by offset (at most [`MAX_LISTED`]).
    pub bad: Vec<Finding>,
    /// [`Verdict::word`] and [`Verdict::line`], filled by [`Verdict::finish`] (what the
    /// dashboard shows).
    #[serde(default)]
    pub verdict: String,
    #[serde(default)]
    pub line: String,
    /// Each listed bad block in a sentence (`lost at offset 8192: recorded write 7, found
    /// write 3`).
    #[serde(default)]
    pub lines: Vec<String>,
}

/// `POST /api/v1/flushcheck/verify`: read back a session's blocks on a target of the agent.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct VerifyRequest {
    /// The target the writer wrote, as the agent's targets list it.
    pub target: String,
    /// The witness agent's URL and its operator token (sent only to it).
    pub witness: String,
    pub token: String,
    /// The session the writer printed.
    pub session: i64,
}

impl Verdict {
    pub fn count(&mut self, f: Finding) {
        self.checked += 1;
        match f.state {
            BlockState::Intact => {
                self.intact += 1;
                self.found_last_seq = self.found_last_seq.max(Some(f.recorded_seq));
            }
            BlockState::Lost => self.lost += 1,
            BlockState::Torn => self.torn += 1,
            BlockState::Corrupt => self.corrupt += 1,
            BlockState::Unreadable => self.unreadable += 1,
        }
        if f.state != BlockState::Intact && self.bad.len() < MAX_LISTED {
            self.bad.push(f);
        }
    }

    /// Fills `verdict` and `line` once every block is counted.
    pub fn finish(mut self) -> Self {
        self.verdict = self.word().into();
        self.line = self.line();
        self.lines = self
            .bad
            .iter()
            .map(|f| {
                format!(
                    "{} at offset {}: recorded write {}, found {}",
                    f.state.as_str(),
                    f.offset,
                    f.recorded_seq,
                    f.found_seq
                        .map_or("no write of the session".into(), |s| format!("write {s}"))
                )
            })
            .collect();
        self
    }

    /// HONEST, LIES ABOUT FLUSH, TORN WRITES or CORRUPT: the worst finding names it.
    pub fn word(&self) -> &'static str {
        if self.torn > 0 {
            "TORN WRITES"
        } else if self.lost > 0 {
            "LIES ABOUT FLUSH"
        } else if self.corrupt + self.unreadable > 0 {
            "CORRUPT"
        } else {
            "HONEST"
        }
    }

    pub fn line(&self) -> String {
        format!(
            "{}: {} blocks recorded durable: {} intact, {} lost, {} torn, {} corrupt, {} unreadable; last durable sequence acknowledged {}, found {}",
            self.word(),
            self.checked,
            self.intact,
            self.lost,
            self.torn,
            self.corrupt,
            self.unreadable,
            self.acked_last_seq,
            self.found_last_seq.map_or("none".into(), |s| s.to_string())
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_worst_finding_names_the_verdict() {
        let mut v = Verdict::default();
        let f = |state| Finding {
            offset: 0,
            recorded_seq: 3,
            found_seq: None,
            state,
        };
        v.count(f(BlockState::Intact));
        assert_eq!(v.word(), "HONEST");
        assert_eq!(v.found_last_seq, Some(3));
        v.count(f(BlockState::Corrupt));
        assert_eq!(v.word(), "CORRUPT");
        v.count(f(BlockState::Lost));
        assert_eq!(v.word(), "LIES ABOUT FLUSH");
        v.count(f(BlockState::Torn));
        assert_eq!(v.word(), "TORN WRITES");
        assert_eq!((v.checked, v.bad.len()), (4, 3));
    }
}
