//! `diskscope devices`: the host's block devices, as a table or JSON.

use super::args::DevicesArgs;
use shared::units::format_bytes;
use std::process::ExitCode;

pub fn run(args: &DevicesArgs) -> anyhow::Result<ExitCode> {
    let devices = crate::devices::list();
    if args.json {
        println!("{}", serde_json::to_string_pretty(&devices)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{:<12} {:<10} {:>10} {:<28} {:<8} {:<22} state",
        "device", "transport", "size", "model", "temp", "written (drive)"
    );
    for d in &devices {
        let h = d.health.as_ref();
        let temp = h
            .and_then(|h| h.temperature_c)
            .map(|t| format!("{t:.0} °C"))
            .unwrap_or_default();
        let written = h
            .and_then(|h| h.bytes_written)
            .map(|b| format!("{:.2} TB", b as f64 / 1e12))
            .unwrap_or_default();
        let state = if d.in_use.is_empty() {
            "free".to_string()
        } else {
            format!("in use: {}", d.in_use.join("; "))
        };
        println!(
            "{:<12} {:<10} {:>10} {:<28} {:<8} {:<22} {state}",
            d.path,
            d.transport,
            format_bytes(d.size),
            d.model.clone().unwrap_or_default(),
            temp,
            written
        );
        if let Some(l) = &d.pcie {
            println!(
                "{:<12} PCIe link {} x{} (max {} x{})",
                "",
                l.current_speed.clone().unwrap_or_default(),
                l.current_width.unwrap_or(0),
                l.max_speed.clone().unwrap_or_default(),
                l.max_width.unwrap_or(0)
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
