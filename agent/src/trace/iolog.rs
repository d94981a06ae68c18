//! fio iologs. Version 2: `filename action [offset length]`, with `wait N` (µs since the
//! previous wait) giving times; version 3: `timestamp(µs) filename action [offset length]`.
//! File actions (`add`, `open`, `close`) are not I/O; `sync` and `datasync` are flushes.
//! Every file of the log is replayed on the one target.

use super::{OpKind, Trace, TraceError, TraceOp};

pub fn parse(text: &str, version: u8) -> Result<Trace, TraceError> {
    let mut t = Trace {
        format: if version == 2 {
            "fio iolog v2"
        } else {
            "fio iolog v3"
        },
        timed: version == 3,
        ..Trace::default()
    };
    let mut clock_us: u64 = 0;
    for (i, line) in text.lines().enumerate().skip(1) {
        let n = i + 1;
        let bad = |why: String| TraceError::Bad { line: n, why };
        let mut f = line.split_whitespace();
        if version == 3 {
            let Some(ts) = f.next() else { continue };
            clock_us = ts
                .parse()
                .map_err(|_| bad(format!("timestamp '{ts}' is not a whole number of µs")))?;
        }
        let (Some(_file), Some(action)) = (f.next(), f.next()) else {
            if line.trim().is_empty() {
                continue;
            }
            return Err(bad(format!("'{line}' is not 'filename action ...'")));
        };
        let mut num = |what: &str| -> Result<u64, TraceError> {
            let v = f
                .next()
                .ok_or_else(|| bad(format!("{action} without {what}")))?;
            v.parse()
                .map_err(|_| bad(format!("{what} '{v}' is not a number")))
        };
        let kind = match action {
            "add" | "open" | "close" => {
                t.ignored += 1;
                continue;
            }
            "wait" if version == 2 => {
                clock_us = clock_us.saturating_add(num("a time")?);
                t.timed = true;
                continue;
            }
            "read" => OpKind::Read,
            "write" => OpKind::Write,
            "trim" => OpKind::Trim,
            "sync" | "datasync" => OpKind::Flush,
            other => return Err(bad(format!("unknown action '{other}'"))),
        };
        let (offset, len) = if kind == OpKind::Flush {
            (0, 0)
        } else {
            let offset = num("an offset")?;
            let len = num("a length")?;
            let len = u32::try_from(len).map_err(|_| bad(format!("length {len} is too large")))?;
            (offset, len)
        };
        t.push(
            TraceOp {
                at_ns: clock_us.saturating_mul(1000),
                offset,
                len,
                kind,
            },
            n,
        )?;
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::super::parse as parse_any;
    use super::*;

    #[test]
    fn v3_as_fio_writes_it() {
        let t = parse_any(
            b"fio version 3 iolog\n16 /tmp/f add\n185 /tmp/f open\n190 /tmp/f read 249856 4096\n\
              10649 /tmp/f write 3104768 8192\n21028 /tmp/f trim 0 1048576\n21030 /tmp/f sync\n\
              51929 /tmp/f close\n",
        )
        .expect("trace");
        assert!(t.timed);
        assert_eq!(t.ignored, 3);
        let got: Vec<_> = t
            .ops
            .iter()
            .map(|o| (o.at_ns, o.kind, o.offset, o.len))
            .collect();
        assert_eq!(
            got,
            vec![
                (0, OpKind::Read, 249856, 4096),
                (10_459_000, OpKind::Write, 3104768, 8192),
                (20_838_000, OpKind::Trim, 0, 1 << 20),
                (20_840_000, OpKind::Flush, 0, 0),
            ]
        );
    }

    #[test]
    fn v2_waits_give_times() {
        let t = parse_any(
            b"fio version 2 iolog\n/f add\n/f read 0 512\n/f wait 2000\n/f read 512 512\n",
        )
        .expect("trace");
        assert!(t.timed);
        assert_eq!(t.ops[1].at_ns, 2_000_000);
        let untimed = parse_any(b"fio version 2 iolog\n/f read 0 512\n").expect("trace");
        assert!(!untimed.timed);
    }

    #[test]
    fn bad_lines_name_the_line_and_value() {
        let e =
            parse_any(b"fio version 3 iolog\n0 /f read 0 4096\nx /f read 0 1\n").expect_err("bad");
        assert_eq!(
            e.to_string(),
            "trace record 3: timestamp 'x' is not a whole number of µs"
        );
        let e = parse_any(b"fio version 2 iolog\n/f frob 0 1\n").expect_err("bad");
        assert!(e.to_string().contains("unknown action 'frob'"), "{e}");
        let e = parse_any(b"fio version 2 iolog\n/f read 0\n").expect_err("bad");
        assert!(e.to_string().contains("read without a length"), "{e}");
        let e = parse_any(b"fio version 2 iolog\n/f read 0 999999999999\n").expect_err("bad");
        assert!(e.to_string().contains("too large"), "{e}");
    }
}
