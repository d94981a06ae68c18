//! Statistics: the latency histogram (hot path), per-job interval counters, and the merge of
//! all jobs' intervals into per-interval [`shared::Sample`]s and the run summary.

pub mod fine;
pub mod histogram;
pub mod interval;
pub mod merge;
pub mod series;

pub use histogram::Histogram;
pub use interval::{DirCounters, IntervalStats};
pub use merge::Merger;
pub use series::{Decimated, SampleSeries};
