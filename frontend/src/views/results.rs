//! One stored run: what ran where, the summary table with percentiles, its charts, export,
//! and delete for operators.

use super::chart_view::ChartView;
use super::{ctx, save_export, Tab};
use crate::charts;
use leptos::prelude::*;
use shared::api::RunInfo;
use shared::units::{format_bytes, format_ns};
use shared::{DirSample, Sample};

/// The summary rows of a run: one per direction that moved data.
pub fn summary_rows(info: &RunInfo) -> Vec<(&'static str, DirSample)> {
    let Some(s) = &info.summary else {
        return Vec::new();
    };
    [("read", s.read), ("write", s.write)]
        .into_iter()
        .filter(|(_, d)| d.ios > 0)
        .collect()
}

#[component]
pub fn RunResults(id: i64) -> impl IntoView {
    let c = ctx();
    let info = RwSignal::new(None::<Result<RunInfo, String>>);
    let samples = RwSignal::new(Vec::<Sample>::new());
    let t = c.token.get_value();
    leptos::task::spawn_local(async move {
        info.set(Some(crate::api::run(&t, id).await));
        if let Some(s) = c.report(crate::api::samples(&t, id).await) {
            samples.set(s);
        }
    });
    let spec = move || {
        info.with(|i| {
            i.as_ref()
                .and_then(|r| r.as_ref().ok())
                .map(|r| r.spec.clone())
        })
    };
    let chart =
        move |f: fn(&[Sample], Option<&shared::WorkloadSpec>) -> crate::chart::ChartData| {
            Signal::derive(move || {
                let s = spec();
                samples.with(|x| f(x, s.as_ref()))
            })
        };
    let position = Memo::new(move |_| {
        let s = spec();
        samples.with(|x| charts::by_position(x, s.as_ref()))
    });
    let temp = Memo::new(move |_| samples.with(|x| charts::temperature(x)));
    let armed = RwSignal::new(false);
    let delete = move |_| {
        if !armed.get_untracked() {
            armed.set(true);
            return;
        }
        let t = c.token.get_value();
        leptos::task::spawn_local(async move {
            if c.report(crate::api::delete(&t, id).await).is_some() {
                c.tab.set(Tab::History);
            }
        });
    };
    let head = move || {
        info.get().map(|r| match r {
            Err(e) => view! { <p class="banner error" role="alert">{e}</p> }.into_any(),
            Ok(r) => {
                let s = &r.spec;
                let workload = format!(
                    "{} {} QD{}×{} · {} · {}{}",
                    s.rw,
                    format_bytes(s.bs),
                    s.iodepth,
                    s.jobs,
                    s.pattern,
                    if s.direct { "O_DIRECT" } else { "buffered" },
                    s.rate.map(|r| format!(" · cap {r}")).unwrap_or_default()
                );
                let duration = r.summary.as_ref().map(|s| format!("{:.1} s", s.duration_ns as f64 / 1e9)).unwrap_or_default();
                let rows = summary_rows(&r);
                view! {
                    <h2>{format!("Run {} {}", r.id, r.name.clone().or(r.preset.clone()).unwrap_or_default())}</h2>
                    <p class="meta">
                        <span class="status-tag">{r.status.as_str()}</span>
                        <span class="path">{r.target.clone()}</span>
                        <span>{workload}</span>
                        <span>{crate::format::fmt_time_ms(r.created_ms)}</span>
                        <span>{duration}</span>
                    </p>
                    {r.error.clone().map(|e| view! { <p class="banner error" role="alert">{e.message}</p> })}
                    <table id="summary" class="summary">
                        <thead><tr>
                            <th></th><th>"MB/s"</th><th>"MiB/s"</th><th>"IOPS"</th><th>"data"</th>
                            <th>"min"</th><th>"mean"</th><th>"p50"</th><th>"p90"</th><th>"p99"</th>
                            <th>"p99.9"</th><th>"p99.99"</th><th>"max"</th>
                        </tr></thead>
                        <tbody>
                            {rows.into_iter().map(|(dir, d)| view! {
                                <tr>
                                    <th>{dir}</th>
                                    <td class="num">{format!("{:.1}", d.mb_s)}</td>
                                    <td class="num">{format!("{:.1}", d.mib_s)}</td>
                                    <td class="num">{format!("{:.0}", d.iops)}</td>
                                    <td class="num">{format_bytes(d.bytes)}</td>
                                    <td class="num">{format_ns(d.lat.min_ns)}</td>
                                    <td class="num">{format_ns(d.lat.mean_ns)}</td>
                                    <td class="num">{format_ns(d.lat.p50_ns)}</td>
                                    <td class="num">{format_ns(d.lat.p90_ns)}</td>
                                    <td class="num">{format_ns(d.lat.p99_ns)}</td>
                                    <td class="num">{format_ns(d.lat.p99_9_ns)}</td>
                                    <td class="num">{format_ns(d.lat.p99_99_ns)}</td>
                                    <td class="num">{format_ns(d.lat.max_ns)}</td>
                                </tr>
                            }).collect_view()}
                        </tbody>
                    </table>
                }
                .into_any()
            }
        })
    };
    view! {
        <section class="results" id="results">
            <div class="controls">
                <button on:click=move |_| c.tab.set(Tab::History)>"← History"</button>
                <button class="export-json" on:click=move |_| save_export(id, "json")>"Export JSON"</button>
                <button class="export-csv" on:click=move |_| save_export(id, "csv")>"Export CSV"</button>
                <Show when=move || c.operator()>
                    <button class="delete danger" on:click=delete>
                        {move || if armed.get() { format!("Really delete run {id}?") } else { "Delete".to_string() }}
                    </button>
                </Show>
            </div>
            {move || if info.get().is_none() { Some(view! { <p class="status empty">"Loading…"</p> }) } else { None }}
            {head}
            <div class="charts">
                <ChartView id=format!("run-{id}-throughput") data=chart(charts::throughput)/>
                <ChartView id=format!("run-{id}-iops") data=chart(charts::iops)/>
                <ChartView id=format!("run-{id}-latency") data=Signal::derive(move || samples.with(|x| charts::latency(x)))/>
                {move || temp.get().map(|d| view! { <ChartView id=format!("run-{id}-temperature") data=Signal::derive(move || d.clone())/> })}
                {move || position.get().map(|d| view! { <ChartView id=format!("run-{id}-position") data=Signal::derive(move || d.clone())/> })}
            </div>
        </section>
    }
}
