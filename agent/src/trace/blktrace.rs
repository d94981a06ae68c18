//! blktrace's binary records (`struct blk_io_trace`, 48 bytes, then `pdu_len` bytes), as
//! `blktrace -o -` streams them or one per-CPU file holds them, in the byte order of the
//! machine that recorded (detected from the magic). Like the text parser it keeps the
//! requests issued to the driver (`D`), or the queued ones (`Q`) when none were issued.

use super::{OpKind, Trace, TraceError, TraceOp};

const MAGIC: u32 = 0x6561_7400;
const RECORD: usize = 48;
/// Actions (low 16 bits).
const TA_QUEUE: u32 = 1;
const TA_ISSUE: u32 = 7;
/// Categories (high 16 bits).
const TC_WRITE: u32 = 1 << 1;
const TC_FLUSH: u32 = 1 << 2;
const TC_PC: u32 = 1 << 9;
const TC_NOTIFY: u32 = 1 << 10;
const TC_DISCARD: u32 = 1 << 13;

/// Whether `bytes` start with a blktrace record (either byte order).
pub fn is_blktrace(bytes: &[u8]) -> bool {
    order(bytes).is_some()
}

/// `Some(little_endian)` when the first word is the magic.
fn order(bytes: &[u8]) -> Option<bool> {
    let w: [u8; 4] = bytes.get(..4)?.try_into().ok()?;
    if u32::from_le_bytes(w) & 0xffff_ff00 == MAGIC {
        Some(true)
    } else if u32::from_be_bytes(w) & 0xffff_ff00 == MAGIC {
        Some(false)
    } else {
        None
    }
}

struct Record {
    time: u64,
    sector: u64,
    bytes: u32,
    action: u32,
}

fn records(bytes: &[u8]) -> Result<Vec<Record>, TraceError> {
    let le = order(bytes).unwrap_or(true);
    let u32_at = |b: &[u8], i: usize| {
        let w = [b[i], b[i + 1], b[i + 2], b[i + 3]];
        if le {
            u32::from_le_bytes(w)
        } else {
            u32::from_be_bytes(w)
        }
    };
    let u64_at = |b: &[u8], i: usize| {
        let (lo, hi) = (u64::from(u32_at(b, i)), u64::from(u32_at(b, i + 4)));
        if le {
            lo | hi << 32
        } else {
            hi | lo << 32
        }
    };
    let mut out = Vec::new();
    let mut at = 0usize;
    while at + RECORD <= bytes.len() {
        let r = &bytes[at..at + RECORD];
        if u32_at(r, 0) & 0xffff_ff00 != MAGIC {
            return Err(TraceError::Bad {
                line: out.len() + 1,
                why: format!("no blktrace magic at byte {at}"),
            });
        }
        if out.len() >= super::MAX_OPS * 8 {
            return Err(TraceError::TooLarge("too many blktrace records".into()));
        }
        let pdu_len = if le {
            u16::from_le_bytes([r[46], r[47]])
        } else {
            u16::from_be_bytes([r[46], r[47]])
        };
        out.push(Record {
            time: u64_at(r, 8),
            sector: u64_at(r, 16),
            bytes: u32_at(r, 24),
            action: u32_at(r, 28),
        });
        at += RECORD + usize::from(pdu_len);
    }
    Ok(out)
}

pub fn parse(bytes: &[u8]) -> Result<Trace, TraceError> {
    let recs = records(bytes)?;
    let is_io = |r: &Record| (r.action >> 16) & (TC_NOTIFY | TC_PC) == 0;
    let want = if recs
        .iter()
        .any(|r| is_io(r) && r.action & 0xffff == TA_ISSUE)
    {
        TA_ISSUE
    } else {
        TA_QUEUE
    };
    let mut t = Trace {
        format: "blktrace binary",
        timed: true,
        ..Trace::default()
    };
    for (i, r) in recs.iter().enumerate() {
        if !is_io(r) || r.action & 0xffff != want {
            t.ignored += 1;
            continue;
        }
        let cat = r.action >> 16;
        let mut kinds = Vec::with_capacity(2);
        if cat & TC_FLUSH != 0 {
            kinds.push(OpKind::Flush);
        }
        if r.bytes > 0 {
            kinds.push(if cat & TC_DISCARD != 0 {
                OpKind::Trim
            } else if cat & TC_WRITE != 0 {
                OpKind::Write
            } else {
                OpKind::Read
            });
        }
        if kinds.is_empty() {
            t.ignored += 1;
        }
        for kind in kinds {
            let op = TraceOp {
                at_ns: r.time,
                offset: r.sector.saturating_mul(512),
                len: r.bytes,
                kind,
            };
            t.push(op, i + 1)?;
        }
    }
    Ok(t)
}

