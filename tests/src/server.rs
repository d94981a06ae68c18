//! A real `diskscope serve` process on 127.0.0.1 with known tokens, and small HTTP and
//! WebSocket clients for it.

use futures_util::{SinkExt, StreamExt};
use serde_json::Value;
use shared::api::{ClientMsg, ServerMsg};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;

pub const OP: &str = "test-operator-token";
pub const VIEW: &str = "test-viewer-token";

pub struct Server {
    child: Child,
    pub addr: String,
    pub data_dir: PathBuf,
    http: ureq::Agent,
}

impl Server {
    /// Starts the agent with `data_dir` and `--allow` for each of `allow`.
    pub fn start(data_dir: &Path, allow: &[&Path]) -> Server {
        Self::start_with(data_dir, allow, &[])
    }

    /// Like [`Server::start`], plus `--allow-destructive` for each of `armed`.
    pub fn start_with(data_dir: &Path, allow: &[&Path], armed: &[&Path]) -> Server {
        Self::start_env(data_dir, allow, armed, &[])
    }

    /// Like [`Server::start_with`], with extra environment variables.
    pub fn start_env(
        data_dir: &Path,
        allow: &[&Path],
        armed: &[&Path],
        env: &[(&str, &str)],
    ) -> Server {
        Self::start_full(data_dir, allow, armed, env, &[], None)
    }

    /// With `--demo` (the emulated SSD in the data directory).
    pub fn start_demo(data_dir: &Path) -> Server {
        Self::start_full(data_dir, &[], &[], &[], &["--demo"], None)
    }

    /// With extra command-line flags.
    pub fn start_args(data_dir: &Path, allow: &[&Path], extra: &[&str]) -> Server {
        Self::start_full(data_dir, allow, &[], &[], extra, None)
    }

    /// With the agent's log (stderr) written to `log`.
    pub fn start_logged(data_dir: &Path, allow: &[&Path], log: &Path) -> Server {
        Self::start_full(data_dir, allow, &[], &[], &[], Some(log))
    }

