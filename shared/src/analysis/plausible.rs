//! Numbers that flag themselves: each figure of a run is held against what the agent knows
//! of the path to the medium — the link's ceiling (PCIe generation × width, SATA, USB, the
//! emulated link), a rotating disk's mechanics, the page cache of a buffered run — and
//! against the load generator's own CPU: a job thread on CPU nearly all the time sets the
//! pace itself, whatever the drive could do.

use crate::devices::Link;
use crate::sample::Sample;
use serde::{Deserialize, Serialize};

/// A figure above the link by more than this share is flagged (sysfs rounds link speeds).
const LINK_SLACK: f64 = 1.02;
/// The busiest job thread busy (on CPU or waiting for one) this share of the time (percent) or more: the load
/// generator limits the run.
pub const CPU_LIMIT_PCT: f64 = 90.0;
/// More than a rotating disk delivers: sequential MB/s off the platters, random IOPS.
const ROTATING_MB_S: f64 = 400.0;
const ROTATING_IOPS: f64 = 1000.0;

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum FlagKind {
    /// Faster than the link can carry: a cache, compression or holes answered.
    FasterThanLink,
    /// Faster than a rotating disk's mechanics allow.
    FasterThanDevice,
    /// A buffered run: the page cache sits between the run and the device.
    PageCache,
    /// The job threads were on CPU nearly all the time.
    LoadGenerator,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Flag {
    pub kind: FlagKind,
    pub message: String,
}

/// What the run's figures were held against, and what did not hold.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Plausibility {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<Link>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rotational: Option<bool>,
    /// The fastest figure checked (MB/s) and what it was.
    pub fastest_mb_s: f64,
    pub fastest: String,
    /// The busiest job thread's CPU over the samples that moved data (percent), and what is
    /// left of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_cpu_pct: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headroom_pct: Option<f64>,
    pub flags: Vec<Flag>,
}

impl Plausibility {
    /// One line for the CLI summary: the fastest figure against the link, the job CPU.
    pub fn summary_line(&self) -> String {
        let mut parts = Vec::new();
        match &self.link {
            Some(l) => parts.push(format!(
                "fastest {:.0} MB/s ({}) of the link's {:.0} MB/s ({}, {:.0} %)",
                self.fastest_mb_s,
                self.fastest,
                l.mb_s,
                l.desc,
                100.0 * self.fastest_mb_s / l.mb_s.max(1e-9)
            )),
            None => parts.push("link unknown".into()),
        }
        if let Some(c) = self.job_cpu_pct {
            parts.push(format!(
                "busiest job thread busy {c:.0} % (headroom {:.0} %)",
                self.headroom_pct.unwrap_or(0.0)
            ));
        }
        let n = self
            .flags
            .iter()
            .filter(|f| f.kind != FlagKind::PageCache)
            .count();
        parts.push(match n {
            0 => "no figure out of bounds".into(),
            n => format!("{n} figure(s) flagged (see warnings)"),
        });
        format!("plausibility: {}", parts.join("; "))
    }
}

/// One figure to check: a direction of a step (or of the run).
#[derive(Clone, Debug, PartialEq)]
pub struct Figure {
    /// `read` or `step 'SEQ1M Q8T1 read #1' read`.
    pub label: String,
    pub mb_s: f64,
    pub iops: f64,
    pub random: bool,
    pub bs: u64,
}

