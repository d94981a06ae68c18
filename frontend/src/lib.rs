//! diskscope dashboard (Leptos, client-side rendered).
//!
//! For now a single page that states the protocol version it speaks; the pages (connect,
//! targets, new test, live run, results, history, compare, kiosk) arrive with the dashboard
//! issue. It depends on `shared` so the browser validates specs with the agent's validator.

use leptos::prelude::*;

/// The workload form's validation, as the browser will run it: same code as the agent.
pub fn validate_spec(spec: &shared::WorkloadSpec) -> Vec<String> {
    match spec.validate() {
        Ok(()) => Vec::new(),
        Err(errs) => errs.iter().map(ToString::to_string).collect(),
    }
}

/// Root component.
#[component]
pub fn App() -> impl IntoView {
    view! {
        <main>
            <h1>"diskscope"</h1>
            <p>"Protocol version " {shared::PROTOCOL_VERSION}</p>
        </main>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn browser_validation_matches_agent() {
        let mut spec = shared::WorkloadSpec::default();
        assert!(validate_spec(&spec).is_empty());
        spec.iodepth = 0;
        assert_eq!(
            validate_spec(&spec),
            vec!["iodepth = 0: must be 1..1024".to_string()]
        );
    }
}
