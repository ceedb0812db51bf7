//! Runs the scheduler for one placement and carries its decision out: bindings created
//! (Scheduled, or already Bound when a rollout round would bind them at once), refreshed or
//! unscheduled, and the policy snapshot's status (every cluster's verdict and the `Scheduled`
//! condition).

use std::collections::BTreeMap;
use std::sync::Arc;

use flotilla_api::cluster::MemberCluster;
use flotilla_api::cluster::eligibility::EligibilityWindows;
use flotilla_api::conditions::set_condition;
use flotilla_api::placement::binding::PREVIOUS_STATE_ANNOTATION;
use flotilla_api::placement::snapshots::ClusterDecision;
use flotilla_api::placement::{
    BindingState, ClusterResourceBinding, ClusterSchedulingPolicySnapshot, ResourceBindingSpec,
};
use futures::FutureExt;
use futures::future::BoxFuture;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use k8s_openapi::jiff::Timestamp;
use kube::{Api, Client};
use serde_json::json;

use super::binding_cache::BindingCache;
use super::family::{Parent, PlacementFamily, api};
use super::naming::{BINDING_FINALIZER, PARENT_PLACEMENT_LABEL, binding_name};
use super::rolling::{self, Target};
use super::writes::Written;
use super::{ControllerError, writes};
use crate::scheduler::{BindingChange, BindingView, Decision, SchedulingInput, schedule};
use crate::snapshot::policy::effective_policy;

/// One scheduling cycle's inputs besides the cluster list.
pub(crate) struct Cycle<'a> {
    /// The placement.
    pub parent: &'a Parent<'a>,
    /// Its owner reference (bindings are owned by the placement).
    pub owner: &'a OwnerReference,
    /// The latest policy snapshot (working form).
    pub snapshot: &'a ClusterSchedulingPolicySnapshot,
    /// The placement's bindings (working form).
    pub bindings: &'a [Arc<ClusterResourceBinding>],
    /// The time eligibility is judged at.
    pub now: Timestamp,
    /// The eligibility windows.
    pub windows: EligibilityWindows,
}

/// Schedules and writes the decision (recording the binding writes in `cache`); returns it
/// and whether any binding changed. When the decision only creates bindings, those a
/// rollout round would bind at once are created Bound to `target`
/// ([`rolling::Target::bound_at_creation`]).
pub(crate) async fn run<F: PlacementFamily>(
    client: &Client,
    cache: &BindingCache<F>,
    clusters: &[Arc<MemberCluster>],
    cycle: Cycle<'_>,
    target: &Target<'_>,
) -> Result<(Decision, bool), ControllerError> {
    let policy = effective_policy(cycle.snapshot);
    let snapshot_name = cycle.snapshot.metadata.name.clone().unwrap_or_default();
    let views: Vec<BindingView> = cycle.bindings.iter().map(|b| BindingView::of(b)).collect();
    let decision = schedule(&SchedulingInput {
        policy: &policy,
        policy_snapshot: &snapshot_name,
        clusters,
        bindings: &views,
        now: cycle.now,
        eligibility: cycle.windows,
        previous: cycle
            .snapshot
            .status
            .as_ref()
            .map_or(&[], |s| &s.target_clusters),
    });
    let key = &cycle.parent.key;
    let api = api::<F::Binding>(client, key);
    let changed = !decision.changes.is_empty();
    let born = Births::of(&cycle, &snapshot_name, &decision.changes, target);
    let pending: Vec<BoxFuture<'_, Result<Written, kube::Error>>> = decision
        .changes
        .iter()
        .map(|change| carry_out::<F>(&api, &cycle, &snapshot_name, change, &born).boxed())
        .collect();
    let recorded = cache.record(key, writes::all(pending).await);
    // The verdicts are the decision's whether or not each binding write landed: a failed
    // write is made again by a later cycle or round, but a PickN placement that has its
    // clusters evaluates nothing again and can only repeat the verdicts recorded here.
    if !decision.requeue {
        write_snapshot_status::<F>(client, &cycle, &decision).await?;
    }
    recorded?;
    Ok((decision, changed))
}

/// The bindings a decision creates Bound, and what they are bound to.
struct Births<'a> {
    /// Their names, sorted.
    bound: Vec<String>,
    target: &'a Target<'a>,
    now: Timestamp,
}

