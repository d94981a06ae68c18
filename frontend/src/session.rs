//! The token: from `?token=` in the URL, else remembered in local storage; the fleet's
//! agents and tokens, kept in local storage too (never in a link).

const KEY: &str = "diskscope.token";
const FLEET_KEY: &str = "diskscope.fleet";

/// The other agents this browser was given (address and token).
pub fn load_fleet() -> Vec<crate::fleet::Member> {
    storage()
        .and_then(|s| s.get_item(FLEET_KEY).ok().flatten())
        .map(|t| crate::fleet::parse(&t))
        .unwrap_or_default()
}

pub fn save_fleet(list: &[crate::fleet::Member]) {
    if let Some(s) = storage() {
        let _ = s.set_item(FLEET_KEY, &crate::fleet::to_json(list));
    }
}

/// The page's origin (`http://host:port`), as other agents' `--cors-origin` must name it.
pub fn own_origin() -> String {
    web_sys::window()
        .and_then(|w| w.location().origin().ok())
        .unwrap_or_default()
}

/// A query parameter of the page's address.
pub fn query_param(name: &str) -> Option<String> {
    web_sys::window()
        .and_then(|w| w.location().search().ok())
        .and_then(|q| web_sys::UrlSearchParams::new_with_str(&q).ok())
        .and_then(|p| p.get(name))
        .filter(|v| !v.is_empty())
}

fn storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok()?
}

/// The token to use at start-up.
pub fn initial_token() -> Option<String> {
    if let Some(t) = query_param("token") {
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

fn location() -> Option<web_sys::Location> {
    web_sys::window().map(|w| w.location())
}

/// The view the page's address names.
pub fn route() -> crate::route::Route {
    let l = location();
    let path = l
        .as_ref()
        .and_then(|l| l.pathname().ok())
        .unwrap_or_default();
    let query = l.and_then(|l| l.search().ok()).unwrap_or_default();
    crate::route::parse(&path, &query)
}

/// Puts `href` in the address bar as a new history entry, unless it is there already.
pub fn show_address(href: &str) {
    let Some(l) = location() else { return };
    let now = format!(
        "{}{}",
        l.pathname().unwrap_or_default(),
        l.search().unwrap_or_default()
    );
    if now != href {
        if let Some(h) = web_sys::window().and_then(|w| w.history().ok()) {
            let _ = h.push_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(href));
        }
    }
}

/// Takes `?token=` out of the address once it is remembered (a shared link or a
/// screenshot of the address bar must not carry it).
pub fn drop_token_from_address() {
    let Some(l) = location() else { return };
    if query_param("token").is_none() {
        return;
    }
    let query = l.search().unwrap_or_default();
    let href = format!(
        "{}{}",
        l.pathname().unwrap_or_default(),
        crate::route::without_token(&query)
    );
    if let Some(h) = web_sys::window().and_then(|w| w.history().ok()) {
        let _ = h.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&href));
    }
}

/// Whether the system asks for a dark theme (charts then draw dark, as the page is).
pub fn prefers_dark() -> bool {
    web_sys::window()
        .and_then(|w| w.match_media("(prefers-color-scheme: dark)").ok().flatten())
        .is_some_and(|m| m.matches())
}

/// Whether the page is the kiosk view.
pub fn is_kiosk() -> bool {
    web_sys::window()
        .and_then(|w| w.location().pathname().ok())
        .is_some_and(|p| p.starts_with("/kiosk"))
}

/// Offers `text` to the user as a file download named `name`.
pub fn save_file(name: &str, mime: &str, text: &str) -> Result<(), String> {
    use wasm_bindgen::JsCast;
    let err = crate::js_error;
    let parts = js_sys::Array::of1(&wasm_bindgen::JsValue::from_str(text));
    let opts = web_sys::BlobPropertyBag::new();
    opts.set_type(mime);
    let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &opts).map_err(err)?;
    let url = web_sys::Url::create_object_url_with_blob(&blob).map_err(err)?;
    let doc = web_sys::window()
        .and_then(|w| w.document())
        .ok_or("no document")?;
    let a: web_sys::HtmlAnchorElement = doc.create_element("a").map_err(err)?.unchecked_into();
    a.set_href(&url);
    a.set_download(name);
    a.click();
    let _ = web_sys::Url::revoke_object_url(&url);
    Ok(())
}

/// Offers a `Blob` (a streamed export) as a file download named `name`.
pub fn save_blob(name: &str, blob: &web_sys::Blob) -> Result<(), String> {
    let url = web_sys::Url::create_object_url_with_blob(blob).map_err(crate::js_error)?;
    let saved = save_url(name, &url);
    let _ = web_sys::Url::revoke_object_url(&url);
    saved
}

/// Offers a `data:` URL (a canvas's PNG) as a file download named `name`.
pub fn save_url(name: &str, url: &str) -> Result<(), String> {
    use wasm_bindgen::JsCast;
    let doc = web_sys::window()
        .and_then(|w| w.document())
        .ok_or("no document")?;
    let a: web_sys::HtmlAnchorElement = doc
        .create_element("a")
        .map_err(crate::js_error)?
        .unchecked_into();
    a.set_href(url);
    a.set_download(name);
    a.click();
    Ok(())
}
