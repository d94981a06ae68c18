//! The one chart component's drawing: line series drawn by plotters as SVG (painted onto the
//! page's canvas by [`crate::raster`], saved as a file, read by tests), min/max downsampled to the pixel width,
//! with axes and units, a legend, and analysis markers (a required rate, an event at a time,
//! a window as a band). [`Frame`] tells the hover readout where the data lies in pixels.

use crate::downsample::min_max;
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;

/// One line.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    pub name: String,
    pub color: (u8, u8, u8),
    /// `(x, y)`, x ascending; a point whose y is NaN is a break (a step boundary, a pause,
    /// an interval with nothing to show): the line stops there and starts again after it.
    pub points: Vec<(f64, f64)>,
}

/// The break marker in [`Series::points`].
pub const BREAK: f64 = f64::NAN;

impl Series {
    /// The line's unbroken stretches.
    pub fn segments(&self) -> impl Iterator<Item = &[(f64, f64)]> {
        self.points
            .split(|p| p.1.is_nan())
            .filter(|s| !s.is_empty())
    }
}

/// Vertical axis of a chart.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum YAxis {
    Linear,
    /// Log scale (latency spans decades: 50 µs reads next to a 2 s stall).
    Log,
}

/// Something an analysis (or the spec) marks on a chart.
#[derive(Clone, Debug, PartialEq)]
pub enum Marker {
    /// A horizontal line at `y` (e.g. the rate a capture box must sustain).
    Level { y: f64, label: String },
    /// A vertical line at `x` (e.g. where the SLC cache ran out).
    At { x: f64, label: String },
    /// A shaded window `x0..x1` (e.g. the steady-state window).
    Band { x0: f64, x1: f64, label: String },
    /// Stalls: stretches with no completion (shaded) and slow I/Os (ticks at the top), one
    /// legend entry for all of them.
    Stalls {
        spans: Vec<(f64, f64)>,
        ticks: Vec<f64>,
        label: String,
    },
}

/// What a chart shows; the same value draws on a canvas or into an SVG file.
#[derive(Clone, Debug, PartialEq)]
pub struct ChartData {
    pub title: String,
    pub x_desc: String,
    pub y_desc: String,
    pub axis: YAxis,
    /// Formats x values for tick labels and the hover readout.
    pub x_fmt: Fmt,
    /// Formats y values for tick labels and the hover readout.
    pub y_fmt: Fmt,
    pub series: Vec<Series>,
    pub markers: Vec<Marker>,
}

/// How axis values read, with their units.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fmt {
    Seconds,
    Count,
    Micros,
    Gigabytes,
    Log2Bytes,
    Celsius,
}

impl Fmt {
    /// A tick label on an axis whose ticks are `step` apart: as many decimals as the step
    /// needs, so that neighbouring ticks never read the same (`0.15 s`, `0.20 s`).
    pub fn tick(self, v: f64, step: f64) -> String {
        let decimals = |unit: f64| -> usize {
            if step <= 0.0 || !step.is_finite() {
                return 0;
            }
            (-(step / unit).log10()).ceil().clamp(0.0, 4.0) as usize
        };
        match self {
            Fmt::Seconds if step < 1.0 => format!("{v:.*} s", decimals(1.0)),
            Fmt::Gigabytes if step < 0.01 => format!("{:.*} MB", decimals(1e-3), v * 1e3),
            Fmt::Gigabytes if step < 1.0 => format!("{v:.*} GB", decimals(1.0)),
            Fmt::Count if step < 1.0 => format!("{v:.*}", decimals(1.0)),
            _ => self.apply(v),
        }
    }

    pub fn apply(self, v: f64) -> String {
        match self {
            Fmt::Seconds => fmt_seconds(v),
            Fmt::Count => fmt_count(v),
            Fmt::Micros => fmt_us(v),
            Fmt::Gigabytes => fmt_gb(v),
            Fmt::Log2Bytes => fmt_log2_bytes(v),
            Fmt::Celsius => format!("{v:.0} °C"),
        }
    }
}

/// Where the plotting area lies, in backend pixels, and the x range it shows.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Frame {
    pub left: i32,
    pub right: i32,
    pub x0: f64,
    pub x1: f64,
}

impl Frame {
    /// The data x under pixel column `px`, when inside the plot.
    pub fn x_at(&self, px: f64) -> Option<f64> {
        let w = f64::from(self.right - self.left);
        if w <= 0.0 || px < f64::from(self.left) || px > f64::from(self.right) {
            return None;
        }
        Some(self.x0 + (px - f64::from(self.left)) / w * (self.x1 - self.x0))
    }

