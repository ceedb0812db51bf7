//! Serving the API router over TLS (HTTP/2 and HTTP/1.1), one task per connection. What the
//! client certificate says (its user, or why it is refused) goes with every request on its
//! connection. No client can hold the hub's connections: handshakes and request headers that
//! dawdle are cut off, idle connections (and those stalled inside a header block) are closed,
//! each client address and the hub as a whole hold at most so many connections, and when
//! accepting fails (no file descriptors left) the loop backs off and says so once.

mod backoff;
mod connections;
mod idle;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use clap::Args;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;

use crate::client_certs::ClientCerts;
use crate::coalesced_writes::Coalesced;
use crate::tls::ServerTls;
use backoff::{AcceptBackoff, Throttle};
pub use connections::ConnectionLimits;
use connections::{ConnectionTable, Ticket};
use idle::{Activity, Tracked};

/// How long a TLS handshake, or a request's headers, may take.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a connection told to close (idle) may take to finish what it has in flight.
const CLOSE_GRACE: Duration = Duration::from_secs(10);
/// File descriptors kept back from connections, for the store, logs and outgoing calls.
const RESERVED_FILES: u64 = 256;
/// At most one log line per this interval about refused connections.
const REFUSAL_LOG_INTERVAL: Duration = Duration::from_secs(10);

/// The flags that bound what clients may hold open (`flotilla up` and `flotilla hub`).
#[derive(Debug, Clone, Args)]
pub struct ConnectionArgs {
    /// Most connections one client address may hold open; more are closed on accept.
    #[arg(long, default_value_t = 512)]
    pub max_connections_per_address: usize,
    /// Most connections the hub holds open in all (default: the open-file limit, raised to its
    /// hard limit at start, less 256 kept for the store and logs).
    #[arg(long)]
    pub max_connections: Option<usize>,
    /// A connection with no request in flight for this long is closed (`90s`, `2m`).
    #[arg(long, default_value = "90s", value_parser = crate::leader::parse_duration)]
    pub idle_connection_timeout: Duration,
}

/// How the listener treats connections.
#[derive(Debug, Clone, Copy)]
pub struct ServeOptions {
    /// Connections held per address and in all.
    pub limits: ConnectionLimits,
    /// How long a connection may sit with no request in flight.
    pub idle_timeout: Duration,
}

impl ConnectionArgs {
    /// The options these flags ask for; raises this process's open-file limit to its hard
    /// limit first (as Go programs, kube-apiserver among them, do at start).
    pub fn options(&self) -> ServeOptions {
        let files = raise_open_file_limit();
        let total = self.max_connections.unwrap_or_else(|| {
            usize::try_from(files.saturating_sub(RESERVED_FILES).max(64)).unwrap_or(usize::MAX)
        });
        ServeOptions {
            limits: ConnectionLimits {
                per_address: self.max_connections_per_address,
                total,
            },
            idle_timeout: self.idle_connection_timeout,
        }
    }
}

impl Default for ServeOptions {
    /// The flags' defaults, with the overall limit taken as is (for benchmarks and tests that
    /// serve in-process).
    fn default() -> Self {
        Self {
            limits: ConnectionLimits {
                per_address: 512,
                total: 4096,
            },
            idle_timeout: Duration::from_secs(90),
        }
    }
}

/// Raises the soft open-file limit to the hard one and returns the limit in force.
fn raise_open_file_limit() -> u64 {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    let limit = getrlimit(Resource::Nofile);
    let raised = Rlimit {
        current: limit.maximum,
        maximum: limit.maximum,
    };
    if limit.current != limit.maximum && setrlimit(Resource::Nofile, raised).is_ok() {
        return limit.maximum.unwrap_or(u64::MAX);
    }
    limit.current.unwrap_or(u64::MAX)
}

/// How many TLS handshakes run at once: two per core. A handshake is a few milliseconds of
/// CPU; a burst of hundreds of new connections (a flood, or every member reconnecting after a
/// restart) would otherwise fill the scheduler's queues and every request on an established
/// connection would wait behind them. The rest wait their turn, first come first served,
/// within the handshake timeout.
fn handshake_slots() -> usize {
    2 * std::thread::available_parallelism().map_or(1, usize::from)
}

