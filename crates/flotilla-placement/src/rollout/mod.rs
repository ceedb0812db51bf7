//! KubeFleet's RollingUpdate rollout (`pkg/controllers/rollout/`) as one pure function:
//! [`rollout`] takes the placement's policy and strategy, one [`RolloutBinding`] per binding
//! and the time, and returns a [`RolloutPlan`]: which Scheduled bindings to bind, which Bound
//! bindings to move to the latest resources, which Unscheduled bindings to delete, which are
//! held back (with `RolloutStarted` False and why), and when to look again.
//!
//! The numbers ([`Limits`]): `N` is the Scheduled and Bound binding count for PickAll,
//! `len(clusterNames)` for PickFixed and `numberOfClusters` for PickN; `maxUnavailable` and
//! `maxSurge` are counts or percentages of `N` rounded up (default 25% each). A binding's
//! [`Readiness`] comes from its conditions for its current generation: ready when `Available`
//! or `DiffReported` is True, but resources whose availability cannot be tracked only once
//! `unavailablePeriodSeconds` (default 60) have passed since `Available` turned True.
//! The round's rules are in `round.rs`.
//!
//! Under the External strategy the rollout changes nothing: staged update runs drive it.
//!
//! Departures from KubeFleet: a False `Applied`/`DiffReported` whose reason says the member
//! has not reported yet (`ApplyInProgress`, `DiffReportInProgress`) is pending, not failed, so
//! a cluster being brought up keeps its surge slot; a binding with a False condition counts as failed even if
//! another condition says it is ready (KubeFleet counts it both ways; the work generator never
//! sets both); a deleting Scheduled binding is left alone instead of bound; two live bindings
//! on one cluster make the round wait (KubeFleet reports an error), as a deleting binding
//! sharing a cluster with another binding does in both; a string of digits is accepted as a
//! count (KubeFleet's arithmetic reads it as 0); the plan's `recheck_at` is the earliest
//! end of an unavailable period only, not KubeFleet's blanket requeue after the period; and
//! [`bound_at_creation`] lets the scheduler create Bound the new bindings a round would bind
//! at once, where KubeFleet creates them Scheduled and binds them in the next round.

mod cleanup;
mod decision;
mod limits;
mod readiness;
mod round;

use flotilla_api::placement::policy::PlacementPolicy;
use flotilla_api::placement::strategy::{RolloutStrategy, RolloutStrategyType};
use flotilla_api::placement::{BindingState, ClusterResourceBinding};
use k8s_openapi::jiff::{SignedDuration, Timestamp};

pub use decision::{Action, RolloutPlan, Verdict};
pub use limits::{InvalidLimit, Limits, target_number, unavailable_period};
pub use readiness::Readiness;

/// How long a round that waits for a binding's deletion waits before looking again
/// (KubeFleet's 5 seconds).
const CLEANUP_RECHECK: SignedDuration = SignedDuration::from_secs(5);

/// What the rollout needs to know about one binding of the placement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RolloutBinding {
    /// The binding's name.
    pub name: String,
    /// `spec.targetCluster`.
    pub cluster: String,
    /// `spec.state`.
    pub state: BindingState,
    /// Whether the binding has a deletion timestamp.
    pub deleting: bool,
    /// Whether the binding already names the latest resource snapshot and the override
    /// snapshots that apply to its cluster.
    pub up_to_date: bool,
    /// How ready its resources are, from its conditions.
    pub readiness: Readiness,
}

impl RolloutBinding {
    /// The view of `binding` at `now`; `up_to_date` as for the field of that name, and
    /// `unavailable_period` from [`unavailable_period`].
    pub fn of(
        binding: &ClusterResourceBinding,
        up_to_date: bool,
        now: Timestamp,
        unavailable_period: SignedDuration,
    ) -> RolloutBinding {
        let conditions = binding
            .status
            .as_ref()
            .map_or(&[][..], |s| &s.conditions[..]);
        let generation = binding.metadata.generation.unwrap_or_default();
        RolloutBinding {
            name: binding.metadata.name.clone().unwrap_or_default(),
            cluster: binding.spec.target_cluster.clone(),
            state: binding.spec.state,
            deleting: binding.metadata.deletion_timestamp.is_some(),
            up_to_date,
            readiness: Readiness::judge(conditions, generation, now, unavailable_period),
        }
    }
}

