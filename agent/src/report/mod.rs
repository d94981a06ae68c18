//! Run reports: the JSON document (`--json`), one CSV row per sample (`--csv`), and the
//! terminal summary table.

pub mod csv;
pub mod fio_json;
pub mod fio_log;
pub mod table;

use crate::env;
use crate::runner::RunOutcome;
use crate::workload::Plan;
use shared::{Environment, IoPath, RunReport, WorkloadSpec, PROTOCOL_VERSION};
use std::path::Path;

/// Assembles the report document of a finished (or stopped, or failed) run.
pub fn build(plan: &Plan, outcome: RunOutcome, started_at_ms: u64) -> RunReport {
    let spec = plan.spec();
    let target = plan.target();
    let mut warnings = io_path_warnings(&outcome.io_path, spec);
    // (The files workload's operations go through the page cache by nature.)
    if !spec.direct && !spec.backend.opens_nothing() && spec.files.is_none() {
        warnings.push("buffered I/O (--buffered): figures include the page cache".into());
    }
    if let Some(note) = &outcome.backend_note {
        warnings.push(note.clone());
    }
    let environment = Environment {
        host: env::hostname(),
        kernel: env::kernel(),
        diskscope_version: env::VERSION.to_string(),
        cpu_model: env::cpu_model(),
        started_at_ms: outcome.started_at_ms.unwrap_or(started_at_ms),
        backend: outcome.backend,
        backend_note: outcome.backend_note,
        target: target.path.display().to_string(),
        target_kind: target.kind.as_str().to_string(),
        target_size: target.size,
        logical_block_size: target.logical_block_size,
        direct: spec.direct && !spec.backend.opens_nothing(),
        laid_out_bytes: outcome.laid_out_bytes,
        io_workers_seen: outcome.io_path.worker_threads,
        ring_features: outcome.ring_features,
        warnings,
        device_before: None,
        device_after: None,
        filesystem: None,
        link: None,
        rotational: None,
        io_path: Some(outcome.io_path),
    };
    RunReport {
        protocol_version: PROTOCOL_VERSION,
        status: outcome.status,
        error: outcome.error,
        spec: spec.clone(),
        environment,
        summary: outcome.summary,
        samples: outcome.samples,
        histogram: outcome.histogram,
        steps: Vec::new(),
        analysis: shared::analysis::Analysis {
            verify: outcome.verify,
            scan: outcome.scan.into_iter().collect(),
            replay: outcome.replay.into_iter().collect(),
            files_done: outcome.files_done,
            // Beside an idle sweep, what the device says of its power states.
            probe: outcome.probe.map(|mut p| {
                if spec.probe.as_ref().is_some_and(|s| s.idle_sweep.is_some()) {
                    p.power = Some(crate::devices::power::settings(target));
                }
                p
            }),
            flushcheck: outcome.flushcheck,
            qd_search: spec
                .latency_target
                .zip(outcome.search)
                .map(|(rule, (depths, tally))| shared::qd_search::QdSearch {
                    step: 0,
                    rule,
                    depths,
                    final_window: tally.map(|t| {
                        let (summary, histogram) = crate::stats::merge::window_figures(&t);
                        let from_ns = t.start_ns.saturating_sub(spec.ramp_ms * 1_000_000);
                        shared::qd_search::FinalWindow {
                            from_ns,
                            summary,
                            histogram,
                        }
                    }),
                })
                .into_iter()
                .collect(),
            ..Default::default()
        },
        timeline: Some(outcome.timeline),
        targets: Vec::new(),
    }
}

