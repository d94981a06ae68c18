//! `diskscope compare A.json B.json`: B over A per metric; for two repeated runs the ratio
//! of means with a 95 % confidence interval, and "no significant difference" when it holds 1.

use super::args::CompareArgs;
use shared::analysis::repeat::{compare, of_report};
use std::process::ExitCode;

fn read(path: &std::path::Path) -> anyhow::Result<shared::RunReport> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
    serde_json::from_str(&text)
        .map_err(|e| anyhow::anyhow!("{} is not a diskscope report (--json): {e}", path.display()))
}

pub fn run(args: &CompareArgs) -> anyhow::Result<ExitCode> {
    let (a, b) = (read(&args.a)?, read(&args.b)?);
    let (ra, rb) = (of_report(&a), of_report(&b));
    let rows = compare(&ra, &rb);
    if rows.is_empty() {
        anyhow::bail!(
            "{} and {} have no metric in common (different workloads or steps)",
            args.a.display(),
            args.b.display()
        );
    }
    println!("A: {} ({} pass(es))", args.a.display(), ra.passes);
    println!("B: {} ({} pass(es))", args.b.display(), rb.passes);
    println!(
        "{:<40} {:>12} {:>12} {:>7}  verdict",
        "metric", "A mean", "B mean", "B/A"
    );
    for r in rows {
        println!(
            "{:<40} {:>12.1} {:>12.1} {:>7.3}  {}",
            r.label,
            r.a,
            r.b,
            r.ratio,
            r.sentence()
        );
    }
    Ok(ExitCode::SUCCESS)
}
