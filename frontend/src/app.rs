//! The pages: connect (token), the live run (chart, progress, start/stop for operators), the
//! recent runs, and the kiosk (dark, large, no controls).

use crate::live::LiveState;
use leptos::html::Canvas;
use leptos::prelude::*;
use shared::api::{CreateRun, Role};
use shared::units::{format_bytes, format_ns};

#[component]
pub fn App() -> impl IntoView {
    let token = RwSignal::new(crate::session::initial_token());
    view! {
        {move || match token.get() {
            None => view! { <Connect token=token/> }.into_any(),
            Some(t) => view! { <Dashboard token=t set_token=token/> }.into_any(),
        }}
    }
}

#[component]
fn Connect(token: RwSignal<Option<String>>) -> impl IntoView {
    let input = RwSignal::new(String::new());
    let error = RwSignal::new(None::<String>);
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let t = input.get_untracked().trim().to_string();
        leptos::task::spawn_local(async move {
            match crate::api::presets(&t).await {
                Ok(_) => {
                    crate::session::remember(&t);
                    token.set(Some(t));
                }
                Err(e) => error.set(Some(format!("the agent refused this token: {e}"))),
            }
        });
    };
    view! {
        <main class="connect">
            <h1>"diskscope"</h1>
            <form on:submit=submit>
                <label for="token">"Access token (printed by diskscope serve)"</label>
                <input id="token" type="password" autocomplete="off"
                    on:input=move |ev| input.set(event_target_value(&ev)) prop:value=move || input.get()/>
                <button type="submit">"Connect"</button>
            </form>
            {move || error.get().map(|e| view! { <p class="banner error" role="alert">{e}</p> })}
        </main>
    }
}

#[component]
fn Dashboard(token: String, set_token: RwSignal<Option<String>>) -> impl IntoView {
    let live = RwSignal::new(LiveState::default());
    let banner = RwSignal::new(None::<String>);
    #[cfg(target_arch = "wasm32")]
    crate::live::connect(token.clone(), live);
    let kiosk = crate::session::is_kiosk();
    let operator = move || live.with(|s| s.role == Some(Role::Operator)) && !kiosk;
    let tok = StoredValue::new(token);
    let start = move |_| {
        let t = tok.get_value();
        leptos::task::spawn_local(async move {
            let result = async {
                let target = crate::api::scratch_target(&t).await?;
                let req = CreateRun {
                    target,
                    spec: None,
                    preset: Some("quick".into()),
                    name: None,
                };
                crate::api::start(&t, &req).await
            }
            .await;
            banner.set(result.err());
        });
    };
    let stop = move |_| {
        let t = tok.get_value();
        if let Some(id) = live.with_untracked(|s| s.run_id) {
            leptos::task::spawn_local(
                async move { banner.set(crate::api::stop(&t, id).await.err()) },
            );
        }
    };
    let disconnect = move |_| {
        crate::session::forget();
        set_token.set(None);
    };
    view! {
        <main class=if kiosk { "dashboard kiosk" } else { "dashboard" }>
            <header>
                <h1>"diskscope"</h1>
                <span class="role">{move || live.with(|s| match (s.connected, s.role) {
                    (false, _) => "connecting…".to_string(),
                    (true, Some(Role::Operator)) => "operator".to_string(),
                    (true, _) => "viewer".to_string(),
                })}</span>
                {(!kiosk).then(|| view! { <button on:click=disconnect>"Disconnect"</button> })}
            </header>
            {move || banner.get().or_else(|| live.with(|s| s.error.clone()))
                .map(|e| view! { <p class="banner error" role="alert">{e}</p> })}
            <Show when=operator>
                <div class="controls">
                    <button id="start-quick" on:click=start>"Start quick test on the scratch file"</button>
                    <button id="stop" on:click=stop disabled=move || live.with(|s| s.status != "running")>"Stop"</button>
                </div>
            </Show>
            <RunStatusLine live=live/>
            <div class="charts">
                <LiveChart live=live dark=kiosk id="throughput" title="Throughput" y_desc="MB/s" log=false pick=throughput/>
                <LiveChart live=live dark=kiosk id="iops" title="IOPS" y_desc="I/O per second" log=false pick=iops/>
                <LiveChart live=live dark=kiosk id="latency" title="Latency (log scale)" y_desc="µs" log=true pick=latency/>
            </div>
            {(!kiosk).then(|| view! { <Targets token=tok live=live/> <History token=tok live=live/> })}
        </main>
    }
}

