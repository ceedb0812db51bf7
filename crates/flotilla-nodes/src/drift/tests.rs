use std::collections::BTreeMap;

use flotilla_api::nodes::{
    AKSNodeClassStatus, ArtifactStreaming, Budget, Disruption, LinuxOsConfig, NodeClaimSpec,
    NodeClaimStatus, NodeClassReference, Security, Sysctls, aks_node_class::KubeletConfiguration,
    node_pool::TemplateMetadata,
};
use k8s_openapi::api::core::v1::Taint;
use proptest::prelude::*;

use super::*;

fn pool(spec: NodePoolSpec) -> NodePool {
    NodePool::new("default", spec)
}

fn class(spec: AKSNodeClassSpec, image: &str, kubernetes: &str) -> AKSNodeClass {
    let mut class = AKSNodeClass::new("default", spec);
    class.status = Some(AKSNodeClassStatus {
        image_version: Some(image.into()),
        kubernetes_version: Some(kubernetes.into()),
        ..AKSNodeClassStatus::default()
    });
    class
}

/// A claim launched from `pool_spec` and `class_spec`, running `image`.
fn launched(pool_spec: &NodePoolSpec, class_spec: &AKSNodeClassSpec, image: &str) -> NodeClaim {
    let mut claim = NodeClaim::new(
        "default-x7k2p",
        NodeClaimSpec {
            node_class_ref: NodeClassReference::default(),
            ..NodeClaimSpec::default()
        },
    );
    claim.metadata.annotations = Some(
        launch_annotations(pool_spec, class_spec)
            .into_iter()
            .collect(),
    );
    claim.status = Some(NodeClaimStatus {
        image_id: Some(image.into()),
        ..NodeClaimStatus::default()
    });
    claim
}

const IMAGE: &str = "AKSUbuntu-2204gen2containerd-202501.05.0";
const NEWER: &str = "AKSUbuntu-2204gen2containerd-202502.10.0";

fn taint(key: &str) -> Taint {
    Taint {
        key: key.into(),
        effect: "NoSchedule".into(),
        ..Taint::default()
    }
}

fn check(
    changed_pool: NodePoolSpec,
    changed_class: AKSNodeClassSpec,
    context: impl Fn(&AKSNodeClass) -> DriftContext<'_>,
    image: &str,
) -> Option<&'static str> {
    let launched_from = NodePoolSpec::default();
    let claim = launched(&launched_from, &AKSNodeClassSpec::default(), IMAGE);
    let class = class(changed_class, image, "1.31.2");
    drifted(&claim, &pool(changed_pool), context(&class)).map(|d| d.reason())
}

fn with_class(class: &AKSNodeClass) -> DriftContext<'_> {
    DriftContext {
        node_class: Some(class),
        kubelet_version: Some("v1.31.2"),
        ..DriftContext::default()
    }
}