/// Everything one rollout round looks at.
#[derive(Clone, Copy, Debug)]
pub struct RolloutInput<'a> {
    /// The placement's policy (`PlacementPolicy::default()`, PickAll, when it has none).
    pub policy: &'a PlacementPolicy,
    /// The placement's rollout strategy; RollingUpdate with defaults when `None`.
    pub strategy: Option<&'a RolloutStrategy>,
    /// Every binding of the placement.
    pub bindings: &'a [RolloutBinding],
    /// The time of the round.
    pub now: Timestamp,
}

/// Runs one rollout round. Fails only on a `maxUnavailable` or `maxSurge` that is neither a
/// count nor a percentage.
pub fn rollout(input: &RolloutInput<'_>) -> Result<RolloutPlan, InvalidLimit> {
    let mut bindings: Vec<&RolloutBinding> = input.bindings.iter().collect();
    bindings.sort_by(|a, b| a.name.cmp(&b.name));
    let strategy_type = input.strategy.and_then(|s| s.type_).unwrap_or_default();
    if strategy_type == RolloutStrategyType::External {
        return Ok(waiting(
            &bindings,
            None,
            "the rollout is controlled by an external controller (staged update runs)",
            None,
        ));
    }
    let targeted = bindings
        .iter()
        .filter(|b| matches!(b.state, BindingState::Scheduled | BindingState::Bound))
        .count();
    let config = input.strategy.and_then(|s| s.rolling_update.as_ref());
    let limits = Limits::resolve(config, target_number(input.policy, targeted))?;
    if let Some(message) = cleanup::conflict(&bindings) {
        let recheck = input.now.saturating_add(CLEANUP_RECHECK).ok();
        return Ok(waiting(&bindings, Some(limits), &message, recheck));
    }
    let (verdicts, recheck_at) = round::round(&bindings, limits);
    Ok(RolloutPlan {
        limits: Some(limits),
        verdicts,
        recheck_at,
    })
}

/// The bindings about to be created (`arriving`: Scheduled, for clusters the scheduler just
/// picked) that a round over the placement's bindings (`input.bindings`) and them would bind
/// at once, in name order. The scheduler creates these already Bound, which spares each a
/// write and the placement a round; any other arriving binding is created Scheduled and
/// waits for the next round, as before. Binding this subset of a round's plan keeps its
/// limits: a bind never costs availability, and the round granted the surge room.
pub fn bound_at_creation(
    input: &RolloutInput<'_>,
    arriving: &[RolloutBinding],
) -> Result<Vec<String>, InvalidLimit> {
    let bindings: Vec<RolloutBinding> = input.bindings.iter().chain(arriving).cloned().collect();
    let plan = rollout(&RolloutInput {
        bindings: &bindings,
        ..*input
    })?;
    let mut bound: Vec<String> = arriving
        .iter()
        .filter(|b| plan.action(&b.name) == Some(&Action::Bind))
        .map(|b| b.name.clone())
        .collect();
    bound.sort();
    Ok(bound)
}

/// A plan that leaves every binding alone for `message`.
fn waiting(
    bindings: &[&RolloutBinding],
    limits: Option<Limits>,
    message: &str,
    recheck_at: Option<Timestamp>,
) -> RolloutPlan {
    let verdicts = bindings
        .iter()
        .map(|b| Verdict {
            binding: b.name.clone(),
            action: Action::Wait {
                message: message.to_string(),
            },
        })
        .collect();
    RolloutPlan {
        limits,
        verdicts,
        recheck_at,
    }
}
