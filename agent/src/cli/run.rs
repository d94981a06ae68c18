//! `diskscope run`: one workload, fio-style.

use super::args::{OutputFormat, RunArgs};
use super::outputs::Outputs;
use super::terminal::Terminal;
use super::EXIT_STOPPED;
use crate::report::table;
use crate::{measure, presets};
use shared::RunStatus;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

pub fn run(args: &RunArgs, cancel: Arc<AtomicBool>) -> anyhow::Result<ExitCode> {
    if args.output_format == OutputFormat::FioJson && args.output.is_none() && !args.quiet {
        // fio's JSON on standard output is the whole output (as `fio --output-format=json`).
        let quiet = RunArgs {
            quiet: true,
            ..args.clone()
        };
        return run(&quiet, cancel);
    }
    if !args.agent.is_empty() || args.agents.is_some() {
        if !args.job_files.is_empty() || args.output_format != OutputFormat::Normal {
            anyhow::bail!("job files and --output-format run here, not with --agent (yet)");
        }
        return match (args.agent.as_slice(), &args.agents) {
            ([agent], None) => super::remote::run(args, agent, cancel),
            _ => super::remote::run_group(args, cancel),
        };
    }
    if args.on_fault.is_some() {
        anyhow::bail!("--on-fault goes with a group run (--agent A --agent B, or --agents FILE)");
    }
    if let Some(m) = args.max_memory {
        crate::budget::set_max(m);
    }
    if !args.job_files.is_empty() {
        return job_files(args, cancel);
    }
    if !args.token.is_empty() || args.confirm.is_some() {
        anyhow::bail!("--token and --confirm go with --agent URL (a local run needs neither)");
    }
    // The command line replays the user's own files (the service only its library).
    crate::trace::library::allow_paths();
    // A long run's 10 ms buckets wait beside the outputs (else in the temporary directory).
    if let Some(dir) = [&args.timeline, &args.json, &args.csv]
        .into_iter()
        .flatten()
        .filter_map(|p| p.parent())
        .find(|d| !d.as_os_str().is_empty())
    {
        crate::stats::fine::set_spill_dir(dir);
    }
    let first = &args.target[0];
    let mut term: Option<Terminal> = None;
    let report = match &args.preset {
        None if args.target.len() > 1 => {
            if let Some(n) = args.repeat.filter(|n| *n > 1) {
                anyhow::bail!("--repeat {n}: repeated runs are on one target; give --target once");
            }
            if let Some(p) = &args.timeline {
                anyhow::bail!(
                    "--timeline {}: a run over several targets keeps no 10 ms timeline; give one --target",
                    p.display()
                );
            }
            let spec = args.spec();
            let plans = args
                .target
                .iter()
                .map(|t| measure::plan(&spec, t).map(measure::Part::target))
                .collect::<Result<Vec<_>, _>>()?;
            crate::budget::check(&spec, plans.len() as u64)
                .map_err(|e| measure::MeasureError::Spec(vec![e]))?;
            let term = term.insert(Terminal::for_steps(Vec::new(), args.quiet));
            let mut out = Outputs::for_args(term, args)?;
            let report = measure::run_multi(plans, cancel, &mut out)?;
            out.finish(&report)?;
            report
        }
        None if args.repeat.is_some_and(|n| n > 1) => repeated(args, first, cancel, &mut term)?,
        None => {
            if let Some(ms) = args.idle {
                anyhow::bail!(
                    "--idle {ms}ms: a single workload pauses only between the passes of --repeat N"
                );
            }
            let plan = measure::plan(&args.spec(), first)?;
            let term = term.insert(Terminal::new(&plan, args.quiet));
            let mut out = Outputs::for_args(term, args)?;
            let report = measure::run(plan, cancel, &mut out)?;
            out.finish(&report)?;
            term.finish();
            report
        }
        Some(name) => preset(args, name, first, cancel, &mut term)?,
    };
    // Outputs were written first (`Outputs::finish`): whatever was measured is kept, also
    // after a failure or a stop.
    emit(args, &report, None)?;
    Ok(exit_code(&report))
}

/// `--preset NAME`: the preset's steps as one run on `first`.
fn preset(
    args: &RunArgs,
    name: &str,
    first: &std::path::Path,
    cancel: Arc<AtomicBool>,
    term: &mut Option<Terminal>,
) -> anyhow::Result<shared::RunReport> {
    let options = args.preset_options();
    if args.target.len() > 1 {
        anyhow::bail!("--preset runs on one target; give --target once");
    }
    if !presets::names().contains(&name) {
        return Err(presets::PresetError::Unknown(name.to_string()).into());
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
                    o.replace('_', "-")
                        .replace("interval", "interval-ms")
                        .replace("p99-us", "p99")
                ))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    // A missing file is created at --size; an existing one is probed as it is (each
    // step then extends it for writes, or refuses a read beyond its end).
    let create = presets::create_size(name, &options, first).filter(|_| !first.exists());
    let info = if presets::in_directory(name) {
        crate::io_target::Locator::path(first).probe_dir()?
    } else {
        crate::io_target::TargetInfo::probe(first, create, false)?
    };
    let mut built = presets::build(name, &options, info.size, info.logical_block_size)?;
    if let Some(token) = args.witness_token()? {
        presets::give_witness_token(&mut built.steps, &token);
    }
    let mut at = crate::io_target::Locator::path(first);
    at.created = info.created;
    shared::steps::check_repeat(args.repeat.unwrap_or(1), built.steps.len())
        .map_err(|e| anyhow::anyhow!(e))?;
    let steps = shared::steps::repeat_steps(
        built.steps,
        args.repeat.unwrap_or(1),
        options.idle_ms.unwrap_or(0),
    );
    run_sequence(args, &steps, &built.analysis, &at, cancel, term)
}

