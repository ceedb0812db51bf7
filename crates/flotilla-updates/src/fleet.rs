//! The fleet as an update run sees it, built from plain lists of objects: the members and the
//! versions they report, their maintenance windows, and the release catalog. The controller
//! builds it from its caches on every reconcile and the forecast from the lists a client
//! fetched, so both take the same decisions from the same inputs: which members a plan lays
//! out, which window governs a member, what the release rules know about it, the run's
//! Kubernetes target and the images a Consistent or Custom run upgrades to.

use std::collections::{BTreeMap, HashMap};

use flotilla_api::cluster::MemberCluster;
use flotilla_api::cluster::member_cluster::MEMBER_NAMESPACE_PREFIX;
use flotilla_api::cluster::versions::ClusterVersions;
use flotilla_api::updates::maintenance::{AUTO_UPGRADE_SCHEDULE, NODE_OS_UPGRADE_SCHEDULE};
use flotilla_api::updates::update_run::{
    NodeImageSelectionType, NodeImageVersionRef, SelectedNodeImages, UpdateRunStatus, UpgradeType,
};
use flotilla_api::updates::{
    KubernetesVersion, LONG_TERM_SUPPORT_LABEL, MaintenanceConfiguration, NodeImageVersion,
    REGION_LABEL, UpdateRunSpec, UpdateRunStrategy,
};
use jiff::Timestamp;
use kube::ResourceExt;

use crate::release::{Catalog, KubeVersion, KubernetesTarget, NodeImage};
use crate::run::init::{PlanError, PlanMember, implicit_strategy, plan};
use crate::run::{Readiness, WindowFacts};
use crate::target::{MemberFacts, RunTarget, readiness};
use crate::window::Window;

/// The members, windows and catalog an update run is decided over.
pub struct FleetView<'a> {
    /// Members not being deleted, by name.
    members: BTreeMap<String, &'a MemberCluster>,
    /// Parsed `aks-managed-auto-upgrade-schedule` windows, by member.
    kubernetes_windows: HashMap<String, Window>,
    /// Parsed `aks-managed-node-os-upgrade-schedule` windows, by member.
    node_image_windows: HashMap<String, Window>,
    /// The release catalog.
    catalog: Catalog<'a>,
}

