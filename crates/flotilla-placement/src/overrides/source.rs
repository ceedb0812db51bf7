//! One override snapshot of either kind, reduced to what selection and rendering read: which
//! resources it selects, which placement it belongs to, and its rules; and the identity of a
//! selected manifest that selectors compare against.

use std::collections::BTreeMap;

use flotilla_api::placement::override_snapshots::IS_LATEST_SNAPSHOT_LABEL;
use flotilla_api::placement::overrides::{
    NamespacedResourceSelector, OverrideRule, PlacementRef, PlacementScope,
};
use flotilla_api::placement::selector::ResourceSelectorTerm;
use flotilla_api::placement::{ClusterResourceOverrideSnapshot, ResourceOverrideSnapshot};
use flotilla_apimachinery::selector::from_label_selector_json;
use serde_json::{Map, Value};

use super::ClusterView;
use super::error::{OverrideError, OverrideKind, Problem};
use crate::placement_key::PlacementKey;

/// A manifest's group, version, kind, namespace (`None` when cluster-scoped) and name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ResourceId<'a> {
    pub group: &'a str,
    pub version: &'a str,
    pub kind: &'a str,
    pub namespace: Option<&'a str>,
    pub name: &'a str,
}

impl<'a> ResourceId<'a> {
    /// The identity of `manifest`, or `None` when it lacks `apiVersion`, `kind` or a name.
    pub fn of(manifest: &'a Value) -> Option<Self> {
        let text = |pointer: &str| manifest.pointer(pointer).and_then(Value::as_str);
        let (group, version) = match text("/apiVersion")?.split_once('/') {
            Some((group, version)) => (group, version),
            None => ("", text("/apiVersion")?),
        };
        Some(ResourceId {
            group,
            version,
            kind: text("/kind")?,
            namespace: text("/metadata/namespace").filter(|ns| !ns.is_empty()),
            name: text("/metadata/name")?,
        })
    }

    /// `Kind "name"` or `Kind "name" in namespace "ns"`, for messages.
    pub fn describe(&self) -> String {
        match self.namespace {
            Some(ns) => format!("{} {:?} in namespace {ns:?}", self.kind, self.name),
            None => format!("{} {:?}", self.kind, self.name),
        }
    }
}

/// What an override snapshot selects.
#[derive(Clone, Copy, Debug)]
enum Targets<'a> {
    /// A ClusterResourceOverride's selectors of cluster-scoped resources by name; selecting a
    /// namespace selects everything in it.
    Cluster(&'a [ResourceSelectorTerm]),
    /// A ResourceOverride's selectors of resources in its namespace.
    Namespaced(&'a str, &'a [NamespacedResourceSelector]),
}

/// One override snapshot of either kind.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Source<'a> {
    /// The snapshot's name (`<override>-<index>`).
    pub snapshot: &'a str,
    /// The rules, in order.
    pub rules: &'a [OverrideRule],
    targets: Targets<'a>,
    placement: Option<&'a PlacementRef>,
    latest: bool,
}

impl<'a> Source<'a> {
    /// A ClusterResourceOverride snapshot.
    pub fn cluster(snapshot: &'a ClusterResourceOverrideSnapshot) -> Self {
        let spec = &snapshot.spec.override_spec;
        Source {
            snapshot: snapshot.metadata.name.as_deref().unwrap_or_default(),
            rules: &spec.policy.override_rules,
            targets: Targets::Cluster(&spec.cluster_resource_selectors),
            placement: spec.placement.as_ref(),
            latest: is_latest(snapshot.metadata.labels.as_ref()),
        }
    }

    /// A ResourceOverride snapshot.
    pub fn namespaced(snapshot: &'a ResourceOverrideSnapshot) -> Self {
        let spec = &snapshot.spec.override_spec;
        Source {
            snapshot: snapshot.metadata.name.as_deref().unwrap_or_default(),
            rules: &spec.policy.override_rules,
            targets: Targets::Namespaced(
                snapshot.metadata.namespace.as_deref().unwrap_or_default(),
                &spec.resource_selectors,
            ),
            placement: spec.placement.as_ref(),
            latest: is_latest(snapshot.metadata.labels.as_ref()),
        }
    }

    /// Which of the two kinds the snapshot records.
    pub fn kind(&self) -> OverrideKind {
        match self.targets {
            Targets::Cluster(_) => OverrideKind::Cluster,
            Targets::Namespaced(..) => OverrideKind::Namespaced,
        }
    }

