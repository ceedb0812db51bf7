//! `flotilla updaterun create|start|stop|skip`: `az fleet updaterun`'s conveniences over
//! cluster update runs (`UpdateRun`, `updates.flotilla.dev`). Each only creates or patches the
//! run, as kubectl can:
//!
//! - `create` posts a run built from the flags; it never starts it (the run waits NotStarted).
//! - `start` sets `spec.state: Run`; on a Failed or Stopped run it also raises `spec.attempt`,
//!   the controller's rerun signal, so what failed or was skipped is retried.
//! - `stop` sets `spec.state: Stop`: nothing new starts, upgrades in flight finish.
//! - `skip` appends targets to `spec.skip`, each once.
//!
//! Changes are merge patches of the spec. `start` and `stop` set fields to the value asked for,
//! whatever was written meanwhile, so they carry no precondition (the controller rewrites the
//! status often, and a precondition on the whole object would make them fail for nothing).
//! `skip` rewrites a list a merge patch replaces whole, so its patch carries the
//! resourceVersion it was decided on: the hub refuses it (409) when the run changed in between,
//! and the command reads the run again, losing no target written meanwhile. What to write is
//! decided by pure functions of the run as read ([`start`], [`stop`], [`skip`], [`run_object`]).

use std::path::PathBuf;

use anyhow::{Context, Result, anyhow, bail};
use clap::{Args, Subcommand, ValueEnum};
use flotilla_api::updates::FleetUpdateStrategy;
use flotilla_api::updates::update_run::{
    ManagedClusterUpdate, NodeImageSelection, NodeImageSelectionType, RunAction, SkipTarget,
    SkipTargetType, UpdateRun, UpdateRunSpec, UpdateRunStatus, UpdateState, UpgradeSpec,
    UpgradeType,
};
use kube::api::{Patch, PatchParams};
use kube::core::Status;
use kube::{Api, Resource, ResourceExt};
use serde_json::{Value, json};

/// How kubectl names the kind in its messages (`updaterun.updates.flotilla.dev/<name>`).
pub const KUBECTL_KIND: &str = "updaterun.updates.flotilla.dev";

/// Field manager of the command's writes, as kubectl records `kubectl-patch`.
pub const FIELD_MANAGER: &str = "flotilla";

/// How many times a read-and-patch is retried when the run changes in between.
const ATTEMPTS: u32 = 10;
/// The pause before a retry, times the attempt's number.
const BACKOFF: std::time::Duration = std::time::Duration::from_millis(20);

/// The skip target types with their names on the command line (case-sensitive, as az's).
const TARGET_TYPES: [(&str, SkipTargetType); 4] = [
    ("Member", SkipTargetType::Member),
    ("Group", SkipTargetType::Group),
    ("Stage", SkipTargetType::Stage),
    ("AfterStageWait", SkipTargetType::AfterStageWait),
];

/// What `flotilla updaterun` does.
#[derive(Debug, Subcommand)]
pub enum UpdateRunCommand {
    /// Create an update run. It is not started: start it with `flotilla updaterun start NAME`.
    Create(CreateArgs),
    /// Start a run, resume a stopped one, or start a failed one again (retrying only what
    /// failed or was skipped).
    Start(RunArgs),
    /// Stop a run: nothing new starts; member upgrades in flight finish.
    Stop(RunArgs),
    /// Skip members, groups, stages or after-stage waits of a run.
    Skip(SkipArgs),
    /// Predict the run's timeline (who upgrades when, what waits for which window or gate)
    /// without changing anything.
    Plan(crate::plan::PlanArgs),
}

/// The `--upgrade-type` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
#[value(rename_all = "PascalCase")]
pub enum UpgradeTypeArg {
    /// The control plane, then node pools and node images; needs `--kubernetes-version`.
    Full,
    /// Node images only; takes no `--kubernetes-version`.
    NodeImageOnly,
    /// The control plane only; needs `--kubernetes-version`.
    ControlPlaneOnly,
}

impl From<UpgradeTypeArg> for UpgradeType {
    fn from(arg: UpgradeTypeArg) -> Self {
        match arg {
            UpgradeTypeArg::Full => UpgradeType::Full,
            UpgradeTypeArg::NodeImageOnly => UpgradeType::NodeImageOnly,
            UpgradeTypeArg::ControlPlaneOnly => UpgradeType::ControlPlaneOnly,
        }
    }
}

