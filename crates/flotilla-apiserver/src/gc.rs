//! Garbage collection by ownerReferences (Background, Foreground, Orphan), as kube's
//! garbage collector does it, driven by one ordered watch over the whole keyspace.
//!
//! The collector keeps an ownership graph (uid → node, owner uid → dependents) updated from the
//! store's event stream, so every decision is made against a consistent prefix of history:
//! - a dependent whose owners are all gone is deleted; one with some owners gone loses the
//!   dangling references;
//! - an owner deleted with Foreground propagation (`foregroundDeletion` finalizer) has its
//!   dependents deleted first and loses the finalizer once none remain;
//! - an owner deleted with Orphan propagation (`orphan` finalizer) has its references removed
//!   from every dependent, then loses the finalizer.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use flotilla_store::{EventKind, ListRequest};
use futures::{FutureExt, StreamExt};
use serde_json::Value;

use crate::engine::{DeleteOptions, Engine, FOREGROUND_FINALIZER, ORPHAN_FINALIZER};
use crate::object;
use crate::registry::ResourceInfo;

/// The whole keyspace the engine stores objects under.
pub const ROOT_PREFIX: &str = "/registry/";

/// What the collector needs of an object: read from stored bytes by [`Meta::from_stored`],
/// which skips everything else unparsed (the collector sees every write).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Meta {
    /// The object's uid.
    pub uid: String,
    /// Uids of its owners.
    pub owners: Vec<String>,
    /// Whether `deletionTimestamp` is set.
    pub deleting: bool,
    /// Its finalizers.
    pub finalizers: Vec<String>,
}

impl Meta {
    /// Reads the collector's view of a stored object; `None` if it has no uid.
    pub fn from_stored(bytes: &[u8]) -> Option<Meta> {
        #[derive(serde::Deserialize)]
        struct Stored {
            #[serde(default)]
            metadata: Fields,
        }
        #[derive(serde::Deserialize, Default)]
        struct Fields {
            #[serde(default)]
            uid: Option<String>,
            #[serde(rename = "ownerReferences", default)]
            owner_references: Option<Vec<OwnerRef>>,
            #[serde(rename = "deletionTimestamp", default)]
            deletion_timestamp: Option<serde::de::IgnoredAny>,
            #[serde(default)]
            finalizers: Option<Vec<String>>,
        }
        #[derive(serde::Deserialize)]
        struct OwnerRef {
            uid: String,
        }
        let m = serde_json::from_slice::<Stored>(bytes).ok()?.metadata;
        Some(Meta {
            uid: m.uid?,
            owners: m
                .owner_references
                .unwrap_or_default()
                .into_iter()
                .map(|r| r.uid)
                .collect(),
            deleting: m.deletion_timestamp.is_some(),
            finalizers: m.finalizers.unwrap_or_default(),
        })
    }
}

#[derive(Debug, Clone)]
struct Node {
    key: String,
    owners: Vec<String>,
    deleting: bool,
    finalizers: Vec<String>,
}

/// The ownership graph: pure bookkeeping, no I/O.
///
/// Most objects have no owners and are not being deleted: no decision can concern them, and
/// they matter only as possible owners. They are kept as bare uids in `plain`, which costs one
/// set entry per object instead of a node, two key copies and two map entries; the uid of a
/// deleted one comes from the delete event's last value.
#[derive(Debug, Default)]
pub struct Graph {
    /// Objects with owners, or being deleted, by uid.
    nodes: HashMap<String, Node>,
    /// Uids of every other object.
    plain: HashSet<String>,
    dependents: HashMap<String, HashSet<String>>,
    /// The uid stored under each key of `nodes`.
    uid_by_key: HashMap<String, String>,
}

