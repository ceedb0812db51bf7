//! `--metrics-bind-address`: the process's Prometheus families on plain HTTP `/metrics`, for
//! the processes that serve no API of their own (`flotilla controllers`, `flotilla member`),
//! as controller-runtime's metrics server does. The hub serves the same families on its own
//! `/metrics`.

use anyhow::{Context, Result};
use axum::Router;
use axum::routing::get;
use clap::Args;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// Where the metrics are served.
#[derive(Debug, Args)]
pub struct MetricsArgs {
    /// Address to serve Prometheus metrics on (`http://ADDRESS/metrics`); `0` turns the
    /// server off. Port 0 picks a free port (the log says which).
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub metrics_bind_address: String,
}

/// The process registry in the text exposition format.
async fn metrics() -> ([(&'static str, &'static str); 1], String) {
    let mut text = String::new();
    flotilla_apiserver::metrics::process().render(&mut text);
    (
        [("content-type", "text/plain; version=0.0.4; charset=utf-8")],
        text,
    )
}

/// Starts the metrics server (unless turned off); it runs until the handle is dropped.
pub async fn serve(args: &MetricsArgs) -> Result<Option<JoinHandle<()>>> {
    if args.metrics_bind_address == "0" {
        return Ok(None);
    }
    let listener = TcpListener::bind(&args.metrics_bind_address)
        .await
        .with_context(|| {
            format!(
                "serving metrics on {} (choose another with --metrics-bind-address, or 0 for none)",
                args.metrics_bind_address
            )
        })?;
    let addr = listener.local_addr()?;
    tracing::info!("serving metrics on http://{addr}/metrics");
    let app = Router::new()
        .route("/metrics", get(metrics))
        .route("/healthz", get(|| async { "ok" }));
    Ok(Some(tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            tracing::warn!(error = %e, "metrics server stopped");
        }
    })))
}
