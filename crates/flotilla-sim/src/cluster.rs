//! A simulated member cluster: Flotilla's API engine over a memory store, its nodes, and one
//! task running the machinery a real cluster runs behind its API (workload controllers,
//! scheduler, kubelets, service allocation). A member agent talks to it with kube-rs exactly
//! as to a real cluster.

mod auto_provisioned;
mod machinery;
mod writer;

pub use flotilla_nodes::consolidation::ConsolidationOptions;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use flotilla_apiserver::engine::WriteOptions;
use flotilla_apiserver::registry::Registry;
use flotilla_apiserver::status::{ApiError, ApiResult};
use flotilla_apiserver::{Clock, Compaction, Engine, Hub, HubOptions, SystemClock};
use flotilla_store::MemoryStore;
use k8s_openapi::api::core::v1::Node;
use tokio::task::JoinHandle;

use crate::actions::Action;
use crate::fleet::MemberSpec;
use crate::kubelet::Timing;
use crate::node_pool::{self, AGENT_POOL_LABEL, NODE_IMAGE_LABEL, UnknownInstanceType};
use crate::reconcile::Settings;
use crate::{services, version};
pub use auto_provisioned::{AutoProvisionedPool, KARPENTER_POOL_PREFIX};
use machinery::Machinery;
use writer::Writer;

/// The namespaces a member cluster has from the start.
pub const MEMBER_NAMESPACES: &[&str] =
    &["default", "kube-system", "kube-public", "kube-node-lease"];

/// How a simulated member behaves.
#[derive(Clone)]
pub struct SimOptions {
    /// From a pod's scheduling to its containers running and Ready.
    pub readiness_delay: Duration,
    /// How long a Job's pod runs before it succeeds.
    pub job_duration: Duration,
    /// The clock the member's machinery reads and sleeps on.
    pub clock: Arc<dyn Clock>,
    /// What Karpenter's feature gates switch on in its consolidation.
    pub consolidation: ConsolidationOptions,
}

impl Default for SimOptions {
    /// 5 s to readiness, 10 s jobs, wall-clock time.
    fn default() -> Self {
        SimOptions {
            readiness_delay: Duration::from_secs(5),
            job_duration: Duration::from_secs(10),
            clock: Arc::new(SystemClock),
            consolidation: ConsolidationOptions::default(),
        }
    }
}

impl std::fmt::Debug for SimOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimOptions")
            .field("readiness_delay", &self.readiness_delay)
            .field("job_duration", &self.job_duration)
            .field("consolidation", &self.consolidation)
            .finish_non_exhaustive()
    }
}

/// Why a simulated member could not start or change.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// A node pool names an instance type the catalog lacks.
    #[error(transparent)]
    InstanceType(#[from] UnknownInstanceType),
    /// The member has no node pool of that name.
    #[error("member {member:?} has no node pool {pool:?}")]
    UnknownPool {
        /// The member.
        member: String,
        /// The pool asked for.
        pool: String,
    },
    /// The node pool has no node of that name.
    #[error("node pool {pool:?} of member {member:?} has no node {node:?}")]
    UnknownNode {
        /// The member.
        member: String,
        /// The pool.
        pool: String,
        /// The node asked for.
        node: String,
    },
    /// The member's API refused a write.
    #[error("member API: {0}")]
    Api(#[from] ApiError),
}

/// The node image one node of a simulated member runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeImage {
    /// The node's pool.
    pub pool: String,
    /// The node's name.
    pub node: String,
    /// The image it runs (its `kubernetes.azure.com/node-image-version` label).
    pub image: String,
}

/// A running simulated member cluster. Dropping it stops its machinery and its engine's
/// housekeeping.
pub struct SimCluster {
    name: String,
    hub: Hub,
    clock: Arc<dyn Clock>,
    spec: Arc<RwLock<MemberSpec>>,
    machinery: JoinHandle<()>,
}

impl std::fmt::Debug for SimCluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimCluster")
            .field("name", &self.name())
            .field("engine", self.hub.engine())
            .finish_non_exhaustive()
    }
}

fn to_duration(d: Duration) -> jiff::SignedDuration {
    jiff::SignedDuration::try_from(d).unwrap_or(jiff::SignedDuration::MAX)
}

impl SimCluster {
    /// The built-in kinds a member serves (the core Kubernetes kinds and the fleet's
    /// member-side kinds), parsed once; every member serves a [`Registry::sibling`] of it.
    pub fn member_kinds() -> Arc<Registry> {
        let definitions = flotilla_api::member_crds()
            .into_iter()
            .filter_map(|crd| serde_json::to_value(crd).ok())
            .collect();
        Arc::new(Registry::new(definitions))
    }

