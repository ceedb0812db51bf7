//! KubeFleet's `waitForResourcesToCleanUp`: a cluster whose resources are still being removed
//! by a deleting binding must not get resources from another binding of the same placement
//! until that deletion finishes, so the whole round waits. Two live bindings on one cluster
//! (which the scheduler never creates) make the round wait too, rather than guess.

use std::collections::BTreeMap;

use super::RolloutBinding;

/// Why the round must wait, if it must. `bindings` are sorted by name.
pub(super) fn conflict(bindings: &[&RolloutBinding]) -> Option<String> {
    let mut live: BTreeMap<&str, &str> = BTreeMap::new();
    let mut deleting: BTreeMap<&str, &str> = BTreeMap::new();
    for binding in bindings {
        let group = if binding.deleting {
            &mut deleting
        } else {
            &mut live
        };
        if let Some(other) = group.insert(&binding.cluster, &binding.name)
            && !binding.deleting
        {
            return Some(format!(
                "waiting: cluster {} has two bindings, {other} and {}",
                binding.cluster, binding.name
            ));
        }
    }
    live.iter().find_map(|(cluster, name)| {
        deleting.get(cluster).map(|gone| {
            format!("waiting: binding {name} shares cluster {cluster} with binding {gone}, which is being deleted")
        })
    })
}
