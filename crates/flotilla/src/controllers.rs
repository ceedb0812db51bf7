//! The hub's controllers as one set (membership, placement, cluster updates), and
//! `flotilla controllers`: that set, under leader election, against any Kubernetes API server
//! serving Flotilla's kinds (`flotilla crds | kubectl apply -f -`).

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result};
use clap::Args;
use flotilla_apiserver::Clock;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{ObjectMeta, PostParams};
use tokio::task::JoinHandle;

use crate::leader::{self, LeaderArgs};

/// Arguments of `flotilla controllers`.
#[derive(Debug, Args)]
pub struct ControllersArgs {
    /// The hub's kubeconfig (default `$KUBECONFIG`, else `.flotilla/kubeconfig`).
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
    #[command(flatten)]
    pub leader: LeaderArgs,
    #[command(flatten)]
    pub metrics: crate::metrics_server::MetricsArgs,
}

/// Spawns every hub controller against `client` on `clock`, one task per controller, and the
/// fleet gauges beside them.
pub fn spawn(client: kube::Client, clock: Arc<dyn Clock>) -> Vec<JoinHandle<()>> {
    vec![
        tokio::spawn(flotilla_member::membership::run(
            client.clone(),
            clock.clone(),
        )),
        tokio::spawn(flotilla_placement::controller::run(
            client.clone(),
            clock.clone(),
        )),
        tokio::spawn(flotilla_updates::controller::run(client.clone(), clock)),
        tokio::spawn(crate::fleet_metrics::run(client)),
    ]
}

/// Runs `flotilla controllers` until interrupted.
pub async fn run(args: ControllersArgs) -> Result<()> {
    let config = args.leader.config()?;
    let election_client = crate::member::hub_client(args.kubeconfig.clone()).await?;
    let client = crate::member::hub_client(args.kubeconfig).await?;
    let version = client
        .apiserver_version()
        .await
        .context("reaching the hub's API server")?;
    tracing::info!(
        "Flotilla controllers against Kubernetes {} (leader election through {}/{})",
        version.git_version,
        leader::LEASE_NAMESPACE,
        leader::LEASE_NAME
    );
    ensure_namespace(&election_client, leader::LEASE_NAMESPACE).await?;
    let _metrics = crate::metrics_server::serve(&args.metrics).await?;
    let clock: Arc<dyn Clock> = Arc::new(flotilla_apiserver::SystemClock);
    leader::controllers_election(election_client, config)
        .run(
            || Ok(spawn(client.clone(), clock.clone())),
            crate::up::shutdown_signal(),
        )
        .await
}

/// Creates namespace `name` unless it exists (a Kubernetes cluster has no `fleet-system`
/// until someone creates it; Flotilla's hub always has it).
async fn ensure_namespace(client: &kube::Client, name: &str) -> Result<()> {
    let namespaces: kube::Api<Namespace> = kube::Api::all(client.clone());
    if namespaces.get_opt(name).await?.is_some() {
        return Ok(());
    }
    let namespace = Namespace {
        metadata: ObjectMeta {
            name: Some(name.to_string()),
            ..ObjectMeta::default()
        },
        ..Namespace::default()
    };
    match namespaces.create(&PostParams::default(), &namespace).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 409 => Ok(()),
        Err(e) => Err(e).with_context(|| format!("creating namespace {name} for the lease")),
    }
}
