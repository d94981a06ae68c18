//! New test → *fio job file*: the job file pasted or uploaded, and its jobs as the agent
//! would run them on the target (`POST /api/v1/fio-jobs/check`: the same parser and checks
//! as a run), shown before *Start*; a refusal shows the agent's message naming the line.

use super::ctx;
use leptos::prelude::*;
use shared::api::{CheckFioJob, FioJobSteps};
use wasm_bindgen::JsCast;

/// The agent's reading of the job file: none yet, its steps, or its refusal.
pub type Checked = Option<Result<FioJobSteps, String>>;

#[component]
pub fn FioJobFields(
    text: RwSignal<String>,
    target: RwSignal<String>,
    checked: RwSignal<Checked>,
) -> impl IntoView {
    let c = ctx();
    // The text as last committed (a change, an upload): what the agent is asked about.
    let committed = RwSignal::new(String::new());
    Effect::new(move |_| {
        let (job, on) = (committed.get(), target.get());
        if job.trim().is_empty() || on.trim().is_empty() {
            checked.set(None);
            return;
        }
        let t = c.token.get_value();
        leptos::task::spawn_local(async move {
            let req = CheckFioJob {
                target: on.trim().to_string(),
                fio_job: job,
            };
            checked.set(Some(crate::api::check_fio_job(&t, &req).await));
        });
    });
    let upload = move |ev: leptos::ev::Event| {
        let Some(file) = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
            .and_then(|i| i.files())
            .and_then(|f| f.get(0))
        else {
            return;
        };
        leptos::task::spawn_local(async move {
            let read = wasm_bindgen_futures::JsFuture::from(file.text()).await;
            match read.ok().and_then(|v| v.as_string()) {
                Some(s) => {
                    text.set(s.clone());
                    committed.set(s);
                }
                None => checked.set(Some(Err(format!("cannot read {}", file.name())))),
            }
        });
    };
    view! {
        <div class="field fio-job">
            <label for="fio-job">"fio job file"</label>
            <textarea id="fio-job" rows="12" spellcheck="false"
                placeholder="[global]\nbs=4k\ndirect=1\n\n[randread]\nrw=randread\niodepth=32\nruntime=30\ntime_based"
                prop:value=move || text.get()
                on:input=move |ev| text.set(event_target_value(&ev))
                on:change=move |ev| committed.set(event_target_value(&ev))></textarea>
            <input id="fio-job-file" type="file" accept=".fio,.ini,.job,text/plain" on:change=upload/>
            <small class="help">"Runs on the target above (a job's filename must be it); no include, no ${VAR} of the agent's"</small>
        </div>
        {move || checked.get().map(|r| match r {
            Ok(s) => steps_table(s).into_any(),
            Err(e) => view! { <p class="error" id="fio-job-error">{e}</p> }.into_any(),
        })}
    }
}

/// The jobs as they will run: a step per stonewall group, its workload in fio's terms.
fn steps_table(s: FioJobSteps) -> impl IntoView {
    let n = s.steps.len();
    let rows = s
        .steps
        .into_iter()
        .map(|st| {
            let w = &st.spec;
            let secs = |ms: u64| shared::units::fmt_seconds(ms as f64 / 1000.0);
            let amount = match (w.runtime_ms, w.io_size, w.size) {
                (Some(ms), None, _) => secs(ms),
                (Some(ms), Some(b), _) => {
                    format!("{}, at most {}", shared::units::format_bytes(b), secs(ms))
                }
                (None, Some(b), _) | (None, None, Some(b)) => shared::units::format_bytes(b),
                _ => "the target".into(),
            };
            let bs = w.sizes_label();
            view! {
                <tr>
                    <td>{st.name.clone()}</td>
                    <td>{w.rw.to_string()}</td>
                    <td>{bs}</td>
                    <td class="num">{w.iodepth}</td>
                    <td class="num">{w.jobs}</td>
                    <td>{amount}</td>
                    <td>{if w.direct { "direct" } else { "buffered" }}</td>
                </tr>
            }
        })
        .collect_view();
    let notes = s
        .notes
        .into_iter()
        .map(|n| view! { <li>{n}</li> })
        .collect_view();
    view! {
        <h3>{match (n, s.together) {
            (1, _) => format!("{}: one step", s.name),
            (_, true) => format!("{}: {n} jobs at once", s.name),
            _ => format!("{}: {n} steps", s.name),
        }}</h3>
        <table id="fio-job-steps" class="summary">
            <thead><tr><th>"job"</th><th>"rw"</th><th>"bs"</th><th>"QD"</th><th>"jobs"</th><th>"amount"</th><th>"I/O"</th></tr></thead>
            <tbody>{rows}</tbody>
        </table>
        <ul class="notes">{notes}</ul>
    }
}
