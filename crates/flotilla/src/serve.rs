//! Serving the API router over TLS (HTTP/2 and HTTP/1.1), one task per connection. What the
//! client certificate says (its user, or why it is refused) goes with every request on its
//! connection; handshakes and request headers that dawdle are cut off, so slow clients cannot
//! hold connections open.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

use crate::coalesced_writes::Coalesced;
use crate::tls::ServerTls;

/// How long a TLS handshake, or a request's headers, may take.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Accepts TLS connections on `listener` forever, serving `router`.
pub async fn serve_tls(listener: TcpListener, tls: ServerTls, router: axum::Router) -> Result<()> {
    let acceptor = TlsAcceptor::from(tls.config);
    let client_certs = Arc::new(tls.client_certs);
    loop {
        let (tcp, peer) = match listener.accept().await {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!(error = %e, "accept failed");
                continue;
            }
        };
        let _ = tcp.set_nodelay(true);
        let acceptor = acceptor.clone();
        let router = router.clone();
        let client_certs = client_certs.clone();
        tokio::spawn(async move {
            let stream = match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(tcp)).await {
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
                .and_then(|chain| client_certs.judge(chain));
            let service = TowerToHyperService::new(tower::ServiceExt::map_request(
                router,
                move |mut req: http::Request<hyper::body::Incoming>| {
                    if let Some(id) = &identity {
                        req.extensions_mut().insert(id.clone());
                    }
                    req
                },
            ));
            let mut builder = auto::Builder::new(TokioExecutor::new());
            builder
                .http1()
                .timer(TokioTimer::new())
                .header_read_timeout(HANDSHAKE_TIMEOUT);
            if let Err(e) = builder
                .serve_connection_with_upgrades(TokioIo::new(Coalesced::new(stream)), service)
                .await
            {
                tracing::debug!(%peer, error = %e, "connection ended with error");
            }
        });
    }
}
