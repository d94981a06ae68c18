//! The flush check (`diskscope flushcheck`): does the drive keep what it acknowledged?
//!
//! The writer stamps verified blocks (the verify header: offset, run nonce, sequence) at
//! random offsets over a span, each block's payload a function of its offset, nonce and
//! sequence, so any block can be regenerated exactly. After each flush returns (fdatasync
//! every N writes, or each write with O_DSYNC) it sends the writes the flush covered to the
//! witness and waits for the answer before writing again: what the witness holds is
//! exactly what the drive promised. A witness that does not answer stops the writer.
//!
//! After the power cut, [`verify`] reads back every block the witness recorded and judges
//! it against the record alone ([`judge`]): intact, lost (an older write of the session,
//! another session's block, or zeros), torn (every sector from one of two writes, both
//! present) or corrupt.

use crate::client::Remote;
use crate::engine::buf::BufferPool;
use crate::engine::verify::{stamp, HEADER, MAGIC};
use crate::io_target::TargetInfo;
use anyhow::{anyhow, bail, Context};
use shared::durability::WriteSync;
use shared::flushcheck::{
    BlockState, Durable, Finding, NewSession, Record, Records, Session, Verdict,
    MAX_RECORDS_PER_CALL,
};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The sector size torn writes are judged in.
pub const SECTOR: usize = 512;

/// Writes block `(offset, seq)` of the session `nonce` into `buf`.
pub fn fill_block(buf: &mut [u8], offset: u64, nonce: u64, seq: u64) {
    let mut rng = crate::workload::rng::Rng::new(nonce ^ offset.rotate_left(29), seq);
    rng.fill(&mut buf[HEADER..]);
    stamp(buf, offset, nonce, seq, 1);
}

fn expected(bs: usize, offset: u64, nonce: u64, seq: u64) -> Vec<u8> {
    let mut v = vec![0u8; bs];
    fill_block(&mut v, offset, nonce, seq);
    v
}

fn u64_at(buf: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&buf[at..at + 8]);
    u64::from_le_bytes(b)
}

/// Judges a block read back at `offset` against the write the witness recorded durable
/// there: the state, and the session's write its header names (if any).
pub fn judge(buf: &[u8], offset: u64, nonce: u64, recorded: u64) -> (BlockState, Option<u64>) {
    let ours = buf.len() >= HEADER
        && buf[..8] == MAGIC
        && u64_at(buf, 8) == offset
        && u64_at(buf, 16) == nonce;
    if !ours {
        if buf.len() >= HEADER && buf[..8] == MAGIC && u64_at(buf, 16) == nonce {
            // The session's block for another offset: a write that landed elsewhere.
            return (BlockState::Corrupt, Some(u64_at(buf, 24)));
        }
        // Zeros, data from before the session or another session's block: older data.
        let older = buf.iter().all(|&b| b == 0) || buf[..8.min(buf.len())] == MAGIC || {
            // Not a block of ours at all: what was there before (the flush lied), unless
            // some sector is the recorded write's (a write torn in its first sector).
            let want = expected(buf.len(), offset, nonce, recorded);
            !buf.chunks(SECTOR)
                .zip(want.chunks(SECTOR))
                .any(|(a, b)| a == b)
        };
        return if older {
            (BlockState::Lost, None)
        } else {
            (BlockState::Torn, None)
        };
    }
    let seq = u64_at(buf, 24);
    if buf == expected(buf.len(), offset, nonce, seq).as_slice() {
        return if seq >= recorded {
            (BlockState::Intact, Some(seq))
        } else {
            (BlockState::Lost, Some(seq))
        };
    }
    if seq != recorded {
        let (a, b) = (
            expected(buf.len(), offset, nonce, seq),
            expected(buf.len(), offset, nonce, recorded),
        );
        let mut from = (false, false);
        let every = buf
            .chunks(SECTOR)
            .zip(a.chunks(SECTOR).zip(b.chunks(SECTOR)))
            .all(|(s, (x, y))| {
                let (in_a, in_b) = (s == x, s == y);
                from.0 |= in_a && !in_b;
                from.1 |= in_b && !in_a;
                in_a || in_b
            });
        if every && from.0 && from.1 {
            return (BlockState::Torn, Some(seq));
        }
    }
    (BlockState::Corrupt, Some(seq))
}