/// What the collector must do for one node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Delete the object (its owners are all gone, or a foreground owner is being deleted).
    Delete {
        /// Uid of the object.
        uid: String,
        /// Propagation for its own dependents.
        propagation: &'static str,
    },
    /// Remove these owner uids from the object's ownerReferences.
    RemoveOwners {
        /// Uid of the object.
        uid: String,
        /// Owner uids to drop.
        owners: Vec<String>,
    },
    /// Remove a finalizer from the object.
    RemoveFinalizer {
        /// Uid of the object.
        uid: String,
        /// The finalizer.
        finalizer: &'static str,
    },
}

/// Splits a storage key into group, plural, namespace and name.
fn parse_key(key: &str) -> Option<(&str, &str, Option<&str>, &str)> {
    fn group(g: &str) -> &str {
        if g == "core" { "" } else { g }
    }
    let rest = key.strip_prefix(ROOT_PREFIX)?;
    let parts: Vec<&str> = rest.split('/').collect();
    match parts.as_slice() {
        [g, p, name] => Some((group(g), p, None, name)),
        [g, p, ns, name] => Some((group(g), p, Some(ns), name)),
        _ => None,
    }
}

impl Graph {
    /// Records the latest version of an object; returns uids that need a decision.
    pub fn upsert(&mut self, key: &str, meta: Meta) -> Vec<String> {
        let Meta {
            uid,
            owners,
            deleting,
            finalizers,
        } = meta;
        // A new object under a key that held another uid replaces it.
        let mut dirty = Vec::new();
        if let Some(old_uid) = self.uid_by_key.get(key).cloned()
            && old_uid != uid
        {
            dirty.extend(self.remove_uid(&old_uid));
        }
        if let Some(prev) = self.nodes.remove(&uid) {
            for o in prev.owners {
                if let Some(d) = self.dependents.get_mut(&o) {
                    d.remove(&uid);
                }
                // An owner this object no longer references may be waiting for it (orphaning).
                if !owners.contains(&o) {
                    dirty.push(o);
                }
            }
        }
        if owners.is_empty() && !deleting {
            self.uid_by_key.remove(key);
            self.plain.insert(uid);
            return dirty;
        }
        self.plain.remove(&uid);
        for o in &owners {
            self.dependents
                .entry(o.clone())
                .or_default()
                .insert(uid.clone());
        }
        let node = Node {
            key: key.to_string(),
            owners,
            deleting,
            finalizers,
        };
        self.uid_by_key.insert(key.to_string(), uid.clone());
        self.nodes.insert(uid.clone(), node);
        dirty.push(uid);
        dirty
    }

    /// Forgets the object deleted from `key`, whose last value had `uid` (`None` if it had
    /// none); returns uids that need a decision.
    pub fn remove_key(&mut self, key: &str, uid: Option<&str>) -> Vec<String> {
        match (self.uid_by_key.remove(key), uid) {
            (Some(tracked), _) => self.remove_uid(&tracked),
            (None, Some(uid)) => self.remove_uid(uid),
            (None, None) => vec![],
        }
    }

    fn remove_uid(&mut self, uid: &str) -> Vec<String> {
        let node = self.nodes.remove(uid);
        if node.is_none() && !self.plain.remove(uid) {
            return vec![];
        }
        let mut dirty: Vec<String> = self
            .dependents
            .get(uid)
            .map(|d| d.iter().cloned().collect())
            .unwrap_or_default();
        for o in node.iter().flat_map(|node| &node.owners) {
            if let Some(d) = self.dependents.get_mut(o) {
                d.remove(uid);
            }
            dirty.push(o.clone());
        }
        dirty
    }

    /// Whether an object with this uid exists.
    fn exists(&self, uid: &str) -> bool {
        self.nodes.contains_key(uid) || self.plain.contains(uid)
    }

