//! The [`Provider`] trait: how the member agent reads and changes what its cluster runs.
//! The simulated cloud implements it (`flotilla-sim`); a Cluster API or cloud provider
//! (AKS's managed cluster and agent pool APIs) would implement the same four operations.

use std::cmp::Ordering;
use std::time::Duration;

use flotilla_api::cluster::versions::{
    ClusterVersions, NodePoolVersion, PowerState, UpgradeDurations, split_image,
};
use futures::future::BoxFuture;
use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

/// What a cluster runs now, node by node, as its provider knows it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CurrentVersions {
    /// The control plane's Kubernetes version, `MAJOR.MINOR.PATCH`.
    pub kubernetes_version: String,
    /// The node pools, in the provider's order.
    pub node_pools: Vec<PoolVersions>,
    /// Whether the cluster runs or is stopped: a stopped cluster cannot be upgraded, and
    /// update runs skip it with that reason.
    pub power_state: PowerState,
}

/// One node pool and the image each of its nodes runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PoolVersions {
    /// The pool's name.
    pub name: String,
    /// The pool's image (full name `<family>-<version>`): the image the pool is set to run,
    /// which changes once every node of an upgrade runs the new one.
    pub image: String,
    /// The pool's nodes in upgrade order (the provider's order; by name for AKS).
    pub nodes: Vec<NodeVersion>,
}

/// The image one node runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeVersion {
    /// The node's name (its Kubernetes Node name).
    pub name: String,
    /// The node's image, full name `<family>-<version>`.
    pub image: String,
}

/// How long a provider expects upgrade steps to take: what a planner needs to predict when an
/// upgrade (or a whole update run) will finish.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExpectedDurations {
    /// Upgrading the control plane.
    pub control_plane: Duration,
    /// Upgrading (reimaging) one node.
    pub node: Duration,
}

/// Why a provider could not read or change the cluster. The executor fails the upgrade with
/// the error's text as the MemberUpgrade's message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProviderError {
    /// The cluster is stopped (deallocated): nothing can change until it is started again.
    #[error(
        "cluster {cluster} is stopped: start it before upgrading (a stopped cluster cannot be upgraded)"
    )]
    Stopped {
        /// The cluster.
        cluster: String,
    },
    /// The cluster has no node pool of that name.
    #[error("cluster {cluster} has no node pool {pool:?}")]
    UnknownPool {
        /// The cluster.
        cluster: String,
        /// The pool asked for.
        pool: String,
    },
    /// The pool has no node of that name.
    #[error("node pool {pool:?} of cluster {cluster} has no node {node:?}")]
    UnknownNode {
        /// The cluster.
        cluster: String,
        /// The pool.
        pool: String,
        /// The node asked for.
        node: String,
    },
    /// The provider refused or failed the operation; the message is the provider's.
    #[error("{0}")]
    Failed(String),
}

/// Reads and changes what a cluster runs. Every change is one step of an upgrade, done when
/// its future resolves: the control plane to a Kubernetes version, or one node to a node
/// image. Steps are idempotent (asking for what is already there succeeds), so an upgrade
/// interrupted by an agent restart can be resumed by re-planning from [`current_versions`].
///
/// Methods return boxed futures so that the agent can hold any provider as
/// `Arc<dyn Provider>`.
///
/// [`current_versions`]: Provider::current_versions
pub trait Provider: Send + Sync {
    /// What the cluster runs now.
    fn current_versions(&self) -> BoxFuture<'_, Result<CurrentVersions, ProviderError>>;

    /// Upgrades the control plane to Kubernetes `version` (`MAJOR.MINOR.PATCH`).
    fn upgrade_control_plane<'a>(
        &'a self,
        version: &'a str,
    ) -> BoxFuture<'a, Result<(), ProviderError>>;

    /// Upgrades node `node` of pool `pool` to node image `image` (full name), e.g. by
    /// cordoning, draining and reimaging it; the pool's image becomes `image` once all its
    /// nodes run it.
    fn upgrade_node<'a>(
        &'a self,
        pool: &'a str,
        node: &'a str,
        image: &'a str,
    ) -> BoxFuture<'a, Result<(), ProviderError>>;

    /// How long steps are expected to take.
    fn expected_durations(&self) -> ExpectedDurations;
}