#[test]
fn drift_decisions() {
    let labelled = {
        let mut spec = NodePoolSpec::default();
        spec.template.metadata = Some(TemplateMetadata {
            labels: BTreeMap::from([("team".into(), "payments".into())]),
            ..TemplateMetadata::default()
        });
        spec
    };
    let behaviour_only = NodePoolSpec {
        weight: Some(50),
        disruption: Some(Disruption {
            budgets: Some(vec![Budget {
                nodes: "0".into(),
                ..Budget::default()
            }]),
            ..Disruption::default()
        }),
        ..NodePoolSpec::default()
    };
    let mut requirements_only = NodePoolSpec::default();
    requirements_only.template.spec.requirements =
        vec![flotilla_api::nodes::NodeSelectorRequirementWithMinValues {
            key: "karpenter.sh/capacity-type".into(),
            values: vec!["spot".into()],
            ..Default::default()
        }];
    let shorter_life = NodePoolSpec {
        disruption: Some(Disruption {
            expire_after: Some("168h".into()),
            ..Disruption::default()
        }),
        ..NodePoolSpec::default()
    };
    let bigger_disk = AKSNodeClassSpec {
        os_disk_size_gb: Some(256),
        ..AKSNodeClassSpec::default()
    };
    let kubelet = AKSNodeClassSpec {
        kubelet: Some(KubeletConfiguration {
            pod_pids_limit: Some(4096),
            ..KubeletConfiguration::default()
        }),
        ..AKSNodeClassSpec::default()
    };
    let sysctl = AKSNodeClassSpec {
        linux_os_config: Some(LinuxOsConfig {
            sysctls: Some(Sysctls {
                vm_max_map_count: Some(262144),
                ..Sysctls::default()
            }),
            ..LinuxOsConfig::default()
        }),
        ..AKSNodeClassSpec::default()
    };
    let streaming = AKSNodeClassSpec {
        artifact_streaming: Some(ArtifactStreaming {
            enabled: Some(true),
        }),
        ..AKSNodeClassSpec::default()
    };
    let encrypted = AKSNodeClassSpec {
        security: Some(Security {
            encryption_at_host: Some(true),
        }),
        ..AKSNodeClassSpec::default()
    };
    let tagged = AKSNodeClassSpec {
        tags: BTreeMap::from([("cost-center".into(), "42".into())]),
        ..AKSNodeClassSpec::default()
    };
    let pinned_image = AKSNodeClassSpec {
        image_version: Some("202502.10.0".into()),
        ..AKSNodeClassSpec::default()
    };
    let d = NodePoolSpec::default;
    let c = AKSNodeClassSpec::default;
    let cases: Vec<(&str, Option<&str>)> = vec![
        ("unchanged", check(d(), c(), with_class, IMAGE)),
        ("template label", check(labelled, c(), with_class, IMAGE)),
        (
            "weight and budgets",
            check(behaviour_only, c(), with_class, IMAGE),
        ),
        (
            "requirements",
            check(requirements_only, c(), with_class, IMAGE),
        ),
        (
            "lifetime in spec.disruption",
            check(shorter_life, c(), with_class, IMAGE),
        ),
        ("os disk", check(d(), bigger_disk, with_class, IMAGE)),
        ("kubelet", check(d(), kubelet, with_class, IMAGE)),
        ("sysctl", check(d(), sysctl, with_class, IMAGE)),
        (
            "artifact streaming",
            check(d(), streaming, with_class, IMAGE),
        ),
        (
            "encryption at host",
            check(d(), encrypted, with_class, IMAGE),
        ),
        ("tags", check(d(), tagged, with_class, IMAGE)),
        (
            "image version pinned",
            check(d(), pinned_image, with_class, NEWER),
        ),
        ("newer image", check(d(), c(), with_class, NEWER)),
        (
            "kubelet version",
            check(
                d(),
                c(),
                |class| DriftContext {
                    kubelet_version: Some("v1.30.9"),
                    ..with_class(class)
                },
                IMAGE,
            ),
        ),
        (
            "requirement mismatch",
            check(
                d(),
                c(),
                |class| DriftContext {
                    requirement_mismatch: Some("karpenter.sh/capacity-type In [spot]"),
                    ..with_class(class)
                },
                IMAGE,
            ),
        ),
        (
            "no node class",
            check(d(), c(), |_| DriftContext::default(), IMAGE),
        ),
    ];
    let expected = [
        ("unchanged", None),
        ("template label", Some("NodePoolDrifted")),
        ("weight and budgets", None),
        ("requirements", None),
        ("lifetime in spec.disruption", Some("NodePoolDrifted")),
        ("os disk", Some("NodeClassDrifted")),
        ("kubelet", Some("NodeClassDrifted")),
        ("sysctl", Some("NodeClassDrifted")),
        ("artifact streaming", Some("NodeClassDrifted")),
        ("encryption at host", Some("NodeClassDrifted")),
        ("tags", None),
        ("image version pinned", Some("ImageDrifted")),
        ("newer image", Some("ImageDrifted")),
        ("kubelet version", Some("K8sVersionDrifted")),
        ("requirement mismatch", Some("RequirementsDrifted")),
        ("no node class", None),
    ];
    assert_eq!(cases, expected.to_vec());
}

