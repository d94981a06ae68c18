//! A run's headline drawn as its preset's users know it: CrystalDiskMark's tiles (with copy
//! as image), ATTO's bars, HD Tune's speed by position with min/avg/max, a sustain verdict,
//! first vs last window, steady-state rounds, cache recovery, data-pattern ratios, or a
//! single workload's figures. The logic is `crate::headline`.

use super::chart_view::ChartView;
use crate::headline::{headline, Headline, MinAvgMax};
use leptos::prelude::*;
use shared::api::RunInfo;
use shared::steps::{GridRow, SweepPoint};
use shared::units::{format_bytes, format_ns};
use shared::{DirSample, Sample};

#[component]
pub fn HeadlineView(run: RunInfo, samples: RwSignal<Vec<Sample>>) -> impl IntoView {
    let id = run.id;
    let line = run.line.clone();
    let h = Memo::new(move |_| samples.with(|s| headline(&run, s)));
    move || {
        match h.get() {
        Headline::Cdm(rows) => view! { <CdmTiles id rows/> }.into_any(),
        Headline::Atto(points) => view! { <AttoBars points/> }.into_any(),
        Headline::FullSpan { read, write } => {
            let chart = Memo::new(move |_| samples.with(|s| crate::charts::span_by_position(s)));
            view! {
                <section class="headline full-span" id="headline">
                    <h3>"Transfer rate by position (HD Tune)"</h3>
                    <table class="min-avg-max">
                        <thead><tr><th></th><th class="num">"minimum"</th><th class="num">"average"</th><th class="num">"maximum"</th></tr></thead>
                        <tbody>
                            {write.map(|m| view! { <MinAvgMaxRow label="write" m/> })}
                            {read.map(|m| view! { <MinAvgMaxRow label="read" m/> })}
                        </tbody>
                    </table>
                    {move || chart.get().map(|d| view! {
                        <ChartView id=format!("run-{id}-span") data=Signal::derive(move || d.clone())/>
                    })}
                </section>
            }
            .into_any()
        }
        Headline::Sustain(s) => view! {
            <section class="headline sustain" id="headline">
                <p class=if s.pass { "verdict pass" } else { "verdict fail" }>{if s.pass { "PASS" } else { "FAIL" }}</p>
                <dl class="facts">
                    <div><dt>"required"</dt><dd>{format!("{:.0} MB/s", s.required_mbps)}</dd></div>
                    <div><dt>"achieved"</dt><dd>{format!("{:.0} MB/s", s.achieved_mbps)}</dd></div>
                    <div><dt>"buffer needed"</dt><dd>{format_bytes(s.buffer_bytes_needed)}</dd></div>
                    <div><dt>"allowed buffer"</dt><dd>{format!("{} ms", s.buffer_ms)}</dd></div>
                    <div><dt>"longest stall"</dt><dd>{format!("{} ms", s.longest_stall_ms)}</dd></div>
                </dl>
            </section>
        }
        .into_any(),
        Headline::FirstLast(f) => view! {
            <section class="headline first-last" id="headline">
                <h3>{format!("First vs last {} (Iometer)", crate::plot::fmt_seconds(f.window_s))}</h3>
                <dl class="facts">
                    <div><dt>"first"</dt><dd>{format!("{:.0} IOPS", f.first_iops)}</dd><dd class="sub">{format!("{:.1} MB/s", f.first_mbps)}</dd></div>
                    <div><dt>"last"</dt><dd>{format!("{:.0} IOPS", f.last_iops)}</dd><dd class="sub">{format!("{:.1} MB/s", f.last_mbps)}</dd></div>
                    <div><dt>"change"</dt><dd>{f.iops_ratio.map_or("–".into(), |x| format!("{:+.0} %", (x - 1.0) * 100.0))}</dd></div>
                </dl>
            </section>
        }
        .into_any(),
        Headline::Steady(s) => view! { <SteadyRounds s/> }.into_any(),
        Headline::Recovery(c) => view! {
            <section class="headline recovery" id="headline">
                <h3>{format!("Cache before and after {:.0} s idle", c.idle_s)}</h3>
                <dl class="facts">
                    <div><dt>"cache (first write)"</dt><dd>{c.first.cache_bytes.map_or("not found".into(), format_bytes)}</dd></div>
                    <div><dt>"back after idle"</dt><dd>{c.recovered_bytes.map_or("–".into(), format_bytes)}</dd></div>
                    <div><dt>"recovered"</dt><dd>{c.recovered_share.map_or("–".into(), |x| format!("{:.0} %", x * 100.0))}</dd></div>
                </dl>
            </section>
        }
        .into_any(),
        Headline::Compress(c) => {
            let max = c.patterns.iter().map(|p| p.mbps).fold(0.0, f64::max).max(1.0);
            view! {
                <section class="headline compress" id="headline">
                    <h3>{c.zeros_random_ratio.map_or("Write speed by data pattern".into(), |x| format!("Zeros are {x:.2}× random data"))}</h3>
                    <ol class="rounds">
                        {c.patterns.iter().map(|p| view! {
                            <li>
                                <span class="round">{p.pattern.clone()}</span>
                                <span class="bar" style=format!("width: {:.1}%", p.mbps / max * 100.0)></span>
                                <span class="num">{format!("{:.0} MB/s", p.mbps)}</span>
                            </li>
                        }).collect_view()}
                    </ol>
                </section>
            }
            .into_any()
        }
        Headline::Single { read, write } => view! {
            <section class="headline single" id="headline">
                {read.map(|d| view! { <BigFigures label="read" d/> })}
                {write.map(|d| view! { <BigFigures label="write" d/> })}
            </section>
        }
        .into_any(),
        // No form of its own: the run's one line (its first finding), its panels and steps
        // below.
        Headline::Steps => view! {
            <section class="headline steps" id="headline">
                <p class="headline-line">{line.clone()}</p>
            </section>
        }
        .into_any(),
    }
    }
}

