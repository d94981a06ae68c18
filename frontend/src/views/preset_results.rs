//! The results of the presets that measure along an axis of their own: speed against fill
//! level (`fill-level`) and the rounds of a latency search (`latency-target`).

use leptos::prelude::*;
use shared::analysis::fill::FillLevel;
use shared::analysis::latency::LatencyTarget;
use shared::api::RunInfo;

/// The panels the run's analyses have.
pub fn panels(r: Option<RunInfo>) -> Option<impl IntoView> {
    let a = r?.analysis?;
    let fill = a.fill_level.map(|f| view! { <FillLevelView f/> });
    let lat = a.latency_target.map(|t| view! { <LatencyTargetView t/> });
    Some(view! { {fill} {lat} })
}

fn mb(v: Option<f64>) -> String {
    v.map_or("–".into(), |x| format!("{x:.1}"))
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
