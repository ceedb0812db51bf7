//! Names and labels of the objects the controllers create.

use serde_json::json;

use crate::placement_key::PlacementKey;

/// Label on bindings (and snapshots) naming their placement.
pub(crate) use flotilla_api::placement::snapshots::PARENT_PLACEMENT_LABEL;

/// Label on a Work naming the binding it was generated from.
pub(crate) const PARENT_BINDING_LABEL: &str = "kubernetes-fleet.io/parent-resource-binding";

/// Finalizer on a placement until its bindings (and so its placed resources) are gone.
pub(crate) const PLACEMENT_FINALIZER: &str = "kubernetes-fleet.io/crp-cleanup";

/// Finalizer on a binding until its Works are gone.
pub(crate) const BINDING_FINALIZER: &str = "kubernetes-fleet.io/work-cleanup";

/// The binding of `placement` on `cluster`: readable, and unique even where names with dashes
/// could collide (`a-b` on `c` and `a` on `b-c`).
pub(crate) fn binding_name(placement: &str, cluster: &str) -> String {
    let digest = crate::snapshot::hash(&json!([placement, cluster]));
    format!("{placement}-{cluster}-{}", &digest[..8])
}

/// Label on a Work of a `ResourcePlacement`'s binding naming the binding's (and the
/// placement's) namespace, which the Work's own namespace (the member's) does not tell.
pub(crate) const PARENT_NAMESPACE_LABEL: &str = "kubernetes-fleet.io/parent-placement-namespace";

/// The Work of `placement` in a member's namespace: KubeFleet's `<placement>-work`, or
/// `<namespace>.<placement>-work` for a `ResourcePlacement` (placements of two namespaces,
/// and a ClusterResourcePlacement, may share a name).
pub(crate) fn work_name(placement: &PlacementKey) -> String {
    match placement.namespace() {
        Some(namespace) => format!("{namespace}.{}-work", placement.name),
        None => format!("{}-work", placement.name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binding_names_do_not_collide_across_dashes() {
        assert_ne!(binding_name("a-b", "c"), binding_name("a", "b-c"));
        assert!(binding_name("web", "member-1").starts_with("web-member-1-"));
        assert_eq!(binding_name("web", "m"), binding_name("web", "m"));
    }

    #[test]
    fn works_are_named_as_kubefleet_names_them() {
        assert_eq!(work_name(&PlacementKey::cluster("web")), "web-work");
        assert_eq!(
            work_name(&PlacementKey::namespaced("app", "web")),
            "app.web-work"
        );
    }
}
