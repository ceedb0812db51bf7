//! Fixtures shared by the rollout tests: bindings, policies and strategies.

use flotilla_api::placement::BindingState;
use flotilla_api::placement::policy::{PlacementPolicy, PlacementType};
use flotilla_api::placement::strategy::{
    RollingUpdateConfig, RolloutStrategy, RolloutStrategyType,
};
use flotilla_placement::rollout::{
    Action, Readiness, RolloutBinding, RolloutInput, RolloutPlan, rollout,
};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use k8s_openapi::jiff::Timestamp;

/// The time every table test runs at.
pub fn now() -> Timestamp {
    "2026-03-01T12:00:00Z".parse().unwrap()
}

/// A binding on `cluster` named `crp-<cluster>`: Bound, current and available.
pub fn bound(cluster: &str) -> RolloutBinding {
    RolloutBinding {
        name: format!("crp-{cluster}"),
        cluster: cluster.to_string(),
        state: BindingState::Bound,
        deleting: false,
        up_to_date: true,
        readiness: Readiness::Available,
    }
}

/// A Scheduled binding on `cluster`.
pub fn scheduled(cluster: &str) -> RolloutBinding {
    RolloutBinding {
        state: BindingState::Scheduled,
        up_to_date: false,
        readiness: Readiness::Pending,
        ..bound(cluster)
    }
}

/// An Unscheduled binding on `cluster`, still available.
pub fn unscheduled(cluster: &str) -> RolloutBinding {
    RolloutBinding {
        state: BindingState::Unscheduled,
        ..bound(cluster)
    }
}

/// Changes to a fixture binding.
pub trait Tweak {
    /// Not on the latest resources.
    fn stale(self) -> Self;
    /// Being deleted.
    fn deleting(self) -> Self;
    /// With `readiness`.
    fn ready(self, readiness: Readiness) -> Self;
}

impl Tweak for RolloutBinding {
    fn stale(self) -> Self {
        RolloutBinding {
            up_to_date: false,
            ..self
        }
    }
    fn deleting(self) -> Self {
        RolloutBinding {
            deleting: true,
            ..self
        }
    }
    fn ready(self, readiness: Readiness) -> Self {
        RolloutBinding { readiness, ..self }
    }
}

/// A PickN policy for `n` clusters.
pub fn pick_n(n: i32) -> PlacementPolicy {
    PlacementPolicy {
        placement_type: Some(PlacementType::PickN),
        number_of_clusters: Some(n),
        ..Default::default()
    }
}

/// A RollingUpdate strategy with `maxUnavailable` and `maxSurge` as given (`None`: default).
pub fn rolling(
    max_unavailable: Option<IntOrString>,
    max_surge: Option<IntOrString>,
) -> RolloutStrategy {
    RolloutStrategy {
        type_: Some(RolloutStrategyType::RollingUpdate),
        rolling_update: Some(RollingUpdateConfig {
            max_unavailable,
            max_surge,
            unavailable_period_seconds: None,
        }),
        ..Default::default()
    }
}

/// An absolute limit.
pub fn int(n: i32) -> Option<IntOrString> {
    Some(IntOrString::Int(n))
}

/// A string limit, e.g. a percentage.
pub fn text(s: &str) -> Option<IntOrString> {
    Some(IntOrString::String(s.to_string()))
}

/// One round at [`now`].
pub fn run(
    policy: &PlacementPolicy,
    strategy: &RolloutStrategy,
    bindings: &[RolloutBinding],
) -> RolloutPlan {
    rollout(&RolloutInput {
        policy,
        strategy: Some(strategy),
        bindings,
        now: now(),
    })
    .unwrap()
}

/// Whether an action binds.
pub fn binds(a: &Action) -> bool {
    matches!(a, Action::Bind)
}
/// Whether an action updates.
pub fn updates(a: &Action) -> bool {
    matches!(a, Action::Update)
}
/// Whether an action deletes.
pub fn deletes(a: &Action) -> bool {
    matches!(a, Action::Delete)
}
/// Whether an action blocks.
pub fn blocks(a: &Action) -> bool {
    matches!(a, Action::Blocked { .. })
}
/// Whether an action waits.
pub fn waits(a: &Action) -> bool {
    matches!(a, Action::Wait { .. })
}
/// Whether an action finds the binding current.
pub fn current(a: &Action) -> bool {
    matches!(a, Action::Current)
}

/// The message of binding `name`'s blocked or waiting action.
pub fn message<'p>(plan: &'p RolloutPlan, name: &str) -> &'p str {
    match plan.action(name) {
        Some(Action::Blocked { message } | Action::Wait { message }) => message,
        other => panic!("{name} is neither blocked nor waiting: {other:?}"),
    }
}
