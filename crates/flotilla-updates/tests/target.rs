//! The release rules of a run over one member: Kubernetes target, one-minor rule, node image
//! selection, availability in the member's region.

use std::collections::BTreeMap;

use flotilla_api::cluster::versions::{ClusterVersions, NodePoolVersion, PowerState};
use flotilla_api::updates::catalog::{
    KubernetesVersionSpec, NodeImageVersionSpec, RegionAvailability,
};
use flotilla_api::updates::update_run::{NodeImageSelectionType, UpgradeType};
use flotilla_updates::release::{Catalog, KubeVersion, KubernetesTarget, NodeImage};
use flotilla_updates::run::{Readiness, UpgradeOrder};
use flotilla_updates::target::{MemberFacts, RunTarget, STOPPED_MESSAGE, readiness};
use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

const UBUNTU: &str = "AKSUbuntu-2204gen2containerd";

fn at(text: &str) -> Timestamp {
    text.parse().unwrap()
}

fn availability(regions: &[(&str, &str)]) -> Vec<RegionAvailability> {
    regions
        .iter()
        .map(|(region, when)| RegionAvailability {
            region: region.to_string(),
            available_at: Time(at(when)),
        })
        .collect()
}

fn kubernetes() -> Vec<KubernetesVersionSpec> {
    [
        ("1.30.6", "2026-01-01T00:00:00Z"),
        ("1.31.2", "2026-11-01T00:00:00Z"),
    ]
    .iter()
    .map(|(version, when)| KubernetesVersionSpec {
        version: version.to_string(),
        availability: availability(&[("eastus", when), ("westus", "2026-11-25T00:00:00Z")]),
        ..Default::default()
    })
    .collect()
}

fn images() -> Vec<NodeImageVersionSpec> {
    vec![
        NodeImageVersionSpec {
            family: UBUNTU.into(),
            version: "202510.13.0".into(),
            availability: availability(&[
                ("eastus", "2026-10-13T00:00:00Z"),
                ("westus", "2026-10-14T00:00:00Z"),
            ]),
        },
        NodeImageVersionSpec {
            family: UBUNTU.into(),
            version: "202511.02.0".into(),
            availability: availability(&[
                ("eastus", "2026-11-02T00:00:00Z"),
                ("westus", "2026-11-30T00:00:00Z"),
            ]),
        },
    ]
}

fn member(version: &str, image: &str) -> ClusterVersions {
    ClusterVersions {
        kubernetes_version: version.into(),
        node_pools: vec![NodePoolVersion {
            name: "system".into(),
            image: format!("{UBUNTU}-{image}"),
            image_family: UBUNTU.into(),
            image_version: image.into(),
            node_count: 3,
        }],
        ..Default::default()
    }
}

fn decide(
    upgrade_type: UpgradeType,
    version: Option<&str>,
    selection: NodeImageSelectionType,
    images_chosen: BTreeMap<String, Option<NodeImage>>,
    region: &str,
    versions: &ClusterVersions,
) -> Readiness {
    let (k, i) = (kubernetes(), images());
    let catalog = Catalog::new(k.iter(), i.iter());
    let now = at("2026-11-21T00:00:00Z");
    let target = RunTarget {
        upgrade_type,
        kubernetes: version.map(|v| KubernetesTarget {
            version: KubeVersion::parse(v).unwrap(),
            requires_long_term_support: false,
        }),
        selection,
        images: images_chosen,
        catalog: &catalog,
    };
    let facts = MemberFacts {
        region,
        versions: Some(versions),
        long_term_support: false,
    };
    readiness(&target, &facts, now)
}

#[test]
fn a_full_run_upgrades_the_control_plane_and_the_newest_image_of_the_region() {
    let got = decide(
        UpgradeType::Full,
        Some("1.31.2"),
        NodeImageSelectionType::Latest,
        BTreeMap::new(),
        "eastus",
        &member("1.30.6", "202510.13.0"),
    );
    assert_eq!(
        got,
        Readiness::Upgrade(UpgradeOrder {
            kubernetes_version: Some("1.31.2".into()),
            node_images: vec![format!("{UBUNTU}-202511.02.0")],
        })
    );
}

