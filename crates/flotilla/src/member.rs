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
    #[command(flatten)]
    pub metrics: crate::metrics_server::MetricsArgs,
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
    let hub = client_from(&kubeconfig::render(
        &args.hub,
        &ca,
        &kubeconfig::Credentials::Token(args.token.clone()),
    ))
    .await?;
    let member_config = Kubeconfig::read_from(&args.kubeconfig)
        .with_context(|| format!("reading {}", args.kubeconfig.display()))?;
    let member = kube::Client::try_from(
        kube::Config::from_custom_kubeconfig(member_config, &KubeConfigOptions::default())
            .await
            .context("member kubeconfig")?,
    )?;
    let members: kube::Api<flotilla_api::cluster::MemberCluster> = kube::Api::all(hub.clone());
    let found = match members.get_opt(&args.name).await {
        Ok(found) => found,
        Err(kube::Error::Api(e)) if e.code == 401 || e.code == 403 => bail!(
            "the hub refused this token for member {:?} ({}); issue the member's own token with `flotilla token issue {}`",
            args.name,
            e.message,
            args.name
        ),
        Err(e) => return Err(e).context("reaching the hub"),
    };
    if found.is_none() {
        bail!(
            "MemberCluster {:?} does not exist on the hub; create it first (kubectl apply -f membercluster.yaml)",
            args.name
        );
    }
    let version = member
        .apiserver_version()
        .await
        .context("reaching the member cluster")?;
    tracing::info!(
        "member agent for {} (Kubernetes {}) joining the hub at {}",
        args.name,
        version.git_version,
        args.hub
    );
    let _metrics = crate::metrics_server::serve(&args.metrics).await?;
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
    let path = hub_kubeconfig_path(flag);
    std::fs::read_to_string(&path)
        .with_context(|| format!("reading the hub's kubeconfig {}", path.display()))
}

/// Where the hub's kubeconfig is: `flag`, else `$KUBECONFIG`, else `.flotilla/kubeconfig`.
pub fn hub_kubeconfig_path(flag: Option<PathBuf>) -> PathBuf {
    flag.or_else(|| std::env::var_os("KUBECONFIG").map(PathBuf::from))
        .unwrap_or_else(|| crate::default_data_dir().join("kubeconfig"))
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
    /// A simulated member cluster to reach through the hub; omit for the hub itself.
    pub member: Option<String>,
    /// Mint a client certificate for this user, signed by the hub's CA (run on the hub's
    /// machine, or pass --data-dir).
    #[arg(long)]
    pub user: Option<String>,
    /// The certificate user's group (its subject organization), e.g. `fleet:viewers`.
    #[arg(long, requires = "user")]
    pub group: Option<String>,
    /// How long the minted certificate is valid, as a Go duration (`720h`, `90m`).
    #[arg(long, default_value = "8760h", requires = "user")]
    pub valid_for: String,
    /// The hub's data directory, which holds its CA.
    #[arg(long, default_value_os_t = crate::default_data_dir())]
    pub data_dir: PathBuf,
    /// The hub's kubeconfig; default `$KUBECONFIG`, else `.flotilla/kubeconfig`.
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
}

/// Prints a kubeconfig: for the hub as a new certificate user (`--user`), and/or for one
/// simulated member reached through the hub at `/clusters/<member>/`.
pub async fn print_kubeconfig(args: KubeconfigArgs) -> Result<()> {
    let text = hub_kubeconfig(args.kubeconfig)?;
    let mut hub = Kubeconfig::from_yaml(&text).context("parsing the hub's kubeconfig")?;
    if let Some(user) = &args.user {
        let valid_for = flotilla_apimachinery::go_duration::parse(&args.valid_for)
            .and_then(|d| std::time::Duration::try_from(d).ok())
            .filter(|d| !d.is_zero())
            .with_context(|| {
                format!(
                    "--valid-for {:?} is not a positive duration like 720h",
                    args.valid_for
                )
            })?;
        let (cert, key) =
            crate::tls::issue_client_cert(&args.data_dir, user, args.group.as_deref(), valid_for)?;
        let (server, ca) = hub_endpoint(&hub)?;
        let credentials = kubeconfig::Credentials::Certificate { cert, key };
        hub = Kubeconfig::from_yaml(&kubeconfig::render_for(&server, &ca, user, &credentials))?;
    }
    let config = match &args.member {
        Some(member) => kubeconfig::for_member(&hub, member)?,
        None if args.user.is_some() => hub,
        None => bail!(
            "name a simulated member (flotilla kubeconfig <member>) or a user to mint a certificate for (--user NAME)"
        ),
    };
    let client = client_from(&serde_saphyr::to_string(&config)?).await?;
    if let Err(e) = client.apiserver_version().await {
        match &args.member {
            Some(m) => bail!(
                "member {m:?} is not reachable through the hub ({e}); `kubectl get memberclusters` lists the members"
            ),
            None => bail!("the hub is not reachable with the new certificate: {e}"),
        }
    }
    print!("{}", serde_saphyr::to_string(&config)?);
    Ok(())
}

/// The cluster of a hub kubeconfig's current context, and its server URL.
pub fn current_cluster(config: &Kubeconfig) -> Result<(&kube::config::Cluster, String)> {
    let context = config
        .current_context
        .as_deref()
        .and_then(|c| config.contexts.iter().find(|n| n.name == c))
        .and_then(|n| n.context.as_ref())
        .context("the hub's kubeconfig has no current context")?;
    let cluster = config
        .clusters
        .iter()
        .find(|c| c.name == context.cluster)
        .and_then(|c| c.cluster.as_ref())
        .context("the hub's kubeconfig has no cluster for its current context")?;
    let server = cluster
        .server
        .clone()
        .context("the hub's kubeconfig cluster has no server")?;
    Ok((cluster, server))
}

/// The server URL and CA (PEM) of a kubeconfig's current cluster.
fn hub_endpoint(config: &Kubeconfig) -> Result<(String, String)> {
    use base64::Engine as _;
    let (cluster, server) = current_cluster(config)?;
    let ca = cluster
        .certificate_authority_data
        .as_deref()
        .context("the hub's kubeconfig has no certificate-authority-data")?;
    let ca = base64::engine::general_purpose::STANDARD
        .decode(ca)
        .context("decoding certificate-authority-data")?;
    Ok((server, String::from_utf8(ca)?))
}
