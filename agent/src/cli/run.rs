//! `diskscope run`: one workload, fio-style.

use super::args::RunArgs;
use super::terminal::Terminal;
use super::EXIT_STOPPED;
use crate::report::{self, table};
use crate::{measure, presets};
use anyhow::Context;
use shared::RunStatus;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

pub fn run(args: &RunArgs, cancel: Arc<AtomicBool>) -> anyhow::Result<ExitCode> {
    if let Some(m) = args.max_memory {
        crate::budget::set_max(m);
    }
    let first = &args.target[0];
    let report = match &args.preset {
        None if args.target.len() > 1 => {
            let spec = args.spec();
            let plans = args
                .target
                .iter()
                .map(|t| measure::plan(&spec, t))
                .collect::<Result<Vec<_>, _>>()?;
            crate::budget::check(&spec, plans.len() as u64)
                .map_err(|e| measure::MeasureError::Spec(vec![e]))?;
            let mut term = Terminal::for_steps(Vec::new(), args.quiet);
            measure::run_multi(plans, cancel, &mut term)?
        }
        None => {
            let plan = measure::plan(&args.spec(), first)?;
            let mut term = Terminal::new(&plan, args.quiet);
            let report = measure::run(plan, cancel, &mut term)?;
            term.finish();
            report
        }
        Some(name) => {
            let options = args.preset_options();
            if args.target.len() > 1 {
                anyhow::bail!("--preset runs on one target; give --target once");
            }
            let ignored = args.flags_presets_ignore();
            if !ignored.is_empty() {
                anyhow::bail!(
                    "--preset {name} sets the workload itself and does not use {}; its options: {}",
                    ignored.join(", "),
                    presets::options_of(name)
                        .iter()
                        .map(|o| format!(
                            "--{}",
                            o.replace('_', "-").replace("interval", "interval-ms")
                        ))
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            }
            // A missing file is created at --size; an existing one is probed as it is (each
            // step then extends it for writes, or refuses a read beyond its end).
            let create = options.size.filter(|_| !first.exists());
            let info = crate::target::TargetInfo::probe(first, create, false)?;
            let built = presets::build(name, &options, info.size, info.logical_block_size)?;
            let mut at = crate::target::Locator::path(first);
            at.created = info.created;
            let plans = measure::plan_steps(&built.steps, &at)?;
            let names = built.steps.iter().map(|s| s.name.clone()).collect();
            let mut term = Terminal::for_steps(names, args.quiet);
            measure::run_steps(plans, &built.analysis, cancel, &mut term)?
        }
    };
    // Outputs first: whatever was measured is kept, also after a failure or a stop.
    if let Some(path) = &args.json {
        report::write_json(path, &report)
            .with_context(|| format!("cannot write --json {}", path.display()))?;
    }
    if let Some(path) = &args.csv {
        report::csv::write(path, &report.samples)
            .with_context(|| format!("cannot write --csv {}", path.display()))?;
    }
    print!("{}", table::summary(&report));
    print!("{}", table::analysis(&report));
    let sustain_failed = report.analysis.sustain.as_ref().is_some_and(|s| !s.pass);
    Ok(match report.status {
        RunStatus::Completed if sustain_failed => {
            eprintln!("diskscope: the target did not sustain the required rate");
            ExitCode::FAILURE
        }
        RunStatus::Completed => ExitCode::SUCCESS,
        RunStatus::Stopped => {
            eprintln!("diskscope: stopped by user; partial results kept");
            ExitCode::from(EXIT_STOPPED)
        }
        RunStatus::Failed | RunStatus::Running | RunStatus::Interrupted => {
            let msg = report
                .error
                .as_ref()
                .map(|e| e.message.as_str())
                .unwrap_or("run failed");
            eprintln!("diskscope: error: {msg} (results up to the failure were written)");
            ExitCode::FAILURE
        }
    })
}
