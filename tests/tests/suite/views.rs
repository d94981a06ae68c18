//! Every view and every preset's result in headless Chromium, at 1920x1080 and 390x844 (the
//! kiosk also at 4K), against a fresh `diskscope serve`: empty states, each preset's
//! headline first, no horizontal scrolling, every view's own address after a reload, the
//! kiosk's labels and large figure, the dark theme, copy as image. Browser steps in
//! `tests/e2e/views.mjs`; the screenshots stay in the printed folder as the test's artefacts.

use tests::server::Server;
use tests::*;

#[test]
fn every_view_and_preset_result_on_a_wall_screen_and_a_phone() {
    let browser = match tests::browser::Browser::probe() {
        Ok(b) => b,
        Err(why) => skip!(Missing::Browser, "{why}"),
    };
    require_io_uring!();
    let data = ram_tempdir();
    // The presets run at once, each on its own file here.
    let work = ram_tempdir();
    let server = Server::start(data.path(), &[work.path()]);
    let shots = tests::browser::Browser::shots("diskscope-views-");
    let (passed, text) = browser.run_on_with("views.mjs", &server, &shots, &[work.path()]);
    assert!(
        passed,
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
