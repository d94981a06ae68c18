//! Every view and every preset's result in headless Chromium, at 1920x1080 and 390x844 (the
//! kiosk also at 4K), against a fresh `diskscope serve`: empty states, each preset's
//! headline first, no horizontal scrolling, every view's own address after a reload, the
//! kiosk's labels and large figure, the dark theme, copy as image. Browser steps in
//! `tests/e2e/views.mjs`; the screenshots stay in the printed folder as the test's artefacts.

use std::path::Path;
use tests::server::{Server, OP, VIEW};
use tests::*;

#[test]
fn every_view_and_preset_result_on_a_wall_screen_and_a_phone() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    if !root.join("static/pkg/frontend_bg.wasm").exists() {
        skip!("the dashboard is not built (run scripts/build-frontend.sh)");
    }
    let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    if !Path::new(&chromium).exists() {
        skip!("no Chromium at {chromium} (apt-get install chromium)");
    }
    let e2e = root.join("tests/e2e");
    if !e2e.join("node_modules/playwright-core").exists() {
        skip!("playwright-core is not installed (cd tests/e2e && npm ci)");
    }
    require_io_uring!();
    let data = disk_tempdir();
    let server = Server::start(data.path(), &[]);
    let shots = tempfile::Builder::new()
        .prefix("diskscope-views-")
        .tempdir()
        .expect("shots dir")
        .keep();
    let out = std::process::Command::new("node")
        .arg(e2e.join("views.mjs"))
        .arg(format!("http://{}", server.addr))
        .args([OP, VIEW])
        .arg(&shots)
        .env("CHROMIUM", &chromium)
        .output()
        .expect("run node");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!("{text}");
    assert!(
        out.status.success(),
        "views browser test failed (screenshots in {}): {text}",
        shots.display()
    );
    for name in [
        "result-cdm-1920x1080",
        "result-atto-390x844",
        "kiosk-running-1920x1080",
    ] {
        assert!(shots.join(format!("{name}.png")).exists(), "{name}.png");
    }
}