/// SNIA PTS's rounds, the steady-state window (five rounds) marked when it was reached.
#[component]
fn SteadyRounds(s: shared::analysis::SteadyState) -> impl IntoView {
    let window = s
        .round
        .filter(|_| s.attained)
        .map(|r| (r.saturating_sub(4).max(1), r));
    let max = s.rounds.iter().copied().fold(0.0, f64::max).max(1.0);
    view! {
        <section class="headline steady" id="headline">
            <h3>{match (s.attained, s.round) {
                (true, Some(r)) => format!("Steady state at round {r} (SNIA PTS: 5 rounds within 20 % range, 10 % slope)"),
                _ => format!("No steady state in {} rounds", s.rounds.len()),
            }}</h3>
            <ol class="rounds">
                {s.rounds.iter().enumerate().map(|(i, v)| {
                    let n = i as u32 + 1;
                    let inside = window.is_some_and(|(a, b)| (a..=b).contains(&n));
                    view! {
                        <li class:in-window=inside>
                            <span class="round">{format!("round {n}")}</span>
                            <span class="bar" style=format!("width: {:.1}%", v / max * 100.0)></span>
                            <span class="num">{format!("{v:.0} IOPS")}</span>
                        </li>
                    }
                }).collect_view()}
            </ol>
        </section>
    }
}

#[component]
fn BigFigures(label: &'static str, d: DirSample) -> impl IntoView {
    view! {
        <dl class="facts">
            <div><dt>{label}</dt><dd>{format!("{:.1} MB/s", d.mb_s)}</dd></div>
            <div><dt>"IOPS"</dt><dd>{format!("{:.0}", d.iops)}</dd></div>
            <div><dt>"p99"</dt><dd>{format_ns(d.lat.p99_ns)}</dd></div>
        </dl>
    }
}

#[component]
fn MinAvgMaxRow(label: &'static str, m: MinAvgMax) -> impl IntoView {
    view! {
        <tr>
            <th>{label}</th>
            <td class="num">{format!("{:.1} MB/s", m.min)}</td>
            <td class="num big">{format!("{:.1} MB/s", m.avg)}</td>
            <td class="num">{format!("{:.1} MB/s", m.max)}</td>
        </tr>
    }
}

/// CrystalDiskMark's tiles: a row per test, read and write best MB/s large, mean below.
#[component]
fn CdmTiles(id: i64, rows: Vec<GridRow>) -> impl IntoView {
    let status = RwSignal::new(None::<String>);
    let for_image = rows.clone();
    let copy = move |_| {
        let rows = for_image.clone();
        leptos::task::spawn_local(async move {
            status.set(Some(crate::tiles::copy_or_save(id, &rows).await));
        });
    };
    let value = |v: Option<f64>| v.map_or("–".into(), |x| format!("{x:.2}"));
    view! {
        <section class="headline cdm" id="headline">
            <div class="cdm-tiles" id="cdm-tiles" role="table" aria-label="CrystalDiskMark result, MB/s">
                <div class="tile-row head" role="row">
                    <span role="columnheader" class="cdm-label">"MB/s"</span>
                    <span role="columnheader">"Read (MB/s)"</span>
                    <span role="columnheader">"Write (MB/s)"</span>
                </div>
                {rows.into_iter().map(|g| view! {
                    <div class="tile-row" role="row">
                        <span class="cdm-label" role="rowheader">{g.label.clone()}</span>
                        <span class="cdm-tile read" role="cell">
                            <span class="best">{value(g.read_best)}</span>
                            <span class="mean">{format!("mean {}", value(g.read_mean))}</span>
                        </span>
                        <span class="cdm-tile write" role="cell">
                            <span class="best">{value(g.write_best)}</span>
                            <span class="mean">{format!("mean {}", value(g.write_mean))}</span>
                        </span>
                    </div>
                }).collect_view()}
            </div>
            <div class="controls">
                <button id="copy-image" on:click=copy>"Copy as image"</button>
                <span class="meta" role="status">{move || status.get()}</span>
            </div>
        </section>
    }
}

/// ATTO's chart: a row per transfer size (512 B at the top), read and write bars.
#[component]
fn AttoBars(points: Vec<SweepPoint>) -> impl IntoView {
    let max = points
        .iter()
        .map(|p| p.read_mb_s.max(p.write_mb_s))
        .fold(0.0, f64::max)
        .max(1.0);
    let pct = move |v: f64| format!("width: {:.1}%", v / max * 100.0);
    view! {
        <section class="headline atto" id="headline">
            <h3>"Transfer rate by size (ATTO)"</h3>
            <p class="legend"><span class="key write"></span>"write "<span class="key read"></span>"read"</p>
            <ol class="atto-bars" id="atto-bars">
                {points.into_iter().map(|p| view! {
                    <li>
                        <span class="size">{format_bytes(p.bs)}</span>
                        <span class="bars">
                            <span class="bar write" style=pct(p.write_mb_s)></span>
                            <span class="bar read" style=pct(p.read_mb_s)></span>
                        </span>
                        <span class="num">{format!("{:.0} / {:.0} MB/s", p.write_mb_s, p.read_mb_s)}</span>
                    </li>
                }).collect_view()}
            </ol>
        </section>
    }
}
