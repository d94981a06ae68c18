//! The API's routes and their OpenAPI 3.1 document from one table: [`table`] names each
//! endpoint once (method, path, handler, who may call it, its query, body and reply types),
//! `router` mounts the handlers from it and [`document`] describes the same entries, so the
//! two cannot drift. Schemas come from the wire types themselves (`schemars` derives in
//! `shared`, which follow their serde attributes).

use super::{metrics, runs, targets, witness, ws, AppState};
use axum::handler::Handler;
use axum::routing::{on, MethodFilter, MethodRouter};
use schemars::generate::{SchemaGenerator, SchemaSettings};
use schemars::{JsonSchema, Schema};
use serde_json::{json, Map, Value};
use shared::api::{
    ApiErrorBody, CheckFioJob, ClientMsg, CreateRun, Created, FioJobSteps, Health, Preset, RunInfo,
    RunList, SampleList, ServerMsg, TargetView, TraceInfo,
};

/// An HTTP method the API uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Verb {
    Get,
    Post,
    Delete,
}

impl Verb {
    fn filter(self) -> MethodFilter {
        match self {
            Verb::Get => MethodFilter::GET,
            Verb::Post => MethodFilter::POST,
            Verb::Delete => MethodFilter::DELETE,
        }
    }

    /// The method's name, lowercase as OpenAPI keys operations.
    pub fn as_str(self) -> &'static str {
        match self {
            Verb::Get => "get",
            Verb::Post => "post",
            Verb::Delete => "delete",
        }
    }
}

/// Who may call an endpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// No token (health, this document).
    Public,
    /// A viewer or an operator token.
    Viewer,
    /// A viewer or an operator token, in the header or (the WebSocket) in an `auth` first
    /// message: requests without the header reach the handler, which waits for that message.
    Stream,
    /// An operator token.
    Operator,
}

type SchemaFn = fn(&mut SchemaGenerator) -> Schema;

/// What a successful call answers.
#[derive(Clone, Copy, Debug)]
enum Reply {
    /// JSON of this schema with this status.
    Json(u16, SchemaFn),
    /// This status and no body.
    Empty(u16),
    /// A document streamed as a download: the run report (`format=json`) or CSV.
    Export(Option<SchemaFn>),
    /// Text of this media type.
    Text(&'static str),
    /// An OpenAPI document (this one).
    Document,
    /// A WebSocket (101) carrying these client and server messages.
    WebSocket(SchemaFn, SchemaFn),
}

/// One endpoint: everything the router and the document need.
pub struct Route {
    pub verb: Verb,
    /// The path in axum's and OpenAPI's common form (`/api/v1/runs/{id}`).
    pub path: &'static str,
    pub access: Access,
    summary: &'static str,
    query: Option<SchemaFn>,
    body: Option<SchemaFn>,
    reply: Reply,
    handler: MethodRouter<AppState>,
}

impl std::fmt::Debug for Route {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.verb.as_str(), self.path)
    }
}

fn schema<T: JsonSchema>(g: &mut SchemaGenerator) -> Schema {
    g.subschema_for::<T>()
}

fn route<H: Handler<T, AppState>, T: 'static>(
    verb: Verb,
    path: &'static str,
    access: Access,
    summary: &'static str,
    handler: H,
) -> Route {
    Route {
        verb,
        path,
        access,
        summary,
        query: None,
        body: None,
        reply: Reply::Empty(200),
        handler: on(verb.filter(), handler),
    }
}

impl Route {
    fn query<Q: JsonSchema>(mut self) -> Self {
        self.query = Some(schema::<Q>);
        self
    }

    fn body<B: JsonSchema>(mut self) -> Self {
        self.body = Some(schema::<B>);
        self
    }

    fn json<R: JsonSchema>(mut self, status: u16) -> Self {
        self.reply = Reply::Json(status, schema::<R>);
        self
    }

    fn reply(mut self, reply: Reply) -> Self {
        self.reply = reply;
        self
    }

    /// The handler behind the access layer of its level ([`super::auth::guard`]), for the
    /// router.
    pub fn into_guarded(self, state: &AppState) -> MethodRouter<AppState> {
        let layer =
            axum::middleware::from_fn_with_state((state.clone(), self.access), super::auth::guard);
        self.handler.route_layer(layer)
    }
}

