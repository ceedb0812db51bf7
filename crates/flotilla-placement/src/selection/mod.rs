//! Resource selection: which hub objects a placement's `resourceSelectors` pick, as the
//! manifests its resource snapshots record.
//!
//! The shell lists the kinds [`kinds_to_list`] names (from the hub's discovery) and hands the
//! objects to [`select`]; [`names_to_read`] and [`namespaces_to_read`] narrow what it reads
//! to what the terms can pick. Selection follows KubeFleet's for a `ClusterResourcePlacement`:
//! terms pick cluster-scoped objects by name, by label selector, or all of a kind; a picked
//! namespace brings what its `selectionScope` says (nothing else, everything placeable in it,
//! or what the placement's namespaced terms pick in it). Reserved namespaces (`fleet-…`,
//! `kube-…`), kinds that cannot be placed and objects made by controllers are left out, and
//! every manifest is a [`propagate::placeable_copy`]. A `ResourcePlacement` selects through
//! [`select_in_namespace`] instead: namespaced objects of its own namespace only.

mod kinds;
mod namespaced;
mod propagate;

use std::collections::{BTreeMap, BTreeSet};

use flotilla_api::placement::selector::{ResourceSelectorTerm, SelectionScope};
use flotilla_api::placement::status::ResourceIdentifier;
use flotilla_apimachinery::selector::{LabelSelector, from_label_selector_json_at};
use serde_json::{Map, Value};

pub use kinds::{KindInfo, is_reserved_namespace};
pub use namespaced::select_in_namespace;
pub use propagate::{placeable_copy, should_place};

/// The objects of the kinds [`kinds_to_list`] asked for, as the hub served them.
#[derive(Clone, Debug, Default)]
pub struct HubObjects {
    /// Each listed kind with every object of it (all namespaces).
    pub kinds: Vec<(KindInfo, Vec<Value>)>,
}

/// What a placement's selectors picked.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Selection {
    /// The placeable copies of the picked objects: namespaces first, then CRDs, then the rest
    /// by group, kind, namespace and name.
    pub manifests: Vec<Value>,
    /// Selectors that cannot pick anything as written, each naming its field.
    pub problems: Vec<String>,
}

/// The kinds to list for `terms`, out of the kinds the hub serves; the problems are terms
/// naming kinds the hub does not serve or cannot place.
pub fn kinds_to_list<'a>(
    terms: &[ResourceSelectorTerm],
    served: &'a [KindInfo],
) -> (Vec<&'a KindInfo>, Vec<String>) {
    let mut wanted: Vec<&KindInfo> = Vec::new();
    let mut problems = Vec::new();
    for (index, term) in terms.iter().enumerate() {
        match served
            .iter()
            .find(|k| k.group == term.group && k.kind == term.kind)
        {
            Some(kind) if !kind.is_placeable() => problems.push(format!(
                "spec.resourceSelectors[{index}]: {} cannot be placed on member clusters",
                describe(term)
            )),
            Some(kind) => wanted.push(kind),
            None => problems.push(format!(
                "spec.resourceSelectors[{index}]: the hub does not serve {}",
                describe(term)
            )),
        }
        if is_namespace(term) && scope(term) == SelectionScope::NamespaceWithResources {
            wanted.extend(served.iter().filter(|k| k.namespaced && k.is_placeable()));
        }
    }
    wanted.sort();
    wanted.dedup();
    (wanted, problems)
}

/// The only objects of cluster-scoped `kind` that `terms` can pick, when every term of the
/// kind names its object: the shell then reads those by name instead of listing the kind (a
/// fleet of 10,000 members has over 10,000 namespaces, and a placement of one namespace by
/// name needs one of them). `None` when a term picks by label or takes the whole kind.
pub fn names_to_read(terms: &[ResourceSelectorTerm], kind: &KindInfo) -> Option<BTreeSet<String>> {
    let mut names = BTreeSet::new();
    for term in terms
        .iter()
        .filter(|t| t.group == kind.group && t.kind == kind.kind)
    {
        names.insert(term.name.clone()?);
    }
    Some(names)
}

/// The namespaces whose objects `terms` can pick, given the cluster-scoped objects in `hub`
/// (its namespaced kinds may be listed empty): the namespaces the terms pick. Only their
/// namespaced objects need reading: [`select`] takes a namespaced object only from a picked
/// namespace.
pub fn namespaces_to_read(terms: &[ResourceSelectorTerm], hub: &HubObjects) -> BTreeSet<String> {
    select(terms, hub)
        .manifests
        .iter()
        .filter(|m| m["apiVersion"] == "v1" && m["kind"] == "Namespace")
        .map(|m| object_name(m).to_string())
        .collect()
}

