//! Which analyses apply to a finished run, and over which of its samples. The analyses
//! themselves are pure functions in `shared::analysis`.

use crate::presets::AnalysisOptions;
use crate::stats::fine::{Spill, BUCKET_NS, SLOW_IO_NS};
use shared::analysis::{self, Analysis, BlockSizePoint, PatternResult, TempPoint};
use shared::{RunReport, Sample, StepReport};

/// Samples of one step (or all samples when the run has no steps). A long run's kept
/// samples merge neighbours (`stats::series`), never across steps: a step's are the
/// consecutive ones whose `seq` lies in its range.
fn step_samples<'a>(r: &'a RunReport, step: Option<&StepReport>) -> &'a [Sample] {
    match step {
        Some(s) => {
            let end = s.first_seq + s.samples;
            let lo = r.samples.partition_point(|x| x.seq < s.first_seq);
            let hi = r.samples.partition_point(|x| x.seq < end).max(lo);
            &r.samples[lo..hi]
        }
        None => &r.samples,
    }
}

/// The run's exact 10 ms buckets on disk, used where the report's timeline had to merge
/// them (runs past `stats::fine::TIMELINE_CAP` buckets): stalls and sustain stay exact.
struct Exact<'s> {
    spill: &'s mut Spill,
}

impl Exact<'_> {
    /// Buckets of `[start_ns, end_ns)` (a step's), in one pass.
    fn range(&mut self, start_ns: u64, end_ns: u64) -> (u64, u64) {
        let a = (start_ns / BUCKET_NS).min(self.spill.len());
        let b = end_ns.div_ceil(BUCKET_NS).clamp(a, self.spill.len());
        (a, b)
    }

    fn gaps(&mut self, start_ns: u64, end_ns: u64) -> Vec<analysis::Gap> {
        let (a, b) = self.range(start_ns, end_ns);
        analysis::gaps_in(
            self.spill.reader(a, b).map_while(Result::ok),
            (b - a) as usize,
            BUCKET_NS,
            a * BUCKET_NS,
            SLOW_IO_NS,
        )
    }

    fn sustain(&mut self, rate: f64, buffer_ms: u64) -> analysis::Sustain {
        let len = self.spill.len();
        let spill = &*self.spill;
        analysis::sustain_in(
            || spill.reader(0, len).map_while(Result::ok),
            len as usize,
            (BUCKET_NS / 1_000_000) as u32,
            rate,
            buffer_ms,
        )
    }
}

/// Samples rebased so that cumulative bytes and time start at zero (in place: the analyses'
/// windows are the largest thing they hold).
fn rebased(mut samples: Vec<Sample>) -> Vec<Sample> {
    let Some(first) = samples.first() else {
        return samples;
    };
    let t0 = first.start_ns;
    let w0 = first.write.cum_bytes - first.write.bytes;
    let r0 = first.read.cum_bytes - first.read.bytes;
    for s in &mut samples {
        s.start_ns -= t0;
        s.end_ns -= t0;
        s.write.cum_bytes -= w0;
        s.read.cum_bytes -= r0;
    }
    samples
}

