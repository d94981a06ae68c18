//! The witness of flush checks: sessions and the newest durable write of each block
//! ([`shared::flushcheck`]). A batch is committed with `synchronous=FULL` before the writer
//! is answered, so a record acknowledged survives the witness's own crash or power loss;
//! batches are taken only in the order they were written (each sequence above the last).

use super::{Store, StoreError};
use rusqlite::{params, OptionalExtension};
use shared::flushcheck::{NewSession, Record, Records, Session};

/// Why a batch of records was refused.
#[derive(Debug, thiserror::Error)]
pub enum WitnessError {
    #[error("no witness session {0}")]
    NoSession(i64),
    #[error("record {index}: sequence {seq} is not above the session's last acknowledged {last}: records are taken in the order they were written")]
    OutOfOrder { index: usize, seq: u64, last: u64 },
    #[error("record {index}: offset {offset} is not a block of the session's span ({start} + {blocks} blocks of {bs} bytes)")]
    OutOfSpan {
        index: usize,
        offset: u64,
        start: u64,
        blocks: u64,
        bs: u64,
    },
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<rusqlite::Error> for WitnessError {
    fn from(e: rusqlite::Error) -> Self {
        WitnessError::Store(StoreError::Sql(e))
    }
}

fn session_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Session> {
    Ok(Session {
        id: r.get(0)?,
        created_ms: r.get::<_, i64>(1)? as u64,
        new: NewSession {
            target: r.get(2)?,
            host: r.get(3)?,
            bs: r.get::<_, i64>(4)? as u64,
            start: r.get::<_, i64>(5)? as u64,
            blocks: r.get::<_, i64>(6)? as u64,
            // Stored as the same 64 bits.
            nonce: r.get::<_, i64>(7)? as u64,
        },
        acked: r.get::<_, i64>(8)? as u64,
        last_seq: r.get::<_, i64>(9)? as u64,
    })
}

fn session_on(conn: &rusqlite::Connection, id: i64) -> Result<Session, WitnessError> {
    conn.query_row(
        &format!("SELECT {SESSION_COLUMNS} FROM witness_sessions WHERE id = ?1"),
        [id],
        session_row,
    )
    .optional()?
    .ok_or(WitnessError::NoSession(id))
}

const SESSION_COLUMNS: &str =
    "id, created_ms, target, host, bs, start, blocks, nonce, acked, last_seq";

impl Store {
    pub fn witness_open(&self, s: &NewSession, now_ms: u64) -> Result<Session, WitnessError> {
        let conn = self.conn();
        conn.execute(
            "INSERT INTO witness_sessions (created_ms, target, host, bs, start, blocks, nonce)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                now_ms as i64,
                s.target,
                s.host,
                s.bs as i64,
                s.start as i64,
                s.blocks as i64,
                s.nonce as i64
            ],
        )?;
        let id = conn.last_insert_rowid();
        drop(conn);
        self.witness_session(id)
    }

    pub fn witness_session(&self, id: i64) -> Result<Session, WitnessError> {
        session_on(&self.conn(), id)
    }

