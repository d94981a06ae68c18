//! One stored run: what ran where, the summary table with percentiles, its charts, export,
//! and delete for operators.

use super::chart_view::ChartView;
use super::{ctx, save_export, ConfirmButton, Tab};
use crate::charts;
use leptos::prelude::*;
use shared::api::RunInfo;
use shared::units::{format_bytes, format_ns};
use shared::{DirSample, Sample};

/// The summary rows of a run: one per direction that moved data, and the flushes made
/// during the run (fsync/fdatasync every N writes: their count per second and latency).
pub fn summary_rows(info: &RunInfo) -> Vec<(&'static str, DirSample)> {
    let Some(s) = &info.summary else {
        return Vec::new();
    };
    [("read", s.read), ("write", s.write), ("trim", s.trim)]
        .into_iter()
        .chain(s.flush.map(|f| ("flush", f)))
        .filter(|(_, d)| d.ios > 0)
        .collect()
}

#[component]
pub fn RunResults(id: i64) -> impl IntoView {
    let c = ctx();
    let info = LocalResource::new(move || {
        let t = c.token.get_value();
        async move { crate::api::run(&t, id).await }
    });
    let samples = RwSignal::new(Vec::<Sample>::new());
    // The charts' range: the whole run, or the samples `seq` from..=to (zoomed in).
    let zoom = RwSignal::new(None::<(u64, u64)>);
    // Each load is numbered; only the newest one's answer is drawn (a slow whole-run
    // envelope arriving after a zoom must not replace it).
    let generation = StoredValue::new(0u64);
    // A load is on its way: the samples shown are the previous range's, so the status must
    // not count them as this range's.
    let loading = RwSignal::new(false);
    let load = move |range: Option<(u64, u64)>| {
        let t = c.token.get_value();
        zoom.set(range);
        loading.set(true);
        generation.update_value(|g| *g += 1);
        let mine = generation.get_value();
        leptos::task::spawn_local(async move {
            let got = match range {
                Some((a, b)) => crate::api::samples_range(&t, id, a, b).await,
                None => crate::api::samples(&t, id).await,
            };
            if generation.try_get_value() != Some(mine) {
                return;
            }
            if let Some(s) = c.report(got) {
                samples.set(s);
            }
            loading.set(false);
        });
    };
    let (from_s, to_s) = (RwSignal::new(String::new()), RwSignal::new(String::new()));
    let zoom_error = RwSignal::new(None::<String>);
    let zoom_to_typed = move || {
        let interval_ms = info.with_untracked(|i| {
            i.as_ref()
                .and_then(|r| r.as_ref().ok())
                .map_or(1000, |r| r.spec.interval_ms.max(1))
        });
        match crate::form::zoom_range(&from_s.get_untracked(), &to_s.get_untracked(), interval_ms) {
            Ok(r) => {
                zoom_error.set(None);
                load(Some(r));
            }
            Err(e) => zoom_error.set(Some(e)),
        }
    };
    let zoom_status = zoom_status(samples, info, zoom, loading);
    load(None);
    // A range dragged on a time chart: the same as typing it.
    let on_range = Callback::new(move |(a, b): (f64, f64)| {
        from_s.set(format!("{:.1}", a.max(0.0)));
        to_s.set(format!("{:.1}", b.max(0.0)));
        zoom_to_typed();
    });
    let run = move || info.with(|i| i.as_ref().and_then(|r| r.as_ref().ok()).cloned());
    let steps_view = move || {
        let r = run()?;
        // cdm, cdm-peak and atto open with their grid or bars already.
        let charts = r.kind().charts();
        (!r.steps.is_empty())
            .then(|| view! { <StepsView id steps=r.steps grid=charts.grid sweep=charts.sweep load=charts.load/> })
    };
    let analysis_view = move || analysis_panel(run());
    let delete = Callback::new(move |()| {
        let t = c.token.get_value();
        leptos::task::spawn_local(async move {
            if c.report(crate::api::delete(&t, id).await).is_some() {
                c.tab.set(Tab::History);
            }
        });
    });
    let head = move || {
        info.get().map(|r| match r {
            Err(e) => view! { <p class="banner error" role="alert">{e}</p> }.into_any(),
            Ok(r) => view! { <RunHead r samples/> }.into_any(),
        })
    };
    view! {
        <section class="results" id="results">
            <div class="controls">
                <button on:click=move |_| c.tab.set(Tab::History)>"← History"</button>
                <button class="export-json" on:click=move |_| save_export(id, "json")>"Export JSON"</button>
                <button class="export-csv" on:click=move |_| save_export(id, "csv")>"Export CSV"</button>
                <button class="export-fio" title="fio's JSON document, for fio-plot and the tools that read fio" on:click=move |_| save_export(id, "fio-json")>"Export fio JSON"</button>
                <Show when=move || c.operator()>
                    <ConfirmButton class="delete" label="Delete"
                        confirm_label=format!("Really delete run {id}?") on_confirm=delete/>
                </Show>
            </div>
            {move || if info.get().is_none() { Some(view! { <p class="status empty">"Loading…"</p> }) } else { None }}
            {head}
            {move || super::preset_results::panels(run())}
            {move || super::trust::panels(run())}
            {analysis_view}
            <ZoomControls id from_s to_s zoom zoom_error status=zoom_status
                on_apply=Callback::new(move |()| zoom_to_typed())
                on_reset=Callback::new(move |()| { from_s.set(String::new()); to_s.set(String::new()); zoom_error.set(None); load(None) })/>
            <RunCharts id samples info on_range/>
            {steps_view}
        </section>
    }
}

