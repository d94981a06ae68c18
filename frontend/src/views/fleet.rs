//! The fleet page (this agent and the others the browser was given: status, current run,
//! targets and drive temperatures, the same preset started on several at once) and the
//! kiosk wall (`/kiosk?agents=a,b,c`: each agent's live run in a tile).

use super::chart_view::ChartView;
use super::ctx;
use crate::fleet::{self, Member};
use crate::stream::LiveState;
use leptos::prelude::*;
use shared::api::{CreateRun, Health, RunInfo, TargetView};
use shared::units::format_bytes;
use std::collections::{BTreeMap, BTreeSet};

/// An agent on the page: its address, where calls go (`""` for the page's own agent) and
/// the token they carry.
#[derive(Clone, Debug, PartialEq)]
struct Entry {
    url: String,
    base: String,
    token: String,
    own: bool,
}

/// What one refresh learnt of an agent.
#[derive(Clone, Debug, Default, PartialEq)]
struct Status {
    health: Option<Result<Health, String>>,
    targets: Option<Result<Vec<TargetView>, String>>,
    /// The line for its first running run (the card shows no more of it: comparing whole
    /// runs for the memo cost 1.5 KB of bundle).
    running: Option<String>,
}

fn entries(own_token: &str, members: &[Member]) -> Vec<Entry> {
    let own = crate::session::own_origin();
    std::iter::once(Entry {
        url: own.clone(),
        base: String::new(),
        token: own_token.to_string(),
        own: true,
    })
    .chain(members.iter().filter(|m| m.url != own).map(|m| Entry {
        url: m.url.clone(),
        base: m.url.clone(),
        token: m.token.clone(),
        own: false,
    }))
    .collect()
}

/// Health, targets and running runs of `e`; an agent this page cannot reach says why.
async fn probe(e: &Entry) -> Status {
    let own = crate::session::own_origin();
    let unreachable = |err: String| fleet::unreachable_message(&e.url, &own, &err);
    let health =
        crate::api::health_at(&e.base)
            .await
            .map_err(|err| if e.own { err } else { unreachable(err) });
    if health.is_err() {
        return Status {
            health: Some(health),
            ..Status::default()
        };
    }
    let targets = crate::api::targets_at(&e.base, &e.token).await;
    let running = crate::api::running_at(&e.base, &e.token)
        .await
        .ok()
        .and_then(|l| l.runs.into_iter().next())
        .map(|r| {
            format!(
                "run {} {} on {} ({})",
                r.id,
                r.preset.or(r.name).unwrap_or_else(|| r.spec.rw.to_string()),
                r.target,
                r.status.as_str()
            )
        });
    Status {
        health: Some(health),
        targets: Some(targets),
        running,
    }
}

/// The scratch target of an agent, from its list.
fn scratch_of(s: Option<&Status>) -> Option<String> {
    s?.targets
        .as_ref()?
        .as_ref()
        .ok()?
        .iter()
        .find(|t| t.scratch)
        .map(|t| t.path.clone())
}

#[component]
pub fn Fleet() -> impl IntoView {
    let c = ctx();
    let members = RwSignal::new(crate::session::load_fleet());
    let status = RwSignal::new(BTreeMap::<String, Status>::new());
    let selected = RwSignal::new(BTreeSet::<String>::new());
    let chosen = RwSignal::new(BTreeMap::<String, String>::new());
    let started = RwSignal::new(BTreeMap::<String, Result<i64, String>>::new());
    let all = Memo::new(move |_| members.with(|m| entries(&c.token.get_value(), m)));
    let refresh = move || {
        for e in all.get_untracked() {
            leptos::task::spawn_local(async move {
                let s = probe(&e).await;
                status.update(|m| {
                    m.insert(e.url.clone(), s);
                });
            });
        }
    };
    Effect::new(move |_| {
        all.track();
        refresh();
    });
    if let Ok(h) = set_interval_with_handle(refresh, std::time::Duration::from_secs(5)) {
        on_cleanup(move || h.clear());
    }
    let remove = Callback::new(move |url: String| {
        members.update(|m| m.retain(|x| x.url != url));
        members.with_untracked(|m| crate::session::save_fleet(m));
        selected.update(|s| {
            s.remove(&url);
        });
    });
    let wall_link = move || {
        let urls: Vec<String> = all.with(|a| a.iter().map(|e| e.url.clone()).collect());
        format!("/kiosk?agents={}", fleet::agents_param(&urls))
    };
    view! {
        <section class="fleet">
            <h2>"Fleet"</h2>
            <p class="help">"Agents on this page: this one and those you add (address and token stay in this browser). Each other agent must be started with "
                <code>{format!("--cors-origin {}", crate::session::own_origin())}</code>"."</p>
            <AddAgent members=members/>
            <Show when=move || c.operator()>
                <StartOnMany all=all status=status selected=selected chosen=chosen started=started/>
            </Show>
            <p><a id="open-wall" href=wall_link>"Open the kiosk wall of these agents"</a></p>
            <div class="agent-cards">
                <For each=move || all.get() key=|e| e.url.clone() let:e>
                    <AgentCard e=e status=status selected=selected chosen=chosen started=started remove=remove/>
                </For>
            </div>
        </section>
    }
}

