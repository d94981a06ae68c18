//! The results of the presets that measure along an axis of their own: speed against fill
//! level (`fill-level`), the rounds of a latency search (`latency-target`), and trace
//! replays (the application presets' scores, each replay's own figures).

use leptos::prelude::*;
use shared::analysis::fill::FillLevel;
use shared::analysis::latency::LatencyTarget;
use shared::analysis::replay::{AppScores, Replay};
use shared::api::RunInfo;

/// The panels the run's analyses have.
pub fn panels(r: Option<RunInfo>) -> Option<impl IntoView> {
    let a = r?.analysis?;
    let fill = a.fill_level.map(|f| view! { <FillLevelView f/> });
    let lat = a.latency_target.map(|t| view! { <LatencyTargetView t/> });
    let apps = a.apps.map(|s| view! { <AppScoresView s/> });
    let replays = (!a.replay.is_empty()).then(|| view! { <ReplaysView r=a.replay/> });
    Some(view! { {fill} {lat} {apps} {replays} })
}

fn mb(v: Option<f64>) -> String {
    v.map_or("–".into(), |x| format!("{x:.1}"))
}

/// Storage bandwidth per application and overall, as PCMark reports it.
#[component]
fn AppScoresView(s: AppScores) -> impl IntoView {
    let rows = s
        .apps
        .iter()
        .map(|a| {
            view! {
                <tr><th>{a.app.clone()}</th><td class="num">{format!("{:.1}", a.bandwidth_mbps)}</td><td class="num">{a.passes}</td></tr>
            }
        })
        .collect_view();
    view! {
        <section class="preset-result" id="app-scores">
            <h3>"Application score"</h3>
            <p class="score"><strong>{format!("{:.1} MB/s", s.overall_mbps)}</strong>" overall (geometric mean of the applications' storage bandwidth)"</p>
            <table>
                <thead><tr><th>"application"</th><th class="num">"storage bandwidth MB/s"</th><th class="num">"passes"</th></tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </section>
    }
}

/// Each replay: I/Os by type, bandwidth over busy time, waiting vs idle, compressed idle.
#[component]
fn ReplaysView(r: Vec<Replay>) -> impl IntoView {
    let s = |ns: u64| format!("{:.2}", ns as f64 / 1e9);
    let count = |p: &Replay, k: &str| {
        p.ops
            .iter()
            .find(|o| o.kind == k)
            .map_or("0".to_string(), |o| {
                format!("{} ({})", o.count, shared::units::format_bytes(o.bytes))
            })
    };
    let rows = r
        .iter()
        .map(|p| {
            view! {
                <tr class=if p.complete { "" } else { "over" }>
                    <th>{p.trace.clone()}</th><td>{format!("{}, {}", p.format, p.timing)}</td>
                    <td class="num">{format!("{:.1}", p.bandwidth_mbps)}</td>
                    <td class="num">{count(p, "read")}</td><td class="num">{count(p, "write")}</td>
                    <td class="num">{count(p, "trim")}</td><td class="num">{count(p, "flush")}</td>
                    <td class="num">{s(p.busy_ns)}</td><td class="num">{s(p.idle_ns)}</td>
                    <td class="num">{s(p.compressed_ns)}</td><td class="num">{p.late}</td>
                </tr>
            }
        })
        .collect_view();
    let notes = r
        .iter()
        .flat_map(|p| p.lines().into_iter().skip(2))
        .collect::<Vec<_>>();
    view! {
        <section class="preset-result" id="replay">
            <h3>"Trace replay"</h3>
            <table>
                <thead><tr><th>"trace"</th><th>"format, timing"</th><th class="num">"MB/s over busy time"</th>
                    <th class="num">"reads"</th><th class="num">"writes"</th><th class="num">"trims"</th><th class="num">"flushes"</th>
                    <th class="num">"busy s"</th><th class="num">"idle s"</th><th class="num">"idle compressed s"</th><th class="num">"late I/Os"</th></tr></thead>
                <tbody>{rows}</tbody>
            </table>
            {notes.into_iter().map(|n| view! { <p class="help">{n}</p> }).collect_view()}
        </section>
    }
}

/// Read and write MB/s per fill level, and the drop from the emptiest to the fullest.
#[component]
fn FillLevelView(f: FillLevel) -> impl IntoView {
    let rows = f
        .levels
        .iter()
        .map(|l| {
            view! {
                <tr><th>{format!("{} %", l.pct)}</th><td class="num">{mb(l.read_mb_s)}</td><td class="num">{mb(l.write_mb_s)}</td></tr>
            }
        })
        .collect_view();
    view! {
        <section class="preset-result" id="fill-level">
            <h3>"Speed against fill level"</h3>
            <p>{f.summary_line()}</p>
            <table>
                <thead><tr><th>"full"</th><th class="num">"4K random read MB/s"</th><th class="num">"4K random write MB/s"</th></tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </section>
    }
}

/// The search's rounds with their p99 against the limit, the best one marked.
#[component]
fn LatencyTargetView(t: LatencyTarget) -> impl IntoView {
    let best = t.best;
    let rows = t
        .rounds
        .iter()
        .map(|r| {
            let class = if Some(*r) == best {
                "best"
            } else if r.ok {
                "ok"
            } else {
                "over"
            };
            view! {
                <tr class=class>
                    <td>{shared::analysis::latency::Round::name(r.iodepth, r.rate_iops)}</td>
                    <td class="num">{format!("{:.0}", r.iops)}</td>
                    <td class="num">{format!("{:.0}", r.p99_us)}</td>
                    <td>{if r.ok { "under" } else { "over" }}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <section class="preset-result" id="latency-target">
            <h3>{format!("Highest IOPS with p99 under {:.0} µs", t.limit_us)}</h3>
            <p>{t.summary_line()}</p>
            <table>
                <thead><tr><th>"round"</th><th class="num">"IOPS"</th><th class="num">"p99 µs"</th><th>"limit"</th></tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </section>
    }
}
