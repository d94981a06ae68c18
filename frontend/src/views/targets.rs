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
        </section>
    }
}
