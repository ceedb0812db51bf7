//! The RBAC index (roles, bindings, and bindings by subject) and the decision over it.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use serde::Deserialize;
use serde_json::Value;

use super::attributes::Attributes;
use super::rule::PolicyRule;
use crate::auth::UserInfo;

/// The four RBAC kinds the index holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RbacKind {
    /// Namespaced `Role`.
    Role,
    /// `ClusterRole`.
    ClusterRole,
    /// Namespaced `RoleBinding`.
    RoleBinding,
    /// `ClusterRoleBinding`.
    ClusterRoleBinding,
}

impl RbacKind {
    /// Every kind, with its plural resource name.
    pub const ALL: [(RbacKind, &'static str); 4] = [
        (RbacKind::Role, "roles"),
        (RbacKind::ClusterRole, "clusterroles"),
        (RbacKind::RoleBinding, "rolebindings"),
        (RbacKind::ClusterRoleBinding, "clusterrolebindings"),
    ];
}

/// An authorization decision, with kube-apiserver's explanation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// Whether the request may proceed.
    pub allowed: bool,
    /// Which binding allowed it (empty when denied).
    pub reason: String,
}

/// Who a binding names, normalised: service accounts become their user names.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum SubjectKey {
    User(String),
    Group(String),
}

/// `(namespace, name)` of a stored object; namespace empty for cluster-scoped ones.
type ObjectKey = (String, String);

