//! The chart component: a canvas showing the chart plotters draws from a [`ChartData`] signal, a hover
//! readout (nearest value of each series under the pointer), drag-to-select an x range (the
//! results page zooms with it), and PNG/SVG saving.

use crate::plot::{ChartData, Frame};
use leptos::html::Canvas;
use leptos::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};

const SIZE: (u32, u32) = (960, 300);
static FIRST_DRAWN: AtomicBool = AtomicBool::new(false);

/// Draws `data` on `el` (the pixels land once the browser has decoded the picture, see
/// [`crate::raster`]); returns where the data lies.
pub fn draw_on(el: &web_sys::HtmlCanvasElement, data: &ChartData, dark: bool) -> Option<Frame> {
    let (svg, frame) = crate::plot::svg(data, (el.width(), el.height()), dark).ok()?;
    let first = !data.series.iter().all(|s| s.points.is_empty());
    let el = el.clone();
    leptos::task::spawn_local(async move {
        match crate::raster::paint(&el, &svg).await {
            Err(e) => web_sys::console::error_1(&format!("chart: {e}").into()),
            Ok(()) if first && !FIRST_DRAWN.swap(true, Ordering::Relaxed) => {
                if let Some(p) = web_sys::window().and_then(|w| w.performance()) {
                    let _ = p.mark("diskscope-first-chart");
                }
            }
            Ok(()) => {}
        }
    });
    Some(frame)
}

/// The canvas's pixels: fewer on a phone, so that its labels are not scaled down to specks.
fn default_size() -> (u32, u32) {
    let narrow = web_sys::window()
        .and_then(|w| w.inner_width().ok()?.as_f64())
        .is_some_and(|px| px < 700.0);
    if narrow {
        (600, 340)
    } else {
        SIZE
    }
}

#[component]
pub fn ChartView(
    /// DOM id of the canvas (tests and the benchmark find charts by it).
    id: String,
    data: Signal<ChartData>,
    #[prop(optional)] dark: bool,
    /// Hide the save buttons (kiosk).
    #[prop(optional)]
    bare: bool,
    /// Dragging across the plot selects the x range `(from, to)` (a zoom).
    #[prop(optional)]
    on_range: Option<Callback<(f64, f64)>>,
    /// The canvas's pixels (default 960 × 300, 600 × 340 on a phone); the kiosk's differ.
    #[prop(optional_no_strip)]
    size: Option<(u32, u32)>,
) -> impl IntoView {
    let (w, h) = size.unwrap_or_else(default_size);
    let dark = dark || crate::session::prefers_dark();
    let canvas = NodeRef::<Canvas>::new();
    let frame = StoredValue::new(None::<Frame>);
    let hover = RwSignal::new(None::<String>);
    // A drag in progress: where it started and where the pointer is (CSS px in the canvas).
    let drag = RwSignal::new(None::<(f64, f64)>);
    Effect::new(move |_| {
        let Some(el) = canvas.get() else { return };
        data.with(|d| frame.set_value(draw_on(&el, d, dark)));
    });
    let on_move = move |ev: leptos::ev::MouseEvent| {
        let Some(el) = canvas.get_untracked() else {
            return;
        };
        let scale = f64::from(el.width()) / f64::from(el.client_width().max(1));
        let px = f64::from(ev.offset_x()) * scale;
        let text = frame
            .get_value()
            .and_then(|f| f.x_at(px))
            .map(|x| data.with_untracked(|d| crate::plot::readout(d, x)));
        hover.set(text);
        if drag.with_untracked(Option::is_some) {
            drag.update(|d| {
                if let Some((_, to)) = d {
                    *to = f64::from(ev.offset_x());
                }
            });
        }
    };
    let on_down = move |ev: leptos::ev::MouseEvent| {
        if on_range.is_some() && ev.button() == 0 {
            ev.prevent_default();
            let x = f64::from(ev.offset_x());
            drag.set(Some((x, x)));
        }
    };
    let on_up = move |_: leptos::ev::MouseEvent| {
        let (Some((a, b)), Some(cb), Some(el)) =
            (drag.get_untracked(), on_range, canvas.get_untracked())
        else {
            drag.set(None);
            return;
        };
        drag.set(None);
        let scale = f64::from(el.width()) / f64::from(el.client_width().max(1));
        // A click (or a twitch) is not a range.
        if (b - a).abs() < 4.0 {
            return;
        }
        let range = frame
            .get_value()
            .map(|f| (f.x_clamped(a.min(b) * scale), f.x_clamped(a.max(b) * scale)));
        if let Some((from, to)) = range.filter(|(from, to)| to > from) {
            cb.run((from, to));
        }
    };
    let selection =
        move || {
            drag.get().filter(|(a, b)| (b - a).abs() >= 1.0).map(|(a, b)| {
            view! {
                <div class="drag-range" aria-hidden="true"
                    style=format!("left:{:.0}px;width:{:.0}px", a.min(b), (b - a).abs())></div>
            }
        })
        };
    let save_id = id.clone();
    view! {
        <figure class="chart" class:zoomable=on_range.is_some()>
            <div class="plot">
                <canvas node_ref=canvas id=id width=w height=h
                    on:mousemove=on_move on:mousedown=on_down on:mouseup=on_up
                    on:mouseleave=move |_| { hover.set(None); drag.set(None) }
                    role="img" aria-label=move || data.with(|d| d.title.clone())
                    data-segments=move || data.with(crate::plot::segments_json)></canvas>
                {selection}
            </div>
            <figcaption>
                <span class="readout" aria-live="polite">{move || hover.get().unwrap_or_default()}</span>
                {(!bare).then(|| view! { <SaveButtons id=save_id canvas data/> })}
            </figcaption>
        </figure>
    }
}

/// Saves the chart as PNG (the canvas as drawn) or SVG (drawn again as vectors).
#[component]
fn SaveButtons(id: String, canvas: NodeRef<Canvas>, data: Signal<ChartData>) -> impl IntoView {
    let file = move |ext: &str| format!("diskscope-{id}.{ext}");
    let file2 = file.clone();
    let save_png = move |_| {
        let Some(el) = canvas.get_untracked() else {
            return;
        };
        let r = el
            .to_data_url_with_type("image/png")
            .map_err(crate::js_error)
            .and_then(|url| crate::session::save_url(&file("png"), &url));
        super::ctx().report(r);
    };
    let save_svg = move |_| {
        let r = data
            .with_untracked(|d| crate::plot::to_svg(d, SIZE))
            .and_then(|svg| crate::session::save_file(&file2("svg"), "image/svg+xml", &svg));
        super::ctx().report(r);
    };
    view! {
        <button class="save-png" on:click=save_png>"PNG"</button>
        <button class="save-svg" on:click=save_svg>"SVG"</button>
    }
}
