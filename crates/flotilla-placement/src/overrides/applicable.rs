//! Which override snapshots apply to a placement (KubeFleet's
//! `FetchAllMatchingOverridesForResourceSnapshot`) and to one of its clusters
//! (`PickFromResourceMatchedOverridesForTargetCluster`).

use flotilla_api::placement::status::NamespacedName;
use flotilla_api::placement::{ClusterResourceOverrideSnapshot, ResourceOverrideSnapshot};
use serde_json::Value;

use super::ClusterView;
use super::error::OverrideError;
use super::source::{ResourceId, Source};
use crate::placement_key::PlacementKey;

/// The latest override snapshots that apply to one placement, in the order they are applied:
/// ClusterResourceOverrides by name, then ResourceOverrides by namespace and name.
#[derive(Clone, Debug, Default)]
pub struct ApplicableOverrides<'a> {
    cluster: Vec<&'a ClusterResourceOverrideSnapshot>,
    namespaced: Vec<&'a ResourceOverrideSnapshot>,
}

/// The override snapshots with a rule for one cluster: what the cluster's binding records
/// (`clusterResourceOverrideSnapshots`, `resourceOverrideSnapshots`) and the placement status
/// reports as applicable.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClusterOverrides {
    /// ClusterResourceOverride snapshot names, sorted.
    pub cluster_resource_overrides: Vec<String>,
    /// ResourceOverride snapshots, sorted by namespace and name.
    pub resource_overrides: Vec<NamespacedName>,
}

impl<'a> ApplicableOverrides<'a> {
    /// The snapshots among `cluster_snapshots` and `namespaced_snapshots` that apply to
    /// `placement` (a ClusterResourcePlacement or a ResourcePlacement), which selected the
    /// manifests `selected`: latest snapshots whose placement reference is unset or names the
    /// placement, and which select at least one of the manifests.
    pub fn select(
        placement: &PlacementKey,
        selected: &[Value],
        cluster_snapshots: &'a [ClusterResourceOverrideSnapshot],
        namespaced_snapshots: &'a [ResourceOverrideSnapshot],
    ) -> Self {
        let ids: Vec<ResourceId<'_>> = selected.iter().filter_map(ResourceId::of).collect();
        let applies = |source: Source<'_>| {
            source.usable_by(placement) && ids.iter().any(|id| source.selects(id))
        };
        let mut cluster: Vec<_> = cluster_snapshots
            .iter()
            .filter(|s| applies(Source::cluster(s)))
            .collect();
        cluster.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
        let mut namespaced: Vec<_> = namespaced_snapshots
            .iter()
            .filter(|s| applies(Source::namespaced(s)))
            .collect();
        namespaced.sort_by(|a, b| {
            (&a.metadata.namespace, &a.metadata.name)
                .cmp(&(&b.metadata.namespace, &b.metadata.name))
        });
        ApplicableOverrides {
            cluster,
            namespaced,
        }
    }

    /// The applicable ClusterResourceOverride snapshots, by name.
    pub fn cluster_resource_overrides(&self) -> &[&'a ClusterResourceOverrideSnapshot] {
        &self.cluster
    }

    /// The applicable ResourceOverride snapshots, by namespace and name.
    pub fn resource_overrides(&self) -> &[&'a ResourceOverrideSnapshot] {
        &self.namespaced
    }

    /// Every applicable snapshot in application order: ClusterResourceOverrides first, so
    /// that ResourceOverrides win.
    pub(crate) fn sources(&self) -> impl Iterator<Item = Source<'a>> + '_ {
        let cluster = self.cluster.iter().map(|s| Source::cluster(s));
        let namespaced = self.namespaced.iter().map(|s| Source::namespaced(s));
        cluster.chain(namespaced)
    }

    /// The applicable snapshots with at least one rule selecting `cluster`. Fails when a rule's
    /// cluster selector is invalid.
    pub fn for_cluster(
        &self,
        cluster: ClusterView<'_>,
    ) -> Result<ClusterOverrides, Box<OverrideError>> {
        let mut out = ClusterOverrides::default();
        for source in self.sources() {
            if source.rules_for(cluster, None)?.is_empty() {
                continue;
            }
            match source.namespace() {
                None => out
                    .cluster_resource_overrides
                    .push(source.snapshot.to_string()),
                Some(namespace) => out.resource_overrides.push(NamespacedName {
                    name: source.snapshot.to_string(),
                    namespace: namespace.to_string(),
                }),
            }
        }
        Ok(out)
    }
}
