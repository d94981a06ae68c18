//! The dashboard's pages and the components they share. Pure logic lives in the modules
//! beside this one (form, progress, grid, charts, plot); these only wire it to the page.

pub mod chart_view;
pub mod fio_job;
pub mod fleet;
pub mod headline;
pub mod history;
pub mod live;
pub mod new_test;
pub mod preset_results;
pub mod results;
pub mod targets;
pub mod trust;

use crate::stream::LiveState;
use leptos::prelude::*;
use shared::api::TargetView;

/// A question to the agent for [`newest_answer`] (boxed: one copy of its code for every
/// caller asking of the same kinds).
pub type Ask<K, T> =
    Box<dyn Fn(K) -> std::pin::Pin<Box<dyn std::future::Future<Output = Option<T>>>>>;

/// Keeps `out` the agent's answer to the newest question: `ask` is called whenever `key`
/// changes (not on every change of what `key` reads, such as each live sample), and an
/// answer to an older question that arrives late is dropped, so a run's record fetched
/// while it ran cannot replace the one fetched after it ended.
pub fn newest_answer<K, T>(key: Memo<K>, out: RwSignal<Option<T>>, ask: Ask<K, T>)
where
    K: Clone + PartialEq + Send + Sync + 'static,
    T: Send + Sync + 'static,
{
    let asked = StoredValue::new(0u64);
    Effect::new(move |_| {
        let answer = ask(key.get());
        let n = asked.get_value() + 1;
        asked.set_value(n);
        leptos::task::spawn_local(async move {
            if let Some(v) = answer.await {
                if asked.get_value() == n {
                    out.set(Some(v));
                }
            }
        });
    });
}

/// The dashboard's pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tab {
    Live,
    NewTest,
    History,
    Targets,
    /// This agent and the others the browser was given.
    Fleet,
    /// One stored run's results.
    Run(i64),
}

/// What every page may read or change (all `Copy` handles).
#[derive(Clone, Copy)]
pub struct Ctx {
    pub token: StoredValue<String>,
    pub live: RwSignal<LiveState>,
    /// The latest API error, shown verbatim at the top.
    pub banner: RwSignal<Option<String>>,
    pub tab: RwSignal<Tab>,
    pub kiosk: bool,
    pub targets: RwSignal<Option<Result<Vec<TargetView>, String>>>,
    /// Runs picked in the history for the side-by-side comparison (`/compare?runs=`).
    pub picked: RwSignal<Vec<i64>>,
}

impl Tab {
    /// The view and selection an address names.
    pub fn from_route(r: crate::route::Route) -> (Tab, Vec<i64>) {
        use crate::route::Route;
        match r {
            Route::Live => (Tab::Live, Vec::new()),
            Route::New => (Tab::NewTest, Vec::new()),
            Route::History => (Tab::History, Vec::new()),
            Route::Compare(ids) => (Tab::History, ids),
            Route::Targets => (Tab::Targets, Vec::new()),
            Route::Fleet => (Tab::Fleet, Vec::new()),
            Route::Run(id) => (Tab::Run(id), Vec::new()),
        }
    }

    /// The address of this view (the history with two or more picked is a comparison).
    pub fn route(self, picked: &[i64]) -> crate::route::Route {
        use crate::route::Route;
        match self {
            Tab::Live => Route::Live,
            Tab::NewTest => Route::New,
            Tab::History if picked.len() >= 2 => Route::Compare(picked.to_vec()),
            Tab::History => Route::History,
            Tab::Targets => Route::Targets,
            Tab::Fleet => Route::Fleet,
            Tab::Run(id) => Route::Run(id),
        }
    }
}

impl Ctx {
    pub fn operator(&self) -> bool {
        !self.kiosk
            && self
                .live
                .with(|s| s.role == Some(shared::api::Role::Operator))
    }

    /// Reloads the target list (busy flags change as runs start and end).
    pub fn reload_targets(&self) {
        let (t, targets) = (self.token.get_value(), self.targets);
        leptos::task::spawn_local(async move { targets.set(Some(crate::api::targets(&t).await)) });
    }

    /// `f` of the first target the agent listed that `pick` takes (`None` when none does
    /// or the list is not in). Tracks the list.
    pub fn find_target<R>(
        &self,
        pick: impl Fn(&TargetView) -> bool,
        f: impl FnOnce(&TargetView) -> R,
    ) -> Option<R> {
        self.targets.with(|t| {
            t.as_ref()
                .and_then(|r| r.as_ref().ok())
                .and_then(|l| l.iter().find(|t| pick(t)))
                .map(f)
        })
    }

    /// The size of `path` as the agent reported it.
    pub fn target_size(&self, path: &str) -> Option<u64> {
        self.find_target(|t| t.path == path, |t| t.size).flatten()
    }

    /// Shows `r`'s error in the banner (and clears it on success).
    pub fn report<T>(&self, r: Result<T, String>) -> Option<T> {
        match r {
            Ok(v) => {
                self.banner.set(None);
                Some(v)
            }
            Err(e) => {
                self.banner.set(Some(e));
                None
            }
        }
    }
}

pub fn ctx() -> Ctx {
    expect_context::<Ctx>()
}

/// Downloads a run's export (the CLI's `--json` document, its CSV, or fio's JSON), named
/// as the agent names it.
pub fn save_export(id: i64, format: &'static str) {
    let name = match format {
        "fio-json" => format!("diskscope-run-{id}-fio.json"),
        _ => format!("diskscope-run-{id}.{format}"),
    };
    save_download(format!("/api/v1/runs/{id}/export?format={format}"), name);
}

/// Downloads every 10 ms bucket of run `id` as CSV.
pub fn save_timeline(id: i64) {
    save_download(
        format!("/api/v1/runs/{id}/timeline?format=csv"),
        format!("diskscope-run-{id}-timeline.csv"),
    );
}

/// Fetches `path` from the agent (with the token) and offers it as `name`.
fn save_download(path: String, name: String) {
    let c = ctx();
    let t = c.token.get_value();
    leptos::task::spawn_local(async move {
        let saved = crate::api::fetch_blob(&t, &path)
            .await
            .and_then(|blob| crate::session::save_blob(&name, &blob));
        c.report(saved);
    });
}

/// A button that asks once more before it acts: the first click arms it (its label becomes
/// `confirm_label`), the second runs `on_confirm`.
#[component]
pub fn ConfirmButton(
    /// Class of the button (tests find it by it); it is always also `danger`.
    class: &'static str,
    label: &'static str,
    confirm_label: String,
    on_confirm: Callback<()>,
) -> impl IntoView {
    let armed = RwSignal::new(false);
    let click = move |_| {
        if armed.get_untracked() {
            armed.set(false);
            on_confirm.run(());
        } else {
            armed.set(true);
        }
    };
    view! {
        <button class=format!("{class} danger") on:click=click>
            {move || if armed.get() { confirm_label.clone() } else { label.to_string() }}
        </button>
    }
}

/// One labelled form field: its control (the children), help, and the error for it.
#[component]
pub fn Field(
    /// The control's DOM id (the label points at it).
    id: String,
    #[prop(into)] label: String,
    #[prop(into)] help: String,
    #[prop(into)] error: Signal<Option<String>>,
    children: Children,
) -> impl IntoView {
    view! {
        <div class="field" class:invalid=move || error.with(Option::is_some)>
            <label for=id>{label}</label>
            {children()}
            <small class="help">{help}</small>
            {move || error.get().map(|e| view! { <span class="field-error" role="alert">{e}</span> })}
        </div>
    }
}
