//! `diskscope flushcheck write|verify`: does the drive keep what it acknowledged? The
//! writer records each flushed write on a witness agent (`--witness URL`, its operator
//! token), the power is cut, and `verify` reads back what the witness holds
//! ([`crate::flushcheck`]).

use super::args::{duration_ms, size};
use crate::client::Remote;
use anyhow::anyhow;
use clap::{Args, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

#[derive(Debug, Args)]
pub struct FlushcheckArgs {
    #[command(subcommand)]
    pub step: Step,
}

#[derive(Debug, Subcommand)]
pub enum Step {
    /// Write verified blocks, flushing every --flush-every writes (or each with --dsync),
    /// and record each flushed write on the witness before writing on. Then cut the power.
    Write(WriteArgs),
    /// After the cut and a restart: read back every block the witness recorded durable and
    /// judge it (HONEST, LIES ABOUT FLUSH, TORN WRITES, CORRUPT; exit 1 unless HONEST).
    Verify(VerifyArgs),
}

/// The witness: another agent (`diskscope serve` on another machine, or on this one with
/// its database on another disk: weaker, said so).
#[derive(Debug, Args)]
pub struct WitnessArgs {
    /// The witness agent's URL, e.g. http://lab-pc:7878.
    #[arg(long, value_name = "URL")]
    pub witness: String,
    /// Its operator token (also DISKSCOPE_TOKEN).
    #[arg(long)]
    pub token: Option<String>,
}

impl WitnessArgs {
    fn token(&self) -> anyhow::Result<String> {
        self.token
            .clone()
            .or_else(|| std::env::var("DISKSCOPE_TOKEN").ok())
            .ok_or_else(|| {
                anyhow!(
                    "--witness {}: give --token (or DISKSCOPE_TOKEN)",
                    self.witness
                )
            })
    }

    fn remote(&self) -> anyhow::Result<Remote> {
        Ok(Remote::new(&self.witness, self.token()?))
    }

    /// A witness on this machine loses its power with the drive's unless its database is
    /// on another powered disk: said before anything is written.
    fn warn_if_local(&self) {
        if shared::flushcheck::witness_is_local(&self.witness) {
            eprintln!("diskscope: {}", shared::flushcheck::LOCAL_WITNESS);
        }
    }
}

#[derive(Debug, Args)]
pub struct WriteArgs {
    /// The file or block device to write (its contents are destroyed).
    pub target: PathBuf,
    #[command(flatten)]
    pub witness: WitnessArgs,
    /// Block size.
    #[arg(long, default_value = "4K", value_parser = size)]
    pub bs: u64,
    /// Bytes written over, from the start (default: the whole target).
    #[arg(long, value_parser = size)]
    pub size: Option<u64>,
    /// Writes per fdatasync.
    #[arg(long, default_value_t = 16)]
    pub flush_every: u64,
    /// Each write with O_DSYNC (FUA) instead of fdatasync.
    #[arg(long)]
    pub dsync: bool,
    /// fsync (data and metadata) instead of fdatasync.
    #[arg(long, conflicts_with = "dsync")]
    pub fsync: bool,
    /// Stop after this many writes.
    #[arg(long)]
    pub count: Option<u64>,
    /// Stop after this long (default: until the power goes, or Ctrl-C).
    #[arg(long, value_parser = duration_ms)]
    pub duration: Option<u64>,
    /// Seeds the block offsets (mixed with the clock: each session differs).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
}

impl WriteArgs {
    /// The `flushcheck` preset's workload with these flags.
    fn spec(&self, token: String) -> shared::WorkloadSpec {
        let mut s = crate::presets::flushcheck_spec(
            self.bs,
            self.size,
            crate::presets::flushcheck_flush(
                u32::try_from(self.flush_every).unwrap_or(u32::MAX),
                self.fsync,
                self.dsync,
            ),
            shared::flushcheck::WriterSpec {
                witness: self.witness.witness.clone(),
                count: self.count,
                token,
            },
        );
        s.runtime_ms = self.duration;
        s.seed = self.seed;
        s
    }
}

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The target the writer wrote.
    pub target: PathBuf,
    #[command(flatten)]
    pub witness: WitnessArgs,
    /// The session `write` printed (default: the witness's newest of this host on TARGET).
    #[arg(long)]
    pub session: Option<i64>,
    /// The verdict as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

pub fn run(args: &FlushcheckArgs, cancel: Arc<AtomicBool>) -> anyhow::Result<ExitCode> {
    match &args.step {
        Step::Write(w) => write(w, cancel),
        Step::Verify(v) => verify(v),
    }
}

/// The writer is the `flushcheck` preset's run: samples, histograms and the witness
/// session as any run has them; its lines are the session's.
fn write(a: &WriteArgs, cancel: Arc<AtomicBool>) -> anyhow::Result<ExitCode> {
    a.witness.warn_if_local();
    let token = a.witness.token()?;
    let spec = a.spec(token);
    let plan = crate::measure::plan(&spec, &a.target)?;
    let report = crate::measure::run(plan, cancel, &mut Quiet)?;
    let Some(w) = &report.analysis.flushcheck else {
        anyhow::bail!(
            "{}",
            report
                .error
                .map_or_else(|| "the writer did not start".into(), |e| e.message)
        );
    };
    println!("{}", w.line());
    if let Some(why) = &w.stopped {
        println!("stopped: {why}");
    } else if let Some(e) = &report.error {
        // Not the drive: the witness did not answer, nothing more was written.
        anyhow::bail!("{}", e.message);
    }
    println!(
        "after the power cut and a restart: diskscope flushcheck verify {} --witness {} --session {}",
        a.target.display(),
        a.witness.witness,
        w.session
    );
    Ok(ExitCode::SUCCESS)
}

/// The writer's run shows nothing while it goes (a sample line would hide the session).
struct Quiet;

impl crate::runner::Observer for Quiet {
    fn sample(&mut self, _: &shared::Sample) {}
}

fn verify(a: &VerifyArgs) -> anyhow::Result<ExitCode> {
    let remote = a.witness.remote()?;
    let v = crate::flushcheck::verify(&a.target, &remote, a.session)?;
    println!("{}", v.line());
    for l in &v.lines {
        println!("  {l}");
    }
    if let Some(path) = &a.json {
        std::fs::write(path, serde_json::to_string_pretty(&v)?)
            .map_err(|e| anyhow!("--json {}: {e}", path.display()))?;
    }
    Ok(if v.word() == "HONEST" {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
