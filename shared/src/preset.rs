//! What a preset *is*, as one typed value the agent, the dashboard and the CLI share: its
//! name, the form its result opens with, which charts mean something for it, and how its
//! steps are named and matched when two runs are compared. The agent's `presets.rs` builds
//! a preset's steps from a [`PresetKind`]; every view derives from the same value instead of
//! comparing preset names.
//!
//! Adding a preset: a variant here (with its name, headline and charts), a `Def` in the
//! agent's `presets.rs` that builds its steps, and — only when it has a result form of its
//! own — a [`HeadlineKind`] and its view in the dashboard's `views/headline.rs`.

use crate::spec::{RwMode, WorkloadSpec};
use crate::steps::StepReport;
use serde::{Deserialize, Serialize};

/// Every named workload the agent runs.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum PresetKind {
    Quick,
    Cdm,
    CdmPeak,
    Atto,
    OrionMatrix,
    FullSpan,
    IometerMix,
    SniaSteady,
    Fill,
    Sustain,
    CompressProbe,
    CacheRecovery,
    LatencyTarget,
    FillLevel,
    Fakecap,
    ErrorScan,
    Apps,
    AppBuild,
    AppDatabase,
    AppFiles,
    #[serde(rename = "seq1m-q8-read")]
    Seq1mQ8Read,
    #[serde(rename = "seq1m-q8-write")]
    Seq1mQ8Write,
    #[serde(rename = "rnd4k-q32-read")]
    Rnd4kQ32Read,
    #[serde(rename = "rnd4k-q32-write")]
    Rnd4kQ32Write,
    #[serde(rename = "rnd4k-q1-read")]
    Rnd4kQ1Read,
    #[serde(rename = "rnd4k-q1-write")]
    Rnd4kQ1Write,
    Files,
    Probe,
    LoadLatency,
    Flushcheck,
}

/// The form a run's result opens with (the dashboard draws each; history rows, the kiosk
/// and `diskscope runs` print its one line).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeadlineKind {
    /// CrystalDiskMark's 2×4 tiles.
    Cdm,
    /// ATTO's bars by transfer size.
    Atto,
    /// HD Tune's min/avg/max and speed by position.
    FullSpan,
    /// PASS/FAIL against the required rate.
    Sustain,
    /// Iometer's first vs last window.
    FirstLast,
    /// SNIA's rounds and steady window.
    Steady,
    /// The cache before and after the idle time.
    Recovery,
    /// MB/s per data pattern.
    Compress,
    /// One workload's figures per direction.
    Single,
    /// No form of its own: its panels and steps table say it all.
    Steps,
}

/// Which position chart means something for a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PositionChart {
    /// Random offsets, or sizes swept over one small span: position says nothing.
    None,
    /// Each interval at the middle of the window it covered (one sequential pass).
    Window,
    /// A write pass and a read pass over the whole span (drawn by the headline).
    Span,
}

/// The charts a run's result and live view draw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Charts {
    /// MB/s, IOPS and latency over time.
    pub time: bool,
    pub position: PositionChart,
    /// MB/s against block size from the steps (besides a headline that already has it).
    pub sweep: bool,
    /// A CrystalDiskMark grid table from the steps (besides tiles that already have it).
    pub grid: bool,
    /// Latency against achieved IOPS from the steps, a curve per depth (`load-latency`).
    pub load: bool,
}