/// Compares two dotted versions (`1.31.2`, `202510.13.0`) numerically part by part; a missing
/// part counts as 0. `None` when either has a part that is not a number.
pub fn compare_versions(a: &str, b: &str) -> Option<Ordering> {
    let parse = |v: &str| -> Option<Vec<u64>> {
        v.trim_start_matches('v')
            .split('.')
            .map(|p| p.parse().ok())
            .collect()
    };
    let (a, b) = (parse(a)?, parse(b)?);
    let len = a.len().max(b.len());
    let part = |v: &[u64], i: usize| v.get(i).copied().unwrap_or(0);
    Some(
        (0..len)
            .map(|i| part(&a, i).cmp(&part(&b, i)))
            .find(|o| o.is_ne())
            .unwrap_or(Ordering::Equal),
    )
}

impl CurrentVersions {
    /// The versions as the agent reports them on the hub (`status.versions`), observed at
    /// `now`, with the provider's expected step durations.
    pub fn report(&self, durations: ExpectedDurations, now: Timestamp) -> ClusterVersions {
        let mut images: Vec<&str> = Vec::new();
        for pool in &self.node_pools {
            if !images.contains(&pool.image.as_str()) {
                images.push(&pool.image);
            }
        }
        ClusterVersions {
            kubernetes_version: self.kubernetes_version.trim_start_matches('v').to_string(),
            node_images: images.join(","),
            power_state: self.power_state,
            node_pools: self
                .node_pools
                .iter()
                .map(|pool| {
                    let (family, version) = split_image(&pool.image).unwrap_or_default();
                    NodePoolVersion {
                        name: pool.name.clone(),
                        image: pool.image.clone(),
                        image_family: family.to_string(),
                        image_version: version.to_string(),
                        node_count: u32::try_from(pool.nodes.len()).unwrap_or(u32::MAX),
                    }
                })
                .collect(),
            expected_durations: Some(UpgradeDurations {
                control_plane_seconds: durations.control_plane.as_secs(),
                node_seconds: durations.node.as_secs(),
            }),
            observation_time: Some(Time(now)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_compare_numerically() {
        assert_eq!(
            compare_versions("1.31.2", "1.30.10"),
            Some(Ordering::Greater)
        );
        assert_eq!(compare_versions("1.9.0", "1.10.0"), Some(Ordering::Less));
        assert_eq!(compare_versions("v1.31.2", "1.31.2"), Some(Ordering::Equal));
        assert_eq!(compare_versions("1.31", "1.31.0"), Some(Ordering::Equal));
        assert_eq!(
            compare_versions("202510.13.0", "202509.23.0"),
            Some(Ordering::Greater)
        );
        assert_eq!(compare_versions("1.31.x", "1.31.0"), None);
    }

    #[test]
    fn the_report_splits_images_and_counts_nodes() {
        let current = CurrentVersions {
            kubernetes_version: "v1.30.6".into(),
            node_pools: ["apps", "system", "arm"]
                .into_iter()
                .map(|name| {
                    let image = match name {
                        "arm" => "AKSUbuntu-2204gen2arm64containerd-202510.13.0",
                        _ => "AKSUbuntu-2204gen2containerd-202510.13.0",
                    };
                    PoolVersions {
                        name: name.into(),
                        image: image.into(),
                        nodes: vec![
                            NodeVersion {
                                name: "n".into(),
                                image: image.into(),
                            };
                            3
                        ],
                    }
                })
                .collect(),
            power_state: PowerState::Stopped,
        };
        let durations = ExpectedDurations {
            control_plane: Duration::from_secs(600),
            node: Duration::from_secs(240),
        };
        let report = current.report(durations, "2026-03-01T10:00:00Z".parse().unwrap());
        assert_eq!(report.kubernetes_version, "1.30.6");
        assert_eq!(report.power_state, PowerState::Stopped);
        assert_eq!(
            report.node_images,
            "AKSUbuntu-2204gen2containerd-202510.13.0,AKSUbuntu-2204gen2arm64containerd-202510.13.0"
        );
        let pool = &report.node_pools[0];
        assert_eq!(
            (
                pool.image_family.as_str(),
                pool.image_version.as_str(),
                pool.node_count
            ),
            ("AKSUbuntu-2204gen2containerd", "202510.13.0", 3)
        );
        assert_eq!(
            report.expected_durations,
            Some(UpgradeDurations {
                control_plane_seconds: 600,
                node_seconds: 240
            })
        );
        assert_eq!(
            report.observation_time.unwrap().0.to_string(),
            "2026-03-01T10:00:00Z"
        );
    }
}
