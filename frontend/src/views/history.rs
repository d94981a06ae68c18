//! History: stored runs with filters (target, preset, status, date) and paging; open,
//! export, delete; and for two or more picked runs, the comparison: overlaid time series,
//! B/A ratios, a CrystalDiskMark-style grid or a block-size chart when they form one.

use super::chart_view::ChartView;
use super::{ctx, save_export, ConfirmButton, Tab};
use crate::charts;
use crate::plot::{Fmt, YAxis};
use leptos::prelude::*;
use shared::api::{RunInfo, RunList};
use shared::report::RunStatus;
use shared::Sample;

const PER_PAGE: u32 = 25;

/// The history filters, as the API's query string.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Filters {
    pub target: String,
    pub preset: String,
    pub status: String,
    /// `YYYY-MM-DD`: runs created on or after that day (UTC).
    pub since: String,
    pub page: u32,
}

fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' | b'/' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

impl Filters {
    pub fn query(&self) -> Result<String, String> {
        let mut q = vec![
            format!("per_page={PER_PAGE}"),
            format!("page={}", self.page.max(1)),
        ];
        for (k, v) in [
            ("target", &self.target),
            ("preset", &self.preset),
            ("status", &self.status),
        ] {
            if !v.is_empty() {
                q.push(format!("{k}={}", encode(v)));
            }
        }
        if !self.since.is_empty() {
            q.push(format!(
                "since={}",
                crate::format::parse_date_ms(&self.since)?
            ));
        }
        Ok(q.join("&"))
    }
}

#[component]
pub fn History() -> impl IntoView {
    let c = ctx();
    let filters = RwSignal::new(Filters {
        page: 1,
        ..Filters::default()
    });
    let runs = RwSignal::new(None::<Result<RunList, String>>);
    // Picked runs belong to this visit of the history (or the `/compare?runs=` address
    // that opened it): leaving the view lets them go.
    let picked = c.picked;
    on_cleanup(move || picked.set(Vec::new()));
    let presets = LocalResource::new(move || {
        let t = c.token.get_value();
        async move {
            let list = crate::api::presets(&t).await.unwrap_or_default();
            list.into_iter().map(|p| p.name).collect::<Vec<String>>()
        }
    });
    let reload = move || {
        let t = c.token.get_value();
        let q = filters.get_untracked().query();
        leptos::task::spawn_local(async move {
            let r = match q {
                Ok(q) => crate::api::runs(&t, &q).await,
                Err(e) => Err(e),
            };
            runs.set(Some(r));
        });
    };
    Effect::new(move |_| {
        filters.track();
        c.live.with(|s| (s.run_id, s.status.clone()));
        reload();
    });
    let set = move |f: fn(&mut Filters, String)| {
        move |ev: leptos::ev::Event| {
            let v = event_target_value(&ev);
            filters.update(|x| {
                f(x, v);
                x.page = 1;
            });
        }
    };
    let delete = Callback::new(move |id: i64| {
        let t = c.token.get_value();
        leptos::task::spawn_local(async move {
            if c.report(crate::api::delete(&t, id).await).is_some() {
                picked.update(|p| p.retain(|x| *x != id));
                reload();
            }
        });
    });
    let target_options = move || {
        c.targets
            .get()
            .and_then(Result::ok)
            .unwrap_or_default()
            .into_iter()
            .map(|t| view! { <option value=t.path.clone()>{t.path.clone()}</option> })
            .collect_view()
    };
    view! {
        <section class="history">
            <h2>"History"</h2>
            <form class="filters" on:submit=|ev| ev.prevent_default()>
                <label>"Target "
                    <select id="filter-target" on:change=set(|f, v| f.target = v)>
                        <option value="">"all"</option>{target_options}
                    </select>
                </label>
                <label>"Preset "
                    <select id="filter-preset" on:change=set(|f, v| f.preset = v)>
                        <option value="">"all"</option>
                        {move || presets.get().unwrap_or_default().into_iter().map(|p| view! { <option value=p.clone()>{p.clone()}</option> }).collect_view()}
                    </select>
                </label>
                <label>"Status "
                    <select id="filter-status" on:change=set(|f, v| f.status = v)>
                        <option value="">"all"</option>
                        {RunStatus::ALL.iter().map(|s| view! { <option value=s.as_str()>{s.as_str()}</option> }).collect_view()}
                    </select>
                </label>
                <label>"Since "
                    <input id="filter-since" type="date" on:change=set(|f, v| f.since = v)/>
                </label>
            </form>
            {move || match runs.get() {
                None => view! { <p class="status empty">"Loading…"</p> }.into_any(),
                Some(Err(e)) => view! { <p class="banner error" role="alert">{e}</p> }.into_any(),
                Some(Ok(list)) if list.runs.is_empty() => view! { <p class="status empty">"No runs match."</p> }.into_any(),
                Some(Ok(list)) => {
                    let pages = list.total.div_ceil(u64::from(list.per_page.max(1))).max(1);
                    let page = list.page;
                    view! {
                        <table id="history">
                            <thead><tr>
                                <th>"pick"</th><th>"run"</th><th class="when">"when"</th><th>"test"</th><th>"target"</th><th>"status"</th><th>"result"</th><th></th>
                            </tr></thead>
                            <tbody>{list.runs.into_iter().map(|r| view! { <HistoryRow r picked on_delete=delete/> }).collect_view()}</tbody>
                        </table>
                        <p class="pager">
                            <button id="newer" disabled={page <= 1} on:click=move |_| filters.update(|f| f.page = f.page.saturating_sub(1).max(1))>"Newer"</button>
                            <span>{format!("page {page} of {pages} · {} runs", list.total)}</span>
                            <button id="older" disabled={u64::from(page) >= pages} on:click=move |_| filters.update(|f| f.page += 1)>"Older"</button>
                        </p>
                    }.into_any()
                }
            }}
            <Selection picked=picked/>
        </section>
    }
}

