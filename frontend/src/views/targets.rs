//! Targets: what the agent may use and what it knows of each.

use super::ctx;
use leptos::prelude::*;
use shared::api::TargetView;
use shared::units::format_bytes;

/// Why a target is not free, or what it is.
pub fn target_note(t: &TargetView) -> String {
    if t.kind == "new" {
        return format!(
            "created on first use ({})",
            t.size.map(format_bytes).unwrap_or_default()
        );
    }
    match (t.scratch, t.busy, t.in_use.is_empty()) {
        (_, true, _) => "busy: a run is going on".to_string(),
        (_, false, false) => format!("writes refused: {}", t.in_use.join("; ")),
        (true, false, true) => "default scratch file".to_string(),
        (false, false, true) => "free".to_string(),
    }
}

#[component]
pub fn Targets() -> impl IntoView {
    let c = ctx();
    Effect::new(move |_| {
        c.live.with(|s| s.status.clone());
        c.reload_targets();
    });
    let row = |t: TargetView| {
        let note = target_note(&t);
        let device = match (&t.model, &t.transport) {
            (Some(m), Some(tr)) => format!("{m} ({tr})"),
            (None, Some(tr)) => tr.clone(),
            (Some(m), None) => m.clone(),
            (None, None) => "–".into(),
        };
        let health = t
            .health
            .as_ref()
            .map(|h| {
                let mut parts = Vec::new();
                if let Some(u) = h.percentage_used {
                    parts.push(format!("{u} % used"));
                }
                if let Some(w) = h.bytes_written {
                    parts.push(format!("{:.1} TB written", w as f64 / 1e12));
                }
                if let Some(p) = h.power_on_hours {
                    parts.push(format!("{} h on", shared::devices::count(p)));
                }
                parts.join(", ")
            })
            .unwrap_or_default();
        view! {
            <tr>
                <td class="path">{t.path}</td>
                <td>{t.kind}</td>
                <td class="num">{t.size.map(format_bytes).unwrap_or_else(|| "–".into())}</td>
                <td>{device}</td>
                <td class="num">{t.temperature_c.map(|c| format!("{c:.0} °C")).unwrap_or_default()}</td>
                <td>{health}</td>
                <td>{note}</td>
            </tr>
        }
    };
    view! {
        <section class="targets">
            <h2>"Targets"</h2>
            {move || match c.targets.get() {
                None => view! { <p class="status empty">"Loading…"</p> }.into_any(),
                Some(Err(e)) => view! { <p class="banner error" role="alert">{e}</p> }.into_any(),
                Some(Ok(list)) if list.is_empty() => view! { <p class="status empty">"No targets: start the agent with --allow PATH."</p> }.into_any(),
                Some(Ok(list)) => view! {
                    <table id="targets">
                        <thead><tr><th>"path"</th><th>"kind"</th><th class="num">"size"</th><th>"device"</th><th class="num">"temp"</th><th>"health"</th><th>"state"</th></tr></thead>
                        <tbody>{list.into_iter().map(row).collect_view()}</tbody>
                    </table>
                }.into_any(),
            }}
            <Show when=move || c.operator()><FlushVerify/></Show>
        </section>
    }
}

/// *Verify after power cut*: a flush check's read-back (`diskscope flushcheck write` wrote
/// the target and recorded each flushed write on a witness agent; the power was cut).
#[component]
fn FlushVerify() -> impl IntoView {
    let c = ctx();
    let (target, witness, token, session) = (
        RwSignal::new(String::new()),
        RwSignal::new(String::new()),
        RwSignal::new(String::new()),
        RwSignal::new(String::new()),
    );
    let verdict = RwSignal::new(None::<crate::api::FlushVerdict>);
    let go = move |_| {
        let t = c.token.get_value();
        // Blank: the witness's newest session of this agent on the target.
        let typed = session.get_untracked();
        let session = match typed.trim() {
            "" => None,
            n => match n.parse() {
                Ok(n) => Some(n),
                Err(_) => {
                    return c.banner.set(Some(format!(
                        "session '{typed}': a number, or blank for the newest"
                    )))
                }
            },
        };
        let body = shared::flushcheck::VerifyRequest {
            target: target.get_untracked(),
            witness: witness.get_untracked(),
            token: token.get_untracked(),
            session,
        };
        leptos::task::spawn_local(async move {
            verdict.set(c.report(crate::api::flush_verify(&t, &body).await));
        });
    };
    let field = |id: &'static str, label: &'static str, v: RwSignal<String>| {
        view! {
            <label for=id>{label}</label>
            <input id=id prop:value=move || v.get() on:input=move |ev| v.set(event_target_value(&ev))/>
        }
    };
    view! {
        <section class="flush-verify" id="flush-verify">
            <h3>"Verify after power cut"</h3>
            <p class="help">"Reads back every block the witness recorded durable (diskscope flushcheck write) and judges it."</p>
            <div class="fields">
                {field("fv-target", "Target", target)}
                {field("fv-witness", "Witness URL", witness)}
                {field("fv-token", "Witness token", token)}
                {field("fv-session", "Session (blank: the newest)", session)}
            </div>
            <button id="fv-go" on:click=go>"Verify after power cut"</button>
            {move || verdict.get().map(|v| view! {
                <p class={if v.verdict == "HONEST" { "verdict pass" } else { "verdict fail" }} id="fv-verdict">{v.verdict.clone()}</p>
                <p id="fv-line">{v.line}</p>
                <ul id="fv-bad">{v.lines.into_iter().map(|l| view! { <li>{l}</li> }).collect_view()}</ul>
            })}
        </section>
    }
}
