//! The kind registry: every served resource, built from CRD-shaped definitions.
//!
//! Built-in kinds (Flotilla's own and the core Kubernetes kinds) and user CRDs are all described
//! by `apiextensions.k8s.io/v1` CustomResourceDefinition JSON, so the engine serves them the
//! same way. The registry is an immutable snapshot swapped atomically when CRDs change.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, RwLock};

use flotilla_apimachinery::table::PrinterColumn;
use serde_json::Value;

/// One served group/version/resource and everything the engine needs to serve it.
#[derive(Debug, Clone)]
pub struct ResourceInfo {
    /// API group ("" for core).
    pub group: String,
    /// This served version.
    pub version: String,
    /// The version objects are stored in.
    pub storage_version: String,
    /// The group objects are stored as: the kind's own, except for a kind that is another
    /// group's in a second shape (`events.k8s.io` Events are stored as core Events).
    pub storage_group: String,
    /// Kind, e.g. `ClusterResourcePlacement`.
    pub kind: String,
    /// List kind, e.g. `ClusterResourcePlacementList`.
    pub list_kind: String,
    /// Plural resource name (URL segment).
    pub plural: String,
    /// Singular name.
    pub singular: String,
    /// Short names for kubectl.
    pub short_names: Vec<String>,
    /// Categories (e.g. `all`).
    pub categories: Vec<String>,
    /// Namespaced or cluster-scoped.
    pub namespaced: bool,
    /// The structural `openAPIV3Schema` of this version.
    pub schema: Arc<Value>,
    /// Printer columns for Tables.
    pub columns: Arc<Vec<PrinterColumn>>,
    /// Whether `/status` is a subresource (then the main endpoint ignores status changes).
    pub status_subresource: bool,
    /// Whether objects carry `metadata.generation` (set to 1, bumped on spec changes): every
    /// custom resource, and the built-in kinds kube tracks it for.
    pub tracks_generation: bool,
    /// Where the `/scale` subresource reads and writes, when the kind has one.
    pub scale: Option<crate::scale::ScalePaths>,
    /// Extra field-selector paths allowed besides metadata.name/namespace.
    pub selectable_fields: Vec<String>,
    /// True for Flotilla's own and core kinds (not deletable through CRDs).
    pub builtin: bool,
    /// For a version its CRD marks `deprecated`: the warning every request to it gets
    /// (`deprecationWarning`, or kube's default `<group>/<version> <Kind> is deprecated`).
    pub deprecation: Option<String>,
}

impl ResourceInfo {
    /// `apps/v1`, or `v1` for the core group.
    pub fn api_version(&self) -> String {
        api_version(&self.group, &self.version)
    }

    /// `Deployment.apps`, as kube prints kinds in Invalid messages.
    pub fn qualified_kind(&self) -> String {
        if self.group.is_empty() {
            self.kind.clone()
        } else {
            format!("{}.{}", self.kind, self.group)
        }
    }

    /// Whether objects are served in the version they are stored in: then the stored JSON,
    /// with its resourceVersion spliced in ([`crate::raw::splice_revision`]), is what a read
    /// returns, and lists, write responses and watches can send it without parsing it.
    pub fn serves_storage_version(&self) -> bool {
        self.version == self.storage_version && self.group == self.storage_group
    }

    /// Whether this is a compiled-in Kubernetes kind (core, apps, batch, `*.k8s.io`) rather
    /// than a custom resource: such kinds take strategic merge patches and unconditional PUTs.
    pub fn is_kubernetes_kind(&self) -> bool {
        self.builtin
            && (matches!(self.group.as_str(), "" | "apps" | "batch")
                || self.group.ends_with(".k8s.io"))
    }

    /// The storage key prefix of this resource: `/registry/<group>/<plural>/`.
    pub fn prefix(&self) -> String {
        let g = if self.storage_group.is_empty() {
            "core"
        } else {
            &self.storage_group
        };
        format!("/registry/{g}/{}/", self.plural)
    }

    /// The storage key prefix for one namespace (or the whole resource when `ns` is None).
    pub fn namespace_prefix(&self, ns: Option<&str>) -> String {
        match ns {
            Some(ns) if self.namespaced => format!("{}{ns}/", self.prefix()),
            _ => self.prefix(),
        }
    }

    /// The storage key of one object.
    pub fn key(&self, ns: Option<&str>, name: &str) -> String {
        format!("{}{name}", self.namespace_prefix(ns))
    }
}

/// `group/version`, or just `version` for the core group.
pub fn api_version(group: &str, version: &str) -> String {
    if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    }
}

/// Splits `apps/v1` into (`apps`, `v1`) and `v1` into (``, `v1`).
pub fn split_api_version(api_version: &str) -> (&str, &str) {
    match api_version.split_once('/') {
        Some((g, v)) => (g, v),
        None => ("", api_version),
    }
}

