//! The run report: one JSON document with everything measured and how.

use crate::sample::{HistogramDump, RunSummary, Sample};
use crate::spec::WorkloadSpec;
use serde::{Deserialize, Serialize};

/// Where a run is in its life, and how it ended.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    Running,
    Completed,
    /// Stopped by the user (Ctrl-C, stop button); results up to the stop are kept.
    Stopped,
    /// Ended by an error (ENOSPC, EIO, ...); results up to the error are kept.
    Failed,
    /// The agent went away while the run was going; its samples up to then are kept.
    Interrupted,
}

impl RunStatus {
    pub const ALL: [RunStatus; 5] = [
        RunStatus::Running,
        RunStatus::Completed,
        RunStatus::Stopped,
        RunStatus::Failed,
        RunStatus::Interrupted,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Completed => "completed",
            RunStatus::Stopped => "stopped",
            RunStatus::Failed => "failed",
            RunStatus::Interrupted => "interrupted",
        }
    }

    pub fn parse(s: &str) -> Option<RunStatus> {
        RunStatus::ALL.into_iter().find(|r| r.as_str() == s)
    }
}

/// Why a run failed, with where it failed when an I/O failed.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RunError {
    pub message: String,
    /// `read` or `write` when an I/O failed.
    pub op: Option<String>,
    /// Byte offset of the failed I/O.
    pub offset: Option<u64>,
    /// The OS error number (e.g. 28 for ENOSPC).
    pub errno: Option<i32>,
}

/// Where and how the numbers were measured.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Environment {
    // The fields the dashboard never shows are left out of its build (`cfg(not(wasm32))`):
    // its JSON reader skips them, and their readers cost the bundle.
    pub host: String,
    #[cfg(not(target_arch = "wasm32"))]
    pub kernel: String,
    #[cfg(not(target_arch = "wasm32"))]
    pub diskscope_version: String,
    #[cfg(not(target_arch = "wasm32"))]
    pub cpu_model: Option<String>,
    /// Unix time in milliseconds when the run started.
    #[cfg(not(target_arch = "wasm32"))]
    pub started_at_ms: u64,
    /// The backend that ran (may differ from the requested one after a fallback).
    pub backend: String,
    /// Why the backend differs from the requested one, when it does.
    #[cfg(not(target_arch = "wasm32"))]
    pub backend_note: Option<String>,
    pub target: String,
    /// `file`, `block` or `none` (null backend).
    #[cfg(not(target_arch = "wasm32"))]
    pub target_kind: String,
    pub target_size: u64,
    #[cfg(not(target_arch = "wasm32"))]
    pub logical_block_size: u32,
    /// Whether O_DIRECT was in effect.
    pub direct: bool,
    /// Bytes laid out with real data before the run (file targets that had holes).
    #[cfg(not(target_arch = "wasm32"))]
    pub laid_out_bytes: u64,
    /// io_uring kernel worker threads (`iou-wrk-*`) seen during the run: when non-zero the
    /// kernel handed I/O to worker threads instead of issuing it inline (as on tmpfs), and
    /// the figures are not comparable with inline submission.
    #[cfg(not(target_arch = "wasm32"))]
    pub io_workers_seen: u32,
    /// Ring features that could be used (fixed buffers, registered file, ...).
    #[cfg(not(target_arch = "wasm32"))]
    pub ring_features: Vec<String>,
    pub warnings: Vec<String>,
    /// The block device under the target (the device itself, or the one holding the
    /// file) with its health just before the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_before: Option<crate::devices::DeviceInfo>,
    /// Its health just after the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg(not(target_arch = "wasm32"))]
    pub device_after: Option<crate::devices::DeviceHealth>,
    /// For a file target: its filesystem, free space and whether O_DIRECT works there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filesystem: Option<crate::devices::FsInfo>,
    /// The link between host and medium (the device's PCIe, SATA or USB link; the
    /// emulated drive's `link_mb_s`), which no figure of the run can exceed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg(not(target_arch = "wasm32"))]
    pub link: Option<crate::devices::Link>,
    /// The device spins (a rotating disk; virtual devices' claims are not taken).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg(not(target_arch = "wasm32"))]
    pub rotational: Option<bool>,
    /// What backed the I/O buffers and what the kernel did with the I/Os, measured during
    /// the run (for a preset: over all its steps).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_path: Option<IoPath>,
}

