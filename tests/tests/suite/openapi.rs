//! `/api/v1/openapi.json` against the real routes of a real `diskscope serve`: every
//! documented operation answers (not 404, not 405) with its documented success status and a
//! body its schema accepts, every method the document leaves out of a path is 405, a path
//! it does not list is 404; a request body the document describes (sizes as strings) is one
//! the agent takes. Cross-origin calls (`--cors-origin`): allowed origins get CORS headers
//! and preflights, others and agents without the flag none.

use serde_json::{json, Value};
use tests::server::{Server, WsClient, OP, VIEW};
use tests::*;

/// A validator for `#/components/schemas/NAME` (or an inline schema) of `doc`.
fn validator(doc: &Value, schema: &Value) -> jsonschema::Validator {
    let mut root = schema.clone();
    if let Some(o) = root.as_object_mut() {
        o.insert("components".into(), doc["components"].clone());
    } else {
        root = json!({"allOf": [schema], "components": doc["components"]});
    }
    jsonschema::validator_for(&root).unwrap_or_else(|e| panic!("schema {schema}: {e}"))
}

fn check(doc: &Value, schema: &Value, body: &Value, what: &str) {
    let v = validator(doc, schema);
    let errors: Vec<String> = v
        .iter_errors(body)
        .take(5)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{what}: the body does not match its schema: {errors:?}"
    );
}

/// The documented success status of an operation and its JSON schema, if any.
fn success(op: &Value) -> (u16, Option<Value>) {
    let responses = op["responses"].as_object().expect("responses");
    let (code, r) = responses
        .iter()
        .find(|(k, _)| k.as_str() != "default")
        .expect("a success response");
    (
        code.parse().expect("status"),
        r["content"]["application/json"].get("schema").cloned(),
    )
}

