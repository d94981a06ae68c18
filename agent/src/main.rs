//! The `diskscope` binary: parses the command line and hands it to `agent::cli::run`.

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    agent::cli::run(agent::cli::Cli::parse())
}