/// What every connection task shares.
struct Shared {
    acceptor: TlsAcceptor,
    /// TLS handshakes in progress at once (see [`handshake_slots`]).
    handshakes: tokio::sync::Semaphore,
    client_certs: ClientCerts,
    router: axum::Router,
    idle_timeout: Duration,
}

/// Accepts TLS connections on `listener` forever, serving `router`.
pub async fn serve_tls(
    listener: TcpListener,
    tls: ServerTls,
    router: axum::Router,
    options: ServeOptions,
) -> Result<()> {
    let shared = Arc::new(Shared {
        acceptor: TlsAcceptor::from(tls.config),
        handshakes: tokio::sync::Semaphore::new(handshake_slots()),
        client_certs: tls.client_certs,
        router,
        idle_timeout: options.idle_timeout,
    });
    let table = ConnectionTable::new(options.limits);
    let mut backoff = AcceptBackoff::default();
    let mut refusals = Throttle::new(REFUSAL_LOG_INTERVAL);
    loop {
        let (tcp, peer) = match listener.accept().await {
            Ok(accepted) => {
                if let Some(failures) = backoff.succeeded() {
                    tracing::info!(failures, "accepting connections again");
                }
                accepted
            }
            Err(e) => {
                let retry = backoff.failed();
                if retry.first {
                    tracing::warn!(error = %e, "accepting a connection failed; backing off (up to 1s between tries) until it succeeds");
                }
                tokio::time::sleep(retry.wait).await;
                continue;
            }
        };
        let ticket = match table.admit(peer.ip()) {
            Ok(ticket) => ticket,
            Err(refusal) => {
                if let Some(held_back) = refusals.event(tokio::time::Instant::now()) {
                    tracing::warn!(%peer, held_back, "connection refused: {refusal}");
                }
                continue;
            }
        };
        let _ = tcp.set_nodelay(true);
        tokio::spawn(serve_connection(shared.clone(), tcp, peer, ticket));
    }
}

/// Serves one connection until it ends, idles out, or stalls; `_ticket` holds its place.
async fn serve_connection(shared: Arc<Shared>, tcp: TcpStream, peer: SocketAddr, _ticket: Ticket) {
    let handshake = async {
        let _slot = shared.handshakes.acquire().await;
        shared.acceptor.accept(tcp).await
    };
    let stream = match tokio::time::timeout(HANDSHAKE_TIMEOUT, handshake).await {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => {
            tracing::debug!(%peer, error = %e, "TLS handshake failed");
            return;
        }
        Err(_) => {
            tracing::debug!(%peer, "TLS handshake timed out");
            return;
        }
    };
    let identity = stream
        .get_ref()
        .1
        .peer_certificates()
        .and_then(|chain| shared.client_certs.judge(chain));
    let activity = Activity::new();
    let service = {
        let activity = activity.clone();
        let router = shared.router.clone();
        tower::service_fn(move |mut req: http::Request<hyper::body::Incoming>| {
            if let Some(id) = &identity {
                req.extensions_mut().insert(id.clone());
            }
            let in_flight = activity.begin();
            let response = tower::ServiceExt::oneshot(router.clone(), req);
            async move {
                let response = response.await?;
                Ok::<_, std::convert::Infallible>(
                    response.map(|body| axum::body::Body::new(Tracked::new(body, in_flight))),
                )
            }
        })
    };
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(HANDSHAKE_TIMEOUT);
    // Pings find peers that went away without closing (an idle peer answers them, and is
    // closed by the idle timeout instead).
    builder
        .http2()
        .timer(TokioTimer::new())
        .keep_alive_interval(Some(Duration::from_secs(30)))
        .keep_alive_timeout(Duration::from_secs(20));
    let connection = builder.serve_connection_with_upgrades(
        TokioIo::new(Coalesced::new(stream)),
        TowerToHyperService::new(service),
    );
    tokio::pin!(connection);
    let ended = tokio::select! {
        ended = connection.as_mut() => ended,
        () = activity.idle_for(shared.idle_timeout) => {
            tracing::debug!(%peer, "closing an idle connection");
            connection.as_mut().graceful_shutdown();
            tokio::time::timeout(CLOSE_GRACE, connection.as_mut())
                .await
                .unwrap_or(Ok(()))
        }
    };
    if let Err(e) = ended {
        tracing::debug!(%peer, error = %e, "connection ended with error");
    }
}