/// Every endpoint of the API.
pub fn table() -> Vec<Route> {
    use Access::{Operator, Public, Stream, Viewer};
    use Verb::{Delete, Get, Post};
    vec![
        route(Get, "/api/v1/health", Public, "Liveness, version and protocol version", targets::health)
            .json::<Health>(200),
        route(Get, "/api/v1/openapi.json", Public, "This document", document_handler)
            .reply(Reply::Document),
        route(Get, "/api/v1/targets", Viewer, "The targets runs may use, with size, device, temperature and health", targets::list)
            .json::<Vec<TargetView>>(200),
        route(Get, "/api/v1/devices", Viewer, "Every block device on the host with its identity, link and health", targets::devices)
            .json::<Vec<shared::devices::DeviceInfo>>(200),
        route(Get, "/api/v1/presets", Viewer, "The named workloads, their steps and the options they take", targets::presets)
            .json::<Vec<Preset>>(200),
        route(Get, "/api/v1/options", Viewer, "Every workload option once: its CLI flag, spec field, fio names, form label and help, kind and default", targets::options)
            .json::<Vec<shared::api::OptionView>>(200),
        route(Get, "/api/v1/traces", Viewer, "The traces a replay can name", targets::traces)
            .json::<Vec<TraceInfo>>(200),
        route(Get, "/api/v1/runs", Viewer, "The run history, newest first, filtered and paged", runs::list)
            .query::<runs::ListQuery>()
            .json::<RunList>(200),
        route(Post, "/api/v1/runs", Operator, "Start a run: a target and a spec or a preset (a device write must repeat its path in confirm)", runs::create)
            .body::<CreateRun>()
            .json::<Created>(201),
        route(Post, "/api/v1/groups", Operator, "Start one run on several agents (the run request with \"agents\": each an address, its operator token and optionally its own target) at a shared start, measured clocks first (a member too far off, unreachable or refusing stops the group before anything runs); the merged run is stored here and streams, stops and exports like any run", runs::create_group)
            .body::<CreateRun>()
            .json::<Created>(201),
        route(Get, "/api/v1/clock", Viewer, "This agent's wall clock when the request arrived and when the answer left (ns since the Unix epoch): NTP's t2 and t3, for a group's coordinator", targets::clock)
            .json::<shared::group::Clock>(200),
        route(Post, "/api/v1/fio-jobs/check", Operator, "A fio job file as it would run on a target: its steps and notes, or the refusal naming its line; nothing starts", runs::check_fio_job)
            .body::<CheckFioJob>()
            .json::<FioJobSteps>(200),
        route(Post, "/api/v1/specs/check", Operator, "A workload as the agent's validator reads it (the dashboard's form asks as it is typed): its problems, each naming its field and value; nothing starts", runs::check_spec)
            .body::<shared::WorkloadSpec>()
            .json::<shared::api::SpecCheck>(200),
        route(Post, "/api/v1/specs/read", Operator, "A workload as the New-test form's fields hold it (option key → text): the spec they make and every problem keyed by option (a text that does not read, then the validator's and the memory budget's); nothing starts", runs::read_spec)
            .body::<shared::api::SpecFields>()
            .json::<shared::api::SpecRead>(200),
        route(Post, "/api/v1/specs/fields", Operator, "A spec written back as the form's fields (option key → text)", runs::spec_fields)
            .body::<shared::WorkloadSpec>()
            .json::<shared::api::SpecFields>(200),
        route(Get, "/api/v1/runs/{id}", Viewer, "One run: spec, environment, summary, steps and analyses", runs::get)
            .json::<RunInfo>(200),
        route(Delete, "/api/v1/runs/{id}", Operator, "Delete an ended run and its samples", runs::delete)
            .reply(Reply::Empty(204)),
        route(Get, "/api/v1/runs/{id}/samples", Viewer, "A run's samples: a page after a seq, or the min/max envelope of a range", runs::samples)
            .query::<runs::SamplesQuery>()
            .json::<SampleList>(200),
        route(Post, "/api/v1/runs/{id}/stop", Operator, "Stop a running run (what was measured is kept)", runs::stop)
            .reply(Reply::Empty(202)),
        route(Get, "/api/v1/runs/{id}/export", Viewer, "The run as one document: the CLI's --json report, one CSV row per sample, or fio's JSON (fio-json, fio-json+)", runs::export)
            .query::<runs::ExportQuery>()
            .reply(Reply::Export(Some(schema::<shared::RunReport>))),
        route(Get, "/api/v1/runs/{id}/timeline", Viewer, "Every 10 ms bucket of the run (CSV t_ms,bytes, or JSON)", runs::timeline)
            .query::<runs::ExportQuery>()
            .reply(Reply::Export(None)),
        route(Post, "/api/v1/witness", Operator, "Open a flush check's witness session (the writer's target, block size, span and nonce)", witness::open)
            .body::<shared::flushcheck::NewSession>()
            .json::<shared::flushcheck::Session>(201),
        route(Post, "/api/v1/witness/{id}/durable", Operator, "Record the blocks a flush made durable (in the order written; on this agent's disk before the answer)", witness::durable)
            .body::<shared::flushcheck::Durable>()
            .json::<shared::flushcheck::Session>(200),
        route(Get, "/api/v1/witness", Viewer, "The witness's sessions of a writer's host and target (host, target), newest first", witness::sessions)
            .query::<shared::flushcheck::SessionQuery>()
            .json::<Vec<shared::flushcheck::Session>>(200),
        route(Get, "/api/v1/witness/{id}", Viewer, "A witness session and a page of its blocks' newest durable writes, by offset (after, limit: at most 65,536; next_after when more follow)", witness::records)
            .query::<shared::flushcheck::RecordsQuery>()
            .json::<shared::flushcheck::Records>(200),
        route(Post, "/api/v1/flushcheck/verify", Operator, "After a power cut: read back every block a witness recorded durable for a session on one of this agent's targets, and judge it", witness::verify)
            .body::<shared::flushcheck::VerifyRequest>()
            .json::<shared::flushcheck::Verdict>(200),
        route(Get, "/api/v1/ws", Stream, "The live stream (WebSocket): authenticate with the header or an auth message, subscribe to a run or to whatever runs next", ws::handler)
            .reply(Reply::WebSocket(schema::<ClientMsg>, schema::<ServerMsg>)),
        route(Get, "/metrics", Viewer, "Prometheus metrics: per-target counters, latency histogram, active runs, device health", metrics::metrics)
            .reply(Reply::Text("text/plain; version=0.0.4")),
    ]
}

