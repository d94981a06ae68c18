//! diskscope dashboard (Leptos, client-side rendered, compiled to wasm32).
//!
//! Connects with a token, follows the agent's active run over the WebSocket stream, charts
//! throughput live (plotters SVG painted on a canvas), and lets operators start and stop runs. The kiosk
//! (`/kiosk?token=VIEWER`) shows the same live view, dark and without controls. Pure logic
//! (downsampling, the stream reducer, chart drawing to SVG) is tested natively.

pub mod api;
pub mod app;
pub mod charts;
pub mod compare;
pub mod downsample;
pub mod fleet;
pub mod form;
pub mod format;
pub mod grid;
pub mod json;
pub use shared::headline;
pub mod plot;
pub mod progress;
pub mod raster;
pub mod route;
pub mod scanmap;
pub mod session;
pub mod stream;
pub mod tiles;
pub mod views;

pub use app::App;

/// A JavaScript exception as text: a thrown string, an `Error`'s message, or the value as
/// JSON. (The bundle is built without `Debug` formatting, `-Zfmt-debug=none`: `{:?}` of a
/// `JsValue` would print nothing.)
pub fn js_error(e: wasm_bindgen::JsValue) -> String {
    e.as_string()
        .or_else(|| {
            js_sys::Reflect::get(&e, &"message".into())
                .ok()?
                .as_string()
        })
        .or_else(|| js_sys::JSON::stringify(&e).ok()?.as_string())
        .unwrap_or_else(|| "a JavaScript error with no message".into())
}

/// The chart redraw benchmark (`bench/dashboard.sh`): draws `series` series of `points`
/// points each (a 24-hour run at 1 s intervals is 86,400) on the canvas with id
/// `canvas_id`, `rounds` times, and returns each redraw's milliseconds (SVG drawn, decoded
/// and painted). Built only with the `bench` feature.
#[cfg(all(target_arch = "wasm32", feature = "bench"))]
#[wasm_bindgen::prelude::wasm_bindgen]
pub async fn bench_chart(
    canvas_id: String,
    points: u32,
    series: u32,
    rounds: u32,
) -> js_sys::Float64Array {
    use wasm_bindgen::JsCast;
    let window = web_sys::window();
    let canvas = window
        .as_ref()
        .and_then(|w| w.document())
        .and_then(|d| d.get_element_by_id(&canvas_id))
        .and_then(|e| e.dyn_into::<web_sys::HtmlCanvasElement>().ok());
    let (Some(canvas), Some(perf)) = (canvas, window.and_then(|w| w.performance())) else {
        return js_sys::Float64Array::new_with_length(0);
    };
    let data = charts::synthetic(points, series);
    let size = (canvas.width(), canvas.height());
    let mut ms = Vec::with_capacity(rounds as usize);
    for _ in 0..rounds {
        let t0 = perf.now();
        if let Ok((svg, _)) = plot::svg(&data, size, false) {
            let _ = raster::paint(&canvas, &svg).await;
        }
        ms.push(perf.now() - t0);
    }
    js_sys::Float64Array::from(&ms[..])
}

/// Entry point of the wasm module.
#[cfg(target_arch = "wasm32")]
#[wasm_bindgen::prelude::wasm_bindgen(start)]
pub fn start() {
    // A bug must not leave a blank page: the bundle aborts on a panic (built with
    // `-Cpanic=immediate-abort`, no panic hook runs), which reaches the page as a
    // `WebAssembly.RuntimeError`; `static/boot.js` turns that into the banner saying so.
    leptos::mount::mount_to_body(App);
}
