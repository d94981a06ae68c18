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
            <LiveChart live=live dark=kiosk/>
            {(!kiosk).then(|| view! { <History token=tok live=live/> })}
        </main>
    }
}

/// The latest runs, reloaded whenever the followed run changes state.
#[component]
fn History(token: StoredValue<String>, live: RwSignal<LiveState>) -> impl IntoView {
    let runs = RwSignal::new(None::<Result<Vec<shared::api::RunInfo>, String>>);
    Effect::new(move |_| {
        live.with(|s| (s.run_id, s.status.clone()));
        let t = token.get_value();
        leptos::task::spawn_local(async move {
            runs.set(Some(crate::api::runs(&t).await.map(|l| l.runs)));
        });
    });
    let row = |r: shared::api::RunInfo| {
        let s = r.summary.unwrap_or_default();
        let spec = r.spec;
        view! {
            <tr>
                <td>{r.id}</td>
                <td>{r.name.or(r.preset).unwrap_or_default()}</td>
                <td class="path">{r.target}</td>
                <td class="status">{r.status.as_str()}</td>
                <td>{format!("{} {} QD{}×{}", spec.rw, format_bytes(spec.bs), spec.iodepth, spec.jobs)}</td>
                <td class="num">{format!("{:.1}", s.read.mb_s)}</td>
                <td class="num">{format!("{:.1}", s.write.mb_s)}</td>
                <td class="num">{format!("{:.0}", s.read.iops + s.write.iops)}</td>
            </tr>
        }
    };
    view! {
        <section class="history">
            <h2>"Recent runs"</h2>
            {move || match runs.get() {
                None => view! { <p class="status empty">"Loading…"</p> }.into_any(),
                Some(Err(e)) => view! { <p class="banner error" role="alert">{e}</p> }.into_any(),
                Some(Ok(list)) if list.is_empty() => view! { <p class="status empty">"No runs yet."</p> }.into_any(),
                Some(Ok(list)) => view! {
                    <table id="history">
                        <thead><tr>
                            <th>"run"</th><th>"name"</th><th>"target"</th><th>"status"</th><th>"workload"</th>
                            <th>"read MB/s"</th><th>"write MB/s"</th><th>"IOPS"</th>
                        </tr></thead>
                        <tbody>{list.into_iter().map(row).collect_view()}</tbody>
                    </table>
                }.into_any(),
            }}
        </section>
    }
}

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

#[component]
fn LiveChart(live: RwSignal<LiveState>, dark: bool) -> impl IntoView {
    let canvas = NodeRef::<Canvas>::new();
    Effect::new(move |_| {
        let (read, write) = live.with(|s| {
            let pt = |f: fn(&shared::Sample) -> f64| -> Vec<(f64, f64)> {
                s.samples
                    .iter()
                    .map(|x| (x.end_ns as f64 / 1e9, f(x)))
                    .collect()
            };
            (pt(|x| x.read.mb_s), pt(|x| x.write.mb_s))
        });
        if let Some(el) = canvas.get() {
            draw_throughput(&el, read, write, dark);
        }
    });
    view! { <canvas node_ref=canvas id="throughput" width="960" height="320"></canvas> }
}

#[cfg(target_arch = "wasm32")]
fn draw_throughput(
    el: &web_sys::HtmlCanvasElement,
    read: Vec<(f64, f64)>,
    write: Vec<(f64, f64)>,
    dark: bool,
) {
    use plotters::prelude::*;
    let Some(backend) = plotters_canvas::CanvasBackend::with_canvas_object(el.clone()) else {
        return;
    };
    let root = backend.into_drawing_area();
    let series = [
        crate::chart::Series {
            name: "read",
            color: RGBColor(52, 120, 246),
            points: read,
        },
        crate::chart::Series {
            name: "write",
            color: RGBColor(230, 80, 60),
            points: write,
        },
    ];
    let _ = crate::chart::draw(&root, "Throughput", "MB/s", &series, dark);
}

#[cfg(not(target_arch = "wasm32"))]
fn draw_throughput(
    _: &web_sys::HtmlCanvasElement,
    _: Vec<(f64, f64)>,
    _: Vec<(f64, f64)>,
    _: bool,
) {
}