/// Holds `figures` (and the samples' job CPU) against the path: `link`, `rotational`,
/// `direct` (false: a buffered run).
pub fn plausibility(
    link: Option<&Link>,
    rotational: Option<bool>,
    direct: bool,
    figures: &[Figure],
    samples: &[Sample],
) -> Plausibility {
    let mut flags = Vec::new();
    let fastest = figures
        .iter()
        .max_by(|a, b| a.mb_s.total_cmp(&b.mb_s))
        .cloned();
    if let Some(l) = link {
        for f in figures.iter().filter(|f| f.mb_s > l.mb_s * LINK_SLACK) {
            flags.push(Flag {
                kind: FlagKind::FasterThanLink,
                message: format!(
                    "{} {:.0} MB/s is faster than the link ({}, at most {:.0} MB/s): cache, compression or holes",
                    f.label, f.mb_s, l.desc, l.mb_s
                ),
            });
        }
    }
    if rotational == Some(true) {
        for f in figures {
            let seeks = f.random && f.bs <= 64 << 10 && f.iops > ROTATING_IOPS;
            if seeks || f.mb_s > ROTATING_MB_S {
                let what = if seeks {
                    format!("{:.0} IOPS of random I/O", f.iops)
                } else {
                    format!("{:.0} MB/s", f.mb_s)
                };
                flags.push(Flag {
                    kind: FlagKind::FasterThanDevice,
                    message: format!(
                        "{} {what} is more than a rotating disk delivers: a cache answered",
                        f.label
                    ),
                });
            }
        }
    }
    if !direct {
        flags.push(Flag {
            kind: FlagKind::PageCache,
            message: "buffered I/O: the page cache sits between the run and the device (reads may come from RAM, writes may not have reached it)".into(),
        });
    }
    let busy: Vec<f64> = samples
        .iter()
        .filter(|s| s.total_ios() > 0)
        .filter_map(|s| s.job_cpu_pct)
        .collect();
    let cpu = (!busy.is_empty()).then(|| busy.iter().sum::<f64>() / busy.len() as f64);
    if let Some(c) = cpu.filter(|c| *c >= CPU_LIMIT_PCT) {
        flags.push(Flag {
            kind: FlagKind::LoadGenerator,
            message: format!(
                "limited by the load generator: the busiest job thread was on CPU (or waiting for one) {c:.0} % of the time (headroom {:.0} %): more jobs, larger blocks or a less loaded machine would show whether the target is faster",
                100.0 - c
            ),
        });
    }
    Plausibility {
        link: link.cloned(),
        rotational,
        fastest_mb_s: fastest.as_ref().map_or(0.0, |f| f.mb_s),
        fastest: fastest.map(|f| f.label).unwrap_or_default(),
        job_cpu_pct: cpu,
        headroom_pct: cpu.map(|c| (100.0 - c).max(0.0)),
        flags,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fig(label: &str, mb_s: f64, iops: f64, random: bool) -> Figure {
        Figure {
            label: label.into(),
            mb_s,
            iops,
            random,
            bs: 4096,
        }
    }

    fn cpu(pct: f64) -> Sample {
        let mut s = Sample::default();
        s.read.ios = 10;
        s.job_cpu_pct = Some(pct);
        s
    }

    #[test]
    fn figures_over_the_link_a_spinning_disk_or_a_busy_thread_are_flagged() {
        let usb = Link::usb("5000").expect("usb");
        let figs = [
            fig("read", 5600.0, 1.0, false),
            fig("write", 120.0, 30.0, false),
        ];
        let p = plausibility(Some(&usb), Some(true), true, &figs, &[cpu(40.0), cpu(50.0)]);
        let kinds: Vec<FlagKind> = p.flags.iter().map(|f| f.kind).collect();
        assert_eq!(
            kinds,
            [FlagKind::FasterThanLink, FlagKind::FasterThanDevice]
        );
        assert!(
            p.flags[0].message.starts_with(
                "read 5600 MB/s is faster than the link (USB 5000 Mb/s, at most 500 MB/s)"
            ),
            "{}",
            p.flags[0].message
        );
        assert_eq!(
            (p.fastest_mb_s, p.job_cpu_pct, p.headroom_pct),
            (5600.0, Some(45.0), Some(55.0))
        );
        // Within the link, direct, an idle thread: nothing to say.
        let ok = plausibility(Some(&usb), Some(false), true, &figs[1..], &[cpu(10.0)]);
        assert!(ok.flags.is_empty(), "{:?}", ok.flags);
        // Random 4K on a rotating disk above its seek rate; a saturated thread; buffered.
        let p = plausibility(
            None,
            Some(true),
            false,
            &[fig("randread", 40.0, 10_000.0, true)],
            &[cpu(97.0)],
        );
        let kinds: Vec<FlagKind> = p.flags.iter().map(|f| f.kind).collect();
        assert_eq!(
            kinds,
            [
                FlagKind::FasterThanDevice,
                FlagKind::PageCache,
                FlagKind::LoadGenerator
            ]
        );
        assert!(
            p.flags[2]
                .message
                .contains("97 % of the time (headroom 3 %)"),
            "{}",
            p.flags[2].message
        );
    }
}
