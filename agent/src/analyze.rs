//! Which analyses apply to a finished run, and over which of its samples. The analyses
//! themselves are pure functions in `shared::analysis`.

use crate::presets::AnalysisOptions;
use crate::stats::fine::SLOW_IO_NS;
use shared::analysis::{self, Analysis, BlockSizePoint, PatternResult};
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

pub fn analyze(r: &RunReport, o: &AnalysisOptions) -> Analysis {
    let mut a = Analysis::default();
    if r.samples.is_empty() {
        return a;
    }
    // The longest writing step (or the whole run) is where a cache cliff shows.
    let writing = r
        .steps
        .iter()
        .filter(|s| s.summary.write.ios > 0)
        .max_by_key(|s| s.samples);
    let cliff_on = if r.steps.is_empty() { None } else { writing };
    if r.summary.write.ios > 0 && (r.steps.is_empty() || writing.is_some()) {
        let s = rebased(step_samples(r, cliff_on));
        let mut cliff = analysis::cache_cliff(&s);
        if let (Some(at), Some(step)) = (cliff.at_s.as_mut(), cliff_on) {
            *at += step.start_ns as f64 / 1e9;
        }
        a.cache_cliff = Some(cliff);
    }
    // Slowdowns are judged within one workload: across the steps of a preset, changes of
    // workload and the pauses between them would read as dips.
    let longest = r.steps.iter().max_by_key(|s| s.samples);
    let main = rebased(step_samples(
        r,
        if r.steps.is_empty() { None } else { longest },
    ));
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
    let longest = r.steps.iter().max_by_key(|s| s.samples);
    let main = rebased(step_samples(
        r,
        if r.steps.is_empty() { None } else { longest },
    ));
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
    a.stalls = Some(analysis::stalls(
        &r.samples,
        &slow,
        total,
        SLOW_IO_NS as f64 / 1e6,
    ));
    a
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
