//! New test: a preset, a custom spec with a field per workload option the agent lists
//! (`GET /api/v1/options`; each read and checked as typed by the agent,
//! `POST /api/v1/specs/read`) or a fio job file (checked by the agent, its jobs shown before
//! they start); writes to a block device need the device path typed to confirm.

use super::{ctx, Field, Tab};
use crate::form::{FieldErrors, Kind, SpecForm};
use leptos::prelude::*;
use shared::api::{CreateRun, OptionView, Preset};
use shared::WorkloadSpec;

#[component]
pub fn NewTest() -> impl IntoView {
    let c = ctx();
    let form = RwSignal::new(SpecForm::default());
    let opts = workload_options(c, form);
    let preset = RwSignal::new(None::<String>);
    // A fio job file instead of a preset or the fields: its text and the agent's reading.
    let fio = RwSignal::new(false);
    let fio_text = RwSignal::new(String::new());
    let fio_checked = RwSignal::new(None::<Result<shared::api::FioJobSteps, String>>);
    // The agent's presets (empty until they are in, or when loading failed: the banner says).
    let presets = LocalResource::new(move || {
        let t = c.token.get_value();
        async move { c.report(crate::api::presets(&t).await).unwrap_or_default() }
    });
    let find = move |n: &str| find_preset(presets, n);
    // The agent's traces, fetched once (the custom fields come and go with the preset).
    let traces = LocalResource::new(move || traces_of(c));
    let target = RwSignal::new(String::new());
    let name = RwSignal::new(String::new());
    let repeat = RwSignal::new(String::new());
    let repeat_n = Memo::new(move |_| repeat.with(|r| crate::form::parse_repeat(r)));
    let confirm = RwSignal::new(String::new());
    let sending = RwSignal::new(false);
    default_to_scratch(c, target);
    let checked = checked_spec(c, form);
    let opt_fields = RwSignal::new(std::collections::BTreeMap::<&'static str, String>::new());
    let options = used_options(preset, presets, opt_fields);
    // The picked preset: its own options under their own labels, never the custom
    // fields (editing one of those would make it a custom run).
    let sequence = move || preset.get().and_then(|n| find(&n));
    let block = move || {
        target.with(|p| {
            c.find_target(|t| &t.path == p, |t| t.kind == "block")
                .unwrap_or_else(|| p.starts_with("/dev/"))
        })
    };
    let needs_confirm = move || {
        block()
            && if fio.get() {
                fio_checked.with(|r| {
                    matches!(r, Some(Ok(s)) if s.steps.iter().any(|s| crate::form::writes(&s.spec)))
                })
            } else {
                match sequence() {
                    Some(p) => p.steps.iter().any(|s| crate::form::writes(&s.spec)),
                    None => checked.with(|r| r.as_ref().map(crate::form::writes).unwrap_or(false)),
                }
            }
    };
    // Start is possible once the workload is sound: the fields, a preset's options, or the
    // agent's reading of the job file.
    let sound = move || {
        if fio.get() {
            fio_checked.with(|r| matches!(r, Some(Ok(_))))
        } else {
            checked.with(Result::is_ok) && options.with(Result::is_ok)
        }
    };
    let confirmed = move || !needs_confirm() || confirm.with(|c| target.with(|t| c.trim() == t));
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let confirmation = needs_confirm().then(|| confirm.get_untracked());
        let (on, named) = (target.get_untracked(), name.get_untracked());
        let req = if fio.get_untracked() {
            fio_request(&on, fio_text.get_untracked(), &named, confirmation)
        } else {
            let (Ok(spec), Ok(opts), Ok(passes)) = (
                checked.get_untracked(),
                options.get_untracked(),
                repeat_n.get_untracked(),
            ) else {
                return;
            };
            let mut req = request(
                &on,
                preset.get_untracked(),
                spec,
                opts,
                &named,
                confirmation,
            );
            req.repeat = passes;
            req
        };
        send(c, req, sending, confirm);
    };
    view! {
        <section class="new-test">
            <h2>"New test"</h2>
            <form id="new-test" on:submit=submit>
                <div class="row">
                    <PresetPicker presets preset form fio/>
                    <TargetAndName target name repeat repeat_n/>
                </div>
                {move || sequence().map(|p| view! { <PresetSteps p options opt_fields/> })}
                <Show when=move || fio.get()>
                    <super::fio_job::FioJobFields text=fio_text target checked=fio_checked/>
                </Show>
                <Show when=move || sequence().is_none() && !fio.get()>
                    <SpecFields form preset checked traces opts/>
                </Show>
                <Show when=needs_confirm>
                    <ConfirmDevice target confirm/>
                </Show>
                <div class="controls">
                    <button id="start" type="submit"
                        disabled=move || !sound() || !confirmed() || sending.get() || target.with(|t| t.trim().is_empty())>
                        {move || if sound() { "Start" } else if fio.get() { "Paste or upload a job file the agent can run" } else if checked.with(|r| r.as_ref().is_err_and(|e| e.is_empty())) { "Checking the workload…" } else { "Fix the fields marked above" }}
                    </button>
                </div>
            </form>
        </section>
    }
}

