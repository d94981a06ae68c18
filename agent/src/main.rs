use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    agent::cli::run(agent::cli::Cli::parse())
}
