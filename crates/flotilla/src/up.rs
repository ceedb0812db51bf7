//! `flotilla up` and `flotilla hub`: start the hub over a durable store, serve it over HTTPS,
//! write the kubeconfig, and run until interrupted.

use flotilla_sim::cluster::ConsolidationOptions;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use clap::Args;
use flotilla_apiserver::auth::TokenFile;
use flotilla_apiserver::limits::ClientLimits;
use flotilla_apiserver::proxy::{MemberApis, with_member_proxy};
use flotilla_apiserver::{Hub, HubOptions, SecurityOptions, ServerConfig};
use flotilla_sim::fleet::Fleet;
use flotilla_store::{SharedStorage, SqliteOptions, SqliteStore};
use tokio::net::TcpListener;

use crate::leader::{self, LeaderArgs, LeaseConfig, Term};
use crate::{controllers, dashboard, fleet_runner, kubeconfig, serve, tls};

/// Arguments of `flotilla up`.
#[derive(Debug, Args)]
pub struct UpArgs {
    /// Where state lives (store, certificates, kubeconfig).
    #[arg(long, default_value_os_t = crate::default_data_dir())]
    pub data_dir: PathBuf,
    /// Listen address; port 0 picks a free port.
    #[arg(long, default_value = "127.0.0.1:6443")]
    pub listen: SocketAddr,
    /// Run N generated simulated member clusters instead of the default six.
    #[arg(long, conflicts_with = "fleet")]
    pub members: Option<usize>,
    /// Run the simulated members described in this fleet file (see README).
    #[arg(long)]
    pub fleet: Option<PathBuf>,
    /// Run simulated time this many times faster than real time.
    #[arg(long, default_value_t = 1.0)]
    pub clock_speed: f64,
    /// Simulated seconds from a pod's scheduling to its containers being Ready, in every
    /// simulated member.
    #[arg(long, default_value_t = 5.0)]
    pub readiness_delay: f64,
    /// Karpenter's feature gates in every simulated member, written as Karpenter's own
    /// `--feature-gates` (`SpotToSpotConsolidation=true`); a gate the simulator does not
    /// model is refused.
    #[arg(long, default_value = "")]
    pub feature_gates: String,
    /// What clients may hold open.
    #[command(flatten)]
    pub connections: serve::ConnectionArgs,
}

/// Arguments of `flotilla hub`.
#[derive(Debug, Args)]
pub struct HubArgs {
    /// `sqlite:PATH` (embedded, durable), `etcd:URL[,URL…]` (an etcd cluster several hub
    /// replicas share; give every member's client URL) or `memory:` (ephemeral).
    #[arg(long)]
    pub store: String,
    /// Directory for certificates, token and kubeconfig.
    #[arg(long, default_value_os_t = crate::default_data_dir())]
    pub data_dir: PathBuf,
    /// Listen address; port 0 picks a free port.
    #[arg(long, default_value = "127.0.0.1:6443")]
    pub listen: SocketAddr,
    /// What clients may hold open.
    #[command(flatten)]
    pub connections: serve::ConnectionArgs,
    /// The hub's controllers run on one replica at a time, elected through a Lease.
    #[command(flatten)]
    pub leader: LeaderArgs,
    /// Serve only the core Kubernetes kinds and run no controllers: an empty "Kubernetes"
    /// for trying `flotilla crds` and `flotilla controllers` (a bring-your-own hub).
    #[arg(long, hide = true)]
    pub no_fleet_kinds: bool,
}

/// Which built-in kinds a hub serves, and how it runs the hub's controllers.
enum HubMode {
    /// `flotilla up`: the only process over its store, so the controllers start at once.
    Standalone,
    /// `flotilla hub`: the controllers run on whichever replica holds the lease.
    Elected(LeaseConfig),
    /// `flotilla hub --no-fleet-kinds`: core kinds only, no controllers.
    CoreOnly,
}

/// The simulated members `up` runs, and how they behave.
struct SimulatedFleet {
    fleet: Fleet,
    readiness_delay: std::time::Duration,
    consolidation: ConsolidationOptions,
}

/// Runs `flotilla up`.
pub async fn up(args: UpArgs) -> Result<()> {
    if args.clock_speed.is_nan() || args.clock_speed <= 0.0 {
        bail!("--clock-speed must be positive");
    }
    let readiness_delay =
        std::time::Duration::try_from_secs_f64(args.readiness_delay).map_err(|_| {
            anyhow::anyhow!("--readiness-delay must be a non-negative number of seconds")
        })?;
    let consolidation = ConsolidationOptions::from_feature_gates(&args.feature_gates)
        .map_err(|e| anyhow::anyhow!("--feature-gates: {e}"))?;
    let fleet = match (&args.fleet, args.members) {
        (Some(path), _) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading fleet file {}", path.display()))?;
            Fleet::from_yaml(&text)
                .map_err(|e| anyhow::anyhow!("invalid fleet file {}:\n{e}", path.display()))?
        }
        (None, Some(n)) => Fleet::generated(n),
        (None, None) => Fleet::default_fleet(),
    };
    private_dir(&args.data_dir)?;
    let store = open_sqlite(&args.data_dir.join("store.db"))?;
    let clock: Arc<dyn flotilla_apiserver::Clock> = Arc::new(
        flotilla_apiserver::clock::ScaledClock::new(args.clock_speed),
    );
    let members = SimulatedFleet {
        fleet,
        readiness_delay,
        consolidation,
    };
    let mode = HubMode::Standalone;
    let dir = &args.data_dir;
    let serving = args.connections.options();
    run_hub(store, dir, args.listen, serving, clock, mode, Some(members)).await
}

