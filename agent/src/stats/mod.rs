//! Statistics: the latency histogram (hot path), per-job interval counters, the merge of
//! all jobs' intervals into per-interval [`shared::Sample`]s and the run summary, bounded
//! series of long runs, and sums over steps (`totals`) and targets (`targets`).

pub mod fine;
pub mod histogram;
pub mod interval;
pub mod merge;
pub mod series;
pub mod targets;
pub mod totals;

pub use histogram::Histogram;
pub use interval::{DirCounters, IntervalStats};
pub use merge::Merger;
pub use series::{Decimated, SampleSeries};
pub use targets::TargetMerger;
pub use totals::Totals;
