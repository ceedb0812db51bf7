//! The Deployment controller: one ReplicaSet per pod template (`<deployment>-<hash>`), rolled
//! out with `RollingUpdate` (maxSurge / maxUnavailable, 25% each by default) or `Recreate`,
//! old revisions pruned to `revisionHistoryLimit`, and the status and conditions
//! kube-controller-manager writes (what `kubectl rollout status` reads).

use std::collections::BTreeMap;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::{
    Deployment, DeploymentCondition, DeploymentStatus, ReplicaSet, ReplicaSetSpec,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};

use crate::actions::{Action, EventNote, Plan};
use crate::objects::{
    ObjectRef, controller_reference, name_of, namespace_of, nonzero, scaled_value, time,
};
use crate::pod_template::{POD_TEMPLATE_HASH, template_hash};

/// Annotation holding a Deployment's (and each of its ReplicaSets') revision number.
pub const REVISION: &str = "deployment.kubernetes.io/revision";
/// Annotation on a ReplicaSet: the Deployment's desired replicas when it was last scaled.
pub const DESIRED_REPLICAS: &str = "deployment.kubernetes.io/desired-replicas";
/// Annotation on a ReplicaSet: desired replicas plus maxSurge when it was last scaled.
pub const MAX_REPLICAS: &str = "deployment.kubernetes.io/max-replicas";

const COMPONENT: &str = "deployment-controller";

/// The rollout bounds of a Deployment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Bounds {
    replicas: i32,
    rolling: bool,
    max_surge: i32,
    max_unavailable: i32,
}

fn bounds(d: &Deployment) -> Bounds {
    let replicas = d.spec.replicas.unwrap_or(1).max(0);
    let strategy = d.spec.strategy.as_ref();
    let rolling = strategy
        .and_then(|s| s.type_.as_deref())
        .is_none_or(|t| t == "RollingUpdate");
    if !rolling {
        return Bounds {
            replicas,
            rolling,
            max_surge: 0,
            max_unavailable: 0,
        };
    }
    let params = strategy.and_then(|s| s.rolling_update.as_ref());
    let max_surge = scaled_value(
        params.and_then(|p| p.max_surge.as_ref()),
        "25%",
        replicas,
        true,
    );
    let mut max_unavailable = scaled_value(
        params.and_then(|p| p.max_unavailable.as_ref()),
        "25%",
        replicas,
        false,
    );
    if max_surge == 0 && max_unavailable == 0 {
        max_unavailable = 1;
    }
    Bounds {
        replicas,
        rolling,
        max_surge,
        max_unavailable: max_unavailable.min(replicas),
    }
}

fn spec_replicas(rs: &ReplicaSet) -> i32 {
    rs.spec.replicas.unwrap_or(1)
}

fn status_field(
    rs: &ReplicaSet,
    f: impl Fn(&k8s_openapi::api::apps::v1::ReplicaSetStatus) -> Option<i32>,
) -> i32 {
    rs.status.as_ref().and_then(f).unwrap_or(0)
}

fn revision_of(meta: &ObjectMeta) -> i64 {
    meta.annotations
        .as_ref()
        .and_then(|a| a.get(REVISION))
        .and_then(|r| r.parse().ok())
        .unwrap_or(0)
}

/// One pass over a Deployment and the ReplicaSets it controls.
pub fn reconcile(d: &Deployment, owned: &[&ReplicaSet], now: Timestamp) -> Plan {
    if d.metadata.deletion_timestamp.is_some() {
        return Plan::default();
    }
    let mut sync = Sync::new(d, owned, now);
    let paused = d.spec.paused == Some(true);
    sync.sync_new_set(!paused);
    let events = if paused {
        Vec::new()
    } else {
        let scales = sync.scales();
        sync.scale(&scales)
    };
    sync.flush(events);
    let status = sync.status();
    if d.status.as_ref() != Some(&status) {
        sync.plan.push(Action::write_status(d, &status));
    }
    if !paused && is_complete(d, &status, &sync.b) {
        prune_history(d, &sync.olds, &mut sync.plan);
    }
    sync.plan
}

/// One sync of a Deployment: what it observed and what it has decided so far.
struct Sync<'a> {
    d: &'a Deployment,
    b: Bounds,
    now: Timestamp,
    /// The template's hash and the name of its ReplicaSet.
    hash: String,
    /// Its ReplicaSets not being deleted.
    alive: Vec<&'a ReplicaSet>,
    /// The ReplicaSet of the current template, if it exists.
    new_rs: Option<&'a ReplicaSet>,
    /// The others, oldest first.
    olds: Vec<&'a ReplicaSet>,
    /// The name of the current template's ReplicaSet once it exists or is being created.
    new_rs_name: Option<String>,
    conditions: Vec<DeploymentCondition>,
    /// ReplicaSet changes, one update per ReplicaSet.
    rs_updates: BTreeMap<String, ReplicaSet>,
    plan: Plan,
}