/// The end-of-run report in `--output-format`, on standard output or `--output`.
fn emit(
    args: &RunArgs,
    report: &shared::RunReport,
    jobs: Option<&crate::fiojob::JobFile>,
) -> anyhow::Result<()> {
    let text = match args.output_format {
        OutputFormat::Normal => format!("{}{}", table::summary(report), table::analysis(report)),
        OutputFormat::FioJson | OutputFormat::FioJsonPlus => {
            use crate::report::fio_json::{document, Form};
            let form = if args.output_format == OutputFormat::FioJson {
                Form::Json
            } else {
                Form::JsonPlus
            };
            let doc = document(report, &report.samples, jobs, form);
            format!("{}\n", serde_json::to_string_pretty(&doc)?)
        }
    };
    match &args.output {
        Some(path) => std::fs::write(path, text)
            .map_err(|e| anyhow::anyhow!("--output {}: {e}", path.display()))?,
        None => print!("{text}"),
    }
    Ok(())
}

/// `diskscope run JOB.fio …`: the job files' steps as one run on their target.
fn job_files(args: &RunArgs, cancel: Arc<AtomicBool>) -> anyhow::Result<ExitCode> {
    let jobs = crate::fiojob::JobFile::load(&args.job_files)?;
    let mut given = args.flags_presets_ignore();
    let o = args.preset_options();
    for (name, set) in [
        ("size", o.size.is_some()),
        ("count", o.count.is_some()),
        ("runtime", o.runtime_ms.is_some()),
        ("rate", o.rate.is_some()),
        ("streams", o.streams.is_some()),
        ("idle", o.idle_ms.is_some()),
        ("buffer-ms", o.buffer_ms.is_some()),
        ("bs", o.bs.is_some()),
        ("verify", args.workload.has("verify")),
        ("p99", o.p99_us.is_some()),
        ("preset", args.preset.is_some()),
        ("repeat", args.repeat.is_some()),
    ] {
        if set {
            given.push(format!("--{name}"));
        }
    }
    if !given.is_empty() {
        anyhow::bail!(
            "a job file sets the workload itself; {} belong(s) in it, not on the command line",
            given.join(", ")
        );
    }
    if args.target.len() > 1 {
        anyhow::bail!("a job file runs on one target; give --target once");
    }
    if let Some(together) = jobs.together(args.target.first().map(|p| p.as_path()))? {
        return jobs_together(args, &jobs, &together, cancel);
    }
    let target = jobs.target(args.target.first().map(|p| p.as_path()))?;
    let mut steps = jobs.steps()?;
    if let Some(ms) = args.interval_ms() {
        for s in &mut steps {
            s.spec.interval_ms = ms;
        }
    }
    for note in jobs.notes() {
        eprintln!("diskscope: note: {note}");
    }
    let create = create_size(steps.iter().map(|s| &s.spec)).filter(|_| !target.exists());
    let info = if steps.iter().any(|s| s.spec.files.is_some()) {
        // fio's metadata engines: the files workload in a directory.
        crate::io_target::Locator::path(&target).probe_dir()?
    } else {
        crate::io_target::TargetInfo::probe(&target, create, false)?
    };
    let mut at = crate::io_target::Locator::path(&target);
    at.created = info.created;
    let opts = presets::AnalysisOptions::for_spec(&steps[0].spec);
    let mut term = None;
    let report = run_sequence(args, &steps, &opts, &at, cancel, &mut term)?;
    emit(args, &report, Some(&jobs))?;
    write_logs(args, &report, &jobs)?;
    Ok(exit_code(&report))
}

/// fio's logs the jobs ask for, after the report: a log that cannot be written loses
/// nothing measured.
fn write_logs(
    args: &RunArgs,
    report: &shared::RunReport,
    jobs: &crate::fiojob::JobFile,
) -> anyhow::Result<()> {
    let logs = crate::report::fio_log::write(report, jobs, std::path::Path::new("."))?;
    if !logs.is_empty() && !args.quiet {
        let names: Vec<String> = logs.iter().map(|p| p.display().to_string()).collect();
        eprintln!("diskscope: fio logs: {}", names.join(" "));
    }
    Ok(())
}

/// The size a missing file is created at: the largest span the jobs on it give.
fn create_size<'a>(specs: impl Iterator<Item = &'a shared::WorkloadSpec>) -> Option<u64> {
    specs
        .filter_map(crate::workload::plan::wanted_target_size)
        .max()
}

