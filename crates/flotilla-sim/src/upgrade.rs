//! The simulated cloud's upgrade [`Provider`]: upgrades a [`SimCluster`] step by step, each
//! step taking simulated time on the member's clock — by default 10 minutes for the control
//! plane and 4 minutes per node ([`DEFAULT_CONTROL_PLANE_MINUTES`], [`DEFAULT_NODE_MINUTES`];
//! a fleet file sets them per member under `upgrade:`).
//!
//! Upgrades can be made to fail, as real ones do:
//! - a stopped cluster (fleet file `stopped: true`, or the annotation
//!   [`SIMULATE_STOPPED_ANNOTATION`]`: "true"` on the member's MemberCluster) fails every
//!   step at once with a message saying so;
//! - `upgrade: {failWith: MESSAGE, failAfterSteps: N}` in the fleet file fails every step after
//!   the first N (over the member's life) with MESSAGE;
//! - the annotation [`SIMULATE_FAILURE_ANNOTATION`]`: MESSAGE` fails every step with MESSAGE
//!   while it is there.
//!
//! The provider learns of the annotations through [`Faults`], which [`follow_annotations`]
//! keeps in line with the hub's MemberClusters: the member agent and the [`Provider`] trait
//! know nothing of them, as a real cloud's provider would not.
//!
//! Like AKS, the simulated control plane moves at most one minor version per upgrade and is
//! never downgraded.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use flotilla_api::cluster::MemberCluster;
use flotilla_api::cluster::versions::PowerState;
use flotilla_apiserver::clock::ClockExt;
use flotilla_member::upgrade::{
    CurrentVersions, ExpectedDurations, NodeVersion, PoolVersions, Provider, ProviderError,
    compare_versions,
};
use futures::StreamExt;
use futures::future::BoxFuture;
use kube::core::PartialObjectMeta;
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Client, ResourceExt};

use crate::cluster::{KARPENTER_POOL_PREFIX, SimCluster, SimError};
use crate::fleet::UpgradeBehaviour;

/// MemberCluster annotation: while set, every upgrade step of the member fails with its value.
pub const SIMULATE_FAILURE_ANNOTATION: &str = "updates.flotilla.dev/simulate-failure";
/// MemberCluster annotation: `"true"` makes the member a stopped cluster, which cannot be
/// upgraded.
pub const SIMULATE_STOPPED_ANNOTATION: &str = "updates.flotilla.dev/simulate-stopped";
/// Simulated minutes a control plane upgrade takes unless the fleet file says otherwise.
pub const DEFAULT_CONTROL_PLANE_MINUTES: u32 = 10;
/// Simulated minutes upgrading one node takes unless the fleet file says otherwise.
pub const DEFAULT_NODE_MINUTES: u32 = 4;

/// Faults switched on and off while the member runs (from its MemberCluster's annotations).
/// Clones share the switches.
#[derive(Debug, Clone, Default)]
pub struct Faults(Arc<RwLock<Switches>>);

#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Switches {
    failure: Option<String>,
    stopped: bool,
}

impl Faults {
    /// Sets the switches from a MemberCluster's annotations ([`SIMULATE_FAILURE_ANNOTATION`],
    /// [`SIMULATE_STOPPED_ANNOTATION`]); absent annotations switch their fault off.
    pub fn follow(&self, annotations: &BTreeMap<String, String>) {
        let switches = Switches {
            failure: annotations
                .get(SIMULATE_FAILURE_ANNOTATION)
                .filter(|m| !m.trim().is_empty())
                .cloned(),
            stopped: annotations
                .get(SIMULATE_STOPPED_ANNOTATION)
                .is_some_and(|v| v.eq_ignore_ascii_case("true")),
        };
        *self.0.write().unwrap_or_else(|e| e.into_inner()) = switches;
    }

