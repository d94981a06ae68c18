//! Run history in an embedded SQLite file (`diskscope.db` in the data directory).
//!
//! WAL mode; migrations are the versioned SQL files in `migrations/`, applied in order and
//! recorded in `PRAGMA user_version`. A run's samples are written as they arrive, one
//! transaction per interval, so killing the agent loses at most the interval in progress;
//! [`Store::interrupt_leftovers`] marks runs left `running` by a dead agent as `interrupted`.
//! Deleting a run deletes its samples, histogram and snapshots (foreign keys cascade). The
//! schema is documented in `docs/database.md`.

use rusqlite::{params, Connection, OptionalExtension};
use serde::de::DeserializeOwned;
use shared::analysis::{Analysis, Timeline};
use shared::api::RunInfo;
use shared::{
    Environment, HistogramDump, RunError, RunStatus, RunSummary, Sample, StepReport, WorkloadSpec,
};
use std::path::Path;
use std::sync::{Mutex, MutexGuard};

pub mod witness;

/// A u64 query bound as SQLite's i64: values beyond i64::MAX saturate (a bound past every
/// row, never a negative one that matches everything).
fn sql_int(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

const MIGRATIONS: &[&str] = &[
    include_str!("migrations/0001_init.sql"),
    include_str!("migrations/0002_steps_timeline.sql"),
    include_str!("migrations/0003_targets.sql"),
    include_str!("migrations/0004_exact_timeline.sql"),
    include_str!("migrations/0005_sample_rates.sql"),
    include_str!("migrations/0006_drop_device_snapshots.sql"),
    include_str!("migrations/0007_run_plan.sql"),
    include_str!("migrations/0008_job_file.sql"),
    include_str!("migrations/0009_witness.sql"),
];

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database error: {0}")]
    Sql(#[from] rusqlite::Error),
    #[error("corrupt JSON in the database: {0}")]
    Json(#[from] serde_json::Error),
    /// Reading what is to be stored failed (the run's timeline spill).
    #[error("cannot read the data to store: {0}")]
    Io(String),
    #[error(
        "the database {path} has schema version {found}, newer than this diskscope knows ({known})"
    )]
    TooNew {
        path: String,
        found: i64,
        known: i64,
    },
}

pub type RunId = i64;

/// A run about to start.
#[derive(Debug)]
pub struct NewRun<'a> {
    pub name: Option<&'a str>,
    pub target: &'a str,
    pub preset: Option<&'a str>,
    pub spec: &'a WorkloadSpec,
    pub created_ms: u64,
    /// The steps as planned (empty: not known).
    pub plan: &'a [shared::preset::PlannedStep],
    /// The fio job file's text, for a run started from one.
    pub job_file: Option<&'a str>,
}

/// How a run ended, as stored.
#[derive(Debug)]
pub struct RunEnd<'a> {
    pub state: RunStatus,
    pub ended_ms: u64,
    pub environment: Option<&'a Environment>,
    pub summary: Option<&'a RunSummary>,
    pub error: Option<&'a RunError>,
    pub histogram: Option<&'a HistogramDump>,
    pub steps: &'a [StepReport],
    pub analysis: Option<&'a Analysis>,
    pub timeline: Option<&'a Timeline>,
    pub targets: &'a [shared::TargetPart],
}

/// Filters and paging for the run list.
#[derive(Debug, Default, Clone)]
pub struct RunQuery {
    pub target: Option<String>,
    pub preset: Option<String>,
    pub state: Option<RunStatus>,
    /// Created at or after / before (Unix ms).
    pub since_ms: Option<u64>,
    pub until_ms: Option<u64>,
    pub page: u32,
    pub per_page: u32,
}

#[derive(Debug)]
pub struct Store {
    conn: Mutex<Connection>,
    path: std::path::PathBuf,
}

