//! Which placement something belongs to: a `ClusterResourcePlacement` by name, or a
//! `ResourcePlacement` by namespace and name. KubeFleet's "placement key" (`name` or
//! `namespace/name`): the two kinds share names, so every lookup by placement carries both.

use std::fmt;

/// A placement's identity: the namespace is `None` for a `ClusterResourcePlacement`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PlacementKey {
    /// The `ResourcePlacement`'s namespace; `None` for a `ClusterResourcePlacement`.
    pub namespace: Option<String>,
    /// The placement's name.
    pub name: String,
}

impl PlacementKey {
    /// The `ClusterResourcePlacement` named `name`.
    pub fn cluster(name: &str) -> Self {
        Self {
            namespace: None,
            name: name.to_string(),
        }
    }

    /// The `ResourcePlacement` `name` of namespace `namespace`.
    pub fn namespaced(namespace: &str, name: &str) -> Self {
        Self {
            namespace: Some(namespace.to_string()),
            name: name.to_string(),
        }
    }

    /// The key of a placement with `name` in `namespace` (`None`, or empty, for a
    /// cluster-scoped one), as object metadata gives them.
    pub fn of(namespace: Option<&str>, name: &str) -> Self {
        match namespace.filter(|ns| !ns.is_empty()) {
            Some(ns) => Self::namespaced(ns, name),
            None => Self::cluster(name),
        }
    }

    /// The namespace, if the placement is a `ResourcePlacement`.
    pub fn namespace(&self) -> Option<&str> {
        self.namespace.as_deref()
    }
}

impl fmt::Display for PlacementKey {
    /// `name`, or `namespace/name` for a `ResourcePlacement`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.namespace {
            Some(ns) => write!(f, "{ns}/{}", self.name),
            None => f.write_str(&self.name),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_tell_the_two_kinds_apart() {
        let cases = [
            (PlacementKey::of(None, "web"), "web", None),
            (PlacementKey::of(Some(""), "web"), "web", None),
            (PlacementKey::of(Some("app"), "web"), "app/web", Some("app")),
        ];
        for (key, shown, namespace) in cases {
            assert_eq!(key.to_string(), shown);
            assert_eq!(key.namespace(), namespace);
        }
        assert_ne!(
            PlacementKey::cluster("web"),
            PlacementKey::namespaced("app", "web")
        );
    }
}
