//! Fixtures shared by the status tests: conditions, Work statuses, bindings, decisions.

use flotilla_api::conditions::{NewCondition, set_condition};
use flotilla_api::placement::BindingState;
use flotilla_api::placement::binding::{ResourceBindingSpec, ResourceBindingStatus};
use flotilla_api::placement::snapshots::{ClusterDecision, SchedulingPolicySnapshotStatus};
use flotilla_api::placement::status::ResourceIdentifier;
use flotilla_api::placement::work::{ManifestCondition, WorkResourceIdentifier, WorkStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use k8s_openapi::jiff::{SignedDuration, Timestamp};

/// The time of every roll-up.
pub fn now() -> Timestamp {
    "2026-03-01T12:00:00Z".parse().unwrap()
}

/// An hour before [`now`].
pub fn earlier() -> Timestamp {
    now() - SignedDuration::from_hours(1)
}

/// Condition `type_` with `status` and `reason`, observed for `generation`, set at
/// [`earlier`].
pub fn cond(type_: &str, status: &str, reason: &str, generation: i64) -> Condition {
    cond_msg(type_, status, reason, "", generation)
}

/// [`cond`] with a message.
pub fn cond_msg(
    type_: &str,
    status: &str,
    reason: &str,
    message: &str,
    generation: i64,
) -> Condition {
    let mut out = Vec::new();
    set_condition(
        &mut out,
        NewCondition {
            type_,
            status,
            reason,
            message: message.into(),
            observed_generation: Some(generation),
        },
        earlier(),
    );
    out.remove(0)
}

/// A manifest entry of a Work status.
pub fn manifest(
    kind: &str,
    namespace: &str,
    name: &str,
    conditions: Vec<Condition>,
) -> ManifestCondition {
    ManifestCondition {
        identifier: WorkResourceIdentifier {
            ordinal: 0,
            group: if kind == "Deployment" {
                "apps".into()
            } else {
                String::new()
            },
            version: "v1".into(),
            kind: kind.into(),
            resource: format!("{}s", kind.to_lowercase()),
            namespace: namespace.into(),
            name: name.into(),
        },
        conditions,
        drift_details: None,
        diff_details: None,
    }
}

/// A Work status.
pub fn work_status(conditions: Vec<Condition>, manifests: Vec<ManifestCondition>) -> WorkStatus {
    WorkStatus {
        conditions,
        manifest_conditions: manifests,
    }
}

/// The resource identifier of a fixture manifest.
pub fn resource(kind: &str, namespace: &str, name: &str) -> ResourceIdentifier {
    ResourceIdentifier {
        group: (kind == "Deployment").then(|| "apps".to_string()),
        version: "v1".into(),
        kind: kind.into(),
        name: name.into(),
        namespace: (!namespace.is_empty()).then(|| namespace.to_string()),
        envelope: None,
    }
}

/// The `(type, status, reason)` of each condition, in order.
pub fn summary(conditions: &[Condition]) -> Vec<(&str, &str, &str)> {
    conditions
        .iter()
        .map(|c| (c.type_.as_str(), c.status.as_str(), c.reason.as_str()))
        .collect()
}

/// The latest policy snapshot's name.
pub const POLICY_SNAPSHOT: &str = "crp-1";
/// The latest resource snapshot's name.
pub const LATEST: &str = "crp-2-snapshot";
/// An older resource snapshot's name.
pub const OLDER: &str = "crp-1-snapshot";

/// A decision on `cluster`.
pub fn decision(cluster: &str, selected: bool) -> ClusterDecision {
    ClusterDecision {
        cluster_name: cluster.into(),
        selected,
        cluster_score: None,
        reason: if selected {
            format!("picked {cluster}")
        } else {
            format!("{cluster} is tainted")
        },
    }
}

/// A policy snapshot status with `decisions`, Scheduled True (fulfilled) for generation 1.
pub fn scheduled(decisions: Vec<ClusterDecision>) -> SchedulingPolicySnapshotStatus {
    SchedulingPolicySnapshotStatus {
        observed_crp_generation: 1,
        conditions: vec![cond_msg(
            "Scheduled",
            "True",
            "SchedulingPolicyFulfilled",
            "found all cluster needed as specified by the scheduling policy, found 2 cluster(s)",
            1,
        )],
        target_clusters: decisions,
    }
}

/// A Bound binding spec on `cluster` under the latest policy snapshot, naming `snapshot`.
pub fn spec(cluster: &str, snapshot: &str) -> ResourceBindingSpec {
    ResourceBindingSpec {
        state: BindingState::Bound,
        resource_snapshot_name: snapshot.into(),
        resource_override_snapshots: vec![],
        cluster_resource_override_snapshots: vec![],
        scheduling_policy_snapshot_name: POLICY_SNAPSHOT.into(),
        target_cluster: cluster.into(),
        cluster_decision: Default::default(),
        apply_strategy: None,
        delete_strategy: None,
    }
}

/// The generation of every fixture binding.
pub const BINDING_GEN: i64 = 3;

/// A binding status whose chain is True up to (not including) `stop`, which has `stop_status`
/// (no condition at all when `None`); `stop` empty: everything True.
pub fn chain(stop: &str, stop_status: Option<&str>) -> ResourceBindingStatus {
    let all = [
        ("RolloutStarted", "RolloutStarted"),
        ("Overridden", "NoOverrideSpecified"),
        ("WorkSynchronized", "AllWorkSynced"),
        ("Applied", "AllWorkHaveBeenApplied"),
        ("Available", "AllWorkAreAvailable"),
    ];
    let mut conditions = Vec::new();
    for (type_, reason) in all {
        if type_ == stop {
            if let Some(status) = stop_status {
                let message = format!("{type_} is {status} here");
                conditions.push(cond_msg(
                    type_,
                    status,
                    &format!("{type_}{status}"),
                    &message,
                    BINDING_GEN,
                ));
            }
            break;
        }
        conditions.push(cond(type_, "True", reason, BINDING_GEN));
    }
    ResourceBindingStatus {
        conditions,
        ..Default::default()
    }
}

/// A placement whose status is rolled up, built field by field.
pub struct Case {
    /// The placement kind.
    pub kind: flotilla_placement::status::PlacementKind,
    /// The placement's generation.
    pub generation: i64,
    /// The placement's policy.
    pub policy: Option<flotilla_api::placement::policy::PlacementPolicy>,
    /// The placement's strategy.
    pub strategy: Option<flotilla_api::placement::strategy::RolloutStrategy>,
    /// The latest policy snapshot's status, if there is a snapshot.
    pub snapshot: Option<SchedulingPolicySnapshotStatus>,
    /// The bindings: spec, status, resource index, deleting.
    pub bindings: Vec<(
        ResourceBindingSpec,
        ResourceBindingStatus,
        Option<&'static str>,
        bool,
    )>,
    /// The previous status.
    pub previous: flotilla_api::placement::status::PlacementStatus,
}

impl Case {
    /// A ClusterResourcePlacement at generation 1 with a PickAll policy picking `decisions`.
    pub fn new(decisions: Vec<ClusterDecision>) -> Case {
        Case {
            kind: flotilla_placement::status::PlacementKind::ClusterResourcePlacement,
            generation: 1,
            policy: None,
            strategy: None,
            snapshot: Some(scheduled(decisions)),
            bindings: Vec::new(),
            previous: Default::default(),
        }
    }

    /// Adds a live binding on `cluster` naming `snapshot` with `status`.
    pub fn binding(mut self, cluster: &str, snapshot: &str, status: ResourceBindingStatus) -> Case {
        self.bindings
            .push((spec(cluster, snapshot), status, Some("2"), false));
        self
    }

    /// Rolls the status up.
    pub fn run(&self) -> flotilla_api::placement::status::PlacementStatus {
        use flotilla_placement::status::{
            LatestResources, PlacementBinding, PlacementInput, PolicySnapshotView, placement_status,
        };
        let bindings: Vec<PlacementBinding<'_>> = self
            .bindings
            .iter()
            .map(|(spec, status, index, deleting)| PlacementBinding {
                generation: BINDING_GEN,
                deleting: *deleting,
                spec,
                status,
                resource_index: *index,
            })
            .collect();
        let selected = [
            resource("Namespace", "", "app"),
            resource("Deployment", "app", "web"),
        ];
        let resources_at =
            |index: &str| vec![resource("ConfigMap", "app", &format!("from-index-{index}"))];
        placement_status(&PlacementInput {
            kind: self.kind,
            generation: self.generation,
            policy: self.policy.as_ref(),
            strategy: self.strategy.as_ref(),
            latest: LatestResources {
                snapshot: LATEST,
                index: "2",
                selected: &selected,
            },
            resources_at: &resources_at,
            policy_snapshot: self.snapshot.as_ref().map(|status| PolicySnapshotView {
                name: POLICY_SNAPSHOT,
                generation: 1,
                status,
            }),
            bindings: &bindings,
            previous: &self.previous,
            now: now(),
        })
    }
}

/// The placement-level conditions of `status` as `(type, status, reason)`.
pub fn placement_conditions(
    status: &flotilla_api::placement::status::PlacementStatus,
) -> Vec<(&str, &str, &str)> {
    summary(status.conditions.as_deref().unwrap_or_default())
}

/// The per-cluster status of `cluster`.
pub fn cluster<'s>(
    status: &'s flotilla_api::placement::status::PlacementStatus,
    name: &str,
) -> &'s flotilla_api::placement::status::PerClusterPlacementStatus {
    status
        .placement_statuses
        .as_deref()
        .unwrap_or_default()
        .iter()
        .find(|c| c.cluster_name.as_deref() == Some(name))
        .unwrap_or_else(|| panic!("no status for {name}"))
}