    /// The data x under pixel column `px`, the plot's edge when outside it (a drag that
    /// runs past the axis selects up to the axis).
    pub fn x_clamped(&self, px: f64) -> f64 {
        let px = px.clamp(f64::from(self.left), f64::from(self.right.max(self.left)));
        self.x_at(px).unwrap_or(self.x0)
    }
}

/// Series with at most this many points draw a mark at each.
const SPARSE_POINTS: usize = 64;

pub use shared::units::fmt_seconds;

/// Plain numbers with thousands shortened (`12.5k`, `1.2M`).
pub fn fmt_count(v: f64) -> String {
    let a = v.abs();
    if a >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if a >= 1e4 {
        format!("{:.0}k", v / 1e3)
    } else if a >= 100.0 || v == v.trunc() {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// Microseconds as a duration with its unit (log axes read `100 µs`, `1.00 ms`, `10.00 ms`).
pub fn fmt_us(us: f64) -> String {
    let s = shared::units::format_ns((us * 1e3).max(0.0).round() as u64);
    // Round values read without zeros: `10 ms`, not `10.00 ms`.
    match s.split_once(' ') {
        Some((n, unit)) if n.contains('.') && n.trim_end_matches('0').ends_with('.') => {
            format!("{} {unit}", n.trim_end_matches('0').trim_end_matches('.'))
        }
        _ => s,
    }
}

/// Gigabytes (10^9) of position on the target.
pub fn fmt_gb(gb: f64) -> String {
    if gb >= 10.0 {
        format!("{gb:.0} GB")
    } else {
        format!("{gb:.2} GB")
    }
}

/// log2 of a block size, shown as the block size.
pub fn fmt_log2_bytes(l: f64) -> String {
    let bytes = 2f64.powf(l).round() as u64;
    shared::units::size_short(bytes)
}

fn y_bounds(data: &ChartData) -> (f64, f64) {
    let values = data
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .chain(data.markers.iter().filter_map(|m| match m {
            Marker::Level { y, .. } => Some(*y),
            _ => None,
        }));
    match data.axis {
        // Headroom above the highest value keeps the legend off the lines.
        YAxis::Linear => (0.0, values.fold(1.0f64, f64::max) * 1.3),
        YAxis::Log => {
            let (lo, hi) = values
                .filter(|v| *v > 0.0)
                .fold((f64::MAX, 0.0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
            if hi <= 0.0 {
                (1.0, 10.0)
            } else {
                // Whole decades, so that the ticks fall on 10^n.
                (
                    10f64.powf(lo.log10().floor()),
                    10f64.powf((hi * 3.0).log10().ceil().max(lo.log10().floor() + 1.0)),
                )
            }
        }
    }
}

fn x_bounds(data: &ChartData) -> (f64, f64) {
    let xs = data
        .series
        .iter()
        .flat_map(|s| s.points.first().into_iter().chain(s.points.last()))
        .map(|p| p.0)
        .filter(|x| x.is_finite());
    let (lo, hi) = xs.fold((f64::MAX, f64::MIN), |(lo, hi), x| (lo.min(x), hi.max(x)));
    if lo > hi {
        (0.0, 1.0)
    } else if (hi - lo).abs() < f64::EPSILON {
        (lo - 0.5, hi + 0.5)
    } else if data.x_fmt == Fmt::Gigabytes {
        (0.0, hi) // position reads from the start of the target
    } else {
        (lo, hi)
    }
}

/// Draws `data` on `root`; returns where the data lies for the hover readout.
pub fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    data: &ChartData,
    dark: bool,
) -> Result<Frame, String> {
    let (lo, hi) = y_bounds(data);
    match data.axis {
        YAxis::Linear => draw_in(root, data, dark, lo..hi, &|y| y),
        // A logarithmic axis: each y drawn as its power of ten on a linear axis whose ticks
        // read `10^y` (plotters' log coordinate is a type of its own: one drawing in the
        // bundle, not two). A y at or below zero, which has no logarithm, sits on the floor.
        YAxis::Log => {
            let floor = lo.log10();
            let decades = move |y: f64| {
                if y > 0.0 {
                    y.log10()
                } else if y.is_nan() {
                    y
                } else {
                    floor
                }
            };
            draw_in(root, data, dark, floor..hi.log10(), &decades)
        }
    }
}

/// Draws `data` with each y as `ty(y)` on a linear y axis over `y` (applied to the points
/// drawn, after downsampling, and to level markers).
fn draw_in<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    data: &ChartData,
    dark: bool,
    y: std::ops::Range<f64>,
    ty: &dyn Fn(f64) -> f64,
) -> Result<Frame, String> {
    let err = |e: &dyn std::fmt::Display| e.to_string();
    let (bg, fg) = if dark {
        (RGBColor(16, 18, 24), RGBColor(220, 220, 220))
    } else {
        (WHITE, RGBColor(30, 30, 30))
    };
    root.fill(&bg).map_err(|e| err(&e))?;
    let width = root.dim_in_pixel().0 as usize;
    let (x0, x1) = x_bounds(data);
    // The kiosk (dark) is read from across a lab: larger type.
    let size = if dark { 20 } else { 14 };
    let text = ("sans-serif", size).into_font().color(&fg);
    let mut chart = ChartBuilder::on(root)
        .margin(10)
        // Room for the last x label, centred on the right edge of the plot.
        .margin_right(if dark { 36 } else { 28 })
        .caption(&data.title, ("sans-serif", size + 2).into_font().color(&fg))
        .x_label_area_size(if dark { 56 } else { 40 })
        .y_label_area_size(if dark { 120 } else { 90 })
        .build_cartesian_2d(x0..x1, y.clone())
        .map_err(|e| err(&e))?;
    let (x_fmt, y_fmt) = (data.x_fmt, data.y_fmt);
    let log = data.axis == YAxis::Log;
    let (x_step, y_step) = {
        let (xr, yr) = (chart.x_range(), chart.y_range());
        (
            nice_step((xr.end - xr.start) / 8.0),
            nice_step((yr.end - yr.start) / 6.0),
        )
    };
    // A log axis spans whole decades: one label per decade (plotters then steps by 1, or 2
    // over many decades), each 10^n, and no light lines between them.
    let (y_labels, y_light) = if log {
        ((y.end - y.start).round() as usize + 1, 0)
    } else {
        (6, 10)
    };
    chart
        .configure_mesh()
        .x_desc(&data.x_desc)
        .y_desc(&data.y_desc)
        .x_labels(8)
        .y_labels(y_labels)
        .y_max_light_lines(y_light)
        .x_label_formatter(&|v| x_fmt.tick(*v, x_step))
        .y_label_formatter(&|v| {
            if log {
                y_fmt.apply(10f64.powi(v.round() as i32))
            } else {
                y_fmt.tick(*v, y_step)
            }
        })
        .axis_style(fg)
        .label_style(text.clone())
        .light_line_style(fg.mix(0.06))
        .bold_line_style(fg.mix(0.18))
        .draw()
        .map_err(|e| err(&e))?;
    let (y_lo, y_hi) = {
        let r = chart.y_range();
        (r.start, r.end)
    };
    draw_markers(&mut chart, &data.markers, (x0, x1), (y_lo, y_hi), ty)?;
    for s in &data.series {
        let (r, g, b) = s.color;
        let color = RGBColor(r, g, b);
        let n: usize = s.segments().map(<[_]>::len).sum();
        // Few points (a zoom into a handful of samples): each one marked, so that a single
        // sample still shows.
        let marks = if n <= SPARSE_POINTS { 3 } else { 0 };
        let mut first = true;
        for seg in s.segments() {
            // Each stretch gets its share of the pixel columns.
            let cols = (width * seg.len() / n.max(1)).max(1);
            let drawn = chart
                .draw_series(
                    LineSeries::new(
                        min_max(seg, cols).into_iter().map(|(x, y)| (x, ty(y))),
                        color.stroke_width(2),
                    )
                    .point_size(marks),
                )
                .map_err(|e| err(&e))?;
            if std::mem::take(&mut first) {
                drawn.label(s.name.as_str()).legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2))
                });
            }
        }
    }
    if !data.series.is_empty() {
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(bg.mix(0.85))
            .border_style(fg.mix(0.4))
            .label_font(text)
            .draw()
            .map_err(|e| err(&e))?;
    }
    let (px, _) = chart.plotting_area().get_pixel_range();
    root.present().map_err(|e| err(&e))?;
    Ok(Frame {
        left: px.start,
        right: px.end,
        x0,
        x1,
    })
}