/// The agent's workload options: the fields, in its order; `form` gets their defaults once
/// they are in, if nothing was typed.
fn workload_options(c: super::Ctx, form: RwSignal<SpecForm>) -> LocalResource<Vec<OptionView>> {
    let opts = LocalResource::new(move || {
        let t = c.token.get_value();
        async move { c.report(crate::api::options(&t).await).unwrap_or_default() }
    });
    Effect::new(move |_| {
        if let Some(list) = opts.get() {
            if form.with_untracked(|f| f.fields.is_empty()) {
                let fields = list.iter().map(|o| (o.key.clone(), o.default.clone()));
                form.set(SpecForm {
                    fields: fields.collect(),
                });
            }
        }
    });
    opts
}

/// Sets `target` to the scratch file once the target list is in, if nothing was typed.
fn default_to_scratch(c: super::Ctx, target: RwSignal<String>) {
    Effect::new(move |_| {
        let scratch = c.find_target(|t| t.scratch, |t| t.path.clone());
        if let Some(s) = scratch {
            if target.with_untracked(String::is_empty) {
                target.set(s);
            }
        }
    });
}

/// The picked preset's options as typed. Only the options the preset takes are sent (a
/// value typed for another preset stays in its field but is not used; the agent refuses
/// options a preset ignores).
fn used_options(
    preset: RwSignal<Option<String>>,
    presets: LocalResource<Vec<Preset>>,
    opt_fields: RwSignal<std::collections::BTreeMap<&'static str, String>>,
) -> Memo<Result<shared::PresetOptions, PresetErrors>> {
    Memo::new(move |_| {
        let takes: Vec<String> = preset
            .get()
            .and_then(|n| find_preset(presets, &n).map(|p| p.options))
            .unwrap_or_default();
        opt_fields.with(|m| {
            let used = m
                .iter()
                .filter(|(k, _)| takes.iter().any(|t| t == *k))
                .map(|(k, v)| (*k, v.clone()))
                .collect();
            crate::form::preset_options(&used)
        })
    })
}

/// Starts the run `req` asks for; once the agent took it, the confirmation is cleared and
/// Live shows the run.
fn send(c: super::Ctx, req: CreateRun, sending: RwSignal<bool>, confirm: RwSignal<String>) {
    let t = c.token.get_value();
    sending.set(true);
    leptos::task::spawn_local(async move {
        let r = crate::api::start(&t, &req).await;
        sending.set(false);
        if c.report(r).is_some() {
            confirm.set(String::new());
            c.tab.set(Tab::Live);
        }
    });
}