    fn get(&self) -> Switches {
        self.0.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The message every step fails with, while the failure annotation is set.
    pub fn failure(&self) -> Option<String> {
        self.get().failure
    }

    /// Whether the stopped annotation is set.
    pub fn stopped(&self) -> bool {
        self.get().stopped
    }
}

/// Keeps each member's [`Faults`] (by member name) in line with the annotations of its
/// MemberCluster on the hub, through one watch of all MemberClusters, until the watch ends.
/// Only their metadata is read: every heartbeat of every member changes their status.
pub async fn follow_annotations(hub: Client, faults: HashMap<String, Faults>) {
    let api: Api<PartialObjectMeta<MemberCluster>> = Api::all(hub);
    let mut events = Box::pin(watcher(api, watcher::Config::default()).default_backoff());
    while let Some(event) = events.next().await {
        match event {
            Ok(watcher::Event::Apply(mc) | watcher::Event::InitApply(mc)) => {
                if let Some(f) = faults.get(&mc.name_any()) {
                    f.follow(mc.annotations());
                }
            }
            Ok(watcher::Event::Delete(mc)) => {
                if let Some(f) = faults.get(&mc.name_any()) {
                    f.follow(&BTreeMap::new());
                }
            }
            Ok(_) => {}
            Err(e) => tracing::debug!(error = %e, "watching member clusters for simulated faults"),
        }
    }
}

/// Upgrades one simulated member.
pub struct SimProvider {
    cluster: Arc<SimCluster>,
    durations: ExpectedDurations,
    stopped: bool,
    fail_with: Option<String>,
    fail_after_steps: u32,
    faults: Faults,
    /// Steps done so far (for `failAfterSteps`).
    steps: AtomicU32,
}

impl std::fmt::Debug for SimProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimProvider")
            .field("cluster", &self.cluster.name())
            .field("durations", &self.durations)
            .finish_non_exhaustive()
    }
}

impl SimProvider {
    /// The provider of `cluster`, behaving as its fleet definition says (`stopped`,
    /// `upgrade`), with runtime faults switched through `faults`.
    pub fn new(cluster: Arc<SimCluster>, faults: Faults) -> SimProvider {
        let spec = cluster.spec();
        let behaviour = spec.upgrade.clone().unwrap_or_default();
        let UpgradeBehaviour {
            control_plane_minutes,
            node_minutes,
            fail_with,
            fail_after_steps,
        } = behaviour;
        let minutes =
            |m: Option<u32>, default| Duration::from_secs(60 * u64::from(m.unwrap_or(default)));
        SimProvider {
            durations: ExpectedDurations {
                control_plane: minutes(control_plane_minutes, DEFAULT_CONTROL_PLANE_MINUTES),
                node: minutes(node_minutes, DEFAULT_NODE_MINUTES),
            },
            stopped: spec.stopped,
            fail_with,
            fail_after_steps: fail_after_steps.unwrap_or(0),
            faults,
            steps: AtomicU32::new(0),
            cluster,
        }
    }

    /// Whether the cluster is stopped (fleet file or annotation).
    fn is_stopped(&self) -> bool {
        self.stopped || self.faults.stopped()
    }

    /// Refuses a step the simulated faults make fail.
    fn check_faults(&self) -> Result<(), ProviderError> {
        if self.is_stopped() {
            return Err(ProviderError::Stopped {
                cluster: self.cluster.name().to_string(),
            });
        }
        if let Some(message) = self.faults.failure() {
            return Err(ProviderError::Failed(message));
        }
        match &self.fail_with {
            Some(message) if self.steps.load(Ordering::SeqCst) >= self.fail_after_steps => {
                Err(ProviderError::Failed(message.clone()))
            }
            _ => Ok(()),
        }
    }

    fn unknown(&self, e: SimError) -> ProviderError {
        match e {
            SimError::UnknownPool { pool, .. } => ProviderError::UnknownPool {
                cluster: self.cluster.name().to_string(),
                pool,
            },
            SimError::UnknownNode { pool, node, .. } => ProviderError::UnknownNode {
                cluster: self.cluster.name().to_string(),
                pool,
                node,
            },
            other => ProviderError::Failed(other.to_string()),
        }
    }
}

