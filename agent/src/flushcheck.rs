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
use crate::engine::job::{JobMsg, JobSetup, RunShared};
use crate::engine::timed::Timer;
use crate::engine::verify::{stamp, HEADER, MAGIC};
use crate::engine::Dir;
use crate::io_target::TargetInfo;
use crate::workload::Plan;
use anyhow::anyhow;
use shared::durability::WriteSync;
use shared::flushcheck::{
    BlockState, Durable, Finding, NewSession, Record, Records, Session, Verdict, Written,
    MAX_RECORDS_PER_CALL,
};
use shared::RunError;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::mpsc::Sender;

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

/// The writer as it runs: the target, its one block buffer, the witness and its session.
struct Writer {
    file: std::fs::File,
    pool: BufferPool,
    witness: Remote,
    path: String,
    nonce: u64,
    rng: crate::workload::rng::Rng,
    start: u64,
    blocks: u64,
    bs: u64,
    /// Writes per flush (1 with synchronous writes, which need no call), and which call.
    every: u64,
    flush: Option<shared::durability::Flush>,
    pending: Vec<Record>,
    out: Written,
}

impl Writer {
    /// Opens the target for writing and a session on the witness (before the start gate:
    /// a witness that does not answer fails the run's set-up, nothing written).
    fn open(plan: &Plan) -> Result<Writer, String> {
        let spec = plan.spec();
        let w = spec.flushcheck.as_ref().ok_or("not a flush check")?;
        if w.token.is_empty() {
            return Err(format!(
                "the witness {}: its operator token is needed (witness_token in the request, --witness-token with diskscope run, --token with diskscope flushcheck write)",
                w.witness
            ));
        }
        let file = plan
            .target()
            .open_with(true, spec.direct, spec.write_sync)
            .map_err(|e| e.to_string())?;
        let bs = spec.bs;
        let (start, end) = plan.span_bytes();
        let blocks = end.saturating_sub(start) / bs;
        if blocks == 0 {
            return Err(format!(
                "{}: {} bytes hold no block of {bs}",
                plan.target().path.display(),
                end.saturating_sub(start)
            ));
        }
        let nonce = crate::workload::rng::Rng::new(
            spec.seed ^ crate::client::wall_ns(),
            u64::from(std::process::id()),
        )
        .next_u64();
        let witness = Remote::new(&w.witness, w.token.clone());
        let new = NewSession {
            target: plan.target().path.display().to_string(),
            host: crate::env::hostname(),
            bs,
            start,
            blocks,
            nonce,
        };
        let session: Session = witness
            .post("/api/v1/witness", &new, "open a witness session")
            .and_then(|b| serde_json::from_str(&b).map_err(|e| anyhow!("its session: {e}")))
            .map_err(|e| format!("the witness {}: {e:#}", w.witness))?;
        let pool = BufferPool::new(bs as usize, 1, false)
            .map_err(|e| format!("a {bs}-byte block buffer: {e}"))?;
        let dsync = spec.write_sync != WriteSync::None;
        Ok(Writer {
            file,
            pool,
            path: format!("/api/v1/witness/{}/durable", session.id),
            witness,
            nonce,
            rng: crate::workload::rng::Rng::new(nonce, 1),
            start,
            blocks,
            bs,
            every: if dsync {
                1
            } else {
                spec.flush.map_or(1, |f| u64::from(f.every.max(1)))
            },
            flush: spec.flush.filter(|_| !dsync),
            pending: Vec::new(),
            out: Written {
                witness: w.witness.clone(),
                session: session.id,
                ..Written::default()
            },
        })
    }

