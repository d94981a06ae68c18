//! A web origin (`http(s)://host[:port]`) as a browser sends it in `Origin`: the agent's
//! `--cors-origin` and the dashboard's fleet addresses are both checked here, so the two
//! agree on what an origin is.

/// `input` as a browser would send it: scheme and host lowercased, a trailing `/` dropped.
/// Anything with a path, another scheme, an empty or malformed host or port is refused,
/// naming the input.
pub fn parse(input: &str) -> Result<String, String> {
    let lower = input.trim().trim_end_matches('/').to_ascii_lowercase();
    let (scheme, rest) = match lower.split_once("://") {
        Some((s @ ("http" | "https"), r)) => (s, r),
        _ => {
            return Err(format!(
                "'{input}' is not an origin: it must start with http:// or https://"
            ))
        }
    };
    if !is_authority(rest) {
        return Err(format!(
            "'{input}' is not an origin: expected scheme://host[:port] without a path, e.g. http://lab-pc:7878"
        ));
    }
    Ok(format!("{scheme}://{rest}"))
}

/// `host`, `host:port` or `[v6]:port`: a non-empty host name or address and a port of
/// 1 to 5 digits.
fn is_authority(a: &str) -> bool {
    // The host ends at the `]` of an IPv6 literal, else at the first `:`.
    let (host_ok, after) = match a.strip_prefix('[') {
        Some(v6) => match v6.split_once(']') {
            Some((h, rest)) => (
                !h.is_empty() && h.chars().all(|c| c.is_ascii_hexdigit() || c == ':'),
                rest,
            ),
            None => return false,
        },
        None => {
            let end = a.find(':').unwrap_or(a.len());
            let h = &a[..end];
            (
                !h.is_empty()
                    && h.chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.'),
                &a[end..],
            )
        }
    };
    let port_ok = after.is_empty()
        || after
            .strip_prefix(':')
            .is_some_and(|p| (1..=5).contains(&p.len()) && p.chars().all(|c| c.is_ascii_digit()));
    host_ok && port_ok
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn origins_are_normalised_as_browsers_send_them_or_refused_by_name() {
        assert_eq!(
            parse("http://lab-pc:7878/").as_deref(),
            Ok("http://lab-pc:7878")
        );
        assert_eq!(
            parse(" HTTPS://Box.Lab:8443 ").as_deref(),
            Ok("https://box.lab:8443")
        );
        assert_eq!(
            parse("http://[::1]:7878").as_deref(),
            Ok("http://[::1]:7878")
        );
        for bad in [
            "lab-pc:7878",
            "ftp://x",
            "http://",
            "http://a/b",
            "*",
            "null",
            "http://a b",
            "http://x:",
            "http://x:80:1",
            "http://[zz]:1",
            "http://:80",
            "http://x:123456",
        ] {
            let e = parse(bad).expect_err(bad);
            assert!(e.contains(&format!("'{bad}'")), "{e}");
        }
    }
}