/// Address and token of another agent; checked (reachable from this page, token taken)
/// before it is kept.
#[component]
fn AddAgent(members: RwSignal<Vec<Member>>) -> impl IntoView {
    let url = RwSignal::new(String::new());
    let token = RwSignal::new(String::new());
    let error = RwSignal::new(None::<String>);
    let busy = RwSignal::new(false);
    let add = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let base = match fleet::normalize_url(&url.get_untracked()) {
            Ok(b) => b,
            Err(e) => return error.set(Some(e)),
        };
        let t = token.get_untracked().trim().to_string();
        busy.set(true);
        leptos::task::spawn_local(async move {
            let own = crate::session::own_origin();
            let checked = match crate::api::health_at(&base).await {
                Err(e) => Err(fleet::unreachable_message(&base, &own, &e)),
                Ok(_) => crate::api::targets_at(&base, &t)
                    .await
                    .map_err(|e| format!("{base} refused the token: {e}")),
            };
            busy.set(false);
            match checked {
                Ok(_) => {
                    members.update(|m| {
                        *m = fleet::upsert(
                            std::mem::take(m),
                            Member {
                                url: base,
                                token: t,
                            },
                        )
                    });
                    members.with_untracked(|m| crate::session::save_fleet(m));
                    url.set(String::new());
                    token.set(String::new());
                    error.set(None);
                }
                Err(e) => error.set(Some(e)),
            }
        });
    };
    view! {
        <form class="add-agent" on:submit=add>
            <div class="field">
                <label for="agent-url">"Agent address"</label>
                <input id="agent-url" placeholder="http://lab-pc:7878" autocomplete="off"
                    on:input=move |ev| url.set(event_target_value(&ev)) prop:value=move || url.get()/>
            </div>
            <div class="field">
                <label for="agent-token">"Its token (viewer, or operator to start runs)"</label>
                <input id="agent-token" type="password" autocomplete="off"
                    on:input=move |ev| token.set(event_target_value(&ev)) prop:value=move || token.get()/>
            </div>
            <button id="add-agent" type="submit" disabled=move || busy.get()>"Add agent"</button>
            {move || error.get().map(|e| view! { <p id="add-agent-error" class="banner error" role="alert">{e}</p> })}
        </form>
    }
}

/// A preset (with an optional time per step) started on every selected agent at once.
/// Each selected agent with its target (one without a known target is marked so in
/// `started` and left out).
fn picked(
    all: Memo<Vec<Entry>>,
    status: RwSignal<BTreeMap<String, Status>>,
    selected: RwSignal<BTreeSet<String>>,
    chosen: RwSignal<BTreeMap<String, String>>,
    started: RwSignal<BTreeMap<String, Result<i64, String>>>,
) -> Vec<(Entry, String)> {
    let sel = selected.get_untracked();
    let mut picked = Vec::new();
    for e in all
        .get_untracked()
        .into_iter()
        .filter(|e| sel.contains(&e.url))
    {
        let target = chosen
            .with_untracked(|m| m.get(&e.url).cloned())
            .or_else(|| status.with_untracked(|s| scratch_of(s.get(&e.url))));
        match target {
            Some(t) => picked.push((e, t)),
            None => started.update(|m| {
                m.insert(e.url.clone(), Err("no target known yet".into()));
            }),
        }
    }
    picked
}

