//! `blkparse` text output (its default format):
//! `dev cpu seq seconds.nanoseconds pid action RWBS sector + sectors [process]`.
//! The I/Os are the requests issued to the driver (`D`), what the drive saw; a trace without
//! any (a bio-based device) uses the queued ones (`Q`). RWBS: a leading `F` is a pre-flush,
//! then `R`ead, `W`rite, `D`iscard (a trim) or `F`lush.

use super::{OpKind, Trace, TraceError, TraceOp};

/// One event line's fields that matter.
struct Event {
    at_ns: u64,
    action: String,
    rwbs: String,
    sector: Option<(u64, u64)>,
}

fn event(line: &str) -> Option<Event> {
    let f: Vec<&str> = line.split_whitespace().collect();
    if f.len() < 6 || !f[0].contains(',') {
        return None;
    }
    // blkparse has a sequence number before the time; the kernel's own text ("blk"
    // tracer with blk_classic) has none.
    let t = if f[2].contains('.') { 2 } else { 3 };
    let (secs, nanos) = f.get(t)?.split_once('.')?;
    if nanos.len() > 9 {
        return None;
    }
    let frac = nanos.parse::<u64>().ok()? * 10u64.pow(9 - nanos.len() as u32);
    let at_ns = secs.parse::<u64>().ok()?.checked_mul(1_000_000_000)? + frac;
    let sector = match (f.get(t + 4), f.get(t + 5), f.get(t + 6)) {
        (Some(s), Some(&"+"), Some(n)) => Some((s.parse().ok()?, n.parse().ok()?)),
        _ => None,
    };
    Some(Event {
        at_ns,
        action: f.get(t + 2)?.to_string(),
        rwbs: f.get(t + 3)?.to_string(),
        sector,
    })
}

/// The kinds an RWBS field asks for: a pre-flush (as a flush) first, then the data op.
pub(super) fn kinds(rwbs: &str) -> Vec<OpKind> {
    let mut out = Vec::new();
    let mut rest = rwbs;
    if rest.len() > 1 && rest.starts_with('F') {
        out.push(OpKind::Flush);
        rest = &rest[1..];
    }
    match rest.chars().next() {
        Some('R') => out.push(OpKind::Read),
        Some('W') => out.push(OpKind::Write),
        Some('D') => out.push(OpKind::Trim),
        Some('F') if out.is_empty() => out.push(OpKind::Flush),
        _ => {}
    }
    out
}

pub fn parse(text: &str) -> Result<Trace, TraceError> {
    let events: Vec<(usize, Event)> = text
        .lines()
        .enumerate()
        .filter_map(|(i, l)| event(l).map(|e| (i + 1, e)))
        .collect();
    if events.is_empty() {
        let first: String = text.lines().next().unwrap_or("").chars().take(60).collect();
        return Err(TraceError::Unknown(format!(
            "no blkparse event lines (first line '{first}')"
        )));
    }
    let want = if events.iter().any(|(_, e)| e.action == "D") {
        "D"
    } else {
        "Q"
    };
    let mut t = Trace {
        format: "blkparse text",
        timed: true,
        ..Trace::default()
    };
    for (n, e) in events {
        if e.action != want {
            t.ignored += 1;
            continue;
        }
        let (sector, sectors) = e.sector.unwrap_or((0, 0));
        let len = u32::try_from(sectors * 512).map_err(|_| TraceError::Bad {
            line: n,
            why: format!("{sectors} sectors is too large"),
        })?;
        for kind in kinds(&e.rwbs) {
            let op = TraceOp {
                at_ns: e.at_ns,
                offset: sector * 512,
                len,
                kind,
            };
            t.push(op, n)?;
        }
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "\
  7,0    1        1     0.000000000  1234  Q   R 2048 + 8 [dd]
  7,0    1        2     0.000003000  1234  G   R 2048 + 8 [dd]
  7,0    1        3     0.000010000  1234  D   R 2048 + 8 [dd]
  7,0    1        4     0.000200000     0  C   R 2048 + 8 [0]
  7,0    0        5     0.001000000  1234  D  WS 4096 + 16 [dd]
  7,0    0        6     0.002000000  1234  D FWS 8192 + 8 [jbd2]
  7,0    0        7     0.003000000  1234  D   D 0 + 2048 [fstrim]
  7,0    0        8     0.004000000  1234  D  FN [sync]
CPU0 (7,0):
 Reads Queued:           1,        4KiB\t Writes Queued:           0,        0KiB
";

    #[test]
    fn issued_requests_become_the_trace() {
        let t = parse(SAMPLE).expect("trace");
        let got: Vec<_> = t
            .ops
            .iter()
            .map(|o| (o.at_ns, o.kind, o.offset, o.len))
            .collect();
        assert_eq!(
            got,
            vec![
                (10_000, OpKind::Read, 2048 * 512, 4096),
                (1_000_000, OpKind::Write, 4096 * 512, 8192),
                (2_000_000, OpKind::Flush, 0, 0),
                (2_000_000, OpKind::Write, 8192 * 512, 4096),
                (3_000_000, OpKind::Trim, 0, 1 << 20),
                (4_000_000, OpKind::Flush, 0, 0),
            ]
        );
        assert_eq!(t.ignored, 3);
    }

    #[test]
    fn queued_requests_when_nothing_was_issued() {
        let t =
            parse("  8,0 0 1 0.5 9 Q R 8 + 8 [x]\n  8,0 0 2 0.6 9 C R 8 + 8 [x]\n").expect("trace");
        assert_eq!(t.ops.len(), 1);
        assert_eq!(t.ops[0].at_ns, 500_000_000);
    }

    #[test]
    fn the_kernels_classic_text_without_sequence_numbers() {
        let t = parse(
            "# tracer: blk\n  7,0    1   598.512797746  7515  Q  WS 0 + 128 [dd]\n  7,0    1   598.512821000  7515  D  WS 0 + 128 [dd]\n  7,0    0   598.513162087    14  C  WS 0 + 128 [0]\n",
        )
        .expect("trace");
        assert_eq!(t.ops.len(), 1);
        assert_eq!((t.ops[0].kind, t.ops[0].len), (OpKind::Write, 65536));
        assert_eq!(t.ops[0].at_ns, 598_512_821_000);
    }

    #[test]
    fn text_without_events_is_not_a_trace() {
        assert!(matches!(
            parse("hello\nworld\n"),
            Err(TraceError::Unknown(_))
        ));
    }
}
