//! `diskscope emulate`: mount an emulated SSD until Ctrl-C or SIGTERM.

use super::args::EmulateArgs;
use crate::emulate::{self, model::SsdModel};
use anyhow::Context;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

pub fn run(args: &EmulateArgs, cancel: Arc<AtomicBool>) -> anyhow::Result<ExitCode> {
    let model: SsdModel = match &args.model {
        Some(json) => {
            serde_json::from_str(json).with_context(|| format!("invalid --model {json}"))?
        }
        None => SsdModel::default(),
    };
    let mounted = emulate::mount(&args.mount, model.clone())?;
    // Ctrl-C and SIGTERM set `cancel` (ctrlc's termination feature).
    println!(
        "emulated SSD at {} ({} bytes; temperature in {})",
        mounted.disk().display(),
        model.capacity,
        mounted.dir.join("hwmon/temp1_input").display()
    );
    while !cancel.load(Ordering::Relaxed) {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    drop(mounted);
    Ok(ExitCode::SUCCESS)
}
