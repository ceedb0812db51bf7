//! PickN: keep `numberOfClusters` clusters.
//!
//! - **Scale down** when the placement has more Scheduled + Bound bindings than it asks for, or
//!   exactly as many while obsolete bindings remain: every obsolete binding is unscheduled, then
//!   the surplus is trimmed, Scheduled bindings before Bound ones, each lowest score first and
//!   then smallest cluster name first.
//! - **Steady** when it has exactly as many and no obsolete ones: nothing is evaluated.
//!
//! When scaling down or steady, a cluster without an active binding is not evaluated: it keeps
//! the unselected verdict the policy snapshot recorded for it (e.g. that it did not score high
//! enough, with its score), or, if there is none, is reported as not evaluated.
//! - **Scale up** otherwise: filter and score every cluster without an active binding and pick
//!   the best `min(wanted − existing, batch limit, passing)`. The batch limit is 1 with topology
//!   spread constraints (so each pick sees the spread the previous one made) and the cycle asks
//!   to be run again while the limit held it back.
//!
//! Ranking sorts by score and then by name, both descending: KubeFleet sorts its ascending
//! order (ties by smaller name) in reverse, so between equal scores the **larger** name wins.

use std::cmp::Reverse;
use std::collections::HashMap;
use std::sync::Arc;

use flotilla_api::cluster::MemberCluster;

use super::binding::{BindingView, Bindings};
use super::decision::{Decision, ScheduledCondition};
use super::filter::Filters;
use super::outcome::{Outcome, Verdict, bind_picked, picked, rejected, runner_up};
use super::property::PropertyTable;
use super::reason::{self, Rejection};
use super::score::{Preferences, Score};
use super::sweep;
use super::topology::{self, Spread};
use super::{ClusterDecision, SchedulingInput, cluster_name};

/// One PickN cycle.
pub(crate) fn schedule(input: &SchedulingInput<'_>, bindings: &Bindings<'_>) -> Decision {
    let wanted = usize::try_from(input.policy.number_of_clusters.unwrap_or(0)).unwrap_or(0);
    let present = bindings.active();
    if wanted <= present && present - wanted + bindings.obsolete.len() > 0 {
        scale_down(input, bindings, wanted)
    } else if wanted <= present {
        steady(input, bindings, wanted)
    } else {
        scale_up(input, bindings, wanted)
    }
}

/// What scaling down does to a cluster's binding.
enum Fate<'a> {
    /// The binding stays.
    Kept(&'a BindingView),
    /// The binding is trimmed.
    Trimmed,
    /// The binding is obsolete and removed.
    Obsolete,
}

/// The unselected verdicts the policy snapshot recorded earlier, by cluster: what a cluster
/// without an active binding is told when this cycle does not evaluate it.
struct Unevaluated<'a> {
    recorded: HashMap<&'a str, &'a ClusterDecision>,
    wanted: usize,
}

impl<'a> Unevaluated<'a> {
    fn new(input: &SchedulingInput<'a>, wanted: usize) -> Self {
        let recorded = input
            .previous
            .iter()
            .filter(|d| !d.selected)
            .map(|d| (d.cluster_name.as_str(), d))
            .collect();
        Self { recorded, wanted }
    }

    /// The recorded verdict on `cluster`, else "not evaluated".
    fn verdict(&self, cluster: &str) -> ClusterDecision {
        match self.recorded.get(cluster) {
            Some(&decision) => decision.clone(),
            None => rejected(cluster, reason::not_needed(self.wanted)),
        }
    }
}

fn scale_down(input: &SchedulingInput<'_>, bindings: &Bindings<'_>, wanted: usize) -> Decision {
    let clusters = input.clusters;
    let unevaluated = Unevaluated::new(input, wanted);
    let present = bindings.active();
    let mut outcome = Outcome::new(bindings);
    let mut fates: HashMap<&str, Fate> = HashMap::new();
    for binding in &bindings.obsolete {
        outcome.unschedule(binding, reason::obsolete_scaled_down(wanted));
        fates.insert(&binding.cluster, Fate::Obsolete);
    }
    let mut candidates = trim_order(&bindings.scheduled);
    candidates.extend(trim_order(&bindings.bound));
    let surplus = present - wanted;
    for (i, binding) in candidates.into_iter().enumerate() {
        let fate = if i < surplus {
            outcome.unschedule(binding, reason::scaled_down(wanted, present));
            Fate::Trimmed
        } else {
            Fate::Kept(binding)
        };
        fates.insert(&binding.cluster, fate);
    }
    for cluster in clusters {
        let name = cluster_name(cluster);
        match fates.get(name) {
            Some(Fate::Kept(binding)) => outcome.keep(binding),
            Some(Fate::Trimmed) => {
                outcome.reject(rejected(name, reason::scaled_down(wanted, present)));
            }
            Some(Fate::Obsolete) => {
                outcome.reject(rejected(name, reason::obsolete_scaled_down(wanted)));
            }
            None => outcome.reject(unevaluated.verdict(name)),
        }
    }
    outcome.finish(ScheduledCondition::new(true, wanted), false)
}

