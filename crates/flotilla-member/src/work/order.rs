//! Apply order: a Work's manifests in waves, so that what others depend on exists first
//! (a namespace before the ConfigMap in it, a CRD before its custom resources, a Role before
//! its binding, a webhook's backend before the webhook that routes requests to it).
//!
//! KubeFleet derives its waves from Helm's install order. The waves here are, in order:
//! namespaces → CRDs → configuration → roles → role bindings → workloads and everything else
//! (custom resources included) → webhooks, admission policies and API services. Manifests keep
//! their Work order within a wave; the shell may apply one wave's manifests concurrently, and
//! applies every wave even when an earlier one had failures (as KubeFleet does: the failures
//! are reported per manifest and retried on the next pass).
//!
//! Where KubeFleet's table (`waves.go`) differs: it puts CRDs in the configuration wave,
//! PriorityClasses with namespaces, PodDisruptionBudgets with configuration, and every kind it
//! does not know (custom resources included) in a last wave after the webhooks; here CRDs get
//! their own wave and custom resources apply with the workloads.

use flotilla_api::placement::work::WorkResourceIdentifier;
use serde_json::Value;
use std::collections::HashMap;

use super::identifier::{ManifestError, ManifestProblem, identify};

/// One apply wave; waves apply in declaration order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Wave {
    /// Namespaces.
    Namespaces,
    /// CustomResourceDefinitions.
    CustomResourceDefinitions,
    /// Configuration and static resources: ConfigMaps, Secrets, ServiceAccounts,
    /// PersistentVolumes and claims, LimitRanges, ResourceQuotas, StorageClasses,
    /// PriorityClasses, NetworkPolicies, IngressClasses.
    Configuration,
    /// Roles and ClusterRoles.
    Roles,
    /// RoleBindings and ClusterRoleBindings.
    RoleBindings,
    /// Workloads, Services, Ingresses, PDBs, HPAs, custom resources: everything not
    /// named by another wave.
    Workloads,
    /// Admission webhooks, admission policies and their bindings, and API services: last, so
    /// that the backends they route requests to already exist.
    Webhooks,
}

impl Wave {
    /// The wave of a kind in an API group (`""` for the core group). Kinds are matched with
    /// their group, so a custom `Deployment` in another group is an ordinary workload.
    pub fn of(group: &str, kind: &str) -> Wave {
        match (group, kind) {
            ("", "Namespace") => Wave::Namespaces,
            ("apiextensions.k8s.io", "CustomResourceDefinition") => Wave::CustomResourceDefinitions,
            (
                "",
                "ConfigMap"
                | "Secret"
                | "ServiceAccount"
                | "PersistentVolume"
                | "PersistentVolumeClaim"
                | "LimitRange"
                | "ResourceQuota",
            )
            | ("storage.k8s.io", "StorageClass")
            | ("scheduling.k8s.io", "PriorityClass")
            | ("networking.k8s.io", "NetworkPolicy" | "IngressClass") => Wave::Configuration,
            ("rbac.authorization.k8s.io", "Role" | "ClusterRole") => Wave::Roles,
            ("rbac.authorization.k8s.io", "RoleBinding" | "ClusterRoleBinding") => {
                Wave::RoleBindings
            }
            (
                "admissionregistration.k8s.io",
                "MutatingWebhookConfiguration"
                | "ValidatingWebhookConfiguration"
                | "ValidatingAdmissionPolicy"
                | "ValidatingAdmissionPolicyBinding"
                | "MutatingAdmissionPolicy"
                | "MutatingAdmissionPolicyBinding",
            )
            | ("apiregistration.k8s.io", "APIService") => Wave::Webhooks,
            _ => Wave::Workloads,
        }
    }
}

/// A manifest that can be applied, with its identifier.
#[derive(Debug, Clone, PartialEq)]
pub struct Planned<'a> {
    /// Its identifier (ordinal = index in the Work).
    pub identifier: WorkResourceIdentifier,
    /// The manifest as the Work carries it.
    pub manifest: &'a Value,
}

/// The manifests of one wave, in Work order.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedWave<'a> {
    /// Which wave.
    pub wave: Wave,
    /// Its manifests, never empty.
    pub manifests: Vec<Planned<'a>>,
}

/// A Work's manifests, sorted into waves, and the ones that cannot be applied.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Plan<'a> {
    /// The non-empty waves, in apply order.
    pub waves: Vec<PlannedWave<'a>>,
    /// Manifests that cannot be applied, in Work order, each with its problem.
    pub rejected: Vec<ManifestError>,
}

