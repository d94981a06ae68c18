//! The chart component: a canvas drawn by plotters from a [`ChartData`] signal, a hover
//! readout (nearest value of each series under the pointer), and PNG/SVG saving.

use crate::chart::{ChartData, Frame};
use leptos::html::Canvas;
use leptos::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};

const SIZE: (u32, u32) = (960, 300);
static FIRST_DRAWN: AtomicBool = AtomicBool::new(false);

/// Draws `data` on `el`; returns where the data lies.
pub fn draw_on(el: &web_sys::HtmlCanvasElement, data: &ChartData, dark: bool) -> Option<Frame> {
    use plotters::prelude::IntoDrawingArea;
    let backend = plotters_canvas::CanvasBackend::with_canvas_object(el.clone())?;
    let root = backend.into_drawing_area();
    crate::chart::draw(&root, data, dark).ok()
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
) -> impl IntoView {
    let canvas = NodeRef::<Canvas>::new();
    let frame = StoredValue::new(None::<Frame>);
    let hover = RwSignal::new(None::<String>);
    Effect::new(move |_| {
        let Some(el) = canvas.get() else { return };
        data.with(|d| {
            frame.set_value(draw_on(&el, d, dark));
            if !d.series.iter().all(|s| s.points.is_empty())
                && !FIRST_DRAWN.swap(true, Ordering::Relaxed)
            {
                if let Some(p) = web_sys::window().and_then(|w| w.performance()) {
                    let _ = p.mark("diskscope-first-chart");
                }
            }
        });
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
            .map(|x| data.with_untracked(|d| crate::chart::readout(d, x)));
        hover.set(text);
    };
    let file = {
        let id = id.clone();
        move |ext: &str| format!("diskscope-{id}.{ext}")
    };
    let file2 = file.clone();
    let save_png = move |_| {
        let Some(el) = canvas.get_untracked() else {
            return;
        };
        let r = el
            .to_data_url_with_type("image/png")
            .map_err(|e| format!("{e:?}"))
            .and_then(|url| crate::session::save_url(&file("png"), &url));
        super::ctx().report(r);
    };
    let save_svg = move |_| {
        let r = data
            .with_untracked(|d| crate::chart::to_svg(d, SIZE))
            .and_then(|svg| crate::session::save_file(&file2("svg"), "image/svg+xml", &svg));
        super::ctx().report(r);
    };
    view! {
        <figure class="chart">
            <canvas node_ref=canvas id=id width=SIZE.0 height=SIZE.1
                on:mousemove=on_move on:mouseleave=move |_| hover.set(None)
                role="img" aria-label=move || data.with(|d| d.title.clone())></canvas>
            <figcaption>
                <span class="readout" aria-live="polite">{move || hover.get().unwrap_or_default()}</span>
                {(!bare).then(|| view! {
                    <button class="save-png" on:click=save_png>"PNG"</button>
                    <button class="save-svg" on:click=save_svg>"SVG"</button>
                })}
            </figcaption>
        </figure>
    }
}
