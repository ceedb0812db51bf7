use serde_json::{Value, json};

use super::*;

fn kind(group: &str, version: &str, kind: &str, namespaced: bool) -> KindInfo {
    KindInfo {
        group: group.into(),
        version: version.into(),
        kind: kind.into(),
        plural: format!("{}s", kind.to_lowercase()),
        namespaced,
    }
}

fn served() -> Vec<KindInfo> {
    vec![
        kind("", "v1", "Namespace", false),
        kind("", "v1", "ConfigMap", true),
        kind("", "v1", "Pod", true),
        kind("apps", "v1", "Deployment", true),
        kind("rbac.authorization.k8s.io", "v1", "ClusterRole", false),
        kind("placement.kubernetes-fleet.io", "v1beta1", "Work", true),
    ]
}

fn namespace(name: &str, labels: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": name, "labels": labels, "uid": "u-ns"}})
}

fn object(api_version: &str, kind: &str, ns: &str, name: &str) -> Value {
    json!({"apiVersion": api_version, "kind": kind,
        "metadata": {"name": name, "namespace": ns, "resourceVersion": "3"}})
}

fn labelled(mut object: Value, labels: Value) -> Value {
    object["metadata"]["labels"] = labels;
    object
}

pub(super) fn hub() -> HubObjects {
    let served = served();
    let objects = |k: &str| -> Vec<Value> {
        match k {
            "Namespace" => vec![
                namespace("app", json!({"team": "a"})),
                namespace("web", json!({"team": "b"})),
                namespace("kube-system", json!({"team": "a"})),
            ],
            "ConfigMap" => vec![
                object("v1", "ConfigMap", "app", "settings"),
                object("v1", "ConfigMap", "app", "kube-root-ca.crt"),
                object("v1", "ConfigMap", "web", "other"),
            ],
            "Pod" => vec![object("v1", "Pod", "app", "p")],
            "Deployment" => vec![
                object("apps/v1", "Deployment", "app", "api"),
                labelled(
                    object("apps/v1", "Deployment", "web", "front"),
                    json!({"tier": "front"}),
                ),
            ],
            "ClusterRole" => vec![json!({"apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRole", "metadata": {"name": "reader", "labels": {"team": "a"}}})],
            _ => vec![],
        }
    };
    HubObjects {
        kinds: served
            .iter()
            .map(|k| (k.clone(), objects(&k.kind)))
            .collect(),
    }
}

pub(super) fn term(value: Value) -> ResourceSelectorTerm {
    serde_json::from_value(value).unwrap()
}

fn names(selection: &Selection) -> Vec<String> {
    selection
        .manifests
        .iter()
        .map(|m| {
            let ns = m["metadata"]["namespace"].as_str().unwrap_or("");
            format!(
                "{}/{ns}/{}",
                m["kind"].as_str().unwrap(),
                m["metadata"]["name"].as_str().unwrap()
            )
        })
        .collect()
}

#[test]
fn a_namespace_brings_its_placeable_content_in_order() {
    let terms = [term(
        json!({"group": "", "version": "v1", "kind": "Namespace", "name": "app"}),
    )];
    let selection = select(&terms, &hub());
    assert_eq!(
        names(&selection),
        [
            "Namespace//app",
            "ConfigMap/app/settings",
            "Deployment/app/api"
        ]
    );
    assert!(selection.problems.is_empty());
    assert_eq!(selection.manifests[0]["metadata"].get("uid"), None);
    assert_eq!(
        selection.manifests[2]["metadata"].get("resourceVersion"),
        None
    );
}

#[test]
fn namespace_only_and_label_selected_cluster_objects() {
    let terms = [
        term(json!({"group": "", "version": "v1", "kind": "Namespace",
            "labelSelector": {"matchLabels": {"team": "a"}}, "selectionScope": "NamespaceOnly"})),
        term(
            json!({"group": "rbac.authorization.k8s.io", "version": "v1", "kind": "ClusterRole",
            "labelSelector": {"matchExpressions": [{"key": "team", "operator": "Exists"}]}}),
        ),
    ];
    let selection = select(&terms, &hub());
    // kube-system matches the labels but is reserved; selected by label, it is left out quietly.
    assert_eq!(names(&selection), ["Namespace//app", "ClusterRole//reader"]);
    assert!(selection.problems.is_empty());
}

