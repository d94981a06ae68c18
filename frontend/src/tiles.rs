//! CrystalDiskMark's tiles as a picture (the "copy as image" people paste into forums):
//! drawn with plotters as SVG (painted onto a canvas in the browser), then put on the clipboard
//! as PNG, or saved as a file where the browser does not allow that.

use plotters::coord::Shift;
use plotters::prelude::*;
use shared::steps::GridRow;

const W: u32 = 720;
const ROW: u32 = 96;
const HEAD: u32 = 44;
const LABEL_W: i32 = 200;
const GREEN: RGBColor = RGBColor(46, 125, 50);
const TILE: RGBColor = RGBColor(237, 245, 233);

/// The picture's size for `rows` tests.
pub fn size(rows: usize) -> (u32, u32) {
    (W, HEAD + ROW * rows as u32 + 8)
}

/// Draws the tiles of `rows` (MB/s, best large and mean small) onto `root`.
pub fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    rows: &[GridRow],
    title: &str,
) -> Result<(), String> {
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    root.fill(&WHITE).map_err(err)?;
    let text = |s: &str, x: i32, y: i32, size: u32, color: &RGBColor| {
        Text::new(
            s.to_string(),
            (x, y),
            ("sans-serif", size).into_font().color(color),
        )
    };
    root.draw(&text(title, 10, 10, 20, &BLACK)).map_err(err)?;
    let col_w = (W as i32 - LABEL_W - 30) / 2;
    for (i, head) in ["Read (MB/s)", "Write (MB/s)"].iter().enumerate() {
        let x = LABEL_W + 10 + i as i32 * (col_w + 10);
        root.draw(&text(head, x + 8, 16, 16, &BLACK)).map_err(err)?;
    }
    let value = |v: Option<f64>| v.map_or("–".to_string(), |x| format!("{x:.2}"));
    for (r, g) in rows.iter().enumerate() {
        let y = (HEAD + ROW * r as u32) as i32;
        let h = ROW as i32 - 8;
        root.draw(&Rectangle::new([(4, y), (LABEL_W, y + h)], GREEN.filled()))
            .map_err(err)?;
        root.draw(&text(&g.label, 14, y + h / 2 - 10, 20, &WHITE))
            .map_err(err)?;
        for (i, (best, mean)) in [(g.read_best, g.read_mean), (g.write_best, g.write_mean)]
            .into_iter()
            .enumerate()
        {
            let x = LABEL_W + 10 + i as i32 * (col_w + 10);
            root.draw(&Rectangle::new([(x, y), (x + col_w, y + h)], TILE.filled()))
                .map_err(err)?;
            root.draw(&text(&value(best), x + 12, y + 8, 40, &BLACK))
                .map_err(err)?;
            root.draw(&text(
                &format!("mean {}", value(mean)),
                x + 12,
                y + h - 24,
                15,
                &RGBColor(80, 80, 80),
            ))
            .map_err(err)?;
        }
    }
    root.present().map_err(|e| e.to_string())
}

/// Puts the tiles of run `id` on the clipboard as a PNG, or saves them as a file when the
/// clipboard is refused; says which happened.
pub async fn copy_or_save(id: i64, rows: &[GridRow]) -> String {
    let canvas = match picture(id, rows).await {
        Ok(c) => c,
        Err(e) => return format!("could not draw the picture: {e}"),
    };
    match to_clipboard(&canvas).await {
        Ok(()) => "copied to the clipboard as an image".into(),
        Err(why) => {
            let name = format!("diskscope-cdm-{id}.png");
            let saved = canvas
                .to_data_url_with_type("image/png")
                .map_err(crate::js_error)
                .and_then(|png| crate::session::save_url(&name, &png));
            match saved {
                Ok(()) => format!("saved as {name} (the clipboard is not available: {why})"),
                Err(e) => format!("could not copy ({why}) or save ({e})"),
            }
        }
    }
}

/// The tiles drawn (as SVG) onto a canvas of their own.
async fn picture(id: i64, rows: &[GridRow]) -> Result<web_sys::HtmlCanvasElement, String> {
    use wasm_bindgen::JsCast;
    let doc = web_sys::window()
        .and_then(|w| w.document())
        .ok_or("no document")?;
    let canvas: web_sys::HtmlCanvasElement = doc
        .create_element("canvas")
        .map_err(crate::js_error)?
        .unchecked_into();
    let (w, h) = size(rows.len());
    canvas.set_width(w);
    canvas.set_height(h);
    let mut svg = String::new();
    draw(
        &SVGBackend::with_string(&mut svg, (w, h)).into_drawing_area(),
        rows,
        &format!("diskscope run {id} · CrystalDiskMark-style"),
    )?;
    crate::raster::paint(&canvas, &svg).await?;
    Ok(canvas)
}

/// `navigator.clipboard.write([new ClipboardItem({"image/png": blob})])`.
async fn to_clipboard(canvas: &web_sys::HtmlCanvasElement) -> Result<(), String> {
    use js_sys::{Array, Function, Object, Reflect};
    use wasm_bindgen::JsCast;
    let err = crate::js_error;
    let canvas = canvas.clone();
    let promise = js_sys::Promise::new(&mut |resolve, _reject| {
        let _ = canvas.to_blob(&resolve);
    });
    let blob = wasm_bindgen_futures::JsFuture::from(promise)
        .await
        .map_err(err)?;
    if blob.is_null() {
        return Err("the picture could not be encoded".into());
    }
    let global = js_sys::global();
    let ctor: Function = Reflect::get(&global, &"ClipboardItem".into())
        .map_err(err)?
        .dyn_into()
        .map_err(|_| "this browser has no ClipboardItem".to_string())?;
    let parts = Object::new();
    Reflect::set(&parts, &"image/png".into(), &blob).map_err(err)?;
    let item = Reflect::construct(&ctor, &Array::of1(&parts)).map_err(err)?;
    let navigator = Reflect::get(&global, &"navigator".into()).map_err(err)?;
    let clipboard = Reflect::get(&navigator, &"clipboard".into()).map_err(err)?;
    if clipboard.is_undefined() {
        return Err("no clipboard on this page (not a secure context?)".into());
    }
    let write: Function = Reflect::get(&clipboard, &"write".into())
        .map_err(err)?
        .dyn_into()
        .map_err(|_| "the clipboard cannot write".to_string())?;
    let promise = write.call1(&clipboard, &Array::of1(&item)).map_err(err)?;
    wasm_bindgen_futures::JsFuture::from(js_sys::Promise::from(promise))
        .await
        .map(drop)
        .map_err(err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_picture_has_every_test_and_figure() {
        let rows = vec![
            GridRow {
                label: "SEQ1M Q8T1".into(),
                read_best: Some(3512.25),
                read_mean: Some(3400.0),
                write_best: Some(3001.5),
                write_mean: None,
                read_iops: None,
                write_iops: None,
                passes: 5,
            },
            GridRow {
                label: "RND4K Q1T1".into(),
                read_best: Some(61.2),
                read_mean: Some(60.0),
                write_best: None,
                write_mean: None,
                read_iops: None,
                write_iops: None,
                passes: 5,
            },
        ];
        let mut svg = String::new();
        let (w, h) = size(rows.len());
        {
            let root = SVGBackend::with_string(&mut svg, (w, h)).into_drawing_area();
            draw(&root, &rows, "run 7").expect("draw");
        }
        for want in [
            "SEQ1M Q8T1",
            "3512.25",
            "mean 3400.00",
            "3001.50",
            "RND4K Q1T1",
            "61.20",
            "run 7",
        ] {
            assert!(svg.contains(want), "{want} missing");
        }
    }
}
