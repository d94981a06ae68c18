//! The CLI's `--json` and `--csv` at any run length: every sample goes out as it is made
//! (CSV rows straight to the file; for JSON, one line each to an unnamed temporary file in
//! the `--json` file's directory), so memory does not grow with the run while the report
//! keeps a bounded view (`stats::series`). At the end the JSON report is written with the
//! exact samples read back in one pass.

use crate::report;
use crate::runner::Observer;
use anyhow::Context;
use shared::{RunReport, Sample};
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Seek, Write};
use std::path::{Path, PathBuf};

pub struct Outputs<'a> {
    inner: &'a mut dyn Observer,
    csv: Option<(PathBuf, report::csv::Sink<BufWriter<File>>)>,
    /// The path, and the spill while it works (else the report's own samples are written).
    json: Option<(PathBuf, Option<BufWriter<File>>)>,
    /// `--timeline`: where every 10 ms bucket goes at the end, and whether it went.
    timeline: Option<(PathBuf, Option<anyhow::Result<()>>)>,
    /// The first CSV write that failed: the run goes on, the error is reported at the end.
    failed: Option<anyhow::Error>,
}

impl<'a> Outputs<'a> {
    /// The outputs `diskscope run` was given.
    pub fn for_args(
        inner: &'a mut dyn Observer,
        args: &super::args::RunArgs,
    ) -> anyhow::Result<Self> {
        Outputs::new(
            inner,
            args.json.as_deref(),
            args.csv.as_deref(),
            args.timeline.as_deref(),
        )
    }

    /// Creates the output files before anything runs: a path that cannot be written is an
    /// error up front, not after the measurement.
    pub fn new(
        inner: &'a mut dyn Observer,
        json: Option<&Path>,
        csv: Option<&Path>,
        timeline: Option<&Path>,
    ) -> anyhow::Result<Self> {
        if let Some(p) = timeline {
            File::create(p).with_context(|| format!("cannot write --timeline {}", p.display()))?;
        }
        let csv = match csv {
            Some(p) => {
                let f = File::create(p)
                    .with_context(|| format!("cannot write --csv {}", p.display()))?;
                let sink = report::csv::Sink::new(BufWriter::new(f))
                    .with_context(|| format!("cannot write --csv {}", p.display()))?;
                Some((p.to_path_buf(), sink))
            }
            None => None,
        };
        let json = match json {
            Some(p) => {
                // Checked now; written at the end from the spill, which lives beside it (the
                // disk that will hold the report, not a /tmp that may be RAM).
                File::create(p).with_context(|| format!("cannot write --json {}", p.display()))?;
                let dir = p
                    .parent()
                    .filter(|d| !d.as_os_str().is_empty())
                    .unwrap_or(Path::new("."));
                let spill = tempfile::tempfile_in(dir).with_context(|| {
                    format!(
                        "cannot create a temporary file for the samples in {}",
                        dir.display()
                    )
                })?;
                Some((p.to_path_buf(), Some(BufWriter::new(spill))))
            }
            None => None,
        };
        Ok(Outputs {
            inner,
            csv,
            json,
            timeline: timeline.map(|p| (p.to_path_buf(), None)),
            failed: None,
        })
    }

    /// Writes the JSON report with every sample, and closes the CSV file.
    pub fn finish(self, report: &RunReport) -> anyhow::Result<()> {
        // JSON first: whatever happened to the CSV file, the report is kept.
        if let Some((path, spill)) = self.json {
            let ctx = || format!("cannot write --json {}", path.display());
            let Some(spill) = spill else {
                eprintln!(
                    "diskscope: the samples' temporary file failed; --json {} has the report's \
                     merged samples",
                    path.display()
                );
                return report::write_json(&path, report).with_context(ctx);
            };
            let mut f = spill
                .into_inner()
                .map_err(|e| e.into_error())
                .with_context(ctx)?;
            f.rewind().with_context(ctx)?;
            let samples = BufReader::new(f).lines().map(|l| {
                l.and_then(|l| serde_json::from_str::<Sample>(&l).map_err(std::io::Error::other))
            });
            let out = BufWriter::new(File::create(&path).with_context(ctx)?);
            report::write_json_with(out, report, samples).with_context(ctx)?;
        }
        if let Some(e) = self.failed {
            return Err(e);
        }
        match self.timeline {
            Some((_, Some(r))) => r?,
            Some((path, None)) => anyhow::bail!(
                "--timeline {}: the run kept no 10 ms timeline (no temporary file could hold it)",
                path.display()
            ),
            None => {}
        }
        if let Some((path, sink)) = self.csv {
            sink.finish()
                .with_context(|| format!("cannot write --csv {}", path.display()))?;
        }
        Ok(())
    }
}

impl Observer for Outputs<'_> {
    fn layout(&mut self, bytes: u64) {
        self.inner.layout(bytes);
    }

    fn request(&mut self, r: &shared::probe::Request) {
        self.inner.request(r);
    }

    fn exact_timeline(&mut self, buckets: &mut crate::stats::fine::Spill) {
        let Some((path, done)) = &mut self.timeline else {
            return;
        };
        let step_ms = crate::stats::fine::BUCKET_NS / 1_000_000;
        let r = (|| -> std::io::Result<()> {
            let mut out = BufWriter::new(File::create(&*path)?);
            out.write_all(b"t_ms,bytes\n")?;
            for (i, b) in buckets.reader(0, buckets.len()).enumerate() {
                writeln!(out, "{},{}", i as u64 * step_ms, b?)?;
            }
            out.flush()
        })();
        *done = Some(r.with_context(|| format!("cannot write --timeline {}", path.display())));
    }

    fn sample(&mut self, s: &Sample) {
        self.inner.sample(s);
        if let (Some((path, sink)), None) = (&mut self.csv, &self.failed) {
            if let Err(e) = sink.push(s) {
                self.failed = Some(
                    anyhow::Error::new(e).context(format!("cannot write --csv {}", path.display())),
                );
            }
        }
        if let Some((_, slot)) = &mut self.json {
            if let Some(spill) = slot {
                let line = serde_json::to_writer(&mut *spill, s)
                    .map_err(std::io::Error::other)
                    .and_then(|_| spill.write_all(b"\n"));
                if line.is_err() {
                    *slot = None;
                }
            }
        }
    }
}
