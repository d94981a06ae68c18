//! `diskscope serve`: the agent as a service for browsers on the LAN, kiosks and remote
//! operators. Opens the history database and the tokens in the data directory, marks runs
//! a dead agent left `running` as `interrupted`, serves the API and the embedded dashboard,
//! over HTTP or, with `--tls-cert`/`--tls-key`, HTTPS (rustls), and on SIGINT/SIGTERM stops
//! any run within one interval (recorded as `stopped`).

use super::args::ServeArgs;
use crate::api::{self, AppState};
use crate::service::access::AccessPolicy;
use crate::service::manager::Manager;
use crate::service::tokens::{Origin, Tokens};
use crate::service::{data_dir, SCRATCH_NAME};
use crate::store::Store;
use anyhow::Context;
use std::io::Write;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;

pub fn run(args: &ServeArgs) -> anyhow::Result<ExitCode> {
    init_log();
    if let Some(m) = args.max_memory {
        crate::budget::set_max(m);
    }
    let dir = private_data_dir(args)?;
    crate::stats::fine::set_spill_dir(&dir);
    // Traces a replay may name by file name (`diskscope record --out` into it).
    let traces = dir.join("traces");
    if let Err(e) = std::fs::create_dir_all(&traces) {
        tracing::warn!("cannot create {}: {e}", traces.display());
    }
    crate::trace::library::set_dir(&traces);
    let store = open_store(&dir)?;
    let (tokens, origin) = Tokens::load(&dir).context("tokens")?;
    // The demo SSD lives as long as the server (unmounted when `_demo` drops).
    let (access, _demo) = access_policy(args, &dir)?;
    let manager = Manager::new(store, access);
    let state = AppState {
        manager: Arc::clone(&manager),
        tokens: Arc::new(tokens.clone()),
        failures: Default::default(),
        // Already normalised as browsers send them (`shared::origin::parse`).
        origins: Arc::new(args.cors_origin.clone()),
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    rt.block_on(async move {
        let listener = std::net::TcpListener::bind(args.listen)
            .with_context(|| format!("cannot listen on {}", args.listen))?;
        // Accepted connections inherit both: replies go out at once, and a client that
        // stops reading can pile up only this much in the kernel (then its stream falls
        // behind and is resynced from the database).
        set_socket_options(&listener, client_send_buffer());
        let addr = listener.local_addr()?;
        // The client's address reaches the handlers (failed authentication is limited per
        // address).
        let app = api::router(state).into_make_service_with_connect_info::<SocketAddr>();
        let handle = axum_server::Handle::new();
        let h = handle.clone();
        tokio::spawn(async move {
            shutdown_signal().await;
            eprintln!("diskscope: shutting down: stopping runs");
            let _ = tokio::task::spawn_blocking(move || manager.shutdown()).await;
            h.graceful_shutdown(Some(std::time::Duration::from_secs(5)));
        });
        match (&args.tls_cert, &args.tls_key) {
            (Some(cert), Some(key)) => {
                let _ = rustls::crypto::ring::default_provider().install_default();
                let config = axum_server::tls_rustls::RustlsConfig::from_pem_file(cert, key)
                    .await
                    .with_context(|| {
                        format!(
                            "cannot load TLS certificate {} and key {}",
                            cert.display(),
                            key.display()
                        )
                    })?;
                announce("https", &addr, &dir, &tokens, &origin);
                let mut server = axum_server::from_tcp_rustls(listener, config)?
                    .first_request_timeout(REQUEST_HEAD_TIMEOUT);
                server
                    .http_builder()
                    .http1()
                    .header_read_timeout(REQUEST_HEAD_TIMEOUT);
                server.handle(handle).serve(app).await
            }
            _ => {
                announce("http", &addr, &dir, &tokens, &origin);
                let mut server =
                    axum_server::from_tcp(listener)?.first_request_timeout(REQUEST_HEAD_TIMEOUT);
                server
                    .http_builder()
                    .http1()
                    .header_read_timeout(REQUEST_HEAD_TIMEOUT);
                server.handle(handle).serve(app).await
            }
        }
        .context("server failed")
    })?;
    Ok(ExitCode::SUCCESS)
}

/// The log: errors behind every 500 and every failed store, on stderr (`DISKSCOPE_LOG=debug`
/// for more).
fn init_log() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("DISKSCOPE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}

/// The data directory, created if needed and private: the agent's files are its own
/// (database, tokens and scratch file 0600, the directory 0700).
fn private_data_dir(args: &ServeArgs) -> anyhow::Result<std::path::PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let dir = data_dir(args.data_dir.as_ref());
    // SAFETY: umask only changes the process's file creation mask.
    unsafe { libc::umask(0o077) };
    std::fs::create_dir_all(&dir)
        .with_context(|| format!("cannot create data directory {}", dir.display()))?;
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))
        .with_context(|| format!("cannot make {} private (0700)", dir.display()))?;
    Ok(dir)
}

