//! In-process router tests: every endpoint through the real router, store and manager, with
//! the null backend so runs need no device.

use super::{router, AppState};
use crate::service::access::AccessPolicy;
use crate::service::manager::Manager;
use crate::service::tokens::Tokens;
use crate::store::Store;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use axum::Router;
use serde_json::{json, Value};
use std::sync::Arc;
use tower::ServiceExt;

const OP: &str = "operator-token";
const VIEW: &str = "viewer-token";

struct Fixture {
    dir: tempfile::TempDir,
    app: Router,
}

fn fixture() -> Fixture {
    // Targets anywhere in `dir`; the agent's own state in `dir/data` (never a target).
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    std::fs::create_dir(&data).expect("mkdir");
    let store = Arc::new(Store::open(&data.join("diskscope.db")).expect("store"));
    let access = AccessPolicy::new(data.join("scratch.bin"), &[dir.path().to_path_buf()], &[]);
    let state = AppState {
        manager: Manager::new(store, access),
        tokens: Arc::new(Tokens {
            operator: OP.into(),
            viewer: VIEW.into(),
        }),
        failures: Default::default(),
        origins: Default::default(),
    };
    Fixture {
        app: router(state),
        dir,
    }
}

impl Fixture {
    async fn call(
        &self,
        method: &str,
        path: &str,
        token: Option<&str>,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        let mut req = Request::builder().method(method).uri(path);
        if let Some(t) = token {
            req = req.header("authorization", format!("Bearer {t}"));
        }
        let body = match body {
            Some(b) => {
                req = req.header("content-type", "application/json");
                Body::from(b.to_string())
            }
            None => Body::empty(),
        };
        let resp = self
            .app
            .clone()
            .oneshot(req.body(body).expect("request"))
            .await
            .expect("response");
        let status = resp.status();
        let bytes = axum::body::to_bytes(resp.into_body(), 16 << 20)
            .await
            .expect("body");
        let value = serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into()));
        (status, value)
    }

    fn target(&self, name: &str) -> String {
        self.dir.path().join(name).display().to_string()
    }

    /// A null-backend run: no device, just the engine and the pipeline.
    fn null_run(&self, name: &str, runtime_ms: u64) -> Value {
        json!({"target": self.target(name), "spec": {"backend": "null", "rw": "randread", "iodepth": 8,
               "runtime_ms": runtime_ms, "interval_ms": 100}})
    }

    async fn wait_status(&self, id: i64, want: &str) -> Value {
        for _ in 0..100 {
            let (_, run) = self
                .call("GET", &format!("/api/v1/runs/{id}"), Some(VIEW), None)
                .await;
            if run["status"] == want {
                return run;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        panic!("run {id} never became {want}");
    }
}

#[tokio::test]
async fn auth_matrix() {
    let f = fixture();
    let operator_only = [
        ("POST", "/api/v1/runs"),
        ("POST", "/api/v1/runs/1/stop"),
        ("DELETE", "/api/v1/runs/1"),
    ];
    let readers = [
        ("GET", "/api/v1/targets"),
        ("GET", "/api/v1/presets"),
        ("GET", "/api/v1/runs"),
        ("GET", "/api/v1/runs/1"),
        ("GET", "/api/v1/runs/1/samples"),
        ("GET", "/api/v1/runs/1/export"),
        ("GET", "/metrics"),
    ];
    for (m, p) in operator_only.iter().chain(readers.iter()) {
        let (s, body) = f.call(m, p, None, None).await;
        assert_eq!(s, StatusCode::UNAUTHORIZED, "{m} {p} without a token");
        assert_eq!(body["code"], "unauthorized");
        let (s, _) = f.call(m, p, Some("wrong"), None).await;
        assert_eq!(s, StatusCode::UNAUTHORIZED, "{m} {p} with a wrong token");
    }
    for (m, p) in operator_only {
        let (s, body) = f.call(m, p, Some(VIEW), None).await;
        assert_eq!(s, StatusCode::FORBIDDEN, "{m} {p} as viewer");
        assert_eq!(body["code"], "forbidden");
        let (s, _) = f.call(m, p, Some(OP), None).await;
        assert!(
            s != StatusCode::FORBIDDEN && s != StatusCode::UNAUTHORIZED,
            "{m} {p} as operator: {s}"
        );
    }
    for (m, p) in readers {
        let (s, _) = f.call(m, p, Some(VIEW), None).await;
        assert!(
            s == StatusCode::OK || s == StatusCode::NOT_FOUND,
            "{m} {p} as viewer: {s}"
        );
    }
    let (s, body) = f.call("GET", "/api/v1/health", None, None).await;
    assert_eq!((s, body["status"].as_str()), (StatusCode::OK, Some("ok")));
    assert_eq!(body["protocol_version"], shared::PROTOCOL_VERSION);
}

#[tokio::test]
async fn bad_requests_name_the_bad_value() {
    let f = fixture();
    let bad_spec = json!({"target": f.target("t.bin"), "spec": {"iodepth": 0}});
    let (s, body) = f
        .call("POST", "/api/v1/runs", Some(OP), Some(bad_spec))
        .await;
    assert_eq!(
        (s, body["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_spec"))
    );
    assert!(
        body["message"].as_str().unwrap().contains("iodepth = 0"),
        "{body}"
    );

    let unknown = json!({"target": f.target("t.bin"), "spec": {}, "colour": "red"});
    let (s, body) = f
        .call("POST", "/api/v1/runs", Some(OP), Some(unknown))
        .await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    assert!(
        body["message"].as_str().unwrap().contains("colour"),
        "{body}"
    );

    let unknown_spec_field = json!({"target": f.target("t.bin"), "spec": {"blocksize": 4096}});
    let (_, body) = f
        .call("POST", "/api/v1/runs", Some(OP), Some(unknown_spec_field))
        .await;
    assert!(
        body["message"].as_str().unwrap().contains("blocksize"),
        "{body}"
    );

    // Sizes and durations as the CLI writes them: a bad one names its value, good ones run.
    let bad_size = json!({"target": f.target("t.bin"), "spec": {"bs": "4Q"}});
    let (s, body) = f
        .call("POST", "/api/v1/runs", Some(OP), Some(bad_size))
        .await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    assert!(body["message"].as_str().unwrap().contains("'4Q'"), "{body}");
    let cli_forms = json!({"target": f.target("forms.bin"), "spec": {"rw": "write", "bs": "64k",
        "size": "1M", "runtime_ms": "200ms", "interval_ms": "100ms", "rate": "50MB"}});
    let (s, body) = f
        .call("POST", "/api/v1/runs", Some(OP), Some(cli_forms))
        .await;
    assert_eq!(s, StatusCode::CREATED, "{body}");
    let id = body["id"].as_i64().unwrap();
    let (_, run) = f
        .call("GET", &format!("/api/v1/runs/{id}"), Some(OP), None)
        .await;
    assert_eq!(run["spec"]["bs"], 65536, "{run}");
    assert_eq!(run["spec"]["rate"]["bytes_per_sec"], 50_000_000, "{run}");

    let huge = json!({"target": "x".repeat(super::BODY_LIMIT + 1)});
    let (s, _) = f.call("POST", "/api/v1/runs", Some(OP), Some(huge)).await;
    assert_eq!(s, StatusCode::PAYLOAD_TOO_LARGE);

    let (s, body) = f
        .call(
            "POST",
            "/api/v1/runs",
            Some(OP),
            Some(json!({"target": f.target("t.bin"), "preset": "warp"})),
        )
        .await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    assert!(
        body["message"].as_str().unwrap().contains("'warp'"),
        "{body}"
    );

    // An option the preset does not take is refused by name, not ignored.
    let (s, body) = f
        .call(
            "POST",
            "/api/v1/runs",
            Some(OP),
            Some(json!({"target": f.target("t.bin"), "preset": "atto", "options": {"count": 3, "interval_ms": 100, "size": 8388608}})),
        )
        .await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{body}");
    let msg = body["message"].as_str().unwrap();
    assert!(
        msg.contains("does not use count = 3")
            && msg.contains("takes: size, runtime, verify, interval"),
        "{body}"
    );
    let (s, body) = f
        .call(
            "POST",
            "/api/v1/runs",
            Some(OP),
            Some(json!({"target": f.target("t.bin"), "preset": "atto", "options": {"speed": 3}})),
        )
        .await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{body}");
    assert!(
        body["message"].as_str().unwrap().contains("speed"),
        "{body}"
    );

    let (s, body) = f
        .call(
            "POST",
            "/api/v1/runs",
            Some(OP),
            Some(json!({"target": "/etc/passwd", "preset": "quick"})),
        )
        .await;
    assert_eq!(
        (s, body["code"].as_str()),
        (StatusCode::FORBIDDEN, Some("target_not_allowed"))
    );
    assert!(
        body["message"].as_str().unwrap().contains("/etc/passwd"),
        "{body}"
    );

    let (s, body) = f
        .call("GET", "/api/v1/runs?status=sleeping", Some(VIEW), None)
        .await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    assert!(
        body["message"].as_str().unwrap().contains("'sleeping'"),
        "{body}"
    );

    let (s, body) = f.call("GET", "/api/v1/runs/99", Some(VIEW), None).await;
    assert_eq!(
        (s, body["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("not_found"))
    );
    let (s, body) = f
        .call("GET", "/api/v1/nothing-here", Some(VIEW), None)
        .await;
    assert_eq!(
        (s, body["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("not_found"))
    );
}

#[tokio::test]
async fn run_lifecycle_through_the_api() {
    let f = fixture();
    let (s, body) = f
        .call(
            "POST",
            "/api/v1/runs",
            Some(OP),
            Some(f.null_run("a.bin", 60_000)),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{body}");
    let id = body["id"].as_i64().expect("id");
    let (s, body) = f
        .call(
            "POST",
            "/api/v1/runs",
            Some(OP),
            Some(f.null_run("a.bin", 1000)),
        )
        .await;
    assert_eq!(
        (s, body["code"].as_str()),
        (StatusCode::CONFLICT, Some("target_busy"))
    );
    let (s, _) = f
        .call("DELETE", &format!("/api/v1/runs/{id}"), Some(OP), None)
        .await;
    assert_eq!(s, StatusCode::CONFLICT, "a running run cannot be deleted");

    tokio::time::sleep(std::time::Duration::from_millis(600)).await;
    let (s, _) = f
        .call("POST", &format!("/api/v1/runs/{id}/stop"), Some(OP), None)
        .await;
    assert_eq!(s, StatusCode::ACCEPTED);
    let run = f.wait_status(id, "stopped").await;
    assert!(run["summary"]["read"]["ios"].as_u64().unwrap() > 1000);

    let (_, body) = f
        .call(
            "GET",
            &format!("/api/v1/runs/{id}/samples"),
            Some(VIEW),
            None,
        )
        .await;
    let samples = body["samples"].as_array().expect("samples");
    assert!(samples.len() >= 4, "{} samples", samples.len());
    let (_, tail) = f
        .call(
            "GET",
            &format!("/api/v1/runs/{id}/samples?after_seq=2"),
            Some(VIEW),
            None,
        )
        .await;
    assert_eq!(tail["samples"][0]["seq"], 3);

    let (s, report) = f
        .call(
            "GET",
            &format!("/api/v1/runs/{id}/export?format=json"),
            Some(VIEW),
            None,
        )
        .await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(report["status"], "stopped");
    assert_eq!(report["samples"].as_array().unwrap().len(), samples.len());
    assert!(!report["histogram"]["read"].as_array().unwrap().is_empty());
    let (s, csv) = f
        .call(
            "GET",
            &format!("/api/v1/runs/{id}/export?format=csv"),
            Some(VIEW),
            None,
        )
        .await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(csv.as_str().unwrap().lines().count(), samples.len() + 1);

    let (_, list) = f
        .call("GET", "/api/v1/runs?status=stopped", Some(VIEW), None)
        .await;
    assert_eq!(list["total"], 1);
    let (_, metrics) = f.call("GET", "/metrics", Some(VIEW), None).await;
    assert!(
        metrics
            .as_str()
            .unwrap()
            .contains("diskscope_runs{status=\"stopped\"} 1"),
        "{metrics}"
    );

    let (s, _) = f
        .call("DELETE", &format!("/api/v1/runs/{id}"), Some(OP), None)
        .await;
    assert_eq!(s, StatusCode::NO_CONTENT);
    let (s, _) = f
        .call("GET", &format!("/api/v1/runs/{id}"), Some(VIEW), None)
        .await;
    assert_eq!(s, StatusCode::NOT_FOUND);

    // A short run completes on its own and frees the target.
    let (s, body) = f
        .call(
            "POST",
            "/api/v1/runs",
            Some(OP),
            Some(f.null_run("a.bin", 300)),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED);
    f.wait_status(body["id"].as_i64().unwrap(), "completed")
        .await;
}