impl SimProvider {
    /// Upgrades a Karpenter node: moves its pool's node class to `image` and waits, on the
    /// member's clock, until drift has replaced `node` (or it runs `image`). Drift goes at the
    /// pace of the pool's Drifted budget, so the wait is bounded only by
    /// [`AUTO_PROVISIONED_NODE_TIMEOUT`], after which the step fails saying so.
    async fn upgrade_auto_provisioned(
        &self,
        pool: &str,
        node: &str,
        image: &str,
    ) -> Result<(), ProviderError> {
        self.cluster
            .set_auto_provisioned_image(pool, image)
            .await
            .map_err(|e| self.unknown(e))?;
        let clock = self.cluster.clock();
        let deadline = clock.now() + AUTO_PROVISIONED_NODE_TIMEOUT;
        loop {
            let running = self
                .cluster
                .image_of_node(node)
                .await
                .map_err(|e| ProviderError::Failed(e.to_string()))?;
            match running {
                None => break,
                Some(current) if current == image => break,
                Some(current) if clock.now() >= deadline => {
                    return Err(ProviderError::Failed(format!(
                        "node {node} of {pool} still runs {current} after {} minutes: drift replaces nodes only within the NodePool's Drifted budget (see its status.allowedDisruptions and the node's events)",
                        AUTO_PROVISIONED_NODE_TIMEOUT.as_secs() / 60
                    )));
                }
                Some(_) => clock.sleep(AUTO_PROVISIONED_POLL).await,
            }
        }
        self.steps.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
}

/// How long an upgrade waits for drift to replace one Karpenter node.
pub const AUTO_PROVISIONED_NODE_TIMEOUT: jiff::SignedDuration = jiff::SignedDuration::from_hours(6);
/// How often it looks.
const AUTO_PROVISIONED_POLL: Duration = Duration::from_secs(10);

/// Why the control plane cannot go from `current` to `target`, as AKS refuses: a downgrade, or
/// more than one minor version at once.
pub fn control_plane_refusal(current: &str, target: &str) -> Option<String> {
    let minor = |v: &str| -> Option<(u64, u64)> {
        let mut parts = v.trim_start_matches('v').split('.');
        Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
    };
    if compare_versions(target, current).is_some_and(|o| o.is_lt()) {
        return Some(format!(
            "cannot upgrade the control plane from {current} to {target}: Kubernetes versions cannot be downgraded"
        ));
    }
    match (minor(current), minor(target)) {
        (Some((major, from)), Some((to_major, to))) if to_major != major || to > from + 1 => {
            Some(format!(
                "cannot upgrade the control plane from {current} to {target}: upgrade one minor version at a time"
            ))
        }
        _ => None,
    }
}

impl Provider for SimProvider {
    fn current_versions(&self) -> BoxFuture<'_, Result<CurrentVersions, ProviderError>> {
        Box::pin(async move {
            let spec = self.cluster.spec();
            let nodes = self
                .cluster
                .node_images()
                .await
                .map_err(|e| ProviderError::Failed(e.to_string()))?;
            let mut node_pools: Vec<PoolVersions> = spec
                .node_pools
                .iter()
                .map(|pool| PoolVersions {
                    name: pool.name.clone(),
                    image: pool.node_image_version.clone(),
                    nodes: nodes
                        .iter()
                        .filter(|n| n.pool == pool.name)
                        .map(|n| NodeVersion {
                            name: n.node.clone(),
                            image: n.image.clone(),
                        })
                        .collect(),
                })
                .collect();
            let auto = self
                .cluster
                .auto_provisioned_pools()
                .await
                .map_err(|e| ProviderError::Failed(e.to_string()))?;
            node_pools.extend(auto.into_iter().map(|pool| {
                PoolVersions {
                    name: pool.name,
                    image: pool.image,
                    nodes: pool
                        .nodes
                        .into_iter()
                        .map(|n| NodeVersion {
                            name: n.node,
                            image: n.image,
                        })
                        .collect(),
                }
            }));
            Ok(CurrentVersions {
                kubernetes_version: self.cluster.kubernetes_version(),
                node_pools,
                power_state: if self.is_stopped() {
                    PowerState::Stopped
                } else {
                    PowerState::Running
                },
            })
        })
    }

