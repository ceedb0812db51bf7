//! The placement's status under the External strategy: clusters show what their bindings
//! have, and the placement follows the clusters only when they agree on one resource snapshot
//! and every one has decided whether its rollout started.

use flotilla_api::placement::strategy::{RolloutStrategy, RolloutStrategyType};
use flotilla_placement::status::reason;

use crate::fixtures::{
    Case, LATEST, OLDER, chain, cluster, decision, placement_conditions, resource,
};

fn external(mut case: Case) -> Case {
    case.strategy = Some(RolloutStrategy {
        type_: Some(RolloutStrategyType::External),
        ..Default::default()
    });
    case
}

fn two_clusters() -> Case {
    external(Case::new(vec![decision("m1", true), decision("m2", true)]))
}

#[test]
fn clusters_on_different_snapshots_leave_the_rollout_unknown() {
    let mut split = two_clusters()
        .binding("m1", LATEST, chain("", None))
        .binding("m2", OLDER, chain("", None));
    split.bindings[1].2 = Some("1");
    let mut unnamed = two_clusters()
        .binding("m1", "", chain("RolloutStarted", None))
        .binding("m2", "", chain("RolloutStarted", None));
    unnamed.bindings[0].2 = None;
    unnamed.bindings[1].2 = None;
    let cases = [
        (
            split,
            "different resource snapshot versions are observed across clusters",
        ),
        (
            unnamed,
            "no resource snapshot name is observed across clusters",
        ),
    ];
    for (case, why) in cases {
        let status = case.run();
        let conditions = placement_conditions(&status);
        assert_eq!(
            conditions[1],
            (
                "ClusterResourcePlacementRolloutStarted",
                "Unknown",
                reason::ROLLOUT_CONTROLLED_BY_EXTERNAL_CONTROLLER
            ),
            "{why}"
        );
        assert_eq!(conditions.len(), 2, "{why}");
        assert!(
            status.conditions.as_ref().unwrap()[1].message.contains(why),
            "{why}"
        );
        assert_eq!(status.observed_resource_index, None, "{why}");
        assert_eq!(status.selected_resources, None, "{why}");
    }
}

#[test]
fn clusters_agreeing_on_an_older_snapshot_show_its_index_and_resources() {
    let mut case = two_clusters()
        .binding("m1", OLDER, chain("", None))
        .binding("m2", OLDER, chain("", None));
    case.bindings[0].2 = Some("1");
    case.bindings[1].2 = Some("1");
    let status = case.run();
    assert_eq!(status.observed_resource_index.as_deref(), Some("1"));
    assert_eq!(
        status.selected_resources,
        Some(vec![resource("ConfigMap", "app", "from-index-1")])
    );
    assert_eq!(
        cluster(&status, "m1").observed_resource_index.as_deref(),
        Some("1")
    );
    // The bindings' chains are shown though they name an older snapshot.
    assert_eq!(placement_conditions(&status).len(), 6);
    assert_eq!(
        placement_conditions(&status)[5].2,
        reason::RESOURCE_AVAILABLE
    );
}

#[test]
fn clusters_on_the_latest_snapshot_keep_the_selected_resources() {
    let status = two_clusters()
        .binding("m1", LATEST, chain("", None))
        .binding("m2", LATEST, chain("", None))
        .run();
    assert_eq!(status.observed_resource_index.as_deref(), Some("2"));
    assert_eq!(status.selected_resources.as_ref().map(Vec::len), Some(2));
}

#[test]
fn a_cluster_undecided_on_its_rollout_leaves_it_unknown() {
    let status = two_clusters()
        .binding("m1", LATEST, chain("", None))
        .binding("m2", LATEST, chain("RolloutStarted", None))
        .run();
    let conditions = status.conditions.as_deref().unwrap();
    assert_eq!(conditions.len(), 2);
    assert_eq!(
        conditions[1].reason,
        reason::ROLLOUT_CONTROLLED_BY_EXTERNAL_CONTROLLER
    );
    assert_eq!(
        conditions[1].message,
        "Rollout is controlled by an external controller and cluster m2 is in RolloutStarted Unknown state"
    );
    assert_eq!(status.observed_resource_index.as_deref(), Some("2"));
}
