//! `diskscope quick`: the default benchmark on a scratch file in the data directory, in the
//! spirit of CrystalDiskMark's grid: SEQ1M Q8T1 and RND4K Q32T1 / Q1T1, read and write.

use super::args::QuickArgs;
use super::terminal::Terminal;
use super::EXIT_STOPPED;
use crate::measure;
use anyhow::Context;
use shared::units::{format_bytes, format_ns};
use shared::{RunReport, RunStatus, RwMode, WorkloadSpec};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

const TESTS: [(&str, RwMode, u64, u32); 6] = [
    ("SEQ1M Q8T1", RwMode::Read, 1 << 20, 8),
    ("SEQ1M Q8T1", RwMode::Write, 1 << 20, 8),
    ("RND4K Q32T1", RwMode::RandRead, 4096, 32),
    ("RND4K Q32T1", RwMode::RandWrite, 4096, 32),
    ("RND4K Q1T1", RwMode::RandRead, 4096, 1),
    ("RND4K Q1T1", RwMode::RandWrite, 4096, 1),
];

pub fn run(args: &QuickArgs, cancel: Arc<AtomicBool>) -> anyhow::Result<ExitCode> {
    let dir = crate::service::data_dir(args.data_dir.as_ref());
    std::fs::create_dir_all(&dir)
        .with_context(|| format!("cannot create data directory {}", dir.display()))?;
    let target = dir.join("scratch.bin");
    eprintln!(
        "diskscope quick: {} scratch file {}, {} per test",
        format_bytes(args.size),
        target.display(),
        format_ns(args.runtime * 1_000_000)
    );
    let mut reports: Vec<(String, RunReport)> = Vec::new();
    for (name, rw, bs, qd) in TESTS {
        if cancel.load(Ordering::Relaxed) {
            break;
        }
        let spec = WorkloadSpec {
            rw,
            bs,
            iodepth: qd,
            size: Some(args.size),
            runtime_ms: Some(args.runtime),
            ..WorkloadSpec::default()
        };
        eprintln!("{name} {rw}");
        // The scratch file is diskscope's own (also one an older version left unmarked).
        let mut at = crate::io_target::Locator::path(&target);
        at.created = true;
        let plan = measure::plan_on(&spec, &at)?;
        let mut term = Terminal::new(&plan, true);
        let r = measure::run(plan, Arc::clone(&cancel), &mut term)?;
        term.finish();
        if let Some(e) = &r.error {
            anyhow::bail!("{name} {rw}: {}", e.message);
        }
        reports.push((name.to_string(), r));
    }
    print!("{}", table(&reports));
    let out = dir.join("quick-last.json");
    let docs: Vec<&RunReport> = reports.iter().map(|(_, r)| r).collect();
    let text = serde_json::to_string_pretty(&docs)?;
    std::fs::write(&out, text).with_context(|| format!("cannot write {}", out.display()))?;
    eprintln!("reports written to {}", out.display());
    if reports.iter().any(|(_, r)| r.status == RunStatus::Stopped) || cancel.load(Ordering::Relaxed)
    {
        return Ok(ExitCode::from(EXIT_STOPPED));
    }
    Ok(ExitCode::SUCCESS)
}

fn table(reports: &[(String, RunReport)]) -> String {
    let mut out = format!(
        "{:<12} {:>12} {:>12} {:>10} {:>10}\n",
        "test", "read MB/s", "write MB/s", "read IOPS", "write IOPS"
    );
    for pair in reports.chunks(2) {
        let name = &pair[0].0;
        let get = |rw_write: bool| {
            pair.iter()
                .find(|(_, r)| (r.spec.rw.read_pct(r.spec.read_pct) == 0) == rw_write)
                .map(|(_, r)| {
                    if rw_write {
                        r.summary.write
                    } else {
                        r.summary.read
                    }
                })
        };
        let (rd, wr) = (get(false), get(true));
        let f =
            |v: Option<f64>, p: usize| v.map(|v| format!("{v:.p$}")).unwrap_or_else(|| "-".into());
        out.push_str(&format!(
            "{:<12} {:>12} {:>12} {:>10} {:>10}\n",
            name,
            f(rd.map(|d| d.mb_s), 1),
            f(wr.map(|d| d.mb_s), 1),
            f(rd.map(|d| d.iops), 0),
            f(wr.map(|d| d.iops), 0),
        ));
    }
    out
}
