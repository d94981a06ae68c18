//! Recorded I/O traces: read from fio iologs (v2, v3), `blkparse` text and blktrace binary
//! files (gzip-compressed or not), into one list of I/Os in issue order with their times.
//! [`library`] holds the built-in application traces and the agent's trace directory;
//! [`record`] captures a new trace with blktrace.
//!
//! Parsers take bytes, never paths, so fixtures test them; every count they keep is bounded
//! ([`MAX_OPS`], [`MAX_TRACE_BYTES`]).

mod blkparse;
mod blktrace;
mod iolog;
pub mod library;
pub mod record;

use std::io::Read;

/// Most I/Os a trace may hold (24 bytes each in memory).
pub const MAX_OPS: usize = 4_000_000;
/// Most bytes a trace may have, decompressed.
pub const MAX_TRACE_BYTES: u64 = 1 << 30;
/// Longest single I/O a trace may hold.
pub const MAX_OP_LEN: u64 = shared::spec::MAX_BS;

/// What one traced I/O does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpKind {
    Read,
    Write,
    Trim,
    Flush,
}

impl OpKind {
    pub fn as_str(self) -> &'static str {
        match self {
            OpKind::Read => "read",
            OpKind::Write => "write",
            OpKind::Trim => "trim",
            OpKind::Flush => "flush",
        }
    }
}

/// One traced I/O: issued `at_ns` after the trace's first I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceOp {
    pub at_ns: u64,
    pub offset: u64,
    pub len: u32,
    pub kind: OpKind,
}

/// A parsed trace.
#[derive(Clone, Debug, Default)]
pub struct Trace {
    pub ops: Vec<TraceOp>,
    /// The I/Os carry real times (iolog v3, blktrace, v2 with waits).
    pub timed: bool,
    pub format: &'static str,
    /// Lines or records that were not I/O (file actions, other events).
    pub ignored: u64,
}

impl Trace {
    pub fn has(&self, kind: OpKind) -> bool {
        self.ops.iter().any(|o| o.kind == kind)
    }

    /// The longest read or write.
    pub fn max_len(&self) -> u64 {
        self.ops
            .iter()
            .filter(|o| matches!(o.kind, OpKind::Read | OpKind::Write))
            .map(|o| u64::from(o.len))
            .max()
            .unwrap_or(0)
    }

    /// Times relative to the first I/O, in issue order (stable for equal times).
    fn normalize(&mut self) {
        self.ops.sort_by_key(|o| o.at_ns);
        if let Some(t0) = self.ops.first().map(|o| o.at_ns) {
            for o in &mut self.ops {
                o.at_ns -= t0;
            }
        }
    }

    /// Adds one I/O (a flush carries no offset or length); `line` names it in errors.
    fn push(&mut self, mut op: TraceOp, line: usize) -> Result<(), TraceError> {
        if op.kind == OpKind::Flush {
            (op.offset, op.len) = (0, 0);
        }
        if self.ops.len() >= MAX_OPS {
            return Err(TraceError::TooLarge(format!("more than {MAX_OPS} I/Os")));
        }
        let data = matches!(op.kind, OpKind::Read | OpKind::Write);
        if data && u64::from(op.len) > MAX_OP_LEN {
            return Err(TraceError::Bad {
                line,
                why: format!("an I/O of {} B, longer than {MAX_OP_LEN} B", op.len),
            });
        }
        if op.len == 0 && op.kind != OpKind::Flush {
            self.ignored += 1;
            return Ok(());
        }
        self.ops.push(op);
        Ok(())
    }
}

/// Why a trace could not be read.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    #[error("cannot read trace {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("trace record {line}: {why}")]
    Bad { line: usize, why: String },
    #[error("trace is too large: {0}")]
    TooLarge(String),
    #[error("not a trace diskscope reads (fio iolog v2/v3, blkparse text, blktrace binary): {0}")]
    Unknown(String),
    #[error("the trace holds no reads, writes, trims or flushes")]
    Empty,
    #[error("unknown trace '{0}': not a built-in trace nor a file in the trace directory (GET /api/traces lists them)")]
    NotFound(String),
}

/// Parses a trace from its bytes (gzip-compressed or not), detecting the format.
pub fn parse(bytes: &[u8]) -> Result<Trace, TraceError> {
    if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(bytes)
            .take(MAX_TRACE_BYTES + 1)
            .read_to_end(&mut out)
            .map_err(|e| TraceError::Unknown(format!("gzip: {e}")))?;
        if out.len() as u64 > MAX_TRACE_BYTES {
            return Err(TraceError::TooLarge(format!(
                "more than {MAX_TRACE_BYTES} B decompressed"
            )));
        }
        return parse(&out);
    }
    let mut trace = if blktrace::is_blktrace(bytes) {
        blktrace::parse(bytes)?
    } else {
        let text = std::str::from_utf8(bytes)
            .map_err(|_| TraceError::Unknown("binary data without blktrace's magic".into()))?;
        let first = text.lines().next().unwrap_or("").trim();
        if first.starts_with("fio version 2 iolog") {
            iolog::parse(text, 2)?
        } else if first.starts_with("fio version 3 iolog") {
            iolog::parse(text, 3)?
        } else if first.starts_with("fio version") {
            return Err(TraceError::Unknown(format!(
                "'{first}' (iolog v1 is not read)"
            )));
        } else {
            blkparse::parse(text)?
        }
    };
    if trace.ops.is_empty() {
        return Err(TraceError::Empty);
    }
    trace.normalize();
    Ok(trace)
}

/// Reads and parses a trace file (at most [`MAX_TRACE_BYTES`]).
pub fn read_file(path: &std::path::Path) -> Result<Trace, TraceError> {
    let io = |source| TraceError::Io {
        path: path.display().to_string(),
        source,
    };
    let f = std::fs::File::open(path).map_err(io)?;
    let mut bytes = Vec::new();
    f.take(MAX_TRACE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > MAX_TRACE_BYTES {
        return Err(TraceError::TooLarge(format!(
            "{} is over {MAX_TRACE_BYTES} B",
            path.display()
        )));
    }
    parse(&bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn gzip_is_unpacked_and_the_format_detected() {
        let text = "fio version 2 iolog\n/f add\n/f open\n/f read 0 4096\n/f write 8192 512\n";
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(text.as_bytes()).expect("gz");
        let t = parse(&gz.finish().expect("gz")).expect("trace");
        assert_eq!(t.format, "fio iolog v2");
        assert_eq!(t.ops.len(), 2);
        assert_eq!(t.ops[1].kind, OpKind::Write);
        assert_eq!(t.ignored, 2);
    }

    #[test]
    fn garbage_and_empty_traces_are_refused() {
        assert!(matches!(
            parse(&[0, 1, 2, 0xff]),
            Err(TraceError::Unknown(_))
        ));
        assert!(matches!(
            parse(b"fio version 1 iolog\n"),
            Err(TraceError::Unknown(_))
        ));
        assert!(matches!(
            parse(b"fio version 3 iolog\n0 /f add\n"),
            Err(TraceError::Empty)
        ));
    }
}