/// The `--node-image-selection` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
#[value(rename_all = "PascalCase")]
pub enum NodeImageSelectionArg {
    /// The newest image in each member's region when its upgrade starts.
    Latest,
    /// Per image family, the newest version every region of the run has.
    Consistent,
}

impl From<NodeImageSelectionArg> for NodeImageSelectionType {
    fn from(arg: NodeImageSelectionArg) -> Self {
        match arg {
            NodeImageSelectionArg::Latest => NodeImageSelectionType::Latest,
            NodeImageSelectionArg::Consistent => NodeImageSelectionType::Consistent,
        }
    }
}

/// Arguments of `flotilla updaterun create`.
#[derive(Debug, Args)]
pub struct CreateArgs {
    /// The run's name.
    pub name: String,
    /// What to upgrade.
    #[arg(long, value_enum)]
    pub upgrade_type: UpgradeTypeArg,
    /// The Kubernetes version to upgrade to (`MAJOR.MINOR.PATCH`): required with Full and
    /// ControlPlaneOnly, not allowed with NodeImageOnly.
    #[arg(long)]
    pub kubernetes_version: Option<String>,
    /// How node image versions are chosen.
    #[arg(long, value_enum, default_value_t = NodeImageSelectionArg::Latest)]
    pub node_image_selection: NodeImageSelectionArg,
    /// The run's own strategy, as az's stages JSON (`{"stages":[{"name":…,"groups":[{"name":…}]}]}`)
    /// inline or in a file (JSON or YAML).
    #[arg(
        long,
        value_name = "FILE|JSON",
        conflicts_with = "update_strategy_name"
    )]
    pub stages: Option<String>,
    /// A FleetUpdateStrategy to follow (copied into the run when it is first seen).
    #[arg(long, value_name = "NAME")]
    pub update_strategy_name: Option<String>,
    /// The hub's kubeconfig; default `$KUBECONFIG`, else `.flotilla/kubeconfig`.
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
}

/// Arguments of `flotilla updaterun start` and `stop`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The UpdateRun (`kubectl get updateruns` lists them).
    pub name: String,
    /// The hub's kubeconfig; default `$KUBECONFIG`, else `.flotilla/kubeconfig`.
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
}

/// Arguments of `flotilla updaterun skip`.
#[derive(Debug, Args)]
pub struct SkipArgs {
    /// The UpdateRun (`kubectl get updateruns` lists them).
    pub name: String,
    /// What to skip, space separated: `Type:Name` with Type (case-sensitive) one of Member,
    /// Group, Stage (with its gates and wait) or AfterStageWait (named after its stage).
    #[arg(long, required = true, num_args = 1.., value_parser = parse_target)]
    pub targets: Vec<SkipTarget>,
    /// The hub's kubeconfig; default `$KUBECONFIG`, else `.flotilla/kubeconfig`.
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
}

/// Runs `flotilla updaterun`.
pub async fn run(command: UpdateRunCommand) -> Result<()> {
    match command {
        UpdateRunCommand::Create(args) => create(args).await,
        UpdateRunCommand::Start(args) => change(&args.name, args.kubeconfig, start).await,
        UpdateRunCommand::Stop(args) => change(&args.name, args.kubeconfig, stop).await,
        UpdateRunCommand::Skip(args) => {
            change(&args.name, args.kubeconfig, |run| skip(run, &args.targets)).await
        }
        UpdateRunCommand::Plan(args) => crate::plan::run(args).await,
    }
}

/// Creates the run the flags describe. The request asks the hub for strict field validation,
/// so a misspelt field in `--stages` is refused by name rather than dropped.
async fn create(args: CreateArgs) -> Result<()> {
    let stages = args.stages.as_deref().map(read_stages).transpose()?;
    let object = run_object(&args, stages).map_err(|e| anyhow!(e))?;
    let client = crate::member::hub_client(args.kubeconfig.clone()).await?;
    if let Some(strategy) = &args.update_strategy_name {
        let strategies = Api::<FleetUpdateStrategy>::all(client.clone());
        if strategies
            .get_opt(strategy)
            .await
            .context("reaching the hub")?
            .is_none()
        {
            bail!(
                "FleetUpdateStrategy {strategy:?} not found on the hub (`kubectl get fleetupdatestrategies` lists them)"
            );
        }
    }
    let url = format!(
        "{}?fieldManager={FIELD_MANAGER}&fieldValidation=Strict",
        UpdateRun::url_path(&(), None)
    );
    let request = http::Request::post(url)
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(serde_json::to_vec(&object)?)?;
    let name = &args.name;
    match client.request::<UpdateRun>(request).await {
        Ok(_) => {
            println!("{KUBECTL_KIND}/{name} created (NotStarted)");
            println!("start it with: flotilla updaterun start {name}");
            Ok(())
        }
        Err(kube::Error::Api(status)) => {
            bail!(refused(&format!("create UpdateRun {name:?}"), &status))
        }
        Err(e) => Err(e).context("reaching the hub"),
    }
}

