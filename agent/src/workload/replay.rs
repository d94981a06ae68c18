//! A trace made into what the replay engine issues: every I/O inside the plan's span and
//! aligned for O_DIRECT, with the time it is due (recorded timing: idle gaps compressed,
//! then scaled), and the trace's own figures for the report.

use crate::trace::{OpKind, Trace, TraceOp};
use shared::analysis::replay::{OpCount, Replay, SizeClass};
use shared::replay::{ReplaySpec, Timing, DEFAULT_IDLE_MAX_MS, MAX_REPLAY_DEPTH, RECORDED_DEPTH};
use shared::{RwMode, SpecError, WorkloadSpec};

/// The replay engine's input.
#[derive(Clone, Debug)]
pub struct ReplayPlan {
    /// In issue order; `at_ns` is when each is due, from the replay's start.
    pub ops: Vec<TraceOp>,
    pub timing: Timing,
    /// The figures known before the replay (the engine adds what it measured).
    pub report: Replay,
}

/// The spec a trace asks for: its directions (trims write), its largest I/O as the block
/// size (buffers hold any of its I/Os), one job; recorded timing keeps enough I/Os in flight
/// to follow the recording.
pub fn derive_spec(spec: &WorkloadSpec, r: &ReplaySpec, trace: &Trace) -> WorkloadSpec {
    let reads = trace.ops.iter().filter(|o| o.kind == OpKind::Read).count();
    let writes = trace
        .ops
        .iter()
        .filter(|o| matches!(o.kind, OpKind::Write | OpKind::Trim))
        .count();
    let mut out = spec.clone();
    out.rw = match (reads > 0, writes > 0) {
        (true, true) => RwMode::RandRw,
        (false, true) => RwMode::RandWrite,
        _ => RwMode::RandRead,
    };
    if reads > 0 && writes > 0 {
        out.read_pct = ((reads * 100) / (reads + writes)).clamp(1, 99) as u8;
    }
    out.bs = trace.max_len().max(4096).div_ceil(4096) * 4096;
    out.jobs = 1;
    if r.timing_for(trace.timed) == Timing::Recorded {
        out.iodepth = spec.iodepth.clamp(RECORDED_DEPTH, MAX_REPLAY_DEPTH);
    }
    out
}

/// Power-of-two size classes from 4 KiB up.
fn size_class(len: u64) -> u64 {
    len.next_power_of_two().max(4096)
}

