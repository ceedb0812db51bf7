//! The executor's pure core: from what a cluster runs and what a MemberUpgrade asks for, the
//! ordered steps still to do. The control plane comes first (for `Full` and
//! `ControlPlaneOnly`), then each node pool node by node (for `Full` and `NodeImageOnly`) to
//! the image of its family listed in `spec.nodeImages`; pools of other families keep their
//! image. A step already at (or past) its target is done, not planned, so planning again
//! after an interruption resumes where the upgrade stopped.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use flotilla_api::cluster::versions::split_image;
use flotilla_api::updates::MemberUpgradeSpec;
use flotilla_api::updates::update_run::UpgradeType;

use super::provider::{CurrentVersions, compare_versions};

/// One step of an upgrade.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Upgrade the control plane to `version`.
    ControlPlane {
        /// The target Kubernetes version.
        version: String,
    },
    /// Upgrade node `node` of pool `pool` to `image`.
    Node {
        /// The pool.
        pool: String,
        /// The node.
        node: String,
        /// The target image (full name).
        image: String,
        /// The node's place in its pool, from 1.
        position: usize,
        /// How many nodes the pool has.
        pool_size: usize,
    },
}

impl Step {
    /// What the step does, for the MemberUpgrade's message: `upgrading control plane to
    /// 1.31.2`, `upgrading pool apps node 2/4 to AKSUbuntu-2204gen2containerd-202511.02.0`.
    pub fn describe(&self) -> String {
        match self {
            Step::ControlPlane { version } => format!("upgrading control plane to {version}"),
            Step::Node {
                pool,
                image,
                position,
                pool_size,
                ..
            } => format!("upgrading pool {pool} node {position}/{pool_size} to {image}"),
        }
    }
}

/// What is left of an upgrade.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// Steps the whole upgrade has (the control plane counts one, each node of a pool with a
    /// target image one), whether done or not.
    pub total: usize,
    /// The steps still to do, in order.
    pub steps: Vec<Step>,
    /// What the upgrade brings the cluster to, for the message of a finished upgrade:
    /// `control plane at 1.31.2; 7 node(s) on AKSUbuntu-2204gen2containerd-202511.02.0`.
    pub summary: String,
}

impl Plan {
    /// Steps already done.
    pub fn done(&self) -> usize {
        self.total - self.steps.len()
    }
}

/// Why a MemberUpgrade cannot be planned (it fails with this message).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// `Full` and `ControlPlaneOnly` need `spec.kubernetesVersion`.
    #[error("spec.kubernetesVersion is required for a {0:?} upgrade")]
    MissingKubernetesVersion(UpgradeType),
    /// `spec.kubernetesVersion` is not `MAJOR.MINOR.PATCH`.
    #[error("spec.kubernetesVersion {0:?} is not a Kubernetes version (MAJOR.MINOR.PATCH)")]
    InvalidKubernetesVersion(String),
    /// An entry of `spec.nodeImages` is not `<family>-<version>`.
    #[error("spec.nodeImages: {0:?} is not a full node image name (<family>-<version>)")]
    InvalidImage(String),
    /// Two entries of `spec.nodeImages` are of the same family.
    #[error(
        "spec.nodeImages: {first:?} and {second:?} are both of family {family}; give one image per family"
    )]
    DuplicateFamily {
        /// The family.
        family: String,
        /// The first image of the family.
        first: String,
        /// The other.
        second: String,
    },
}

/// Whether `current` is at or past `target` (an unreadable current version is not).
fn at_or_past(current: &str, target: &str) -> bool {
    compare_versions(current, target).is_some_and(Ordering::is_ge)
}