/// An immutable view of every served resource.
#[derive(Debug, Default)]
pub struct Snapshot {
    by_gvr: HashMap<(String, String, String), Arc<ResourceInfo>>,
    /// group → served versions, preferred (storage) first.
    groups: BTreeMap<String, Vec<String>>,
    /// CRD name (`plural.group`) → its resources, for user CRDs.
    crds: HashMap<String, Vec<Arc<ResourceInfo>>>,
    /// `/openapi/v3` documents of this snapshot, built on first request.
    pub(crate) openapi: std::sync::OnceLock<HashMap<String, Value>>,
    /// `/openapi/v2` of this snapshot (JSON, protobuf), built on first request.
    pub(crate) openapi_v2: std::sync::OnceLock<(bytes::Bytes, bytes::Bytes)>,
}

impl Snapshot {
    /// The resource served at group/version/plural.
    pub fn get(&self, group: &str, version: &str, plural: &str) -> Option<Arc<ResourceInfo>> {
        self.by_gvr
            .get(&(group.to_string(), version.to_string(), plural.to_string()))
            .cloned()
    }

    /// Every served resource, sorted by group, version and plural.
    pub fn all_resources(&self) -> Vec<Arc<ResourceInfo>> {
        let mut v: Vec<_> = self.by_gvr.values().cloned().collect();
        v.sort_by(|a, b| (&a.group, &a.version, &a.plural).cmp(&(&b.group, &b.version, &b.plural)));
        v
    }

    /// Served groups with their versions, preferred version first.
    pub fn groups(&self) -> &BTreeMap<String, Vec<String>> {
        &self.groups
    }

    /// Every resource served in a group/version, sorted by plural.
    pub fn resources_in(&self, group: &str, version: &str) -> Vec<Arc<ResourceInfo>> {
        let mut v: Vec<_> = self
            .by_gvr
            .values()
            .filter(|r| r.group == group && r.version == version)
            .cloned()
            .collect();
        v.sort_by(|a, b| a.plural.cmp(&b.plural));
        v
    }

    /// One resource per stored kind (its storage version), e.g. for GC and namespace cleanup.
    pub fn storage_resources(&self) -> Vec<Arc<ResourceInfo>> {
        let mut v: Vec<_> = self
            .by_gvr
            .values()
            .filter(|r| r.serves_storage_version())
            .cloned()
            .collect();
        v.sort_by(|a, b| (&a.group, &a.plural).cmp(&(&b.group, &b.plural)));
        v
    }

    /// The storage-version resource stored under `/registry/<group>/<plural>/`.
    pub fn by_storage_prefix(&self, group: &str, plural: &str) -> Option<Arc<ResourceInfo>> {
        self.by_gvr
            .values()
            .find(|r| r.group == group && r.plural == plural && r.serves_storage_version())
            .cloned()
    }

    /// Resources defined by the user CRD named `name`.
    pub fn crd_resources(&self, name: &str) -> &[Arc<ResourceInfo>] {
        self.crds.get(name).map(Vec::as_slice).unwrap_or(&[])
    }
}

/// Rules that depend on other kinds (a `ResourcePlacement` selects only namespaced ones) ask
/// the snapshot the write is served from, so user CRDs count as much as built-in kinds.
impl flotilla_api::ServedKinds for Snapshot {
    fn namespaced(&self, group: &str, kind: &str) -> Option<bool> {
        self.by_gvr
            .values()
            .find(|r| r.group == group && r.kind == kind)
            .map(|r| r.namespaced)
    }
}

/// The live registry: built-in definitions plus user CRDs, swapped as CRDs change.
#[derive(Debug)]
pub struct Registry {
    /// The snapshot of the built-ins alone, shared by [`Registry::sibling`]s.
    base: Arc<Snapshot>,
    user: RwLock<Vec<Value>>,
    current: RwLock<Arc<Snapshot>>,
}

impl Registry {
    /// A registry serving the given built-in CRD definitions.
    pub fn new(builtin: Vec<Value>) -> Self {
        let base = Arc::new(build(&builtin));
        Self {
            user: RwLock::new(Vec::new()),
            current: RwLock::new(base.clone()),
            base,
        }
    }

    /// A new registry serving the same built-in kinds and no user CRDs, sharing the parsed
    /// built-in definitions: thousands of simulated member clusters cost one copy of them.
    pub fn sibling(&self) -> Self {
        Self {
            user: RwLock::new(Vec::new()),
            current: RwLock::new(self.base.clone()),
            base: self.base.clone(),
        }
    }