/// How the run's I/O reached the device, measured per run rather than inferred from
/// settings: the buffers' backing (huge pages or 4 KiB pages, from the kernel's own
/// accounting), the requests the block device completed per I/O of the run (more than one:
/// the block layer split I/Os), and the io_uring worker threads that ran (the kernel handed
/// I/O to a worker instead of issuing it inline).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct IoPath {
    /// Bytes of I/O buffers mapped for the run's jobs (for a preset: summed over its steps,
    /// so the share in huge pages weighs each step by its pool).
    pub buffer_bytes: u64,
    /// Of those, bytes the kernel backs with 2 MiB huge pages.
    pub huge_page_bytes: u64,
    /// The block device whose counters were read (sysfs name), when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// Requests the device completed (reads, writes) and their bytes, during the run.
    pub device_reads: u64,
    pub device_read_bytes: u64,
    pub device_writes: u64,
    pub device_write_bytes: u64,
    /// Device requests per I/O of the run (the run's mean I/O size over the device's mean
    /// request size); `None` when the device did not see the run's traffic (page cache,
    /// FUSE, no I/O in that direction).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_requests_per_io: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_requests_per_io: Option<f64>,
    /// io_uring worker threads (`iou-wrk-*`) that ran during the run, and their CPU time.
    pub worker_threads: u32,
    pub worker_cpu_ms: f64,
}

impl IoPath {
    /// `huge pages`, `4 KiB pages` or `mixed (N % huge pages)`.
    pub fn backing(&self) -> String {
        if self.buffer_bytes == 0 {
            "none".into()
        } else if self.huge_page_bytes >= self.buffer_bytes {
            "2 MiB huge pages".into()
        } else if self.huge_page_bytes == 0 {
            "4 KiB pages".into()
        } else {
            format!(
                "mixed ({:.0} % in huge pages)",
                self.huge_page_bytes as f64 * 100.0 / self.buffer_bytes as f64
            )
        }
    }

    /// "I/O path: buffers 2 MiB in 2 MiB huge pages; vda: 1.00 requests per read; 0 io_uring
    /// worker thread(s)" (CLI summary and dashboard alike); `None` without buffers.
    pub fn summary_line(&self) -> Option<String> {
        if self.buffer_bytes == 0 {
            return None;
        }
        let mut line = format!(
            "I/O path: buffers {} in {}",
            crate::units::format_bytes(self.buffer_bytes),
            self.backing()
        );
        if let Some(dev) = &self.device {
            for (dir, r) in [
                ("read", self.read_requests_per_io),
                ("write", self.write_requests_per_io),
            ] {
                if let Some(r) = r {
                    line.push_str(&format!("; {dev}: {r:.2} requests per {dir}"));
                }
            }
        }
        line.push_str(&format!(
            "; {} io_uring worker thread(s)",
            self.worker_threads
        ));
        Some(line)
    }

    /// Requests per I/O above which the run says the block layer split its I/Os.
    pub const SPLIT_WARN: f64 = 1.2;

    /// Whether the block layer split I/Os (in either direction).
    pub fn split(&self) -> bool {
        [self.read_requests_per_io, self.write_requests_per_io]
            .into_iter()
            .flatten()
            .any(|r| r >= Self::SPLIT_WARN)
    }

    /// Adds another run's (a step's) figures: counts add up, ratios are recomputed by bytes.
    pub fn add(&mut self, o: &IoPath) {
        // Each side weighs by the device bytes it was measured over.
        let weigh = |a: Option<f64>, ab: u64, b: Option<f64>, bb: u64| match (a, b) {
            (Some(x), Some(y)) => Some((x * ab as f64 + y * bb as f64) / (ab + bb).max(1) as f64),
            (x, y) => x.or(y),
        };
        self.read_requests_per_io = weigh(
            self.read_requests_per_io,
            self.device_read_bytes,
            o.read_requests_per_io,
            o.device_read_bytes,
        );
        self.write_requests_per_io = weigh(
            self.write_requests_per_io,
            self.device_write_bytes,
            o.write_requests_per_io,
            o.device_write_bytes,
        );
        self.buffer_bytes += o.buffer_bytes;
        self.huge_page_bytes += o.huge_page_bytes;
        if self.device.is_none() {
            self.device = o.device.clone();
        }
        self.device_reads += o.device_reads;
        self.device_read_bytes += o.device_read_bytes;
        self.device_writes += o.device_writes;
        self.device_write_bytes += o.device_write_bytes;
        self.worker_threads = self.worker_threads.max(o.worker_threads);
        self.worker_cpu_ms += o.worker_cpu_ms;
    }
}

/// The document written by `diskscope run --json` and served by the API's export.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RunReport {
    pub protocol_version: u32,
    pub status: RunStatus,
    pub error: Option<RunError>,
    pub spec: WorkloadSpec,
    pub environment: Environment,
    pub summary: RunSummary,
    pub samples: Vec<Sample>,
    pub histogram: HistogramDump,
    /// The steps of a preset run (empty for a single workload).
    #[serde(default)]
    pub steps: Vec<crate::steps::StepReport>,
    /// What the analyses found (cache cliff, steady state, sustained rate, ...).
    #[serde(default)]
    pub analysis: crate::analysis::Analysis,
    /// Bytes per 10 ms, completion gaps and slow I/Os.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeline: Option<crate::analysis::Timeline>,
    /// A run over several targets at once: each target's summary (the run's summary and
    /// samples are their sum).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<TargetPart>,
}

