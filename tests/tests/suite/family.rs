//! Ground truth over a family of drives, not one model: emulated SSDs drawn with seeded
//! random parameters — an SLC cache filled in 0.2–2 s at 200–400 MB/s with a post-cache speed
//! 1.5–10× lower, or no cache and a flat rate, periodic GC stalls, or a thermal throttle —
//! and the analyses must find what the model says: the cache size within ±10 %, the
//! post-cache speed within ±15 %, no cliff where there is no cache, the slowdown classified
//! `cache`, `gc`, `thermal` or `none`, and stall gaps on the timeline exactly where the drive
//! pauses for longer than the threshold. Every miss is printed with its parameters and none
//! is tolerated.
//!
//! Two ways in. The family (240 drives, `DISKSCOPE_FAMILY_N` for more, `DISKSCOPE_FAMILY_SEED`
//! for another draw) runs each drive's model — the emulator's own `Device` — in virtual time:
//! a sequential write over the drive at QD8, 128 KiB blocks, its completions binned into the
//! 10 ms timeline, temperatures read every 100 ms and samples cut at an interval drawn from
//! 100 ms to 10 s, exactly as the agent records a run; then the agent's `analyze` judges the
//! stream. Pure, deterministic and fast, so the family can be large and the verdicts exact.
//! A few drives (one of each kind) also go end to end: mounted through FUSE and measured by
//! the real CLI's `full-span` preset.

use agent::emulate::model::{Device, SsdModel};
use shared::analysis::{SlowIo, Slowdown, TempPoint, Timeline};
use shared::{RunReport, RwMode, Sample, WorkloadSpec};
use std::time::{Duration, Instant};
use tests::*;

/// splitmix64: a small seeded generator, so a failing family can be drawn again.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn log_uniform(&mut self, lo: f64, hi: f64) -> f64 {
        self.uniform(lo.ln(), hi.ln()).exp()
    }

    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[(self.next() % xs.len() as u64) as usize]
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Cache,
    Plain,
    Gc,
    Thermal,
}

const MB: f64 = 1e6;
/// The preset's block size for the family: 8 I/Os of 128 KiB in flight complete together on
/// the FUSE path, so a completion is 1 MiB.
const BS: &str = "128K";

struct Drive {
    /// GC pause (ms) of a GC drive, 0 otherwise.
    gc_pause_ms: u64,
    fast: f64,
    slow: f64,
    cache_bytes: u64,
    interval_ms: u64,
    model: String,
}

fn draw(rng: &mut Rng, kind: Kind, seed: u64) -> Drive {
    let fast = rng.uniform(200.0, 400.0);
    let noise = rng.uniform(0.0, 0.1);
    let interval_ms = rng.pick(&[100, 200, 500, 1000, 2000, 5000, 10000]);
    let mib = |bytes: f64| ((bytes / 1048576.0).ceil() as u64) << 20;
    let (mut slow, mut cache_bytes, mut capacity) = (fast, 0u64, mib(fast * MB * 3.0));
    let mut extra = String::new();
    let mut gc_pause_ms = 0;
    match kind {
        Kind::Cache => {
            slow = fast / rng.log_uniform(1.5, 10.0);
            let fill_s = rng.log_uniform(0.2, 2.0);
            cache_bytes = mib(fast * MB * fill_s);
            // Long enough after the cache for the detector's windows of ~10 completions
            // (1 MiB each) at the slow speed, three of them and then some.
            let post_s = (3.5 * 10.0 * 1.048576 / slow).max(1.5);
            capacity = cache_bytes + mib(slow * MB * post_s);
        }
        Kind::Plain => {}
        Kind::Gc => {
            gc_pause_ms = rng.uniform(80.0, 150.0) as u64;
            extra = format!(
                r#", "gc_all_writes": true, "gc_period_ms": {}, "gc_pause_ms": {gc_pause_ms}"#,
                rng.uniform(300.0, 600.0) as u64,
            );
        }
        Kind::Thermal => {
            // Trip at 60 % of the full-speed equilibrium rise, so the drive heats to it in
            // about one time constant, cools below the hysteresis at the throttled speed
            // (whose equilibrium lies below it) and heats again: a sawtooth of ~1 s.
            let rise = rng.uniform(5.0, 8.0);
            let tau = rng.uniform(0.5, 1.0);
            let eq = rise / 0.6;
            let heat_c_per_gb = eq / (fast * MB / 1e9 * tau);
            extra = format!(
                r#", "heat_c_per_gb": {heat_c_per_gb:.3}, "trip_c": {:.2}, "tau_s": {tau:.2}, "hysteresis_c": {:.2}, "throttle_mbps": {:.1}"#,
                40.0 + rise,
                rng.uniform(1.0, 1.5),
                fast / rng.uniform(3.0, 4.0)
            );
            capacity = mib(fast * MB * 3.0);
        }
    }
    let heat = if kind == Kind::Thermal {
        String::new()
    } else {
        r#", "heat_c_per_gb": 0.2"#.to_string()
    };
    let model = format!(
        r#"{{"capacity": {capacity}, "cache_bytes": {cache_bytes}, "cache_mbps": {fast:.1}, "native_mbps": {slow:.1}, "read_mbps": 4000, "noise": {noise:.3}, "seed": {seed}, "ambient_c": 40{heat}{extra}}}"#
    );
    Drive {
        gc_pause_ms,
        fast,
        slow,
        cache_bytes,
        interval_ms,
        model,
    }
}