#[test]
fn a_version_not_yet_in_the_region_makes_the_member_wait_until_it_arrives() {
    let got = decide(
        UpgradeType::Full,
        Some("1.31.2"),
        NodeImageSelectionType::Latest,
        BTreeMap::new(),
        "westus",
        &member("1.30.6", "202510.13.0"),
    );
    assert_eq!(
        got,
        Readiness::NotYet {
            code: "KubernetesVersionNotAvailable".into(),
            message: "Kubernetes version 1.31.2 is not available in region westus".into(),
            until: Some(at("2026-11-25T00:00:00Z")),
        }
    );
    let chosen = BTreeMap::from([(
        UBUNTU.to_string(),
        Some(NodeImage::parse(&format!("{UBUNTU}-202511.02.0")).unwrap()),
    )]);
    let got = decide(
        UpgradeType::NodeImageOnly,
        None,
        NodeImageSelectionType::Custom,
        chosen,
        "westus",
        &member("1.30.6", "202510.13.0"),
    );
    assert_eq!(
        got,
        Readiness::NotYet {
            code: "NodeImageVersionNotAvailable".into(),
            message: format!(
                "node image version {UBUNTU}-202511.02.0 is not available in region westus"
            ),
            until: Some(at("2026-11-30T00:00:00Z")),
        }
    );
}

#[test]
fn members_at_target_are_skipped_with_the_reason() {
    let got = decide(
        UpgradeType::ControlPlaneOnly,
        Some("1.31.2"),
        NodeImageSelectionType::Latest,
        BTreeMap::new(),
        "eastus",
        &member("1.31.2", "202510.13.0"),
    );
    assert_eq!(got, Readiness::AtTarget("already at 1.31.2".into()));
    let got = decide(
        UpgradeType::NodeImageOnly,
        None,
        NodeImageSelectionType::Latest,
        BTreeMap::new(),
        "westus",
        &member("1.30.6", "202510.13.0"),
    );
    assert_eq!(
        got,
        Readiness::AtTarget(format!(
            "current node image version {UBUNTU}-202510.13.0 of pool system is already at or ahead of target upgrade version {UBUNTU}-202510.13.0"
        ))
    );
}

#[test]
fn two_minors_behind_is_skipped_and_consistent_without_a_common_image_skips_the_member() {
    let got = decide(
        UpgradeType::Full,
        Some("1.31.2"),
        NodeImageSelectionType::Latest,
        BTreeMap::new(),
        "eastus",
        &member("1.29.4", "202510.13.0"),
    );
    assert_eq!(
        got,
        Readiness::Skip(
            "1.29.4 is more than one minor behind 1.31.x; align it with a manual run first".into()
        )
    );
    let none = BTreeMap::from([(UBUNTU.to_string(), None)]);
    let got = decide(
        UpgradeType::NodeImageOnly,
        None,
        NodeImageSelectionType::Consistent,
        none,
        "eastus",
        &member("1.30.6", "202510.13.0"),
    );
    assert_eq!(
        got,
        Readiness::Skip(format!(
            "no version of node image family {UBUNTU} is available in every region of the run (pool system)"
        ))
    );
}

#[test]
fn a_stopped_member_is_skipped_with_the_reason_before_any_release_rule() {
    let mut stopped = member("1.30.6", "202510.13.0");
    stopped.power_state = PowerState::Stopped;
    for upgrade_type in [
        UpgradeType::Full,
        UpgradeType::ControlPlaneOnly,
        UpgradeType::NodeImageOnly,
    ] {
        let version = (upgrade_type != UpgradeType::NodeImageOnly).then_some("1.31.2");
        let got = decide(
            upgrade_type,
            version,
            NodeImageSelectionType::Latest,
            BTreeMap::new(),
            "eastus",
            &stopped,
        );
        assert_eq!(got, Readiness::Skip(STOPPED_MESSAGE.to_string()));
    }
    // Started again, the same member is upgraded.
    stopped.power_state = PowerState::Running;
    let got = decide(
        UpgradeType::Full,
        Some("1.31.2"),
        NodeImageSelectionType::Latest,
        BTreeMap::new(),
        "eastus",
        &stopped,
    );
    assert!(matches!(got, Readiness::Upgrade(_)), "{got:?}");
}