/// One target of a multi-target run.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TargetPart {
    pub path: String,
    /// The fio job this part ran, when a job file's jobs ran at once (several may share a
    /// target; the part is theirs, not the target's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<String>,
    pub summary: RunSummary,
    /// This part's latency histogram (fio's per-job percentiles come from it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histogram: Option<crate::sample::HistogramDump>,
    pub status: Option<RunStatus>,
    /// The step of the run this part belongs to, when its jobs ran at once in one of
    /// several steps (a job file's stonewall group). (Not read by the dashboard.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", serde(skip))]
    pub step: Option<u32>,
    /// This target's read-back (`verify` runs); its bad offsets are this target's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<crate::analysis::verify::Verify>,
}

/// A run's warnings with each repeated one said once: the same warning for several steps
/// (`step 'X': W`, the first step's without the prefix) becomes one line naming the steps.
/// Warnings whose figures differ between steps group by their wording (digits aside) and
/// keep the first one's figures, saying so.
pub fn said_once(warnings: &[String]) -> Vec<String> {
    fn split(w: &str) -> (Option<&str>, &str) {
        match w.strip_prefix("step '").and_then(|r| r.split_once("': ")) {
            Some((step, body)) => (Some(step), body),
            None => (None, w),
        }
    }
    // Each run of digits (a figure: "4", "13", "1.54") is one '#', so that figures of
    // different widths still give one shape.
    let shape = |b: &str| -> String {
        let mut out = String::with_capacity(b.len());
        for c in b.chars() {
            if c.is_ascii_digit() || c == '.' {
                if !out.ends_with('#') {
                    out.push('#');
                }
            } else {
                out.push(c);
            }
        }
        out
    };
    // (shape, first body, steps, bodies differ)
    let mut groups: Vec<(String, String, Vec<String>, bool)> = Vec::new();
    for w in warnings {
        let (step, body) = split(w);
        let key = shape(body);
        let step = step.map_or_else(|| "first".to_string(), |s| format!("'{s}'"));
        match groups.iter_mut().find(|g| g.0 == key) {
            Some(g) => {
                g.3 |= g.1 != body;
                if !g.2.contains(&step) {
                    g.2.push(step);
                }
            }
            None => groups.push((key, body.to_string(), vec![step], false)),
        }
    }
    groups
        .into_iter()
        .map(|(_, body, steps, differ)| match steps.as_slice() {
            [one] if one == "first" => body,
            [one] => format!("step {one}: {body}"),
            many => {
                let shown: Vec<&str> = many.iter().take(4).map(String::as_str).collect();
                let more = many.len().saturating_sub(4);
                format!(
                    "{} steps ({}{}): {body}{}",
                    many.len(),
                    shown.join(", "),
                    if more > 0 {
                        format!(" and {more} more")
                    } else {
                        String::new()
                    },
                    if differ {
                        " (figures of the first; they differ by step)"
                    } else {
                        ""
                    }
                )
            }
        })
        .collect()
}

#[cfg(test)]
mod said_once_tests {
    use super::said_once;

    #[test]
    fn the_same_warning_for_many_steps_is_one_line() {
        let w: Vec<String> = vec![
            "block layer split 2.00 requests per I/O".into(),
            "step '1K read': block layer split 2.00 requests per I/O".into(),
            "step '2K read': block layer split 4.00 requests per I/O".into(),
            "step '2K read': other".into(),
        ];
        let out = said_once(&w);
        assert_eq!(out.len(), 2, "{out:?}");
        assert!(
            out[0].starts_with("3 steps (first, '1K read', '2K read'): block layer split 2.00"),
            "{}",
            out[0]
        );
        assert!(out[0].ends_with("they differ by step)"), "{}", out[0]);
        assert_eq!(out[1], "step '2K read': other");
    }

    #[test]
    fn figures_of_different_widths_are_one_warning() {
        // As atto on a new file said it: 4, 2 and 13 worker threads were three lines.
        let w: Vec<String> = vec![
            "handed I/O to 4 kernel worker thread(s) (11 ms of CPU)".into(),
            "step '2K write': handed I/O to 13 kernel worker thread(s) (2 ms of CPU)".into(),
            "step '4K write': handed I/O to 2 kernel worker thread(s) (7.5 ms of CPU)".into(),
        ];
        let out = said_once(&w);
        assert_eq!(out.len(), 1, "{out:?}");
        assert!(out[0].starts_with("3 steps (first, '2K write', '4K write'): handed I/O to 4 "));
    }
}