/// A preset: its steps in short, and the options it takes.
#[component]
fn PresetSteps(
    p: Preset,
    options: Memo<Result<shared::PresetOptions, PresetErrors>>,
    opt_fields: RwSignal<std::collections::BTreeMap<&'static str, String>>,
) -> impl IntoView {
    let opt_field = move |f: &'static crate::form::Field| {
        let key = f.key;
        let id = format!("o-{key}");
        let err = move || options.with(|r| r.as_ref().err().and_then(|e| e.get(key).cloned()));
        let input = match f.kind {
            Kind::Check => view! {
                <input id=id.clone() type="checkbox"
                    prop:checked=move || opt_fields.with(|m| m.get(key).is_some_and(|v| v == "true"))
                    on:change=move |ev| opt_fields.update(|m| { m.insert(key, event_target_checked(&ev).to_string()); })/>
            }.into_any(),
            Kind::Text(hint) => {
                view! {
                    <input id=id.clone() type="text" placeholder=hint autocomplete="off"
                        prop:value=move || opt_fields.with(|m| m.get(key).cloned().unwrap_or_default())
                        on:input=move |ev| opt_fields.update(|m| { m.insert(key, event_target_value(&ev)); })/>
                }.into_any()
            }
        };
        view! {
            <Field id=id label=f.label help=f.help error=Signal::derive(err)>{input}</Field>
        }
    };
    let n = p.steps.len();
    let names: Vec<String> = p.steps.iter().take(12).map(|s| s.name.clone()).collect();
    view! {
        <h3>{if n == 1 { format!("Preset {}: one step", p.name) } else { format!("Preset {}: {n} steps", p.name) }}</h3>
        <p class="help">{names.join(" · ")}{(n > 12).then_some(" · …")}</p>
        <div class="fields preset-options">{crate::form::PRESET_OPTIONS.iter().filter(|f| p.options.iter().any(|o| o == f.key)).map(opt_field).collect_view()}</div>
    }
}

/// The fields as typed and the agent's reading of them (asked as they change; an answer
/// counts only for the fields it was given): the spec, or the problems by field (none while
/// the answer is awaited).
fn checked_spec(
    c: super::Ctx,
    form: RwSignal<SpecForm>,
) -> Memo<Result<WorkloadSpec, FieldErrors>> {
    let verdict = RwSignal::new(None::<(SpecForm, shared::api::SpecRead)>);
    Effect::new(move |_| {
        let asked = form.get();
        let t = c.token.get_value();
        leptos::task::spawn_local(async move {
            let body = shared::api::SpecFields {
                fields: asked.fields.clone(),
            };
            // Answers can come back out of order, and many at once while fields are typed:
            // only the answer for the fields shown now is kept (an edit asks again), so no
            // late answer for older fields can push it out.
            if let Some(read) = c.report(crate::api::read_spec(&t, &body).await) {
                if form.with_untracked(|f| *f == asked) {
                    verdict.set(Some((asked, read)));
                }
            }
        });
    });
    Memo::new(move |_| form.with(|f| verdict.with(|v| crate::form::judged(f, v.as_ref()))))
}

/// A preset's option errors by field key.
type PresetErrors = std::collections::BTreeMap<&'static str, String>;