/// Where each stored step (and round) after the first began, in seconds.
fn step_starts(r: &RunInfo) -> Vec<f64> {
    r.steps
        .iter()
        .skip(1)
        .map(|s| s.start_ns as f64 / 1e9)
        .collect()
}

/// The analyses' findings in a sentence each.
fn analysis_panel(r: Option<RunInfo>) -> Option<impl IntoView> {
    let lines = r?.findings;
    (!lines.is_empty()).then(|| {
        view! {
            <section class="analysis" id="analysis">
                <h3>"What the analyses found"</h3>
                <ul>{lines.into_iter().map(|l| view! { <li>{l}</li> }).collect_view()}</ul>
            </section>
        }
    })
}

/// What ran where and what it measured: title, workload line, error, the headline (the
/// preset's result as its users know it), environment, the targets of a multi-target run,
/// and for a single workload the summary table.
#[component]
fn RunHead(r: RunInfo, samples: RwSignal<Vec<Sample>>) -> impl IntoView {
    let duration = r
        .summary
        .as_ref()
        .map(|s| format!("{:.1} s", s.duration_ns as f64 / 1e9))
        .unwrap_or_default();
    let rows = summary_rows(&r);
    view! {
        <h2>{format!("Run {} {}", r.id, r.name.clone().or(r.preset.clone()).unwrap_or_default())}</h2>
        <p class="meta">
            <span class="status-tag">{r.status.as_str()}</span>
            <span class="path">{r.target.clone()}</span>
            // A preset's first step is not what the run was.
            <span>{if r.steps.len() > 1 { format!("{} steps", r.steps.len()) } else { r.spec.label() }}</span>
            <span>{crate::format::fmt_time_ms(r.created_ms)}</span>
            <span>{duration}</span>
        </p>
        {r.error.clone().map(|e| view! { <p class="banner error" role="alert">{e.message}</p> })}
        <super::headline::HeadlineView run=r.clone() samples/>
        {r.environment.clone().map(|env| view! { <EnvironmentLine env/> })}
        {r.analysis.as_ref().and_then(|a| a.plausibility.clone()).map(|p| view! {
            <p class="meta environment" id="plausibility">{p.summary_line()}</p>
        })}
        {(!r.targets.is_empty()).then(|| view! { <TargetsTable targets=r.targets.clone()/> })}
        // The whole-run aggregate means something only for one workload; a preset's
        // headline and steps say what each of its tests measured.
        {(r.steps.len() <= 1).then(|| view! { <SummaryTable rows/> })}
    }
}

/// Backend, device and file system, the measured I/O path, and the run's warnings.
#[component]
fn EnvironmentLine(env: shared::Environment) -> impl IntoView {
    let mut facts = vec![format!("backend {}", env.backend)];
    if let Some(d) = &env.device_before {
        facts.push(format!(
            "device {} ({}{})",
            d.path,
            d.transport,
            d.model
                .as_ref()
                .map(|m| format!(", {m}"))
                .unwrap_or_default()
        ));
    }
    if let Some(f) = &env.filesystem {
        facts.push(format!(
            "{} on {} ({} free, O_DIRECT {})",
            f.fs_type,
            f.mount_point,
            format_bytes(f.free_bytes),
            if f.direct_io { "works" } else { "refused" }
        ));
    }
    let io_path = env.io_path.as_ref().and_then(shared::IoPath::summary_line);
    view! {
        <p class="meta environment">{facts.join(" · ")}</p>
        {io_path.map(|l| view! { <p class="meta environment" id="io-path">{l}</p> })}
        {(!env.warnings.is_empty()).then(|| view! {
            <ul class="warnings" id="warnings">{shared::report::said_once(&env.warnings).into_iter().map(|w| view! { <li>{w}</li> }).collect_view()}</ul>
        })}
    }
}