/// Runs `flotilla hub`.
pub async fn hub(args: HubArgs) -> Result<()> {
    let mode = if args.no_fleet_kinds {
        HubMode::CoreOnly
    } else {
        HubMode::Elected(args.leader.config()?)
    };
    private_dir(&args.data_dir)?;
    let store: SharedStorage = match args.store.split_once(':') {
        Some(("sqlite", path)) if !path.is_empty() => open_sqlite(Path::new(path))?,
        Some(("memory", _)) => Arc::new(flotilla_store::MemoryStore::new()),
        Some(("etcd", urls)) if !urls.is_empty() => open_etcd(urls).await?,
        _ => bail!(
            "--store must be sqlite:PATH, etcd:URL[,URL…] or memory: (got {:?})",
            args.store
        ),
    };
    run_hub(
        store,
        &args.data_dir,
        args.listen,
        args.connections.options(),
        Arc::new(flotilla_apiserver::SystemClock),
        mode,
        None,
    )
    .await
}

/// Key prefix of a hub's objects in etcd (replicas of one hub share it).
const ETCD_PREFIX: &str = "/flotilla/";

/// Connects to the etcd cluster at comma-separated client URLs (`http://` when no scheme).
async fn open_etcd(urls: &str) -> Result<SharedStorage> {
    let endpoints: Vec<String> = urls
        .split(',')
        .map(str::trim)
        .filter(|u| !u.is_empty())
        .map(|u| {
            if u.contains("://") {
                u.to_string()
            } else {
                format!("http://{u}")
            }
        })
        .collect();
    let options = flotilla_store::EtcdOptions {
        prefix: ETCD_PREFIX.to_string(),
        ..flotilla_store::EtcdOptions::new(endpoints.clone())
    };
    let store = flotilla_store::EtcdStore::connect(options)
        .await
        .map_err(|e| anyhow::anyhow!("connecting to etcd at {}: {e}", endpoints.join(",")))?;
    Ok(Arc::new(store))
}

/// Creates the data directory readable by its owner only (0700): it holds the CA key, tokens
/// and a store full of Secrets. An existing directory is tightened too.
fn private_dir(dir: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
        .with_context(|| format!("restricting {} to its owner", dir.display()))
}

fn open_sqlite(path: &Path) -> Result<SharedStorage> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    // The database (and so its WAL and shared-memory files, which SQLite creates with the
    // database's mode) is the owner's alone: 0600.
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("creating store {}", path.display()))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    let store = SqliteStore::open(SqliteOptions::new(path))
        .with_context(|| format!("opening store {}", path.display()))?;
    Ok(Arc::new(store))
}

fn load_or_create_token(dir: &Path) -> Result<String> {
    let path = dir.join("token");
    if let Ok(t) = std::fs::read_to_string(&path)
        && !t.trim().is_empty()
    {
        return Ok(t.trim().to_string());
    }
    let bytes: [u8; 24] = rand::random();
    let token: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    tls::write_private(dir, "token", &token)?;
    Ok(token)
}

/// The static token file of a hub in `dir`: the administrator token `up` generated (user
/// `flotilla-admin` in `system:masters`, the token of the kubeconfig it writes) plus the
/// lines of `dir/tokens.csv` (kube-apiserver's token-file format), if that file exists.
fn security_options(dir: &Path, admin_token: &str) -> Result<SecurityOptions> {
    let path = dir.join("tokens.csv");
    let extra = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let text = format!("{admin_token},flotilla-admin,flotilla-admin,\"system:masters\"\n{extra}");
    let tokens = TokenFile::parse(&text)
        .map_err(|e| anyhow::anyhow!("{} (first line is the admin token): {e}", path.display()))?;
    Ok(SecurityOptions {
        tokens: Arc::new(tokens),
        audit_log: Some(dir.join("audit.log")),
        limits: ClientLimits::default(),
    })
}