    fn live_dependents(&self, uid: &str) -> Vec<String> {
        self.dependents
            .get(uid)
            .map(|d| {
                d.iter()
                    .filter(|u| self.nodes.contains_key(*u))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The actions one node needs now (pure: decided from the graph alone).
    pub fn decide(&self, uid: &str) -> Vec<Action> {
        let Some(node) = self.nodes.get(uid) else {
            return vec![];
        };
        let mut actions = Vec::new();
        if node.deleting && node.finalizers.iter().any(|f| f == ORPHAN_FINALIZER) {
            let deps = self.live_dependents(uid);
            for d in &deps {
                actions.push(Action::RemoveOwners {
                    uid: d.clone(),
                    owners: vec![uid.to_string()],
                });
            }
            if deps.is_empty() {
                actions.push(Action::RemoveFinalizer {
                    uid: uid.to_string(),
                    finalizer: ORPHAN_FINALIZER,
                });
            }
            return actions;
        }
        if node.deleting && node.finalizers.iter().any(|f| f == FOREGROUND_FINALIZER) {
            let deps = self.live_dependents(uid);
            for d in &deps {
                if self.nodes.get(d).is_some_and(|n| !n.deleting) {
                    actions.push(Action::Delete {
                        uid: d.clone(),
                        propagation: "Foreground",
                    });
                }
            }
            if deps.is_empty() {
                actions.push(Action::RemoveFinalizer {
                    uid: uid.to_string(),
                    finalizer: FOREGROUND_FINALIZER,
                });
            }
        }
        if !node.owners.is_empty() && !node.deleting {
            let absent: Vec<String> = node
                .owners
                .iter()
                .filter(|o| !self.exists(o))
                .cloned()
                .collect();
            if absent.len() == node.owners.len() {
                actions.push(Action::Delete {
                    uid: uid.to_string(),
                    propagation: "Background",
                });
            } else if !absent.is_empty() {
                actions.push(Action::RemoveOwners {
                    uid: uid.to_string(),
                    owners: absent,
                });
            }
        }
        actions
    }
}

/// Runs the garbage collector until the store's watch ends.
pub async fn run(engine: Engine) {
    loop {
        if let Err(e) = run_once(&engine).await {
            tracing::warn!(error = %e, "garbage collector restarting");
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

async fn run_once(engine: &Engine) -> Result<(), crate::status::ApiError> {
    let mut graph = Graph::default();
    let list = engine
        .store
        .list(ListRequest {
            prefix: ROOT_PREFIX.into(),
            ..Default::default()
        })
        .await?;
    let mut dirty: BTreeSet<String> = BTreeSet::new();
    for kv in &list.items {
        if let Some(meta) = Meta::from_stored(&kv.value) {
            dirty.extend(graph.upsert(&kv.key, meta));
        }
    }
    let mut stream = engine.store.watch(ROOT_PREFIX, list.revision);
    loop {
        for uid in std::mem::take(&mut dirty) {
            for action in graph.decide(&uid) {
                execute(engine, &graph, action).await;
            }
        }
        let Some(first) = stream.next().await else {
            return Ok(());
        };
        let mut batch = vec![first];
        while let Some(Some(more)) = stream.next().now_or_never() {
            batch.push(more);
        }
        for item in batch {
            let event = item?;
            match event.kind {
                EventKind::Put => {
                    if let Some(meta) = Meta::from_stored(&event.kv.value) {
                        dirty.extend(graph.upsert(&event.kv.key, meta));
                    }
                }
                EventKind::Delete => {
                    let last = Meta::from_stored(&event.kv.value);
                    let uid = last.as_ref().map(|meta| meta.uid.as_str());
                    dirty.extend(graph.remove_key(&event.kv.key, uid));
                }
            }
        }
    }
}

/// The resource, namespace and name an object is stored under.
fn locate<'a>(
    engine: &Engine,
    node: &'a Node,
) -> Option<(Arc<ResourceInfo>, Option<&'a str>, &'a str)> {
    let (group, plural, ns, name) = parse_key(&node.key)?;
    let info = engine
        .registry
        .snapshot()
        .by_storage_prefix(group, plural)?;
    Some((info, ns, name))
}

async fn execute(engine: &Engine, graph: &Graph, action: Action) {
    let uid = match &action {
        Action::Delete { uid, .. }
        | Action::RemoveOwners { uid, .. }
        | Action::RemoveFinalizer { uid, .. } => uid.clone(),
    };
    let Some(node) = graph.nodes.get(&uid) else {
        return;
    };
    let Some((info, ns, name)) = locate(engine, node) else {
        return;
    };
    let result = match action {
        Action::Delete { propagation, .. } => {
            let opts = DeleteOptions {
                propagation: Some(propagation.into()),
                precondition_uid: Some(uid.clone()),
                ..Default::default()
            };
            engine.delete(&info, ns, name, &opts).await.map(|_| ())
        }
        Action::RemoveOwners { owners, .. } => engine
            .update_existing(&info, ns, name, |obj| {
                if let Some(refs) = obj
                    .pointer_mut("/metadata/ownerReferences")
                    .and_then(Value::as_array_mut)
                {
                    refs.retain(|r| {
                        !r["uid"]
                            .as_str()
                            .is_some_and(|u| owners.iter().any(|o| o == u))
                    });
                }
            })
            .await
            .map(|_| ()),
        Action::RemoveFinalizer { finalizer, .. } => engine
            .update_existing(&info, ns, name, |obj| {
                object::remove_finalizer(obj, finalizer)
            })
            .await
            .map(|_| ()),
    };
    if let Err(e) = result
        && e.code != 404
        && e.code != 409
    {
        tracing::warn!(object = %name, error = %e, "garbage collection step failed");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A stored object's collector view, read through [`Meta::from_stored`] like real events.
    fn obj(uid: &str, owners: &[&str], deleting: bool, finalizers: &[&str]) -> Meta {
        let refs: Vec<Value> = owners
            .iter()
            .map(|o| json!({"uid": o, "apiVersion": "v1", "kind": "ConfigMap", "name": o}))
            .collect();
        let mut v =
            json!({"metadata": {"uid": uid, "ownerReferences": refs, "finalizers": finalizers}});
        if deleting {
            v["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
        }
        Meta::from_stored(&serde_json::to_vec(&v).unwrap()).unwrap()
    }

    #[test]
    fn meta_reads_only_what_the_collector_needs() {
        let m = obj("u", &["a", "b"], true, &["x/y"]);
        assert_eq!(
            m,
            Meta {
                uid: "u".into(),
                owners: vec!["a".into(), "b".into()],
                deleting: true,
                finalizers: vec!["x/y".into()]
            }
        );
        assert_eq!(
            Meta::from_stored(br#"{"metadata":{"name":"no-uid"}}"#),
            None
        );
        let plain = Meta::from_stored(br#"{"apiVersion":"v1","metadata":{"uid":"p","deletionTimestamp":null},"data":{"a":"b"}}"#).unwrap();
        assert!(!plain.deleting && plain.owners.is_empty());
    }

    #[test]
    fn orphaned_dependents_are_deleted_and_partial_owners_trimmed() {
        let mut g = Graph::default();
        g.upsert(
            "/registry/core/configmaps/ns/owner",
            obj("o", &[], false, &[]),
        );
        g.upsert(
            "/registry/core/configmaps/ns/other",
            obj("o2", &[], false, &[]),
        );
        g.upsert(
            "/registry/core/configmaps/ns/dep",
            obj("d", &["o"], false, &[]),
        );
        g.upsert(
            "/registry/core/configmaps/ns/shared",
            obj("s", &["o", "o2"], false, &[]),
        );
        assert!(g.decide("d").is_empty());
        let dirty = g.remove_key("/registry/core/configmaps/ns/owner", Some("o"));
        assert!(dirty.contains(&"d".to_string()) && dirty.contains(&"s".to_string()));
        assert_eq!(
            g.decide("d"),
            vec![Action::Delete {
                uid: "d".into(),
                propagation: "Background"
            }]
        );
        assert_eq!(
            g.decide("s"),
            vec![Action::RemoveOwners {
                uid: "s".into(),
                owners: vec!["o".into()]
            }]
        );
    }

    #[test]
    fn objects_without_owners_are_kept_as_bare_uids_until_they_gain_owners_or_a_deletion() {
        let mut g = Graph::default();
        let key = "/registry/core/configmaps/ns/cm";
        g.upsert(key, obj("c", &[], false, &[]));
        g.upsert("/registry/core/configmaps/ns/o", obj("o", &[], false, &[]));
        assert!(g.nodes.is_empty() && g.uid_by_key.is_empty());
        assert!(g.exists("c") && g.exists("o"));

        // Gaining an owner makes it a node; losing it again marks the owner for a decision.
        assert_eq!(
            g.upsert(key, obj("c", &["o"], false, &[])),
            vec!["c".to_string()]
        );
        assert!(g.nodes.contains_key("c") && !g.plain.contains("c"));
        assert_eq!(
            g.upsert(key, obj("c", &[], false, &[])),
            vec!["o".to_string()]
        );
        assert!(g.nodes.is_empty() && g.uid_by_key.is_empty() && g.exists("c"));

        // Being deleted (a finalizer to wait on) makes it a node even without owners.
        g.upsert(key, obj("c", &[], true, &[FOREGROUND_FINALIZER]));
        assert!(g.nodes.contains_key("c") && !g.plain.contains("c"));
        assert_eq!(
            g.decide("c"),
            vec![Action::RemoveFinalizer {
                uid: "c".into(),
                finalizer: FOREGROUND_FINALIZER
            }]
        );

        // Deleting either kind forgets it.
        g.remove_key(key, Some("c"));
        g.remove_key("/registry/core/configmaps/ns/o", Some("o"));
        assert!(!g.exists("c") && !g.exists("o") && g.nodes.is_empty() && g.plain.is_empty());
        assert!(
            g.remove_key("/registry/core/configmaps/ns/gone", None)
                .is_empty()
        );
    }

    #[test]
    fn foreground_waits_for_dependents_then_drops_finalizer() {
        let mut g = Graph::default();
        g.upsert(
            "/registry/core/configmaps/ns/owner",
            obj("o", &[], true, &[FOREGROUND_FINALIZER]),
        );
        g.upsert(
            "/registry/core/configmaps/ns/dep",
            obj("d", &["o"], false, &[]),
        );
        assert_eq!(
            g.decide("o"),
            vec![Action::Delete {
                uid: "d".into(),
                propagation: "Foreground"
            }]
        );
        g.remove_key("/registry/core/configmaps/ns/dep", Some("d"));
        assert_eq!(
            g.decide("o"),
            vec![Action::RemoveFinalizer {
                uid: "o".into(),
                finalizer: FOREGROUND_FINALIZER
            }]
        );
    }

    #[test]
    fn orphan_strips_references_then_drops_finalizer() {
        let mut g = Graph::default();
        g.upsert(
            "/registry/core/configmaps/ns/owner",
            obj("o", &[], true, &[ORPHAN_FINALIZER]),
        );
        g.upsert(
            "/registry/core/configmaps/ns/dep",
            obj("d", &["o"], false, &[]),
        );
        assert_eq!(
            g.decide("o"),
            vec![Action::RemoveOwners {
                uid: "d".into(),
                owners: vec!["o".into()]
            }]
        );
        g.upsert(
            "/registry/core/configmaps/ns/dep",
            obj("d", &[], false, &[]),
        );
        assert_eq!(
            g.decide("o"),
            vec![Action::RemoveFinalizer {
                uid: "o".into(),
                finalizer: ORPHAN_FINALIZER
            }]
        );
        // While the orphaning owner is deleting, its dependents are not collected.
        assert!(g.decide("d").is_empty());
    }
}