async fn document_handler() -> axum::response::Response {
    use axum::response::IntoResponse;
    static DOC: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let text = DOC.get_or_init(|| document().to_string());
    (
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        text.as_str(),
    )
        .into_response()
}

/// The query structure's fields as OpenAPI parameters (schemas inlined).
fn parameters(path: &str, query: Option<SchemaFn>) -> Vec<Value> {
    let mut out: Vec<Value> = path
        .split('/')
        .filter_map(|seg| seg.strip_prefix('{')?.strip_suffix('}'))
        .map(|name| {
            json!({"name": name, "in": "path", "required": true,
                   "schema": {"type": "integer", "format": "int64"}})
        })
        .collect();
    if let Some(q) = query {
        let mut g = SchemaSettings::draft2020_12()
            .with(|s| s.inline_subschemas = true)
            .into_generator();
        let s = q(&mut g);
        let required: Vec<Value> = s
            .get("required")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let props = s.get("properties").and_then(Value::as_object);
        for (name, schema) in props.into_iter().flatten() {
            let mut schema = schema.clone();
            // A parameter that is absent is not `null`: only the value's own type remains.
            if let Some(Value::Array(kinds)) = schema.get_mut("type") {
                kinds.retain(|k| k != "null");
                if kinds.len() == 1 {
                    let one = kinds[0].clone();
                    schema["type"] = one;
                }
            }
            let description = schema
                .as_object_mut()
                .and_then(|o| o.remove("description"))
                .unwrap_or(Value::Null);
            let mut p = json!({"name": name, "in": "query", "schema": schema,
                               "required": required.contains(&Value::String(name.clone()))});
            if !description.is_null() {
                p["description"] = description;
            }
            out.push(p);
        }
    }
    out
}

fn responses(reply: Reply, access: Access, g: &mut SchemaGenerator) -> Value {
    let error = json!({"description": "Failed: {code, message} (400 bad input naming the value, \
        401 no or unknown token, 403 a viewer on an operator action, 404, 409 target busy, \
        428 confirmation required, 429 too many failed tokens, 503 ...)",
        "content": {"application/json": {"schema": schema::<ApiErrorBody>(g)}}});
    let (status, ok) = match reply {
        Reply::Json(status, f) => (
            status,
            json!({"description": "OK", "content": {"application/json": {"schema": f(g)}}}),
        ),
        Reply::Empty(status) => (status, json!({"description": "Done, no body"})),
        Reply::Export(report) => {
            let mut content = Map::new();
            content.insert(
                "application/json".into(),
                report.map_or(json!({}), |f| json!({"schema": f(g)})),
            );
            content.insert("text/csv".into(), json!({"schema": {"type": "string"}}));
            (
                200,
                json!({"description": "A download (Content-Disposition: attachment)", "content": content}),
            )
        }
        Reply::Text(mime) => (
            200,
            json!({"description": "OK", "content": {mime: {"schema": {"type": "string"}}}}),
        ),
        Reply::Document => (
            200,
            json!({"description": "OpenAPI 3.1", "content": {"application/json": {"schema": {"type": "object"}}}}),
        ),
        Reply::WebSocket(client, server) => (
            101,
            json!({"description": "Switching protocols: JSON text messages, client → agent \
                   (x-client-message) and agent → client (x-server-message)",
                   "x-client-message": client(g), "x-server-message": server(g)}),
        ),
    };
    let mut out = Map::new();
    out.insert(status.to_string(), ok);
    if access != Access::Public || matches!(reply, Reply::Json(_, _)) {
        out.insert("default".into(), error);
    }
    Value::Object(out)
}