/// One stored run: pick for compare, open, its figures, export and delete.
#[component]
fn HistoryRow(r: RunInfo, picked: RwSignal<Vec<i64>>, on_delete: Callback<i64>) -> impl IntoView {
    let c = ctx();
    let id = r.id;
    let toggle = move |_| {
        picked.update(|p| match p.iter().position(|&x| x == id) {
            Some(i) => {
                p.remove(i);
            }
            None => p.push(id),
        })
    };
    view! {
        <tr data-run=id>
            <td><input type="checkbox" class="pick" aria-label=format!("compare run {id}")
                prop:checked=move || picked.with(|p| p.contains(&id)) on:change=toggle/></td>
            <td><button class="open link" on:click=move |_| c.tab.set(Tab::Run(id))>{format!("#{id}")}</button></td>
            <td class="when">{crate::format::fmt_time_ms(r.created_ms)}</td>
            <td class="test">
                {r.name.clone().map(|n| view! { <strong>{n}</strong><br/> })}
                {crate::headline::test_name(&r)}
            </td>
            <td class="path" title=r.target.clone()>{r.target.clone()}</td>
            <td class="status">{r.status.as_str()}</td>
            <td class="result">{r.line.clone()}</td>
            <td class="export">
                <button class="export-json" on:click=move |_| save_export(id, "json")>"JSON"</button>
                <button class="export-csv" on:click=move |_| save_export(id, "csv")>"CSV"</button>
                <button class="export-fio" title="fio's JSON document" on:click=move |_| save_export(id, "fio-json")>"fio"</button>
                <Show when=move || c.operator()>
                    <ConfirmButton class="delete" label="Delete" confirm_label="Really delete?".to_string()
                        on_confirm=Callback::new(move |()| on_delete.run(id))/>
                </Show>
            </td>
        </tr>
    }
}

