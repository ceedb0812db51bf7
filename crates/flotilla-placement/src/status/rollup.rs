//! The placement-level conditions from the per-cluster statuses (KubeFleet's
//! `setPlacementConditions`): along the chain, a type is Unknown if any cluster has it
//! Unknown, else False if any has it False, else True; the first type that is not True ends
//! the list. True Overridden says `NoOverrideSpecified` when no cluster has an override.
//! Messages count the clusters and name those that are not there yet, with the first failed
//! resource of each where there is one.

use flotilla_api::conditions::{NewCondition, find};
use flotilla_api::placement::status::PerClusterPlacementStatus;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;

use super::describe;
use super::per_cluster::has;
use super::{ConditionType, reason};

/// How many lagging clusters a message names.
const NAMED_CLUSTERS: usize = 3;

/// The placement-level conditions for `chain` (with placement-level `names`, in the same
/// order) over the picked clusters' statuses, observed for `generation`.
pub(super) fn roll_up<'n>(
    chain: &[ConditionType],
    names: &'n [String],
    generation: i64,
    clusters: &[PerClusterPlacementStatus],
) -> Vec<NewCondition<'n>> {
    let mut conditions = Vec::new();
    for (&type_, name) in chain.iter().zip(names) {
        let count = |status: &str| clusters.iter().filter(|c| has(c, type_, status)).count();
        let (unknown, failed) = (count("Unknown"), count("False"));
        let [unknown_reason, false_reason, true_reason] = type_.placement_reasons();
        let (status, mut reason) = match (unknown, failed) {
            (0, 0) => ("True", true_reason),
            (0, _) => ("False", false_reason),
            _ => ("Unknown", unknown_reason),
        };
        let mut message = summary(type_, clusters);
        let overridden = |c: &PerClusterPlacementStatus| {
            c.applicable_resource_overrides.is_some()
                || c.applicable_cluster_resource_overrides.is_some()
        };
        if status == "True"
            && type_ == ConditionType::Overridden
            && !clusters.iter().any(overridden)
        {
            reason = reason::NO_OVERRIDE_SPECIFIED;
            message = "No override rules are configured for the selected resources".to_string();
        }
        conditions.push(NewCondition {
            type_: name,
            status,
            reason,
            message,
            observed_generation: Some(generation),
        });
        if status != "True" {
            break;
        }
    }
    conditions
}

/// "2 of 3 clusters have applied the resources; member-03: Deployment app/web failed: …".
fn summary(type_: ConditionType, clusters: &[PerClusterPlacementStatus]) -> String {
    let total = clusters.len();
    let done = clusters.iter().filter(|c| has(c, type_, "True")).count();
    let verb = if done == 1 { "has" } else { "have" };
    let noun = if total == 1 { "cluster" } else { "clusters" };
    if done == total {
        let all = if total == 1 { "The" } else { "All" };
        return format!("{all} {total} {noun} {verb} {}", type_.achievement());
    }
    let with = |status: &'static str| {
        clusters.iter().filter_map(move |c| {
            let condition = c
                .conditions
                .as_deref()
                .and_then(|all| find(all, type_.as_str()));
            condition
                .filter(|cond| cond.status == status)
                .map(|cond| (c, cond))
        })
    };
    let lagging = with("False").chain(with("Unknown"));
    let mut details: Vec<String> = lagging
        .clone()
        .take(NAMED_CLUSTERS)
        .map(|(c, cond)| detail(c, cond))
        .collect();
    let rest = lagging.count().saturating_sub(NAMED_CLUSTERS);
    if rest > 0 {
        details.push(format!("and {rest} more"));
    }
    format!(
        "{done} of {total} {noun} {verb} {}; {}",
        type_.achievement(),
        details.join("; ")
    )
}

/// Where one lagging cluster stands on `condition`: its first failed resource when the
/// condition is False and one is listed, else the condition's message.
fn detail(cluster: &PerClusterPlacementStatus, condition: &Condition) -> String {
    let name = cluster.cluster_name.as_deref().unwrap_or_default();
    let failed = cluster.failed_placements.as_deref().unwrap_or_default();
    match failed.first() {
        Some(first) if condition.status == "False" => {
            let more = match failed.len() - 1 {
                0 => String::new(),
                n => format!(" (and {n} more)"),
            };
            format!(
                "{name}: {} failed: {}{more}",
                describe(&first.resource),
                first.condition.message
            )
        }
        _ => format!("{name}: {}", condition.message),
    }
}
