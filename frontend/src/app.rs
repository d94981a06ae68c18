//! The shell: connect (token), then the dashboard's tabs (live, new test, history, targets,
//! fleet, one run's results); the kiosk (`/kiosk`) shows only the live view, dark and large,
//! or with `?agents=` the wall of several agents' live runs.

use crate::stream::LiveState;
use crate::views::fleet::{Fleet, KioskWall};
use crate::views::history::History;
use crate::views::live::LiveView;
use crate::views::new_test::NewTest;
use crate::views::results::RunResults;
use crate::views::targets::Targets;
use crate::views::{Ctx, Tab};
use leptos::prelude::*;
use shared::api::Role;

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
    #[cfg(target_arch = "wasm32")]
    crate::stream::connect(token.clone(), live);
    let kiosk = crate::session::is_kiosk();
    let (first_tab, first_picked) = Tab::from_route(crate::session::route());
    let c = Ctx {
        token: StoredValue::new(token),
        live,
        banner: RwSignal::new(None),
        tab: RwSignal::new(if kiosk { Tab::Live } else { first_tab }),
        kiosk,
        targets: RwSignal::new(None),
        picked: RwSignal::new(first_picked),
    };
    provide_context(c);
    crate::session::drop_token_from_address();
    if !kiosk {
        // The address bar follows the view (back and forward too), so every view can be
        // linked, bookmarked and reloaded.
        Effect::new(move |_| {
            let href = crate::route::href(&c.picked.with(|p| c.tab.get().route(p)));
            crate::session::show_address(&href);
        });
        let _ = window_event_listener(leptos::ev::popstate, move |_| {
            let (tab, picked) = Tab::from_route(crate::session::route());
            c.picked.set(picked);
            c.tab.set(tab);
        });
    }
    c.reload_targets();
    // `/kiosk?agents=a,b,c`: the wall of several agents' live runs.
    let wall = crate::session::query_param("agents");
    let disconnect = move |_| {
        crate::session::forget();
        set_token.set(None);
    };
    let tab_button = move |tab: Tab, id: &'static str, label: &'static str| {
        view! {
            <button id=id role="tab" class="tab" aria-selected=move || (c.tab.get() == tab).to_string()
                on:click=move |_| c.tab.set(tab)>{label}</button>
        }
    };
    view! {
        <main class=if c.kiosk { "dashboard kiosk" } else { "dashboard" }>
            <header>
                <h1>"diskscope"</h1>
                {(!c.kiosk).then(|| view! {
                    <nav role="tablist">
                        {tab_button(Tab::Live, "tab-live", "Live")}
                        <Show when=move || c.operator()>{tab_button(Tab::NewTest, "tab-new", "New test")}</Show>
                        {tab_button(Tab::History, "tab-history", "History")}
                        {tab_button(Tab::Targets, "tab-targets", "Targets")}
                        {tab_button(Tab::Fleet, "tab-fleet", "Fleet")}
                    </nav>
                })}
                <span class="role">{move || live.with(|s| match (s.connected, s.role) {
                    (false, _) => "connecting…".to_string(),
                    (true, Some(Role::Operator)) => "operator".to_string(),
                    (true, _) => "viewer".to_string(),
                })}</span>
                {(!c.kiosk).then(|| view! { <button on:click=disconnect>"Disconnect"</button> })}
            </header>
            {move || c.banner.get().or_else(|| live.with(|s| s.error.clone()))
                .map(|e| view! {
                    <p class="banner error" role="alert">{e}
                        <button class="dismiss" aria-label="dismiss" on:click=move |_| c.banner.set(None)>"×"</button>
                    </p>
                })}
            {move || match (c.kiosk, wall.clone()) {
                (true, Some(agents)) => view! { <KioskWall agents=agents/> }.into_any(),
                _ => view! { <Page/> }.into_any(),
            }}
        </main>
    }
}

/// The current tab's page.
#[component]
fn Page() -> impl IntoView {
    let c = crate::views::ctx();
    view! {
            {move || match c.tab.get() {
                Tab::Live => view! { <LiveView/> }.into_any(),
                Tab::NewTest => view! { <NewTest/> }.into_any(),
                Tab::History => view! { <History/> }.into_any(),
                Tab::Targets => view! { <Targets/> }.into_any(),
                Tab::Fleet => view! { <Fleet/> }.into_any(),
                Tab::Run(id) => view! { <RunResults id=id/> }.into_any(),
            }}
    }
}