/// A round tick distance near `raw` (1, 2 or 5 times a power of ten), as the mesh picks.
fn nice_step(raw: f64) -> f64 {
    if raw <= 0.0 || !raw.is_finite() {
        return 1.0;
    }
    let p = 10f64.powf(raw.log10().floor());
    let m = raw / p;
    let k = if m <= 1.0 {
        1.0
    } else if m <= 2.0 {
        2.0
    } else if m <= 5.0 {
        5.0
    } else {
        10.0
    };
    k * p
}

/// The analyses' marks on a chart: bands (a range of x), lines at an x, dashed levels.
fn draw_markers<DB>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    markers: &[Marker],
    x: (f64, f64),
    y: (f64, f64),
    ty: &dyn Fn(f64) -> f64,
) -> Result<(), String>
where
    DB: DrawingBackend,
{
    let err = |e: &dyn std::fmt::Display| e.to_string();
    let marker_color = RGBColor(150, 60, 200);
    for m in markers {
        match m {
            Marker::Band { x0, x1, label } => {
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(*x0, y.0), (*x1, y.1)],
                        marker_color.mix(0.12).filled(),
                    )))
                    .map_err(|e| err(&e))?
                    .label(label.as_str())
                    .legend(move |(x, y)| {
                        Rectangle::new(
                            [(x, y - 5), (x + 16, y + 5)],
                            marker_color.mix(0.3).filled(),
                        )
                    });
            }
            Marker::At { x: at, label } => {
                chart
                    .draw_series(LineSeries::new(
                        [(*at, y.0), (*at, y.1)],
                        marker_color.stroke_width(2),
                    ))
                    .map_err(|e| err(&e))?
                    .label(label.as_str())
                    .legend(move |(x, y)| {
                        PathElement::new(
                            vec![(x + 8, y - 6), (x + 8, y + 6)],
                            marker_color.stroke_width(2),
                        )
                    });
            }
            Marker::Stalls {
                spans,
                ticks,
                label,
            } => {
                let red = RGBColor(210, 40, 40);
                let tick_h = (y.1 - y.0) * 0.06;
                chart
                    .draw_series(
                        spans
                            .iter()
                            .map(|(a, b)| {
                                Rectangle::new([(*a, y.0), (*b, y.1)], red.mix(0.18).filled())
                            })
                            .chain(ticks.iter().map(|t| {
                                Rectangle::new([(*t, y.1 - tick_h), (*t, y.1)], red.stroke_width(2))
                            })),
                    )
                    .map_err(|e| err(&e))?
                    .label(label.as_str())
                    .legend(move |(x, y)| {
                        Rectangle::new([(x, y - 5), (x + 16, y + 5)], red.mix(0.4).filled())
                    });
            }
            Marker::Level { y: level, label } => {
                chart
                    .draw_series(DashedLineSeries::new(
                        [(x.0, ty(*level)), (x.1, ty(*level))],
                        8,
                        5,
                        marker_color.stroke_width(2),
                    ))
                    .map_err(|e| err(&e))?
                    .label(label.as_str())
                    .legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 16, y)], marker_color.stroke_width(2))
                    });
            }
        }
    }
    Ok(())
}

