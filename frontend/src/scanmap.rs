//! How the error scan's map is drawn (HD Tune's grid): each cell's colour from its time per
//! I/O on a log scale from the fastest cell to the slow threshold (green to orange), errors
//! red, slow cells dark red, unscanned cells grey; and the scale's legend.

use shared::analysis::scan::{Cell, ScanMap};

/// What a cell shows: a CSS class, its background, and its tooltip.
#[derive(Clone, Debug, PartialEq)]
pub struct CellLook {
    pub class: &'static str,
    pub colour: String,
    pub title: String,
}

/// The time scale of a map: the fastest cell's mean time (µs) and the slow threshold.
pub fn scale(m: &ScanMap) -> (f64, f64) {
    let slow_us = (m.slow_ms as f64 * 1e3).max(1.0);
    let lo = m
        .cells
        .iter()
        .filter(|c| c.errors == 0)
        .filter_map(Cell::mean_us)
        .fold(f64::INFINITY, f64::min);
    let lo = if lo.is_finite() {
        lo.clamp(1.0, slow_us / 2.0)
    } else {
        1.0
    };
    (lo, slow_us)
}

/// The colour of a time `us` on the scale `lo..hi`: hue 120 (green) at `lo` down to 30
/// (orange) at `hi`, logarithmically.
pub fn colour(us: f64, lo: f64, hi: f64) -> String {
    let t = ((us.max(lo).ln() - lo.ln()) / (hi.ln() - lo.ln()).max(1e-9)).clamp(0.0, 1.0);
    format!("hsl({:.0}, 70%, 45%)", 120.0 - 90.0 * t)
}

/// Cell `i` of map `m`.
pub fn look(m: &ScanMap, i: usize, (lo, hi): (f64, f64)) -> CellLook {
    let c = m.cells.get(i).copied().unwrap_or_default();
    let start = m.layout.start + i as u64 * m.layout.cell_bytes;
    let end = (start + m.layout.cell_bytes).min(m.layout.start + m.layout.span_bytes);
    let at = format!("{start}..{end}");
    let mean = c
        .mean_us()
        .map_or("-".into(), |u| format!("{:.2} ms", u / 1e3));
    let detail = format!(
        "{at}: {} I/O(s), mean {mean}, max {:.2} ms",
        c.ios,
        f64::from(c.max_us) / 1e3
    );
    if c.errors > 0 {
        return CellLook {
            class: "cell error",
            colour: "#c0392b".into(),
            title: format!("{detail}, {} failed", c.errors),
        };
    }
    if c.slow > 0 {
        return CellLook {
            class: "cell slow",
            colour: "#7b241c".into(),
            title: format!("{detail}, {} slow (≥ {} ms)", c.slow, m.slow_ms),
        };
    }
    match c.mean_us() {
        Some(us) => CellLook {
            class: "cell",
            colour: colour(us, lo, hi),
            title: detail,
        },
        None => CellLook {
            class: "cell unscanned",
            colour: "#bbb".into(),
            title: format!("{at}: not scanned"),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shared::analysis::scan::Layout;

    #[test]
    fn errors_slow_fast_and_unscanned_cells_look_apart() {
        let mut m = ScanMap::new("read", Layout::new(0, 4 * 4096, 4096), 4096, 200);
        m.cells[0].io(100_000, 200_000_000);
        m.cells[1].io(50_000_000, 200_000_000);
        m.error(2 * 4096, Some(5));
        let s = scale(&m);
        assert_eq!(s, (100.0, 200_000.0));
        let looks: Vec<_> = (0..4).map(|i| look(&m, i, s)).collect();
        assert_eq!(
            looks[0].colour, "hsl(120, 70%, 45%)",
            "the fastest is green"
        );
        assert_eq!(looks[1].class, "cell");
        assert!(looks[1].colour.starts_with("hsl(4"), "{}", looks[1].colour);
        assert_eq!(looks[2].class, "cell error");
        assert!(
            looks[2].title.contains("8192..12288: 0 I/O(s)"),
            "{}",
            looks[2].title
        );
        assert_eq!(looks[3].class, "cell unscanned");
        m.cells[3].io(300_000_000, 200_000_000);
        assert_eq!(look(&m, 3, s).class, "cell slow");
    }
}
