//! The kinds the hub serves, as the resource selector sees them, and which of them may be
//! placed at all.

/// One kind the hub serves (from discovery).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KindInfo {
    /// API group, empty for the core group.
    pub group: String,
    /// The version objects are read at (the group's preferred version).
    pub version: String,
    /// Kind.
    pub kind: String,
    /// Resource (plural).
    pub plural: String,
    /// Whether objects of the kind live in namespaces.
    pub namespaced: bool,
}

impl KindInfo {
    /// `apiVersion` of the kind's objects.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// Whether objects of this kind may be placed on member clusters. Fleet's own API groups
    /// (KubeFleet's and Flotilla's update orchestration, `updates.flotilla.dev`, whose objects
    /// drive the hub and which members do not serve), and kinds that only make sense in the
    /// cluster that made them (events, leases, nodes, pods, controller revisions, endpoints,
    /// bindings, metrics), are never placed: KubeFleet disables the same resources. Not
    /// watching them also spares the placement controller every update run's status writes.
    pub fn is_placeable(&self) -> bool {
        let group = self.group.as_str();
        if group.ends_with("kubernetes-fleet.io")
            || group == flotilla_api::updates::GROUP
            || matches!(
                group,
                "events.k8s.io"
                    | "coordination.k8s.io"
                    | "metrics.k8s.io"
                    | "discovery.k8s.io"
                    | "authentication.k8s.io"
                    | "authorization.k8s.io"
                    | "apiregistration.k8s.io"
            )
        {
            return false;
        }
        !matches!(
            (group, self.kind.as_str()),
            (
                "",
                "Event" | "Node" | "Pod" | "Endpoints" | "Binding" | "ComponentStatus"
            ) | ("apps", "ControllerRevision")
        )
    }
}

/// Namespaces no placement may take: Fleet's own (`fleet-…`) and Kubernetes' (`kube-…`).
pub fn is_reserved_namespace(name: &str) -> bool {
    name.starts_with("fleet-") || name.starts_with("kube-")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(group: &str, kind: &str) -> KindInfo {
        KindInfo {
            group: group.into(),
            version: "v1".into(),
            kind: kind.into(),
            plural: format!("{}s", kind.to_lowercase()),
            namespaced: true,
        }
    }

    #[test]
    fn fleet_and_cluster_local_kinds_are_not_placeable() {
        for (group, k) in [
            ("placement.kubernetes-fleet.io", "Work"),
            ("cluster.kubernetes-fleet.io", "MemberCluster"),
            ("updates.flotilla.dev", "UpdateRun"),
            ("updates.flotilla.dev", "MaintenanceConfiguration"),
            ("", "Event"),
            ("events.k8s.io", "Event"),
            ("", "Pod"),
            ("", "Node"),
            ("apps", "ControllerRevision"),
            ("coordination.k8s.io", "Lease"),
            ("discovery.k8s.io", "EndpointSlice"),
        ] {
            assert!(!kind(group, k).is_placeable(), "{group}/{k}");
        }
        for (group, k) in [
            ("", "ConfigMap"),
            ("", "Namespace"),
            ("apps", "Deployment"),
            ("apiextensions.k8s.io", "CustomResourceDefinition"),
            ("example.com", "Widget"),
            ("karpenter.sh", "NodePool"),
        ] {
            assert!(kind(group, k).is_placeable(), "{group}/{k}");
        }
    }

    #[test]
    fn reserved_namespaces() {
        assert!(is_reserved_namespace("fleet-member-a"));
        assert!(is_reserved_namespace("kube-system"));
        assert!(!is_reserved_namespace("default"));
        assert!(!is_reserved_namespace("fleetwood"));
    }

    #[test]
    fn api_version_of_core_and_grouped_kinds() {
        assert_eq!(kind("", "ConfigMap").api_version(), "v1");
        assert_eq!(kind("apps", "Deployment").api_version(), "apps/v1");
    }
}