/// The hover readout at data x: for each series, the point nearest to `x` (none in a
/// break), with its unit.
pub fn readout(data: &ChartData, x: f64) -> String {
    let mut parts = vec![data.x_fmt.apply(x)];
    // Counts read with the axis's unit (`MB/s`, `I/O per second`); the others carry theirs.
    let unit = match data.y_fmt {
        Fmt::Count => format!(" {}", data.y_desc),
        _ => String::new(),
    };
    for s in &data.series {
        let i = s.points.partition_point(|p| p.0 < x);
        let near = [i.checked_sub(1), Some(i)]
            .into_iter()
            .flatten()
            .filter_map(|j| s.points.get(j))
            .min_by(|a, b| (a.0 - x).abs().total_cmp(&(b.0 - x).abs()));
        if let Some(p) = near.filter(|p| !p.1.is_nan()) {
            parts.push(format!("{} {}{unit}", s.name, data.y_fmt.apply(p.1)));
        }
    }
    parts.join(" · ")
}

/// Each series' unbroken stretches as JSON (`[{"name":"read","segments":[[x0,x1,n],…]}]`):
/// the canvas carries it so that a test can check from the chart's own data that no line
/// joins samples across a step boundary or a pause.
pub fn segments_json(data: &ChartData) -> String {
    let series: Vec<String> = data
        .series
        .iter()
        .map(|s| {
            let segs: Vec<String> = s
                .segments()
                .map(|g| format!("[{},{},{}]", g[0].0, g[g.len() - 1].0, g.len()))
                .collect();
            format!(
                "{{\"name\":\"{}\",\"segments\":[{}]}}",
                s.name.replace(['"', '\\'], ""),
                segs.join(",")
            )
        })
        .collect();
    format!("[{}]", series.join(","))
}

/// The chart as an SVG document (light colours: a file to keep).
pub fn to_svg(data: &ChartData, size: (u32, u32)) -> Result<String, String> {
    svg(data, size, false).map(|(svg, _)| svg)
}