#[test]
fn a_hash_version_bump_does_not_drift_every_node() {
    let spec = NodePoolSpec::default();
    let mut claim = launched(&spec, &AKSNodeClassSpec::default(), IMAGE);
    let annotations = claim.metadata.annotations.as_mut().unwrap();
    annotations.insert(NODEPOOL_HASH_ANNOTATION.into(), "stale".into());
    annotations.insert(NODEPOOL_HASH_VERSION_ANNOTATION.into(), "v2".into());
    assert_eq!(drifted(&claim, &pool(spec), DriftContext::default()), None);
}

#[test]
fn claims_of_an_older_hash_version_are_restamped_unless_drifted() {
    let pool_spec = NodePoolSpec::default();
    let class_spec = AKSNodeClassSpec {
        os_disk_size_gb: Some(256),
        ..AKSNodeClassSpec::default()
    };
    let current = launched(&pool_spec, &class_spec, IMAGE);
    assert_eq!(restamp(&current, &pool_spec, Some(&class_spec)), None);

    let mut old = current.clone();
    let annotations = old.metadata.annotations.as_mut().unwrap();
    annotations.insert(NODECLASS_HASH_ANNOTATION.into(), "older".into());
    annotations.insert(NODECLASS_HASH_VERSION_ANNOTATION.into(), "v3".into());
    assert_eq!(
        restamp(&old, &pool_spec, Some(&class_spec)),
        Some(vec![
            (
                NODECLASS_HASH_VERSION_ANNOTATION.to_string(),
                NODE_CLASS_HASH_VERSION.to_string()
            ),
            (
                NODECLASS_HASH_ANNOTATION.to_string(),
                node_class_hash(&class_spec)
            ),
        ])
    );
    // Without its class only the pool's hash is looked at, and it is current.
    assert_eq!(restamp(&old, &pool_spec, None), None);

    // A drifted claim keeps the hash it drifted from; only the version moves.
    old.status.as_mut().unwrap().conditions.push(
        k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition {
            type_: "Drifted".into(),
            status: "True".into(),
            reason: "NodeClassDrifted".into(),
            message: String::new(),
            last_transition_time: k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                jiff::Timestamp::UNIX_EPOCH,
            ),
            observed_generation: None,
        },
    );
    assert_eq!(
        restamp(&old, &pool_spec, Some(&class_spec)),
        Some(vec![(
            NODECLASS_HASH_VERSION_ANNOTATION.to_string(),
            NODE_CLASS_HASH_VERSION.to_string()
        )])
    );
}

#[test]
fn drift_messages_say_what_changed() {
    let drift = Drift::ImageDrifted {
        running: IMAGE.into(),
        wanted: NEWER.into(),
    };
    assert_eq!(
        drift.message(),
        format!("the node runs image {IMAGE}; its AKSNodeClass wants {NEWER}")
    );
}

proptest! {
    /// Taints are a set: their order never changes the hash.
    #[test]
    fn taint_order_does_not_change_the_template_hash(keys in proptest::collection::btree_set("[a-z]{1,8}", 0..6), seed in any::<u64>()) {
        let mut taints: Vec<Taint> = keys.iter().map(|k| taint(k)).collect();
        let mut spec = NodePoolSpec::default();
        spec.template.spec.taints = taints.clone();
        let before = template_hash(&spec);
        let len = taints.len().max(1);
        taints.rotate_left((seed as usize) % len);
        taints.reverse();
        spec.template.spec.taints = taints;
        prop_assert_eq!(before, template_hash(&spec));
    }
}
