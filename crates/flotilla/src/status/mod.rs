//! `flotilla status updaterun <name> [--watch]`: a staged update run's progress, stage by
//! stage, with the approvals it waits for. `--watch` follows the run and its approval requests
//! with kube watchers and redraws on every change (and as a TimedWait counts down) until the
//! run has succeeded (exit 0) or failed (exit 1).

mod update_run;

use std::io::IsTerminal as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use flotilla_api::placement::approval_request::TARGET_UPDATE_RUN_LABEL;
use flotilla_api::placement::{ClusterApprovalRequest, ClusterStagedUpdateRun};
use futures::{Stream, StreamExt as _};
use kube::api::ListParams;
use kube::runtime::{WatchStreamExt as _, reflector, watcher};
use kube::{Api, Client};
use tokio::sync::Notify;

use update_run::{Overall, draw, overall};

/// What `flotilla status` shows.
#[derive(Debug, Subcommand)]
pub enum StatusCommand {
    /// A ClusterStagedUpdateRun: its stages, progress bars, waits and pending approvals.
    #[command(name = "updaterun")]
    UpdateRun(UpdateRunArgs),
}

/// Arguments of `flotilla status updaterun`.
#[derive(Debug, Args)]
pub struct UpdateRunArgs {
    /// The ClusterStagedUpdateRun.
    pub name: String,
    /// Redraw on every change until the run has succeeded or failed.
    #[arg(long)]
    pub watch: bool,
    /// The hub's kubeconfig; default `$KUBECONFIG`, else `.flotilla/kubeconfig`.
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
}

/// How often a watched run is redrawn without a change, so a TimedWait counts down.
const TICK: Duration = Duration::from_secs(1);
/// Clears a terminal and moves the cursor home.
const CLEAR_SCREEN: &str = "\x1b[2J\x1b[H";

/// Runs `flotilla status`.
pub async fn run(command: StatusCommand) -> Result<()> {
    match command {
        StatusCommand::UpdateRun(args) => update_run(args).await,
    }
}

async fn update_run(args: UpdateRunArgs) -> Result<()> {
    let client = crate::member::hub_client(args.kubeconfig).await?;
    let runs: Api<ClusterStagedUpdateRun> = Api::all(client.clone());
    let Some(run) = runs.get_opt(&args.name).await.context("reaching the hub")? else {
        bail!(
            "ClusterStagedUpdateRun {:?} not found on the hub (`kubectl get clusterstagedupdateruns` lists them)",
            args.name
        );
    };
    if args.watch {
        return watch(client, &args.name).await;
    }
    let requests: Api<ClusterApprovalRequest> = Api::all(client);
    let requests = requests
        .list(&ListParams::default().labels(&for_run(&args.name)))
        .await
        .context("listing the run's approval requests")?
        .items;
    print!("{}", draw(&run, &requests, jiff::Timestamp::now()));
    Ok(())
}

/// Follows run `name` and its approval requests, drawing whenever the drawing changes, until
/// the run is over.
async fn watch(client: Client, name: &str) -> Result<()> {
    let changed = Arc::new(Notify::new());
    let (runs, runs_writer) = reflector::store::<ClusterStagedUpdateRun>();
    let run_config = watcher::Config::default().fields(&format!("metadata.name={name}"));
    tokio::spawn(follow(
        reflector(runs_writer, watcher(Api::all(client.clone()), run_config)).default_backoff(),
        changed.clone(),
    ));
    let (requests, requests_writer) = reflector::store::<ClusterApprovalRequest>();
    let request_config = watcher::Config::default().labels(&for_run(name));
    tokio::spawn(follow(
        reflector(requests_writer, watcher(Api::all(client), request_config)).default_backoff(),
        changed.clone(),
    ));
    runs.wait_until_ready().await?;
    requests.wait_until_ready().await?;
    let terminal = std::io::stdout().is_terminal();
    let mut last = String::new();
    loop {
        let Some(run) = runs.state().into_iter().next() else {
            bail!("ClusterStagedUpdateRun {name:?} was deleted");
        };
        let requests: Vec<ClusterApprovalRequest> =
            requests.state().iter().map(|r| (**r).clone()).collect();
        let drawing = draw(&run, &requests, jiff::Timestamp::now());
        if drawing != last {
            if terminal {
                print!("{CLEAR_SCREEN}{drawing}");
            } else if last.is_empty() {
                print!("{drawing}");
            } else {
                print!("\n{drawing}");
            }
            last = drawing;
        }
        match overall(&run) {
            (Overall::Succeeded, _) => return Ok(()),
            (Overall::Failed, message) => bail!("update run {name} failed: {message}"),
            _ => {}
        }
        tokio::select! {
            () = changed.notified() => {}
            () = tokio::time::sleep(TICK) => {}
        }
    }
}

/// Drives a reflector's stream, notifying `changed` after every event it applied.
async fn follow<K>(stream: impl Stream<Item = watcher::Result<K>>, changed: Arc<Notify>) {
    let mut stream = std::pin::pin!(stream);
    while stream.next().await.is_some() {
        changed.notify_one();
    }
}

/// The label selector of the approval requests of run `name`.
fn for_run(name: &str) -> String {
    format!("{TARGET_UPDATE_RUN_LABEL}={name}")
}
