//! Collecting a cycle's verdicts and binding changes into a [`Decision`], and turning the
//! clusters a PickAll or PickN cycle picks into binding changes (KubeFleet's
//! `crossReferencePickedClustersAndDeDupBindings`).

use std::collections::{HashMap, HashSet};

use super::BindingState;
use super::binding::{BindingView, Bindings};
use super::decision::{BindingChange, Decision, ScheduledCondition};
use super::reason;
use super::{ClusterDecision, ClusterScore};

/// What the pass over the fleet found about one cluster.
pub(crate) enum Verdict<'a> {
    /// It has an active binding, so it stays selected.
    Kept(&'a BindingView),
    /// A filter rejected it.
    Rejected(ClusterDecision),
    /// It passed the filters; its name.
    Passed(&'a str),
}

/// A decision under construction.
pub(crate) struct Outcome {
    selected: Vec<ClusterDecision>,
    runners_up: Vec<ClusterDecision>,
    rejected: Vec<ClusterDecision>,
    dangling: Vec<BindingChange>,
    creates: Vec<BindingChange>,
    refreshes: Vec<BindingChange>,
    unschedules: Vec<BindingChange>,
}

impl Outcome {
    /// An outcome that starts by unscheduling the dangling bindings.
    pub fn new(bindings: &Bindings<'_>) -> Self {
        let dangling = bindings
            .dangling
            .iter()
            .map(|b| unschedule(b, reason::dangling(&b.cluster)))
            .collect();
        Self {
            selected: Vec::new(),
            runners_up: Vec::new(),
            rejected: Vec::new(),
            dangling,
            creates: Vec::new(),
            refreshes: Vec::new(),
            unschedules: Vec::new(),
        }
    }

    /// The cluster of an active binding stays selected, with the score it was picked with.
    pub fn keep(&mut self, binding: &BindingView) {
        self.selected.push(picked(&binding.cluster, binding.score));
    }

    /// A cluster picked this cycle, with its decision (see [`picked`]).
    pub fn select(&mut self, decision: ClusterDecision) {
        self.selected.push(decision);
    }

    /// Clusters that passed the filters but ranked below the picked ones, in rank order (see
    /// [`runner_up`]).
    pub fn runners_up(&mut self, decisions: impl IntoIterator<Item = ClusterDecision>) {
        self.runners_up.extend(decisions);
    }

    /// A cluster that is not selected (see [`rejected`]).
    pub fn reject(&mut self, decision: ClusterDecision) {
        self.rejected.push(decision);
    }

    /// Create a Scheduled binding carrying `decision`.
    pub fn create(&mut self, decision: ClusterDecision) {
        self.creates.push(BindingChange::Create { decision });
    }

    /// Move `binding` to the current snapshot in `state`, carrying `decision`.
    pub fn refresh(
        &mut self,
        binding: &BindingView,
        state: BindingState,
        decision: ClusterDecision,
    ) {
        self.refreshes.push(BindingChange::Refresh {
            binding: binding.name.clone(),
            state,
            decision,
        });
    }

    /// Mark `binding` Unscheduled.
    pub fn unschedule(&mut self, binding: &BindingView, reason: String) {
        self.unschedules.push(unschedule(binding, reason));
    }

    /// Bindings created or refreshed so far.
    pub fn placed(&self) -> usize {
        self.creates.len() + self.refreshes.len()
    }

    /// The decision: selected clusters by name, runners-up in rank order, other rejected
    /// clusters by name; changes grouped as [`Decision::changes`] describes.
    pub fn finish(mut self, condition: ScheduledCondition, requeue: bool) -> Decision {
        self.selected
            .sort_unstable_by(|a, b| a.cluster_name.cmp(&b.cluster_name));
        self.rejected
            .sort_unstable_by(|a, b| a.cluster_name.cmp(&b.cluster_name));
        let mut clusters =
            Vec::with_capacity(self.selected.len() + self.runners_up.len() + self.rejected.len());
        clusters.append(&mut self.selected);
        clusters.append(&mut self.runners_up);
        clusters.append(&mut self.rejected);
        let mut changes = self.dangling;
        changes.append(&mut self.creates);
        changes.append(&mut self.refreshes);
        changes.append(&mut self.unschedules);
        Decision {
            clusters,
            changes,
            condition,
            requeue,
        }
    }
}

/// The decision on a cluster picked this cycle.
pub(crate) fn picked(cluster: &str, score: Option<ClusterScore>) -> ClusterDecision {
    ClusterDecision {
        cluster_name: cluster.to_string(),
        selected: true,
        cluster_score: score,
        reason: reason::picked(cluster, score),
    }
}

/// The decision on a cluster that passed the filters but ranked below the picked ones.
pub(crate) fn runner_up(cluster: &str, score: ClusterScore) -> ClusterDecision {
    ClusterDecision {
        cluster_name: cluster.to_string(),
        selected: false,
        cluster_score: Some(score),
        reason: reason::not_picked(cluster, score),
    }
}

/// The decision on a cluster that is not selected, and why.
pub(crate) fn rejected(cluster: &str, reason: String) -> ClusterDecision {
    ClusterDecision {
        cluster_name: cluster.to_string(),
        selected: false,
        cluster_score: None,
        reason,
    }
}

fn unschedule(binding: &BindingView, reason: String) -> BindingChange {
    BindingChange::Unschedule {
        binding: binding.name.clone(),
        cluster: binding.cluster.clone(),
        previous_state: binding.state,
        reason,
    }
}

/// Selects the clusters picked this cycle (their decisions) and turns them into binding changes:
/// an obsolete binding on a picked cluster moves to the current snapshot in its state, an
/// obsolete binding on any other cluster is unscheduled, an unscheduled binding on a picked
/// cluster is restored to its previous state, and every other picked cluster gets a new
/// Scheduled binding. A cluster gets at most one restored binding, and none when an obsolete
/// one was moved.
pub(crate) fn bind_picked(
    outcome: &mut Outcome,
    picked: Vec<ClusterDecision>,
    bindings: &Bindings<'_>,
    snapshot: &str,
) {
    let by_cluster: HashMap<&str, &ClusterDecision> = picked
        .iter()
        .map(|d| (d.cluster_name.as_str(), d))
        .collect();
    let mut bound: HashSet<&str> = HashSet::new();
    for binding in &bindings.obsolete {
        match by_cluster.get(binding.cluster.as_str()) {
            Some(decision) => {
                outcome.refresh(binding, binding.state, (*decision).clone());
                bound.insert(&binding.cluster);
            }
            None => outcome.unschedule(binding, reason::no_longer_picked(snapshot)),
        }
    }
    for binding in &bindings.unscheduled {
        if let Some(decision) = by_cluster.get(binding.cluster.as_str())
            && bound.insert(&binding.cluster)
        {
            outcome.refresh(binding, binding.restored_state(), (*decision).clone());
        }
    }
    for decision in &picked {
        if !bound.contains(decision.cluster_name.as_str()) {
            outcome.create(decision.clone());
        }
    }
    for decision in picked {
        outcome.select(decision);
    }
}
