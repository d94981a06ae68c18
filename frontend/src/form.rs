//! The New-test form as plain data: the workload options the agent lists (`GET
//! /api/v1/options`, its one table of options) as the text the user typed. The agent reads
//! the texts into a spec and judges it (`POST /api/v1/specs/read`), so the browser carries
//! no copy of the readers or the validator, and each problem lands next to its field
//! before anything is sent.

use shared::units::{parse_duration_ms, parse_size};
use shared::{Rate, WorkloadSpec};
use std::collections::BTreeMap;

/// The form's inputs, one per workload option, as text (selects and checkboxes too, so
/// that one update function serves every input).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct SpecForm {
    pub fields: BTreeMap<String, String>,
}

/// How a preset's knob is edited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Free text with a placeholder/hint.
    Text(&'static str),
    Check,
}

/// A preset's knob: key, label, how it is edited, and help.
pub struct Field {
    pub key: &'static str,
    pub label: &'static str,
    pub kind: Kind,
    pub help: &'static str,
}

/// Problems by form field, each naming its value.
pub type FieldErrors = BTreeMap<String, String>;

impl SpecForm {
    pub fn get(&self, key: &str) -> &str {
        self.fields.get(key).map_or("", String::as_str)
    }

    pub fn set(&mut self, key: &str, value: String) {
        self.fields.insert(key.to_string(), value);
    }
}

/// The agent's reading of `form` (`None` while its answer for these very fields is not
/// in): the spec when it found no problem, else the problems by field (none at all while
/// the answer is awaited).
pub fn judged(
    form: &SpecForm,
    verdict: Option<&(SpecForm, shared::api::SpecRead)>,
) -> Result<WorkloadSpec, FieldErrors> {
    let Some((_, read)) = verdict.filter(|(f, _)| f == form) else {
        return Err(FieldErrors::new());
    };
    if read.problems.is_empty() {
        return Ok(read.spec.clone());
    }
    let mut errs = FieldErrors::new();
    for p in &read.problems {
        errs.entry(p.field.clone()).or_insert_with(|| p.to_string());
    }
    Err(errs)
}

/// The New-test form's "Repeat" field: empty is one pass; else 1..=1000 passes.
pub fn parse_repeat(text: &str) -> Result<Option<u32>, String> {
    let t = text.trim();
    if t.is_empty() {
        return Ok(None);
    }
    match t.parse::<u32>() {
        Ok(n) if (1..=shared::steps::MAX_REPEAT).contains(&n) => Ok(Some(n)),
        _ => Err(format!(
            "repeat = {t}: give a number of passes, 1..{}",
            shared::steps::MAX_REPEAT
        )),
    }
}

/// The knobs of a preset (empty = the preset's default), as the user typed them.
pub const PRESET_OPTIONS: &[Field] = &[
    Field {
        key: "size",
        label: "Test size / span",
        kind: Kind::Text("preset default"),
        help: "e.g. 1G; cdm up to the free space",
    },
    Field {
        key: "count",
        label: "Passes / max rounds",
        kind: Kind::Text("preset default"),
        help: "cdm passes (5), snia-steady rounds (25)",
    },
    Field {
        key: "runtime",
        label: "Time per step",
        kind: Kind::Text("preset default"),
        help: "e.g. 5s; steady-state round length",
    },
    Field {
        key: "rate",
        label: "Required rate",
        kind: Kind::Text("sustain only"),
        help: "e.g. 3200MB (per second)",
    },
    Field {
        key: "streams",
        label: "Streams",
        kind: Kind::Text("1"),
        help: "sustain: parallel writers sharing the rate",
    },
    Field {
        key: "buffer_ms",
        label: "Buffer (ms of data)",
        kind: Kind::Text("1s"),
        help: "sustain: the RAM buffer a pass may rely on, e.g. 500ms",
    },
    Field {
        key: "idle",
        label: "Idle between steps",
        kind: Kind::Text("preset default"),
        help: "e.g. 1s; cache-recovery 30s",
    },
    Field {
        key: "bs",
        label: "Block size",
        kind: Kind::Text("preset default"),
        help: "full-span, fill, sustain",
    },
    Field {
        key: "p99_us",
        label: "p99 limit",
        kind: Kind::Text("1ms"),
        help: "latency-target: e.g. 500us, 1ms",
    },
    Field {
        key: "verify",
        label: "Verify the writes",
        kind: Kind::Check,
        help: "each write step read back and checked",
    },
    Field {
        key: "dirs",
        label: "Directories",
        kind: Kind::Text("1"),
        help: "files: per job",
    },
    Field {
        key: "depth",
        label: "Tree depth",
        kind: Kind::Text("1"),
        help: "files: levels",
    },
    Field {
        key: "fanout",
        label: "Fanout",
        kind: Kind::Text("2"),
        help: "files: per directory",
    },
    Field {
        key: "phases",
        label: "Phases",
        kind: Kind::Text("all"),
        help: "files: e.g. mkdir,create,stat",
    },
    Field {
        key: "fsync",
        label: "fsync each file",
        kind: Kind::Check,
        help: "files",
    },
    Field {
        key: "interval",
        label: "Sample interval",
        kind: Kind::Text("1s"),
        help: "e.g. 100ms; every preset",
    },
];