impl<'a> Births<'a> {
    /// The births of `changes`: when they only create bindings (scheduling a new placement,
    /// or clusters newly picked), those a round over the placement's bindings and them would
    /// bind at once; otherwise none (the next round sees the decision written).
    fn of(
        cycle: &Cycle<'_>,
        snapshot: &str,
        changes: &[BindingChange],
        target: &'a Target<'a>,
    ) -> Births<'a> {
        let arriving: Option<Vec<ClusterResourceBinding>> = changes
            .iter()
            .map(|change| match change {
                BindingChange::Create { decision } => Some(new_binding(cycle, snapshot, decision)),
                BindingChange::Refresh { .. } | BindingChange::Unschedule { .. } => None,
            })
            .collect();
        let bound = match arriving {
            Some(arriving) if !arriving.is_empty() => {
                target.bound_at_creation(cycle.bindings, &arriving, cycle.now)
            }
            _ => Vec::new(),
        };
        Births {
            bound,
            target,
            now: cycle.now,
        }
    }

    /// Whether binding `name` is created Bound.
    fn bound(&self, name: &str) -> bool {
        self.bound
            .binary_search_by(|b| b.as_str().cmp(name))
            .is_ok()
    }
}

async fn carry_out<F: PlacementFamily>(
    api: &Api<F::Binding>,
    cycle: &Cycle<'_>,
    snapshot: &str,
    change: &BindingChange,
    born: &Births<'_>,
) -> Result<Written, kube::Error> {
    match change {
        BindingChange::Create { decision } => {
            let binding = new_binding(cycle, snapshot, decision);
            if born.bound(binding.metadata.name.as_deref().unwrap_or_default()) {
                return rolling::create_bound::<F>(api, born.target, binding, born.now).await;
            }
            writes::create(api, &F::Binding::from(binding)).await
        }
        BindingChange::Refresh {
            binding,
            state,
            decision,
        } => {
            let patch = json!({
                "metadata": {"annotations": {PREVIOUS_STATE_ANNOTATION: null}},
                "spec": {
                    "state": state,
                    "schedulingPolicySnapshotName": snapshot,
                    "clusterDecision": decision,
                },
            });
            writes::merge(api, binding, patch).await
        }
        BindingChange::Unschedule {
            binding,
            previous_state,
            reason,
            ..
        } => {
            tracing::info!(%binding, %reason, "unscheduling binding");
            let patch = json!({
                "metadata": {"annotations": {PREVIOUS_STATE_ANNOTATION: previous_state}},
                "spec": {"state": BindingState::Unscheduled},
            });
            writes::merge(api, binding, patch).await
        }
    }
}

/// A new `Scheduled` binding for the decision's cluster, in the placement's scope.
fn new_binding(
    cycle: &Cycle<'_>,
    snapshot: &str,
    decision: &ClusterDecision,
) -> ClusterResourceBinding {
    let key = &cycle.parent.key;
    let placement = key.name.clone();
    let strategy = cycle.parent.spec.strategy.as_ref();
    ClusterResourceBinding {
        metadata: ObjectMeta {
            name: Some(binding_name(&placement, &decision.cluster_name)),
            namespace: key.namespace.clone(),
            labels: Some(BTreeMap::from([(
                PARENT_PLACEMENT_LABEL.to_string(),
                placement,
            )])),
            owner_references: Some(vec![cycle.owner.clone()]),
            // The work generator's finalizer, set at birth to spare it a write per binding.
            finalizers: Some(vec![BINDING_FINALIZER.to_string()]),
            ..ObjectMeta::default()
        },
        spec: ResourceBindingSpec {
            state: BindingState::Scheduled,
            resource_snapshot_name: String::new(),
            resource_override_snapshots: Vec::new(),
            cluster_resource_override_snapshots: Vec::new(),
            scheduling_policy_snapshot_name: snapshot.to_string(),
            target_cluster: decision.cluster_name.clone(),
            cluster_decision: decision.clone(),
            apply_strategy: strategy.and_then(|s| s.apply_strategy.clone()),
            delete_strategy: strategy.and_then(|s| s.delete_strategy.clone()),
        },
        status: None,
    }
}

/// Writes the verdicts and the `Scheduled` condition into the policy snapshot's status, if
/// they changed.
async fn write_snapshot_status<F: PlacementFamily>(
    client: &Client,
    cycle: &Cycle<'_>,
    decision: &Decision,
) -> Result<(), kube::Error> {
    let mut status = cycle.snapshot.status.clone().unwrap_or_default();
    let before = status.clone();
    let generation = cycle.parent.generation();
    status.observed_crp_generation = generation;
    status.target_clusters = decision.target_clusters().to_vec();
    set_condition(
        &mut status.conditions,
        decision.condition.to_condition(Some(generation)),
        cycle.now,
    );
    if status == before {
        return Ok(());
    }
    writes::status(
        &api::<F::PolicySnapshot>(client, &cycle.parent.key),
        &cycle.snapshot.metadata,
        serde_json::to_value(&status).unwrap_or_default(),
    )
    .await
    .map(drop)
}