impl<'a> Sync<'a> {
    fn new(d: &'a Deployment, owned: &[&'a ReplicaSet], now: Timestamp) -> Sync<'a> {
        let hash = template_hash(&d.spec.template);
        let alive: Vec<&ReplicaSet> = owned
            .iter()
            .copied()
            .filter(|rs| rs.metadata.deletion_timestamp.is_none())
            .collect();
        let new_rs = alive.iter().copied().find(|rs| {
            rs.metadata
                .labels
                .as_ref()
                .and_then(|l| l.get(POD_TEMPLATE_HASH))
                == Some(&hash)
        });
        let mut olds: Vec<&ReplicaSet> = alive
            .iter()
            .copied()
            .filter(|rs| new_rs.is_none_or(|n| n.metadata.uid != rs.metadata.uid))
            .collect();
        olds.sort_by(|a, b| {
            (&a.metadata.creation_timestamp, name_of(*a))
                .cmp(&(&b.metadata.creation_timestamp, name_of(*b)))
        });
        Sync {
            d,
            b: bounds(d),
            now,
            hash,
            alive,
            new_rs,
            olds,
            new_rs_name: new_rs.map(|rs| name_of(rs).to_string()),
            conditions: d
                .status
                .as_ref()
                .and_then(|s| s.conditions.clone())
                .unwrap_or_default(),
            rs_updates: BTreeMap::new(),
            plan: Plan::default(),
        }
    }

    /// Keeps the Deployment's revision annotation at `revision`.
    fn annotate_revision(&mut self, revision: i64) {
        if revision_of(&self.d.metadata) != revision {
            let mut updated = self.d.clone();
            updated
                .metadata
                .annotations
                .get_or_insert_default()
                .insert(REVISION.into(), revision.to_string());
            updated.status = None;
            self.plan.push(Action::update(&updated));
        }
    }

    fn rs_update(&mut self, rs: &ReplicaSet) -> &mut ReplicaSet {
        self.rs_updates
            .entry(name_of(rs).to_string())
            .or_insert_with(|| rs.clone())
    }

    /// `getNewReplicaSet`: keeps the current template's ReplicaSet at the newest revision and
    /// the Deployment's `minReadySeconds`, or creates it (when `create`, and for `Recreate`
    /// only once the old pods are gone).
    fn sync_new_set(&mut self, create: bool) {
        let new_revision = self
            .olds
            .iter()
            .map(|rs| revision_of(&rs.metadata))
            .max()
            .unwrap_or(0)
            + 1;
        let spec = &self.d.spec;
        match self.new_rs {
            Some(rs) => {
                let rs_revision = revision_of(&rs.metadata).max(new_revision);
                if revision_of(&rs.metadata) < new_revision {
                    self.rs_update(rs)
                        .metadata
                        .annotations
                        .get_or_insert_default()
                        .insert(REVISION.into(), rs_revision.to_string());
                }
                if rs.spec.min_ready_seconds != spec.min_ready_seconds {
                    self.rs_update(rs).spec.min_ready_seconds = spec.min_ready_seconds;
                }
                self.annotate_revision(rs_revision);
                if !self
                    .conditions
                    .iter()
                    .any(|c| c.type_.as_deref() == Some("Progressing"))
                {
                    let message = format!("Found new replica set \"{}\"", name_of(rs));
                    self.set_progressing("FoundNewReplicaSet", message);
                }
            }
            None if create => {
                let old_active: i32 = self.olds.iter().map(|rs| spec_replicas(rs)).sum();
                let old_running: i32 = self
                    .olds
                    .iter()
                    .map(|rs| status_field(rs, |s| Some(s.replicas)))
                    .sum();
                let replicas = if self.b.rolling {
                    new_replicas(&self.b, old_active, 0)
                } else if old_active == 0 && old_running == 0 {
                    self.b.replicas
                } else {
                    return;
                };
                let name = format!("{}-{}", name_of(self.d), self.hash);
                let rs =
                    new_replica_set(self.d, &self.hash, &name, replicas, new_revision, &self.b);
                self.plan.push(Action::create(&rs));
                if replicas > 0 {
                    let message = format!("Scaled up replica set {name} to {replicas}");
                    self.plan
                        .push(Action::Record(scaling_event(self.d, message)));
                }
                self.set_progressing(
                    "NewReplicaSetCreated",
                    format!("Created new replica set \"{name}\""),
                );
                self.annotate_revision(new_revision);
                self.new_rs_name = Some(name);
            }
            None => {}
        }
    }

    fn set_progressing(&mut self, reason: &str, message: String) {
        set_condition(
            &mut self.conditions,
            condition("Progressing", "True", reason, message, self.now),
        );
    }

    /// The new replica count of each ReplicaSet to scale: the new one towards the desired
    /// count, old ones down as availability allows (rolling), or old ones to zero before the
    /// new one grows (recreate).
    fn scales(&self) -> BTreeMap<String, i32> {
        let b = &self.b;
        let mut scales = BTreeMap::new();
        let emptied = |scales: &mut BTreeMap<String, i32>| {
            for old in self.olds.iter().filter(|rs| spec_replicas(rs) > 0) {
                scales.insert(name_of(*old).to_string(), 0);
            }
        };
        match (self.new_rs, b.rolling) {
            (Some(new), true) => {
                let all: i32 = self.alive.iter().map(|rs| spec_replicas(rs)).sum();
                let current = spec_replicas(new);
                if current > b.replicas {
                    scales.insert(name_of(new).into(), b.replicas);
                } else if current < b.replicas {
                    let target = new_replicas(b, all, current);
                    if target != current {
                        scales.insert(name_of(new).into(), target);
                    }
                }
                if scales.is_empty() {
                    scale_down_olds(b, new, &self.olds, &mut scales);
                }
            }
            (Some(new), false) => {
                emptied(&mut scales);
                let old_running: i32 = self
                    .olds
                    .iter()
                    .map(|rs| status_field(rs, |s| Some(s.replicas)))
                    .sum();
                if scales.is_empty() && old_running == 0 && spec_replicas(new) != b.replicas {
                    scales.insert(name_of(new).into(), b.replicas);
                }
            }
            (None, true) => {}
            (None, false) => emptied(&mut scales),
        }
        scales
    }

    /// Records each scale as a ReplicaSet change; returns their `ScalingReplicaSet` events.
    fn scale(&mut self, scales: &BTreeMap<String, i32>) -> Vec<Action> {
        let mut events = Vec::new();
        for rs in self.alive.clone() {
            let Some(&target) = scales.get(name_of(rs)) else {
                continue;
            };
            let from = spec_replicas(rs);
            let (replicas, max) = (self.b.replicas, self.b.replicas + self.b.max_surge);
            let updated = self.rs_update(rs);
            updated.spec.replicas = Some(target);
            let annotations = updated.metadata.annotations.get_or_insert_default();
            annotations.insert(DESIRED_REPLICAS.into(), replicas.to_string());
            annotations.insert(MAX_REPLICAS.into(), max.to_string());
            let direction = if target > from { "up" } else { "down" };
            let message = format!(
                "Scaled {direction} replica set {} to {target} from {from}",
                name_of(rs)
            );
            events.push(Action::Record(scaling_event(self.d, message)));
        }
        events
    }

    /// Writes the ReplicaSet changes (one update each), then `events`.
    fn flush(&mut self, events: Vec<Action>) {
        for mut updated in std::mem::take(&mut self.rs_updates).into_values() {
            updated.status = None;
            self.plan.push(Action::update(&updated));
        }
        self.plan.actions.extend(events);
    }

    /// The status `calculateStatus` and `syncRolloutStatus` compute.
    fn status(&mut self) -> DeploymentStatus {
        let b = self.b;
        let sum = |f: &dyn Fn(&ReplicaSet) -> i32| self.alive.iter().map(|rs| f(rs)).sum::<i32>();
        let replicas = sum(&|rs| status_field(rs, |s| Some(s.replicas)));
        let ready = sum(&|rs| status_field(rs, |s| s.ready_replicas));
        let available = sum(&|rs| status_field(rs, |s| s.available_replicas));
        let updated = self
            .new_rs
            .and_then(|rs| rs.status.as_ref())
            .map_or(0, |s| s.replicas);
        let old = self.d.status.clone().unwrap_or_default();
        let positive = |n: i32| nonzero(usize::try_from(n).unwrap_or(0));
        let mut conditions = std::mem::take(&mut self.conditions);
        set_condition(
            &mut conditions,
            if available >= b.replicas - b.max_unavailable {
                condition(
                    "Available",
                    "True",
                    "MinimumReplicasAvailable",
                    "Deployment has minimum availability.".into(),
                    self.now,
                )
            } else {
                condition(
                    "Available",
                    "False",
                    "MinimumReplicasUnavailable",
                    "Deployment does not have minimum availability.".into(),
                    self.now,
                )
            },
        );
        let current = conditions
            .iter()
            .find(|c| c.type_.as_deref() == Some("Progressing"))
            .cloned();
        let complete_before = replicas == updated
            && current.as_ref().and_then(|c| c.reason.as_deref()) == Some("NewReplicaSetAvailable");
        if !complete_before {
            let complete = updated == b.replicas
                && replicas == b.replicas
                && available == b.replicas
                && self.new_rs.is_some();
            let progressing = updated > old.updated_replicas.unwrap_or(0)
                || replicas - updated
                    < old.replicas.unwrap_or(0) - old.updated_replicas.unwrap_or(0)
                || ready > old.ready_replicas.unwrap_or(0)
                || available > old.available_replicas.unwrap_or(0);
            let subject = match &self.new_rs_name {
                Some(n) => format!("ReplicaSet \"{n}\""),
                None => format!("Deployment \"{}\"", name_of(self.d)),
            };
            if complete {
                let message = format!("{subject} has successfully progressed.");
                let c = condition(
                    "Progressing",
                    "True",
                    "NewReplicaSetAvailable",
                    message,
                    self.now,
                );
                set_condition(&mut conditions, c);
            } else if progressing {
                // Progress refreshes the condition even when its reason stays the same.
                let message = format!("{subject} is progressing.");
                let mut c = condition(
                    "Progressing",
                    "True",
                    "ReplicaSetUpdated",
                    message,
                    self.now,
                );
                if let Some(cur) = current.filter(|c| c.status.as_deref() == Some("True")) {
                    c.last_transition_time = cur.last_transition_time;
                }
                conditions.retain(|c| c.type_.as_deref() != Some("Progressing"));
                conditions.push(c);
            }
        }
        DeploymentStatus {
            observed_generation: self.d.metadata.generation,
            replicas: positive(replicas),
            updated_replicas: positive(updated),
            ready_replicas: positive(ready),
            available_replicas: positive(available),
            unavailable_replicas: positive(b.replicas - available),
            collision_count: old.collision_count,
            terminating_replicas: None,
            conditions: Some(conditions),
        }
    }
}

