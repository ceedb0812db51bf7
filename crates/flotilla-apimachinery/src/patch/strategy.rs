//! How lists are combined: the strategy trait and the built-in Kubernetes merge-key table.
//!
//! Both strategic merge patch and server-side apply ask the same question of a list field —
//! replace it whole, merge its objects by key, or treat it as a set of scalars — so the answer
//! lives here once and both modules consult it.

/// How a list field is combined with another version of itself.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ListStrategy {
    /// The list is one value: a patch or an applied configuration replaces it whole
    /// (`x-kubernetes-list-type: atomic`, the default).
    Atomic,
    /// A list of objects merged element by element, matched on this key field
    /// (`patchStrategy=merge` with `patchMergeKey`, `x-kubernetes-list-type: map`).
    MergeByKey(String),
    /// A list of scalars merged as a set union (`patchStrategy=merge` on a primitive list,
    /// `x-kubernetes-list-type: set`), e.g. `metadata.finalizers`.
    MergePrimitives,
}

/// Answers how the list at a field path is merged.
///
/// `path` holds the field names from the object root with array indices omitted, e.g.
/// `["spec", "template", "spec", "containers"]`. Implementations must be pure.
pub trait PatchStrategy {
    /// The strategy for the list at `path` (used by strategic merge patch and server-side apply).
    fn list_strategy(&self, path: &[&str]) -> ListStrategy;

    /// The key fields identifying an element of a [`ListStrategy::MergeByKey`] list for
    /// server-side apply (`x-kubernetes-list-map-keys`).
    ///
    /// Strategic merge uses the single merge key; server-side apply may need several
    /// (container ports are keyed by `containerPort` *and* `protocol`, so `53/TCP` and
    /// `53/UDP` are distinct). The default is the merge key alone.
    fn list_map_keys(&self, path: &[&str]) -> Vec<String> {
        match self.list_strategy(path) {
            ListStrategy::MergeByKey(key) => vec![key],
            ListStrategy::Atomic | ListStrategy::MergePrimitives => Vec::new(),
        }
    }
}

/// The merge semantics of the well-known Kubernetes built-in kinds (the `patchStrategy`,
/// `patchMergeKey` and `listMapKey` tags of `k8s.io/api`), matched on the end of the field path
/// so that they also hold inside templates (`spec.template.spec.containers`,
/// `spec.jobTemplate.spec.template.metadata.finalizers`, ...). Unknown lists are atomic.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BuiltinStrategy;

impl PatchStrategy for BuiltinStrategy {
    fn list_strategy(&self, path: &[&str]) -> ListStrategy {
        match find_rule(path).map(|rule| rule.merge) {
            None | Some(Merge::Atomic) => ListStrategy::Atomic,
            Some(Merge::Key(key)) => ListStrategy::MergeByKey(key.to_owned()),
            Some(Merge::Primitives) => ListStrategy::MergePrimitives,
        }
    }

    fn list_map_keys(&self, path: &[&str]) -> Vec<String> {
        match find_rule(path) {
            Some(rule) if !rule.map_keys.is_empty() => {
                rule.map_keys.iter().map(|key| (*key).to_owned()).collect()
            }
            Some(Rule {
                merge: Merge::Key(key),
                ..
            }) => vec![(*key).to_owned()],
            _ => Vec::new(),
        }
    }
}

/// How a table entry merges its list.
#[derive(Debug, Clone, Copy)]
enum Merge {
    Atomic,
    Key(&'static str),
    Primitives,
}

/// One entry of the built-in table.
#[derive(Debug)]
struct Rule {
    /// Field names the list path ends with; `|` separates alternatives for one segment.
    suffix: &'static [&'static str],
    /// The path must equal `suffix` (a top-level field of a kind) rather than end with it.
    anchored: bool,
    merge: Merge,
    /// Server-side apply keys when they differ from the single strategic merge key.
    map_keys: &'static [&'static str],
}