/// Runs repeated on both sides: is the difference real? (the ratio of means with its 95 %
/// interval, as `diskscope compare` prints it)
#[component]
fn Significance(infos: RwSignal<Vec<RunInfo>>) -> impl IntoView {
    move || {
        infos.with(|list| {
            let rep = |i: &RunInfo| i.analysis.as_ref().and_then(|a| a.repeat.clone());
            let a = list.first().and_then(rep)?;
            let rows: Vec<_> = list
                .iter()
                .skip(1)
                .filter_map(|b| Some((b.id, rep(b)?)))
                .flat_map(|(idb, rb)| {
                    shared::analysis::repeat::compare(&a, &rb)
                        .into_iter()
                        .map(move |r| (idb, r))
                })
                .collect();
            (!rows.is_empty()).then(|| view! {
                <h3>"Is the difference real? (repeated runs, 95 % confidence)"</h3>
                <table id="significance">
                    <thead><tr><th>"run"</th><th>"metric"</th><th class="num">"A mean"</th><th class="num">"B mean"</th><th>"verdict"</th></tr></thead>
                    <tbody>{rows.into_iter().map(|(idb, r)| {
                        let class = if r.ci.as_ref().is_some_and(|c| c.significant) { "significant" } else { "noise" };
                        view! {
                            <tr class=class>
                                <td>{format!("run {idb}")}</td><td>{r.label.clone()}</td>
                                <td class="num">{format!("{:.1}", r.a)}</td><td class="num">{format!("{:.1}", r.b)}</td>
                                <td>{r.sentence()}</td>
                            </tr>
                        }
                    }).collect_view()}</tbody>
                </table>
            })
        })
    }
}

/// Picked runs test by test: each run's mean over its passes (± the 95 % interval when it
/// has several), and B over A.
#[component]
fn StepTable(c: Memo<crate::compare::StepCompare>, ids: Signal<Vec<i64>>) -> impl IntoView {
    let cell = |s: &Option<shared::analysis::repeat::Stat>| match s {
        Some(s) if s.n > 1 => format!("{:.1} ± {:.1}", s.mean, (s.ci_hi - s.ci_lo) / 2.0),
        Some(s) => format!("{:.1}", s.mean),
        None => "–".into(),
    };
    move || {
        let c = c.get();
        let ids = ids.get();
        view! {
            {c.note.clone().map(|n| view! { <p class="meta" id="compare-note">{n}</p> })}
            <table id="step-compare" class:empty=c.rows.is_empty()>
                <thead><tr><th>"test"</th><th>"metric"</th>
                    {ids.iter().map(|id| view! { <th class="num">{format!("run {id}")}</th> }).collect_view()}
                    {ids.iter().skip(1).map(|id| view! { <th class="num">{format!("run {id} / run {}", ids[0])}</th> }).collect_view()}
                </tr></thead>
                <tbody>{c.rows.iter().map(|r| view! {
                    <tr data-test=r.key.to_string() data-metric=r.metric>
                        <th>{r.key.to_string()}</th><td>{r.metric}</td>
                        {r.stats.iter().map(|s| view! { <td class="num">{cell(s)}</td> }).collect_view()}
                        {r.ratios.iter().map(|x| view! { <td class="num ratio">{match x {
                            Some((q, Some(ci))) => format!("{q:.2}× ({:.2}–{:.2}{})", ci.lo, ci.hi, if ci.significant { "" } else { ", noise" }),
                            Some((q, None)) => format!("{q:.2}×"),
                            None => "–".into(),
                        }}</td> }).collect_view()}
                    </tr>
                }).collect_view()}</tbody>
            </table>
        }
    }
}

