//! The fleet view and the kiosk wall in headless Chromium with three real agents on their own
//! ports: the hub serves the page, the two others let its origin in (`--cors-origin`), a
//! fourth does not. Adding agents (a wrong token and a closed agent refused by name), their
//! status, targets and drive temperature (an emulated SSD on the third), the same preset
//! started on all three at once, the wall of their live runs, removal kept across reloads.
//! Browser steps in `tests/e2e/fleet.mjs`; screenshots in the printed folder.

use std::path::Path;
use tests::server::{Server, OP, VIEW};
use tests::*;

#[test]
fn three_agents_in_the_fleet_view_and_the_kiosk_wall() {
    let browser = match tests::browser::Browser::probe() {
        Ok(b) => b,
        Err(why) => skip!(Missing::Browser, "{why}"),
    };
    require_io_uring!();
    let dirs: Vec<tempfile::TempDir> = (0..4).map(|_| ram_tempdir()).collect();
    let hub = Server::start(dirs[0].path(), &[]);
    let hub_url = format!("http://{}", hub.addr);
    let b = Server::start_args(dirs[1].path(), &[], &["--cors-origin", &hub_url]);
    // The third agent also offers an emulated SSD, whose temperature its card shows.
    let emu = Emulator::start_or_skip(
        r#"{"capacity": 67108864, "ambient_c": 44}"#,
        "fleet drive temperature (emulated SSD)",
    );
    let disks: Vec<std::path::PathBuf> = emu.iter().map(|e| e.disk()).collect();
    let allow: Vec<&Path> = disks.iter().map(|d| d.as_path()).collect();
    let c = Server::start_args(dirs[2].path(), &allow, &["--cors-origin", &hub_url]);
    let closed = Server::start(dirs[3].path(), &[]);
    let shots = tests::browser::Browser::shots("diskscope-fleet-");
    let args = [
        shots.display().to_string(),
        OP.to_string(),
        VIEW.to_string(),
        hub_url.clone(),
        format!("http://{}", b.addr),
        format!("http://{}", c.addr),
        format!("http://{}", closed.addr),
    ];
    let env: &[(&str, &str)] = if emu.is_some() {
        &[("EXPECT_TEMPERATURE", "1")]
    } else {
        &[]
    };
    let (passed, text) = browser.run("fleet.mjs", &args, env);
    assert!(
        passed,
        "fleet browser test failed (screenshots in {}): {text}",
        shots.display()
    );
    // Each agent ran the preset the fleet page started, as its own history says.
    for (name, s) in [("hub", &hub), ("b", &b), ("c", &c)] {
        let (_, list) = s.get("/api/v1/runs?preset=quick", VIEW);
        assert!(
            list["total"].as_u64().unwrap_or(0) >= 1,
            "agent {name} ran no quick preset: {list}"
        );
    }
    let (_, list) = closed.get("/api/v1/runs", VIEW);
    assert_eq!(list["total"], 0, "the closed agent ran something: {list}");
    eprintln!("screenshots: {}", shots.display());
    assert!(shots.join("fleet.png").exists() && shots.join("kiosk-wall.png").exists());
}