impl<'a> FleetView<'a> {
    /// The fleet of these objects. Members being deleted are left out; a maintenance
    /// configuration outside a member namespace (`fleet-member-<name>`) or whose window does
    /// not parse governs nothing.
    pub fn new(
        members: impl IntoIterator<Item = &'a MemberCluster>,
        configurations: impl IntoIterator<Item = &'a MaintenanceConfiguration>,
        kubernetes: impl IntoIterator<Item = &'a KubernetesVersion>,
        images: impl IntoIterator<Item = &'a NodeImageVersion>,
    ) -> FleetView<'a> {
        let mut kubernetes_windows = HashMap::new();
        let mut node_image_windows = HashMap::new();
        for configuration in configurations {
            let windows = match configuration.name_any().as_str() {
                AUTO_UPGRADE_SCHEDULE => &mut kubernetes_windows,
                NODE_OS_UPGRADE_SCHEDULE => &mut node_image_windows,
                _ => continue,
            };
            let Some(member) = configuration
                .namespace()
                .and_then(|ns| Some(ns.strip_prefix(MEMBER_NAMESPACE_PREFIX)?.to_string()))
            else {
                continue;
            };
            if let Ok(window) = Window::parse(&configuration.spec.maintenance_window) {
                windows.insert(member, window);
            }
        }
        FleetView {
            members: members
                .into_iter()
                .filter(|m| m.metadata.deletion_timestamp.is_none())
                .map(|m| (m.name_any(), m))
                .collect(),
            kubernetes_windows,
            node_image_windows,
            catalog: Catalog::new(
                kubernetes.into_iter().map(|k| &k.spec),
                images.into_iter().map(|i| &i.spec),
            ),
        }
    }

    /// The members as a plan lays them out.
    fn plan_members(&self) -> Vec<PlanMember> {
        self.members
            .iter()
            .map(|(name, m)| PlanMember {
                name: name.clone(),
                labels: m.labels().clone(),
            })
            .collect()
    }

    /// The versions member `name` reports, if it is in the fleet and has reported.
    pub fn versions(&self, name: &str) -> Option<&'a ClusterVersions> {
        self.members.get(name).copied().and_then(versions)
    }

    /// What the release rules need about member `name`.
    fn facts(&self, name: &str) -> Option<MemberFacts<'a>> {
        let member = *self.members.get(name)?;
        Some(MemberFacts {
            region: region(member),
            versions: versions(member),
            long_term_support: member
                .labels()
                .get(LONG_TERM_SUPPORT_LABEL)
                .is_some_and(|v| v == "true"),
        })
    }

    /// The window governing `upgrade` on member `name`: `aks-managed-auto-upgrade-schedule`
    /// for Full and ControlPlaneOnly runs, `aks-managed-node-os-upgrade-schedule` for
    /// NodeImageOnly runs. `None`: the member has none, work may start at any time.
    pub fn window(&self, name: &str, upgrade: UpgradeType) -> Option<&Window> {
        match upgrade {
            UpgradeType::NodeImageOnly => self.node_image_windows.get(name),
            UpgradeType::Full | UpgradeType::ControlPlaneOnly => self.kubernetes_windows.get(name),
        }
    }

    /// Window facts at `now` of every member of the run that is still waiting and has a
    /// window governing `upgrade`.
    pub fn window_facts(
        &self,
        status: &UpdateRunStatus,
        upgrade: UpgradeType,
        now: Timestamp,
    ) -> HashMap<String, WindowFacts> {
        status
            .stages
            .iter()
            .flat_map(|s| &s.groups)
            .flat_map(|g| &g.members)
            .filter(|m| !m.progress.state.is_final())
            .filter_map(|m| {
                let facts = WindowFacts::of(Some(self.window(&m.name, upgrade)?), now);
                Some((m.name.clone(), facts))
            })
            .collect()
    }

    /// Lays a run that has not started over the fleet: copies `strategy` into the status,
    /// plans its stages, and for a Consistent run chooses the images at `now`.
    pub fn prepare(
        &self,
        spec: &UpdateRunSpec,
        status: &mut UpdateRunStatus,
        strategy: UpdateRunStrategy,
        now: Timestamp,
    ) -> Result<(), PlanError> {
        custom_images_per_family(spec)?;
        let stages = plan(&strategy, &self.plan_members());
        status.strategy = Some(strategy);
        status.stages = stages?;
        if selection(spec) == NodeImageSelectionType::Consistent {
            let usage = self.image_usage(status);
            let chosen = self
                .catalog
                .consistent_images(usage.iter().map(|(r, f)| (r.as_str(), f.as_str())), now);
            status.node_image_selection = Some(SelectedNodeImages {
                selected_node_image_versions: chosen
                    .values()
                    .flatten()
                    .map(|image| NodeImageVersionRef {
                        version: image.to_string(),
                    })
                    .collect(),
            });
        }
        Ok(())
    }

    /// `(region, image family)` of every node pool of the run's members, for Consistent
    /// selection.
    fn image_usage(&self, status: &UpdateRunStatus) -> Vec<(String, String)> {
        run_members(status)
            .filter_map(|name| self.members.get(name).copied())
            .flat_map(|m| {
                let region = region(m);
                versions(m)
                    .into_iter()
                    .flat_map(|v| &v.node_pools)
                    .map(move |p| (region.to_string(), p.image_family.clone()))
            })
            .collect()
    }

    /// The release side of the run at `now`: its Kubernetes target judged against the
    /// support window now, and the images a Consistent (as chosen in `status`) or Custom run
    /// upgrades to.
    pub fn target(
        &self,
        spec: &UpdateRunSpec,
        status: &UpdateRunStatus,
        now: Timestamp,
    ) -> RunTarget<'_> {
        let update = &spec.managed_cluster_update;
        let selection = selection(spec);
        RunTarget {
            upgrade_type: update.upgrade.upgrade_type,
            kubernetes: self.kubernetes_target(update.upgrade.kubernetes_version.as_deref(), now),
            selection,
            images: chosen_images(spec, status, selection),
            catalog: &self.catalog,
        }
    }

    /// The run's Kubernetes target, judged against the support window now.
    fn kubernetes_target(&self, version: Option<&str>, now: Timestamp) -> Option<KubernetesTarget> {
        let version = KubeVersion::parse(version?).ok()?;
        Some(match self.catalog.support_window(now) {
            Some(window) => KubernetesTarget::new(version, &window),
            None => KubernetesTarget {
                version,
                requires_long_term_support: false,
            },
        })
    }

    /// Whether member `name` can be upgraded at `now` under `target`; a member that has left
    /// the fleet is skipped.
    pub fn readiness(&self, target: &RunTarget, name: &str, now: Timestamp) -> Readiness {
        match self.facts(name) {
            Some(facts) => readiness(target, &facts, now),
            None => Readiness::Skip("the member has left the fleet".to_string()),
        }
    }
}

/// The run's node image selection type (default `Latest`).
fn selection(spec: &UpdateRunSpec) -> NodeImageSelectionType {
    spec.managed_cluster_update
        .node_image_selection
        .as_ref()
        .map(|s| s.selection_type)
        .unwrap_or_default()
}

/// A member's region label (empty when unset: no release is available there).
fn region(member: &MemberCluster) -> &str {
    member.labels().get(REGION_LABEL).map_or("", String::as_str)
}

