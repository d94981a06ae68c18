//! The error scan (HD Tune's): a pass over the span that goes on past I/O errors and slow
//! I/Os, and maps every I/O by position into at most [`MAX_CELLS`] cells (time per I/O,
//! errors, slow I/Os), from which unreadable and slow regions are read.

use serde::{Deserialize, Serialize};

/// Most cells of a map; a cell is never smaller than a block.
pub const MAX_CELLS: u64 = 1024;
/// How many failed I/Os a map lists by offset (the cells count all of them).
pub const MAX_LISTED_ERRORS: usize = 64;
/// An I/O at least this slow (ms) is a slow one (`scan_slow_ms` default).
pub const DEFAULT_SLOW_MS: u64 = 200;

/// The cells of a span: the first byte, the bytes per cell and their count.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Layout {
    pub start: u64,
    pub span_bytes: u64,
    pub cell_bytes: u64,
    pub cells: u32,
}

impl Layout {
    /// At most [`MAX_CELLS`] cells over `span_bytes` from `start`, each a whole number of
    /// `bs` blocks.
    pub fn new(start: u64, span_bytes: u64, bs: u64) -> Layout {
        let blocks = (span_bytes / bs.max(1)).max(1);
        let per_cell = blocks.div_ceil(MAX_CELLS);
        let cell_bytes = per_cell * bs.max(1);
        Layout {
            start,
            span_bytes,
            cell_bytes,
            cells: blocks.div_ceil(per_cell) as u32,
        }
    }

    /// The cell of the I/O at `offset`.
    #[inline]
    pub fn cell_of(&self, offset: u64) -> usize {
        let i = offset.saturating_sub(self.start) / self.cell_bytes.max(1);
        (i as usize).min(self.cells.saturating_sub(1) as usize)
    }
}

/// One cell: its I/Os, their time, and what went wrong.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Cell {
    /// Completed I/Os (errors not included) and the sum and maximum of their latency (µs).
    pub ios: u32,
    pub lat_sum_us: u64,
    pub max_us: u32,
    /// I/Os that failed (EIO, short) and I/Os at least `slow_ms` slow.
    pub errors: u32,
    pub slow: u32,
}

impl Cell {
    #[inline]
    pub fn io(&mut self, lat_ns: u64, slow_ns: u64) {
        let us = lat_ns / 1000;
        self.ios += 1;
        self.lat_sum_us += us;
        self.max_us = self.max_us.max(us.min(u64::from(u32::MAX)) as u32);
        if lat_ns >= slow_ns {
            self.slow += 1;
        }
    }

    pub fn mean_us(&self) -> Option<f64> {
        (self.ios > 0).then(|| self.lat_sum_us as f64 / f64::from(self.ios))
    }

    fn add(&mut self, o: &Cell) {
        self.ios += o.ios;
        self.lat_sum_us += o.lat_sum_us;
        self.max_us = self.max_us.max(o.max_us);
        self.errors += o.errors;
        self.slow += o.slow;
    }
}

/// A failed I/O.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ScanError {
    pub offset: u64,
    pub len: u64,
    /// The error number (EIO 5), or none for a short transfer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub errno: Option<i32>,
}

/// What a region of neighbouring cells is.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum RegionKind {
    Unreadable,
    Slow,
}

/// Neighbouring cells with errors (unreadable) or slow I/Os (and no errors).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Region {
    pub kind: RegionKind,
    pub start: u64,
    pub len: u64,
    /// Failed or slow I/Os in it.
    pub ios: u64,
}

/// The map of one scanned step (or workload).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ScanMap {
    /// "read" or "write".
    pub dir: String,
    /// The cells' span, size and count.
    pub layout: Layout,
    /// The block size of the scan's I/Os.
    pub bs: u64,
    pub slow_ms: u64,
    pub cells: Vec<Cell>,
    /// The first failed I/Os, at most [`MAX_LISTED_ERRORS`].
    pub errors: Vec<ScanError>,
    /// The preset step it was made in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<u32>,
}

impl ScanMap {
    pub fn new(dir: &str, layout: Layout, bs: u64, slow_ms: u64) -> ScanMap {
        ScanMap {
            dir: dir.into(),
            layout,
            bs,
            slow_ms,
            cells: vec![Cell::default(); layout.cells as usize],
            errors: Vec::new(),
            step: None,
        }
    }

    /// A failed I/O at `offset`.
    #[inline]
    pub fn error(&mut self, offset: u64, errno: Option<i32>) {
        let i = self.layout.cell_of(offset);
        if let Some(c) = self.cells.get_mut(i) {
            c.errors += 1;
        }
        if self.errors.len() < MAX_LISTED_ERRORS {
            self.errors.push(ScanError {
                offset,
                len: self.bs,
                errno,
            });
        }
    }

    /// Adds another job's map of the same layout.
    pub fn add(&mut self, o: &ScanMap) {
        for (a, b) in self.cells.iter_mut().zip(&o.cells) {
            a.add(b);
        }
        for e in &o.errors {
            if self.errors.len() >= MAX_LISTED_ERRORS {
                break;
            }
            self.errors.push(e.clone());
        }
        self.errors.sort_by_key(|e| e.offset);
    }