impl Store {
    /// Opens (creating if needed) and migrates the database at `path`.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        let conn = Connection::open(path)?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        // 1 MiB of page cache (SQLite's default is 2): the agent appends and scans, the
        // kernel's page cache holds the file anyway, and this is memory a long run fills.
        conn.pragma_update(None, "cache_size", -1024)?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        migrate(&conn, &path.display().to_string())?;
        Ok(Store {
            conn: Mutex::new(conn),
            path: path.to_path_buf(),
        })
    }

    /// The database file (named in errors about storing).
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn conn(&self) -> MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn create_run(&self, r: &NewRun<'_>) -> Result<RunId, StoreError> {
        let spec = serde_json::to_string(r.spec)?;
        let plan = (!r.plan.is_empty())
            .then(|| serde_json::to_string(r.plan))
            .transpose()?;
        let conn = self.conn();
        conn.execute(
            "INSERT INTO runs (name, target, preset, state, created_ms, spec_json, plan_json, job_file)
             VALUES (?1, ?2, ?3, 'running', ?4, ?5, ?6, ?7)",
            params![r.name, r.target, r.preset, r.created_ms as i64, spec, plan, r.job_file],
        )?;
        Ok(conn.last_insert_rowid())
    }

    /// Appends one sample in its own transaction.
    pub fn append_sample(&self, run: RunId, s: &Sample) -> Result<(), StoreError> {
        self.append_samples(run, std::slice::from_ref(s))
    }

    /// Appends samples in one transaction (imports, synthetic histories).
    pub fn append_samples(&self, run: RunId, samples: &[Sample]) -> Result<(), StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        for s in samples {
            insert_sample(&tx, run, s)?;
        }
        tx.commit()?;
        Ok(())
    }

    pub fn finish_run(&self, run: RunId, end: &RunEnd<'_>) -> Result<(), StoreError> {
        let env = end.environment.map(serde_json::to_string).transpose()?;
        let summary = end.summary.map(serde_json::to_string).transpose()?;
        let error = end.error.map(serde_json::to_string).transpose()?;
        let hist = end.histogram.map(serde_json::to_string).transpose()?;
        let steps = (!end.steps.is_empty())
            .then(|| serde_json::to_string(end.steps))
            .transpose()?;
        let analysis = end.analysis.map(serde_json::to_string).transpose()?;
        let timeline = end.timeline.map(serde_json::to_string).transpose()?;
        let targets = (!end.targets.is_empty())
            .then(|| serde_json::to_string(end.targets))
            .transpose()?;
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        tx.execute(
            "UPDATE runs SET state = ?2, ended_ms = ?3, environment_json = ?4, summary_json = ?5,
                 error_json = ?6, steps_json = ?7, analysis_json = ?8, targets_json = ?9
             WHERE id = ?1",
            params![
                run,
                end.state.as_str(),
                end.ended_ms as i64,
                env,
                summary,
                error,
                steps,
                analysis,
                targets
            ],
        )?;
        if let Some(t) = timeline {
            tx.execute(
                "INSERT OR REPLACE INTO timelines (run_id, timeline_json) VALUES (?1, ?2)",
                params![run, t],
            )?;
        }
        if let Some(h) = hist {
            tx.execute(
                "INSERT OR REPLACE INTO histograms (run_id, dump_json) VALUES (?1, ?2)",
                params![run, h],
            )?;
        }
        tx.commit()?;
        Ok(())
    }

    /// Marks runs left `running` (by an agent that died) as `interrupted`; returns how many.
    pub fn interrupt_leftovers(&self) -> Result<usize, StoreError> {
        Ok(self.conn().execute(
            "UPDATE runs SET state = 'interrupted',
                 ended_ms = COALESCE((SELECT MAX(end_ns) FROM samples WHERE run_id = runs.id) / 1000000
                                     + created_ms, created_ms)
             WHERE state = 'running'",
            [],
        )?)
    }

    pub fn get_run(&self, run: RunId) -> Result<Option<RunInfo>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(&format!("{RUN_COLUMNS} WHERE id = ?1"))?;
        let row = stmt.query_row([run], raw_run).optional()?;
        row.map(RawRun::into_info).transpose()
    }

    /// Runs matching `q`, newest first, and the total that match.
    pub fn list_runs(&self, q: &RunQuery) -> Result<(Vec<RunInfo>, u64), StoreError> {
        let mut clauses = Vec::new();
        let mut args: Vec<rusqlite::types::Value> = Vec::new();
        if let Some(t) = &q.target {
            clauses.push("target = ?");
            args.push(t.clone().into());
        }
        if let Some(p) = &q.preset {
            clauses.push("preset = ?");
            args.push(p.clone().into());
        }
        if let Some(s) = q.state {
            clauses.push("state = ?");
            args.push(s.as_str().to_string().into());
        }
        if let Some(t) = q.since_ms {
            clauses.push("created_ms >= ?");
            args.push(sql_int(t).into());
        }
        if let Some(t) = q.until_ms {
            clauses.push("created_ms < ?");
            args.push(sql_int(t).into());
        }
        let filter = if clauses.is_empty() {
            String::new()
        } else {
            format!(" WHERE {}", clauses.join(" AND "))
        };
        let conn = self.conn();
        let total: i64 = conn.query_row(
            &format!("SELECT COUNT(*) FROM runs{filter}"),
            rusqlite::params_from_iter(args.iter()),
            |r| r.get(0),
        )?;
        let per_page = q.per_page.clamp(1, 500);
        let offset = i64::from(q.page.saturating_sub(1)) * i64::from(per_page);
        let mut page_args = args.clone();
        page_args.push(i64::from(per_page).into());
        page_args.push(offset.into());
        let mut stmt = conn.prepare(&format!(
            "{RUN_COLUMNS}{filter} ORDER BY created_ms DESC, id DESC LIMIT ? OFFSET ?"
        ))?;
        let rows = stmt
            .query_map(rusqlite::params_from_iter(page_args.iter()), raw_run)?
            .collect::<Result<Vec<_>, _>>()?;
        let runs = rows
            .into_iter()
            .map(|r| {
                // A page of the history carries no plans (a 10,000-step run's is large).
                RawRun { plan: None, ..r }.into_info()
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok((runs, total as u64))
    }

    /// Samples with `seq > after` (all when `None`), in order, at most `limit`.
    pub fn samples_after(
        &self,
        run: RunId,
        after: Option<u64>,
        limit: u32,
    ) -> Result<Vec<Sample>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(
            "SELECT sample_json FROM samples WHERE run_id = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3",
        )?;
        let after = after.map_or(-1, sql_int);
        let rows = stmt
            .query_map(params![run, after, i64::from(limit)], |r| {
                r.get::<_, String>(0)
            })?
            .collect::<Result<Vec<_>, _>>()?;
        rows.iter()
            .map(|j| serde_json::from_str(j).map_err(StoreError::from))
            .collect()
    }

    /// Samples with `seq` in `[from, to]`, at most `max_points` (≥ 2) of them: every one when
    /// they fit, else for each stretch of consecutive samples the slowest and the fastest
    /// (total MB/s), in `seq` order — the min/max envelope a chart of that width draws, at any
    /// run length. The scan reads two columns in pages (the lock is not held for a whole
    /// day's samples at once); only the chosen samples' JSON is parsed.
    pub fn samples_envelope(
        &self,
        run: RunId,
        from: u64,
        to: Option<u64>,
        max_points: u32,
    ) -> Result<Vec<Sample>, StoreError> {
        const PAGE: i64 = 50_000;
        let to = to.map_or(i64::MAX, sql_int);
        let from = sql_int(from);
        let (count, lo): (i64, Option<i64>) = self.conn().query_row(
            "SELECT count(*), min(seq) FROM samples WHERE run_id = ?1 AND seq BETWEEN ?2 AND ?3",
            params![run, from, to],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        let max_points = i64::from(max_points.max(2));
        let Some(lo) = lo else {
            return Ok(Vec::new());
        };
        if count <= max_points {
            return self.samples_after(
                run,
                lo.checked_sub(1).and_then(|x| u64::try_from(x).ok()),
                count as u32,
            );
        }
        // Seqs per stretch, so that two per stretch fit.
        let width = (count as u64).div_ceil(max_points as u64 / 2).max(1) as i64;
        let mut chosen: Vec<i64> = Vec::with_capacity(max_points as usize);
        let mut cur: Option<Stretch> = None;
        let mut after = lo - 1;
        loop {
            let rows: Vec<(i64, f64)> = {
                let conn = self.conn();
                let mut stmt = conn.prepare_cached(
                    "SELECT seq, read_mb_s + write_mb_s FROM samples \
                     WHERE run_id = ?1 AND seq > ?2 AND seq <= ?3 ORDER BY seq LIMIT ?4",
                )?;
                let rows = stmt
                    .query_map(params![run, after, to, PAGE], |r| {
                        Ok((r.get(0)?, r.get(1)?))
                    })?
                    .collect::<Result<Vec<_>, _>>()?;
                rows
            };
            let Some(last) = rows.last() else { break };
            after = last.0;
            for (seq, mbs) in &rows {
                let b = (seq - lo) / width;
                match &mut cur {
                    Some((cb, mn, mx)) if *cb == b => {
                        if *mbs < mn.1 {
                            *mn = (*seq, *mbs);
                        }
                        if *mbs > mx.1 {
                            *mx = (*seq, *mbs);
                        }
                    }
                    _ => {
                        if let Some((_, mn, mx)) = cur.take() {
                            push_pair(&mut chosen, mn.0, mx.0);
                        }
                        cur = Some((b, (*seq, *mbs), (*seq, *mbs)));
                    }
                }
            }
            if (rows.len() as i64) < PAGE {
                break;
            }
        }
        if let Some((_, mn, mx)) = cur.take() {
            push_pair(&mut chosen, mn.0, mx.0);
        }
        let conn = self.conn();
        let mut stmt =
            conn.prepare_cached("SELECT sample_json FROM samples WHERE run_id = ?1 AND seq = ?2")?;
        chosen
            .into_iter()
            .map(|seq| {
                let json: String = stmt.query_row(params![run, seq], |r| r.get(0))?;
                serde_json::from_str(&json).map_err(StoreError::from)
            })
            .collect()
    }

    /// Stores a run's exact 10 ms buckets, [`TIMELINE_CHUNK`] per row, one short transaction
    /// per row (a long timeline never holds the database for long).
    pub fn put_exact_timeline(
        &self,
        run: RunId,
        buckets: impl Iterator<Item = std::io::Result<u64>>,
    ) -> Result<u64, StoreError> {
        let mut chunk = 0i64;
        let mut buf: Vec<u8> = Vec::with_capacity(TIMELINE_CHUNK * 8);
        let mut n = 0u64;
        let put = |chunk: i64, buf: &[u8]| -> Result<(), StoreError> {
            self.conn().execute(
                "INSERT OR REPLACE INTO timeline_chunks (run_id, chunk, bytes) VALUES (?1, ?2, ?3)",
                params![run, chunk, buf],
            )?;
            Ok(())
        };
        for b in buckets {
            let b = b.map_err(|e| StoreError::Io(e.to_string()))?;
            buf.extend_from_slice(&b.to_le_bytes());
            n += 1;
            if buf.len() == TIMELINE_CHUNK * 8 {
                put(chunk, &buf)?;
                buf.clear();
                chunk += 1;
            }
        }
        if !buf.is_empty() {
            put(chunk, &buf)?;
        }
        Ok(n)
    }

    /// Chunks of a run's exact timeline from `from` on, at most `limit`, in order.
    pub fn exact_timeline_chunks(
        &self,
        run: RunId,
        from: u64,
        limit: u32,
    ) -> Result<Vec<Vec<u64>>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(
            "SELECT bytes FROM timeline_chunks WHERE run_id = ?1 AND chunk >= ?2 ORDER BY chunk LIMIT ?3",
        )?;
        let rows = stmt
            .query_map(params![run, sql_int(from), i64::from(limit)], |r| {
                r.get::<_, Vec<u8>>(0)
            })?
            .collect::<Result<Vec<_>, _>>()?;
        Ok(rows
            .into_iter()
            .map(|b| {
                b.chunks_exact(8)
                    .map(|c| {
                        let mut b = [0u8; 8];
                        b.copy_from_slice(c);
                        u64::from_le_bytes(b)
                    })
                    .collect()
            })
            .collect())
    }

    /// Parses the JSON in the first column of the one row `sql` selects for `run`, if any.
    fn json_row<T: DeserializeOwned>(
        &self,
        sql: &str,
        run: RunId,
    ) -> Result<Option<T>, StoreError> {
        let json: Option<String> = self.conn().query_row(sql, [run], |r| r.get(0)).optional()?;
        parse_opt(json)
    }

    /// The newest sample of a run.
    pub fn last_sample(&self, run: RunId) -> Result<Option<Sample>, StoreError> {
        self.json_row(
            "SELECT sample_json FROM samples WHERE run_id = ?1 ORDER BY seq DESC LIMIT 1",
            run,
        )
    }

    /// The fio job file a run was started from, if it was.
    pub fn job_file(&self, run: RunId) -> Result<Option<String>, StoreError> {
        let text: Option<Option<String>> = self
            .conn()
            .query_row("SELECT job_file FROM runs WHERE id = ?1", [run], |r| {
                r.get(0)
            })
            .optional()?;
        Ok(text.flatten())
    }

    pub fn histogram(&self, run: RunId) -> Result<Option<HistogramDump>, StoreError> {
        self.json_row("SELECT dump_json FROM histograms WHERE run_id = ?1", run)
    }

    /// Deletes a run and everything recorded with it. Returns whether it existed.
    pub fn timeline(&self, run: RunId) -> Result<Option<Timeline>, StoreError> {
        let conn = self.conn();
        let json: Option<String> = conn
            .query_row(
                "SELECT timeline_json FROM timelines WHERE run_id = ?1",
                [run],
                |r| r.get(0),
            )
            .optional()?;
        parse_opt(json)
    }

    pub fn delete_run(&self, run: RunId) -> Result<bool, StoreError> {
        Ok(self
            .conn()
            .execute("DELETE FROM runs WHERE id = ?1", [run])?
            > 0)
    }

    /// The newest run that read its writes back, with what the read-back found (metrics).
    pub fn latest_verify(
        &self,
    ) -> Result<Option<(RunId, shared::analysis::verify::Verify)>, StoreError> {
        let conn = self.conn();
        let row: Option<(RunId, String)> = conn
            .query_row(
                "SELECT id, analysis_json FROM runs
                 WHERE analysis_json LIKE '%\"verify\":%' ORDER BY id DESC LIMIT 1",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        let Some((id, json)) = row else {
            return Ok(None);
        };
        let a: Analysis = serde_json::from_str(&json)?;
        Ok(a.verify.map(|v| (id, v)))
    }

    /// Counts of runs by state, for metrics.
    pub fn count_by_state(&self) -> Result<Vec<(String, u64)>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare("SELECT state, COUNT(*) FROM runs GROUP BY state")?;
        let rows = stmt
            .query_map([], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? as u64))
            })?
            .collect::<Result<Vec<_>, _>>()?;
        Ok(rows)
    }
}

