//! Which analyses apply to a finished run, and over which of its samples. The analyses
//! themselves are pure functions in `shared::analysis`.

use crate::presets::AnalysisOptions;
use crate::stats::fine::SLOW_IO_NS;
use shared::analysis::{self, Analysis, BlockSizePoint, PatternResult, TempPoint};
use shared::{RunReport, Sample, StepReport};

/// Samples of one step (or all samples when the run has no steps).
fn step_samples<'a>(r: &'a RunReport, step: Option<&StepReport>) -> &'a [Sample] {
    match step {
        Some(s) => {
            let lo = (s.first_seq as usize).min(r.samples.len());
            let hi = (lo + s.samples as usize).min(r.samples.len());
            &r.samples[lo..hi]
        }
        None => &r.samples,
    }
}

/// Samples rebased so that cumulative bytes and time start at zero.
fn rebased(samples: &[Sample]) -> Vec<Sample> {
    let Some(first) = samples.first() else {
        return Vec::new();
    };
    let t0 = first.start_ns;
    let w0 = first.write.cum_bytes - first.write.bytes;
    let r0 = first.read.cum_bytes - first.read.bytes;
    samples
        .iter()
        .map(|s| {
            let mut s = s.clone();
            s.start_ns -= t0;
            s.end_ns -= t0;
            s.write.cum_bytes -= w0;
            s.read.cum_bytes -= r0;
            s
        })
        .collect()
}

/// One step's (or the whole run's) slice of the 10 ms timeline.
struct Fine<'a> {
    buckets: &'a [u64],
    bucket_ns: u64,
    /// Where the slice starts in the run (ns).
    t0_ns: u64,
    /// Only writes (true) or only reads (false) moved; `None` for a mix.
    writes: Option<bool>,
    bs: u64,
    /// Run-relative temperature readings (from the timeline, else from the samples).
    temps: std::borrow::Cow<'a, [TempPoint]>,
}

impl Fine<'_> {
    /// Windows of `per` buckets as samples (direction: the step's, writes for a mix).
    fn windows(&self, per: usize) -> Vec<Sample> {
        analysis::windows(
            self.buckets,
            self.bucket_ns,
            per,
            self.t0_ns,
            self.writes.unwrap_or(true),
            self.bs,
            &self.temps,
        )
    }

    /// Buckets per window for ~10 completions at the mean rate, between 50 ms and 1 s.
    fn per_window(&self) -> usize {
        let mean = self.buckets.iter().sum::<u64>() as f64 / self.buckets.len().max(1) as f64;
        let unit = analysis::completion_unit(self.buckets, self.bs);
        let per = (analysis::UNITS_PER_WINDOW * unit / mean.max(1.0)).ceil() as u64;
        let lo = 50_000_000 / self.bucket_ns.max(1);
        let hi = 1_000_000_000 / self.bucket_ns.max(1);
        per.clamp(lo.max(1), hi.max(1)) as usize
    }
}

/// The timeline of `step` (or of the whole run), when the run kept one.
fn fine<'a>(r: &'a RunReport, step: Option<&StepReport>) -> Option<Fine<'a>> {
    let t = r.timeline.as_ref()?;
    let bucket_ns = u64::from(t.bucket_ms) * 1_000_000;
    if bucket_ns == 0 || t.bytes.is_empty() {
        return None;
    }
    let (spec, start, end) = match step {
        Some(s) => (&s.spec, s.start_ns, s.end_ns),
        None => (
            &r.spec,
            0,
            r.samples.last().map_or(r.summary.duration_ns, |s| s.end_ns),
        ),
    };
    let a = ((start / bucket_ns) as usize).min(t.bytes.len());
    let b = (end.div_ceil(bucket_ns) as usize).clamp(a, t.bytes.len());
    let buckets = &t.bytes[a..b];
    if buckets.is_empty() {
        return None;
    }
    let writes = match spec.rw.read_pct(spec.read_pct) {
        0 => Some(true),
        100 => Some(false),
        _ => None,
    };
    let temps = if t.temps.is_empty() {
        std::borrow::Cow::Owned(
            r.samples
                .iter()
                .filter_map(|s| {
                    s.temp_c.map(|c| TempPoint {
                        at_ms: s.end_ns / 1_000_000,
                        c,
                    })
                })
                .collect(),
        )
    } else {
        std::borrow::Cow::Borrowed(t.temps.as_slice())
    };
    Some(Fine {
        buckets,
        bucket_ns,
        t0_ns: a as u64 * bucket_ns,
        writes,
        bs: spec.bs,
        temps,
    })
}

