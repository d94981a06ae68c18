//! What the user sees while a run goes on: a progress bar with ETA on a terminal, and one
//! line per interval (MB/s, IOPS, p99).

use crate::report::table::interval_line;
use crate::runner::Observer;
use crate::workload::Plan;
use indicatif::{ProgressBar, ProgressStyle};
use shared::units::format_bytes;
use shared::Sample;
use std::io::IsTerminal;

pub struct Terminal {
    bar: Option<ProgressBar>,
    /// Bar counts bytes (size-based) or milliseconds (time-based).
    by_bytes: bool,
    quiet: bool,
    /// For a preset: step names, announced as each step starts.
    steps: Vec<String>,
    step: Option<u32>,
}

impl Terminal {
    pub fn new(plan: &Plan, quiet: bool) -> Self {
        let tty = std::io::stderr().is_terminal();
        let spec = plan.spec();
        let (bar, by_bytes) = match (tty && !quiet, plan.planned_bytes(), spec.runtime_ms) {
            (false, _, _) => (None, false),
            (true, Some(bytes), _) => (Some(bar(bytes, "{bytes}/{total_bytes}")), true),
            (true, None, Some(ms)) => (Some(bar(ms, "{msg}")), false),
            (true, None, None) => (None, false),
        };
        Terminal {
            bar,
            by_bytes,
            quiet,
            steps: Vec::new(),
            step: None,
        }
    }

    /// Lines only (no bar), with a header as each step of a preset starts.
    pub fn for_steps(steps: Vec<String>, quiet: bool) -> Self {
        Terminal {
            bar: None,
            by_bytes: false,
            quiet,
            steps,
            step: None,
        }
    }

    fn line(&self, text: &str) {
        match &self.bar {
            Some(b) => b.println(text),
            None if !self.quiet => eprintln!("{text}"),
            None => {}
        }
    }

    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

fn bar(len: u64, counter: &str) -> ProgressBar {
    let b = ProgressBar::new(len);
    let template = format!("[{{elapsed_precise}}] {{wide_bar}} {counter} ETA {{eta}}");
    if let Ok(style) = ProgressStyle::with_template(&template) {
        b.set_style(style);
    }
    b
}

impl Observer for Terminal {
    fn layout(&mut self, bytes: u64) {
        // Said even when quiet: laying out a large target takes a while.
        eprintln!(
            "laying out {} of real data in the target's holes before reading",
            format_bytes(bytes)
        );
    }

    fn sample(&mut self, s: &Sample) {
        if !self.steps.is_empty() && self.step != Some(s.step) {
            self.step = Some(s.step);
            let name = self.steps.get(s.step as usize).map_or("", String::as_str);
            self.line(&format!("step {}/{}: {name}", s.step + 1, self.steps.len()));
        }
        if let Some(b) = &self.bar {
            if self.by_bytes {
                b.set_position(s.read.cum_bytes + s.write.cum_bytes);
            } else {
                b.set_position(s.end_ns / 1_000_000);
                b.set_message(format!("{:.0}s", s.end_ns as f64 / 1e9));
            }
        }
        self.line(&interval_line(s));
    }
}