    pub fn error_ios(&self) -> u64 {
        self.cells.iter().map(|c| u64::from(c.errors)).sum()
    }

    pub fn slow_ios(&self) -> u64 {
        self.cells.iter().map(|c| u64::from(c.slow)).sum()
    }

    /// Unreadable and slow regions: runs of neighbouring cells of the same kind (a cell with
    /// an error is unreadable even when it also had slow I/Os), at cell granularity.
    pub fn regions(&self) -> Vec<Region> {
        let mut out: Vec<Region> = Vec::new();
        let cb = self.layout.cell_bytes;
        for (i, c) in self.cells.iter().enumerate() {
            let (kind, n) = if c.errors > 0 {
                (RegionKind::Unreadable, c.errors)
            } else if c.slow > 0 {
                (RegionKind::Slow, c.slow)
            } else {
                continue;
            };
            let start = self.layout.start + i as u64 * cb;
            let end = (start + cb).min(self.layout.start + self.layout.span_bytes);
            match out.last_mut() {
                Some(r) if r.kind == kind && r.start + r.len == start => {
                    r.len = end - r.start;
                    r.ios += u64::from(n);
                }
                _ => out.push(Region {
                    kind,
                    start,
                    len: end - start,
                    ios: u64::from(n),
                }),
            }
        }
        out
    }

    /// One line for the CLI summary and the dashboard.
    pub fn summary_line(&self) -> String {
        use crate::units::format_bytes;
        let regions = self.regions();
        let list = |k: RegionKind| -> Vec<String> {
            regions
                .iter()
                .filter(|r| r.kind == k)
                .take(4)
                .map(|r| format!("{}..{}", r.start, r.start + r.len))
                .collect()
        };
        let (bad, slow) = (list(RegionKind::Unreadable), list(RegionKind::Slow));
        let slowest = self.cells.iter().map(|c| c.max_us).max().unwrap_or(0);
        let mut line = format!(
            "error scan ({}): {} cells of {} over {}: ",
            self.dir,
            self.layout.cells,
            format_bytes(self.layout.cell_bytes),
            format_bytes(self.layout.span_bytes)
        );
        if bad.is_empty() && slow.is_empty() {
            line.push_str(&format!(
                "no errors, no I/O of {} ms or more (slowest {:.1} ms)",
                self.slow_ms,
                f64::from(slowest) / 1e3
            ));
            return line;
        }
        let mut parts = Vec::new();
        if !bad.is_empty() {
            parts.push(format!(
                "{} failed I/O(s), unreadable at {}",
                self.error_ios(),
                bad.join(", ")
            ));
        }
        if !slow.is_empty() {
            parts.push(format!(
                "{} I/O(s) of {} ms or more, slow at {}",
                self.slow_ios(),
                self.slow_ms,
                slow.join(", ")
            ));
        }
        line.push_str(&parts.join("; "));
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_cover_the_span_in_whole_blocks() {
        let l = Layout::new(4096, 64 << 20, 65536);
        assert_eq!((l.cells, l.cell_bytes), (1024, 65536));
        let l = Layout::new(0, 10 << 30, 1 << 20);
        assert_eq!((l.cells, l.cell_bytes), (1024, 10 << 20));
        let l = Layout::new(0, 3 << 20, 1 << 20);
        assert_eq!((l.cells, l.cell_bytes), (3, 1 << 20));
        assert_eq!(l.cell_of(5 << 20), 2, "past the end: the last cell");
    }

    #[test]
    fn regions_join_neighbouring_cells_and_errors_win() {
        let mut m = ScanMap::new("read", Layout::new(0, 16 * 4096, 4096), 4096, 200);
        for i in 0..16u64 {
            let lat = if (8..11).contains(&i) {
                300_000_000
            } else {
                100_000
            };
            if i == 3 || i == 4 {
                m.error(i * 4096, Some(5));
            } else {
                m.cells[i as usize].io(lat, 200_000_000);
            }
        }
        m.cells[10].errors += 1;
        let r = m.regions();
        assert_eq!(
            r,
            vec![
                Region {
                    kind: RegionKind::Unreadable,
                    start: 3 * 4096,
                    len: 2 * 4096,
                    ios: 2
                },
                Region {
                    kind: RegionKind::Slow,
                    start: 8 * 4096,
                    len: 2 * 4096,
                    ios: 2
                },
                Region {
                    kind: RegionKind::Unreadable,
                    start: 10 * 4096,
                    len: 4096,
                    ios: 1
                },
            ]
        );
        let line = m.summary_line();
        assert!(
            line.contains("3 failed I/O(s), unreadable at 12288..20480, 40960..45056"),
            "{line}"
        );
        let mut other = ScanMap::new("read", m.layout, 4096, 200);
        other.error(0, Some(5));
        m.add(&other);
        assert_eq!((m.error_ios(), m.errors[0].offset), (4, 0));
    }
}