pub fn analyze(r: &RunReport, o: &AnalysisOptions) -> Analysis {
    let mut a = Analysis::default();
    if r.samples.is_empty() {
        return a;
    }
    if o.cache_recovery {
        a.cache_recovery = cache_recovery(r);
    }
    // The longest writing step (or the whole run) is where a cache cliff shows.
    let writing = r
        .steps
        .iter()
        .filter(|s| s.summary.write.ios > 0)
        .max_by_key(|s| s.samples);
    let cliff_on = if r.steps.is_empty() { None } else { writing };
    if let Some(rec) = &a.cache_recovery {
        // The cache is the first write's; the second shows what came back.
        a.cache_cliff = Some(rec.first.clone());
    } else if r.summary.write.ios > 0 && (r.steps.is_empty() || writing.is_some()) {
        // The 10 ms timeline when the phase only wrote; the samples otherwise.
        let cliff = match fine(r, cliff_on) {
            Some(f) if f.writes == Some(true) => {
                analysis::cache_cliff_fine(f.buckets, f.bucket_ns, f.bs, f.t0_ns)
            }
            _ => {
                let s = rebased(step_samples(r, cliff_on));
                let mut cliff = analysis::cache_cliff(&s);
                if let (Some(at), Some(step)) = (cliff.at_s.as_mut(), cliff_on) {
                    *at += step.start_ns as f64 / 1e9;
                }
                cliff
            }
        };
        a.cache_cliff = Some(cliff);
    }
    // Slowdowns are judged within one workload: across the steps of a preset, changes of
    // workload and the pauses between them would read as dips.
    let longest = r
        .steps
        .iter()
        .max_by_key(|s| (s.end_ns - s.start_ns, s.samples));
    let longest = if r.steps.is_empty() { None } else { longest };
    let fine_main = fine(r, longest);
    // The finest view of the main workload: windows of ~10 completions from the timeline.
    let main = match &fine_main {
        Some(f) => rebased(&f.windows(f.per_window())),
        None => rebased(step_samples(r, longest)),
    };
    let mut cliff = a.cache_cliff.clone().unwrap_or_default();
    if cliff_on.map(|s| s.index) != longest.map(|s| s.index) {
        cliff = Default::default();
    }
    a.thermal = Some(analysis::thermal(&main, &cliff));
    // Rounds (snia-steady) or, for a long single workload, 60 s windows.
    let rounds: Vec<f64> = r
        .steps
        .iter()
        .filter(|s| s.name.starts_with("round "))
        .map(|s| s.summary.read.iops + s.summary.write.iops)
        .collect();
    if !rounds.is_empty() {
        a.steady_state = Some(analysis::steady_state_rounds(&rounds));
    } else if r.summary.duration_ns >= 5 * 60 * 1_000_000_000 && r.spec.rw.is_random() {
        a.steady_state = Some(analysis::steady_state_windows(&r.samples, 60.0));
    }
    // First and last window over 100 ms windows of the timeline (exact at any interval).
    let main = match &fine_main {
        Some(f) => rebased(&f.windows((100_000_000 / f.bucket_ns).max(1) as usize)),
        None => rebased(step_samples(r, longest)),
    };
    let window = o.first_last_window_s;
    if main
        .last()
        .is_some_and(|s| s.end_ns as f64 / 1e9 >= 2.0 * window)
    {
        a.first_last = Some(analysis::first_last(&main, window));
    }
    if let (Some(rate), Some(t)) = (o.required_rate, &r.timeline) {
        a.sustain = Some(analysis::sustain(t, rate, o.buffer_ms));
    }
    a.block_size = block_size(&r.steps);
    a.compressibility = compressibility(&r.steps);
    let (slow, total) = r
        .timeline
        .as_ref()
        .map_or((Vec::new(), 0), |t| (t.slow_ios.clone(), t.slow_ios_total));
    let mut stalls = analysis::stalls(&r.samples, &slow, total, SLOW_IO_NS as f64 / 1e6);
    // Gaps with no completion, inside each workload (never across a pause between steps).
    let phases: Vec<Option<&StepReport>> = if r.steps.is_empty() {
        vec![None]
    } else {
        r.steps.iter().map(Some).collect()
    };
    for step in phases {
        if let Some(f) = fine(r, step) {
            let g = analysis::gaps(f.buckets, f.bucket_ns, f.t0_ns, SLOW_IO_NS);
            stalls.gaps_total += g.len() as u64;
            let room = analysis::MAX_GAPS.saturating_sub(stalls.gaps.len());
            stalls.gaps.extend(g.into_iter().take(room));
        }
    }
    if stalls.gaps_total > 0 {
        stalls.verdict = analysis::Verdict::Found;
    }
    a.stalls = Some(stalls);
    a
}

/// Write, idle, write (the `cache-recovery` preset): the first two writing steps.
fn cache_recovery(r: &RunReport) -> Option<shared::analysis::CacheRecovery> {
    let mut writes = r.steps.iter().filter(|s| s.summary.write.ios > 0);
    let (a, b) = (writes.next()?, writes.next()?);
    let (fa, fb) = (fine(r, Some(a))?, fine(r, Some(b))?);
    fn phase<'a>(f: &Fine<'a>, end_ns: u64) -> analysis::Phase<'a> {
        analysis::Phase {
            buckets: f.buckets,
            t0_ns: f.t0_ns,
            end_ns,
            io_bytes: f.bs,
        }
    }
    Some(analysis::cache_recovery(
        &phase(&fa, a.end_ns),
        &phase(&fb, b.end_ns),
        fa.bucket_ns,
    ))
}

/// The block-size analysis of a sweep among the steps (`shared::steps::sweep`: the steps of
/// one order, depth and job count with the most block sizes); MB/s is the better direction.
fn block_size(steps: &[StepReport]) -> Option<shared::analysis::BlockSize> {
    let pts: Vec<BlockSizePoint> = shared::steps::sweep_from_steps(steps)?
        .into_iter()
        .map(|p| BlockSizePoint {
            bs: p.bs,
            iops: p.iops,
            mbps: p.read_mb_s.max(p.write_mb_s),
        })
        .collect();
    Some(analysis::block_size(&pts))
}

/// MB/s per data pattern among the writing steps, when they differ in pattern.
fn compressibility(steps: &[StepReport]) -> Option<shared::analysis::Compressibility> {
    let mut res: Vec<PatternResult> = Vec::new();
    for s in steps.iter().filter(|s| s.summary.write.ios > 0) {
        let name = match s.spec.pattern {
            shared::DataPattern::Random => "random".to_string(),
            shared::DataPattern::Zeros => "zeros".to_string(),
            p => p.to_string(),
        };
        if !res.iter().any(|r| r.pattern == name) {
            res.push(PatternResult {
                pattern: name,
                mbps: s.summary.write.mb_s,
            });
        }
    }
    (res.len() >= 2).then(|| analysis::compressibility(&res))
}