/// Sorts a Work's manifests into waves.
///
/// A manifest [`identify`] rejects, or a later manifest naming the same object as an earlier
/// one (same group, kind, namespace and name, whatever the version; KubeFleet's duplicate check,
/// which guards envelopes carrying an object twice), goes to [`Plan::rejected`] instead.
pub fn plan(manifests: &[Value]) -> Plan<'_> {
    let mut plan = Plan::default();
    let mut seen: HashMap<(String, String, String, String), i32> = HashMap::new();
    let mut planned: Vec<(Wave, Planned<'_>)> = Vec::new();
    for (ordinal, manifest) in manifests.iter().enumerate() {
        let identifier = match identify(ordinal, manifest) {
            Ok(identifier) => identifier,
            Err(error) => {
                plan.rejected.push(*error);
                continue;
            }
        };
        // The same object whatever the version.
        let key = (
            identifier.group.clone(),
            identifier.kind.clone(),
            identifier.namespace.clone(),
            identifier.name.clone(),
        );
        if let Some(&first) = seen.get(&key) {
            plan.rejected.push(ManifestError {
                identifier,
                problem: ManifestProblem::Duplicate(first),
            });
            continue;
        }
        seen.insert(key, identifier.ordinal);
        let wave = Wave::of(&identifier.group, &identifier.kind);
        planned.push((
            wave,
            Planned {
                identifier,
                manifest,
            },
        ));
    }
    // A stable sort keeps Work order within each wave.
    planned.sort_by_key(|(wave, _)| *wave);
    for (wave, manifest) in planned {
        match plan.waves.last_mut() {
            Some(last) if last.wave == wave => last.manifests.push(manifest),
            _ => plan.waves.push(PlannedWave {
                wave,
                manifests: vec![manifest],
            }),
        }
    }
    plan
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn object(api_version: &str, kind: &str, name: &str) -> Value {
        json!({"apiVersion": api_version, "kind": kind, "metadata": {"name": name, "namespace": "ns"}})
    }

    fn ordinals(plan: &Plan<'_>) -> Vec<(Wave, Vec<i32>)> {
        plan.waves
            .iter()
            .map(|w| {
                (
                    w.wave,
                    w.manifests.iter().map(|m| m.identifier.ordinal).collect(),
                )
            })
            .collect()
    }

    #[test]
    fn waves_of_kinds() {
        let cases = [
            ("", "Namespace", Wave::Namespaces),
            (
                "apiextensions.k8s.io",
                "CustomResourceDefinition",
                Wave::CustomResourceDefinitions,
            ),
            ("", "ConfigMap", Wave::Configuration),
            ("", "Secret", Wave::Configuration),
            ("", "ServiceAccount", Wave::Configuration),
            ("", "PersistentVolume", Wave::Configuration),
            ("", "PersistentVolumeClaim", Wave::Configuration),
            ("", "LimitRange", Wave::Configuration),
            ("", "ResourceQuota", Wave::Configuration),
            ("storage.k8s.io", "StorageClass", Wave::Configuration),
            ("scheduling.k8s.io", "PriorityClass", Wave::Configuration),
            ("networking.k8s.io", "NetworkPolicy", Wave::Configuration),
            ("rbac.authorization.k8s.io", "ClusterRole", Wave::Roles),
            ("rbac.authorization.k8s.io", "Role", Wave::Roles),
            (
                "rbac.authorization.k8s.io",
                "RoleBinding",
                Wave::RoleBindings,
            ),
            (
                "rbac.authorization.k8s.io",
                "ClusterRoleBinding",
                Wave::RoleBindings,
            ),
            ("apps", "Deployment", Wave::Workloads),
            ("apps", "StatefulSet", Wave::Workloads),
            ("batch", "CronJob", Wave::Workloads),
            ("", "Service", Wave::Workloads),
            ("networking.k8s.io", "Ingress", Wave::Workloads),
            ("policy", "PodDisruptionBudget", Wave::Workloads),
            ("autoscaling", "HorizontalPodAutoscaler", Wave::Workloads),
            ("example.com", "Widget", Wave::Workloads),
            ("example.com", "Namespace", Wave::Workloads),
            ("", "Role", Wave::Workloads),
            (
                "admissionregistration.k8s.io",
                "ValidatingWebhookConfiguration",
                Wave::Webhooks,
            ),
            (
                "admissionregistration.k8s.io",
                "MutatingWebhookConfiguration",
                Wave::Webhooks,
            ),
            ("apiregistration.k8s.io", "APIService", Wave::Webhooks),
        ];
        for (group, kind, wave) in cases {
            assert_eq!(Wave::of(group, kind), wave, "{group} {kind}");
        }
    }

    #[test]
    fn sorts_into_waves_keeping_work_order() {
        let manifests = vec![
            object("apps/v1", "Deployment", "web"),
            object(
                "admissionregistration.k8s.io/v1",
                "ValidatingWebhookConfiguration",
                "hook",
            ),
            object("rbac.authorization.k8s.io/v1", "RoleBinding", "rb"),
            object("v1", "ConfigMap", "cfg"),
            object("example.com/v1", "Widget", "w"),
            object("rbac.authorization.k8s.io/v1", "Role", "r"),
            object("v1", "Namespace", "ns"),
            object(
                "apiextensions.k8s.io/v1",
                "CustomResourceDefinition",
                "widgets.example.com",
            ),
            object("v1", "Secret", "s"),
            object("v1", "Service", "web"),
        ];
        let plan = plan(&manifests);
        assert!(plan.rejected.is_empty());
        assert_eq!(
            ordinals(&plan),
            vec![
                (Wave::Namespaces, vec![6]),
                (Wave::CustomResourceDefinitions, vec![7]),
                (Wave::Configuration, vec![3, 8]),
                (Wave::Roles, vec![5]),
                (Wave::RoleBindings, vec![2]),
                (Wave::Workloads, vec![0, 4, 9]),
                (Wave::Webhooks, vec![1]),
            ]
        );
        assert_eq!(plan.waves[0].manifests[0].manifest, &manifests[6]);
    }

    #[test]
    fn rejects_malformed_and_duplicate_manifests() {
        let manifests = vec![
            object("v1", "ConfigMap", "a"),
            json!({"apiVersion": "v1", "kind": "ConfigMap"}),
            object("v1beta1", "ConfigMap", "a"),
            object("v1", "Secret", "a"),
        ];
        let plan = plan(&manifests);
        assert_eq!(ordinals(&plan), vec![(Wave::Configuration, vec![0, 3])]);
        let problems: Vec<_> = plan
            .rejected
            .iter()
            .map(|e| (e.identifier.ordinal, e.problem.clone()))
            .collect();
        assert_eq!(
            problems,
            vec![
                (1, ManifestProblem::Missing("metadata.name")),
                (2, ManifestProblem::Duplicate(0)),
            ]
        );
    }

    const KINDS: [(&str, &str); 9] = [
        ("v1", "Namespace"),
        ("v1", "ConfigMap"),
        ("apps/v1", "Deployment"),
        ("rbac.authorization.k8s.io/v1", "Role"),
        ("rbac.authorization.k8s.io/v1", "RoleBinding"),
        ("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
        (
            "admissionregistration.k8s.io/v1",
            "MutatingWebhookConfiguration",
        ),
        ("example.com/v1", "Widget"),
        ("v1", "Service"),
    ];

    proptest! {
        #[test]
        fn plans_are_ordered_permutations(
            picks in prop::collection::vec((0..KINDS.len(), 0..4u8, any::<bool>()), 0..30)
        ) {
            let manifests: Vec<Value> = picks
                .iter()
                .map(|&(kind, name, valid)| {
                    let (api_version, kind) = KINDS[kind];
                    if valid {
                        object(api_version, kind, &format!("n{name}"))
                    } else {
                        json!({"apiVersion": api_version, "kind": kind})
                    }
                })
                .collect();
            let plan = plan(&manifests);
            // Every manifest is planned or rejected, exactly once.
            let mut seen: Vec<i32> = plan
                .waves
                .iter()
                .flat_map(|w| w.manifests.iter().map(|m| m.identifier.ordinal))
                .chain(plan.rejected.iter().map(|e| e.identifier.ordinal))
                .collect();
            seen.sort_unstable();
            let all: Vec<i32> = (0..i32::try_from(manifests.len()).unwrap()).collect();
            prop_assert_eq!(seen, all);
            // Waves strictly ascend, ordinals ascend within a wave, kinds sit in their wave.
            for pair in plan.waves.windows(2) {
                prop_assert!(pair[0].wave < pair[1].wave);
            }
            for wave in &plan.waves {
                prop_assert!(!wave.manifests.is_empty());
                for pair in wave.manifests.windows(2) {
                    prop_assert!(pair[0].identifier.ordinal < pair[1].identifier.ordinal);
                }
                for m in &wave.manifests {
                    prop_assert_eq!(Wave::of(&m.identifier.group, &m.identifier.kind), wave.wave);
                }
            }
        }
    }
}
