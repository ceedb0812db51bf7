//! Selection for a `ResourcePlacement`: its terms pick namespaced objects of its own
//! namespace only, by name, by label selector or all of a kind. The namespace itself is never
//! placed (KubeFleet expects it on the members already, e.g. placed by a
//! ClusterResourcePlacement with `selectionScope: NamespaceOnly`), nor is anything
//! cluster-scoped; a term naming such a kind is a problem, as is a reserved namespace.

use flotilla_api::placement::selector::ResourceSelectorTerm;

use super::{
    HubObjects, Matcher, Selection, describe, is_reserved_namespace, object_namespace,
    placeable_copy, should_place, sort_key,
};

/// Picks the manifests the terms of a `ResourcePlacement` in `namespace` select among
/// `hub`'s objects (which may hold objects of other namespaces: they are left out).
pub fn select_in_namespace(
    namespace: &str,
    terms: &[ResourceSelectorTerm],
    hub: &HubObjects,
) -> Selection {
    if is_reserved_namespace(namespace) {
        return Selection {
            manifests: Vec::new(),
            problems: vec![format!(
                "metadata.namespace: namespace {namespace} is reserved for the fleet and Kubernetes; a ResourcePlacement there places nothing"
            )],
        };
    }
    let mut problems = Vec::new();
    let mut picked = std::collections::BTreeMap::new();
    for (index, term) in terms.iter().enumerate() {
        let matcher = match Matcher::new(term, index) {
            Ok(matcher) => matcher,
            Err(message) => {
                problems.push(message);
                continue;
            }
        };
        let kinds = hub
            .kinds
            .iter()
            .filter(|(k, _)| k.group == term.group && k.kind == term.kind);
        for (kind, objects) in kinds {
            if !kind.namespaced {
                problems.push(cluster_scoped(index, term));
                continue;
            }
            objects
                .iter()
                .filter(|o| object_namespace(o) == Some(namespace) && matcher.matches(o))
                .filter(|o| should_place(o))
                .for_each(|o| {
                    picked
                        .entry(sort_key(o))
                        .or_insert_with(|| placeable_copy(o));
                });
        }
    }
    Selection {
        manifests: picked.into_values().collect(),
        problems,
    }
}

fn cluster_scoped(index: usize, term: &ResourceSelectorTerm) -> String {
    format!(
        "spec.resourceSelectors[{index}]: {} is cluster-scoped; a ResourcePlacement selects only namespaced resources of its own namespace",
        describe(term)
    )
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::selection::tests::{hub, term};

    /// A term of `group`/`version`/`kind` with `name` or `labels`.
    fn pick(
        group: &str,
        version: &str,
        kind: &str,
        name: Option<&str>,
        labels: Option<Value>,
    ) -> ResourceSelectorTerm {
        let mut value = json!({"group": group, "version": version, "kind": kind});
        if let Some(name) = name {
            value["name"] = json!(name);
        }
        if let Some(labels) = labels {
            value["labelSelector"] = labels;
        }
        term(value)
    }

    fn names(selection: &Selection) -> Vec<String> {
        selection
            .manifests
            .iter()
            .map(|m| {
                format!(
                    "{}/{}/{}",
                    m["kind"].as_str().unwrap(),
                    m["metadata"]["namespace"].as_str().unwrap_or_default(),
                    m["metadata"]["name"].as_str().unwrap()
                )
            })
            .collect()
    }

    #[test]
    fn terms_pick_namespaced_objects_of_the_placements_namespace_only() {
        let by_tier = |tier: &str| {
            let labels = json!({"matchLabels": {"tier": tier}});
            vec![pick("apps", "v1", "Deployment", None, Some(labels))]
        };
        // (namespace, terms, picked, problems)
        let cases: Vec<(&str, Vec<ResourceSelectorTerm>, Vec<&str>, usize)> = vec![
            // By name, in this namespace only (web/front is another namespace's).
            (
                "app",
                vec![pick("apps", "v1", "Deployment", Some("api"), None)],
                vec!["Deployment/app/api"],
                0,
            ),
            (
                "app",
                vec![pick("apps", "v1", "Deployment", Some("front"), None)],
                vec![],
                0,
            ),
            // All of a kind: the namespace's own kube-root-ca.crt is never placed.
            (
                "app",
                vec![pick("", "v1", "ConfigMap", None, None)],
                vec!["ConfigMap/app/settings"],
                0,
            ),
            // Several terms, sorted by group, kind and name; duplicates once.
            (
                "app",
                vec![
                    pick("apps", "v1", "Deployment", None, None),
                    pick("", "v1", "ConfigMap", Some("settings"), None),
                    pick("", "v1", "ConfigMap", None, None),
                ],
                vec!["ConfigMap/app/settings", "Deployment/app/api"],
                0,
            ),
            // By label selector.
            ("web", by_tier("front"), vec!["Deployment/web/front"], 0),
            ("web", by_tier("back"), vec![], 0),
            // Cluster-scoped kinds, the namespace itself included, are problems.
            (
                "app",
                vec![
                    pick("", "v1", "Namespace", Some("app"), None),
                    pick("rbac.authorization.k8s.io", "v1", "ClusterRole", None, None),
                    pick("apps", "v1", "Deployment", Some("api"), None),
                ],
                vec!["Deployment/app/api"],
                2,
            ),
            // An invalid label selector is a problem naming its field.
            (
                "app",
                vec![pick(
                    "",
                    "v1",
                    "ConfigMap",
                    None,
                    Some(json!({"matchExpressions": [{"key": "a", "operator": "Bogus"}]})),
                )],
                vec![],
                1,
            ),
            // A reserved namespace places nothing.
            (
                "kube-system",
                vec![pick("", "v1", "ConfigMap", None, None)],
                vec![],
                1,
            ),
        ];
        for (i, (namespace, terms, picked, problems)) in cases.into_iter().enumerate() {
            let selection = select_in_namespace(namespace, &terms, &hub());
            assert_eq!(names(&selection), picked, "case {i}");
            assert_eq!(
                selection.problems.len(),
                problems,
                "case {i}: {:?}",
                selection.problems
            );
        }
    }

    #[test]
    fn problems_name_the_selector_and_picked_objects_are_placeable_copies() {
        let terms = [
            pick("rbac.authorization.k8s.io", "v1", "ClusterRole", None, None),
            pick("apps", "v1", "Deployment", Some("api"), None),
        ];
        let selection = select_in_namespace("app", &terms, &hub());
        assert!(
            selection.problems[0].starts_with("spec.resourceSelectors[0]: kind ClusterRole"),
            "{:?}",
            selection.problems
        );
        let placed: &Value = &selection.manifests[0];
        assert!(placed["metadata"]["resourceVersion"].is_null(), "{placed}");
    }
}
