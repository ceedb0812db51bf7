//! A member's upgrade duration, predicted from its order as the executor carries it out.

use flotilla_api::cluster::versions::{ClusterVersions, NodePoolVersion, UpgradeDurations};
use flotilla_updates::forecast::{DEFAULT_DURATIONS, Predicted, predict};
use flotilla_updates::run::UpgradeOrder;
use jiff::SignedDuration;

use crate::fixtures::{NEW_IMAGE, OLD_IMAGE, UBUNTU};

const ARM: &str = "AKSUbuntu-2204gen2arm64containerd";

fn pool(name: &str, family: &str, version: &str, nodes: u32) -> NodePoolVersion {
    NodePoolVersion {
        name: name.into(),
        image: format!("{family}-{version}"),
        image_family: family.into(),
        image_version: version.into(),
        node_count: nodes,
    }
}

/// A cluster with a system pool (3 nodes, old image), an apps pool (5 nodes, new image) and
/// an arm pool (2 nodes, another family), expecting 10 minutes for the control plane and 4 a
/// node when `reported`.
fn cluster(reported: bool) -> ClusterVersions {
    ClusterVersions {
        kubernetes_version: "1.30.6".into(),
        node_pools: vec![
            pool("system", UBUNTU, "202510.13.0", 3),
            pool("apps", UBUNTU, "202511.02.0", 5),
            pool("arm", ARM, "202510.13.0", 2),
        ],
        expected_durations: reported.then_some(UpgradeDurations {
            control_plane_seconds: 600,
            node_seconds: 240,
        }),
        ..Default::default()
    }
}

fn order(kubernetes: Option<&str>, images: &[&str]) -> UpgradeOrder {
    UpgradeOrder {
        kubernetes_version: kubernetes.map(String::from),
        node_images: images.iter().map(|i| i.to_string()).collect(),
    }
}

#[test]
fn the_control_plane_then_every_node_of_each_pool_getting_a_newer_image() {
    let minutes = |m| SignedDuration::from_mins(m);
    let cases = [
        // Control plane, and the system pool's 3 nodes (apps is at the target, arm is
        // another family): 10 + 3 × 4.
        (
            order(Some("1.31.2"), &[NEW_IMAGE]),
            true,
            minutes(22),
            false,
        ),
        (order(Some("1.31.2"), &[]), true, minutes(10), false),
        (order(None, &[NEW_IMAGE]), true, minutes(12), false),
        // An image older than a pool's is no step for it.
        (order(None, &[OLD_IMAGE]), true, minutes(0), false),
        // Both families: 3 system + 2 arm nodes.
        (
            order(None, &[NEW_IMAGE, &format!("{ARM}-202511.02.0")]),
            true,
            minutes(20),
            false,
        ),
        // No expectedDurations: 15 minutes + 3 × 5 by default, and said so.
        (
            order(Some("1.31.2"), &[NEW_IMAGE]),
            false,
            minutes(30),
            true,
        ),
    ];
    for (order, reported, duration, assumed) in cases {
        let versions = cluster(reported);
        assert_eq!(
            predict(&order, Some(&versions), DEFAULT_DURATIONS),
            Predicted { duration, assumed },
            "{order:?}, durations reported: {reported}"
        );
    }
    // A member that has not reported its versions: only the control plane is known.
    assert_eq!(
        predict(
            &order(Some("1.31.2"), &[NEW_IMAGE]),
            None,
            DEFAULT_DURATIONS
        ),
        Predicted {
            duration: minutes(15),
            assumed: true
        }
    );
}