/// The runs to start for `picked`: each agent its own, or (`group`) one group run of them
/// all, sent to this agent (the hub), each member on its own target.
fn runs_to_start(
    group: bool,
    all: &[Entry],
    picked: Vec<(Entry, String)>,
    request: impl Fn(String) -> CreateRun,
) -> Vec<(Entry, CreateRun)> {
    if !group {
        return picked.into_iter().map(|(e, t)| (e, request(t))).collect();
    }
    let (Some(own), Some(first)) = (
        all.iter().find(|e| e.own),
        picked.first().map(|(_, t)| t.clone()),
    ) else {
        return Vec::new();
    };
    let agents = picked
        .into_iter()
        .map(|(e, t)| shared::group::Member {
            address: e.url,
            token: e.token,
            target: Some(t),
        })
        .collect();
    vec![(
        own.clone(),
        CreateRun {
            agents,
            ..request(first)
        },
    )]
}

#[component]
fn StartOnMany(
    all: Memo<Vec<Entry>>,
    status: RwSignal<BTreeMap<String, Status>>,
    selected: RwSignal<BTreeSet<String>>,
    chosen: RwSignal<BTreeMap<String, String>>,
    started: RwSignal<BTreeMap<String, Result<i64, String>>>,
) -> impl IntoView {
    let c = ctx();
    let presets = RwSignal::new(Vec::<String>::new());
    let preset = RwSignal::new("quick".to_string());
    let runtime = RwSignal::new(String::new());
    let error = RwSignal::new(None::<String>);
    {
        let t = c.token.get_value();
        leptos::task::spawn_local(async move {
            if let Ok(p) = crate::api::presets(&t).await {
                presets.set(p.into_iter().map(|p| p.name).collect());
            }
        });
    }
    // The preset's options and each selected agent with its target.
    let plan = move || {
        let options = match runtime.get_untracked().trim() {
            "" => None,
            r => match shared::units::parse_duration_ms(r) {
                Ok(ms) => Some(shared::steps::PresetOptions {
                    runtime_ms: Some(ms),
                    ..Default::default()
                }),
                Err(e) => {
                    error.set(Some(format!("time per step: {e}")));
                    return None;
                }
            },
        };
        error.set(None);
        Some((options, picked(all, status, selected, chosen, started)))
    };
    let request = move |target: String, options| CreateRun {
        target,
        spec: None,
        preset: Some(preset.get_untracked()),
        name: None,
        confirm: None,
        options,
        also: Vec::new(),
        repeat: None,
        repeat_idle_ms: None,
        fio_job: None,
        ..Default::default()
    };
    // Each selected agent its own run (`group` false), or one group run of them all at a
    // shared start, merged on this agent (the hub), whose live view then follows it.
    let go = move |group: bool| {
        let Some((options, picked)) = plan() else {
            return;
        };
        let runs = runs_to_start(group, &all.get_untracked(), picked, |t| {
            request(t, options.clone())
        });
        let path = if group {
            "/api/v1/groups"
        } else {
            "/api/v1/runs"
        };
        for (e, req) in runs {
            leptos::task::spawn_local(async move {
                let r = crate::api::start_at(&format!("{}{path}", e.base), &e.token, &req).await;
                if group && r.is_ok() {
                    c.tab.set(super::Tab::Live);
                }
                started.update(|m| {
                    m.insert(e.url.clone(), r.map(|c| c.id));
                });
                let s = probe(&e).await;
                status.update(|m| {
                    m.insert(e.url.clone(), s);
                });
            });
        }
    };
    view! {
        <div class="controls start-many">
            <div class="field">
                <label for="fleet-preset">"Preset"</label>
                <select id="fleet-preset" on:change=move |ev| preset.set(event_target_value(&ev)) prop:value=move || preset.get()>
                    {move || presets.get().into_iter().map(|p| view! { <option value=p.clone()>{p.clone()}</option> }).collect_view()}
                </select>
            </div>
            <div class="field">
                <label for="fleet-runtime">"Time per step (optional)"</label>
                <input id="fleet-runtime" placeholder="e.g. 30s" on:input=move |ev| runtime.set(event_target_value(&ev)) prop:value=move || runtime.get()/>
            </div>
            <button id="start-many" on:click=move |_| go(false) disabled=move || selected.with(BTreeSet::is_empty)>
                {move || format!("Start on {} selected", selected.with(BTreeSet::len))}
            </button>
            <button id="start-group" on:click=move |_| go(true) disabled=move || selected.with(BTreeSet::is_empty)>
                "Start as one group"
            </button>
            {move || error.get().map(|e| view! { <p class="banner error" role="alert">{e}</p> })}
        </div>
    }
}

