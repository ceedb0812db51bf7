//! Whether the placement changed under a running run, which fails it (KubeFleet's
//! validation before every pass): a new scheduling policy snapshot, a different number of
//! clusters, or a scheduled cluster the run's stages do not hold.

use std::collections::HashSet;

use flotilla_api::placement::staged_update_run::UpdateRunStatus;

/// What the placement looks like now.
#[derive(Clone, Copy, Debug)]
pub struct Observed<'a> {
    /// The index of its latest policy snapshot.
    pub policy_index: &'a str,
    /// The number of clusters that snapshot asks for, or schedules (PickAll).
    pub cluster_count: i64,
    /// The clusters scheduled (or bound) now.
    pub scheduled: &'a [&'a str],
}

/// Why the run can no longer go on, if the placement changed under it.
pub fn changed(status: &UpdateRunStatus, now: &Observed<'_>) -> Option<String> {
    let used = status
        .policy_snapshot_index_used
        .as_deref()
        .unwrap_or_default();
    if used != now.policy_index {
        return Some(format!(
            "the placement's scheduling policy changed after the run was initialized (policy snapshot index {used} → {}); create a new run",
            now.policy_index
        ));
    }
    let count = status.policy_observed_cluster_count.unwrap_or_default();
    if count != now.cluster_count {
        return Some(format!(
            "the placement's cluster count changed after the run was initialized ({count} → {}); create a new run",
            now.cluster_count
        ));
    }
    let staged: HashSet<&str> = status
        .stages_status
        .iter()
        .flatten()
        .flat_map(|s| s.clusters.iter().map(|c| c.cluster_name.as_str()))
        .collect();
    now.scheduled.iter().find(|c| !staged.contains(*c)).map(|cluster| {
        format!(
            "cluster {cluster} was scheduled after the run was initialized and is in none of its stages; create a new run"
        )
    })
}