    fn start_full(
        data_dir: &Path,
        allow: &[&Path],
        armed: &[&Path],
        env: &[(&str, &str)],
        extra: &[&str],
        log: Option<&Path>,
    ) -> Server {
        let mut cmd = Command::new(crate::diskscope_bin());
        cmd.envs(env.iter().copied());
        cmd.args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
            .arg(data_dir)
            .args(extra)
            .env("DISKSCOPE_OPERATOR_TOKEN", OP)
            .env("DISKSCOPE_VIEWER_TOKEN", VIEW)
            .stdout(Stdio::piped())
            .stderr(match log {
                Some(p) => Stdio::from(std::fs::File::create(p).expect("create the log file")),
                None => Stdio::inherit(),
            });
        for a in allow {
            cmd.arg("--allow").arg(a);
        }
        for a in armed {
            cmd.arg("--allow-destructive").arg(a);
        }
        let mut child = cmd.spawn().expect("start diskscope serve");
        let stdout = child.stdout.take().expect("stdout");
        let mut reader = BufReader::new(stdout);
        let mut first = String::new();
        reader.read_line(&mut first).expect("read the address line");
        // Keep draining stdout so the agent never writes into a closed pipe.
        std::thread::spawn(move || std::io::copy(&mut reader, &mut std::io::sink()));
        let addr = first
            .trim()
            .strip_prefix("listening on http://")
            .unwrap_or_else(|| panic!("unexpected first line {first:?}"))
            .to_string();
        let http = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .build()
            .new_agent();
        Server {
            child,
            addr,
            data_dir: data_dir.to_path_buf(),
            http,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    fn read(mut resp: ureq::http::Response<ureq::Body>) -> (u16, Value) {
        let status = resp.status().as_u16();
        let text = resp.body_mut().read_to_string().unwrap_or_default();
        (
            status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }

    pub fn get(&self, path: &str, token: &str) -> (u16, Value) {
        let r = self
            .http
            .get(&self.url(path))
            .header("Authorization", &format!("Bearer {token}"))
            .call();
        Self::read(r.expect("GET"))
    }

    /// A GET whose body is text (`/metrics`).
    pub fn get_text(&self, path: &str, token: &str) -> (u16, String) {
        let (status, mut body) = self.get_stream(path, token);
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut body, &mut text);
        (status, text)
    }

    /// A GET whose body is read as it arrives (large exports).
    pub fn get_stream(&self, path: &str, token: &str) -> (u16, impl std::io::Read) {
        let r = self
            .http
            .get(&self.url(path))
            .header("Authorization", &format!("Bearer {token}"))
            .call()
            .expect("GET");
        let status = r.status().as_u16();
        (status, r.into_body().into_reader())
    }

    /// Peak resident memory of the agent process so far (VmHWM), bytes.
    pub fn peak_rss(&self) -> u64 {
        crate::proc_status_kib(self.child.id(), "VmHWM:") * 1024
    }

    /// The bytes the agent process has caused to be read from storage (its
    /// `/proc/PID/io` `read_bytes`: page-cache hits not counted).
    pub fn storage_read_bytes(&self) -> u64 {
        std::fs::read_to_string(format!("/proc/{}/io", self.child.id()))
            .unwrap_or_default()
            .lines()
            .find_map(|l| l.strip_prefix("read_bytes:"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0)
    }

    /// Resident memory of the agent process now (VmRSS), bytes.
    pub fn rss(&self) -> u64 {
        crate::proc_status_kib(self.child.id(), "VmRSS:") * 1024
    }

    pub fn post(&self, path: &str, token: &str, body: &Value) -> (u16, Value) {
        let r = self
            .http
            .post(&self.url(path))
            .header("Authorization", &format!("Bearer {token}"))
            .send_json(body);
        Self::read(r.expect("POST"))
    }

    /// Any request: `method` on `path` with `token` (empty: none), a JSON `body` and further
    /// headers; the status, the response's headers and its body (JSON, else a string).
    pub fn call(
        &self,
        method: &str,
        path: &str,
        token: &str,
        body: Option<&Value>,
        headers: &[(&str, &str)],
    ) -> (u16, ureq::http::HeaderMap, Value) {
        let mut req = ureq::http::Request::builder()
            .method(method)
            .uri(self.url(path));
        if !token.is_empty() {
            req = req.header("Authorization", format!("Bearer {token}"));
        }
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        // A fresh connection each time: a pooled one may have been idle past the agent's
        // keep-alive and be closed under the request.
        let http = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .build()
            .new_agent();
        let resp = match body {
            Some(b) => http.run(
                req.header("Content-Type", "application/json")
                    .body(b.to_string())
                    .expect("request"),
            ),
            None => http.run(req.body(()).expect("request")),
        }
        .expect("HTTP");
        let headers = resp.headers().clone();
        let (status, v) = Self::read(resp);
        (status, headers, v)
    }

    /// The path of the agent's scratch target, as `GET /api/v1/targets` lists it.
    pub fn scratch_target(&self) -> String {
        let (_, targets) = self.get("/api/v1/targets", OP);
        targets
            .as_array()
            .and_then(|t| t.iter().find(|t| t["scratch"] == true))
            .and_then(|t| t["path"].as_str())
            .unwrap_or_else(|| panic!("no scratch target in {targets}"))
            .to_string()
    }

    /// Starts a run and returns its id (panics with the API's answer otherwise).
    pub fn start_run(&self, body: &Value) -> i64 {
        let (status, v) = self.post("/api/v1/runs", OP, body);
        assert_eq!(status, 201, "start run: {v}");
        v["id"].as_i64().expect("id")
    }

    /// Waits until the run has at least `n` samples stored.
    pub fn wait_samples(&self, run: i64, n: usize) {
        for _ in 0..200 {
            let (_, v) = self.get(&format!("/api/v1/runs/{run}/samples"), VIEW);
            if v["samples"].as_array().map_or(0, Vec::len) >= n {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        panic!("run {run} never reached {n} samples");
    }

    pub fn wait_status(&self, run: i64, want: &str) -> Value {
        self.wait_status_within(run, want, std::time::Duration::from_secs(15))
    }

    /// Waits up to `limit` for the run to reach status `want`; panics at once when it ends
    /// in another state.
    pub fn wait_status_within(&self, run: i64, want: &str, limit: std::time::Duration) -> Value {
        let deadline = std::time::Instant::now() + limit;
        while std::time::Instant::now() < deadline {
            let (_, v) = self.get(&format!("/api/v1/runs/{run}"), VIEW);
            let status = v["status"].as_str().unwrap_or_default();
            if status == want {
                return v;
            }
            assert!(
                !matches!(status, "completed" | "failed" | "stopped"),
                "run {run} ended as {status}, not {want}: {v}"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        panic!("run {run} never became {want} within {limit:?}");
    }

    /// The agent's process id (for its resident memory in benchmarks).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn kill9(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Sends SIGTERM and waits for the process to exit.
    pub fn terminate(&mut self) -> std::process::ExitStatus {
        // SAFETY: signalling our own child.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        self.child.wait().expect("wait")
    }

    pub fn ws_url(&self) -> String {
        format!("ws://{}/api/v1/ws", self.addr)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill9();
    }
}

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// A WebSocket client of the live stream.
pub struct WsClient {
    socket: Socket,
}

impl WsClient {
    /// Connects with the token in an `Authorization` header (`header = true`) or in an `auth`
    /// first message, and checks the hello.
    pub async fn connect(server: &Server, token: &str, header: bool) -> WsClient {
        let mut req = server.ws_url().into_client_request().expect("request");
        if header {
            req.headers_mut().insert(
                "Authorization",
                format!("Bearer {token}").parse().expect("header"),
            );
        }
        let (socket, _) = tokio_tungstenite::connect_async(req)
            .await
            .expect("connect");
        let mut c = WsClient { socket };
        if !header {
            c.send(&ClientMsg::Auth {
                token: token.into(),
            })
            .await;
        }
        match c.next().await {
            Some(ServerMsg::Hello {
                protocol_version, ..
            }) => assert_eq!(protocol_version, shared::PROTOCOL_VERSION),
            other => panic!("expected hello, got {other:?}"),
        }
        c
    }

    /// Connects (header auth) over a socket with a tiny receive buffer, so that the agent's
    /// sends block as soon as this client stops reading.
    pub async fn connect_small_buffer(server: &Server, token: &str) -> WsClient {
        let addr: std::net::SocketAddr = server.addr.parse().expect("address");
        let sock = tokio::net::TcpSocket::new_v4().expect("socket");
        sock.set_recv_buffer_size(2048).expect("SO_RCVBUF");
        let stream = sock.connect(addr).await.expect("connect");
        let mut req = server.ws_url().into_client_request().expect("request");
        req.headers_mut().insert(
            "Authorization",
            format!("Bearer {token}").parse().expect("header"),
        );
        let (socket, _) =
            tokio_tungstenite::client_async(req, tokio_tungstenite::MaybeTlsStream::Plain(stream))
                .await
                .expect("handshake");
        let mut c = WsClient { socket };
        assert!(matches!(c.next().await, Some(ServerMsg::Hello { .. })));
        c
    }

    pub async fn send(&mut self, msg: &ClientMsg) {
        let text = serde_json::to_string(msg).expect("json");
        self.socket
            .send(Message::Text(text.into()))
            .await
            .expect("send");
    }

    /// The next protocol message (pings are answered by the library), or `None` when closed.
    pub async fn next(&mut self) -> Option<ServerMsg> {
        loop {
            let msg = tokio::time::timeout(std::time::Duration::from_secs(20), self.socket.next())
                .await
                .expect("a message within 20 s")?;
            match msg.expect("websocket") {
                Message::Text(t) => return Some(serde_json::from_str(&t).expect("server message")),
                Message::Close(_) => return None,
                _ => {}
            }
        }
    }

    /// Reads until the run ends (its `run` event other than `started`); returns the sample
    /// seqs received and the final event.
    pub async fn collect_until_end(&mut self, run: i64) -> (Vec<u64>, shared::api::RunEvent) {
        let mut seqs = Vec::new();
        loop {
            match self.next().await {
                Some(ServerMsg::Sample { run_id, sample }) if run_id == run => {
                    seqs.push(sample.seq)
                }
                Some(ServerMsg::Run { run_id, event, .. })
                    if run_id == run && event != shared::api::RunEvent::Started =>
                {
                    return (seqs, event)
                }
                Some(_) => {}
                None => panic!("socket closed before run {run} ended"),
            }
        }
    }

    pub async fn close(mut self) {
        let _ = self.socket.close(None).await;
    }
}