/// What a run's measured I/O path says about its figures: I/O handed to kernel worker
/// threads, I/Os split by the block layer, buffers not in huge pages. (The files workload's
/// directory operations always run in the workers: said as what it is.)
pub fn io_path_warnings(p: &IoPath, spec: &WorkloadSpec) -> Vec<String> {
    let mut w = Vec::new();
    let files = spec.files.is_some();
    if spec.backend.opens_nothing() {
        return w;
    }
    if p.worker_threads > 0 && files {
        w.push(format!(
            "io_uring ran the operations in {} kernel worker thread(s) (iou-wrk, {:.0} ms of CPU): the kernel always hands MKDIRAT, UNLINKAT, STATX and creating opens to them, so each includes a hand-off to a worker and back that plain system calls (--backend sync) do not pay",
            p.worker_threads, p.worker_cpu_ms
        ));
    } else if p.worker_threads > 0 && spec.force_async > 0 {
        w.push(format!(
            "io_uring handed I/O to {} kernel worker thread(s) (iou-wrk, {:.0} ms of CPU) as --force-async {} asked (IOSQE_ASYNC): these figures include that hand-off",
            p.worker_threads, p.worker_cpu_ms, spec.force_async
        ));
    } else if p.worker_threads > 0 {
        w.push(format!(
            "io_uring handed I/O to {} kernel worker thread(s) (iou-wrk, {:.0} ms of CPU) instead of issuing it inline (it does on tmpfs, for I/Os the block layer must split, for O_DIRECT writes that allocate blocks in a new or sparse file, and for every I/O to a device that cannot take one without blocking, such as zram or a loop device): these figures include that hand-off and are not comparable with inline submission; where every I/O goes there, --force-async 1 (fio's force_async=1) skips the inline try that fails first (zram 4K random reads at QD32: 1.3x the IOPS on this project's machine, as fio's force_async gives fio)",
            p.worker_threads, p.worker_cpu_ms
        ));
    }
    for (dir, r) in [
        ("read", p.read_requests_per_io),
        ("write", p.write_requests_per_io),
    ] {
        if let Some(r) = r.filter(|r| *r >= IoPath::SPLIT_WARN) {
            w.push(format!(
                "the block layer split {dir}s: {} completed {r:.2} requests per I/O (the device's limits: max_sectors_kb, max_segments); fio meets the same limits with the same buffers",
                p.device.as_deref().unwrap_or("the device")
            ));
        }
    }
    // Buffers smaller than one huge page (a probe's or a flush check's one block) were
    // never to be in one.
    if p.buffer_bytes >= 2 << 20
        && p.huge_page_bytes < p.buffer_bytes
        && crate::engine::buf::thp_available()
    {
        w.push(format!(
            "I/O buffers: {} of {} in huge pages (the kernel could not give them all; memory fragmented?): large I/Os from 4 KiB pages may be split",
            shared::units::format_bytes(p.huge_page_bytes),
            shared::units::format_bytes(p.buffer_bytes)
        ));
    }
    w
}

/// Writes `report` as JSON with the samples `samples` yields in place of the report's own
/// (a long run's report keeps merged ones; the exact ones come from disk): one streaming
/// pass, memory independent of their number. Parsed, the document equals the report's JSON
/// with those samples.
pub fn write_json_with<W: std::io::Write>(
    mut out: W,
    report: &RunReport,
    samples: impl Iterator<Item = std::io::Result<shared::Sample>>,
) -> std::io::Result<()> {
    // Every field by reference (no clone of the report, no `Value` tree of its timeline), in
    // the report's own order and with its own skip rules; the exhaustive pattern makes a new
    // field of `RunReport` a compile error here rather than a field missing from the file.
    let RunReport {
        protocol_version,
        status,
        error,
        spec,
        environment,
        summary,
        samples: _,
        histogram,
        steps,
        analysis,
        timeline,
        targets,
    } = report;
    #[derive(serde::Serialize)]
    #[serde(bound = "")]
    struct Streamed<'a, I: Iterator<Item = std::io::Result<shared::Sample>>> {
        protocol_version: &'a u32,
        status: &'a shared::RunStatus,
        error: &'a Option<shared::RunError>,
        spec: &'a shared::WorkloadSpec,
        environment: &'a Environment,
        summary: &'a shared::RunSummary,
        samples: SampleStream<'a, I>,
        histogram: &'a shared::HistogramDump,
        steps: &'a [shared::steps::StepReport],
        analysis: &'a shared::analysis::Analysis,
        #[serde(skip_serializing_if = "Option::is_none")]
        timeline: &'a Option<shared::analysis::Timeline>,
        #[serde(skip_serializing_if = "<[_]>::is_empty")]
        targets: &'a [shared::TargetPart],
    }
    let failed = std::cell::RefCell::new(None);
    let doc = Streamed {
        protocol_version,
        status,
        error,
        spec,
        environment,
        summary,
        samples: SampleStream {
            samples: std::cell::RefCell::new(Some(samples)),
            failed: &failed,
        },
        histogram,
        steps,
        analysis,
        timeline,
        targets,
    };
    let written = serde_json::to_writer(&mut out, &doc);
    // A sample that could not be read back is that error, not serde's rewording of it.
    if let Some(e) = failed.into_inner() {
        return Err(e);
    }
    written.map_err(std::io::Error::other)?;
    out.write_all(b"\n")?;
    out.flush()
}

