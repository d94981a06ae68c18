//! One chart component's drawing: line series over time on a plotters backend (the canvas
//! in the browser; the same code can draw SVG or PNG), min/max downsampled to the width.

use crate::downsample::min_max;
use plotters::coord::Shift;
use plotters::prelude::*;

pub struct Series<'a> {
    pub name: &'a str,
    pub color: RGBColor,
    pub points: Vec<(f64, f64)>,
}

/// Draws `series` (x in seconds) with a y axis titled `y_desc`.
pub fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    y_desc: &str,
    series: &[Series<'_>],
    dark: bool,
) -> Result<(), String> {
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
    let y_max = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .fold(1.0f64, f64::max)
        * 1.1;
    let text = ("sans-serif", 14).into_font().color(&fg);
    let mut chart = ChartBuilder::on(root)
        .margin(10)
        .caption(title, ("sans-serif", 16).into_font().color(&fg))
        .x_label_area_size(30)
        .y_label_area_size(72)
        .build_cartesian_2d(0f64..x_max, 0f64..y_max)
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .x_desc("time (s)")
        .y_desc(y_desc)
        .axis_style(fg)
        .label_style(text.clone())
        .light_line_style(fg.mix(0.08))
        .bold_line_style(fg.mix(0.2))
        .draw()
        .map_err(|e| e.to_string())?;
    for s in series {
        let color = s.color;
        chart
            .draw_series(LineSeries::new(
                min_max(&s.points, width),
                color.stroke_width(2),
            ))
            .map_err(|e| e.to_string())?
            .label(s.name)
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
                    name: "write",
                    color: RED,
                    points: pts,
                }],
                false,
            )
            .expect("draw");
        }
        assert!(svg.contains("<svg") && svg.contains("write") && svg.contains("MB/s"));
    }
}