impl Rule {
    const fn suffix(suffix: &'static [&'static str], merge: Merge) -> Self {
        Self {
            suffix,
            anchored: false,
            merge,
            map_keys: &[],
        }
    }

    const fn root(suffix: &'static [&'static str], merge: Merge) -> Self {
        Self {
            suffix,
            anchored: true,
            merge,
            map_keys: &[],
        }
    }

    const fn with_map_keys(self, map_keys: &'static [&'static str]) -> Self {
        Self { map_keys, ..self }
    }

    fn matches(&self, path: &[&str]) -> bool {
        let n = self.suffix.len();
        if path.len() < n || (self.anchored && path.len() != n) {
            return false;
        }
        path[path.len() - n..]
            .iter()
            .zip(self.suffix)
            .all(|(name, pattern)| pattern.split('|').any(|alt| alt == *name))
    }
}

/// Any of the three container lists of a pod spec.
const CONTAINERS: &str = "containers|initContainers|ephemeralContainers";

/// The built-in table; the first matching rule wins.
const RULES: &[Rule] = &[
    // ObjectMeta, at the root and in every template.
    Rule::suffix(&["metadata", "finalizers"], Merge::Primitives),
    Rule::suffix(&["metadata", "ownerReferences"], Merge::Key("uid")),
    // PodSpec.
    Rule::suffix(&["spec", CONTAINERS], Merge::Key("name")),
    Rule::suffix(&["spec", "volumes"], Merge::Key("name")),
    Rule::suffix(&["spec", "imagePullSecrets"], Merge::Key("name")),
    Rule::suffix(&["spec", "hostAliases"], Merge::Key("ip")),
    Rule::suffix(
        &["spec", "topologySpreadConstraints"],
        Merge::Key("topologyKey"),
    )
    .with_map_keys(&["topologyKey", "whenUnsatisfiable"]),
    Rule::suffix(&["spec", "schedulingGates"], Merge::Key("name")),
    Rule::suffix(&["spec", "resourceClaims"], Merge::Key("name")),
    Rule::suffix(&["spec", "tolerations"], Merge::Atomic),
    Rule::suffix(&["spec", "readinessGates"], Merge::Atomic),
    // Container.
    Rule::suffix(&[CONTAINERS, "ports"], Merge::Key("containerPort"))
        .with_map_keys(&["containerPort", "protocol"]),
    Rule::suffix(&[CONTAINERS, "env"], Merge::Key("name")),
    Rule::suffix(&[CONTAINERS, "volumeMounts"], Merge::Key("mountPath")),
    Rule::suffix(&[CONTAINERS, "volumeDevices"], Merge::Key("devicePath")),
    Rule::suffix(&[CONTAINERS, "resources", "claims"], Merge::Key("name")),
    Rule::suffix(&[CONTAINERS, "envFrom"], Merge::Atomic),
    // ServiceSpec.
    Rule::suffix(&["spec", "ports"], Merge::Key("port")).with_map_keys(&["port", "protocol"]),
    // NodeSpec and NodeStatus.
    Rule::suffix(&["spec", "podCIDRs"], Merge::Primitives),
    Rule::suffix(&["status", "addresses"], Merge::Key("type")),
    // Status lists shared by many kinds (metav1.Condition and the per-kind conditions).
    Rule::suffix(&["status", "conditions"], Merge::Key("type")),
    Rule::suffix(&["status", "podIPs"], Merge::Key("ip")),
    Rule::suffix(&["status", "hostIPs"], Merge::Key("ip")),
    // Top-level lists of particular kinds.
    Rule::root(&["secrets"], Merge::Key("name")), // ServiceAccount
    Rule::root(&["webhooks"], Merge::Key("name")), // admission webhook configurations
    Rule::root(&["rules"], Merge::Atomic),        // Role, ClusterRole
    Rule::root(&["subjects"], Merge::Atomic),     // RoleBinding, ClusterRoleBinding
    Rule::root(&["subsets"], Merge::Atomic),      // Endpoints
];

fn find_rule(path: &[&str]) -> Option<&'static Rule> {
    RULES.iter().find(|rule| rule.matches(path))
}