/// Every field of a custom workload, checked as typed by the agent's validator; editing one
/// leaves the preset picked before.
#[component]
fn SpecFields(
    form: RwSignal<SpecForm>,
    preset: RwSignal<Option<String>>,
    checked: Memo<Result<WorkloadSpec, FieldErrors>>,
    traces: LocalResource<Vec<shared::api::TraceInfo>>,
    opts: LocalResource<Vec<OptionView>>,
) -> impl IntoView {
    let field = move |f: OptionView| {
        let key = f.key.clone();
        let k = key.clone();
        let err = move || checked.with(|r| r.as_ref().err().and_then(|e| e.get(&k).cloned()));
        let id = format!("f-{key}");
        let k = key.clone();
        let edit = move |v: String| {
            form.update(|s| s.set(&k, v));
            preset.set(None);
        };
        let k = key.clone();
        let value = move || form.with(|s| s.get(&k).to_string());
        let input = match f.kind.as_str() {
            "select" => view! {
                <select id=id.clone() on:change=move |ev| edit(event_target_value(&ev)) prop:value=value>
                    {f.values.iter().map(|o| view! { <option value=o.clone()>{o.clone()}</option> }).collect_view()}
                </select>
            }.into_any(),
            "check" => view! {
                <input id=id.clone() type="checkbox"
                    prop:checked=move || value() == "true"
                    on:change=move |ev| edit(event_target_checked(&ev).to_string())/>
            }.into_any(),
            "trace" => view! {
                <select id=id.clone() on:change=move |ev| edit(event_target_value(&ev)) prop:value=value>
                    <option value="">"(none: generate the pattern above)"</option>
                    {move || traces.get().unwrap_or_default().into_iter().map(|t| {
                        let label = format!("{} — {}", t.name, t.description);
                        view! { <option value=t.name.clone()>{label}</option> }
                    }).collect_view()}
                </select>
            }.into_any(),
            _ => view! {
                <input id=id.clone() type="text" placeholder=f.hint.clone() autocomplete="off"
                    prop:value=value
                    on:input=move |ev| edit(event_target_value(&ev))
                    aria-invalid={
                        let err = err.clone();
                        move || err().is_some().to_string()
                    }/>
            }.into_any(),
        };
        view! { <Field id label=f.label help=f.help error=Signal::derive(err)>{input}</Field> }
    };
    // The workload's own fields first; engine and kernel settings under Advanced (open when
    // one of them holds an error).
    let part = move |advanced: bool| {
        opts.get()
            .unwrap_or_default()
            .into_iter()
            .filter(move |o| o.advanced == advanced)
    };
    let advanced_error = move || {
        let keys: Vec<String> = part(true).map(|o| o.key).collect();
        checked.with(|r| {
            r.as_ref()
                .err()
                .is_some_and(|e| keys.iter().any(|k| e.contains_key(k)))
        })
    };
    view! {
        <div class="fields">{move || part(false).map(field).collect_view()}</div>
        <details class="advanced" id="advanced" prop:open=advanced_error>
            <summary>"Advanced: batching, io_uring's fast paths, buffers, CPUs, engine"</summary>
            <div class="fields">{move || part(true).map(field).collect_view()}</div>
        </details>
    }
}

/// Where the test runs (the agent's targets offered) and an optional name for the run.
#[component]
fn TargetAndName(
    target: RwSignal<String>,
    name: RwSignal<String>,
    repeat: RwSignal<String>,
    repeat_n: Memo<Result<Option<u32>, String>>,
) -> impl IntoView {
    let c = ctx();
    view! {
        <div class="field">
            <label for="target">"Target (file or device)"</label>
            <input id="target" type="text" list="target-list" autocomplete="off"
                prop:value=move || target.get() on:input=move |ev| target.set(event_target_value(&ev))/>
            <datalist id="target-list">
                {move || c.targets.get().and_then(Result::ok).unwrap_or_default().into_iter()
                    .map(|t| view! { <option value=t.path.clone()>{t.kind.clone()}</option> }).collect_view()}
            </datalist>
        </div>
        <div class="field">
            <label for="run-name">"Name (optional)"</label>
            <input id="run-name" type="text" prop:value=move || name.get() on:input=move |ev| name.set(event_target_value(&ev))/>
        </div>
        <div class="field">
            <label for="repeat">"Repeat (passes, with statistics)"</label>
            <input id="repeat" type="text" inputmode="numeric" placeholder="1"
                prop:value=move || repeat.get() on:input=move |ev| repeat.set(event_target_value(&ev))/>
            {move || repeat_n.get().err().map(|e| view! { <span class="error" id="repeat-error">{e}</span> })}
        </div>
    }
}

/// The request the form makes: a preset with the options it was given (none when all are
/// defaults), or the custom spec; the device path typed to confirm a block-device write.
fn request(
    target: &str,
    preset: Option<String>,
    spec: WorkloadSpec,
    options: shared::PresetOptions,
    name: &str,
    confirm: Option<String>,
) -> CreateRun {
    CreateRun {
        also: Vec::new(),
        target: target.trim().to_string(),
        spec: preset.is_none().then_some(spec),
        options: preset
            .is_some()
            .then_some(options)
            .filter(|o| *o != shared::PresetOptions::default()),
        preset,
        name: Some(name.to_string()).filter(|n| !n.trim().is_empty()),
        confirm: confirm.map(|c| c.trim().to_string()),
        repeat: None,
        repeat_idle_ms: None,
        fio_job: None,
        ..Default::default()
    }
}