    /// Starts the member described by `spec`: its API engine serving `kinds`, its namespaces,
    /// the `kubernetes` service, its nodes, and the task running its machinery. Must run
    /// inside a tokio runtime.
    pub async fn start(
        spec: &MemberSpec,
        options: SimOptions,
        kinds: &Arc<Registry>,
    ) -> Result<SimCluster, SimError> {
        let nodes = node_pool::nodes(spec, options.clock.now())?;
        let hub = Hub::start(
            Arc::new(MemoryStore::new()),
            HubOptions {
                kinds: Some(kinds.clone()),
                system_namespaces: MEMBER_NAMESPACES,
                clock: options.clock.clone(),
                compaction: Compaction {
                    interval: Duration::from_secs(300),
                    retain: 1000,
                },
                ..Default::default()
            },
        )
        .await?;
        let mut writer = Writer::new(hub.engine().clone())?;
        let now = options.clock.now();
        writer
            .execute(Action::create(&services::kubernetes_service()), now)
            .await?;
        for node in &nodes {
            create_node(&mut writer, node, now).await?;
        }
        writer
            .execute(Action::create(&crate::karpenter::default_node_class()), now)
            .await?;
        let settings = Settings {
            member: spec.name.clone(),
            region: spec.region.clone(),
            kubernetes_version: spec.kubernetes_version.clone(),
            timing: Timing {
                readiness_delay: to_duration(options.readiness_delay),
                job_duration: to_duration(options.job_duration),
            },
            consolidation: options.consolidation,
        };
        let clock = options.clock;
        let shared = Arc::new(RwLock::new(spec.clone()));
        let machinery =
            tokio::spawn(Machinery::new(writer, settings, clock.clone(), shared.clone()).run());
        Ok(SimCluster {
            name: spec.name.clone(),
            hub,
            clock,
            spec: shared,
            machinery,
        })
    }

    /// The member's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The member as it is now (its Kubernetes version and node images follow upgrades).
    pub fn spec(&self) -> MemberSpec {
        self.read_spec().clone()
    }

