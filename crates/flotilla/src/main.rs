//! `flotilla`: the multi-cluster Kubernetes fleet manager's command line.
//!
//! `up` runs the whole system on one machine; `hub` runs the hub alone against a chosen store;
//! `crds` prints the CustomResourceDefinitions and `controllers` runs the hub's controllers
//! against any Kubernetes API server serving them; `bench` measures the store and API paths;
//! `member` runs the member agent of a real cluster and `join` prints the manifests that run it
//! inside the cluster; `approve` and `status` are user conveniences for staged update runs; `updaterun` and `gate`
//! for cluster update runs.

mod approve;
mod bench;
mod client_certs;
mod coalesced_writes;
mod controllers;
mod dashboard;
mod fleet_metrics;
mod fleet_runner;
mod gate;
mod hub_clock;
mod join;
mod kubeconfig;
mod leader;
mod member;
mod metrics_server;
mod plan;
mod preview;
mod prices;
mod profile;
mod serve;
mod status;
mod tls;
mod token;
mod up;
mod updaterun;

use std::path::PathBuf;

/// mimalloc: the API server allocates many short-lived JSON values per request from many
/// threads; glibc's allocator spent ~15% of the create benchmark in malloc/free.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use anyhow::Result;
use clap::{Parser, Subcommand};

/// Flotilla: place resources across member clusters, orchestrate their upgrades, and
/// auto-provision their nodes. Everything is a Kubernetes resource; kubectl is the interface.
#[derive(Debug, Parser)]
#[command(name = "flotilla", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Log as JSON lines (one object per event) instead of plain text.
    #[arg(long, global = true)]
    log_json: bool,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the whole system on this machine: hub API server, controllers and simulated members.
    Up(up::UpArgs),
    /// Run the hub (API server and controllers) against a chosen store.
    Hub(up::HubArgs),
    /// Run the member agent for a real cluster: join it to the hub and report its properties.
    Member(member::MemberArgs),
    /// Print the manifests that run the member agent inside a member cluster:
    /// `flotilla join NAME | kubectl --context NAME apply -f -`.
    Join(join::JoinArgs),
    /// Print a kubeconfig: a new client-certificate user of the hub (`--user NAME --group G`),
    /// and/or one simulated member cluster reached through the hub.
    Kubeconfig(member::KubeconfigArgs),
    /// Issue or revoke the bearer token a member agent joins the hub with.
    Token {
        #[command(subcommand)]
        what: token::TokenCommand,
    },
    /// Show what a ClusterResourcePlacement would do on the fleet as it is now, changing nothing.
    Preview(preview::PreviewArgs),
    /// Approve a stage of a staged update run: set its ClusterApprovalRequest's Approved condition.
    Approve(approve::ApproveArgs),
    /// Show the progress of a staged update run.
    Status {
        #[command(subcommand)]
        what: status::StatusCommand,
    },
    /// Auto-upgrade profile conveniences (`az fleet autoupgradeprofile`'s).
    #[command(name = "autoupgradeprofile")]
    AutoUpgradeProfile {
        #[command(subcommand)]
        what: profile::ProfileCommand,
    },
    /// Create, start, stop and skip parts of cluster update runs (`az fleet updaterun`).
    #[command(name = "updaterun")]
    UpdateRun {
        #[command(subcommand)]
        what: updaterun::UpdateRunCommand,
    },
    /// Approve and list the gates of cluster update runs (`az fleet gate`).
    Gate {
        #[command(subcommand)]
        what: gate::GateCommand,
    },
    /// Print Flotilla's CustomResourceDefinitions as YAML (for an existing Kubernetes hub).
    Crds,
    /// Run the hub's controllers against an existing Kubernetes API server with Flotilla's
    /// CRDs installed; several instances elect one leader through a Lease.
    Controllers(controllers::ControllersArgs),
    /// Measure performance against a side-by-side etcd where one is installed.
    Bench {
        #[command(subcommand)]
        what: bench::BenchCommand,
    },
}

/// Logs go to stderr: JSON lines with `--log-json`, else plain text, coloured only when
/// stderr is a terminal and `NO_COLOR` is unset (a log file or a collector gets no escape
/// codes).
fn init_tracing(json: bool) {
    use std::io::IsTerminal;
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let colour = std::io::stderr().is_terminal()
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(colour && !json)
        .with_writer(std::io::stderr);
    if json {
        builder.json().init();
    } else {
        builder.init();
    }
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    let json = cli.log_json;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    match cli.command {
        Command::Up(args) => {
            init_tracing(json);
            runtime.block_on(up::up(args))
        }
        Command::Hub(args) => {
            init_tracing(json);
            runtime.block_on(up::hub(args))
        }
        Command::Member(args) => {
            init_tracing(json);
            runtime.block_on(member::run(args))
        }
        Command::Kubeconfig(args) => runtime.block_on(member::print_kubeconfig(args)),
        Command::Join(args) => runtime.block_on(join::run(args)),
        Command::Token { what } => runtime.block_on(token::run(what)),
        Command::Preview(args) => runtime.block_on(preview::run(args)),
        Command::Approve(args) => runtime.block_on(approve::run(args)),
        Command::Status { what } => runtime.block_on(status::run(what)),
        Command::AutoUpgradeProfile { what } => runtime.block_on(profile::run(what)),
        Command::UpdateRun { what } => runtime.block_on(updaterun::run(what)),
        Command::Gate { what } => runtime.block_on(gate::run(what)),
        Command::Crds => print_crds(),
        Command::Controllers(args) => {
            init_tracing(json);
            runtime.block_on(controllers::run(args))
        }
        Command::Bench { what } => {
            init_tracing(json);
            runtime.block_on(bench::run(what))
        }
    }
}

/// Prints every Flotilla CRD as a YAML document, with Flotilla's rules as CEL rules
/// ([`flotilla_api::exported_crds`]); a closed pipe (`| head`) ends quietly.
fn print_crds() -> Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let written = flotilla_api::exported_crds().iter().try_for_each(|crd| {
        let yaml = serde_saphyr::to_string(crd).map_err(std::io::Error::other)?;
        write!(out, "---\n{yaml}")
    });
    match written.and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        r => Ok(r?),
    }
}

/// The default data directory of `up`.
fn default_data_dir() -> PathBuf {
    PathBuf::from(".flotilla")
}