    /// Makes the pending writes durable (the flush, timed) and records them on the witness,
    /// in calls of at most [`MAX_RECORDS_PER_CALL`], each answered before the next.
    fn commit(&mut self, t: &mut Timer<'_>) -> Result<(), RunError> {
        if self.pending.is_empty() {
            return Ok(());
        }
        if let Some(f) = self.flush {
            let r = t.time(|| {
                if f.data_only {
                    self.file.sync_data()
                } else {
                    self.file.sync_all()
                }
            });
            match r {
                Ok(((), lat_ns, at_ns)) => t.flushed(lat_ns, at_ns),
                Err(e) => {
                    let why = format!("{} after write {} failed: {e}", f.call(), self.out.writes);
                    self.out.stopped = Some(why.clone());
                    return Err(drive_error(why, "flush", None, &e));
                }
            }
        }
        self.out.flushes += 1;
        for chunk in self.pending.chunks(MAX_RECORDS_PER_CALL) {
            let ack: Session = self
                .witness
                .post(&self.path, &Durable { records: chunk.to_vec() }, "record durable writes")
                .and_then(|b| serde_json::from_str(&b).map_err(|e| anyhow!("the witness's answer: {e}")))
                .map_err(|e| RunError {
                    message: format!(
                        "the witness did not acknowledge the writes flushed after write {} ({} recorded durable before): stopped, nothing more is written: {e:#}",
                        self.out.writes, self.out.acked
                    ),
                    op: None,
                    offset: None,
                    errno: None,
                })?;
            self.out.acked = ack.acked;
        }
        // Kept for the next batch: its room is reused, not allocated again.
        self.pending.clear();
        Ok(())
    }

    /// One verified block at a random offset of the span, timed and counted as a write.
    fn write(&mut self, t: &mut Timer<'_>) -> Result<(), RunError> {
        let seq = self.out.writes + 1;
        let offset = self.start + self.rng.below(self.blocks) * self.bs;
        let buf = self.pool.get_mut(0);
        fill_block(buf, offset, self.nonce, seq);
        match t.time(|| self.file.write_all_at(buf, offset)) {
            Ok(((), lat_ns, at_ns)) => t.count(Dir::Write, self.bs, lat_ns, at_ns, offset),
            Err(e) => {
                let why = format!("write {seq} at offset {offset} failed: {e}");
                self.out.stopped = Some(why.clone());
                return Err(drive_error(why, "write", Some(offset), &e));
            }
        }
        self.out.writes = seq;
        self.pending.push(Record { offset, seq });
        Ok(())
    }
}

/// The drive failed a write or a flush: the end of the check (a power cut does this).
fn drive_error(why: String, op: &str, offset: Option<u64>, e: &std::io::Error) -> RunError {
    RunError {
        message: format!("{why}: the drive stopped answering (a power cut ends the check here); what the witness recorded stands: verify after the restart"),
        op: Some(op.to_string()),
        offset,
        errno: e.raw_os_error(),
    }
}

/// The flush check's one job: verified blocks until its count or time is reached, it is
/// stopped, the drive fails (the power cut) or the witness does not answer; what the last
/// flush covered is recorded before the end.
pub fn job_thread(plan: &Plan, job: usize, shared: &RunShared, tx: &Sender<JobMsg>) {
    let mut w = match Writer::open(plan) {
        Ok(w) => w,
        Err(e) => {
            let _ = tx.send(JobMsg::Ready {
                job,
                result: Err(format!("job {job}: {e}")),
            });
            return;
        }
    };
    let count = plan.spec().flushcheck.as_ref().and_then(|f| f.count);
    let _ = tx.send(JobMsg::Ready {
        job,
        result: Ok(JobSetup {
            backend: "sync",
            note: shared::flushcheck::witness_is_local(&w.out.witness)
                .then(|| shared::flushcheck::LOCAL_WITNESS.to_string()),
            features: vec![format!(
                "flush check: one verified block at a time, {}, each flushed write recorded on the witness {} (session {}) before the next",
                w.flush.map_or("each write O_DSYNC".to_string(), |f| format!("{} every {} writes", f.call(), w.every)),
                w.out.witness,
                w.out.session
            )],
            buffers: (w.pool.mapped_bytes(), w.pool.huge_bytes()),
        }),
    });
    if shared.gate.wait().is_none() {
        return done(tx, job, 0, None, w.out);
    }
    let mut t = Timer::new(job, shared, tx);
    let deadline = shared.runtime_ns.unwrap_or(u64::MAX);
    let mut error = None;
    loop {
        let over =
            t.stopped() || count.is_some_and(|c| w.out.writes >= c) || t.elapsed() >= deadline;
        if over || w.pending.len() as u64 >= w.every {
            if let Err(e) = w.commit(&mut t) {
                error = Some(e);
                break;
            }
            if over {
                break;
            }
        }
        if let Err(e) = w.write(&mut t) {
            error = Some(e);
            break;
        }
    }
    let end_ns = t.elapsed();
    t.flush(end_ns);
    done(tx, job, end_ns, error, w.out);
}

