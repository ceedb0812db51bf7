//! What one member's upgrade is to do, decided when its turn comes: the release rules of a
//! run (Kubernetes target, one-minor rule, long-term support, node image selection and
//! availability in the member's region) over the versions the member reports.

use std::collections::BTreeMap;

use flotilla_api::cluster::versions::{ClusterVersions, PowerState};
use flotilla_api::updates::update_run::{NodeImageSelectionType, UpgradeType};
use jiff::Timestamp;

use crate::release::{Catalog, KubeVersion, KubernetesTarget, NodeImage, Verdict, member_verdict};
use crate::run::{Readiness, UpgradeOrder};

/// Error code of a member whose target Kubernetes version has not reached its region.
pub const KUBERNETES_NOT_AVAILABLE: &str = "KubernetesVersionNotAvailable";
/// Error code of a member whose target node image has not reached its region.
pub const IMAGE_NOT_AVAILABLE: &str = "NodeImageVersionNotAvailable";
/// Why a stopped member is skipped.
pub const STOPPED_MESSAGE: &str = "the cluster is stopped (its agent reports power state Stopped): a stopped cluster cannot be upgraded; start it and run again to upgrade it";
/// Error code of a member that has not reported its versions yet.
pub const VERSIONS_UNKNOWN: &str = "MemberVersionsUnknown";
/// Why such a member waits, and what to do: an agent reports versions only with an upgrade
/// provider, which `flotilla member` on a real cluster does not have yet, so the wait may not
/// end by itself. The member is looked at again whenever its MemberCluster changes.
pub const VERSIONS_UNKNOWN_MESSAGE: &str = "the member agent has not reported the cluster's versions yet; \
     an agent reports them only when it can upgrade the cluster (simulated members can; `flotilla member` \
     on a real cluster cannot yet): skip the member (spec.skip, type Member) to let its group go on";

/// The release side of a run, resolved once per pass.
pub struct RunTarget<'a> {
    /// The kind of upgrade.
    pub upgrade_type: UpgradeType,
    /// The Kubernetes target, for Full and ControlPlaneOnly runs.
    pub kubernetes: Option<KubernetesTarget>,
    /// How images are chosen.
    pub selection: NodeImageSelectionType,
    /// Per family: the Consistent choice (`None`: no version all regions share) or the
    /// Custom version.
    pub images: BTreeMap<String, Option<NodeImage>>,
    /// The catalog.
    pub catalog: &'a Catalog<'a>,
}

/// One member as the release rules see it.
pub struct MemberFacts<'a> {
    /// Its region.
    pub region: &'a str,
    /// What it runs, once its agent has reported.
    pub versions: Option<&'a ClusterVersions>,
    /// Whether it is under long-term support.
    pub long_term_support: bool,
}

/// Whether `member` can be upgraded now, and to what.
pub fn readiness(target: &RunTarget, member: &MemberFacts, now: Timestamp) -> Readiness {
    let Some(versions) = member.versions else {
        return Readiness::NotYet {
            code: VERSIONS_UNKNOWN.to_string(),
            message: VERSIONS_UNKNOWN_MESSAGE.to_string(),
            until: None,
        };
    };
    if versions.power_state == PowerState::Stopped {
        return Readiness::Skip(STOPPED_MESSAGE.to_string());
    }
    let mut order = UpgradeOrder::default();
    let mut current = Vec::new();
    if let Some(kubernetes) = &target.kubernetes
        && target.upgrade_type != UpgradeType::NodeImageOnly
    {
        let Ok(running) = KubeVersion::parse(&versions.kubernetes_version) else {
            return Readiness::Skip(format!(
                "the member reports an unreadable Kubernetes version {:?}",
                versions.kubernetes_version
            ));
        };
        match member_verdict(running, kubernetes, member.long_term_support) {
            Verdict::Upgrade => {
                let version = kubernetes.version;
                if !target
                    .catalog
                    .kubernetes_available_in(version, member.region, now)
                {
                    return Readiness::NotYet {
                        code: KUBERNETES_NOT_AVAILABLE.to_string(),
                        message: format!(
                            "Kubernetes version {version} is not available in region {}",
                            member.region
                        ),
                        until: target
                            .catalog
                            .kubernetes_available_at(version, member.region),
                    };
                }
                order.kubernetes_version = Some(version.to_string());
            }
            Verdict::AtTarget { message } => current.push(message),
            Verdict::Skip { message } => return Readiness::Skip(message),
            Verdict::Fail { message } => return Readiness::Fail(message),
        }
    }
    if target.upgrade_type != UpgradeType::ControlPlaneOnly {
        for pool in &versions.node_pools {
            let Ok(have) = NodeImage::parse(&pool.image) else {
                continue;
            };
            let want = match target.selection {
                NodeImageSelectionType::Latest => {
                    target
                        .catalog
                        .latest_image(&have.family, member.region, now)
                }
                NodeImageSelectionType::Consistent => match target.images.get(&have.family) {
                    Some(Some(image)) => Some(image.clone()),
                    _ => {
                        return Readiness::Skip(format!(
                            "no version of node image family {} is available in every region of the run (pool {})",
                            have.family, pool.name
                        ));
                    }
                },
                NodeImageSelectionType::Custom => {
                    target.images.get(&have.family).cloned().flatten()
                }
            };
            match want {
                Some(want) if want > have => {
                    if !target.catalog.image_available_in(&want, member.region, now) {
                        return Readiness::NotYet {
                            code: IMAGE_NOT_AVAILABLE.to_string(),
                            message: format!(
                                "node image version {want} is not available in region {}",
                                member.region
                            ),
                            until: target.catalog.image_available_at(&want, member.region),
                        };
                    }
                    let name = want.to_string();
                    if !order.node_images.contains(&name) {
                        order.node_images.push(name);
                    }
                }
                Some(want) => current.push(format!(
                    "current node image version {have} of pool {} is already at or ahead of target upgrade version {want}",
                    pool.name
                )),
                None => {}
            }
        }
    }
    if order.kubernetes_version.is_none() && order.node_images.is_empty() {
        let why = if current.is_empty() {
            "nothing to upgrade".to_string()
        } else {
            current.join("; ")
        };
        return Readiness::AtTarget(why);
    }
    Readiness::Upgrade(order)
}
