//! The `diskscope` executable itself: it starts, names its version and lists its commands.
//! (Having an integration test also makes `cargo test` build the executable, which the
//! workspace's integration suite in `tests/` drives.)

use std::process::Command;

#[test]
fn the_binary_names_its_version_and_commands() {
    let bin = env!("CARGO_BIN_EXE_diskscope");
    let out = Command::new(bin)
        .arg("--version")
        .output()
        .expect("run diskscope");
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(env!("CARGO_PKG_VERSION")),
        "--version printed {text:?}"
    );
    let out = Command::new(bin)
        .arg("--help")
        .output()
        .expect("run diskscope");
    let help = String::from_utf8_lossy(&out.stdout);
    for cmd in ["run", "serve", "quick", "emulate", "runs", "compare"] {
        assert!(help.contains(cmd), "--help lacks '{cmd}':\n{help}");
    }
}