    /// Sessions of a writer's host and target, newest first (at most
    /// [`shared::flushcheck::MAX_SESSIONS_LISTED`]).
    pub fn witness_sessions(&self, host: &str, target: &str) -> Result<Vec<Session>, WitnessError> {
        let conn = self.conn();
        let mut st = conn.prepare(&format!(
            "SELECT {SESSION_COLUMNS} FROM witness_sessions WHERE host = ?1 AND target = ?2
             ORDER BY id DESC LIMIT ?3"
        ))?;
        let rows = st.query_map(
            params![host, target, shared::flushcheck::MAX_SESSIONS_LISTED as i64],
            session_row,
        )?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Appends a batch, durably, and answers the session as it now stands. The session is
    /// read, the batch checked against it and written under one hold of the connection:
    /// two batches sent at once cannot both pass the order check against the same last
    /// sequence.
    pub fn witness_append(&self, id: i64, records: &[Record]) -> Result<Session, WitnessError> {
        let mut conn = self.conn();
        let s = session_on(&conn, id)?;
        let n = &s.new;
        let mut last = s.last_seq;
        for (index, r) in records.iter().enumerate() {
            if r.seq <= last {
                return Err(WitnessError::OutOfOrder {
                    index,
                    seq: r.seq,
                    last,
                });
            }
            last = r.seq;
            let end = n.start.saturating_add(n.blocks.saturating_mul(n.bs));
            if n.bs == 0
                || r.offset < n.start
                || r.offset >= end
                || !(r.offset - n.start).is_multiple_of(n.bs)
            {
                return Err(WitnessError::OutOfSpan {
                    index,
                    offset: r.offset,
                    start: n.start,
                    blocks: n.blocks,
                    bs: n.bs,
                });
            }
        }
        // Durable before the answer: a record acknowledged is on this agent's disk.
        conn.pragma_update(None, "synchronous", "FULL")?;
        let result = (|| -> Result<(), rusqlite::Error> {
            let tx = conn.transaction()?;
            {
                let mut put = tx.prepare_cached(
                    "INSERT INTO witness_records (session_id, offset, seq) VALUES (?1, ?2, ?3)
                     ON CONFLICT (session_id, offset) DO UPDATE SET seq = excluded.seq",
                )?;
                for r in records {
                    put.execute(params![id, r.offset as i64, r.seq as i64])?;
                }
            }
            tx.execute(
                "UPDATE witness_sessions SET acked = acked + ?2, last_seq = ?3 WHERE id = ?1",
                params![id, records.len() as i64, last as i64],
            )?;
            tx.commit()
        })();
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        result?;
        session_on(&conn, id)
    }

    /// The session and a page of its blocks' newest durable writes, by offset: those past
    /// `after` (all without), at most `limit`; `next_after` when more follow.
    pub fn witness_records(
        &self,
        id: i64,
        after: Option<u64>,
        limit: u32,
    ) -> Result<Records, WitnessError> {
        let session = self.witness_session(id)?;
        let conn = self.conn();
        let mut q = conn.prepare(
            "SELECT offset, seq FROM witness_records WHERE session_id = ?1 AND offset > ?2
             ORDER BY offset LIMIT ?3",
        )?;
        // Offsets are stored as SQLite's signed integers (at most 2^63 - 1, as sessions are
        // checked): -1 is before the first, and an `after` past them all finds none.
        let from = after.map_or(-1, |a| i64::try_from(a).unwrap_or(i64::MAX));
        let mut records = q
            .query_map(params![id, from, i64::from(limit) + 1], |r| {
                Ok(Record {
                    offset: r.get::<_, i64>(0)? as u64,
                    seq: r.get::<_, i64>(1)? as u64,
                })
            })?
            .collect::<Result<Vec<_>, _>>()?;
        let more = records.len() > limit as usize;
        records.truncate(limit as usize);
        let next_after = more.then(|| records.last().map(|r| r.offset)).flatten();
        Ok(Records {
            session,
            records,
            next_after,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_are_kept_in_order_and_the_newest_write_wins() {
        let dir = tempfile::tempdir().expect("dir");
        let store = Store::open(&dir.path().join("w.db")).expect("store");
        let s = store
            .witness_open(
                &NewSession {
                    target: "/dev/sdz".into(),
                    host: "capture".into(),
                    bs: 4096,
                    start: 0,
                    blocks: 16,
                    nonce: u64::MAX - 5,
                },
                1,
            )
            .expect("open");
        let rec = |offset, seq| Record { offset, seq };
        let a = store
            .witness_append(s.id, &[rec(0, 1), rec(8192, 2)])
            .expect("append");
        assert_eq!((a.acked, a.last_seq, a.new.nonce), (2, 2, u64::MAX - 5));
        store.witness_append(s.id, &[rec(0, 5)]).expect("a rewrite");
        let err = store
            .witness_append(s.id, &[rec(4096, 4)])
            .expect_err("older");
        assert!(err.to_string().contains("sequence 4 is not above"), "{err}");
        let err = store
            .witness_append(s.id, &[rec(4097, 9)])
            .expect_err("unaligned");
        assert!(err.to_string().contains("offset 4097"), "{err}");
        let err = store
            .witness_append(s.id, &[rec(16 * 4096, 9)])
            .expect_err("past the span");
        assert!(err.to_string().contains("is not a block"), "{err}");
        assert!(matches!(
            store.witness_append(s.id + 1, &[rec(0, 9)]),
            Err(WitnessError::NoSession(_))
        ));
        drop(store);
        // Reopened (a restarted witness): every acknowledged record is there.
        let store = Store::open(&dir.path().join("w.db")).expect("reopen");
        let r = store.witness_records(s.id, None, 100).expect("records");
        assert_eq!(r.records, vec![rec(0, 5), rec(8192, 2)]);
        assert_eq!(r.next_after, None);
        assert_eq!((r.session.acked, r.session.last_seq), (3, 5));
        // Page by page: one record a page, each page after the last one's offset.
        let first = store.witness_records(s.id, None, 1).expect("page 1");
        assert_eq!(
            (first.records.clone(), first.next_after),
            (vec![rec(0, 5)], Some(0))
        );
        let second = store
            .witness_records(s.id, first.next_after, 1)
            .expect("page 2");
        assert_eq!(
            (second.records, second.next_after),
            (vec![rec(8192, 2)], None)
        );
        // The largest `after` a query takes: past every offset, not wrapped to the start.
        let past = store
            .witness_records(s.id, Some(u64::MAX), 10)
            .expect("past");
        assert_eq!((past.records, past.next_after), (vec![], None));
    }
}