/// The `--stages` value: inline JSON when it starts with `{`, else a file to read.
fn read_stages(arg: &str) -> Result<Value> {
    let text = if arg.trim_start().starts_with('{') {
        arg.to_string()
    } else {
        std::fs::read_to_string(arg).with_context(|| format!("--stages: reading {arg}"))?
    };
    parse_stages(&text).map_err(|e| anyhow!("--stages: {e}"))
}

/// az's stages document (`{"stages":[…]}`) from JSON or YAML text, as the run's inline
/// `spec.strategy`. Only its shape is checked here; the hub validates the rest, naming fields.
pub fn parse_stages(text: &str) -> Result<Value, String> {
    let value: Value = if text.trim_start().starts_with('{') {
        serde_json::from_str(text).map_err(|e| format!("not valid JSON: {e}"))?
    } else {
        serde_saphyr::from_str(text).map_err(|e| format!("not valid JSON or YAML: {e}"))?
    };
    match value.get("stages") {
        Some(Value::Array(_)) => Ok(value),
        _ => Err(
            r#"expected an object with a "stages" list, e.g. {"stages":[{"name":"canary","groups":[{"name":"a"}]}]}"#
                .to_string(),
        ),
    }
}

/// The UpdateRun `create` posts: the flags as a spec (selection `Latest` unless told, no
/// `state`, so the run waits NotStarted), with `stages` as its inline strategy. Refuses a
/// Kubernetes version that does not match the upgrade type.
pub fn run_object(args: &CreateArgs, stages: Option<Value>) -> Result<Value, String> {
    let upgrade_type = UpgradeType::from(args.upgrade_type);
    let type_name = args
        .upgrade_type
        .to_possible_value()
        .map(|v| v.get_name().to_string())
        .unwrap_or_default();
    match (upgrade_type, &args.kubernetes_version) {
        (UpgradeType::NodeImageOnly, Some(_)) => {
            return Err(format!(
                "--kubernetes-version may not be used with --upgrade-type {type_name}: it upgrades node images only"
            ));
        }
        (UpgradeType::Full | UpgradeType::ControlPlaneOnly, None) => {
            return Err(format!(
                "--upgrade-type {type_name} requires --kubernetes-version (the version to upgrade to)"
            ));
        }
        _ => {}
    }
    let spec = UpdateRunSpec {
        update_strategy_name: args.update_strategy_name.clone(),
        managed_cluster_update: ManagedClusterUpdate {
            upgrade: UpgradeSpec {
                upgrade_type,
                kubernetes_version: args.kubernetes_version.clone(),
            },
            node_image_selection: Some(NodeImageSelection {
                selection_type: args.node_image_selection.into(),
                custom_node_image_versions: Vec::new(),
            }),
        },
        ..Default::default()
    };
    let mut spec = serde_json::to_value(spec).map_err(|e| e.to_string())?;
    if let Some(stages) = stages {
        spec["strategy"] = stages;
    }
    Ok(json!({
        "apiVersion": UpdateRun::api_version(&()),
        "kind": UpdateRun::kind(&()),
        "metadata": {"name": args.name},
        "spec": spec,
    }))
}

/// A skip target from `Type:Name`; Type is case-sensitive.
pub fn parse_target(text: &str) -> Result<SkipTarget, String> {
    let types = TARGET_TYPES.map(|(name, _)| name).join(", ");
    let Some((kind, name)) = text.split_once(':') else {
        return Err(format!(
            "{text:?} is not Type:Name (Type is one of {types})"
        ));
    };
    let Some((_, target_type)) = TARGET_TYPES.iter().find(|(n, _)| *n == kind) else {
        return Err(format!(
            "{kind:?} is not a target type: one of {types} (case-sensitive)"
        ));
    };
    if name.is_empty() {
        return Err(format!("{text:?} names nothing after the colon"));
    }
    Ok(SkipTarget {
        target_type: *target_type,
        name: name.to_string(),
    })
}

