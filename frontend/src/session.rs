//! The token: from `?token=` in the URL, else remembered in local storage.

const KEY: &str = "diskscope.token";

fn storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok()?
}

/// The token to use at start-up.
pub fn initial_token() -> Option<String> {
    let from_url = web_sys::window()
        .and_then(|w| w.location().search().ok())
        .and_then(|q| web_sys::UrlSearchParams::new_with_str(&q).ok())
        .and_then(|p| p.get("token"))
        .filter(|t| !t.is_empty());
    if let Some(t) = from_url {
        remember(&t);
        return Some(t);
    }
    storage()?.get_item(KEY).ok()?.filter(|t| !t.is_empty())
}

pub fn remember(token: &str) {
    if let Some(s) = storage() {
        let _ = s.set_item(KEY, token);
    }
}

pub fn forget() {
    if let Some(s) = storage() {
        let _ = s.remove_item(KEY);
    }
}

/// `ws://host/api/v1/ws` (or `wss://`) for the page's own origin.
pub fn ws_url() -> String {
    let loc = web_sys::window().map(|w| w.location());
    let host = loc.as_ref().and_then(|l| l.host().ok()).unwrap_or_default();
    let secure = loc
        .and_then(|l| l.protocol().ok())
        .is_some_and(|p| p == "https:");
    format!("{}://{host}/api/v1/ws", if secure { "wss" } else { "ws" })
}

/// Whether the page is the kiosk view.
pub fn is_kiosk() -> bool {
    web_sys::window()
        .and_then(|w| w.location().pathname().ok())
        .is_some_and(|p| p.starts_with("/kiosk"))
}
