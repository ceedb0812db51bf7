//! One RollingUpdate round (KubeFleet's `pickBindingsToRoll` and `determineBindingsToUpdate`).
//!
//! 1. Bound bindings that failed and are stale are always updated: they are unavailable
//!    already, so updating them costs no availability.
//! 2. `maxRemove = (ready − ready and being deleted) − (N − maxUnavailable)`: that many ready
//!    clusters may go unavailable. The slots go first to Unscheduled bindings (deleted), then
//!    to stale Bound bindings (updated), each group in name order.
//! 3. `maxAdd = (N + maxSurge) − can become ready`: that many Scheduled bindings become Bound,
//!    in name order.
//!
//! Stale Bound and Scheduled bindings left over are blocked (`RolloutStarted` False); Bound
//! bindings with the latest resources are current (`RolloutStarted` True).

use k8s_openapi::jiff::Timestamp;

use super::decision::{Action, Verdict};
use super::{Limits, Readiness, RolloutBinding};
use flotilla_api::placement::BindingState;

/// The counts of one round.
#[derive(Default)]
struct Tally {
    /// Ready bindings (Bound or Unscheduled, being deleted or not).
    ready: usize,
    /// Ready bindings being deleted: they may vanish at any time.
    ready_deleting: usize,
    /// Bindings holding resources that may become ready without being touched.
    can_become_ready: usize,
    /// The earliest end of an unavailable period.
    recheck_at: Option<Timestamp>,
}

impl Tally {
    /// Counts a binding that holds resources on its cluster (Bound or Unscheduled).
    fn holder(&mut self, binding: &RolloutBinding) {
        let readiness = binding.readiness;
        if readiness.is_ready() {
            self.ready += 1;
            if binding.deleting {
                self.ready_deleting += 1;
            }
        }
        if let Readiness::Untracked { ready_at } = readiness {
            self.recheck_at = Some(self.recheck_at.map_or(ready_at, |t| t.min(ready_at)));
        }
        if readiness.can_become_ready() {
            self.can_become_ready += 1;
        }
    }

    /// How many ready clusters may go unavailable this round (negative: already too many are
    /// unavailable).
    fn max_remove(&self, limits: &Limits) -> i64 {
        let available = signed(self.ready) - signed(self.ready_deleting);
        available - (signed(limits.target) - signed(limits.max_unavailable))
    }

    /// How many Scheduled bindings may be bound this round.
    fn max_add(&self, limits: &Limits) -> i64 {
        signed(limits.target) + signed(limits.max_surge) - signed(self.can_become_ready)
    }

    /// Why a binding waits for availability.
    fn unavailable_message(&self, limits: &Limits, max_remove: i64) -> String {
        if max_remove > 0 {
            return format!(
                "waiting: maxUnavailable {} let {max_remove} more cluster(s) become unavailable this round and they went to bindings ahead in line",
                limits.max_unavailable
            );
        }
        let available = self.ready - self.ready_deleting;
        let unavailable = limits.target.saturating_sub(available);
        let deleting = match self.ready_deleting {
            0 => String::new(),
            n => format!(" ({n} more being removed)"),
        };
        format!(
            "waiting: {unavailable} of {} clusters unavailable{deleting}, maxUnavailable {}",
            limits.target, limits.max_unavailable
        )
    }

    /// Why a Scheduled binding waits for room.
    fn surge_message(&self, limits: &Limits, max_add: i64) -> String {
        if max_add > 0 {
            return format!(
                "waiting: maxSurge {} let {max_add} more cluster(s) receive the resources this round and they went to bindings ahead in line",
                limits.max_surge
            );
        }
        format!(
            "waiting: {} clusters hold the resources, at most {} allowed ({} targeted, maxSurge {})",
            self.can_become_ready,
            limits.target + limits.max_surge,
            limits.target,
            limits.max_surge
        )
    }
}

/// A count as a signed number for the round's arithmetic.
fn signed(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// How the round sees one binding.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    /// Being deleted: left alone.
    Deleting,
    /// Unscheduled: to delete when availability allows.
    Leaving,
    /// Scheduled: to bind when the surge allows.
    Arriving,
    /// Bound with the latest resources.
    Current,
    /// Bound, stale and failed: always updated.
    Failed,
    /// Bound and stale: to update when availability allows.
    Stale,
}

/// Classifies `binding` and counts it in `tally`.
fn classify(binding: &RolloutBinding, tally: &mut Tally) -> Class {
    if binding.state != BindingState::Scheduled {
        tally.holder(binding);
    }
    match binding.state {
        _ if binding.deleting => Class::Deleting,
        BindingState::Unscheduled => Class::Leaving,
        BindingState::Scheduled => Class::Arriving,
        BindingState::Bound if binding.up_to_date => Class::Current,
        BindingState::Bound if binding.readiness.is_failed() => Class::Failed,
        BindingState::Bound => Class::Stale,
    }
}

/// Takes one of the `left` grants, if any is left.
fn take(left: &mut usize) -> bool {
    let granted = *left > 0;
    *left = left.saturating_sub(1);
    granted
}

/// Runs one round over `bindings` (sorted by name) within `limits`; returns one verdict per
/// binding, in the same order, and the earliest end of an unavailable period.
pub(super) fn round(
    bindings: &[&RolloutBinding],
    limits: Limits,
) -> (Vec<Verdict>, Option<Timestamp>) {
    let mut tally = Tally::default();
    let classes: Vec<Class> = bindings.iter().map(|b| classify(b, &mut tally)).collect();
    let count = |class: Class| classes.iter().filter(|c| **c == class).count();

    let max_remove = tally.max_remove(&limits);
    let slots = usize::try_from(max_remove).unwrap_or(0);
    let mut deletions = slots.min(count(Class::Leaving));
    let mut updates = slots - deletions;
    let max_add = tally.max_add(&limits);
    let mut binds = usize::try_from(max_add).unwrap_or(0);

    let verdicts = bindings
        .iter()
        .zip(classes)
        .map(|(binding, class)| {
            let action = match class {
                Class::Deleting => Action::Wait {
                    message: "the binding is being deleted".to_string(),
                },
                Class::Current => Action::Current,
                Class::Failed => Action::Update,
                Class::Leaving if take(&mut deletions) => Action::Delete,
                Class::Leaving => Action::Wait {
                    message: tally.unavailable_message(&limits, max_remove),
                },
                Class::Stale if take(&mut updates) => Action::Update,
                Class::Stale => Action::Blocked {
                    message: tally.unavailable_message(&limits, max_remove),
                },
                Class::Arriving if take(&mut binds) => Action::Bind,
                Class::Arriving => Action::Blocked {
                    message: tally.surge_message(&limits, max_add),
                },
            };
            Verdict {
                binding: binding.name.clone(),
                action,
            }
        })
        .collect();
    (verdicts, tally.recheck_at)
}