/// `Type:Name`, as the command line writes a target.
fn target_text(target: &SkipTarget) -> String {
    let kind = TARGET_TYPES
        .iter()
        .find(|(_, t)| *t == target.target_type)
        .map_or("?", |(n, _)| n);
    format!("{kind}:{}", target.name)
}

/// What a command does to a run, decided from the run as read.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// Send this merge patch, then print `done`.
    Patch {
        /// The merge patch.
        patch: Value,
        /// What to tell the user once it is written.
        done: String,
    },
    /// Nothing to write; tell the user why.
    Nothing(String),
}

/// The merge patch setting `spec` fields, whatever the run's version.
fn set(spec: Value, done: String) -> Change {
    Change::Patch {
        patch: json!({ "spec": spec }),
        done,
    }
}

/// The merge patch setting `spec` fields of `run`, refused by the hub (409) if the run changed
/// since it was read.
fn guarded(run: &UpdateRun, spec: Value, done: String) -> Change {
    Change::Patch {
        patch: json!({
            "metadata": {"resourceVersion": run.resource_version()},
            "spec": spec,
        }),
        done,
    }
}

/// The run's status (empty before the controller's first pass).
fn status(run: &UpdateRun) -> UpdateRunStatus {
    run.status.clone().unwrap_or_default()
}

/// `start`: `state: Run`; a Failed or Stopped run also gets `attempt` raised by one, which
/// makes the controller reset what failed or was skipped and go on. A run already asked to run
/// (or to run again) is left alone; a finished one cannot start.
pub fn start(run: &UpdateRun) -> Result<Change, String> {
    let name = run.name_any();
    let status = status(run);
    let requested = run.spec.state.unwrap_or_default();
    let attempt = run.spec.attempt.unwrap_or(0);
    match status.progress.state {
        state @ (UpdateState::Completed | UpdateState::Skipped) => Err(format!(
            "UpdateRun {name:?} is {state:?}: there is nothing left to start (create a new run)"
        )),
        UpdateState::Failed | UpdateState::Stopped
            if requested == RunAction::Run && attempt > status.observed_attempt =>
        {
            Ok(Change::Nothing(format!(
                "{KUBECTL_KIND}/{name} is already starting again (attempt {attempt})"
            )))
        }
        UpdateState::Failed | UpdateState::Stopped => {
            let next = attempt.max(status.observed_attempt) + 1;
            Ok(set(
                json!({"state": "Run", "attempt": next}),
                format!("{KUBECTL_KIND}/{name} started again (attempt {next})"),
            ))
        }
        state if requested == RunAction::Run => Ok(Change::Nothing(format!(
            "{KUBECTL_KIND}/{name} is already running ({state:?})"
        ))),
        _ => Ok(set(
            json!({"state": "Run"}),
            format!("{KUBECTL_KIND}/{name} started"),
        )),
    }
}

/// `stop`: `state: Stop`, for a run that has been started and has not finished.
pub fn stop(run: &UpdateRun) -> Result<Change, String> {
    let name = run.name_any();
    let state = status(run).progress.state;
    let requested = run.spec.state.unwrap_or_default();
    match state {
        UpdateState::Completed | UpdateState::Skipped | UpdateState::Failed => Err(format!(
            "UpdateRun {name:?} is {state:?}: there is nothing to stop"
        )),
        UpdateState::Stopped if requested == RunAction::Stop => Ok(Change::Nothing(format!(
            "{KUBECTL_KIND}/{name} is already stopped"
        ))),
        _ if requested == RunAction::Stop => Ok(Change::Nothing(format!(
            "{KUBECTL_KIND}/{name} is already stopping"
        ))),
        UpdateState::NotStarted if requested != RunAction::Run => Err(format!(
            "UpdateRun {name:?} has not started: there is nothing to stop"
        )),
        _ => Ok(set(
            json!({"state": "Stop"}),
            format!(
                "{KUBECTL_KIND}/{name} stopping: nothing new starts; upgrades in flight finish"
            ),
        )),
    }
}