/// Builds one record (tests, and the fixtures of other modules' tests).
#[cfg(test)]
pub(crate) fn record(time: u64, sector: u64, bytes: u32, action: u32, pdu: &[u8]) -> Vec<u8> {
    let mut r = Vec::with_capacity(RECORD + pdu.len());
    r.extend_from_slice(&(MAGIC | 7).to_le_bytes());
    r.extend_from_slice(&0u32.to_le_bytes());
    r.extend_from_slice(&time.to_le_bytes());
    r.extend_from_slice(&sector.to_le_bytes());
    r.extend_from_slice(&bytes.to_le_bytes());
    r.extend_from_slice(&action.to_le_bytes());
    r.extend_from_slice(&[0u8; 12]);
    r.extend_from_slice(&0u16.to_le_bytes());
    r.extend_from_slice(&(pdu.len() as u16).to_le_bytes());
    r.extend_from_slice(pdu);
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    const READ: u32 = 1;

    #[test]
    fn issued_records_in_either_byte_order() {
        let mut b = Vec::new();
        b.extend(record(5, 8, 4096, TA_QUEUE | (READ << 16), &[]));
        b.extend(record(9, 8, 4096, TA_ISSUE | (READ << 16), &[]));
        // A notify record with a payload (a process name) is skipped whole.
        b.extend(record(9, 0, 0, (TC_NOTIFY << 16) | 1, b"cc1\0"));
        b.extend(record(
            20,
            64,
            8192,
            TA_ISSUE | ((TC_WRITE | TC_FLUSH) << 16),
            &[],
        ));
        b.extend(record(
            30,
            128,
            1 << 20,
            TA_ISSUE | ((TC_WRITE | TC_DISCARD) << 16),
            &[],
        ));
        b.extend(record(
            40,
            0,
            0,
            TA_ISSUE | ((TC_WRITE | TC_FLUSH) << 16),
            &[],
        ));
        let t = parse(&b).expect("trace");
        let got: Vec<_> = t
            .ops
            .iter()
            .map(|o| (o.at_ns, o.kind, o.offset, o.len))
            .collect();
        assert_eq!(
            got,
            vec![
                (9, OpKind::Read, 4096, 4096),
                (20, OpKind::Flush, 0, 0),
                (20, OpKind::Write, 64 * 512, 8192),
                (30, OpKind::Trim, 128 * 512, 1 << 20),
                (40, OpKind::Flush, 0, 0),
            ]
        );
        assert_eq!(t.ignored, 2);
        // The same records written big-endian.
        let mut be = Vec::new();
        let r = record(9, 8, 4096, TA_ISSUE | (READ << 16), &[]);
        for (i, w) in [
            (0, 4),
            (4, 4),
            (8, 8),
            (16, 8),
            (24, 4),
            (28, 4),
            (32, 4),
            (36, 4),
            (40, 4),
            (44, 2),
            (46, 2),
        ] {
            let mut f = r[i..i + w].to_vec();
            f.reverse();
            be.extend(f);
        }
        let t = parse(&be).expect("big-endian trace");
        assert_eq!((t.ops[0].offset, t.ops[0].len), (4096, 4096));
    }

    #[test]
    fn a_torn_record_is_an_error_naming_the_byte() {
        let mut b = record(1, 0, 512, TA_ISSUE | (READ << 16), &[]);
        b.extend([0u8; 48]);
        let e = parse(&b).expect_err("torn");
        assert!(
            e.to_string().contains("no blktrace magic at byte 48"),
            "{e}"
        );
    }
}