/// The chart as an SVG document of `size` pixels, and where its data lies in them.
pub fn svg(data: &ChartData, size: (u32, u32), dark: bool) -> Result<(String, Frame), String> {
    let mut svg = String::new();
    let frame = {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        draw(&root, data, dark)?
    };
    Ok((svg, frame))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(axis: YAxis, points: Vec<(f64, f64)>) -> ChartData {
        ChartData {
            title: "Throughput".into(),
            x_desc: "time".into(),
            y_desc: "MB/s".into(),
            axis,
            x_fmt: Fmt::Seconds,
            y_fmt: Fmt::Count,
            series: vec![Series {
                name: "write".into(),
                color: (200, 40, 40),
                points,
            }],
            markers: vec![],
        }
    }

    #[test]
    fn draws_to_svg_with_legend_axes_and_markers() {
        let pts: Vec<(f64, f64)> = (0..1000).map(|i| (i as f64, (i % 50) as f64)).collect();
        let mut d = data(YAxis::Linear, pts);
        d.markers = vec![
            Marker::Level {
                y: 60.0,
                label: "required 60 MB/s".into(),
            },
            Marker::At {
                x: 400.0,
                label: "cache full".into(),
            },
            Marker::Band {
                x0: 600.0,
                x1: 900.0,
                label: "steady state".into(),
            },
        ];
        let svg = to_svg(&d, (640, 240)).expect("svg");
        for want in [
            "<svg",
            "write",
            "MB/s",
            "required 60 MB/s",
            "cache full",
            "steady state",
        ] {
            assert!(svg.contains(want), "{want} missing");
        }
    }

    #[test]
    fn log_axis_spans_whole_decades_and_ignores_zeros() {
        let mut d = data(
            YAxis::Log,
            vec![(1.0, 0.0), (2.0, 50.0), (3.0, 2_000_000.0)],
        );
        assert_eq!(y_bounds(&d), (10.0, 10_000_000.0));
        d.y_fmt = Fmt::Micros;
        let svg = to_svg(&d, (640, 240)).expect("svg");
        assert!(
            svg.contains("\n100 µs\n") && svg.contains("\n10 ms\n"),
            "decade labels: {svg}"
        );
    }

    #[test]
    fn frame_and_readout_find_the_nearest_point() {
        let d = data(YAxis::Linear, vec![(0.0, 10.0), (1.0, 20.0), (2.0, 30.0)]);
        let mut svg = String::new();
        let frame = {
            let root = SVGBackend::with_string(&mut svg, (640, 240)).into_drawing_area();
            draw(&root, &d, false).expect("draw")
        };
        assert!(frame.left > 0 && frame.right > frame.left && frame.right <= 640);
        let mid = f64::from(frame.left + frame.right) / 2.0;
        let x = frame.x_at(mid).expect("inside");
        assert!((x - 1.0).abs() < 0.01, "{x}");
        assert_eq!(frame.x_at(0.0), None);
        assert_eq!(readout(&d, 1.2), "1.2 s · write 20 MB/s");
        // A break has no value to read.
        let gap = data(YAxis::Linear, vec![(0.0, 10.0), (1.0, BREAK), (2.0, 30.0)]);
        assert_eq!(readout(&gap, 1.0), "1 s");
        assert_eq!(gap.series[0].segments().count(), 2);
    }

    #[test]
    fn ticks_carry_as_many_decimals_as_their_spacing_needs() {
        let labels: Vec<String> = [0.15, 0.2, 0.25]
            .iter()
            .map(|v| Fmt::Seconds.tick(*v, 0.05))
            .collect();
        assert_eq!(labels, ["0.15 s", "0.20 s", "0.25 s"]);
        assert_eq!(Fmt::Gigabytes.tick(0.032, 0.008), "32 MB");
        assert_eq!(Fmt::Seconds.tick(40.0, 10.0), "40 s");
        assert_eq!(nice_step(0.06), 0.1);
    }

    #[test]
    fn tick_formats_carry_units() {
        assert_eq!(fmt_seconds(42.0), "42 s");
        assert_eq!(fmt_seconds(86_400.0), "24.0 h");
        assert_eq!(fmt_count(125_000.0), "125k");
        assert_eq!(fmt_us(1500.0), "1.50 ms");
        assert_eq!(fmt_us(10_000.0), "10 ms");
        assert_eq!(fmt_log2_bytes(12.0), "4K");
        assert_eq!(fmt_gb(1.5), "1.50 GB");
    }
}
