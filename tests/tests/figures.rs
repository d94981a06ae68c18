//! Every figure the dashboard shows is the stored result (`tests/e2e/figures.mjs`): a
//! single workload, a read/write mix and the presets, read at 1920x1080 and 390x844 on
//! results, history, compare, the kiosk and the live view's end against the API's report;
//! headers over their cells; chart lines that never join two steps or run through a pause;
//! cdm's progress at 40 % of its planned time; sustain from the New-test form stored as
//! preset `sustain`.

use tests::server::{Server, OP, VIEW};
use tests::*;

#[test]
fn every_figure_shown_is_the_stored_result() {
    let browser = match tests::browser::Browser::probe() {
        Ok(b) => b,
        Err(why) => skip!("{why}"),
    };
    require_io_uring!();
    let data = disk_tempdir();
    let server = Server::start(data.path(), &[]);
    let shots = tests::browser::Browser::shots("diskscope-figures-");
    let args = [
        format!("http://{}", server.addr),
        OP.to_string(),
        VIEW.to_string(),
        shots.display().to_string(),
    ];
    let (passed, text) = browser.run("figures.mjs", &args, &[]);
    assert!(
        passed,
        "figures browser test failed (screenshots in {}): {text}",
        shots.display()
    );
    assert!(
        shots.join("live-end-sustain.png").exists(),
        "live-end-sustain.png"
    );
}