#[component]
fn AgentCard(
    e: Entry,
    status: RwSignal<BTreeMap<String, Status>>,
    selected: RwSignal<BTreeSet<String>>,
    chosen: RwSignal<BTreeMap<String, String>>,
    started: RwSignal<BTreeMap<String, Result<i64, String>>>,
    remove: Callback<String>,
) -> impl IntoView {
    let url = e.url.clone();
    let s = {
        let url = url.clone();
        Memo::new(move |_| status.with(|m| m.get(&url).cloned()))
    };
    let (u1, u2, u3, u4, u5) = (
        url.clone(),
        url.clone(),
        url.clone(),
        url.clone(),
        url.clone(),
    );
    let toggle = move |ev: leptos::ev::Event| {
        let on = event_target_checked(&ev);
        selected.update(|set| {
            if on {
                set.insert(u1.clone());
            } else {
                set.remove(&u1);
            }
        });
    };
    let state = move || match s.get().and_then(|s| s.health) {
        None => ("checking…".to_string(), "pending"),
        Some(Ok(h)) => (format!("online · diskscope {}", h.version), "online"),
        Some(Err(e)) => (format!("offline: {e}"), "offline"),
    };
    let run_line = move || {
        let s = s.get()?;
        s.health.as_ref()?.as_ref().ok()?;
        Some(s.running.unwrap_or_else(|| "idle".to_string()))
    };
    let started_line = move || {
        started.with(|m| {
            m.get(&u2).map(|r| match r {
                Ok(id) => format!("started run {id}"),
                Err(e) => format!("not started: {e}"),
            })
        })
    };
    let label = if e.own {
        format!("{} (this agent)", e.url)
    } else {
        e.url.clone()
    };
    view! {
        <article class="agent-card" data-url=url.clone() class:offline=move || state().1 == "offline">
            <header>
                <label class="select">
                    <input type="checkbox" class="select-agent" on:change=toggle
                        prop:checked=move || selected.with(|set| set.contains(&u3))/>
                    <strong class="agent-url">{label}</strong>
                </label>
                <span class=move || format!("agent-state {}", state().1)>{move || state().0}</span>
                {(!e.own).then(|| view! {
                    <button class="remove-agent link" on:click=move |_| remove.run(u4.clone())>"Remove"</button>
                })}
            </header>
            <p class="agent-run">{run_line}</p>
            <p class="agent-started">{started_line}</p>
            <AgentTargets url=u5 status=s chosen=chosen/>
        </article>
    }
}

/// An agent's targets with device, size and temperature, and which one a start uses.
#[component]
fn AgentTargets(
    url: String,
    status: Memo<Option<Status>>,
    chosen: RwSignal<BTreeMap<String, String>>,
) -> impl IntoView {
    let targets = move || {
        status
            .get()
            .and_then(|s| s.targets)
            .map(|t| t.unwrap_or_default())
            .unwrap_or_default()
    };
    let u5 = url;
    view! {
        <table class="agent-targets">
                <thead><tr><th>"target"</th><th>"device"</th><th class="num">"size"</th><th class="num">"temp"</th><th>"use"</th></tr></thead>
                <tbody>
                    {move || targets().into_iter().map(|t| {
                        let path = t.path.clone();
                        let url = u5.clone();
                        let group = format!("target-{url}");
                        let is_chosen = {
                            let (url, path) = (url.clone(), path.clone());
                            move || chosen.with(|m| m.get(&url).map_or(t.scratch, |c| *c == path))
                        };
                        let pick = {
                            let path = path.clone();
                            move |_| chosen.update(|m| { m.insert(url.clone(), path.clone()); })
                        };
                        view! {
                            <tr>
                                <td class="path">{t.path.clone()}</td>
                                <td>{t.model.clone().unwrap_or_else(|| t.kind.clone())}</td>
                                <td class="num">{match (t.size, t.kind.as_str()) {
                                    (Some(b), "new") => format!("{} on first use", format_bytes(b)),
                                    (Some(b), _) => format_bytes(b),
                                    _ => "–".into(),
                                }}</td>
                                <td class="num temp">{t.temperature_c.map(|c| format!("{c:.0} °C")).unwrap_or_else(|| "–".into())}</td>
                                <td><input type="radio" name=group aria-label=format!("run on {path}")
                                    prop:checked=is_chosen on:change=pick/></td>
                            </tr>
                        }
                    }).collect_view()}
                </tbody>
            </table>
    }
}