/// `NewRSNewReplicas` for a rolling update: how far the new ReplicaSet may grow given the
/// pods of every ReplicaSet (`all`, including the new one's `current`).
fn new_replicas(b: &Bounds, all: i32, current: i32) -> i32 {
    let max_total = b.replicas + b.max_surge;
    if all >= max_total {
        return current;
    }
    current + (max_total - all).min(b.replicas - current)
}

/// `cleanupUnhealthyReplicas` then `scaleDownOldReplicaSetsForRollingUpdate`: old
/// ReplicaSets shrink, unhealthy pods first, as far as `maxUnavailable` allows.
fn scale_down_olds(
    b: &Bounds,
    new: &ReplicaSet,
    olds: &[&ReplicaSet],
    scales: &mut BTreeMap<String, i32>,
) {
    let old_pods: i32 = olds.iter().map(|rs| spec_replicas(rs)).sum();
    // Availability is only known once every ReplicaSet has acted on its latest spec.
    let settled = |rs: &ReplicaSet| {
        rs.status.as_ref().and_then(|s| s.observed_generation) >= rs.metadata.generation
    };
    if old_pods == 0 || !settled(new) || !olds.iter().all(|rs| settled(rs)) {
        return;
    }
    let all_pods = old_pods + spec_replicas(new);
    let min_available = b.replicas - b.max_unavailable;
    let new_unavailable = spec_replicas(new) - status_field(new, |s| s.available_replicas);
    let max_scaled_down = all_pods - min_available - new_unavailable;
    if max_scaled_down <= 0 {
        return;
    }
    let mut targets: Vec<i32> = olds.iter().map(|rs| spec_replicas(rs)).collect();
    let mut cleaned = 0;
    for (i, rs) in olds.iter().enumerate() {
        if cleaned >= max_scaled_down {
            break;
        }
        let unhealthy = targets[i] - status_field(rs, |s| s.available_replicas);
        if targets[i] == 0 || unhealthy <= 0 {
            continue;
        }
        let down = (max_scaled_down - cleaned).min(unhealthy);
        targets[i] -= down;
        cleaned += down;
    }
    let available: i32 = olds
        .iter()
        .chain(std::iter::once(&new))
        .map(|rs| status_field(rs, |s| s.available_replicas))
        .sum();
    if available > min_available {
        let total = available - min_available;
        let mut done = 0;
        for target in targets.iter_mut() {
            if done >= total {
                break;
            }
            if *target == 0 {
                continue;
            }
            let down = (*target).min(total - done);
            *target -= down;
            done += down;
        }
    }
    for (rs, target) in olds.iter().zip(targets) {
        if target != spec_replicas(rs) {
            scales.insert(name_of(*rs).into(), target);
        }
    }
}