    fn read_spec(&self) -> std::sync::RwLockReadGuard<'_, MemberSpec> {
        self.spec.read().unwrap_or_else(|e| e.into_inner())
    }

    /// The member's API engine.
    pub fn engine(&self) -> &Engine {
        self.hub.engine()
    }

    /// The member's API as a router; `/version` reports its control plane's version.
    pub fn router(&self) -> axum::Router {
        let spec = self.spec.clone();
        self.hub.router().route(
            "/version",
            axum::routing::get(move || {
                let version = spec
                    .read()
                    .map(|s| s.kubernetes_version.clone())
                    .unwrap_or_default();
                async move { axum::Json(version::document(&version)) }
            }),
        )
    }

    /// A kube-rs client talking to this member in-process.
    pub fn client(&self) -> kube::Client {
        flotilla_apiserver::client::in_process(self.router(), "default")
    }

    /// The control plane's Kubernetes version, e.g. `1.30.3`.
    pub fn kubernetes_version(&self) -> String {
        self.read_spec()
            .kubernetes_version
            .trim_start_matches('v')
            .to_string()
    }

    /// Upgrades the control plane to `version` (`1.31.1` or `v1.31.1`).
    pub async fn set_kubernetes_version(&self, version: &str) {
        let mut spec = self.spec.write().unwrap_or_else(|e| e.into_inner());
        spec.kubernetes_version = version.trim_start_matches('v').to_string();
    }

    /// The clock the member follows.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    /// Moves node pool `pool` to node image `image` at once: the pool's nodes are relabelled
    /// and report the image's OS.
    pub async fn set_node_image(&self, pool: &str, image: &str) -> Result<(), SimError> {
        self.set_pool_image(pool, image)?;
        let mut writer = Writer::new(self.engine().clone())?;
        for node in self.stored_nodes().await? {
            if pool_of(&node) == Some(pool) {
                self.write_node_image(&mut writer, &node, image).await?;
            }
        }
        Ok(())
    }

    /// Moves one node, `node` of pool `pool`, to node image `image` (as reimaging it does); once
    /// every node of the pool runs `image`, the pool's image ([`MemberSpec`]) is `image` too.
    pub async fn set_node_image_of(
        &self,
        pool: &str,
        node: &str,
        image: &str,
    ) -> Result<(), SimError> {
        self.pool_exists(pool)?;
        let nodes: Vec<Node> = self
            .stored_nodes()
            .await?
            .into_iter()
            .filter(|n| pool_of(n) == Some(pool))
            .collect();
        let target = nodes
            .iter()
            .find(|n| n.metadata.name.as_deref() == Some(node))
            .ok_or_else(|| SimError::UnknownNode {
                member: self.name.clone(),
                pool: pool.to_string(),
                node: node.to_string(),
            })?;
        let mut writer = Writer::new(self.engine().clone())?;
        self.write_node_image(&mut writer, target, image).await?;
        let all_done = nodes
            .iter()
            .all(|n| n.metadata.name.as_deref() == Some(node) || image_of(n) == Some(image));
        if all_done {
            self.set_pool_image(pool, image)?;
        }
        Ok(())
    }

    /// The image each node runs, by pool in the member's pool order, nodes by name.
    pub async fn node_images(&self) -> Result<Vec<NodeImage>, SimError> {
        let pools: Vec<String> = self
            .read_spec()
            .node_pools
            .iter()
            .map(|p| p.name.clone())
            .collect();
        let mut images: Vec<NodeImage> = self
            .stored_nodes()
            .await?
            .iter()
            .filter_map(|n| {
                Some(NodeImage {
                    pool: pool_of(n)?.to_string(),
                    node: n.metadata.name.clone()?,
                    image: image_of(n).unwrap_or_default().to_string(),
                })
            })
            .collect();
        let rank = |pool: &str| pools.iter().position(|p| p == pool).unwrap_or(pools.len());
        images.sort_by(|a, b| (rank(&a.pool), &a.node).cmp(&(rank(&b.pool), &b.node)));
        Ok(images)
    }

    fn pool_exists(&self, pool: &str) -> Result<(), SimError> {
        if self.read_spec().node_pools.iter().any(|p| p.name == pool) {
            Ok(())
        } else {
            Err(SimError::UnknownPool {
                member: self.name.clone(),
                pool: pool.to_string(),
            })
        }
    }

    fn set_pool_image(&self, pool: &str, image: &str) -> Result<(), SimError> {
        let mut spec = self.spec.write().unwrap_or_else(|e| e.into_inner());
        let found = spec
            .node_pools
            .iter_mut()
            .find(|p| p.name == pool)
            .ok_or_else(|| SimError::UnknownPool {
                member: self.name.clone(),
                pool: pool.to_string(),
            })?;
        found.node_image_version = image.to_string();
        Ok(())
    }

    /// Every node as stored, with its resource version.
    async fn stored_nodes(&self) -> Result<Vec<Node>, SimError> {
        self.stored("Node", |n: &mut Node, v| {
            n.metadata.resource_version = Some(v)
        })
        .await
    }

    /// Relabels `node` (as stored) for `image` and writes its status.
    async fn write_node_image(
        &self,
        writer: &mut Writer,
        node: &Node,
        image: &str,
    ) -> Result<(), SimError> {
        let updated = node_pool::with_image(node, image);
        let now = self.clock.now();
        writer.execute(Action::update(&updated), now).await?;
        if let Some(status) = &updated.status {
            writer
                .execute(Action::write_status(&updated, status), now)
                .await?;
        }
        Ok(())
    }
}

/// The pool a node belongs to.
fn pool_of(node: &Node) -> Option<&str> {
    node.metadata
        .labels
        .as_ref()?
        .get(AGENT_POOL_LABEL)
        .map(String::as_str)
}

/// The image a node runs.
fn image_of(node: &Node) -> Option<&str> {
    node.metadata
        .labels
        .as_ref()?
        .get(NODE_IMAGE_LABEL)
        .map(String::as_str)
}

/// Creates a node and writes its status (which a create does not store).
async fn create_node(writer: &mut Writer, node: &Node, now: jiff::Timestamp) -> ApiResult<()> {
    let info = writer.info("Node")?.clone();
    let body = serde_json::to_value(node).map_err(|e| ApiError::internal(e.to_string()))?;
    let created = writer
        .engine()
        .create(&info, None, body, &WriteOptions::default())
        .await?;
    let stored: Node =
        serde_json::from_value(created.object).map_err(|e| ApiError::internal(e.to_string()))?;
    if let Some(status) = &node.status {
        writer
            .execute(Action::write_status(&stored, status), now)
            .await?;
    }
    Ok(())
}

impl Drop for SimCluster {
    fn drop(&mut self) {
        self.machinery.abort();
    }
}
