//! A hub served the way `flotilla up` serves it — durable SQLite store, bearer token, TLS on a
//! loopback port — and kube clients that reach it over real HTTPS from its kubeconfig.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;
use std::sync::Arc;

use anyhow::Result;
use bytes::Bytes;
use flotilla_apiserver::auth::TokenFile;
use flotilla_apiserver::limits::ClientLimits;
use flotilla_apiserver::{Hub, HubOptions, SecurityOptions, ServerConfig};
use http_body_util::{BodyExt, Full};
use hyper_rustls::{HttpsConnector, HttpsConnectorBuilder};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use rustls::pki_types::{CertificateDer, pem::PemObject};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use crate::{kubeconfig, serve, tls};

/// A hub serving HTTPS on `127.0.0.1`; the servers stop on drop. Besides the gated listener
/// that clients use, a second listener serves the same engine without the gate
/// (authentication, RBAC, client limits, audit), only so the benchmark can price the gate
/// side by side.
pub struct HttpsHub {
    hub: Hub,
    address: SocketAddr,
    open_address: SocketAddr,
    open_server: JoinHandle<Result<()>>,
    config: kube::Config,
    ca_pem: String,
    token: String,
    server: JoinHandle<Result<()>>,
}

/// An HTTP/2 client: concurrent requests share one multiplexed TLS connection, as client-go
/// (and so kubectl and Go controllers) talks to an API server. kube-rs speaks HTTP/1.1 only.
#[derive(Clone)]
pub struct H2Client {
    client: Client<HttpsConnector<HttpConnector>, Full<Bytes>>,
    base: String,
    authorization: String,
}

impl H2Client {
    /// POSTs a JSON body to `path` and returns the response status once its body is read.
    pub async fn post_json(&self, path: &str, body: Vec<u8>) -> Result<http::StatusCode> {
        let request = http::Request::post(format!("{}{path}", self.base))
            .header(http::header::CONTENT_TYPE, "application/json")
            .body(Full::new(Bytes::from(body)))?;
        self.send(request).await
    }

    /// GETs `path` as JSON and returns the response status once its body is read.
    pub async fn get(&self, path: &str) -> Result<http::StatusCode> {
        let request =
            http::Request::get(format!("{}{path}", self.base)).body(Full::new(Bytes::new()))?;
        self.send(request).await
    }

    /// Opens a watch (`path` with `watch=1`) and returns its body once the server has answered
    /// with its headers; the events come as the body's frames.
    pub async fn watch(&self, path: &str) -> Result<hyper::body::Incoming> {
        let response = self.client.request(self.authorized_get(path)?).await?;
        if !response.status().is_success() {
            anyhow::bail!("watch {path}: {}", response.status());
        }
        Ok(response.into_body())
    }

    /// The `metadata.resourceVersion` of the list at `path`.
    pub async fn list_resource_version(&self, path: &str) -> Result<String> {
        let response = self.client.request(self.authorized_get(path)?).await?;
        let body = response.into_body().collect().await?.to_bytes();
        let list: serde_json::Value = serde_json::from_slice(&body)?;
        list.pointer("/metadata/resourceVersion")
            .and_then(serde_json::Value::as_str)
            .map(String::from)
            .ok_or_else(|| anyhow::anyhow!("no resourceVersion in the list at {path}"))
    }

    /// A GET of `path` as JSON with the token.
    fn authorized_get(&self, path: &str) -> Result<http::Request<Full<Bytes>>> {
        let mut request =
            http::Request::get(format!("{}{path}", self.base)).body(Full::new(Bytes::new()))?;
        let headers = request.headers_mut();
        headers.insert(http::header::AUTHORIZATION, self.authorization.parse()?);
        headers.insert(http::header::ACCEPT, "application/json".parse()?);
        Ok(request)
    }

    async fn send(&self, mut request: http::Request<Full<Bytes>>) -> Result<http::StatusCode> {
        let headers = request.headers_mut();
        headers.insert(http::header::AUTHORIZATION, self.authorization.parse()?);
        headers.insert(http::header::ACCEPT, "application/json".parse()?);
        let response = self.client.request(request).await?;
        let status = response.status();
        response.into_body().collect().await?;
        Ok(status)
    }
}

