//! The live run: status, progress with ETA, the charts updating every interval, and for
//! operators a quick start and the stop button.

use super::chart_view::ChartView;
use super::ctx;
use crate::charts;
use leptos::prelude::*;
use shared::api::{CreateRun, RunInfo};
use shared::units::format_bytes;

#[component]
pub fn LiveView() -> impl IntoView {
    let c = ctx();
    let live = c.live;
    // The followed run's stored record (spec and target), for progress and markers.
    let info = RwSignal::new(None::<RunInfo>);
    // Fetched when the run or its state changes (its end: the stored result).
    let key = Memo::new(move |_| live.with(|s| (s.run_id, s.status.clone())));
    super::newest_answer(
        key,
        info,
        Box::new(move |(id, _)| {
            let t = c.token.get_value();
            Box::pin(async move { crate::api::run(&t, id?).await.ok() })
        }),
    );
    let spec = move || {
        info.with(|i| {
            i.as_ref()
                .filter(|i| Some(i.id) == live.with(|s| s.run_id))
                .map(|i| i.spec.clone())
        })
    };
    let quick = move |_| {
        let t = c.token.get_value();
        leptos::task::spawn_local(async move {
            let result = async {
                let target = crate::api::scratch_target(&t).await?;
                let req = CreateRun {
                    target,
                    spec: None,
                    preset: Some("quick".into()),
                    name: None,
                    confirm: None,
                    options: None,
                    also: Vec::new(),
                    repeat: None,
                    repeat_idle_ms: None,
                    fio_job: None,
                    ..Default::default()
                };
                crate::api::start(&t, &req).await
            }
            .await;
            c.report(result);
        });
    };
    let stop = move |_| {
        let t = c.token.get_value();
        if let Some(id) = live.with_untracked(|s| s.run_id) {
            leptos::task::spawn_local(async move {
                c.report(crate::api::stop(&t, id).await);
            });
        }
    };
    let chart =
        move |f: fn(&[shared::Sample], Option<&shared::WorkloadSpec>) -> crate::plot::ChartData| {
            Signal::derive(move || {
                let s = spec();
                live.with(|l| f(&l.samples, s.as_ref()))
            })
        };
    let temp = Memo::new(move |_| live.with(|l| charts::temperature(&l.samples)));
    let position = Memo::new(move |_| {
        let s = spec();
        live.with(|l| charts::by_position(&l.samples, s.as_ref()))
    });
    let dark = c.kiosk;
    // The kiosk's charts are drawn taller: two rows of them fill a 1080p screen.
    let size = c.kiosk.then_some((960, 340));
    let has_samples = move || live.with(|s| !s.samples.is_empty());
    view! {
        <section class="live">
            <Show when=move || c.operator()>
                <div class="controls">
                    <button id="start-quick" on:click=quick>"Quick test on the scratch file"</button>
                    <button id="stop" on:click=stop disabled=move || live.with(|s| s.status != "running")>"Stop"</button>
                </div>
            </Show>
            {c.kiosk.then(|| view! { <KioskHead info=info/> })}
            {(!c.kiosk).then(|| view! { <RunStatusLine info/> })}
            <ProgressBar info=info/>
            // Before a run's first sample there is nothing to draw: no empty axes.
            <Show when=has_samples>
                <div class="charts">
                    <ChartView id="throughput".into() data=chart(charts::throughput) dark=dark bare=dark size=size/>
                    <ChartView id="iops".into() data=chart(charts::iops) dark=dark bare=dark size=size/>
                    <ChartView id="latency".into() data=Signal::derive(move || live.with(|l| charts::latency(&l.samples))) dark=dark bare=dark size=size/>
                    {move || temp.get().map(|d| view! { <ChartView id="temperature".into() data=Signal::derive(move || d.clone()) dark=dark bare=dark size=size/> })}
                    {move || position.get().map(|d| view! { <ChartView id="position".into() data=Signal::derive(move || d.clone()) dark=dark bare=dark size=size/> })}
                </div>
            </Show>
        </section>
    }
}

