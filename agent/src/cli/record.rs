//! `diskscope record --device DEV --out FILE [--duration T] [-- COMMAND...]`: captures the
//! device's I/O into a trace `--replay` reads, and says what it holds.

use super::args::RecordArgs;
use crate::trace::record::{record, RecordOptions};
use crate::trace::OpKind;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

pub fn run(args: &RecordArgs, cancel: &AtomicBool) -> anyhow::Result<ExitCode> {
    if args.duration.is_none() && args.command.is_empty() {
        eprintln!(
            "diskscope: recording {} until Ctrl-C",
            args.device.display()
        );
    }
    let r = record(
        &RecordOptions {
            device: args.device.clone(),
            duration: args.duration.map(Duration::from_millis),
            out: args.out.clone(),
            command: args.command.clone(),
        },
        cancel,
    )?;
    if let Some(why) = &r.fallback {
        eprintln!("diskscope: blktrace could not run ({why}); recorded with the kernel's blk tracer through tracefs");
    }
    let count = |k: OpKind| r.trace.ops.iter().filter(|o| o.kind == k).count();
    let bytes = |k: OpKind| -> u64 {
        r.trace
            .ops
            .iter()
            .filter(|o| o.kind == k)
            .map(|o| u64::from(o.len))
            .sum()
    };
    println!(
        "recorded {} in {:.1} s with {}: {} reads ({}), {} writes ({}), {} trims, {} flushes -> {}",
        args.device.display(),
        r.seconds,
        r.method,
        count(OpKind::Read),
        shared::units::format_bytes(bytes(OpKind::Read)),
        count(OpKind::Write),
        shared::units::format_bytes(bytes(OpKind::Write)),
        count(OpKind::Trim),
        count(OpKind::Flush),
        args.out.display()
    );
    if r.lost_events > 0 {
        eprintln!(
            "diskscope: warning: the kernel's trace buffer lost {} events: the trace misses I/O",
            r.lost_events
        );
    }
    match r.command_status {
        Some(s) if !s.success() => {
            eprintln!("diskscope: the command ended with {s}");
            Ok(ExitCode::FAILURE)
        }
        _ => Ok(ExitCode::SUCCESS),
    }
}
