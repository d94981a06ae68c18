//! The panels that say whether a run's data and numbers can be trusted: the fake-capacity
//! verdict, the read-back of verified writes, the error scan's map by position, and the
//! spread of a repeated run's passes.

use leptos::prelude::*;
use shared::analysis::scan::ScanMap;
use shared::analysis::verify::FakeCap;
use shared::analysis::Verdict;
use shared::api::RunInfo;
use shared::units::format_bytes;

/// Every trust panel the run has, in reading order: capacity, read-back, error maps.
pub fn panels(r: Option<RunInfo>) -> Option<impl IntoView> {
    let r = r?;
    let fakecap = r
        .analysis
        .as_ref()
        .and_then(|a| a.fakecap.clone())
        .map(|f| view! { <FakeCapView f/> });
    let steps: Vec<String> = r.steps.iter().map(|s| s.name.clone()).collect();
    let maps = r
        .analysis
        .as_ref()
        .map(|a| a.scan.clone())
        .unwrap_or_default()
        .into_iter()
        .map(|m| {
            let name = m.step.and_then(|i| steps.get(i as usize).cloned());
            view! { <ScanMapView m name/> }
        })
        .collect_view();
    let repeat = r
        .analysis
        .as_ref()
        .and_then(|a| a.repeat.clone())
        .map(|r| view! { <RepeatView r/> });
    Some(view! { {repeat} {fakecap} {verify_panel(&r)} {maps} })
}

/// An error scan's map: a grid of cells by position (HD Tune), coloured by time per I/O,
/// errors red; the scale, and the unreadable and slow regions in a table.
#[component]
fn ScanMapView(m: ScanMap, name: Option<String>) -> impl IntoView {
    use crate::scanmap::{colour, look, scale};
    use shared::analysis::scan::RegionKind;
    let sc = scale(&m);
    let cols = m.cells.len().clamp(1, 64);
    let grid_style = format!("grid-template-columns: repeat({cols}, 1fr)");
    let cells = (0..m.cells.len())
        .map(|i| {
            let l = look(&m, i, sc);
            view! { <div class=l.class style=format!("background: {}", l.colour) title=l.title></div> }
        })
        .collect_view();
    let regions = m.regions();
    let failed = m.error_ios() > 0;
    let (word, class) = if failed {
        ("ERRORS", "scan verify fail")
    } else if regions.is_empty() {
        ("OK", "scan verify pass")
    } else {
        ("SLOW REGIONS", "scan verify")
    };
    let rows = regions
        .iter()
        .map(|r| {
            let kind = match r.kind {
                RegionKind::Unreadable => "unreadable",
                RegionKind::Slow => "slow",
            };
            view! {
                <tr class=format!("region-{kind}")>
                    <td>{kind}</td><td>{r.start}</td><td>{r.start + r.len}</td>
                    <td>{format_bytes(r.len)}</td><td>{r.ios}</td>
                </tr>
            }
        })
        .collect_view();
    let listed = !regions.is_empty();
    let title = match name {
        Some(n) => format!("Error scan, {n}: "),
        None => format!("Error scan ({}): ", m.dir),
    };
    let legend = format!(
        "background: linear-gradient(to right, {}, {}, {})",
        colour(sc.0, sc.0, sc.1),
        colour((sc.0 * sc.1).sqrt(), sc.0, sc.1),
        colour(sc.1, sc.0, sc.1)
    );
    view! {
        <section class=class data-dir=m.dir.clone()>
            <h3>{title} <span class="verdict">{word}</span></h3>
            <p>{m.summary_line()}</p>
            <div class="scan-grid" style=grid_style>{cells}</div>
            <div class="scan-legend">
                <span>{format!("{:.2} ms", sc.0 / 1e3)}</span>
                <span class="scale" style=legend></span>
                <span>{format!("{} ms per I/O", m.slow_ms)}</span>
                <span class="cell slow"></span><span>"slow"</span>
                <span class="cell error"></span><span>"failed"</span>
                <span class="cell unscanned"></span><span>"not scanned"</span>
            </div>
            {listed.then(|| view! {
                <table class="scan-regions">
                    <thead><tr><th>"region"</th><th>"from (bytes)"</th><th>"to"</th><th>"size"</th><th>"I/Os"</th></tr></thead>
                    <tbody>{rows}</tbody>
                </table>
            })}
        </section>
    }
}