/// A job file that is one group of several jobs: each job on its target, all at once, as
/// one run with a part per job.
fn jobs_together(
    args: &RunArgs,
    jobs: &crate::fiojob::JobFile,
    together: &[(&crate::fiojob::Job, std::path::PathBuf)],
    cancel: Arc<AtomicBool>,
) -> anyhow::Result<ExitCode> {
    if let Some(p) = &args.timeline {
        anyhow::bail!(
            "--timeline {}: jobs that run at once keep no 10 ms timeline",
            p.display()
        );
    }
    // The jobs hold their memory together (each was checked alone when it was read).
    let need = together
        .iter()
        .map(|(j, _)| crate::budget::needed(&j.spec))
        .fold(0u64, u64::saturating_add);
    if need > crate::budget::max() {
        anyhow::bail!(
            "the {} jobs at once need {} MiB of buffers: more than the memory budget of {} MiB (--max-memory)",
            together.len(),
            need >> 20,
            crate::budget::max() >> 20
        );
    }
    for note in jobs.notes() {
        eprintln!("diskscope: note: {note}");
    }
    let mut parts = Vec::with_capacity(together.len());
    for (job, path) in together {
        let mut spec = job.spec.clone();
        if let Some(ms) = args.interval_ms() {
            spec.interval_ms = ms;
        }
        if !path.exists() {
            let on_it = together.iter().filter(|(_, p)| p == path);
            let create = create_size(on_it.map(|(j, _)| &j.spec));
            crate::io_target::TargetInfo::probe(path, create, false)?;
        }
        let plan =
            measure::plan(&spec, path).map_err(|e| anyhow::anyhow!("job '{}': {e}", job.name))?;
        parts.push(measure::Part {
            job: Some(job.name.clone()),
            plan,
        });
    }
    let mut term = Terminal::for_steps(Vec::new(), args.quiet);
    let mut out = Outputs::for_args(&mut term, args)?;
    let report = measure::run_multi(parts, cancel, &mut out)?;
    out.finish(&report)?;
    emit(args, &report, Some(jobs))?;
    write_logs(args, &report, jobs)?;
    Ok(exit_code(&report))
}

/// One workload `--repeat N` times: its passes as the steps of one run.
fn repeated(
    args: &RunArgs,
    target: &std::path::Path,
    cancel: Arc<AtomicBool>,
    term: &mut Option<Terminal>,
) -> anyhow::Result<shared::RunReport> {
    let spec = args.spec();
    let step = shared::Step {
        name: shared::steps::test_label(&spec),
        spec: spec.clone(),
        pause_before_ms: 0,
        until_steady: None,
        pass: None,
        p99_target_us: None,
        rate_pct: None,
        with_previous: false,
    };
    let steps =
        shared::steps::repeat_steps(vec![step], args.repeat.unwrap_or(1), args.idle.unwrap_or(0));
    let opts = presets::AnalysisOptions::for_spec(&spec);
    let at = crate::io_target::Locator::path(target);
    run_sequence(args, &steps, &opts, &at, cancel, term)
}

/// Runs `steps` as one run on `at`, with the terminal lines and output files of `args`.
fn run_sequence(
    args: &RunArgs,
    steps: &[shared::Step],
    opts: &presets::AnalysisOptions,
    at: &crate::io_target::Locator,
    cancel: Arc<AtomicBool>,
    term: &mut Option<Terminal>,
) -> anyhow::Result<shared::RunReport> {
    let plans = measure::plan_steps(steps, at)?;
    let names = shared::steps::run_step_names(steps);
    let term = term.insert(Terminal::for_steps(names, args.quiet));
    let mut out = Outputs::for_args(term, args)?;
    let report = measure::run_steps(plans, opts, cancel, &mut out)?;
    out.finish(&report)?;
    Ok(report)
}

/// The exit code of a finished run, with the reason on stderr: bad blocks and failed I/Os
/// of a scan fail it whatever else happened (a failed or stopped run's read-back of what it
/// did write still counts), then a sustain miss, a stop, a failure.
pub(super) fn exit_code(report: &shared::RunReport) -> ExitCode {
    let sustain_failed = report.analysis.sustain.as_ref().is_some_and(|s| !s.pass);
    if let Some(v) = report.analysis.verify.as_ref().filter(|v| !v.passed()) {
        // Bad blocks fail the run whatever else happened (a failed or stopped run's
        // read-back of what it did write still counts).
        eprintln!(
            "diskscope: verification found {} bad block(s): what was read back is not what was written",
            v.bad.total()
        );
        return ExitCode::FAILURE;
    }
    let failed_ios: u64 = report.analysis.scan.iter().map(|m| m.error_ios()).sum();
    if failed_ios > 0 {
        eprintln!(
            "diskscope: the error scan found {failed_ios} failed I/O(s): see the unreadable regions above"
        );
        return ExitCode::FAILURE;
    }
    match report.status {
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
    }
}