/// The most windows the analyses cut one timeline into (one set alive at a time, a `Sample`
/// each: 656 KiB), as many as the samples a run keeps; a long run gets wider windows.
const MAX_WINDOWS: usize = crate::stats::series::SAMPLE_CAP;

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

    /// Buckets per window so that a timeline gives at most [`MAX_WINDOWS`] windows.
    fn min_per(&self) -> usize {
        self.buckets.len().div_ceil(MAX_WINDOWS).max(1)
    }

    /// Buckets per window for ~10 completions at the mean rate, between 50 ms and 1 s (wider
    /// on runs that would give more than [`MAX_WINDOWS`]).
    fn per_window(&self) -> usize {
        let mean = self.buckets.iter().sum::<u64>() as f64 / self.buckets.len().max(1) as f64;
        let unit = analysis::completion_unit(self.buckets, self.bs);
        let per = (analysis::UNITS_PER_WINDOW * unit / mean.max(1.0)).ceil() as u64;
        let lo = 50_000_000 / self.bucket_ns.max(1);
        let hi = 1_000_000_000 / self.bucket_ns.max(1);
        (per.clamp(lo.max(1), hi.max(1)) as usize).max(self.min_per())
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

/// Every step's (or the run's) read and write figures, held against the path and the job
/// threads' CPU.
fn plausibility_of(r: &RunReport) -> analysis::plausible::Plausibility {
    use analysis::plausible::Figure;
    let mut figures = Vec::new();
    let mut add = |label: String, spec: &shared::WorkloadSpec, s: &shared::RunSummary| {
        for (dir, d) in [("read", &s.read), ("write", &s.write)] {
            if d.ios > 0 {
                figures.push(Figure {
                    label: format!("{label}{dir}"),
                    mb_s: d.mb_s,
                    iops: d.iops,
                    random: spec.rw.is_random(),
                    bs: spec.bs,
                });
            }
        }
    };
    // A served single workload is one step ("custom"): its figures are the run's.
    if r.steps.len() <= 1 {
        add(String::new(), &r.spec, &r.summary);
    } else {
        for st in &r.steps {
            add(format!("step '{}' ", st.name), &st.spec, &st.summary);
        }
    }
    let direct = r.spec.direct && r.steps.iter().all(|s| s.spec.direct);
    analysis::plausible::plausibility(
        r.environment.link.as_ref(),
        r.environment.rotational,
        direct,
        &figures,
        &r.samples,
    )
}

/// The statistics of a repeated run over its passes (`StepReport::pass`): per step when a
/// pass has several (a preset), else for the workload.
fn repeat_of(r: &RunReport) -> Option<analysis::repeat::Repeat> {
    let passes = r.steps.iter().filter_map(|s| s.pass).max()?;
    let per_pass = r.steps.iter().filter(|s| s.pass == Some(1)).count();
    let mut by_pass = vec![Vec::new(); passes as usize];
    for st in &r.steps {
        let Some(p) = st.pass else { continue };
        let step = (per_pass > 1).then(|| st.name.clone());
        by_pass[p as usize - 1].extend(
            analysis::repeat::pass_metrics(&st.summary)
                .into_iter()
                .map(|(name, v)| (step.clone(), name, v)),
        );
    }
    by_pass.retain(|p| !p.is_empty());
    Some(analysis::repeat::repeat_stats(&by_pass))
}

/// Analyses `report` into its `analysis`, and adds what its figures flag about themselves
/// (faster than the link or the device, limited by the load generator) to its warnings.
pub fn finish(report: &mut RunReport, o: &AnalysisOptions, spill: Option<&mut Spill>) {
    report.analysis = analyze(report, o, spill);
    let flags = report
        .analysis
        .plausibility
        .iter()
        .flat_map(|p| &p.flags)
        // A buffered run says so already (`report::build`).
        .filter(|f| f.kind != analysis::plausible::FlagKind::PageCache);
    let mut warnings: Vec<String> = flags.map(|f| f.message.clone()).collect();
    if let Some(rep) = &report.analysis.repeat {
        let noisy: Vec<String> = rep
            .noisy()
            .map(|m| format!("{} {:.1} %", m.label(), m.stat.cv_pct))
            .collect();
        if !noisy.is_empty() {
            warnings.push(format!(
                "repeat: {} of {} figures vary by more than {} % between passes (CV): {}; a difference between runs smaller than that is noise",
                noisy.len(),
                rep.metrics.len(),
                analysis::repeat::CV_WARN_PCT,
                noisy.iter().take(6).cloned().collect::<Vec<_>>().join(", ")
            ));
        }
    }
    for w in warnings {
        if !report.environment.warnings.contains(&w) {
            report.environment.warnings.push(w);
        }
    }
}

/// The latency search's result from its rounds (the steps) against `limit` µs.
fn latency_target_of(r: &RunReport, limit: u64) -> analysis::latency::LatencyTarget {
    let limit = limit as f64;
    let rounds = r
        .steps
        .iter()
        .map(|s| analysis::latency::Round::of(&s.spec, &s.summary, limit))
        .collect();
    analysis::latency::LatencyTarget::new(limit, rounds)
}

/// What the run measured rather than derived (a read-back, a scan's map, a replay's and a
/// latency search's figures): it stays as the run found it.
fn measured(r: &RunReport) -> Analysis {
    Analysis {
        verify: r.analysis.verify.clone(),
        scan: r.analysis.scan.clone(),
        replay: r.analysis.replay.clone(),
        qd_search: r.analysis.qd_search.clone(),
        files_done: r.analysis.files_done,
        probe: r.analysis.probe.clone(),
        flushcheck: r.analysis.flushcheck.clone(),
        ..Analysis::default()
    }
}

/// Whether the run's shape is its workload's, not the drive's, so the detectors would read
/// it wrongly: small files are judged by each phase's operations (a cache cliff, a throttle
/// or a stall read into a tree's phases would be the phases' own shapes), and a probe idles
/// between its requests by design (its empty intervals are not stalls, its rate no cache's).
fn own_shape(r: &RunReport) -> bool {
    r.spec.files.is_some()
        || r.spec.probe.is_some()
        || r.spec.flushcheck.is_some()
        || r.steps.iter().any(|s| s.spec.files.is_some())
}

/// The analyses of `r`; `spill`, when given, holds every 10 ms bucket of the run (read
/// only when the report's timeline is coarser).
pub fn analyze(r: &RunReport, o: &AnalysisOptions, spill: Option<&mut Spill>) -> Analysis {
    let coarse = r
        .timeline
        .as_ref()
        .is_some_and(|t| u64::from(t.bucket_ms) * 1_000_000 > BUCKET_NS);
    let mut exact = spill
        .filter(|sp| coarse && !sp.is_empty())
        .and_then(|sp| sp.flush().ok().map(|_| Exact { spill: sp }));
    let mut a = measured(r);
    if let Some(span) = o.fakecap_span {
        let bs = r.steps.first().map_or(r.spec.bs, |s| s.spec.bs);
        let failed_at = r.error.as_ref().and_then(|e| e.offset);
        a.fakecap = Some(analysis::verify::fake_capacity(
            a.verify.as_ref(),
            span,
            bs,
            failed_at,
        ));
    }
    a.plausibility = Some(plausibility_of(r));
    a.repeat = repeat_of(r);
    // A replay is judged by its own figures: the detectors look for shapes of synthetic
    // workloads (a cache cliff in a steady write) that an application's I/O does not have.
    if !a.replay.is_empty() {
        if !r.steps.is_empty() {
            a.apps = analysis::replay::AppScores::from_replays(&a.replay);
        }
        return a;
    }
    if own_shape(r) {
        return a;
    }
    a.fill_level = analysis::fill::fill_levels(&r.steps);
    a.latency_target = o.p99_target_us.map(|limit| latency_target_of(r, limit));
    if r.samples.is_empty() {
        return a;
    }
    if o.cache_recovery {
        a.cache_recovery = cache_recovery(r);
    }
    // The longest writing step (or the whole run) is where a cache cliff shows.
    let cliff_on = cliff_step(r);
    if let Some(rec) = &a.cache_recovery {
        // The cache is the first write's; the second shows what came back.
        a.cache_cliff = Some(rec.first.clone());
    } else if r.summary.write.ios > 0 && (r.steps.is_empty() || cliff_on.is_some()) {
        a.cache_cliff = Some(cache_cliff_of(r, cliff_on));
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
    {
        let main = match &fine_main {
            Some(f) => rebased(f.windows(f.per_window())),
            None => rebased(step_samples(r, longest).to_vec()),
        };
        let mut cliff = a.cache_cliff.clone().unwrap_or_default();
        if cliff_on.map(|s| s.index) != longest.map(|s| s.index) {
            cliff = Default::default();
        }
        a.thermal = Some(analysis::thermal(&main, &cliff));
        // (dropped here: one set of windows is alive at a time)
    }
    // Rounds (snia-steady) or, for a long single workload, 60 s windows.
    let rounds: Vec<f64> = r
        .steps
        .iter()
        .filter(|s| s.round.is_some())
        .map(|s| s.summary.read.iops + s.summary.write.iops)
        .collect();
    if let Some(rule) = r.spec.steady {
        // fio's rule: the watch that stopped the run, fed the stored samples.
        let mut w = shared::steady::SteadyWatch::new(rule, r.spec.interval_ms);
        r.samples.iter().take_while(|s| !w.push(s)).for_each(drop);
        a.steady_state = Some(w.result());
    } else if !rounds.is_empty() {
        a.steady_state = Some(analysis::steady_state_rounds(&rounds));
    } else if r.summary.duration_ns >= 5 * 60 * 1_000_000_000 && r.spec.rw.is_random() {
        a.steady_state = Some(analysis::steady_state_windows(&r.samples, 60.0));
    }
    // First and last window over 100 ms windows of the timeline (exact at any interval).
    let main = match &fine_main {
        Some(f) => {
            rebased(f.windows(((100_000_000 / f.bucket_ns).max(1) as usize).max(f.min_per())))
        }
        None => rebased(step_samples(r, longest).to_vec()),
    };
    let window = o.first_last_window_s;
    if main
        .last()
        .is_some_and(|s| s.end_ns as f64 / 1e9 >= 2.0 * window)
    {
        a.first_last = Some(analysis::first_last(&main, window));
    }
    if let (Some(rate), Some(t)) = (o.required_rate, &r.timeline) {
        a.sustain = Some(match &mut exact {
            Some(x) => x.sustain(rate, o.buffer_ms),
            None => analysis::sustain(t, rate, o.buffer_ms),
        });
    }
    a.block_size = block_size(&r.steps);
    a.compressibility = compressibility(&r.steps);
    a.stalls = Some(stalls_of(r, exact.as_mut()));
    // An error scan maps where the target is slow, not when: a slow region would read as a
    // cache running full or a throttle.
    if !a.scan.is_empty() {
        a.cache_cliff = None;
        a.thermal = None;
    }
    a
}

/// The step a cache cliff shows in: the longest writing one (`None` for a single workload,
/// or a preset that never wrote).
fn cliff_step(r: &RunReport) -> Option<&StepReport> {
    if r.steps.is_empty() {
        return None;
    }
    r.steps
        .iter()
        .filter(|s| s.summary.write.ios > 0)
        .max_by_key(|s| s.samples)
}

/// The cache cliff of step `on` (or the whole run): from the 10 ms timeline when the phase
/// only wrote, from the samples otherwise.
fn cache_cliff_of(r: &RunReport, on: Option<&StepReport>) -> analysis::CacheCliff {
    match fine(r, on) {
        Some(f) if f.writes == Some(true) => {
            analysis::cache_cliff_fine(f.buckets, f.bucket_ns, f.bs, f.t0_ns)
        }
        _ => {
            let s = rebased(step_samples(r, on).to_vec());
            let mut cliff = analysis::cache_cliff(&s);
            if let (Some(at), Some(step)) = (cliff.at_s.as_mut(), on) {
                *at += step.start_ns as f64 / 1e9;
            }
            cliff
        }
    }
}

/// Stalls: slow I/Os, slow intervals, and gaps with no completion inside each workload
/// (never across a pause between steps) — from every 10 ms bucket when `exact` has them.
fn stalls_of(r: &RunReport, mut exact: Option<&mut Exact<'_>>) -> analysis::Stalls {
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
    let run_end = r.samples.last().map_or(r.summary.duration_ns, |s| s.end_ns);
    for step in phases {
        if let Some(f) = fine(r, step) {
            let g = match exact.as_deref_mut() {
                Some(x) => {
                    let (s, e) = step.map_or((0, run_end), |s| (s.start_ns, s.end_ns));
                    x.gaps(s, e)
                }
                None => analysis::gaps(f.buckets, f.bucket_ns, f.t0_ns, SLOW_IO_NS),
            };
            stalls.gaps_total += g.len() as u64;
            let room = analysis::MAX_GAPS.saturating_sub(stalls.gaps.len());
            stalls.gaps.extend(g.into_iter().take(room));
        }
    }
    if stalls.gaps_total > 0 {
        stalls.verdict = analysis::Verdict::Found;
    }
    stalls
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

#[cfg(test)]
mod tests {
    //! A long run analysed as the agent keeps it (bounded samples and timeline, the exact
    //! buckets on disk) against the same run with every sample and bucket in memory.
    use super::*;
    use crate::stats::fine::{FineSeries, Spill};
    use crate::stats::SampleSeries;
    use shared::analysis::Timeline;
    use shared::{RunReport, RwMode, Sample, WorkloadSpec};

    const MIB: u64 = 1 << 20;

    /// A drawn drive: `cache_s` of writing at `fast` B/s, then `fast / ratio` with ±10 %
    /// noise, and a stall of `stall` buckets every `every` buckets; two hours of 10 ms.
    struct Model {
        cache_s: f64,
        fast: f64,
        ratio: f64,
        every: usize,
        stall: usize,
        seed: u64,
    }

    fn buckets(m: &Model) -> Vec<u64> {
        let n = 2 * 3600 * 100;
        let mut x = m.seed | 1;
        (0..n)
            .map(|i| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let noise = 0.9 + 0.2 * ((x >> 33) as f64 / (1u64 << 31) as f64);
                let t_s = i as f64 / 100.0;
                let rate = if t_s < m.cache_s {
                    m.fast
                } else {
                    m.fast / m.ratio * noise
                };
                let in_stall = i > 1000 && (i % m.every) < m.stall;
                if in_stall {
                    0
                } else {
                    ((rate * 0.01) as u64 / MIB) * MIB
                }
            })
            .collect()
    }

    fn sample(seq: u64, b: &[u64], cum: u64) -> Sample {
        let bytes: u64 = b.iter().sum();
        let mut s = Sample {
            seq,
            start_ns: seq * 100_000_000,
            end_ns: (seq + 1) * 100_000_000,
            ..Sample::default()
        };
        s.write.bytes = bytes;
        s.write.ios = bytes / MIB;
        s.write.cum_bytes = cum;
        s.write.lat.max_ns = if b.contains(&0) {
            310_000_000
        } else {
            2_000_000
        };
        s.write.lat.p99_ns = 1_500_000;
        s.write = s.write.with_rates(100_000_000);
        s
    }

    fn report(samples: Vec<Sample>, timeline: Timeline, n: u64) -> RunReport {
        let spec = WorkloadSpec {
            rw: RwMode::Write,
            bs: MIB,
            ..WorkloadSpec::default()
        };
        let mut r = RunReport {
            protocol_version: shared::PROTOCOL_VERSION,
            status: shared::RunStatus::Completed,
            error: None,
            spec,
            environment: Default::default(),
            summary: Default::default(),
            samples,
            histogram: Default::default(),
            steps: Vec::new(),
            analysis: Default::default(),
            timeline: Some(timeline),
            targets: Vec::new(),
        };
        r.summary.duration_ns = n * 100_000_000;
        r.summary.samples = n;
        r.summary.write.ios = 1;
        r
    }

    /// The tuned case, then drives drawn from seeds (cache 100-1,500 s at 1-4 GB/s, 2-8×
    /// slower after, stalls of 150-500 ms every 5-25 minutes).
    #[test]
    fn a_long_runs_bounded_analyses_match_those_of_all_its_samples() {
        let mut models = vec![Model {
            cache_s: 600.0,
            fast: 2000e6,
            ratio: 4.0,
            every: 120_000,
            stall: 30,
            seed: 12345,
        }];
        let mut r = 0x5EED_u64;
        let mut draw = |lo: f64, hi: f64| {
            r = r.wrapping_mul(6364136223846793005).wrapping_add(1);
            lo + (hi - lo) * ((r >> 11) as f64 / (1u64 << 53) as f64)
        };
        for seed in 1..=5u64 {
            models.push(Model {
                cache_s: draw(100.0, 1500.0),
                fast: draw(1000e6, 4000e6),
                ratio: draw(2.0, 8.0),
                every: draw(30_000.0, 150_000.0) as usize,
                stall: draw(15.0, 50.0) as usize,
                seed,
            });
        }
        for m in &models {
            check(m);
        }
    }

    fn check(m: &Model) {
        let b = buckets(m);
        let opts = AnalysisOptions {
            required_rate: Some(450e6),
            buffer_ms: 1000,
            first_last_window_s: 60.0,
            cache_recovery: false,
            fakecap_span: None,
            p99_target_us: None,
        };
        // Everything in memory.
        let mut all = Vec::new();
        let mut cum = 0;
        for (i, c) in b.chunks(10).enumerate() {
            cum += c.iter().sum::<u64>();
            all.push(sample(i as u64, c, cum));
        }
        let n = all.len() as u64;
        let full_tl = Timeline {
            bucket_ms: 10,
            bytes: b.clone(),
            ..Timeline::default()
        };
        let full = analyze(&report(all.clone(), full_tl, n), &opts, None);
        // As the agent keeps it.
        let mut series = SampleSeries::default();
        for s in all {
            series.push(s);
        }
        let mut fine = FineSeries::default();
        let mut spill = Spill::new().expect("temporary file");
        for (i, x) in b.iter().enumerate() {
            fine.add(i as u64 * BUCKET_NS, *x);
            spill.push(*x).expect("spill");
        }
        assert!(
            fine.coarsened() && series.per() > 1,
            "the test must be past the caps"
        );
        let kept = series.into_vec();
        let tl = Timeline {
            bucket_ms: (fine.bucket_ns() / 1_000_000) as u32,
            bytes: fine.bytes().to_vec(),
            ..Timeline::default()
        };
        let bounded = analyze(&report(kept, tl, n), &opts, Some(&mut spill));

        let (fc, bc) = (
            full.cache_cliff.clone().expect("cliff"),
            bounded.cache_cliff.clone().expect("cliff"),
        );
        assert!(fc.detected && bc.detected, "{fc:?} {bc:?}");
        let rel = |a: f64, b: f64| (a - b).abs() / a.abs().max(1e-9);
        let (fb, bb) = (fc.cache_bytes.unwrap_or(0), bc.cache_bytes.unwrap_or(0));
        assert!(rel(fb as f64, bb as f64) < 0.02, "cache {fb} vs {bb}");
        // What the model wrote before its cache ran out (buckets hold whole MiB).
        let truth = b[..(m.cache_s * 100.0) as usize].iter().sum::<u64>() as f64;
        assert!(
            rel(truth, bb as f64) < 0.05,
            "cache {bb} vs the model's {truth}"
        );
        assert!(
            rel(fc.post_mbps.unwrap_or(0.0), bc.post_mbps.unwrap_or(0.0)) < 0.02,
            "{fc:?} {bc:?}"
        );
        // Exact from the spill: the same stalls, the same sustain verdict and buffer.
        let (fs, bs) = (
            full.stalls.expect("stalls"),
            bounded.stalls.expect("stalls"),
        );
        assert_eq!(fs.gaps, bs.gaps);
        let stalls = (1..)
            .take_while(|k| k * m.every < b.len() - 1)
            .filter(|k| k * m.every > 1000)
            .count();
        assert_eq!(
            fs.gaps_total as usize, stalls,
            "one stall every {} buckets",
            m.every
        );
        assert_eq!(full.sustain, bounded.sustain);
        let s = bounded.sustain.expect("sustain");
        assert_eq!(s.longest_stall_ms, m.stall as u64 * 10);
        // Summaries over windows agree closely.
        let (ff, bf) = (
            full.first_last.expect("fl"),
            bounded.first_last.expect("fl"),
        );
        assert!(rel(ff.first_mbps, bf.first_mbps) < 0.02, "{ff:?} {bf:?}");
        assert!(rel(ff.last_mbps, bf.last_mbps) < 0.02, "{ff:?} {bf:?}");
        assert_eq!(
            full.thermal.map(|t| t.classification),
            bounded.thermal.map(|t| t.classification)
        );
    }
}
