//! Node image upgrades of a member whose nodes Karpenter manages: each NodePool is reported
//! as a pool named `nodepool/<name>` whose image is its AKSNodeClass's, and upgrading one of
//! its nodes moves the node class to the new image — drift then replaces the pool's nodes
//! within its budgets — and waits until that node is gone or runs the new image.

use flotilla_api::cluster::versions::split_image;
use flotilla_api::nodes::{AKSNodeClass, DEFAULT_NODE_CLASS, NODEPOOL_LABEL, NodePool};
use flotilla_apiserver::status::ApiError;
use flotilla_store::ListRequest;
use k8s_openapi::api::core::v1::Node;
use serde::de::DeserializeOwned;

use super::writer::Writer;
use super::{NodeImage, SimCluster, SimError, image_of};
use crate::actions::Action;
use crate::karpenter::node_classes::image_name;

/// How version reports name a Karpenter NodePool: `nodepool/<name>` (AKS agent pool names
/// cannot contain `/`, so the two never clash).
pub const KARPENTER_POOL_PREFIX: &str = "nodepool/";

/// A Karpenter NodePool as version reports show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AutoProvisionedPool {
    /// `nodepool/<name>`.
    pub name: String,
    /// The image its node class resolves to (full name).
    pub image: String,
    /// Its nodes and their images, by name.
    pub nodes: Vec<NodeImage>,
}

/// The node class a pool uses.
fn class_name(pool: &NodePool) -> &str {
    pool.spec
        .template
        .spec
        .node_class_ref
        .as_ref()
        .map_or(DEFAULT_NODE_CLASS, |r| r.name.as_str())
}

/// The image `class` resolves to, as a full name.
fn class_image(class: &AKSNodeClass) -> Option<String> {
    let version = class
        .status
        .as_ref()
        .and_then(|s| s.image_version.clone())
        .or_else(|| class.spec.image_version.clone())?;
    Some(image_name(class, &version))
}

impl SimCluster {
    /// Every stored object of `kind`, with its resource version.
    pub(super) async fn stored<T: DeserializeOwned>(
        &self,
        kind: &str,
        set_version: impl Fn(&mut T, String),
    ) -> Result<Vec<T>, SimError> {
        let writer = Writer::new(self.engine().clone())?;
        let info = writer.info(kind)?.clone();
        let listed = self
            .engine()
            .store()
            .list(ListRequest {
                prefix: info.prefix(),
                ..Default::default()
            })
            .await
            .map_err(ApiError::from)?;
        Ok(listed
            .items
            .into_iter()
            .filter_map(|kv| {
                let mut obj = serde_json::from_slice::<T>(&kv.value).ok()?;
                set_version(&mut obj, kv.mod_revision.to_string());
                Some(obj)
            })
            .collect())
    }

    async fn node_pools(&self) -> Result<Vec<NodePool>, SimError> {
        self.stored("NodePool", |p: &mut NodePool, v| {
            p.metadata.resource_version = Some(v)
        })
        .await
    }

    async fn node_classes(&self) -> Result<Vec<AKSNodeClass>, SimError> {
        self.stored("AKSNodeClass", |c: &mut AKSNodeClass, v| {
            c.metadata.resource_version = Some(v)
        })
        .await
    }

    /// Karpenter's NodePools with the image each node runs, by pool name.
    pub async fn auto_provisioned_pools(&self) -> Result<Vec<AutoProvisionedPool>, SimError> {
        let classes = self.node_classes().await?;
        let nodes = self.stored_nodes().await?;
        let mut pools: Vec<AutoProvisionedPool> = self
            .node_pools()
            .await?
            .iter()
            .map(|pool| {
                let name = pool.metadata.name.clone().unwrap_or_default();
                let image = classes
                    .iter()
                    .find(|c| c.metadata.name.as_deref() == Some(class_name(pool)))
                    .and_then(class_image)
                    .unwrap_or_default();
                let mut members: Vec<NodeImage> = nodes
                    .iter()
                    .filter(|n| label(n, NODEPOOL_LABEL) == Some(name.as_str()))
                    .map(|n| NodeImage {
                        pool: format!("{KARPENTER_POOL_PREFIX}{name}"),
                        node: n.metadata.name.clone().unwrap_or_default(),
                        image: image_of(n).unwrap_or_default().to_string(),
                    })
                    .collect();
                members.sort_by(|a, b| a.node.cmp(&b.node));
                AutoProvisionedPool {
                    name: format!("{KARPENTER_POOL_PREFIX}{name}"),
                    image,
                    nodes: members,
                }
            })
            .collect();
        pools.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(pools)
    }

    /// Moves the node class of Karpenter pool `pool` (`nodepool/<name>`) to `image`, unless
    /// it is there already; `image` must be of the class's image family.
    pub async fn set_auto_provisioned_image(
        &self,
        pool: &str,
        image: &str,
    ) -> Result<(), SimError> {
        let unknown = || SimError::UnknownPool {
            member: self.name.clone(),
            pool: pool.to_string(),
        };
        let name = pool
            .strip_prefix(KARPENTER_POOL_PREFIX)
            .ok_or_else(unknown)?;
        let pools = self.node_pools().await?;
        let found = pools
            .iter()
            .find(|p| p.metadata.name.as_deref() == Some(name))
            .ok_or_else(unknown)?;
        let mut class = self
            .node_classes()
            .await?
            .into_iter()
            .find(|c| c.metadata.name.as_deref() == Some(class_name(found)))
            .ok_or_else(|| {
                SimError::Api(ApiError::bad_request(format!(
                    "AKSNodeClass {:?} of NodePool {name} does not exist",
                    class_name(found)
                )))
            })?;
        let (_, version) = split_image(image).ok_or_else(|| {
            SimError::Api(ApiError::bad_request(format!(
                "{image:?} is not a node image name"
            )))
        })?;
        if image_name(&class, version) != image {
            return Err(SimError::Api(ApiError::bad_request(format!(
                "image {image} is not of AKSNodeClass {:?}'s image family",
                class.metadata.name.as_deref().unwrap_or_default()
            ))));
        }
        if class.spec.image_version.as_deref() == Some(version) {
            return Ok(());
        }
        class.spec.image_version = Some(version.to_string());
        let mut writer = Writer::new(self.engine().clone())?;
        writer
            .execute(Action::update(&class), self.clock.now())
            .await?;
        Ok(())
    }

    /// The image node `node` runs, or `None` once it is gone.
    pub async fn image_of_node(&self, node: &str) -> Result<Option<String>, SimError> {
        Ok(self
            .stored_nodes()
            .await?
            .iter()
            .find(|n| n.metadata.name.as_deref() == Some(node))
            .map(|n| image_of(n).unwrap_or_default().to_string()))
    }
}

/// A node's label `key`.
fn label<'a>(node: &'a Node, key: &str) -> Option<&'a str> {
    node.metadata.labels.as_ref()?.get(key).map(String::as_str)
}