/// The picked runs side by side.
#[component]
fn Selection(picked: RwSignal<Vec<i64>>) -> impl IntoView {
    let c = ctx();
    let series = RwSignal::new(Vec::<(i64, Vec<Sample>)>::new());
    let infos = RwSignal::new(Vec::<RunInfo>::new());
    Effect::new(move |_| {
        let ids = picked.get();
        let t = c.token.get_value();
        leptos::task::spawn_local(async move {
            let (mut s, mut i) = (Vec::new(), Vec::new());
            for id in ids {
                match crate::api::run(&t, id).await {
                    Ok(info) => i.push(info),
                    Err(e) => {
                        c.banner.set(Some(e));
                        continue;
                    }
                }
                if let Some(x) = c.report(crate::api::samples(&t, id).await) {
                    s.push((id, x));
                }
            }
            infos.set(i);
            series.set(s);
        });
    });
    // Whole-run ratios mean something only between single workloads; preset runs (and
    // mixed picks) are compared test by test.
    let singles = move || {
        infos.with(|l| {
            l.iter().all(|r| {
                r.steps.len() <= 1 && r.kind().headline() == shared::preset::HeadlineKind::Single
            })
        })
    };
    let table = move || {
        infos.with(|list| {
            let Some(a) = list.first() else {
                return Vec::new();
            };
            let a_sum = a.summary.clone().unwrap_or_default();
            list.iter()
                .skip(1)
                .flat_map(|b| {
                    let rs = crate::compare::ratios(&a_sum, &b.summary.clone().unwrap_or_default());
                    let (ida, idb) = (a.id, b.id);
                    rs.into_iter().map(move |r| {
                        view! {
                            <tr>
                                <td>{format!("run {idb} / run {ida}")}</td>
                                <td>{r.metric}</td>
                                <td class="num">{format!("{:.1}", r.a)}</td>
                                <td class="num">{format!("{:.1}", r.b)}</td>
                                <td class="num ratio">{r.label()}</td>
                            </tr>
                        }
                    })
                })
                .collect::<Vec<_>>()
        })
    };
    let by_step = Memo::new(move |_| infos.with(|l| crate::compare::by_step(l)));
    let grid = Memo::new(move |_| infos.with(|l| crate::grid::grid(l)));
    let sweep = Memo::new(move |_| infos.with(|l| crate::grid::block_size_sweep(l)));
    let mb = |x: &Sample| x.total_mb_s();
    let p99 = |x: &Sample| x.read.lat.p99_ns.max(x.write.lat.p99_ns) as f64 / 1e3;
    let cell = |v: Option<f64>| v.map(|x| format!("{x:.2}")).unwrap_or_else(|| "–".into());
    view! {
        <Show when=move || picked.with(|p| p.len() >= 2)>
            <section class="compare" id="compare">
                <h2>"Compare"</h2>
                <div class="charts">
                    <ChartView id="compare-chart".into() data=Signal::derive(move || series.with(|s| charts::overlay("Throughput by run", "MB/s", YAxis::Linear, Fmt::Count, s, mb)))/>
                    <ChartView id="compare-latency".into() data=Signal::derive(move || series.with(|s| charts::overlay("p99 latency by run (log scale)", "latency", YAxis::Log, Fmt::Micros, s, p99)))/>
                </div>
                <Show when=singles>
                    <table id="ratios">
                        <thead><tr><th>"B / A"</th><th>"metric"</th><th class="num">"A"</th><th class="num">"B"</th><th class="num">"ratio"</th></tr></thead>
                        <tbody>{table}</tbody>
                    </table>
                </Show>
                <Show when=move || !singles()>
                    <StepTable c=by_step ids=Signal::derive(move || infos.with(|l| l.iter().map(|r| r.id).collect::<Vec<_>>()))/>
                </Show>
                <Significance infos/>
                {move || grid.get().map(|rows| view! {
                    <h3>"As a CrystalDiskMark grid (best of the picked runs, MB/s)"</h3>
                    <table id="cdm-grid" class="cdm">
                        <thead><tr><th>"test"</th><th class="num">"Read"</th><th class="num">"Write"</th><th class="num">"Read IOPS"</th><th class="num">"Write IOPS"</th></tr></thead>
                        <tbody>{rows.into_iter().map(|r| view! {
                            <tr>
                                <th>{r.label}</th>
                                <td class="num big">{cell(r.read_best)}</td>
                                <td class="num big">{cell(r.write_best)}</td>
                                <td class="num">{r.read_iops.map(|v| format!("{v:.0}")).unwrap_or_else(|| "–".into())}</td>
                                <td class="num">{r.write_iops.map(|v| format!("{v:.0}")).unwrap_or_else(|| "–".into())}</td>
                            </tr>
                        }).collect_view()}</tbody>
                    </table>
                })}
                {move || sweep.get().map(|pts| view! {
                    <ChartView id="sweep-chart".into() data=Signal::derive(move || charts::sweep(&pts))/>
                })}
            </section>
        </Show>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_make_the_api_query() {
        let f = Filters {
            target: "/var/tmp/my disk.bin".into(),
            status: "completed".into(),
            since: "2026-11-30".into(),
            page: 2,
            ..Filters::default()
        };
        assert_eq!(
            f.query().expect("query"),
            "per_page=25&page=2&target=/var/tmp/my%20disk.bin&status=completed&since=1795996800000"
        );
        let bad = Filters {
            since: "30/11/2026".into(),
            ..Filters::default()
        };
        assert!(bad.query().unwrap_err().contains("30/11/2026"));
    }
}
