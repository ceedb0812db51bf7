//! `flotilla member`: the member agent for a real cluster, and `flotilla kubeconfig <member>`,
//! a kubeconfig for one simulated member reached through the hub.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use clap::Args;
use flotilla_member::Agent;
use kube::config::{KubeConfigOptions, Kubeconfig};

use crate::{kubeconfig, prices::CatalogPrices};

/// Arguments of `flotilla member`.
#[derive(Debug, Args)]
pub struct MemberArgs {
    /// The hub's URL, e.g. `https://hub.example.com:6443`.
    #[arg(long)]
    pub hub: String,
    /// Bearer token for the hub.
    #[arg(long, env = "FLOTILLA_HUB_TOKEN")]
    pub token: String,
    /// The member's name: its MemberCluster on the hub must already exist.
    #[arg(long)]
    pub name: String,
    /// Kubeconfig of the member cluster (its current context is used).
    #[arg(long)]
    pub kubeconfig: PathBuf,
    /// CA certificate (PEM) the hub's serving certificate is checked against; default
    /// `.flotilla/ca.crt` when present.
    #[arg(long)]
    pub hub_ca: Option<PathBuf>,
    /// Log as JSON lines.
    #[arg(long)]
    pub log_json: bool,
}

/// Runs the member agent until interrupted.
pub async fn run(args: MemberArgs) -> Result<()> {
    let ca_path = args
        .hub_ca
        .clone()
        .unwrap_or_else(|| crate::default_data_dir().join("ca.crt"));
    let ca = std::fs::read_to_string(&ca_path).with_context(|| {
        format!(
            "reading the hub's CA certificate {} (pass --hub-ca)",
            ca_path.display()
        )
    })?;
    let hub = client_from(&kubeconfig::render(&args.hub, &ca, &args.token)).await?;
    let member_config = Kubeconfig::read_from(&args.kubeconfig)
        .with_context(|| format!("reading {}", args.kubeconfig.display()))?;
    let member = kube::Client::try_from(
        kube::Config::from_custom_kubeconfig(member_config, &KubeConfigOptions::default())
            .await
            .context("member kubeconfig")?,
    )?;
    let members: kube::Api<flotilla_api::cluster::MemberCluster> = kube::Api::all(hub.clone());
    if members
        .get_opt(&args.name)
        .await
        .context("reaching the hub")?
        .is_none()
    {
        bail!(
            "MemberCluster {:?} does not exist on the hub; create it first (kubectl apply -f membercluster.yaml)",
            args.name
        );
    }
    let version = member
        .apiserver_version()
        .await
        .context("reaching the member cluster")?;
    eprintln!(
        "member agent for {} (Kubernetes {}) joining the hub at {}",
        args.name, version.git_version, args.hub
    );
    let agent = Agent {
        name: args.name,
        hub,
        member,
        clock: Arc::new(flotilla_apiserver::SystemClock),
        prices: Arc::new(CatalogPrices),
        overrides: Default::default(),
        provider: None,
    };
    tokio::select! {
        () = agent.run() => bail!("the hub closed the agent's watch"),
        () = crate::up::shutdown_signal() => Ok(()),
    }
}

async fn client_from(kubeconfig_text: &str) -> Result<kube::Client> {
    let config = Kubeconfig::from_yaml(kubeconfig_text)?;
    let config =
        kube::Config::from_custom_kubeconfig(config, &KubeConfigOptions::default()).await?;
    Ok(kube::Client::try_from(config)?)
}

/// The text of the hub's kubeconfig: `flag`, else `$KUBECONFIG`, else `.flotilla/kubeconfig`
/// (where `flotilla up` writes it).
fn hub_kubeconfig(flag: Option<PathBuf>) -> Result<String> {
    let path = flag
        .or_else(|| std::env::var_os("KUBECONFIG").map(PathBuf::from))
        .unwrap_or_else(|| crate::default_data_dir().join("kubeconfig"));
    std::fs::read_to_string(&path)
        .with_context(|| format!("reading the hub's kubeconfig {}", path.display()))
}

/// A client for the hub, from its kubeconfig (see [`hub_kubeconfig`]).
pub async fn hub_client(flag: Option<PathBuf>) -> Result<kube::Client> {
    client_from(&hub_kubeconfig(flag)?).await
}

/// Every object of kind `K` on the hub, in all namespaces.
pub async fn list_all<K>(client: &kube::Client) -> Result<Vec<K>>
where
    K: kube::Resource<DynamicType = ()> + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    let kind = K::kind(&());
    Ok(kube::Api::<K>::all(client.clone())
        .list(&kube::api::ListParams::default())
        .await
        .with_context(|| format!("listing {kind}s"))?
        .items)
}

/// Arguments of `flotilla kubeconfig`.
#[derive(Debug, Args)]
pub struct KubeconfigArgs {
    /// The simulated member cluster.
    pub member: String,
    /// The hub's kubeconfig; default `$KUBECONFIG`, else `.flotilla/kubeconfig`.
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
}

/// Prints a kubeconfig for one simulated member, reached through the hub at
/// `/clusters/<member>/` with the hub's credentials.
pub async fn print_kubeconfig(args: KubeconfigArgs) -> Result<()> {
    let text = hub_kubeconfig(args.kubeconfig)?;
    let hub = Kubeconfig::from_yaml(&text).context("parsing the hub's kubeconfig")?;
    let member = kubeconfig::for_member(&hub, &args.member)?;
    let client = client_from(&serde_saphyr::to_string(&member)?).await?;
    if let Err(e) = client.apiserver_version().await {
        bail!(
            "member {:?} is not reachable through the hub ({e}); `kubectl get memberclusters` lists the members",
            args.member
        );
    }
    print!("{}", serde_saphyr::to_string(&member)?);
    Ok(())
}