fn migrate(conn: &Connection, path: &str) -> Result<(), StoreError> {
    let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    let known = MIGRATIONS.len() as i64;
    if version > known {
        return Err(StoreError::TooNew {
            path: path.to_string(),
            found: version,
            known,
        });
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(version as usize) {
        conn.execute_batch(&format!(
            "BEGIN; {sql}\nPRAGMA user_version = {}; COMMIT;",
            i + 1
        ))?;
    }
    Ok(())
}

const RUN_COLUMNS: &str = "SELECT id, name, target, preset, state, created_ms, ended_ms, spec_json,
    environment_json, summary_json, error_json, steps_json, analysis_json, targets_json,
    plan_json FROM runs";

struct RawRun {
    id: i64,
    name: Option<String>,
    target: String,
    preset: Option<String>,
    state: String,
    created_ms: i64,
    ended_ms: Option<i64>,
    spec: String,
    environment: Option<String>,
    summary: Option<String>,
    error: Option<String>,
    steps: Option<String>,
    analysis: Option<String>,
    targets: Option<String>,
    plan: Option<String>,
}

fn raw_run(r: &rusqlite::Row<'_>) -> rusqlite::Result<RawRun> {
    Ok(RawRun {
        id: r.get(0)?,
        name: r.get(1)?,
        target: r.get(2)?,
        preset: r.get(3)?,
        state: r.get(4)?,
        created_ms: r.get(5)?,
        ended_ms: r.get(6)?,
        spec: r.get(7)?,
        environment: r.get(8)?,
        summary: r.get(9)?,
        error: r.get(10)?,
        steps: r.get(11)?,
        analysis: r.get(12)?,
        targets: r.get(13)?,
        plan: r.get(14)?,
    })
}

fn parse_opt<T: DeserializeOwned>(s: Option<String>) -> Result<Option<T>, StoreError> {
    s.map(|j| serde_json::from_str(&j).map_err(StoreError::from))
        .transpose()
}

impl RawRun {
    fn into_info(self) -> Result<RunInfo, StoreError> {
        let mut info = RunInfo {
            id: self.id,
            name: self.name,
            target: self.target,
            preset: self.preset,
            status: RunStatus::parse(&self.state).unwrap_or(RunStatus::Interrupted),
            created_ms: self.created_ms as u64,
            ended_ms: self.ended_ms.map(|v| v as u64),
            spec: serde_json::from_str(&self.spec)?,
            environment: parse_opt(self.environment)?,
            summary: parse_opt(self.summary)?,
            error: parse_opt(self.error)?,
            steps: parse_opt(self.steps)?.unwrap_or_default(),
            analysis: parse_opt(self.analysis)?,
            targets: parse_opt(self.targets)?.unwrap_or_default(),
            plan: parse_opt(self.plan)?.unwrap_or_default(),
            line: String::new(),
            findings: Vec::new(),
        };
        info.line = shared::headline::line(&info);
        info.findings = info
            .analysis
            .as_ref()
            .map(shared::analysis::Analysis::summary_lines)
            .unwrap_or_default();
        Ok(info)
    }
}

/// One sample row (inside the caller's transaction).
fn insert_sample(tx: &rusqlite::Transaction<'_>, run: RunId, s: &Sample) -> Result<(), StoreError> {
    let json = serde_json::to_string(s)?;
    let mut stmt = tx.prepare_cached(
        "INSERT INTO samples (run_id, seq, start_ns, end_ns, read_bytes, read_mb_s, read_iops,
                 read_p99_ns, write_bytes, write_mb_s, write_iops, write_p99_ns, offset_lo,
                 offset_hi, sample_json)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
    )?;
    stmt.execute(params![
        run,
        s.seq as i64,
        s.start_ns as i64,
        s.end_ns as i64,
        s.read.bytes as i64,
        s.read.mb_s,
        s.read.iops,
        s.read.lat.p99_ns as i64,
        s.write.bytes as i64,
        s.write.mb_s,
        s.write.iops,
        s.write.lat.p99_ns as i64,
        s.offset_lo.map(|v| v as i64),
        s.offset_hi.map(|v| v as i64),
        json
    ])?;
    Ok(())
}