/// The targets the agent may use, with what it knows of them; reloaded with the run state
/// (busy flags change when runs start and end).
#[component]
fn Targets(token: StoredValue<String>, live: RwSignal<LiveState>) -> impl IntoView {
    let targets = RwSignal::new(None::<Result<Vec<shared::api::TargetView>, String>>);
    Effect::new(move |_| {
        live.with(|s| s.status.clone());
        let t = token.get_value();
        leptos::task::spawn_local(async move { targets.set(Some(crate::api::targets(&t).await)) });
    });
    let row = |t: shared::api::TargetView| {
        let note = match (t.scratch, t.busy, t.in_use.is_empty()) {
            (_, true, _) => "busy: a run is going on".to_string(),
            (_, false, false) => format!("writes refused: {}", t.in_use.join("; ")),
            (true, false, true) => "default scratch file".to_string(),
            (false, false, true) => String::new(),
        };
        view! {
            <tr>
                <td class="path">{t.path}</td>
                <td>{t.kind}</td>
                <td class="num">{t.size.map(format_bytes).unwrap_or_default()}</td>
                <td>{note}</td>
            </tr>
        }
    };
    view! {
        <section class="targets">
            <h2>"Targets"</h2>
            {move || match targets.get() {
                None => view! { <p class="status empty">"Loading…"</p> }.into_any(),
                Some(Err(e)) => view! { <p class="banner error" role="alert">{e}</p> }.into_any(),
                Some(Ok(list)) => view! {
                    <table id="targets">
                        <thead><tr><th>"path"</th><th>"kind"</th><th>"size"</th><th>"state"</th></tr></thead>
                        <tbody>{list.into_iter().map(row).collect_view()}</tbody>
                    </table>
                }.into_any(),
            }}
        </section>
    }
}

/// The latest runs, reloaded whenever the followed run changes state.
#[component]
fn History(token: StoredValue<String>, live: RwSignal<LiveState>) -> impl IntoView {
    let runs = RwSignal::new(None::<Result<Vec<shared::api::RunInfo>, String>>);
    let picked = RwSignal::new(Vec::<i64>::new());
    let export_error = RwSignal::new(None::<String>);
    Effect::new(move |_| {
        live.with(|s| (s.run_id, s.status.clone()));
        let t = token.get_value();
        leptos::task::spawn_local(async move {
            runs.set(Some(crate::api::runs(&t).await.map(|l| l.runs)));
        });
    });
    let row = move |r: shared::api::RunInfo| {
        let s = r.summary.unwrap_or_default();
        let spec = r.spec;
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
            <tr>
                <td><input type="checkbox" class="pick" aria-label=format!("compare run {id}")
                    prop:checked=move || picked.with(|p| p.contains(&id)) on:change=toggle/></td>
                <td>{r.id}</td>
                <td>{r.name.or(r.preset).unwrap_or_default()}</td>
                <td class="path">{r.target}</td>
                <td class="status">{r.status.as_str()}</td>
                <td>{format!("{} {} QD{}×{}", spec.rw, format_bytes(spec.bs), spec.iodepth, spec.jobs)}</td>
                <td class="num">{format!("{:.1}", s.read.mb_s)}</td>
                <td class="num">{format!("{:.1}", s.write.mb_s)}</td>
                <td class="num">{format!("{:.0}", s.read.iops + s.write.iops)}</td>
                <td class="export">
                    <button class="export-json" on:click=move |_| save_export(token, id, "json", export_error)>"JSON"</button>
                    <button class="export-csv" on:click=move |_| save_export(token, id, "csv", export_error)>"CSV"</button>
                </td>
            </tr>
        }
    };
    view! {
        <section class="history">
            <h2>"Recent runs"</h2>
            {move || export_error.get().map(|e| view! { <p class="banner error" role="alert">{e}</p> })}
            {move || match runs.get() {
                None => view! { <p class="status empty">"Loading…"</p> }.into_any(),
                Some(Err(e)) => view! { <p class="banner error" role="alert">{e}</p> }.into_any(),
                Some(Ok(list)) if list.is_empty() => view! { <p class="status empty">"No runs yet."</p> }.into_any(),
                Some(Ok(list)) => view! {
                    <table id="history">
                        <thead><tr>
                            <th>"compare"</th><th>"run"</th><th>"name"</th><th>"target"</th><th>"status"</th><th>"workload"</th>
                            <th>"read MB/s"</th><th>"write MB/s"</th><th>"IOPS"</th><th>"export"</th>
                        </tr></thead>
                        <tbody>{list.into_iter().map(row).collect_view()}</tbody>
                    </table>
                }.into_any(),
            }}
            <Compare token=token runs=runs picked=picked/>
        </section>
    }
}

