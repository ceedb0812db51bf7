//! A hub served the way `flotilla up` serves it — durable SQLite store, bearer token, TLS on a
//! loopback port — and kube clients that reach it over real HTTPS from its kubeconfig.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;
use std::sync::Arc;

use anyhow::Result;
use flotilla_apiserver::{Hub, HubOptions, ServerConfig};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use crate::{kubeconfig, serve, tls};

/// A hub serving HTTPS on `127.0.0.1`; the server stops on drop.
pub struct HttpsHub {
    hub: Hub,
    address: SocketAddr,
    config: kube::Config,
    server: JoinHandle<Result<()>>,
}

impl HttpsHub {
    /// Starts a hub over a new SQLite store in `dir` (which also receives its PKI).
    pub async fn start(dir: &Path) -> Result<HttpsHub> {
        let store = super::store::open(dir.join("store.db")).await?;
        let token = format!("{:032x}", rand::random::<u128>());
        let options = HubOptions {
            server: ServerConfig {
                tokens: Some(Arc::new(vec![token.clone()])),
                ..ServerConfig::default()
            },
            ..HubOptions::default()
        };
        let hub = Hub::start(Arc::new(store), options)
            .await
            .map_err(|e| anyhow::anyhow!("starting hub: {e}"))?;
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
        let addr = listener.local_addr()?;
        let pki = tls::load_or_create(dir, Some(addr.ip()))?;
        let server = tokio::spawn(serve::serve_tls(
            listener,
            tls::server_config(&pki)?,
            hub.router(),
        ));
        let text = kubeconfig::render(&format!("https://{addr}"), &pki.ca_pem, &token);
        let kubeconfig = kube::config::Kubeconfig::from_yaml(&text)?;
        let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default()).await?;
        Ok(HttpsHub {
            hub,
            address: addr,
            config,
            server,
        })
    }

    /// A new client with its own connection pool, over HTTPS with the hub's CA and token.
    pub fn client(&self) -> Result<kube::Client> {
        Ok(kube::Client::try_from(self.config.clone())?)
    }

    /// Where the hub listens.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// The hub itself (for in-process setup that is not being measured).
    pub fn hub(&self) -> &Hub {
        &self.hub
    }
}

impl Drop for HttpsHub {
    fn drop(&mut self) {
        self.server.abort();
    }
}