/// The kiosk's head, readable from across the room: the test, target and device, the
/// current figure in very large type, IOPS, p99 and temperature; between runs, the last
/// result's headline.
#[component]
fn KioskHead(info: RwSignal<Option<RunInfo>>) -> impl IntoView {
    let c = ctx();
    let live = c.live;
    let last = RwSignal::new(None::<RunInfo>);
    // The newest run, reloaded whenever a run starts or ends.
    let key = Memo::new(move |_| live.with(|s| (s.run_id, s.status.clone())));
    super::newest_answer(
        key,
        last,
        Box::new(move |_| {
            let t = c.token.get_value();
            Box::pin(async move {
                let l = crate::api::latest_at("", &t).await.ok()?;
                l.runs.into_iter().next()
            })
        }),
    );
    let running = move || live.with(|s| s.status == "running" && s.run_id.is_some());
    let what = move || {
        info.with(|i| {
            i.as_ref().map(|r| {
                let model = c
                    .find_target(|t| t.path == r.target, |t| t.model.clone())
                    .flatten();
                (
                    match &r.name {
                        Some(n) => format!("{} · {n}", crate::headline::test_name(r)),
                        None => crate::headline::test_name(r),
                    },
                    format!(
                        "{}{}",
                        r.target,
                        model.map(|m| format!(" · {m}")).unwrap_or_default()
                    ),
                )
            })
        })
    };
    let figure = move || live.with(|s| s.samples.last().map(crate::headline::live_figures));
    view! {
        <div class="kiosk-head" id="kiosk-head">
            {move || what().map(|(test, target)| view! {
                <p class="kiosk-what"><span class="kiosk-test" id="kiosk-test">{test}</span>
                    <span class="kiosk-target" id="kiosk-target">{target}</span>
                    <span class="kiosk-state">{move || live.with(|s| s.status.clone())}</span></p>
            })}
            <Show when=running fallback=move || view! {
                <div class="kiosk-last" id="kiosk-last">
                    {move || match last.get() {
                        // The record fetched while the run went, until the one after its end
                        // comes: not a result yet.
                        Some(r) if r.status == shared::RunStatus::Running => view! { <p class="kiosk-label">"Loading the result…"</p> }.into_any(),
                        Some(r) => view! {
                            <p class="kiosk-label">"Last result · "
                                <a class="kiosk-link" id="kiosk-result-link" href=crate::route::href(&crate::route::Route::Run(r.id))>{format!("run {}", r.id)}</a>
                                {format!("{} · {} · {}", r.name.as_ref().map(|n| format!(" “{n}”")).unwrap_or_default(), crate::headline::test_name(&r), r.status.as_str())}</p>
                            <p class="kiosk-headline" id="kiosk-headline">{r.line.clone()}</p>
                        }.into_any(),
                        None => view! { <p class="kiosk-label">"No run yet: the next run on this agent shows here."</p> }.into_any(),
                    }}
                </div>
            }>
                <p class="kiosk-figure">
                    <span class="kiosk-big" id="kiosk-big">{move || figure().map(|f| f.big).unwrap_or_else(|| "–".into())}</span>
                    <span class="kiosk-unit" id="kiosk-unit">{move || figure().map(|f| f.unit).unwrap_or_else(|| "MB/s".into())}</span>
                    <span class="kiosk-sub" id="kiosk-sub">{move || figure().map(|f| f.sub).unwrap_or_default()}</span>
                    <span class="kiosk-temp" id="kiosk-temp">{move || figure().and_then(|f| f.temp).unwrap_or_default()}</span>
                </p>
            </Show>
        </div>
    }
}

#[component]
fn RunStatusLine(info: RwSignal<Option<RunInfo>>) -> impl IntoView {
    let c = ctx();
    let live = c.live;
    move || {
        live.with(|s| match (s.run_id, s.samples.last()) {
            (None, _) if c.operator() => view! {
                <p class="status empty">"No run yet. Press Quick test for a 10-second look at the scratch file, or set one up under New test."</p>
            }
            .into_any(),
            (None, _) => {
                view! { <p class="status empty">"No run yet. Waiting for the next one…"</p> }
                    .into_any()
            }
            // The run ended: its stored result, not its last interval.
            (Some(id), _) if s.status != "running" => {
                let stored = info.with(|i| {
                    i.as_ref()
                        .filter(|r| r.id == id && r.status.as_str() != "running")
                        .map(|r| (crate::headline::test_name(r), r.line.clone()))
                });
                let (test, line) = stored.unwrap_or_else(|| (String::new(), "loading the result…".into()));
                view! {
                    <p class="status ended" id="live-end">
                        <span class="run">"run " {id}</span>
                        <span class="state">{s.status.clone()}</span>
                        <span class="test">{test}</span>
                        <span class="result" id="live-result">{line}</span>
                        <button class="link" id="open-result" on:click=move |_| c.tab.set(super::Tab::Run(id))>"Open the result →"</button>
                    </p>
                }
                .into_any()
            }
            (Some(id), last) => {
                let f = last.map(crate::headline::live_figures);
                view! {
                    <p class="status">
                        <span class="run">"run " {id}</span>
                        <span class="state">{s.status.clone()}</span>
                        <span id="sample-count" class="samples">{s.samples.len()} " samples"</span>
                        {f.map(|f| view! {
                            <span class="big">{f.big}" "{f.unit}</span>
                            <span>{f.sub}</span>
                        })}
                    </p>
                }
                .into_any()
            }
        })
    }
}

/// The step that runs, bytes done of the step, share of the whole run and time left,
/// counted through the run's plan.
#[component]
fn ProgressBar(info: RwSignal<Option<RunInfo>>) -> impl IntoView {
    let c = ctx();
    move || {
        let run = info.get()?;
        let p = c.live.with(|s| {
            (s.run_id == Some(run.id)).then(|| {
                crate::progress::progress(
                    &run.plan,
                    &run.spec,
                    c.target_size(&run.target),
                    &s.samples,
                )
            })
        })?;
        let running = c.live.with(|s| s.status == "running");
        if !running {
            return None;
        }
        let pct = p.fraction.map(|f| f * 100.0);
        let bytes = match p.total_bytes {
            Some(t) => format!("{} of {}", format_bytes(p.done_bytes), format_bytes(t)),
            None => format_bytes(p.done_bytes),
        };
        let eta = match p.eta_s {
            Some(e) => format!("ETA {}", crate::progress::fmt_eta(e)),
            None => "ETA unknown".into(),
        };
        Some(view! {
            <div class="progress">
                <progress id="progress" max="100" value=pct.unwrap_or(0.0)></progress>
                <span id="progress-pct">{pct.map(|x| format!("{x:.0} %")).unwrap_or_default()}</span>
                {p.step.map(|s| view! { <span id="progress-step">{s}</span> })}
                <span id="progress-bytes">{bytes}</span>
                <span>{format!("{} elapsed", crate::progress::fmt_eta(p.elapsed_s))}</span>
                <span id="eta">{eta}</span>
            </div>
        })
    }
}
