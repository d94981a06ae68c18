//! `diskscope run --agent URL --token T ...`: the same flags as a local run, run by a remote
//! agent through its API. The run is created with `POST /api/v1/runs`, its samples are
//! printed live from the WebSocket as a local run prints them, Ctrl-C stops it on the agent,
//! and at the end the agent's report (`/export`) gives the summary, `--json` and the exit
//! code a local run would have (a sustain miss exits 1), so a script on a laptop can qualify
//! a capture box remotely.

use super::args::{AgentArgs, ExportArgs, RunArgs, RunIdArgs, RunsArgs};
use super::terminal::Terminal;
use crate::client::Remote;
use crate::runner::Observer;
use anyhow::{anyhow, bail, Context};
use shared::api::CreateRun;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The agent of `--agent`/`--token` (or DISKSCOPE_TOKEN).
fn remote_of(a: &AgentArgs) -> anyhow::Result<Remote> {
    let token = a
        .token
        .clone()
        .or_else(|| std::env::var("DISKSCOPE_TOKEN").ok())
        .ok_or_else(|| anyhow!("--agent {}: give --token (or DISKSCOPE_TOKEN)", a.agent))?;
    Ok(Remote::new(&a.agent, token))
}

/// The run request the flags describe.
fn request(args: &RunArgs) -> anyhow::Result<CreateRun> {
    for (flag, given) in [
        ("--csv", args.csv.is_some()),
        ("--timeline", args.timeline.is_some()),
        ("--max-memory", args.max_memory.is_some()),
    ] {
        if given {
            bail!("{flag} is not available with --agent: the agent keeps the run (--json fetches its report)");
        }
    }
    let (first, also) = args
        .target
        .split_first()
        .ok_or_else(|| anyhow!("no --target"))?;
    let preset = args.preset.clone();
    if let Some(name) = &preset {
        let ignored = args.flags_presets_ignore();
        if !ignored.is_empty() {
            bail!(
                "--preset {name} sets the workload itself and does not use {}",
                ignored.join(", ")
            );
        }
    }
    Ok(CreateRun {
        target: first.display().to_string(),
        also: also.iter().map(|t| t.display().to_string()).collect(),
        spec: preset.is_none().then(|| args.spec()),
        options: preset.is_some().then(|| args.preset_options()),
        preset,
        name: None,
        confirm: args.confirm.clone(),
        repeat: args.repeat,
        repeat_idle_ms: args.repeat.and(args.idle),
        fio_job: None,
        witness_token: args.witness_token()?,
        ..CreateRun::default()
    })
}

/// Runs on the agent at `agent`, printing it as a local run does.
pub fn run(args: &RunArgs, agent: &str, cancel: Arc<AtomicBool>) -> anyhow::Result<ExitCode> {
    let token = args
        .token
        .first()
        .cloned()
        .or_else(|| std::env::var("DISKSCOPE_TOKEN").ok())
        .ok_or_else(|| {
            anyhow!(
                "--agent {agent}: give --token (or DISKSCOPE_TOKEN): the agent's operator token"
            )
        })?;
    let remote = Remote::new(agent, token);
    let body = request(args)?;
    let id = remote.start_run(&body)?;
    eprintln!("diskscope: run {id} on {}", remote.base);
    let mut term = Terminal::for_steps(Vec::new(), args.quiet);
    remote
        .follow(id, &cancel, &mut None, &mut |s| term.sample(&s))
        .map_err(|why| anyhow!("run {id} on {}: {why}", remote.base))?;
    if cancel.load(Ordering::Relaxed) {
        eprintln!("diskscope: stopped run {id} on the agent");
    }
    let (text, report) = remote.report(id)?;
    if let Some(path) = &args.json {
        std::fs::write(path, &text).with_context(|| format!("writing {}", path.display()))?;
    }
    print!("{}", crate::report::table::summary(&report));
    print!("{}", crate::report::table::analysis(&report));
    Ok(super::run::exit_code(&report))
}

/// `diskscope run --agent A --agent B …` (or `--agents FILE`): one run on every agent at a
/// shared start, coordinated and merged here (`crate::group`), printed as a local run is:
/// the merged lines live, the merged summary, each host, and the exit code a local run
/// would have (a sustain miss of the total exits 1).
pub fn run_group(args: &RunArgs, cancel: Arc<AtomicBool>) -> anyhow::Result<ExitCode> {
    let on_fault = match args.on_fault.as_deref() {
        None | Some("continue") => shared::group::OnFault::Continue,
        Some("stop") => shared::group::OnFault::Stop,
        Some(other) => bail!("--on-fault {other}: continue or stop"),
    };
    let req = CreateRun {
        agents: members(args)?,
        on_fault,
        ..request(args)?
    };
    let started = crate::group::start(&req)?;
    for (address, id) in started.runs() {
        eprintln!("diskscope: run {id} on {address}");
    }
    let mut term = Terminal::for_steps(Vec::new(), args.quiet);
    let report = crate::group::follow(started, cancel, &mut term)?;
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&report)?;
        std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
    }
    print!("{}", crate::report::table::summary(&report));
    print!("{}", crate::report::table::analysis(&report));
    Ok(super::run::exit_code(&report))
}

