//! One CSV row per sample, with a header; columns are flat (`read_mb_s`, `write_lat_p99_ns`,
//! ...) so spreadsheets and pandas take them as they are.

use shared::{DirSample, Sample};
use std::path::Path;

const DIR_COLUMNS: [&str; 14] = [
    "bytes",
    "ios",
    "mb_s",
    "mib_s",
    "iops",
    "lat_min_ns",
    "lat_mean_ns",
    "lat_p50_ns",
    "lat_p90_ns",
    "lat_p99_ns",
    "lat_p99_9_ns",
    "lat_p99_99_ns",
    "lat_max_ns",
    "cum_bytes",
];

fn dir_values(d: &DirSample) -> [String; 14] {
    let l = &d.lat;
    [
        d.bytes.to_string(),
        d.ios.to_string(),
        format!("{:.3}", d.mb_s),
        format!("{:.3}", d.mib_s),
        format!("{:.1}", d.iops),
        l.min_ns.to_string(),
        l.mean_ns.to_string(),
        l.p50_ns.to_string(),
        l.p90_ns.to_string(),
        l.p99_ns.to_string(),
        l.p99_9_ns.to_string(),
        l.p99_99_ns.to_string(),
        l.max_ns.to_string(),
        d.cum_bytes.to_string(),
    ]
}

fn header() -> Vec<String> {
    let mut h = vec!["seq".to_string(), "start_s".into(), "end_s".into()];
    for dir in ["read", "write"] {
        h.extend(DIR_COLUMNS.iter().map(|c| format!("{dir}_{c}")));
    }
    h.extend(["offset_lo".into(), "offset_hi".into()]);
    // The trims' after the rest: the columns before keep their places.
    h.extend(DIR_COLUMNS.iter().map(|c| format!("trim_{c}")));
    h
}

fn record(s: &Sample) -> Vec<String> {
    let opt = |v: Option<u64>| v.map(|v| v.to_string()).unwrap_or_default();
    let mut r = vec![
        s.seq.to_string(),
        format!("{:.6}", s.start_ns as f64 / 1e9),
        format!("{:.6}", s.end_ns as f64 / 1e9),
    ];
    r.extend(dir_values(&s.read));
    r.extend(dir_values(&s.write));
    r.extend([opt(s.offset_lo), opt(s.offset_hi)]);
    r.extend(dir_values(&s.trim));
    r
}

/// Writes the header and one row per sample to a file.
pub fn write(path: &Path, samples: &[Sample]) -> Result<(), ::csv::Error> {
    write_to(std::fs::File::create(path)?, samples)
}

/// Writes the header and one row per sample to any writer.
pub fn write_to<W: std::io::Write>(out: W, samples: &[Sample]) -> Result<(), ::csv::Error> {
    let mut w = Sink::new(out)?;
    for s in samples {
        w.push(s)?;
    }
    w.finish()
}

/// Rows written as the samples come (constant memory at any run length).
pub struct Sink<W: std::io::Write>(::csv::Writer<W>);

impl<W: std::io::Write> Sink<W> {
    /// Starts the file with its header.
    pub fn new(out: W) -> Result<Self, ::csv::Error> {
        let mut w = ::csv::Writer::from_writer(out);
        w.write_record(header())?;
        Ok(Sink(w))
    }

    pub fn push(&mut self, s: &Sample) -> Result<(), ::csv::Error> {
        self.0.write_record(record(s))
    }

    pub fn finish(mut self) -> Result<(), ::csv::Error> {
        self.0.flush()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_row_per_sample_under_a_header() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("s.csv");
        let mut s = Sample::default();
        s.write.bytes = 4096;
        s.offset_lo = Some(0);
        write(&p, &[s.clone(), s]).expect("write");
        let text = std::fs::read_to_string(&p).expect("read");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(lines[0].starts_with("seq,start_s,end_s,read_bytes,"));
        assert_eq!(lines[0].split(',').count(), lines[1].split(',').count());
        assert!(lines[0].contains("write_lat_p99_ns"));
    }
}