    /// The current snapshot.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        self.current.read().map(|g| g.clone()).unwrap_or_default()
    }

    /// Rebuilds the snapshot from the built-ins plus the given established user CRDs. The
    /// built-ins' parsed definitions are reused, never parsed again.
    pub fn set_user_crds(&self, crds: &[Value]) {
        let snapshot = if crds.is_empty() {
            self.base.clone()
        } else {
            Arc::new(extend(&self.base, crds))
        };
        if let Ok(mut g) = self.current.write() {
            *g = snapshot;
        }
        if let Ok(mut u) = self.user.write() {
            *u = crds.to_vec();
        }
    }

    /// Stops serving the user CRD named `name` (just before its object is deleted, so no
    /// client can observe the CRD gone while its kind is still served).
    pub fn withdraw(&self, name: &str) {
        let remaining: Vec<Value> = self
            .user
            .read()
            .map(|u| {
                u.iter()
                    .filter(|c| c.pointer("/metadata/name").and_then(Value::as_str) != Some(name))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        self.set_user_crds(&remaining);
    }

    /// Whether a CRD's group/plural collide with a built-in kind.
    pub fn is_builtin_resource(&self, group: &str, plural: &str) -> bool {
        self.snapshot()
            .by_gvr
            .values()
            .any(|r| r.builtin && r.group == group && r.plural == plural)
    }
}

/// A snapshot of the built-in definitions alone.
fn build(builtin: &[Value]) -> Snapshot {
    let mut snap = Snapshot::default();
    add(&mut snap, builtin, true);
    snap
}

/// `base` (the built-ins) plus the user CRDs.
fn extend(base: &Snapshot, user: &[Value]) -> Snapshot {
    let mut snap = Snapshot {
        by_gvr: base.by_gvr.clone(),
        groups: base.groups.clone(),
        crds: HashMap::new(),
        openapi: std::sync::OnceLock::new(),
        openapi_v2: std::sync::OnceLock::new(),
    };
    add(&mut snap, user, false);
    snap
}

fn add(snap: &mut Snapshot, definitions: &[Value], is_builtin: bool) {
    for crd in definitions {
        let infos = resources_of(crd, is_builtin);
        if infos.is_empty() {
            continue;
        }
        // A user CRD may not shadow a built-in resource.
        if !is_builtin
            && infos.iter().any(|i| {
                snap.by_gvr
                    .contains_key(&(i.group.clone(), i.version.clone(), i.plural.clone()))
            })
        {
            continue;
        }
        let group = infos[0].group.clone();
        let storage = infos[0].storage_version.clone();
        let versions = snap.groups.entry(group).or_default();
        for info in &infos {
            if !versions.contains(&info.version) {
                versions.push(info.version.clone());
            }
        }
        versions.sort_by_key(|v| (v != &storage, version_priority(v)));
        if !is_builtin && let Some(name) = crd.pointer("/metadata/name").and_then(Value::as_str) {
            snap.crds.insert(
                name.to_string(),
                infos.iter().cloned().map(Arc::new).collect(),
            );
        }
        for info in infos {
            snap.by_gvr.insert(
                (
                    info.group.clone(),
                    info.version.clone(),
                    info.plural.clone(),
                ),
                Arc::new(info),
            );
        }
    }
}

/// Kubernetes version ordering: GA > beta > alpha, higher numbers first.
fn version_priority(v: &str) -> (u8, std::cmp::Reverse<u32>, std::cmp::Reverse<u32>) {
    let rest = v.strip_prefix('v').unwrap_or(v);
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let major = digits.parse().unwrap_or(0);
    let tail = &rest[digits.len()..];
    let (class, minor) = if tail.is_empty() {
        (0, 0)
    } else if let Some(n) = tail.strip_prefix("beta") {
        (1, n.parse().unwrap_or(0))
    } else if let Some(n) = tail.strip_prefix("alpha") {
        (2, n.parse().unwrap_or(0))
    } else {
        (3, 0)
    };
    (class, std::cmp::Reverse(major), std::cmp::Reverse(minor))
}

/// The served resources a CRD JSON object defines (empty if it is malformed).
pub fn resources_of(crd: &Value, builtin: bool) -> Vec<ResourceInfo> {
    let spec = &crd["spec"];
    let group = spec["group"].as_str().unwrap_or_default().to_string();
    let names = &spec["names"];
    let str_list = |v: &Value| crate::object::string_list(Some(v));
    let (Some(plural), Some(kind)) = (names["plural"].as_str(), names["kind"].as_str()) else {
        return vec![];
    };
    let versions = spec["versions"].as_array().cloned().unwrap_or_default();
    let storage_version = versions
        .iter()
        .find(|v| v["storage"].as_bool() == Some(true))
        .and_then(|v| v["name"].as_str())
        .unwrap_or_default()
        .to_string();
    let namespaced = spec["scope"].as_str() != Some("Cluster");
    let storage_group = crd
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(flotilla_api::STORAGE_GROUP_ANNOTATION))
        .and_then(Value::as_str)
        .filter(|_| builtin)
        .unwrap_or(&group)
        .to_string();
    let tracks_generation = !(builtin
        && crd
            .pointer("/metadata/annotations")
            .and_then(|a| a.get(flotilla_api::NO_GENERATION_ANNOTATION))
            .is_some());
    versions
        .iter()
        .filter(|v| v["served"].as_bool().unwrap_or(true))
        .filter_map(|v| {
            let version = v["name"].as_str()?.to_string();
            let schema = v.pointer("/schema/openAPIV3Schema").cloned().unwrap_or_else(
                || serde_json::json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}),
            );
            let columns = v["additionalPrinterColumns"]
                .as_array()
                .map(|cols| {
                    cols.iter()
                        .filter_map(PrinterColumn::from_crd_json)
                        // Computed cells are for the built-in kinds' own tables only.
                        .filter(|c| builtin || !c.json_path.starts_with(flotilla_apimachinery::table::printers::PREFIX))
                        .collect()
                })
                .unwrap_or_default();
            Some(ResourceInfo {
                group: group.clone(),
                version,
                storage_version: storage_version.clone(),
                storage_group: storage_group.clone(),
                kind: kind.to_string(),
                list_kind: names["listKind"].as_str().map(String::from).unwrap_or_else(|| format!("{kind}List")),
                plural: plural.to_string(),
                singular: names["singular"].as_str().map(String::from).unwrap_or_else(|| kind.to_lowercase()),
                short_names: str_list(&names["shortNames"]),
                categories: str_list(&names["categories"]),
                namespaced,
                schema: Arc::new(schema),
                columns: Arc::new(columns),
                status_subresource: v.pointer("/subresources/status").is_some(),
                scale: crate::scale::ScalePaths::from_crd_version(v),
                tracks_generation,
                selectable_fields: v["selectableFields"]
                    .as_array()
                    .map(|a| a.iter().filter_map(|f| f["jsonPath"].as_str().map(|p| p.trim_start_matches('.').to_string())).collect())
                    .unwrap_or_default(),
                builtin,
                deprecation: v["deprecated"].as_bool().unwrap_or(false).then(|| {
                    v["deprecationWarning"].as_str().map_or_else(
                        || format!("{group}/{} {kind} is deprecated", v["name"].as_str().unwrap_or_default()),
                        String::from,
                    )
                }),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn crd() -> Value {
        json!({
            "metadata": {"name": "widgets.example.com"},
            "spec": {
                "group": "example.com",
                "scope": "Namespaced",
                "names": {"plural": "widgets", "kind": "Widget", "shortNames": ["wd"]},
                "versions": [
                    {"name": "v1alpha1", "served": true, "storage": false},
                    {"name": "v1", "served": true, "storage": true, "subresources": {"status": {}}},
                    {"name": "v0", "served": false, "storage": false}
                ]
            }
        })
    }

    #[test]
    fn user_crds_are_served_per_version_with_storage_preferred() {
        let reg = Registry::new(vec![]);
        reg.set_user_crds(&[crd()]);
        let snap = reg.snapshot();
        assert_eq!(snap.groups()["example.com"], vec!["v1", "v1alpha1"]);
        let w = snap.get("example.com", "v1alpha1", "widgets").unwrap();
        assert_eq!(w.storage_version, "v1");
        assert_eq!(w.singular, "widget");
        assert_eq!(w.list_kind, "WidgetList");
        assert!(!w.status_subresource);
        assert!(
            snap.get("example.com", "v1", "widgets")
                .unwrap()
                .status_subresource
        );
        assert!(snap.get("example.com", "v0", "widgets").is_none());
        assert_eq!(w.key(Some("ns"), "a"), "/registry/example.com/widgets/ns/a");
        assert_eq!(snap.crd_resources("widgets.example.com").len(), 2);
    }

    #[test]
    fn user_crd_cannot_shadow_builtin() {
        let mut builtin = crd();
        builtin["metadata"]["name"] = json!("builtin");
        let reg = Registry::new(vec![builtin]);
        reg.set_user_crds(&[crd()]);
        assert!(
            reg.snapshot()
                .crd_resources("widgets.example.com")
                .is_empty()
        );
        assert!(
            reg.snapshot()
                .get("example.com", "v1", "widgets")
                .unwrap()
                .builtin
        );
    }

    #[test]
    fn version_priority_orders_like_kubernetes() {
        let mut v = vec!["v1alpha1", "v2", "v1beta1", "v1", "v1beta2"];
        v.sort_by_key(|s| version_priority(s));
        assert_eq!(v, vec!["v2", "v1", "v1beta2", "v1beta1", "v1alpha1"]);
    }
}