/// `DeploymentComplete`: every replica updated and available, and this generation observed.
fn is_complete(d: &Deployment, status: &DeploymentStatus, b: &Bounds) -> bool {
    status.updated_replicas.unwrap_or(0) == b.replicas
        && status.replicas.unwrap_or(0) == b.replicas
        && status.available_replicas.unwrap_or(0) == b.replicas
        && status.observed_generation >= d.metadata.generation
}

/// `cleanupDeployment`: deletes the oldest empty old ReplicaSets beyond `revisionHistoryLimit`.
fn prune_history(d: &Deployment, olds: &[&ReplicaSet], plan: &mut Plan) {
    let limit = d.spec.revision_history_limit.unwrap_or(10).max(0);
    let excess = olds
        .len()
        .saturating_sub(usize::try_from(limit).unwrap_or(0));
    let mut by_revision: Vec<&&ReplicaSet> = olds.iter().collect();
    by_revision.sort_by_key(|rs| (revision_of(&rs.metadata), name_of(**rs)));
    for rs in by_revision.into_iter().take(excess) {
        let empty = spec_replicas(rs) == 0 && status_field(rs, |s| Some(s.replicas)) == 0;
        let observed =
            rs.status.as_ref().and_then(|s| s.observed_generation) >= rs.metadata.generation;
        if empty && observed {
            plan.push(Action::Delete(ObjectRef::of(*rs)));
        }
    }
}