/// Downloads a run's export (the same document as the CLI's `--json`, or its CSV); a failure
/// is shown in `error`.
fn save_export(
    token: StoredValue<String>,
    id: i64,
    format: &'static str,
    error: RwSignal<Option<String>>,
) {
    let t = token.get_value();
    leptos::task::spawn_local(async move {
        let saved = crate::api::export(&t, id, format).await.and_then(|text| {
            let mime = if format == "csv" {
                "text/csv"
            } else {
                "application/json"
            };
            save_file(&format!("diskscope-run-{id}.{format}"), mime, &text)
        });
        error.set(saved.err());
    });
}

#[cfg(target_arch = "wasm32")]
use crate::session::save_file;

#[cfg(not(target_arch = "wasm32"))]
fn save_file(_: &str, _: &str, _: &str) -> Result<(), String> {
    Err("saving files needs a browser".into())
}

/// Two or more picked runs: their throughput on shared axes and B/A ratios per metric.
#[component]
fn Compare(
    token: StoredValue<String>,
    runs: RwSignal<Option<Result<Vec<shared::api::RunInfo>, String>>>,
    picked: RwSignal<Vec<i64>>,
) -> impl IntoView {
    let series = RwSignal::new(Vec::<(i64, Vec<shared::Sample>)>::new());
    Effect::new(move |_| {
        let ids = picked.get();
        let t = token.get_value();
        leptos::task::spawn_local(async move {
            let mut out = Vec::new();
            for id in ids {
                if let Ok(s) = crate::api::samples(&t, id).await {
                    out.push((id, s));
                }
            }
            series.set(out);
        });
    });
    let canvas = NodeRef::<Canvas>::new();
    Effect::new(move |_| {
        let lines: Vec<Line> = series.with(|all| {
            all.iter()
                .enumerate()
                .map(|(i, (id, samples))| {
                    let name = format!("run {id}");
                    let pts = samples
                        .iter()
                        .map(|x| (x.end_ns as f64 / 1e9, x.total_mb_s()))
                        .collect();
                    (name, PALETTE[i % PALETTE.len()], pts)
                })
                .collect()
        });
        if let Some(el) = canvas.get() {
            draw_chart(&el, "Throughput by run", "MB/s", false, lines, false);
        }
    });
    let table = move || {
        let ids = picked.get();
        let list = runs.with(|r| {
            r.as_ref()
                .and_then(|r| r.as_ref().ok())
                .cloned()
                .unwrap_or_default()
        });
        let find = |id: i64| {
            list.iter()
                .find(|r| r.id == id)
                .map(|r| r.summary.clone().unwrap_or_default())
        };
        let Some(a) = ids.first().and_then(|&id| find(id)) else {
            return Vec::new();
        };
        ids.iter()
            .skip(1)
            .filter_map(|&id| find(id).map(|b| (id, crate::compare::ratios(&a, &b))))
            .flat_map(|(id, rs)| {
                let first = ids[0];
                rs.into_iter().map(move |r| {
                    view! {
                        <tr>
                            <td>{format!("run {id} / run {first}")}</td>
                            <td>{r.metric}</td>
                            <td class="num">{format!("{:.1}", r.a)}</td>
                            <td class="num">{format!("{:.1}", r.b)}</td>
                            <td class="num ratio">{r.label()}</td>
                        </tr>
                    }
                })
            })
            .collect::<Vec<_>>()
    };
    view! {
        <Show when=move || picked.with(|p| p.len() >= 2)>
            <section class="compare" id="compare">
                <h2>"Compare"</h2>
                <canvas node_ref=canvas id="compare-chart" width="960" height="300"></canvas>
                <table id="ratios">
                    <thead><tr><th>"B / A"</th><th>"metric"</th><th>"A"</th><th>"B"</th><th>"ratio"</th></tr></thead>
                    <tbody>{table}</tbody>
                </table>
            </section>
        </Show>
    }
}

const PALETTE: [(u8, u8, u8); 6] = [
    (52, 120, 246),
    (230, 80, 60),
    (60, 160, 90),
    (240, 160, 40),
    (150, 90, 200),
    (90, 90, 90),
];