    /// The snapshot's namespace (ResourceOverride snapshots only).
    pub fn namespace(&self) -> Option<&'a str> {
        match self.targets {
            Targets::Cluster(_) => None,
            Targets::Namespaced(namespace, _) => Some(namespace),
        }
    }

    /// Whether `placement` may use the snapshot: it is the latest of its override and its
    /// placement reference is unset, or names a ClusterResourcePlacement (scope `Cluster`)
    /// that is `placement`, or names a ResourcePlacement of the override's own namespace
    /// (scope `Namespaced`, ResourceOverrides only) that is `placement`.
    pub fn usable_by(&self, placement: &PlacementKey) -> bool {
        self.latest
            && self.placement.is_none_or(|r| {
                let namespace = match r.scope.unwrap_or_default() {
                    PlacementScope::Cluster => None,
                    PlacementScope::Namespaced => match self.namespace() {
                        Some(namespace) => Some(namespace),
                        None => return false,
                    },
                };
                placement.namespace() == namespace && r.name == placement.name
            })
    }

    /// An error of rule `rule` of this snapshot.
    pub fn error(
        &self,
        rule: usize,
        path: Option<&str>,
        resource: Option<&ResourceId<'_>>,
        problem: Problem,
    ) -> Box<OverrideError> {
        Box::new(OverrideError {
            kind: self.kind(),
            namespace: self.namespace().map(str::to_string),
            snapshot: self.snapshot.to_string(),
            rule,
            path: path.map(str::to_string),
            resource: resource.map(ResourceId::describe),
            problem,
        })
    }

    /// The rules that apply on `cluster`, with their indexes, in order. Fails on the first
    /// rule whose cluster selector is invalid (naming `resource`, if any).
    pub fn rules_for(
        &self,
        cluster: ClusterView<'_>,
        resource: Option<&ResourceId<'_>>,
    ) -> Result<Vec<(usize, &'a OverrideRule)>, Box<OverrideError>> {
        let mut rules = Vec::new();
        for (index, rule) in self.rules.iter().enumerate() {
            let matched = rule_matches(rule, cluster).map_err(|why| {
                self.error(index, None, resource, Problem::InvalidClusterSelector(why))
            })?;
            if matched {
                rules.push((index, rule));
            }
        }
        Ok(rules)
    }

    /// Whether the snapshot selects the resource `id`. A ClusterResourceOverride selects a
    /// cluster-scoped resource by its own group, version, kind and name, and a namespaced one
    /// through its namespace; a ResourceOverride selects resources of its own namespace.
    pub fn selects(&self, id: &ResourceId<'_>) -> bool {
        match self.targets {
            Targets::Cluster(selectors) => {
                let (group, version, kind, name) = match id.namespace {
                    Some(namespace) => ("", "v1", "Namespace", namespace),
                    None => (id.group, id.version, id.kind, id.name),
                };
                selectors.iter().any(|s| {
                    s.group == group
                        && s.version == version
                        && s.kind == kind
                        && s.name.as_deref() == Some(name)
                })
            }
            Targets::Namespaced(namespace, selectors) => {
                id.namespace == Some(namespace)
                    && selectors.iter().any(|s| {
                        s.group == id.group
                            && s.version == id.version
                            && s.kind == id.kind
                            && s.name == id.name
                    })
            }
        }
    }
}

fn is_latest(labels: Option<&BTreeMap<String, String>>) -> bool {
    labels
        .and_then(|l| l.get(IS_LATEST_SNAPSHOT_LABEL))
        .is_some_and(|v| v == "true")
}

/// Whether `rule` applies on `cluster`: an absent cluster selector selects no cluster, one with
/// no terms every cluster, otherwise any term whose label selector matches. `Err` carries why a
/// label selector is invalid.
fn rule_matches(rule: &OverrideRule, cluster: ClusterView<'_>) -> Result<bool, String> {
    let Some(selector) = &rule.cluster_selector else {
        return Ok(false);
    };
    if selector.cluster_selector_terms.is_empty() {
        return Ok(true);
    }
    let labels: Map<String, Value> = cluster
        .labels
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(v.clone())))
        .collect();
    for term in &selector.cluster_selector_terms {
        let json = serde_json::to_value(&term.label_selector).map_err(|e| e.to_string())?;
        // A term without a label selector is rejected by validation; it selects no cluster.
        if json.is_null() {
            continue;
        }
        let compiled = from_label_selector_json(&json).map_err(|errors| {
            errors
                .iter()
                .map(|e| e.message())
                .collect::<Vec<_>>()
                .join("; ")
        })?;
        if compiled.matches(&labels) {
            return Ok(true);
        }
    }
    Ok(false)
}
