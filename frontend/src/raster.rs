//! SVG onto a canvas. Every picture is drawn once, with plotters' SVG backend; a canvas on
//! the page shows it as pixels (for the PNG download, the clipboard and tests that find
//! charts by their canvas). One drawing backend in the bundle instead of two: plotters'
//! generic drawing code is instantiated per backend.

use wasm_bindgen::JsCast;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement, HtmlImageElement};

/// The attribute that numbers a canvas's paints, so that an older paint whose image decoded
/// late never covers a newer one.
const GENERATION: &str = "data-paint";

/// Paints `svg` onto `canvas`, replacing what it showed, once the browser has decoded it;
/// a paint begun later wins over this one.
pub async fn paint(canvas: &HtmlCanvasElement, svg: &str) -> Result<(), String> {
    let generation = canvas
        .get_attribute(GENERATION)
        .and_then(|g| g.parse::<u64>().ok())
        .unwrap_or(0)
        + 1;
    let mine = generation.to_string();
    canvas
        .set_attribute(GENERATION, &mine)
        .map_err(crate::js_error)?;
    let img = HtmlImageElement::new().map_err(crate::js_error)?;
    let url = format!(
        "data:image/svg+xml;charset=utf-8,{}",
        js_sys::encode_uri_component(svg)
    );
    img.set_src(&url);
    wasm_bindgen_futures::JsFuture::from(img.decode())
        .await
        .map_err(crate::js_error)?;
    if canvas.get_attribute(GENERATION).as_deref() != Some(mine.as_str()) {
        return Ok(());
    }
    let ctx: CanvasRenderingContext2d = canvas
        .get_context("2d")
        .map_err(crate::js_error)?
        .ok_or("no 2D context")?
        .dyn_into()
        .map_err(|_| "no 2D context".to_string())?;
    let (w, h) = (f64::from(canvas.width()), f64::from(canvas.height()));
    ctx.clear_rect(0.0, 0.0, w, h);
    ctx.draw_image_with_html_image_element_and_dw_and_dh(&img, 0.0, 0.0, w, h)
        .map_err(crate::js_error)
}