/// What the writer is asked to do.
pub struct WriteJob<'a> {
    pub target: &'a Path,
    pub witness: &'a Remote,
    pub bs: u64,
    /// Bytes of the target written over (from its start).
    pub span: Option<u64>,
    /// Writes per fdatasync (ignored with `dsync`).
    pub flush_every: u64,
    /// Each write with O_DSYNC: durable when it returns (FUA where the drive has it).
    pub dsync: bool,
    pub count: Option<u64>,
    pub duration: Option<Duration>,
    pub seed: u64,
}

/// What the writer did.
#[derive(Debug, Default, serde::Serialize)]
pub struct Written {
    pub session: i64,
    pub writes: u64,
    pub flushes: u64,
    /// Records the witness acknowledged.
    pub acked: u64,
    /// Why it stopped before its count or time, if it did (the drive went away).
    pub stopped: Option<String>,
}

/// Opens a session on the witness and writes until the count or time is reached, it is
/// cancelled, or the drive fails (the power cut: said in `stopped`). A witness that does
/// not acknowledge a batch is an error: nothing more is written.
pub fn write(job: &WriteJob<'_>, cancel: &AtomicBool) -> anyhow::Result<Written> {
    let info = TargetInfo::probe(job.target, None, true)?;
    let bs = job.bs;
    if bs < SECTOR as u64 || !bs.is_multiple_of(SECTOR as u64) {
        bail!("--bs {bs}: a multiple of {SECTOR} bytes");
    }
    let span = job.span.unwrap_or(info.size).min(info.size);
    let blocks = span / bs;
    if blocks == 0 {
        bail!(
            "{}: {span} bytes hold no block of {bs}",
            job.target.display()
        );
    }
    let sync = if job.dsync {
        WriteSync::Dsync
    } else {
        WriteSync::None
    };
    let file = info.open_with(true, true, sync)?;
    let nonce = crate::workload::rng::Rng::new(
        job.seed ^ crate::client::wall_ns(),
        u64::from(std::process::id()),
    )
    .next_u64();
    let new = NewSession {
        target: job.target.display().to_string(),
        host: crate::env::hostname(),
        bs,
        start: 0,
        blocks,
        nonce,
    };
    let session: Session = serde_json::from_str(&job.witness.post(
        "/api/v1/witness",
        &new,
        "open a witness session",
    )?)
    .context("the witness's session")?;
    let mut out = Written {
        session: session.id,
        ..Written::default()
    };
    let mut pool = BufferPool::new(bs as usize, 1, false).context("the block buffer")?;
    let mut rng = crate::workload::rng::Rng::new(nonce, 1);
    let mut pending: Vec<Record> = Vec::new();
    let every = if job.dsync { 1 } else { job.flush_every.max(1) };
    let t0 = Instant::now();
    let path = format!("/api/v1/witness/{}/durable", session.id);
    loop {
        let done = cancel.load(Ordering::Relaxed)
            || job.count.is_some_and(|c| out.writes >= c)
            || job.duration.is_some_and(|d| t0.elapsed() >= d);
        if done || pending.len() as u64 >= every {
            if !pending.is_empty() {
                if !job.dsync {
                    if let Err(e) = file.sync_data() {
                        out.stopped =
                            Some(format!("fdatasync after write {} failed: {e}", out.writes));
                        return Ok(out);
                    }
                }
                out.flushes += 1;
                for chunk in std::mem::take(&mut pending).chunks(MAX_RECORDS_PER_CALL) {
                    let ack: Session = job
                        .witness
                        .post(&path, &Durable { records: chunk.to_vec() }, "record durable writes")
                        .and_then(|b| serde_json::from_str(&b).map_err(|e| anyhow!("the witness's answer: {e}")))
                        .with_context(|| format!("the witness did not acknowledge the writes flushed after write {} ({} recorded durable before): stopped, nothing more is written", out.writes, out.acked))?;
                    out.acked = ack.acked;
                }
            }
            if done {
                return Ok(out);
            }
        }
        let seq = out.writes + 1;
        let offset = rng.below(blocks) * bs;
        let buf = pool.get_mut(0);
        fill_block(buf, offset, nonce, seq);
        if let Err(e) = file.write_all_at(buf, offset) {
            out.stopped = Some(format!("write {seq} at offset {offset} failed: {e}"));
            return Ok(out);
        }
        out.writes = seq;
        pending.push(Record { offset, seq });
    }
}

