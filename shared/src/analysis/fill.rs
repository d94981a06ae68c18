//! The `fill-level` preset's result (the Intel 530 review's fill test): the same 4K random
//! read and write at 0, 25, 50, 75 and 90 % of the span filled, as speed against fill level,
//! with the drop from the emptiest to the fullest level named.

use crate::steps::StepReport;
use serde::{Deserialize, Serialize};

/// A drop past this (percent) is named in the summary line as a slowdown.
pub const DROP_PCT: f64 = 10.0;

/// One fill level and the speeds measured at it.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Level {
    pub pct: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_mb_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_mb_s: Option<f64>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FillLevel {
    pub levels: Vec<Level>,
    /// (first − last) / first over the levels that measured the direction, percent: a
    /// positive drop is a slowdown as the target fills.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_drop_pct: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_drop_pct: Option<f64>,
}

/// The step name of a test at a fill level: `25 % full: 4K random read QD32`.
pub fn step_name(pct: u32, dir: &str) -> String {
    format!("{pct} % full: 4K random {dir} QD32")
}

fn level_of(name: &str) -> Option<(u32, &'static str)> {
    let (pct, rest) = name.split_once(" % full: 4K random ")?;
    let dir = match rest {
        "read QD32" => "read",
        "write QD32" => "write",
        _ => return None,
    };
    Some((pct.parse().ok()?, dir))
}

/// The levels of a `fill-level` run from its steps (`None` when it has none).
pub fn fill_levels(steps: &[StepReport]) -> Option<FillLevel> {
    let mut levels: Vec<Level> = Vec::new();
    for s in steps {
        let Some((pct, dir)) = level_of(&s.name) else {
            continue;
        };
        let i = match levels.iter().position(|l| l.pct == pct) {
            Some(i) => i,
            None => {
                levels.push(Level {
                    pct,
                    ..Level::default()
                });
                levels.len() - 1
            }
        };
        if dir == "read" {
            levels[i].read_mb_s = Some(s.summary.read.mb_s);
        } else {
            levels[i].write_mb_s = Some(s.summary.write.mb_s);
        }
    }
    if levels.is_empty() {
        return None;
    }
    let drop = |f: fn(&Level) -> Option<f64>| {
        let v: Vec<f64> = levels.iter().filter_map(f).collect();
        match (v.first(), v.last()) {
            (Some(a), Some(b)) if v.len() >= 2 && *a > 0.0 => Some(100.0 * (a - b) / a),
            _ => None,
        }
    };
    Some(FillLevel {
        read_drop_pct: drop(|l| l.read_mb_s),
        write_drop_pct: drop(|l| l.write_mb_s),
        levels,
    })
}

impl FillLevel {
    /// One line for the CLI summary and the dashboard.
    pub fn summary_line(&self) -> String {
        let part = |dir: &str, f: fn(&Level) -> Option<f64>, d: Option<f64>| {
            let pts: Vec<(u32, f64)> = self
                .levels
                .iter()
                .filter_map(|l| f(l).map(|v| (l.pct, v)))
                .collect();
            let (Some(a), Some(b), Some(d)) = (pts.first(), pts.last(), d) else {
                return None;
            };
            let verdict = if d > DROP_PCT {
                format!("slower as it fills, −{d:.0} %")
            } else if d < -DROP_PCT {
                format!("faster as it fills, +{:.0} %", -d)
            } else {
                "holds".into()
            };
            Some(format!(
                "4K random {dir} {:.0} → {:.0} MB/s from {} to {} % full ({verdict})",
                a.1, b.1, a.0, b.0
            ))
        };
        let parts: Vec<String> = [
            part("read", |l| l.read_mb_s, self.read_drop_pct),
            part("write", |l| l.write_mb_s, self.write_drop_pct),
        ]
        .into_iter()
        .flatten()
        .collect();
        format!("fill level: {}", parts.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(name: &str, read: f64, write: f64) -> StepReport {
        let mut s = StepReport {
            name: name.into(),
            ..StepReport::default()
        };
        s.summary.read.mb_s = read;
        s.summary.write.mb_s = write;
        s
    }

    #[test]
    fn levels_and_drops_from_the_steps() {
        let steps = vec![
            step("fill to 25 %", 0.0, 900.0),
            step(&step_name(0, "write"), 0.0, 300.0),
            step(&step_name(25, "read"), 250.0, 0.0),
            step(&step_name(25, "write"), 0.0, 290.0),
            step(&step_name(90, "read"), 180.0, 0.0),
            step(&step_name(90, "write"), 0.0, 120.0),
        ];
        let f = fill_levels(&steps).expect("levels");
        assert_eq!(
            f.levels.iter().map(|l| l.pct).collect::<Vec<_>>(),
            [0, 25, 90]
        );
        assert_eq!(f.levels[0].read_mb_s, None);
        assert!((f.read_drop_pct.expect("read") - 28.0).abs() < 1e-9);
        assert!((f.write_drop_pct.expect("write") - 60.0).abs() < 1e-9);
        assert_eq!(
            f.summary_line(),
            "fill level: 4K random read 250 → 180 MB/s from 25 to 90 % full (slower as it fills, −28 %); 4K random write 300 → 120 MB/s from 0 to 90 % full (slower as it fills, −60 %)"
        );
        assert!(fill_levels(&steps[..1]).is_none());
    }
}