/// The fakecap verdict: GENUINE / FAKE in large type, a bar of the claimed span with the
/// part that holds data, and the figures behind it.
#[component]
fn FakeCapView(f: FakeCap) -> impl IntoView {
    let (word, class) = match f.verdict {
        Verdict::NotFound => ("GENUINE", "fakecap verify pass"),
        Verdict::Found => ("FAKE", "fakecap verify fail"),
        Verdict::NotEnoughData => ("UNKNOWN", "fakecap verify"),
    };
    let share = |b: u64| 100.0 * b as f64 / f.span_bytes.max(1) as f64;
    let usable_w = format!("width: {:.2}%", share(f.usable_bytes));
    let offset =
        |o: Option<u64>| o.map_or("-".to_string(), |o| format!("{} ({o})", format_bytes(o)));
    let alias = f.alias_bytes.map_or("-".to_string(), format_bytes);
    view! {
        <section class=class id="fakecap">
            <h3>"Capacity: " <span class="verdict">{word}</span></h3>
            <p>{f.summary_line()}</p>
            <div class="capacity-bar" title="claimed span; the filled part holds data">
                <div class="usable" style=usable_w></div>
            </div>
            <table class="fakecap-figures">
                <tbody>
                    <tr><th>"claimed (written)"</th><td>{format_bytes(f.span_bytes)}</td></tr>
                    <tr><th>"usable"</th><td class="usable-bytes">{format_bytes(f.usable_bytes)}</td></tr>
                    <tr><th>"read back good"</th><td>{format_bytes(f.good_bytes)}</td></tr>
                    <tr><th>"first good offset"</th><td>{offset(f.first_good)}</td></tr>
                    <tr><th>"last good offset"</th><td>{offset(f.last_good)}</td></tr>
                    <tr><th>"addresses repeat every"</th><td>{alias}</td></tr>
                </tbody>
            </table>
        </section>
    }
}

/// The verification panel of a run that read its writes back.
fn verify_panel(r: &RunInfo) -> Option<impl IntoView> {
    let steps = r.steps.len();
    let v = r.analysis.as_ref()?.verify.clone()?;
    Some(view! { <VerifyView v steps/> })
}

/// The read-back of a verified run: PASS or FAIL first, then the counts by kind and the
/// first bad blocks by offset (with their step for presets: a served single workload runs
/// as one step, `steps` 1).
#[component]
fn VerifyView(v: shared::analysis::verify::Verify, steps: usize) -> impl IntoView {
    use shared::analysis::verify::BadKind;
    let pass = v.passed();
    let verdict = if pass { "PASS" } else { "FAIL" };
    let class = if pass { "verify pass" } else { "verify fail" };
    let counts = BadKind::ALL
        .iter()
        .map(|k| {
            let n = v.bad.get(*k);
            view! { <td class=format!("kind-{}", k.as_str())>{n}</td> }
        })
        .collect_view();
    let rows = v
        .first_bad
        .iter()
        .map(|b| {
            let detail = match (b.written_for, b.found_generation, b.expected_generation) {
                (Some(w), _, _) => format!("written for offset {w}"),
                (_, Some(0), _) => "a block of another run".to_string(),
                (_, Some(f), Some(e)) => format!("pass {f} found, pass {e} expected"),
                _ => String::new(),
            };
            let step = b
                .step
                .filter(|_| steps > 1)
                .map(|s| format!("step {}", s + 1))
                .unwrap_or_default();
            view! {
                <tr><td>{b.offset}</td><td>{b.kind.as_str()}</td><td>{detail}</td><td>{step}</td></tr>
            }
        })
        .collect_view();
    let listed = !v.first_bad.is_empty();
    view! {
        <section class=class id="verify">
            <h3>"Verification: " <span class="verdict">{verdict}</span></h3>
            <p>{v.summary_line()}</p>
            <table class="verify-counts">
                <thead><tr><th>"corrupt"</th><th>"misplaced"</th><th>"stale"</th><th>"unwritten"</th><th>"unreadable"</th></tr></thead>
                <tbody><tr>{counts}</tr></tbody>
            </table>
            {listed.then(|| view! {
                <table class="verify-bad">
                    <caption>"First bad blocks"</caption>
                    <thead><tr><th>"offset (bytes)"</th><th>"kind"</th><th>"detail"</th><th>"step"</th></tr></thead>
                    <tbody>{rows}</tbody>
                </table>
            })}
        </section>
    }
}

/// A repeated run's statistics: per metric (and step) mean ± sd, CV, the 95 % interval of
/// the mean, min and max; a CV over 5 % is marked noisy.
#[component]
pub fn RepeatView(r: shared::analysis::repeat::Repeat) -> impl IntoView {
    use shared::analysis::repeat::CV_WARN_PCT;
    let rows = r
        .metrics
        .iter()
        .map(|m| {
            let s = &m.stat;
            let class = if s.cv_pct > CV_WARN_PCT { "noisy" } else { "" };
            view! {
                <tr class=class>
                    <td>{m.label()}</td>
                    <td class="num">{format!("{:.1}", s.mean)}</td>
                    <td class="num">{format!("{:.1}", s.sd)}</td>
                    <td class="num cv">{format!("{:.1} %", s.cv_pct)}</td>
                    <td class="num">{format!("{:.1} – {:.1}", s.ci_lo, s.ci_hi)}</td>
                    <td class="num">{format!("{:.1}", s.min)}</td>
                    <td class="num">{format!("{:.1}", s.max)}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <section class="repeat" id="repeat">
            <h3>{format!("Repeated {} times", r.passes)}</h3>
            <table class="repeat-stats">
                <thead><tr><th>"metric"</th><th class="num">"mean"</th><th class="num">"sd"</th><th class="num">"CV"</th>
                    <th class="num">"95 % CI of the mean"</th><th class="num">"min"</th><th class="num">"max"</th></tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </section>
    }
}
