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
/// Sessions `GET /api/v1/witness` lists, newest first.
pub const MAX_SESSIONS_LISTED: usize = 100;
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

impl NewSession {
    /// What is wrong with it: a block size that is not whole sectors up to
    /// [`crate::spec::MAX_BS`], no blocks, or a span past 2^63 bytes (offsets are stored as
    /// signed 64-bit integers).
    pub fn problem(&self) -> Option<String> {
        let end = self
            .blocks
            .checked_mul(self.bs)
            .and_then(|b| b.checked_add(self.start));
        if self.bs == 0 || !self.bs.is_multiple_of(512) || self.bs > crate::spec::MAX_BS {
            Some(format!(
                "bs {}: whole sectors (a multiple of 512) up to {} bytes",
                self.bs,
                crate::spec::MAX_BS
            ))
        } else if self.blocks == 0 {
            Some("blocks 0: a session needs blocks".into())
        } else if end.is_none_or(|e| e > i64::MAX as u64) {
            Some(format!(
                "start {} + {} blocks of {} bytes: past 2^63 bytes",
                self.start, self.blocks, self.bs
            ))
        } else {
            None
        }
    }
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

/// `GET /api/v1/witness?host=H&target=T`: the sessions of a writer's host and target.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct SessionQuery {
    pub host: String,
    pub target: String,
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

/// A session and, for each block, the newest write recorded durable: one page of them, by
/// offset (`GET /api/v1/witness/{id}?after=OFFSET&limit=N`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Records {
    pub session: Session,
    pub records: Vec<Record>,
    /// More records follow: ask again with `after` this (the page's last offset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_after: Option<u64>,
}

/// Records per page of `GET /api/v1/witness/{id}` at most (and by default): about 3 MB of
/// JSON. A session over a whole drive holds a record per block written, millions of them;
/// the read-back takes them page by page, at flat memory.
pub const MAX_RECORDS_PER_PAGE: u32 = 65_536;

/// `GET /api/v1/witness/{id}`'s query: the page after offset `after` (from the first
/// without), at most `limit` records (1..[`MAX_RECORDS_PER_PAGE`]).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct RecordsQuery {
    #[serde(default)]
    pub after: Option<u64>,
    #[serde(default)]
    pub limit: Option<u32>,
}

/// The writer of a flush check as a run (`--preset flushcheck`, the spec's `flushcheck`):
/// verified blocks written one at a time at random offsets over the span, made durable by
/// the spec's flush (every N writes) or by synchronous writes, each flushed write recorded
/// on the witness before the next is written. The witness's token is the run's own, held
/// in memory: never serialized, so never stored or echoed.
#[derive(Serialize, Deserialize, Clone, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct WriterSpec {
    /// The witness agent's URL (`http://host:port`).
    pub witness: String,
    /// Stop after this many writes (else at the run time, a stop, or when the drive goes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
    /// The witness's operator token: set from the run request (`witness_token`) or the
    /// CLI's `--token`, never from a spec.
    #[serde(skip)]
    #[cfg_attr(feature = "schema", schemars(skip))]
    pub token: String,
}

impl std::fmt::Debug for WriterSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WriterSpec")
            .field("witness", &self.witness)
            .field("count", &self.count)
            .field("token", &if self.token.is_empty() { "" } else { "(set)" })
            .finish()
    }
}

/// Whether a witness at `url` runs on this machine (a loopback address): a weaker check,
/// its records survive the cut only if its database is on a disk the cut spares.
pub fn witness_is_local(url: &str) -> bool {
    let host = url
        .split("://")
        .nth(1)
        .unwrap_or(url)
        .split('/')
        .next()
        .unwrap_or("");
    // `[::1]:7878`, `127.0.0.1:7878`, `localhost:7878`.
    let host = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => host.split(':').next().unwrap_or(""),
    };
    matches!(host, "localhost" | "::1") || host.starts_with("127.")
}

/// What a run says of a local witness.
pub const LOCAL_WITNESS: &str = "the witness runs on this machine: a weaker check (its records survive only if its database is on a disk the cut spares)";

/// Longest witness URL taken.
pub const MAX_WITNESS_URL: usize = 2048;

impl WriterSpec {
    /// What is wrong with it, by field: (field, value, why).
    pub fn check(&self) -> Vec<(&'static str, String, String)> {
        let mut bad = Vec::new();
        let w = &self.witness;
        let host = w
            .strip_prefix("http://")
            .or_else(|| w.strip_prefix("https://"))
            .unwrap_or("");
        if host.is_empty() || w.len() > MAX_WITNESS_URL || w.chars().any(char::is_whitespace) {
            bad.push((
                "flushcheck.witness",
                w.chars().take(200).collect(),
                format!("the witness agent's URL: http://HOST:PORT (at most {MAX_WITNESS_URL} bytes, no spaces)"),
            ));
        }
        if self.count == Some(0) {
            bad.push(("flushcheck.count", "0".into(), "at least one write".into()));
        }
        bad
    }
}

/// What a flush check's writer did (the run's `analysis.flushcheck`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Written {
    /// The witness and the session it keeps for this run.
    pub witness: String,
    pub session: i64,
    pub writes: u64,
    pub flushes: u64,
    /// Writes the witness acknowledged as durable, and the last of their sequences.
    pub acked: u64,
    /// Why the writer stopped before its count or time: the drive failed a write or a
    /// flush (the power cut). What the witness recorded stands.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
}

impl Written {
    /// `session 3: 2000 writes, 125 flushes, 2000 writes recorded durable on URL`.
    pub fn line(&self) -> String {
        format!(
            "session {}: {} writes, {} flushes, {} writes recorded durable on {}",
            self.session, self.writes, self.flushes, self.acked, self.witness
        )
    }
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
    /// The session the writer printed; none: the witness's newest session of this agent's
    /// host on this target (what a writer that lost its power could not print).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<i64>,
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
    fn a_witness_on_this_machine_is_known_by_its_address() {
        for local in [
            "http://127.0.0.1:7878",
            "http://localhost:7878/",
            "http://[::1]:7878",
            "https://127.1.2.3",
        ] {
            assert!(witness_is_local(local), "{local}");
        }
        for remote in [
            "http://lab-pc:7878",
            "http://10.0.0.2:7878",
            "http://[fe80::1]:7878",
        ] {
            assert!(!witness_is_local(remote), "{remote}");
        }
    }

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
