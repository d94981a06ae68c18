//! The fleet: other agents (address and token) this browser keeps in its local storage, and
//! the kiosk wall's `?agents=` list. Pure logic, tested natively; the views are
//! `views/fleet.rs`.

use serde::{Deserialize, Serialize};

/// An agent the user added: its base address (`http://lab-pc:7878`) and a token for it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct Member {
    pub url: String,
    pub token: String,
}

/// `input` as an origin the page can call (`shared::origin::parse`, the rule the agent's
/// `--cors-origin` follows): `http://` added when no scheme is given; a path, query or other
/// scheme is refused naming the input.
pub fn normalize_url(input: &str) -> Result<String, String> {
    let t = input.trim();
    if t.is_empty() {
        return Err("enter the agent's address, e.g. http://lab-pc:7878".into());
    }
    let with_scheme = if t.contains("://") {
        t.to_string()
    } else {
        format!("http://{t}")
    };
    shared::origin::parse(&with_scheme).map_err(|_| {
        format!(
            "'{input}' is not an agent's address: expected http(s)://host[:port], e.g. http://lab-pc:7878 (no path)"
        )
    })
}

/// The live stream's address at agent `base` (`ws://…/api/v1/ws`, `wss://` for https).
pub fn ws_url(base: &str) -> String {
    let rest = base
        .strip_prefix("https://")
        .map(|r| format!("wss://{r}"))
        .or_else(|| base.strip_prefix("http://").map(|r| format!("ws://{r}")))
        .unwrap_or_else(|| base.to_string());
    format!("{rest}/api/v1/ws")
}

/// The fleet as stored (a JSON list); anything unreadable is an empty fleet.
pub fn parse(stored: &str) -> Vec<Member> {
    crate::json::parse(stored).unwrap_or_default()
}

pub fn to_json(list: &[Member]) -> String {
    serde_json::to_string(list).unwrap_or_else(|_| "[]".into())
}

/// `list` with `m` added, or replacing the member of the same address (a new token).
pub fn upsert(mut list: Vec<Member>, m: Member) -> Vec<Member> {
    match list.iter_mut().find(|x| x.url == m.url) {
        Some(x) => *x = m,
        None => list.push(m),
    }
    list
}

/// The kiosk wall's `agents` parameter for these addresses (comma-separated).
pub fn agents_param(urls: &[String]) -> String {
    urls.join(",")
}

/// The addresses of `?agents=a,b,c`, normalised; bad ones are returned as errors to show
/// in their tile. Duplicates are dropped.
pub fn parse_agents(param: &str) -> Vec<Result<String, String>> {
    let mut seen = Vec::new();
    param
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(normalize_url)
        .filter(|r| match r {
            Ok(u) if seen.contains(u) => false,
            Ok(u) => {
                seen.push(u.clone());
                true
            }
            Err(_) => true,
        })
        .collect()
}

/// Where to call agent `url` from a page at `own_origin` with `own_token`: the page's own
/// agent by relative paths with its token, another by its address with the fleet's token
/// for it (`None` when the fleet has none).
pub fn route_for(
    url: &str,
    own_origin: &str,
    own_token: &str,
    fleet: &[Member],
) -> Option<(String, String)> {
    if url == own_origin {
        return Some((String::new(), own_token.to_string()));
    }
    fleet
        .iter()
        .find(|m| m.url == url)
        .map(|m| (m.url.clone(), m.token.clone()))
}

/// What the browser says when a cross-origin call fails: the agent is down, or it does not
/// let this page in (no `--cors-origin` for it).
pub fn unreachable_message(url: &str, own_origin: &str, err: &str) -> String {
    format!(
        "cannot reach {url} from this page ({err}): is the agent up, and was it started with \
         --cors-origin {own_origin}?"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_normalised_or_refused_by_name() {
        assert_eq!(
            normalize_url("lab-pc:7878/").as_deref(),
            Ok("http://lab-pc:7878")
        );
        assert_eq!(
            normalize_url(" HTTPS://Box.Lab:8443 ").as_deref(),
            Ok("https://box.lab:8443")
        );
        assert_eq!(
            normalize_url("http://[::1]:7878").as_deref(),
            Ok("http://[::1]:7878")
        );
        for bad in [
            "ftp://x",
            "http://x/api",
            "http://",
            "a b",
            "x:",
            "x:80:1",
            "[zz]:1",
            ":80",
        ] {
            let e = normalize_url(bad).expect_err(bad);
            assert!(e.contains(&format!("'{bad}'")), "{e}");
        }
        assert!(normalize_url("").is_err());
        assert_eq!(ws_url("https://a:1"), "wss://a:1/api/v1/ws");
        assert_eq!(ws_url("http://a:1"), "ws://a:1/api/v1/ws");
    }

    #[test]
    fn the_fleet_round_trips_and_replaces_by_address() {
        let a = Member {
            url: "http://a:1".into(),
            token: "t1".into(),
        };
        let list = upsert(Vec::new(), a.clone());
        let list = upsert(
            list,
            Member {
                url: "http://b:2".into(),
                token: "t2".into(),
            },
        );
        let list = upsert(
            list,
            Member {
                url: "http://a:1".into(),
                token: "t3".into(),
            },
        );
        assert_eq!(list.len(), 2);
        assert_eq!(list[0].token, "t3");
        assert_eq!(parse(&to_json(&list)), list);
        assert!(parse("not json").is_empty());
    }

    #[test]
    fn the_wall_list_finds_tokens_and_names_bad_entries() {
        let fleet = vec![Member {
            url: "http://b:2".into(),
            token: "tb".into(),
        }];
        let urls = parse_agents("http://own:1, b:2,,http://b:2,ftp://c");
        assert_eq!(urls.len(), 3);
        assert_eq!(urls[0].as_deref(), Ok("http://own:1"));
        assert_eq!(urls[1].as_deref(), Ok("http://b:2"));
        assert!(urls[2].is_err());
        assert_eq!(
            route_for("http://own:1", "http://own:1", "mine", &fleet),
            Some((String::new(), "mine".into()))
        );
        assert_eq!(
            route_for("http://b:2", "http://own:1", "mine", &fleet),
            Some(("http://b:2".into(), "tb".into()))
        );
        assert_eq!(
            route_for("http://c:3", "http://own:1", "mine", &fleet),
            None
        );
        assert_eq!(
            agents_param(&["http://a:1".into(), "http://b:2".into()]),
            "http://a:1,http://b:2"
        );
    }
}
