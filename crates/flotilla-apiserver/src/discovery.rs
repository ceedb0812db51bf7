//! Discovery documents, generated from the registry snapshot: the legacy ones (`/api`,
//! `/apis`, `/apis/<g>`, `/api/v1`, `/apis/<g>/<v>`), the aggregated ones (`/api` and `/apis`
//! as `apidiscovery.k8s.io/v2` APIGroupDiscoveryLists, which kubectl asks for first: one
//! request instead of one per group version), and `/version`.

use serde_json::{Value, json};

use crate::http::Route;
use crate::registry::{ResourceInfo, Snapshot, api_version};

/// The Kubernetes version Flotilla's API corresponds to: the built-in kinds it serves are
/// kube-apiserver 1.37's (k8s-openapi's `v1_37`), checked against the real 1.37.2.
pub const KUBERNETES_VERSION: (&str, &str) = ("1", "37");

/// `/version`.
pub fn version() -> Value {
    json!({
        "major": KUBERNETES_VERSION.0,
        "minor": KUBERNETES_VERSION.1,
        // kube-apiserver's compatibility versions (KEP 4330): it emulates itself and is
        // compatible with clients and peers of one minor back.
        "emulationMajor": KUBERNETES_VERSION.0,
        "emulationMinor": KUBERNETES_VERSION.1,
        "minCompatibilityMajor": KUBERNETES_VERSION.0,
        "minCompatibilityMinor": format!("{}", KUBERNETES_VERSION.1.parse::<u32>().unwrap_or(1) - 1),
        "gitVersion": format!("v{}.{}.0-flotilla.{}", KUBERNETES_VERSION.0, KUBERNETES_VERSION.1, env!("CARGO_PKG_VERSION")),
        "gitCommit": "",
        "gitTreeState": "clean",
        "buildDate": "",
        "goVersion": "rust",
        "compiler": "rustc",
        "platform": format!("{}/{}", std::env::consts::OS, std::env::consts::ARCH),
    })
}

fn group_entry(group: &str, versions: &[String]) -> Value {
    let vs: Vec<Value> = versions
        .iter()
        .map(|v| json!({"groupVersion": api_version(group, v), "version": v}))
        .collect();
    json!({"name": group, "versions": vs, "preferredVersion": vs.first().cloned().unwrap_or(Value::Null)})
}

fn resource_entries(info: &ResourceInfo) -> Vec<Value> {
    // Namespaces are deleted one by one (kube serves no deletecollection for them).
    let verbs = if crate::hooks::is_namespace_resource(info) {
        json!([
            "create", "delete", "get", "list", "patch", "update", "watch"
        ])
    } else {
        json!([
            "create",
            "delete",
            "deletecollection",
            "get",
            "list",
            "patch",
            "update",
            "watch"
        ])
    };
    let mut main = json!({
        "name": info.plural,
        "singularName": info.singular,
        "namespaced": info.namespaced,
        "kind": info.kind,
        "verbs": verbs,
    });
    if !info.short_names.is_empty() {
        main["shortNames"] = json!(info.short_names);
    }
    if !info.categories.is_empty() {
        main["categories"] = json!(info.categories);
    }
    let mut out = vec![main];
    if info.status_subresource {
        out.push(json!({"name": format!("{}/status", info.plural), "singularName": "", "namespaced": info.namespaced,
            "kind": info.kind, "verbs": ["get", "patch", "update"]}));
    }
    if crate::hooks::is_namespace_resource(info) {
        out.push(
            json!({"name": "namespaces/finalize", "singularName": "", "namespaced": false,
            "kind": info.kind, "verbs": ["update"]}),
        );
    }
    if info.scale.is_some() {
        out.push(json!({"name": format!("{}/scale", info.plural), "singularName": "", "namespaced": info.namespaced,
            "group": "autoscaling", "version": "v1", "kind": "Scale", "verbs": ["get", "patch", "update"]}));
    }
    if crate::hooks::is_pod_resource(info) {
        out.push(
            json!({"name": "pods/eviction", "singularName": "", "namespaced": true,
            "group": "policy", "version": "v1", "kind": "Eviction", "verbs": ["create"]}),
        );
    }
    out
}

/// The media type of aggregated discovery, as kubectl asks for it and kube-apiserver answers.
pub const AGGREGATED: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

/// Whether an `Accept` header asks for aggregated discovery (version v2).
pub fn wants_aggregated(accept: &str) -> bool {
    accept.split(',').any(|media| {
        let params: Vec<&str> = media.split(';').map(str::trim).collect();
        params.contains(&"g=apidiscovery.k8s.io")
            && params.contains(&"v=v2")
            && params.contains(&"as=APIGroupDiscoveryList")
    })
}

/// The aggregated discovery document of `/api` (`core`) or `/apis`: every group (the core
/// group alone, or every other), its versions preferred first, each with its resources, their
/// subresources, verbs, scope, names and the kind they answer with.
pub fn aggregated(snap: &Snapshot, core: bool) -> Value {
    let items: Vec<Value> = served_groups(snap)
        .iter()
        .filter(|(group, _)| group.is_empty() == core)
        .map(|(group, versions)| {
            let versions: Vec<Value> = versions
                .iter()
                .map(|version| {
                    let mut resources: Vec<Value> = snap
                        .resources_in(group, version)
                        .iter()
                        .map(|info| aggregated_resource(info))
                        .collect();
                    resources.extend(review_entries(group, version).iter().map(|r| {
                        json!({"resource": r["name"], "responseKind": {"group": "", "version": "", "kind": r["kind"]},
                               "scope": if r["namespaced"] == true { "Namespaced" } else { "Cluster" },
                               "singularResource": r["singularName"], "verbs": r["verbs"]})
                    }));
                    json!({"version": version, "resources": resources, "freshness": "Current"})
                })
                .collect();
            let metadata = if group.is_empty() {
                json!({})
            } else {
                json!({"name": group})
            };
            json!({"metadata": metadata, "versions": versions})
        })
        .collect();
    json!({"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2",
           "metadata": {}, "items": items})
}