/// Buckets per row of `timeline_chunks` (32 KiB, 41 s of 10 ms buckets).
pub const TIMELINE_CHUNK: usize = 4096;

/// The two samples a stretch contributes, in `seq` order (one when they are the same).
fn push_pair(out: &mut Vec<i64>, a: i64, b: i64) {
    out.push(a.min(b));
    if a != b {
        out.push(a.max(b));
    }
}

/// Where a stretch of the envelope is: its index, and its slowest and fastest sample as
/// `(seq, MB/s)`.
type Stretch = (i64, (i64, f64), (i64, f64));

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().expect("tempdir");
        let s = Store::open(&dir.path().join("t.db")).expect("open");
        (dir, s)
    }

    fn new_run<'a>(spec: &'a WorkloadSpec, target: &'a str, at: u64) -> NewRun<'a> {
        NewRun {
            name: None,
            target,
            preset: None,
            spec,
            plan: &[],
            created_ms: at,
            job_file: None,
        }
    }

    #[test]
    fn samples_round_trip_in_order_and_resume_after_a_seq() {
        let (_d, s) = store();
        let spec = WorkloadSpec::default();
        let id = s.create_run(&new_run(&spec, "/t", 1)).expect("create");
        for seq in 0..5 {
            let sample = Sample {
                seq,
                end_ns: (seq + 1) * 1_000_000_000,
                ..Sample::default()
            };
            s.append_sample(id, &sample).expect("append");
        }
        let all = s.samples_after(id, None, 100).expect("all");
        assert_eq!(
            all.iter().map(|x| x.seq).collect::<Vec<_>>(),
            vec![0, 1, 2, 3, 4]
        );
        let rest = s.samples_after(id, Some(2), 100).expect("rest");
        assert_eq!(rest.iter().map(|x| x.seq).collect::<Vec<_>>(), vec![3, 4]);
        assert!(
            s.append_sample(id, &all[0]).is_err(),
            "a duplicate seq is refused"
        );
    }

    #[test]
    fn leftovers_become_interrupted_and_delete_cascades() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.db");
        let spec = WorkloadSpec::default();
        let id = {
            let s = Store::open(&path).expect("open");
            let id = s.create_run(&new_run(&spec, "/t", 1000)).expect("create");
            s.append_sample(id, &Sample::default()).expect("append");
            id
        };
        let s = Store::open(&path).expect("reopen");
        assert_eq!(s.interrupt_leftovers().expect("interrupt"), 1);
        let run = s.get_run(id).expect("get").expect("exists");
        assert_eq!(run.status, RunStatus::Interrupted);
        assert_eq!(s.samples_after(id, None, 10).expect("samples").len(), 1);
        assert!(s.delete_run(id).expect("delete"));
        assert!(s.get_run(id).expect("get").is_none());
        let n: i64 = s
            .conn()
            .query_row("SELECT COUNT(*) FROM samples", [], |r| r.get(0))
            .expect("count");
        assert_eq!(n, 0, "samples go with their run");
    }

    #[test]
    fn list_filters_and_pages() {
        let (_d, s) = store();
        let spec = WorkloadSpec::default();
        for i in 0..7u64 {
            let target = if i % 2 == 0 { "/a" } else { "/b" };
            s.create_run(&new_run(&spec, target, 1000 + i))
                .expect("create");
        }
        let q = RunQuery {
            target: Some("/a".into()),
            page: 1,
            per_page: 3,
            ..RunQuery::default()
        };
        let (runs, total) = s.list_runs(&q).expect("list");
        assert_eq!((runs.len(), total), (3, 4));
        assert!(
            runs.windows(2).all(|w| w[0].created_ms > w[1].created_ms),
            "newest first"
        );
        let (runs, _) = s.list_runs(&RunQuery { page: 2, ..q }).expect("page 2");
        assert_eq!(runs.len(), 1);
        let (_, total) = s
            .list_runs(&RunQuery {
                since_ms: Some(1005),
                per_page: 10,
                ..RunQuery::default()
            })
            .expect("since");
        assert_eq!(total, 2);
    }
}