impl HttpsHub {
    /// Starts a hub over `store`, with its PKI in `dir`.
    pub async fn start(dir: &Path, store: flotilla_store::SharedStorage) -> Result<HttpsHub> {
        let token = format!("{:032x}", rand::random::<u128>());
        let options = HubOptions {
            security: Some(SecurityOptions {
                tokens: Arc::new(TokenFile::single(
                    &token,
                    "bench-admin",
                    &["system:masters"],
                )),
                audit_log: Some(dir.join("audit.log")),
                limits: ClientLimits::default(),
            }),
            ..HubOptions::default()
        };
        let hub = Hub::start(store, options)
            .await
            .map_err(|e| anyhow::anyhow!("starting hub: {e}"))?;
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
        let addr = listener.local_addr()?;
        let pki = tls::load_or_create(dir, Some(addr.ip()))?;
        let server = tokio::spawn(serve::serve_tls(
            listener,
            tls::server_config(&pki)?,
            hub.router(),
            serve::ServeOptions::default(),
        ));
        let open_listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
        let open_address = open_listener.local_addr()?;
        let open_server = tokio::spawn(serve::serve_tls(
            open_listener,
            tls::server_config(&pki)?,
            flotilla_apiserver::http::router(hub.engine().clone(), ServerConfig::default()),
            serve::ServeOptions::default(),
        ));
        let config = client_config(addr, &pki.ca_pem, &token).await?;
        Ok(HttpsHub {
            hub,
            address: addr,
            open_address,
            open_server,
            config,
            ca_pem: pki.ca_pem,
            token,
            server,
        })
    }

    /// A new client with its own connection pool, over HTTPS with the hub's CA and token.
    pub fn client(&self) -> Result<kube::Client> {
        Ok(kube::Client::try_from(self.config.clone())?)
    }

    /// An HTTP/2 client over one TLS connection trusting the hub's CA, with its token.
    pub fn h2_client(&self) -> Result<H2Client> {
        self.h2_client_to(self.address)
    }

    /// As [`HttpsHub::h2_client`], to the listener without the gate.
    pub fn h2_client_ungated(&self) -> Result<H2Client> {
        self.h2_client_to(self.open_address)
    }

    fn h2_client_to(&self, address: SocketAddr) -> Result<H2Client> {
        h2_client(address, &self.ca_pem, &self.token)
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

/// The kube-rs client configuration for an API server at `address` trusting `ca_pem`, with
/// `token`, as from the kubeconfig a user would be given.
pub async fn client_config(address: SocketAddr, ca_pem: &str, token: &str) -> Result<kube::Config> {
    let text = kubeconfig::render(
        &format!("https://{address}"),
        ca_pem,
        &kubeconfig::Credentials::Token(token.to_string()),
    );
    let kubeconfig = kube::config::Kubeconfig::from_yaml(&text)?;
    Ok(kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default()).await?)
}

/// An HTTP/2 client to an API server at `address` over one TLS connection trusting `ca_pem`,
/// sending `token`: the hub and its kube-apiserver peer are measured through the same one.
pub fn h2_client(address: SocketAddr, ca_pem: &str, token: &str) -> Result<H2Client> {
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
        roots.add(cert?)?;
    }
    let tls = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()?
    .with_root_certificates(roots)
    .with_no_client_auth();
    // Go's dialer (client-go, kubectl) sets TCP_NODELAY; hyper's does not by default.
    let mut tcp = HttpConnector::new();
    tcp.set_nodelay(true);
    tcp.enforce_http(false);
    let connector = HttpsConnectorBuilder::new()
        .with_tls_config(tls)
        .https_only()
        .enable_http2()
        .wrap_connector(tcp);
    Ok(H2Client {
        client: Client::builder(TokioExecutor::new())
            .http2_only(true)
            .build(connector),
        base: format!("https://{address}"),
        authorization: format!("Bearer {token}"),
    })
}

impl Drop for HttpsHub {
    fn drop(&mut self) {
        self.server.abort();
        self.open_server.abort();
    }
}