/// The versions a member's agent reported.
fn versions(member: &MemberCluster) -> Option<&ClusterVersions> {
    member.status.as_ref().and_then(|s| s.versions.as_ref())
}

/// The names of the members in a run's plan.
fn run_members(status: &UpdateRunStatus) -> impl Iterator<Item = &str> {
    status
        .stages
        .iter()
        .flat_map(|s| &s.groups)
        .flat_map(|g| &g.members)
        .map(|m| m.name.as_str())
}

/// Per family, the image a Consistent or Custom run upgrades to.
fn chosen_images(
    spec: &UpdateRunSpec,
    status: &UpdateRunStatus,
    selection: NodeImageSelectionType,
) -> BTreeMap<String, Option<NodeImage>> {
    let listed: Vec<&NodeImageVersionRef> = match selection {
        NodeImageSelectionType::Latest => Vec::new(),
        NodeImageSelectionType::Consistent => status
            .node_image_selection
            .iter()
            .flat_map(|s| &s.selected_node_image_versions)
            .collect(),
        NodeImageSelectionType::Custom => spec
            .managed_cluster_update
            .node_image_selection
            .iter()
            .flat_map(|s| &s.custom_node_image_versions)
            .collect(),
    };
    listed
        .into_iter()
        .filter_map(|r| NodeImage::parse(&r.version).ok())
        .map(|image| (image.family.clone(), Some(image)))
        .collect()
}

/// A Custom run's images, at most one per family.
fn custom_images_per_family(spec: &UpdateRunSpec) -> Result<(), PlanError> {
    let mut seen: HashMap<String, &str> = HashMap::new();
    let custom = spec.managed_cluster_update.node_image_selection.iter();
    for listed in custom.flat_map(|s| &s.custom_node_image_versions) {
        if let Ok(image) = NodeImage::parse(&listed.version)
            && let Some(first) = seen.insert(image.family.clone(), &listed.version)
        {
            return Err(PlanError::ImageFamily {
                family: image.family,
                first: first.to_string(),
                second: listed.version.clone(),
            });
        }
    }
    Ok(())
}

/// A run names a `FleetUpdateStrategy` that does not exist.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("FleetUpdateStrategy {0} not found")]
pub struct StrategyNotFound(pub String);

/// The strategy a run that has not started follows: its inline strategy, the copy already in
/// its status, the `FleetUpdateStrategy` it names (`named`, fetched by the caller: see
/// [`strategy_to_fetch`]), or the implicit one-by-one stage.
pub fn run_strategy(
    spec: &UpdateRunSpec,
    status: &UpdateRunStatus,
    named: Option<&UpdateRunStrategy>,
) -> Result<UpdateRunStrategy, StrategyNotFound> {
    match (&spec.strategy, &spec.update_strategy_name, &status.strategy) {
        (Some(inline), _, _) => Ok(inline.clone()),
        (None, Some(_), Some(copied)) => Ok(copied.clone()),
        (None, Some(name), None) => named.cloned().ok_or_else(|| StrategyNotFound(name.clone())),
        (None, None, _) => Ok(implicit_strategy()),
    }
}

/// The `FleetUpdateStrategy` a run that has not started needs fetched: the one it names,
/// unless its status already holds the copy.
pub fn strategy_to_fetch<'s>(spec: &'s UpdateRunSpec, status: &UpdateRunStatus) -> Option<&'s str> {
    match (&spec.strategy, &spec.update_strategy_name, &status.strategy) {
        (None, Some(name), None) => Some(name),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn custom(images: &[&str]) -> UpdateRunSpec {
        serde_json::from_value(serde_json::json!({
            "managedClusterUpdate": {
                "upgrade": {"type": "NodeImageOnly"},
                "nodeImageSelection": {
                    "type": "Custom",
                    "customNodeImageVersions": images.iter().map(|v| serde_json::json!({"version": v})).collect::<Vec<_>>(),
                },
            },
        }))
        .unwrap()
    }

    #[test]
    fn a_custom_run_names_one_image_per_family() {
        let two_families = custom(&[
            "AKSUbuntu-2204gen2containerd-202510.13.0",
            "AKSAzureLinux-V3gen2-202510.13.0",
        ]);
        assert_eq!(custom_images_per_family(&two_families), Ok(()));
        let one_family_twice = custom(&[
            "AKSUbuntu-2204gen2containerd-202510.13.0",
            "AKSUbuntu-2204gen2containerd-202511.02.0",
        ]);
        assert_eq!(
            custom_images_per_family(&one_family_twice)
                .unwrap_err()
                .to_string(),
            "customNodeImageVersions name AKSUbuntu-2204gen2containerd-202510.13.0 and \
             AKSUbuntu-2204gen2containerd-202511.02.0, both of family \
             AKSUbuntu-2204gen2containerd; at most one version per image family"
        );
    }
}