/// The preset options from their text fields; errors keyed by field, naming the value.
pub fn preset_options(
    fields: &BTreeMap<&'static str, String>,
) -> Result<shared::PresetOptions, BTreeMap<&'static str, String>> {
    let mut errs = BTreeMap::new();
    let checked = |k: &str| (fields.get(k).map(String::as_str) == Some("true")).then_some(true);
    let text = |k: &str| {
        fields
            .get(k)
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    let rate = match text("rate").map(|t| t.parse::<Rate>()) {
        Some(Err(e)) => {
            errs.insert("rate", e);
            None
        }
        r => r.and_then(Result::ok),
    };
    // One reader per kind of value (plain `fn`s: one copy of the code for each kind).
    let mut read = |key: &'static str, parse: fn(&str) -> Result<u64, String>| {
        let t = fields
            .get(key)
            .map(|v| v.trim())
            .filter(|v| !v.is_empty())?;
        parse(t).map_err(|e| errs.insert(key, e)).ok()
    };
    let size: fn(&str) -> Result<u64, String> = |t| parse_size(t).map_err(|e| e.to_string());
    let ms: fn(&str) -> Result<u64, String> = |t| parse_duration_ms(t).map_err(|e| e.to_string());
    let whole: fn(&str) -> Result<u64, String> = |t| {
        t.parse::<u32>()
            .map(u64::from)
            .map_err(|_| format!("'{t}': expected a whole number"))
    };
    let o = shared::PresetOptions {
        size: read("size", size),
        count: read("count", whole).map(|n| n as u32),
        runtime_ms: read("runtime", ms),
        streams: read("streams", whole).map(|n| n as u32),
        idle_ms: read("idle", ms),
        buffer_ms: read("buffer_ms", ms),
        bs: read("bs", size),
        interval_ms: read("interval", ms),
        p99_us: read("p99_us", shared::units::parse_latency_us),
        dirs: read("dirs", whole).map(|n| n as u32),
        depth: read("depth", whole).map(|n| n as u32),
        fanout: read("fanout", whole).map(|n| n as u32),
        verify: checked("verify"),
        fsync: checked("fsync"),
        phases: text("phases"),
        rate,
        #[cfg(not(target_arch = "wasm32"))]
        backend: None,
        #[cfg(not(target_arch = "wasm32"))]
        witness: None,
        #[cfg(not(target_arch = "wasm32"))]
        flush_every: None,
        #[cfg(not(target_arch = "wasm32"))]
        dsync: None,
    };
    if errs.is_empty() {
        Ok(o)
    } else {
        Err(errs)
    }
}

/// Whether the run writes (and so, on a block device, destroys data).
pub fn writes(spec: &WorkloadSpec) -> bool {
    spec.rw.read_pct(spec.read_pct) < 100
}