impl PresetKind {
    pub const ALL: &'static [PresetKind] = &[
        PresetKind::Quick,
        PresetKind::Cdm,
        PresetKind::CdmPeak,
        PresetKind::Atto,
        PresetKind::OrionMatrix,
        PresetKind::FullSpan,
        PresetKind::IometerMix,
        PresetKind::SniaSteady,
        PresetKind::Fill,
        PresetKind::Sustain,
        PresetKind::CompressProbe,
        PresetKind::CacheRecovery,
        PresetKind::LatencyTarget,
        PresetKind::FillLevel,
        PresetKind::Fakecap,
        PresetKind::ErrorScan,
        PresetKind::Apps,
        PresetKind::AppBuild,
        PresetKind::AppDatabase,
        PresetKind::AppFiles,
        PresetKind::Seq1mQ8Read,
        PresetKind::Seq1mQ8Write,
        PresetKind::Rnd4kQ32Read,
        PresetKind::Rnd4kQ32Write,
        PresetKind::Rnd4kQ1Read,
        PresetKind::Rnd4kQ1Write,
        PresetKind::Files,
        PresetKind::Probe,
        PresetKind::LoadLatency,
        PresetKind::Flushcheck,
    ];

    /// The name the CLI (`--preset`), the API and the database use.
    pub fn name(self) -> &'static str {
        use PresetKind::*;
        match self {
            Quick => "quick",
            Cdm => "cdm",
            CdmPeak => "cdm-peak",
            Atto => "atto",
            OrionMatrix => "orion-matrix",
            FullSpan => "full-span",
            IometerMix => "iometer-mix",
            SniaSteady => "snia-steady",
            Fill => "fill",
            Sustain => "sustain",
            CompressProbe => "compress-probe",
            CacheRecovery => "cache-recovery",
            LatencyTarget => "latency-target",
            FillLevel => "fill-level",
            Fakecap => "fakecap",
            ErrorScan => "error-scan",
            Apps => "apps",
            AppBuild => "app-build",
            AppDatabase => "app-database",
            AppFiles => "app-files",
            Seq1mQ8Read => "seq1m-q8-read",
            Seq1mQ8Write => "seq1m-q8-write",
            Rnd4kQ32Read => "rnd4k-q32-read",
            Rnd4kQ32Write => "rnd4k-q32-write",
            Rnd4kQ1Read => "rnd4k-q1-read",
            Rnd4kQ1Write => "rnd4k-q1-write",
            Files => "files",
            Probe => "probe",
            LoadLatency => "load-latency",
            Flushcheck => "flushcheck",
        }
    }

    /// The preset called `name`, if there is one.
    pub fn from_name(name: &str) -> Option<PresetKind> {
        Self::ALL.iter().copied().find(|k| k.name() == name)
    }

    /// The form its result opens with.
    pub fn headline(self) -> HeadlineKind {
        use PresetKind::*;
        match self {
            Cdm | CdmPeak => HeadlineKind::Cdm,
            Atto => HeadlineKind::Atto,
            FullSpan => HeadlineKind::FullSpan,
            Sustain => HeadlineKind::Sustain,
            IometerMix => HeadlineKind::FirstLast,
            SniaSteady => HeadlineKind::Steady,
            CacheRecovery => HeadlineKind::Recovery,
            CompressProbe => HeadlineKind::Compress,
            Quick | Fill | ErrorScan | AppBuild | AppDatabase | AppFiles | Seq1mQ8Read
            | Seq1mQ8Write | Rnd4kQ32Read | Rnd4kQ32Write | Rnd4kQ1Read | Rnd4kQ1Write | Probe
            | Flushcheck => HeadlineKind::Single,
            OrionMatrix | LatencyTarget | FillLevel | Fakecap | Apps | Files | LoadLatency => {
                HeadlineKind::Steps
            }
        }
    }

    /// The charts that mean something for it.
    pub fn charts(self) -> Charts {
        use PresetKind::*;
        let position = match self {
            // One sequential pass over the span: speed by where it was measured.
            Quick | Fill | Sustain | Seq1mQ8Read | Seq1mQ8Write | Fakecap | ErrorScan => {
                PositionChart::Window
            }
            FullSpan => PositionChart::Span,
            _ => PositionChart::None,
        };
        Charts {
            time: true,
            position,
            // ATTO's bars and CrystalDiskMark's tiles already are the sweep and the grid.
            sweep: matches!(self, OrionMatrix),
            grid: false,
            load: matches!(self, LoadLatency),
        }
    }

    /// Whether its steps are the tests of a CrystalDiskMark-style grid or a block-size sweep
    /// (named by their workload), rather than stages of one procedure (named by the preset).
    fn synthetic_tests(self) -> bool {
        use PresetKind::*;
        matches!(
            self,
            Quick
                | Cdm
                | CdmPeak
                | Atto
                | OrionMatrix
                | Seq1mQ8Read
                | Seq1mQ8Write
                | Rnd4kQ32Read
                | Rnd4kQ32Write
                | Rnd4kQ1Read
                | Rnd4kQ1Write
        )
    }
}

impl std::fmt::Display for PresetKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What a stored run is: a preset, or one custom workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunKind {
    Preset(PresetKind),
    /// A workload given as a spec (or a preset name this build does not know).
    Custom,
}

impl RunKind {
    /// The kind of a run stored with `preset`.
    pub fn of(preset: Option<&str>) -> RunKind {
        preset
            .and_then(PresetKind::from_name)
            .map_or(RunKind::Custom, RunKind::Preset)
    }

    pub fn headline(self) -> HeadlineKind {
        match self {
            RunKind::Preset(p) => p.headline(),
            RunKind::Custom => HeadlineKind::Single,
        }
    }

    pub fn charts(self) -> Charts {
        match self {
            RunKind::Preset(p) => p.charts(),
            RunKind::Custom => Charts {
                time: true,
                position: PositionChart::Window,
                sweep: true,
                grid: true,
                load: false,
            },
        }
    }