#[derive(Debug, Clone)]
struct Binding {
    role_is_cluster_role: bool,
    role_name: String,
    subjects: Vec<SubjectKey>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct StoredRole {
    #[serde(default)]
    rules: Option<Vec<PolicyRule>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct StoredBinding {
    role_ref: RoleRef,
    #[serde(default)]
    subjects: Option<Vec<Subject>>,
}

#[derive(Deserialize)]
struct RoleRef {
    kind: String,
    name: String,
}

#[derive(Deserialize)]
struct Subject {
    kind: String,
    name: String,
    #[serde(default)]
    namespace: Option<String>,
}

/// Called with the rules of one applicable binding and a closure explaining that binding;
/// returns true to stop the visit.
type RuleVisitor<'a> = dyn FnMut(&[PolicyRule], &dyn Fn() -> String) -> bool + 'a;

/// The RBAC objects of a hub, indexed for fast decisions.
#[derive(Debug, Default)]
pub struct Policy {
    roles: HashMap<ObjectKey, Arc<[PolicyRule]>>,
    cluster_roles: HashMap<String, Arc<[PolicyRule]>>,
    role_bindings: HashMap<ObjectKey, Binding>,
    cluster_role_bindings: HashMap<String, Binding>,
    /// Binding keys by subject; the bool says ClusterRoleBinding.
    by_subject: HashMap<SubjectKey, BTreeSet<(bool, ObjectKey)>>,
}

fn meta(obj: &Value) -> ObjectKey {
    let s = |k: &str| {
        obj.pointer(&format!("/metadata/{k}"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    (s("namespace"), s("name"))
}

impl Policy {
    /// Adds or replaces one stored object of `kind`. Objects that do not decode are ignored
    /// (the API server validated them on write; they cannot grant anything).
    pub fn upsert(&mut self, kind: RbacKind, obj: &Value) {
        let key = meta(obj);
        self.remove(kind, &key.0, &key.1);
        match kind {
            RbacKind::Role | RbacKind::ClusterRole => {
                let Ok(role) = StoredRole::deserialize(obj) else {
                    return;
                };
                let rules: Arc<[PolicyRule]> = role.rules.unwrap_or_default().into();
                if kind == RbacKind::Role {
                    self.roles.insert(key, rules);
                } else {
                    self.cluster_roles.insert(key.1, rules);
                }
            }
            RbacKind::RoleBinding | RbacKind::ClusterRoleBinding => {
                let Ok(stored) = StoredBinding::deserialize(obj) else {
                    return;
                };
                let cluster = kind == RbacKind::ClusterRoleBinding;
                let subjects: Vec<SubjectKey> = stored
                    .subjects
                    .unwrap_or_default()
                    .into_iter()
                    .filter_map(|s| subject_key(s, &key.0))
                    .collect();
                for s in &subjects {
                    self.by_subject
                        .entry(s.clone())
                        .or_default()
                        .insert((cluster, key.clone()));
                }
                let binding = Binding {
                    role_is_cluster_role: stored.role_ref.kind == "ClusterRole",
                    role_name: stored.role_ref.name,
                    subjects,
                };
                if cluster {
                    self.cluster_role_bindings.insert(key.1, binding);
                } else {
                    self.role_bindings.insert(key, binding);
                }
            }
        }
    }

    /// Forgets one object (no-op when absent).
    pub fn remove(&mut self, kind: RbacKind, namespace: &str, name: &str) {
        let key = (namespace.to_string(), name.to_string());
        let cluster = kind == RbacKind::ClusterRoleBinding;
        let removed = match kind {
            RbacKind::Role => {
                self.roles.remove(&key);
                None
            }
            RbacKind::ClusterRole => {
                self.cluster_roles.remove(name);
                None
            }
            RbacKind::RoleBinding => self.role_bindings.remove(&key),
            RbacKind::ClusterRoleBinding => self.cluster_role_bindings.remove(name),
        };
        for s in removed.map(|b| b.subjects).unwrap_or_default() {
            if let Some(set) = self.by_subject.get_mut(&s) {
                set.remove(&(cluster, key.clone()));
                if set.is_empty() {
                    self.by_subject.remove(&s);
                }
            }
        }
    }

    /// Forgets every object of `kind` (before a re-list).
    pub fn clear(&mut self, kind: RbacKind) {
        let keys: Vec<ObjectKey> = match kind {
            RbacKind::Role => self.roles.keys().cloned().collect(),
            RbacKind::ClusterRole => self
                .cluster_roles
                .keys()
                .map(|n| (String::new(), n.clone()))
                .collect(),
            RbacKind::RoleBinding => self.role_bindings.keys().cloned().collect(),
            RbacKind::ClusterRoleBinding => self
                .cluster_role_bindings
                .keys()
                .map(|n| (String::new(), n.clone()))
                .collect(),
        };
        for (ns, name) in keys {
            self.remove(kind, &ns, &name);
        }
    }

    /// Whether `user` may do what `attrs` describe, and which binding says so.
    pub fn authorize(&self, user: &UserInfo, attrs: &Attributes) -> Decision {
        let mut found = None;
        self.visit_rules(user, attrs, &mut |rules, why| {
            if found.is_none() && rules.iter().any(|r| r.allows(attrs)) {
                found = Some(why());
            }
            found.is_some()
        });
        match found {
            Some(reason) => Decision {
                allowed: true,
                reason,
            },
            None => Decision {
                allowed: false,
                reason: String::new(),
            },
        }
    }

    /// Every rule that applies to `user` in `namespace` (cluster-wide rules included), as
    /// `SelfSubjectRulesReview` reports them.
    pub fn rules_for(&self, user: &UserInfo, namespace: &str) -> Vec<PolicyRule> {
        let probe = Attributes::Resource(super::ResourceAttributes {
            verb: String::new(),
            group: String::new(),
            resource: String::new(),
            subresource: None,
            namespace: Some(namespace.to_string()),
            name: None,
        });
        let mut out: Vec<PolicyRule> = Vec::new();
        self.visit_rules(user, &probe, &mut |rules, _| {
            for r in rules {
                if !out.contains(r) {
                    out.push(r.clone());
                }
            }
            false
        });
        out
    }

    /// Calls `visit` with the rules of every binding that names `user` and covers the scope
    /// of `attrs`, until it returns true.
    fn visit_rules(&self, user: &UserInfo, attrs: &Attributes, visit: &mut RuleVisitor<'_>) {
        let namespace = match attrs {
            Attributes::Resource(r) => r.namespace.as_deref(),
            Attributes::NonResource { .. } => None,
        };
        let subjects = std::iter::once(SubjectKey::User(user.name.clone()))
            .chain(user.groups.iter().cloned().map(SubjectKey::Group));
        for subject in subjects {
            let Some(bindings) = self.by_subject.get(&subject) else {
                continue;
            };
            for (cluster, (ns, name)) in bindings {
                let binding = if *cluster {
                    self.cluster_role_bindings.get(name)
                } else if namespace == Some(ns.as_str()) {
                    self.role_bindings.get(&(ns.clone(), name.clone()))
                } else {
                    None
                };
                let Some(binding) = binding else { continue };
                let rules = if binding.role_is_cluster_role {
                    self.cluster_roles.get(&binding.role_name)
                } else {
                    self.roles.get(&(ns.clone(), binding.role_name.clone()))
                };
                let Some(rules) = rules else { continue };
                let why = || {
                    let (bkind, rkind) = match (*cluster, binding.role_is_cluster_role) {
                        (true, _) => ("ClusterRoleBinding", "ClusterRole"),
                        (false, true) => ("RoleBinding", "ClusterRole"),
                        (false, false) => ("RoleBinding", "Role"),
                    };
                    let at = if *cluster {
                        String::new()
                    } else {
                        format!(" of namespace {ns:?}")
                    };
                    let who = match &subject {
                        SubjectKey::User(u) => format!("User {u:?}"),
                        SubjectKey::Group(g) => format!("Group {g:?}"),
                    };
                    format!(
                        "RBAC: allowed by {bkind} {name:?}{at} of {rkind} {:?} to {who}",
                        binding.role_name
                    )
                };
                if visit(rules, &why) {
                    return;
                }
            }
        }
    }
}

/// A binding subject as the key users are matched by; `None` for unknown kinds.
fn subject_key(s: Subject, binding_namespace: &str) -> Option<SubjectKey> {
    match s.kind.as_str() {
        "User" => Some(SubjectKey::User(s.name)),
        "Group" => Some(SubjectKey::Group(s.name)),
        "ServiceAccount" => {
            let ns = s
                .namespace
                .filter(|n| !n.is_empty())
                .unwrap_or_else(|| binding_namespace.to_string());
            Some(SubjectKey::User(format!(
                "system:serviceaccount:{ns}:{}",
                s.name
            )))
        }
        _ => None,
    }
}
