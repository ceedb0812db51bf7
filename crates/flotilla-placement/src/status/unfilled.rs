//! The slots the scheduler could not fill, for their per-cluster statuses.

use flotilla_api::placement::policy::{PlacementPolicy, PlacementType};
use flotilla_api::placement::snapshots::ClusterDecision;

/// The slots the scheduler could not fill, each with a cluster to name (if any) and why:
/// PickN's missing clusters are the first clusters it did not pick, then unnamed slots;
/// PickFixed's are the named clusters it did not pick; PickAll has none.
pub(super) fn unfilled(
    policy: Option<&PlacementPolicy>,
    decisions: &[ClusterDecision],
) -> Vec<(Option<String>, String)> {
    let Some(policy) = policy else {
        return Vec::new();
    };
    let picked = decisions.iter().filter(|d| d.selected).count();
    let decision = |name: &str| decisions.iter().find(|d| d.cluster_name == name);
    match policy.placement_type.unwrap_or_default() {
        PlacementType::PickAll => Vec::new(),
        PlacementType::PickN => {
            let wanted = policy
                .number_of_clusters
                .and_then(|n| usize::try_from(n).ok())
                .unwrap_or(0);
            let mut rejected = decisions.iter().filter(|d| !d.selected);
            (picked..wanted)
                .map(|_| match rejected.next() {
                    Some(d) => (Some(d.cluster_name.clone()), d.reason.clone()),
                    None => (
                        None,
                        format!("no more clusters to pick: the policy asks for {wanted} and {picked} could be picked"),
                    ),
                })
                .collect()
        }
        PlacementType::PickFixed => {
            let names = policy.cluster_names.as_deref().unwrap_or_default();
            names
                .iter()
                .filter(|name| !decision(name).is_some_and(|d| d.selected))
                .map(|name| {
                    let why = decision(name).map_or_else(
                        || format!("cluster {name} was not considered by the scheduler"),
                        |d| d.reason.clone(),
                    );
                    (Some(name.clone()), why)
                })
                .collect()
        }
    }
}