/// What the analyses found, against what the model says: the reasons it is wrong (none: right)
/// and the table row.
fn judge(i: usize, kind: Kind, d: &Drive, r: &RunReport) -> (Vec<String>, String) {
    let c = r.analysis.cache_cliff.clone().unwrap_or_default();
    let class = r
        .analysis
        .thermal
        .as_ref()
        .map_or(Slowdown::None, |t| t.classification);
    let want_class = match kind {
        Kind::Cache => Slowdown::Cache,
        Kind::Plain => Slowdown::None,
        Kind::Gc => Slowdown::Gc,
        Kind::Thermal => Slowdown::Thermal,
    };
    let mut why = Vec::new();
    let (found_cache, found_post) = (c.cache_bytes.unwrap_or(0), c.post_mbps.unwrap_or(0.0));
    if kind == Kind::Cache {
        let e_cache = found_cache as f64 / d.cache_bytes as f64 - 1.0;
        let e_post = found_post / d.slow - 1.0;
        if !c.detected {
            why.push("cliff missed".to_string());
        } else {
            if e_cache.abs() > 0.10 {
                why.push(format!("cache off by {:+.1} %", e_cache * 100.0));
            }
            if e_post.abs() > 0.15 {
                why.push(format!("post-cache speed off by {:+.1} %", e_post * 100.0));
            }
        }
    } else if c.detected {
        why.push("cliff where there is no cache".into());
    }
    if class != want_class {
        why.push(format!("classified {class:?}, not {want_class:?}"));
    }
    // Stalls on the timeline: none where the drive never pauses; a GC pause well over the
    // 100 ms threshold is one.
    let gaps = r.analysis.stalls.as_ref().map_or(0, |s| s.gaps_total);
    if kind != Kind::Gc && gaps > 0 {
        why.push(format!("{gaps} stall gap(s) on a drive that never pauses"));
    }
    if kind == Kind::Gc && d.gc_pause_ms >= 130 && gaps == 0 {
        why.push(format!("no stall gap for {} ms GC pauses", d.gc_pause_ms));
    }
    let row = format!(
        "{i:>3} {:<7} {:>5} ms  fast {:>5.0} slow {:>5.0}  cache {:>9}  | found: cliff {:<5} cache {:>9} post {:>5.0}  {:<7} gaps {:>3}  {}",
        format!("{kind:?}"),
        d.interval_ms,
        d.fast,
        d.slow,
        d.cache_bytes,
        c.detected,
        found_cache,
        found_post,
        format!("{class:?}"),
        gaps,
        if why.is_empty() {
            "ok".to_string()
        } else {
            why.join("; ")
        }
    );
    (why, row)
}