    fn upgrade_control_plane<'a>(
        &'a self,
        version: &'a str,
    ) -> BoxFuture<'a, Result<(), ProviderError>> {
        Box::pin(async move {
            self.check_faults()?;
            let current = self.cluster.kubernetes_version();
            if let Some(refusal) = control_plane_refusal(&current, version) {
                return Err(ProviderError::Failed(refusal));
            }
            self.cluster
                .clock()
                .sleep(self.durations.control_plane)
                .await;
            self.cluster.set_kubernetes_version(version).await;
            self.steps.fetch_add(1, Ordering::SeqCst);
            Ok(())
        })
    }

    fn upgrade_node<'a>(
        &'a self,
        pool: &'a str,
        node: &'a str,
        image: &'a str,
    ) -> BoxFuture<'a, Result<(), ProviderError>> {
        Box::pin(async move {
            self.check_faults()?;
            if pool.starts_with(KARPENTER_POOL_PREFIX) {
                return self.upgrade_auto_provisioned(pool, node, image).await;
            }
            let nodes = self
                .cluster
                .node_images()
                .await
                .map_err(|e| self.unknown(e))?;
            if !nodes.iter().any(|n| n.pool == pool && n.node == node) {
                let cluster = self.cluster.name().to_string();
                let (pool, node) = (pool.to_string(), node.to_string());
                let pool_exists = self
                    .cluster
                    .spec()
                    .node_pools
                    .iter()
                    .any(|p| p.name == pool);
                return Err(if pool_exists {
                    ProviderError::UnknownNode {
                        cluster,
                        pool,
                        node,
                    }
                } else {
                    ProviderError::UnknownPool { cluster, pool }
                });
            }
            self.cluster.clock().sleep(self.durations.node).await;
            self.cluster
                .set_node_image_of(pool, node, image)
                .await
                .map_err(|e| self.unknown(e))?;
            self.steps.fetch_add(1, Ordering::SeqCst);
            Ok(())
        })
    }

    fn expected_durations(&self) -> ExpectedDurations {
        self.durations
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_control_plane_moves_one_minor_at_most_and_never_back() {
        assert_eq!(control_plane_refusal("1.30.6", "1.30.7"), None);
        assert_eq!(control_plane_refusal("1.30.6", "1.31.2"), None);
        assert_eq!(
            control_plane_refusal("1.30.6", "1.32.0").as_deref(),
            Some(
                "cannot upgrade the control plane from 1.30.6 to 1.32.0: upgrade one minor version at a time"
            )
        );
        assert!(
            control_plane_refusal("1.31.2", "1.30.6")
                .unwrap()
                .ends_with("Kubernetes versions cannot be downgraded")
        );
    }

    #[test]
    fn annotations_switch_faults_on_and_off() {
        let faults = Faults::default();
        faults.follow(&BTreeMap::from([
            (
                SIMULATE_FAILURE_ANNOTATION.to_string(),
                "disk full".to_string(),
            ),
            (SIMULATE_STOPPED_ANNOTATION.to_string(), "True".to_string()),
        ]));
        assert_eq!(
            faults.get(),
            Switches {
                failure: Some("disk full".into()),
                stopped: true
            }
        );
        faults.follow(&BTreeMap::from([(
            SIMULATE_STOPPED_ANNOTATION.to_string(),
            "false".to_string(),
        )]));
        assert_eq!(faults.get(), Switches::default());
    }
}