#[test]
fn the_openapi_document_matches_the_routes() {
    require_io_uring!();
    let root = disk_tempdir();
    let server = Server::start(&root.path().join("data"), &[]);
    let (status, doc) = server.get("/api/v1/openapi.json", "");
    assert_eq!(status, 200, "the document needs no token: {doc}");
    assert_eq!(doc["openapi"], "3.1.0");
    let paths = doc["paths"].as_object().expect("paths").clone();
    assert!(paths.len() >= 14, "{} paths", paths.len());

    // A run to point `{id}` at, started with a body the document describes (sizes and
    // durations as the CLI writes them).
    let scratch = server.scratch_target();
    let create = json!({"target": scratch, "name": "openapi",
        "spec": {"rw": "randread", "bs": "4k", "size": "16M", "runtime_ms": "1s", "interval_ms": "100ms"}});
    let post = &doc["paths"]["/api/v1/runs"]["post"];
    check(
        &doc,
        &post["requestBody"]["content"]["application/json"]["schema"],
        &create,
        "POST /api/v1/runs request",
    );
    let (status, _, created) = server.call("POST", "/api/v1/runs", OP, Some(&create), &[]);
    assert_eq!(status, success(post).0, "{created}");
    check(&doc, &success(post).1.expect("schema"), &created, "Created");
    let id = created["id"].as_i64().expect("id");
    server.wait_status(id, "completed");
    // A long one to stop, then delete.
    let long = json!({"target": scratch, "spec": {"rw": "read", "bs": "1M", "size": "16M", "runtime_ms": "60s"}});

    let mut checked = 1; // the POST above
    let t0 = std::time::Instant::now();
    for (path, item) in &paths {
        for method in ["get", "post", "delete", "put", "patch"] {
            let upper = method.to_uppercase();
            let Some(op) = item.get(method) else {
                // Not documented: the route must not take it either.
                let url = path.replace("{id}", &id.to_string());
                let (status, _, body) = server.call(&upper, &url, OP, None, &[]);
                assert_eq!(
                    status, 405,
                    "{upper} {path} is not documented but answered {status}: {body}"
                );
                continue;
            };
            let (want, schema) = success(op);
            let (url, token, body) = match (method, path.as_str()) {
                ("post", "/api/v1/runs") => continue, // checked above
                ("post", "/api/v1/groups") => {
                    // A group of one: this agent coordinating itself.
                    let body = json!({"agents": [{"address": format!("http://{}", server.addr), "token": OP}],
                        "target": scratch, "spec": {"rw": "randread", "bs": "4k", "size": "16M", "runtime_ms": "300ms"},
                        "lead_ms": 300});
                    check(
                        &doc,
                        &op["requestBody"]["content"]["application/json"]["schema"],
                        &body,
                        "POST /api/v1/groups request",
                    );
                    let (status, _, resp) = server.call("POST", path, OP, Some(&body), &[]);
                    assert_eq!(status, want, "POST {path}: {resp}");
                    check(&doc, &schema.expect("schema"), &resp, "POST /api/v1/groups");
                    let group = resp["id"].as_i64().expect("id");
                    server.wait_status(group, "completed");
                    checked += 1;
                    continue;
                }
                ("post", "/api/v1/fio-jobs/check") => {
                    let body = json!({"target": scratch,
                        "fio_job": "[seq]\nrw=write\nbs=1m\nsize=16m\n\n[rand]\nstonewall\nrw=randread\nsize=16m\n"});
                    check(
                        &doc,
                        &op["requestBody"]["content"]["application/json"]["schema"],
                        &body,
                        "POST /api/v1/fio-jobs/check request",
                    );
                    (path.clone(), OP, Some(body))
                }
                ("post", "/api/v1/specs/check") => {
                    // A spec with a problem: the answer names it.
                    let body = json!({"rw": "randread", "iodepth": 0});
                    check(
                        &doc,
                        &op["requestBody"]["content"]["application/json"]["schema"],
                        &body,
                        "POST /api/v1/specs/check request",
                    );
                    (path.clone(), OP, Some(body))
                }
                ("post", "/api/v1/specs/read") => {
                    // The form's fields with a problem: the answer names it by field.
                    let body = json!({"fields": {"rw": "randread", "iodepth": "0", "bs": "4K"}});
                    check(
                        &doc,
                        &op["requestBody"]["content"]["application/json"]["schema"],
                        &body,
                        "POST /api/v1/specs/read request",
                    );
                    (path.clone(), OP, Some(body))
                }
                ("post", "/api/v1/specs/fields") => {
                    let body = json!({"rw": "randread", "bs": "64k", "iodepth": 8});
                    check(
                        &doc,
                        &op["requestBody"]["content"]["application/json"]["schema"],
                        &body,
                        "POST /api/v1/specs/fields request",
                    );
                    (path.clone(), OP, Some(body))
                }
                ("post", "/api/v1/flushcheck/verify") => {
                    // This agent as its own witness, a session with no record yet: the
                    // scratch file (written by the run above) is read back against it.
                    let (s, session) = server.post(
                        "/api/v1/witness",
                        OP,
                        &json!({"target": scratch, "host": "capture", "bs": 4096,
                            "start": 0, "blocks": 16, "nonce": 7}),
                    );
                    assert_eq!(s, 201, "{session}");
                    let body = json!({"target": scratch, "witness": format!("http://{}", server.addr),
                        "token": OP, "session": session["id"]});
                    check(
                        &doc,
                        &op["requestBody"]["content"]["application/json"]["schema"],
                        &body,
                        "POST /api/v1/flushcheck/verify request",
                    );
                    (path.clone(), OP, Some(body))
                }
                ("post", "/api/v1/witness") => {
                    let body = json!({"target": "/dev/sdz", "host": "capture", "bs": 4096,
                        "start": 0, "blocks": 16, "nonce": 7});
                    check(
                        &doc,
                        &op["requestBody"]["content"]["application/json"]["schema"],
                        &body,
                        "POST /api/v1/witness request",
                    );
                    (path.clone(), OP, Some(body))
                }
                ("post", "/api/v1/witness/{id}/durable") | ("get", "/api/v1/witness/{id}") => {
                    // A session of its own.
                    let (s, session) = server.post(
                        "/api/v1/witness",
                        OP,
                        &json!({"target": "/dev/sdz", "host": "capture", "bs": 4096,
                            "start": 0, "blocks": 16, "nonce": 7}),
                    );
                    assert_eq!(s, 201, "{session}");
                    let url = path.replace("{id}", &session["id"].to_string());
                    if method == "get" {
                        (url, VIEW, None)
                    } else {
                        let body = json!({"records": [{"offset": 4096, "seq": 1}]});
                        check(
                            &doc,
                            &op["requestBody"]["content"]["application/json"]["schema"],
                            &body,
                            "POST /api/v1/witness/{id}/durable request",
                        );
                        (url, OP, Some(body))
                    }
                }
                ("get", "/api/v1/witness") => {
                    // A host and target no session names: an empty list, as the schema says.
                    (format!("{path}?host=nobody&target=%2Fnowhere"), VIEW, None)
                }
                ("post", "/api/v1/runs/{id}/stop") | ("delete", "/api/v1/runs/{id}") => {
                    // A run of its own: stopped while running, deleted once ended.
                    let other = server.start_run(&long);
                    if method == "delete" {
                        let (s, _, _) = server.call(
                            "POST",
                            &format!("/api/v1/runs/{other}/stop"),
                            OP,
                            None,
                            &[],
                        );
                        assert_eq!(s, 202);
                        server.wait_status(other, "stopped");
                    } else {
                        server.wait_samples(other, 1);
                    }
                    (path.replace("{id}", &other.to_string()), OP, None)
                }
                ("get", "/api/v1/ws") => {
                    // A real upgrade, and the hello its server-message schema describes.
                    let rt = tokio::runtime::Runtime::new().expect("runtime");
                    rt.block_on(async {
                        let mut c = WsClient::connect(&server, VIEW, true).await;
                        c.send(&shared::api::ClientMsg::Subscribe {
                            run_id: id,
                            after_seq: None,
                            max_points: Some(16),
                        })
                        .await;
                        let msg =
                            serde_json::to_value(c.next().await.expect("a message")).expect("json");
                        check(
                            &doc,
                            &op["responses"]["101"]["x-server-message"],
                            &msg,
                            "ServerMsg",
                        );
                    });
                    checked += 1;
                    continue;
                }
                _ => (
                    path.replace("{id}", &id.to_string()),
                    if op["x-diskscope-role"] == "none" {
                        ""
                    } else {
                        VIEW
                    },
                    None::<Value>,
                ),
            };
            let (status, headers, resp) = server.call(&upper, &url, token, body.as_ref(), &[]);
            assert_eq!(status, want, "{upper} {url}: {resp}");
            if let Some(schema) = schema {
                check(&doc, &schema, &resp, &format!("{upper} {url}"));
            } else if path.ends_with("/export") {
                let report = &op["responses"]["200"]["content"]["application/json"]["schema"];
                check(&doc, report, &resp, "the exported report");
            }
            if path == "/metrics" {
                let ct = headers
                    .get("content-type")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("");
                assert!(ct.starts_with("text/plain"), "{ct}");
            }
            checked += 1;
            eprintln!("{upper} {path}: {status} at {:?}", t0.elapsed());
        }
    }
    assert!(checked >= 16, "{checked} operations checked");
    // The role each operation names is the one the agent enforces.
    let (status, _, _) = server.call("POST", "/api/v1/runs", VIEW, Some(&create), &[]);
    assert_eq!(status, 403, "a viewer may not start runs");
    let (status, _, _) = server.call("GET", "/api/v1/runs", "", None, &[]);
    assert_eq!(status, 401);
    let (status, _, body) = server.call("GET", "/api/v1/nothing-here", OP, None, &[]);
    assert_eq!(status, 404, "{body}");
    eprintln!("{checked} documented operations answered as documented");
}