#[component]
fn RunStatusLine(live: RwSignal<LiveState>) -> impl IntoView {
    move || {
        live.with(|s| match (s.run_id, s.samples.last()) {
            (None, _) => {
                view! { <p class="status empty">"No run yet. Waiting for the next one…"</p> }
                    .into_any()
            }
            (Some(id), last) => {
                let (mbs, iops, p99, bytes) = last
                    .map(|x| {
                        (
                            format!("{:.1} MB/s", x.total_mb_s()),
                            format!("{:.0} IOPS", x.total_iops()),
                            format_ns(x.read.lat.p99_ns.max(x.write.lat.p99_ns)),
                            format_bytes(x.read.cum_bytes + x.write.cum_bytes),
                        )
                    })
                    .unwrap_or_default();
                view! {
                    <p class="status">
                        <span class="run">"run " {id}</span>
                        <span class="state">{s.status.clone()}</span>
                        <span id="sample-count" class="samples">{s.samples.len()} " samples"</span>
                        <span class="big">{mbs}</span>
                        <span>{iops}</span>
                        <span>"p99 " {p99}</span>
                        <span>{bytes}</span>
                    </p>
                }
                .into_any()
            }
        })
    }
}

/// One live chart: the series `pick` takes from the samples, redrawn on every sample.
#[component]
fn LiveChart(
    live: RwSignal<LiveState>,
    dark: bool,
    id: &'static str,
    title: &'static str,
    y_desc: &'static str,
    log: bool,
    pick: fn(&LiveState) -> Vec<Line>,
) -> impl IntoView {
    let canvas = NodeRef::<Canvas>::new();
    Effect::new(move |_| {
        let lines = live.with(pick);
        if let Some(el) = canvas.get() {
            draw_chart(&el, title, y_desc, log, lines, dark);
        }
    });
    view! { <canvas node_ref=canvas id=id width="960" height="300"></canvas> }
}

type Line = (String, (u8, u8, u8), Vec<(f64, f64)>);

fn over_time(s: &LiveState, f: impl Fn(&shared::Sample) -> f64) -> Vec<(f64, f64)> {
    s.samples
        .iter()
        .map(|x| (x.end_ns as f64 / 1e9, f(x)))
        .collect()
}

const READ: (u8, u8, u8) = (52, 120, 246);
const WRITE: (u8, u8, u8) = (230, 80, 60);

fn throughput(s: &LiveState) -> Vec<Line> {
    vec![
        ("read".into(), READ, over_time(s, |x| x.read.mb_s)),
        ("write".into(), WRITE, over_time(s, |x| x.write.mb_s)),
    ]
}

fn iops(s: &LiveState) -> Vec<Line> {
    vec![
        ("read".into(), READ, over_time(s, |x| x.read.iops)),
        ("write".into(), WRITE, over_time(s, |x| x.write.iops)),
    ]
}

/// p50, p99 and max of whichever directions ran, in µs.
fn latency(s: &LiveState) -> Vec<Line> {
    let us = |ns: u64| ns as f64 / 1e3;
    let both = |x: &shared::Sample, f: fn(&shared::LatencyStats) -> u64| {
        us(f(&x.read.lat).max(f(&x.write.lat)))
    };
    vec![
        (
            "p50".into(),
            (60, 160, 90),
            over_time(s, |x| both(x, |l| l.p50_ns)),
        ),
        (
            "p99".into(),
            (240, 160, 40),
            over_time(s, |x| both(x, |l| l.p99_ns)),
        ),
        (
            "max".into(),
            (200, 60, 60),
            over_time(s, |x| both(x, |l| l.max_ns)),
        ),
    ]
}

#[cfg(target_arch = "wasm32")]
fn draw_chart(
    el: &web_sys::HtmlCanvasElement,
    title: &str,
    y_desc: &str,
    log: bool,
    lines: Vec<Line>,
    dark: bool,
) {
    use crate::chart::{Series, YAxis};
    use plotters::prelude::*;
    let Some(backend) = plotters_canvas::CanvasBackend::with_canvas_object(el.clone()) else {
        return;
    };
    let root = backend.into_drawing_area();
    let series: Vec<Series<'_>> = lines
        .into_iter()
        .map(|(name, (r, g, b), points)| Series {
            name: name.into(),
            color: RGBColor(r, g, b),
            points,
        })
        .collect();
    let axis = if log { YAxis::Log } else { YAxis::Linear };
    let _ = crate::chart::draw(&root, title, y_desc, &series, axis, dark);
}

#[cfg(not(target_arch = "wasm32"))]
fn draw_chart(_: &web_sys::HtmlCanvasElement, _: &str, _: &str, _: bool, _: Vec<Line>, _: bool) {}