/// The group's agents and their tokens: `--agent`s with their `--token`s (one each, one for
/// all, or DISKSCOPE_TOKEN), then the `--agents` file's lines.
fn members(args: &RunArgs) -> anyhow::Result<Vec<shared::group::Member>> {
    let fallback = || {
        std::env::var("DISKSCOPE_TOKEN")
            .ok()
            .or_else(|| (args.token.len() == 1).then(|| args.token[0].clone()))
    };
    if args.token.len() > 1 && args.token.len() != args.agent.len() {
        bail!(
            "{} --token for {} --agent: give one per agent, in the same order, or one for all",
            args.token.len(),
            args.agent.len()
        );
    }
    let mut out = Vec::new();
    for (i, address) in args.agent.iter().enumerate() {
        let token = match args.token.get(i) {
            Some(t) if args.token.len() > 1 => Some(t.clone()),
            _ => fallback(),
        };
        let token = token.ok_or_else(|| {
            anyhow!("--agent {address}: give --token (or DISKSCOPE_TOKEN): its operator token")
        })?;
        out.push(shared::group::Member {
            address: address.clone(),
            token,
            target: None,
        });
    }
    if let Some(file) = &args.agents {
        let text = std::fs::read_to_string(file)
            .with_context(|| format!("--agents {}", file.display()))?;
        for (n, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            let mut words = line.split_whitespace();
            let Some(address) = words.next() else {
                continue;
            };
            let at = || format!("{}:{}", file.display(), n + 1);
            let token = match words.next() {
                Some(path) => token_file(&file.parent().unwrap_or(file).join(path))
                    .with_context(at)?,
                None => fallback().ok_or_else(|| {
                    anyhow!("{}: {address} names no token file, and no --token or DISKSCOPE_TOKEN is given", at())
                })?,
            };
            if words.next().is_some() {
                bail!(
                    "{}: a line is an agent's URL and its token file, nothing more",
                    at()
                );
            }
            out.push(shared::group::Member {
                address: address.to_string(),
                token,
                target: None,
            });
        }
    }
    Ok(out)
}

/// An operator token from a file: the token alone, or an agent's `tokens.json`.
fn token_file(path: &std::path::Path) -> anyhow::Result<String> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading the token file {}", path.display()))?;
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) {
        return v
            .get("operator")
            .and_then(|t| t.as_str())
            .map(str::to_string)
            .ok_or_else(|| anyhow!("{}: JSON without an \"operator\" token", path.display()));
    }
    let token = text.trim();
    if token.is_empty() || token.contains(char::is_whitespace) {
        bail!("{}: not one token", path.display());
    }
    Ok(token.to_string())
}

/// `diskscope runs`: the agent's history, a line per run.
pub fn runs(args: &RunsArgs) -> anyhow::Result<ExitCode> {
    let remote = remote_of(&args.agent)?;
    let mut path = format!("/api/v1/runs?page={}&per_page=50", args.page);
    if let Some(s) = &args.status {
        path.push_str(&format!("&status={s}"));
    }
    let text = remote.get(&path, "listing the runs")?;
    let list: shared::api::RunList = serde_json::from_str(&text).context("the run list")?;
    println!(
        "{:>6}  {:<11} {:<20} {:<40}  result",
        "id", "status", "test", "target"
    );
    for r in &list.runs {
        // The same one line as the dashboard's history and the kiosk.
        println!(
            "{:>6}  {:<11} {:<20} {:<40}  {}",
            r.id,
            r.status.as_str(),
            shared::headline::test_name(r),
            r.target,
            shared::headline::line(r)
        );
    }
    println!(
        "{} of {} run(s), page {}",
        list.runs.len(),
        list.total,
        list.page
    );
    Ok(ExitCode::SUCCESS)
}

/// `diskscope stop ID`.
pub fn stop(args: &RunIdArgs) -> anyhow::Result<ExitCode> {
    let remote = remote_of(&args.agent)?;
    remote.post(
        &format!("/api/v1/runs/{}/stop", args.id),
        &serde_json::json!({}),
        "stopping the run",
    )?;
    println!("stop requested for run {}", args.id);
    Ok(ExitCode::SUCCESS)
}

/// `diskscope export ID`: the agent's report (or CSV samples) as it serves it.
pub fn export(args: &ExportArgs) -> anyhow::Result<ExitCode> {
    let remote = remote_of(&args.agent)?;
    let path = format!("/api/v1/runs/{}/export?format={}", args.id, args.format);
    let text = remote.get(&path, "exporting the run")?;
    match &args.out {
        Some(p) => std::fs::write(p, text).with_context(|| format!("writing {}", p.display()))?,
        None => print!("{text}"),
    }
    Ok(ExitCode::SUCCESS)
}