/// Each target's figures in a multi-target run.
#[component]
fn TargetsTable(targets: Vec<shared::TargetPart>) -> impl IntoView {
    view! {
        <table id="targets-summary">
            <thead><tr><th>"target"</th><th class="num">"read MB/s"</th><th class="num">"write MB/s"</th><th class="num">"IOPS"</th><th class="num">"p99"</th></tr></thead>
            <tbody>{targets.iter().enumerate().map(|(i, t)| view! {
                <tr>
                    <td>{match &t.job {
                        // A job file's job that ran beside the others (several may share a file).
                        Some(job) => format!("{}. {job} ({})", i + 1, t.path),
                        None => format!("{}. {}", i + 1, t.path),
                    }}</td>
                    <td class="num">{format!("{:.1}", t.summary.read.mb_s)}</td>
                    <td class="num">{format!("{:.1}", t.summary.write.mb_s)}</td>
                    <td class="num">{format!("{:.0}", t.summary.read.iops + t.summary.write.iops)}</td>
                    <td class="num">{format_ns(t.summary.read.lat.p99_ns.max(t.summary.write.lat.p99_ns))}</td>
                </tr>
            }).collect_view()}</tbody>
        </table>
    }
}

/// Rate, data and latency percentiles per direction that moved data.
#[component]
fn SummaryTable(rows: Vec<(&'static str, DirSample)>) -> impl IntoView {
    view! {
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
}

/// A preset's steps: the CrystalDiskMark grid or block-size sweep when the steps make
/// one, then every step's figures.
#[component]
fn StepsView(
    id: i64,
    steps: Vec<shared::StepReport>,
    grid: bool,
    sweep: bool,
    load: bool,
) -> impl IntoView {
    let grid = crate::grid::grid_from_steps(&steps).filter(|_| grid);
    let sweep = crate::grid::sweep_from_steps(&steps).filter(|_| sweep);
    let load = load.then(|| shared::steps::load_curves(&steps));
    view! {
        {grid.map(|rows| view! { <CdmGrid rows/> })}
        {sweep.map(|pts| view! {
            <ChartView id=format!("run-{id}-sweep") data=Signal::derive(move || charts::sweep(&pts))/>
        })}
        {load.map(|c| view! {
            <ChartView id=format!("run-{id}-load") data=Signal::derive(move || charts::load_latency(&c))/>
        })}
        <h3>"Steps"</h3>
        <table id="steps">
            <thead><tr><th>"step"</th><th class="num">"MB/s"</th><th class="num">"IOPS"</th><th class="num">"p99"</th><th class="num">"starts at"</th></tr></thead>
            <tbody>{steps.iter().map(|s| {
                let d = &s.summary;
                view! {
                    <tr>
                        <td>{shared::steps::step_label(&s.name, s.pass)}</td>
                        <td class="num">{format!("{:.1}", d.read.mb_s + d.write.mb_s)}</td>
                        <td class="num">{format!("{:.0}", d.read.iops + d.write.iops)}</td>
                        <td class="num">{format_ns(d.read.lat.p99_ns.max(d.write.lat.p99_ns))}</td>
                        <td class="num">{crate::plot::fmt_seconds(s.start_ns as f64 / 1e9)}</td>
                    </tr>
                }
            }).collect_view()}</tbody>
        </table>
    }
}

/// CrystalDiskMark's grid: best and mean MB/s of each test, read and write.
#[component]
fn CdmGrid(rows: Vec<crate::grid::GridRow>) -> impl IntoView {
    let cell = |v: Option<f64>| v.map(|x| format!("{x:.2}")).unwrap_or_else(|| "–".into());
    view! {
        <h3>"CrystalDiskMark grid (MB/s)"</h3>
        <table id="cdm-grid" class="cdm">
            <thead><tr><th>"test"</th><th class="num">"Read (best)"</th><th class="num">"Read (mean)"</th>
                <th class="num">"Write (best)"</th><th class="num">"Write (mean)"</th><th class="num">"passes"</th></tr></thead>
            <tbody>{rows.into_iter().map(|g| view! {
                <tr>
                    <th>{g.label}</th>
                    <td class="num big">{cell(g.read_best)}</td>
                    <td class="num">{cell(g.read_mean)}</td>
                    <td class="num big">{cell(g.write_best)}</td>
                    <td class="num">{cell(g.write_mean)}</td>
                    <td class="num">{g.passes}</td>
                </tr>
            }).collect_view()}</tbody>
        </table>
    }
}

/// What the charts show: loading, a zoomed range, or the envelope of a long run.
fn zoom_status(
    samples: RwSignal<Vec<Sample>>,
    info: LocalResource<Result<RunInfo, String>>,
    zoom: RwSignal<Option<(u64, u64)>>,
    loading: RwSignal<bool>,
) -> Signal<String> {
    Signal::derive(move || {
        let n = samples.with(Vec::len);
        let total = info.with(|i| {
            i.as_ref()
                .and_then(|r| r.as_ref().ok())
                .and_then(|r| r.summary.as_ref())
                .map_or(0, |s| s.samples)
        });
        match zoom.get() {
            _ if loading.get() || (n == 0 && total > 0) => "loading samples…".to_string(),
            Some((a, b)) => format!("samples {a}–{b}: {n} points"),
            None if total as usize > n => {
                format!("{n} points for {total} samples (slowest and fastest of each stretch)")
            }
            None => String::new(),
        }
    })
}

/// The charts' range typed as seconds (or dragged on a chart), back to the whole run, and
/// the export of every 10 ms bucket.
#[component]
fn ZoomControls(
    id: i64,
    from_s: RwSignal<String>,
    to_s: RwSignal<String>,
    zoom: RwSignal<Option<(u64, u64)>>,
    zoom_error: RwSignal<Option<String>>,
    status: Signal<String>,
    on_apply: Callback<()>,
    on_reset: Callback<()>,
) -> impl IntoView {
    view! {
        <div class="controls zoom" id="zoom">
            <label>"From (s) "<input id="zoom-from" inputmode="decimal" size="8" prop:value=from_s
                on:input=move |ev| from_s.set(event_target_value(&ev))/></label>
            <label>" to (s) "<input id="zoom-to" inputmode="decimal" size="8" prop:value=to_s
                on:input=move |ev| to_s.set(event_target_value(&ev))/></label>
            <button id="zoom-apply" on:click=move |_| on_apply.run(())>"Zoom"</button>
            <button id="zoom-reset" on:click=move |_| on_reset.run(())
                disabled=move || zoom.get().is_none()>"Whole run"</button>
            <button class="export-timeline" on:click=move |_| super::save_timeline(id)>"Export 10 ms timeline"</button>
            <span class="meta hint">"or drag across a chart"</span>
            <span class="meta" id="zoom-status">{move || status.get()}</span>
            {move || zoom_error.get().map(|e| view! { <span class="field-error" role="alert">{e}</span> })}
        </div>
    }
}

/// The run's charts over the samples shown (the whole run or a zoomed range); the time
/// charts zoom by dragging.
#[component]
fn RunCharts(
    id: i64,
    samples: RwSignal<Vec<Sample>>,
    info: LocalResource<Result<RunInfo, String>>,
    on_range: Callback<(f64, f64)>,
) -> impl IntoView {
    let spec = move || {
        info.with(|i| {
            i.as_ref()
                .and_then(|r| r.as_ref().ok())
                .map(|r| r.spec.clone())
        })
    };
    let run = move || info.with(|i| i.as_ref().and_then(|r| r.as_ref().ok()).cloned());
    let chart = move |f: fn(&[Sample], Option<&shared::WorkloadSpec>) -> crate::plot::ChartData| {
        Signal::derive(move || {
            let s = spec();
            let mut c = samples.with(|x| f(x, s.as_ref()));
            if let Some(r) = run() {
                charts::break_at(&mut c, &step_starts(&r));
                if let Some(a) = &r.analysis {
                    // Preset runs: the agent's per-step analysis marks the chart.
                    if !r.steps.is_empty() {
                        c.markers.extend(charts::analysis_markers(a, &r.steps));
                    }
                    c.markers.extend(charts::stall_marker(a));
                }
            }
            c
        })
    };
    // Only the position chart that means something for this kind of run (full-span's is
    // in its headline).
    let position = Memo::new(move |_| {
        let s = spec();
        let kind = run().map(|r| r.kind().charts().position);
        (kind == Some(shared::preset::PositionChart::Window))
            .then(|| samples.with(|x| charts::by_position(x, s.as_ref())))
            .flatten()
    });
    let temp = Memo::new(move |_| samples.with(|x| charts::temperature(x)));
    let latency = Signal::derive(move || {
        let mut c = samples.with(|x| charts::latency(x));
        if let Some(r) = run() {
            charts::break_at(&mut c, &step_starts(&r));
        }
        c.markers.extend(
            run()
                .and_then(|r| r.analysis)
                .and_then(|a| charts::stall_marker(&a)),
        );
        c
    });
    view! {
            <div class="charts">
                <ChartView id=format!("run-{id}-throughput") data=chart(charts::throughput) on_range/>
                <ChartView id=format!("run-{id}-iops") data=chart(charts::iops) on_range/>
                <ChartView id=format!("run-{id}-latency") data=latency on_range/>
                {move || temp.get().map(|d| view! { <ChartView id=format!("run-{id}-temperature") data=Signal::derive(move || d.clone()) on_range/> })}
                {move || position.get().map(|d| view! { <ChartView id=format!("run-{id}-position") data=Signal::derive(move || d.clone())/> })}
            </div>
    }
}