#[test]
fn namespace_with_resource_selectors_takes_only_what_the_other_terms_pick() {
    let terms = [
        term(
            json!({"group": "", "version": "v1", "kind": "Namespace", "name": "web",
            "selectionScope": "NamespaceWithResourceSelectors"}),
        ),
        term(json!({"group": "apps", "version": "v1", "kind": "Deployment"})),
    ];
    let selection = select(&terms, &hub());
    assert_eq!(
        names(&selection),
        ["Namespace//web", "Deployment/web/front"]
    );
    assert!(selection.problems.is_empty());
}

#[test]
fn problems_name_the_selector() {
    let terms = [
        term(json!({"group": "", "version": "v1", "kind": "Namespace", "name": "kube-system"})),
        term(json!({"group": "apps", "version": "v1", "kind": "Deployment", "name": "api"})),
        term(json!({"group": "", "version": "v1", "kind": "ConfigMap",
            "labelSelector": {"matchExpressions": [{"key": "a", "operator": "In"}]}})),
    ];
    let selection = select(&terms, &hub());
    assert!(selection.manifests.is_empty());
    assert_eq!(selection.problems.len(), 3, "{:?}", selection.problems);
    assert!(selection.problems[0].starts_with("spec.resourceSelectors[2].labelSelector"));
    assert!(
        selection.problems[1]
            .contains("spec.resourceSelectors[0].name: namespace kube-system is reserved")
    );
    assert!(
        selection.problems[2]
            .contains("spec.resourceSelectors[1]: kind Deployment (apps/v1) is namespaced")
    );
}

#[test]
fn a_selector_naming_nothing_selects_nothing_without_a_problem() {
    let terms = [term(
        json!({"group": "", "version": "v1", "kind": "Namespace", "name": "absent"}),
    )];
    assert_eq!(select(&terms, &hub()), Selection::default());
}

#[test]
fn overlapping_terms_pick_each_object_once() {
    let terms = [
        term(json!({"group": "", "version": "v1", "kind": "Namespace", "name": "app"})),
        term(json!({"group": "", "version": "v1", "kind": "Namespace",
            "labelSelector": {"matchLabels": {"team": "a"}}})),
    ];
    assert_eq!(select(&terms, &hub()).manifests.len(), 3);
}

#[test]
fn kinds_to_list_covers_namespace_content_and_reports_unknown_kinds() {
    let served = served();
    let terms = [
        term(json!({"group": "", "version": "v1", "kind": "Namespace", "name": "app"})),
        term(json!({"group": "example.com", "version": "v1", "kind": "Widget"})),
        term(
            json!({"group": "placement.kubernetes-fleet.io", "version": "v1beta1", "kind": "Work"}),
        ),
    ];
    let (kinds, problems) = kinds_to_list(&terms, &served);
    let listed: Vec<&str> = kinds.iter().map(|k| k.kind.as_str()).collect();
    assert_eq!(listed, ["ConfigMap", "Namespace", "Deployment"]);
    assert_eq!(
        problems,
        [
            "spec.resourceSelectors[1]: the hub does not serve kind Widget (example.com/v1)",
            "spec.resourceSelectors[2]: kind Work (placement.kubernetes-fleet.io/v1beta1) cannot be placed on member clusters",
        ]
    );
}

#[test]
fn identifiers_split_group_and_version() {
    let id = identifier(&object("apps/v1", "Deployment", "app", "api"));
    assert_eq!(id.group.as_deref(), Some("apps"));
    assert_eq!(
        (id.version.as_str(), id.kind.as_str()),
        ("v1", "Deployment")
    );
    assert_eq!(id.namespace.as_deref(), Some("app"));
    let ns = identifier(&namespace("app", json!({})));
    assert_eq!((ns.group, ns.namespace), (None, None));
}

