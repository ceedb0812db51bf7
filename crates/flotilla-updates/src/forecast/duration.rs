//! How long a member's upgrade is expected to take, following the member agent's executor:
//! the control plane first (when the order names a Kubernetes version), then pool by pool,
//! node by node, each pool whose image family the order gives a newer image.

use flotilla_api::cluster::versions::{ClusterVersions, UpgradeDurations};
use jiff::SignedDuration;

use crate::release::NodeImage;
use crate::run::UpgradeOrder;

/// Step durations assumed for a member that reports none (`expectedDurations` unset): 15
/// minutes for the control plane and 5 minutes a node.
pub const DEFAULT_DURATIONS: UpgradeDurations = UpgradeDurations {
    control_plane_seconds: 15 * 60,
    node_seconds: 5 * 60,
};

/// A predicted upgrade duration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Predicted {
    /// How long the upgrade takes.
    pub duration: SignedDuration,
    /// Whether the member reported no expected durations, so `defaults` were used.
    pub assumed: bool,
}

/// How long carrying out `order` takes on a member reporting `versions` (`None`: it has not
/// reported; no node pool is known): the control plane's time when the order names a
/// Kubernetes version, plus a node's time for every node of each pool whose family the order
/// gives an image newer than the pool's. The member's `expectedDurations`, or `defaults`.
pub fn predict(
    order: &UpgradeOrder,
    versions: Option<&ClusterVersions>,
    defaults: UpgradeDurations,
) -> Predicted {
    let reported = versions.and_then(|v| v.expected_durations);
    let durations = reported.unwrap_or(defaults);
    let mut seconds = 0u64;
    if order.kubernetes_version.is_some() {
        seconds += durations.control_plane_seconds;
    }
    let targets: Vec<NodeImage> = order
        .node_images
        .iter()
        .filter_map(|i| NodeImage::parse(i).ok())
        .collect();
    for pool in versions.into_iter().flat_map(|v| &v.node_pools) {
        let upgraded = NodeImage::parse(&pool.image).is_ok_and(|have| {
            targets
                .iter()
                .any(|want| want.family == have.family && *want > have)
        });
        if upgraded {
            seconds += durations.node_seconds * u64::from(pool.node_count);
        }
    }
    Predicted {
        duration: SignedDuration::from_secs(i64::try_from(seconds).unwrap_or(i64::MAX)),
        assumed: reported.is_none(),
    }
}
