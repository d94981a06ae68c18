//! The browser tests' common ground: whether headless Chromium, playwright-core and the
//! built dashboard are here (or why not, for the SKIP line), a folder for screenshots that
//! outlives the test, and one `node tests/e2e/SCRIPT` run with its output.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// What a browser test needs, found.
#[derive(Debug)]
pub struct Browser {
    chromium: String,
    e2e: PathBuf,
}

impl Browser {
    /// The browser, or why a browser test cannot run here.
    pub fn probe() -> Result<Browser, String> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        if !root.join("static/pkg/frontend_bg.wasm").exists() {
            return Err("the dashboard is not built (run scripts/build-frontend.sh)".into());
        }
        let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
        if !Path::new(&chromium).exists() {
            return Err(format!(
                "no Chromium at {chromium} (apt-get install chromium)"
            ));
        }
        let e2e = root.join("tests/e2e");
        if !e2e.join("node_modules/playwright-core").exists() {
            return Err("playwright-core is not installed (cd tests/e2e && npm ci)".into());
        }
        Ok(Browser { chromium, e2e })
    }

    /// A folder for screenshots, kept after the test (its path is printed).
    pub fn shots(prefix: &str) -> PathBuf {
        tempfile::Builder::new()
            .prefix(prefix)
            .tempdir()
            .expect("a folder for screenshots")
            .keep()
    }

    /// Runs `tests/e2e/SCRIPT args...` with `env`; whether it passed, and all it printed
    /// (also echoed to stderr, so the log has it).
    pub fn run<S: AsRef<OsStr>>(
        &self,
        script: &str,
        args: &[S],
        env: &[(&str, &str)],
    ) -> (bool, String) {
        let out = std::process::Command::new("node")
            .arg(self.e2e.join(script))
            .args(args)
            .env("CHROMIUM", &self.chromium)
            .envs(env.iter().copied())
            .output()
            .expect("run node");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        eprintln!("{text}");
        (out.status.success(), text)
    }

    /// Runs `tests/e2e/SCRIPT BASE_URL OPERATOR_TOKEN VIEWER_TOKEN SHOT_DIR` against
    /// `server` (the arguments every single-agent browser script takes).
    pub fn run_on(
        &self,
        script: &str,
        server: &crate::server::Server,
        shots: &std::path::Path,
    ) -> (bool, String) {
        self.run_on_with(script, server, shots, &[])
    }

    /// Like [`Browser::run_on`], with `more` arguments after the four (e.g. a folder the
    /// server may run on).
    pub fn run_on_with(
        &self,
        script: &str,
        server: &crate::server::Server,
        shots: &std::path::Path,
        more: &[&std::path::Path],
    ) -> (bool, String) {
        let mut args = vec![
            format!("http://{}", server.addr),
            crate::server::OP.to_string(),
            crate::server::VIEW.to_string(),
            shots.display().to_string(),
        ];
        args.extend(more.iter().map(|p| p.display().to_string()));
        self.run(script, &args, &[])
    }
}