/// The samples of [`write_json_with`], serialized as they are read (once).
struct SampleStream<'f, I> {
    samples: std::cell::RefCell<Option<I>>,
    failed: &'f std::cell::RefCell<Option<std::io::Error>>,
}

impl<I: Iterator<Item = std::io::Result<shared::Sample>>> serde::Serialize for SampleStream<'_, I> {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error, SerializeSeq};
        let Some(samples) = self.samples.borrow_mut().take() else {
            return Err(S::Error::custom("the samples were already written"));
        };
        let mut seq = ser.serialize_seq(None)?;
        for s in samples {
            match s {
                Ok(s) => seq.serialize_element(&s)?,
                Err(e) => {
                    let msg = e.to_string();
                    *self.failed.borrow_mut() = Some(e);
                    return Err(S::Error::custom(msg));
                }
            }
        }
        seq.end()
    }
}

/// Writes the report as pretty JSON.
pub fn write_json(path: &Path, report: &RunReport) -> std::io::Result<()> {
    let text = serde_json::to_string_pretty(report).map_err(std::io::Error::other)?;
    std::fs::write(path, text + "\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use shared::Sample;

    /// The streamed document parses to exactly the report's own JSON.
    #[test]
    fn the_streamed_json_equals_the_reports_own() {
        let samples: Vec<Sample> = (0..5)
            .map(|i| {
                let mut s = Sample {
                    seq: i,
                    start_ns: i * 1000,
                    end_ns: (i + 1) * 1000,
                    temp_c: Some(41.5),
                    ..Sample::default()
                };
                s.read.bytes = 4096 * (i + 1);
                s
            })
            .collect();
        let report = RunReport {
            protocol_version: shared::PROTOCOL_VERSION,
            status: shared::RunStatus::Stopped,
            error: None,
            spec: shared::WorkloadSpec::default(),
            environment: Default::default(),
            summary: Default::default(),
            samples: samples.clone(),
            histogram: Default::default(),
            steps: Vec::new(),
            analysis: Default::default(),
            timeline: Some(shared::analysis::Timeline {
                bucket_ms: 10,
                bytes: vec![1, 2, 3],
                ..Default::default()
            }),
            targets: Vec::new(),
        };
        let mut out = Vec::new();
        write_json_with(&mut out, &report, samples.into_iter().map(Ok)).expect("write");
        let streamed: serde_json::Value = serde_json::from_slice(&out).expect("parse");
        assert_eq!(streamed, serde_json::to_value(&report).expect("value"));
        // No samples at all is still one document.
        let mut out = Vec::new();
        write_json_with(&mut out, &report, std::iter::empty()).expect("write");
        let v: serde_json::Value = serde_json::from_slice(&out).expect("parse");
        assert_eq!(v["samples"], serde_json::json!([]));
        // The skip rules are the report's own: with no timeline and some targets too.
        let other = RunReport {
            timeline: None,
            targets: vec![shared::TargetPart {
                path: "/dev/loop1".into(),
                ..Default::default()
            }],
            ..report.clone()
        };
        let mut out = Vec::new();
        write_json_with(&mut out, &other, report.samples.iter().cloned().map(Ok)).expect("write");
        let streamed: serde_json::Value = serde_json::from_slice(&out).expect("parse");
        assert_eq!(streamed, serde_json::to_value(&other).expect("value"));
        // A sample that cannot be read back is that error.
        let broken = [
            Ok(Sample::default()),
            Err(std::io::Error::other("disk gone")),
        ];
        let e = write_json_with(Vec::new(), &report, broken.into_iter()).expect_err("fails");
        assert_eq!(e.to_string(), "disk gone");
    }
}
