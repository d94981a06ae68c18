//! Every view has its own address: `/` (live), `/new`, `/history`, `/compare?runs=A,B`,
//! `/targets`, `/fleet`, `/runs/ID`; `/kiosk` is the kiosk. Pure mapping both ways, tested
//! natively; `app.rs` keeps the address bar and the view in step. Tokens never go into
//! these addresses.

/// A view and what it shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Route {
    Live,
    New,
    History,
    /// The history with these runs picked side by side.
    Compare(Vec<i64>),
    Targets,
    Fleet,
    Run(i64),
}

/// The query parameter `name` of `query` (`?a=1&b=2`, with or without the `?`).
pub fn param(query: &str, name: &str) -> Option<String> {
    query
        .trim_start_matches('?')
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.replace("%2C", ",").replace("%2c", ","))
}

/// The view an address names; anything unknown is the live view.
pub fn parse(path: &str, query: &str) -> Route {
    let path = path.trim_end_matches('/');
    match path {
        "/new" => Route::New,
        "/history" => Route::History,
        "/targets" => Route::Targets,
        "/fleet" => Route::Fleet,
        "/compare" => Route::Compare(
            param(query, "runs")
                .unwrap_or_default()
                .split(',')
                .filter_map(|s| s.trim().parse().ok())
                .collect(),
        ),
        _ => path
            .strip_prefix("/runs/")
            .and_then(|id| id.parse().ok())
            .map_or(Route::Live, Route::Run),
    }
}

/// The address of a view.
pub fn href(r: &Route) -> String {
    match r {
        Route::Live => "/".into(),
        Route::New => "/new".into(),
        Route::History => "/history".into(),
        Route::Compare(ids) if ids.len() >= 2 => format!(
            "/compare?runs={}",
            ids.iter().map(i64::to_string).collect::<Vec<_>>().join(",")
        ),
        Route::Compare(_) => "/history".into(),
        Route::Targets => "/targets".into(),
        Route::Fleet => "/fleet".into(),
        Route::Run(id) => format!("/runs/{id}"),
    }
}

/// `query` without its `token` parameter (the token is remembered in local storage and
/// must not stay in an address someone may share); `""` when nothing else is left.
pub fn without_token(query: &str) -> String {
    let kept: Vec<&str> = query
        .trim_start_matches('?')
        .split('&')
        .filter(|kv| !kv.is_empty() && !kv.starts_with("token="))
        .collect();
    if kept.is_empty() {
        String::new()
    } else {
        format!("?{}", kept.join("&"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_view_round_trips_through_its_address() {
        for r in [
            Route::Live,
            Route::New,
            Route::History,
            Route::Compare(vec![3, 7]),
            Route::Targets,
            Route::Fleet,
            Route::Run(42),
        ] {
            let h = href(&r);
            let (path, query) = h.split_once('?').unwrap_or((&h, ""));
            assert_eq!(parse(path, query), r, "{h}");
        }
        assert_eq!(parse("/runs/x", ""), Route::Live);
        assert_eq!(parse("/nowhere", ""), Route::Live);
        assert_eq!(parse("/compare", "?runs=1%2C2"), Route::Compare(vec![1, 2]));
        assert_eq!(href(&Route::Compare(vec![1])), "/history");
    }

    #[test]
    fn tokens_are_dropped_from_addresses() {
        assert_eq!(without_token("?token=abc"), "");
        assert_eq!(
            without_token("?token=abc&agents=http://a:1,http://b:2"),
            "?agents=http://a:1,http://b:2"
        );
        assert_eq!(without_token(""), "");
    }
}