/// `skip`: `spec.skip` with `targets` appended, each once. Once the run is planned, every
/// target must name something in it, so a misspelt name is refused rather than ignored.
pub fn skip(run: &UpdateRun, targets: &[SkipTarget]) -> Result<Change, String> {
    let name = run.name_any();
    let status = status(run);
    if let state @ (UpdateState::Completed | UpdateState::Skipped) = status.progress.state {
        return Err(format!(
            "UpdateRun {name:?} is {state:?}: there is nothing left to skip"
        ));
    }
    if !status.stages.is_empty() {
        for target in targets {
            if let Some(why) = not_in_run(&status, target) {
                return Err(format!(
                    "cannot skip {} in UpdateRun {name:?}: {why}",
                    target_text(target)
                ));
            }
        }
    }
    let mut skip = run.spec.skip.clone();
    let mut added = Vec::new();
    for target in targets {
        if !skip.contains(target) {
            skip.push(target.clone());
            added.push(target_text(target));
        }
    }
    if added.is_empty() {
        let listed: Vec<String> = targets.iter().map(target_text).collect();
        return Ok(Change::Nothing(format!(
            "{KUBECTL_KIND}/{name} already skips {}",
            listed.join(" ")
        )));
    }
    Ok(guarded(
        run,
        json!({ "skip": skip }),
        format!("{KUBECTL_KIND}/{name} skipping {}", added.join(" ")),
    ))
}

/// Why `target` names nothing in the planned run, or `None` when it does.
fn not_in_run(status: &UpdateRunStatus, target: &SkipTarget) -> Option<String> {
    let stages = || status.stages.iter();
    let groups = || stages().flat_map(|s| &s.groups);
    let (noun, names): (&str, Vec<&str>) = match target.target_type {
        SkipTargetType::Member => (
            "member",
            groups()
                .flat_map(|g| &g.members)
                .map(|m| m.name.as_str())
                .collect(),
        ),
        SkipTargetType::Group => ("group", groups().map(|g| g.name.as_str()).collect()),
        SkipTargetType::Stage | SkipTargetType::AfterStageWait => {
            ("stage", stages().map(|s| s.name.as_str()).collect())
        }
    };
    if !names.contains(&target.name.as_str()) {
        let listed = if names.is_empty() {
            "none".to_string()
        } else {
            names.join(", ")
        };
        return Some(format!(
            "the run has no {noun} {:?} (its {noun}s: {listed})",
            target.name
        ));
    }
    let waitless = target.target_type == SkipTargetType::AfterStageWait
        && stages()
            .find(|s| s.name == target.name)
            .is_some_and(|s| s.after_stage_wait_status.is_none());
    waitless.then(|| format!("stage {:?} has no after-stage wait", target.name))
}

/// Reads run `name`, decides the change and writes it; re-reads and decides again when the
/// hub says the run changed since it was read (a guarded patch).
async fn change(
    name: &str,
    kubeconfig: Option<PathBuf>,
    decide: impl Fn(&UpdateRun) -> Result<Change, String>,
) -> Result<()> {
    let client = crate::member::hub_client(kubeconfig).await?;
    let api = Api::<UpdateRun>::all(client);
    let params = PatchParams {
        field_manager: Some(FIELD_MANAGER.to_string()),
        ..Default::default()
    };
    for attempt in 0..ATTEMPTS {
        tokio::time::sleep(BACKOFF * attempt).await;
        let Some(run) = api.get_opt(name).await.context("reaching the hub")? else {
            bail!("UpdateRun {name:?} not found on the hub (`kubectl get updateruns` lists them)");
        };
        let (patch, done) = match decide(&run).map_err(|e| anyhow!(e))? {
            Change::Nothing(why) => {
                println!("{why}");
                return Ok(());
            }
            Change::Patch { patch, done } => (patch, done),
        };
        match api.patch(name, &params, &Patch::Merge(&patch)).await {
            Ok(_) => {
                println!("{done}");
                return Ok(());
            }
            // The run changed since it was read: read it again.
            Err(kube::Error::Api(status)) if status.code == 409 => continue,
            Err(kube::Error::Api(status)) => {
                bail!(refused(&format!("change UpdateRun {name:?}"), &status))
            }
            Err(e) => return Err(e).context("reaching the hub"),
        }
    }
    bail!("UpdateRun {name:?} kept changing while being written; try again")
}

