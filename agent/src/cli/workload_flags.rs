//! The workload flags of `diskscope run`, made from the one table of workload options
//! (`shared::options::OPTIONS`): one flag per option, its help the form's, its text read by
//! the option's own reader. A bad value is clap's error naming the flag and the value.

use clap::{Arg, ArgAction, ArgMatches, Command};
use shared::options::{self, Kind, WorkloadOption, OPTIONS};
use shared::WorkloadSpec;

/// The workload options given on the command line and the spec they make.
#[derive(Clone, Debug, Default)]
pub struct WorkloadFlags {
    /// (option key, text) in table order.
    pub given: Vec<(&'static str, String)>,
    pub spec: WorkloadSpec,
}

impl WorkloadFlags {
    /// Whether the option `key` was given.
    pub fn has(&self, key: &str) -> bool {
        self.given.iter().any(|(k, _)| *k == key)
    }

    /// The flags given, as typed (`--bs 4K`), except the options named in `except`.
    pub fn shown_except(&self, except: &[&str]) -> Vec<String> {
        self.given
            .iter()
            .filter(|(k, _)| !except.contains(k))
            .filter_map(|(k, t)| {
                let o = options::by_key(k)?;
                Some(match o.kind {
                    Kind::Check => format!("--{}", o.cli[0]),
                    _ => format!("--{} {t}", o.cli[0]),
                })
            })
            .collect()
    }
}

fn arg(o: &'static WorkloadOption) -> Arg {
    let a = Arg::new(o.key)
        .long(o.cli[0])
        .help(o.help)
        .visible_aliases(&o.cli[1..]);
    match o.kind {
        Kind::Check => a.action(ArgAction::SetTrue),
        Kind::Select(values) => a.action(ArgAction::Set).value_name("VALUE").help(format!(
            "{} [{}]",
            o.help,
            values
                .iter()
                .filter(|v| !v.is_empty())
                .copied()
                .collect::<Vec<_>>()
                .join(", ")
        )),
        Kind::Size(_) => a.action(ArgAction::Set).value_name("SIZE"),
        Kind::Count(_) => a.action(ArgAction::Set).value_name("N"),
        Kind::Time(_) | Kind::Micros(_) => a.action(ArgAction::Set).value_name("TIME"),
        Kind::Text(_) | Kind::Trace => a.action(ArgAction::Set).value_name("TEXT"),
    }
}

impl clap::FromArgMatches for WorkloadFlags {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let mut given = Vec::new();
        for o in OPTIONS {
            match o.kind {
                Kind::Check => {
                    if m.get_flag(o.key) {
                        given.push((o.key, o.flag_value().to_string()));
                    }
                }
                _ => {
                    if let Some(t) = m.get_one::<String>(o.key) {
                        given.push((o.key, t.clone()));
                    }
                }
            }
        }
        let (spec, errs) = options::spec_from(given.iter().map(|(k, t)| (*k, t.as_str())));
        if let Some((key, e)) = errs.first() {
            let text = given
                .iter()
                .find(|(k, _)| k == key)
                .map_or("", |(_, t)| t.as_str());
            let flag = options::by_key(key).map_or(*key, |o| o.cli[0]);
            return Err(clap::Error::raw(
                clap::error::ErrorKind::ValueValidation,
                format!("invalid value '{text}' for '--{flag}': {e}\n"),
            ));
        }
        Ok(WorkloadFlags { given, spec })
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

impl clap::Args for WorkloadFlags {
    fn augment_args(cmd: Command) -> Command {
        cmd.args(OPTIONS.iter().map(arg))
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}