/// The steps that bring a cluster running `current` to what `spec` asks for.
pub fn plan(current: &CurrentVersions, spec: &MemberUpgradeSpec) -> Result<Plan, PlanError> {
    let (control_plane, nodes) = match spec.upgrade_type {
        UpgradeType::Full => (true, true),
        UpgradeType::ControlPlaneOnly => (true, false),
        UpgradeType::NodeImageOnly => (false, true),
    };
    let mut total = 0;
    let mut steps = Vec::new();
    let mut summary = Vec::new();
    if control_plane {
        let version = spec
            .kubernetes_version
            .as_deref()
            .ok_or(PlanError::MissingKubernetesVersion(spec.upgrade_type))?;
        let version = version.trim_start_matches('v');
        if compare_versions(version, "0").is_none() || version.split('.').count() != 3 {
            return Err(PlanError::InvalidKubernetesVersion(version.to_string()));
        }
        total += 1;
        if !at_or_past(&current.kubernetes_version, version) {
            steps.push(Step::ControlPlane {
                version: version.to_string(),
            });
        }
        summary.push(format!("control plane at {version}"));
    }
    if nodes {
        // Target image per family.
        let mut targets: BTreeMap<&str, (&str, &str)> = BTreeMap::new();
        for image in &spec.node_images {
            let (family, version) =
                split_image(image).ok_or_else(|| PlanError::InvalidImage(image.clone()))?;
            if let Some((first, _)) = targets.insert(family, (image, version)) {
                return Err(PlanError::DuplicateFamily {
                    family: family.to_string(),
                    first: first.to_string(),
                    second: image.clone(),
                });
            }
        }
        let mut upgraded: BTreeMap<&str, usize> = BTreeMap::new();
        for pool in &current.node_pools {
            for (index, node) in pool.nodes.iter().enumerate() {
                let Some((family, version)) = split_image(&node.image) else {
                    continue;
                };
                let Some(&(image, target)) = targets.get(family) else {
                    continue;
                };
                total += 1;
                *upgraded.entry(image).or_default() += 1;
                if !at_or_past(version, target) {
                    steps.push(Step::Node {
                        pool: pool.name.clone(),
                        node: node.name.clone(),
                        image: image.to_string(),
                        position: index + 1,
                        pool_size: pool.nodes.len(),
                    });
                }
            }
        }
        if !upgraded.is_empty() {
            let count: usize = upgraded.values().sum();
            let images: Vec<&str> = upgraded.keys().copied().collect();
            summary.push(format!("{count} node(s) on {}", images.join(", ")));
        }
    }
    Ok(Plan {
        total,
        steps,
        summary: if summary.is_empty() {
            "no node pool runs a family of spec.nodeImages; nothing to upgrade".to_string()
        } else {
            summary.join("; ")
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::upgrade::provider::{NodeVersion, PoolVersions};

    const UBUNTU_OLD: &str = "AKSUbuntu-2204gen2containerd-202510.13.0";
    const UBUNTU_NEW: &str = "AKSUbuntu-2204gen2containerd-202511.02.0";
    const ARM_OLD: &str = "AKSUbuntu-2204gen2arm64containerd-202510.13.0";
    const ARM_NEW: &str = "AKSUbuntu-2204gen2arm64containerd-202511.02.0";

    fn pool(name: &str, images: &[&str]) -> PoolVersions {
        PoolVersions {
            name: name.into(),
            image: images[0].into(),
            nodes: images
                .iter()
                .enumerate()
                .map(|(i, image)| NodeVersion {
                    name: format!("{name}-{i}"),
                    image: image.to_string(),
                })
                .collect(),
        }
    }

    fn cluster(version: &str, pools: Vec<PoolVersions>) -> CurrentVersions {
        CurrentVersions {
            kubernetes_version: version.into(),
            node_pools: pools,
            ..Default::default()
        }
    }

    fn spec(kind: UpgradeType, version: Option<&str>, images: &[&str]) -> MemberUpgradeSpec {
        MemberUpgradeSpec {
            update_run: "run".into(),
            upgrade_type: kind,
            kubernetes_version: version.map(String::from),
            node_images: images.iter().map(|i| i.to_string()).collect(),
        }
    }

    /// Each step described, and `done/total`.
    fn outline(plan: &Plan) -> (Vec<String>, String) {
        (
            plan.steps.iter().map(Step::describe).collect(),
            format!("{}/{}", plan.done(), plan.total),
        )
    }

    #[test]
    fn full_upgrades_the_control_plane_then_nodes_of_listed_families() {
        let current = cluster(
            "1.30.6",
            vec![
                pool("system", &[UBUNTU_OLD, UBUNTU_OLD]),
                pool("arm", &[ARM_OLD]),
                pool("linux", &["AKSAzureLinux-V3gen2-202510.13.0"]),
            ],
        );
        let plan = plan(
            &current,
            &spec(UpgradeType::Full, Some("1.31.2"), &[UBUNTU_NEW, ARM_NEW]),
        )
        .unwrap();
        assert_eq!(
            outline(&plan),
            (
                vec![
                    "upgrading control plane to 1.31.2".to_string(),
                    format!("upgrading pool system node 1/2 to {UBUNTU_NEW}"),
                    format!("upgrading pool system node 2/2 to {UBUNTU_NEW}"),
                    format!("upgrading pool arm node 1/1 to {ARM_NEW}"),
                ],
                "0/4".to_string()
            )
        );
        assert_eq!(
            plan.summary,
            format!("control plane at 1.31.2; 3 node(s) on {ARM_NEW}, {UBUNTU_NEW}")
        );
        assert_eq!(
            plan.steps[1],
            Step::Node {
                pool: "system".into(),
                node: "system-0".into(),
                image: UBUNTU_NEW.into(),
                position: 1,
                pool_size: 2
            }
        );
    }

    #[test]
    fn a_resumed_upgrade_skips_what_is_at_or_past_its_target() {
        // Interrupted after the control plane and the first node.
        let current = cluster(
            "1.31.2",
            vec![pool("apps", &[UBUNTU_NEW, UBUNTU_OLD, UBUNTU_OLD])],
        );
        let plan = plan(
            &current,
            &spec(UpgradeType::Full, Some("1.31.2"), &[UBUNTU_NEW]),
        )
        .unwrap();
        assert_eq!(
            outline(&plan),
            (
                vec![
                    format!("upgrading pool apps node 2/3 to {UBUNTU_NEW}"),
                    format!("upgrading pool apps node 3/3 to {UBUNTU_NEW}"),
                ],
                "2/4".to_string()
            )
        );
        // Newer than the target counts as done too: nothing is downgraded.
        let ahead = cluster("1.31.3", vec![pool("apps", &[UBUNTU_NEW])]);
        let plan = super::plan(
            &ahead,
            &spec(UpgradeType::Full, Some("1.31.2"), &[UBUNTU_OLD]),
        )
        .unwrap();
        assert_eq!(outline(&plan), (vec![], "2/2".to_string()));
    }

    #[test]
    fn each_type_touches_only_its_part() {
        let current = cluster("1.30.6", vec![pool("system", &[UBUNTU_OLD])]);
        let control_plane_only = plan(
            &current,
            &spec(UpgradeType::ControlPlaneOnly, Some("1.31.2"), &[UBUNTU_NEW]),
        )
        .unwrap();
        assert_eq!(
            outline(&control_plane_only),
            (
                vec!["upgrading control plane to 1.31.2".to_string()],
                "0/1".to_string()
            )
        );
        let node_image_only = plan(
            &current,
            &spec(UpgradeType::NodeImageOnly, None, &[UBUNTU_NEW]),
        )
        .unwrap();
        assert_eq!(
            outline(&node_image_only),
            (
                vec![format!("upgrading pool system node 1/1 to {UBUNTU_NEW}")],
                "0/1".to_string()
            )
        );
        // A Full upgrade without node images is done after the control plane.
        let full = plan(&current, &spec(UpgradeType::Full, Some("1.31.2"), &[])).unwrap();
        assert_eq!(
            outline(&full),
            (
                vec!["upgrading control plane to 1.31.2".to_string()],
                "0/1".to_string()
            )
        );
        assert_eq!(full.summary, "control plane at 1.31.2");
        // Images of families no pool runs change nothing.
        let other = plan(
            &current,
            &spec(UpgradeType::NodeImageOnly, None, &[ARM_NEW]),
        )
        .unwrap();
        assert_eq!(outline(&other), (vec![], "0/0".to_string()));
        assert!(
            other.summary.contains("nothing to upgrade"),
            "{}",
            other.summary
        );
    }

    #[test]
    fn unplannable_specs_say_why() {
        let current = cluster("1.30.6", vec![pool("system", &[UBUNTU_OLD])]);
        let error = |s: MemberUpgradeSpec| plan(&current, &s).unwrap_err().to_string();
        assert_eq!(
            error(spec(UpgradeType::ControlPlaneOnly, None, &[])),
            "spec.kubernetesVersion is required for a ControlPlaneOnly upgrade"
        );
        assert_eq!(
            error(spec(UpgradeType::Full, Some("1.31"), &[])),
            "spec.kubernetesVersion \"1.31\" is not a Kubernetes version (MAJOR.MINOR.PATCH)"
        );
        assert_eq!(
            error(spec(UpgradeType::NodeImageOnly, None, &["ubuntu"])),
            "spec.nodeImages: \"ubuntu\" is not a full node image name (<family>-<version>)"
        );
        assert!(
            error(spec(
                UpgradeType::NodeImageOnly,
                None,
                &[UBUNTU_OLD, UBUNTU_NEW]
            ))
            .contains("are both of family AKSUbuntu-2204gen2containerd")
        );
    }
}