/// Picks the manifests `terms` select among `hub`'s objects.
pub fn select(terms: &[ResourceSelectorTerm], hub: &HubObjects) -> Selection {
    let mut problems = Vec::new();
    let matchers: Vec<Option<Matcher>> = terms
        .iter()
        .enumerate()
        .map(|(index, term)| match Matcher::new(term, index) {
            Ok(matcher) => Some(matcher),
            Err(message) => {
                problems.push(message);
                None
            }
        })
        .collect();
    let objects_of = |term: &ResourceSelectorTerm| -> Vec<&Value> {
        hub.kinds
            .iter()
            .filter(move |(k, _)| k.group == term.group && k.kind == term.kind)
            .flat_map(|(_, objects)| objects)
            .collect()
    };
    let mut picked: BTreeMap<(u8, String, String, String, String), Value> = BTreeMap::new();
    let mut pick = |object: &Value| {
        if should_place(object) {
            picked
                .entry(sort_key(object))
                .or_insert_with(|| placeable_copy(object));
        }
    };
    let namespaced_terms: Vec<usize> = (0..terms.len())
        .filter(|&i| {
            hub.kinds
                .iter()
                .any(|(k, _)| k.namespaced && k.group == terms[i].group && k.kind == terms[i].kind)
        })
        .collect();
    for (index, term) in terms.iter().enumerate() {
        let Some(matcher) = &matchers[index] else {
            continue;
        };
        if namespaced_terms.contains(&index) {
            if !terms.iter().any(|t| {
                is_namespace(t) && scope(t) == SelectionScope::NamespaceWithResourceSelectors
            }) {
                problems.push(format!(
                    "spec.resourceSelectors[{index}]: {} is namespaced; a ClusterResourcePlacement selects its namespace (or uses selectionScope NamespaceWithResourceSelectors)",
                    describe(term)
                ));
            }
            continue;
        }
        for object in objects_of(term).into_iter().filter(|o| matcher.matches(o)) {
            let name = object_name(object);
            if is_namespace(term) && is_reserved_namespace(name) {
                if term.name.is_some() {
                    problems.push(format!(
                        "spec.resourceSelectors[{index}].name: namespace {name} is reserved for the fleet and Kubernetes"
                    ));
                }
                continue;
            }
            pick(object);
            if !is_namespace(term) {
                continue;
            }
            match scope(term) {
                SelectionScope::NamespaceOnly => {}
                SelectionScope::NamespaceWithResources => {
                    for (kind, objects) in &hub.kinds {
                        if kind.namespaced && kind.is_placeable() {
                            objects
                                .iter()
                                .filter(|o| object_namespace(o) == Some(name))
                                .for_each(&mut pick);
                        }
                    }
                }
                SelectionScope::NamespaceWithResourceSelectors => {
                    for &other in &namespaced_terms {
                        let Some(inner) = &matchers[other] else {
                            continue;
                        };
                        objects_of(&terms[other])
                            .into_iter()
                            .filter(|o| object_namespace(o) == Some(name) && inner.matches(o))
                            .for_each(&mut pick);
                    }
                }
            }
        }
    }
    Selection {
        manifests: picked.into_values().collect(),
        problems,
    }
}

/// The `selectedResources` entry of a manifest.
pub fn identifier(manifest: &Value) -> ResourceIdentifier {
    let api_version = manifest["apiVersion"].as_str().unwrap_or_default();
    let (group, version) = match api_version.split_once('/') {
        Some((group, version)) => (Some(group.to_string()), version.to_string()),
        None => (None, api_version.to_string()),
    };
    ResourceIdentifier {
        group,
        version,
        kind: manifest["kind"].as_str().unwrap_or_default().to_string(),
        name: object_name(manifest).to_string(),
        namespace: object_namespace(manifest).map(str::to_string),
        envelope: None,
    }
}

/// How one term tests objects of its kind.
enum Matcher {
    /// Every object.
    All,
    /// The object with this name.
    Name(String),
    /// Objects whose labels match.
    Labels(LabelSelector),
}

impl Matcher {
    /// The matcher of term `index`; an invalid label selector is an error naming its field.
    fn new(term: &ResourceSelectorTerm, index: usize) -> Result<Matcher, String> {
        if let Some(name) = &term.name {
            return Ok(Matcher::Name(name.clone()));
        }
        let Some(selector) = &term.label_selector else {
            return Ok(Matcher::All);
        };
        let json = serde_json::to_value(selector).map_err(|e| e.to_string())?;
        let path = format!("spec.resourceSelectors[{index}].labelSelector");
        from_label_selector_json_at(&json, &path)
            .map(Matcher::Labels)
            .map_err(|errors| {
                errors
                    .iter()
                    .map(|e| format!("{}: {}", e.field, e.body()))
                    .collect::<Vec<_>>()
                    .join("; ")
            })
    }

    fn matches(&self, object: &Value) -> bool {
        match self {
            Matcher::All => true,
            Matcher::Name(name) => object_name(object) == name,
            Matcher::Labels(selector) => {
                static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
                let labels = object["metadata"]["labels"]
                    .as_object()
                    .unwrap_or_else(|| EMPTY.get_or_init(Map::new));
                selector.matches(labels)
            }
        }
    }
}

fn is_namespace(term: &ResourceSelectorTerm) -> bool {
    term.group.is_empty() && term.kind == "Namespace"
}

fn scope(term: &ResourceSelectorTerm) -> SelectionScope {
    term.selection_scope.unwrap_or_default()
}

fn describe(term: &ResourceSelectorTerm) -> String {
    if term.group.is_empty() {
        format!("kind {} (version {})", term.kind, term.version)
    } else {
        format!("kind {} ({}/{})", term.kind, term.group, term.version)
    }
}

fn object_name(object: &Value) -> &str {
    object["metadata"]["name"].as_str().unwrap_or_default()
}

fn object_namespace(object: &Value) -> Option<&str> {
    object["metadata"]["namespace"]
        .as_str()
        .filter(|ns| !ns.is_empty())
}

/// Namespaces first, then CRDs, then everything else by group, kind, namespace and name.
fn sort_key(object: &Value) -> (u8, String, String, String, String) {
    let api_version = object["apiVersion"].as_str().unwrap_or_default();
    let group = api_version
        .split_once('/')
        .map(|(g, _)| g)
        .unwrap_or_default();
    let kind = object["kind"].as_str().unwrap_or_default();
    let rank = match (group, kind) {
        ("", "Namespace") => 0,
        ("apiextensions.k8s.io", "CustomResourceDefinition") => 1,
        _ => 2,
    };
    (
        rank,
        group.to_string(),
        kind.to_string(),
        object_namespace(object).unwrap_or_default().to_string(),
        object_name(object).to_string(),
    )
}

#[cfg(test)]
mod tests;