fn done(tx: &Sender<JobMsg>, job: usize, end_ns: u64, error: Option<RunError>, w: Written) {
    let _ = tx.send(JobMsg::Witnessed(Box::new(w)));
    let _ = tx.send(JobMsg::Done {
        job,
        end_ns,
        error,
        fsync_ns: None,
    });
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
    #[error("the witness has no session of host {host} on {target}")]
    NoSession { host: String, target: String },
}

/// Reads back every block the witness recorded for `session` on `target` and judges it;
/// without a session, the witness's newest of this host on this target.
pub fn verify(
    target: &Path,
    witness: &Remote,
    session: Option<i64>,
) -> Result<Verdict, VerifyError> {
    verify_on(&TargetInfo::probe(target, None, false)?, witness, session)
}

/// The witness's newest session of this host on `target`: the writer's, found from the
/// witness alone (a writer on the machine whose power was cut may have printed nothing).
fn newest_session(info: &TargetInfo, witness: &Remote) -> Result<i64, VerifyError> {
    let q = shared::flushcheck::SessionQuery {
        host: crate::env::hostname(),
        target: info.path.display().to_string(),
    };
    let query = serde_urlencoded::to_string(&q).map_err(|e| VerifyError::Witness(e.into()))?;
    let sessions: Vec<Session> = witness
        .get(
            &format!("/api/v1/witness?{query}"),
            "list the witness's sessions",
        )
        .and_then(|b| serde_json::from_str(&b).map_err(|e| anyhow!("its sessions: {e}")))
        .map_err(VerifyError::Witness)?;
    sessions
        .first()
        .map(|s| s.id)
        .ok_or(VerifyError::NoSession {
            host: q.host,
            target: q.target,
        })
}

/// [`verify`] on a target already checked and opened (the API's, by its access policy).
pub fn verify_on(
    info: &TargetInfo,
    witness: &Remote,
    session: Option<i64>,
) -> Result<Verdict, VerifyError> {
    let session = match session {
        Some(s) => s,
        None => newest_session(info, witness)?,
    };
    // The records page by page (a session over a whole drive holds millions): each page
    // judged as it comes, so memory stays at one page whatever the session's size.
    let page = |after: Option<u64>| -> Result<Records, VerifyError> {
        let q = after.map_or(String::new(), |a| format!("?after={a}"));
        witness
            .get(
                &format!("/api/v1/witness/{session}{q}"),
                "read the witness's records",
            )
            .and_then(|b| serde_json::from_str(&b).map_err(|e| anyhow!("its records: {e}")))
            .map_err(VerifyError::Witness)
    };
    let mut r = page(None)?;
    // The witness's word on the block size sizes the buffer: held to what a writer makes.
    if let Some(why) = r.session.new.problem() {
        return Err(VerifyError::Witness(anyhow!(
            "its session {session}: {why}"
        )));
    }
    let file = info.open(false, true)?;
    let (bs, nonce) = (r.session.new.bs, r.session.new.nonce);
    let mut pool = BufferPool::new(bs as usize, 1, false).map_err(VerifyError::Buffer)?;
    let mut v = Verdict {
        session,
        acked_last_seq: r.session.last_seq,
        ..Verdict::default()
    };
    loop {
        for rec in &r.records {
            let buf = pool.get_mut(0);
            let (state, found_seq) = match file.read_exact_at(buf, rec.offset) {
                Ok(()) => judge(buf, rec.offset, nonce, rec.seq),
                Err(_) => (BlockState::Unreadable, None),
            };
            v.count(Finding {
                offset: rec.offset,
                recorded_seq: rec.seq,
                found_seq,
                state,
            });
        }
        match r.next_after {
            // Pages go forward, each past the last record read: a witness that answers
            // otherwise (the same page again) would keep the read-back going for ever.
            Some(after) if r.records.last().is_some_and(|l| l.offset <= after) => {
                r = page(Some(after))?;
                if r.records.first().is_some_and(|f| f.offset <= after) {
                    return Err(VerifyError::Witness(anyhow!(
                        "its records of session {session} did not go forward past offset {after}"
                    )));
                }
            }
            Some(after) => {
                return Err(VerifyError::Witness(anyhow!(
                    "its page of session {session} ended at offset {after} before its records did"
                )))
            }
            None => return Ok(v.finish()),
        }
    }
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
