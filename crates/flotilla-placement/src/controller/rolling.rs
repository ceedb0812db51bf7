//! Carries out one rollout round ([`crate::rollout`]) for a placement: bindings bound to or
//! moved to the latest resources, unscheduled ones deleted, and every binding's
//! `RolloutStarted` condition.

use flotilla_api::conditions::{NewCondition, set_condition};
use flotilla_api::placement::policy::PlacementPolicy;
use flotilla_api::placement::strategy::ApplyStrategy;
use flotilla_api::placement::{BindingState, ClusterResourceBinding};
use futures::FutureExt;
use futures::future::BoxFuture;
use k8s_openapi::jiff::Timestamp;
use kube::{Api, Client, ResourceExt};
use serde_json::json;
use std::sync::Arc;

use super::binding_cache::BindingCache;
use super::family::{Object, Parent, PlacementFamily, api};
use super::writes::Written;
use super::{ControllerError, writes};
use crate::overrides::ClusterOverrides;
use crate::rollout::{Action, RolloutBinding, RolloutInput, rollout, unavailable_period};

/// What the bindings should carry: the latest resource snapshot, the override snapshots that
/// apply to each cluster and the apply strategy.
pub(crate) struct Target<'a> {
    /// The latest resource snapshot's first chunk.
    pub snapshot: &'a str,
    /// The override snapshots with a rule for a cluster.
    pub overrides: &'a (dyn Fn(&str) -> ClusterOverrides + Sync),
    /// The placement.
    pub parent: &'a Parent<'a>,
    /// The effective policy (PickN's number of clusters from the policy snapshot).
    pub policy: &'a PlacementPolicy,
}

impl Target<'_> {
    /// Whether `binding` already carries the latest resources and apply strategy.
    fn current(&self, binding: &ClusterResourceBinding) -> bool {
        let overrides = (self.overrides)(&binding.spec.target_cluster);
        binding.spec.resource_snapshot_name == self.snapshot
            && binding.spec.apply_strategy == self.apply_strategy()
            && binding.spec.cluster_resource_override_snapshots
                == overrides.cluster_resource_overrides
            && binding.spec.resource_override_snapshots == overrides.resource_overrides
    }

    fn apply_strategy(&self) -> Option<ApplyStrategy> {
        self.parent
            .spec
            .strategy
            .as_ref()
            .and_then(|s| s.apply_strategy.clone())
    }

    /// The rollout's view of `bindings` at `now`.
    fn views<'b>(
        &self,
        bindings: impl IntoIterator<Item = &'b ClusterResourceBinding>,
        now: Timestamp,
    ) -> Vec<RolloutBinding> {
        let config = self
            .parent
            .spec
            .strategy
            .as_ref()
            .and_then(|s| s.rolling_update.as_ref());
        let period = unavailable_period(config);
        bindings
            .into_iter()
            .map(|b| RolloutBinding::of(b, self.current(b), now, period))
            .collect()
    }

    /// The round's input over `views` at `now`.
    fn input<'i>(&'i self, views: &'i [RolloutBinding], now: Timestamp) -> RolloutInput<'i> {
        RolloutInput {
            policy: self.policy,
            strategy: self.parent.spec.strategy.as_ref(),
            bindings: views,
            now,
        }
    }

    /// Which of the bindings about to be created (`arriving`) a round over them and the
    /// placement's `bindings` would bind at once ([`crate::rollout::bound_at_creation`]),
    /// by name; none when the strategy's limits are invalid (the round reports that).
    pub(crate) fn bound_at_creation(
        &self,
        bindings: &[Arc<ClusterResourceBinding>],
        arriving: &[ClusterResourceBinding],
        now: Timestamp,
    ) -> Vec<String> {
        let views = self.views(bindings.iter().map(|b| &**b), now);
        let arriving = self.views(arriving, now);
        crate::rollout::bound_at_creation(&self.input(&views, now), &arriving).unwrap_or_default()
    }
}

/// Runs a round and writes it (recording the binding writes in `cache`); returns whether any
/// binding's spec changed and when to look again.
pub(crate) async fn run<F: PlacementFamily>(
    client: &Client,
    cache: &BindingCache<F>,
    target: &Target<'_>,
    bindings: &[Arc<ClusterResourceBinding>],
    now: Timestamp,
) -> Result<(bool, Option<Timestamp>), ControllerError> {
    let views = target.views(bindings.iter().map(|b| &**b), now);
    let plan = match rollout(&target.input(&views, now)) {
        Ok(plan) => plan,
        Err(invalid) => {
            tracing::warn!(placement = %target.parent.key, %invalid, "rollout held");
            return Ok((false, None));
        }
    };
    let api = api::<F::Binding>(client, &target.parent.key);
    let changed = bindings.iter().any(|b| {
        matches!(
            plan.action(&b.name_any()),
            Some(Action::Bind | Action::Update | Action::Delete)
        )
    });
    let pending: Vec<BoxFuture<'_, Result<Written, kube::Error>>> = bindings
        .iter()
        .filter_map(|b| Some((b, plan.action(&b.name_any())?)))
        .map(|(binding, action)| carry_out::<F>(&api, target, binding, action, now).boxed())
        .collect();
    cache.record(&target.parent.key, writes::all(pending).await)?;
    Ok((changed, plan.recheck_at))
}

