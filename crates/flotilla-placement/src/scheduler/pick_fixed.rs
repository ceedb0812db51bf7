//! PickFixed: exactly the clusters named in `clusterNames`. Affinity, taints and scores do not
//! apply; names split into valid (present and eligible), not eligible and not found, and the
//! policy is fulfilled only when every name is valid. A binding the placement already has on a
//! named cluster that became ineligible is kept (IgnoredDuringExecution); obsolete bindings on
//! clusters that are not valid targets are unscheduled.

use std::collections::{HashMap, HashSet};

use flotilla_api::cluster::MemberCluster;
use flotilla_api::cluster::eligibility;

use super::binding::{BindingView, Bindings};
use super::decision::{Decision, ScheduledCondition};
use super::outcome::{Outcome, picked, rejected};
use super::reason;
use super::{SchedulingInput, cluster_name};

/// One PickFixed cycle.
pub(crate) fn schedule(input: &SchedulingInput<'_>, bindings: &Bindings<'_>) -> Decision {
    let clusters: HashMap<&str, &MemberCluster> = input
        .clusters
        .iter()
        .map(|c| (cluster_name(c), &**c))
        .collect();
    let mut names: Vec<&str> = Vec::new();
    for name in input.policy.cluster_names.as_deref().unwrap_or_default() {
        if !names.contains(&name.as_str()) {
            names.push(name);
        }
    }
    let active = bindings.active_by_cluster();
    let obsolete = first_by_cluster(&bindings.obsolete);
    let unscheduled = first_by_cluster(&bindings.unscheduled);

    let mut outcome = Outcome::new(bindings);
    let mut valid: HashSet<&str> = HashSet::new();
    let mut missing = 0;
    for &name in &names {
        let Some(cluster) = clusters.get(name) else {
            outcome.reject(rejected(name, reason::fixed_not_found(name)));
            missing += 1;
            continue;
        };
        if let Err(why) = eligibility::check(cluster, input.now, &input.eligibility) {
            let kept = active.contains_key(name);
            outcome.reject(rejected(name, reason::fixed_ineligible(name, &why, kept)));
            missing += 1;
            continue;
        }
        valid.insert(name);
        let decision = picked(name, None);
        if active.contains_key(name) {
            // Already placed under this policy: nothing to change.
        } else if let Some(binding) = obsolete.get(name) {
            outcome.refresh(binding, binding.state, decision.clone());
        } else if let Some(binding) = unscheduled.get(name) {
            outcome.refresh(binding, binding.restored_state(), decision.clone());
        } else {
            outcome.create(decision.clone());
        }
        outcome.select(decision);
    }
    for binding in &bindings.obsolete {
        if !valid.contains(binding.cluster.as_str()) {
            outcome.unschedule(binding, reason::no_longer_picked(input.policy_snapshot));
        }
    }
    let named: HashSet<&str> = names.iter().copied().collect();
    for cluster in input.clusters {
        let name = cluster_name(cluster);
        if !named.contains(name) {
            outcome.reject(rejected(name, reason::fixed_not_named(name)));
        }
    }
    let found = valid.len();
    outcome.finish(ScheduledCondition::new(missing == 0, found), false)
}

/// The first binding (by name) of each cluster in `group`.
fn first_by_cluster<'a>(group: &[&'a BindingView]) -> HashMap<&'a str, &'a BindingView> {
    let mut first = HashMap::new();
    for binding in group {
        first.entry(binding.cluster.as_str()).or_insert(*binding);
    }
    first
}
