//! Rebuild the agent when the dashboard's files change: they are embedded from `static/`.
fn main() {
    println!("cargo:rerun-if-changed=../static");
}