/// The request for a fio job file: its text, run on the target as the agent read it.
fn fio_request(target: &str, text: String, name: &str, confirm: Option<String>) -> CreateRun {
    CreateRun {
        spec: None,
        fio_job: Some(text),
        ..request(
            target,
            None,
            WorkloadSpec::default(),
            shared::PresetOptions::default(),
            name,
            confirm,
        )
    }
}

/// A write to a block device destroys its data: the user types its path to go ahead.
#[component]
fn ConfirmDevice(target: RwSignal<String>, confirm: RwSignal<String>) -> impl IntoView {
    view! {
        <div class="field danger">
            <label for="confirm">{move || format!("This test writes to the block device {} and destroys the data on it. Type its path to confirm:", target.get())}</label>
            <input id="confirm" type="text" autocomplete="off" placeholder=move || target.get()
                prop:value=move || confirm.get() on:input=move |ev| confirm.set(event_target_value(&ev))/>
        </div>
    }
}

/// The preset list (custom first): picking one fills the fields with its first step's spec.
#[component]
fn PresetPicker(
    presets: LocalResource<Vec<Preset>>,
    preset: RwSignal<Option<String>>,
    form: RwSignal<SpecForm>,
    fio: RwSignal<bool>,
) -> impl IntoView {
    let c = ctx();
    let find = move |n: &str| find_preset(presets, n);
    // Each pick is numbered: the agent's fields for a preset fill the form only while that
    // pick is the last and nothing was typed since (a late answer must not undo either).
    let picks = StoredValue::new(0u64);
    let pick_preset = move |ev: leptos::ev::Event| {
        let v = event_target_value(&ev);
        fio.set(v == FIO_JOB);
        picks.update_value(|n| *n += 1);
        let found = find(&v);
        match found {
            Some(p) => {
                let t = c.token.get_value();
                let spec = p.spec.clone();
                let (mine, before) = (picks.get_value(), form.get_untracked());
                leptos::task::spawn_local(async move {
                    if let Some(f) = c.report(crate::api::spec_fields(&t, &spec).await) {
                        if picks.get_value() == mine && form.with_untracked(|x| *x == before) {
                            form.set(SpecForm { fields: f.fields });
                        }
                    }
                });
                preset.set(Some(p.name));
            }
            None => preset.set(None),
        }
    };
    view! {
        <div class="field">
            <label for="preset">"Preset"</label>
            <select id="preset" on:change=pick_preset prop:value=move || if fio.get() { FIO_JOB.to_string() } else { preset.get().unwrap_or_default() }>
                <option value="">"custom (the fields below)"</option>
                <option value=FIO_JOB>"fio job file (paste or upload)"</option>
                {move || presets.get().unwrap_or_default().into_iter().map(|p| view! {
                    <option value=p.name.clone() title=p.description.clone()>{p.name.clone()}</option>
                }).collect_view()}
            </select>
            <small class="help">{move || preset.get().and_then(|n| find(&n)).map(|p| p.description)}</small>
        </div>
    }
}

/// The preset list's value for a fio job file.
const FIO_JOB: &str = "@fio-job";

/// The agent's traces (empty when they cannot be had: the banner says why).
async fn traces_of(c: super::Ctx) -> Vec<shared::api::TraceInfo> {
    let t = c.token.get_value();
    c.report(crate::api::traces(&t).await).unwrap_or_default()
}

/// The preset named `n`, once the list is in.
fn find_preset(presets: LocalResource<Vec<Preset>>, n: &str) -> Option<Preset> {
    presets.with(|l| {
        l.as_ref()
            .and_then(|l: &Vec<Preset>| l.iter().find(|p| p.name == n).cloned())
    })
}
