//! `flotilla preview -f placement.yaml`: what a placement would do on the fleet as it is now,
//! without changing anything. The hub validates the placement (a server-side dry run, so the
//! errors are the ones `kubectl apply` would print); the scheduler then runs here, on the
//! hub's member clusters and the placement's existing bindings, and every cluster's verdict,
//! score and reason is printed with the order the rollout would reach the picked ones
//! (rollout rounds replayed with every bound cluster available by the next round).

use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use clap::Args;
use flotilla_api::cluster::MemberCluster;
use flotilla_api::cluster::eligibility::EligibilityWindows;
use flotilla_api::placement::BindingState;
use flotilla_api::placement::snapshots::PARENT_PLACEMENT_LABEL;
use flotilla_api::placement::strategy::RolloutStrategyType;
use flotilla_api::placement::{
    ClusterResourceBinding, ClusterResourcePlacement, ClusterSchedulingPolicySnapshot,
};
use flotilla_placement::rollout::{Action, Readiness, RolloutBinding, RolloutInput, rollout};
use flotilla_placement::scheduler::{BindingView, Decision, SchedulingInput, schedule};
use flotilla_placement::snapshot::policy;
use kube::api::{ListParams, Patch, PatchParams};
use kube::{Api, Client};
use serde_json::Value;

/// Arguments of `flotilla preview`.
#[derive(Debug, Args)]
pub struct PreviewArgs {
    /// The ClusterResourcePlacement to preview (YAML or JSON).
    #[arg(short = 'f', long = "filename")]
    pub filename: PathBuf,
    /// The hub's kubeconfig; default `$KUBECONFIG`, else `.flotilla/kubeconfig`.
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
}

/// Runs the preview and prints it.
pub async fn run(args: PreviewArgs) -> Result<()> {
    let text = std::fs::read_to_string(&args.filename)
        .with_context(|| format!("reading {}", args.filename.display()))?;
    let object: Value = serde_saphyr::from_str(&text)
        .with_context(|| format!("parsing {}", args.filename.display()))?;
    if object["kind"] != "ClusterResourcePlacement" {
        bail!(
            "{}: kind is {}, and only a ClusterResourcePlacement can be previewed",
            args.filename.display(),
            object["kind"]
        );
    }
    let client = crate::member::hub_client(args.kubeconfig).await?;
    let crp = validate(&client, &object).await?;
    let name = crp.metadata.name.clone().unwrap_or_default();
    let members: Api<MemberCluster> = Api::all(client.clone());
    let clusters: Vec<Arc<MemberCluster>> = members
        .list(&ListParams::default())
        .await?
        .items
        .into_iter()
        .map(Arc::new)
        .collect();
    let by_parent = ListParams::default().labels(&format!("{PARENT_PLACEMENT_LABEL}={name}"));
    let bindings: Api<ClusterResourceBinding> = Api::all(client.clone());
    let bindings: Vec<BindingView> = bindings
        .list(&by_parent)
        .await?
        .items
        .iter()
        .map(BindingView::of)
        .collect();
    let snapshots: Api<ClusterSchedulingPolicySnapshot> = Api::all(client.clone());
    let existing = snapshots.list(&by_parent).await?.items;
    // Bindings made under the current policy keep their clusters; a changed policy starts over.
    let latest = policy::latest(&existing)
        .filter(|s| s.spec.policy_hash == policy::policy_hash(crp.spec.policy.as_ref()));
    let current = latest
        .and_then(|s| s.metadata.name.clone())
        .unwrap_or_else(|| format!("{name}-preview"));
    // ...and the verdicts it recorded (a full PickN placement re-evaluates nobody).
    let previous = latest
        .and_then(|s| s.status.as_ref())
        .map_or(&[][..], |s| &s.target_clusters[..]);
    let placement_policy = crp.spec.policy.clone().unwrap_or_default();
    let decision = schedule(&SchedulingInput {
        policy: &placement_policy,
        policy_snapshot: &current,
        clusters: &clusters,
        bindings: &bindings,
        now: jiff::Timestamp::now(),
        eligibility: EligibilityWindows::default(),
        previous,
    });
    let waves = rollout_waves(&crp, &placement_policy, &decision, &bindings)?;
    print!("{}", render(&crp, clusters.len(), &decision, &waves));
    Ok(())
}