async fn run_hub(
    store: SharedStorage,
    dir: &Path,
    listen: SocketAddr,
    serving: serve::ServeOptions,
    clock: Arc<dyn flotilla_apiserver::Clock>,
    mode: HubMode,
    fleet: Option<SimulatedFleet>,
) -> Result<()> {
    let token = load_or_create_token(dir)?;
    let pki = tls::load_or_create(dir, Some(listen.ip()))?;
    let kinds = matches!(mode, HubMode::CoreOnly).then(|| {
        let core = flotilla_api::core_crds()
            .into_iter()
            .filter_map(|crd| serde_json::to_value(crd).ok())
            .collect();
        Arc::new(flotilla_apiserver::registry::Registry::new(core))
    });
    let options = HubOptions {
        server: ServerConfig::default(),
        clock: clock.clone(),
        security: Some(security_options(dir, &token)?),
        kinds,
        ..HubOptions::default()
    };
    let hub = Hub::start(store, options)
        .await
        .map_err(|e| anyhow::anyhow!("starting hub: {e}"))?;
    // The hub's /metrics also shows its controllers' (and in-process agents') families.
    hub.engine().metrics().include_process();
    let hub = Arc::new(hub);
    let hub_client = hub.client();
    let (stop_controllers, stopping) = tokio::sync::oneshot::channel::<()>();
    let mut controllers = tokio::spawn(run_controllers(mode, hub.clone(), clock.clone(), async {
        let _ = stopping.await;
    }));
    let member_apis = MemberApis::default();
    let app = with_member_proxy(hub.router(), hub.security().cloned(), member_apis.clone());
    let app = dashboard::forecast::with_forecasts(app, hub_client.clone(), hub.security().cloned());
    let app = dashboard::with_dashboard(app);
    let listener = TcpListener::bind(listen)
        .await
        .with_context(|| format!("listening on {listen}"))?;
    let addr = listener.local_addr()?;
    let host = if addr.ip().is_unspecified() {
        "127.0.0.1".to_string()
    } else {
        addr.ip().to_string()
    };
    let server = if addr.is_ipv6() {
        format!("https://[{host}]:{}", addr.port())
    } else {
        format!("https://{host}:{}", addr.port())
    };
    let kubeconfig_path = dir.join("kubeconfig");
    kubeconfig::write(
        &kubeconfig_path,
        &kubeconfig::render(
            &server,
            &pki.ca_pem,
            &kubeconfig::Credentials::Token(token.clone()),
        ),
    )?;
    let abs = std::fs::canonicalize(&kubeconfig_path).unwrap_or(kubeconfig_path);
    println!("Flotilla hub is serving at {server}");
    println!("  export KUBECONFIG={}", abs.display());
    println!("  kubectl get memberclusters");
    println!(
        "  flotilla kubeconfig <member> > member.kubeconfig   # kubectl into a simulated member"
    );
    println!(
        "Dashboard: {server}/ui/ (sign in with the token in {})",
        dir.join("token").display()
    );
    println!("Press Ctrl-C to stop; state is kept in {}.", dir.display());
    let tls_config = tls::server_config(&pki)?;
    let members = async {
        match fleet {
            Some(members) => {
                let runtime = fleet_runner::FleetRuntime {
                    hub: hub_client,
                    connect: {
                        let hub = hub.clone();
                        Arc::new(move || hub.client())
                    },
                    clock,
                    apis: member_apis,
                    readiness_delay: members.readiness_delay,
                    consolidation: members.consolidation,
                };
                fleet_runner::run(members.fleet, runtime).await
            }
            None => std::future::pending().await,
        }
    };
    let mut controllers_ended = false;
    let result = tokio::select! {
        r = serve::serve_tls(listener, tls_config, app, serving) => r,
        r = members => r,
        r = &mut controllers => {
            controllers_ended = true;
            r.context("the controllers panicked").and_then(|r| r)
        }
        _ = shutdown_signal() => {
            tracing::info!("shutting down");
            Ok(())
        }
    };
    // Stop the controllers (and release their lease) before the hub goes away.
    let _ = stop_controllers.send(());
    if !controllers_ended {
        let _ = controllers.await;
    }
    drop(hub);
    result
}

/// Runs the hub's controllers as `mode` says, in-process against `hub`, until `shutdown`;
/// then stops them (releasing their lease when elected).
async fn run_controllers(
    mode: HubMode,
    hub: Arc<Hub>,
    clock: Arc<dyn flotilla_apiserver::Clock>,
    shutdown: impl std::future::Future<Output = ()>,
) -> Result<()> {
    let mut start = {
        let hub = hub.clone();
        move || -> Result<_> { Ok(controllers::spawn(hub.client(), clock.clone())) }
    };
    match mode {
        HubMode::CoreOnly => {
            shutdown.await;
            Ok(())
        }
        HubMode::Elected(config) => {
            leader::controllers_election(hub.client(), config)
                .run(start, shutdown)
                .await
        }
        HubMode::Standalone => {
            let mut term = Term::start(&mut start)?;
            let ended = tokio::select! {
                () = term.ended() => true,
                () = shutdown => false,
            };
            term.stop().await;
            if ended {
                bail!("a controller task ended on its own");
            }
            Ok(())
        }
    }
}

/// Resolves on Ctrl-C or SIGTERM.
pub async fn shutdown_signal() {
    let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(s) => s,
        Err(_) => return std::future::pending().await,
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
}