/// A zoom range typed as seconds from the run's start (`from`, `to`) → the sample `seq`s it
/// covers at `interval_ms` per sample. Errors name the bad value.
pub fn zoom_range(from: &str, to: &str, interval_ms: u64) -> Result<(u64, u64), String> {
    let secs = |name: &str, v: &str| -> Result<f64, String> {
        let x: f64 = v
            .trim()
            .parse()
            .map_err(|_| format!("{name} = '{v}': expected seconds, e.g. 120"))?;
        if !x.is_finite() || x < 0.0 {
            return Err(format!("{name} = '{v}': expected 0 or more seconds"));
        }
        Ok(x)
    };
    let (a, b) = (secs("from", from)?, secs("to", to)?);
    if b <= a {
        return Err(format!("to = {b} s must be after from = {a} s"));
    }
    let per = interval_ms.max(1) as f64 / 1e3;
    let first = (a / per).floor() as u64;
    let last = ((b / per).ceil() as u64).saturating_sub(1).max(first);
    Ok((first, last))
}

#[cfg(test)]
mod tests {
    use super::*;
    use shared::RwMode;

    #[test]
    fn repeat_takes_a_number_of_passes() {
        assert_eq!(parse_repeat(" "), Ok(None));
        assert_eq!(parse_repeat("5"), Ok(Some(5)));
        assert!(parse_repeat("0").is_err_and(|e| e.starts_with("repeat = 0")));
        assert!(parse_repeat("five").is_err());
    }

    #[test]
    fn only_the_answer_for_these_fields_counts() {
        let mut form = SpecForm::default();
        form.set("iodepth", "0".into());
        let bad = shared::api::SpecRead {
            spec: WorkloadSpec::default(),
            problems: vec![shared::SpecError::new("iodepth", 0, "must be 1..1024")],
        };
        assert_eq!(judged(&form, None), Err(FieldErrors::new()));
        let errs = judged(&form, Some(&(form.clone(), bad.clone()))).expect_err("bad");
        assert_eq!(errs["iodepth"], "iodepth = 0: must be 1..1024");
        let mut older = form.clone();
        older.set("iodepth", "4".into());
        assert_eq!(judged(&form, Some(&(older, bad))), Err(FieldErrors::new()));
        let good = shared::api::SpecRead::default();
        assert_eq!(
            judged(&form, Some(&(form.clone(), good))),
            Ok(WorkloadSpec::default())
        );
    }

    #[test]
    fn preset_options_parse_or_name_the_bad_value() {
        let mut f = BTreeMap::new();
        f.insert("size", "2G".to_string());
        f.insert("rate", "3200MB".to_string());
        f.insert("count", "".to_string());
        let o = preset_options(&f).expect("valid");
        assert_eq!(o.size, Some(2 << 30));
        assert_eq!(o.rate, Some(Rate::BytesPerSec(3_200_000_000)));
        assert_eq!(o.count, None);
        f.insert("count", "five".to_string());
        let e = preset_options(&f).expect_err("invalid");
        assert!(e["count"].contains("'five'"), "{e:?}");
    }

    #[test]
    fn writes_follow_the_mode_and_mix() {
        let mut s = WorkloadSpec::default();
        assert!(!writes(&s));
        s.rw = RwMode::RandRw;
        s.read_pct = 100;
        assert!(!writes(&s));
        s.read_pct = 99;
        assert!(writes(&s));
        s.rw = RwMode::Write;
        assert!(writes(&s));
    }

    #[test]
    fn a_zoom_range_in_seconds_becomes_sample_seqs_or_names_the_bad_value() {
        assert_eq!(zoom_range("10", "20", 100), Ok((100, 199)));
        assert_eq!(zoom_range("0", "0.05", 100), Ok((0, 0)));
        assert_eq!(zoom_range(" 60 ", "120", 1000), Ok((60, 119)));
        assert!(zoom_range("ten", "20", 100)
            .unwrap_err()
            .contains("from = 'ten'"));
        assert!(zoom_range("5", "-1", 100)
            .unwrap_err()
            .contains("to = '-1'"));
        assert!(zoom_range("30", "20", 100)
            .unwrap_err()
            .contains("to = 20 s must be after"));
    }
}
