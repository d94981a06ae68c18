//! Workloads: a validated [`Plan`] built from a user's spec and a probed target, and the
//! pieces each job uses on the hot path (offsets, I/O sizes, data patterns, rate cap and
//! think time, random numbers).

pub mod offsets;
pub mod pattern;
pub mod plan;
pub mod rate;
pub mod replay;
pub mod rng;
pub mod sizes;

pub use plan::{JobPlan, Plan};
