//! Command line: `diskscope run` (one workload, fio-style flags) and `diskscope quick` (the
//! default benchmark on a scratch file in the data directory). Parses with clap, turns flags
//! into a [`shared::WorkloadSpec`], and reports errors as one line naming the bad value.

mod args;
mod compare;
mod devices;
mod emulate;
mod flushcheck;
mod outputs;
mod probe;
mod quick;
mod record;
mod remote;
mod run;
mod serve;
mod terminal;
mod workload_flags;

pub use args::{Cli, Command, ServeArgs};

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Exit code of a run stopped by Ctrl-C (128 + SIGINT), as shells report it.
pub const EXIT_STOPPED: u8 = 130;

/// Runs the parsed command line.
pub fn run(cli: Cli) -> ExitCode {
    if let Command::Serve(args) = &cli.command {
        // The server handles its own signals (graceful shutdown).
        return finish(serve::run(args));
    }
    let cancel = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&cancel);
    if let Err(e) = ctrlc::set_handler(move || {
        if flag.swap(true, Ordering::SeqCst) {
            // Second Ctrl-C: the user means it.
            std::process::exit(i32::from(EXIT_STOPPED));
        }
    }) {
        eprintln!("diskscope: warning: cannot catch Ctrl-C ({e}); partial results will not be written on interrupt");
    }
    let result = match cli.command {
        Command::Run(args) => run::run(&args, cancel),
        Command::Quick(args) => quick::run(&args, cancel),
        Command::Serve(args) => serve::run(&args),
        Command::Emulate(args) => emulate::run(&args, cancel),
        Command::Devices(args) => devices::run(&args),
        Command::Compare(args) => compare::run(&args),
        Command::Record(args) => record::run(&args, &cancel),
        Command::Runs(args) => remote::runs(&args),
        Command::Stop(args) => remote::stop(&args),
        Command::Export(args) => remote::export(&args),
        Command::Probe(args) => probe::run(&args, cancel),
        Command::Flushcheck(args) => flushcheck::run(&args, cancel),
    };
    finish(result)
}

fn finish(result: anyhow::Result<ExitCode>) -> ExitCode {
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("diskscope: error: {e:#}");
            // A job file diskscope cannot run is a usage error, as clap's are (exit 2).
            if e.downcast_ref::<crate::fiojob::JobFileError>().is_some() {
                ExitCode::from(2)
            } else {
                ExitCode::FAILURE
            }
        }
    }
}