async fn carry_out<F: PlacementFamily>(
    api: &Api<F::Binding>,
    target: &Target<'_>,
    binding: &ClusterResourceBinding,
    action: &Action,
    now: Timestamp,
) -> Result<Written, kube::Error> {
    let name = binding.name_any();
    let updated = match action {
        Action::Delete => return writes::delete(api, &name).await,
        Action::Bind | Action::Update => {
            let overrides = (target.overrides)(&binding.spec.target_cluster);
            Some(
                bind::<F>(
                    api,
                    &name,
                    target.snapshot,
                    &overrides,
                    target.apply_strategy().as_ref(),
                )
                .await?,
            )
        }
        _ => None,
    };
    let patched = updated.as_ref().map(writes::revision);
    // The condition is written over the spec patch just made, not the binding as read.
    let current = updated.as_ref().unwrap_or(binding);
    let generation = current.metadata.generation.unwrap_or_default();
    let Some(condition) = action.rollout_started(generation) else {
        return Ok(patched);
    };
    Ok(write_condition(api, current, condition, now)
        .await?
        .or(patched))
}

/// Creates `binding` (a new Scheduled binding [`Target::bound_at_creation`] picked) Bound to
/// the target's resources, overrides and apply strategy, and writes its `RolloutStarted`
/// condition, as a round binding it would; returns the last write's revision (`None` when
/// the binding already exists: an earlier reconcile made it).
pub(crate) async fn create_bound<F: PlacementFamily>(
    api: &Api<F::Binding>,
    target: &Target<'_>,
    mut binding: ClusterResourceBinding,
    now: Timestamp,
) -> Result<Written, kube::Error> {
    let overrides = (target.overrides)(&binding.spec.target_cluster);
    binding.spec.state = BindingState::Bound;
    binding.spec.resource_snapshot_name = target.snapshot.to_string();
    binding.spec.cluster_resource_override_snapshots = overrides.cluster_resource_overrides;
    binding.spec.resource_override_snapshots = overrides.resource_overrides;
    binding.spec.apply_strategy = target.apply_strategy();
    let Some(created) = writes::create_object(api, &F::Binding::from(binding)).await? else {
        return Ok(None);
    };
    let created: ClusterResourceBinding = created.into();
    let generation = created.metadata.generation.unwrap_or_default();
    let Some(condition) = Action::Bind.rollout_started(generation) else {
        return Ok(Some(writes::revision(&created)));
    };
    Ok(write_condition(api, &created, condition, now)
        .await?
        .or(Some(writes::revision(&created))))
}

/// Binds binding `name` to resource snapshot `snapshot` with `overrides` and
/// `apply_strategy`; returns the binding as patched.
pub(crate) async fn bind<F: PlacementFamily>(
    api: &Api<F::Binding>,
    name: &str,
    snapshot: &str,
    overrides: &ClusterOverrides,
    apply_strategy: Option<&ApplyStrategy>,
) -> Result<ClusterResourceBinding, kube::Error> {
    let patch = json!({"spec": {
        "state": BindingState::Bound,
        "resourceSnapshotName": snapshot,
        "clusterResourceOverrideSnapshots": overrides.cluster_resource_overrides,
        "resourceOverrideSnapshots": overrides.resource_overrides,
        "applyStrategy": apply_strategy,
    }});
    let patched = api
        .patch(name, &Default::default(), &kube::api::Patch::Merge(patch))
        .await?;
    Ok(patched.into())
}

/// Sets one condition on the binding's status, if it changes anything.
pub(crate) async fn write_condition<K: Object>(
    api: &Api<K>,
    binding: &ClusterResourceBinding,
    condition: NewCondition<'_>,
    now: Timestamp,
) -> Result<Written, kube::Error> {
    let mut conditions = binding
        .status
        .as_ref()
        .map(|s| s.conditions.clone())
        .unwrap_or_default();
    if !set_condition(&mut conditions, condition, now) {
        return Ok(None);
    }
    writes::status(api, &binding.metadata, json!({"conditions": conditions})).await
}