/// Opens (and migrates) the history; runs a dead agent left `running` become `interrupted`.
fn open_store(dir: &std::path::Path) -> anyhow::Result<Arc<Store>> {
    use std::os::unix::fs::PermissionsExt;
    let db = dir.join("diskscope.db");
    let store =
        Arc::new(Store::open(&db).with_context(|| format!("cannot open {}", db.display()))?);
    for f in ["diskscope.db", "diskscope.db-wal", "diskscope.db-shm"] {
        // Files an older agent made 0644.
        let _ = std::fs::set_permissions(dir.join(f), std::fs::Permissions::from_mode(0o600));
    }
    let interrupted = store.interrupt_leftovers()?;
    if interrupted > 0 {
        eprintln!("diskscope: marked {interrupted} run(s) left running by a previous agent as interrupted");
    }
    Ok(store)
}

/// What the service may touch: the scratch file, `--allow` paths, and with `--demo` an
/// emulated SSD mounted for as long as the returned handle lives.
fn access_policy(
    args: &ServeArgs,
    dir: &std::path::Path,
) -> anyhow::Result<(AccessPolicy, Option<crate::emulate::Mounted>)> {
    let mut allow = args.allow.clone();
    let demo = if args.demo {
        let mounted =
            crate::emulate::mount(&dir.join("demo-ssd"), Default::default()).context("--demo")?;
        eprintln!(
            "demo: emulated SSD at {} (1 GiB SLC cache at 400 MB/s, then 80 MB/s): run the quick preset on it",
            mounted.disk().display()
        );
        allow.push(mounted.disk());
        Some(mounted)
    } else {
        None
    };
    let mut access = AccessPolicy::new(dir.join(SCRATCH_NAME), &allow, &args.allow_destructive)
        .allow_hard_links(args.allow_hard_links);
    if let Some(m) = &demo {
        access = access.exempt(&m.disk());
    }
    Ok((access, demo))
}

/// Prints where to connect. Written with `writeln!` and errors ignored: a closed stdout
/// must not take the server down.
fn announce(
    scheme: &str,
    addr: &std::net::SocketAddr,
    dir: &std::path::Path,
    tokens: &Tokens,
    origin: &Origin,
) {
    let mut out = std::io::stdout().lock();
    macro_rules! say {
        ($($arg:tt)*) => {{
            let _ = writeln!(out, $($arg)*);
        }};
    }
    // The first line is machine-readable: tests and scripts read the address from it.
    say!("listening on {scheme}://{addr}");
    let host = if addr.ip().is_unspecified() {
        "127.0.0.1".to_string()
    } else {
        addr.ip().to_string()
    };
    let url = format!("{scheme}://{host}:{}/", addr.port());
    match origin {
        Origin::Generated => {
            say!("dashboard: {url}?token={}", tokens.operator);
            say!("operator token: {}", tokens.operator);
            say!(
                "viewer token:   {} (kiosks: {url}kiosk?token={})",
                tokens.viewer,
                tokens.viewer
            );
            say!(
                "tokens stored in {} (mode 0600); they are printed only this once",
                dir.join("tokens.json").display()
            );
        }
        Origin::File if addr.ip().is_loopback() => {
            say!("dashboard: {url}?token={}", tokens.operator);
        }
        Origin::File => say!(
            "dashboard: {url} (tokens in {})",
            dir.join("tokens.json").display()
        ),
        Origin::Environment => say!("dashboard: {url} (tokens from the environment)"),
    }
    say!("data directory: {}", dir.display());
}

/// Kernel send buffer per client connection, bytes: bounds what a client that stops reading
/// can pile up (then its stream falls behind and is resynced from the database).
/// `DISKSCOPE_CLIENT_SNDBUF` overrides the default.
const CLIENT_SNDBUF: usize = 256 * 1024;

fn client_send_buffer() -> usize {
    crate::service::env_usize("DISKSCOPE_CLIENT_SNDBUF", CLIENT_SNDBUF)
}

/// Longest a client may take to send a request's head (and a new connection its first
/// request): a connection that trickles its headers is closed after it.
const REQUEST_HEAD_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// `TCP_NODELAY` and `SO_SNDBUF` (`bytes`) on the listening socket; accepted connections
/// inherit them.
fn set_socket_options(listener: &std::net::TcpListener, bytes: usize) {
    use std::os::fd::AsRawFd;
    let set = |level, name, v: libc::c_int| {
        // SAFETY: setsockopt on a live socket with a pointer to a c_int and its size.
        unsafe {
            libc::setsockopt(
                listener.as_raw_fd(),
                level,
                name,
                (&v as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            );
        }
    };
    set(libc::IPPROTO_TCP, libc::TCP_NODELAY, 1);
    set(
        libc::SOL_SOCKET,
        libc::SO_SNDBUF,
        bytes.min(i32::MAX as usize) as libc::c_int,
    );
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
}