/// The order the rollout would reach the picked clusters: rollout rounds run one after
/// another, each cluster bound in a round assumed available by the next. Clusters the
/// placement already runs need an update only if the rollout changes something, which the
/// preview assumes it does.
fn rollout_waves(
    crp: &ClusterResourcePlacement,
    policy: &flotilla_api::placement::policy::PlacementPolicy,
    decision: &Decision,
    existing: &[BindingView],
) -> Result<Vec<Vec<String>>> {
    let mut bindings: Vec<RolloutBinding> = decision
        .selected()
        .map(|cluster| {
            let bound = existing
                .iter()
                .any(|b| b.cluster == cluster && b.state == BindingState::Bound);
            RolloutBinding {
                name: cluster.to_string(),
                cluster: cluster.to_string(),
                state: if bound {
                    BindingState::Bound
                } else {
                    BindingState::Scheduled
                },
                deleting: false,
                up_to_date: false,
                readiness: if bound {
                    Readiness::Available
                } else {
                    Readiness::Pending
                },
            }
        })
        .collect();
    let now = jiff::Timestamp::now();
    let mut waves = Vec::new();
    while bindings.iter().any(|b| !b.up_to_date) && waves.len() < bindings.len() {
        let plan = rollout(&RolloutInput {
            policy,
            strategy: crp.spec.strategy.as_ref(),
            bindings: &bindings,
            now,
        })?;
        let moved: Vec<String> = plan
            .names(|a| matches!(a, Action::Bind | Action::Update))
            .into_iter()
            .map(str::to_string)
            .collect();
        if moved.is_empty() {
            break;
        }
        for binding in bindings.iter_mut().filter(|b| moved.contains(&b.name)) {
            binding.state = BindingState::Bound;
            binding.up_to_date = true;
            binding.readiness = Readiness::Available;
        }
        waves.push(moved);
    }
    Ok(waves)
}

/// The placement as the hub would store it: a server-side apply dry run, so validation errors
/// are the hub's, naming the field.
async fn validate(client: &Client, object: &Value) -> Result<ClusterResourcePlacement> {
    let name = object["metadata"]["name"]
        .as_str()
        .context("metadata.name: Required value")?;
    let api: Api<ClusterResourcePlacement> = Api::all(client.clone());
    let params = PatchParams::apply("flotilla-preview").dry_run().force();
    match api.patch(name, &params, &Patch::Apply(object)).await {
        Ok(crp) => Ok(crp),
        Err(kube::Error::Api(status)) => bail!("the hub rejects the placement: {}", status.message),
        Err(e) => Err(e).context("asking the hub to validate the placement"),
    }
}

/// The printed preview: a summary line, one row per cluster, then the rollout's waves.
pub fn render(
    crp: &ClusterResourcePlacement,
    fleet: usize,
    decision: &Decision,
    waves: &[Vec<String>],
) -> String {
    let name = crp.metadata.name.as_deref().unwrap_or_default();
    let selected = decision.selected().count();
    let mut out = String::new();
    let wanted = match crp.spec.policy.as_ref().and_then(|p| p.number_of_clusters) {
        Some(n) => format!(", {n} wanted"),
        None => String::new(),
    };
    let _ = writeln!(
        out,
        "Placement {name} ({:?}{wanted}) on {fleet} member clusters: {selected} selected. {}.",
        crp.spec.placement_type(),
        decision.condition.message
    );
    let width = decision
        .clusters
        .iter()
        .map(|d| d.cluster_name.len())
        .max()
        .unwrap_or(0)
        .max("CLUSTER".len());
    let _ = writeln!(
        out,
        "\n{:width$}  {:8}  {:>8}  {:>8}  REASON",
        "CLUSTER", "VERDICT", "AFFINITY", "TOPOLOGY"
    );
    for d in &decision.clusters {
        let score = |v: Option<i32>| v.map(|v| v.to_string()).unwrap_or_else(|| "-".into());
        let _ = writeln!(
            out,
            "{:width$}  {:8}  {:>8}  {:>8}  {}",
            d.cluster_name,
            if d.selected { "selected" } else { "rejected" },
            score(d.cluster_score.and_then(|s| s.affinity_score)),
            score(d.cluster_score.and_then(|s| s.priority_score)),
            d.reason
        );
    }
    if crp.spec.rollout_strategy_type() == RolloutStrategyType::External {
        let _ = writeln!(
            out,
            "\nRollout: External; staged update runs decide the order."
        );
    } else if !waves.is_empty() {
        let _ = writeln!(
            out,
            "\nRollout order (RollingUpdate; each wave once the previous is available):"
        );
        for (index, wave) in waves.iter().enumerate() {
            let _ = writeln!(out, "  {}. {}", index + 1, wave.join(", "));
        }
    }
    out
}