/// Half with a cache; the rest split between flat, GC stalls and thermal throttling.
const KINDS: [Kind; 6] = [
    Kind::Cache,
    Kind::Plain,
    Kind::Cache,
    Kind::Gc,
    Kind::Cache,
    Kind::Thermal,
];

fn seed() -> u64 {
    std::env::var("DISKSCOPE_FAMILY_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_261_201)
}

const QD: usize = 8;
const IO: u64 = 128 << 10;
const BUCKET_NS: u64 = 10_000_000;
const SLOW_NS: u64 = 100_000_000;

/// A sequential write over the drive at [`QD`], recorded as the agent records a run: 10 ms
/// buckets of completed bytes, I/Os slower than 100 ms, the temperature every 100 ms, and
/// samples every `interval_ms`; then the agent's analyses of it.
fn simulate(model: &SsdModel, interval_ms: u64) -> RunReport {
    let t0 = Instant::now();
    let ns = |t: Instant| (t - t0).as_nanos() as u64;
    let mut dev = Device::new(model.clone(), t0);
    let n = model.capacity / IO;
    let mut done: Vec<Instant> = Vec::with_capacity(n as usize);
    let (mut buckets, mut slow, mut slow_total) = (Vec::<u64>::new(), Vec::new(), 0u64);
    let mut temps = Vec::new();
    let mut next_temp = Duration::ZERO;
    // Per completion: (when, latency), in completion order, for the samples.
    let mut completions: Vec<(u64, u64)> = Vec::with_capacity(n as usize);
    for i in 0..n as usize {
        // A slot frees when the I/O QD places earlier completes.
        let issue = if i < QD { t0 } else { done[i - QD] };
        while t0 + next_temp <= issue {
            let c = dev.temperature(t0 + next_temp);
            temps.push(TempPoint {
                at_ms: next_temp.as_millis() as u64,
                c,
            });
            next_temp += Duration::from_millis(100);
        }
        let end = dev.write(i as u64 * IO, IO, issue);
        done.push(end);
        let (at, lat) = (ns(end), ns(end) - ns(issue));
        let b = (at / BUCKET_NS) as usize;
        if buckets.len() <= b {
            buckets.resize(b + 1, 0);
        }
        buckets[b] += IO;
        if lat >= SLOW_NS {
            slow_total += 1;
            slow.push(SlowIo {
                at_ns: at,
                offset: i as u64 * IO,
                latency_ns: lat,
                write: true,
            });
        }
        completions.push((at, lat));
    }
    let end_ns = completions.last().map_or(0, |c| c.0) + 1;
    let interval_ns = interval_ms * 1_000_000;
    let mut samples = Vec::new();
    let mut cum = 0;
    let mut k = 0;
    for seq in 0..end_ns.div_ceil(interval_ns) {
        let (start, end) = (seq * interval_ns, ((seq + 1) * interval_ns).min(end_ns));
        let mut lats = Vec::new();
        while k < completions.len() && completions[k].0 < end {
            lats.push(completions[k].1);
            k += 1;
        }
        lats.sort_unstable();
        let mut s = Sample {
            seq,
            start_ns: start,
            end_ns: end,
            ..Sample::default()
        };
        let q = |p: f64| {
            lats.get(((lats.len() as f64 * p) as usize).min(lats.len().saturating_sub(1)))
                .copied()
                .unwrap_or(0)
        };
        s.write.ios = lats.len() as u64;
        s.write.bytes = s.write.ios * IO;
        cum += s.write.bytes;
        s.write.cum_bytes = cum;
        s.write.lat.p50_ns = q(0.5);
        s.write.lat.p99_ns = q(0.99);
        s.write.lat.max_ns = lats.last().copied().unwrap_or(0);
        s.write = s.write.with_rates(end - start);
        s.temp_c = temps
            .iter()
            .rev()
            .find(|t| t.at_ms * 1_000_000 <= end)
            .map(|t| t.c);
        samples.push(s);
    }
    let spec = WorkloadSpec {
        rw: RwMode::Write,
        bs: IO,
        iodepth: QD as u32,
        size: Some(model.capacity),
        interval_ms,
        ..WorkloadSpec::default()
    };
    let mut r = RunReport {
        protocol_version: shared::PROTOCOL_VERSION,
        status: shared::RunStatus::Completed,
        error: None,
        spec: spec.clone(),
        environment: Default::default(),
        summary: Default::default(),
        samples,
        histogram: Default::default(),
        steps: Vec::new(),
        analysis: Default::default(),
        timeline: Some(Timeline {
            bucket_ms: (BUCKET_NS / 1_000_000) as u32,
            bytes: buckets,
            slow_ios: slow,
            slow_ios_total: slow_total,
            temps,
            ..Timeline::default()
        }),
        targets: Vec::new(),
    };
    r.summary.duration_ns = end_ns;
    r.summary.samples = r.samples.len() as u64;
    r.summary.write.ios = n;
    r.summary.write.bytes = n * IO;
    r.summary.write = r.summary.write.with_rates(end_ns);
    let opts = agent::presets::AnalysisOptions::for_spec(&spec);
    r.analysis = agent::analyze::analyze(&r, &opts, None);
    r
}

#[test]
fn detectors_find_the_truth_over_a_family_of_240_drawn_drives() {
    let seed = seed();
    let n: usize = std::env::var("DISKSCOPE_FAMILY_N")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(240);
    let mut rng = Rng(seed);
    let mut failures = Vec::new();
    for i in 0..n {
        let kind = KINDS[i % KINDS.len()];
        let d = draw(&mut rng, kind, seed.wrapping_add(i as u64));
        let model: SsdModel = serde_json::from_str(&d.model).expect("model");
        let r = simulate(&model, d.interval_ms);
        if std::env::var("DISKSCOPE_FAMILY_DUMP").is_ok_and(|v| v == i.to_string()) {
            let b = &r.timeline.as_ref().expect("timeline").bytes;
            eprintln!(
                "last buckets (KiB): {:?}",
                b[b.len().saturating_sub(80)..]
                    .iter()
                    .map(|x| x >> 10)
                    .collect::<Vec<_>>()
            );
        }
        let (why, row) = judge(i, kind, &d, &r);
        if !why.is_empty() {
            eprintln!("{row}");
            let reason = r
                .analysis
                .thermal
                .as_ref()
                .map_or("", |t| t.reason.as_str());
            failures.push(format!(
                "{row}\n    model {}\n    thermal: {reason}",
                d.model
            ));
        }
    }
    eprintln!(
        "family of {n} drives (seed {seed}): {} right, {} wrong",
        n - failures.len(),
        failures.len()
    );
    assert!(failures.is_empty(), "wrong:\n{}", failures.join("\n"));
}

/// One drive of each kind, drawn like the family, through FUSE and the real CLI.
#[test]
fn a_drive_of_each_kind_end_to_end_through_the_emulator() {
    require_io_uring!();
    let seed = seed() ^ 0x5eed;
    let mut rng = Rng(seed);
    let mut failures = Vec::new();
    for (i, kind) in [Kind::Cache, Kind::Plain, Kind::Gc, Kind::Thermal]
        .into_iter()
        .enumerate()
    {
        let d = draw(&mut rng, kind, seed.wrapping_add(i as u64));
        let Some(emu) = Emulator::start_or_skip(&d.model, "family end to end") else {
            return;
        };
        let dir = tempfile::tempdir().expect("tempdir");
        let json = dir.path().join("r.json");
        let o = ds(&format!(
            "run --target {} --preset full-span --bs {BS} --interval-ms {} --json {} -q",
            emu.disk().display(),
            d.interval_ms,
            json.display()
        ));
        drop(emu);
        assert!(o.status.success(), "drive {i}: {}", stderr(&o));
        let r = read_report(&json);
        let (why, row) = judge(i, kind, &d, &r);
        eprintln!("{row}");
        if !why.is_empty() {
            failures.push(format!("{row}\n    model {}", d.model));
        }
    }
    assert!(failures.is_empty(), "wrong:\n{}", failures.join("\n"));
}
