//! The dashboard's static files, embedded in the binary from `static/` at build time. Paths
//! that name no file get `index.html` (the app routes on the client: `/kiosk`, `/runs/3`).
//! A file built with a `.br` and `.gz` beside it (the wasm bundle and its JavaScript,
//! `scripts/build-frontend.sh`) goes out precompressed to browsers that accept brotli or
//! gzip.

use axum::http::{header, HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use rust_embed::RustEmbed;

#[derive(RustEmbed)]
#[folder = "../static/"]
struct Assets;

/// Whether the request's `Accept-Encoding` takes `coding` (not refused with `q=0`).
fn accepts(headers: &HeaderMap, coding: &str) -> bool {
    headers
        .get_all(header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|part| {
            let mut it = part.split(';').map(str::trim);
            let c = it.next().unwrap_or("");
            let refused = it.any(|p| p.replace(' ', "") == "q=0");
            (c.eq_ignore_ascii_case(coding) || c == "*") && !refused
        })
}

pub async fn serve(uri: Uri, headers: HeaderMap) -> Response {
    let path = uri.path().trim_start_matches('/');
    let (name, file) = match Assets::get(path).filter(|_| !path.is_empty()) {
        Some(f) => (path, f),
        None => match Assets::get("index.html") {
            Some(f) => ("index.html", f),
            None => return (StatusCode::NOT_FOUND, "dashboard not built").into_response(),
        },
    };
    let mime = file.metadata.mimetype().to_string();
    let cache = if name == "index.html" {
        "no-cache"
    } else {
        "public, max-age=3600"
    };
    let packed = [("br", "br"), ("gzip", "gz")]
        .into_iter()
        .find_map(|(coding, ext)| {
            accepts(&headers, coding)
                .then(|| Assets::get(&format!("{name}.{ext}")))
                .flatten()
                .map(|f| (coding, f))
        });
    match packed {
        Some((coding, f)) => (
            [
                (header::CONTENT_TYPE, mime),
                (header::CACHE_CONTROL, cache.to_string()),
                (header::CONTENT_ENCODING, coding.to_string()),
                (header::VARY, "accept-encoding".to_string()),
            ],
            f.data,
        )
            .into_response(),
        None => (
            [
                (header::CONTENT_TYPE, mime),
                (header::CACHE_CONTROL, cache.to_string()),
                (header::VARY, "accept-encoding".to_string()),
            ],
            file.data,
        )
            .into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::accepts;
    use axum::http::{header, HeaderMap, HeaderValue};

    #[test]
    fn gzip_only_when_the_browser_takes_it() {
        let with = |v: &'static str| {
            let mut h = HeaderMap::new();
            h.insert(header::ACCEPT_ENCODING, HeaderValue::from_static(v));
            accepts(&h, "gzip")
        };
        assert!(with("gzip, deflate, br, zstd"));
        assert!(with("br;q=1.0, GZIP;q=0.5"));
        assert!(!with("br, gzip;q=0"));
        assert!(!with("identity"));
        assert!(!accepts(&HeaderMap::new(), "gzip"));
    }
}