/// One resource of an aggregated discovery document, from its legacy entries.
fn aggregated_resource(info: &ResourceInfo) -> Value {
    let entries = resource_entries(info);
    let main = &entries[0];
    // kube-apiserver leaves group and version empty when they are the resource's own.
    let kind = |entry: &Value| {
        json!({"group": entry.get("group").cloned().unwrap_or_else(|| json!("")),
               "version": entry.get("version").cloned().unwrap_or_else(|| json!("")),
               "kind": entry["kind"]})
    };
    let mut subresources: Vec<Value> = entries[1..]
        .iter()
        .map(|entry| {
            let name = entry["name"].as_str().unwrap_or_default();
            json!({"subresource": name.split_once('/').map_or(name, |(_, sub)| sub),
                   "responseKind": kind(entry), "verbs": entry["verbs"]})
        })
        .collect();
    subresources.sort_by(|a, b| a["subresource"].as_str().cmp(&b["subresource"].as_str()));
    let mut resource = json!({
        "resource": info.plural,
        "responseKind": kind(main),
        "scope": if info.namespaced { "Namespaced" } else { "Cluster" },
        "singularResource": info.singular,
        "verbs": main["verbs"],
    });
    for key in ["shortNames", "categories"] {
        if let Some(v) = main.get(key) {
            resource[key] = v.clone();
        }
    }
    if !subresources.is_empty() {
        resource["subresources"] = json!(subresources);
    }
    resource
}

/// The stored kinds' groups and versions, with the review groups (whose resources are
/// answered, never stored).
fn served_groups(snap: &Snapshot) -> std::collections::BTreeMap<String, Vec<String>> {
    let mut groups = snap.groups().clone();
    for (group, ..) in crate::access_review::RESOURCES {
        groups
            .entry((*group).to_string())
            .or_insert_with(|| vec!["v1".to_string()]);
    }
    groups
}

/// The create-only review resources of `group`/`version`.
fn review_entries(group: &str, version: &str) -> Vec<Value> {
    if version != "v1" {
        return Vec::new();
    }
    crate::access_review::RESOURCES
        .iter()
        .filter(|(g, ..)| *g == group)
        .map(|(_, plural, kind, namespaced)| {
            json!({"name": plural, "singularName": kind.to_lowercase(), "namespaced": namespaced,
                   "kind": kind, "verbs": ["create"]})
        })
        .collect()
}

/// The discovery document for a non-resource route, or None if nothing is served there.
pub fn serve(snap: &Snapshot, route: &Route) -> Option<Value> {
    match route {
        Route::CoreVersions => Some(json!({
            "kind": "APIVersions",
            "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": ""}],
        })),
        Route::Groups => {
            let groups: Vec<Value> = served_groups(snap)
                .iter()
                .filter(|(g, _)| !g.is_empty())
                .map(|(g, vs)| group_entry(g, vs))
                .collect();
            Some(json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}))
        }
        Route::Group(g) => {
            let groups = served_groups(snap);
            let vs = groups.get(g)?;
            let mut entry = group_entry(g, vs);
            entry["kind"] = json!("APIGroup");
            entry["apiVersion"] = json!("v1");
            Some(entry)
        }
        Route::GroupVersion(g, v) => {
            let resources = snap.resources_in(g, v);
            let reviews = review_entries(g, v);
            if resources.is_empty() && reviews.is_empty() {
                return None;
            }
            let mut list: Vec<Value> = resources.iter().flat_map(|r| resource_entries(r)).collect();
            list.extend(reviews);
            Some(
                json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": api_version(g, v), "resources": list}),
            )
        }
        Route::Resource(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Registry;

    #[test]
    fn aggregated_discovery_is_what_kubectl_asks_for_first() {
        assert!(wants_aggregated(
            "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"
        ));
        assert!(!wants_aggregated(
            "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"
        ));
        assert!(!wants_aggregated("application/json"));
    }

    #[test]
    fn one_document_lists_every_group_with_its_resources() {
        let snap = Registry::new(crate::hub::builtin_definitions()).snapshot();
        let core = aggregated(&snap, true);
        assert_eq!(core["items"].as_array().unwrap().len(), 1);
        let apis = aggregated(&snap, false);
        let groups: Vec<&str> = apis["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|g| g["metadata"]["name"].as_str())
            .collect();
        for group in [
            "apps",
            "placement.kubernetes-fleet.io",
            "authorization.k8s.io",
        ] {
            assert!(groups.contains(&group), "{group} missing from {groups:?}");
        }
        let autoscaling = apis["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["metadata"]["name"] == "autoscaling")
            .unwrap();
        assert_eq!(
            autoscaling["versions"][0]["version"], "v2",
            "preferred first"
        );
    }
}
