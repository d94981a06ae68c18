//! Synthetic run histories written straight into an agent database: a long run's samples
//! without waiting for it, for the tests and benchmarks of opening, exporting and comparing
//! long runs.

use agent::store::{NewRun, RunEnd, Store};
use shared::{RunStatus, RunSummary, Sample, WorkloadSpec};
use std::path::Path;

/// A write run of `n` samples of `interval_ms`: `fast_mb_s` for its first fifth (a cache),
/// then a quarter of that with ±10 % noise and one empty interval every 1,000 (a stall).
/// Returns the run id and the seqs of its slowest and fastest sample.
pub fn synthetic_run(
    db: &Path,
    n: u64,
    interval_ms: u64,
    fast_mb_s: f64,
    seed: u64,
) -> (i64, u64, u64) {
    let store = Store::open(db).expect("open the database");
    let spec = WorkloadSpec {
        rw: shared::RwMode::Write,
        bs: 1 << 20,
        interval_ms,
        ..WorkloadSpec::default()
    };
    let id = store
        .create_run(&NewRun {
            name: Some("synthetic"),
            target: "/synthetic/drive",
            preset: None,
            spec: &spec,
            created_ms: 1_700_000_000_000 + seed,
            plan: &[],
            job_file: None,
        })
        .expect("create run");
    let window = interval_ms * 1_000_000;
    let mut x = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let (mut cum, mut slow, mut fast) = (0u64, (f64::MAX, 0), (f64::MIN, 0));
    let mut batch = Vec::with_capacity(10_000);
    for seq in 0..n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let noise = 0.9 + 0.2 * ((x >> 11) as f64 / (1u64 << 53) as f64);
        let mb_s = if seq % 1000 == 999 {
            0.0
        } else if seq < n / 5 {
            fast_mb_s
        } else {
            fast_mb_s / 4.0 * noise
        };
        let bytes = (mb_s * 1e6 * interval_ms as f64 / 1e3) as u64;
        cum += bytes;
        let mut s = Sample {
            seq,
            start_ns: seq * window,
            end_ns: (seq + 1) * window,
            offset_lo: Some(cum - bytes),
            offset_hi: Some(cum),
            temp_c: Some(40.0 + (seq as f64 / n as f64) * 20.0),
            ..Sample::default()
        };
        s.write.bytes = bytes;
        s.write.ios = bytes >> 20;
        s.write.cum_bytes = cum;
        s.write.lat.p99_ns = 2_000_000;
        s.write = s.write.with_rates(window);
        // Ties keep the first, as the envelope's scan does.
        if s.write.mb_s < slow.0 {
            slow = (s.write.mb_s, seq);
        }
        if s.write.mb_s > fast.0 {
            fast = (s.write.mb_s, seq);
        }
        batch.push(s);
        if batch.len() == 10_000 {
            store.append_samples(id, &batch).expect("append");
            batch.clear();
        }
    }
    store.append_samples(id, &batch).expect("append");
    let mut summary = RunSummary {
        duration_ns: n * window,
        samples: n,
        ..RunSummary::default()
    };
    summary.write.bytes = cum;
    summary.write.ios = cum >> 20;
    summary.write.cum_bytes = cum;
    summary.write = summary.write.with_rates(n * window);
    store
        .finish_run(
            id,
            &RunEnd {
                state: RunStatus::Completed,
                ended_ms: 1_700_000_000_000 + seed + n * interval_ms,
                environment: None,
                summary: Some(&summary),
                error: None,
                histogram: None,
                steps: &[],
                analysis: None,
                timeline: None,
                targets: &[],
            },
        )
        .expect("finish run");
    (id, slow.1, fast.1)
}