/// Why a read-back could not be made.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    #[error("the witness: {0:#}")]
    Witness(anyhow::Error),
    #[error(transparent)]
    Target(#[from] crate::io_target::TargetError),
    #[error("the block buffer: {0}")]
    Buffer(std::io::Error),
}

/// Reads back every block the witness recorded for `session` on `target` and judges it.
pub fn verify(target: &Path, witness: &Remote, session: i64) -> Result<Verdict, VerifyError> {
    verify_on(&TargetInfo::probe(target, None, false)?, witness, session)
}

/// [`verify`] on a target already checked and opened (the API's, by its access policy).
pub fn verify_on(
    info: &TargetInfo,
    witness: &Remote,
    session: i64,
) -> Result<Verdict, VerifyError> {
    let r: Records = witness
        .get(
            &format!("/api/v1/witness/{session}"),
            "read the witness's records",
        )
        .and_then(|b| serde_json::from_str(&b).map_err(|e| anyhow!("its records: {e}")))
        .map_err(VerifyError::Witness)?;
    let file = info.open(false, true)?;
    let bs = r.session.new.bs;
    let mut pool = BufferPool::new(bs as usize, 1, false).map_err(VerifyError::Buffer)?;
    let mut v = Verdict {
        session,
        acked_last_seq: r.session.last_seq,
        ..Verdict::default()
    };
    for rec in &r.records {
        let buf = pool.get_mut(0);
        let (state, found_seq) = match file.read_exact_at(buf, rec.offset) {
            Ok(()) => judge(buf, rec.offset, r.session.new.nonce, rec.seq),
            Err(_) => (BlockState::Unreadable, None),
        };
        v.count(Finding {
            offset: rec.offset,
            recorded_seq: rec.seq,
            found_seq,
            state,
        });
    }
    Ok(v.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_judged_against_the_record_alone() {
        let (bs, off, nonce) = (4096usize, 8192u64, 0xfeed);
        let b = |seq| expected(bs, off, nonce, seq);
        assert_eq!(judge(&b(7), off, nonce, 7), (BlockState::Intact, Some(7)));
        assert_eq!(
            judge(&b(9), off, nonce, 7),
            (BlockState::Intact, Some(9)),
            "a later write"
        );
        assert_eq!(
            judge(&b(3), off, nonce, 7),
            (BlockState::Lost, Some(3)),
            "an older write"
        );
        assert_eq!(
            judge(&vec![0; bs], off, nonce, 7),
            (BlockState::Lost, None),
            "zeros"
        );
        assert_eq!(
            judge(&expected(bs, off, 1, 7), off, nonce, 7),
            (BlockState::Lost, None),
            "another session"
        );
        assert_eq!(
            judge(&vec![0x5a; bs], off, nonce, 7),
            (BlockState::Lost, None),
            "older data"
        );
        // The first sector of write 9, the rest of write 7: torn.
        let mut torn = b(7);
        torn[..SECTOR].copy_from_slice(&b(9)[..SECTOR]);
        assert_eq!(judge(&torn, off, nonce, 7), (BlockState::Torn, Some(9)));
        // The first sectors of older data, the rest of the recorded write: torn too.
        let mut torn = b(7);
        torn[..SECTOR].fill(0);
        assert_eq!(judge(&torn, off, nonce, 7), (BlockState::Torn, None));
        // The session's block of another offset: misplaced, corrupt.
        assert_eq!(
            judge(&expected(bs, 0, nonce, 7), off, nonce, 7),
            (BlockState::Corrupt, Some(7))
        );
        // A flipped bit: corrupt.
        let mut bad = b(7);
        bad[1000] ^= 1;
        assert_eq!(judge(&bad, off, nonce, 7), (BlockState::Corrupt, Some(7)));
    }
}