/// Remaps, aligns and times the trace for a span of `span_len` bytes from `start` on a
/// target of logical block size `lbs` (alignment only with O_DIRECT).
pub fn plan(
    name: &str,
    r: &ReplaySpec,
    trace: &Trace,
    (start, span_len): (u64, u64),
    lbs: u64,
    direct: bool,
) -> Result<ReplayPlan, SpecError> {
    let timing = r.timing_for(trace.timed);
    let align = if direct { lbs.max(1) } else { 1 };
    let idle_max_ns = match timing {
        Timing::Recorded => {
            Some(r.idle_max_ms.unwrap_or(DEFAULT_IDLE_MAX_MS) * 1_000_000).filter(|&n| n > 0)
        }
        Timing::Afap => None,
    };
    let speed = r.speed.unwrap_or(1.0);
    let mut rep = Replay {
        trace: name.to_string(),
        format: trace.format.to_string(),
        timing: match (timing, r.speed) {
            (Timing::Afap, _) => "afap".to_string(),
            (Timing::Recorded, Some(s)) if s != 1.0 => format!("recorded ×{s}"),
            (Timing::Recorded, _) => "recorded".to_string(),
        },
        ignored_records: trace.ignored,
        idle_max_ns,
        recorded_ns: trace.ops.last().map_or(0, |o| o.at_ns),
        ..Replay::default()
    };
    let mut counts = [OpKind::Read, OpKind::Write, OpKind::Trim, OpKind::Flush].map(|k| OpCount {
        kind: k.as_str().into(),
        ..OpCount::default()
    });
    let mut sizes: std::collections::BTreeMap<u64, (u64, u64)> = Default::default();
    let mut ops = Vec::with_capacity(trace.ops.len());
    let (mut prev_at, mut due) = (0u64, 0f64);
    for op in &trace.ops {
        let mut o = *op;
        let gap = o.at_ns - prev_at;
        prev_at = o.at_ns;
        let kept = match idle_max_ns {
            Some(m) if gap > m => {
                rep.compressed_ns += gap - m;
                m
            }
            _ => gap,
        };
        due += kept as f64 / speed;
        o.at_ns = if timing == Timing::Recorded {
            due as u64
        } else {
            0
        };
        if o.kind != OpKind::Flush {
            let off = o.offset / align * align;
            let mut len = (o.offset + u64::from(o.len)).div_ceil(align) * align - off;
            // A trim over more than the span (fstrim of a whole filesystem) trims the span.
            if o.kind == OpKind::Trim && len > span_len {
                len = span_len / align * align;
            }
            if (off, len) != (o.offset, u64::from(o.len)) {
                rep.aligned += 1;
            }
            if len > span_len {
                return Err(SpecError::new(
                    "replay",
                    name,
                    format!(
                        "the trace holds an I/O of {len} B, longer than the span of {span_len} B"
                    ),
                ));
            }
            let off = if off + len > span_len {
                rep.remapped += 1;
                off % (span_len - len + 1) / align * align
            } else {
                off
            };
            o.offset = start + off;
            o.len = len as u32;
        }
        let i = match o.kind {
            OpKind::Read => 0,
            OpKind::Write => 1,
            OpKind::Trim => 2,
            OpKind::Flush => 3,
        };
        counts[i].count += 1;
        counts[i].bytes += u64::from(o.len);
        if i < 2 {
            let e = sizes.entry(size_class(u64::from(o.len))).or_default();
            if i == 0 {
                e.0 += 1;
            } else {
                e.1 += 1;
            }
        }
        ops.push(o);
    }
    rep.ops = counts.to_vec();
    rep.sizes = sizes
        .into_iter()
        .map(|(up_to_bytes, (reads, writes))| SizeClass {
            up_to_bytes,
            reads,
            writes,
        })
        .collect();
    Ok(ReplayPlan {
        ops,
        timing,
        report: rep,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(at_ms: u64, kind: OpKind, offset: u64, len: u32) -> TraceOp {
        TraceOp {
            at_ns: at_ms * 1_000_000,
            offset,
            len,
            kind,
        }
    }

    fn trace(ops: Vec<TraceOp>) -> Trace {
        Trace {
            ops,
            timed: true,
            format: "test",
            ignored: 0,
        }
    }

    #[test]
    fn idle_is_compressed_then_scaled() {
        let t = trace(vec![
            op(0, OpKind::Read, 0, 4096),
            op(5, OpKind::Read, 4096, 4096),
            op(1005, OpKind::Write, 0, 4096),
        ]);
        let mut r = ReplaySpec::new("t");
        let p = plan("t", &r, &t, (0, 1 << 20), 512, true).expect("plan");
        let due: Vec<u64> = p.ops.iter().map(|o| o.at_ns / 1_000_000).collect();
        assert_eq!(due, vec![0, 5, 15]);
        assert_eq!(p.report.compressed_ns, 990_000_000);
        assert_eq!(p.report.recorded_ns, 1_005_000_000);
        r.speed = Some(5.0);
        r.idle_max_ms = Some(0);
        let p = plan("t", &r, &t, (0, 1 << 20), 512, true).expect("plan");
        let due: Vec<u64> = p.ops.iter().map(|o| o.at_ns / 1_000_000).collect();
        assert_eq!(due, vec![0, 1, 201]);
        assert_eq!(p.report.compressed_ns, 0);
        assert_eq!(p.report.timing, "recorded ×5");
    }

    #[test]
    fn offsets_beyond_the_span_are_remapped_and_aligned() {
        let t = trace(vec![
            op(0, OpKind::Read, 10 << 20, 4096),
            op(0, OpKind::Write, 512, 1024),
            op(0, OpKind::Trim, (1 << 20) - 4096, 8192),
            op(0, OpKind::Flush, 0, 0),
        ]);
        let r = ReplaySpec {
            timing: Some(Timing::Afap),
            ..ReplaySpec::new("t")
        };
        let p = plan("t", &r, &t, (8192, 1 << 20), 4096, true).expect("plan");
        for o in &p.ops[..3] {
            assert_eq!(o.offset % 4096, 0);
            assert!(o.offset >= 8192 && o.offset + u64::from(o.len) <= 8192 + (1 << 20));
        }
        assert_eq!((p.ops[1].offset, p.ops[1].len), (8192, 4096));
        assert_eq!(p.report.remapped, 2);
        assert_eq!(p.report.aligned, 1);
        assert!(p.ops.iter().all(|o| o.at_ns == 0));
        assert_eq!(p.report.ops[3].count, 1);
        assert_eq!(p.report.sizes.len(), 1);
        let too_long = trace(vec![op(0, OpKind::Read, 0, 2 << 20)]);
        let e = plan("t", &r, &too_long, (0, 1 << 20), 512, true).expect_err("long");
        assert!(e.to_string().contains("longer than the span"), "{e}");
    }

    #[test]
    fn the_spec_follows_the_trace() {
        let t = trace(vec![
            op(0, OpKind::Read, 0, 4096),
            op(0, OpKind::Read, 0, 4096),
            op(0, OpKind::Trim, 0, 300_000),
        ]);
        let s = derive_spec(&WorkloadSpec::default(), &ReplaySpec::new("t"), &t);
        assert_eq!(s.rw, RwMode::RandRw);
        assert_eq!(s.read_pct, 66);
        assert_eq!(s.bs, 4096, "trims need no buffer");
        assert_eq!(s.iodepth, RECORDED_DEPTH);
        let reads = trace(vec![op(0, OpKind::Read, 0, 5000)]);
        let s = derive_spec(&WorkloadSpec::default(), &ReplaySpec::new("t"), &reads);
        assert_eq!((s.rw, s.bs), (RwMode::RandRead, 8192));
    }
}
