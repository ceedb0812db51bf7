//! The eviction controller: a `ClusterResourcePlacementEviction` is judged once
//! ([`crate::eviction::evaluate`]) against its placement, the placement's bindings and the
//! disruption budget named as the placement; when allowed, the binding is deleted, so the
//! placement's resources leave the cluster (and the scheduler, for PickN, may pick another).
//! The verdict is written as the eviction's `Valid` and `Executed` conditions, and is final.

use std::sync::Arc;

use flotilla_api::conditions::set_condition;
use flotilla_api::placement::{
    ClusterResourceBinding, ClusterResourcePlacement, ClusterResourcePlacementDisruptionBudget,
    ClusterResourcePlacementEviction,
};
use flotilla_apiserver::clock::Clock;
use flotilla_apiserver::metrics::controller::Queue;
use flotilla_apiserver::recorder::{EventRecorder, reference};
use kube::runtime::controller::Action;
use kube::runtime::watcher;
use kube::{Api, Client, ResourceExt};
use serde_json::json;

use super::snapshots::owned;
use super::{ControllerError, writes};
use crate::eviction::{EvictionInput, Verdict, evaluate, is_final};
use crate::placement_key::PlacementKey;

struct Context {
    client: Client,
    clock: Arc<dyn Clock>,
    recorder: EventRecorder,
}

/// Runs the eviction controller until the client's API goes away.
pub async fn run(client: Client, clock: Arc<dyn Clock>) {
    let evictions: Api<ClusterResourcePlacementEviction> = Api::all(client.clone());
    let queue = Queue::new("clusterresourceplacementeviction");
    let results = queue.controller(evictions, watcher::Config::default()).run(
        queue.instrument(reconcile),
        error_policy,
        Arc::new(Context {
            recorder: EventRecorder::new(client.clone(), super::MANAGER),
            client,
            clock,
        }),
    );
    queue.drive(results).await;
}

fn error_policy(
    eviction: Arc<ClusterResourcePlacementEviction>,
    error: &ControllerError,
    _: Arc<Context>,
) -> Action {
    error.retry(&format!("eviction {}", eviction.name_any()))
}

async fn reconcile(
    eviction: Arc<ClusterResourcePlacementEviction>,
    ctx: Arc<Context>,
) -> Result<Action, ControllerError> {
    if is_final(&eviction) || eviction.metadata.deletion_timestamp.is_some() {
        return Ok(Action::await_change());
    }
    let spec = &eviction.spec;
    let placement = Api::<ClusterResourcePlacement>::all(ctx.client.clone())
        .get_opt(&spec.placement_name)
        .await?;
    let placement_key = PlacementKey::cluster(&spec.placement_name);
    let bindings: Vec<ClusterResourceBinding> = owned(&ctx.client, &placement_key).await?;
    let budget = Api::<ClusterResourcePlacementDisruptionBudget>::all(ctx.client.clone())
        .get_opt(&spec.placement_name)
        .await?;
    let verdict = evaluate(&EvictionInput {
        cluster: &spec.cluster_name,
        placement: placement.as_ref(),
        bindings: &bindings,
        budget: budget.as_ref().map(|b| &b.spec),
    });
    if let Verdict::Executed {
        delete_binding: Some(binding),
        ..
    } = &verdict
    {
        writes::delete(
            &Api::<ClusterResourceBinding>::all(ctx.client.clone()),
            binding,
        )
        .await?;
    }
    let mut conditions = eviction
        .status
        .as_ref()
        .map(|s| s.conditions.clone())
        .unwrap_or_default();
    for condition in verdict.conditions(eviction.metadata.generation) {
        set_condition(&mut conditions, condition, ctx.clock.now());
    }
    let api: Api<ClusterResourcePlacementEviction> = Api::all(ctx.client.clone());
    writes::status(&api, &eviction.metadata, json!({"conditions": conditions})).await?;
    record(&ctx.recorder, &eviction, placement.as_ref(), &verdict).await;
    Ok(Action::await_change())
}

/// Records the verdict as events: on the eviction (executed, refused or invalid, and why), and
/// on the placement when a cluster was evicted from it.
async fn record(
    recorder: &EventRecorder,
    eviction: &ClusterResourcePlacementEviction,
    placement: Option<&ClusterResourcePlacement>,
    verdict: &Verdict,
) {
    let (warning, reason, message) = match verdict {
        Verdict::Executed { message, .. } => (false, "EvictionExecuted", message),
        Verdict::NotExecuted { message } => (true, "EvictionNotExecuted", message),
        Verdict::Invalid { message } => (true, "EvictionInvalid", message),
    };
    let regarding = reference::<ClusterResourcePlacementEviction>(&eviction.metadata);
    recorder
        .record(&regarding, warning, reason, message, "Evict")
        .await;
    if let (
        Verdict::Executed {
            delete_binding: Some(_),
            ..
        },
        Some(placement),
    ) = (verdict, placement)
    {
        let note = format!(
            "cluster {} evicted by {}",
            eviction.spec.cluster_name,
            eviction.name_any()
        );
        let regarding = reference::<ClusterResourcePlacement>(&placement.metadata);
        recorder
            .record(&regarding, false, "PlacementEvicted", &note, "Evict")
            .await;
    }
}