#[test]
fn cross_origin_calls_only_for_the_named_origins() {
    let root = disk_tempdir();
    let data = root.path().join("data");
    let hub = "http://hub.example:7878";
    let preflight = |server: &Server, origin: &str| {
        server.call(
            "OPTIONS",
            "/api/v1/runs",
            "",
            None,
            &[
                ("Origin", origin),
                ("Access-Control-Request-Method", "POST"),
                (
                    "Access-Control-Request-Headers",
                    "authorization,content-type",
                ),
            ],
        )
    };
    let allow_origin = |h: &ureq::http::HeaderMap| {
        h.get("access-control-allow-origin")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    {
        let server = Server::start(&data, &[]);
        let (_, h, _) = preflight(&server, hub);
        assert_eq!(allow_origin(&h), None, "CORS is off by default");
        let (status, h, _) = server.call("GET", "/api/v1/targets", VIEW, None, &[("Origin", hub)]);
        assert_eq!((status, allow_origin(&h)), (200, None));
    }
    // Written as a person might (capitals, a trailing slash): browsers send it lowercase.
    let written = format!("{}/", hub.to_uppercase());
    let server = Server::start_args(&data, &[], &["--cors-origin", &written]);
    let (status, h, _) = preflight(&server, hub);
    assert!((200..300).contains(&status), "preflight {status}");
    assert_eq!(allow_origin(&h).as_deref(), Some(hub));
    let methods = h
        .get("access-control-allow-methods")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_uppercase();
    assert!(
        methods.contains("POST") && methods.contains("DELETE"),
        "{methods}"
    );
    let allowed_headers = h
        .get("access-control-allow-headers")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    assert!(
        allowed_headers.contains("authorization"),
        "{allowed_headers}"
    );
    let (status, h, _) = server.call("GET", "/api/v1/targets", VIEW, None, &[("Origin", hub)]);
    assert_eq!((status, allow_origin(&h).as_deref()), (200, Some(hub)));
    // Another origin gets no CORS headers (the browser then refuses the page the answer),
    // and the token is still checked for the allowed one.
    let (_, h, _) = preflight(&server, "http://evil.example");
    assert_eq!(allow_origin(&h), None);
    let (_, h, _) = server.call(
        "GET",
        "/api/v1/targets",
        VIEW,
        None,
        &[("Origin", "http://evil.example")],
    );
    assert_eq!(allow_origin(&h), None);
    let (status, _, _) = server.call(
        "GET",
        "/api/v1/targets",
        "wrong-token-0123456789",
        None,
        &[("Origin", hub)],
    );
    assert_eq!(status, 401);
    // A bad origin on the command line is refused by name.
    let out = diskscope(
        &["serve", "--cors-origin", "hub.example/x", "--data-dir"]
            .iter()
            .copied()
            .chain([data.to_str().expect("utf-8")])
            .collect::<Vec<_>>(),
    );
    assert!(!out.status.success());
    assert!(stderr(&out).contains("'hub.example/x'"), "{}", stderr(&out));
}

/// Every route and method of the document, with no token, a viewer's, an operator's and an
/// unknown one: the role the table gives a route is the one the agent enforces (401, 403, or
/// through to the handler), and methods the document leaves out are 405 whoever asks.
#[test]
fn every_route_enforces_the_role_its_table_entry_names() {
    let root = disk_tempdir();
    let server = Server::start(&root.path().join("data"), &[]);
    let (_, doc) = server.get("/api/v1/openapi.json", "");
    let paths = doc["paths"].as_object().expect("paths").clone();
    let mut checked = 0;
    for (path, item) in &paths {
        // A run id that does not exist: handlers answer 404 once through, nothing changes.
        let url = path.replace("{id}", "999999");
        for method in ["get", "post", "delete"] {
            let upper = method.to_uppercase();
            let Some(op) = item.get(method) else {
                for token in ["", VIEW, OP] {
                    let (status, _, _) = server.call(&upper, &url, token, None, &[]);
                    assert_eq!(status, 405, "{upper} {url} with token '{token}'");
                }
                continue;
            };
            let role = op["x-diskscope-role"].as_str().expect("role");
            if path == "/api/v1/ws" {
                check_stream_roles(&server);
                checked += 1;
                continue;
            }
            for (who, token) in [
                ("none", ""),
                ("unknown", "not-a-token-of-this-agent"),
                ("viewer", VIEW),
                ("operator", OP),
            ] {
                let (status, _, body) = server.call(&upper, &url, token, None, &[]);
                let want = match (role, who) {
                    ("none", _) => None,
                    (_, "none") | (_, "unknown") => Some(401),
                    ("operator", "viewer") => Some(403),
                    _ => None,
                };
                match want {
                    // Past 20 unknown tokens from this address they are held back (429).
                    Some(401) if who == "unknown" => assert!(
                        status == 401 || status == 429,
                        "{upper} {url} as {who}: {status} {body}"
                    ),
                    Some(w) => assert_eq!(status, w, "{upper} {url} as {who}: {body}"),
                    None => assert!(
                        ![401, 403, 405, 429].contains(&status),
                        "{upper} {url} ({role}) as {who} did not reach its handler: {status} {body}"
                    ),
                }
                if want == Some(401) || want == Some(403) {
                    assert!(body["code"].is_string(), "{upper} {url}: {body}");
                }
            }
            checked += 1;
        }
    }
    assert!(checked >= 16, "{checked} operations checked");
    eprintln!("{checked} operations: roles enforced as the table names them");
}

/// The live stream: a viewer or operator header gets a hello with that role; no header must
/// authenticate by message, and a bad one is refused.
fn check_stream_roles(server: &Server) {
    use shared::api::{ClientMsg, Role, ServerMsg};
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async {
        for (token, want) in [(VIEW, Role::Viewer), (OP, Role::Operator)] {
            let req = {
                use tokio_tungstenite::tungstenite::client::IntoClientRequest;
                let mut r = server.ws_url().into_client_request().expect("request");
                r.headers_mut().insert(
                    "Authorization",
                    format!("Bearer {token}").parse().expect("header"),
                );
                r
            };
            let (mut s, _) = tokio_tungstenite::connect_async(req)
                .await
                .expect("connect");
            let hello = next_msg(&mut s).await;
            assert!(
                matches!(hello, Some(ServerMsg::Hello { role, .. }) if role == want),
                "{hello:?}"
            );
        }
        // A bad header token is refused before the upgrade.
        let mut req = {
            use tokio_tungstenite::tungstenite::client::IntoClientRequest;
            server.ws_url().into_client_request().expect("request")
        };
        req.headers_mut().insert(
            "Authorization",
            "Bearer not-a-token-of-this-agent".parse().expect("header"),
        );
        assert!(tokio_tungstenite::connect_async(req).await.is_err());
        // No header: the first message must authenticate.
        let (mut s, _) = tokio_tungstenite::connect_async(server.ws_url())
            .await
            .expect("connect");
        let bad = serde_json::to_string(&ClientMsg::Auth {
            token: "not-a-token-of-this-agent".into(),
        })
        .expect("json");
        use futures_util::SinkExt;
        s.send(tokio_tungstenite::tungstenite::Message::Text(bad.into()))
            .await
            .expect("send");
        let refused = next_msg(&mut s).await;
        assert!(
            // (Past 20 unknown tokens from this address, it is held back instead.)
            matches!(&refused, Some(ServerMsg::Error { code, .. })
                if code == "unauthorized" || code == "too_many_failures"),
            "{refused:?}"
        );
    });
}

async fn next_msg(
    s: &mut tokio_tungstenite::WebSocketStream<
        tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>,
    >,
) -> Option<shared::api::ServerMsg> {
    use futures_util::StreamExt;
    loop {
        let m = tokio::time::timeout(std::time::Duration::from_secs(10), s.next())
            .await
            .expect("a message within 10 s")?
            .ok()?;
        match m {
            tokio_tungstenite::tungstenite::Message::Text(t) => {
                return serde_json::from_str(&t).ok()
            }
            tokio_tungstenite::tungstenite::Message::Close(_) => return None,
            _ => {}
        }
    }
}
