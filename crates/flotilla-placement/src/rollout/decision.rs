//! What one rollout round decides: an action for every binding, the limits it worked with,
//! and when to look again.

use flotilla_api::conditions::NewCondition;
use k8s_openapi::jiff::Timestamp;

use super::Limits;
use crate::status::{ConditionType, reason};

/// What the round does with one binding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// A `Scheduled` binding becomes `Bound` to the latest resource snapshot and overrides.
    Bind,
    /// A `Bound` binding moves to the latest resource snapshot and overrides.
    Update,
    /// An `Unscheduled` binding is deleted (its resources leave the cluster).
    Delete,
    /// A `Bound` binding that already has the latest resources: nothing to change.
    Current,
    /// A `Scheduled` or stale `Bound` binding the strategy holds back this round.
    Blocked {
        /// Why, with the numbers.
        message: String,
    },
    /// A binding the round leaves alone and reports nothing on: one being deleted, an
    /// `Unscheduled` one whose removal must wait, or any under the External strategy.
    Wait {
        /// Why, with the numbers.
        message: String,
    },
}

/// The message of the `RolloutStarted` condition on a binding the rollout moved or found
/// current (KubeFleet's).
const STARTED_MESSAGE: &str =
    "Detected the new changes on the resources and started the rollout process";

impl Action {
    /// The `RolloutStarted` condition the binding gets, observed at `generation` (the
    /// binding's generation after the spec change, for [`Action::Bind`] and
    /// [`Action::Update`]): True for bound, updated and current bindings, False with
    /// `RolloutNotStartedYet` for blocked ones, none otherwise.
    pub fn rollout_started(&self, generation: i64) -> Option<NewCondition<'static>> {
        let (status, reason, message) = match self {
            Action::Bind | Action::Update | Action::Current => {
                ("True", reason::ROLLOUT_STARTED, STARTED_MESSAGE.to_string())
            }
            Action::Blocked { message } => {
                ("False", reason::ROLLOUT_NOT_STARTED_YET, message.clone())
            }
            Action::Delete | Action::Wait { .. } => return None,
        };
        Some(NewCondition {
            type_: ConditionType::RolloutStarted.as_str(),
            status,
            reason,
            message,
            observed_generation: Some(generation),
        })
    }
}

/// The action for one binding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// The binding's name.
    pub binding: String,
    /// What to do with it.
    pub action: Action,
}

/// The outcome of one round.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RolloutPlan {
    /// The limits the round applied; `None` under the External strategy.
    pub limits: Option<Limits>,
    /// One verdict per binding, sorted by binding name.
    pub verdicts: Vec<Verdict>,
    /// When to run the rollout again even if nothing changes: the earliest end of an
    /// unavailable period, or the end of a wait for a binding's deletion.
    pub recheck_at: Option<Timestamp>,
}

impl RolloutPlan {
    /// The names of the bindings whose action satisfies `pick`, in name order.
    pub fn names(&self, pick: impl Fn(&Action) -> bool) -> Vec<&str> {
        self.verdicts
            .iter()
            .filter(|v| pick(&v.action))
            .map(|v| v.binding.as_str())
            .collect()
    }

    /// The action for binding `name`, if it was in the input: a binary search of the
    /// verdicts (sorted by name), as the controller asks for every binding of the round.
    pub fn action(&self, name: &str) -> Option<&Action> {
        self.verdicts
            .binary_search_by(|v| v.binding.as_str().cmp(name))
            .ok()
            .map(|i| &self.verdicts[i].action)
    }
}