/// What the shell reads for `terms` out of `hub`, as the controller does it: cluster-scoped
/// kinds whole or only the named objects, then namespaced kinds only in the namespaces the
/// first reading lets the terms pick.
fn narrowed(terms: &[ResourceSelectorTerm], hub: &HubObjects) -> HubObjects {
    let cluster_scoped = HubObjects {
        kinds: hub
            .kinds
            .iter()
            .map(|(kind, objects)| {
                let read = match (kind.namespaced, names_to_read(terms, kind)) {
                    (true, _) => Vec::new(),
                    (false, None) => objects.clone(),
                    (false, Some(names)) => objects
                        .iter()
                        .filter(|o| names.contains(object_name(o)))
                        .cloned()
                        .collect(),
                };
                (kind.clone(), read)
            })
            .collect(),
    };
    let namespaces = namespaces_to_read(terms, &cluster_scoped);
    HubObjects {
        kinds: cluster_scoped
            .kinds
            .into_iter()
            .zip(&hub.kinds)
            .map(|((kind, read), (_, all))| {
                let read = if kind.namespaced {
                    all.iter()
                        .filter(|o| object_namespace(o).is_some_and(|n| namespaces.contains(n)))
                        .cloned()
                        .collect()
                } else {
                    read
                };
                (kind, read)
            })
            .collect(),
    }
}

#[test]
fn reading_only_what_the_terms_can_pick_selects_the_same() {
    let namespace_term = |extra: Value| -> Value {
        let mut term = json!({"group": "", "version": "v1", "kind": "Namespace"});
        for (field, value) in extra.as_object().unwrap() {
            term[field] = value.clone();
        }
        term
    };
    let cases = [
        vec![term(namespace_term(json!({"name": "app"})))],
        vec![term(namespace_term(
            json!({"labelSelector": {"matchLabels": {"team": "b"}}}),
        ))],
        vec![term(namespace_term(json!({})))],
        vec![
            term(namespace_term(
                json!({"name": "web", "selectionScope": "NamespaceWithResourceSelectors"}),
            )),
            term(json!({"group": "apps", "version": "v1", "kind": "Deployment"})),
        ],
        vec![
            term(namespace_term(
                json!({"name": "app", "selectionScope": "NamespaceOnly"}),
            )),
            term(
                json!({"group": "rbac.authorization.k8s.io", "version": "v1", "kind": "ClusterRole", "name": "reader"}),
            ),
        ],
        vec![
            term(namespace_term(json!({"name": "kube-system"}))),
            term(json!({"group": "apps", "version": "v1", "kind": "Deployment", "name": "api"})),
        ],
        vec![term(namespace_term(json!({"name": "absent"})))],
    ];
    let hub = hub();
    for terms in &cases {
        let narrowed = narrowed(terms, &hub);
        assert_eq!(select(terms, &narrowed), select(terms, &hub), "{terms:?}");
        let read: usize = narrowed.kinds.iter().map(|(_, o)| o.len()).sum();
        let all: usize = hub.kinds.iter().map(|(_, o)| o.len()).sum();
        assert!(read <= all);
    }
    // One namespace by name: one namespace read, and the content of that namespace only.
    let narrowed = narrowed(&cases[0], &hub);
    let read: Vec<(&str, usize)> = narrowed
        .kinds
        .iter()
        .map(|(k, o)| (k.kind.as_str(), o.len()))
        .collect();
    assert_eq!(
        read,
        [
            ("Namespace", 1),
            ("ConfigMap", 2),
            ("Pod", 1),
            ("Deployment", 1),
            ("ClusterRole", 0),
            ("Work", 0)
        ]
    );
    assert_eq!(
        names_to_read(&cases[1], &served()[0]),
        None,
        "by label: the whole kind"
    );
}