/// `/kiosk?agents=a,b,c`: each agent's live run in a tile (tokens from this browser's
/// fleet; the page's own agent with its own).
#[component]
pub fn KioskWall(agents: String) -> impl IntoView {
    let c = ctx();
    let own = crate::session::own_origin();
    let fleet = crate::session::load_fleet();
    let own_token = c.token.get_value();
    let list = fleet::parse_agents(&agents);
    // Up to three agents share one row of the screen: their charts are drawn tall enough
    // to fill it; more agents wrap into rows of flatter charts.
    let chart = if list.len() <= 3 {
        (640, 560)
    } else {
        (640, 300)
    };
    let tiles = list
        .into_iter()
        .enumerate()
        .map(|(i, r)| match r {
            Err(e) => view! { <article class="tile error"><p>{e}</p></article> }.into_any(),
            Ok(url) => match fleet::route_for(&url, &own, &own_token, &fleet) {
                None => view! {
                    <article class="tile error" data-url=url.clone()>
                        <h2>{url.clone()}</h2>
                        <p>"No token for this agent in this browser: add it on the Fleet page first."</p>
                    </article>
                }
                .into_any(),
                Some((base, token)) => {
                    view! { <WallTile i=i url=url base=base token=token chart/> }.into_any()
                }
            },
        })
        .collect_view();
    view! { <div class="wall">{tiles}</div> }
}

#[component]
fn WallTile(
    i: usize,
    url: String,
    base: String,
    token: String,
    /// The chart's canvas pixels.
    chart: (u32, u32),
) -> impl IntoView {
    let size = chart;
    let live = RwSignal::new(LiveState::default());
    #[cfg(target_arch = "wasm32")]
    {
        let ws = if base.is_empty() {
            crate::session::ws_url()
        } else {
            fleet::ws_url(&base)
        };
        crate::stream::connect_to(ws, token.clone(), live);
    }
    // The followed run's record (its preset or workload and target), fetched again when it
    // ends; before any run here, the agent's newest (its headline fills the tile).
    let info = RwSignal::new(None::<RunInfo>);
    let device = RwSignal::new(None::<String>);
    Effect::new(move |_| {
        let (run, _) = live.with(|s| (s.run_id, s.status.clone()));
        let (base, token) = (base.clone(), token.clone());
        leptos::task::spawn_local(async move {
            let r = match run {
                Some(id) => crate::api::run_at(&base, &token, id).await.ok(),
                None => crate::api::latest_at(&base, &token)
                    .await
                    .ok()
                    .and_then(|l| l.runs.into_iter().next()),
            };
            let Some(r) = r else { return };
            let targets = crate::api::targets_at(&base, &token)
                .await
                .unwrap_or_default();
            device.set(
                targets
                    .iter()
                    .find(|t| t.path == r.target)
                    .and_then(|t| t.model.clone()),
            );
            info.set(Some(r));
        });
    });
    // Between runs: the last result's headline.
    let last = move || {
        info.with(|i| {
            i.as_ref()
                .filter(|r| r.status != shared::RunStatus::Running)
                .map(|r| format!("last result: {}", r.line.clone()))
        })
    };
    let what = move || {
        info.with(|i| {
            i.as_ref().map(|r| {
                let test = crate::headline::test_name(r);
                let dev = device.get().map(|d| format!(" · {d}")).unwrap_or_default();
                format!("{test} · {}{dev}", r.target)
            })
        })
    };
    let figure = move || live.with(|s| s.samples.last().map(crate::headline::live_figures));
    let state = move || {
        live.with(|s| match (s.connected, s.run_id) {
            (false, _) => s.error.clone().unwrap_or_else(|| "connecting…".into()),
            (true, None) => "waiting for a run".into(),
            (true, Some(id)) => format!("run {id} {}", s.status),
        })
    };
    let chart = Signal::derive(move || live.with(|l| crate::charts::throughput(&l.samples, None)));
    view! {
        <article class="tile" data-url=url.clone() id=format!("tile-{i}")>
            <header>
                <h2 class="tile-agent">{url.clone()}</h2>
                <span class="tile-state">{state}</span>
            </header>
            <p class="tile-what">{what}</p>
            <p class="tile-last">{last}</p>
            <p class="tile-figures">
                <span class="tile-big">{move || figure().map_or_else(|| "–".into(), |f| format!("{} {}", f.big, f.unit))}</span>
                <span>{move || figure().map(|f| f.sub).unwrap_or_default()}</span>
                <span class="tile-temp">{move || figure().and_then(|f| f.temp).unwrap_or_default()}</span>
            </p>
            <Show when=move || live.with(|s| !s.samples.is_empty())>
                <ChartView id=format!("wall-{i}-throughput") data=chart dark=true bare=true size=Some(size)/>
            </Show>
        </article>
    }
}