    /// The identity of a step for comparing two runs: the same test in two runs has the
    /// same key, whatever the runs' presets (a cdm step and a custom run of the same
    /// workload match), and passes and rounds of one test share it.
    pub fn step_key(self, step: &StepReport) -> StepKey {
        let synthetic = match self {
            RunKind::Preset(p) => p.synthetic_tests(),
            RunKind::Custom => true,
        };
        let test = if synthetic && step.spec.replay.is_none() {
            workload_label(&step.spec)
        } else {
            strip_pass(&step.name).to_string()
        };
        StepKey {
            test,
            dir: Dir::of(&step.spec),
        }
    }
}

/// Which way a step moves data.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Dir {
    Read,
    Write,
    Mixed,
}

impl Dir {
    pub fn of(spec: &WorkloadSpec) -> Dir {
        match spec.rw.read_pct(spec.read_pct) {
            100 => Dir::Read,
            0 => Dir::Write,
            _ => Dir::Mixed,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Dir::Read => "read",
            Dir::Write => "write",
            Dir::Mixed => "mix",
        }
    }
}

/// A step's identity across runs (see [`RunKind::step_key`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StepKey {
    /// `SEQ1M Q8T1` for a synthetic test; the step's own name (without its pass) otherwise.
    pub test: String,
    pub dir: Dir,
}

impl std::fmt::Display for StepKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.test, self.dir.as_str())
    }
}

/// CrystalDiskMark's label, with what else sets a synthetic test apart (a mix's share, a
/// data pattern other than random, a rate cap).
fn workload_label(spec: &WorkloadSpec) -> String {
    let mut s = crate::steps::test_label(spec);
    if matches!(spec.rw, RwMode::RandRw | RwMode::Rw) {
        s.push_str(&format!(" {}% read", spec.read_pct));
    }
    if spec.pattern != crate::DataPattern::Random {
        s.push_str(&format!(" {}", spec.pattern));
    }
    if let Some(r) = spec.rate {
        s.push_str(&format!(" at {r}"));
    }
    s
}

/// `SEQ1M Q8T1 read #3` → `SEQ1M Q8T1 read`; `round 4` → `round`.
fn strip_pass(name: &str) -> &str {
    let t = name.trim_end();
    match t.rsplit_once(' ') {
        Some((head, last))
            if last
                .trim_start_matches('#')
                .chars()
                .all(|c| c.is_ascii_digit())
                && !last.trim_start_matches('#').is_empty()
                && (last.starts_with('#') || head.ends_with("round")) =>
        {
            head
        }
        _ => t,
    }
}

/// One step of a run as planned when it starts: what the live view's progress counts
/// through (stored with the run; `RunInfo::plan`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PlannedStep {
    pub name: String,
    /// Idle before it, sampled as pause intervals.
    #[serde(default)]
    pub pause_ms: u64,
    /// Its length, when it ends by time (ramp excluded).
    #[serde(default)]
    pub runtime_ms: Option<u64>,
    /// Bytes it moves, when it ends by volume.
    #[serde(default)]
    pub bytes: Option<u64>,
    /// The span it covers on the target.
    #[serde(default)]
    pub span_bytes: u64,
    /// Rounds until steady state: at most this many of `runtime_ms` each.
    #[serde(default)]
    pub max_rounds: Option<u32>,
    /// A latency search: rounds until its limit is found (how many is not known up front).
    #[serde(default)]
    pub search: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_has_one_name_and_back() {
        for &k in PresetKind::ALL {
            assert_eq!(PresetKind::from_name(k.name()), Some(k));
            let json = serde_json::to_string(&k).expect("json");
            assert_eq!(json, format!("\"{}\"", k.name()));
        }
        assert_eq!(PresetKind::from_name("nope"), None);
        assert_eq!(RunKind::of(Some("nope")), RunKind::Custom);
    }

    #[test]
    fn passes_and_rounds_share_a_key() {
        assert_eq!(strip_pass("SEQ1M Q8T1 read #3"), "SEQ1M Q8T1 read");
        assert_eq!(strip_pass("round 4"), "round");
        assert_eq!(strip_pass("4K QD32 randread"), "4K QD32 randread");
        assert_eq!(strip_pass("write 25 %"), "write 25 %");
        let step = |name: &str, rw: RwMode| StepReport {
            name: name.into(),
            spec: WorkloadSpec {
                rw,
                bs: 1 << 20,
                iodepth: 8,
                ..WorkloadSpec::default()
            },
            ..StepReport::default()
        };
        let cdm = RunKind::Preset(PresetKind::Cdm);
        let a = cdm.step_key(&step("SEQ1M Q8T1 read #1", RwMode::Read));
        let b = cdm.step_key(&step("SEQ1M Q8T1 read #5", RwMode::Read));
        let custom = RunKind::Custom.step_key(&step("custom", RwMode::Read));
        assert_eq!((a.clone(), a.clone()), (b, custom));
        assert_eq!(a.to_string(), "SEQ1M Q8T1 read");
        let w = cdm.step_key(&step("SEQ1M Q8T1 write #1", RwMode::Write));
        assert_ne!(a, w);
    }
}