/// `group` in the order it is trimmed: lowest recorded score first (topology spread, then
/// affinity; no score before any), then smallest cluster name.
fn trim_order<'a>(group: &[&'a BindingView]) -> Vec<&'a BindingView> {
    let mut sorted = group.to_vec();
    let key = |b: &BindingView| {
        b.score.map(|s| {
            let recorded = |v: Option<i32>| v.unwrap_or_default();
            (recorded(s.priority_score), recorded(s.affinity_score))
        })
    };
    sorted.sort_by(|a, b| (key(a), &a.cluster, &a.name).cmp(&(key(b), &b.cluster, &b.name)));
    sorted
}

fn steady(input: &SchedulingInput<'_>, bindings: &Bindings<'_>, wanted: usize) -> Decision {
    let active = bindings.active_by_cluster();
    let unevaluated = Unevaluated::new(input, wanted);
    let mut outcome = Outcome::new(bindings);
    for cluster in input.clusters {
        match active.get(cluster_name(cluster)) {
            Some(binding) => outcome.keep(binding),
            None => outcome.reject(unevaluated.verdict(cluster_name(cluster))),
        }
    }
    let found = bindings.active();
    outcome.finish(ScheduledCondition::new(found >= wanted, found), false)
}

fn scale_up(input: &SchedulingInput<'_>, bindings: &Bindings<'_>, wanted: usize) -> Decision {
    let clusters = input.clusters;
    let present = bindings.active();
    let desired = wanted - present;
    let constraints = input
        .policy
        .topology_spread_constraints
        .as_deref()
        .unwrap_or_default();
    let limit = if constraints.is_empty() { desired } else { 1 };

    let filters = Filters::new(input.policy, input.now, input.eligibility);
    let preferences = Preferences::new(input.policy);
    let active = bindings.active_by_cluster();
    let spread = topology::evaluate(constraints, clusters, |c| {
        active.contains_key(cluster_name(c))
    });
    let obsolete = bindings.obsolete_clusters();

    let (table, verdicts) = sweep_fleet(clusters, &active, &filters, &preferences, &spread);
    let mut outcome = Outcome::new(bindings);
    let mut passed: Vec<(usize, &str)> = Vec::new();
    for (index, verdict) in verdicts.into_iter().enumerate() {
        match verdict {
            Verdict::Kept(binding) => outcome.keep(binding),
            Verdict::Rejected(decision) => outcome.reject(decision),
            Verdict::Passed(name) => passed.push((index, name)),
        }
    }

    let ranges = preferences.ranges(&table);
    let mut candidates: Vec<(Score, &str)> = passed
        .into_iter()
        .map(|(index, name)| {
            let score = Score {
                topology_spread: spread.score(index),
                affinity: preferences.affinity(&clusters[index], index, &table, &ranges),
                obsolete: i32::from(obsolete.contains(name)),
            };
            (score, name)
        })
        .collect();
    candidates.sort_unstable_by_key(|&candidate| Reverse(candidate));
    let count = desired.min(limit).min(candidates.len());
    let chosen = candidates[..count]
        .iter()
        .map(|(score, name)| picked(name, Some(score.recorded())))
        .collect();
    let runners_up = sweep::in_chunks(&candidates[count..], |_, chunk| {
        chunk
            .iter()
            .map(|(score, name)| runner_up(name, score.recorded()))
            .collect::<Vec<_>>()
    });
    outcome.runners_up(runners_up.into_iter().flatten());
    bind_picked(&mut outcome, chosen, bindings, input.policy_snapshot);
    let placed = outcome.placed();
    let requeue = desired > limit && placed == limit;
    let found = placed + present;
    outcome.finish(ScheduledCondition::new(found >= wanted, found), requeue)
}

/// One pass over the fleet, in parallel chunks: reads every cluster's sorted properties (their
/// range spans all clusters) and filters it. Returns the property table and a verdict per
/// cluster, both in cluster order.
fn sweep_fleet<'a>(
    clusters: &'a [Arc<MemberCluster>],
    active: &HashMap<&str, &'a BindingView>,
    filters: &Filters<'_>,
    preferences: &Preferences<'_>,
    spread: &Spread<'_>,
) -> (PropertyTable, Vec<Verdict<'a>>) {
    let chunks = sweep::in_chunks(clusters, |offset, chunk| {
        let mut table = preferences.table(chunk.len());
        let verdicts: Vec<Verdict> = chunk
            .iter()
            .enumerate()
            .map(|(i, cluster)| {
                preferences.read(&mut table, cluster);
                let name = cluster_name(cluster);
                if let Some(binding) = active.get(name) {
                    Verdict::Kept(binding)
                } else if let Some(rejection) = filters
                    .reject(cluster)
                    .or_else(|| spread.violation(offset + i).map(Rejection::Spread))
                {
                    Verdict::Rejected(rejected(name, rejection.text()))
                } else {
                    Verdict::Passed(name)
                }
            })
            .collect();
        (table, verdicts)
    });
    let mut table = preferences.table(clusters.len());
    let mut verdicts = Vec::with_capacity(clusters.len());
    for (chunk_table, chunk_verdicts) in chunks {
        table.append(chunk_table);
        verdicts.extend(chunk_verdicts);
    }
    (table, verdicts)
}