/// The ReplicaSet for a Deployment's current template.
fn new_replica_set(
    d: &Deployment,
    hash: &str,
    name: &str,
    replicas: i32,
    revision: i64,
    b: &Bounds,
) -> ReplicaSet {
    let spec = d.spec.clone();
    let mut template = spec.template;
    let template_meta = template.metadata.get_or_insert_default();
    template_meta
        .labels
        .get_or_insert_default()
        .insert(POD_TEMPLATE_HASH.into(), hash.into());
    let labels = template_meta.labels.clone();
    let mut selector: LabelSelector = spec.selector;
    selector
        .match_labels
        .get_or_insert_default()
        .insert(POD_TEMPLATE_HASH.into(), hash.into());
    ReplicaSet {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(namespace_of(d).into()),
            labels,
            annotations: Some(
                [
                    (REVISION.to_string(), revision.to_string()),
                    (DESIRED_REPLICAS.to_string(), b.replicas.to_string()),
                    (
                        MAX_REPLICAS.to_string(),
                        (b.replicas + b.max_surge).to_string(),
                    ),
                ]
                .into(),
            ),
            owner_references: Some(vec![controller_reference(d)]),
            ..Default::default()
        },
        spec: ReplicaSetSpec {
            replicas: Some(replicas),
            min_ready_seconds: spec.min_ready_seconds,
            selector,
            template: Some(template),
        },
        status: None,
    }
}

fn scaling_event(d: &Deployment, message: String) -> EventNote {
    EventNote::normal(COMPONENT, ObjectRef::of(d), "ScalingReplicaSet", message)
}

/// A Deployment condition that changed `now`.
fn condition(
    kind: &str,
    status: &str,
    reason: &str,
    message: String,
    now: Timestamp,
) -> DeploymentCondition {
    DeploymentCondition {
        type_: Some(kind.into()),
        status: Some(status.into()),
        reason: Some(reason.into()),
        message: Some(message),
        last_update_time: Some(time(now)),
        last_transition_time: Some(time(now)),
    }
}

/// `SetDeploymentCondition`: same status and reason keep the existing condition; otherwise
/// the new one replaces it at the end of the list, keeping `lastTransitionTime` if the status
/// did not change.
fn set_condition(conditions: &mut Vec<DeploymentCondition>, mut new: DeploymentCondition) {
    if let Some(current) = conditions.iter().find(|c| c.type_ == new.type_) {
        if current.status == new.status && current.reason == new.reason {
            return;
        }
        if current.status == new.status {
            new.last_transition_time = current.last_transition_time.clone();
        }
    }
    conditions.retain(|c| c.type_ != new.type_);
    conditions.push(new);
}

#[cfg(test)]
mod tests;
