//! `flotilla member`: the member agent for a real cluster, and `flotilla kubeconfig <member>`,
//! a kubeconfig for one simulated member reached through the hub.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use clap::Args;
use flotilla_member::Agent;
use flotilla_member::prices::{
    CONFIG_MAP_KEY as PRICES_KEY, Followed, NoPrices, PriceFile, PriceTable,
};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::config::{KubeConfigOptions, Kubeconfig};

use crate::kubeconfig;

/// Where a pod has its service account's token and CA.
const SERVICE_ACCOUNT_DIR: &str = "/var/run/secrets/kubernetes.io/serviceaccount";

/// Arguments of `flotilla member`.
#[derive(Debug, Args)]
pub struct MemberArgs {
    /// The hub's URL, e.g. `https://hub.example.com:6443`.
    #[arg(long, env = "FLOTILLA_HUB_URL")]
    pub hub: String,
    /// Bearer token for the hub.
    #[arg(long, env = "FLOTILLA_HUB_TOKEN")]
    pub token: String,
    /// The member's name: its MemberCluster on the hub must already exist.
    #[arg(long)]
    pub name: String,
    /// Kubeconfig of the member cluster (its current context is used); without it, the
    /// in-cluster configuration: the service account in `--service-account-dir` and the
    /// `KUBERNETES_SERVICE_HOST` and `KUBERNETES_SERVICE_PORT` variables, as a pod has them.
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
    /// Where the service account's `token` and `ca.crt` are mounted, for the in-cluster
    /// configuration.
    #[arg(long, default_value = SERVICE_ACCOUNT_DIR)]
    pub service_account_dir: PathBuf,
    /// A price table (YAML or JSON: `prices: [{instanceType, region, capacityType, hourly}]`)
    /// for the member's cost properties.
    #[arg(long, conflicts_with = "prices_configmap")]
    pub prices: Option<PathBuf>,
    /// A ConfigMap on the member, `NAMESPACE/NAME`, whose `prices.yaml` holds the price
    /// table; followed as it changes.
    #[arg(long)]
    pub prices_configmap: Option<String>,
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
    let member_config = match &args.kubeconfig {
        Some(path) => {
            Kubeconfig::read_from(path).with_context(|| format!("reading {}", path.display()))?
        }
        None => in_cluster(&args.service_account_dir)?,
    };
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
    let prices = price_source(&args, &member)?;
    let agent = Agent {
        name: args.name,
        hub,
        member,
        clock: Arc::new(flotilla_apiserver::SystemClock),
        prices,
        overrides: Default::default(),
        provider: None,
    };
    tokio::select! {
        () = agent.run() => bail!("the hub closed the agent's watch"),
        () = crate::up::shutdown_signal() => Ok(()),
    }
}

/// The in-cluster configuration as a kubeconfig, as client-go builds it: the API server at
/// `https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT`, the service account's CA
/// and its token file (re-read as the kubelet rotates it), both from `dir`.
fn in_cluster(dir: &Path) -> Result<Kubeconfig> {
    let var = |name: &str| {
        std::env::var(name).ok().filter(|v| !v.is_empty()).with_context(|| {
            format!(
                "no --kubeconfig, and {name} is not set: outside a cluster, pass the member's kubeconfig"
            )
        })
    };
    let host = var("KUBERNETES_SERVICE_HOST")?;
    let port = var("KUBERNETES_SERVICE_PORT")?;
    let host = if host.contains(':') {
        format!("[{host}]")
    } else {
        host
    };
    for file in ["token", "ca.crt"] {
        let path = dir.join(file);
        if !path.is_file() {
            bail!(
                "no --kubeconfig, and the service account's {file} is not at {} (pass --service-account-dir)",
                path.display()
            );
        }
    }
    let path = |file: &str| dir.join(file).display().to_string();
    Ok(Kubeconfig::from_yaml(&serde_json::to_string(
        &serde_json::json!({
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "in-cluster", "cluster": {
                "server": format!("https://{host}:{port}"),
                "certificate-authority": path("ca.crt"),
            }}],
            "users": [{"name": "service-account", "user": {"tokenFile": path("token")}}],
            "contexts": [{"name": "in-cluster", "context": {"cluster": "in-cluster", "user": "service-account"}}],
            "current-context": "in-cluster",
        }),
    )?)?)
}

/// Where the agent's node prices come from: `--prices FILE`, `--prices-configmap` (followed
/// on the member), or none, saying how to give some.
fn price_source(
    args: &MemberArgs,
    member: &kube::Client,
) -> Result<Arc<dyn flotilla_member::PriceSource>> {
    if let Some(path) = &args.prices {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading the price table {}", path.display()))?;
        let table = parse_prices(&text)
            .map_err(|e| anyhow::anyhow!("price table {}: {e}", path.display()))?;
        return Ok(Arc::new(table));
    }
    if let Some(reference) = &args.prices_configmap {
        let (namespace, name) = reference
            .split_once('/')
            .with_context(|| format!("--prices-configmap {reference:?} is not NAMESPACE/NAME"))?;
        let followed = Followed::waiting(format!("reading ConfigMap {reference}"));
        tokio::spawn(follow_prices(
            member.clone(),
            namespace.to_string(),
            name.to_string(),
            followed.clone(),
        ));
        return Ok(Arc::new(followed));
    }
    Ok(Arc::new(NoPrices {
        reason: "no price table was given (flotilla member --prices FILE or --prices-configmap NAMESPACE/NAME)".into(),
    }))
}

/// A price table's text (YAML or JSON), checked.
fn parse_prices(text: &str) -> Result<PriceTable, String> {
    let file: PriceFile = serde_saphyr::from_str(text).map_err(|e| e.to_string())?;
    PriceTable::from_file(file)
}

/// Keeps `followed` at the table in ConfigMap `namespace/name` on the member, or why there is
/// none (missing, no `prices.yaml`, not a valid table).
async fn follow_prices(member: kube::Client, namespace: String, name: String, followed: Followed) {
    use futures::StreamExt as _;
    use kube::runtime::{WatchStreamExt as _, watcher};
    let api: kube::Api<ConfigMap> = kube::Api::namespaced(member, &namespace);
    let config = watcher::Config::default().fields(&format!("metadata.name={name}"));
    let mut events = Box::pin(watcher(api, config).default_backoff());
    let mut seen = false;
    while let Some(event) = events.next().await {
        let reference = format!("ConfigMap {namespace}/{name}");
        match event {
            Ok(watcher::Event::Apply(cm) | watcher::Event::InitApply(cm)) => {
                seen = true;
                let table = match cm.data.as_ref().and_then(|d| d.get(PRICES_KEY)) {
                    Some(text) => {
                        parse_prices(text).map_err(|e| format!("{reference}: {PRICES_KEY}: {e}"))
                    }
                    None => Err(format!("{reference} has no {PRICES_KEY}")),
                };
                followed.set(table);
            }
            Ok(watcher::Event::Delete(_)) => {
                seen = false;
                followed.set(Err(format!("{reference} was deleted")));
            }
            Ok(watcher::Event::InitDone) if !seen => {
                followed.set(Err(format!("{reference} does not exist")));
            }
            Ok(watcher::Event::Init) => seen = false,
            Ok(_) => {}
            Err(e) => followed.set(Err(format!("reading {reference}: {e}"))),
        }
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
