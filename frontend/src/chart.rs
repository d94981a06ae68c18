//! One chart component's drawing: line series over time on a plotters backend (the canvas
//! in the browser; the same code can draw SVG or PNG), min/max downsampled to the width.

use crate::downsample::min_max;
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::Shift;
use plotters::prelude::*;

pub struct Series<'a> {
    pub name: std::borrow::Cow<'a, str>,
    pub color: RGBColor,
    pub points: Vec<(f64, f64)>,
}

/// Vertical axis of a chart.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum YAxis {
    Linear,
    /// Log scale (latency spans decades: 50 µs reads next to a 2 s stall).
    Log,
}

fn y_bounds(series: &[Series<'_>], axis: YAxis) -> (f64, f64) {
    let values = series.iter().flat_map(|s| s.points.iter().map(|p| p.1));
    match axis {
        YAxis::Linear => (0.0, values.fold(1.0f64, f64::max) * 1.1),
        YAxis::Log => {
            let (lo, hi) = values
                .filter(|v| *v > 0.0)
                .fold((f64::MAX, 0.0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
            if hi <= 0.0 {
                (1.0, 10.0)
            } else {
                (lo / 2.0, hi * 2.0)
            }
        }
    }
}

/// Draws `series` (x in seconds) with a y axis titled `y_desc`.
pub fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    y_desc: &str,
    series: &[Series<'_>],
    axis: YAxis,
    dark: bool,
) -> Result<(), String> {
    let (lo, hi) = y_bounds(series, axis);
    match axis {
        YAxis::Linear => draw_in(root, title, y_desc, series, dark, lo..hi),
        YAxis::Log => draw_in(root, title, y_desc, series, dark, (lo..hi).log_scale()),
    }
}

fn draw_in<DB, Y>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    y_desc: &str,
    series: &[Series<'_>],
    dark: bool,
    y: Y,
) -> Result<(), String>
where
    DB: DrawingBackend,
    Y: AsRangedCoord<Value = f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let (bg, fg) = if dark {
        (RGBColor(16, 18, 24), RGBColor(220, 220, 220))
    } else {
        (WHITE, BLACK)
    };
    root.fill(&bg).map_err(|e| e.to_string())?;
    let width = root.dim_in_pixel().0 as usize;
    let x_max = series
        .iter()
        .flat_map(|s| s.points.last().map(|p| p.0))
        .fold(1.0f64, f64::max);
    let text = ("sans-serif", 14).into_font().color(&fg);
    let mut chart = ChartBuilder::on(root)
        .margin(10)
        .caption(title, ("sans-serif", 16).into_font().color(&fg))
        .x_label_area_size(40)
        .y_label_area_size(72)
        .build_cartesian_2d(0f64..x_max, y)
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .x_desc("time (s)")
        .y_desc(y_desc)
        .y_labels(6)
        .axis_style(fg)
        .label_style(text.clone())
        .light_line_style(fg.mix(0.08))
        .bold_line_style(fg.mix(0.2))
        .draw()
        .map_err(|e| e.to_string())?;
    for s in series {
        let color = s.color;
        let points = min_max(&s.points, width);
        chart
            .draw_series(LineSeries::new(points, color.stroke_width(2)))
            .map_err(|e| e.to_string())?
            .label(s.name.as_ref())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2))
            });
    }
    chart
        .configure_series_labels()
        .background_style(bg.mix(0.8))
        .border_style(fg)
        .label_font(text)
        .draw()
        .map_err(|e| e.to_string())?;
    root.present().map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_to_svg_with_legend_and_axes() {
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, (640, 240)).into_drawing_area();
            let pts: Vec<(f64, f64)> = (0..1000).map(|i| (i as f64, (i % 50) as f64)).collect();
            draw(
                &root,
                "Throughput",
                "MB/s",
                &[Series {
                    name: "write".into(),
                    color: RED,
                    points: pts,
                }],
                YAxis::Linear,
                false,
            )
            .expect("draw");
        }
        assert!(svg.contains("<svg") && svg.contains("write") && svg.contains("MB/s"));
    }

    #[test]
    fn log_axis_spans_the_values_and_ignores_zeros() {
        let pts = vec![(1.0, 0.0), (2.0, 50.0), (3.0, 2_000_000.0)];
        let series = [Series {
            name: "p99".into(),
            color: RED,
            points: pts,
        }];
        let (lo, hi) = y_bounds(&series, YAxis::Log);
        assert!(lo > 0.0 && lo <= 50.0 && hi >= 2_000_000.0);
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, (640, 240)).into_drawing_area();
            draw(&root, "Latency", "µs", &series, YAxis::Log, true).expect("draw log");
        }
        assert!(svg.contains("Latency"));
    }
}