/// A hub refusal for people: what was refused, the status reason, and the hub's message (which
/// names the fields at fault, e.g. `spec.managedClusterUpdate.upgrade.kubernetesVersion: …`).
pub fn refused(what: &str, status: &Status) -> String {
    match status.reason.as_str() {
        "" => format!("the hub refused to {what}: {}", status.message),
        reason => format!("the hub refused to {what} ({reason}): {}", status.message),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    /// `flotilla updaterun …` alone, to parse command lines.
    #[derive(Debug, Parser)]
    struct Cli {
        #[command(subcommand)]
        command: UpdateRunCommand,
    }

    fn parse(args: &[&str]) -> Result<UpdateRunCommand, clap::Error> {
        Cli::try_parse_from(std::iter::once("updaterun").chain(args.iter().copied()))
            .map(|cli| cli.command)
    }

    fn create_args(args: &[&str]) -> CreateArgs {
        let mut all = vec!["create"];
        all.extend_from_slice(args);
        match parse(&all) {
            Ok(UpdateRunCommand::Create(args)) => args,
            other => panic!("{other:?}"),
        }
    }

    fn run(yaml: &str) -> UpdateRun {
        serde_saphyr::from_str(yaml).unwrap()
    }

    const STAGES: &str =
        r#"{"stages":[{"name":"canary","groups":[{"name":"a"}],"afterStageWaitInSeconds":3600}]}"#;

    #[test]
    fn create_flags_become_a_not_started_run() {
        let args = create_args(&[
            "r1",
            "--upgrade-type",
            "Full",
            "--kubernetes-version",
            "1.32.0",
            "--stages",
            STAGES,
        ]);
        let stages = parse_stages(args.stages.as_deref().unwrap()).unwrap();
        assert_eq!(
            run_object(&args, Some(stages)).unwrap(),
            json!({
                "apiVersion": "updates.flotilla.dev/v1beta1",
                "kind": "UpdateRun",
                "metadata": {"name": "r1"},
                "spec": {
                    "strategy": {"stages": [{"name": "canary", "groups": [{"name": "a"}],
                                             "afterStageWaitInSeconds": 3600}]},
                    "managedClusterUpdate": {
                        "upgrade": {"type": "Full", "kubernetesVersion": "1.32.0"},
                        "nodeImageSelection": {"type": "Latest"},
                    },
                },
            })
        );
        let args = create_args(&[
            "r2",
            "--upgrade-type",
            "NodeImageOnly",
            "--node-image-selection",
            "Consistent",
            "--update-strategy-name",
            "two-stages",
        ]);
        assert_eq!(
            run_object(&args, None).unwrap()["spec"],
            json!({
                "updateStrategyName": "two-stages",
                "managedClusterUpdate": {
                    "upgrade": {"type": "NodeImageOnly"},
                    "nodeImageSelection": {"type": "Consistent"},
                },
            })
        );
    }

    #[test]
    fn the_version_flag_must_match_the_upgrade_type() {
        let image_only = create_args(&[
            "r",
            "--upgrade-type",
            "NodeImageOnly",
            "--kubernetes-version",
            "1.32.0",
        ]);
        assert_eq!(
            run_object(&image_only, None).unwrap_err(),
            "--kubernetes-version may not be used with --upgrade-type NodeImageOnly: it upgrades node images only"
        );
        for kind in ["Full", "ControlPlaneOnly"] {
            let versionless = create_args(&["r", "--upgrade-type", kind]);
            assert_eq!(
                run_object(&versionless, None).unwrap_err(),
                format!(
                    "--upgrade-type {kind} requires --kubernetes-version (the version to upgrade to)"
                )
            );
        }
    }

    #[test]
    fn bad_create_command_lines_are_refused_by_the_parser() {
        let both = parse(&[
            "create",
            "r",
            "--upgrade-type",
            "Full",
            "--kubernetes-version",
            "1.32.0",
            "--stages",
            STAGES,
            "--update-strategy-name",
            "s",
        ])
        .unwrap_err()
        .to_string();
        assert!(
            both.contains("--stages") && both.contains("--update-strategy-name"),
            "{both}"
        );
        let lower = parse(&["create", "r", "--upgrade-type", "full"])
            .unwrap_err()
            .to_string();
        assert!(
            lower.contains("[possible values: Full, NodeImageOnly, ControlPlaneOnly]"),
            "{lower}"
        );
        let custom = parse(&[
            "create",
            "r",
            "--upgrade-type",
            "NodeImageOnly",
            "--node-image-selection",
            "Custom",
        ])
        .unwrap_err()
        .to_string();
        assert!(
            custom.contains("[possible values: Latest, Consistent]"),
            "{custom}"
        );
        assert!(
            parse(&["create", "r"]).is_err(),
            "--upgrade-type is required"
        );
    }

    #[test]
    fn stages_are_az_documents_in_json_or_yaml() {
        let yaml =
            "stages:\n- name: canary\n  groups:\n  - name: a\n  afterStageWaitInSeconds: 3600\n";
        assert_eq!(parse_stages(yaml).unwrap(), parse_stages(STAGES).unwrap());
        assert!(
            parse_stages(r#"{"stages": [}"#)
                .unwrap_err()
                .starts_with("not valid JSON: ")
        );
        for wrong in [r#"{"groups": []}"#, "[]", "- name: canary"] {
            assert!(
                parse_stages(wrong)
                    .unwrap_err()
                    .starts_with(r#"expected an object with a "stages" list"#),
                "{wrong}"
            );
        }
    }

    #[test]
    fn skip_targets_are_case_sensitive_type_name_pairs() {
        assert_eq!(
            parse_target("AfterStageWait:canary").unwrap(),
            SkipTarget {
                target_type: SkipTargetType::AfterStageWait,
                name: "canary".into()
            }
        );
        assert_eq!(
            parse_target("member:a").unwrap_err(),
            r#""member" is not a target type: one of Member, Group, Stage, AfterStageWait (case-sensitive)"#
        );
        assert_eq!(
            parse_target("a").unwrap_err(),
            r#""a" is not Type:Name (Type is one of Member, Group, Stage, AfterStageWait)"#
        );
        assert!(parse_target("Group:").is_err());
        let Ok(UpdateRunCommand::Skip(args)) =
            parse(&["skip", "r", "--targets", "Member:east-a", "Stage:prod"])
        else {
            panic!("skip parses");
        };
        assert_eq!(
            args.targets.iter().map(target_text).collect::<Vec<_>>(),
            ["Member:east-a", "Stage:prod"]
        );
        assert!(parse(&["skip", "r"]).is_err(), "--targets is required");
        assert!(parse(&["skip", "r", "--targets", "Member"]).is_err());
    }

    /// A run named r at resourceVersion 7, planned as stage `test` (groups a: m1, m2 and b: m3,
    /// with a wait) and stage `prod` (group c: m4, no wait), in `state` with `spec`.
    fn planned(state: &str, spec: &str) -> UpdateRun {
        run(&format!(
            r#"
apiVersion: updates.flotilla.dev/v1beta1
kind: UpdateRun
metadata: {{name: r, resourceVersion: "7"}}
spec:
  managedClusterUpdate: {{upgrade: {{type: NodeImageOnly}}}}
  {spec}
status:
  state: {state}
  observedAttempt: 0
  stages:
  - name: test
    afterStageWaitStatus: {{state: NotStarted, waitDurationInSeconds: 3600}}
    groups:
    - name: a
      members: [{{name: m1}}, {{name: m2}}]
    - name: b
      members: [{{name: m3}}]
  - name: prod
    groups:
    - name: c
      members: [{{name: m4}}]
"#
        ))
    }

    fn patch(change: Change) -> Value {
        match change {
            Change::Patch { patch, .. } => patch,
            Change::Nothing(why) => panic!("no patch: {why}"),
        }
    }

    #[test]
    fn start_runs_a_new_run_and_reruns_a_failed_or_stopped_one() {
        assert_eq!(
            start(&planned("NotStarted", "")).unwrap(),
            Change::Patch {
                patch: json!({"spec": {"state": "Run"}}),
                done: "updaterun.updates.flotilla.dev/r started".into(),
            }
        );
        for state in ["Failed", "Stopped"] {
            let mut again = planned(state, "state: Run\n  attempt: 2");
            again.status.as_mut().unwrap().observed_attempt = 2;
            assert_eq!(
                start(&again).unwrap(),
                Change::Patch {
                    patch: json!({"spec": {"state": "Run", "attempt": 3}}),
                    done: "updaterun.updates.flotilla.dev/r started again (attempt 3)".into(),
                },
                "{state}"
            );
        }
        // A stop requested but not yet in effect is simply undone.
        assert_eq!(
            patch(start(&planned("Stopping", "state: Stop")).unwrap())["spec"],
            json!({"state": "Run"})
        );
    }

    #[test]
    fn start_leaves_running_runs_alone_and_refuses_finished_ones() {
        assert_eq!(
            start(&planned("Running", "state: Run")).unwrap(),
            Change::Nothing("updaterun.updates.flotilla.dev/r is already running (Running)".into())
        );
        // A rerun asked for and not yet observed is not asked for twice.
        let mut failed = planned("Failed", "state: Run\n  attempt: 1");
        assert_eq!(
            start(&failed).unwrap(),
            Change::Nothing(
                "updaterun.updates.flotilla.dev/r is already starting again (attempt 1)".into()
            )
        );
        failed.status.as_mut().unwrap().observed_attempt = 1;
        assert_eq!(
            patch(start(&failed).unwrap())["spec"],
            json!({"state": "Run", "attempt": 2})
        );
        assert_eq!(
            start(&planned("Completed", "state: Run")).unwrap_err(),
            r#"UpdateRun "r" is Completed: there is nothing left to start (create a new run)"#
        );
    }

    #[test]
    fn stop_applies_to_started_unfinished_runs() {
        for state in ["Running", "Pending"] {
            assert_eq!(
                patch(stop(&planned(state, "state: Run")).unwrap()),
                json!({"spec": {"state": "Stop"}}),
                "{state}"
            );
        }
        assert_eq!(
            stop(&planned("Stopped", "state: Stop")).unwrap(),
            Change::Nothing("updaterun.updates.flotilla.dev/r is already stopped".into())
        );
        assert_eq!(
            stop(&planned("Running", "state: Stop")).unwrap(),
            Change::Nothing("updaterun.updates.flotilla.dev/r is already stopping".into())
        );
        assert_eq!(
            stop(&planned("NotStarted", "")).unwrap_err(),
            r#"UpdateRun "r" has not started: there is nothing to stop"#
        );
        assert_eq!(
            stop(&planned("Failed", "state: Run")).unwrap_err(),
            r#"UpdateRun "r" is Failed: there is nothing to stop"#
        );
    }

    fn targets(texts: &[&str]) -> Vec<SkipTarget> {
        texts.iter().map(|t| parse_target(t).unwrap()).collect()
    }

    #[test]
    fn skip_appends_new_targets_once_keeping_those_listed() {
        let run = planned("Running", "state: Run\n  skip: [{type: Member, name: m1}]");
        assert_eq!(
            skip(
                &run,
                &targets(&["Member:m1", "Group:b", "AfterStageWait:test", "Group:b"])
            )
            .unwrap(),
            Change::Patch {
                patch: json!({
                    "metadata": {"resourceVersion": "7"},
                    "spec": {"skip": [
                        {"type": "Member", "name": "m1"},
                        {"type": "Group", "name": "b"},
                        {"type": "AfterStageWait", "name": "test"},
                    ]},
                }),
                done: "updaterun.updates.flotilla.dev/r skipping Group:b AfterStageWait:test"
                    .into(),
            }
        );
        assert_eq!(
            skip(&run, &targets(&["Member:m1"])).unwrap(),
            Change::Nothing("updaterun.updates.flotilla.dev/r already skips Member:m1".into())
        );
    }

    #[test]
    fn skip_refuses_targets_the_planned_run_does_not_have() {
        let run = planned("NotStarted", "");
        let cases = [
            (
                "Member:m9",
                r#"cannot skip Member:m9 in UpdateRun "r": the run has no member "m9" (its members: m1, m2, m3, m4)"#,
            ),
            (
                "Group:z",
                r#"cannot skip Group:z in UpdateRun "r": the run has no group "z" (its groups: a, b, c)"#,
            ),
            (
                "Stage:canary",
                r#"cannot skip Stage:canary in UpdateRun "r": the run has no stage "canary" (its stages: test, prod)"#,
            ),
            (
                "AfterStageWait:prod",
                r#"cannot skip AfterStageWait:prod in UpdateRun "r": stage "prod" has no after-stage wait"#,
            ),
        ];
        for (target, want) in cases {
            assert_eq!(skip(&run, &targets(&[target])).unwrap_err(), want);
        }
        // Before the controller has planned the run, targets cannot be checked yet.
        let mut unplanned = run.clone();
        unplanned.status = None;
        assert!(matches!(
            skip(&unplanned, &targets(&["Member:m9"])).unwrap(),
            Change::Patch { .. }
        ));
        assert_eq!(
            skip(&planned("Completed", ""), &targets(&["Member:m1"])).unwrap_err(),
            r#"UpdateRun "r" is Completed: there is nothing left to skip"#
        );
    }

    #[test]
    fn refusals_carry_the_hubs_reason_and_message() {
        let status = Status {
            code: 422,
            reason: "Invalid".into(),
            message: r#"UpdateRun.updates.flotilla.dev "r" is invalid: spec.managedClusterUpdate.upgrade.kubernetesVersion: Invalid value: "1.32""#.into(),
            ..Default::default()
        };
        assert_eq!(
            refused("create UpdateRun \"r\"", &status),
            r#"the hub refused to create UpdateRun "r" (Invalid): UpdateRun.updates.flotilla.dev "r" is invalid: spec.managedClusterUpdate.upgrade.kubernetesVersion: Invalid value: "1.32""#
        );
    }
}