/// The OpenAPI 3.1 document of [`table`].
pub fn document() -> Value {
    let mut g = SchemaSettings::draft2020_12()
        .with(|s| {
            s.definitions_path = "/components/schemas".into();
            s.meta_schema = None;
        })
        .into_generator();
    let mut paths = Map::new();
    for r in table() {
        let mut op = json!({
            "summary": r.summary,
            "operationId": operation_id(r.verb, r.path),
            "x-diskscope-role": match r.access {
                Access::Public => "none",
                Access::Viewer | Access::Stream => "viewer",
                Access::Operator => "operator",
            },
            "responses": responses(r.reply, r.access, &mut g),
        });
        let params = parameters(r.path, r.query);
        if !params.is_empty() {
            op["parameters"] = Value::Array(params);
        }
        if let Some(b) = r.body {
            op["requestBody"] = json!({"required": true,
                "content": {"application/json": {"schema": b(&mut g)}}});
        }
        op["security"] = match r.access {
            Access::Public => json!([]),
            _ => json!([{"bearer": []}]),
        };
        let item = paths.entry(r.path.to_string()).or_insert_with(|| json!({}));
        item[r.verb.as_str()] = op;
    }
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "diskscope agent API",
            "version": crate::env::VERSION,
            "description": "Runs storage benchmarks on this host's files and block devices and \
                streams their samples. Every call but health and this document needs \
                `Authorization: Bearer TOKEN` (viewer or operator, as x-diskscope-role says). \
                Sizes, durations and rates in specs take numbers or the CLI's strings (\"4k\", \"30s\", \"200MB\").",
        },
        "jsonSchemaDialect": "https://json-schema.org/draft/2020-12/schema",
        "paths": paths,
        "components": {
            "schemas": g.take_definitions(true),
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
    })
}

/// `getApiV1RunsIdSamples` for `GET /api/v1/runs/{id}/samples`.
fn operation_id(verb: Verb, path: &str) -> String {
    let mut id = verb.as_str().to_string();
    for word in path.split(|c: char| !c.is_ascii_alphanumeric()) {
        let mut chars = word.chars();
        if let Some(first) = chars.next() {
            id.push(first.to_ascii_uppercase());
            id.extend(chars);
        }
    }
    id
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_route_is_described_once_with_its_schemas() {
        let doc = document();
        let mut seen = std::collections::HashSet::new();
        for r in table() {
            assert!(seen.insert((r.verb, r.path)), "{r:?} twice");
            let op = &doc["paths"][r.path][r.verb.as_str()];
            assert!(op.is_object(), "{r:?} missing from the document");
        }
        // Every reference points at a schema the document carries.
        let text = doc.to_string();
        let schemas = doc["components"]["schemas"].as_object().expect("schemas");
        for part in text.split("\"$ref\":\"#/components/schemas/").skip(1) {
            let name = part.split('"').next().unwrap_or_default();
            assert!(schemas.contains_key(name), "dangling $ref {name}");
        }
        for name in [
            "WorkloadSpec",
            "RunInfo",
            "CreateRun",
            "RunReport",
            "ServerMsg",
        ] {
            assert!(schemas.contains_key(name), "{name} not in components");
        }
        // The lenient fields say they take strings.
        let bs = &schemas["WorkloadSpec"]["properties"]["bs"];
        assert!(bs.to_string().contains("\"string\""), "{bs}");
        let list = &doc["paths"]["/api/v1/runs"]["get"]["parameters"];
        let names: Vec<&str> = list
            .as_array()
            .expect("parameters")
            .iter()
            .filter_map(|p| p["name"].as_str())
            .collect();
        assert!(
            names.contains(&"per_page") && names.contains(&"status"),
            "{names:?}"
        );
        assert_eq!(
            operation_id(Verb::Get, "/api/v1/runs/{id}/samples"),
            "getApiV1RunsIdSamples"
        );
    }
}
